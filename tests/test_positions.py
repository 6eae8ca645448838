"""Positions computed per statement agree with libcst's whole-module PositionProvider."""

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from mplint.positions import positions_of

CASES = {
    "plain": "import tensorflow as tf\n\nx = 1; y = tf.cast(x, tf.float32)\n",
    "decorated": "# head\n\n@dec\n# between\n@other(1,\n  2)\ndef f(a):\n    return g(a)\n\nz = f(3)\n",
    "crlf_and_classes": "class A:\n    def m(self):\n        return 1\r\n\r\n\r\nb = A().m()\r\n",
    "comments_and_continuations": 'x = (1 +\n     2)  # c\n"""doc\nstring"""\nif x:\n    pass\nelse:\n    y = [\n        3]\n',
    "trailing_comment_file": "a = 1\n# end\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_node_of_the_wanted_statements_matches_the_full_provider(name):
    text = CASES[name]
    module = cst.parse_module(text)
    full = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    wanted = [stmt for stmt in module.body]  # every statement: every node must agree
    partial = positions_of(module, text, wanted)
    checked = 0
    for node, rng in partial.items():
        assert full[node] == rng, (type(node).__name__, rng, full[node])
        checked += 1
    assert checked > len(module.body)


def test_only_statements_holding_a_wanted_node_are_computed():
    text = "a = 1\nb = 2\nc = 3\n"
    module = cst.parse_module(text)
    target = module.body[1].body[0].value
    partial = positions_of(module, text, [target])
    assert partial[target].start.line == 2
    assert module.body[0] not in partial and module.body[2] not in partial
