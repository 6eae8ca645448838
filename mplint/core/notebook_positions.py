"""Where a notebook finding lies in the ``.ipynb`` file itself, for CI formats.

A finding in a notebook is located by cell and line in the cell, which is what a
person reads. GitHub annotations, SARIF and JUnit point into the file as stored,
JSON and all: there a cell's line is a string in the cell's ``source`` list (one
item a line, as Jupyter writes it), on its own line of the file. The column counts
the characters of the JSON text, escapes included.
"""

from __future__ import annotations

import json
from typing import Dict, List, Optional, Tuple

from mplint.core.findings import Finding
from mplint.core.notebook_json import item_spans, source_spans

#: (line, col, end_line, end_col), 1-based as findings are
Place = Tuple[int, int, int, int]


class NotebookPositions:
    """Maps notebook findings to lines and columns of their file; each file is read once.

    ``given`` holds contents that differ from the disk (stdin)."""

    def __init__(self, given: Optional[Dict[str, bytes]] = None) -> None:
        self.given = given or {}
        self._cells: Dict[str, Optional["_Cells"]] = {}

    def place(self, f: Finding) -> Place:
        if f.cell is None:
            return f.line, f.col, f.end_line, f.end_col
        cells = self._load(f.path)
        if cells is None:
            return 1, 1, 1, 1  # the file, at least; its text cannot be mapped
        line, col = cells.position(f.cell, f.line, f.col)
        end_line, end_col = cells.position(f.cell, f.end_line, f.end_col)
        return line, col, end_line, end_col

    def _load(self, path: str) -> Optional["_Cells"]:
        if path not in self._cells:
            from mplint.core.source import SourceError, read_bytes

            try:
                raw = self.given[path] if path in self.given else read_bytes(path)
                self._cells[path] = _Cells(raw.decode("utf-8-sig"))
            except (SourceError, OSError, UnicodeDecodeError, ValueError, IndexError, RecursionError):
                self._cells[path] = None
        return self._cells[path]


class _Cells:
    """The JSON text of one notebook, and where each cell's source lines start in it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans = source_spans(text)
        self._newlines = [i for i, char in enumerate(text) if char == "\n"]

    def _line_col(self, offset: int) -> Tuple[int, int]:
        from bisect import bisect_left

        line = bisect_left(self._newlines, offset)  # newlines before the offset
        start = self._newlines[line - 1] + 1 if line else 0
        return line + 1, offset - start + 1

    def position(self, cell: int, line: int, col: int) -> Tuple[int, int]:
        """The file's (line, col) of character ``col`` of line ``line`` of ``cell``."""
        span = self.spans.get(cell - 1)
        if span is None:
            return 1, 1
        start, _ = span
        strings: List[Tuple[int, int]] = item_spans(self.text, start) if self.text[start] == "[" else [span]
        seen = 1  # the cell line the current string starts on
        for a, b in strings:
            value = json.loads(self.text[a:b])
            if not isinstance(value, str):
                continue
            lines_here = value.count("\n") + (0 if value.endswith("\n") else 1)
            if line < seen + lines_here or (a, b) == strings[-1]:
                # the line starts in this string: count to it, escapes and all
                skip = sum(len(part) + 1 for part in value.split("\n")[: line - seen])
                return self._line_col(_raw_offset(self.text, a + 1, skip + col - 1))
            seen += value.count("\n")
        return self._line_col(start)


def _raw_offset(text: str, pos: int, chars: int) -> int:
    """The offset in ``text`` after ``chars`` decoded characters of the JSON string
    whose contents start at ``pos``."""
    for _ in range(max(0, chars)):
        if text[pos] == '"':
            break
        if text[pos] != "\\":
            pos += 1
        elif text[pos + 1] != "u":
            pos += 2
        elif 0xD800 <= int(text[pos + 2:pos + 6], 16) < 0xDC00 and text[pos + 6:pos + 8] == "\\u":
            pos += 12  # a surrogate pair is one character
        else:
            pos += 6
    return pos
