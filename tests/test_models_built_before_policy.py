"""A custom loop that trains a model built before the policy was set runs in float32:
its layers read the global policy when they were constructed. The late policy is
MP405's finding; MP201 stays silent there and reports the model built after it."""

from __future__ import annotations

from helpers import fired

BUILT = """import tensorflow as tf
model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.Adam()
"""

STEP = """
def train_step(model, optimizer, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""

POLICY = "tf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
CALL = "train_step(model, optimizer, x, y)\n"


def test_a_step_training_a_model_built_before_the_policy_is_float32():
    assert fired(BUILT + STEP + POLICY + CALL, "MP201") == []


def test_a_step_reading_the_global_model_built_before_the_policy_is_float32():
    step = STEP.replace("def train_step(model, optimizer, x, y)", "def train_step(x, y)")
    assert fired(BUILT + step + POLICY + "train_step(x, y)\n", "MP201") == []


def test_a_model_built_after_the_policy_is_float16():
    assert fired(POLICY + BUILT + STEP + CALL, "MP201") == [(10, "MP201")]


def test_a_model_rebuilt_after_the_policy_is_float16():
    rebuilt = "model = tf.keras.Sequential([tf.keras.layers.Dense(10)])\n"
    assert fired(BUILT + STEP + POLICY + rebuilt + CALL, "MP201") == [(9, "MP201")]


def test_a_step_called_with_a_model_built_after_the_policy_is_float16():
    other = "other = tf.keras.Sequential([tf.keras.layers.Dense(10)])\n"
    assert fired(BUILT + STEP + POLICY + other + CALL + "train_step(other, optimizer, x, y)\n",
                 "MP201") == [(9, "MP201")]


NET = """import tensorflow as tf
class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(4)
    def call(self, x):
        return self.dense(x)
"""


def test_a_class_of_the_file_whose_init_builds_layers_builds_a_model_mp405():
    late = NET + "model = Net()\n" + POLICY + "y = model(x)\n"
    assert fired(late, "MP405") == [(9, "MP405")]
    # built after the policy, or a class that builds no layer when constructed: silent
    assert fired(NET + POLICY + "model = Net()\ny = model(x)\n", "MP405") == []
    lazy = NET.replace("        self.dense = tf.keras.layers.Dense(4)\n", "        self.units = 4\n")
    assert fired(lazy + "model = Net()\n" + POLICY + "y = model(x)\n", "MP405") == []
