"""Whether a rule may report in a file, told from its prescan without importing its check.

A file no selected check may report in is never parsed with libcst (``Check.may_report``),
yet asking the checks means importing them, and with them libcst and every analysis: a
third of a second, most of a pre-commit run on one file that never touches mixed
precision. Each check's answer is a function of a few prescan atoms (a word in the
bytes, or one of the prescan's flags), so it is kept here as data:
``mplint/rule/gate_table.py``, written by ``python scripts/gates.py`` from the checks
themselves (:func:`derive`) and compared with them, over every combination of their
atoms, by ``tests/test_gates.py``. A rule the table does not hold may always report
(its check is imported and asked), so a table behind the checks costs time, never a
finding, except where a check's condition was widened: the test fails first.

This module imports nothing heavy.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple, Union

from mplint.core.prefilter import POLICY_CALL_WORDS, Prescan

if TYPE_CHECKING:  # pragma: no cover
    from mplint.rule.check import Check

#: a word of the file's bytes, or one of :data:`FLAGS`
Atom = Union[bytes, str]
#: any of these atoms
Group = Tuple[Atom, ...]
#: every group holds
Alternative = Tuple[Group, ...]
#: some alternative holds
Gate = Tuple[Alternative, ...]

#: the prescan's flags an atom may name (what the project and the configuration say)
FLAGS = ("policy_elsewhere", "library", "drops_base_scaling")


def holds(atom: Atom, scan: Prescan) -> bool:
    if isinstance(atom, bytes):
        return scan.has(atom)
    return bool(getattr(scan, atom))


def gate_open(gate: Gate, scan: Prescan) -> bool:
    """Whether the rule whose gate this is may report in the scanned file."""
    return any(all(any(holds(atom, scan) for atom in group) for group in alternative) for alternative in gate)


def may_report(table: Dict[str, Gate], rule_ids: Sequence[str], scan: Prescan) -> bool:
    """Whether one of ``rule_ids`` may report in the scanned file (a rule ``table`` does
    not hold may)."""
    return any(rule not in table or gate_open(table[rule], scan) for rule in rule_ids)


# -- deriving a check's gate (scripts/gates.py, tests/test_gates.py) ------------------------
class _Assumed(Prescan):
    """A prescan whose atoms hold as assumed, noting every word it is asked about."""

    def __init__(self, true: FrozenSet[Atom]) -> None:
        super().__init__(b"", "policy_elsewhere" in true, "drops_base_scaling" in true, "library" in true)
        self.true = true
        self.asked: Set[Atom] = set()

    def has(self, *words: bytes) -> bool:
        self.asked.update(words)
        return any(word in self.true for word in words)


def truth_table(answer: Callable[[Prescan], bool]) -> Tuple[List[Atom], Dict[FrozenSet[Atom], bool]]:
    """The atoms ``answer`` asks about (the flags always) and its answer for every
    combination of them, found by asking until no new word comes up."""
    atoms: List[Atom] = list(FLAGS)
    while True:
        table: Dict[FrozenSet[Atom], bool] = {}
        asked: Set[Atom] = set()
        for bits in itertools.product((False, True), repeat=len(atoms)):
            true = frozenset(atom for atom, bit in zip(atoms, bits) if bit)
            scan = _Assumed(true)
            table[true] = answer(scan)
            asked |= scan.asked
        new = sorted((a for a in asked if a not in atoms), key=repr)
        if not new:
            return atoms, table
        atoms += new


def derive(check: "type[Check]") -> Optional[Gate]:
    """The gate of ``check``: from its ``needs`` when it keeps the base ``may_report``,
    else the minimal combinations of atoms its own ``may_report`` answers yes to (its
    answers must grow with the atoms: None when they do not, or when it asks too much)."""
    from mplint.rule.check import Check

    if check.may_report.__func__ is Check.may_report.__func__:  # type: ignore[attr-defined]
        needs = check.needs
        if needs is None:
            return ((),)  # any file
        found: List[Atom] = list(needs.words)
        if needs.mixed_policy:
            found += ["policy_elsewhere", *POLICY_CALL_WORDS]
            if needs.library:
                found.append("library")
        if needs.policy_call:
            found += [w for w in POLICY_CALL_WORDS if w not in found]
        groups: List[Group] = [tuple(dict.fromkeys(found))]
        if needs.also:
            groups.append(tuple(needs.also))
        return (tuple(groups),)
    atoms, table = truth_table(check.may_report)
    if len(atoms) > 16:
        return None
    true_sets = [s for s, yes in table.items() if yes]
    for s, yes in table.items():  # monotone: a superset of a yes is a yes
        if not yes and any(t <= s for t in true_sets):
            return None
    minimal = [s for s in true_sets if not any(t < s for t in true_sets)]
    order = {atom: i for i, atom in enumerate(atoms)}
    return tuple(sorted((tuple((atom,) for atom in sorted(s, key=order.__getitem__)) for s in minimal),
                        key=lambda alt: [order[g[0]] for g in alt]))
