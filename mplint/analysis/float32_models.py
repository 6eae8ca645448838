"""Models built before the policy: a custom loop that trains one runs in float32.

A notebook builds its models, defines its training step, and turns mixed_float16 on in a
later cell before it calls the step. A layer reads the global policy when it is
constructed, so the trained model keeps float32 compute and its gradients need no loss
scale; the policy set too late is MP405's finding, not a missing LossScaleOptimizer.

Only what can be followed: the gradient's sources are ``<name>.trainable_variables`` (or
``trainable_weights``, ``variables``, ``weights``), where the name is a module-level model,
directly or through the step function's parameter bound by every call the file makes,
and every module-level binding of that name is a call made before the file's first
policy call (``ModuleFacts.runs_before_policies``: no policy from elsewhere reaches the
file, and all its policy calls are at the top level). Anything else stays float16.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Set

import libcst as cst

from mplint.rule.check import Context
from mplint.semantic.call_args import positional_or_keyword
from mplint.semantic.scopes import Binding, Location

if TYPE_CHECKING:  # pragma: no cover
    from mplint.analysis.training import Gradient, TrainStep

#: the attributes of a Keras model that list the variables a step differentiates
VARIABLE_LISTS = frozenset({"trainable_variables", "trainable_weights", "variables", "weights"})
#: parameters followed from a step function to its callers, at most
_MAX_DEPTH = 3


def trains_model_built_before_policy(ctx: Context, step: "TrainStep") -> bool:
    """Every gradient of ``step`` is taken for the variables of a model built before the
    file sets any policy (float32 layers)."""
    return bool(step.gradients) and all(_float32_sources(ctx, gradient) for gradient in step.gradients)


def _float32_sources(ctx: Context, gradient: "Gradient") -> bool:
    if gradient.symbolic:
        return False
    sources = positional_or_keyword(gradient.call, 1, "sources")
    if not (isinstance(sources, cst.Attribute) and sources.attr.value in VARIABLE_LISTS
            and isinstance(sources.value, cst.Name)):
        return False
    return _built_before_policy(ctx, sources.value.value, gradient.location, 0, set())


def _built_before_policy(ctx: Context, name: str, loc: Location, depth: int, seen: Set[int]) -> bool:
    """Every value ``name`` may hold at ``loc`` is a model built at the top level before
    the file's first policy call."""
    bindings = loc.reaching(name)
    if not bindings or depth > _MAX_DEPTH:
        return False
    for binding in bindings:
        if id(binding.node) in seen:
            return False
        seen.add(id(binding.node))
        if binding.kind == "param":
            sources = ctx.values.param_sources(binding)
            if not sources or ctx.values.callers_unread(binding):
                return False
            for expr, where, _ in sources:
                if not (isinstance(expr, cst.Name) and _built_before_policy(ctx, expr.value, where, depth + 1, seen)):
                    return False
        elif not _module_model_before_policy(ctx, binding):
            return False
    return True


def _module_model_before_policy(ctx: Context, binding: Binding) -> bool:
    """A top-level ``model = Build(...)``, and no binding of the name runs after the
    first policy call (a model rebuilt under the policy computes in it)."""
    scope = binding.scope
    if scope is None or scope.kind != "module" or binding.kind != "assign" or not isinstance(binding.value, cst.Call):
        return False
    return all(other.scope is not None and ctx.facts.runs_before_policies(other.location())
               for other in scope.bindings.get(binding.name, ()))
