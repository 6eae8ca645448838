"""MP204: gradients taken with GradientTape/tf.gradients while the graph rewrite is on."""

from __future__ import annotations

from typing import Set

from mplint.analysis.training import TrainingLoops
from mplint.rule.check import Check, Needs
from mplint.semantic.facts import REWRITE_CALL
from mplint.semantic.scopes import exclusive


class TapeWithGraphRewrite(Check):
    rule_id = "MP204"
    requires = (TrainingLoops,)

    #: the graph rewrite is enabled in the file (every API for it ends in graph_rewrite)
    needs = Needs((b"graph_rewrite",))

    def finish(self) -> None:
        sites = self.facts.rewrite_sites_of(REWRITE_CALL)
        if not sites:
            return
        seen: Set[int] = set()
        for step in self.ctx.get(TrainingLoops).steps():
            if step.scaling & {"get_scaled_loss", "scale_loss"} and step.unscaled:
                # The rewrite wraps a Keras optimizer in a LossScaleOptimizer: a loop that
                # scales with it and unscales its gradients gets the loss scale.
                continue
            for gradient in step.gradients:
                if id(gradient.call) in seen or all(exclusive(site.branches, gradient.location.branches)
                                                    for site in sites):
                    continue  # ``if amp: <rewrite>`` ... ``if amp: ... else: tf.gradients(...)``
                seen.add(id(gradient.call))
                how = "tf.gradients" if gradient.symbolic else "tf.GradientTape"
                self.report(gradient.call, f"the mixed precision graph rewrite is enabled, but gradients "
                                           f"computed with {how} do not get its loss scale; use the "
                                           f"optimizer's minimize()/compute_gradients(), or a Keras "
                                           f"mixed_float16 policy with a LossScaleOptimizer")
