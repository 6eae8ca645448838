"""Which expression a call passes for a parameter, read from the call alone.

A parameter is read in one of two explicit forms, as Python declares it
(``inspect.Parameter``): :func:`positional_or_keyword` for one that may be passed at
its position or by name (``Dense(10)`` / ``Dense(units=10)``), :func:`keyword_only`
for one that can only be named (``dtype=``). Both answer None when the argument is
absent or a ``*args``/``**kwargs`` may hide it: rules stay silent on what they cannot
read. :func:`argument_for` binds a call to a ``def`` of the same file.
"""

from __future__ import annotations

import json
from typing import Dict, Optional, Union

import libcst as cst

from mplint.semantic.elsewhere_marks import ELSEWHERE_UNKNOWN, KEYWORD_SPREAD

#: keywords under which ops take their tensor argument
_TENSOR_KEYWORDS = ("x", "logits", "features", "tensor", "input", "inputs")


class _Unreadable:
    """A call that binds a parameter through ``*args``/``**kwargs``."""

    def __repr__(self) -> str:
        return "UNREADABLE"


#: what :func:`argument_for` answers when ``*args``/``**kwargs`` decide the binding
UNREADABLE = _Unreadable()


def positional_or_keyword(call: cst.Call, position: int, keyword: str) -> Optional[cst.BaseExpression]:
    """The argument passed at ``position`` (0-based, among positional arguments) or
    as ``keyword``; None when absent, or when a starred argument comes first."""
    if position < 0:
        raise ValueError(f"position must be >= 0 (use keyword_only for {keyword!r})")
    positional = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if positional == position:
                return arg.value
            positional += 1
        elif arg.keyword.value == keyword:
            return arg.value
    return None


def keyword_only(call: cst.Call, keyword: str) -> Optional[cst.BaseExpression]:
    """The argument passed as ``keyword=``, wherever it stands; None when absent."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    return None


def first_tensor_argument(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The tensor an op works on: its first positional argument or a known keyword."""
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            return arg.value
        if arg.keyword.value in _TENSOR_KEYWORDS:
            return arg.value
    return None


def argument_for(function: cst.CSTNode, param: cst.Param, call: cst.Call,
                 offset: int = 0) -> Union[cst.BaseExpression, None, _Unreadable]:
    """The expression ``call`` binds to ``param`` of ``function``.

    None when the call leaves it to its default, :data:`UNREADABLE` when the call
    uses ``*args``/``**kwargs`` or the parameter is itself ``*args``/``**kwargs``.
    ``offset`` counts leading parameters bound already (``self`` of ``__init__``).
    """
    if not isinstance(function, (cst.FunctionDef, cst.Lambda)) or any(arg.star for arg in call.args):
        return UNREADABLE
    params = function.params
    if param is params.star_arg or param is params.star_kwarg:
        return UNREADABLE
    found = keyword_only(call, param.name.value)
    if found is not None:
        return found
    positional = list(params.posonly_params) + list(params.params)
    indexes = [i for i, p in enumerate(positional) if p is param]
    if indexes:
        index = indexes[0] - offset
        given = [arg for arg in call.args if arg.keyword is None]
        if 0 <= index < len(given):
            return given[index].value
    return None


def literal_slots(call: cst.Call) -> Dict[str, str]:
    """The arguments a call writes, as the program model's summaries hand them to
    another module's evaluator (``Evaluator.elsewhere``): slot (position after ``self``,
    or keyword) -> the argument as JSON when it is a literal constant, else unknown;
    ``*args``/``**kwargs`` as in ``run.summaries``. Only literals: a name's value is the
    caller's module's matter, and may hold what its own callers pass."""
    slots: Dict[str, str] = {}
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    if any(arg.star == "*" for arg in call.args):
        slots["*"] = ELSEWHERE_UNKNOWN
    for i, arg in enumerate(positional):
        slots[str(i)] = _json_literal(arg.value)
    spread_only = "*" not in slots
    for arg in call.args:
        if arg.star == "**":
            slots["*"] = ELSEWHERE_UNKNOWN
            if spread_only:
                slots[KEYWORD_SPREAD] = ELSEWHERE_UNKNOWN
        elif arg.keyword is not None:
            slots[arg.keyword.value] = _json_literal(arg.value)
    return slots


def _json_literal(expr: cst.BaseExpression) -> str:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return {"True": "true", "False": "false", "None": "null"}[expr.value]
    if isinstance(expr, (cst.SimpleString, cst.Integer, cst.Float)):
        value = expr.evaluated_value
        if isinstance(value, (str, int, float)):
            return json.dumps(value)
    return ELSEWHERE_UNKNOWN
