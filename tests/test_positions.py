"""Positions computed per statement agree with libcst's whole-module PositionProvider."""

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from mplint.core.positions import positions_of

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


DEEP = '''import tensorflow as tf


class Model(tf.keras.Model):
    """A class whose methods are regenerated only where a finding is."""

    def __init__(self):
        super().__init__()
        self.a = 1

    @tf.function
    # a comment between
    @other
    def call(self, x,
             training=False):
        if training:
            y = tf.cast(
                x,
                tf.float32)  # trailing
        return x


z = 3
'''


def test_nodes_deep_in_a_class_match_the_full_provider():
    module = cst.parse_module(DEEP)
    full = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    cls = module.body[1]
    call = cls.body.body[2]
    assign = call.body.body[0].body.body[0]
    cast = assign.body[0].value
    default = call.params.params[2].default  # in the header, with a node in the body
    for wanted in ([cast], [assign], [call], [call.decorators[1]], [cls.body.body[1]], [cast, default]):
        partial = positions_of(module, DEEP, wanted)
        for node in wanted:
            assert partial[node] == full[node]
        for node, rng in partial.items():
            assert full[node] == rng, (type(node).__name__, rng, full[node])
    # the descent really skipped the other method
    assert cls.body.body[1] not in positions_of(module, DEEP, [cast])
