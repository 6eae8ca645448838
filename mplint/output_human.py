"""Output for a person: the ``concise`` format (one line a finding) and the ``full``
format (the source lines with carets under the finding, as ruff's ``full``),
coloured on a terminal only.

``[*]`` marks a finding only when ``mplint fix`` with the current flags would fix
it (ruff's applicability): a safe fix always, an unsafe one with
``--unsafe-fixes``. The summary counts the same way (:func:`would_fix`).

Colour follows the conventions CPython's own tracebacks follow: ``NO_COLOR`` turns
it off, ``FORCE_COLOR`` on, ``TERM=dumb`` off; otherwise only a terminal gets it,
never a pipe or a file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import IO, Callable, Dict, List, Mapping, Optional, Sequence

from mplint.core.findings import FileError, Finding
from mplint.core.source_kinds import is_notebook
from mplint.output_escape import printable
from mplint.output_syntax import SYNTAX_ERROR, SYNTAX_ERROR_TITLE
from mplint.rule.levels import Safety

#: lines shown around a finding in the ``full`` format
CONTEXT = 1
#: a finding longer than this shows its first and last lines
MAX_LINES = 6


def would_fix(fix: Optional[Safety], unsafe_fixes: bool) -> bool:
    """Whether a finding's fix (None: it has none) is applied by ``mplint fix`` with
    these flags."""
    return fix is not None and fix.applies(unsafe_fixes)


def use_color(stream: IO[str]) -> bool:
    """Whether to colour what goes to ``stream``."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


def _sgr(code: str) -> Callable[[str], str]:
    return lambda text: f"\x1b[{code}m{text}\x1b[0m"


_BOLD, _RED, _GREEN, _CYAN, _BLUE = _sgr("1"), _sgr("1;31"), _sgr("32"), _sgr("36"), _sgr("1;34")
_YELLOW = _sgr("1;33")


@dataclass(frozen=True)
class Style:
    """How findings are shown to a person: which fixes count, colour, and the
    contents of files that differ from the disk (stdin, a fix not written)."""

    unsafe_fixes: bool = False
    color: bool = False
    sources: Mapping[str, bytes] = field(default_factory=dict)

    def paint(self, painter: Callable[[str], str], text: str) -> str:
        return painter(text) if self.color else text


def _headline(f: Finding, style: Style) -> str:
    location, message = style.paint(_BOLD, printable(f.location)), printable(f.message)
    if f.rule == SYNTAX_ERROR:
        return f"{location}: {style.paint(_RED, SYNTAX_ERROR_TITLE)}: {message}"
    mark = " " + style.paint(_CYAN, "[*]") if would_fix(f.fix, style.unsafe_fixes) else ""
    severity = style.paint(_RED if f.severity == "error" else _YELLOW, f"{f.severity}:")
    return f"{location}: {style.paint(_RED, f.rule)} {severity} {message}{mark}"


def concise(findings: List[Finding], errors: Sequence[FileError] = (), style: Style = Style()) -> str:
    """``path:line:col: MPxxx severity: message [*]``, one line a finding."""
    lines = [_headline(f, style) for f in findings]
    return "\n".join(lines) + ("\n" if lines else "")


# -- full: the source lines with carets ----------------------------------------------------
class SourceLines:
    """The lines of each file a finding points into (a notebook's by cell), read once."""

    def __init__(self, given: Mapping[str, bytes]) -> None:
        self.given = given
        self._lines: Dict[str, Dict[Optional[int], List[str]]] = {}

    def lines(self, path: str, cell: Optional[int]) -> List[str]:
        if path not in self._lines:
            self._lines[path] = self._read(path)
        return self._lines[path].get(cell, [])

    def _read(self, path: str) -> Dict[Optional[int], List[str]]:
        from mplint.core.source import SourceError, decode, read_bytes

        try:
            raw = self.given[path] if path in self.given else read_bytes(path)
            if not is_notebook(path):
                return {None: _lines(decode(path, raw).text)}
            cells = json.loads(raw.decode("utf-8-sig")).get("cells", [])
        except (SourceError, OSError, ValueError, AttributeError):
            return {}  # the finding is still shown, without its source
        out: Dict[Optional[int], List[str]] = {}
        for number, cell in enumerate(cells, 1):
            source = cell.get("source", "") if isinstance(cell, dict) else ""
            text = "".join(source) if isinstance(source, list) else str(source)
            out[number] = _lines(text)
        return out


def _lines(text: str) -> List[str]:
    """Lines as the tokenizer counts them (split at "\n" only), without the empty
    one after a final newline."""
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def _fix_note(f: Finding, style: Style) -> Optional[str]:
    if f.fix is None:
        return None
    if f.fix is Safety.SAFE:
        return "fix: `mplint fix`"
    return "fix (unsafe, may change behaviour): `mplint fix --unsafe-fixes`"


def _frame(f: Finding, lines: List[str], style: Style) -> List[str]:
    """The finding's lines with a line of context each side, and carets under it."""
    if not 1 <= f.line <= len(lines):
        return []
    first = max(1, f.line - CONTEXT)
    last = min(len(lines), max(f.end_line, f.line) + CONTEXT)
    shown = list(range(first, last + 1))
    if len(shown) > MAX_LINES + 2 * CONTEXT:  # a long statement: its head and tail
        shown = shown[: CONTEXT + 3] + [0] + shown[-(CONTEXT + 2):]
    width = len(str(last))
    gutter = style.paint(_BLUE, " " * width + " |")
    out = [gutter]
    for number in shown:
        if number == 0:
            out.append(style.paint(_BLUE, "." * width + " |"))
            continue
        text = lines[number - 1].rstrip("\r")
        out.append(style.paint(_BLUE, f"{number:>{width}} |") + (" " + _shown(text) if text else ""))
        if number == f.line:
            start = len(_shown(text[: f.col - 1]))
            end = len(_shown(text[: f.end_col - 1])) if f.end_line == f.line else len(_shown(text))
            carets = "^" * max(1, end - start)
            out.append(f"{gutter} {' ' * start}{style.paint(_RED, carets + ' ' + f.rule)}")
    out.append(gutter)
    return out


def _shown(text: str) -> str:
    """A source line as the frame shows it: control characters escaped, tabs expanded
    (the carets are placed under this text)."""
    return printable(text).expandtabs(4)


def full(findings: List[Finding], errors: Sequence[FileError] = (), style: Style = Style()) -> str:
    """Each finding as ruff's ``full`` format shows it: the headline, the source lines
    with carets under the finding, how to fix it and where it is explained."""
    sources = SourceLines(style.sources)
    blocks = []
    for f in findings:
        block = [_headline(f, style), *_frame(f, sources.lines(f.path, f.cell), style)]
        note = _fix_note(f, style)
        if note is not None:
            block.append(f"  = {note}")
        if f.rule != SYNTAX_ERROR:
            block.append(f"  = help: `mplint rule {f.rule}` explains why this matters and how to fix it")
        blocks.append("\n".join(block) + "\n\n")
    return "".join(blocks)


# -- fix --diff ---------------------------------------------------------------------------
def color_diff(diff: str) -> str:
    """A unified diff with removed lines red, added lines green, hunks cyan."""
    out = []
    for line in diff.splitlines(keepends=True):
        body, end = line.rstrip("\n"), line[len(line.rstrip("\n")):]
        if line.startswith(("+++", "---")):
            out.append(_BOLD(body) + end)
        elif line.startswith("@@"):
            out.append(_CYAN(body) + end)
        elif line.startswith("+"):
            out.append(_GREEN(body) + end)
        elif line.startswith("-"):
            out.append(_sgr("31")(body) + end)
        else:
            out.append(line)
    return "".join(out)


HUMAN_FORMATS: Dict[str, object] = {"concise": concise, "full": full}
