"""An optimizer another module of the project makes once at its top level
(``OPTIMIZER = tf.keras.optimizers.Adam(1e-3)`` in config.py) is that optimizer where
a custom loop applies gradients with it, read as ``config.OPTIMIZER`` or imported by
name: plain (MP201), or a LossScaleOptimizer (scaled: silent; unscaled: MP202)."""

import helpers

CONFIG = """import tensorflow as tf

OPTIMIZER = {optimizer}
"""

LOOP = """import tensorflow as tf
{importing}

tf.keras.mixed_precision.set_global_policy("mixed_float16")
model = tf.keras.Sequential([tf.keras.Input((16,)), tf.keras.layers.Dense(64), tf.keras.layers.Dense(1, dtype="float32")])


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
        {scaling}
    grads = tape.gradient(loss, model.trainable_variables)
    {unscaling}
    {optimizer}.apply_gradients(zip(grads, model.trainable_variables))
"""

PLAIN = "tf.keras.optimizers.Adam(1e-3)"
WRAPPED = "tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.Adam(1e-3))"


def _found(tmp_path, optimizer, importing="import config", name="config.OPTIMIZER", scaled=False):
    scaling = f"loss = {name}.get_scaled_loss(loss)" if scaled else "pass"
    unscaling = f"grads = {name}.get_unscaled_gradients(grads)" if scaled else "pass"
    files = {"requirements.txt": "tensorflow==2.12\n", "config.py": CONFIG.format(optimizer=optimizer),
             "train.py": LOOP.format(importing=importing, scaling=scaling, unscaling=unscaling, optimizer=name)}
    return helpers.project_findings(tmp_path, files, "MP201,MP202")


def test_plain_optimizer_of_a_config_module(tmp_path):
    assert _found(tmp_path, PLAIN) == [("train.py", 15, "MP201")]


def test_plain_optimizer_imported_by_name(tmp_path):
    assert _found(tmp_path, PLAIN, "from config import OPTIMIZER", "OPTIMIZER") == [("train.py", 15, "MP201")]


def test_wrapped_optimizer_scaled_is_silent(tmp_path):
    assert _found(tmp_path, WRAPPED, scaled=True) == []


def test_wrapped_optimizer_unscaled(tmp_path):
    assert _found(tmp_path, WRAPPED) == [("train.py", 15, "MP202")]


def test_optimizer_made_by_an_unknown_call_is_silent(tmp_path):
    assert _found(tmp_path, "make_optimizer()") == []
