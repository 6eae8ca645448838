"""What the summaries note of callables picked by name (``run.picked_callables``), and
the calls the program model resolves through them."""

from mplint.run.summaries import ModuleSummary, summarize

GETTER = '''
import functools

def relu6(x): ...
def hard_sigmoid(x): ...
def gelu(x, approximate=False): ...

def get_activation(identifier):
    if isinstance(identifier, str):
        name_to_fn = {
            "Relu6": relu6,
            "hard_sigmoid": hard_sigmoid,
            "gelu": functools.partial(gelu, approximate=False),
        }
        identifier = str(identifier).lower()
        if identifier in name_to_fn:
            return name_to_fn[identifier]
    return None

NAMED = {"a": relu6}

def by_name(name):
    return NAMED[name]

def rebound(name):
    name = name.replace("-", "_")
    return NAMED[name]

def by_other(name, other):
    table = {"a": relu6}
    return table[other]
'''


def test_a_function_that_returns_a_dict_entry_by_its_parameter_picks():
    functions = summarize(GETTER).functions
    # the key is lowered: an entry whose key has capitals is never picked
    assert functions["get_activation"].picks == [("identifier", "", {"hard_sigmoid": "hard_sigmoid"})]
    assert functions["by_name"].picks == [("name", "NAMED", {})]
    assert functions["rebound"].picks == []  # rewritten other than by str()/lower()/strip()
    assert functions["by_other"].picks == [("other", "", {"a": "relu6"})]


LAYER = '''
import tensorflow as tf
from pkg import activations
from pkg.activations import relu6

class Block(tf.keras.layers.Layer):
    def __init__(self, act, name="b"):
        super().__init__()
        self._gate = activations.get_activation("hard_sigmoid")
        self._keyword = activations.get_activation(identifier="relu6")
        self._named = relu6
        self._attr = getattr(activations, "swish")
        self._param = act
        self._chosen = activations.get_activation(act)
        self._twice = activations.get_activation("relu6")
        self._pair, self._other = relu6, relu6
        local = tf.nn.relu
        self._local = local

    def build(self, shape):
        self._twice = tf.identity
'''


def test_a_class_notes_what_its_attributes_hold_by_name():
    callables = summarize(LAYER).classes["Block"].callables
    assert callables["_gate"] == ["activations.get_activation", "0", "hard_sigmoid"]
    assert callables["_keyword"] == ["activations.get_activation", "identifier", "relu6"]
    assert callables["_named"] == ["relu6"]
    assert callables["_attr"] == ["activations.swish"]
    # a parameter, a key not written out, two bindings, an unpacking, a local: unknown
    for attr in ("_param", "_chosen", "_twice", "_pair", "_other", "_local"):
        assert callables[attr] == [], attr


def test_the_summary_round_trips_through_json():
    for text in (GETTER, LAYER):
        summary = summarize(text)
        again = ModuleSummary.from_json(summary.to_json())
        assert again is not None and again.to_json() == summary.to_json()


CHAIN = '''
def hard_swish(x): ...
def relu(x): ...

def get_activation(name):
    if name == "hard_swish":
        return hard_swish
    elif "relu" == name:
        return relu
    raise ValueError(name)

def guarded(name):
    if name.startswith("h"):
        return relu
    if name == "hard_swish":
        return hard_swish

def two_params(a, b):
    if a == "x":
        return relu
    if b == "y":
        return hard_swish
'''


def test_an_if_chain_on_a_parameter_picks_by_its_value():
    functions = summarize(CHAIN).functions
    assert functions["get_activation"].picks == [("name", "", {"hard_swish": "hard_swish", "relu": "relu"})]
    # another test returns first, or two parameters decide: nothing picked
    assert functions["guarded"].picks == []
    assert functions["two_params"].picks == []
