"""Read a file once, decode it as Python does, parse it once, and write it back safely.

The encoding comes from the coding cookie or a BOM (PEP 263, via ``tokenize``), so
the fixed file is written in the encoding and with the BOM it had; libcst keeps line
endings. Writes are atomic (temporary file + rename) and refuse to overwrite a file
that changed on disk since it was read, or a file that is read-only.
"""

from __future__ import annotations

import ast
import codecs
import functools
import io
import os
import re
import stat
import tokenize
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, Iterator, List, Optional, Tuple

from mplint.core import temp_files
from mplint.core.python_syntax import TooDeep, python_tree
from mplint.core.regular_files import NotRegularFile, read_regular

if TYPE_CHECKING:  # pragma: no cover (libcst is imported by the first parse: a file no check
    import libcst as cst  # may report in is only decoded and syntax-checked by CPython)


#: libcst parses about 0.2-0.5 MB of Python a second and needs ~500 bytes of memory
#: per source byte; no hand-written module comes near this, generated ones can.
#: Only files that mention TensorFlow or Keras are parsed at all.
MAX_PARSE_BYTES = 2 * 1024 * 1024

#: Levels of libcst's tree mplint parses. libcst's native parser recurses once per
#: level and overflows the C stack, killing the process, from about 5,500 levels (an
#: attribute chain ``a.b.b...``) or 7,055 terms of one ``and``/``or`` chain (libcst
#: 1.9, 8 MB stack), and slows down steeply well before (a 3,000-term ``+`` chain
#: takes seconds). CPython keeps an ``and``/``or`` chain flat, and Python 3.9, 3.10
#: and 3.13 accept other chains 8,000 deep, so its verdict alone does not protect.
#: Hand-written code stays far below: tensorflow's deepest file has about 30.
MAX_NESTING = 3000

#: Calls, subscripts and attributes one after another (``a[0][0]...``, ``f()()...``)
#: mplint parses. libcst's parser takes time cubic in such a chain (``a[0]`` 500 deep
#: 0.65 s, 1,000 deep 3.8 s, 2,900 deep 85 s); a long hand-written chain of methods
#: has a few dozen links.
MAX_TRAILERS = 500


class SourceError(Exception):
    """The file cannot be read or parsed; the message is one line for the user."""


@dataclass
class Source:
    path: str
    raw: bytes
    text: str
    encoding: str
    bom: bool
    #: shell lines the program runs (a notebook's ``!pip install``), which are not Python
    shell: Tuple[str, ...] = ()

    def encode(self, text: str) -> bytes:
        data = text.encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data


_WIDE_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
              (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


def decode(path: str, raw: bytes) -> Source:
    """Decode bytes the way the Python interpreter would."""
    if b"\x00" in raw:
        for mark, name in _WIDE_BOMS:
            if raw.startswith(mark):
                raise SourceError(f"is encoded as {name}, which Python cannot read as source "
                                  "(null bytes); save it as UTF-8")
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
    """The file's bytes; a FIFO or device is refused, never waited on."""
    try:
        return read_regular(path)
    except IsADirectoryError:
        raise SourceError("is a directory, not a file") from None
    except NotRegularFile:
        raise SourceError("is not a regular file (a FIFO, socket or device); not read") from None
    except OSError as exc:
        raise SourceError(f"cannot be read: {exc.strerror or exc}") from None


def read_source(path: str) -> Source:
    return decode(path, read_bytes(path))


def parse(source: Source) -> cst.Module:
    """Parse with libcst, after guards that keep a bad file from stalling or
    crashing the whole run (libcst's native parser overflows its stack, killing
    the process, on deep nesting; see :data:`MAX_NESTING`)."""
    import libcst as cst

    size = len(source.raw)
    if size > MAX_PARSE_BYTES:
        raise SourceError(
            f"is {size / 1024 / 1024:.1f} MB, over the {MAX_PARSE_BYTES // 1024 // 1024} MB mplint parses "
            "(generated code?); not checked. Add it to 'extend-exclude' to skip it quietly")
    python = functools.lru_cache(maxsize=1)(lambda: _python_tree(source.text))  # compiled once, if at all
    if _maybe_too_deep(source.text):
        _refuse_too_deep(python()[0])
    if _LIBCST_ACCEPTS.search(source.text):
        message = python()[1]
        if message is not None:
            raise SourceError(message)
    try:
        return parse_text(source.text)
    except cst.ParserSyntaxError as exc:
        python_says = python()[1]
        if python_says is None:  # valid Python: the fault is the parser's, not the file's
            raise SourceError(f"is valid Python that mplint's parser (libcst) cannot read "
                              f"({_libcst_message(exc)}); not checked") from None
        raise SourceError(python_says) from None
    except RecursionError:
        raise SourceError("too deeply nested to parse") from None
    except Exception as exc:  # libcst raises assorted errors on odd input
        raise SourceError(f"cannot be parsed: {type(exc).__name__}: {exc}") from None


def parse_text(text: str) -> cst.Module:
    """``libcst.parse_module``, less what it loses: a file of lone-CR line endings
    keeps its final ``\\r`` (libcst drops it, and the fixed file would lose it)."""
    import libcst as cst

    with _trusted_nodes():
        module = cst.parse_module(text)
    if text.endswith("\r") and not module.has_trailing_newline:
        module = module.with_changes(has_trailing_newline=True)
    return module


@contextmanager
def _trusted_nodes() -> Iterator[None]:
    """Build libcst nodes without validating each one, for the parser's own output.

    Every node checks its fields as it is made (``CSTNode.__post_init__``), about a
    quarter of a parse. A tree the parser builds from real source is valid by
    construction; libcst's own note on ``__post_init__`` says validation could be
    skipped when parsing. Nodes made anywhere else (a fix) are still validated:
    the check is restored as soon as the parser returns, and no libcst class
    defines its own ``__post_init__`` (``tests/test_source.py`` pins that).
    """
    import libcst as cst

    node = cst.CSTNode
    validate = node.__dict__["__post_init__"]
    node.__post_init__ = _no_validation  # type: ignore[method-assign]
    try:
        yield
    finally:
        node.__post_init__ = validate  # type: ignore[method-assign]


def _no_validation(self: cst.CSTNode) -> None:
    return None


def check_syntax(source: Source) -> None:
    """Raise SourceError, as :func:`parse` would, for a file that does not parse,
    without building a libcst tree: CPython's parser answers at a tenth of the cost,
    and libcst (which may know newer syntax) is asked only to confirm an error."""
    if _python_rejects(source.text) is not None:
        parse(source)


_DEEP_INDENT = re.compile(r"\n[ \t]{100}")
_NOT_BRACKETS = re.compile(r"[^()\[\]{}]+")
_DEPTH_STEP = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
#: operators: each can add a level to libcst's tree (a chain ``a + a + ...``)
_OPERATORS = re.compile(r"[-+*/%@&|^~]")
#: words that can add a level; substrings, so C-speed to count (a word inside a
#: longer one only overcounts, which costs a compile, never a crash)
_CHAIN_WORDS = ("and", " or", "\nor", "not", " if ", "lambda", "await", "elif")
#: trailers that can add a level: a call or subscript after a call or subscript
#: (``f()()``, ``a[0][0]``), ``.b`` followed by another, a line starting with ``.``
#: (a chain across lines); one regex each, since an alternation is twice as slow
_TRAILERS = (re.compile(r"[)\]]\s*[.(\[]"), re.compile(r"\.\w+(?=\.)"), re.compile(r"\n[ \t]*\."))


def _maybe_too_deep(text: str) -> bool:
    """A cheap test (C-speed string work) for the shapes that can crash libcst: very
    long lines, deep indentation, brackets nested 100 deep, or enough operators,
    ``and``/``or`` and other chain words in the file to nest :data:`MAX_NESTING`
    levels. The test costs about 1-2% of a libcst parse; only the files it picks
    (16 of 1,931 TensorFlow/Keras files, 14% of their bytes: the largest) pay for
    CPython's compile and a walk of its tree first (an eighth of a libcst parse);
    the rest go straight to libcst."""
    if max(map(len, text.split("\n"))) >= 1000 or _DEEP_INDENT.search(text):
        return True
    trailers = [len(trailer.findall(text)) for trailer in _TRAILERS]
    if trailers[0] >= MAX_TRAILERS:  # a chain of calls or subscripts (3 more of CPython's 13,348 files)
        return True
    links = len(_OPERATORS.findall(text)) + sum(trailers)
    if links + sum(map(text.count, _CHAIN_WORDS)) >= MAX_NESTING:
        return True
    brackets = _NOT_BRACKETS.sub("", text)
    if len(brackets) < 100:
        return False
    return max(accumulate(map(_DEPTH_STEP.__getitem__, brackets))) >= 100


def _refuse_too_deep(tree: Optional[ast.AST]) -> None:
    """Raise SourceError when libcst's tree of CPython's ``tree`` would nest deeper
    than :data:`MAX_NESTING` levels (CPython's own limit raised already)."""
    if tree is None:
        return  # a syntax error: libcst has the last word (and reports it)
    line = _too_deep_for_libcst(tree)
    if line is not None:
        raise SourceError(f"too deeply nested to parse (line {line}: over the {MAX_NESTING:,} levels of "
                          f"nesting or {MAX_TRAILERS} calls, subscripts and attributes in a row mplint parses)")


def _too_deep_for_libcst(tree: ast.AST) -> Optional[int]:
    """The line of the first node libcst's tree would hold deeper than
    :data:`MAX_NESTING` levels, from CPython's ``tree``. libcst nests what CPython
    keeps flat: ``a and b and c`` is one BoolOp but two levels of BooleanOperation
    (and ``"a" "b" "c"`` one Constant, but libcst stops such strings itself, with a
    syntax error, not a crash)."""
    stack: List[Tuple[ast.AST, int, int]] = [(tree, 0, 0)]
    while stack:
        node, depth, chain = stack.pop()
        depth += len(node.values) - 1 if isinstance(node, ast.BoolOp) else 1
        if depth > MAX_NESTING or chain > MAX_TRAILERS:
            return getattr(node, "lineno", 1)
        inner = node.func if isinstance(node, ast.Call) else \
            node.value if isinstance(node, (ast.Subscript, ast.Attribute)) else None
        stack.extend((child, depth, chain + 1 if child is inner else 0) for child in ast.iter_child_nodes(node))
    return None


#: syntax that libcst 1.9 accepts and CPython rejects: Python 2's ``except E, e:``
#: (an error before Python 3.14, a tuple of types without ``as`` from 3.14 on) and
#: ``{**a for a in b}``. Files holding these shapes get CPython's verdict first.
_LIBCST_ACCEPTS = re.compile(r"except\b[ \t*]*(?:\([^()\n]*\)|[^(,:\n])*,[^:\n]*:|\{\s*\*\*[^}]*\bfor\b")


def _python_rejects(text: str) -> Optional[str]:
    """CPython's verdict on the text (a tree only; nothing runs), in its words.

    A file too deep for CPython raises SourceError at once. Other syntax errors
    are returned, not raised: libcst may know syntax newer than this interpreter,
    so it has the last word (except for :data:`_LIBCST_ACCEPTS`).
    """
    return _python_tree(text)[1]


def _python_tree(text: str) -> Tuple[Optional[ast.AST], Optional[str]]:
    """CPython's tree of the text, or None and its syntax error (see :func:`_python_rejects`)."""
    try:
        return python_tree(text)
    except TooDeep as err:
        raise SourceError(str(err)) from None


_LIBCST_PREFIX = re.compile(r"^(?:parser|tokenizer) error: (?:error at \d+:\d+: )?")


def _libcst_message(exc: cst.ParserSyntaxError) -> str:
    first = str(exc.message).splitlines()[0] if exc.message else "invalid syntax"
    return f"syntax error at line {exc.raw_line}, column {exc.raw_column + 1}: {_LIBCST_PREFIX.sub('', first)}"


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _writable(mode: int) -> bool:
    # By mode bits, not os.access: root may write anything, but a file marked
    # read-only was marked so on purpose.
    return bool(mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _unchanged(target: str, expected: Optional[bytes]) -> None:
    """Raise SourceError when ``target`` no longer holds ``expected`` (None: no test)."""
    if expected is not None and read_regular(target) != expected:
        raise SourceError("changed on disk while mplint was fixing it; not written")


def write_atomic(path: str, data: bytes, expected: Optional[bytes], within: Optional[str] = None) -> None:
    """Replace ``path`` with ``data`` atomically (temporary file + rename).

    ``expected`` is the content the file had when read; if it changed since, the
    file is left alone and SourceError is raised. It is compared twice: before the
    temporary file is written and again just before the rename, after the fsync
    (the slow part), so an edit saved while mplint worked is never overwritten;
    only one landing in the microseconds between that last read and the rename,
    or written through a handle opened on the old file, can still be lost (as
    with any tool that saves by rename). A read-only file is never replaced. A
    symlink keeps pointing at the file, which is replaced, when that file lies
    inside the tree ``within`` (a symlink out of it is refused: a repository's link
    must not decide what mplint overwrites elsewhere).
    """
    target = os.path.realpath(path)
    if within is not None and not _inside(target, os.path.realpath(within)):
        raise SourceError(f"leads through a symbolic link to {target}, outside the tree being "
                          f"fixed ({within}); not written")
    tmp = None
    try:
        st = os.stat(target)
        if not _writable(st.st_mode) or not os.access(target, os.W_OK):
            raise SourceError("is read-only; not written")
        _unchanged(target, expected)
        fd, tmp = temp_files.create(os.path.dirname(target))
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        _unchanged(target, expected)
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise SourceError(f"cannot be written: {exc.strerror or exc}") from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
