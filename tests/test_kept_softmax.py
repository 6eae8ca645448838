"""A softmax that only layers which move or keep its values (Reshape, Flatten, Permute,
Dropout, Identity, a 16-bit linear Activation) pass to the output is still the model's
output (analysis/layers.under_kept_values): MP101 at the softmax, and its fix makes every
one of those layers float32, since each would autocast the probabilities back."""

from helpers import fired, fix

HEAD = """\
import tensorflow as tf
from tensorflow.keras import layers

tf.keras.mixed_precision.set_global_policy("mixed_float16")


def build(classes=10):
    inputs = layers.Input((32, 32, 3))
    x = layers.Conv2D(classes, 1)(inputs)
    x = layers.GlobalAveragePooling2D()(x)
{tail}
    return tf.keras.Model(inputs, x)


model = build()
model.compile("adam", "categorical_crossentropy")
model.fit(x_train, y_train)
"""

SOFTMAX = '    x = layers.Activation("softmax")(x)\n'


def _code(*tail: str) -> str:
    return HEAD.format(tail="".join(tail).rstrip("\n"))


def test_shape_only_layers_after_a_softmax_keep_it_at_the_output():
    for after in ('    x = layers.Reshape((classes,))(x)\n', '    x = layers.Flatten()(x)\n',
                  '    x = layers.Permute((1,))(x)\n', '    x = layers.Dropout(0.2)(x)\n',
                  '    x = layers.Reshape((1, classes))(x)\n    x = layers.Flatten()(x)\n',
                  '    x = layers.Activation("linear")(x)\n', '    x = layers.Identity()(x)\n'):
        assert fired(_code(SOFTMAX, after), "MP101", "MP102") == [(11, "MP101")], after


def test_the_softmax_layer_itself_and_a_reshape_before_it():
    code = _code('    x = layers.Conv2D(classes, 1)(x)\n    x = layers.Flatten()(x)\n',
                 '    x = layers.Softmax(name="probs")(x)\n')
    assert fired(code, "MP101", "MP102") == [(13, "MP101")]


def test_what_ends_the_softmax_stays_silent_or_is_another_output():
    ends = {
        # a float32 layer after the softmax casts its output (silent: the probabilities are float32)
        "float32 reshape": '    x = layers.Reshape((classes,), dtype="float32")(x)\n',
        "float32 dropout": '    x = layers.Dropout(0.2, dtype="float32")(x)\n',
        # a Lambda cast, a float32 Activation
        "cast": '    x = layers.Lambda(lambda t: tf.cast(t, tf.float32))(x)\n',
        "dtype from a parameter nobody knows": '    x = layers.Reshape((classes,), dtype=make_dtype())(x)\n',
    }
    for why, after in ends.items():
        assert fired(_code(SOFTMAX, after), "MP101") == [], why
    # a layer that computes after the softmax is the output: MP102's, not a softmax
    assert fired(_code(SOFTMAX, '    x = layers.Dense(classes)(x)\n'), "MP101", "MP102") == [(12, "MP102")]
    # an Activation that is not linear computes
    assert fired(_code(SOFTMAX, '    x = layers.Activation("relu")(x)\n'), "MP101", "MP102") == [(12, "MP102")]


def test_a_reshaped_sigmoid_is_no_softmax():
    code = _code('    x = layers.Activation("sigmoid")(x)\n', '    x = layers.Reshape((classes,))(x)\n')
    assert fired(code, "MP101") == []


def test_the_fix_gives_float32_to_the_softmax_and_each_layer_after_it():
    code = _code(SOFTMAX, '    x = layers.Reshape((classes,))(x)  # keep\n', '    x = layers.Dropout(0.2)(x)\n')
    fixed = fix(code, "MP101")
    assert 'layers.Activation("softmax", dtype="float32")(x)' in fixed
    assert 'layers.Reshape((classes,), dtype="float32")(x)  # keep' in fixed
    assert 'layers.Dropout(0.2, dtype="float32")(x)' in fixed
    assert fired(fixed, "MP101", "MP102") == []


PROJECT_LAYERS = """\
import tensorflow as tf
from tensorflow.keras import layers

tf.keras.mixed_precision.set_global_policy("mixed_float16")


class Tap(layers.Layer):
    \"\"\"Returns its input: a hook for debugging.\"\"\"

    def call(self, inputs):
        return inputs


class Scale(layers.Layer):
    def call(self, inputs):
        return inputs * 2.0


class NotALayer:
    def __call__(self, inputs):
        return inputs


def build(classes=10):
    inputs = layers.Input((32,))
    x = layers.Dense(classes, activation="softmax")(inputs)
    x = {head}()(x)
    return tf.keras.Model(inputs, x)


model = build()
model.compile("adam", "categorical_crossentropy")
model.fit(x_train, y_train)
"""


def test_a_project_layer_that_returns_its_input_keeps_the_softmax():
    assert fired(PROJECT_LAYERS.format(head="Tap"), "MP101") == [(26, "MP101")]
    fixed = fix(PROJECT_LAYERS.format(head="Tap"), "MP101")
    assert 'layers.Dense(classes, activation="softmax", dtype="float32")(inputs)' in fixed
    assert 'Tap(dtype="float32")(x)' in fixed  # unsafe: the project's __init__ must take it
    assert fix(PROJECT_LAYERS.format(head="Tap"), "MP101", unsafe=False).count('dtype="float32"') == 0


def test_project_layers_that_compute_or_are_no_layers_stay_silent():
    for head in ("Scale", "NotALayer"):
        assert fired(PROJECT_LAYERS.format(head=head), "MP101") == [], head
