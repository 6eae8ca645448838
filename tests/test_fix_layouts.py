"""A fix that adds an argument follows the call's own layout (issue 19, item 6).

The corpus covers the layouts real code uses: one line; one argument per line with
and without a trailing comma; the closing parenthesis on its own line or after the
last argument (yapf, Google style); arguments aligned with the parenthesis;
comments after arguments and on their own lines; ``**kwargs`` last. Each case is
the code before and after adding ``dtype="float32"`` to the call; the same cases
also go through ``mplint fix`` as MP101's fix of a float16 softmax output.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from helpers import fix
from mplint.rule.edits import string, with_keyword

#: name -> (before, after); ``Dense`` is the call that gets the keyword
LAYOUTS = {
    "one line": (
        'x = Dense(10, activation="softmax")\n',
        'x = Dense(10, activation="softmax", dtype="float32")\n'),
    "one line, no arguments": (
        "x = Dense()\n",
        'x = Dense(dtype="float32")\n'),
    "one line, trailing comma": (
        'x = Dense(10, activation="softmax",)\n',
        'x = Dense(10, activation="softmax", dtype="float32",)\n'),
    "one per line, trailing comma": (
        'x = Dense(\n    10,\n    activation="softmax",\n)\n',
        'x = Dense(\n    10,\n    activation="softmax",\n    dtype="float32",\n)\n'),
    "one per line, no trailing comma, parenthesis on its own line": (
        'x = Dense(\n    10,\n    activation="softmax"\n)\n',
        'x = Dense(\n    10,\n    activation="softmax",\n    dtype="float32"\n)\n'),
    "one per line, parenthesis after the last argument": (
        'x = Dense(\n    10,\n    activation="softmax")\n',
        'x = Dense(\n    10,\n    activation="softmax",\n    dtype="float32")\n'),
    "aligned with the parenthesis": (
        'x = Dense(10,\n          activation="softmax")\n',
        'x = Dense(10,\n          activation="softmax",\n          dtype="float32")\n'),
    "aligned, parenthesis on its own line": (
        'x = Dense(10,\n          activation="softmax"\n          )\n',
        'x = Dense(10,\n          activation="softmax",\n          dtype="float32"\n          )\n'),
    "one argument on its own line": (
        "x = Dense(\n    10\n)\n",
        'x = Dense(\n    10,\n    dtype="float32"\n)\n'),
    "one argument on its own line, trailing comma": (
        "x = Dense(\n    10,\n)\n",
        'x = Dense(\n    10,\n    dtype="float32",\n)\n'),
    "arguments on one hanging line (yapf, Google)": (
        'x = Dense(\n    units=10, activation="softmax", name="head"\n)\n',
        'x = Dense(\n    units=10, activation="softmax", name="head", dtype="float32"\n)\n'),
    "arguments on one hanging line, comment after them": (
        'x = Dense(\n    units=10, activation="softmax"  # head\n)\n',
        'x = Dense(\n    units=10, activation="softmax", dtype="float32"  # head\n)\n'),
    "comment after the last argument": (
        'x = Dense(\n    10,\n    activation="softmax"  # probabilities\n)\n',
        'x = Dense(\n    10,\n    activation="softmax",  # probabilities\n    dtype="float32"\n)\n'),
    "comment after the last argument, trailing comma": (
        'x = Dense(\n    10,\n    activation="softmax",  # probabilities\n)\n',
        'x = Dense(\n    10,\n    activation="softmax",  # probabilities\n    dtype="float32",\n)\n'),
    "comment after an earlier argument": (
        'x = Dense(\n    10,  # classes\n    activation="softmax"\n)\n',
        'x = Dense(\n    10,  # classes\n    activation="softmax",\n    dtype="float32"\n)\n'),
    "comment line before the parenthesis": (
        'x = Dense(\n    10,\n    activation="softmax",\n    # the head\n)\n',
        'x = Dense(\n    10,\n    activation="softmax",\n    # the head\n    dtype="float32",\n)\n'),
    "nested block": (
        'def f():\n    x = Dense(\n        10,\n        activation="softmax"\n    )\n',
        'def f():\n    x = Dense(\n        10,\n        activation="softmax",\n        dtype="float32"\n    )\n'),
    "tabs": (
        'def f():\n\tx = Dense(\n\t\t10,\n\t\tactivation="softmax"\n\t)\n',
        'def f():\n\tx = Dense(\n\t\t10,\n\t\tactivation="softmax",\n\t\tdtype="float32"\n\t)\n'),
    "**kwargs last": (
        "x = Dense(10, **kw)\n",
        'x = Dense(10, dtype="float32", **kw)\n'),
    "**kwargs last, one per line": (
        "x = Dense(\n    10,\n    **kw\n)\n",
        'x = Dense(\n    10,\n    dtype="float32",\n    **kw\n)\n'),
    "keyword already there": (
        'x = Dense(10, dtype="float16")\n',
        'x = Dense(10, dtype="float32")\n'),
    "empty, parenthesis on its own line": (
        "x = Dense(\n)\n",
        'x = Dense(dtype="float32")\n'),
}


class _AddDtype(cst.CSTTransformer):
    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if isinstance(updated_node.func, cst.Name) and updated_node.func.value == "Dense":
            return with_keyword(updated_node, "dtype", string("float32", '"'))
        return updated_node


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_an_added_keyword_follows_the_call_layout(name):
    before, after = LAYOUTS[name]
    assert cst.parse_module(before).visit(_AddDtype()).code == after


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_no_added_line_ends_in_whitespace(name):
    before, after = LAYOUTS[name]
    assert not [line for line in after.splitlines() if line != line.rstrip()]
    assert "\n\n" not in after


MODEL = textwrap.dedent('''\
    import tensorflow as tf
    from tensorflow.keras.layers import Dense

    tf.keras.mixed_precision.set_global_policy("mixed_float16")
    {code}model = tf.keras.Sequential([Dense(32), x])
''')


@pytest.mark.parametrize("name", sorted(name for name, (before, _) in LAYOUTS.items()
                                        if before.startswith("x = ") and "softmax" in before))
def test_mplint_fix_keeps_the_layout_of_the_output_layer(name):
    before, after = LAYOUTS[name]
    assert fix(MODEL.format(code=before), "MP101") == MODEL.format(code=after)
