"""Where a module lives: the dotted names a file may be imported under, and which
folders can be on ``sys.path`` when a script runs. Shared by the project index and
the program model; imports nothing heavy."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import List, Optional, Tuple


def module_names(path: str, root: Optional[Path]) -> Tuple[str, ...]:
    """Dotted names a file may be imported under: ``src/pkg/model.py`` ->
    ``src.pkg.model``, ``pkg.model``, ``model`` (which folder is on sys.path is
    not known)."""
    return _module_names(os.path.abspath(path), root)


@functools.lru_cache(maxsize=4096)
def _module_names(path: str, root: Optional[Path]) -> Tuple[str, ...]:
    """(cached by absolute path: a relative one means another file in another folder)"""
    # The absolute path as written, like the root (a symlinked folder keeps its name);
    # read as strings: pathlib's parsing was most of the program model's set-up.
    parts = _relative_parts(path, root)
    parts[-1] = _stem(parts[-1])
    if parts and parts[-1] == "__init__":
        parts.pop()
    return tuple(".".join(parts[i:]) for i in range(len(parts)) if parts[i:])


def _relative_parts(path: str, root: Optional[Path]) -> List[str]:
    """The parts of the absolute ``path`` below ``root`` (its name alone elsewhere)."""
    if root is not None:
        base = str(root)
        prefix = base if base.endswith(os.sep) else base + os.sep
        if os.path.normcase(path).startswith(os.path.normcase(prefix)):  # Windows: any case
            return path[len(prefix):].split(os.sep)
    return [os.path.basename(path)]


def _stem(name: str) -> str:
    """``name`` without its suffix, as ``PurePath.stem`` reads it (``.bashrc`` and
    ``x.`` have none)."""
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def importable(path: str, root: Optional[Path]) -> Tuple[Tuple[str, Path], ...]:
    """``(dotted name, folder it is imported from)`` for each name in :func:`module_names`:
    ``src/pkg/model.py`` is ``pkg.model`` from ``src/``, ``model`` from ``src/pkg/``."""
    return _importable(os.path.abspath(path), root)


@functools.lru_cache(maxsize=4096)
def _importable(path: str, root: Optional[Path]) -> Tuple[Tuple[str, Path], ...]:
    names = _module_names(path, root)
    folder = Path(os.path.dirname(path))
    if _stem(os.path.basename(path)) == "__init__":
        folder = folder.parent
    out = []
    for name in reversed(names):  # shortest first: its folder is the file's own
        out.append((name, folder))
        folder = folder.parent
    return tuple(reversed(out))


def on_path(folder: Path, importer: str, root: Optional[Path]) -> bool:
    """Could ``folder`` be on sys.path when ``importer`` runs? Scripts are run from
    their own folder or one above it (the project root, ``src/`` in a src layout);
    an unrelated folder elsewhere in a monorepo is another program's."""
    return folder in folders_above(importer) or (root is not None and folder == root / "src")


def folders_above(path: str) -> frozenset:
    """The folder of ``path`` and every folder above it."""
    return _folders_above(os.path.abspath(path))


@functools.lru_cache(maxsize=4096)
def _folders_above(path: str) -> frozenset:
    here = Path(path).parent
    return frozenset((here, *here.parents))


def absolute_import(imported: str, importer: str, root: Optional[Path]) -> str:
    """A relative import (``..utils``) made absolute from the importer's folder."""
    level = len(imported) - len(imported.lstrip("."))
    if not level:
        return imported
    names = module_names(importer, root)
    package = names[0].split(".") if names else []
    if Path(importer).stem != "__init__":  # a package's __init__ is the package itself
        package = package[:-1]
    if level > 1:
        package = package[: len(package) - (level - 1)] if len(package) >= level - 1 else []
    rest = imported[level:]
    return ".".join(package + ([rest] if rest else []))


def module_file_in(module: str, folders: Tuple[Path, ...]) -> Optional[str]:
    """The first file that the dotted ``module`` names in one of ``folders``, in order:
    ``module.py``, else the package's ``__init__.py``; None where there is none."""
    return _module_file_in(module, folders)


@functools.lru_cache(maxsize=16384)
def _module_file_in(module: str, folders: Tuple[Path, ...]) -> Optional[str]:
    """(cached within a run: the files of a tree; :func:`forget_files` drops it)"""
    relative = Path(*module.split("."))
    for folder in folders:
        for candidate in (folder / relative.with_suffix(".py"), folder / relative / "__init__.py"):
            if candidate.is_file():
                return str(candidate)
    return None


def forget_files() -> None:
    """Drop what was read of the file system (which modules exist where): a new run, in a
    process that ran one before, sees the tree as it is now."""
    _module_file_in.cache_clear()


#: ``sys.path.append("cait/layers/")``, ``sys.path.insert(0, 'src')``: a literal folder
_SYS_PATH = re.compile(rb"""sys\.path\.(?:append\(|insert\(\s*-?\d+\s*,)\s*(['"])([^'"\n]+)\1\s*\)""")


def sys_path_folders(raw: bytes, importer: str, root: Optional[Path]) -> List[Path]:
    """Folders a module adds to ``sys.path`` with a literal (a script run from the
    project root: ``sys.path.append("cait/layers/")``, then ``from mlp import MLP``),
    relative to the folder it is run from: the module's own folder or one above it
    inside the project; only folders that exist inside the project (an absolute path
    of the author's machine is not)."""
    if b"sys.path" not in raw:
        return []
    here = Path(os.path.abspath(importer)).parent
    bases = [b for b in (here, *here.parents) if root is None or b == root or root in b.parents]
    if root is None:
        bases = bases[:2]
    out: List[Path] = []
    for match in _SYS_PATH.finditer(raw):
        text = match.group(2).decode("utf-8", "replace")
        if os.path.isabs(text):
            continue
        for base in bases:
            folder = Path(os.path.normpath(base / text))
            inside = root is None or folder == root or root in folder.parents
            if inside and folder.is_dir() and folder not in out:
                out.append(folder)
    return out
