"""MP207: a loss-scaling method the Keras generation in use does not have."""

from __future__ import annotations

from typing import Dict, Optional

import libcst as cst

from mplint.analysis.training import COMPILED, LSO, PLAIN, TrainingLoops, TrainStep
from mplint.rule.check import Check, Fix, Needs
from mplint.rule.levels import Safety
from mplint.semantic.scopes import Location
from mplint.semantic.versions import LOSS_SCALING, KerasAnswer


class WrongKerasGenerationApi(Check):
    rule_id = "MP207"
    requires = (TrainingLoops,)

    #: every finding is a call of one of these methods (apply() only on a LossScaleOptimizer)
    needs = Needs((b"get_scaled_loss", b"get_unscaled_gradients", b"scale_loss", b"minimize",
                   b"LossScaleOptimizer"))

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        #: id(call) -> the line ``g = opt.get_unscaled_gradients(g)`` it makes up (or the
        #: ``if use_amp:`` holding only that line), in a block with other statements:
        #: dropping the unscaling drops that statement whole
        self._self_assignments: Dict[int, cst.BaseStatement] = {}
        #: where the generation came from, for the messages
        self._why = ""
        #: the file's generation, for optimizers not built from one known package
        self._file: Optional[KerasAnswer] = None

    def visit_Module(self, node: cst.Module) -> None:
        self._note_self_assignments(node.body)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._note_self_assignments(node.body)

    def _note_self_assignments(self, body) -> None:
        if len(body) < 2 or "get_unscaled_gradients" not in self.ctx.text:
            return
        for stmt in body:
            line = stmt
            if isinstance(stmt, cst.If) and stmt.orelse is None and len(stmt.body.body) == 1:
                line = stmt.body.body[0]  # `if use_amp:` around it alone goes with it
            call = _self_assignment(line)
            if call is not None:
                self._self_assignments[id(call)] = stmt

    def finish(self) -> None:
        # The calls judged here are no evidence of the generation: a Keras 3 file
        # (keras.ops, pinned TF 2.16+) that calls get_scaled_loss crashes.
        self._file = self.facts.versions.keras(ignoring=frozenset({LOSS_SCALING}))
        loops = self.ctx.get(TrainingLoops)
        if self._file is None or self._file.generation not in (2, 3):
            # Unknown even counting the file's own spelling: either may be right. (Code
            # spelled for one generation and nothing else is silent, without a note.)
            if self.facts.keras_version is None and any(
                    s.method == "minimize" or s.scale_calls or s.unscale_calls for s in loops.steps()):
                self.generation_unknown()
        steps: Dict[int, TrainStep] = {}
        for step in loops.steps():
            for call in [*step.scale_calls, *step.unscale_calls, step.call]:
                steps.setdefault(id(call), step)
        self._keras3(loops, steps)
        self._keras2(loops, steps)

    def _generation(self, loops: TrainingLoops, call: cst.Call, loc: Location, generation: int) -> bool:
        """Whether the optimizer ``call`` is a method of is of ``generation``: the package
        that builds it decides (a ``keras.mixed_precision.LossScaleOptimizer`` in a file
        that also imports tf_keras is Keras 3's), else the file's generation. Sets the why."""
        assert isinstance(call.func, cst.Attribute)
        answer = self._file
        package = loops.built_package(loops.optimizer_origins(call.func.value, loc))
        if package is not None:
            answer = self.facts.versions.keras(ignoring=frozenset({LOSS_SCALING}), package=package)
        if answer is None or answer.generation != generation:
            return False
        self._why = f" (Keras {generation}: {answer.why})"
        return True

    def _keras3(self, loops: TrainingLoops, steps: Dict[int, TrainStep]) -> None:
        for method, replacement in (("get_scaled_loss", "scale_loss"), ("get_unscaled_gradients", None)):
            if method in loops.defined_functions:
                continue  # the project defines its own method of that name
            for call, loc in loops.method_calls.get(method, []):
                assert isinstance(call.func, cst.Attribute)
                if id(call) in loops.guarded:
                    continue  # `if hasattr(opt, "get_scaled_loss"):` runs on both generations
                if not self._generation(loops, call, loc, 3):
                    continue
                if replacement is not None:
                    fixed: cst.BaseExpression = call.with_changes(
                        func=call.func.with_changes(attr=cst.Name(replacement)))
                    advice = f"use {replacement}()"
                else:
                    fixed = _only_argument(call) or call
                    advice = "drop it: apply()/apply_gradients() unscale by themselves"
                safety = Safety.SAFE
                if replacement is None:
                    # Dropping the unscaling is only neutral when the gradients go straight
                    # to apply(): clipping or logging them would now see scaled values.
                    step = steps.get(id(call))
                    safety = Safety.SAFE if step is not None and not step.clipped else Safety.UNSAFE
                fix = None
                line = self._self_assignments.get(id(call)) if replacement is None else None
                if line is not None and "#" not in self.ctx.module.code_for_node(line):
                    # `g = g` would be left: drop the statement (unless a comment goes with it)
                    fix = Fix({line: cst.RemovalSentinel.REMOVE}, safety=safety)
                elif fixed is not call:
                    fix = Fix({call: fixed}, safety=safety)
                self.report(call, f"Keras 3's LossScaleOptimizer has no {method}() (AttributeError at the "
                                  f"first step); {advice}{self._why}", fix)
        for call, loc in loops.method_calls.get("minimize", []):
            assert isinstance(call.func, cst.Attribute)
            if id(call) in loops.guarded or not self._generation(loops, call, loc, 3):
                continue
            kinds = {o.kind for o in loops.optimizer_origins(call.func.value, loc)}
            if kinds and kinds <= {PLAIN, LSO, COMPILED}:
                self.report(call, "Keras 3 optimizers have no minimize() (AttributeError); compute the "
                                  "gradients of optimizer.scale_loss(loss) with a GradientTape and call apply()"
                                  + self._why)

    def _keras2(self, loops: TrainingLoops, steps: Dict[int, TrainStep]) -> None:
        if "scale_loss" not in loops.defined_functions:
            for call, loc in loops.method_calls.get("scale_loss", []):
                assert isinstance(call.func, cst.Attribute)
                if id(call) in loops.guarded or not self._generation(loops, call, loc, 2):
                    continue
                fixed = call.with_changes(func=call.func.with_changes(attr=cst.Name("get_scaled_loss")))
                step = steps.get(id(call))
                # Renaming alone makes the loop run with scaled gradients unless it unscales.
                safety = Safety.SAFE if step is not None and step.unscaled else Safety.UNSAFE
                self.report(call, "Keras 2's LossScaleOptimizer has no scale_loss() (AttributeError at the "
                                  "first step); use get_scaled_loss() and unscale the gradients with "
                                  "get_unscaled_gradients()" + self._why, Fix({call: fixed}, safety=safety))
        for call, loc in loops.method_calls.get("apply", []):
            assert isinstance(call.func, cst.Attribute)
            if id(call) in loops.guarded or not self._generation(loops, call, loc, 2):
                continue
            kinds = {o.kind for o in loops.optimizer_origins(call.func.value, loc)}
            if not kinds or not kinds <= {LSO, COMPILED} or LSO not in kinds:
                continue
            step = steps.get(id(call))
            rewritten = _apply_gradients(call)
            safety = Safety.SAFE if step is not None and (not step.loss_scaled or step.unscaled) else Safety.UNSAFE
            self.report(call, "apply() is the Keras 3 method; Keras 2's LossScaleOptimizer updates through "
                              "apply_gradients(zip(grads, vars))" + self._why,
                        Fix({call: rewritten}, safety=safety) if rewritten is not None else None)


def _self_assignment(line: cst.CSTNode) -> Optional[cst.Call]:
    """The call of a line ``g = f(g)``, else None."""
    if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1
            and isinstance(line.body[0], cst.Assign)):
        return None
    assign = line.body[0]
    target = assign.targets[0].target if len(assign.targets) == 1 else None
    only = _only_argument(assign.value) if isinstance(assign.value, cst.Call) else None
    if isinstance(target, cst.Name) and isinstance(only, cst.Name) and only.value == target.value:
        return assign.value  # type: ignore[return-value]
    return None


def _only_argument(call: cst.Call) -> Optional[cst.BaseExpression]:
    if len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star:
        return call.args[0].value
    return None


def _apply_gradients(call: cst.Call) -> Optional[cst.Call]:
    """``opt.apply(grads, vars)`` -> ``opt.apply_gradients(zip(grads, vars))``."""
    if len(call.args) != 2 or any(a.keyword is not None or a.star for a in call.args):
        return None
    assert isinstance(call.func, cst.Attribute)
    zipped = cst.Call(func=cst.Name("zip"), args=[a.with_changes(comma=call.args[0].comma) if i == 0
                                                  else a.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                                                  for i, a in enumerate(call.args)])
    return call.with_changes(func=call.func.with_changes(attr=cst.Name("apply_gradients")),
                             args=[cst.Arg(zipped)])
