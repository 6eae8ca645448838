"""What ``kwargs.pop("classifier_activation", "softmax")`` (or ``.get``) may return:
the default where no call that reaches the function puts the key in the dict, else the
values those calls pass under it.

Model libraries take their options through ``**kwargs`` and read them in a helper
(``self.set_properties(kwargs)``), while a subclass's constructor passes its own
default on (``super().__init__(classifier_activation=classifier_activation,
**kwargs)``). The dict is followed back through the calls of this file:

- a ``**kwargs`` parameter holds what a call passes by keyword beside the named
  parameters, and what a ``**spread`` of the caller holds (a dict literal, or the
  caller's own ``**kwargs`` in turn);
- a plain parameter (``def set_properties(self, kwargs)``) holds the dict each call
  hands it (``self.set_properties(kwargs)``);
- a name bound once to a dict literal holds its entries.

Anything else is unknown, and so is a dict that may change before it is read other than
by popping other keys: an item set, ``update``, ``setdefault``, the same key popped
twice, the dict handed to another call, a call of the function in another module that
passes it (the summaries do not write dicts), ``*args`` beside it. A public function
nobody in the project calls runs with its users' defaults: the key is absent.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Dict, FrozenSet, List, Mapping, Optional, Set, Tuple

import libcst as cst

from mplint.semantic.elsewhere_marks import ELSEWHERE_UNKNOWN
from mplint.semantic.scopes import (
    Binding, Location, Scope, calls_of, class_chain, function_key, method_of, self_call_key,
)

from mplint.semantic.visibility import is_private_name

if TYPE_CHECKING:
    from mplint.semantic.values import Evaluator

#: (values the key may hold where present, whether it may be absent); None: unknown
Entry = Optional[Tuple[FrozenSet[object], bool]]

#: methods that read a dict's entry with a default
READERS = frozenset({"pop", "get"})
#: methods that read without changing which keys a dict holds
_READ_ONLY = frozenset({"get", "keys", "items", "values", "copy", "__contains__"})
#: how many dicts handed from call to call are followed
_MAX_HOPS = 4
_ABSENT: Tuple[FrozenSet[object], bool] = (frozenset(), True)


class MappingEntries:
    """Answers what a dict read with a default returns, for one file's evaluator."""

    def __init__(self, evaluator: "Evaluator") -> None:
        self._evaluator = evaluator
        self._asked: Dict[Tuple[int, str, str, int, int], bool] = {}

    def read(self, call: cst.Call, loc: Location, depth: int) -> Optional[FrozenSet[object]]:
        """The values of ``D.pop(KEY, DEFAULT)`` / ``D.get(KEY[, DEFAULT])``; None when
        unknown or not such a call."""
        func = call.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in READERS \
                or not isinstance(func.value, cst.Name) or not 1 <= len(call.args) <= 2 \
                or any(arg.keyword is not None or arg.star for arg in call.args):
            return None
        key = self._evaluator.value(call.args[0].value, loc)
        if not isinstance(key, str):
            return None
        entry = self._name_entry(func.value.value, key, loc, depth, reader=call)
        if entry is None:
            return None
        found, absent = entry
        out: Set[object] = set(found)
        if absent:
            if len(call.args) == 2:
                default = self._evaluator.values(call.args[1].value, loc, depth + 1)
                if default is None:
                    return None
                out |= default
            elif func.attr.value == "get":
                out.add(None)
        return frozenset(out) if out else None

    def handed_entry(self, name: str, key: str, loc: Location, depth: int, handed: cst.Call) -> Entry:
        """The entry ``key`` of the dict ``name`` that ``handed`` hands a method of another
        module at ``loc`` (``self.set_properties(kwargs)``): (values, may be absent)."""
        return self._name_entry(name, key, loc, depth, handed=handed)

    # -- one dict -----------------------------------------------------------------
    def _name_entry(self, name: str, key: str, loc: Location, depth: int,
                    reader: Optional[cst.Call] = None, handed: Optional[cst.Call] = None) -> Entry:
        """The entry ``key`` of the dict ``name`` holds at ``loc``: ``reader`` is the read
        being answered, ``handed`` the call that hands the dict on (both no change)."""
        if depth > _MAX_HOPS * 4:
            return None
        bindings = loc.reaching(name)
        if len(bindings) != 1 or bindings[0].scope is None:
            return None
        binding = bindings[0]
        scope = binding.scope
        assert scope is not None
        if len(scope.bindings.get(name, ())) != 1 or not self._unchanged(scope, name, key, reader, handed):
            return None
        if binding.kind == "param":
            return self._param_entry(binding, key, loc, depth)
        evaluator = self._evaluator
        if binding.kind in ("assign", "annassign") and binding.value is not None:
            spread = evaluator.spread(binding.value, binding.location().within(loc.context), depth + 1)
            if spread is None:
                return None
            return self._from_spread(spread[0], key, spread[1], depth)
        return None

    def _param_entry(self, binding: Binding, key: str, loc: Location, depth: int) -> Entry:
        """A parameter's dict: the ``**kwargs`` of its function, or a plain parameter
        that each call hands a dict."""
        scope = binding.scope
        function = scope.node if scope is not None else None
        param = binding.node
        if scope is None or not isinstance(function, cst.FunctionDef) or not isinstance(param, cst.Param):
            return None
        params = function.params
        if param is params.star_arg:
            return None
        star_kwarg = param is params.star_kwarg
        if star_kwarg and any(p.name.value == key for p in [*params.params, *params.kwonly_params]):
            return _ABSENT  # a keyword of that name binds the named parameter
        followed = loc.frame_of(function)
        if followed is not None:
            frame = followed[0]
            return self._call_entry(frame.call, binding, key, frame.caller, depth + 1)
        elsewhere = self._evaluator.elsewhere.get(function_key(scope))
        if elsewhere and not star_kwarg:
            return None  # calls in other modules: what dict they hand is not summarised
        sites = self._sites(scope)
        # a public function of a library (or one nobody here calls) also runs from its
        # users' code, with their defaults: no key in its ``**kwargs``
        public = star_kwarg and _reachable_by_users(scope) and (not sites or not self._evaluator.script)
        if not sites and not public:
            return None
        found: Set[object] = set()
        absent = public
        for site in elsewhere or ():
            entry = _elsewhere_entry(site, key)
            if entry is None:
                return None
            found |= entry[0]
            absent = absent or entry[1]
        for call, where in sites:
            entry = self._call_entry(call, binding, key, where, depth + 1)
            if entry is None:
                return None
            found |= entry[0]
            absent = absent or entry[1]
        return frozenset(found), absent

    def _call_entry(self, call: cst.Call, binding: Binding, key: str, where: Location, depth: int) -> Entry:
        """What one call puts under ``key`` in the dict parameter ``binding``."""
        param = binding.node
        assert isinstance(param, cst.Param) and binding.scope is not None
        function = binding.scope.node
        assert isinstance(function, cst.FunctionDef)
        if param is not function.params.star_kwarg:
            return self._handed_dict(call, function, param, key, where, depth)
        if any(arg.star == "*" for arg in call.args):
            return None  # ``*args`` beside it: which parameter takes what is not read
        evaluator = self._evaluator
        found: Optional[FrozenSet[object]] = None
        absent = True
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == key and not arg.star:
                found = evaluator.values(arg.value, where, depth + 1)
                if found is None:
                    return None
                absent = False
        if found is not None:
            # a ``**spread`` beside it that held the key too would be a TypeError: the
            # program that runs takes the written keyword
            return found, False
        for arg in call.args:
            if arg.star != "**":
                continue
            inner = self._spread_entry(arg.value, key, where, call, depth)
            if inner is None:
                return None
            if inner[0]:
                if found is not None:
                    return None  # given twice: a TypeError at run time
                found = inner[0]
            absent = absent and inner[1]
        return (found or frozenset()), absent

    def _handed_dict(self, call: cst.Call, function: cst.FunctionDef, param: cst.Param, key: str,
                     where: Location, depth: int) -> Entry:
        """The dict a call hands a plain parameter (``self.set_properties(kwargs)``)."""
        positional = [*function.params.posonly_params, *function.params.params]
        offset = 1 if _binds_self(function, call) else 0
        index = positional.index(param) - offset if param in positional else None
        expr: Optional[cst.BaseExpression] = None
        for position, arg in enumerate(call.args):
            if arg.star:
                return None
            if arg.keyword is None and position == index:
                expr = arg.value
            elif arg.keyword is not None and arg.keyword.value == param.name.value:
                expr = arg.value
        if isinstance(expr, cst.Name):
            return self._name_entry(expr.value, key, where, depth + 1, handed=call)
        if isinstance(expr, (cst.Dict, cst.Call)):
            spread = self._evaluator.spread(expr, where, depth + 1)
            return None if spread is None else self._from_spread(spread[0], key, spread[1], depth)
        return None

    def _spread_entry(self, expr: cst.BaseExpression, key: str, where: Location, call: cst.Call,
                      depth: int) -> Entry:
        """What ``**expr`` in a call puts under ``key``: a dict known here, or the
        caller's own ``**kwargs`` in turn."""
        spread = self._evaluator.spread(expr, where, depth + 1)
        if spread is not None:
            return self._from_spread(spread[0], key, spread[1], depth)
        if isinstance(expr, cst.Name):
            return self._name_entry(expr.value, key, where, depth + 1, handed=call)
        return None

    def _from_spread(self, entries: dict, key: str, where: Location, depth: int) -> Entry:
        if key not in entries:
            return _ABSENT
        found = self._evaluator.values(entries[key], where, depth + 1)
        return None if found is None else (found, False)

    def _unchanged(self, scope: Scope, name: str, key: str, reader: Optional[cst.Call],
                   handed: Optional[cst.Call]) -> bool:
        """:func:`_unchanged`, once per question."""
        question = (id(scope.node), name, key, id(reader), id(handed))
        found = self._asked.get(question)
        if found is None:
            found = self._asked[question] = _unchanged(scope, name, key, reader, handed)
        return found

    # -- the calls of a function ---------------------------------------------------
    def _sites(self, scope: Scope) -> List[Tuple[cst.Call, Location]]:
        """This file's calls of a function: by its name (a function, a class for its
        ``__init__``), ``self.<method>(...)`` in its class and subclasses, and
        ``super().__init__(...)`` in a subclass's constructor."""
        index = self._evaluator.call_sites
        function, definer = scope.node, scope.parent
        if index is None or not isinstance(function, cst.FunctionDef) or definer is None:
            return []
        found = [(call, where) for call, where, _ in calls_of(index, scope)]
        if definer.kind != "class":
            return found
        name = function.name.value
        for through_super in (False, True):
            for call, where in index.get(self_call_key(name, through_super), ()):
                cls = where.scope.enclosing_class()
                if cls is None:
                    continue
                chain = class_chain(cls)
                if through_super:
                    chain = chain[1:]  # ``super()`` starts after the calling class
                target = _first_definer(chain, name)
                if target is definer:
                    found.append((call, where))
        return found


def _elsewhere_entry(site: Mapping[str, str], key: str) -> Entry:
    """What a call in another module puts under ``key`` in a ``**kwargs``, from the
    literals its summary wrote (``run.summaries``): unknown beside ``*args`` or a
    ``**spread``, or where the argument is not a literal."""
    if "*" in site:
        return None
    written = site.get(key)
    if written is None:
        return _ABSENT
    if written == ELSEWHERE_UNKNOWN:
        return None
    return frozenset({json.loads(written)}), False


def _reachable_by_users(scope: Scope) -> bool:
    """A public function of the module's top level, or a public method of a top-level
    class (not a closure): code outside the project may call it."""
    parent = scope.parent
    while parent is not None and parent.kind == "class":
        parent = parent.parent
    return parent is not None and parent.kind == "module" and not is_private_name(_called_as(scope))


def _called_as(scope: Scope) -> str:
    """The name a function is called by: its class's for an ``__init__``."""
    function, definer = scope.node, scope.parent
    name = getattr(getattr(function, "name", None), "value", "")
    if name == "__init__" and definer is not None and definer.kind == "class":
        return getattr(getattr(definer.node, "name", None), "value", "")
    return str(name)


def _first_definer(chain: List[Scope], name: str) -> Optional[Scope]:
    """The class of ``chain`` whose body defines ``name`` first (what ``self.name``
    finds when no instance attribute hides it)."""
    for cls in chain:
        if method_of(cls, name) is None:
            return None
        if any(b.kind == "def" for b in cls.bindings.get(name, ())):
            return cls
    return None


def _binds_self(function: cst.FunctionDef, call: cst.Call) -> bool:
    """Whether the call binds ``self`` already: a method called on the instance, or a
    class called for its ``__init__``."""
    return isinstance(call.func, cst.Attribute) or function.name.value == "__init__"


def _unchanged(scope: Scope, name: str, key: str, reader: Optional[cst.Call],
               handed: Optional[cst.Call]) -> bool:
    """Whether the dict ``name`` keeps its entry ``key`` in ``scope``: only other keys
    are popped, ``reader`` is its one read of ``key`` that may remove it, and it is
    handed to no call but ``handed`` (a ``**name`` spread copies it)."""
    finder = _DictUses(name, key, reader, handed)
    scope.node.visit(finder)
    return not finder.changed


class _DictUses(cst.CSTVisitor):
    def __init__(self, name: str, key: str, reader: Optional[cst.Call], handed: Optional[cst.Call]) -> None:
        self.name, self.key, self.reader, self.handed = name, key, reader, handed
        self.changed = False

    def _is_it(self, expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Name) and expr.value == self.name

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, (cst.Subscript, cst.Attribute)) and self._is_it(node.target.value):
            self.changed = True

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Subscript) and self._is_it(node.target.value):
            self.changed = True

    def visit_Del(self, node: cst.Del) -> None:
        if isinstance(node.target, cst.Subscript) and self._is_it(node.target.value):
            self.changed = True

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if node is not self.reader and isinstance(func, cst.Attribute) and self._is_it(func.value) \
                and func.attr.value not in _READ_ONLY:
            first = node.args[0].value if node.args else None
            popped = first.evaluated_value if isinstance(first, cst.SimpleString) else None
            if func.attr.value != "pop" or not isinstance(popped, str) or popped == self.key:
                self.changed = True  # ``update``, ``setdefault``, ``clear``, this key popped again
        if node is not self.handed and any(self._is_it(arg.value) and arg.star != "**" for arg in node.args):
            self.changed = True
