"""MP203: Keras 2 scales the loss with get_scaled_loss but never unscales the gradients."""

from __future__ import annotations

from mplint.analysis.loss_scale_fixes import unscaling_fix
from mplint.analysis.training import TrainingLoops
from mplint.rule.check import Check, Needs


class GradientsNotUnscaled(Check):
    rule_id = "MP203"
    requires = (TrainingLoops,)

    #: only a loop that calls get_scaled_loss() is reported
    needs = Needs((b"get_scaled_loss",))

    def finish(self) -> None:
        if self.facts.keras_version == 3:
            return  # Keras 3 has no get_scaled_loss: MP207 reports it
        for step in self.ctx.get(TrainingLoops).steps():
            if (step.method == "minimize" or "get_scaled_loss" not in step.scaling
                    or step.unscaled or step.handed_on or not step.gradients):
                continue  # (a helper of another module handed the optimizer may unscale them)
            name = self.ctx.module.code_for_node(step.receiver)
            fix = unscaling_fix(self.ctx, step)
            self.report(step.call, f"the loss is scaled with get_scaled_loss() but the gradients reach "
                                   f"{step.method}() still scaled; call `{name}.get_unscaled_gradients()` "
                                   f"on them first (Keras 2 does not unscale in apply_gradients)", fix)
