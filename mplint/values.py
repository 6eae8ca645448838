"""Static values a reader could work out: literals, constants, simple arithmetic.

Rules use this to read a policy name, a dtype, a number of units or a batch size.
Anything not plainly resolvable is None (unknown), and rules stay silent on unknowns:
the runtime checker measures what static analysis cannot see.
"""

from __future__ import annotations

import itertools
import operator
from typing import Callable, Dict, FrozenSet, Optional

import libcst as cst

from mplint.names import NameResolver
from mplint.scopes import Binding, Location

Values = FrozenSet[object]

_MAX_DEPTH = 12
_MAX_VALUES = 16

_BINOPS: Dict[type, Callable[[object, object], object]] = {
    cst.Add: operator.add,
    cst.Subtract: operator.sub,
    cst.Multiply: operator.mul,
    cst.FloorDivide: operator.floordiv,
    cst.Divide: operator.truediv,
    cst.Modulo: operator.mod,
    cst.Power: operator.pow,
}

#: canonical names of dtype objects, evaluated to their dtype name
DTYPE_NAMES = {
    f"{root}.{dt}": dt
    for root in ("tensorflow", "numpy", "keras.ops", "jax.numpy")
    for dt in ("float16", "float32", "float64", "bfloat16", "half", "single", "double")
}
DTYPE_NAMES.update({"tensorflow.half": "float16", "numpy.half": "float16",
                    "numpy.single": "float32", "numpy.double": "float64"})
for _k, _v in list(DTYPE_NAMES.items()):
    DTYPE_NAMES[_k] = {"half": "float16", "single": "float32", "double": "float64"}.get(_v, _v)

#: constructors whose first argument names the policy they make
POLICY_CONSTRUCTORS = frozenset({
    "keras.mixed_precision.Policy",
    "keras.mixed_precision.experimental.Policy",
})


class Evaluator:
    """Evaluates expressions seen at a location to the set of values they may hold."""

    def __init__(self, names: NameResolver) -> None:
        self.names = names

    def values(self, expr: cst.BaseExpression, loc: Optional[Location], depth: int = 0) -> Optional[Values]:
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float)):
            value = expr.evaluated_value
            return None if value is None else frozenset({value})
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False", "None"):
                return frozenset({{"True": True, "False": False, "None": None}[expr.value]})
            dtype = self._dtype(expr)
            if dtype is not None:
                return dtype
            if loc is None:
                return None
            return self._binding_values(loc.lookup(expr.value), depth)
        if isinstance(expr, cst.Attribute):
            return self._dtype(expr)
        if isinstance(expr, cst.UnaryOperation):
            inner = self.values(expr.expression, loc, depth + 1)
            if inner is None:
                return None
            if isinstance(expr.operator, cst.Minus):
                return _map(inner, operator.neg)
            if isinstance(expr.operator, cst.Plus):
                return inner
            return None
        if isinstance(expr, cst.BinaryOperation):
            op = _BINOPS.get(type(expr.operator))
            if op is None:
                return None
            left = self.values(expr.left, loc, depth + 1)
            right = self.values(expr.right, loc, depth + 1)
            if left is None or right is None:
                return None
            out = set()
            for a, b in itertools.product(left, right):
                if not _is_number(a) or not _is_number(b):
                    if op is operator.add and isinstance(a, str) and isinstance(b, str):
                        out.add(a + b)
                        continue
                    return None
                try:
                    out.add(op(a, b))
                except (ArithmeticError, ValueError, OverflowError):
                    return None
            return frozenset(out) if len(out) <= _MAX_VALUES else None
        if isinstance(expr, cst.IfExp):
            body = self.values(expr.body, loc, depth + 1)
            orelse = self.values(expr.orelse, loc, depth + 1)
            if body is None or orelse is None:
                return None
            return body | orelse
        if isinstance(expr, cst.Call):
            if self.names.resolve(expr.func) & POLICY_CONSTRUCTORS and expr.args:
                first = expr.args[0]
                if first.keyword is None or first.keyword.value == "name":
                    return self.values(first.value, loc, depth + 1)
            return None
        return None

    def value(self, expr: cst.BaseExpression, loc: Optional[Location]) -> object:
        """The single value of ``expr``, or None when unknown or ambiguous."""
        found = self.values(expr, loc)
        if found is None or len(found) != 1:
            return None
        return next(iter(found))

    def _dtype(self, expr: cst.BaseExpression) -> Optional[Values]:
        for name in self.names.resolve(expr):
            dtype = DTYPE_NAMES.get(name)
            if dtype is not None:
                return frozenset({dtype})
        return None

    def _binding_values(self, binding: Optional[Binding], depth: int) -> Optional[Values]:
        if binding is None or binding.scope is None:
            return None
        if binding.kind == "param":
            param = binding.node
            if isinstance(param, cst.Param) and param.default is not None:
                return self.values(param.default, Location(binding.scope.parent or binding.scope, binding.order), depth + 1)
            return None
        # Only plain assignments of a name that is never reassigned in its scope
        # count: a loop or a later `x += 1` makes the value a run-time matter.
        if binding.value is None or binding.kind not in ("assign", "annassign"):
            return None
        all_bindings = binding.scope.bindings.get(binding.name, [])
        if any(b.kind not in ("assign", "annassign") for b in all_bindings):
            return None
        return self.values(binding.value, binding.location(), depth + 1)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _map(values: Values, fn: Callable[[object], object]) -> Optional[Values]:
    try:
        return frozenset(fn(v) for v in values)
    except TypeError:
        return None
