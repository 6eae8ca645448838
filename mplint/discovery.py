"""Which files to check: walk the paths, honour ``exclude`` and .gitignore.

An explicitly named file is always checked, unless ``--force-exclude`` (which the
pre-commit hook passes, because pre-commit names every file) says to apply
``exclude`` to it too. Matching uses pathspec, the gitignore implementation that
black and others rely on.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import pathspec

from mplint.findings import FileError

SOURCE_SUFFIXES = (".py", ".pyi")


@dataclass
class Discovery:
    files: List[str] = field(default_factory=list)
    errors: List[FileError] = field(default_factory=list)


def _spec(patterns: Iterable[str]) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines(list(patterns))


def _rel(path: Path, base: Path) -> Optional[str]:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return None


class _Ignorer:
    """Answers "is this path excluded?" from config patterns and .gitignore files."""

    def __init__(self, root: Path, exclude: Sequence[str], respect_gitignore: bool) -> None:
        self.root = root
        self.patterns = list(exclude)
        self.exclude = _spec(exclude)
        self.respect_gitignore = respect_gitignore
        self._gitignores: Dict[Path, Optional[pathspec.PathSpec]] = {}
        self._git_root = self._find_git_root(root) if respect_gitignore else None

    @staticmethod
    def _find_git_root(start: Path) -> Optional[Path]:
        for folder in (start, *start.parents):
            if (folder / ".git").exists():
                return folder
        return None

    def _gitignore(self, folder: Path) -> Optional[pathspec.PathSpec]:
        if folder not in self._gitignores:
            lines: List[str] = []
            for name in (".gitignore", ".ignore"):
                try:
                    lines += (folder / name).read_text(encoding="utf-8", errors="replace").splitlines()
                except OSError:
                    pass
            if self._git_root is not None and folder == self._git_root:
                try:
                    lines += (folder / ".git" / "info" / "exclude").read_text(
                        encoding="utf-8", errors="replace").splitlines()
                except OSError:
                    pass
            self._gitignores[folder] = _spec(lines) if lines else None
        return self._gitignores[folder]

    def below(self, folder: Path) -> "_Ignorer":
        """The ignorer for walking a folder named on the command line.

        Patterns that exclude the named folder itself are dropped: naming it asks for
        it (``mplint check fixtures/`` with ``exclude = ["fixtures/"]``); patterns
        that exclude something inside it still apply.
        """
        keep = [p for p in self.patterns if not _spec([p]).match_file(self._probe(folder, True))]
        if len(keep) == len(self.patterns):
            return self
        narrowed = _Ignorer.__new__(_Ignorer)
        narrowed.__dict__.update(self.__dict__)
        narrowed.patterns, narrowed.exclude = keep, _spec(keep)
        return narrowed

    def _probe(self, path: Path, is_dir: bool) -> str:
        rel = _rel(path, self.root)
        probe = rel if rel is not None else path.name
        return probe + "/" if is_dir else probe

    def excluded(self, path: Path, is_dir: bool) -> bool:
        rel = _rel(path, self.root)
        probe = rel if rel is not None else path.name
        if is_dir:
            probe += "/"
        if self.exclude.match_file(probe):
            return True
        # A bare name pattern such as "build" also matches outside the root.
        if rel is None and self.exclude.match_file(path.name + ("/" if is_dir else "")):
            return True
        if not self.respect_gitignore:
            return False
        for folder in path.parents:
            spec = self._gitignore(folder)
            if spec is not None:
                sub = _rel(path, folder)
                if sub is not None and spec.match_file(sub + ("/" if is_dir else "")):
                    return True
            if folder == self._git_root or folder == self.root.parent:
                break
        return False


def is_excluded(path: str, root: Path, exclude: Sequence[str], respect_gitignore: bool = True) -> bool:
    """Whether ``exclude`` or .gitignore covers one file (``--stdin-filename`` with
    ``--force-exclude``); the file need not exist."""
    return _Ignorer(root, exclude, respect_gitignore).excluded(Path(path).absolute(), False)


def discover(paths: Sequence[str], root: Path, exclude: Sequence[str],
             respect_gitignore: bool = True, force_exclude: bool = False,
             suffixes: Tuple[str, ...] = SOURCE_SUFFIXES) -> Discovery:
    """Expand ``paths`` into the sorted list of files to check."""
    out = Discovery()
    ignorer = _Ignorer(root, exclude, respect_gitignore)
    seen = set()

    def add(display: str) -> None:
        key = os.path.realpath(display)
        if key not in seen:
            seen.add(key)
            out.files.append(display)

    for given in paths:
        path = Path(given)
        absolute = path.resolve() if path.exists() else path.absolute()
        if not os.path.lexists(given):
            out.errors.append(FileError(given, "no such file or directory"))
            continue
        if path.is_dir():
            if force_exclude and ignorer.excluded(absolute, True):
                continue
            for display in _walk(given, absolute, ignorer.below(absolute), suffixes, out):
                add(display)
        elif path.is_file():
            if force_exclude and ignorer.excluded(absolute, False):
                continue
            add(given)
        else:
            out.errors.append(FileError(given, _not_a_file(given)))
    return out


def _not_a_file(path: str) -> str:
    """Why a path that exists as a name cannot be read as a file."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link loop"
        if os.path.islink(path):
            return "is a broken symbolic link"
        return f"cannot be read: {exc.strerror or exc}"
    return "not a regular file or directory"


def _walk(display_root: str, root: Path, ignorer: _Ignorer, suffixes: Tuple[str, ...],
          out: Discovery) -> List[str]:
    found: List[str] = []
    stack = [(display_root, root)]
    while stack:
        display, folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            out.errors.append(FileError(display, f"cannot be listed: {exc.strerror or exc}"))
            continue
        subdirs = []
        for entry in entries:
            child = folder / entry.name
            child_display = os.path.normpath(os.path.join(display, entry.name))
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file()
            except OSError:
                if entry.name.endswith(suffixes) and not ignorer.excluded(child, False):
                    out.errors.append(FileError(child_display, _not_a_file(str(child))))
                continue
            if is_dir:
                if not ignorer.excluded(child, True):
                    subdirs.append((child_display, child))
            elif is_file and entry.name.endswith(suffixes):
                if not ignorer.excluded(child, False):
                    found.append(child_display)
        stack.extend(reversed(subdirs))
    found.sort()
    return found
