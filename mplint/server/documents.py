"""Editor buffers as mplint reads them, and fixed code as edits to a buffer.

An editor holds text; mplint reads bytes, in the encoding the file declares. A
notebook reaches the server as cells; mplint reads the ``.ipynb`` JSON. Lines here
break where the Language Server Protocol breaks them (``\\n``, ``\\r\\n``, ``\\r``), and
columns are code points; the server converts them to the client's units.
"""

from __future__ import annotations

import difflib
import io
import json
import re
import tokenize
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from mplint.core.source import SourceError, decode

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")

#: a place in a buffer: (line, column), both 0-based, the column in code points
Place = Tuple[int, int]


def lines_of(text: str) -> List[str]:
    """The lines of ``text`` with their line breaks, as the protocol counts them."""
    return _LINE.findall(text)


def buffer_bytes(text: str) -> bytes:
    """The bytes of a buffer as they would be saved: UTF-8, or the encoding its
    coding cookie names (PEP 263) when the text fits in it."""
    raw = text.encode("utf-8", "surrogatepass")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError:
        return raw
    if encoding in ("utf-8", "utf-8-sig"):
        return raw
    try:
        return text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return raw


def buffer_text(path: str, raw: bytes) -> Optional[str]:
    """The text of fixed bytes of a Python file (None if they cannot be decoded)."""
    try:
        return decode(path, raw).text
    except SourceError:
        return None


# -- notebooks ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Cell:
    """A notebook cell as the editor holds it."""

    text: str
    #: a code cell in Python (other cells count in the numbering, but hold no code)
    python: bool


def notebook_bytes(cells: Sequence[Cell]) -> bytes:
    """The ``.ipynb`` (nbformat 4) of the cells, numbered as the editor shows them."""
    out: List[Dict[str, object]] = []
    for cell in cells:
        if cell.python:
            out.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                        "source": cell.text})
        else:
            out.append({"cell_type": "raw", "metadata": {}, "source": cell.text})
    book: Dict[str, object] = {"cells": out, "metadata": {"language_info": {"name": "python"}},
            "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(book, indent=1, ensure_ascii=False).encode("utf-8")


def notebook_texts(raw: bytes) -> List[str]:
    """The source of each cell of a notebook's bytes (fixed by mplint)."""
    data = json.loads(raw.decode("utf-8-sig"))
    texts = []
    for cell in data["cells"]:
        source = cell.get("source", "")
        texts.append(source if isinstance(source, str) else "".join(source))
    return texts


# -- edits ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Edit:
    """Replace the text from ``start`` to ``end`` with ``text``."""

    start: Place
    end: Place
    text: str


def line_edits(before: str, after: str) -> List[Edit]:
    """The smallest whole-line replacements that turn ``before`` into ``after``, so
    the editor keeps the cursor, folds and marks of the lines a fix leaves alone."""
    old, new = lines_of(before), lines_of(after)
    edits = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        edits.append(Edit(_start_of(old, i1), _start_of(old, i2), "".join(new[j1:j2])))
    return edits


def _start_of(lines: List[str], index: int) -> Place:
    """Where line ``index`` starts; past the last line, the end of the text."""
    if index < len(lines) or not lines:
        return (index, 0)
    last = lines[-1]
    if last.endswith(("\n", "\r")):
        return (len(lines), 0)
    return (len(lines) - 1, len(last))
