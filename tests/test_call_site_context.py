"""Per-call-site context: a function is judged with the arguments of the one call that
reaches it, so ``block(x, "softmax")`` at a model's head decides the head's activation,
through helpers, closures a factory returns, lambdas, ``functools.partial`` and a
Keras layer class picked by a known name (``getattr(layers, name)``, ``eval``)."""

import textwrap

import libcst as cst

from helpers import fired, fix, lint
from mplint.core.walker import Walker
from mplint.semantic.names import NameResolver, collect_module_imports
from mplint.semantic.scopes import CallFrame, MAX_CALL_CONTEXT, Location, ScopeTracker
from mplint.semantic.values import Evaluator

HEADER = textwrap.dedent("""\
    import functools

    import tensorflow as tf
    from tensorflow.keras import layers
    from tensorflow.keras.layers import Softmax

    tf.keras.mixed_precision.set_global_policy("mixed_float16")


""")


def _module(body):
    return HEADER + textwrap.dedent(body)


def _line(code, text):
    """The 1-based line of the only line holding ``text``."""
    found = [i for i, line in enumerate(code.splitlines(), 1) if text in line]
    assert len(found) == 1, found
    return found[0]


BLOCK = _module("""\
    def block(x, units, act):
        return layers.Dense(units, activation=act)(x)


    def build(head_activation):
        inputs = tf.keras.Input((32,))
        x = block(inputs, 64, "relu")
        outputs = block(x, 10, head_activation)
        return tf.keras.Model(inputs, outputs)
""")


def test_the_argument_of_the_head_call_decides_the_head():
    code = BLOCK + 'build("softmax")\n'
    assert fired(code, "MP101", "MP102") == [(_line(code, "layers.Dense(units"), "MP101")]


def test_a_call_site_passing_an_unknown_value_keeps_mp101_silent():
    # a public builder of a library module: its callers are not known
    code = BLOCK + "\n\ndef main(args):\n    build(args.activation)\n"
    assert "MP101" not in {rule for _, rule in fired(code, "MP101", "MP102")}


def test_a_non_softmax_head_is_not_mp101_even_when_another_call_passes_softmax():
    code = BLOCK + 'build("sigmoid")\nblock(None, 3, "softmax")\n'
    assert fired(code, "MP101", "MP102") == [(_line(code, "layers.Dense(units"), "MP102")]


def test_a_builder_is_judged_once_per_call():
    # build("softmax") and build("linear"): one model has a float16 softmax head, the
    # other float16 logits as its output: each call's finding, on the one layer
    code = BLOCK + 'build("linear")\nbuild("softmax")\n'
    head = _line(code, "layers.Dense(units")
    assert fired(code, "MP101", "MP102") == [(head, "MP101"), (head, "MP102")]
    twice = BLOCK + 'build("softmax")\nbuild("softmax")\n'
    assert fired(twice, "MP101", "MP102") == [(head, "MP101")]
    linear = BLOCK + 'build("linear")\nbuild("tanh")\n'
    assert fired(linear, "MP101", "MP102") == [(_line(linear, "layers.Dense(units"), "MP102")]


def test_a_builder_head_given_by_each_call_keeps_the_safe_fix():
    code = _module("""\
        def classifier(classes, classifier_activation="softmax"):
            inputs = tf.keras.Input((32,))
            x = layers.Dense(64, activation="relu")(inputs)
            outputs = layers.Dense(classes, activation=classifier_activation)(x)
            return tf.keras.Model(inputs, outputs)


        small = classifier(16)
        scores = classifier(16, classifier_activation=None)
    """)
    [found] = lint(code, "MP101")
    assert found.line == _line(code, "activation=classifier_activation")
    assert "the call" not in found.message and found.fix.name == "SAFE"


def test_a_builder_called_too_often_is_judged_once_with_every_value():
    calls = "".join(f'build("{name}")\n' for name in ["relu"] * 9 + ["softmax"])
    assert fired(BLOCK + calls, "MP101") == []


def test_the_message_names_the_call_and_the_fix_is_unsafe_when_the_function_builds_other_layers():
    code = BLOCK + 'build("softmax")\n'
    [found] = lint(code, "MP101")
    assert "(the layer the call `block(x, 10, head_activation)` builds)" in found.message
    assert found.fix is not None and found.fix.name == "UNSAFE"
    assert fix(code, "MP101", unsafe=False) == code
    fixed = fix(code, "MP101")
    assert 'layers.Dense(units, activation=act, dtype="float32")(x)' in fixed
    assert fired(fixed, "MP101") == []


def test_a_function_called_once_keeps_the_safe_fix_and_the_plain_message():
    code = _module("""\
        def head(x, act):
            return layers.Dense(10, activation=act)(x)


        inputs = tf.keras.Input((32,))
        model = tf.keras.Model(inputs, head(inputs, "softmax"))
    """)
    [found] = lint(code, "MP101")
    assert "the call" not in found.message
    assert found.fix is not None and found.fix.name == "SAFE"


def test_a_closure_from_a_factory_takes_the_factory_call_arguments():
    code = _module("""\
        def head(units, act):
            def apply(x):
                return layers.Dense(units, activation=act)(x)
            return apply


        inputs = tf.keras.Input((32,))
        hidden = head(64, "relu")(inputs)
        model = tf.keras.Model(inputs, head(16, "softmax")(hidden))
    """)
    assert fired(code, "MP101", "MP102") == [(_line(code, "layers.Dense(units"), "MP101")]


def test_a_closure_whose_factory_is_given_a_float32_dtype_is_silent():
    code = _module("""\
        def head(units, act, dtype=None):
            def apply(x):
                return layers.Dense(units, activation=act, dtype=dtype)(x)
            return apply


        inputs = tf.keras.Input((32,))
        model = tf.keras.Model(inputs, head(16, "softmax", dtype="float32")(inputs))
    """)
    assert fired(code, "MP101", "MP102") == []


def test_a_closure_bound_to_a_name_first():
    code = _module("""\
        def head(act):
            def apply(x):
                return layers.Dense(16, activation=act)(x)
            return apply


        inputs = tf.keras.Input((32,))
        classify = head("softmax")
        model = tf.keras.Model(inputs, classify(inputs))
    """)
    assert fired(code, "MP101") == [(_line(code, "layers.Dense(16"), "MP101")]


def test_a_lambda_layer_factory():
    code = _module("""\
        make = lambda units, act="softmax": layers.Dense(units, activation=act)
        inputs = tf.keras.Input((32,))
        first = tf.keras.Model(inputs, make(16)(inputs))
    """)
    assert fired(code, "MP101") == [(_line(code, "make = lambda"), "MP101")]


def test_a_lambda_given_a_sigmoid_is_not_mp101():
    code = _module("""\
        make = lambda units, act: layers.Dense(units, activation=act)
        inputs = tf.keras.Input((32,))
        first = tf.keras.Model(inputs, make(16, "sigmoid")(inputs))
    """)
    assert fired(code, "MP101") == []


def test_functools_partial_binds_the_activation_and_the_dtype():
    bad = _module("""\
        head = functools.partial(layers.Dense, activation="softmax")
        inputs = tf.keras.Input((32,))
        model = tf.keras.Model(inputs, head(16)(inputs))
    """)
    assert fired(bad, "MP101") == [(_line(bad, "head(16)"), "MP101")]
    assert 'head(16, dtype="float32")(inputs)' in fix(bad, "MP101", unsafe=False)
    good = bad.replace('activation="softmax")', 'activation="softmax", dtype="float32")')
    assert fired(good, "MP101", "MP102") == []
    positional = _module("""\
        from functools import partial
        head = partial(layers.Activation, "softmax")
        inputs = tf.keras.Input((32,))
        model = tf.keras.Model(inputs, head()(layers.Dense(16)(inputs)))
    """)
    assert fired(positional, "MP101") == [(_line(positional, "head()("), "MP101")]


def test_a_layer_class_picked_by_a_known_name():
    code = _module("""\
        def build(head="Softmax"):
            inputs = tf.keras.Input((32,))
            x = layers.Dense(16)(inputs)
            make = getattr(layers, head)
            return tf.keras.Model(inputs, make()(x))


        build()
    """)
    assert fired(code, "MP101") == [(_line(code, "make()(x)"), "MP101")]
    # each call of the builder picks its own class
    assert fired(code.replace("build()\n", 'build("ReLU")\nbuild()\n'), "MP101") == [(_line(code, "make()(x)"), "MP101")]
    two = code.replace("getattr(layers, head)", 'getattr(layers, "Softmax" if wide else head)').replace(
        'head="Softmax"', 'head="ReLU", wide=False')
    assert fired(two, "MP101") == []  # two names in one call: which class is unknown
    assert fired(code.replace('"Softmax"', '"ReLU"'), "MP101", "MP102") == [(_line(code, "make()(x)"), "MP102")]


def test_eval_of_a_known_name_of_an_imported_layer_class():
    code = _module("""\
        def output(x, activation="Softmax"):
            make = eval(activation)
            return make(name="probs")(x)


        inputs = tf.keras.Input((32,))
        model = tf.keras.Model(inputs, output(layers.Dense(16)(inputs)))
    """)
    assert fired(code, "MP101") == [(_line(code, "make(name="), "MP101")]
    # eval of a name the file does not import as a Keras layer: unknown, silent
    other = code.replace('activation="Softmax"', 'activation="my_head"')
    assert fired(other, "MP101", "MP102") == []
    shadowed = code.replace("def output(", "def eval(text):\n    return text\n\n\ndef output(")
    assert fired(shadowed, "MP101") == []


def test_recursion_through_calls_stays_bounded():
    code = _module("""\
        def deep(x, act, n):
            if n:
                return deep(x, act, n - 1)
            return layers.Dense(16, activation=act)(x)


        inputs = tf.keras.Input((32,))
        model = tf.keras.Model(inputs, deep(inputs, "softmax", 3))
    """)
    fired(code, "MP101", "MP102")  # terminates, whatever it decides


def _walk(code):
    module = cst.parse_module(textwrap.dedent(code))
    names = NameResolver()
    collect_module_imports(module, names)
    tracker = ScopeTracker(module, names)
    Walker([tracker], lambda owner, exc: (_ for _ in ()).throw(exc)).walk(module)
    return module, tracker, Evaluator(names, call_sites=tracker.calls)


def test_the_evaluator_reads_a_parameter_from_the_followed_call_only():
    module, tracker, evaluator = _walk("""\
        def block(act="tanh"):
            return act

        block("relu")
        block("softmax")
        block()
    """)
    function_scope = tracker.module_scope.children[0]
    returned = module.body[0].body.body[0].body[0].value
    inside = Location(function_scope, 10**6)
    assert evaluator.values(returned, inside) == frozenset({"relu", "softmax", "tanh"})
    calls = [node.body[0].value for node in module.body[1:]]
    caller = Location(tracker.module_scope, 10**6)
    for call, expected in zip(calls, ("relu", "softmax", "tanh")):
        frame = CallFrame(module.body[0], call, caller)
        assert evaluator.values(returned, inside.entering(frame)) == frozenset({expected})


def test_the_context_is_bounded():
    module, tracker, _ = _walk("def f(a):\n    return a\nf(1)\n")
    frame = CallFrame(module.body[0], module.body[1].body[0].value, Location(tracker.module_scope, 1))
    where = Location(tracker.module_scope.children[0], 5)
    for _ in range(MAX_CALL_CONTEXT + 3):
        where = where.entering(frame)
    assert len(where.context) == MAX_CALL_CONTEXT


def test_a_method_called_once_that_builds_a_sub_model_keeps_the_safe_fix():
    code = _module("""\
        class Tracker:
            def __init__(self):
                self.decoder = self.get_decoder()

            def get_decoder(self):
                inputs = tf.keras.Input((32,))
                return tf.keras.Model(inputs, Softmax()(layers.Dense(16)(inputs)))

            def build(self):
                inputs = tf.keras.Input((32,))
                return tf.keras.Model(inputs, self.decoder(inputs))


        Tracker().build()
    """)
    [found] = lint(code, "MP101")
    assert "the call" not in found.message and found.fix.name == "SAFE"
