"""Which layers a ``keras.Sequential`` runs last: its output has that layer's dtype.

A Sequential is built from a list written out (``Sequential([Dense(d), Dense(d)])``),
from a list a name or a ``self`` attribute holds, filled by ``append`` (``layers = []``
then ``layers.append(Block(d))`` in a loop), or from one item of a list of such lists
(``for i, j in zip(attn, ff): Sequential(i)(x)``). Each is followed here as expressions,
not kinds: the last element of a list written out, every item appended to a name or an
attribute (any of them may run last), and the possible values of a loop target
(the items of what it runs over). Anything else (a list a function returns, ``*args``,
a parameter) cannot be followed: None, and the Sequential's output stays unknown.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.tensor_sites import MAX_DEPTH, Where
from mplint.analysis.tensor_syntax import is_self
from mplint.analysis.tensor_walk import TensorWalk
from mplint.rule.check import Context
from mplint.semantic.scopes import Binding, Location

#: possible values, each with where it is written
Values = List[Tuple[cst.BaseExpression, Where]]


class LayerContainers(TensorWalk):
    """Records ``name.append(value)`` in the walk and follows Sequentials' layer lists."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        #: ``<name>.append(value)`` by (id of the scope binding the name, name)
        self._name_appends: Dict[Tuple[int, str], Values] = {}
        #: answers of :meth:`_possible_values` and :meth:`_items` by (method, node, place);
        #: None while being computed (a list appended to itself is unknown)
        self._followed: Dict[Tuple[str, int, int, int, Tuple[int, ...]], Optional[Values]] = {}
        #: calls of nested models being judged (``FileCalls._nested_model``), against cycles
        self._nesting: Set[int] = set()
        #: whether a call of a model as a layer certainly gives a 16-bit output: set by the
        #: layer analysis (:class:`CustomLayers`) when a check of the run requires it
        self.nested_model: Optional[Callable[[cst.Call, Location], bool]] = None

    def visit_Call(self, node: cst.Call) -> None:
        super().visit_Call(node)
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "append" and len(node.args) == 1 \
                and isinstance(func.value, cst.Name) and node.args[0].keyword is None:
            where = self.here()
            binding = where.loc.lookup(func.value.value)
            if binding is not None and binding.scope is not None:
                key = (id(binding.scope), func.value.value)
                self._name_appends.setdefault(key, []).append((node.args[0].value, where))

    def sequential_last_layers(self, call: cst.Call, where: Where) -> Optional[Values]:
        """The layers a ``Sequential(layers)`` construction may run last; None when its
        list cannot be followed (or it is built empty and filled by ``add``)."""
        if not call.args or call.args[0].star or (
                call.args[0].keyword is not None and call.args[0].keyword.value != "layers"):
            return None
        return self._last_items(call.args[0].value, where, 0)

    def _last_items(self, expr: cst.BaseExpression, where: Where, depth: int) -> Optional[Values]:
        """What may run last when ``expr`` is handed to ``Sequential``: the last element
        of a list, every item appended to it, or ``expr`` itself when it is a layer (a
        single layer makes a Sequential of one)."""
        if depth > MAX_DEPTH:
            return None
        # ``self.blocks.append(...)`` after ``self.blocks = []``: any appended item may be last
        start = self._appended_and_bound(expr, where, depth)
        if start is None:
            return None
        out, values = start
        for value, at in values:
            if isinstance(value, (cst.List, cst.Tuple)):
                if any(isinstance(e, cst.StarredElement) for e in value.elements):
                    return None
                appended = self._appended(value, at)
                if appended is None:
                    return None
                tail = [(e.value, at) for e in value.elements[-1:]] + appended
                for item, item_at in tail:
                    found = self._possible_values(item, item_at, depth + 1)
                    if found is None:
                        return None
                    out += found
            elif isinstance(value, cst.Call):
                out.append((value, at))
            else:
                return None
        return out or None

    def _memo(self, method: str, expr: cst.BaseExpression, where: Where, depth: int) -> Optional[Values]:
        """:meth:`_possible_values` or :meth:`_items`, each asked once per place."""
        if depth > MAX_DEPTH:
            return None
        key = (method, id(expr), id(where.loc.scope), where.loc.order, where.path)
        if key in self._followed:
            return self._followed[key]
        self._followed[key] = None  # cycle guard
        found = self._possible_values_of(expr, where, depth) if method == "values" \
            else self._items_of(expr, where, depth)
        self._followed[key] = found
        return found

    def possible_values(self, expr: cst.BaseExpression, where: Where) -> Optional[Values]:
        """:meth:`_possible_values`, for the analyses that follow a called instance out
        of the file (``for blk in self.blocks: blk(x, token)``, :mod:`tensor_imports`)."""
        return self._possible_values(expr, where, 0)

    def _possible_values(self, expr: cst.BaseExpression, where: Where, depth: int) -> Optional[Values]:
        """The expressions ``expr`` may be: itself, unless it is a name (the values its
        bindings assign; for a loop target, the items of what the loop runs over) or a
        ``self`` attribute (the values the class assigns it)."""
        if not isinstance(expr, (cst.Name, cst.Attribute)):
            return [(expr, where)]
        return self._memo("values", expr, where, depth)

    def _items(self, container: cst.BaseExpression, where: Where, depth: int) -> Optional[Values]:
        """The items a list may hold: its elements written out and every item appended
        to the names and attributes that hold it."""
        return self._memo("items", container, where, depth)

    def _possible_values_of(self, expr: cst.BaseExpression, where: Where, depth: int) -> Optional[Values]:
        if isinstance(expr, cst.Name):
            bindings = self.candidates(expr, where)
            if not bindings:
                return None
            out: Values = []
            for binding in bindings:
                found = self._binding_values(binding, depth + 1)
                if found is None:
                    return None
                out += found
            return out
        if isinstance(expr, cst.Attribute) and is_self(expr.value):
            values = self._attribute_values(expr, where)
            if values is None:
                return None
            out = []
            for value, at in values:
                found = self._possible_values(value, at, depth + 1)
                if found is None:
                    return None
                out += found
            return out
        return [(expr, where)]

    def _binding_values(self, binding: Binding, depth: int) -> Optional[Values]:
        at = self.binding_where(binding)
        if at is None:
            return None
        node = binding.node
        if binding.kind == "assign" and isinstance(node, cst.Assign):
            value = self._assigned_part(node, binding.name)
            return None if value is None else self._possible_values(value, at, depth + 1)
        if binding.kind == "for" and isinstance(node, cst.For):
            iterated = self._loop_source(node, binding.name)
            if iterated is None:
                return None
            return self._items(iterated, at, depth + 1)
        return None

    @staticmethod
    def _assigned_part(node: cst.Assign, name: str) -> Optional[cst.BaseExpression]:
        """What ``node`` assigns ``name``: its value for ``name = v``, the matching item
        for ``a, b = [], []`` written out; None for any other unpacking."""
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                if target.target.value == name:
                    return node.value
                continue
            if not isinstance(target.target, (cst.Tuple, cst.List)) or not isinstance(node.value, (cst.Tuple, cst.List)):
                return None
            names, values = target.target.elements, node.value.elements
            if len(names) != len(values) or any(isinstance(e, cst.StarredElement) for e in (*names, *values)):
                return None
            for element, value in zip(names, values):
                if isinstance(element.value, cst.Name) and element.value.value == name:
                    return value.value
        return None

    @staticmethod
    def _loop_source(node: cst.For, name: str) -> Optional[cst.BaseExpression]:
        """What a ``for`` loop's target ``name`` takes items from: the iterable for a
        plain target, the matching argument of ``zip(a, b)`` for ``for i, j in zip(a, b)``."""
        target, iterated = node.target, node.iter
        if isinstance(target, cst.Name):
            return iterated if target.value == name else None
        if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(iterated, cst.Call) \
                or not (isinstance(iterated.func, cst.Name) and iterated.func.value in ("zip", "enumerate")):
            return None
        names = [e.value for e in target.elements]
        args = list(iterated.args)
        if iterated.func.value == "enumerate":  # ``for i, block in enumerate(blocks)``: i is a number
            if len(names) != 2 or len(args) != 1:
                return None
            names = names[1:]
        if len(names) != len(args) or any(a.star or a.keyword is not None for a in args):
            return None
        for element, arg in zip(names, args):
            if isinstance(element, cst.Name) and element.value == name:
                return arg.value
        return None

    def _items_of(self, container: cst.BaseExpression, where: Where, depth: int) -> Optional[Values]:
        start = self._appended_and_bound(container, where, depth)
        if start is None:
            return None
        out, values = start
        for value, at in values:
            if isinstance(value, cst.ListComp):
                # ``[Block(dim, name=f"b{i}") for i in range(depth)]``: every item is one
                # value of its element (its loop's names are bound in the comprehension)
                out.append((value.elt, at))
                continue
            if not isinstance(value, (cst.List, cst.Tuple)) \
                    or any(isinstance(e, cst.StarredElement) for e in value.elements):
                return None
            for element in value.elements:
                found = self._possible_values(element.value, at, depth + 1)
                if found is None:
                    return None
                out += found
        return out

    def _appended_and_bound(self, container: cst.BaseExpression, where: Where,
                            depth: int) -> Optional[Tuple[Values, Values]]:
        """What may be appended to ``container`` (as values), and what it may be bound
        to; None when either is unknown."""
        out: Values = []
        appended = self._container_appends(container, where)
        if appended is None:
            return None
        for item, at in appended:
            found = self._possible_values(item, at, depth + 1)
            if found is None:
                return None
            out += found
        values = self._possible_values(container, where, depth + 1)
        return None if values is None else (out, values)

    def _container_appends(self, container: cst.BaseExpression, where: Where) -> Optional[Values]:
        """What is appended to the name or ``self`` attribute ``container`` (and, for a
        name assigned another name or attribute, to that one too)."""
        if isinstance(container, cst.Name):
            out: Values = []
            for binding in self.candidates(container, where):
                if binding.scope is None:
                    return None
                out += self._name_appends.get((id(binding.scope), container.value), [])
                at = self.binding_where(binding)
                if binding.kind == "assign" and binding.value is not None and at is not None \
                        and isinstance(binding.value, (cst.Name, cst.Attribute)):
                    more = self._container_appends(binding.value, at)
                    if more is None:
                        return None
                    out += more
            return out
        if isinstance(container, cst.Attribute) and is_self(container.value):
            cls = where.loc.scope.enclosing_class()
            if cls is None:
                return None
            out = list(self._appends.get((id(cls), container.attr.value), []))
            for value, at in self._attribute_values(container, where) or []:
                if isinstance(value, (cst.Name, cst.Attribute)):
                    more = self._container_appends(value, at)
                    if more is None:
                        return None
                    out += more
            return out
        return []

    def _appended(self, literal: cst.BaseExpression, where: Where) -> Optional[Values]:
        """Items appended to the list ``literal`` once a name holds it (``layers = []``
        then ``layers.append(...)``); [] when no name in that statement's scope does."""
        scope = where.loc.scope
        out: Values = []
        for name, bindings in scope.bindings.items():
            for binding in bindings:
                if binding.value is literal:
                    out += self._name_appends.get((id(scope), name), [])
        return out
