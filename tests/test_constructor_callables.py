"""A function a layer's constructions hand it (``PerturbedDense(128,
perturb=augment.feature_jitter)`` in train.py) and its ``__init__`` keeps on ``self``
runs where ``call`` calls ``self.perturb(h)``: it is governed by the policy that reaches
the layer and gets the 16-bit tensor ``call`` hands it, judged in its own module."""

import helpers

AUGMENT = """import tensorflow as tf


def feature_jitter(x, stddev=0.05):
    noise = tf.random.normal(tf.shape(x), stddev=stddev{dtype})
    return x + noise
"""

LAYERS = """import tensorflow as tf
from tensorflow import keras


class PerturbedDense(keras.layers.Layer):
    def __init__(self, units, perturb=None, **kwargs):
        super().__init__(**kwargs)
        self.perturb = perturb
        self.dense = keras.layers.Dense(units)

    def call(self, inputs, training=False):
        h = self.dense(inputs)
        if training and self.perturb is not None:
            h = self.perturb(h)
        return tf.nn.relu(h)
"""

TRAIN = """from tensorflow import keras

import augment
from layers import PerturbedDense

keras.mixed_precision.set_global_policy("mixed_float16")
inp = keras.Input((40,))
x = PerturbedDense(128, perturb=augment.feature_jitter)(inp)
model = keras.Model(inp, keras.layers.Dense(1, dtype="float32")(x))
model.fit(None, None)
"""


def _found(tmp_path, dtype=""):
    return helpers.project_findings(tmp_path, {"pyproject.toml": "[project]\nname = 'jitter'\n",
                                               "augment.py": AUGMENT.format(dtype=dtype), "layers.py": LAYERS,
                                               "train.py": TRAIN}, "MP504")


def test_the_handed_function_gets_the_16_bit_tensor(tmp_path):
    assert _found(tmp_path) == [("augment.py", 6, "MP504")]


def test_noise_in_the_input_dtype_is_silent(tmp_path):
    assert _found(tmp_path, ", dtype=x.dtype") == []
