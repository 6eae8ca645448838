"""Plain, picklable results: what a check found and what could not be checked."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Dict, Optional

from mplint.rule.levels import Safety, Severity


@dataclass(frozen=True)
class Finding:
    """One reported problem. Lines are 1-based, columns 1-based (as ruff prints them)."""

    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    rule: str
    severity: Severity
    message: str
    #: the safety of the fix this finding offers (SAFE or UNSAFE), None without one
    fix: Optional[Safety]
    #: notebook cell (1-based among all cells); line and col are then within the cell
    cell: Optional[int] = None

    def __post_init__(self) -> None:
        # A result read back from the cache spells its fix as JSON did ("safe").
        if self.fix is not None and not isinstance(self.fix, Safety):
            object.__setattr__(self, "fix", Safety(self.fix))

    @property
    def location(self) -> str:
        """``path:line:col``, or ``nb.ipynb:cell 3:2:col`` in a notebook (as ruff writes it)."""
        if self.cell is not None:
            return f"{self.path}:cell {self.cell}:{self.line}:{self.col}"
        return f"{self.path}:{self.line}:{self.col}"

    def to_dict(self) -> Dict[str, Any]:
        data = asdict(self)
        if self.cell is None:
            del data["cell"]
        return data


@dataclass(frozen=True)
class FileError:
    """A file that could not be checked (or a rule that crashed on it)."""

    path: str
    message: str
    #: "error" (exit 2), "warning" (reported, exit unaffected) or "note" (said once per
    #: run however many files share it: something a setting would make mplint see)
    kind: str = "error"

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"
