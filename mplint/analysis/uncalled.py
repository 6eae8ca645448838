"""Private functions and methods that no code names: dead code, never run.

A builder kept by name to its module (``_build_medical_convnext``, ``_convnext_block``)
runs only where something of the module names it: a call, a reference handed on, a
string for ``getattr``. When the module's text writes the name only in its ``def``, and
no other file of the project that names the module writes it either (a subclass there
calling ``self._build_head()``), nothing runs the function: a model it builds is never
trained, a tensor it computes never meets another. Any other mention keeps it alive
(unknown stays used), and a public name is its users' to call, so only private names
(:func:`is_private_name`) are judged; a decorated function (a registry's entry) and a
method of a class with a base from elsewhere (a hook Keras or the base calls) stay alive.
"""

from __future__ import annotations

import os
import re
from typing import Optional

import libcst as cst

from mplint.core import reads
from mplint.rule.check import Context
from mplint.semantic.scopes import Location, Scope, class_chain
from mplint.semantic.visibility import is_private_name

#: a project past this many files is not searched for other modules' mentions (alive)
_MAX_FILES = 2000
_MAX_BYTES = 2_000_000


def never_run(ctx: Context, where: Location) -> bool:
    """Whether the code at ``where`` runs only through a private function nothing names:
    its own scope's, or that of a call followed to get there."""
    return never_called(ctx, where.scope) or any(never_called(ctx, frame.caller.scope) for frame in where.context)


def never_called(ctx: Context, scope: Scope) -> bool:
    """Whether the code of ``scope`` sits in a private function or method (itself or one
    enclosing it) that no code of the module or of a module naming it mentions."""
    current: Optional[Scope] = scope
    while current is not None and current.kind != "module":
        if current.kind == "function":
            name = getattr(getattr(current.node, "name", None), "value", None)
            if isinstance(name, str) and is_private_name(name) and not _called_by_others(current) \
                    and _unmentioned(ctx, name):
                return True
        current = current.parent
    return False


def _called_by_others(function: Scope) -> bool:
    """A function something may run without its name being written here: a decorated
    one (``@BACKBONES.register`` files it in a registry), or a method of a class with a
    base not of this file (Keras, an optimizer or a base elsewhere may call its hooks:
    ``_resource_apply_dense``)."""
    node = function.node
    if isinstance(node, cst.FunctionDef) and node.decorators:
        return True
    owner = function.parent
    if owner is None or owner.kind != "class":
        return False
    local = {id(s.node) for s in class_chain(owner)}
    for cls in class_chain(owner):
        for base in cls.node.bases if isinstance(cls.node, cst.ClassDef) else ():
            written = base.value
            if isinstance(written, cst.Name) and written.value == "object":
                continue
            bound = cls.parent.lookup(written.value) if isinstance(written, cst.Name) and cls.parent else None
            if bound is None or id(bound.node) not in local:
                return True
    return False


def _unmentioned(ctx: Context, name: str) -> bool:
    """The module's text writes ``name`` once (its ``def``), and no other project file
    that writes the module's name writes it."""
    if not _written_once(ctx, name):
        return False
    files = ctx.facts.project_files
    if len(files) > _MAX_FILES:
        return False
    own = os.path.abspath(ctx.path)
    stem = os.path.splitext(os.path.basename(own))[0]
    needle, module = name.encode(), re.compile(rb"\b" + re.escape(stem.encode()) + rb"\b")
    for path in files:
        if os.path.abspath(path) == own:
            continue
        raw = reads.read(path, _MAX_BYTES)
        if raw is None:
            return False  # unread: may name it
        if needle in raw[0] and module.search(raw[0]):
            return False
    return True


def _written_once(ctx: Context, name: str) -> bool:
    """Whether the module's text writes ``name`` exactly once. Asked at every site of
    every rule that judges a hazard in the function, so searched once per file and
    name (a fact of the text alone: the other files' reads stay at each question)."""
    key = (_written_once, name)
    once = ctx.memo.get(key)
    if once is None:
        once = ctx.memo[key] = _word_count(ctx.text, name, 2) == 1
    return bool(once)


def _word_count(text: str, word: str, most: int) -> int:
    """How many times ``text`` writes ``word`` as a whole word (``\\bword\\b``), counted
    up to ``most``: found with ``str.find``, far faster than the regex on a long file."""
    if not (word and _is_word_char(word[0]) and _is_word_char(word[-1])):
        return min(most, len(re.findall(r"\b" + re.escape(word) + r"\b", text)))
    count, start = 0, text.find(word)
    while start >= 0 and count < most:
        end = start + len(word)
        if (start == 0 or not _is_word_char(text[start - 1])) and (end == len(text) or not _is_word_char(text[end])):
            count += 1
            start = text.find(word, end)  # the regex goes on after a match
        else:
            start = text.find(word, start + 1)
    return count


def _is_word_char(char: str) -> bool:
    """What ``\\w`` matches in a ``str`` pattern (sre: alphanumeric or ``_``)."""
    return char.isalnum() or char == "_"
