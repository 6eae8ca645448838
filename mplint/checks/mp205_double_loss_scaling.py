"""MP205: a LossScaleOptimizer wrapped again, or passed to the graph rewrite."""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from mplint.analysis.training import LSO, OptimizerOrigin, TrainingLoops, lso_argument
from mplint.rule.check import Check, Fix, Needs
from mplint.rule.levels import Safety
from mplint.semantic.call_args import positional_or_keyword
from mplint.semantic.facts import REWRITE_CALL
from mplint.semantic.scopes import separate_options


class DoubleLossScaling(Check):
    rule_id = "MP205"
    requires = (TrainingLoops,)

    #: both findings need a LossScaleOptimizer built in the file
    needs = Needs((b"LossScaleOptimizer",))

    def finish(self) -> None:
        loops = self.ctx.get(TrainingLoops)
        for call, loc in loops.lso_calls:
            inner = lso_argument(call)
            if inner is None:
                continue
            wrapped = [o for o in loops.optimizer_origins(inner, loc) if o.kind == LSO]
            if not wrapped:
                continue
            self.report(call, "this LossScaleOptimizer wraps another LossScaleOptimizer: Keras 2 raises "
                              "TypeError, Keras 3 accepts it and divides every gradient by the inner loss "
                              "scale too; wrap the optimizer once", self._unwrap(inner, wrapped, call))
        for site in self.facts.rewrite_sites_of(REWRITE_CALL):
            rewrite, loc = site.node, site.location
            assert isinstance(rewrite, cst.Call)
            opt = positional_or_keyword(rewrite, 0, "opt")
            if opt is None:
                continue
            wrapped = [o for o in loops.optimizer_origins(opt, loc) if o.kind == LSO
                       and not (o.location is not None and separate_options(
                           o.location.branches, o.location.scope, site.branches, loc.scope))]
            if wrapped:
                self.report(rewrite, "a LossScaleOptimizer is passed to the mixed precision graph rewrite, "
                                  "which raises ValueError; the rewrite adds its own loss scaling",
                            self._unwrap(opt, wrapped, None))

    @staticmethod
    def _unwrap(inner: cst.BaseExpression, wrapped: List[OptimizerOrigin],
                outer: Optional[cst.Call]) -> Optional[Fix]:
        """Remove the inner wrapping: ``LSO(LSO(x))`` -> ``LSO(x)``; ``o = LSO(x())`` -> ``o = x()``.
        An inner wrapping made by a factory function (``LSO(make_optimizer())``) serves its
        other callers too: the outer one goes instead."""
        if len(wrapped) != 1:
            return None
        origin: OptimizerOrigin = wrapped[0]
        if origin.call is None:
            return None
        if origin.returned:
            if outer is None or len(outer.args) != 1 or outer.args[0].star:
                return None  # the outer wrapper's own settings would be lost with it
            return Fix({outer: inner}, safety=Safety.UNSAFE)
        unwrapped = lso_argument(origin.call)
        if unwrapped is None or (origin.call is not inner and not isinstance(unwrapped, cst.Call)):
            return None  # `o = LSO(o)` would become `o = o`
        return Fix({origin.call: unwrapped}, safety=Safety.UNSAFE)

