"""Jupyter notebooks: the code cells checked as one program, fixed in place.

Cells share names and the dtype policy, so the code cells are joined into one
program, each preceded by a marker comment that maps lines back to cells (cells
are numbered from 1 among all cells, as a reader counts them in the notebook).
IPython magics and shell escapes (``%time``, ``!pip``, ``x = !ls``, ``obj?``)
are not Python: each such line becomes a ``pass`` placeholder at its indentation,
and cell magics other than timing ones skip their cell. A fix rewrites only the
changed cells' ``source``; outputs, metadata and the file's JSON layout (indent,
key order, escaping, line endings) stay as they were, so a notebook without fixes
is never written and one with fixes differs only in those cells.
No nbformat dependency: the format is plain JSON, and a fix is spliced into the
original text (:mod:`notebook_json`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, Union

from mplint.core.findings import FileError, Finding
from mplint.core.notebook_json import LayoutError, splice
from mplint.core.source import Source, SourceError

#: the markers of the joined program; ``{key}`` is the notebook's own key, which no
#: line of its cells holds (:func:`_marker_key`), so no cell can forge a marker
_CELL_MARK = "# mplint: cell {number} {key}"
_MAGIC_MARK = "pass  # mplint: magic {number} {key}"
_MAGIC_LINE = re.compile(r"^\s*(?:[%!?]|[\w.]+\s*=\s*[%!]|[\w.]+\?{1,2}\s*$)")
#: cell magics whose body is still Python
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})


@dataclass
class _Cell:
    index: int  # 1-based among all cells
    text: str  # the cell's source as one string
    first_line: int  # program line of the cell's first line
    #: the indentation IPython strips from each line (its first code line's): `` %%time``
    indent: str = ""


@dataclass
class Notebook:
    path: str
    raw: bytes
    data: Dict[str, Any]
    cells: List[_Cell] = field(default_factory=list)
    program: str = ""
    magics: List[str] = field(default_factory=list)
    #: (cell number, reason) of code cells left out because they do not parse
    skipped: List[Tuple[int, str]] = field(default_factory=list)
    #: what the markers of this notebook's program end with (:func:`_marker_key`)
    key: str = ""

    def skipped_warnings(self) -> List[FileError]:
        return [FileError(self.path, f"cell {number}: {reason}; cell not checked", "warning")
                for number, reason in self.skipped]

    @classmethod
    def load(cls, path: str, raw: bytes) -> "Notebook":
        try:
            data = json.loads(raw.decode("utf-8-sig"))
        except UnicodeDecodeError as exc:
            raise SourceError(f"invalid notebook: not UTF-8 ({exc.reason})") from None
        except json.JSONDecodeError as exc:
            raise SourceError(f"invalid notebook JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
        except RecursionError:  # Python's json recurses once per level of nesting
            raise SourceError("invalid notebook: its JSON nests too deeply to read") from None
        if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
            raise SourceError("invalid notebook: no 'cells' list (nbformat 4 expected)")
        book = cls(path, raw, data)
        book._build()
        return book

    @property
    def is_python(self) -> bool:
        meta = self.data.get("metadata") or {}
        language = ((meta.get("kernelspec") or {}).get("language")
                    or (meta.get("language_info") or {}).get("name") or "python")
        return str(language).lower() == "python"

    def _build(self) -> None:
        lines: List[str] = []
        pending: List[str] = []  # magic lines of the cell being built
        self.key = _marker_key(self.raw, [_joined(c.get("source", "")) for c in self.data["cells"]
                                          if isinstance(c, dict)])
        for number, cell in enumerate(self.data["cells"], 1):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            text = _joined(cell.get("source", ""))
            body = _split_lines(text)
            stripped = _leading_indent(body)
            if stripped:
                body = [line[len(stripped):] for line in body]
            first = next((ln.strip() for ln in body if ln.strip()), "")
            if first.startswith("%%") and first[2:].split(" ")[0] not in _PYTHON_CELL_MAGICS:
                continue  # %%bash, %%writefile...: not Python
            code: List[str] = []
            continued: Optional[str] = None  # indentation of a magic continued with "\\"
            # A cell that parses as it is holds no magic: a line such as "    % 3" or
            # "    != b" continues an expression in brackets (black's style).
            python = not first.startswith("%%") and _syntax_problem("\n".join(body) + "\n") is None
            for line in body:
                if not python and (continued is not None or _MAGIC_LINE.match(line)):
                    indent = continued if continued is not None else line[:len(line) - len(line.lstrip())]
                    code.append(indent + _MAGIC_MARK.format(number=len(self.magics) + len(pending), key=self.key))
                    pending.append(line)
                    continued = indent if line.rstrip().endswith("\\") else None
                else:
                    code.append(line)
            problem = None if python else _syntax_problem("\n".join(code) + "\n")
            if problem is not None:
                # An exercise cell (`batch_size = `) or IPython-only syntax: check the
                # other cells, and say which one was left out.
                self.skipped.append((number, problem))
                pending.clear()
                continue
            self.magics.extend(pending)
            pending.clear()
            lines.append(_CELL_MARK.format(number=number, key=self.key))
            self.cells.append(_Cell(number, text, len(lines) + 1, stripped))
            lines.extend(code)
        self.program = "\n".join(lines) + "\n" if lines else ""

    def source(self) -> Source:
        """The program as a source; its bytes are the program's, so size limits
        count the code and not the notebook's outputs."""
        return Source(self.path, self.program.encode("utf-8", "surrogatepass"), self.program, "utf-8", False,
                      tuple(self.magics))

    # -- positions ------------------------------------------------------------------
    def locate(self, line: int) -> Tuple[int, int]:
        """(cell number, line in cell) of a program line."""
        found = (0, line)
        for cell in self.cells:
            if cell.first_line <= line:
                found = (cell.index, line - cell.first_line + 1)
            else:
                break
        return found

    def finding(self, finding: Finding) -> Finding:
        cell, line = self.locate(finding.line)
        _, end_line = self.locate(finding.end_line)
        return dataclasses.replace(finding, line=line, end_line=end_line, cell=cell)

    def error(self, error: FileError) -> FileError:
        def repl(match: "re.Match[str]") -> str:
            cell, line = self.locate(int(match.group(1)))
            return f"cell {cell}, line {line}"
        return dataclasses.replace(error, message=re.sub(r"\bline (\d+)", repl, error.message))

    # -- writing back -----------------------------------------------------------------
    def rebuild(self, program: str) -> bytes:
        """The notebook's bytes with the cells of ``program``: the changed cells'
        sources are spliced into the original text, and every other byte stays."""
        texts = self._split(program)
        replacements: Dict[int, Union[str, List[str]]] = {}
        for cell in self.cells:
            new = texts[cell.index]
            if new == cell.text:
                continue
            old = self.data["cells"][cell.index - 1].get("source")
            replacements[cell.index - 1] = new if isinstance(old, str) else new.splitlines(keepends=True)
        bom = b"\xef\xbb\xbf" if self.raw.startswith(b"\xef\xbb\xbf") else b""
        try:
            text = splice(self.raw.decode("utf-8-sig"), replacements)
        except LayoutError as exc:
            raise SourceError(f"cannot write the fixed cells back: {exc}") from None
        return bom + text.encode("utf-8")

    def _split(self, program: str) -> Dict[int, str]:
        chunks: Dict[int, List[str]] = {}
        current: Optional[List[str]] = None
        used = set()
        cell_mark = re.compile(r"^# mplint: cell (\d+) " + re.escape(self.key) + "$")
        magic_mark = re.compile(r"^(\s*)pass  # mplint: magic (\d+) " + re.escape(self.key) + "$")
        for line in _split_lines(program):
            mark = cell_mark.match(line)
            if mark:
                current = chunks.setdefault(int(mark.group(1)), [])
                continue
            if current is None:
                if line.strip():
                    raise SourceError("a fix moved code out of the notebook's cells; not written")
                continue
            magic = magic_mark.match(line)
            if magic:
                number = int(magic.group(2))
                used.add(number)
                line = self.magics[number]
            current.append(line)
        if sorted(chunks) != [c.index for c in self.cells] or used != set(range(len(self.magics))):
            raise SourceError("a fix disturbed the notebook's cell layout; not written")
        out = {}
        for cell in self.cells:
            text = "\n".join(cell.indent + line if line and cell.indent else line for line in chunks[cell.index])
            if cell.text.endswith("\n"):
                text += "\n"
            out[cell.index] = text
        return out


def _leading_indent(lines: List[str]) -> str:
    """The indentation IPython removes before running a cell (its ``leading_indent``
    cleanup, before cell magics are read): the first non-blank line's, where every
    non-blank line starts with it ("" otherwise: such a cell is left as written)."""
    first = next((line for line in lines if line.strip()), "")
    indent = first[:len(first) - len(first.lstrip(" \t"))]
    if not indent or any(line.strip() and not line.startswith(indent) for line in lines):
        return ""
    if any(not line.strip() and line and line != indent for line in lines):
        return ""  # a blank line the write-back could not give back as it was
    return indent


def _marker_key(raw: bytes, texts: List[str]) -> str:
    """A word that ends this notebook's marker lines: from its bytes (the same
    program for the same notebook), lengthened until no cell's text holds it."""
    key = hashlib.blake2b(raw, digest_size=8).hexdigest()
    while any(key in text for text in texts):
        key += hashlib.blake2b(key.encode(), digest_size=4).hexdigest()
    return key


def _syntax_problem(code: str) -> Optional[str]:
    """Why a cell's code does not parse on its own, or None."""
    try:
        compile(code, "<cell>", "exec", flags=_ONLY_AST, dont_inherit=True)
    except SyntaxError as err:
        return f"syntax error at line {err.lineno or 1}: {err.msg}"
    except (ValueError, RecursionError, MemoryError) as err:
        return f"cannot be parsed: {type(err).__name__}"
    return None


_ONLY_AST = 0x400  # ast.PyCF_ONLY_AST, without importing ast for one constant


def _split_lines(text: str) -> List[str]:
    """Lines split at ``\n`` only: ``str.splitlines`` would also split at ``\r``,
    form feeds and U+2028 inside string literals, and change the cell on rebuild."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _joined(source: Any) -> str:
    if isinstance(source, list):
        return "".join(str(s) for s in source)
    return str(source or "")
