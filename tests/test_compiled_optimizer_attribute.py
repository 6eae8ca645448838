"""A Keras model's ``self.optimizer`` is what ``compile()`` sets, even where a base class
of another module of the project assigns the attribute itself (a mixin's helper, or the
Model class of a repository of Keras itself): an override of ``train_step`` that never
scales the loss is MP202 under mixed_float16."""

import helpers

BASE = """import tensorflow as tf


class OptimizerMixin:
    def use_optimizer(self, optimizer):
        self.optimizer = tf.keras.optimizers.get(optimizer)
"""

WIDE = """import tensorflow as tf

from base import OptimizerMixin

tf.keras.mixed_precision.set_global_policy("mixed_float16")


class Wide(OptimizerMixin, tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(1, dtype="float32")

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {}


model = Wide()
model.compile(optimizer="adam", loss="mse")
model.fit(None, None)
"""


def test_a_base_storing_the_optimizer_keeps_the_compiled_one(tmp_path):
    found = helpers.project_findings(tmp_path, {"pyproject.toml": "[project]\nname = 'wide'\n",
                                                "base.py": BASE, "wide.py": WIDE}, "MP202")
    assert found == [("wide.py", 21, "MP202")]
