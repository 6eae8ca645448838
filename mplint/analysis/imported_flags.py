"""absl flags defined in another module of the project: ``flags.DEFINE_integer(
"batch_size", 100, ...)`` in ``flagdefs.py``, read as ``FLAGS.batch_size`` in the
training script, whose ``FLAGS`` is absl's own or the one ``flagdefs`` hands on
(``FLAGS = flags.FLAGS`` there, ``from flagdefs import FLAGS`` here).

absl's flags are one registry for the whole process, so a flag may be defined in any
module the script imports. The modules searched are the project modules the checked
file imports at its top level and the ones those import (two levels); the flag must be
defined exactly once among them, with a number literal as its default. A run without
the flag uses that default. Where the program itself changes the value
(``FLAGS.batch_size = 64``, ``FLAGS.set_default("batch_size", 64)``, an argument list
that spells ``--batch_size=64``, ``setattr``) in the checked file or a searched module,
the value is unknown and the rules stay silent. Each module is read through
:mod:`core.reads`, so a cached result is keyed by its content.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

import libcst as cst

from mplint.analysis.imported_layers import module_file, parsed_module
from mplint.core.find_nodes import find_all
from mplint.rule.check import Context
from mplint.run.module_paths import absolute_import
from mplint.semantic.call_args import positional_or_keyword
from mplint.semantic.names import dotted_name
from mplint.semantic.vocabulary import FLAG_OBJECTS

#: absl (and tf.compat.v1.flags) definitions of numbers: name, default, help
ABSL_NUMBER_DEFINES = frozenset({"DEFINE_integer", "DEFINE_float"})
_SEARCH_DEPTH = 2
#: (path, content digest) -> the module's number flag definitions: name -> defaults
_DEFINED: Dict[Tuple[str, str], Dict[str, List[cst.BaseExpression]]] = {}

Definition = Tuple[cst.BaseExpression, str]


def is_imported_registry(ctx: Context, expr: cst.BaseExpression) -> bool:
    """``expr`` names absl's FLAGS as another module of the project binds it
    (``from flagdefs import FLAGS``, ``flagdefs.FLAGS``)."""
    dotted = _dotted_import(ctx, expr)
    if dotted is None or "." not in dotted.lstrip("."):
        return False
    module, _, name = dotted.rpartition(".")
    path = _module_path(ctx, ctx.path, module)
    found = None if path is None else parsed_module(path)
    if found is None:
        return False
    bound = _top_level_value(found[1], name)
    imports = _imports_of(found[1])
    if bound is None:
        return imports.get(name) in FLAG_OBJECTS
    written = dotted_name(bound)
    if written is None:
        return False
    head, _, rest = written.partition(".")
    target = imports.get(head)
    return target is not None and f"{target}.{rest}" in FLAG_OBJECTS


def imported_flag_default(ctx: Context, dest: str) -> Optional[Definition]:
    """The default of the absl flag ``dest`` and where it is defined (``flagdefs.py``),
    when exactly one module the checked file imports (or one they import) defines it
    and none of them, nor the checked file, changes it; else None."""
    found: List[Definition] = []
    for path in _searched_modules(ctx):
        parsed = parsed_module(path)
        if parsed is None:
            continue
        digest, module = parsed
        if changes_flag(module.code, dest):
            return None
        if (path, digest) not in _DEFINED:
            _DEFINED[(path, digest)] = _definitions(module)
        found += [(default, os.path.basename(path)) for default in _DEFINED[(path, digest)].get(dest, [])]
    if len(found) != 1 or changes_flag(ctx.text, dest):
        return None
    default = found[0][0]
    number = default.expression if isinstance(default, cst.UnaryOperation) else default
    return found[0] if isinstance(number, (cst.Integer, cst.Float)) else None


def changes_flag(text: str, dest: str) -> bool:
    """The program sets the flag's value itself: assigns it (``FLAGS.batch_size = 64``,
    ``args.batch_size *= n``), sets its default (``set_default("batch_size", ...)``,
    argparse's ``set_defaults(batch_size=...)``), sets it by name (``setattr``), or
    parses an argument list that spells it (``"--batch_size=64"``)."""
    name = re.escape(dest)
    return re.search(rf"\.{name}\s*(\+|-|\*|/|//)?=(?!=)", text) is not None \
        or re.search(rf"set_defaults\([^)]*\b{name}\s*=", text) is not None \
        or re.search(rf"set_default\(\s*['\"]{name}['\"]", text) is not None \
        or re.search(rf"setattr\([^)]*['\"]{name}['\"]", text) is not None \
        or re.search(rf"['\"]--{name}=", text) is not None


def _definitions(module: cst.Module) -> Dict[str, List[cst.BaseExpression]]:
    """Every ``DEFINE_integer(name, default)`` / ``DEFINE_float`` of the module, anywhere
    in it (a ``define_flags()`` function too), by flag name."""
    out: Dict[str, List[cst.BaseExpression]] = {}
    for call in find_all(module, cst.Call):
        assert isinstance(call, cst.Call)
        func = call.func
        method = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if method not in ABSL_NUMBER_DEFINES:
            continue
        name = positional_or_keyword(call, 0, "name")
        default = positional_or_keyword(call, 1, "default")
        if isinstance(name, cst.SimpleString) and isinstance(name.evaluated_value, str) and default is not None:
            out.setdefault(name.evaluated_value, []).append(default)
    return out


def _searched_modules(ctx: Context) -> List[str]:
    """The project modules the checked file imports at its top level, then the ones
    those import, each once (the checked file is not one of them)."""
    own = os.path.abspath(ctx.path)
    seen: List[str] = [own]
    pending: List[Tuple[str, cst.Module, int]] = [(ctx.path, ctx.module, 0)]
    while pending:
        importer, module, depth = pending.pop(0)
        if depth >= _SEARCH_DEPTH:
            continue
        for imported in _imported_modules(ctx, importer, module):
            if imported in seen:
                continue
            seen.append(imported)
            parsed = parsed_module(imported)
            if parsed is not None:
                pending.append((imported, parsed[1], depth + 1))
    return seen[1:]


def _imported_modules(ctx: Context, importer: str, module: cst.Module) -> Iterator[str]:
    """The files of the project modules ``module``'s top-level imports load: ``import
    flagdefs``, ``from flagdefs import FLAGS``, ``from pkg import flagdefs``."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    name = dotted_name(alias.name)
                    path = _module_path(ctx, importer, name) if name else None
                    if path is not None:
                        yield path
            elif isinstance(small, cst.ImportFrom):
                base = "." * len(small.relative) + (dotted_name(small.module) or "" if small.module else "")
                path = _module_path(ctx, importer, base) if base.strip(".") else None
                if path is not None:
                    yield path
                if isinstance(small.names, cst.ImportStar):
                    continue
                for alias in small.names:  # ``from pkg import flagdefs``: a submodule
                    name = dotted_name(alias.name)
                    if not name:
                        continue
                    target = base + name if base.endswith(".") else f"{base}.{name}"
                    path = _module_path(ctx, importer, target)
                    if path is not None:
                        yield path


def _module_path(ctx: Context, importer: str, module: str) -> Optional[str]:
    root = Path(ctx.facts.project_root) if ctx.facts.project_root else None
    absolute = absolute_import(module, os.path.abspath(importer), root) if module.startswith(".") else module
    return module_file(absolute, importer, root) if absolute else None


def _dotted_import(ctx: Context, expr: cst.BaseExpression) -> Optional[str]:
    """What ``expr`` names through the checked file's imports (``flagdefs.FLAGS``)."""
    resolved = ctx.names.resolve(expr)
    return next(iter(resolved)) if len(resolved) == 1 else None


def _top_level_value(module: cst.Module, name: str) -> Optional[cst.BaseExpression]:
    """The value of the module's one top-level ``name = value`` (None: not one)."""
    found: List[cst.BaseExpression] = []
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and any(
                    isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets):
                found.append(small.value)
    return found[0] if len(found) == 1 else None


def _imports_of(module: cst.Module) -> Dict[str, str]:
    """Local name -> dotted target of the module's top-level imports (``flags`` ->
    ``absl.flags``, ``tf`` -> ``tensorflow``; TensorFlow's canonical spelling)."""
    out: Dict[str, str] = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar) and small.module:
                base = dotted_name(small.module) or ""
                for alias in small.names:
                    name = dotted_name(alias.name)
                    local = alias.asname.name if alias.asname is not None else alias.name
                    if name and isinstance(local, cst.Name):
                        out[local.value] = f"{base}.{name}"
            elif isinstance(small, cst.Import):
                for alias in small.names:
                    name = dotted_name(alias.name)
                    if not name:
                        continue
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        out[alias.asname.name.value] = name
                    else:
                        out[name.split(".")[0]] = name.split(".")[0]
    return out
