"""Gradients divided by the loss scale in a function of another project module
(``grads = unscale(grads, optimizer)``): read there like the same division written in
the train step. On Keras 3, ``apply()`` unscales again (MP206 at the call); on Keras 2
it is the unscaling the step needs (no MP203)."""

import json

import helpers

AMP_UTILS = """def unscale(grads, optimizer):
    scale = optimizer.{attribute}
    return [None if g is None else g / {divisor} for g in grads]
"""

KERAS3 = """import keras
import tensorflow as tf

from amp_utils import unscale

keras.config.set_dtype_policy("mixed_float16")
model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(64), keras.layers.Dense(1, dtype="float32")])
optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.05))


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = keras.ops.mean(keras.losses.mean_squared_error(y, model(x, training=True)))
        scaled = optimizer.scale_loss(loss)
    grads = tape.gradient(scaled, model.trainable_variables)
    grads = unscale(grads, optimizer)
    optimizer.apply(grads, model.trainable_variables)
    return loss
"""

KERAS2 = """import tensorflow as tf

from amp_utils import unscale

tf.keras.mixed_precision.set_global_policy("mixed_float16")
model = tf.keras.Sequential([tf.keras.layers.Dense(64), tf.keras.layers.Dense(1, dtype="float32")])
optimizer = tf.keras.mixed_precision.LossScaleOptimizer(tf.keras.optimizers.SGD(0.05))


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.keras.losses.mse(y, model(x, training=True)))
        scaled = optimizer.get_scaled_loss(loss)
    grads = tape.gradient(scaled, model.trainable_variables)
    grads = unscale(grads, optimizer)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
"""


def check(tmp_path, train, requirements, attribute="dynamic_scale", divisor="scale"):
    folder = helpers.write_files(tmp_path, {
        "pyproject.toml": "[project]\nname = 'steps'\n",
        "requirements.txt": requirements,
        "amp_utils.py": AMP_UTILS.format(attribute=attribute, divisor=divisor),
        "train.py": train,
    })
    result = helpers.run_cli("check", "--select", "MP2", "--output-format", "json", "--no-cache", ".", cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    return [(f["path"], f["line"], f["rule"], f["message"]) for f in json.loads(result.stdout)]


def test_keras_3_apply_unscales_what_the_helper_unscaled(tmp_path):
    [(path, line, rule, message)] = check(tmp_path, KERAS3, "tensorflow>=2.16\n")
    assert (path, line, rule) == ("train.py", 17, "MP206")
    assert message.startswith("`unscale()` (amp_utils.py) divides the gradients by the loss scale")


def test_silent_where_the_helper_is_the_unscaling_or_divides_by_something_else(tmp_path):
    # Keras 2: the helper's division is the unscaling apply_gradients() does not do
    assert check(tmp_path / "k2", KERAS2, "tensorflow==2.15.0\n", attribute="loss_scale") == []
    # a division by the number of replicas is no unscaling
    assert check(tmp_path / "k3", KERAS3, "tensorflow>=2.16\n", divisor="8.0") == []


def test_a_method_inherited_from_a_base_of_another_module_is_read_there(tmp_path):
    """``self.unscale(grads, optimizer)`` in a trainer whose base class (another module)
    defines ``unscale``: the base's method divides by the loss scale, as a function would."""
    head, step = KERAS3.split("@tf.function\n")
    head = head.replace("from amp_utils import unscale\n", "from amp_utils import Base\n")
    step = step.replace("def train_step(x, y):", "def train_step(self, x, y):") \
        .replace("unscale(grads, optimizer)", "self.unscale(grads, optimizer)")
    method = "".join("    " + line if line.strip() else line for line in ("@tf.function\n" + step).splitlines(True))
    folder = helpers.write_files(tmp_path, {
        "pyproject.toml": "[project]\nname = 'steps'\n",
        "requirements.txt": "tensorflow>=2.16\n",
        "amp_utils.py": "class Base:\n    def unscale(self, grads, optimizer):\n"
                        "        return [g / optimizer.dynamic_scale for g in grads]\n",
        "train.py": head + "class Trainer(Base):\n" + method,
    })
    result = helpers.run_cli("check", "--select", "MP206", "--output-format", "json", "--no-cache", ".", cwd=folder)
    found = [(f["path"], f["rule"], f["message"][:40]) for f in json.loads(result.stdout)]
    assert found == [("train.py", "MP206", "`self.unscale()` (amp_utils.py) divides ")]
