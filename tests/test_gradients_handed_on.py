"""Gradients that reach the update through a helper mplint cannot read, handed the
optimizer (``unscale(opt, grads)`` from another module), may be unscaled there: MP203
stays silent. A helper it can read is followed, and one not handed the optimizer
cannot unscale."""

from __future__ import annotations

import json

import pytest

import helpers

STEP = """\
import tensorflow as tf
import tf_keras as keras

{imports}

keras.mixed_precision.set_global_policy("mixed_float16")
model = keras.Sequential([keras.layers.Dense(32, input_shape=(6,)), keras.layers.Dense(1, dtype="float32")])
opt = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.Adam())
{helper}

@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
        scaled_loss = opt.get_scaled_loss(loss)
    grads = {call}
    opt.apply_gradients(zip(grads, model.trainable_variables))
    return loss
"""

UTILS = """\
def unscale(optimizer, grads):
    return optimizer.get_unscaled_gradients(grads)


def finite(grads):
    return grads
"""

GRADS = "tape.gradient(scaled_loss, model.trainable_variables)"


@pytest.mark.parametrize("imports, helper, call, found", [
    ("from utils import unscale", "", f"unscale(opt, {GRADS})", False),  # another module's helper, given opt
    ("import utils", "", f"utils.unscale(opt, {GRADS})", False),
    ("from utils import finite", "", f"finite({GRADS})", True),  # not handed the optimizer: cannot unscale
    ("", "\n\ndef log(optimizer, grads):\n    print(optimizer)\n    return grads\n", f"log(opt, {GRADS})", True),
    ("", "\n\ndef unscale(optimizer, grads):\n    return optimizer.get_unscaled_gradients(grads)\n",
     f"unscale(opt, {GRADS})", False),  # a helper of this file that unscales
    ("", "", GRADS, True),
])
def test_a_helper_handed_the_optimizer(tmp_path, imports, helper, call, found):
    files = {".git/HEAD": "", "utils.py": UTILS, "train.py": STEP.format(imports=imports, helper=helper, call=call)}
    result = helpers.run_cli("check", "--no-cache", "--select", "MP203", "--output-format", "json", ".",
                             cwd=helpers.write_files(tmp_path, files))
    assert result.returncode in (0, 1), result.stderr
    assert bool(json.loads(result.stdout)) == found
