"""Folders a module puts on ``sys.path`` before it imports by a bare name.

``sys.path.append("cait/layers/")`` then ``from drop_path import DropPath`` (CaiT-TF2):
``drop_path`` is ``cait/layers/drop_path.py``, imported as a top-level module. The folder
is read from the call's argument when it is a string literal (relative to the project
root, where scripts are run from, and to the module's own folder) or
``os.path.dirname(__file__)`` (``os.path.abspath``/``realpath`` of it too), each
``dirname`` above the first a folder up, joined with string literals
(``os.path.join(os.path.dirname(__file__), "..", "layers")``). Anything else (a variable,
an environment variable, ``Path(__file__).parents[1]``) adds nothing: unknown, no link.

Reads bytes only (no libcst): the library surface asks it on every run.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import FrozenSet, Optional, Set

_ADDS = re.compile(rb"\bsys\.path\.(?:append|insert)\((?:\s*-?\d+\s*,)?\s*(?P<arg>[^\n]+)")
_LITERAL = re.compile(r"""^(?:r|u)?(['"])([^'"\\]*)\1$""")
_STRING = re.compile(r"""(?:r|u)?(['"])([^'"\\]*)\1""")
_FILE_FOLDER = re.compile(r"os\.path\.dirname\(\s*(?:os\.path\.(?:abspath|realpath)\(\s*)?__file__\s*\)?\s*\)")


def added_folders(raw: bytes, importer: str, root: Optional[Path]) -> FrozenSet[Path]:
    """The folders ``importer`` (whose bytes are ``raw``) adds to ``sys.path``, as
    absolute paths; empty when it adds none that can be read."""
    if b"sys.path" not in raw:
        return frozenset()
    here = Path(os.path.dirname(os.path.abspath(importer)))
    found: Set[Path] = set()
    for match in _ADDS.finditer(raw):
        argument = _call_argument(match.group("arg").decode("utf-8", "replace"))
        if argument is None:
            continue
        literal = _LITERAL.match(argument)
        if literal is not None:
            bases = [here] if root is None else [Path(root), here]
            found.update(_normal(base / literal.group(2)) for base in bases)
            continue
        if "__file__" in argument and _FILE_FOLDER.search(argument):
            ups = argument.count("os.path.dirname(") - 1
            base = here
            for _ in range(ups):
                base = base.parent
            parts = [m.group(2) for m in _STRING.finditer(argument)]
            if argument.startswith(("os.path.join(", "os.path.abspath(os.path.join(")) or not parts:
                found.add(_normal(base.joinpath(*parts)))
    return frozenset(found)


def _call_argument(text: str) -> Optional[str]:
    """The text of the call's argument up to its closing parenthesis."""
    depth = 0
    for index, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return text[:index].strip()
            depth -= 1
    return None


def _normal(path: Path) -> Path:
    """``a/b/../c/`` -> ``a/c`` without touching the disk (symlinks keep their names, as
    the project's paths do)."""
    return Path(os.path.normpath(str(path)))
