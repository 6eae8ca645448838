"""A class deriving from a Keras layer class of another module of the project is a
layer (its ``call`` and the methods it runs compute under autocast), and a method it
overrides runs with what the base's ``call`` hands it: ``self.mask(scores)`` in the
base, ``scores + (1 - m) * -1e9`` in the subclass's override (virtual dispatch)."""

import helpers

BASE = """import tensorflow as tf


class Scored(tf.keras.layers.Layer):
    def __init__(self, dim, **kwargs):
        super().__init__({init})
        self.q = tf.keras.layers.Dense(dim)
        self.k = tf.keras.layers.Dense(dim)

    def mask(self, scores, pad):
        return scores

    def call(self, x, pad=None):
        scores = {scores}
        if pad is not None:
            scores = self.mask(scores, pad)
        return tf.nn.softmax(scores, axis=-1)
"""

SUB = """import tensorflow as tf

from base import Scored


class Padded(Scored):
    def mask(self, scores, pad):
        pad = tf.cast(pad[:, None, :], scores.dtype)
        return scores + (1.0 - pad) * -1e9
"""

MODEL = """import tensorflow as tf

from sub import Padded

tf.keras.mixed_precision.set_global_policy("mixed_float16")
inputs = tf.keras.Input((32, 16))
pad = tf.keras.Input((32,))
h = Padded(16)(inputs, pad=pad)
model = tf.keras.Model([inputs, pad], tf.keras.layers.Dense(1, dtype="float32")(h))
model.fit(None, None)
"""


def _found(tmp_path, init="**kwargs", scores="tf.matmul(self.q(x), self.k(x), transpose_b=True)"):
    return helpers.project_findings(tmp_path, {"pyproject.toml": "[project]\nname = 'attn'\n",
                                               "base.py": BASE.format(init=init, scores=scores),
                                               "sub.py": SUB, "model.py": MODEL}, "MP5")


def test_an_override_the_base_call_runs_gets_its_16_bit_scores(tmp_path):
    assert _found(tmp_path) == [("sub.py", 9, "MP501")]


def test_float32_scores_or_a_float32_base_keep_it_silent(tmp_path):
    assert _found(tmp_path / "cast", scores="tf.cast(tf.matmul(self.q(x), self.k(x), transpose_b=True), tf.float32)") == []
    assert _found(tmp_path / "pinned", init='dtype="float32", **kwargs') == []
