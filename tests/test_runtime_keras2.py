"""The runtime checker on Keras 2 models built with real tf_keras (CPU): the same cases as
Keras 3, with Keras 2's loss-scaling protocol (get_scaled_loss, get_unscaled_gradients)."""

from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")
tf_keras = pytest.importorskip("tf_keras")

from mplint.runtime import check_model  # noqa: E402
from mplint.runtime.target import load_target  # noqa: E402
from runtime_support import float32_outside, pairs  # noqa: E402,F401

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "runtime"


@pytest.fixture(autouse=True)
def tf_keras_float32_outside():
    """tf_keras keeps its own global policy: it too starts and ends as float32."""
    assert tf_keras.mixed_precision.global_policy().name == "float32"
    yield
    leaked = tf_keras.mixed_precision.global_policy().name
    tf_keras.mixed_precision.set_global_policy("float32")
    assert leaked == "float32"


def factory(spec):
    return load_target(str(FIX / spec)).factory


def test_the_guides_float32_activation_head_is_correct_under_both_policies():
    # Keras 2 keeps a node's single input bare (a KerasTensor that cannot be iterated).
    report = check_model(factory("keras2_models.py:build_correct_model"))
    assert report.findings == [], report.to_text()
    assert report.versions["keras_package"] == "tf_keras"
    assert report.versions["keras_major"] == 2
    assert "tf_keras 2." in report.to_text()


def test_a_float16_softmax_head_is_mp101_once():
    report = check_model(factory("keras2_models.py:build_incorrect_model"))
    assert pairs(report) == [("MP101", "predictions")], report.to_text()
    assert report.findings[0].policies == ("mixed_float16", "mixed_bfloat16")


def line_of(text, name="keras2_models.py"):
    lines = (FIX / name).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_alignment_in_auto_named_tf_keras_layers_is_reported_once_with_its_line():
    # The second policy's build names its layers dense_2, conv2d_1: still one finding each.
    report = check_model(factory("keras2_models.py:build_unaligned"))
    found = sorted((f.rule, f.layer, f.line, f.policy) for f in report.findings)
    assert found == [("MP301", "dense", line_of("Dense(100"), None),
                     ("MP302", "conv2d", line_of("Conv2D(30"), None)], report.to_text()
    assert all(f.path and f.path.endswith("keras2_models.py") for f in report.findings)


def test_a_lazy_import_of_tf_keras_takes_the_policy():
    # The factory imports tf_keras itself: the model must be built under the policy, not
    # rebuilt from float32 (which would turn MP101 into a note).
    report = check_model(factory("keras2_lazy.py:build_incorrect_model"), "mixed_float16")
    assert pairs(report) == [("MP101", "predictions")], report.to_text()
    assert not any("rebuilt" in n for n in report.notes)


@pytest.mark.parametrize("spec,expected,needle", [
    ("build_forgets_to_scale", [("MP202", None)], "get_scaled_loss"),
    ("build_never_unscales", [("MP206", None)], "never unscaled"),
    ("build_scales_as_the_guide_says", [], None),
    ("build_correct_model", [], None),  # Keras 2's own train_step: minimize() scales
])
def test_keras2_train_steps(spec, expected, needle):
    report = check_model(factory(f"keras2_models.py:{spec}"), "mixed_float16", train_step=True)
    assert pairs(report) == expected, report.to_text()
    step = report.train_step[0]
    assert "skipped" not in step, step
    assert step["optimizer"].startswith("LossScaleOptimizer")
    if needle:
        assert needle in report.findings[0].message


def test_the_guides_keras2_step_in_the_default_mode_runs_under_float16_and_warns_for_bfloat16(capsys):
    from mplint.runtime.command import main

    # compile() wraps the optimizer in a LossScaleOptimizer only under mixed_float16: the
    # guide's get_scaled_loss has nothing to call under mixed_bfloat16. Checked under one
    # policy, so not an error; the warning says why the other was not.
    rc = main([f"{FIX / 'keras2_models.py'}:build_scales_as_the_guide_says", "--train-step", "--quiet"])
    captured = capsys.readouterr()
    assert rc == 0, captured.out + captured.err
    assert "Train step (mixed_float16): own train_step on (x, y)" in captured.out
    assert ("mplint: warning: --train-step was not checked under mixed_bfloat16: the training step fails "
            "in float32 too: AttributeError: the optimizer Adam (optimizer), no LossScaleOptimizer under "
            "mixed_bfloat16, has no attribute 'get_scaled_loss'") in captured.err


@pytest.mark.parametrize("spec,expected", [("build_gan", [("MP202", None)]), ("build_correct_gan", [])])
def test_a_keras2_gan_with_two_optimizers(spec, expected):
    report = check_model(factory(f"keras2_models.py:{spec}"), "mixed_float16", train_step=True)
    assert pairs(report) == expected, report.to_text()
    assert "skipped" not in report.train_step[0], report.train_step
    if expected:
        assert report.findings[0].message.startswith("g_optimizer (LossScaleOptimizerV3): ")
        assert "self.g_optimizer.get_scaled_loss(loss)" in report.findings[0].message
