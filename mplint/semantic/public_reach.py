"""Which private code of a library's module its public surface runs.

A library's users call its public functions and classes; the private builder a public
entry calls (``SEResNet18()`` returning ``_create_se_resnet(...)``, a model's
``__init__`` calling ``self._make_head()``) runs under their policy as much as the entry
does. So library mode judges code that is public by its name (:func:`is_public`) and
code reached from it in the same module: a module-level function or class named (called,
or handed on as a value) in reached code, and a method of the same class called on
``self`` or ``cls``. Private code that nothing public reaches is the library's own, and
stays silent.

The reach is read from the module's syntax once per module (the last one asked is
kept): a file is judged by one process at a time.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from mplint.core.walker import child_nodes
from mplint.semantic.scopes import Scope, function_key, is_public
from mplint.semantic.visibility import is_private_name

#: a unit of code as the program model names it (``function``, ``Class.method``), and
#: what it refers to: plain names, and the methods it calls on ``self``/``cls``
_Unit = Tuple[str, Set[str], Set[str]]

_last: List[Tuple[cst.Module, FrozenSet[str]]] = []


def runs_from_public(scope: Scope) -> bool:
    """Code a library's users run: public by its name, or private code of the module
    that public code reaches (see the module's docstring). A lambda's code is judged
    as :func:`is_public` judges it (never public by itself)."""
    if is_public(scope):
        return True
    current: Optional[Scope] = scope
    while current is not None and current.kind != "module":
        if current.kind == "lambda":
            return False
        current = current.parent
    if current is None or not isinstance(current.node, cst.Module):
        return False
    key = function_key(scope)
    return key != "<module>" and key in _reached(current.node)


def _reached(module: cst.Module) -> FrozenSet[str]:
    if _last and _last[0][0] is module:
        return _last[0][1]
    units: Dict[str, _Unit] = {}
    classes: Dict[str, List[str]] = {}
    _collect(module.body, [], units, classes)
    # a public top-level name, or a public method of a public class, is a root
    todo = [key for key in units if not any(is_private_name(part) for part in key.split("."))]
    reached: Set[str] = set(todo)
    while todo:
        key, names, on_self = units[todo.pop()]
        owner = key.rsplit(".", 1)[0] if "." in key else None
        found: List[str] = []
        for name in names:
            if name in units:
                found.append(name)
            found += classes.get(name, [])
        if owner is not None:
            found += [f"{owner}.{method}" for method in on_self if f"{owner}.{method}" in units]
        for target in found:
            if target not in reached:
                reached.add(target)
                todo.append(target)
    answer = frozenset(reached)
    _last[:] = [(module, answer)]
    return answer


def _collect(body: object, classes: List[str], units: Dict[str, _Unit],
             members: Dict[str, List[str]]) -> None:
    """The module's functions and methods, by the program model's names."""
    statements = body if isinstance(body, (list, tuple)) else getattr(body, "body", ())
    for stmt in statements:
        if isinstance(stmt, cst.ClassDef):
            inner = [*classes, stmt.name.value]
            members.setdefault(".".join(inner), [])
            _collect(stmt.body, inner, units, members)
        elif isinstance(stmt, cst.FunctionDef):
            key = ".".join([*classes, stmt.name.value])
            names: Set[str] = set()
            on_self: Set[str] = set()
            _references(stmt, names, on_self)
            units[key] = (key, names, on_self)
            if classes:
                members.setdefault(".".join(classes), []).append(key)


def _references(node: cst.CSTNode, names: Set[str], on_self: Set[str]) -> None:
    """The plain names ``node`` reads, and the attributes it reads of ``self``/``cls``."""
    todo: List[cst.CSTNode] = [node]
    while todo:
        current = todo.pop()
        if isinstance(current, cst.Name):
            names.add(current.value)
            continue
        if isinstance(current, cst.Attribute):
            if isinstance(current.value, cst.Name) and current.value.value in ("self", "cls"):
                on_self.add(current.attr.value)
            else:
                todo.append(current.value)
            continue
        todo.extend(child_nodes(current))
