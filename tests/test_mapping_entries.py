"""Evaluator: ``kwargs.pop(key, default)`` / ``.get`` read the entry that the calls
reaching the function put in the dict (semantic/mapping_entries.py).

Runs the real walk (names, scopes and the tracker's call index, calls on ``self`` and
``super()`` included) over small modules, then evaluates the name the read is bound to
at the end of its function, as a rule would after the walk.
"""

import textwrap

import libcst as cst
import pytest

from mplint.core.walker import Walker
from mplint.semantic.names import NameResolver, collect_module_imports
from mplint.semantic.scopes import Location, ScopeTracker
from mplint.semantic.values import Evaluator


def _walk(code):
    module = cst.parse_module(textwrap.dedent(code))
    names = NameResolver()
    collect_module_imports(module, names)
    tracker = ScopeTracker(module, names)
    Walker([tracker], lambda owner, exc: (_ for _ in ()).throw(exc)).walk(module)
    return names, tracker


def _scopes(scope):
    yield scope
    for child in scope.children:
        yield from _scopes(child)


def _value_of(code, function, name, script=False):
    """The values ``name`` holds at the end of ``function`` (the last one of that name)."""
    names, tracker = _walk(code)
    scope = [s for s in _scopes(tracker.module_scope)
             if isinstance(s.node, cst.FunctionDef) and s.node.name.value == function][-1]
    evaluator = Evaluator(names, call_sites=tracker.calls)
    evaluator.script = script
    return evaluator.values(cst.Name(name), Location(scope, 10**6))


def test_a_public_constructor_nobody_calls_runs_with_the_default():
    code = """
    class Net:
        def __init__(self, **kwargs):
            act = kwargs.pop("act", "softmax")
    """
    assert _value_of(code, "__init__", "act") == {"softmax"}


def test_a_keyword_at_the_files_calls_joins_the_default_in_a_library():
    code = """
    def build(**kwargs):
        act = kwargs.pop("act", "softmax")

    def sigmoid_model():
        return build(act="sigmoid")
    """
    assert _value_of(code, "build", "act") == {"softmax", "sigmoid"}
    # a script's calls are all the calls there are
    assert _value_of(code, "build", "act", script=True) == {"sigmoid"}


def test_a_named_parameter_takes_the_keyword_so_kwargs_never_holds_it():
    code = """
    def build(act="relu", **kwargs):
        other = kwargs.get("act", "softmax")

    build(act="sigmoid")
    """
    assert _value_of(code, "build", "other", script=True) == {"softmax"}


def test_super_init_chains_hand_on_the_subclass_default():
    code = """
    class Base:
        def __init__(self, **kwargs):
            act = kwargs.pop("act", "softmax")

    class Small(Base):
        def __init__(self, act="relu", **kwargs):
            super().__init__(act=act, **kwargs)

    Small()
    """
    names, tracker = _walk(code)
    base = next(s for s in _scopes(tracker.module_scope)
                if isinstance(s.node, cst.FunctionDef) and s.parent.node.name.value == "Base")
    evaluator = Evaluator(names, call_sites=tracker.calls)
    evaluator.script = False  # a library: its users may build Base itself
    assert evaluator.values(cst.Name("act"), Location(base, 10**6)) == {"softmax", "relu"}
    evaluator.script = True  # only Small() runs: Base is built through it
    assert evaluator.values(cst.Name("act"), Location(base, 10**6)) == {"relu"}


def test_a_helper_method_reads_the_constructors_kwargs():
    code = """
    class Base:
        def set_properties(self, kwargs):
            self.classes = kwargs.pop("classes", 1000)
            act = kwargs.pop("classifier_activation", "softmax")

    class Net(Base):
        def __init__(self, **kwargs):
            self.set_properties(kwargs)
            super().__init__(**kwargs)
    """
    assert _value_of(code, "set_properties", "act") == {"softmax"}


def test_a_dict_bound_once_to_a_literal():
    code = """
    def build():
        cfg = {"act": "softmax"}
        act = cfg.get("act", "relu")
        missing = cfg.get("other")
    """
    assert _value_of(code, "build", "act") == {"softmax"}
    assert _value_of(code, "build", "missing") == {None}


@pytest.mark.parametrize("change", [
    'kwargs.update(act="sigmoid")',
    'kwargs["act"] = "sigmoid"',
    'kwargs.setdefault("act", "sigmoid")',
    'kwargs.pop("act", None)',
    'configure(kwargs)',
    'del kwargs["act"]',
])
def test_a_dict_that_may_change_before_the_read_is_unknown(change):
    code = f"""
    def configure(options):
        pass

    def build(**kwargs):
        {change}
        act = kwargs.pop("act", "softmax")
    """
    assert _value_of(code, "build", "act") is None


@pytest.mark.parametrize("call", [
    "build(**load())",          # a spread nobody here can read
    "build(*args, act='softmax')",  # *args beside it
    "build(act=choose())",      # a value computed at run time
])
def test_a_call_that_may_put_anything_there_makes_it_unknown(call):
    code = f"""
    def build(**kwargs):
        act = kwargs.pop("act", "softmax")

    {call}
    """
    assert _value_of(code, "build", "act", script=True) is None


def test_a_caller_whose_own_kwargs_changed_hands_on_nothing_known():
    code = """
    class Base:
        def __init__(self, **kwargs):
            act = kwargs.pop("act", "softmax")

    class Small(Base):
        def __init__(self, **kwargs):
            kwargs["act"] = pick()
            super().__init__(**kwargs)

    Small()
    """
    names, tracker = _walk(code)
    base = next(s for s in _scopes(tracker.module_scope)
                if isinstance(s.node, cst.FunctionDef) and s.parent.node.name.value == "Base")
    evaluator = Evaluator(names, call_sites=tracker.calls)
    evaluator.script = True
    assert evaluator.values(cst.Name("act"), Location(base, 10**6)) is None


def test_a_private_function_nobody_calls_is_unknown():
    code = """
    def _build(**kwargs):
        act = kwargs.pop("act", "softmax")
    """
    assert _value_of(code, "_build", "act") is None


def test_a_closure_nobody_calls_is_unknown():
    code = """
    def factory():
        def build(**kwargs):
            act = kwargs.pop("act", "softmax")
        return build
    """
    assert _value_of(code, "build", "act") is None
