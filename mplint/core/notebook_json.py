"""Splice new cell sources into a notebook's JSON text, leaving every other byte alone.

Re-serialising a notebook cannot reproduce every writer's layout (Colab escapes
``<``, ``>`` and ``&`` as ``\\u003c``..., some writers drop the final newline), and
one changed cell must not re-indent the whole file. So the text is scanned once for
where each cell's ``"source"`` value lies, and only the values of changed cells are
replaced, written in the layout the old value had: a string or a list of lines, on
one line or one item a line at the old indentation, with the file's escapes and
line endings.
"""

from __future__ import annotations

import json
import re
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Dict, List, Tuple, Union

Span = Tuple[int, int]

_WS = re.compile(r"[ \t\n\r]*")
_ATOM = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|NaN|-?Infinity")
_HTML_ESCAPES = (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"))


class LayoutError(Exception):
    """The text is not the JSON the notebook was loaded from (never for a valid file)."""


def source_spans(text: str) -> Dict[int, Span]:
    """``{cell index (0-based): (start, end)}`` of each cell's ``"source"`` value."""
    spans: Dict[int, Span] = {}
    for key, start in _members(text, _skip_ws(text, 0)):
        if key == "cells" and text[start] == "[":
            for index, cell_start in enumerate(_items(text, start)):
                if text[cell_start] == "{":
                    for cell_key, value_start in _members(text, cell_start):
                        if cell_key == "source":
                            spans[index] = (value_start, _value_end(text, value_start))
    return spans


def item_spans(text: str, pos: int) -> List[Span]:
    """``(start, end)`` of each item of the JSON array at ``pos`` (a list ``source``)."""
    return [(start, _value_end(text, start)) for start in _items(text, pos)]


def render_like(value: Union[str, List[str]], old: str, text: str) -> str:
    """``value`` as JSON, laid out as the ``old`` value was in the file ``text``."""
    newline = "\r\n" if "\r\n" in text else "\n"
    ascii_only = text.isascii() and "\\u" in text
    html = any(escape in text for _, escape in _HTML_ESCAPES)

    def string(item: str) -> str:
        out = json.dumps(item, ensure_ascii=ascii_only)
        if html:
            for char, escape in _HTML_ESCAPES:
                out = out.replace(char, escape)
        return out

    if isinstance(value, str):
        return string(value)
    if not value:
        return "[]"
    if "\n" not in old:  # one line: ["a", "b"]
        separator = ", " if ", " in old or old.startswith("[ ") else ","
        return "[" + separator.join(string(item) for item in value) + "]"
    first = _skip_ws(old, 1)
    item_indent = old[old.rfind("\n", 0, first) + 1:first]
    close_indent = old[old.rfind("\n") + 1:-1]
    body = ("," + newline).join(item_indent + string(item) for item in value)
    return "[" + newline + body + newline + close_indent + "]"


def splice(text: str, replacements: Dict[int, Union[str, List[str]]]) -> str:
    """``text`` with the sources of the cells in ``replacements`` replaced."""
    try:
        spans = source_spans(text)
    except (IndexError, ValueError, RecursionError) as exc:
        raise LayoutError(f"cannot locate the cells: {type(exc).__name__}") from None
    out: List[str] = []
    last = 0
    for index in sorted(replacements):
        span = spans.get(index)
        if span is None:
            raise LayoutError(f"cell {index + 1} has no source to replace")
        start, end = span
        out.append(text[last:start])
        out.append(render_like(replacements[index], text[start:end], text))
        last = end
    out.append(text[last:])
    return "".join(out)


# -- a minimal scanner: positions only; json.loads has already validated the text -----
def _skip_ws(text: str, pos: int) -> int:
    match = _WS.match(text, pos)
    return match.end() if match else pos


def _members(text: str, pos: int) -> List[Tuple[str, int]]:
    """(key, value start) of each member of the object at ``pos``."""
    assert text[pos] == "{"
    found: List[Tuple[str, int]] = []
    pos = _skip_ws(text, pos + 1)
    if text[pos] == "}":
        return found
    while True:
        key, pos = scanstring(text, pos + 1)
        pos = _skip_ws(text, pos)
        if text[pos] != ":":
            raise ValueError("':' expected")
        start = _skip_ws(text, pos + 1)
        found.append((key, start))
        pos = _skip_ws(text, _value_end(text, start))
        if text[pos] == "}":
            return found
        if text[pos] != ",":
            raise ValueError("',' expected")
        pos = _skip_ws(text, pos + 1)


def _items(text: str, pos: int) -> List[int]:
    """The start of each item of the array at ``pos``."""
    assert text[pos] == "["
    starts: List[int] = []
    pos = _skip_ws(text, pos + 1)
    if text[pos] == "]":
        return starts
    while True:
        starts.append(pos)
        pos = _skip_ws(text, _value_end(text, pos))
        if text[pos] == "]":
            return starts
        if text[pos] != ",":
            raise ValueError("',' expected")
        pos = _skip_ws(text, pos + 1)


def _value_end(text: str, pos: int) -> int:
    char = text[pos]
    if char == '"':
        return int(scanstring(text, pos + 1)[1])
    if char == "{":
        members = _members(text, pos)
        end = _value_end(text, members[-1][1]) if members else pos + 1
        return _skip_ws(text, end) + 1
    if char == "[":
        items = _items(text, pos)
        end = _value_end(text, items[-1]) if items else pos + 1
        return _skip_ws(text, end) + 1
    match = _ATOM.match(text, pos)
    if match is None:
        raise ValueError(f"unexpected {char!r}")
    return match.end()
