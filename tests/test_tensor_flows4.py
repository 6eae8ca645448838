"""MP504 and the numeric rules over more of a program's flow: a ``self`` attribute
overwritten in ``__init__``, tables kept from ``build``, helpers given a layer's
tensors, and the dtype Keras picks when none is named (``floatx``)."""

import textwrap

import helpers

HEADER = "import tensorflow as tf\nfrom tensorflow import keras\nfrom tensorflow.keras import backend as K\n"
MIXED = HEADER + "keras.mixed_precision.set_global_policy('mixed_float16')\n"


def fired(code, rule="MP504"):
    return helpers.fired(textwrap.dedent(code), rule, path="case.py")


ACTIVATED = MIXED + """
class Attention(keras.layers.Layer):
    def __init__(self, units, activation=None):
        super().__init__()
        self.units = units
        self.activation = activation
        self.activation = keras.activations.get(activation){later}

    def build(self, shape):
        self.kernel = self.add_weight(name="k", shape=(shape[-1], self.units))

    def call(self, x):
        q = self.activation(K.dot(x, self.kernel))
        return q / K.sqrt(K.constant(self.units, dtype=K.floatx()))
"""


def test_an_attribute_overwritten_later_in_init_has_the_later_value():
    # the first assignment is dead once __init__ returns: the activation keeps q's dtype
    assert fired(ACTIVATED.format(later="")) == [(18, "MP504")]


def test_an_attribute_reassigned_on_a_branch_stays_unknown():
    # ``if`` makes the later assignment conditional: the parameter may survive, and
    # an unknown callable's output has no known dtype
    code = ACTIVATED.format(later="").replace(
        "        self.activation = keras.activations.get(activation)",
        "        if activation is not None:\n            self.activation = keras.activations.get(activation)")
    assert fired(code) == []
