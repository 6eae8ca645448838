"""MP403: ``mixed_float16`` in a program that runs on TPUs."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from mplint.rule.check import Check, Fix, Needs
from mplint.rule.levels import Safety
from mplint.semantic.call_args import positional_or_keyword
from mplint.semantic.scopes import exclusive
from mplint.semantic.vocabulary import POLICY_CONSTRUCTORS


class Float16OnTpu(Check):
    rule_id = "MP403"

    #: a policy call in a file that names a TPU strategy or resolver
    needs = Needs(policy_call=True, also=(b"TPU",))

    def __init__(self, ctx: object) -> None:
        super().__init__(ctx)  # type: ignore[arg-type]
        #: open ``try`` statements: [id, walking its handlers]
        self._tries: List[List[object]] = []
        #: call id -> (try id, in a handler) for every try holding the call
        self._in_try: Dict[int, Tuple[Tuple[int, bool], ...]] = {}

    def visit_Try(self, node: cst.Try) -> None:
        self._tries.append([id(node), False])

    def leave_Try(self, node: cst.Try) -> None:
        self._tries.pop()

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if self._tries:
            self._tries[-1][1] = True

    def visit_Call(self, node: cst.Call) -> None:
        if self._tries:
            self._in_try[id(node)] = tuple((int(t), bool(h)) for t, h in self._tries)  # type: ignore[call-overload]

    def _after_failed_probe(self, call: cst.CSTNode, tpu: cst.CSTNode) -> bool:
        """The policy is set in an ``except`` of the ``try`` that looks for the TPU:
        it runs only when there is none (``try: TPUClusterResolver() ... except:``)."""
        handlers = {t for t, handler in self._in_try.get(id(call), ()) if handler}
        return any(t in handlers for t, handler in self._in_try.get(id(tpu), ()) if not handler)

    def finish(self) -> None:
        facts = self.facts
        if not facts.tpu_sites:
            return
        # Any bfloat16 choice in the program means the policy follows the hardware
        # (`'mixed_bfloat16' if tpu else 'mixed_float16'`, or if/else branches).
        if any(c.values is None or "mixed_bfloat16" in c.values for c in facts.policy_calls):
            return
        for call in facts.policy_calls:
            if call.values != frozenset({"mixed_float16"}):
                continue
            # A float16 policy only on the branch that does not build the TPU strategy.
            if all(exclusive(call.branches, tpu.branches) or self._after_failed_probe(call.node, tpu.node)
                   for tpu in facts.tpu_sites):
                continue
            self.report(
                call.node,
                "mixed_float16 in a program that uses a TPU (TPUStrategy/TPUClusterResolver): "
                "TPUs compute in bfloat16 and need no loss scaling; use 'mixed_bfloat16'",
                self._fix(call.node),
            )

    def _fix(self, call: cst.CSTNode) -> Optional[Fix]:
        """Swap the literal for 'mixed_bfloat16' when the call spells it out."""
        assert isinstance(call, cst.Call)
        literal = positional_or_keyword(call, 0, "policy")
        if isinstance(literal, cst.Call) and self.names.resolve(literal.func) & POLICY_CONSTRUCTORS:
            literal = positional_or_keyword(literal, 0, "name")
        if not isinstance(literal, cst.SimpleString) or literal.evaluated_value != "mixed_float16":
            return None
        quote = literal.value[len(literal.prefix)]
        new = literal.with_changes(value=f"{literal.prefix}{quote}mixed_bfloat16{quote}")
        return Fix({literal: new}, safety=Safety.SAFE)
