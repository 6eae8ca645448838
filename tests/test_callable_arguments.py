"""A function handed to a model builder as an argument (``build(softmax_head)``, which
calls ``head_fn(x, n)`` for its output) is the function that call runs: each call of
the builder is judged with the function it passes."""

import helpers

CODE = """import tensorflow as tf


def softmax_head(x, n):
    return tf.keras.layers.Dense(n, activation="softmax")(x)


def linear_head(x, n):
    return tf.keras.layers.Dense(n, dtype="float32")(x)


def build(head_fn, n=10):
    inputs = tf.keras.Input((32,))
    x = tf.keras.layers.Dense(64, activation="relu")(inputs)
    return tf.keras.Model(inputs, head_fn(x, n))


tf.keras.mixed_precision.set_global_policy("mixed_float16")
CALLS
"""


def test_the_handed_function_builds_the_output():
    assert helpers.fired(CODE.replace("CALLS", "model = build(softmax_head)\nmodel.fit(None, None)"),
                         "MP101", "MP102") == [(5, "MP101")]


def test_a_float32_head_handed_is_silent():
    assert helpers.fired(CODE.replace("CALLS", "model = build(linear_head)\nmodel.fit(None, None)"),
                         "MP101", "MP102") == []


def test_each_call_is_judged_with_its_own_function():
    calls = "a = build(linear_head)\na.fit(None, None)\nb = build(head_fn=softmax_head)\nb.fit(None, None)"
    assert helpers.fired(CODE.replace("CALLS", calls), "MP101", "MP102") == [(5, "MP101")]


def test_an_unknown_function_stays_silent():
    calls = "import heads\nmodel = build(heads.pick())\nmodel.fit(None, None)"
    assert helpers.fired(CODE.replace("CALLS", calls), "MP101", "MP102") == []
