"""The arithmetic a reader can do on known numbers, in one place for every evaluator
(the file's :class:`semantic.values.Evaluator` and another module's constants,
:mod:`analysis.module_constants`): ``int(2 * (4 * EMBED_DIM) / 3)`` is 682.

Only operators and builtins whose result Python fixes from the operands: ``+ - * /
// % **`` and ``int()``, ``round()``, ``abs()``, ``min()``, ``max()`` of numbers. A
builtin counts only where nothing in the module rebinds its name (the caller says).
Anything else (a string, a bool, a huge power, a division by zero) is unknown (None).
"""

from __future__ import annotations

import operator
from typing import Callable, Dict, Optional, Sequence, Union

import libcst as cst

Number = Union[int, float]

#: the binary operators evaluated, by libcst operator node class
BINOPS: Dict[type, Callable[[Number, Number], Number]] = {
    cst.Add: operator.add,
    cst.Subtract: operator.sub,
    cst.Multiply: operator.mul,
    cst.Divide: operator.truediv,
    cst.FloorDivide: operator.floordiv,
    cst.Modulo: operator.mod,
    cst.Power: operator.pow,
}

#: the builtins evaluated on numbers
BUILTINS = frozenset({"int", "round", "abs", "min", "max"})

_MAX_POWER = 64


def is_number(value: object) -> bool:
    """An int or float, not a bool (``True + 1`` is no size anyone writes)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def binary(operator_node: cst.BaseBinaryOp, left: object, right: object) -> Optional[Number]:
    """``left <op> right`` for two numbers, or None (unknown operator, not numbers,
    a division by zero, a power too large to be a size)."""
    op = BINOPS.get(type(operator_node))
    if op is None or not is_number(left) or not is_number(right):
        return None
    if op is operator.pow and abs(right) > _MAX_POWER:  # type: ignore[arg-type]
        return None
    try:
        found = op(left, right)  # type: ignore[arg-type]
    except (ArithmeticError, ValueError, OverflowError):
        return None
    return found if is_number(found) else None  # ``(-8) ** 0.5`` is complex


def builtin_name(call: cst.Call) -> Optional[str]:
    """The builtin ``call`` makes (``int(x)``), when it is one this module evaluates and
    every argument is plain (no keyword but ``ndigits``, no ``*args``)."""
    if not isinstance(call.func, cst.Name) or call.func.value not in BUILTINS:
        return None
    for arg in call.args:
        if arg.star or (arg.keyword is not None and arg.keyword.value != "ndigits"):
            return None
    return call.func.value


def builtin(name: str, args: Sequence[object]) -> Optional[Number]:
    """The builtin ``name`` applied to known numbers, or None."""
    if not args or not all(is_number(a) for a in args):
        return None
    try:
        if name == "int" and len(args) == 1:
            return int(args[0])  # type: ignore[call-overload]
        if name == "abs" and len(args) == 1:
            return abs(args[0])  # type: ignore[arg-type]
        if name == "round" and len(args) <= 2:
            if len(args) == 2 and not isinstance(args[1], int):
                return None
            return round(*args)  # type: ignore[call-overload]
        if name in ("min", "max") and len(args) >= 2:
            return (min if name == "min" else max)(args)  # type: ignore[type-var, return-value]
    except (ArithmeticError, ValueError, OverflowError):
        return None
    return None
