"""Models the program makes and throws away: no output of theirs reaches a loss.

A builder often returns a model with a companion (``return model, encoder_model``: a
view of the bottleneck for plots), and the script keeps only the one it trains
(``model, _ = con_auto()``). The discarded model is never trained, run or saved, so a
16-bit output of it harms nothing. A model is discarded when its builder (a function
of the file, not a method) binds it to a name read only in its ``return`` statements,
each a tuple with the name at one position, and every call of the builder the file
makes (all of them: a script's function other modules do not call) unpacks that
position into ``_`` or a name nothing reads. Anything else (a name read elsewhere, a
call not unpacked, a builder other modules call) keeps the model: unknown stays used.
"""

from __future__ import annotations

from typing import List, Optional, Set, Tuple

import libcst as cst

from mplint.core.find_nodes import find_all
from mplint.rule.check import Context
from mplint.semantic.scopes import Location, Scope, calls_of, function_key


def discarded(ctx: Context, model: cst.CSTNode, made: Optional[Tuple[cst.Call, Location]],
              returns: List[Tuple[cst.BaseExpression, Location]]) -> bool:
    """Whether the model constructed by ``made`` (its call and where), in a function
    whose ``return`` values are ``returns``, is thrown away by every caller."""
    if made is None or made[0] is not model:
        return False
    call, loc = made
    scope = loc.scope
    function = scope.node
    if not isinstance(function, cst.FunctionDef) or scope.parent is None or scope.parent.kind != "module":
        return False
    name = _assigned_name(call, scope)
    if name is None:
        return False
    position = _returned_position(function, name, returns)
    if position is None:
        return False
    values = ctx.values
    if values.call_sites is None or not values.script or function_key(scope) in values.elsewhere:
        return False  # callers this file does not see may keep it
    sites = calls_of(values.call_sites, scope)
    return bool(sites) and all(_drops(site, where, position) for site, where, _ in sites)


def _assigned_name(call: cst.Call, scope: Scope) -> Optional[str]:
    """The name the call is bound to alone (``encoder_model = keras.Model(...)``)."""
    found = [name for name, bindings in scope.bindings.items() for binding in bindings if binding.value is call]
    return found[0] if len(found) == 1 and len(scope.bindings.get(found[0], ())) == 1 else None


def _returned_position(function: cst.FunctionDef, name: str,
                       returns: List[Tuple[cst.BaseExpression, Location]]) -> Optional[int]:
    """The one position of ``name`` in every tuple the function returns, when the name
    is read nowhere else in it; None otherwise."""
    if not returns:
        return None
    positions: Set[int] = set()
    for value, _ in returns:
        if not isinstance(value, cst.Tuple) or any(isinstance(e, cst.StarredElement) for e in value.elements):
            return None
        at = [i for i, e in enumerate(value.elements) if isinstance(e.value, cst.Name) and e.value.value == name]
        if len(at) != 1:
            return None
        positions.add(at[0])
    reads = sum(1 for node in find_all(function.body, cst.Name) if node.value == name)
    # the assignment's target and one read per ``return``
    if len(positions) != 1 or reads != 1 + len(returns):
        return None
    return positions.pop()


def _drops(call: cst.Call, where: Location, position: int) -> bool:
    """The call is unpacked (``model, _ = build()``) and its part ``position`` goes to
    ``_`` or to a name no code of the scope reads."""
    scope = where.scope
    for bindings in scope.bindings.values():
        for binding in bindings:
            node = binding.node
            if not isinstance(node, cst.Assign) or node.value is not call:
                continue
            if len(node.targets) != 1 or not isinstance(node.targets[0].target, (cst.Tuple, cst.List)):
                return False
            elements = node.targets[0].target.elements
            if position >= len(elements) or any(isinstance(e, cst.StarredElement) for e in elements):
                return False
            target = elements[position].value
            if not isinstance(target, cst.Name):
                return False
            return target.value == "_" or _unread(target.value, scope)
    return False


def _unread(name: str, scope: Scope) -> bool:
    """No code of the scope (its own body and the functions nested in it) reads ``name``
    beyond the one binding."""
    reads = sum(1 for node in find_all(scope.node, cst.Name) if node.value == name)
    return reads == 1 and len(scope.bindings.get(name, ())) == 1
