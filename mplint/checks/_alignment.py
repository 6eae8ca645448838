"""What MP301-MP304 share: find unaligned sizes, word the finding, round the literal.

Each rule picks its sites (``wants``), its threshold and its rounding; this base
reports one finding per site and value, pointing where the value is written
(the call argument that passes it into a helper, else the layer's argument), and
offers a fix only when the literal can be rounded without changing anything that
is not an aligned dimension.
"""

from __future__ import annotations

import re
from typing import Callable, ClassVar, Dict, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.dimensions import FILTERS, TASK_SIZE_LIMIT, UNITS, AlignedDimensions, DimensionValue, DimensionSite, next_multiple
from mplint.analysis.layers import sixteen_bit_name
from mplint.rule.check import Check, Fix, Needs
from mplint.rule.messages import snippet
from mplint.rule.levels import Safety
from mplint.semantic.conditions import conflict
from mplint.semantic.facts import PolicyState
from mplint.semantic.scopes import Binding, exclusive
from mplint.semantic.vocabulary import MIXED_POLICIES
from mplint.semantic.test_modules import is_test_path


class AlignmentCheck(Check):
    requires: ClassVar[Tuple[type, ...]] = (AlignedDimensions,)
    #: the site kinds this rule reads
    kinds: ClassVar[Tuple[str, ...]] = ()

    #: only under a mixed policy
    needs = Needs(mixed_policy=True)

    def finish(self) -> None:
        policy = self.facts.mixed_policy()
        alignment = self.option("alignment")
        if policy is None or not isinstance(alignment, int) or alignment < 2:
            return
        if is_test_path(self.ctx.path):
            return  # a test's sizes are its data: tiny layers and batches on purpose
        dims = self.ctx.get(AlignedDimensions)
        seen: Set[Tuple[int, int]] = set()
        #: per reported node: (message, fix) for each unaligned value it takes
        found: Dict[int, Tuple[cst.CSTNode, List[Tuple[int, str, Optional[Fix]]]]] = {}
        for site in dims.sites:
            if site.kind not in self.kinds or not dims.computes_in_16_bit(site):
                continue
            here = self.facts.mixed_policy(site.location.scope)
            if here is None:
                continue  # the mixed policy is another test function's
            for origin in dims.origins(site):
                if origin.value % alignment == 0 or not self.wants(dims, site, origin) \
                        or self._runs_without_tensor_cores(dims, origin):
                    continue
                node = origin.entry if origin.entry is not None else site.at or site.expr
                if (id(node), origin.value) in seen:
                    continue
                seen.add((id(node), origin.value))
                target = self.target(origin.value, alignment)
                fix = None
                if dims.may_round(origin, self.accepts(dims)):
                    assert origin.literal is not None
                    fix = Fix({origin.literal: origin.literal.with_changes(value=str(target))}, safety=Safety.UNSAFE)
                found.setdefault(id(node), (node, []))[1].append(
                    (origin.value, self.message(site, origin, alignment, target, here), fix))
        for reported, values in found.values():
            self.report(reported, *_one_finding(values))

    def _runs_without_tensor_cores(self, dims: AlignedDimensions, origin: DimensionValue) -> bool:
        """A value bound on an ``if`` arm that never runs under the mixed policy: the
        other arm of the ``if`` (or of the same condition) that sets it, or the arm
        taken when no GPU is found (no Tensor Cores to miss)."""
        if not origin.branches:
            return False
        if any(_without_gpu(self.ctx.module, arm, test) for _, arm, test in origin.branches):
            return True
        calls = self.facts.policy_calls
        if self.facts.assumed_policy in MIXED_POLICIES or not calls or any(c.values is None for c in calls):
            return False  # a policy set elsewhere, or one that cannot be read: may be mixed anywhere
        mixed = [(call, arms) for call in calls for values, arms in call.choices() if values & MIXED_POLICIES]
        if not mixed or self.facts.project_policies & MIXED_POLICIES:
            return False
        here = origin.chain[0].location() if origin.chain and origin.chain[0].scope is not None else None
        needs = dims.conditions.truths(origin.branches, here) if here is not None else {}
        return all(exclusive(arms, origin.branches)
                   or conflict(dims.conditions.truths(arms, call.location), needs) for call, arms in mixed)

    # -- what each rule decides ----------------------------------------------------------
    def wants(self, dims: AlignedDimensions, site: DimensionSite, origin: DimensionValue) -> bool:
        raise NotImplementedError

    def accepts(self, dims: AlignedDimensions) -> Callable[[DimensionSite], bool]:
        """Sites a rounded constant may also size (every other use forbids the fix)."""
        raise NotImplementedError

    def target(self, value: int, alignment: int) -> int:
        return next_multiple(value, alignment)

    def message(self, site: DimensionSite, origin: DimensionValue, alignment: int, target: int, policy: PolicyState) -> str:
        raise NotImplementedError

    # -- wording ---------------------------------------------------------------------------
    def describe(self, site: DimensionSite, origin: DimensionValue) -> str:
        """``Dense units=100``, with where the value came from."""
        via = ""
        params = [b for b in origin.chain if b.kind == "param"]
        constants = [b for b in origin.chain if b.kind != "param"]
        if origin.entry is not None and params:
            via = f" (passed to {_function_name(params[-1])}() as {params[-1].name!r}"
            via += f", from {constants[-1].name})" if constants else ")"
        elif origin.source is not None:
            via = f" ({origin.source})"
        elif site.written is not None:
            spreads = [self.ctx.module.code_for_node(a.value) for a in site.call.args if a.star == "**"]
            via = " (from " + ", ".join(f"**{_short(s)}" for s in spreads) + ")"
        elif site.at is not None:
            via = " (set by its functools.partial)"
        elif constants:
            via = f" (from {constants[-1].name})"
        elif params:
            via = f" (default of {params[-1].name!r})"
        elif origin.computed is not None:
            via = f" ({_short(self.ctx.module.code_for_node(origin.computed))})"
        if origin.branches and via:
            _, arm, test = origin.branches[-1]
            condition = _short(self.ctx.module.code_for_node(test))
            via = via[:-1] + (f", when {condition})" if arm == "body" else f", when not {condition})")
        return f"{site.owner}={origin.value}{via}"

    def compute_dtype(self, policy: PolicyState) -> str:
        return sixteen_bit_name(policy.names)


def _one_finding(values: List[Tuple[int, str, Optional[Fix]]]) -> Tuple[str, Optional[Fix]]:
    """One finding for a size written once that takes several values (a helper's
    parameter, called with 100 and 30): the first value's message, naming the others,
    and a fix that rounds every literal it can."""
    message = values[0][1]
    others = sorted({value for value, _, _ in values[1:]} - {values[0][0]})
    if others:
        message += f"; from other call sites also {', '.join(map(str, others))}"
    fixes = [fix for _, _, fix in values if fix is not None]
    if not fixes:
        return message, None
    replacements = {old: new for fix in fixes for old, new in fix.replacements.items()}
    return message, Fix(replacements, safety=Safety.UNSAFE)


def _function_name(param: Binding) -> str:
    """The callee a parameter belongs to, as the reader calls it (a class for __init__)."""
    scope = param.scope
    node = scope.node if scope is not None else None
    if isinstance(node, cst.FunctionDef):
        owner = scope.parent if scope is not None else None
        if node.name.value == "__init__" and owner is not None and isinstance(owner.node, cst.ClassDef):
            return owner.node.name.value
        return node.name.value
    return "the function"


def _short(code: str, limit: int = 40) -> str:
    return snippet(code, limit)


#: a test that a GPU is present (``tf.config.list_physical_devices('GPU')``)
_GPU_TEST = re.compile(r"list_physical_devices\(\s*(device_type\s*=\s*)?['\"]GPU|is_gpu_available|gpu_device_name")


def _without_gpu(module: cst.Module, arm: str, test: cst.BaseExpression) -> bool:
    """The arm runs when no GPU was found: the ``else`` of a GPU test, or ``if not gpu``."""
    negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    if negated:
        assert isinstance(test, cst.UnaryOperation)
        test = test.expression
    if not _GPU_TEST.search(module.code_for_node(test)) or not isinstance(test, (cst.Call, cst.Name, cst.Attribute)):
        return False
    return (arm == "else") != negated


class HiddenLayerAlignment(AlignmentCheck):
    """MP301/MP302: hidden layer sizes. Output layers are sized by the data (10
    classes, 3 colour channels); MP304 covers the large ones. Sizes below
    TASK_SIZE_LIMIT (a score, a box) are fixed by the task."""

    def wants(self, dims: AlignedDimensions, site: DimensionSite, origin: DimensionValue) -> bool:
        return origin.value >= TASK_SIZE_LIMIT and not dims.is_output(site, origin) \
            and not dims.pinned_by_reshape(site, origin)

    def accepts(self, dims: AlignedDimensions) -> Callable[[DimensionSite], bool]:
        return lambda site: site.kind in (UNITS, FILTERS) and not dims.is_output(site)
