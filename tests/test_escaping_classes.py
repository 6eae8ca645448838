"""A class whose name is handed on as a value may be built by the code that receives it:
``functools.partial(Block, ...)`` or the bare class passed to a scaffold mplint cannot
see, a default parameter value, an alias, a container or a return value, a class
attribute a method of its class reads, a module-level registry handed on. Where such
code runs under a program's mixed policy, the class's methods do too (MP501 here). A
class only tested (``isinstance``, ``type(x) is``, ``case Block()``), annotated, caught,
kept in a class attribute no method reads, named as a base of a class nobody builds, or
handed on by code that never runs under the policy, is provably never built there:
silent."""

import json

import pytest

from helpers import run_cli, write_files

#: a layer whose call pushes masked scores down with -1e9 (MP501 at line 9 under mixed_float16)
LAYER = """\
import tensorflow as tf


class Attend(tf.keras.layers.Layer):
    def call(self, x, keep):
        scores = tf.matmul(x, x, transpose_b=True)
        keep = tf.cast(keep, scores.dtype)
        # masked positions get a huge negative score before the softmax
        scores = scores * keep + (1.0 - keep) * -1e9
        return tf.nn.softmax(scores)
"""

#: the program: mixed_float16, then ``blocks.models.build`` makes the model
PROGRAM = """\
import tensorflow as tf


def main():
    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    from blocks.models import build
    inputs = tf.keras.Input((8, 16))
    keep = tf.keras.Input((8, 8))
    model = tf.keras.Model([inputs, keep], build(inputs, keep))
    model.compile("adam", "mse")


if __name__ == "__main__":
    main()
"""

#: ``build`` in blocks/models.py, handing ``Attend`` on in each way (``scaffold`` is a
#: library mplint cannot see)
HANDED_ON = {
    "partial to an external callee": """\
import functools

import scaffold
from blocks.attend import Attend


def build(x, keep):
    block = functools.partial(Attend, name="attend")
    return scaffold.Stack(block_cls=block, depth=2)([x, keep])
""",
    "bare class to an external callee": """\
import scaffold
from blocks.attend import Attend


def build(x, keep):
    return scaffold.Stack(block_cls=Attend, depth=2)([x, keep])
""",
    "super().__init__ of an external base": """\
import scaffold
from blocks.attend import Attend


class Encoder(scaffold.Stack):
    def __init__(self, depth=2):
        super().__init__(block_cls=Attend, depth=depth)


def build(x, keep):
    return Encoder()([x, keep])
""",
    "default parameter value": """\
from blocks.attend import Attend


def build(x, keep, block=Attend):
    return block()(x, keep)
""",
    "alias": """\
from blocks import attend


def build(x, keep):
    cls = attend.Attend
    return cls()(x, keep)
""",
    "returned from a function": """\
from blocks.attend import Attend


def block_class():
    return Attend


def build(x, keep):
    return block_class()()(x, keep)
""",
    "container handed to an external callee": """\
import scaffold
from blocks.attend import Attend


def build(x, keep):
    return scaffold.Stack(blocks=[Attend, Attend])([x, keep])
""",
    "class attribute of a built class": """\
import tensorflow as tf
from blocks.attend import Attend


class Net(tf.keras.Model):
    block_cls = Attend

    def call(self, inputs):
        x, keep = inputs
        return self.block_cls()(x, keep)


def build(x, keep):
    return Net()([x, keep])
""",
    "module-level registry handed on": """\
import scaffold
from blocks.attend import Attend

BLOCKS = {"attend": Attend}


def build(x, keep):
    return scaffold.from_registry(BLOCKS, "attend")(x, keep)
""",
}

#: ``build`` in blocks/models.py where ``Attend`` is provably never built under the policy
NEVER_BUILT = {
    "only tested, annotated and caught": """\
from typing import Optional

import tensorflow as tf
from blocks.attend import Attend


def build(x, keep, layer: Optional[Attend] = None):
    if isinstance(layer, Attend) or type(layer) is Attend:
        return layer(x, keep)
    try:
        return tf.keras.layers.Dense(8)(x)
    except Attend.Error:
        raise
""",
    "handed on only by code that never runs": """\
import functools

import scaffold
import tensorflow as tf
from blocks.attend import Attend


def unused_builder():
    return scaffold.Stack(block_cls=functools.partial(Attend), depth=2)


def build(x, keep):
    return tf.keras.layers.Dense(8)(x)
""",
    "base of a class nobody builds": """\
import tensorflow as tf
from blocks.attend import Attend


class Wider(Attend):
    pass


def build(x, keep):
    return tf.keras.layers.Dense(8)(x)
""",
    "module-level registry nobody reads": """\
import tensorflow as tf
from blocks.attend import Attend

BLOCKS = {"attend": Attend}
DEFAULT = Attend


def build(x, keep):
    return tf.keras.layers.Dense(8)(x)
""",
    "class attribute no method reads": """\
import tensorflow as tf
from blocks.attend import Attend


class Preprocessor(tf.keras.layers.Layer):
    # which model the preprocessor belongs to: building it builds no model
    model_cls = Attend

    def call(self, x):
        return x / 255.0


def build(x, keep):
    return tf.keras.layers.Dense(8)(Preprocessor()(x))
""",
    "pattern match on the class": """\
import tensorflow as tf
from blocks.attend import Attend


def build(x, keep, layer=None):
    match layer:
        case Attend():
            return layer(x, keep)
    return tf.keras.layers.Dense(8)(x)
""",
}


def _project(root, models):
    write_files(root, {
        "pyproject.toml": "[project]\nname = 'blocks'\ndependencies = ['tensorflow>=2.12,<2.16']\n",
        "blocks/__init__.py": "",
        "blocks/attend.py": LAYER,
        "blocks/models.py": models,
        "train.py": PROGRAM,
    })


def _findings(root, *options):
    result = run_cli("check", *options, "--select", "MP501", "--output-format", "json", ".", cwd=root)
    return sorted((f["path"], f["line"]) for f in json.loads(result.stdout))


@pytest.mark.parametrize("kind", sorted(HANDED_ON))
def test_a_class_handed_on_under_the_policy_may_be_built(tmp_path, kind):
    _project(tmp_path, HANDED_ON[kind])
    assert _findings(tmp_path, "--no-cache") == [("blocks/attend.py", 9)]


@pytest.mark.parametrize("kind", sorted(NEVER_BUILT))
def test_a_class_never_built_under_the_policy_is_silent(tmp_path, kind):
    _project(tmp_path, NEVER_BUILT[kind])
    assert _findings(tmp_path, "--no-cache") == []


def test_the_same_project_without_a_policy_is_silent_where_it_is_no_library(tmp_path):
    """The finding comes from the program's policy reaching the class, not from elsewhere:
    with the set removed (and the project made an application), nothing is found."""
    _project(tmp_path, HANDED_ON["partial to an external callee"])
    write_files(tmp_path, {
        "train.py": PROGRAM.replace('    tf.keras.mixed_precision.set_global_policy("mixed_float16")\n',
                                    '    tf.keras.mixed_precision.set_global_policy("float32")\n'),
        "pyproject.toml": "[tool.mplint]\nlibrary = false\n",
    })
    assert _findings(tmp_path, "--no-cache") == []


def test_a_cached_run_sees_the_hand_off_removed_in_another_module(tmp_path):
    """The hand-off is a fact of blocks/models.py: fixing that file changes the next cached
    run's answer for blocks/attend.py."""
    _project(tmp_path, HANDED_ON["partial to an external callee"])
    assert _findings(tmp_path) == [("blocks/attend.py", 9)]
    write_files(tmp_path, {"blocks/models.py": NEVER_BUILT["handed on only by code that never runs"]})
    assert _findings(tmp_path) == []
    write_files(tmp_path, {"blocks/models.py": HANDED_ON["default parameter value"]})
    assert _findings(tmp_path) == [("blocks/attend.py", 9)]


#: a script that sets the policy at its top and builds one of two layers
SCRIPT = """\
import tensorflow as tf

tf.keras.mixed_precision.set_global_policy("mixed_float16")


{layers}

inputs = tf.keras.Input((8, 16))
keep = tf.keras.Input((8, 8))
model = tf.keras.Model([inputs, keep], {built}()(inputs, keep))
"""


@pytest.mark.parametrize("built, other, found", [
    # the script builds Used: Attend's call never runs, under the policy or at all
    ("Used", "", False),
    # a subclass of Attend is built: Attend's call runs as the subclass's
    ("Used", "class Sub(Attend):\n    pass\n\n\nmodel2 = Sub()\n", True),
    # decorated: a saved model's config may build it by its registered name
    ("Used", "@tf.keras.utils.register_keras_serializable()\n", True),
    ("Attend", "", True),
])
def test_a_class_the_script_never_builds_is_not_under_its_policy(tmp_path, built, other, found):
    attend = LAYER.split("\n\n\n", 1)[1]
    used = "class Used(tf.keras.layers.Layer):\n    def call(self, x, keep):\n        return x\n"
    if other.startswith("@"):
        layers = used + "\n\n" + other + attend
    else:
        layers = used + "\n\n" + attend + ("\n\n" + other if other else "")
    script = SCRIPT.format(layers=layers, built=built)
    write_files(tmp_path, {"pyproject.toml": "[project]\nname = 'app'\n", "train.py": script})
    line = script.splitlines().index("        scores = scores * keep + (1.0 - keep) * -1e9") + 1
    assert _findings(tmp_path, "--no-cache") == ([("train.py", line)] if found else [])
