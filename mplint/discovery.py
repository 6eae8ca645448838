"""Which files to check: walk the paths, honour ``exclude`` and .gitignore.

An explicitly named file is always checked, unless ``--force-exclude`` (which the
pre-commit hook passes, because pre-commit names every file) says to apply
``exclude`` to it too. Matching uses pathspec, the gitignore implementation that
black and others rely on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import pathspec

from mplint.findings import FileError

SOURCE_SUFFIXES = (".py", ".pyi")
#: what ``check`` and ``fix`` look at: Python sources and Jupyter notebooks
LINT_SUFFIXES = SOURCE_SUFFIXES + (".ipynb",)


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
            for display in _walk(given, absolute, ignorer, suffixes, out):
                add(display)
        elif path.is_file():
            if force_exclude and ignorer.excluded(absolute, False):
                continue
            add(given)
        else:
            out.errors.append(FileError(given, "not a regular file or directory"))
    return out


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
