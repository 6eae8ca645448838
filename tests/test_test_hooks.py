"""A policy a test module sets in a setup hook (``setUp``, ``setUpClass``,
``setup_module``, a pytest fixture) governs the tests the hook runs before, as if each
set it in its own body; and a test's policy reaches the library code it calls only
where the test trains (compiles with a loss and fits): a test that builds a model or
checks its shapes is no training program."""

import json

import pytest

from tests import helpers

LIBRARY = """import tensorflow as tf


def build_classifier(num_classes=10):
    inputs = tf.keras.Input(shape=(32,))
    x = tf.keras.layers.Dense(64, activation="relu")(inputs)
    outputs = tf.keras.layers.Dense(num_classes, activation="softmax")(x)
    return tf.keras.Model(inputs, outputs)
"""

TRAINS = """        model = build_classifier()
        model.compile("adam", "sparse_categorical_crossentropy")
        model.fit(np.zeros((8, 32)), np.zeros((8,)), epochs=1)
"""
SHAPES = """        model = build_classifier()
        assert model.output_shape == (None, 10)
"""

SET = 'tf.keras.mixed_precision.set_global_policy("mixed_float16")'

HOOKS = {
    "body": """class MixedTest(unittest.TestCase):
    def test_it(self):
        {set}
{code}""",
    "setUp": """class MixedTest(unittest.TestCase):
    def setUp(self):
        {set}

    def tearDown(self):
        tf.keras.mixed_precision.set_global_policy("float32")

    def test_it(self):
{code}""",
    "setUpClass": """class MixedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        {set}

    def test_it(self):
{code}""",
    "setup_module": """def setup_module(module):
    {set}


class TestIt:
    def test_it(self):
{code}""",
    "autouse fixture": """@pytest.fixture(autouse=True)
def mixed():
    {set}
    yield


class TestIt:
    def test_it(self):
{code}""",
    "requested fixture": """@pytest.fixture
def mixed():
    {set}


class TestIt:
    def test_it(self, mixed):
{code}""",
}

HEADER = """import unittest

import numpy as np
import pytest
import tensorflow as tf
from mylib.models import build_classifier


"""


def _findings(tmp_path, test_text):
    folder = helpers.write_files(tmp_path, {
        "pyproject.toml": '[project]\nname = "mylib"\n[tool.mplint]\nlibrary = false\n',
        "mylib/__init__.py": "",
        "mylib/models.py": LIBRARY,
        "tests/__init__.py": "",
        "tests/test_models.py": HEADER + test_text,
    })
    result = helpers.run_cli("check", "--no-cache", "--select", "MP101", "--output-format", "json", ".",
                             cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    return [(f["path"], f["line"], f["message"]) for f in json.loads(result.stdout)]


@pytest.mark.parametrize("hook", sorted(HOOKS))
def test_a_test_that_trains_a_library_model_under_a_policy_is_a_training_program(tmp_path, hook):
    text = HOOKS[hook].format(set=SET, code=TRAINS)
    [(path, line, message)] = _findings(tmp_path, text)
    assert (path, line) == ("mylib/models.py", 7)
    assert "tests/test_models.py" in message


@pytest.mark.parametrize("hook", sorted(HOOKS))
def test_a_test_that_only_checks_shapes_is_no_training_program(tmp_path, hook):
    assert _findings(tmp_path, HOOKS[hook].format(set=SET, code=SHAPES)) == []


def test_a_class_hook_governs_its_own_class_only(tmp_path):
    text = HOOKS["setUp"].format(set=SET, code=SHAPES) + "\n\nclass Other(unittest.TestCase):\n" \
        "    def test_trains(self):\n" + TRAINS
    assert _findings(tmp_path, text) == []


def test_a_fixture_governs_only_the_tests_that_request_it(tmp_path):
    text = HOOKS["requested fixture"].format(set=SET, code=SHAPES) + "\n\ndef test_trains():\n" \
        + TRAINS.replace("        ", "    ")
    assert _findings(tmp_path, text) == []


def test_a_test_that_only_checks_gradients_is_no_training_program(tmp_path):
    code = """        model = build_classifier()
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(np.zeros((8, 32))))
        grads = tape.gradient(loss, model.trainable_variables)
        assert all(np.isfinite(g).all() for g in grads)
"""
    assert _findings(tmp_path, HOOKS["requested fixture"].format(set=SET, code=code)) == []
    updated = code + "        tf.keras.optimizers.SGD().apply_gradients(zip(grads, model.trainable_variables))\n"
    assert len(_findings(tmp_path / "b", HOOKS["requested fixture"].format(set=SET, code=updated))) == 1


def test_a_functions_code_is_the_segment_ast_reads():
    """The code ``trains`` searches is ``ast.get_source_segment``'s, from lines split once
    (CRLF, a lone CR, a form feed inside a line, a multi-byte character before a node)."""
    import ast

    from mplint.run.test_hooks import TestFile

    raw = ("x = 'é'; y = (1,\r\n  2)\rdef test_a():\n    z = [ \x0c 3,\n 4]\n    return z\n"
           "class T:\n    def test_b(self): model.fit(x)").encode("utf-8")
    hooks = TestFile(raw)
    tree = ast.parse(raw)
    nodes = [node for node in ast.walk(tree) if hasattr(node, "lineno")]
    assert nodes
    for node in nodes:
        assert hooks._segment(node) == ast.get_source_segment(raw.decode("utf-8"), node)
    assert hooks.trains("T.test_b") and not hooks.trains("test_a")
