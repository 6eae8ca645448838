"""A ``functools.partial`` of a Keras layer bound in another module of the project
(``ProbDense = partial(layers.Dense, activation="softmax")`` in blocks.py) is that layer
with those arguments where the model uses it: its last layer is judged like a
``Dense(n, activation="softmax")`` written there, and the fix passes the float32 dtype
at the call."""

import helpers

BLOCKS = """import functools

from keras import layers

ProbDense = functools.partial(layers.Dense, {preset})
"""

MODEL = """import keras
from keras import layers

from blocks import ProbDense

keras.config.set_dtype_policy("mixed_float16")


def build_model(num_classes):
    return keras.Sequential([keras.Input((16,)), layers.Dense(64, activation="relu"), ProbDense(num_classes)])


model = build_model(10)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
model.fit(None, None)
"""


def _project(tmp_path, preset):
    return helpers.write_files(tmp_path, {"pyproject.toml": "[project]\nname = 'partials'\n",
                                          "blocks.py": BLOCKS.format(preset=preset), "model.py": MODEL})


def _found(folder):
    return helpers.project_findings(folder, {}, "MP101,MP102")


def test_a_softmax_partial_of_another_module_is_the_output_layer(tmp_path):
    folder = _project(tmp_path, 'activation="softmax", name="probs"')
    assert _found(folder) == [("model.py", 10, "MP101")]
    helpers.run_cli("fix", "--no-cache", ".", cwd=folder)
    assert 'ProbDense(num_classes, dtype="float32")' in (folder / "model.py").read_text()
    assert _found(folder) == []


def test_a_float32_partial_is_silent_and_an_unknown_activation_no_softmax(tmp_path):
    assert _found(_project(tmp_path / "f32", 'activation="softmax", dtype="float32"')) == []
    # an activation blocks.py cannot tell: a 16-bit output all the same, but no softmax to name
    assert _found(_project(tmp_path / "unknown", "activation=ACT")) == [("model.py", 10, "MP102")]
    assert _found(_project(tmp_path / "linear", "activation=None")) == [("model.py", 10, "MP102")]
