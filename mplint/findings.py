"""Plain, picklable results: what a check found and what could not be checked."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional


@dataclass(frozen=True)
class Finding:
    """One reported problem. Lines are 1-based, columns 1-based (as ruff prints them)."""

    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    rule: str
    severity: str
    message: str
    fix: Optional[str]  # None, "safe" or "unsafe"

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class FileError:
    """A file that could not be checked (or a rule that crashed on it)."""

    path: str
    message: str
    kind: str = "error"  # "error" (exit 2) or "warning" (reported, exit unaffected)

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"
