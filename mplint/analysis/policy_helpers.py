"""Project helpers that set a mixed global policy: ``enable_mixed_precision()`` whose
body calls ``set_global_policy("mixed_float16")``, in the checked file or in another
module of the project.

A call of such a helper sets the policy where it is made, as the call written there
would (MP405: a model built before ``enable_mixed_precision()`` keeps float32). Only a
helper that always sets it counts: the setting call is a statement of the function's
own body (not under an ``if``, a loop, a ``try`` or a ``with``, and before any
``return``), with a mixed policy literal (or ``Policy("mixed_float16")``). Anything else,
a helper that takes the policy as a parameter included, is unknown: silent.
Another module is parsed once per content (``imported_layers.parsed_module``, which
notes the read so a cached result is keyed by it).
"""

from __future__ import annotations

import os
from typing import Callable, Dict, FrozenSet, Optional, Tuple

import libcst as cst

from mplint.analysis.imported_layers import imported_definition, parsed_module
from mplint.rule.check import Context
from mplint.semantic.names import NameResolver, collect_module_imports
from mplint.semantic.scopes import Location
from mplint.semantic.vocabulary import MIXED_POLICIES, POLICY_CONSTRUCTORS, SET_POLICY_FUNCTIONS

Resolve = Callable[[cst.BaseExpression], FrozenSet[str]]

#: (path, content digest, function name) -> the mixed policies it always sets
_ELSEWHERE: Dict[Tuple[str, str, str], Optional[FrozenSet[str]]] = {}


def helper_sets(ctx: Context, call: cst.Call, loc: Location) -> Optional[Tuple[FrozenSet[str], str]]:
    """The mixed policies ``call`` always sets by calling a project helper, and the
    helper's name as a reader finds it (``precision.enable_mixed_precision``); None when
    it calls no such helper."""
    func = call.func
    if isinstance(func, cst.Name):
        bound = loc.lookup(func.value)
        if bound is not None:  # a helper of this file, defined once
            if bound.kind != "def" or not isinstance(bound.node, cst.FunctionDef) or bound.scope is None \
                    or len(bound.scope.bindings.get(func.value, [])) != 1:
                return None
            found = always_sets(bound.node, ctx.names.resolve)
            return None if found is None else (found, func.value)
    elif not isinstance(func, cst.Attribute):
        return None
    definition = imported_definition(ctx, func)
    if definition is None:
        return None
    path, name = definition
    found = _sets_elsewhere(path, name)
    if found is None:
        return None
    return found, f"{os.path.splitext(os.path.basename(path))[0]}.{name}"


def _sets_elsewhere(path: str, name: str) -> Optional[FrozenSet[str]]:
    parsed = parsed_module(path)
    if parsed is None:
        return None
    digest, module = parsed
    key = (path, digest, name)
    if key not in _ELSEWHERE:
        function = next((s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)
        resolver = NameResolver()
        collect_module_imports(module, resolver)
        _ELSEWHERE[key] = None if function is None else always_sets(function, resolver.resolve)
    return _ELSEWHERE[key]


def always_sets(function: cst.FunctionDef, resolve: Resolve) -> Optional[FrozenSet[str]]:
    """The mixed policies a function's own body always sets (see the module), or None."""
    if not isinstance(function.body, cst.IndentedBlock):
        return None
    for statement in function.body.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue  # a compound statement: what it sets is not always set
        for small in statement.body:
            if isinstance(small, (cst.Return, cst.Raise)):
                return None
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
                    and resolve(small.value.func) & SET_POLICY_FUNCTIONS:
                policy = _literal_policy(small.value, resolve)
                return frozenset({policy}) if policy in MIXED_POLICIES else None
    return None


def _literal_policy(call: cst.Call, resolve: Resolve) -> Optional[str]:
    """``set_global_policy("mixed_float16")`` or ``set_global_policy(Policy("mixed_float16"))``."""
    if not call.args or call.args[0].keyword is not None and call.args[0].keyword.value != "policy":
        return None
    value = call.args[0].value
    if isinstance(value, cst.Call) and resolve(value.func) & POLICY_CONSTRUCTORS and value.args:
        value = value.args[0].value
    if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)):
        text = value.evaluated_value
        return text if isinstance(text, str) else None
    return None
