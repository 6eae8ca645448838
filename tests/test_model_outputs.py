"""ModelOutputs finds the producer of every model output, in every model style.

Other rules (MP101, MP102, MP304) read this analysis, so its answers are pinned
here directly: which layer or op produces each output, and the model style.
"""

import json
import textwrap

import libcst as cst
import pytest

from helpers import fired, run_cli, write_files

from mplint.analysis.models import LayerProducer, ModelOutputs, OpProducer
from mplint.rule.check import Context
from mplint.semantic.facts import FactsCollector, ModuleFacts
from mplint.semantic.names import NameResolver, collect_module_imports
from mplint.semantic.scopes import ScopeTracker
from mplint.semantic.values import Evaluator
from mplint.core.walker import Walker

HEADER = "import tensorflow as tf\nimport keras\nfrom keras import layers, ops\n"


def outputs_of(code):
    module = cst.parse_module(HEADER + textwrap.dedent(code))
    names = NameResolver()
    collect_module_imports(module, names)
    tracker = ScopeTracker(module, names)
    facts = ModuleFacts()
    evaluator = Evaluator(names)
    ctx = Context("t.py", module, names, tracker, facts, {}, evaluator)
    analysis = ModelOutputs(ctx)

    def fail(owner, exc):
        raise exc

    Walker([tracker, FactsCollector(facts, names, tracker, evaluator), analysis], fail).walk(module)
    found = []
    for output in analysis.outputs():
        producer = output.producer
        if isinstance(producer, LayerProducer):
            text = module.code_for_node(producer.constructor)
        elif isinstance(producer, OpProducer):
            text = module.code_for_node(producer.call.func)
        else:
            text = None
        found.append((output.style, text))
    return found


CASES = {
    "functional through reassignment": (
        """
        i = keras.Input((4,))
        x = layers.Dense(8)(i)
        x = layers.Dense(2, name="out")(x)
        out = x
        m = keras.Model(i, out)
        """,
        [("functional", 'layers.Dense(2, name="out")')],
    ),
    "dict and helper returns": (
        """
        def head(t):
            if t is None:
                return layers.Dense(1)(t)
            return layers.Dense(3)(t)
        i = keras.Input((4,))
        m = keras.Model(inputs=i, outputs={"a": head(i), "b": ops.sigmoid(i)})
        """,
        [("functional", "layers.Dense(1)"), ("functional", "layers.Dense(3)"),
         ("functional", "ops.sigmoid")],
    ),
    "nested model as a layer": (
        """
        i = keras.Input((4,))
        inner = keras.Model(i, layers.Dense(5)(i))
        outer = keras.Model(i, inner(i))
        """,
        [("functional", "layers.Dense(5)")],
    ),
    "sequential list variable with appends": (
        """
        stack = [layers.Dense(4)]
        stack.append(layers.Dense(6))
        stack.append(layers.Softmax())
        m = keras.Sequential(stack)
        stack.append(layers.Dense(7))
        """,
        [("sequential", "layers.Softmax()")],
    ),
    "sequential add, last wins": (
        """
        m = keras.Sequential([layers.Dense(4)])
        m.add(layers.Dense(5))
        m.add(layers.Dense(6))
        """,
        [("sequential", "layers.Dense(6)")],
    ),
    "sequential add in a loop is unknown": (
        """
        m = keras.Sequential()
        for u in (4, 5):
            m.add(layers.Dense(u))
        """,
        [],
    ),
    "subclassed layer attribute and op": (
        """
        class Net(keras.Model):
            def __init__(self):
                super().__init__()
                self.proj = layers.Dense(3)
            def call(self, x):
                h = self.proj(x)
                return h, tf.nn.softmax(h)
        """,
        [("subclassed", "layers.Dense(3)"), ("subclassed", "tf.nn.softmax")],
    ),
    "subclassed through a local base class": (
        """
        class Base(keras.Model):
            pass
        class Net(Base):
            def __init__(self):
                super().__init__()
                self.out = layers.Dense(2)
            def call(self, x):
                return self.out(x)
        """,
        [("subclassed", "layers.Dense(2)")],
    ),
    "encoder feeding another model is not an output": (
        """
        i = keras.Input((4,))
        encoder = keras.Model(i, layers.Dense(8)(i))
        clf = keras.Model(i, layers.Dense(2)(encoder(i)))
        prediction = clf(tf.zeros((1, 4)))
        """,
        [("functional", "layers.Dense(2)")],
    ),
    "unresolvable outputs have no producer": (
        """
        def build(t, layer):
            return keras.Model(t, layer(t))
        base = keras.applications.MobileNetV2()
        m = keras.Model(base.input, base.output)
        """,
        [("functional", None), ("functional", None)],
    ),
    "a keras.applications classifier trained as a whole is its own model": (
        """
        base = keras.applications.DenseNet121(weights=None, classes=2)
        base.compile("adam", "categorical_crossentropy")
        cut = keras.applications.ResNet50(weights=None)
        m = keras.Model(cut.input, cut.layers[-2].output)
        """,
        [("application", "keras.applications.DenseNet121(weights=None, classes=2)"), ("functional", None)],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_model_outputs(name):
    code, expected = CASES[name]
    assert sorted(outputs_of(code), key=str) == sorted(expected, key=str)


def test_functional_subclass_through_super_init():
    code = """
    class Net(keras.Model):
        def __init__(self):
            inputs = keras.Input((4,))
            outputs = layers.Dense(2, activation="sigmoid")(inputs)
            super().__init__(inputs=inputs, outputs=outputs)
    """
    assert outputs_of(code) == [("functional", 'layers.Dense(2, activation="sigmoid")')]


_LOOP = '''
import tensorflow as tf

tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
model = tf.keras.Sequential([tf.keras.layers.Dense(8)])

def step(x):
    return tf.cast(model(x), tf.float32)
'''


def test_mp102_silent_when_every_call_of_the_model_is_cast_to_float32():
    from mplint.api import lint_text

    findings, _ = lint_text(_LOOP, select=["MP102"])
    assert findings == []
    uncast = _LOOP + "\nraw = model(x)\n"
    assert [f.rule for f in lint_text(uncast, select=["MP102"])[0]] == ["MP102"]
    compiled = _LOOP + "\nmodel.compile(loss='mse')\n"
    assert [f.rule for f in lint_text(compiled, select=["MP102"])[0]] == ["MP102"]


def test_layer_settings_spread_from_a_dict_are_read():
    # ``Dense(10, **head_kwargs)``: the dict literal's keys are the layer's settings
    head = ("import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
            "head_kwargs = {KW}\n"
            "m = tf.keras.Sequential([tf.keras.layers.Dense(64), tf.keras.layers.Dense(10, **head_kwargs)])\n"
            "m.compile(loss='categorical_crossentropy')\n")
    assert fired(head.replace("{KW}", '{"activation": "softmax"}'), "MP101", "MP102") == [(4, "MP101")]
    assert fired(head.replace("{KW}", '{"activation": "softmax", "dtype": "float32"}'), "MP101", "MP102") == []
    assert fired(head.replace("{KW}", '{"units": 3}'), "MP101", "MP102") == [(4, "MP102")]
    # keys that cannot be read (a **kwargs parameter, a dict made elsewhere): silent
    assert fired(head.replace("{KW}", "dict(activation='softmax', name='probs')"), "MP101", "MP102") == [(4, "MP101")]
    assert fired(head.replace("{KW}", "dict(base, activation='softmax')"), "MP101", "MP102") == []
    assert fired(head.replace("{KW}", "load_config()"), "MP101", "MP102") == []
    passed = ("import tensorflow as tf\ntf.keras.mixed_precision.set_global_policy('mixed_float16')\n"
              "def build(**kw):\n    return tf.keras.Sequential([tf.keras.layers.Dense(10, **kw)])\n"
              "m = build(activation='softmax', dtype='float32')\nm.compile(loss='mse')\n")
    assert fired(passed, "MP101", "MP102") == []


def _within(seconds, work):
    """Run ``work``, failing (not hanging the suite) when it takes longer than ``seconds``."""
    import signal

    def timed_out(signum, frame):
        raise AssertionError(f"did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, timed_out)
    signal.alarm(seconds)
    try:
        return work()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_mutually_recursive_helpers_returning_each_others_parts_finish_unknown():
    # each returns a tuple of the other's results, twice per return: neither the
    # recursion nor the branching may run away; the parts stay unknown
    code = """
        def ping(x, n):
            a, b = pong(x, n)
            return pong(a, n)[1], pong(b, n)[0]

        def pong(x, n):
            c, d = ping(x, n - 1)
            return ping(c, n)[0], ping(d, n)[1]

        inputs = keras.Input((4,))
        left, right = ping(inputs, 3)
        keras.Model(inputs, [left, right])
        keras.Model(inputs, ping(inputs, 1))
    """
    found = _within(20, lambda: outputs_of(code))
    assert found and all(text is None for _, text in found)


def test_a_part_of_a_returned_tuple_is_the_output_its_position_names():
    code = """
        def heads(x):
            return layers.Dense(8)(x), layers.Dense(3, activation="softmax")(x)

        inputs = keras.Input((4,))
        features, probs = heads(inputs)
        keras.Model(inputs, probs)
        pair = heads(inputs)
        keras.Model(inputs, pair[0])
    """
    found = outputs_of(code)
    assert found == [("functional", 'layers.Dense(3, activation="softmax")'),
                     ("functional", "layers.Dense(8)")]


def test_a_layer_returned_as_part_of_a_tuple_is_the_layer_its_position_names():
    code = """
        def trunk_and_head(width):
            trunk = layers.Dense(width, activation="gelu")
            head = layers.Dense(1, name="price")
            return trunk, head

        inputs = keras.Input((4,))
        trunk, head = trunk_and_head(8)
        keras.Model(inputs, head(trunk(inputs)))
        keras.Model(inputs, trunk(inputs))
    """
    assert outputs_of(code) == [("functional", 'layers.Dense(1, name="price")'),
                                ("functional", 'layers.Dense(width, activation="gelu")')]


TUPLE_BLOCKS = """from keras import layers


def trunk_and_head(width):
    trunk = layers.Dense(width, activation="gelu")
    head = layers.Dense(1{dtype})
    return trunk, head
"""
TUPLE_MAIN = """import keras
import numpy as np

from blocks import trunk_and_head

keras.mixed_precision.set_global_policy("mixed_float16")
trunk, head = trunk_and_head(64)
inp = keras.Input(shape=(13,))
price = {output}
model = keras.Model(inp, price)
model.compile(optimizer="adam", loss="mse")
model.fit(np.random.rand(128, 13), np.random.rand(128, 1) * 500000.0)
"""


@pytest.mark.parametrize("dtype, output, found", [
    ("", "head(trunk(inp))", [("main.py", 7, "MP102")]),
    (', dtype="float32"', "head(trunk(inp))", []),  # the part returned is a float32 layer
    ("", 'keras.layers.Dense(1, dtype="float32")(trunk(inp))', []),  # the other part feeds a float32 head
])
def test_a_layer_another_module_returns_in_a_tuple_is_judged_there(tmp_path, dtype, output, found):
    write_files(tmp_path, {"pyproject.toml": "[project]\nname = 'p'\n",
                           "blocks.py": TUPLE_BLOCKS.format(dtype=dtype),
                           "main.py": TUPLE_MAIN.format(output=output)})
    result = run_cli("check", "--no-cache", "--output-format", "json", ".", cwd=tmp_path)
    assert [(f["path"], f["line"], f["rule"]) for f in json.loads(result.stdout)] == found
