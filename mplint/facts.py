"""Module facts: which dtype policy is set, whether the graph rewrite is on.

Collected in the same walk as the checks; checks read them in ``finish()``, when
the whole file has been seen (a policy set at the bottom of ``main()`` still
governs a model built in a function above it). Facts from the rest of the project
and from config (``assume-policy``) are merged in here, so rules ask one object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import FrozenSet, List, Optional, Tuple

import libcst as cst

from mplint.names import NameResolver
from mplint.scopes import Location, ScopeTracker
from mplint.values import Evaluator

MIXED_POLICIES = frozenset({"mixed_float16", "mixed_bfloat16"})
UNKNOWN = "?"

SET_POLICY_FUNCTIONS = frozenset({
    "keras.mixed_precision.set_global_policy",
    "keras.mixed_precision.experimental.set_policy",
    "keras.mixed_precision.experimental.set_global_policy",
})

GRAPH_REWRITE_FUNCTIONS = frozenset({
    "tensorflow.train.experimental.enable_mixed_precision_graph_rewrite",
    "tensorflow.compat.v1.train.experimental.enable_mixed_precision_graph_rewrite",
    "tensorflow.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite",
    "tensorflow.compat.v1.mixed_precision.experimental.enable_mixed_precision_graph_rewrite",
    "tensorflow.mixed_precision.experimental.enable_mixed_precision_graph_rewrite",
})

GRAPPLER_OPTIONS_FUNCTIONS = frozenset({
    "tensorflow.config.optimizer.set_experimental_options",
})


@dataclass
class PolicyCall:
    """A call that sets the global policy; ``values`` is None when unresolvable."""

    node: cst.Call
    values: Optional[FrozenSet[str]]
    location: Location
    origins: FrozenSet[str]


@dataclass(frozen=True)
class PolicyState:
    """The mixed policies that may be in effect, and whether that is certain."""

    names: FrozenSet[str]
    certain: bool
    #: project files that set the policy, when this file sets none itself
    source: str = ""

    @property
    def float16(self) -> bool:
        return "mixed_float16" in self.names

    @property
    def note(self) -> str:
        """Suffix for messages when the policy is chosen at run time."""
        if not self.certain:
            return " (the policy is chosen at run time and may be mixed)"
        return f" (the mixed policy is set in {self.source})" if self.source else ""


@dataclass
class ModuleFacts:
    """Facts about one file, completed by the end of the walk."""

    assumed_policy: Optional[str] = None
    keras_version: Optional[int] = None
    #: policies set elsewhere in the project (project facts; UNKNOWN for run-time
    #: choices, float32 too), and the project-relative files that set them
    project_policies: FrozenSet[str] = frozenset()
    project_policy_files: Tuple[str, ...] = ()
    #: project-relative files elsewhere that enable the graph rewrite (the rewrite
    #: call, grappler's auto_mixed_precision or TF_ENABLE_AUTO_MIXED_PRECISION)
    project_rewrite_files: Tuple[str, ...] = ()
    policy_calls: List[PolicyCall] = field(default_factory=list)
    rewrite_calls: List[cst.Call] = field(default_factory=list)
    grappler_calls: List[cst.Call] = field(default_factory=list)

    def policy_values(self) -> FrozenSet[str]:
        """Every policy name this module may set; UNKNOWN for unresolvable ones."""
        out = set()
        for call in self.policy_calls:
            out |= call.values if call.values is not None else {UNKNOWN}
        return frozenset(out)

    def mixed_policy(self) -> Optional[PolicyState]:
        """The mixed policy in effect for this module's code, or None."""
        values = self.policy_values()
        source = ""
        if not values and self.project_policies:
            # The file sets no policy itself: the one set elsewhere governs it.
            values = self.project_policies
            source = ", ".join(self.project_policy_files)
        certain = UNKNOWN not in values and len(values) > 0
        names = set(values & MIXED_POLICIES)
        if UNKNOWN in values:
            names |= MIXED_POLICIES
        if self.assumed_policy in MIXED_POLICIES:
            names.add(self.assumed_policy)
            certain, source = True, ""
        names |= self.project_policies & MIXED_POLICIES
        if not names:
            return None
        # Setting float32 somewhere too (a reset in tests, a CLI switch) leaves
        # mixed possible but not certain.
        if values - MIXED_POLICIES - {UNKNOWN}:
            certain = self.assumed_policy in MIXED_POLICIES
        return PolicyState(frozenset(names), certain, source if certain else "")


class FactsCollector:
    """Visitor that records policy and graph-rewrite calls into ModuleFacts."""

    def __init__(self, facts: ModuleFacts, names: NameResolver, tracker: ScopeTracker,
                 evaluator: Evaluator) -> None:
        self.facts = facts
        self.names = names
        self.tracker = tracker
        self.evaluator = evaluator

    def visit_Call(self, node: cst.Call) -> None:
        resolved = self.names.resolve(node.func)
        if not resolved:
            return
        if resolved & SET_POLICY_FUNCTIONS:
            loc = self.tracker.location()
            values: Optional[FrozenSet[str]] = None
            if node.args:
                found = self.evaluator.values(node.args[0].value, loc)
                if found is not None and all(isinstance(v, str) for v in found):
                    values = frozenset(str(v) for v in found)
            self.facts.policy_calls.append(
                PolicyCall(node, values, loc, self.names.origins(node.func))
            )
        elif resolved & GRAPH_REWRITE_FUNCTIONS:
            self.facts.rewrite_calls.append(node)
        elif resolved & GRAPPLER_OPTIONS_FUNCTIONS:
            self.facts.grappler_calls.append(node)
