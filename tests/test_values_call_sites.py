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
