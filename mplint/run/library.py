"""Library mode: which modules are a library's layers and models, which its users may run
under a mixed policy though no program of the repository sets one.

The evidence, in order (README, "A library of layers and models usually sets no policy"):

- the file's configuration (``library = true/false``) decides;
- otherwise only where no program of the project names a policy API;
- a packaged project (setup.py, setup.cfg, a distribution in pyproject.toml) is code for
  others to import: every module of its packages;
- a repository that is not packaged (a model zoo on GitHub, a Kaggle copy) is a library
  through its surface: the modules a package's ``__init__.py`` imports, those that code
  outside the package (scripts, notebooks, tests, another package) imports, the private
  modules (``_model_unet.py``) the surface imports, whose public models it hands on, and
  what those private modules import; and outside any package (a flat folder of
  ``train.py`` and ``model.py``, a zip download), each module another file imports, or
  that defines layers or models and runs nothing on import; a module with a ``__main__``
  guard that defines layers or models (the guard is its demo or self-test) counts where a
  module other than a test imports it, or where nothing in it trains (a single-file
  library whose guard builds its layer on zeros: users copy or import it).
  A public module only its own package imports is built the way that package's models
  build it, often under a condition mplint does not follow, and stays out; so does a
  one-off script nobody imports.

Reads bytes only (no libcst): the index calls it on every run.
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from mplint.core.regular_files import read_regular
from mplint.run import module_paths
from mplint.run.module_paths import absolute_import, importable, on_path
from mplint.run.sys_path_folders import added_folders
from mplint.semantic.visibility import is_private_name
from mplint.semantic.test_modules import is_test_path

#: folders of a repository that hold programs and documents, not the library
NOT_LIBRARY_FOLDERS = frozenset({
    "examples", "example", "benchmarks", "benchmark", "guides", "docs", "doc", "scripts", "tools",
    "notebooks", "tutorials", "demo", "demos", "experiments", "tests", "test", "integration_tests",
    "integration_test", "testing", "test_utils", "testdata",
})
#: a module of helpers the tests build their models with (tf-keras's ``testing_utils.py``,
#: ``kpl_test_utils.py``, ``multi_worker_testing_utils.py``): test code, not the library's API
_TEST_HELPERS = re.compile(r"(?:^|_)(?:test|testing)_utils?$")


def is_packaged(root: Path) -> bool:
    """The project declares a distribution (setup.py, setup.cfg, or a pyproject.toml with
    ``[project]``, ``[tool.poetry]`` or ``[build-system]``): code for others to import."""
    if (root / "setup.py").is_file() or (root / "setup.cfg").is_file():
        return True
    try:
        text = read_regular(root / "pyproject.toml").decode("utf-8", "replace")
    except OSError:  # none, or a FIFO: never read what is no file
        return False
    return any(table in text for table in ("[project]", "[tool.poetry]", "[build-system]"))


def is_library_module(path: str, root: Optional[Path]) -> bool:
    """A ``.py`` module of a package (its folder has ``__init__.py``), not a test and
    not under a folder of programs or documents."""
    return _may_be_library(path, root) and _in_package(os.path.dirname(os.path.abspath(path)), root)


def _in_package(folder: str, root: Optional[Path]) -> bool:
    """A package folder (``__init__.py``), or a folder with none inside one: Python 3
    imports it as a namespace sub-package (``cait/layers/`` of ``cait/``, which
    ``from .layers.drop_path import DropPath`` and ``sys.path.append("cait/layers/")``
    reach)."""
    if _is_package(folder):
        return True
    parent = os.path.dirname(folder)
    return root is not None and parent != folder and os.path.basename(folder).isidentifier() \
        and parent.startswith(os.path.join(str(root), "")) and _is_package(parent)


def is_configured_library_module(path: str, root: Optional[Path]) -> bool:
    """Under ``library = true``: a module of a package, or a module outside one that is
    no script (no ``if __name__ == "__main__":``): the configuration says the flat
    modules beside the scripts are the library."""
    if not _may_be_library(path, root):
        return False
    return _is_package(os.path.dirname(os.path.abspath(path))) or not _is_script_file(os.path.abspath(path))


def _may_be_library(path: str, root: Optional[Path]) -> bool:
    """A ``.py`` file, no test nor test helper module, not under examples/, docs/ and the
    like."""
    return path.endswith(".py") and not is_test_path(path) and not _in_programs_folder(path, root) \
        and not _TEST_HELPERS.search(os.path.splitext(os.path.basename(path))[0])


def _in_programs_folder(path: str, root: Optional[Path]) -> bool:
    """Under ``examples/``, ``benchmarks/``, ``docs/`` and the like (below the root)."""
    folder = os.path.dirname(os.path.abspath(path))
    below = os.path.relpath(folder, root) if root is not None else os.path.basename(folder)
    return any(part in NOT_LIBRARY_FOLDERS for part in below.split(os.sep))


@functools.lru_cache(maxsize=4096)
def _is_package(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, "__init__.py"))


def forget_files() -> None:
    """Drop what was read of the file system (which folders are packages, which files are
    scripts): a new run, in a process that ran one before (tests, the language server),
    sees the tree as it is now."""
    _is_package.cache_clear()
    _is_script_file.cache_clear()
    module_paths.forget_files()


_MAIN_GUARD = re.compile(rb"^if\s+__name__\s*==\s*['\"]__main__['\"]\s*:", re.M)


def is_script(raw: bytes) -> bool:
    """The module runs as a program: an ``if __name__ == "__main__":`` at its top level.
    (The literal first: a pattern led by ``^`` is tried at every byte, and the index asks
    this of every file of the project.)"""
    return b"__main__" in raw and bool(_MAIN_GUARD.search(raw))


#: an import of the mixed precision module in code (``from tensorflow.keras import
#: mixed_precision``, ``import keras.mixed_precision as mp``), not in a comment
_IMPORTS_MIXED_PRECISION = re.compile(
    rb"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+import[ \t]+[^#\n]*\bmixed_precision\b"
    rb"|import[ \t]+[\w.]*\bmixed_precision\b)", re.M)


#: a call of ``set_floatx`` in code, not in a comment
_SETS_FLOATX = re.compile(rb"^[^#\n]*\bset_floatx[ \t]*\(", re.M)


def program_weighs_precision(raw: bytes) -> bool:
    """A program (``__main__`` guard) that imports the mixed precision module or sets the
    float type (``set_floatx("float16")`` for a half-precision export): whatever it sets,
    its author chose the precision its models run under (often float32, the switch
    commented out beside the import), so the project is an application whose modules
    are its own, not a library left to its users' policy."""
    if b"mixed_precision" in raw and is_script(raw) and _IMPORTS_MIXED_PRECISION.search(raw):
        return True
    return b"set_floatx" in raw and is_script(raw) and bool(_SETS_FLOATX.search(raw))


@functools.lru_cache(maxsize=4096)
def _is_script_file(path: str) -> bool:
    try:
        return is_script(read_regular(path))
    except OSError:
        return False


# -- the surface of an unpackaged repository's packages ------------------------------

_IMPORT = re.compile(r"[ \t]*import[ \t]+([^\n#;]+)")
_FROM = re.compile(r"[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)")
_NAME = re.compile(r"[A-Za-z_][\w.]*")


def imported_modules(text: str) -> Set[str]:
    """Every module an import statement of ``text`` may run: ``import a.b`` -> ``a.b``;
    ``from a import b, c`` -> ``a``, ``a.b``, ``a.c`` (``b`` may be a submodule);
    relative names keep their dots (``from . import ls`` -> ``.ls``)."""
    out: Set[str] = set()
    for statement in _import_statements(text):
        plain = _IMPORT.match(statement)
        if plain is not None:
            for part in plain.group(1).split(","):
                words = part.split()
                if words and _NAME.fullmatch(words[0]):
                    out.add(words[0])
            continue
        found = _FROM.match(statement)
        if found is None:
            continue
        base = found.group(1)
        if base.strip(".") and not _NAME.fullmatch(base.lstrip(".")):
            continue
        out.add(base)
        for part in found.group(2).strip("()").split(","):
            words = part.split()
            if words and words[0] != "*" and _NAME.fullmatch(words[0]):
                out.add(base + words[0] if base.endswith(".") else f"{base}.{words[0]}")
    return out


def _import_statements(text: str) -> Iterable[str]:
    """Each line holding the word ``import``, with the parenthesised names that follow
    it (found with ``str.find``: a multi-line regex tries every position of the text)."""
    at = text.find("import")
    while at != -1:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end == -1 else end
        if "(" in text[at:end] and ")" not in text[at:end]:
            close = text.find(")", end)
            end = len(text) if close == -1 else close + 1
        yield text[start:end]
        at = text.find("import", end)


def _program_text(path: str, raw: bytes) -> str:
    """The text whose imports count: a notebook's code cells (read as JSON: loading the
    notebook as a source imports libcst, which a cached run never does)."""
    if not path.endswith(".ipynb"):
        return raw.decode("utf-8", "replace")
    try:
        cells = json.loads(raw).get("cells", [])
        sources = [cell.get("source", "") for cell in cells if cell.get("cell_type") == "code"]
        return "\n".join(src if isinstance(src, str) else "".join(map(str, src)) for src in sources)
    except (ValueError, AttributeError, TypeError, RecursionError):  # no notebook we can read
        return ""


def _top_package(path: str, root: str) -> Optional[str]:
    """The first folder below ``root`` (ending in a separator) holding ``path``; None for a
    file at the root or outside it."""
    if not path.startswith(root):
        return None
    parts = path[len(root):].split(os.sep)
    return parts[0] if len(parts) > 1 else None


def _is_private(path: str) -> bool:
    """``_model_unet.py``: a module its package keeps to itself (not ``__init__.py``)."""
    return is_private_name(os.path.splitext(os.path.basename(path))[0])


#: a class deriving from a Keras layer or model (``class Block(tf.keras.layers.Layer)``,
#: ``class Net(keras.Model)``, ``class WSConv2D(layers.Conv2D)``) at the start of a line
_DEFINES_LAYERS = re.compile(rb"^class[ \t]+\w+[ \t]*\([^)]*\b(?:layers|Layer|Model|Sequential)\b", re.M)
#: a call at the start of a line (``main()``, ``model.fit(...)``): the module runs it on import
_TOP_LEVEL_CALL = re.compile(rb"^[A-Za-z_][\w.]*[ \t]*\(", re.M)
#: a training step anywhere in the file (``model.fit(``, ``opt.apply_gradients(``,
#: ``model.compile(``): a module whose ``__main__`` guard may train is a program
_TRAINS = re.compile(rb"\.(?:fit|fit_generator|train_on_batch|compile|apply_gradients|minimize)[ \t]*\(")


@dataclass(frozen=True)
class _FlatModule:
    """What the surface asks of a module outside any package, from one read of its bytes."""

    #: an ``if __name__ == "__main__":`` guard: a program, or a module's demo
    script: bool
    #: a class deriving from a Keras layer or model
    layers: bool
    #: a call at the top level: the module runs something on import
    runs: bool
    #: a training step anywhere in the file (``_TRAINS``)
    trains: bool

    @classmethod
    def of(cls, raw: bytes) -> "_FlatModule":
        return cls(is_script(raw), bool(_DEFINES_LAYERS.search(raw)), bool(_TOP_LEVEL_CALL.search(raw)),
                   bool(_TRAINS.search(raw)))

    @property
    def demo(self) -> bool:
        """A module of layers or models whose ``__main__`` guard is its demo or self-test."""
        return self.script and self.layers

    @property
    def offers_layers(self) -> bool:
        """Layers or models for others to build, and nothing run on import: no
        ``__main__`` guard, no call at the top level (a one-off script that trains what
        it defines)."""
        return self.layers and not self.script and not self.runs

    @property
    def demo_library(self) -> bool:
        """A single-file library with a demo or self-test: layers or models defined at the
        top level, a ``__main__`` guard, and no training anywhere in the file (the guard
        builds a model, prints its summary, calls it on zeros). Its users import the layers
        and run them under their policy; a ``train.py`` whose guard trains what it defines
        stays a program."""
        return self.demo and not self.trains


def package_surface(files: Iterable[str], read: Callable[[str], Optional[bytes]],
                    root: Path) -> FrozenSet[str]:
    """The modules of the repository meant to be imported (absolute paths): in a package
    folder below the root, those a package's ``__init__.py`` imports, those that code
    outside the module's top-level package imports (a script, a notebook, a test,
    another package), and the private modules that such a module imports, with what
    they import of their package; outside any package (a flat folder), each module that
    another file imports (one with a ``__main__`` guard only if it defines layers or
    models and a file other than a test imports it), or that defines layers or models and
    is no script, or whose guard only demonstrates them (``_FlatModule.demo_library``).

    A root with an ``__init__.py`` is no package here: its modules are the scripts'
    neighbours, flat modules."""
    keys = [os.path.abspath(path) for path in files]
    prefix = os.path.join(str(root), "")
    tops = {key: _top_package(key, prefix) for key in keys}
    #: the modules outside any package, each read once. One with a ``__main__`` guard
    #: that defines layers or models (a demo) is the surface where a module other than a
    #: test imports it; other scripts (a ``train.py`` whose ``build_model`` an evaluation
    #: script reuses) stay programs
    flat: Dict[str, _FlatModule] = {}
    for key in keys:
        raw = read(key) if _may_be_flat(key, root, tops[key]) else None
        if raw is not None:
            flat[key] = _FlatModule.of(raw)
    targets: Dict[str, List[Tuple[str, Path]]] = {}
    for key in keys:
        if key in flat or (tops[key] is not None and is_library_module(key, root)):
            for name, folder in importable(key, root):
                targets.setdefault(name, []).append((key, folder))
    if not targets:
        return frozenset()
    out: Set[str] = set()
    #: importer -> the package modules of its own top-level package it imports
    inside: Dict[str, Set[str]] = {}
    for importer in keys:
        raw = read(importer)
        if raw is None or b"import" not in raw:
            continue
        exporter = os.path.basename(importer) == "__init__.py"
        added = added_folders(raw, importer, root)  # ``sys.path.append("pkg/layers/")``
        for name in imported_modules(_program_text(importer, raw)):
            for key, folder in targets.get(absolute_import(name, importer, root), ()):
                if key == importer or not (on_path(folder, importer, root) or folder in added):
                    continue
                module = flat.get(key)
                if module is not None and module.script and (not module.demo or is_test_path(importer)):
                    continue
                if key in flat or exporter or tops[importer] != tops[key]:
                    out.add(key)
                else:
                    inside.setdefault(importer, set()).add(key)
    out |= _handed_on_privately(out, inside)
    out |= {key for key, module in flat.items() if key not in out and (module.offers_layers or module.demo_library)}
    return frozenset(out)


def _may_be_flat(key: str, root: Path, top: Optional[str]) -> bool:
    """A ``.py`` module outside any package (at the root, or in a folder with no
    ``__init__.py``), no test, not under examples/ and the like (a flat module when it
    can be read)."""
    return key.endswith(".py") and not (top is not None and _is_package(os.path.dirname(key))) \
        and _may_be_library(key, root)


def _handed_on_privately(surface: Set[str], inside: Dict[str, Set[str]]) -> Set[str]:
    """The private modules the surface imports (``models.py`` does ``from
    ._model_swin_unet import swin_unet``: the public model lives there), and every module
    of its package that such a private module imports (the layers that model builds)."""
    found: Set[str] = set()
    todo = list(surface)
    while todo:
        module = todo.pop()
        for imported in inside.get(module, ()):
            if imported in surface or imported in found:
                continue
            if _is_private(imported) or _is_private(module):
                found.add(imported)
                todo.append(imported)
    return found
