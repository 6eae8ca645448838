"""The Keras generation a project pins in its dependency declarations.

Where mplint runs without TensorFlow (pre-commit's isolated environment, a CI lint
job), the project's own pins are what says Keras 2 or 3. They are read from every
place Python projects put them: PEP 621 and Poetry tables in ``pyproject.toml``
(``tensorflow = "^2.16"``, ``{ version = "~2.15" }``), ``setup.cfg`` and
``setup.py`` ``install_requires``, conda ``environment.yml`` (``tensorflow=2.15``,
``conda-forge::keras>=3``, a ``pip:`` section), and requirements files at the root,
under ``requirements/`` and one folder down (``docker/requirements.txt``). The
pins must agree: one saying Keras 2 and another Keras 3 give no answer.

Keras 3 is ``keras>=3`` or TensorFlow 2.16 and later; Keras 2 is ``keras<3``,
TensorFlow before 2.16, or ``tf-keras`` under ``TF_USE_LEGACY_KERAS``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterator, List, Optional, Set, Tuple

from mplint.core.regular_files import read_regular

_PACKAGE = r"(keras|tensorflow(?:-cpu|-gpu|-macos|-intel|-rocm)?|tf-nightly(?:-cpu|-gpu)?)"
#: ``tensorflow>=2.16,<2.18`` (requirements, PEP 508 strings, setup.cfg lines)
_REQUIREMENT = re.compile(rf"""^\s*["']?\s*{_PACKAGE}\b\s*(?:\[[^\]]*\])?\s*"""
                          r"""((?:[<>=!~]=?=?\s*[\d.*]+\s*,?\s*)*)""", re.IGNORECASE)
#: conda: ``tensorflow=2.15``, ``conda-forge::keras>=3``, ``tensorflow 2.15.*``
_CONDA = re.compile(rf"""^(?:[\w-]+::)?{_PACKAGE}\b((?:\s*(?:[<>=!~]=?=?)?\s*\d[\d.*]*\s*,?)*)""",
                    re.IGNORECASE)
#: ``install_requires = tensorflow<2.16`` (setup.cfg, one requirement on the key's line)
_KEY = re.compile(r"^[\w.-]+\s*=\s*(?P<value>\S.*)$")
#: Poetry: ``tensorflow = "^2.16"`` or ``tensorflow = { version = "~2.15", ... }``
_POETRY = re.compile(rf"""^\s*["']?{_PACKAGE}["']?\s*=\s*(?:\{{[^}}]*?\bversion\s*=\s*)?["']([^"']+)["']""",
                     re.IGNORECASE)
_QUOTED = re.compile(r"[\"']([^\"']+)[\"']")
_CLAUSE = re.compile(r"(\^|~=|~|[<>=!]=?=?|(?<![\d.]))\s*(\d[\d.*]*)")
#: files at the project root that may pin TensorFlow or Keras
ROOT_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "environment.yml", "environment.yaml")
_REQUIREMENTS = re.compile(r"^requirements.*\.(?:txt|in)$|^.*requirements\.(?:txt|in)$")
_SKIP_FOLDERS = {".git", ".venv", "venv", "node_modules", "build", "dist", "site-packages", "__pycache__"}

Version = Tuple[int, ...]


def _version(text: str) -> Version:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def _bounds(op: str, text: str) -> List[Tuple[str, Version]]:
    """A clause as plain bounds: ``^2.16`` is ``>=2.16, <3``; ``~2.15`` and
    ``~=2.15.1`` are ``>=, <2.16``; ``~=2.15`` is ``>=2.15, <3``; conda's ``=2.15``
    and a bare version are ``==``."""
    v = _version(text)
    if not v:
        return []
    if op == "^":
        first = next((i for i, part in enumerate(v) if part), len(v) - 1)
        return [(">=", v), ("<", v[:first] + (v[first] + 1,))]
    if op == "~":
        cut = 1 if len(v) == 1 else 2
        return [(">=", v), ("<", v[:cut - 1] + (v[cut - 1] + 1,))]
    if op == "~=":
        if len(v) < 2:
            return []
        return [(">=", v), ("<", v[:-2] + (v[-2] + 1,))]
    if op in ("", "=", "==", "==="):
        return [("==", v)]
    return [(op, v)]


def keras_major(package: str, clauses: List[Tuple[str, str]]) -> Optional[int]:
    """The Keras major version a requirement's clauses imply (None when they do not)."""
    package = package.lower()
    switch: Version = (3,) if package == "keras" else (2, 16)
    found = set()
    for op, text in clauses:
        for bound, v in _bounds(op, text):
            if bound in (">=", ">", "==") and v >= switch:
                found.add(3)
            if (bound == "<" and v <= switch) or (bound in ("<=", "==") and v < switch):
                found.add(2)
    return found.pop() if len(found) == 1 else None


def _requirements_of(line: str, conda: bool) -> Iterator[Tuple[str, str]]:
    """(package, constraint text) of each TensorFlow/Keras pin on one line of a
    dependency file (``conda``: an environment file)."""
    line = line.split("#", 1)[0].strip()
    poetry = None if conda else _POETRY.match(line)
    if poetry:
        yield poetry.group(1), poetry.group(2)
        return
    line = line.lstrip("-").strip()
    pattern = _CONDA if conda else _REQUIREMENT
    key = None if conda else _KEY.match(line)
    for item in [line, *_QUOTED.findall(line), *([key.group("value")] if key else [])]:
        match = pattern.match(item)
        if match and match.group(2).strip():
            yield match.group(1), match.group(2)


def dependency_files(root: Path) -> List[Path]:
    """The files at ``root`` (and requirements files below it) that may pin versions."""
    found = [root / name for name in ROOT_FILES]
    folders = [root]
    try:
        folders += sorted(entry for entry in root.iterdir()
                          if entry.is_dir() and entry.name not in _SKIP_FOLDERS and not entry.name.startswith("."))
    except OSError:
        pass
    for folder in folders:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        every = folder.name == "requirements" and folder != root  # requirements/base.txt
        found += [folder / name for name in names
                  if _REQUIREMENTS.match(name) or (every and name.endswith((".txt", ".in")))]
    return found


def declared_keras_version(root: Path) -> Optional[int]:
    """Keras 2 or 3 from the project's dependency declarations, if they agree."""
    found: Set[int] = set()
    for path in dependency_files(root):
        try:  # a FIFO named setup.cfg is skipped, never waited on
            text = read_regular(path).decode("utf-8", "replace")
        except OSError:
            continue
        conda = path.name.startswith("environment.")
        for line in text.splitlines():
            for package, constraint in _requirements_of(line, conda):
                major = keras_major(package, _CLAUSE.findall(constraint))
                if major is not None:
                    found.add(major)
    return found.pop() if len(found) == 1 else None
