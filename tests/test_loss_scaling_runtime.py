"""The MP201 fix must produce a training loop that runs and scales its loss.

Fixes the Keras 3 custom-loop fixture with mplint (unsafe fixes, the Keras
generation read from the installed packages), then runs two steps of the fixed
code with real TensorFlow under mixed_float16. Skipped when TensorFlow is absent;
CI installs tensorflow-cpu.
"""

import importlib.util
import math
from pathlib import Path

import pytest

from mplint.api import fix_text, make_linter
from mplint.semantic.keras_version import installed_generation

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "loss_scaling" / "keras3_custom_loop.py"

pytestmark = pytest.mark.slow  # imports TensorFlow


def _import(path: Path):
    """Import the fixed file as a module (tf.function reads its source from disk)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return vars(module)


def test_fixed_keras3_loop_runs_with_loss_scaling(keras3, tmp_path):
    tf, keras = keras3
    import numpy as np

    assert installed_generation() == 3
    fixed = fix_text(FIXTURE.read_text(encoding="utf-8"), path=str(FIXTURE), unsafe=True,
                     linter=make_linter())
    assert "LossScaleOptimizer(" in fixed and ".scale_loss(loss)" in fixed

    fixed_path = tmp_path / "fixed_keras3_loop.py"
    fixed_path.write_text(fixed, encoding="utf-8")
    namespace = _import(fixed_path)
    optimizer, model = namespace["optimizer"], namespace["model"]
    assert isinstance(optimizer, keras.mixed_precision.LossScaleOptimizer)
    assert keras.mixed_precision.global_policy().name == "mixed_float16"

    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 16)).astype("float32")
    y = rng.normal(size=(32, 1)).astype("float32")
    # The true gradients, before any update, from an unscaled tape on the same model.
    with tf.GradientTape() as tape:
        reference_loss = namespace["loss_fn"](y, model(x, training=True))
    reference = [g.numpy() for g in tape.gradient(reference_loss, model.trainable_variables)]
    scale = float(optimizer.initial_scale)

    for step in range(2):
        loss, grads = namespace["train_step"](x, y)
        grads = [g.numpy() for g in grads]
        assert math.isfinite(float(loss))
        assert all(np.isfinite(g).all() for g in grads)
        if step == 0:
            # The step differentiated the scaled loss: its gradients are the true ones times the scale.
            for got, want in zip(grads, reference):
                np.testing.assert_allclose(got, want * scale, rtol=0.05, atol=scale * 1e-3)
    assert int(optimizer.iterations.numpy()) == 2
    assert float(optimizer.dynamic_scale.numpy()) == scale  # finite steps: the scale was kept
