"""A library's softmax layer class is MP101's where other code of the project makes it a
model's output (``analysis.output_uses``): a one-file run of the library module, cached as
pre-commit runs it, follows the files that come and go."""

import json

from helpers import run_cli, write_files

LAYERS = ("from tensorflow import keras\n\n\nclass Head(keras.layers.Layer):\n"
          "    def call(self, inputs):\n        return keras.activations.softmax(inputs)\n")
USE = ("from tensorflow import keras\n\nfrom lib import Head\n\n"
       "inputs = keras.Input((8,))\nmodel = keras.Model(inputs, Head()(keras.layers.Dense(4)(inputs)))\n")
INSIDE = ("from tensorflow import keras\n\nfrom lib import Head\n\ninputs = keras.Input((8,))\n"
          "weights = Head()(keras.layers.Dense(4)(inputs))\n"
          "model = keras.Model(inputs, keras.layers.Multiply()([weights, keras.layers.Dense(4)(inputs)]))\n")
PROJECT = {"pyproject.toml": "[project]\nname = 'lib'\n", "lib/__init__.py": "from .layers import *\n",
           "lib/layers.py": LAYERS}


def _findings(folder, *args):
    result = run_cli("check", "--output-format", "json", *args, cwd=folder)
    return [(f["path"], f["line"], f["rule"]) for f in json.loads(result.stdout)]


def test_the_layer_an_example_makes_an_output_is_reported_at_its_return(tmp_path):
    write_files(tmp_path, {**PROJECT, "examples/classify.py": USE})
    assert _findings(tmp_path, "lib/layers.py") == [("lib/layers.py", 6, "MP101")]
    assert _findings(tmp_path, ".") == [("lib/layers.py", 6, "MP101")]


def test_a_softmax_layer_no_model_outputs_stays_silent_until_one_does(tmp_path):
    write_files(tmp_path, {**PROJECT, "examples/gate.py": INSIDE})
    assert _findings(tmp_path, "lib/layers.py") == []
    write_files(tmp_path, {"tests/test_head.py": USE})  # the cached run sees the new file
    assert _findings(tmp_path, "lib/layers.py") == [("lib/layers.py", 6, "MP101")]
    (tmp_path / "tests" / "test_head.py").unlink()
    assert _findings(tmp_path, "lib/layers.py") == []


def test_a_project_that_sets_a_policy_is_no_library(tmp_path):
    train = USE.replace("inputs = ", "keras.mixed_precision.set_global_policy('mixed_float16')\ninputs = ", 1)
    write_files(tmp_path, {**PROJECT, "train.py": train})
    # the program's model is judged where it is built (the imported class), not in the library
    assert ("lib/layers.py", 6, "MP101") not in _findings(tmp_path, ".")

