"""The installed version of a distribution, found as ``importlib.metadata.version`` finds it.

Every run asks which Keras and TensorFlow are installed; importing
``importlib.metadata`` (it pulls in the email parser, zipfile and more) cost a
one-file pre-commit run more than the answer. The common layout is read directly:
the first folder of ``sys.path`` holding a ``NAME-VERSION.dist-info`` or ``.egg-info``
of that name, whose metadata's ``Version`` is the answer, in the order
``importlib.metadata`` searches. Anything else (a zip on the path, another finder that
knows distributions, metadata that cannot be read) is left to ``importlib.metadata``.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Dict, List, Optional



class _Unsure(Exception):
    """The layout is not the plain one: ask importlib.metadata."""


def installed_version(name: str) -> Optional[str]:
    """The version of the distribution ``name`` that ``importlib.metadata.version``
    gives, or None when it is not installed."""
    try:
        return _scan(name)
    except _Unsure:
        from importlib import metadata

        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None


def _normal(name: str) -> str:
    """The name as importlib.metadata compares it (runs of ``-_.`` are one ``_``)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _scan(name: str) -> Optional[str]:
    if any(hasattr(finder, "find_distributions") and getattr(finder, "__name__", "") != "PathFinder"
           for finder in sys.meta_path):
        raise _Unsure()
    wanted = _normal(name)
    for entry in sys.path:
        folder = entry or "."
        for child in _metadata_folders(folder):
            stem = child.rsplit(".", 1)[0]
            if _normal(stem.split("-", 1)[0]) == wanted:
                return _version_of(os.path.join(folder, child))
    return None


_LISTINGS: Dict[str, List[str]] = {}


def _metadata_folders(folder: str) -> List[str]:
    """The ``*.dist-info`` and ``*.egg-info`` names in ``folder``, in listing order."""
    found = _LISTINGS.get(folder)
    if found is None:
        if os.path.isfile(folder) or folder.lower().endswith(".egg"):
            raise _Unsure()  # a zip or an egg on the path
        try:
            names = os.listdir(folder)
        except OSError:
            names = []
        found = _LISTINGS[folder] = [n for n in names if n.lower().endswith((".dist-info", ".egg-info"))]
    return found


def _version_of(path: str) -> str:
    """The ``Version:`` header of a metadata folder (or an ``.egg-info`` file)."""
    for candidate in (os.path.join(path, "METADATA"), os.path.join(path, "PKG-INFO"), path):
        if os.path.isfile(candidate):
            try:
                with open(candidate, encoding="utf-8", errors="replace") as handle:
                    for line in handle:
                        if not line.strip():
                            break  # the headers end at the first blank line
                        if line.lower().startswith("version:"):
                            return line.split(":", 1)[1].strip()
            except OSError:
                pass
            break
    raise _Unsure()
