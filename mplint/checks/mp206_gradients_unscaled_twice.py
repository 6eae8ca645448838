"""MP206: loss-scale bookkeeping written for the other Keras generation.

Keras 3: gradients divided by the loss scale by hand before ``apply``/``apply_gradients``,
which unscale again. Keras 2: ``scale_loss`` (Keras 3 style) with no unscaling, so
``apply_gradients`` gets scaled gradients.
"""

from __future__ import annotations

import os

from typing import Set

from mplint.analysis.loss_scale_fixes import unscaling_fix
from mplint.analysis.training import COMPILED, LSO, UPDATE_WORDS, TrainingLoops, compiled_is_wrapped
from mplint.rule.check import Check, Fix, Needs
from mplint.rule.levels import Safety


class GradientsUnscaledTwice(Check):
    rule_id = "MP206"
    requires = (TrainingLoops,)

    #: Keras 3: a LossScaleOptimizer, or compile()'s under a mixed policy; Keras 2: scale_loss()
    needs = Needs((b"LossScaleOptimizer", b"scale_loss"), mixed_policy=True, also=UPDATE_WORDS)

    def finish(self) -> None:
        loops = self.ctx.get(TrainingLoops)
        seen: Set[int] = set()
        for step in loops.steps():
            if step.method == "minimize":
                continue
            version = self.facts.keras_version
            package = loops.built_package(step.origins)
            if package is not None:  # the package that builds the optimizer decides its generation
                answer = self.facts.versions.keras(package=package)
                version = answer.generation if answer is not None else None
            name = self.ctx.module.code_for_node(step.receiver)
            if version == 3:
                wrapped = LSO in step.kinds or (
                    step.kinds == {COMPILED} and compiled_is_wrapped(self.ctx, loops, step.location.scope))
                if not wrapped:
                    continue
                for division in step.divisions:
                    if id(division) in seen:
                        continue
                    seen.add(id(division))
                    self.report(division, f"gradients divided by the loss scale by hand, but Keras 3's "
                                          f"`{name}.{step.method}()` unscales them again: every update is "
                                          f"divided by the scale twice",
                                Fix({division: division.left}, safety=Safety.UNSAFE))
                for call, unscaling in step.helper_unscales:
                    if id(call) in seen:
                        continue
                    seen.add(id(call))
                    helper = self.ctx.module.code_for_node(call.func)
                    where = os.path.basename(unscaling.path)  # named as MP208 names a clipping helper
                    self.report(call, f"`{helper}()` ({where}) divides the gradients by the loss scale, but "
                                      f"Keras 3's `{name}.{step.method}()` unscales them again: every update is "
                                      f"divided by the scale twice")
            elif version is None and (step.divisions or "scale_loss" in step.scaling):
                self.generation_unknown()  # hand unscaling is right on Keras 2, wrong on 3
            elif version == 2 and "scale_loss" in step.scaling and not step.unscaled:
                fix = unscaling_fix(self.ctx, step)
                self.report(step.call, f"Keras 3-style loss scaling (scale_loss) on Keras 2: Keras 2 does "
                                       f"not unscale in apply_gradients(), so `{name}` updates with gradients "
                                       f"multiplied by the loss scale; unscale them with "
                                       f"get_unscaled_gradients()", fix)
