"""Where a name is read under conditions: the ``if`` arms around each read, and the arm
of a conditional expression it is (``train_fn = amp_step if amp else step``).

A function that runs only through such reads runs only when their conditions hold: the
plain step chosen by ``else`` never meets the LossScaleOptimizer that ``if amp:``
wraps. Only reads under some condition are kept (a list per name); a read with none
is counted by the caller (every read of the name), so "all reads agree" is
``len(kept) == count``.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional

import libcst as cst

from mplint.semantic.conditions import Truths
from mplint.semantic.scopes import Branches, Location, ScopeTracker


class ConditionalReads:
    def __init__(self) -> None:
        #: id of an arm of a conditional expression -> the branches it needs (its
        #: enclosing expressions' arms first)
        self._arms: Dict[int, Branches] = {}
        self._reads: Dict[str, List[Location]] = {}

    def enter_ifexp(self, node: cst.IfExp) -> None:
        """Called on visiting a conditional expression, before its arms."""
        outer = self._arms.get(id(node), ())
        self._arms[id(node.body)] = outer + ((id(node), "body", node.test),)
        self._arms[id(node.orelse)] = outer + ((id(node), "else", node.test),)

    def read(self, node: cst.Name, scopes: ScopeTracker) -> None:
        """A read of ``node``'s name where ``scopes`` stands (its location is made only
        for a read under a condition: most reads are not)."""
        arms = self._arms.get(id(node), ())
        if not arms and not scopes.branches():
            return
        loc = scopes.location()
        if arms:
            loc = Location(loc.scope, loc.order, loc.branches + arms, loc.context)
        self._reads.setdefault(node.value, []).append(loc)

    def agreed(self, name: str, reads: int, truths: Callable[[Location], Truths]) -> Truths:
        """What every one of the ``reads`` reads of ``name`` needs of the conditions
        alike ({} when one is under none, or they share nothing)."""
        kept = self._reads.get(name, [])
        if not reads or len(kept) != reads:
            return {}
        shared: Optional[Truths] = None
        for loc in kept:
            needs = truths(loc)
            shared = needs if shared is None else {k: v for k, v in shared.items() if needs.get(k) == v}
        return shared or {}
