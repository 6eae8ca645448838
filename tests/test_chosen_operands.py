"""``a or b``, ``a and b`` and ``x if t else y`` denote the operand their test's values
pick: ``head_fn = head_fn or make_head(n, "softmax")`` with ``head_fn`` None in every
call builds the factory's head; where a caller passes its own, or the test cannot be
told, the value stays unknown and the rules silent."""

import json

import helpers

HEADS = '''import tensorflow as tf


def make_head(num_outputs, activation):
    def head(features):
        return tf.keras.layers.Dense(num_outputs, activation=activation)(features)

    return head
'''

MODEL = '''import tensorflow as tf

from heads import make_head


USE_HEAD = True


def build(num_classes=10, head_fn=None):
    head_fn = {chosen}
    inputs = tf.keras.Input(shape=(16,))
    x = tf.keras.layers.Dense(64, activation="relu")(inputs)
    return tf.keras.Model(inputs, head_fn(x))
'''

TRAIN = '''import tensorflow as tf

import model as model_lib

tf.keras.mixed_precision.set_global_policy("mixed_float16")
net = model_lib.build({arguments})
net.compile("adam", "sparse_categorical_crossentropy")
'''


def check(tmp_path, chosen="head_fn or make_head(num_classes, 'softmax')", arguments=""):
    folder = helpers.write_files(tmp_path, {
        "pyproject.toml": "[project]\nname = 'cls'\n",
        "heads.py": HEADS,
        "model.py": MODEL.format(chosen=chosen),
        "train.py": TRAIN.format(arguments=arguments),
    })
    result = helpers.run_cli("check", "--select", "MP101", "--output-format", "json", "--no-cache", ".", cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    return [(f["path"], f["line"]) for f in json.loads(result.stdout)]


def test_the_operand_the_values_pick_is_followed(tmp_path):
    assert check(tmp_path / "or") == [("model.py", 10)]
    # a true constant on the left of ``and`` hands on to the right
    assert check(tmp_path / "and", chosen="USE_HEAD and make_head(num_classes, 'softmax')") == [("model.py", 10)]


def test_silent_where_the_test_cannot_be_told(tmp_path):
    # a caller passes its own head: the left operand is what it passes
    assert check(tmp_path / "passed", arguments="head_fn=lambda x: x") == []
    # the factory's head is linear
    assert check(tmp_path / "linear", chosen="head_fn or make_head(num_classes, 'linear')") == []
