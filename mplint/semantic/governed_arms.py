"""The truth of an ``if`` test on a parameter in code a mixed policy governs, read from
the calls that run under it: ``if include_top:`` in ``EfficientNetLite`` whose calls are
``EfficientNetLiteB0(include_top=include_top)`` (handed on) and ``B1``..``B4`` alike,
where only ``EfficientNetLiteB0(include_top=False)`` of another module runs under the
policy: the head is never built there.

A parameter's values are the join over its calls in the file made by code some policy
reaches (the program model's ``program_reached``; a call in a function no policy reaches
runs only in float32 programs, whose arms no finding is about) and over the calls of
other modules the program model hands (``Evaluator.arguments_elsewhere``, forwarded
chains included), a call's argument that is its function's own parameter followed up
the same way (``MAX_DEPTH`` functions). Without a program model, with a call that
cannot be read, or with no call at all, the test is unknown (None).
"""

from __future__ import annotations

from typing import FrozenSet, Optional, Set

import libcst as cst

from mplint.semantic.scopes import Binding, Location, calls_of, function_key
from mplint.semantic.values import Evaluator

MAX_DEPTH = 4


def governed_truth(test: cst.BaseExpression, loc: Location, values: Evaluator,
                   reached: Optional[FrozenSet[str]]) -> Optional[bool]:
    """Whether ``test`` (a parameter, or ``not`` one) is true in every governed run
    (False: false in every one); None when unknown or when runs differ."""
    if reached is None:
        return None
    negate = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, negate = test.expression, not negate
    if not isinstance(test, cst.Name):
        return None
    binding = loc.lookup(test.value)
    found = None if binding is None else _param_values(binding, values, reached, 0)
    truths = {bool(v) for v in found} if found else set()
    return None if len(truths) != 1 else truths.pop() != negate


def _param_values(binding: Binding, values: Evaluator, reached: FrozenSet[str], depth: int
                  ) -> Optional[Set[object]]:
    scope, param = binding.scope, binding.node
    if depth > MAX_DEPTH or binding.kind != "param" or scope is None or not isinstance(param, cst.Param) \
            or not isinstance(scope.node, cst.FunctionDef) or len(scope.bindings.get(binding.name, ())) != 1:
        return None
    out: Set[object] = set()
    elsewhere = values.arguments_elsewhere(binding)
    if elsewhere is not None:
        if elsewhere.unknown:
            return None
        out |= elsewhere.values
        if elsewhere.defaulted and not _add_default(param, binding, values, out):
            return None
    governed_calls = 0
    for call, where, offset in (calls_of(values.call_sites, scope) if values.call_sites is not None else []):
        if function_key(where.scope) not in reached:
            continue  # made by code no policy reaches
        governed_calls += 1
        argument = values.bound_argument(scope.node, param, call, offset, where)
        if argument is None:
            if not _add_default(param, binding, values, out):
                return None
            continue
        if not isinstance(argument, cst.BaseExpression):
            return None  # ``*args``, a spread that cannot be read
        handed = where.lookup(argument.value) if isinstance(argument, cst.Name) else None
        if handed is not None and handed.kind == "param":
            inner = _param_values(handed, values, reached, depth + 1)
        else:
            found = values.values(argument, where)
            inner = None if found is None else set(found)
        if inner is None:
            return None
        out |= inner
    if elsewhere is None and not governed_calls:
        return None  # no call known to run under the policy
    return out


def _add_default(param: cst.Param, binding: Binding, values: Evaluator, out: Set[object]) -> bool:
    if param.default is None or binding.scope is None:
        return False
    found = values.values(param.default, Location(binding.scope.parent or binding.scope, binding.order))
    if found is None:
        return False
    out |= found
    return True
