"""Dataset factories of another project module that batch by a parameter:
``make_dataset(pattern, FLAGS.batch_size)`` with ``def make_dataset(pattern, batch_size):
... return ds.batch(batch_size).prefetch(1)`` in ``data/pipeline.py``.

The batch size is then decided at the call, not in the factory: the argument is a
batch site of the calling file (MP303 judges it there, with the flag default, constant
or literal it holds, and whether the dataset it returns feeds training). The factory is
read in its own module by the dimensions analysis walked there (its ``Dataset.batch``
sites), once per content: a top-level function whose own body batches a tf.data
pipeline by one of its parameters, that pipeline batched no further, and returned
(directly, through names bound in the function, or through Dataset methods called on
it). Anything else (a batch size computed in the factory, a pipeline batched again, a
method) is no such factory: silent.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.imported_layers import analysed, imported_definition, parsed_module
from mplint.core.find_nodes import find_all
from mplint.rule.check import Context
from mplint.semantic.scopes import Scope

if TYPE_CHECKING:  # pragma: no cover
    from mplint.analysis.dimensions import AlignedDimensions

#: (path, content digest, function) -> the parameter it batches by
_FOUND: Dict[Tuple[str, str, str], Optional["BatchedParameter"]] = {}
_MAX_DEPTH = 12


@dataclass(frozen=True)
class BatchedParameter:
    """The parameter a factory batches its returned pipeline by."""

    #: positional index and name
    index: int
    name: str
    #: the factory and its module, for messages (``pipeline.make_dataset()``)
    where: str


def batched_parameter(ctx: Context, func: cst.BaseExpression, analysis: "type[AlignedDimensions]",
                      batch: str) -> Optional[BatchedParameter]:
    """The parameter by which the function ``func`` names, defined in another module of
    the project, batches the tf.data pipeline it returns; None when it is no such one.
    ``analysis`` (the dimensions analysis, whose sites of kind ``batch`` are read there)
    is the caller's: it imports this module."""
    definition = imported_definition(ctx, func)
    if definition is None:
        return None
    path, name = definition
    parsed = parsed_module(path)
    if parsed is None or ".batch(" not in parsed[1].code:
        return None
    key = (path, parsed[0], name)
    if key not in _FOUND:
        _FOUND[key] = _find(path, name, ctx.facts.project_root, analysis, batch)
    return _FOUND[key]


def _find(path: str, name: str, root: Optional[str], analysis: "type[AlignedDimensions]",
          batch: str) -> Optional[BatchedParameter]:
    dims = analysed(path, analysis, root)
    if not isinstance(dims, analysis):
        return None
    found: Optional[BatchedParameter] = None
    for site in dims.sites:
        scope = site.location.scope
        function = scope.node
        if site.kind != batch or not site.owner.startswith("Dataset.") or not isinstance(function, cst.FunctionDef) \
                or function.name.value != name or scope.parent is None or scope.parent.kind != "module" \
                or not isinstance(site.expr, cst.Name) or dims.rebatched(site.call):
            continue
        binding = site.location.lookup(site.expr.value)
        if binding is None or binding.kind != "param" or binding.scope is not scope:
            continue
        positional = [*function.params.posonly_params, *function.params.params]
        index = next((i for i, p in enumerate(positional) if p.name.value == site.expr.value), None)
        if index is None or not _returned(site.call, function, scope):
            continue
        if found is not None:
            return None  # batched at two places: not one parameter's choice
        found = BatchedParameter(index, site.expr.value, f"{os.path.splitext(os.path.basename(path))[0]}.{name}()")
    return found


def _returned(batch: cst.Call, function: cst.FunctionDef, scope: Scope) -> bool:
    """Whether a ``return`` of the function hands on the pipeline ``batch`` made."""
    nested = {id(r) for d in find_all(function.body, cst.FunctionDef) for r in find_all(d.body, cst.Return)}
    returns = [r.value for r in find_all(function.body, cst.Return) if r.value is not None and id(r) not in nested]
    return any(_reaches(value, batch, scope, 0, set()) for value in returns)


def _reaches(expr: cst.BaseExpression, batch: cst.Call, scope: Scope, depth: int, seen: Set[str]) -> bool:
    if depth > _MAX_DEPTH:
        return False
    if expr is batch:
        return True
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return _reaches(expr.func.value, batch, scope, depth + 1, seen)  # ``ds.batch(n).prefetch(1)``
    if isinstance(expr, cst.Name) and expr.value not in seen:
        seen.add(expr.value)
        bindings: List = scope.bindings.get(expr.value, [])
        return any(b.kind == "assign" and b.value is not None and _reaches(b.value, batch, scope, depth + 1, seen)
                   for b in bindings)
    return False
