"""A class is read inside each construction: what ``__init__`` stores on ``self`` from
its arguments decides which activation ``call`` applies (``analysis/activations.py``)."""

import textwrap

import libcst as cst
import pytest

from mplint.analysis.models import ModelOutputs, OpProducer
from mplint.core.walker import Walker
from mplint.rule.check import Context
from mplint.semantic.facts import FactsCollector, ModuleFacts
from mplint.semantic.names import NameResolver, collect_module_imports
from mplint.semantic.scopes import ScopeTracker
from mplint.semantic.values import Evaluator

HEADER = "import tensorflow as tf\nimport keras\nfrom keras import layers\n"

NET = """
class Net(keras.Model):
    def __init__(self, activation=None):
        super().__init__()
        self.dense = layers.Dense(3)
        self.act = {stored}

    def call(self, x):
        return self.act(self.dense(x))

{construction}
"""


def functions(code):
    """The op each output of the file's models is computed by (None: no op)."""
    module = cst.parse_module(HEADER + textwrap.dedent(code))
    names = NameResolver()
    collect_module_imports(module, names)
    tracker = ScopeTracker(module, names)
    facts = ModuleFacts()
    evaluator = Evaluator(names, call_sites=tracker.calls)
    ctx = Context("t.py", module, names, tracker, facts, {}, evaluator)
    analysis = ModelOutputs(ctx)

    def fail(owner, exc):
        raise exc

    Walker([tracker, FactsCollector(facts, names, tracker, evaluator), analysis], fail).walk(module)
    return [sorted(o.producer.function) if isinstance(o.producer, OpProducer) else None
            for o in analysis.outputs()]


@pytest.mark.parametrize("stored,construction,expected", [
    ("keras.activations.get(activation)", 'Net("softmax")', [["keras.activations.softmax"]]),
    ("keras.activations.get(activation)", "Net()", [["keras.activations.linear"]]),
    ("getattr(tf.nn, activation)", 'Net(activation="sigmoid")', [["tensorflow.nn.sigmoid"]]),
    ("activation", "Net(tf.nn.softmax)", [["tensorflow.nn.softmax"]]),
    # one judgement per construction
    ("keras.activations.get(activation)", 'Net("softmax")\nNet("relu")',
     [["keras.activations.softmax"], ["keras.activations.relu"]]),
])
def test_activation_stored_by_the_construction(stored, construction, expected):
    assert functions(NET.format(stored=stored, construction=construction)) == expected


@pytest.mark.parametrize("stored,construction", [
    ("keras.activations.get(activation)", "import os\nNet(os.environ['ACT'])"),  # read at run time
    ("getattr(helpers, activation)", 'Net("softmax")'),  # not an ops module
    ("keras.layers.Activation(activation)", 'Net("softmax")'),  # a layer: judged as a layer
])
def test_unknown_activations_are_no_op(stored, construction):
    assert functions(NET.format(stored=stored, construction=construction)) == [None]
