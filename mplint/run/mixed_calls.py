"""What the calls made under the mixed_float16 policy pass a function of another module.

A trainer decides its loss scaling by a constructor parameter (``Trainer(...,
loss_scale=False)``, stored as ``self.loss_scale`` and tested in ``fit``); which
arm a program takes is what the program passes, and whether that program runs
under mixed_float16 (the policy that needs loss scaling) is the program model's to
say. For each function of the judged modules, the arguments of every call in another
module made where mixed_float16 is in effect: by code the policy reaches, or by the
setter's own code after its set and outside the arms that shut it (a call under
``else`` of the ``if args.amp:`` that sets the policy runs without it). Each call binds
the function's parameters: what it passes, else the parameter's default, else unknown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Iterable, List, Tuple

from mplint.run.summaries import UNKNOWN, FunctionSummary, exclusive_lines
from mplint.semantic.test_modules import is_test_path

if TYPE_CHECKING:  # pragma: no cover
    from mplint.run.program import Node, ProgramModel

#: the policy whose programs need loss scaling
FLOAT16 = frozenset({"mixed_float16"})

#: parameter -> the argument a call binds it to, as a JSON literal, or UNKNOWN
Binding = Dict[str, str]
#: one call: its file, its line and what it binds
Site = Tuple[str, int, Binding]
#: calls of one function past this many: its parameters are left unknown
MAX_SITES = 32


def find_mixed_calls(model: "ProgramModel", paths: Iterable[str]) -> Dict[str, Dict[str, List[Site]]]:
    """path -> function -> each call under mixed_float16: where, and the parameters it binds."""
    wanted = model.defined_by_spelling(paths)  # the name a call spells -> files defining it
    found: Dict[str, Dict[str, List[Site]]] = {}
    if not wanted:
        return found
    for caller in model.summarised():
        if is_test_path(caller):
            continue  # a test sets a policy to test code under it, not to train
        for name, function in model.summary(caller).functions.items():
            node = (caller, name)
            for line, callee, slots in function.arguments:
                homes = wanted.get(callee.rsplit(".", 1)[-1])
                if not homes:
                    continue
                targets = [t for t in model.call_targets(caller, name, callee) if t[0] in homes and t[0] != caller]
                if not targets or not _mixed_at(model, node, function, line):
                    continue
                for target in targets:
                    callee_summary = model.summary(target[0]).functions.get(target[1])
                    if callee_summary is not None:
                        found.setdefault(target[0], {}).setdefault(target[1], []).append(
                            (caller, line, _bind(callee_summary, slots)))
    for by_function in found.values():
        for name, sites in by_function.items():
            if len(sites) > MAX_SITES:
                by_function[name] = []
    return found


def _mixed_at(model: "ProgramModel", node: "Node", function: FunctionSummary, line: int) -> bool:
    """Whether the call on ``line`` of ``node`` runs under mixed_float16 only: the node
    is reached by it alone, or sets it itself before the line in arms the call's arms
    do not shut, and sets no other policy there."""
    sets = model.policy_sets().get(node, {})
    if not sets:
        governed = set(model.governed_policies(node))
        return bool(governed) and governed <= FLOAT16  # not where float32 or bfloat16 may reach too
    mixed = False
    for policy, (set_line, _) in sets.items():
        if set_line >= line or exclusive_lines(function, set_line, line):
            continue
        if policy not in FLOAT16:
            return False
        mixed = True
    return mixed


def _bind(function: FunctionSummary, slots: Dict[str, str]) -> Binding:
    spread = "*" in slots
    bound: Binding = {}
    for index, param in enumerate(function.params):
        value = slots.get(param, slots.get(str(index)))
        if value is None:
            value = UNKNOWN if spread else function.defaults.get(param, UNKNOWN)
        bound[param] = value
    for param, default in function.defaults.items():
        if param not in bound:  # keyword-only
            bound[param] = slots.get(param, UNKNOWN if spread else default)
    return bound
