"""The kinds calls in other modules of the project hand a function's parameters.

``gram_matrix(features)`` in ``train_utils.py`` is only ever called from ``train.py``
with the outputs of a VGG model built under ``mixed_float16``: its body runs on a
16-bit tensor although nothing in its own module says so. A function is judged per
set of argument kinds that reaches it (issue #24): each call site the program model
found in another module (``ModuleFacts.project_arguments``, with where the call is
written, ``elsewhere_marks.CALLER_AT``) is read in its own module by that module's
:class:`TensorKinds`, walked once per content as code governed by a mixed policy
(:func:`imported_layers.analysed`, which notes the read: a changed caller changes the
checked file's cached result). Only a call that hands some parameter a 16-bit tensor
gives a context (its float32 arguments kept beside it); the rules judge the body under
each context on its own, so a caller passing float32 and another passing 16-bit never
mix. The rules still ask whether a mixed policy reaches the function itself
(``policy_reaching``); a caller in a test module is left out (its tests choose the
policy on purpose). A call the caller's module cannot follow keeps its kinds unknown.

The same calls say whether the function is a model builder (:func:`functional_caller`):
one that another module's functional model code calls, so its own code is functional
too. A caller's module is walked without the program model's facts, so a builder is
found one module from the functional code, not through a chain of builders there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.dtype_kinds import LOW
from mplint.analysis.imported_layers import analysed
from mplint.analysis.tensor_imports import JUDGED_UNDER, imported_callee
from mplint.analysis.tensor_sites import Env, ForeignContext, Where
from mplint.semantic.call_args import UNREADABLE, argument_for
from mplint.semantic.elsewhere_marks import CALLER_AT, ELSEWHERE_UNKNOWN, read_caller_at
from mplint.semantic.scopes import Scope, function_key
from mplint.semantic.test_modules import is_test_path

if TYPE_CHECKING:  # pragma: no cover
    from mplint.analysis.tensor_kinds import TensorKinds

#: how many modules' calls of one function are read (each is a walk of that module)
_MAX_CALLER_MODULES = 6


def foreign_contexts(kinds: "TensorKinds", function: Scope) -> List[ForeignContext]:
    """The contexts the calls of other modules give ``function`` (a top-level function
    or a method of a top-level class of the checked file): one per call and caller
    context that hands some parameter a 16-bit tensor."""
    node = function.node
    out: List[ForeignContext] = []
    for found in _foreign_calls(kinds, function):
        assert isinstance(node, cst.FunctionDef)
        caller, call, where = found.caller, found.call, found.where
        region = caller.region(where.loc)
        # a function imported by name and called from 16-bit code that is not functional
        # model code: the caller's MP504 reports a failure at the call (``handed_crossings``
        # reads the calls ``TensorKinds.calls`` lists: ``helper(x)``, not ``ops.helper(x)``), and
        # so does a call of a function the caller's class picked by name (``self._gate(x)``,
        # ``tensor_imports.imported_callee``)
        # (a callable a constructor handed the attribute, ``self.perturb = perturb``, is
        # unknown to the caller: this module reports)
        handed = found.offset == 0 and region is not None and region.kind != "functional" and (
            isinstance(call.func, cst.Name)
            or found.spelled != node.name.value and imported_callee(caller, call, where) is not None)
        for caller_env in caller.every_context(where.loc.scope):
            with caller.under(caller_env):
                env = _env(caller, node, found.params, found.offset, call, where)
            if any(kind == LOW for _, kind, _ in env) and all(o.env != env for o in out):
                out.append(ForeignContext(env, found.at, handed))
    return out


def functional_caller(kinds: "TensorKinds", function: Scope) -> Optional[str]:
    """Where a call in another module's functional model code runs ``function`` with
    a tensor (``blocks.py:42``), or None: a builder such as ``conv_block(x, 64)`` that
    a model is built with applies its layers to KerasTensors, so its code is functional
    model code too (its layers' outputs are the compute dtype under a mixed policy)."""
    for found in _foreign_calls(kinds, function):
        region = found.caller.region(found.where.loc)
        if region is not None and region.kind == "functional":
            return found.at
    return None


@dataclass(frozen=True)
class _ForeignCall:
    """One call of the checked file's function in another module, read there."""

    caller: "TensorKinds"
    call: cst.Call
    where: Where
    #: ``blocks.py:42``, relative to the project root
    at: str
    #: how the call spells the callee (an attribute holding a picked callable)
    spelled: str
    #: the parameters the call passes, after ``offset`` leading ones (``self``)
    params: List[cst.Param]
    offset: int


def _foreign_calls(kinds: "TensorKinds", function: Scope) -> Iterator[_ForeignCall]:
    """The calls the program model found in other modules (``ModuleFacts.project_arguments``)
    that pass ``function`` something other than literals, each read in its own module
    (walked once per content as code governed by a mixed policy); none from a test module."""
    node = function.node
    root = kinds.ctx.facts.project_root
    if not isinstance(node, cst.FunctionDef) or node.name.value == "__init__" or not root \
            or not _top_level(function):
        return
    sites = kinds.ctx.values.elsewhere.get(function_key(function))
    if not sites:
        return
    lines: Dict[str, Set[Tuple[int, str]]] = {}
    for site in sites:
        path, line, spelled = read_caller_at(site.get(CALLER_AT) or "")
        if not any(value == ELSEWHERE_UNKNOWN for slot, value in site.items() if slot != CALLER_AT):
            continue  # literals only (or nothing): no tensor
        if path.endswith(".py") and line is not None and not is_test_path(path):
            # a call of a callable picked by name is spelled by the attribute holding it
            lines.setdefault(path, set()).add((line, spelled or node.name.value))
    method = function.parent is not None and function.parent.kind == "class" and not _static(node)
    offset = 1 if method else 0
    params = [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params][offset:]
    for path in sorted(lines)[:_MAX_CALLER_MODULES]:
        caller = analysed(os.path.join(root, path), type(kinds), root=root, policy=JUDGED_UNDER)
        if not isinstance(caller, type(kinds)):
            continue
        spellings = sorted({spelled for _, spelled in lines[path]})
        calls = [(call, where, spelled) for spelled in spellings for call, where in caller.calls_spelled(spelled)]
        starts = caller.lines_of([call for call, _, _ in calls])
        for call, where, spelled in calls:
            start = starts.get(call)
            if start is None or (start, spelled) not in lines[path]:
                continue
            yield _ForeignCall(caller, call, where, f"{path}:{start}", spelled, params, offset)


def _env(caller: "TensorKinds", node: cst.FunctionDef, params: List[cst.Param], offset: int,
         call: cst.Call, where: Where) -> Env:
    """The kinds the caller's arguments give the parameters (by the ids of this
    module's ``Param`` nodes; -1: no argument of this module to follow back)."""
    env = []
    for param in params:
        argument = argument_for(node, param, call, offset)
        if argument is None or argument is UNREADABLE:
            continue
        assert isinstance(argument, cst.BaseExpression)
        env.append((id(param), caller.kind(argument, where), -1))
    return tuple(sorted(env, key=lambda item: item[0]))


def _top_level(scope: Scope) -> bool:
    """A function the program model knows by its ``function_key``: at the module's top
    level, or a method of a top-level class."""
    parent = scope.parent
    if parent is not None and parent.kind == "class":
        parent = parent.parent
    return parent is not None and parent.kind == "module"


def _static(node: cst.FunctionDef) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in node.decorators)
