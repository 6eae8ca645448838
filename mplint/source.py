"""Read a file once, decode it as Python does, parse it once, and write it back safely.

The encoding comes from the coding cookie or a BOM (PEP 263, via ``tokenize``), so
the fixed file is written in the encoding and with the BOM it had; libcst keeps line
endings. Writes are atomic (temporary file + rename) and refuse to overwrite a file
that changed on disk since it was read.
"""

from __future__ import annotations

import codecs
import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from typing import Optional

import libcst as cst


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
    try:
        return cst.parse_module(source.text)
    except cst.ParserSyntaxError as exc:
        message = str(exc.message).splitlines()[0] if exc.message else "invalid syntax"
        raise SourceError(f"syntax error at line {exc.raw_line}, column {exc.raw_column + 1}: {message}") from None
    except RecursionError:
        raise SourceError("too deeply nested to parse") from None
    except Exception as exc:  # libcst raises assorted errors on odd input
        raise SourceError(f"cannot be parsed: {type(exc).__name__}: {exc}") from None


def write_atomic(path: str, data: bytes, expected: Optional[bytes]) -> None:
    """Replace ``path`` with ``data`` atomically.

    ``expected`` is the content the file had when read; if it changed since, the
    file is left alone and SourceError is raised.
    """
    try:
        st = os.stat(path)
        if expected is not None:
            with open(path, "rb") as handle:
                if handle.read() != expected:
                    raise SourceError("changed on disk while mplint was fixing it; not written")
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".mplint-", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise SourceError(f"cannot be written: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        if not os.access(path, os.W_OK):
            raise SourceError("is read-only; not written")
        os.replace(tmp, path)
    except OSError as exc:
        raise SourceError(f"cannot be written: {exc.strerror or exc}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
