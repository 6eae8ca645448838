"""MP403: ``mixed_float16`` in a program that runs on TPUs."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from mplint.analysis.models import argument
from mplint.rule.check import Check, Fix, Needs
from mplint.semantic.scopes import exclusive
from mplint.semantic.values import POLICY_CONSTRUCTORS


class Float16OnTpu(Check):
    rule_id = "MP403"

    #: a policy call in a file that names a TPU strategy or resolver
    needs = Needs(policy_call=True, also=(b"TPU",))

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
            if all(exclusive(call.branches, tpu.branches) for tpu in facts.tpu_sites):
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
        literal = argument(call, 0, "policy")
        if isinstance(literal, cst.Call) and self.names.resolve(literal.func) & POLICY_CONSTRUCTORS:
            literal = argument(literal, 0, "name")
        if not isinstance(literal, cst.SimpleString) or literal.evaluated_value != "mixed_float16":
            return None
        quote = literal.value[len(literal.prefix)]
        new = literal.with_changes(value=f"{literal.prefix}{quote}mixed_bfloat16{quote}")
        return Fix({literal: new}, safety="safe")
