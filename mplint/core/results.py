"""What checking or fixing one file gives back: findings, fixes on offer, errors.

``FileResult`` and ``FixOutcome`` cross process boundaries (the worker pool) and
the cache, so they hold only plain data; ``FileAnalysis`` and ``FixCandidate``
hold libcst nodes and never leave the process that parsed the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Dict, List, Optional

from mplint.core.findings import FileError, Finding

if TYPE_CHECKING:  # pragma: no cover (typing only: libcst is not needed to read results)
    import libcst as cst
    from libcst.metadata import CodeRange

    from mplint.rule.check import Fix
    from mplint.rule.levels import Safety

#: where an internal error should go (mplint has no public issue tracker to link)
REPORT_TO = "mplint's maintainers, with the file that caused it"


@dataclass
class FixCandidate:
    """A fix a finding offers, with the safety the catalog and its comments allow."""

    finding: Finding
    fix: "Fix"
    safety: "Safety"


@dataclass
class FileAnalysis:
    """One analysis of a parsed program: findings, the fixes on offer, errors, and
    the positions of the nodes they point at (which the fixer needs)."""

    findings: List[Finding] = field(default_factory=list)
    fixes: List[FixCandidate] = field(default_factory=list)
    errors: List[FileError] = field(default_factory=list)
    positions: Optional[Dict["cst.CSTNode", "CodeRange"]] = None


@dataclass
class FileResult:
    """The result of checking one file."""

    path: str
    findings: List[Finding] = field(default_factory=list)
    errors: List[FileError] = field(default_factory=list)
    #: the other files the checks read, by content digest (see :mod:`core.reads`)
    reads: Dict[str, str] = field(default_factory=dict)
    #: False for a result that says what happened to mplint (a crash, a worker that
    #: died), not what the file holds: never cached, so the next run tries again
    cacheable: bool = True


@dataclass
class FixOutcome:
    """The result of fixing one file in memory (writing it is the caller's choice)."""

    path: str
    original: bytes = b""
    fixed: Optional[bytes] = None  # None when nothing changed
    applied: int = 0
    applied_rules: List[str] = field(default_factory=list)
    remaining: List[Finding] = field(default_factory=list)
    errors: List[FileError] = field(default_factory=list)
    #: whether ``fixed`` was written to the file
    written: bool = False
    #: the other files the checks read, by content digest (see :mod:`core.reads`)
    reads: Dict[str, str] = field(default_factory=dict)
    #: see :attr:`FileResult.cacheable`
    cacheable: bool = True

    @property
    def changed(self) -> bool:
        return self.fixed is not None and self.fixed != self.original


def describe(exc: BaseException, limit: int = 200) -> str:
    """``Type: message`` on one line, short. A libcst node the exception carries
    (``KeyError(node)`` from a position lookup) is named by its class, never
    formatted: its ``str()`` walks the whole subtree, and recurses past the limit on
    a deep one. Formatting any other message may fail too; that costs only the message."""
    if any(type(arg).__module__.startswith("libcst") for arg in exc.args):
        message = ", ".join(type(arg).__name__ for arg in exc.args)
    else:
        try:
            message = " ".join(str(exc).split())
        except Exception:  # RecursionError among others
            message = ""
    if len(message) > limit:
        message = message[:limit] + "..."
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def internal_error(path: str, exc: BaseException, where: str = "") -> FileError:
    """The one-line error for a crash while checking or fixing a file."""
    return FileError(path, f"internal error{where}: {describe(exc)}. Please report this to {REPORT_TO}")
