"""MP504 in functional model code: judged only where the file certainly runs Keras 2,
whose TensorFlow ops on KerasTensors raise on mixed dtypes when the model is built
(Keras 3 promotes them), and with a model input as a float32 tensor."""

import textwrap

import helpers

KERAS2 = "import tensorflow as tf\ntf.keras.mixed_precision.experimental.set_policy('mixed_float16')\n"
FROM_IMPORT = ("import tensorflow as tf\nfrom tensorflow.keras.mixed_precision import experimental as mp\n"
               "mp.set_policy('mixed_float16')\n")
UNKNOWN = "import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n"


def fired(code, **settings):
    return helpers.fired(textwrap.dedent(code), "MP504", path="case.py", **settings)


CONCAT = """
def build():
    inputs = tf.keras.Input((8, 8, 3){dtype})
    h = tf.keras.layers.Conv2D(3, 1, activation="tanh")(inputs)
    both = {combine}
    return tf.keras.Model(inputs, tf.keras.layers.Conv2D(1, 1, dtype="float32")(both))
"""


def test_a_float32_input_concatenated_with_a_layer_output_under_keras2():
    code = CONCAT.format(dtype="", combine="tf.concat([inputs, h], axis=-1)")
    assert fired(KERAS2 + code) == [(7, "MP504")]
    # ``from ...mixed_precision import experimental`` is Keras 2 too
    assert fired(FROM_IMPORT + code) == [(8, "MP504")]


def test_an_input_whose_shape_is_a_keyword_is_where_the_float32_tensor_is_made():
    # ``Input(shape=...)`` has no positional argument: still the model input that
    # makes the float32 tensor (pix2pix: tf.concat([Input(shape=...), generator(...)]))
    code = CONCAT.format(dtype="", combine="tf.concat([inputs, h], axis=-1)").replace(
        "tf.keras.Input((8, 8, 3)", "tf.keras.Input(shape=(8, 8, 3)")
    assert fired(KERAS2 + code) == [(7, "MP504")]
    assert fired(KERAS2 + code.replace("Input(shape=(8, 8, 3)", "Input(shape=(8, 8, 3), dtype='float16'")) == []


def test_functional_code_is_silent_where_the_generation_is_unknown_or_keras3():
    code = CONCAT.format(dtype="", combine="tf.concat([inputs, h], axis=-1)")
    assert fired(UNKNOWN + code) == []
    assert fired(UNKNOWN + code, keras_version=3) == []


def test_a_keras_layer_casts_its_inputs_and_an_input_may_be_16_bit():
    assert fired(KERAS2 + CONCAT.format(dtype="", combine="tf.keras.layers.Concatenate()([inputs, h])")) == []
    assert fired(KERAS2 + CONCAT.format(dtype=", dtype='float16'", combine="tf.concat([inputs, h], axis=-1)")) == []
    # an integer input is no float32 tensor
    assert fired(KERAS2 + CONCAT.format(dtype=", dtype='int32'", combine="tf.concat([inputs, h], axis=-1)")) == []


def test_a_float32_cast_gating_a_layer_output():
    code = KERAS2 + """
def build():
    inputs = tf.keras.Input((8, 8, 3))
    h = tf.keras.layers.Conv2D(3, 1)(inputs)
    cls = tf.cast(tf.argmax(h, axis=-1), tf.float32)
    return tf.keras.Model(inputs, h * cls[..., tf.newaxis])
"""
    assert fired(code) == [(8, "MP504")]
    assert fired(code.replace("tf.float32)", "h.dtype)")) == []
