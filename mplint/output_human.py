"""Output for a person: the ``concise`` format (one line a finding) and the ``full``
format (the source line with a caret under the finding), coloured on a terminal.

``[*]`` marks a finding only when ``mplint fix`` with the current flags would fix
it (ruff's applicability): a safe fix always, an unsafe one with
``--unsafe-fixes``. The summary counts the same way (:func:`would_fix`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

from mplint.core.findings import FileError, Finding
from mplint.rule.levels import Safety


def would_fix(fix: Optional[Safety], unsafe_fixes: bool) -> bool:
    """Whether a finding's fix (None: it has none) is applied by ``mplint fix`` with
    these flags."""
    return fix is not None and fix.applies(unsafe_fixes)


@dataclass(frozen=True)
class Style:
    """How findings are shown to a person: which fixes count, and colour."""

    unsafe_fixes: bool = False
    color: bool = False


def concise(findings: List[Finding], errors: Sequence[FileError] = (), style: Style = Style()) -> str:
    """``path:line:col: MPxxx message [*]``, one line a finding."""
    lines = [_headline(f, style) for f in findings]
    return "\n".join(lines) + ("\n" if lines else "")


def _headline(f: Finding, style: Style) -> str:
    mark = " [*]" if would_fix(f.fix, style.unsafe_fixes) else ""
    return f"{f.location}: {f.rule} {f.message}{mark}"


HUMAN_FORMATS: Dict[str, object] = {"concise": concise}
