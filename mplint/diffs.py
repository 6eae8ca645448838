"""The diffs ``mplint fix --diff`` prints: a unified diff of a file's text, or, for a
notebook, one of each changed cell's source (as ruff shows notebooks), never of the
JSON around it."""

from __future__ import annotations

import difflib
import json
from typing import List

from mplint.core.source_kinds import is_notebook


def unified(path: str, before: bytes, after: bytes) -> str:
    """The diff from ``before`` to ``after`` of the file ``path``; ends with a newline."""
    if is_notebook(path):
        try:
            return _cells(path, before, after)
        except (ValueError, AttributeError, TypeError):
            pass  # not the notebook JSON it was: show the text instead
    return _text(path, before.decode("utf-8", errors="replace"), after.decode("utf-8", errors="replace"))


#: what diff and git print after a last line without a newline; ``git apply`` needs it
NO_NEWLINE = "\\ No newline at end of file\n"


def _lines(text: str) -> List[str]:
    """The lines of ``text``, each with its end, split at newlines only, as git does
    (``str.splitlines`` also splits at form feeds and other separators, which would
    make a patch that does not apply)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _text(name: str, before: str, after: str, old: str = "", new: str = "") -> str:
    out = []
    for line in difflib.unified_diff(_lines(before), _lines(after), fromfile=old or f"a/{name}",
                                     tofile=new or f"b/{name}"):
        out.append(line if line.endswith("\n") else line + "\n" + NO_NEWLINE)
    return "".join(out)


def _sources(raw: bytes) -> List[str]:
    cells = json.loads(raw.decode("utf-8-sig"))["cells"]
    out = []
    for cell in cells:
        source = cell.get("source", "")
        out.append("".join(source) if isinstance(source, list) else str(source))
    return out


def _cells(path: str, before: bytes, after: bytes) -> str:
    old, new = _sources(before), _sources(after)
    if len(old) != len(new):
        raise ValueError("cells added or removed")
    parts = []
    for number, (a, b) in enumerate(zip(old, new), 1):
        if a != b:
            if not a.endswith("\n") and not b.endswith("\n"):
                a, b = a + "\n", b + "\n"  # the cell's last line, without "\ No newline"
            parts.append(_text(path, a, b, f"a/{path}:cell {number}", f"b/{path}:cell {number}"))
    return "".join(parts)
