"""MP209: a second gradient (gradient penalty, double backprop) taken without loss scaling.

An *inner* gradient is a ``tape.gradient`` on one tape whose result flows into the
target another tape differentiates, computed while that other tape records: directly
in the same function, or through the return value of a helper function or method of
the file (``self.gradient_penalty(...)``) called inside the outer tape's block. An
input gradient taken before the outer tape starts (FGSM) is not differentiated again.
Under float16 its backward pass needs loss scaling as much as the outer one does.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

import os

from mplint.analysis.imported_clips import imported_inner_gradient
from mplint.analysis.training import Gradient, TrainingLoops, contains, float16_source
from mplint.rule.check import Check, Context, Needs
from mplint.semantic.scopes import Location, local_function

#: how many helper calls deep an inner gradient is looked for
_MAX_HELPER_DEPTH = 2


class InnerGradientNotScaled(Check):
    rule_id = "MP209"
    requires = (TrainingLoops,)

    #: float16 compute (a mixed policy or the grappler option), and two tapes to nest
    needs = Needs((b"auto_mixed_precision",), mixed_policy=True, also=(b"GradientTape",))

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        #: id of a function node -> its ``return`` statements and where they are
        self._returns: Dict[int, List[Tuple[cst.Return, Location]]] = {}
        #: calls with a name among their arguments (one may be a tape handed on)
        self._calls: List[Tuple[cst.Call, Location]] = []

    def visit_Call(self, node: cst.Call) -> None:
        if any(isinstance(arg.value, cst.Name) for arg in node.args):
            self._calls.append((node, self.ctx.scopes.location()))

    def visit_Return(self, node: cst.Return) -> None:
        where = self.ctx.scopes.location()
        if isinstance(where.scope.node, cst.FunctionDef) and node.value is not None:
            self._returns.setdefault(id(where.scope.node), []).append((node, where))

    def finish(self) -> None:
        loops = self.ctx.get(TrainingLoops)
        gradients = [g for g in loops.gradients() if not g.symbolic and g.tape_block is not None]
        by_call = {id(g.call): g for g in gradients}
        reported: Set[int] = set()
        outers = [(g.target, g.location, g.tape_block) for g in gradients]
        outers += self._handed_tapes(loops)
        for target, location, block in outers:
            if target is None or block is None:
                continue
            for inner, anchor in self._inner_gradients(loops, target, location, by_call, 0):
                if (inner.tape_block is block or id(inner.call) in reported
                        or inner.target is None or not contains(block, anchor)):
                    continue
                how, _ = loops.scaling_of(inner.target, inner.location)
                if how:
                    continue  # scaled by a loss-scaling method or by hand
                why = float16_source(self.ctx, loops, inner.location.scope)
                if why is None:
                    continue  # float32 or bfloat16: nothing to scale
                reported.add(id(inner.call))
                tape = self.ctx.module.code_for_node(inner.call.func)
                self.report(inner.call, (
                    f"second gradient taken without loss scaling under {why}: `{tape}()` feeds the loss "
                    f"of an outer tape (a gradient penalty or other double backprop), and its backward "
                    f"pass through the float16 layers has no loss scale to keep small values from "
                    f"flushing to zero; multiply its target by a loss scale inside the tape and divide "
                    f"the gradients it returns by the same scale"))
        for target, location, block in outers:
            if target is not None and block is not None:
                self._imported_inner(loops, target, location, block, reported)

    def _imported_inner(self, loops: TrainingLoops, target: cst.BaseExpression, loc: Location,
                        block: cst.With, reported: Set[int]) -> None:
        """A call inside the outer tape's block of a function of another project module
        whose result is computed from a second gradient it takes without loss scaling
        (``d_loss += gp_weight * gradient_penalty(critic, real, fake)``): reported at the
        call, since that module's code is right on its own when nothing differentiates it
        again."""
        for node in loops.flow(target, loc):
            if not isinstance(node, cst.Call) or id(node) in reported or not contains(block, node) \
                    or _helper(node, loc) is not None:
                continue
            found = imported_inner_gradient(self.ctx, node, TrainingLoops, loc)
            if found is None:
                continue
            why = float16_source(self.ctx, loops, loc.scope)
            if why is None:
                continue
            reported.add(id(node))
            callee = self.ctx.module.code_for_node(node.func)
            self.report(node, (
                f"second gradient taken without loss scaling under {why}: `{callee}()` returns a value "
                f"computed from the gradient it takes at {os.path.basename(found[0])}:{found[1]}, which "
                f"feeds the loss of this outer tape (a gradient penalty or other double backprop); its "
                f"backward pass through the float16 layers has no loss scale to keep small values from "
                f"flushing to zero; multiply its target by a loss scale inside that tape and divide the "
                f"gradients it returns by the same scale"))

    def _handed_tapes(self, loops: TrainingLoops) -> List[Tuple[Optional[cst.BaseExpression], Location, Optional[cst.With]]]:
        """Outer gradients taken elsewhere: a call handed a recording tape and the values
        to differentiate (``self.optimizer.update(model, scaled_loss, tape)``, a method of
        another module's object). Each other argument is a target. A function of this
        file that never calls ``.gradient(`` on what it is handed is no such call."""
        out: List[Tuple[Optional[cst.BaseExpression], Location, Optional[cst.With]]] = []
        for call, where in self._calls:
            tapes = [arg for arg in call.args if isinstance(arg.value, cst.Name)
                     and loops.tape_block(arg.value, where) is not None]
            if not tapes or _is_tape_method(call, tapes[0].value):
                continue
            helper = _helper(call, where)
            if helper is not None and ".gradient(" not in self.ctx.module.code_for_node(helper):
                continue
            block = loops.tape_block(tapes[0].value, where)
            out += [(arg.value, where, block) for arg in call.args if arg not in tapes]
        return out

    def _inner_gradients(self, loops: TrainingLoops, target: cst.BaseExpression, loc: Location,
                         by_call: Dict[int, Gradient], depth: int) -> List[Tuple[Gradient, cst.Call]]:
        """Gradients the value of ``target`` is computed from, here or in helpers it calls,
        each with the call in ``target``'s function that computes it (itself, or the helper's)."""
        found: List[Tuple[Gradient, cst.Call]] = []
        for node in loops.flow(target, loc):
            if not isinstance(node, cst.Call):
                continue
            gradient = by_call.get(id(node))
            if gradient is not None:
                found.append((gradient, node))
            elif depth < _MAX_HELPER_DEPTH:
                helper = _helper(node, loc)
                for ret, where in self._returns.get(id(helper), []) if helper is not None else []:
                    assert ret.value is not None
                    found.extend((g, node) for g, _ in
                                 self._inner_gradients(loops, ret.value, where, by_call, depth + 1))
        return found


def _is_tape_method(call: cst.Call, tape: cst.BaseExpression) -> bool:
    """``tape.gradient(tape2, ...)``-like calls on a tape (not a hand-off)."""
    func = call.func
    return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
        and isinstance(tape, cst.Name) and func.value.value == tape.value


def _helper(call: cst.Call, loc: Location) -> Optional[cst.FunctionDef]:
    """The function of this file a call runs: ``helper(...)`` or ``self.method(...)``."""
    binding = local_function(call, loc)
    return binding.node if binding is not None and isinstance(binding.node, cst.FunctionDef) else None
