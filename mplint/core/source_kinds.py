"""The kinds of source mplint reads: a Python file or a Jupyter notebook.

Every caller (the worker pool, stdin, the API, the project index) turns a path and
its bytes into a source with :func:`load_source` and hands it to the linter's
``check`` or ``fix``; nothing else knows which kind it holds. A kind gives the
Python program to analyse, maps findings and errors back to its own file (cells for
a notebook), and encodes fixed program text as the file's bytes. ruff's
``SourceKind`` is the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional, Union

from mplint.core.findings import FileError, Finding

if TYPE_CHECKING:  # pragma: no cover (reading a source loads libcst; naming its kind must not)
    from mplint.core.notebooks import Notebook
    from mplint.core.source import Source

NOTEBOOK_SUFFIX = ".ipynb"


class PythonSource:
    """A ``.py`` file (or stdin named as one)."""

    def __init__(self, path: str, raw: bytes) -> None:
        self.path = path
        self.raw = raw
        self._source: Optional["Source"] = None

    def program(self) -> Optional["Source"]:
        """The decoded text (SourceError when it cannot be decoded)."""
        if self._source is None:
            from mplint.core.source import decode

            self._source = decode(self.path, self.raw)
        return self._source

    def warnings(self) -> List[FileError]:
        return []

    def finding(self, finding: Finding) -> Finding:
        return finding

    def error(self, error: FileError) -> FileError:
        return error

    def encode(self, text: str) -> bytes:
        source = self.program()
        assert source is not None
        return source.encode(text)


class NotebookSource:
    """A Jupyter notebook: its code cells are one program (see :mod:`notebooks`)."""

    def __init__(self, path: str, raw: bytes) -> None:
        self.path = path
        self.raw = raw
        self._book: Optional["Notebook"] = None

    def program(self) -> Optional["Source"]:
        """The cells as one program; None for a notebook in another language or with
        no code cell that parses (SourceError when the JSON is broken)."""
        if self._book is None:
            from mplint.core.notebooks import Notebook

            self._book = Notebook.load(self.path, self.raw)
        if not self._book.is_python or not self._book.program:
            return None
        return self._book.source()

    def warnings(self) -> List[FileError]:
        return self._book.skipped_warnings() if self._book is not None and self._book.is_python else []

    def finding(self, finding: Finding) -> Finding:
        return self._book.finding(finding) if self._book is not None else finding

    def error(self, error: FileError) -> FileError:
        return self._book.error(error) if self._book is not None else error

    def encode(self, text: str) -> bytes:
        assert self._book is not None
        return self._book.rebuild(text)


SourceKind = Union[PythonSource, NotebookSource]


def is_notebook(path: str) -> bool:
    return path.endswith(NOTEBOOK_SUFFIX)


def load_source(path: str, raw: bytes) -> SourceKind:
    """The source of the file ``path`` (its name decides the kind; stdin passes
    ``--stdin-filename``) holding ``raw``."""
    return NotebookSource(path, raw) if is_notebook(path) else PythonSource(path, raw)
