"""Where a module lives: the dotted names a file may be imported under, and which
folders can be on ``sys.path`` when a script runs. Shared by the project index and
the program model; imports nothing heavy."""

from __future__ import annotations

import functools
import os
import re
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from mplint.core.regular_files import read_regular


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
    names = tuple(".".join(parts[i:]) for i in range(len(parts)) if parts[i:])
    package = root_package(root) if root is not None and _below(path, root) else None
    if package is not None:  # the root is the package ``deeplab2``: ``deeplab2.model.utils``
        names = (".".join([package, *parts]), *names)
    return names


def _below(path: str, root: Path) -> bool:
    base = str(root)
    prefix = base if base.endswith(os.sep) else base + os.sep
    return os.path.normcase(path).startswith(os.path.normcase(prefix))


def root_package(root: Optional[Path]) -> Optional[str]:
    """The name the project's root folder is imported under when the root itself is a
    package (an ``__init__.py`` at the root, as google-research/deeplab2, whose modules
    import ``from deeplab2.model.layers import activations`` from whatever folder the
    clone or the zip landed in): the name a ``package_dir`` of the root's ``setup.py``
    or ``pyproject.toml`` maps to the root, else the one its own modules' imports give
    it. None for a root that is no package, or whose name nothing tells."""
    return _root_package(root) if root is not None else None


@functools.lru_cache(maxsize=64)
def _root_package(root: Path) -> Optional[str]:
    """(memoised per run: :func:`forget_files` drops it)"""
    if not os.path.isfile(os.path.join(root, "__init__.py")):
        return None
    return _packaged_name(root) or _imported_name(root)


#: ``package_dir={"deeplab2": "."}`` (setup.py), ``deeplab2 = "."`` (pyproject's
#: ``[tool.setuptools.package-dir]``): the package that is the folder itself
_PACKAGE_DIR = re.compile(rb"""['"]?([A-Za-z_]\w*)['"]?\s*[:=]\s*['"](?:\.|\./)?['"]""")


def _packaged_name(root: Path) -> Optional[str]:
    for name in ("setup.py", "pyproject.toml", "setup.cfg"):
        raw = _small_file(os.path.join(root, name))
        if raw is None or b"package" not in raw or b"dir" not in raw:
            continue
        at = max(raw.find(b"package_dir"), raw.find(b"package-dir"))
        if at < 0:
            continue
        found = _PACKAGE_DIR.search(raw, at, at + 400)
        if found is not None and found.group(1).decode() not in ("package_dir", "where"):
            return found.group(1).decode()
    return None


#: ``from NAME.SUB... import``, ``from NAME import SUB``, ``import NAME.SUB``: an absolute
#: import of a name and what follows it, in code (at the start of a line)
_ROOTED_IMPORT = re.compile(
    rb"^[ \t]*(?:from[ \t]+([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*)[\w.]*)?[ \t]+import[ \t]+\(?[ \t]*([A-Za-z_]\w*)"
    rb"|import[ \t]+([A-Za-z_]\w*)\.([A-Za-z_]\w*))", re.M)
#: files read for the root's name at most, nearest the root first
_NAME_FILES = 200
#: imports that agree on a name before the search stops
_NAME_VOTES = 3
#: top-level names that are never the project's own, whatever its folders are called
_NOT_OURS = frozenset({"tensorflow", "keras", "tf_keras", "numpy", "torch", "jax", "flax", "scipy",
                       "sklearn", "absl", "google", "official", "tensorflow_addons", "six", "future"})


def _imported_name(root: Path) -> Optional[str]:
    """The name the root's own modules import it by: an absolute import ``NAME.SUB`` whose
    ``NAME`` is nothing at the root (no ``NAME.py``, no ``NAME/``), no standard or known
    package, while ``SUB`` is a module or folder at the root. The files nearest the root
    are read first, until a few imports agree; one import alone names it only where the
    root folder is called so."""
    entries = _entries(str(root))
    standard = frozenset(getattr(sys, "stdlib_module_names", ())) | _NOT_OURS
    votes: Dict[str, int] = {}
    for path in _files_nearest(str(root), _NAME_FILES):
        raw = _small_file(path)
        if raw is None or b"import" not in raw:
            continue
        for match in _ROOTED_IMPORT.finditer(raw):
            name = (match.group(1) or match.group(4)).decode()
            sub = (match.group(2) or match.group(3) or match.group(5) or b"").decode()
            if name in entries or name in standard or sub not in entries or name == sub:
                continue
            votes[name] = votes.get(name, 0) + 1
            if votes[name] >= _NAME_VOTES:
                return name
    if not votes:
        return None
    best = max(votes.values())
    leaders = sorted(name for name, count in votes.items() if count == best)
    if len(leaders) != 1:
        return None
    # one import alone (``from torchvision import models`` beside a root ``models.py``) is
    # no name, unless the root folder itself is called so
    return leaders[0] if best >= 2 or leaders[0] == os.path.basename(root) else None


def _entries(folder: str) -> frozenset:
    """The module and folder names right inside ``folder`` (``model`` for ``model.py``
    and for ``model/``)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return frozenset()
    return frozenset(_stem(n) if n.endswith(".py") else n for n in names
                     if n.endswith(".py") or os.path.isdir(os.path.join(folder, n)))


def _files_nearest(root: str, limit: int) -> List[str]:
    """Up to ``limit`` ``.py`` files below ``root``, breadth first, in name order; hidden
    folders and ``site-packages`` left out."""
    out: List[str] = []
    todo = [root]
    while todo and len(out) < limit:
        folder = todo.pop(0)
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            full = os.path.join(folder, name)
            if name.endswith(".py") and os.path.isfile(full):
                out.append(full)
            elif not name.startswith((".", "__pycache__")) and name not in ("site-packages", "node_modules") \
                    and os.path.isdir(full) and not os.path.islink(full):
                todo.append(full)
    return out[:limit]


def _small_file(path: str) -> Optional[bytes]:
    """A regular file's bytes, up to 2 MB (None: none, no regular file, or larger)."""
    try:
        if os.path.getsize(path) > 2_000_000:
            return None
        return read_regular(path)
    except OSError:
        return None


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


def module_file_in(module: str, folders: Tuple[Path, ...], root: Optional[Path] = None) -> Optional[str]:
    """The first file that the dotted ``module`` names in one of ``folders``, in order:
    ``module.py``, else the package's ``__init__.py``; None where there is none. With the
    project's ``root``, a module of the root package (:func:`root_package`) is looked
    for in the root wherever the folder holding it is one of ``folders``, whatever the
    root folder is called."""
    return _module_file_in(module, folders, root)


@functools.lru_cache(maxsize=16384)
def _module_file_in(module: str, folders: Tuple[Path, ...], root: Optional[Path]) -> Optional[str]:
    """(cached within a run: the files of a tree; :func:`forget_files` drops it)"""
    head, _, rest = module.partition(".")
    package = root_package(root)
    relative = Path(*module.split("."))
    for folder in folders:
        if package is not None and head == package and root is not None and folder == root.parent:
            places = (root / Path(*rest.split("."))).with_suffix(".py") if rest else None, \
                (root / Path(*rest.split(".")) if rest else root) / "__init__.py"
        else:
            places = folder / relative.with_suffix(".py"), folder / relative / "__init__.py"
        for candidate in places:
            if candidate is not None and candidate.is_file():
                return str(candidate)
    return None


def forget_files() -> None:
    """Drop what was read of the file system (which modules exist where, the root
    package's name and the names it gives modules): a new run, in a process that ran
    one before, sees the tree as it is now."""
    _module_file_in.cache_clear()
    _root_package.cache_clear()
    _module_names.cache_clear()
    _importable.cache_clear()


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
