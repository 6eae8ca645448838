"""The mixed policy of the program that runs a module's graph-rewrite switch, whatever the order.

The policy the program model spreads reaches only what runs *after* it is set: that
is what decides the dtype a layer is built in. Whether a program uses both mixed
precision mechanisms is no matter of order: ``configure_runtime()`` (another module,
switching on grappler's ``auto_mixed_precision``) called before
``set_global_policy("mixed_float16")`` leaves both on, and Keras 3 checks neither. So for
the modules that may switch the rewrite on, the functions any setter of a mixed policy
runs, at any line and through any chain of calls, are found from the model's call graph.

Only setters whose every policy is a mixed one count (a setter that may set float32
is a run-time choice), and setters in test files do not (a test sets a policy to test
code under it, not to train).
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Deque, Dict, Iterable, Tuple

from mplint.run.summaries import exclusive_lines
from mplint.semantic.test_modules import is_test_path
from mplint.semantic.vocabulary import MIXED_POLICIES, REWRITE_WORDS

if TYPE_CHECKING:  # pragma: no cover
    from mplint.run.program import Node, ProgramModel

#: nodes visited from all setters together, at most (a framework's call graph is not needed)
MAX_NODES = 5000

_TOKENS = tuple(word.encode() for word in REWRITE_WORDS)

#: a setter's place: (the policy, its file, the line of its set)
Setter = Tuple[str, str, int]


def find_programs(model: "ProgramModel", candidates: Iterable[str]) -> Dict[str, Dict[str, Setter]]:
    """path -> function (qualified name, or the body) -> the mixed policy set in another
    module by code that runs the function, for each candidate module (one that may
    switch the rewrite on). Breadth first from every setter, so each function keeps a
    setter nearest to it."""
    wanted = set(candidates)
    if not wanted:
        return {}
    origin: Dict["Node", Setter] = {}
    queue: Deque["Node"] = deque()
    for node, sets in sorted(model.policy_sets().items()):
        policies = set(sets)
        if not policies or not policies <= MIXED_POLICIES or is_test_path(node[0]):
            continue
        policy = min(policies)
        _, route = sets[policy]
        origin[node] = (policy, route.path, route.line)
        queue.append(node)
    found: Dict[str, Dict[str, Setter]] = {}
    first = set(queue)
    while queue and len(origin) < MAX_NODES:
        node = queue.popleft()
        setter = origin[node]
        function = model.summary(node[0]).functions.get(node[1]) if node in first else None
        for line, targets in model.edges_of(node):
            if function is not None and exclusive_lines(function, model.policy_sets()[node][setter[0]][0], line):
                continue  # the other arm of the ``if`` that sets the policy: ``--amp=keras|graph``
            for target in targets:
                if target in origin:
                    continue
                origin[target] = setter
                queue.append(target)
                if target[0] in wanted and target[0] != setter[1]:
                    found.setdefault(target[0], {})[target[1]] = setter
    return found


def may_switch_rewrite(raw: bytes) -> bool:
    """The file's bytes name a way to switch the graph rewrite on (a candidate)."""
    return any(token in raw for token in _TOKENS)
