"""How far a fix may be trusted, and how bad a finding is: the two levels a rule states.

:class:`Safety` is ordered, as ruff's ``Applicability`` is (``NONE < UNSAFE < SAFE``):
the catalog caps what a fix may claim (``min(entry.fix_safety, fix.safety)``), and a
fix applies when its safety reaches what the flags ask for (:meth:`Safety.applies`).
Its members are the strings the catalog, JSON and SARIF spell (``"safe"``), so output
stays byte for byte what it was. This module imports nothing: results read from the
cache use it without loading libcst.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal, Tuple

#: how bad a finding is; a rule's catalog entry gives it, a finding may override it
Severity = Literal["error", "warning"]
SEVERITIES: Tuple[Severity, ...] = ("error", "warning")


def parse_severity(text: object) -> Severity:
    """The severity ``text`` names; ValueError for anything else."""
    if text not in SEVERITIES:
        raise ValueError(f"severity must be error or warning, got {text!r}")
    return text


class Safety(str, Enum):
    """How far a fix may be trusted, ordered ``NONE < UNSAFE < SAFE``.

    ``SAFE`` keeps behaviour and comments; ``UNSAFE`` may change behaviour and applies
    only with ``--unsafe-fixes``; ``NONE`` is a catalog entry's "this rule offers no
    fix" (a finding without a fix has no safety at all: None).
    """

    NONE = "none"
    UNSAFE = "unsafe"
    SAFE = "safe"

    @property
    def rank(self) -> int:
        return _RANK[self]

    def applies(self, unsafe_fixes: bool) -> bool:
        """Whether a fix of this safety is applied: safe ones always, unsafe ones with
        ``--unsafe-fixes``, never a rule's NONE."""
        return self >= (Safety.UNSAFE if unsafe_fixes else Safety.SAFE)

    # Ordered by trust, not alphabetically as ``str`` would; equal to (and hashed as)
    # its string, so ``fix == "safe"`` and a value read back from JSON still match.
    def __lt__(self, other: object) -> bool:
        return self.rank < _coerce(other).rank

    def __le__(self, other: object) -> bool:
        return self.rank <= _coerce(other).rank

    def __gt__(self, other: object) -> bool:
        return self.rank > _coerce(other).rank

    def __ge__(self, other: object) -> bool:
        return self.rank >= _coerce(other).rank

    def __hash__(self) -> int:
        return str.__hash__(self)

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


_RANK = {Safety.NONE: 0, Safety.UNSAFE: 1, Safety.SAFE: 2}


def _coerce(other: object) -> Safety:
    if isinstance(other, Safety):
        return other
    if isinstance(other, str):
        return Safety(other)
    raise TypeError(f"cannot compare Safety with {type(other).__name__}")
