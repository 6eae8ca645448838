"""Which private code of a library's module its public surface runs.

A library's users call its public functions and classes; the private builder a public
entry calls (``SEResNet18()`` returning ``_create_se_resnet(...)``, a model's
``__init__`` calling ``self._make_head()``, a layer's ``call`` calling
``self._attend(x)``) runs under their policy as much as the entry does. So library mode
judges code that is public by its name (:func:`is_public`) and code reached from it in
the same module: a module-level function or class public code calls (a class: each of
its methods), and a method public code calls on ``self`` or ``super()`` (through the
class's bases in the file). Private code that nothing public reaches is the library's
own, and stays silent.

The reach is read from the scope tracker's call index (``ScopeTracker.calls``), once
per file, and asked through :func:`public_reach`.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Optional, Set

from mplint.semantic.scopes import CallIndex, Scope, ScopeTracker, class_chain, function_key, is_public
from mplint.semantic.visibility import is_private_name


def public_reach(tracker: ScopeTracker) -> "PublicReach":
    """Which code of the tracker's file its public functions and classes run (after the
    walk; built once, kept on the tracker)."""
    if tracker.reach is None:
        tracker.reach = PublicReach(tracker.module_scope, tracker.calls)
    return tracker.reach


class PublicReach:
    """The units of code (named as :func:`function_key` names them) that a module's
    public functions and classes run, directly or through the module's own calls."""

    def __init__(self, module: Scope, calls: CallIndex) -> None:
        self._module = module
        self._reached = self._reach(calls)

    def runs(self, scope: Scope) -> bool:
        """Code a library's users run: public by its name, or private code of the module
        that public code reaches. A lambda's code is judged as :func:`is_public` judges
        it (never public by itself)."""
        if is_public(scope):
            return True
        current: Optional[Scope] = scope
        while current is not None and current.kind != "module":
            if current.kind == "lambda":
                return False
            current = current.parent
        key = function_key(scope)
        return current is self._module and key != "<module>" and key in self._reached

    def _reach(self, calls: CallIndex) -> FrozenSet[str]:
        callees: Dict[str, Set[str]] = {}  # unit -> the units its calls run
        for written, sites in calls.items():
            for _, where in sites:
                caller = function_key(where.scope)
                if caller == "<module>":
                    continue
                found = callees.setdefault(caller, set())
                if "." not in written:
                    binding = where.lookup(written)
                    if binding is not None and binding.scope is not None and binding.kind in ("def", "class"):
                        found.update(_units_of(binding.scope, binding.node))
                    continue
                receiver, _, method = written.partition(".")
                cls = where.scope.enclosing_class()
                chain = class_chain(cls) if cls is not None else []
                if receiver != "self":
                    chain = chain[1:]  # ``super().method``: the next class that defines it
                owner = next((c for c in chain if c.bindings.get(method)), None)
                if owner is not None:
                    found.update(_units_of(owner, owner.bindings[method][-1].node))
        todo = [key for key in self._units() if not any(is_private_name(part) for part in key.split("."))]
        reached: Set[str] = set(todo)
        while todo:
            for target in callees.get(todo.pop(), ()):
                if target not in reached:
                    reached.add(target)
                    todo.append(target)
        return frozenset(reached)

    def _units(self) -> List[str]:
        """The module's functions and methods (nested classes' too), by unit name."""
        out: List[str] = []
        pending = list(self._module.children)
        while pending:
            scope = pending.pop()
            if scope.kind == "class":
                pending += scope.children
            elif scope.kind == "function":
                out.append(function_key(scope))
        return out


def _units_of(scope: Scope, node: object) -> Set[str]:
    """The units a name bound in ``scope`` to ``node`` runs when called: the function, or
    each method of the class (it may run any of them once built)."""
    child = next((c for c in scope.children if c.node is node), None)
    if child is None:
        return set()
    if child.kind == "function":
        return {function_key(child)} - {"<module>"}
    return {function_key(c) for c in child.children if c.kind == "function"} - {"<module>"}

