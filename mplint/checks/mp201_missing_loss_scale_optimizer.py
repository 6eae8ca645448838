"""MP201: a float16 custom training loop whose optimizer is never a LossScaleOptimizer."""

from __future__ import annotations

import json
from typing import Dict, Optional, Set

from mplint.analysis.float32_models import trains_model_built_before_policy
from mplint.analysis.loss_scale_fixes import (
    StatementEdits, add_scaling, add_unscaling, fix_replacements, wrap_creation,
)
from mplint.analysis.training import PLAIN, UPDATE_WORDS, TrainingLoops, TrainStep, float16_source
from mplint.rule.check import Check, Fix, Needs
from mplint.rule.levels import Safety
from mplint.semantic.conditions import conflict
from mplint.semantic.test_modules import is_test_path
from mplint.semantic.vocabulary import MIXED_POLICIES


def _truth(literal: Optional[str]) -> Optional[bool]:
    """The truth of an argument written as a JSON literal; None when it is not one."""
    try:
        return bool(json.loads(literal)) if literal is not None else None
    except ValueError:
        return None


class MissingLossScaleOptimizer(Check):
    rule_id = "MP201"
    requires = (TrainingLoops,)

    #: float16 compute comes from a mixed policy or the grappler option
    needs = Needs((b"auto_mixed_precision",), mixed_policy=True, also=UPDATE_WORDS)

    def finish(self) -> None:
        loops = self.ctx.get(TrainingLoops)
        version = self.facts.keras_version
        wrapped: Set[int] = set()
        for step in loops.steps():
            if not step.origins or step.kinds != {PLAIN} or "manual" in step.scaling:
                continue  # wrapped, unknown, or scaled by hand
            if step.loss_scaled and step.unscaled:
                continue  # the loss scaled and the gradients unscaled by another LossScaleOptimizer
            why = float16_source(self.ctx, loops, step.location.scope, step.location)
            if why is None:
                continue  # float32 or bfloat16: no loss scaling needed
            if trains_model_built_before_policy(self.ctx, step):
                continue  # its model's layers were built in float32, before the policy (MP405's)
            if self._test_under_chosen_policy(step):
                continue
            caller = self._mixed_caller(step) if step.narrowed else None
            if step.narrowed and caller is None and not self._mixed_where_it_runs(loops, step):
                continue  # wrapped under a flag, run when it is off: mixed there only if the policy is
            if step.method == "minimize" and version == 3:
                continue  # Keras 3 has no minimize(); not this rule's finding
            elsewhere = any(loops.wrapped_elsewhere(o.call) for o in step.origins if o.call is not None)
            name = self.ctx.module.code_for_node(step.receiver)
            if step.narrowed:
                message = (f"custom training loop under {why} uses optimizer `{name}` on a branch where it is "
                           f"not wrapped in a LossScaleOptimizer (the wrapping runs under the opposite "
                           f"condition{'' if caller is None else f'; the call at {caller}, under the policy, takes this branch'}): "
                           f"small float16 gradients underflow to zero")
            elif elsewhere:
                message = (f"custom training loop under {why} applies gradients with `{name}`, "
                           f"not with the LossScaleOptimizer that wraps it: small gradients underflow to zero")
            else:
                message = (f"custom training loop under {why} uses optimizer `{name}`, which is never "
                           f"wrapped in a LossScaleOptimizer: small float16 gradients underflow to zero")
            fix = None
            # Narrowed: the code wraps on the other branch; wrapping the creation would wrap twice there.
            if not elsewhere and not step.narrowed and not any(id(o.call) in wrapped for o in step.origins):
                fix = self._fix(loops, step, version)
                if fix is not None:
                    wrapped.update(id(o.call) for o in step.origins)
            self.report(step.call, message, fix)

    def _test_under_chosen_policy(self, step: TrainStep) -> bool:
        """A test module whose policy is chosen at run time (a test flag or parameter):
        its updates are steps compared with a reference under whichever policy the run
        picks, not a training loop whose small gradients are lost over many steps."""
        if not is_test_path(self.ctx.path):
            return False
        policy = self.facts.mixed_policy(step.location.scope)
        return policy is None or not policy.certain

    def _mixed_where_it_runs(self, loops: TrainingLoops, step: TrainStep) -> bool:
        """The step runs only where its conditions leave the optimizer unwrapped: float16
        there needs a mixed policy call of this file that those conditions allow (not
        one under the flag that also wraps), or a policy the configuration assumes. A
        policy set in another module cannot be compared with the step's conditions."""
        if self.facts.assumed_policy in MIXED_POLICIES:
            return True
        return any((call.values is None or call.values & MIXED_POLICIES)
                   and not conflict(loops.conditions.truths(call.branches, call.location), step.assumed)
                   for call in self.facts.policy_calls)

    def _mixed_caller(self, step: TrainStep) -> Optional[str]:
        """The step's conditions are parameters of one function (``self.loss_scale`` set
        from ``Trainer.__init__``'s ``loss_scale``), and a call of it in another module,
        made under a mixed policy, binds them as the step needs (``Trainer(...)`` leaves
        ``loss_scale=False``): that program runs the step unwrapped, in float16. The place
        of the first such call, or None."""
        needs: Dict[str, bool] = {}
        functions: Set[str] = set()
        for key, wanted in step.assumed.items():
            kind, _, rest = key.partition(":")
            function, _, param = rest.rpartition(":")
            if kind != "param" or not function:
                return None  # a flag or a config value: not what the callers pass
            functions.add(function)
            needs[param] = wanted
        if len(functions) != 1:
            return None
        sites = self.facts.project_mixed_calls.get(functions.pop(), [])
        return next((place for place, bound in sites
                     if all(_truth(bound.get(param)) is wanted for param, wanted in needs.items())), None)

    def _fix(self, loops: TrainingLoops, step: TrainStep, version: Optional[int]) -> Optional[Fix]:
        if version is None or version not in (2, 3) or len(step.origins) != 1:
            return None
        origin = step.origins[0]
        if origin.call is None or origin.location is None:
            return None
        wrapping = wrap_creation(self.ctx, loops, origin.call, origin.location)
        if wrapping is None:
            return None
        new_call, imports = wrapping
        edits = StatementEdits()
        if step.method != "minimize":
            if not step.loss_scaled:
                if not add_scaling(self.ctx, step, version, edits):
                    return None
            elif version == 2 and not step.unscaled and not add_unscaling(self.ctx, step, edits):
                return None
        replacements = fix_replacements(edits, [(origin.call, new_call)])
        if replacements is None:
            return None
        return Fix(replacements, safety=Safety.UNSAFE, imports=imports)
