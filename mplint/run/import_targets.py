"""Which project modules a file's import statements may load, read from its bytes: the
reverse-dependency prefilter of a one-file run (ruff and pyright find a file's importers
the same way, before parsing anything).

The program model's first test of "may ``importer`` import ``module``" is a word of an
import statement equal to the module's last dotted name (:func:`program.import_words`).
Common names make that loose: ``from tensorflow.keras import layers`` holds ``layers``,
the name of every project package called ``layers``. :func:`statement_targets` reads
each statement as Python does (``from X import a, b``: ``X``, ``X.a``, ``X.b``; relative
imports made absolute from the importer's package) and :func:`may_import` keeps an
importer only when one of those names is the module or one of its submodules. That is
never narrower than what the model resolves an import to (the same dotted names, the
same relative resolution), and a statement it cannot read keeps the importer."""

from __future__ import annotations

import re
from pathlib import Path
from typing import FrozenSet, Iterable, List, Optional, Set

from mplint.run.module_paths import absolute_import

#: an import statement from the start of its line, with a parenthesised name list over
#: several lines (the statements :func:`program.import_words` reads)
IMPORT_STATEMENT = re.compile(rb"[ \t]*(?:from|import)[ \t][^\n(]*(?:\([^)]*\))?[^\n]*")
_COMMENT = re.compile(r"#[^\n]*")
_FROM = re.compile(r"from\s+(\.*)\s*([\w.]*)\s+import\b(.*)", re.S)
_IMPORT = re.compile(r"import\s+(.*)", re.S)
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*")
_NAME = re.compile(r"[A-Za-z_]\w*|\*")
_IMPORT_WORD = re.compile(r"\bimport\b")


def import_statements(raw: bytes) -> List[bytes]:
    """The file's import statements, in order (each tried only at the start of a line
    that holds ``from`` or ``import``, and not inside the name list of the one before)."""
    found: List[bytes] = []
    end = 0
    for start in _keyword_lines(raw):
        if start >= end:
            statement = IMPORT_STATEMENT.match(raw, start)
            if statement is not None:
                found.append(statement.group())
                end = statement.end()
    return found


def _keyword_lines(raw: bytes) -> List[int]:
    """Where each line holding ``from`` or ``import`` starts, in order."""
    starts: Set[int] = set()
    for keyword in (b"from", b"import"):
        at = raw.find(keyword)
        while at >= 0:
            starts.add(raw.rfind(b"\n", 0, at) + 1)
            at = raw.find(keyword, at + len(keyword))
    return sorted(starts)


def statement_targets(statement: bytes, importer: str, root: Optional[Path]) -> Optional[FrozenSet[str]]:
    """The absolute dotted names one statement may load (``from X import a``: ``X`` and
    ``X.a``; ``import X.Y as Z``: ``X.Y``); None when it cannot be read, so the caller
    keeps the loose answer."""
    text = _COMMENT.sub("", statement.decode("utf-8", "replace"))
    out: Set[str] = set()
    for piece in (p.strip() for p in text.split(";")):
        if not piece:
            continue
        if piece.startswith("from") and not _IMPORT_WORD.search(piece) and not piece.endswith("\\"):
            continue  # a docstring's prose ("from the output."): Python reads no statement here
        found = _FROM.fullmatch(piece)
        if found is not None:
            dots, module, names = found.groups()
            base = absolute_import(dots + module, importer, root) if dots else module
            if base:
                out.add(base)
            for item in names.replace("(", " ").replace(")", " ").replace("\\", " ").split(","):
                name = _NAME.match(item.strip())
                if name is not None and name.group() != "*":
                    out.add(f"{base}.{name.group()}" if base else name.group())
            continue
        found = _IMPORT.fullmatch(piece)
        if found is None:
            return None
        for item in found.group(1).replace("(", " ").replace(")", " ").replace("\\", " ").split(","):
            dotted = _DOTTED.match(item.strip())
            if dotted is not None:
                out.add(re.sub(r"\s+", "", dotted.group()))
    return frozenset(out)


def may_import(targets: Iterable[Optional[FrozenSet[str]]], module_names: Iterable[str]) -> bool:
    """Whether statements loading ``targets`` (:func:`statement_targets` of each; None:
    unread) may load the module known by ``module_names``: one of them names it, or a
    submodule of it (which runs a package's ``__init__``)."""
    names = tuple(module_names)
    prefixes = tuple(name + "." for name in names)
    for found in targets:
        if found is None:
            return True
        for target in found:
            if target in names or target.startswith(prefixes):
                return True
    return False


def reachable_below(statement: bytes, importer: str, root: Optional[Path]) -> Optional[FrozenSet[str]]:
    """The dotted names whose submodules one statement makes reachable by attribute, so a
    call may name one that no statement loads (``import pkg`` then ``pkg.sub.f()``; ``from
    pkg import sub`` then ``sub.mod.f()``; ``from pkg import *``): an ``import`` binds each
    name's head, a ``from`` each imported name (the module itself only for a star). None
    when the statement cannot be read."""
    targets = statement_targets(statement, importer, root)
    if targets is None:
        return None
    text = statement.lstrip()
    if b";" in text or not text.startswith(b"from"):
        return frozenset(target.split(".")[0] for target in targets)
    bases = {target for target in targets if any(other.startswith(target + ".") for other in targets)}
    return frozenset(targets - bases) or targets
