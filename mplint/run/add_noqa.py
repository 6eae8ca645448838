"""``mplint check --add-noqa``: a ``# noqa: MPxxx`` on the line of every current
finding, for a team adopting mplint on an existing codebase (ruff's ``--add-noqa``).

Codes join a directive already on the line; a line gets one comment, never at
the end of a line inside a string or a backslash continuation (it would change
the code). Files are written atomically, in their
encoding; a notebook's changed cells are spliced back as a fix's are. A second run
adds nothing: every finding is then suppressed.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Set, Tuple

from mplint.core.findings import FileError, Finding
from mplint.core.notebooks import Notebook
from mplint.core.source import SourceError, decode, read_bytes, write_atomic
from mplint.core.source_kinds import is_notebook
from mplint.core.suppression import add_codes, commentable_lines


@dataclass
class Added:
    """What ``--add-noqa`` did: directives added or extended, files written, and
    the files it could not write."""

    directives: int = 0
    files: int = 0
    errors: List[FileError] = field(default_factory=list)


def add_noqa(findings: Sequence[Finding]) -> Added:
    """Suppress every finding in ``findings`` where it is, writing each file once."""
    out = Added()
    by_path: Dict[str, List[Finding]] = defaultdict(list)
    for finding in findings:
        by_path[finding.path].append(finding)
    for path, found in sorted(by_path.items()):
        try:
            raw = read_bytes(path)
            data, count = (_notebook if is_notebook(path) else _python)(path, raw, found)
            if count:
                write_atomic(path, data, expected=raw)
        except SourceError as exc:
            out.errors.append(FileError(path, f"no noqa directives added: {exc}"))
            continue
        out.directives += count
        out.files += bool(count)
    return out


def _wanted(text: str, lines: Sequence[Tuple[int, int, str]]) -> Dict[int, Set[str]]:
    """Line -> codes: each finding (first line, last line, rule) on the first line
    from its first on that can take a comment. A line that ends inside a string or
    after a backslash cannot; the first one after it that can is still in the same
    statement (a statement cannot end there), where the comment suppresses too."""
    open_lines = sorted(commentable_lines(text))
    wanted: Dict[int, Set[str]] = defaultdict(set)
    for first, _last, rule in lines:
        at = bisect_left(open_lines, first)
        if at < len(open_lines):
            wanted[open_lines[at]].add(rule)
    return wanted


def _python(path: str, raw: bytes, found: Sequence[Finding]) -> Tuple[bytes, int]:
    source = decode(path, raw)
    text, count = add_codes(source.text, _wanted(source.text, [(f.line, f.end_line, f.rule) for f in found]))
    return source.encode(text), count


def _notebook(path: str, raw: bytes, found: Sequence[Finding]) -> Tuple[bytes, int]:
    book = Notebook.load(path, raw)
    first = {cell.index: cell.first_line for cell in book.cells}
    lines = [(first[f.cell] + f.line - 1, first[f.cell] + f.end_line - 1, f.rule)
             for f in found if f.cell in first]
    program, count = add_codes(book.program, _wanted(book.program, lines))
    return (book.rebuild(program) if count else raw), count
