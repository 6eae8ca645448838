"""Which activation function a callable expression denotes where it is called.

A layer often keeps its activation on ``self`` from a constructor argument
(``self.activation = keras.activations.get(activation)``, ``self.act =
getattr(tf.nn, act)``, ``self.act = tf.nn.softmax``) and applies it in ``call``
(``return self.activation(self.proj(x))``). Read inside the construction followed
into ``__init__`` (a :class:`~mplint.semantic.scopes.CallFrame` of the location's
context), the parameter takes what that construction passes, so one construction's
``activation="softmax"`` makes the call a softmax and another's none. The answer is the
canonical names of the functions it may be (every path), or None when any is unknown:
a value that cannot be followed keeps the rules silent.
"""

from __future__ import annotations

from typing import FrozenSet, Optional, Set

import libcst as cst

from mplint.rule.check import Context
from mplint.semantic.call_args import positional_or_keyword
from mplint.semantic.scopes import Location, attributes_of, instance_class
from mplint.semantic.vocabulary import (
    ACTIVATION_GETTER_MODULE, ACTIVATION_GETTERS, ACTIVATION_NAMESPACES, DTYPE_PRESERVING_FUNCTIONS,
)

_MAX_DEPTH = 8
#: what a value denotes at most
_MAX_FUNCTIONS = 8


def called_function(expr: cst.BaseExpression, loc: Location, ctx: Context) -> Optional[FrozenSet[str]]:
    """The activation functions (canonical names) that calling ``expr`` at ``loc`` may
    run: a ``self`` attribute, a variable or a parameter of a followed call holding
    ``keras.activations.get(name)``, ``getattr(<ops module>, name)`` or an API function
    named directly. None for anything else (a layer, a function of the project, a value
    read nowhere), and when any of its values is unknown."""
    return _function(expr, loc, ctx, 0)


def makes_activation(value: cst.BaseExpression, ctx: Context, loc: Location) -> bool:
    """``value`` (assigned to a ``self`` attribute) is an activation function, whichever
    one: ``keras.activations.get(...)``, ``getattr(<ops module>, name)`` or a
    dtype-keeping API function named directly. Calling it keeps its input's dtype."""
    if isinstance(value, cst.Call):
        if ctx.names.resolve(value.func) & ACTIVATION_GETTERS:
            return True
        return isinstance(value.func, cst.Name) and value.func.value == "getattr" and loc.lookup("getattr") is None \
            and len(value.args) == 2 and bool(ctx.names.resolve(value.args[0].value) & ACTIVATION_NAMESPACES)
    return isinstance(value, (cst.Name, cst.Attribute)) and bool(ctx.names.resolve(value)) \
        and ctx.names.resolve(value) <= DTYPE_PRESERVING_FUNCTIONS


def _function(expr: cst.BaseExpression, loc: Location, ctx: Context, depth: int) -> Optional[FrozenSet[str]]:
    if depth > _MAX_DEPTH:
        return None
    expr = ctx.values.chosen(expr, loc)
    if isinstance(expr, cst.IfExp):
        # ``get(act) if act else None``: a call of None raises, so the call runs the other
        sides = [side for side in (expr.body, expr.orelse) if not _is_none(side)]
        return _union([_function(side, loc, ctx, depth + 1) for side in sides])
    if isinstance(expr, cst.Call):
        return _made(expr, loc, ctx, depth)
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        cls = instance_class(loc)
        bindings = attributes_of(cls, expr.attr.value) if cls is not None else []
        if not bindings:
            return None
        found = []
        for stored in bindings:
            if stored.kind not in ("assign", "annassign") or stored.value is None or stored.scope is None:
                return None
            if _is_none(stored.value):
                continue  # ``self.act = None`` on another path: calling it would raise
            found.append(_function(stored.value, stored.location().within(loc.context), ctx, depth + 1))
        return _union(found)
    if isinstance(expr, cst.Name):
        binding = loc.lookup(expr.value)
        if binding is None:
            return _api_function(expr, ctx)
        if binding.kind == "param" and isinstance(binding.node, cst.Param) and binding.scope is not None:
            followed = loc.frame_of(binding.scope.node)
            if followed is None:
                return None  # not inside a followed call: its callers' values are not read here
            frame = followed[0]
            argument = ctx.values.bound_argument(frame.function, binding.node, frame.call, frame.offset,
                                                 frame.caller)
            if isinstance(argument, cst.BaseExpression):
                return _function(argument, frame.caller, ctx, depth + 1)
            return None
        if binding.kind in ("assign", "annassign") and binding.value is not None and binding.scope is not None \
                and len(loc.reaching(expr.value)) == 1:
            return _function(binding.value, binding.location().within(loc.context), ctx, depth + 1)
        return None
    if isinstance(expr, cst.Attribute):
        return _api_function(expr, ctx)
    return None


def _made(call: cst.Call, loc: Location, ctx: Context, depth: int) -> Optional[FrozenSet[str]]:
    """``keras.activations.get(x)`` and ``getattr(<ops module>, name)``."""
    names = ctx.names.resolve(call.func)
    if names & ACTIVATION_GETTERS:
        identifier = positional_or_keyword(call, 0, "identifier")
        if identifier is None or any(arg.star for arg in call.args):
            return None
        direct = _function(identifier, loc, ctx, depth + 1)  # ``get(tf.nn.softmax)``: the function itself
        if direct is not None:
            return direct
        return _named(ACTIVATION_GETTER_MODULE, identifier, loc, ctx, none="linear")
    if isinstance(call.func, cst.Name) and call.func.value == "getattr" and loc.lookup("getattr") is None \
            and len(call.args) == 2 and not any(arg.star or arg.keyword is not None for arg in call.args):
        module = ctx.names.resolve(call.args[0].value) & ACTIVATION_NAMESPACES
        if len(module) != 1:
            return None
        return _named(next(iter(module)), call.args[1].value, loc, ctx)
    return None


def _named(module: str, name: cst.BaseExpression, loc: Location, ctx: Context,
           none: Optional[str] = None) -> Optional[FrozenSet[str]]:
    """The functions of ``module`` the string ``name`` may hold (``none``: what None picks)."""
    values = ctx.values.values(name, loc)
    if not values:
        return None
    out: Set[str] = set()
    for value in values:
        if value is None and none is not None:
            value = none
        if not isinstance(value, str) or not value.isidentifier():
            return None
        out.add(f"{module}.{value}")
    return frozenset(out) if len(out) <= _MAX_FUNCTIONS else None


def _api_function(expr: cst.BaseExpression, ctx: Context) -> Optional[FrozenSet[str]]:
    """An API function named directly (``tf.nn.softmax``), by its canonical names."""
    names = ctx.names.resolve(expr)
    return names if names and all(_is_function_name(n) for n in names) else None


def _is_function_name(name: str) -> bool:
    """A function of an activation or ops module (``tensorflow.nn.softmax``), not a class
    or a module."""
    module, _, short = name.rpartition(".")
    return module in ACTIVATION_NAMESPACES and short[:1].islower()


def _union(found: "list[Optional[FrozenSet[str]]]") -> Optional[FrozenSet[str]]:
    if not found or any(f is None for f in found):
        return None
    out: Set[str] = set()
    for f in found:
        assert f is not None
        out |= f
    return frozenset(out) if len(out) <= _MAX_FUNCTIONS else None


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"
