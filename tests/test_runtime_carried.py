"""The runtime checker's smaller carried-over gaps, on real TensorFlow (CPU): the advice on
this CPU, option and target errors in one line, the elapsed time of the whole command, a
skipped --train-step, token-id and two-input subclassed models."""

import json
import textwrap

import pytest

tf = pytest.importorskip("tensorflow")

from mplint.runtime import check_model, hardware  # noqa: E402
from mplint.runtime.command import main  # noqa: E402
from mplint.runtime.target import TargetError, load_target  # noqa: E402
from runtime_support import float32_outside, pairs  # noqa: E402,F401

keras = tf.keras
layers = keras.layers


def small():
    inputs = keras.Input((16,))
    return keras.Model(inputs, layers.Dense(8, activation="softmax", dtype="float32")(layers.Dense(32)(inputs)))


def test_without_bfloat16_instructions_the_advice_is_never_mixed_bfloat16():
    report = check_model(small)
    flags = hardware.read_cpu_flags()
    if report.hardware["accelerator"] != "cpu" or flags & {"amx_bf16", "avx512_bf16", "bf16"}:
        pytest.skip("this machine has bfloat16 instructions or an accelerator")
    assert report.advice == {"policy": "float32", "basis": "hardware",
                             "text": "keep float32 here: by the hardware facts no 16-bit policy is fast on "
                                     "this machine (--measure times it)"}
    assert report.hardware["default_policy"] == "float32"
    assert "use mixed_bfloat16" not in report.to_text()


def test_an_unknown_input_dtype_is_an_error(capsys):
    assert main(["x.py:build", "--input-dtype", "foo"]) == 2
    assert "--input-dtype 'foo': expected one of float32" in capsys.readouterr().err


def test_a_module_whose_import_raises_says_so_not_module_not_found(tmp_path, monkeypatch):
    (tmp_path / "mymodels.py").write_text("import my_missing_dependency\n")
    (tmp_path / "broken.py").write_text("raise RuntimeError('no GPU config')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TargetError, match="mymodels: importing it failed: ModuleNotFoundError: No module named "
                                          "'my_missing_dependency'"):
        load_target("mymodels:build")
    with pytest.raises(TargetError, match="broken: importing it raised RuntimeError: no GPU config"):
        load_target("broken:build")
    with pytest.raises(TargetError, match="nowhere_at_all: module not found"):
        load_target("nowhere_at_all:build")


def test_a_wrong_factory_name_lists_the_modules_candidates(tmp_path):
    path = tmp_path / "models.py"
    path.write_text("import os\n\ndef build_model():\n    pass\n\ndef build_small():\n    pass\n")
    with pytest.raises(TargetError) as exc:
        load_target(f"{path}:buidl_model")
    assert str(exc.value).endswith("has no attribute 'buidl_model'; did you mean 'build_model'? it defines: "
                                   "build_model, build_small")


def test_the_elapsed_time_is_the_whole_commands(tmp_path, capsys):
    path = tmp_path / "slow_import.py"
    path.write_text(textwrap.dedent("""
        import time
        import tensorflow as tf
        time.sleep(1.0)  # a slow import, as TensorFlow's is

        def build():
            inputs = tf.keras.Input((16,))
            return tf.keras.Model(inputs, tf.keras.layers.Dense(8, dtype="float32")(inputs))
    """))
    assert main([f"{path}:build", "--policy", "mixed_float16", "--output-format", "json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["elapsed_s"] >= 1.0


def test_a_skipped_train_step_is_an_error_not_a_pass(tmp_path, capsys):
    path = tmp_path / "uncompiled.py"
    path.write_text(textwrap.dedent("""
        import tensorflow as tf

        def build():
            inputs = tf.keras.Input((16,))
            return tf.keras.Model(inputs, tf.keras.layers.Dense(8, dtype="float32")(inputs))
    """))
    assert main([f"{path}:build", "--policy", "mixed_float16", "--train-step", "--quiet"]) == 2
    captured = capsys.readouterr()
    assert "Train step (mixed_float16): skipped: the model is not compiled" in captured.out
    assert "mplint: error: --train-step was not checked under mixed_float16: the model is not compiled" \
        in captured.err


class TokenClassifier(keras.Model):
    def __init__(self):
        super().__init__()
        self.embed = layers.Embedding(50, 16)
        self.pool = layers.GlobalAveragePooling1D()
        self.head = layers.Dense(4, dtype="float32")

    def call(self, tokens):
        return self.head(self.pool(self.embed(tokens)))


def test_a_subclassed_token_model_is_fed_token_ids():
    report = check_model(TokenClassifier, "mixed_float16", input_shape=(12,))
    assert report.model["inputs"] == [{"shape": [8, 12], "dtype": "int32"}], report.to_text()
    assert any("token ids" in n for n in report.notes)


class TwoInputs(keras.Model):
    def __init__(self):
        super().__init__()
        self.left = layers.Dense(100, name="left")
        self.head = layers.Dense(4, dtype="float32")

    def call(self, image_features, text_features):
        return self.head(tf.concat([self.left(image_features), text_features], -1))


def test_a_call_with_two_positional_inputs_is_checked():
    report = check_model(TwoInputs, "mixed_float16", input_shape=[(16,), (8,)])
    assert pairs(report) == [("MP301", "left")], report.to_text()
