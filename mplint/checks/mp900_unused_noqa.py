"""MP900: a ``# noqa`` code that suppresses nothing (opt-in, as ruff's RUF100).

Whether a code suppressed a finding is known only after every other rule has
reported and the suppressions have been applied, so the linter reports this rule
at that point (:mod:`mplint.core.unused_noqa`); this class enrols it in the
registry and tells the prescan which files it may report in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mplint.core.unused_noqa import UNUSED_NOQA
from mplint.rule.check import Check

if TYPE_CHECKING:  # pragma: no cover
    from mplint.core.prefilter import Prescan


class UnusedNoqa(Check):
    rule_id = UNUSED_NOQA

    @classmethod
    def may_report(cls, file: "Prescan") -> bool:
        return file.has(b"noqa", b"NOQA", b"Noqa", b"NoQA")
