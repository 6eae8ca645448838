"""Shapes of code the tensor dtype inference reads: names, targets, ``def``s."""

from __future__ import annotations

from typing import Callable, FrozenSet, List, Optional, Set

import libcst as cst

from mplint.analysis.tensor_sites import Path
from mplint.semantic.scopes import Binding, Scope


def is_self(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "self"


def loop_targets(for_in: Optional[cst.CompFor]) -> FrozenSet[str]:
    """The names a comprehension's ``for`` clauses bind."""
    out: Set[str] = set()
    while for_in is not None:
        out |= {n.value for n in names_in(for_in.target)}
        for_in = for_in.inner_for_in
    return frozenset(out)


def names_in(node: cst.CSTNode) -> List[cst.Name]:
    found: List[cst.Name] = []
    todo = [node]
    while todo:
        current = todo.pop()
        if isinstance(current, cst.Name):
            found.append(current)
        todo.extend(current.children)
    return found


def mentions(expr: cst.BaseExpression, names: FrozenSet[str]) -> bool:
    return bool(names) and any(n.value in names for n in names_in(expr))


def target_path(target: cst.BaseExpression, name: str) -> Optional[Path]:
    """The position of ``name`` in an assignment target (``a, (b, c)``: c is (1, 1)):
    () for the plain name, None when absent or behind a starred part."""
    return _path_in(target, lambda part: isinstance(part, cst.Name) and part.value == name)


def self_attribute_path(target: cst.BaseExpression, attr: str) -> Optional[Path]:
    """:func:`target_path` for ``self.<attr>`` in an assignment target."""
    return _path_in(target, lambda part: isinstance(part, cst.Attribute) and is_self(part.value)
                    and part.attr.value == attr)


def _path_in(target: cst.BaseExpression, wanted: Callable[[cst.BaseExpression], bool]) -> Optional[Path]:
    """The position of the part of ``target`` that is ``wanted``, through nested tuples and
    lists; None when absent or behind a starred part."""
    if wanted(target):
        return ()
    if isinstance(target, (cst.Tuple, cst.List)):
        for index, element in enumerate(target.elements):
            if isinstance(element, cst.StarredElement):
                return None
            inner = _path_in(element.value, wanted)
            if inner is not None:
                return (index,) + inner
    return None


def is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def child_scope(scope: Scope, node: cst.CSTNode) -> Optional[Scope]:
    """The scope ``node`` (a ``def``) opens inside ``scope``."""
    for child in scope.children:
        if child.node is node:
            return child
    return None


def decorated(node: cst.CSTNode) -> bool:
    """A decorated ``def`` may return anything (``tf.function`` aside, which keeps it)."""
    return isinstance(node, cst.FunctionDef) and any(
        not (isinstance(d.decorator, cst.Attribute) and d.decorator.attr.value == "function")
        and not (isinstance(d.decorator, cst.Call) and isinstance(d.decorator.func, cst.Attribute)
                 and d.decorator.func.attr.value == "function")
        for d in node.decorators)


def loop_iterable(binding: Binding) -> Optional[cst.BaseExpression]:
    """What a ``for`` loop binding one plain name iterates over (``for t in self.tokens``);
    None for any other binding (an unpacking target such as ``for i, t in ...``)."""
    node = binding.node
    if binding.kind != "for" or not isinstance(node, cst.For) or not isinstance(node.target, cst.Name):
        return None
    return node.iter
