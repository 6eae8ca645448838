"""MP504 through a function of another module chosen by name: ``self._gate =
acts.get_activation('hard_sigmoid')`` picks ``hard_sigmoid`` from the getter's table,
and the 16-bit tensor handed to it meets the float32 constant made there."""

import json

import helpers

ACTS = """import functools
import tensorflow as tf


def gelu(x, approximate=False):
    return tf.keras.activations.gelu(x, approximate=approximate)


def hard_sigmoid(input_tensor):
    input_tensor = tf.convert_to_tensor(input_tensor)
    return tf.nn.relu6(input_tensor + {three}) * 0.16667


def relu6(input_tensor):
    return tf.nn.relu6(input_tensor + tf.constant(3.))


def get_activation(identifier):
    if isinstance(identifier, str):
        name_to_fn = {{
            'gelu': functools.partial(gelu, approximate=False),
            'relu6': relu6,
            'hard_sigmoid': hard_sigmoid,
        }}
        identifier = str(identifier).lower()
        if identifier in name_to_fn:
            return name_to_fn[identifier]
    return {fallback}
"""

SE = """import tensorflow as tf
from pkg import acts


class SE(tf.keras.layers.Layer):
    def __init__(self, channels, name=None):
        super().__init__(name=name)
        self._conv = tf.keras.layers.Conv2D(channels, 1)
        self._gate = acts.get_activation({name})

    def call(self, input_tensor):
        squeezed = self._conv(tf.reduce_mean(input_tensor, [1, 2], keepdims=True))
        return self._gate(squeezed) * input_tensor
"""


def check(tmp_path, three="tf.constant(3.)", fallback="tf.keras.activations.get(identifier)",
          name="'hard_sigmoid'"):
    folder = helpers.write_files(tmp_path, {
        "pyproject.toml": "[project]\nname = 'pkg'\n",
        "pkg/__init__.py": "",
        "pkg/acts.py": ACTS.format(three=three, fallback=fallback),
        "pkg/se.py": SE.format(name=name),
    })
    result = helpers.run_cli("check", "--select", "MP504", "--assume-policy", "mixed_float16",
                             "--output-format", "json", "--no-cache", ".", cwd=folder)
    assert result.returncode in (0, 1), result.stderr
    return [(f["path"].replace("\\\\", "/"), f["line"], f["message"]) for f in json.loads(result.stdout)]


def test_the_function_picked_by_its_name_meets_the_16_bit_tensor(tmp_path):
    [(path, line, message)] = check(tmp_path)
    assert (path, line) == ("pkg/se.py", 13)
    assert "to hard_sigmoid (pkg/acts.py:11)" in message
    assert "`input_tensor + tf.constant(3.)`" in message
    # the name written in another case picks the same function
    assert len(check(tmp_path / "upper", name="'Hard_Sigmoid'")) == 1


def test_silent_where_the_picked_function_is_correct_or_unknown(tmp_path):
    # a Python float takes the tensor's dtype
    assert check(tmp_path / "a", three="3.") == []
    # a name read at run time, or one the table does not hold
    assert check(tmp_path / "b", name="self.name") == []
    assert check(tmp_path / "c", name="'swish'") == []
    # a getter that may return another function of its module for any name
    assert check(tmp_path / "d", fallback="relu6") == []
