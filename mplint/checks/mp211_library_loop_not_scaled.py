"""MP211: a float16 program trains through a third-party training loop that never scales the loss."""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from mplint.rule.check import Check, Context, Needs
from mplint.semantic.call_args import positional_or_keyword
from mplint.semantic.scopes import Location, trains_nothing
from mplint.semantic.vocabulary import LIBRARY_MIXED_SWITCHES, LIBRARY_PACKAGES, UNSCALED_LIBRARY_TRAINERS

_MAX_DEPTH = 8


class LibraryLoopNotScaled(Check):
    rule_id = "MP211"

    #: one of these libraries is named in the file, under a mixed policy or with the
    #: library's own switch ("mixed") spelled out
    needs = Needs(tuple(v.encode() for v in LIBRARY_MIXED_SWITCHES.values()), mixed_policy=True,
                  also=tuple(p.encode() for p in LIBRARY_PACKAGES))

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        #: ``<receiver>.<method>(...)`` calls that may train: (call, location)
        self._trains: List[Tuple[cst.Call, Location]] = []
        #: the library's own mixed switches turned on here: (call, what it calls, location)
        self._switches: List[Tuple[cst.Call, str, Location]] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        loc = self.ctx.scopes.location()
        if isinstance(func, cst.Attribute) and func.attr.value in UNSCALED_LIBRARY_TRAINERS.values():
            self._trains.append((node, loc))
        for name in self.names.resolve(func) & LIBRARY_MIXED_SWITCHES.keys():
            value = positional_or_keyword(node, 0, "value")
            if value is not None and self.ctx.values.values(value, loc) == frozenset({LIBRARY_MIXED_SWITCHES[name]}):
                self._switches.append((node, name, loc))

    def finish(self) -> None:
        for call, loc in self._trains:
            assert isinstance(call.func, cst.Attribute)
            trainer = self._trainer(call.func.value, loc, 0)
            if trainer is None or UNSCALED_LIBRARY_TRAINERS[trainer] != call.func.attr.value:
                continue
            why = self._float16_why(loc)
            if why is None or trains_nothing(loc.scope, self.ctx.module, self.ctx.path):
                continue
            library = trainer.split(".", 1)[0]
            receiver = " ".join(self.ctx.module.code_for_node(call.func.value).split())
            self.report(call, f"`{receiver}.{call.func.attr.value}()` trains with {library}'s own loop, which "
                              f"never scales the loss (no LossScaleOptimizer, no scale_loss), under {why}: "
                              f"gradients below float16's 6e-8 flush to zero and those weights stop learning; "
                              f"train in float32, or in a loop of your own that scales the loss")

    def _float16_why(self, loc: Location) -> Optional[str]:
        """What makes the code at ``loc`` compute in float16: a mixed_float16 policy in
        effect, or the library's own mixed switch turned on in this file."""
        policy = self.facts.mixed_policy(loc.scope)
        if policy is not None and policy.float16:
            return "mixed_float16" + policy.note
        for switch, name, _ in self._switches:
            value = " ".join(self.ctx.module.code_for_node(switch.args[0].value).split())
            return f"the library's own mixed precision ({name.rsplit('.', 1)[-1]}({value}))"
        return None

    def _trainer(self, expr: cst.BaseExpression, loc: Location, depth: int) -> Optional[str]:
        """The trainer class ``expr`` is an instance of (``model = dde.Model(data, net)``),
        followed through names bound once; None when not certain."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, cst.Call):
            found = self.names.resolve(expr.func) & UNSCALED_LIBRARY_TRAINERS.keys()
            return min(found) if found else None
        if isinstance(expr, cst.Name):
            binding = loc.lookup(expr.value)
            if binding is None or binding.kind != "assign" or binding.value is None or binding.scope is None:
                return None
            return self._trainer(binding.value, binding.location(), depth + 1)
        return None
