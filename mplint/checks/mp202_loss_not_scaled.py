"""MP202: a LossScaleOptimizer applies gradients of a loss that was never scaled."""

from __future__ import annotations

from typing import Optional

from mplint.analysis.loss_scale_fixes import StatementEdits, add_scaling, fix_replacements
from mplint.analysis.training import COMPILED, FACTOR, LSO, TrainingLoops, TrainStep, compiled_is_wrapped
from mplint.rule.check import Check, Fix, Needs
from mplint.rule.levels import Safety


class LossNotScaled(Check):
    rule_id = "MP202"
    requires = (TrainingLoops,)

    #: the optimizer scales through a LossScaleOptimizer, loss_scale_factor, or compile() under a mixed policy
    needs = Needs((b"LossScaleOptimizer", b"loss_scale_factor"), mixed_policy=True)

    def finish(self) -> None:
        loops = self.ctx.get(TrainingLoops)
        version = self.facts.keras_version
        for step in loops.steps():
            if step.method == "minimize" or step.loss_scaled or not step.gradients:
                continue  # minimize() scales by itself (Keras 2)
            kinds = step.kinds
            scale = "the loss scale (32768 at first)"
            if LSO in kinds:
                how = "is a LossScaleOptimizer"
            elif FACTOR in kinds:
                how, scale = "has a loss_scale_factor (its apply() divides by it)", "the loss_scale_factor"
            elif COMPILED in kinds and kinds <= {COMPILED} and compiled_is_wrapped(self.ctx, loops, step.location.scope):
                how = "is the LossScaleOptimizer that compile() wraps around it under mixed_float16"
            else:
                continue
            name = self.ctx.module.code_for_node(step.receiver)
            if version not in (2, 3):
                self.generation_unknown()  # the fix differs by generation
            effect = {
                3: f"Keras 3 divides every gradient by {scale} in "
                   f"{step.method}(), so the model barely trains",
                2: "the gradients get no loss scaling and small ones underflow to zero",
            }.get(version or 0, "the gradients are not loss-scaled (Keras 3 even divides them by the scale)")
            self.report(step.call, f"`{name}` {how}, but the loss differentiated here is not scaled: "
                                   f"{effect}; scale the loss inside the tape", self._fix(step, version))

    def _fix(self, step: TrainStep, version: Optional[int]) -> Optional[Fix]:
        if version is None or version not in (2, 3):
            return None
        edits = StatementEdits()
        if not add_scaling(self.ctx, step, version, edits):
            return None
        replacements = fix_replacements(edits, [])
        return Fix(replacements, safety=Safety.UNSAFE) if replacements else None
