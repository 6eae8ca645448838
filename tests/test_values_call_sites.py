"""Evaluator: parameters take the arguments that calls in the same module pass.

Runs the real walk (names, scopes) over small modules, then evaluates a parameter
as a rule would after the walk.
"""

import textwrap

import libcst as cst

from mplint.semantic.names import NameResolver, collect_module_imports
from mplint.semantic.scopes import Location, ScopeTracker
from mplint.semantic.call_args import UNREADABLE, argument_for
from mplint.semantic.values import Evaluator, is_constant
from mplint.core.walker import Walker


class _Calls:
    """Indexes calls of plain names, as the dimensions analysis does."""

    def __init__(self, tracker):
        self.tracker = tracker
        self.index = {}

    def visit_Call(self, node):
        if isinstance(node.func, cst.Name):
            self.index.setdefault(node.func.value, []).append((node, self.tracker.location()))


def _walk(code):
    module = cst.parse_module(textwrap.dedent(code))
    names = NameResolver()
    collect_module_imports(module, names)
    tracker = ScopeTracker(module, names)
    calls = _Calls(tracker)
    Walker([tracker, calls], lambda owner, exc: (_ for _ in ()).throw(exc)).walk(module)
    return names, tracker, calls.index


def _param(tracker, function, param):
    for scope in _scopes(tracker.module_scope):
        if isinstance(scope.node, cst.FunctionDef) and scope.node.name.value == function:
            return scope, scope.bindings[param][0]
    raise AssertionError(function)


def _scopes(scope):
    yield scope
    for child in scope.children:
        yield from _scopes(child)


def _values(code, function, param, with_calls=True):
    names, tracker, index = _walk(code)
    scope, binding = _param(tracker, function, param)
    evaluator = Evaluator(names, call_sites=index if with_calls else None)
    return evaluator.values(cst.Name(param), Location(scope, 10**6))


def test_positional_and_keyword_arguments_of_local_calls():
    code = """
    def block(x, filters, size=3):
        return filters
    block(a, 32)
    block(a, filters=50)
    block(a, 64, 5)
    """
    assert _values(code, "block", "filters") == frozenset({32, 50, 64})
    # the default counts only because one call leaves `size` out
    assert _values(code, "block", "size") == frozenset({3, 5})


def test_default_only_when_some_call_omits_it():
    code = """
    def block(x, units=100):
        return units
    block(a, 64)
    block(a, units=128)
    """
    assert _values(code, "block", "units") == frozenset({64, 128})
    # without a call index the evaluator keeps its old behaviour: the default
    assert _values(code, "block", "units", with_calls=False) == frozenset({100})


def test_unreadable_calls_make_the_parameter_unknown():
    code = """
    def block(x, units):
        return units
    block(a, 64)
    block(*args)
    """
    assert _values(code, "block", "units") is None


def test_arguments_follow_constants_and_arithmetic_at_the_call():
    code = """
    BASE = 16
    def block(x, units):
        return units
    block(a, BASE * 4)
    """
    assert _values(code, "block", "units") == frozenset({64})


def test_init_parameters_take_the_class_calls():
    code = """
    class Block:
        def __init__(self, width=8):
            self.width = width
    Block(24)
    Block(width=40)
    """
    assert _values(code, "__init__", "width") == frozenset({24, 40})


def test_a_shadowing_definition_is_not_the_callee():
    code = """
    def block(x, units=100):
        return units
    def other():
        def block(x, units):
            return units
        block(a, 7)
    """
    assert _values(code, "block", "units") == frozenset({100})


def test_argument_for_and_is_constant():
    module = cst.parse_module("def f(a, b=2, *rest, c, **kw): pass\n")
    function = module.body[0]
    params = function.params
    call = cst.parse_expression("f(1, c=3)")
    assert argument_for(function, params.params[0], call).value == "1"
    assert argument_for(function, params.params[1], call) is None
    assert argument_for(function, params.kwonly_params[0], call).value == "3"
    assert argument_for(function, params.star_arg, call) is UNREADABLE  # what *rest holds is not one expression
    names, tracker, _ = _walk("X = 1\nY = 2\nY += 1\n")
    assert is_constant(tracker.module_scope.bindings["X"][0])
    assert not is_constant(tracker.module_scope.bindings["Y"][0])


def test_a_dict_spread_at_the_call_binds_like_keywords():
    code = """
    def build(classes, act=None):
        return act
    cfg = {"classes": 10, "act": "softmax"}
    build(**cfg)
    build(**dict(classes=3, act="sigmoid"))
    """
    assert _values(code, "build", "act") == frozenset({"softmax", "sigmoid"})


def test_a_spread_that_cannot_be_read_leaves_the_parameter_unknown():
    changed = """
    def build(classes, act=None):
        return act
    cfg = {"classes": 10, "act": "softmax"}
    cfg["act"] = "relu"
    build(**cfg)
    """
    assert _values(changed, "build", "act") is None
    passed_on = """
    def build(classes, act=None):
        return act
    def outer(**kwargs):
        return build(1, **kwargs)
    """
    assert _values(passed_on, "build", "act") is None
    given_twice = """
    def build(classes, act=None):
        return act
    build(1, act="relu", **{"act": "softmax"})
    """
    assert _values(given_twice, "build", "act") is None


def test_a_spread_without_the_key_leaves_the_default():
    code = """
    def build(classes, act="linear"):
        return act
    build(**{"classes": 3})
    """
    assert _values(code, "build", "act") == frozenset({"linear"})


def test_self_attributes_and_methods_come_from_the_instance_class_through_its_bases():
    from mplint.semantic.scopes import CallFrame, attributes_of, class_chain, instance_class, local_def

    code = """
    class Base:
        def top(self):
            return self.act
        def head(self):
            return self.top()
    class Net(Base):
        def __init__(self):
            self.act = "softmax"
            self.head()
    class Vit(Net):
        def top(self):
            return None
    """
    _, tracker, _ = _walk(code)
    scopes = {s.node.name.value: s for s in _scopes(tracker.module_scope)
              if isinstance(s.node, (cst.ClassDef, cst.FunctionDef))}
    base, net, vit = scopes["Base"], scopes["Net"], scopes["Vit"]
    assert [c.node.name.value for c in class_chain(vit)] == ["Vit", "Net", "Base"]
    assert [b.name for b in attributes_of(net, "act")] == ["act"] and not attributes_of(base, "act")
    # inside Base.head, reached by Net.__init__'s self.head(): self is a Net
    init, head = scopes["__init__"], scopes["head"]
    call = next(n for n in init.node.body.body[1].body if isinstance(n, cst.Expr)).value
    inside = Location(head, 10**6).entering(CallFrame(head.node, call, Location(init, 10**6), 1))
    assert instance_class(inside) is net
    assert instance_class(Location(head, 10**6)) is base
    top = cst.parse_expression("self.top")
    base_top = next(c.node for c in base.children if c.node.name.value == "top")
    vit_top = next(c.node for c in vit.children if c.node.name.value == "top")
    assert local_def(top, inside).node is base_top  # a Net has Base's top
    as_vit = Location(head, 10**6).entering(CallFrame(head.node, call, Location(vit, 10**6), 1))
    assert local_def(top, as_vit).node is vit_top  # a Vit's override wins
