"""The runtime checker's smaller gaps, on real TensorFlow (CPU): the user's layer named for
inf/NaN inside a Keras layer, hidden layers as wide as the output, a Lambda that fails
while the model is built, and alignment in layers the user cannot resize."""

import pytest

tf = pytest.importorskip("tensorflow")

from mplint.runtime import check_model  # noqa: E402
from mplint.runtime.check import CheckError  # noqa: E402
from runtime_support import float32_outside, pairs  # noqa: E402,F401

keras = tf.keras
layers = keras.layers


def test_inf_inside_multi_head_attention_names_the_attention_layer():
    def build():
        inputs = keras.Input((16, 32))
        x = layers.Lambda(lambda v: v * 300.0, name="scale")(inputs)  # scores beyond 65504
        x = layers.MultiHeadAttention(2, 64, dropout=0.1, name="attn")(x, x)
        x = layers.GlobalAveragePooling1D()(x)
        return keras.Model(inputs, layers.Dense(8, dtype="float32")(x))

    report = check_model(build, "mixed_float16")
    assert [(f.rule, f.layer, f.layer_class) for f in report.findings] == [
        ("MP501", "attn", "MultiHeadAttention")], report.to_text()
    assert "(in its inner '" in report.findings[0].message
    assert pairs(check_model(build, "mixed_bfloat16")) == []


def test_a_hidden_layer_as_wide_as_the_output_is_checked():
    def build():
        inputs = keras.Input((64,))
        x = layers.Dense(100, activation="relu", name="backbone")(inputs)  # 100 as the classes
        x = layers.Dense(100, name="logits")(x)
        x = layers.Dropout(0.1)(x)
        return keras.Model(inputs, layers.Activation("softmax", dtype="float32", name="probs")(x))

    report = check_model(build, "mixed_float16")
    # The head's 100 units are the data's; the backbone's are a choice.
    assert [(f.rule, f.layer) for f in report.findings] == [("MP301", "backbone")], report.to_text()
    assert "units=100" in report.findings[0].message


def test_a_hidden_layer_as_wide_as_the_output_in_a_subclassed_model():
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.backbone = layers.Dense(10, activation="relu", name="backbone")
            self.head = layers.Dense(10, name="head")

        def call(self, x):
            return tf.nn.softmax(tf.cast(self.head(self.backbone(x)), tf.float32))

    report = check_model(Net, "mixed_float16", input_shape=(16,))
    assert pairs(report) == [("MP301", "backbone")], report.to_text()


def test_a_lambda_failing_while_the_model_is_built_is_mp504_with_the_dtype_clash():
    def build():
        inputs = keras.Input((16,))
        x = layers.Dense(16)(inputs)
        x = layers.Lambda(lambda v: v + tf.random.normal(tf.shape(v)), name="noise")(x)
        return keras.Model(inputs, layers.Dense(8, dtype="float32")(x))

    report = check_model(build, "mixed_float16")
    assert [(f.rule, f.layer, f.layer_class) for f in report.findings] == [("MP504", "noise", "Lambda")]
    assert "half tensor but is a float tensor" in report.findings[0].message


def test_a_lambda_failing_in_float32_too_is_an_error_not_a_finding():
    def build():
        inputs = keras.Input((16,))
        x = layers.Lambda(lambda v: v + tf.zeros((3,)), name="broken")(inputs)
        return keras.Model(inputs, layers.Dense(8, dtype="float32")(x))

    with pytest.raises(CheckError, match="fails under mixed_float16"):
        check_model(build, "mixed_float16")


def test_alignment_in_keras_applications_layers_is_a_note():
    def build():
        return keras.applications.EfficientNetB0(weights=None, input_shape=(32, 32, 3), classes=8,
                                                 classifier_activation=None)

    report = check_model(build, "mixed_bfloat16")
    # The squeeze-excite convs (4 filters, ...) are keras.applications' sizes, not the user's.
    assert pairs(report) == [("MP102", "predictions")], report.to_text()
    note = next(n for n in report.notes if n.startswith("alignment in layers of keras.applications"))
    assert "MP302" in note and "se_reduce" in note


def test_a_users_head_on_an_applications_backbone_is_still_checked():
    def build():
        base = keras.applications.MobileNetV2(weights=None, include_top=False, input_shape=(32, 32, 3),
                                              alpha=0.35)
        inputs = keras.Input((32, 32, 3))
        x = layers.GlobalAveragePooling2D()(base(inputs))
        x = layers.Dense(100, activation="relu", name="neck")(x)
        return keras.Model(inputs, layers.Dense(10, dtype="float32", name="head")(x))

    report = check_model(build, "mixed_bfloat16")
    assert pairs(report) == [("MP301", "neck")], report.to_text()
    assert "units=100 is not a multiple of 8 (use 104)" in report.findings[0].message


def test_an_applications_model_rewired_into_the_users_model_is_still_a_library():
    def build():
        base = keras.applications.EfficientNetB0(weights=None, input_shape=(32, 32, 3), classes=8,
                                                 classifier_activation=None)
        head = layers.Activation("softmax", dtype="float32")(base.output)
        return keras.Model(base.input, head)  # the application's layers, directly in this model

    report = check_model(build, "mixed_bfloat16")
    assert pairs(report) == [], report.to_text()
    assert any(n.startswith("alignment in layers of keras.applications efficientnetb0") for n in report.notes)


def _bert(hidden_dim):
    keras_hub = pytest.importorskip("keras_hub")
    return keras_hub.models.BertBackbone(vocabulary_size=1000, num_layers=1, num_heads=2,
                                         hidden_dim=hidden_dim, intermediate_dim=128,
                                         max_sequence_length=32)


def test_a_keras_hub_backbone_sized_by_the_users_code_gets_findings_at_its_line():
    def build():
        backbone = _bert(hidden_dim=100)  # the user's choice: 100 is not a multiple of 8
        return keras.Model(backbone.input, layers.Dense(2, dtype="float32")(backbone(backbone.input)["pooled_output"]))

    report = check_model(build, "mixed_bfloat16")
    assert not any("your code does not size" in n for n in report.notes), report.notes
    found = {(f.rule, f.layer) for f in report.findings}
    assert ("MP301", "pooled_dense") in found and ("MP301", "token_embedding") in found, report.to_text()
    assert {f.line for f in report.findings} == {_bert.__code__.co_firstlineno + 2}  # the constructor call


def test_a_keras_hub_backbone_loaded_from_a_config_is_the_librarys_sizing():
    def build():
        config = _bert(hidden_dim=100).get_config()
        backbone = type(_bert(hidden_dim=64)).from_config(config)  # as from_preset loads one
        return keras.Model(backbone.input, layers.Dense(2, dtype="float32")(backbone(backbone.input)["pooled_output"]))

    report = check_model(build, "mixed_bfloat16")
    assert pairs(report) == [], report.to_text()
    assert any(n.startswith("alignment in layers of keras_hub BertBackbone") for n in report.notes)
