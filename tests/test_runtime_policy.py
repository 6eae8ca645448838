"""Never a silent pass: a model built or saved in float32 and checked under a mixed policy
is rebuilt under it from its config with its weights, or reported as MP405."""

import json
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")

from mplint.cli import main  # noqa: E402
from mplint.runtime import assert_mixed_precision_safe, check_model  # noqa: E402
from mplint.runtime.keras_env import keras_major  # noqa: E402
from mplint.runtime.target import load_target  # noqa: E402
from runtime_support import float32_outside, pairs  # noqa: E402,F401

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "runtime"
keras = tf.keras
KERAS3 = keras_major(keras) >= 3


def built(name):
    """A fixture model built now, under float32 (before any policy)."""
    return load_target(f"{FIX / 'mnist_guide.py'}:{name}").factory()


def test_float32_built_model_is_rebuilt_under_the_policy_with_its_weights():
    model = built("build_incorrect_model")
    report = check_model(model, "mixed_float16")
    assert pairs(report) == [("MP101", "predictions")], report.to_text()
    assert any("rebuilt under mixed_float16 from its config, with its weights" in n for n in report.notes)
    rows = {r["name"]: r for r in report.layers}
    assert rows["dense_1"]["compute_dtype"] == "float16"
    # The user's model is untouched.
    assert model.get_layer("dense_1").compute_dtype == "float32"


@pytest.mark.skipif(not KERAS3, reason="Keras 3 layers share the global policy object")
def test_a_float32_head_given_on_purpose_stays_float32_in_the_rebuild():
    report = check_model(built("build_correct_model"), "mixed_float16")
    assert report.ok, report.to_text()
    rows = {r["name"]: r for r in report.layers}
    assert rows["predictions"]["output_dtype"] == "float32"
    assert rows["dense_logits"]["compute_dtype"] == "float16"


def test_float32_built_model_without_a_policy_is_checked_under_both():
    report = check_model(built("build_incorrect_model"))
    assert report.policies == ["mixed_float16", "mixed_bfloat16"] and report.policy_source == "default"
    assert [(f.rule, f.layer, f.policy) for f in report.findings] == [("MP101", "predictions", None)]


class Subclassed(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(16, activation="relu")
        self.out = keras.layers.Dense(3, activation="softmax")

    def call(self, x):
        return self.out(self.hidden(x))


def test_float32_subclassed_model_that_cannot_be_rebuilt_is_mp405_never_a_pass():
    model = Subclassed()
    model(tf.zeros((1, 8)))
    report = check_model(model, "mixed_float16")
    assert pairs(report) == [("MP405", None)] and not report.ok
    assert "cannot be rebuilt" in report.findings[0].message
    with pytest.raises(AssertionError, match="MP405"):
        assert_mixed_precision_safe(model, "mixed_float16")
    # The same from a factory that returns a model built before the policy.
    assert pairs(check_model(lambda: model, "mixed_bfloat16")) == [("MP405", None)]


def test_a_factory_building_under_the_policy_is_not_rebuilt():
    report = check_model(lambda: built("build_incorrect_model"), "mixed_float16")
    assert not any("rebuilt" in n for n in report.notes)
    assert pairs(report) == [("MP101", "predictions")]


def test_saved_float32_model_under_policy_from_the_cli(tmp_path, capsys):
    model = built("build_incorrect_model")
    path = tmp_path / "float32.keras"
    model.save(path)
    rc = main(["runtime", str(path), "--policy", "mixed_float16", "--output-format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert data["policy"] == "mixed_float16" and data["policy_source"] == "argument"
    assert any("rebuilt under mixed_float16" in n for n in data["notes"])
    rows = {r["name"]: r for r in data["layers"]}
    assert rows["dense_1"]["compute_dtype"] == "float16"
    # A saved model does not say which layers its code made float32 on purpose: the
    # softmax head is a note, not a finding.
    assert any(n.startswith("MP101 unless your code gives layer 'predictions' dtype='float32'")
               for n in data["notes"]), data["notes"]
    assert rc == 0


def test_saved_mixed_model_under_the_other_policy_keeps_its_float32_head(tmp_path):
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        model = built("build_correct_model")
    finally:
        keras.mixed_precision.set_global_policy("float32")
    path = tmp_path / "bf16.keras"
    model.save(path)
    loaded = load_target(str(path)).factory()
    report = check_model(loaded, "mixed_float16")
    assert report.ok, report.to_text()
    rows = {r["name"]: r for r in report.layers}
    assert rows["dense_1"]["compute_dtype"] == "float16"
    assert rows["predictions"]["output_dtype"] == "float32"
