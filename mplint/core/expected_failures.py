"""Code written to fail: findings inside ``with self.assertRaises(...)`` are dropped.

A test that checks TensorFlow rejects a broken setup (a LossScaleOptimizer handed to
the graph rewrite, the rewrite under a mixed policy) spells out exactly the code a
rule reports, on purpose. Inside a block that expects an exception (unittest's
``assertRaises``/``assertRaisesRegex``, ``pytest.raises``) no finding is reported.
"""

from __future__ import annotations

from typing import Dict, List, Set

import libcst as cst

from mplint.rule.check import Report
from mplint.core.walker import child_nodes

#: context managers that expect the block to raise
RAISES = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp", "raises"})


class ExpectedFailures:
    """Walker visitor: the bodies of ``with`` blocks that expect an exception."""

    def __init__(self) -> None:
        self.blocks: List[cst.BaseSuite] = []

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            call = item.item
            if not isinstance(call, cst.Call):
                continue
            func = call.func
            name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
            if name in RAISES:
                self.blocks.append(node.body)
                return

    def drop_reports_inside(self, reports: Dict[str, List[Report]]) -> None:
        """Remove the reports whose node lies in one of the blocks."""
        if not self.blocks:
            return
        inside: Set[int] = set()
        stack: List[cst.CSTNode] = list(self.blocks)
        while stack:
            node = stack.pop()
            inside.add(id(node))
            stack.extend(child_nodes(node))
        for rule in list(reports):
            kept = [r for r in reports[rule] if id(r.node) not in inside]
            if kept:
                reports[rule] = kept
            else:
                del reports[rule]
