"""TensorFlow and Keras as a project module hands them on: ``tensorflow_asr/__init__.py``
does ``import tensorflow as tf`` and every other module ``from tensorflow_asr import keras,
tf``. Without knowing that, ``tf`` there names nothing mplint knows and every rule is
blind in the whole package.

The index reads each project file's imports of TensorFlow and Keras with one regular
expression over its bytes (no parse: most files are never parsed), and a checked file's
``from pkg import tf`` (``from . import tf``) is resolved through them before its walk.
Indented imports count too: a compatibility import sits in ``try:``/``except`` (``import
tf_keras as keras`` or ``from tensorflow import keras``), and a name bound only inside a
function is one no other module can import, so it never matters.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from mplint.run.module_paths import module_names
from mplint.run.module_returns import keyed_modules, returned_modules

#: the packages whose names rules know; re-exports of anything else do not matter
_PACKAGES = r"(?:tensorflow|keras|tf_keras)"
#: ``import tensorflow as tf``, ``import keras``, ``import tensorflow as tf, tf_keras``, and
#: ``from tensorflow.keras import layers as L, models``. Each pattern starts with a literal
#: word, which the regular expression engine finds with a fast search; that the statement
#: starts its line is checked for each match (:func:`_starts_line`).
_IMPORT = re.compile(rb"import[ \t]+([\w. \t,]*\b" + _PACKAGES.encode() + rb"\b[\w. \t,]*?)[ \t]*(?:#[^\n]*)?$",
                     re.MULTILINE)
_FROM = re.compile(rb"from[ \t]+(" + _PACKAGES.encode() + rb"(?:\.\w+)*)[ \t]+import[ \t]+"
                   rb"(\w+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*\w+(?:[ \t]+as[ \t]+\w+)?)*)[ \t]*(?:#[^\n]*)?$",
                   re.MULTILINE)
_PACKAGE = re.compile(_PACKAGES + r"(?:\.\w+)*")

#: (name the module binds, the TensorFlow or Keras module it names)
Exports = Tuple[Tuple[str, str], ...]


def exports_of(raw: bytes) -> Exports:
    """The TensorFlow and Keras names a file binds by importing them; a name bound in
    both arms of a ``try`` has both meanings."""
    if b"import" not in raw:
        return ()
    found: Set[Tuple[str, str]] = set()
    for match in _IMPORT.finditer(raw):
        if not _starts_line(raw, match.start()):
            continue
        for item in match.group(1).decode().split(","):
            module, _, alias = (part.strip() for part in item.partition(" as "))
            if _PACKAGE.fullmatch(module):
                found.add((alias, module) if alias else (module.split(".")[0],) * 2)
    for match in _FROM.finditer(raw):
        if not _starts_line(raw, match.start()):
            continue
        module = match.group(1).decode()
        for item in match.group(2).decode().split(","):
            name, _, alias = (part.strip() for part in item.partition(" as "))
            found.add((alias or name, f"{module}.{name}"))
    imported = tuple(sorted(found))
    return tuple(sorted(found.union(returned_modules(raw, imported), keyed_modules(raw, imported))))


def _starts_line(raw: bytes, at: int) -> bool:
    """Only spaces and tabs stand before ``at`` on its line."""
    return not raw[raw.rfind(b"\n", 0, at) + 1:at].strip(b" \t")


class HandedOn:
    """What the project's modules hand on, asked name by name (``pkg.tf`` -> {``tensorflow``}):
    a name is looked up among the files whose module path ends in its module's last
    part, so a run that asks about few names (a warm one) works out few module names."""

    def __init__(self, files: Dict[str, Exports], root: Optional[Path]) -> None:
        self._root = root
        self._found: Dict[str, FrozenSet[str]] = {}
        #: ``{key}`` -> the Keras modules some project dict holds under ``key`` (built once)
        self._keyed: Optional[Dict[str, Set[str]]] = None
        #: the last part of each exporting file's module name (``b`` for ``a/b.py`` and
        #: ``a/b/__init__.py``) -> the files
        self._by_last: Dict[str, List[Tuple[str, Exports]]] = {}
        for path, exports in files.items():  # os.path, not pathlib: this runs for most files
            folder, name = os.path.split(path)
            stem = os.path.splitext(name)[0]
            last = os.path.basename(folder) if stem == "__init__" else stem
            self._by_last.setdefault(last, []).append((path, exports))

    def meanings(self, name: str) -> FrozenSet[str]:
        """The modules ``name`` (``module.local``) may be, when a project module hands it
        on; two files under one module name: either may be the one imported."""
        found = self._found.get(name)
        if found is None:
            module, _, local = name.rpartition(".")
            found = frozenset(
                target
                for path, exports in self._by_last.get(module.rpartition(".")[2], ()) if module
                and module in module_names(path, self._root)
                for bound, target in exports if bound == local)
            if any(target.startswith("{") for target in found):
                found = self._keys_resolved(found)
            self._found[name] = found
        return found

    def _keys_resolved(self, found: FrozenSet[str]) -> FrozenSet[str]:
        """``{key}`` (a ``kwargs.get('key', ...)`` whose default names no Keras module,
        :mod:`mplint.run.module_returns`) replaced by the modules the project's dicts hold
        under that key; nothing at all when one key has none (unknown)."""
        if self._keyed is None:
            self._keyed = {}
            for files in self._by_last.values():
                for _, exports in files:
                    for bound, target in exports:
                        if bound.startswith("{"):
                            self._keyed.setdefault(bound, set()).add(target)
        out: Set[str] = set()
        for target in found:
            if not target.startswith("{"):
                out.add(target)
            elif target in self._keyed:
                out.update(self._keyed[target])
            else:
                return frozenset()
        return frozenset(out)
