"""MP202: a LossScaleOptimizer applies gradients of a loss that was never scaled."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

from mplint.analysis.loss_scale_fixes import StatementEdits, add_scaling, fix_replacements, path_guard
from mplint.analysis.training import (
    COMPILED, FACTOR, LSO, PLAIN, UNKNOWN_OPTIMIZER, UPDATE_WORDS, TrainingLoops, TrainStep, compiled_is_wrapped,
)
from mplint.rule.check import Check, Fix, Needs
from mplint.rule.levels import Safety
from mplint.semantic.scopes import function_key

if TYPE_CHECKING:  # pragma: no cover
    from mplint.core.prefilter import Prescan


#: a module's code naming the mixed_float16 policy (a string literal) or the LossScaleOptimizer
_NAMES_FLOAT16 = re.compile(r"""["']mixed_float16["']|\bLossScaleOptimizer\b""")


class LossNotScaled(Check):
    rule_id = "MP202"
    requires = (TrainingLoops,)

    #: the optimizer scales through a LossScaleOptimizer, loss_scale_factor, or compile() under a mixed
    #: policy; or the loop scales a loss itself (a term may be added after the scaling); or
    #: a library module that names mixed_float16 (its users set it)
    needs = Needs((b"LossScaleOptimizer", b"loss_scale_factor", b"get_scaled_loss", b"scale_loss", b"mixed_float16"),
                  mixed_policy=True, also=UPDATE_WORDS)

    @classmethod
    def may_report(cls, file: "Prescan") -> bool:
        # also where a method drops the loss scaling of the base method it overrides
        return super().may_report(file) or file.drops_base_scaling

    def finish(self) -> None:
        loops = self.ctx.get(TrainingLoops)
        version = self.facts.keras_version
        for step in loops.steps():
            if step.loss_scaled and step.method != "minimize":
                self._report_unscaled_terms(loops, step)
            if step.method == "minimize" or step.loss_scaled or not step.gradients:
                continue  # minimize() scales by itself (Keras 2)
            kinds = step.kinds
            scale = "the loss scale (32768 at first)"
            some_paths = False
            if LSO in kinds:
                some_paths = kinds != {LSO}
                how = "is a LossScaleOptimizer on some paths" if some_paths else "is a LossScaleOptimizer"
            elif FACTOR in kinds:
                how, scale = "has a loss_scale_factor (its apply() divides by it)", "the loss_scale_factor"
            elif COMPILED in kinds and kinds <= {COMPILED} \
                    and compiled_is_wrapped(self.ctx, loops, step.location.scope, chosen=True):
                how = "is the LossScaleOptimizer that compile() wraps around it under mixed_float16"
                policy = self.facts.mixed_policy(step.location.scope)
                if policy is not None and not policy.certain:
                    how += policy.note
                elif policy is not None and len(policy.names) > 1:
                    how += " (where the program picks it over mixed_bfloat16)"
            elif COMPILED in kinds and kinds <= {COMPILED} and self._library_train_step(loops, step):
                how = ("is the LossScaleOptimizer that compile() wraps around it under mixed_float16 (a library's "
                       "code that expects mixed_float16 users: its users may run it under that policy)")
                some_paths = True  # a plain optimizer where they do not: the fix needs a guard
            elif kinds <= {UNKNOWN_OPTIMIZER, COMPILED} and not step.unscaled and self._overridden(step):
                self._report_override(step, version)
                continue
            else:
                continue
            name = self.ctx.module.code_for_node(step.receiver)
            if version not in (2, 3):
                self.generation_unknown()  # the fix differs by generation
            effect = {
                3: f"Keras 3 divides every gradient by {scale} in "
                   f"{step.method}(), so the model barely trains",
                2: "get_unscaled_gradients() then divides the never-scaled gradients by the loss scale "
                   "(32768 at first), so the model barely trains" if step.unscale_calls else
                   "the never-scaled gradients are then divided by the loss scale (32768 at first), "
                   "so the model barely trains" if step.divisions else
                   "the gradients get no loss scaling and small ones underflow to zero",
            }.get(version or 0, "the gradients are not loss-scaled (Keras 3 even divides them by the scale)")
            # On some paths only: a plain Keras 2 optimizer has no scaling method, so the fix
            # scales under the code's own guard, or is left out. Every Keras 3 optimizer has
            # scale_loss() (a plain one returns the loss as it is): no guard needed there.
            if some_paths and not (version == 3 and kinds - {LSO} <= {PLAIN, FACTOR}):
                guard = path_guard(self.ctx, step)
                fix = None if guard is None else self._fix(step, version, guard)
            else:
                fix = self._fix(step, version)
            self.report(step.call, f"`{name}` {how}, but the loss differentiated here is not scaled: "
                                   f"{effect}; scale the loss inside the tape", fix)

    def _library_train_step(self, loops: TrainingLoops, step: TrainStep) -> bool:
        """A ``train_step`` override of a library's model, which no program of the project
        runs under a policy, in a module that names the mixed_float16 policy or the
        LossScaleOptimizer itself (``Policy("mixed_float16")``, an ``isinstance`` test):
        the library expects users who set it, and their ``compile()`` wraps the
        optimizer that this step hands unscaled gradients."""
        facts = self.facts
        if not facts.library or facts.policy_calls or facts.assumed_policy is not None or loops.auto_scale_off \
                or facts.mixed_policy(step.location.scope) is not None:
            return False
        if function_key(step.location.scope).rpartition(".")[2] != "train_step":
            return False
        return _NAMES_FLOAT16.search(self.ctx.text) is not None

    def _report_unscaled_terms(self, loops: TrainingLoops, step: TrainStep) -> None:
        """A term added to the loss after it was scaled: the unscaling that follows (the
        loop's own, or Keras 3's ``apply()`` of a LossScaleOptimizer) divides its gradient
        by the loss scale too."""
        divides = "get_unscaled_gradients() then divides" if step.unscale_calls else \
            "the unscaling then divides" if step.divisions else \
            "apply() then divides" if "scale_loss" in step.scaling and step.kinds & {LSO, FACTOR} else None
        if divides is None:
            return  # gradients left scaled: MP203's to say
        for term in loops.unscaled_addends(step):
            text = self.ctx.module.code_for_node(term)
            self.report(term, f"`{text}` is added to the loss after the loss was scaled, so it is not scaled: "
                              f"{divides} its gradient by the loss scale (32768 at first) as well, and that "
                              f"term barely trains; scale the whole sum (add it before the scaling call)")

    def _overridden(self, step: TrainStep) -> bool:
        """The step's method overrides a base method that scales the loss of this same
        optimizer (``optimizer``, ``self.optimizer``) and drops the scaling."""
        found = self.facts.project_scaling_overrides.get(function_key(step.location.scope))
        return found is not None and found[2] == self.ctx.module.code_for_node(step.receiver)

    def _report_override(self, step: TrainStep, version: Optional[int]) -> None:
        where, base, receiver = self.facts.project_scaling_overrides[function_key(step.location.scope)]
        effect = {3: f"Keras 3's {step.method}() then divides every gradient by the loss scale, so the model "
                     "barely trains",
                  2: "the gradients then get no loss scaling, and small float16 ones underflow to zero"}.get(
            version or 0, "the gradients are then not loss-scaled (Keras 3 even divides them by the scale)")
        # No fix: the base scales only when the optimizer is a LossScaleOptimizer, and
        # a plain optimizer has no scaling method; the guard has to be copied by hand.
        self.report(step.call, f"this method overrides {base}(), which scales the loss when `{receiver}` "
                               f"is a LossScaleOptimizer ({where}), but it differentiates an unscaled loss: "
                               f"{effect}; scale it as {base}() does, or call super()")

    def _fix(self, step: TrainStep, version: Optional[int], guard: Optional[str] = None) -> Optional[Fix]:
        if version is None or version not in (2, 3):
            return None
        edits = StatementEdits()
        if not add_scaling(self.ctx, step, version, edits, guard):
            return None
        replacements = fix_replacements(edits, [])
        return Fix(replacements, safety=Safety.UNSAFE) if replacements else None
