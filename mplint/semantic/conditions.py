"""What a branch's test means, so two branches decided by the same condition are
judged together.

``if args.amp:`` in ``main``, ``if loss_scale:`` in ``Trainer.__init__`` (called as
``Trainer(..., loss_scale=args.amp)``) and ``if self.use_amp:`` in its train step
(``self.use_amp = loss_scale``) all test one condition: the command-line flag
``amp``. Each test resolves to a *key* naming its meaning (the flag, the config
attribute path, the parameter) rather than its spelling; arms whose keys need
opposite truths never run together. A test that cannot be followed has no key and
constrains nothing: silent code stays silent.
"""

from __future__ import annotations

from typing import AbstractSet, Callable, Dict, List, Mapping, Optional, Tuple

import libcst as cst

from mplint.core.walker import child_nodes
from mplint.semantic.call_args import UNREADABLE, argument_for
from mplint.semantic.names import NameResolver
from mplint.semantic.scopes import (
    Binding, Branches, CallIndex, Location, Scope, calls_of, function_key, self_call_key,
)
from mplint.semantic.vocabulary import FLAG_OBJECTS, GENERATION_TEST_STRINGS, VERSION_ATTRIBUTES

#: a condition's meaning -> the truth an arm needs of it
Truths = Dict[str, bool]

#: the parsed command line, however it is reached (argparse's namespace, absl's FLAGS)
FLAGS = "flags"
_PARSE_METHODS = frozenset({"parse_args"})
_MAX_DEPTH = 8


class Conditions:
    """Resolves branch tests to keys; one per file (built on the file's scopes)."""

    def __init__(self, names: NameResolver, calls: CallIndex, global_names: AbstractSet[str] = frozenset()) -> None:
        self.names = names
        self.calls = calls
        #: names a function declares ``global`` (``ScopeTracker.global_names``, filled by the walk)
        self.global_names = global_names
        self._keys: Dict[Tuple[int, int, int], Optional[str]] = {}

    # -- keys ------------------------------------------------------------------------
    def key(self, expr: cst.BaseExpression, loc: Location, depth: int = 0) -> Optional[str]:
        """The meaning of a condition seen at ``loc``: ``flags.amp``, ``param:Trainer.__init__:cfg.fp16``,
        ``self:Trainer.use_amp``; None when it cannot be followed."""
        cache = (id(expr), id(loc.scope), loc.order)
        if cache not in self._keys:
            self._keys[cache] = None  # a cycle resolves to nothing
            self._keys[cache] = self._key(expr, loc, depth)
        return self._keys[cache]

    def _key(self, expr: cst.BaseExpression, loc: Location, depth: int) -> Optional[str]:
        if depth > _MAX_DEPTH:
            return None
        if self.names.resolve(expr) & FLAG_OBJECTS:
            return FLAGS
        if isinstance(expr, cst.Name):
            return self._name_key(expr.value, loc, depth)
        if not isinstance(expr, cst.Attribute):
            return None
        if isinstance(expr.value, cst.Name) and expr.value.value == "self":
            return self._attribute_key(expr.attr.value, loc, depth)
        base = self.key(expr.value, loc, depth + 1)
        return None if base is None else f"{base}.{expr.attr.value}"

    def _name_key(self, name: str, loc: Location, depth: int) -> Optional[str]:
        binding = loc.lookup(name)
        if binding is None or binding.scope is None:
            return None
        if binding.kind == "param":
            return self._param_key(binding, depth)
        if binding.kind not in ("assign", "annassign") or binding.value is None \
                or len(binding.scope.bindings.get(name, ())) != 1:
            return None  # rebound: which value the test reads is a run-time matter
        value = binding.value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value in _PARSE_METHODS:
            return FLAGS  # ``args = parser.parse_args()``
        found = self.key(value, binding.location(), depth + 1)
        if found is None and binding.scope.kind == "module" and name not in self.global_names:
            # ``mp = params.train.mixed_precision`` bound once at the top level: every test
            # of ``mp`` in the run reads that one value, whatever it is
            return f"module:{name}"
        return found

    def _attribute_key(self, attr: str, loc: Location, depth: int) -> Optional[str]:
        """``self.use_amp``: what every ``self.use_amp = ...`` of the class assigns, when
        they agree (``= loss_scale`` in ``__init__``); else the attribute itself."""
        cls = loc.scope.enclosing_class()
        if cls is None:
            return None
        bindings = cls.attributes.get(attr, [])
        keys = {self.key(b.value, b.location(), depth + 1) if b.value is not None and b.scope is not None
                else None for b in bindings}
        if len(keys) == 1 and None not in keys:
            return keys.pop()
        name = getattr(getattr(cls.node, "name", None), "value", "?")
        return f"self:{name}.{attr}"

    def _param_key(self, binding: Binding, depth: int) -> Optional[str]:
        """A parameter: the condition every call of its function in the file passes
        for it, when they agree (``Trainer(loss_scale=args.amp)``); else the parameter."""
        scope = binding.scope
        assert scope is not None
        param = binding.node
        if not isinstance(param, cst.Param) or not isinstance(scope.node, cst.FunctionDef):
            return None
        fallback = f"param:{function_key(scope)}:{binding.name}"
        passed = set()
        for call, where, offset in self.calls_of(scope):
            expr = argument_for(scope.node, param, call, offset)
            if expr is UNREADABLE or not isinstance(expr, cst.BaseExpression):
                return fallback
            passed.add(self.key(expr, where, depth + 1))
        if len(passed) == 1 and None not in passed:
            return passed.pop()
        return fallback

    def calls_of(self, scope: Scope) -> List[Tuple[cst.Call, Location, int]]:
        """The file's calls of a plain function, or of a class whose ``__init__`` it is;
        of another method, its calls on the instance (:func:`method_calls`)."""
        return calls_of(self.calls, scope) or method_calls(self.calls, scope)

    # -- arms --------------------------------------------------------------------------
    def truths(self, branches: Branches, loc: Location) -> Truths:
        """What the ``if`` arms around a statement need of each condition: the body of
        ``if amp:`` needs it true, its ``else`` (or ``if not amp:``) false. A compound
        test is a condition of its own, named by its formula over the keys of its parts
        (``args.mixed_precision and not args.use_tpu``: its ``else`` needs that formula
        false, which the body of the same test elsewhere needs true), and needs its
        parts where it decides them (each side of an ``and`` in a body, of an ``or`` in
        an ``else``). Arms that need one condition both ways (impossible code) need
        nothing here."""
        out: Truths = {}
        for _, arm, test in branches:
            self._need(test, arm == "body", loc, out)
        return out

    def _need(self, test: cst.BaseExpression, wanted: bool, loc: Location, out: Truths) -> None:
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, wanted = test.expression, not wanted
        if isinstance(test, (cst.Name, cst.Attribute)):
            key = self.key(test, loc)
            if key is not None:
                out[key] = wanted
            return
        if not isinstance(test, cst.BooleanOperation):
            return
        formula = self.formula(test, loc)
        if formula is not None:
            out[formula] = wanted
        if isinstance(test.operator, cst.And) == wanted:
            self._need(test.left, wanted, loc, out)
            self._need(test.right, wanted, loc, out)

    def formula(self, test: cst.BaseExpression, loc: Location) -> Optional[str]:
        """A compound test as a formula over condition keys (``and(flags.a,not(flags.b))``);
        None when any part cannot be followed."""
        if isinstance(test, (cst.Name, cst.Attribute)):
            return self.key(test, loc)
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self.formula(test.expression, loc)
            return None if inner is None else f"not({inner})"
        if isinstance(test, cst.BooleanOperation):
            left, right = self.formula(test.left, loc), self.formula(test.right, loc)
            if left is None or right is None:
                return None
            operator = "and" if isinstance(test.operator, cst.And) else "or"
            return f"{operator}({left},{right})"
        return None


def method_calls(calls: CallIndex, scope: Scope) -> List[Tuple[cst.Call, Location, int]]:
    """The calls ``self.<method>(...)`` of a plain method (``self`` bound: offset 1), when
    every such call of the file sits in the class that defines it: ``make_optimizer(self,
    loss_scale=False)`` called as ``self.make_optimizer(loss_scale=loss_scale)`` from
    ``__init__`` tests the constructor's parameter. A subclass calling it, a decorated
    method (a static or class method binds no instance) or a dunder: none."""
    function, definer = scope.node, scope.parent
    if not isinstance(function, cst.FunctionDef) or definer is None or definer.kind != "class" \
            or function.decorators or function.name.value.startswith("__"):
        return []
    found = list(calls.get(self_call_key(function.name.value, False), ()))
    if any(where.scope.enclosing_class() is not definer for _, where in found):
        return []
    return [(call, where, 1) for call, where in found]


def conflict(a: Mapping[str, bool], b: Mapping[str, bool]) -> bool:
    """Two sets of needs that one run cannot meet together (a condition both ways)."""
    return any(key in b and b[key] != value for key, value in a.items())


#: the calls that test whether an object has an attribute: ``hasattr(opt, "m")``,
#: ``getattr(opt, "m", None)`` (its truth)
_CAPABILITY_CALLS = frozenset({"hasattr", "getattr"})


def capabilities(tests: "Tuple[Tuple[cst.BaseExpression, str], ...]") -> Dict[str, bool]:
    """What the ``if`` arms around some code need of attributes the code may call:
    the body of ``if hasattr(opt, "get_scaled_loss"):`` (or ``"get_scaled_loss" in
    dir(opt)``) needs it present, its ``else`` absent; ``and`` in a body and ``or`` in
    an ``else`` need each side; anything else (``or`` in a body) needs nothing."""
    out: Dict[str, bool] = {}
    for test, arm in tests:
        _capability(test, arm == "body", out)
    return out


def _capability(test: cst.BaseExpression, wanted: bool, out: Dict[str, bool]) -> None:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        _capability(test.expression, not wanted, out)
    elif isinstance(test, cst.BooleanOperation):
        if isinstance(test.operator, cst.And) == wanted:  # every side holds (or every side fails)
            _capability(test.left, wanted, out)
            _capability(test.right, wanted, out)
    elif isinstance(test, cst.Call):
        name = _tested_attribute(test)
        if name is not None:
            out[name] = wanted
    elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        operator = test.comparisons[0].operator
        listed = test.comparisons[0].comparator
        if isinstance(operator, (cst.In, cst.NotIn)) and isinstance(test.left, cst.SimpleString) \
                and isinstance(listed, cst.Call) and isinstance(listed.func, cst.Name) \
                and listed.func.value == "dir" and len(listed.args) == 1:
            listed_name = test.left.evaluated_value
            if isinstance(listed_name, str):
                out[listed_name] = wanted if isinstance(operator, cst.In) else not wanted


def _tested_attribute(call: cst.Call) -> Optional[str]:
    """``m`` of ``hasattr(x, "m")`` / ``getattr(x, "m", None)``; else None."""
    if not (isinstance(call.func, cst.Name) and call.func.value in _CAPABILITY_CALLS and len(call.args) >= 2):
        return None
    if call.func.value == "getattr" and len(call.args) != 3:
        return None  # getattr(x, "m") raises when it is missing: no test
    name = call.args[1].value
    value = name.evaluated_value if isinstance(name, cst.SimpleString) else None
    return value if isinstance(value, str) else None


#: where a name of a test is bound: its value, and how to follow the names that value reads
Follow = Callable[[cst.Name], Optional[Tuple[cst.BaseExpression, "Follow"]]]
#: a name another module binds (``from compat import KERAS_3``): its value there, and that
#: module's names bound once at its top level (to follow the names the value reads)
ImportedBinding = Callable[[cst.Name], Optional[Tuple[cst.BaseExpression, Mapping[str, Optional[cst.BaseExpression]]]]]


def decides_generation(test: cst.BaseExpression, loc: Location, imported: Optional[ImportedBinding] = None) -> bool:
    """Whether a branch test reads which Keras generation runs: a package version
    (``tf.__version__``, ``keras.version()``) or ``TF_USE_LEGACY_KERAS``, written in it or
    in the module constants it names (``KERAS_3 = _TF_VERSION >= (2, 16) and ...``), this
    module's or, with ``imported``, one another module binds (``from compat import
    KERAS_3``). The arms of such a test are each right for the generation that takes them."""
    return _reads_generation(test, _in_scope(loc, imported), 0)


def _in_scope(loc: Location, imported: Optional[ImportedBinding]) -> Follow:
    def follow(name: cst.Name) -> Optional[Tuple[cst.BaseExpression, Follow]]:
        binding = loc.lookup(name.value)
        if binding is not None:
            if binding.value is None or binding.kind not in ("assign", "annassign"):
                return None
            return binding.value, _in_scope(binding.location(), imported)
        found = imported(name) if imported is not None else None
        return None if found is None else (found[0], _in_module(found[1]))
    return follow


def _in_module(values: Mapping[str, Optional[cst.BaseExpression]]) -> Follow:
    def follow(name: cst.Name) -> Optional[Tuple[cst.BaseExpression, Follow]]:
        value = values.get(name.value)
        return None if value is None else (value, follow)
    return follow


def _reads_generation(test: cst.BaseExpression, follow: Follow, depth: int) -> bool:
    if depth > 3:
        return False
    stack: List[cst.CSTNode] = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Attribute) and node.attr.value in VERSION_ATTRIBUTES:
            return True
        if isinstance(node, cst.SimpleString) and node.evaluated_value in GENERATION_TEST_STRINGS:
            return True
        if isinstance(node, cst.Name):
            found = follow(node)
            if found is not None and _reads_generation(found[0], found[1], depth + 1):
                return True
            continue
        if isinstance(node, cst.Attribute):
            stack.append(node.value)
            continue
        stack.extend(child_nodes(node))
    return False
