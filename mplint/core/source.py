"""Read a file once, decode it as Python does, parse it once, and write it back safely.

The encoding comes from the coding cookie or a BOM (PEP 263, via ``tokenize``), so
the fixed file is written in the encoding and with the BOM it had; libcst keeps line
endings. Writes are atomic (temporary file + rename) and refuse to overwrite a file
that changed on disk since it was read, or a file that is read-only.
"""

from __future__ import annotations

import ast
import codecs
import io
import os
import re
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from itertools import accumulate
from typing import Optional

import libcst as cst


#: libcst parses about 0.2-0.5 MB of Python a second and needs ~500 bytes of memory
#: per source byte; no hand-written module comes near this, generated ones can.
#: Only files that mention TensorFlow or Keras are parsed at all.
MAX_PARSE_BYTES = 2 * 1024 * 1024


class SourceError(Exception):
    """The file cannot be read or parsed; the message is one line for the user."""


@dataclass
class Source:
    path: str
    raw: bytes
    text: str
    encoding: str
    bom: bool

    def encode(self, text: str) -> bytes:
        data = text.encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data


def decode(path: str, raw: bytes) -> Source:
    """Decode bytes the way the Python interpreter would."""
    if b"\x00" in raw:
        raise SourceError("contains null bytes (binary file?)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        raise SourceError(f"cannot determine encoding: {exc}") from None
    bom = encoding == "utf-8-sig"
    body = raw[len(codecs.BOM_UTF8):] if bom else raw
    if bom:
        encoding = "utf-8"
    try:
        text = body.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        reason = exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)
        raise SourceError(f"cannot be decoded as {encoding}: {reason}") from None
    return Source(path, raw, text, encoding, bom)


def read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except IsADirectoryError:
        raise SourceError("is a directory, not a file") from None
    except OSError as exc:
        raise SourceError(f"cannot be read: {exc.strerror or exc}") from None


def read_source(path: str) -> Source:
    return decode(path, read_bytes(path))


def parse(source: Source) -> cst.Module:
    """Parse with libcst, after guards that keep a bad file from stalling or
    crashing the whole run (libcst's native parser overflows its stack, killing
    the process, on nesting that CPython itself rejects)."""
    size = len(source.raw)
    if size > MAX_PARSE_BYTES:
        raise SourceError(
            f"is {size / 1024 / 1024:.1f} MB, over the {MAX_PARSE_BYTES // 1024 // 1024} MB mplint parses "
            "(generated code?); not checked. Add it to 'extend-exclude' to skip it quietly")
    if _maybe_too_deep(source.text):
        _python_rejects(source.text)  # raises SourceError when CPython finds it too deep
    try:
        return cst.parse_module(source.text)
    except cst.ParserSyntaxError as exc:
        raise SourceError(_python_rejects(source.text) or _libcst_message(exc)) from None
    except RecursionError:
        raise SourceError("too deeply nested to parse") from None
    except Exception as exc:  # libcst raises assorted errors on odd input
        raise SourceError(f"cannot be parsed: {type(exc).__name__}: {exc}") from None


def check_syntax(source: Source) -> None:
    """Raise SourceError, as :func:`parse` would, for a file that does not parse,
    without building a libcst tree: CPython's parser answers at a tenth of the cost,
    and libcst (which may know newer syntax) is asked only to confirm an error."""
    if _python_rejects(source.text) is not None:
        parse(source)


_LONG_LINE = re.compile(r"[^\n]{1000}")
_DEEP_INDENT = re.compile(r"^[ \t]{100}", re.M)
_NOT_BRACKETS = re.compile(r"[^()\[\]{}]+")
_DEPTH_STEP = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}


def _maybe_too_deep(text: str) -> bool:
    """A cheap test (C-speed string work) for the shapes that can crash libcst: very
    long lines (thousands of brackets, lambdas or unary minuses), deep indentation,
    or brackets nested 100 deep. Only such files pay for CPython's own compile first
    (a tenth of a libcst parse); the rest go straight to libcst."""
    if _LONG_LINE.search(text) or _DEEP_INDENT.search(text):
        return True
    brackets = _NOT_BRACKETS.sub("", text)
    if len(brackets) < 100:
        return False
    return max(accumulate(map(_DEPTH_STEP.__getitem__, brackets))) >= 100


#: CPython's own limits; libcst has none and crashes far beyond them.
_TOO_DEEP = ("too many nested parentheses", "too many levels of indentation",
             "too many statically nested blocks")


def _python_rejects(text: str) -> Optional[str]:
    """CPython's verdict on the text (a tree only; nothing runs), in its words.

    A file too deep for CPython raises SourceError at once. Other syntax errors
    are returned, not raised: libcst may know syntax newer than this interpreter,
    so it has the last word.
    """
    try:
        compile(text, "<mplint>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as err:
        if any(reason in str(err.msg) for reason in _TOO_DEEP):
            raise SourceError(f"too deeply nested to parse (line {err.lineno}: {err.msg})") from None
        return f"syntax error at line {err.lineno or 1}, column {err.offset or 1}: {err.msg}"
    except (RecursionError, MemoryError):
        raise SourceError("too deeply nested to parse (Python itself cannot compile it)") from None
    except ValueError as err:  # e.g. source code string cannot contain null bytes
        return f"cannot be parsed: {err}"
    return None


_LIBCST_PREFIX = re.compile(r"^(?:parser|tokenizer) error: (?:error at \d+:\d+: )?")


def _libcst_message(exc: cst.ParserSyntaxError) -> str:
    first = str(exc.message).splitlines()[0] if exc.message else "invalid syntax"
    return f"syntax error at line {exc.raw_line}, column {exc.raw_column + 1}: {_LIBCST_PREFIX.sub('', first)}"


def _writable(mode: int) -> bool:
    # By mode bits, not os.access: root may write anything, but a file marked
    # read-only was marked so on purpose.
    return bool(mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def write_atomic(path: str, data: bytes, expected: Optional[bytes]) -> None:
    """Replace ``path`` with ``data`` atomically (temporary file + rename).

    ``expected`` is the content the file had when read; if it changed since, the
    file is left alone and SourceError is raised. A read-only file is never
    replaced. A symlink keeps pointing at the file, which is replaced.
    """
    target = os.path.realpath(path)
    tmp = None
    try:
        st = os.stat(target)
        if not _writable(st.st_mode) or not os.access(target, os.W_OK):
            raise SourceError("is read-only; not written")
        if expected is not None:
            with open(target, "rb") as handle:
                if handle.read() != expected:
                    raise SourceError("changed on disk while mplint was fixing it; not written")
        fd, tmp = tempfile.mkstemp(prefix=".mplint-", suffix=".tmp", dir=os.path.dirname(target))
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise SourceError(f"cannot be written: {exc.strerror or exc}") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
