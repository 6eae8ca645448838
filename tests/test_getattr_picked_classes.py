"""A layer class of another module picked by name (``head_cls = getattr(heads,
config.HEAD_CLASS)``, the name a constant of a config module) is that class where the
model builds it: its ``call`` is judged in its module like an import of the class."""

import helpers

HEADS = """import keras
from keras import ops


class SoftmaxHead(keras.layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units))

    def call(self, x):
        return ops.softmax(ops.matmul(x, self.kernel), axis=-1)


class LogitHead(SoftmaxHead):
    def call(self, x):
        return ops.cast(ops.matmul(x, self.kernel), "float32")
"""

MODEL = """import keras

import config
import heads

keras.config.set_dtype_policy("mixed_float16")


def build_model():
    head_cls = {picker}
    inputs = keras.Input((48,))
    x = keras.layers.Dense(64, activation="relu")(inputs)
    return keras.Model(inputs, head_cls(12)(x))


model = build_model()
model.compile(optimizer="adam", loss="categorical_crossentropy")
model.fit(None, None)
"""


def _found(tmp_path, head, picker="getattr(heads, config.HEAD_CLASS)"):
    return helpers.project_findings(tmp_path, {"pyproject.toml": "[project]\nname = 'picked'\n",
                                               "config.py": f'HEAD_CLASS = "{head}"\n', "heads.py": HEADS,
                                               "model.py": MODEL.format(picker=picker)}, "MP101,MP102")


def test_the_class_a_config_names_is_built(tmp_path):
    assert _found(tmp_path / "softmax", "SoftmaxHead") == [("model.py", 13, "MP101")]
    assert _found(tmp_path / "logits", "LogitHead") == []


def test_a_name_not_known_here_stays_silent(tmp_path):
    assert _found(tmp_path / "runtime", "SoftmaxHead", picker="getattr(heads, input())") == []
