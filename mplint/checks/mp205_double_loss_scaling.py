"""MP205: a LossScaleOptimizer wrapped again, or passed to the graph rewrite."""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from mplint.analysis.training import LSO, OptimizerOrigin, TrainingLoops, lso_argument
from mplint.core.find_nodes import find_all
from mplint.rule.check import Check, Fix, Needs
from mplint.rule.levels import Safety
from mplint.semantic.call_args import positional_or_keyword
from mplint.semantic.facts import REWRITE_CALL
from mplint.semantic.scopes import Location, separate_options
from mplint.semantic.vocabulary import LOSS_SCALE_OPTIMIZERS


def _contains(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Whether ``node`` is ``tree`` or inside it."""
    found = False

    class _Finder(cst.CSTVisitor):
        def on_visit(self, visited: cst.CSTNode) -> bool:
            nonlocal found
            found = found or visited is node
            return not found

    tree.visit(_Finder())
    return found


def _returns(statement: cst.BaseStatement) -> bool:
    """A ``return`` (or ``raise``) statement line."""
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, (cst.Return, cst.Raise)) for small in statement.body)


def _handler_of_failed(made: cst.Call, use: cst.Call, module: cst.Module) -> bool:
    """``use`` lies in an ``except`` handler of a ``try`` whose last statement makes
    ``made`` (``try: opt = LSO(opt)`` / ``except AttributeError: opt = experimental.LSO(opt)``):
    the handler runs only when that statement failed, so what it binds never reaches it."""
    for node in find_all(module, cst.Try):
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
        if body and _contains(body[-1], made) and any(_contains(h, use) for h in node.handlers):
            return True
    return False


class DoubleLossScaling(Check):
    rule_id = "MP205"
    requires = (TrainingLoops,)

    #: both findings need a LossScaleOptimizer built in the file
    needs = Needs((b"LossScaleOptimizer",))

    def finish(self) -> None:
        loops = self.ctx.get(TrainingLoops)
        for call, loc in loops.lso_calls:
            inner = lso_argument(call)
            if inner is None or self._guarded(call, inner, loc):
                continue
            sites = self._helper_calls(loops, inner, loc)
            if sites:
                # a wrapping helper (``def with_loss_scale(opt): return LSO(opt)``): the call
                # that hands it an optimizer wrapped already is the mistake, not the helper
                for helper_call, argument, where in sites:
                    wrapped = [o for o in loops.optimizer_origins(argument, where) if o.kind == LSO]
                    if wrapped:
                        self.report(helper_call, "this call wraps an optimizer that is a LossScaleOptimizer already "
                                          "in another one (the helper it calls wraps its argument): Keras 2 "
                                          "raises TypeError, Keras 3 accepts it and divides every gradient by "
                                          "the inner loss scale too; wrap the optimizer once",
                                    self._unwrap(argument, wrapped, helper_call))
                continue
            wrapped = [o for o in loops.optimizer_origins(inner, loc) if o.kind == LSO
                       and not (o.call is not None and _handler_of_failed(o.call, call, self.ctx.module))]
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
    def _helper_calls(loops: TrainingLoops, inner: cst.BaseExpression,
                      loc: Location) -> List[Tuple[cst.Call, cst.BaseExpression, Location]]:
        """The calls of the helper whose parameter ``inner`` is, with what each passes for
        it (none unless the helper's every caller is known: see ``TrainingLoops.passed``)."""
        if not isinstance(inner, cst.Name):
            return []
        binding = loc.lookup(inner.value)
        if binding is None or binding.kind != "param" or binding.scope is not loc.scope:
            return []
        return loops.passed(binding)

    def _guarded(self, call: cst.Call, inner: cst.BaseExpression, loc: Location) -> bool:
        """``if isinstance(opt, LossScaleOptimizer): return opt`` before ``LSO(opt)`` in
        the same function, or ``LSO(opt)`` under ``if not isinstance(opt, ...)`` (or in
        the ``else`` of ``if isinstance``): the wrapping runs only for an optimizer not
        yet wrapped."""
        if isinstance(inner, cst.Name):
            # ``if not isinstance(opt, LossScaleOptimizer): opt = LossScaleOptimizer(opt)``
            for _, arm, test in loc.branches:
                wanted = arm == "body"
                while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                    test, wanted = test.expression, not wanted
                if not wanted and self._isinstance_of_lso(test, inner.value):
                    return True
        function = loc.scope.node
        if not isinstance(inner, cst.Name) or not isinstance(function, cst.FunctionDef) \
                or not isinstance(function.body, cst.IndentedBlock):
            return False
        for statement in function.body.body:
            if _contains(statement, call):
                return False
            if isinstance(statement, cst.If) and self._isinstance_of_lso(statement.test, inner.value) \
                    and isinstance(statement.body, cst.IndentedBlock) and statement.body.body \
                    and _returns(statement.body.body[-1]):
                return True
        return False

    def _isinstance_of_lso(self, test: cst.BaseExpression, name: str) -> bool:
        if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
                and len(test.args) == 2 and isinstance(test.args[0].value, cst.Name)
                and test.args[0].value.value == name):
            return False
        classes = test.args[1].value
        elements = [e.value for e in classes.elements] if isinstance(classes, cst.Tuple) else [classes]
        return any(self.ctx.names.resolve(e) & LOSS_SCALE_OPTIMIZERS for e in elements)

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

