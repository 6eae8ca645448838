"""MP407: the graph rewrite is on, but the optimizer that trains does no loss scaling."""

from __future__ import annotations

from collections import Counter
from typing import List, Optional, Set, Tuple

import libcst as cst

from mplint.rule.check import Check, Fix, Needs
from mplint.rule.levels import Safety
from mplint.semantic.call_args import positional_or_keyword
from mplint.semantic.names import self_attribute
from mplint.semantic.scopes import Location, exclusive, trains_nothing
from mplint.semantic.vocabulary import GRAPH_REWRITE_FUNCTIONS, MIXED_POLICIES

_TRAINING = frozenset({"fit", "minimize", "apply_gradients", "train_on_batch"})
_SCALING = frozenset({"scale_loss", "get_scaled_loss", "get_unscaled_gradients"})


class GraphRewriteResultUnused(Check):
    rule_id = "MP407"

    #: the graph rewrite call or the grappler option is in the file
    needs = Needs((b"graph_rewrite", b"auto_mixed_precision"))

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._line: Optional[cst.SimpleStatementLine] = None
        self._rewrites: List[Tuple[cst.Call, Optional[cst.SimpleStatementLine], Location]] = []
        self._names: Counter = Counter()
        self._attrs: Set[str] = set()
        #: how often each attribute name is written (``self.x``, ``other.x``), and the xs of
        #: ``self.x`` a training method is called on
        self._attr_counts: Counter = Counter()
        self._self_trained: Set[str] = set()
        self._scaling = False
        # Uses are counted only in files that can switch the rewrite on at all.
        self._relevant = "graph_rewrite" in ctx.text or "auto_mixed_precision" in ctx.text

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._line = node

    def visit_Name(self, node: cst.Name) -> None:
        # Every occurrence counts as a use, attribute names too: that errs on silence.
        if self._relevant:
            self._names[node.value] += 1

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self._relevant:
            self._attrs.add(node.attr.value)
            self._attr_counts[node.attr.value] += 1
            owner = self_attribute(node.value)
            if owner is not None and node.attr.value in _TRAINING:
                self._self_trained.add(owner)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value == "loss_scale":
            self._scaling = True

    def visit_Call(self, node: cst.Call) -> None:
        resolved = self.names.resolve(node.func)
        if resolved & GRAPH_REWRITE_FUNCTIONS:
            self._rewrites.append((node, self._line, self.ctx.scopes.location()))
        elif any(n.endswith("LossScaleOptimizer") for n in resolved):
            self._scaling = True

    def finish(self) -> None:
        for call, line, loc in self._rewrites:
            # A unit test that trains nothing (it checks the rewrite is refused, or
            # what it returns): no optimizer steps, so no loss scaling is missed.
            if not trains_nothing(loc.scope, self.ctx.module, self.ctx.path):
                self._check_rewrite(call, line)
        self._check_grappler()

    def _check_rewrite(self, call: cst.Call, line: Optional[cst.SimpleStatementLine]) -> None:
        if line is None or len(line.body) != 1:
            return
        stmt = line.body[0]
        opt = positional_or_keyword(call, 0, "opt")
        if isinstance(stmt, cst.Expr) and stmt.value is call:
            fix = None
            if isinstance(opt, cst.Name):
                assign = cst.Assign(targets=[cst.AssignTarget(cst.Name(opt.value))], value=call)
                fix = Fix({stmt: assign}, safety=Safety.SAFE)
            self.report(call, "the optimizer returned by the graph rewrite is discarded: the "
                        "rewrite casts to float16 but the optimizer in use does no loss scaling; "
                        "assign the result back to the optimizer", fix)
            return
        if isinstance(stmt, cst.Assign) and stmt.value is call and len(stmt.targets) == 1 and opt is not None:
            self._check_attribute_result(call, stmt.targets[0].target, opt)
        if (isinstance(stmt, cst.Assign) and stmt.value is call and len(stmt.targets) == 1
                and isinstance(stmt.targets[0].target, cst.Name) and isinstance(opt, cst.Name)):
            result = stmt.targets[0].target.value
            # `opt` trains on (used beyond its definition and this call), the result never.
            if result != opt.value and self._names[result] == 1 and self._names[opt.value] > 2:
                self.report(call, f"`{result}` (the loss-scaling optimizer from the graph "
                            f"rewrite) is never used while `{opt.value}` trains without loss "
                            f"scaling; use `{result}` or assign to `{opt.value}`")

    def _check_attribute_result(self, call: cst.Call, target: cst.BaseExpression, opt: cst.BaseExpression) -> None:
        """``self.amp_opt = rewrite(self.opt)`` where this file trains with
        ``self.opt.minimize()`` and never reads ``self.amp_opt`` (written once, no other
        attribute of that name anywhere in the file)."""
        result, given = self_attribute(target), self_attribute(opt)
        if result is None or given is None or result == given:
            return
        if self._attr_counts[result] == 1 and given in self._self_trained and result not in self._self_trained:
            self.report(call, f"`self.{result}` (the loss-scaling optimizer from the graph rewrite) is "
                        f"never used while `self.{given}` trains without loss scaling; use "
                        f"`self.{result}` or assign to `self.{given}`")

    def _check_grappler(self) -> None:
        """The grappler option alone: float16 compute with no loss scaling anywhere."""
        facts = self.facts
        sites = [s for s in facts.rewrite_sites if s.kind == "grappler"]
        if not sites or self._rewrites or self._scaling or self._attrs & _SCALING:
            return
        if facts.project_scaling_reached is not None:
            return  # code it calls in another module scales the loss (a trainer class)
        if not self._attrs & _TRAINING:
            return  # inference only: no loss scaling needed
        for site in sites:
            # A mixed Keras policy set on the same path: compile() adds the loss scale
            # (or MP401 reports the conflict). One set only in another arm of the `if`
            # that picks the mode ("strict": a policy, "auto": the rewrite) is not.
            policies = [c for c in facts.policy_calls if (c.values is None or c.values & MIXED_POLICIES)
                        and not exclusive(c.branches, site.branches)]
            if policies:
                continue
            # a file that sets none itself: one set in another module the program runs
            # (``configure_precision()``); this file's own are judged by branch above
            reaching = None if facts.policy_calls else facts.mixed_policy(site.location.scope)
            if reaching is not None and reaching.certain:
                continue
            if trains_nothing(site.location.scope, self.ctx.module, self.ctx.path):
                continue
            elsewhere = any(c.values is None or c.values & MIXED_POLICIES for c in facts.policy_calls)
            where = " on this path (the mixed policy is set only on another)" if elsewhere else " anywhere"
            self.report(site.node, f"the grappler option auto_mixed_precision{site.note} computes in "
                        f"float16, but this program trains with no loss scaling{where}: small "
                        "gradients underflow; use set_global_policy('mixed_float16') instead")
