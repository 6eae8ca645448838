"""MP504 through ``if`` statements that test the same stable condition: a binding
made in one arm reaches the use in the later arm with the same test, and one made
in the arm of the other polarity does not."""

import textwrap

import helpers

MIXED = "import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n"


def fired(code):
    return helpers.fired(textwrap.dedent(code), "MP504", path="case.py")


PRE_NORM = MIXED + """
class Block(tf.keras.layers.Layer):
    def __init__(self, norm_first=True):
        super().__init__()
        self._norm_first = norm_first
        self.norm = tf.keras.layers.LayerNormalization(dtype=tf.float32)
        self.dense = tf.keras.layers.Dense(8)

    def call(self, inputs):
        attention_output = attend(inputs)
        if self._norm_first:
            attention_output = inputs + attention_output
        else:
            attention_output = self.norm(inputs + attention_output)
        if self._norm_first:
            source = attention_output
        layer_output = tf.cast(self.dense(attention_output), tf.float32){rebind}
        if self._norm_first:
            layer_output = source + layer_output
        return layer_output
"""


def test_a_binding_in_an_arm_reaches_the_later_arm_on_the_same_test():
    # ``source`` is the 16-bit residual: the arm that made it runs whenever this one does
    # (the else arm's float32 LayerNormalization output never reaches it)
    assert fired(PRE_NORM.format(rebind="")) == [(21, "MP504")]


def test_a_test_the_function_rebinds_is_not_compared():
    rebind = "\n        self._norm_first = not self._norm_first"
    assert fired(PRE_NORM.format(rebind=rebind)) == []


UPCAST = MIXED + """
class Gate(tf.keras.layers.Layer):
    def __init__(self, upcast):
        super().__init__()
        self.upcast = upcast
        self.dense = tf.keras.layers.Dense(8)

    def call(self, x, mask):
        h = self.dense(x)
        m = tf.cast(mask, tf.float32)
        if self.upcast:
            h = tf.cast(h, tf.float32)
        if {test}:
            return h * m
        return h * tf.cast(m, h.dtype)
"""


def test_a_binding_in_the_other_polarity_arm_does_not_reach():
    # under ``not self.upcast`` h is still the 16-bit Dense output
    assert fired(UPCAST.format(test="not self.upcast")) == [(16, "MP504")]


def test_the_same_polarity_arm_sees_the_cast():
    # under ``self.upcast`` both are float32: correct code
    assert fired(UPCAST.format(test="self.upcast")) == []


def test_a_test_that_calls_is_not_compared():
    code = UPCAST.replace("if self.upcast:", "if self.flag():").format(test="not self.flag()")
    assert fired(code) == []
