"""Registries that decorators fill across modules: ``HEADS = {}`` in ``heads/registry.py``,
``def register_head(name): def decorator(fn): HEADS[name] = fn; return fn; ...``, and
``@register_head("classification")`` on functions of ``heads/classification.py``. A
lookup under a key this module knows (``HEADS[args.task](x, n)``, the flag's default)
runs the function registered under that key.

A decorator registers only when its module runs, so the entries are read from the
modules the checked file imports (``import heads.classification``, for its side effect),
the registry's own module and the ``__init__`` of its package (which often imports every
entry's module). A key registered twice, a dict bound otherwise than once to ``{}`` or
changed outside the writer, or a decorator whose key is not a string literal, leaves the
entry unknown, and the rules stay silent.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.flag_defaults import FlagDefaults
from mplint.analysis.imported_layers import (
    imported_definition, imported_keyed_factory, judge_function_of, module_file, parsed_module, project_root,
    top_level_imports,
)
from mplint.core.find_nodes import find_all
from mplint.rule.check import Context
from mplint.run.module_paths import absolute_import
from mplint.semantic.names import dotted_name
from mplint.semantic.scopes import Location

if TYPE_CHECKING:  # pragma: no cover
    from mplint.analysis.custom_layers import CustomLayer


def imported_registry_entry(ctx: Context, func: cst.Subscript, call: cst.Call, loc: Location,
                            head: bool = False) -> Optional["CustomLayer"]:
    """The layer (``head``: the head's output) the entry of another module's registry
    that the key picks builds when ``call`` calls it: ``HEADS[args.task](x, n)``, a dict
    of builders there (``HEADS = {...}``) or one decorators fill (``HEADS = {}`` and
    ``@register_head("classification")``), judged there. None when unknown."""
    key = registry_key(ctx, func, loc)
    if key is None:
        return None
    registry = imported_definition(ctx, func.value, assigned=cst.Dict)
    entry = None if registry is None else registered_entry(ctx, registry, key)
    if entry is not None:
        return judge_function_of(ctx, entry, call, loc, head)
    return imported_keyed_factory(ctx, func, call, loc, head, key)


def registry_key(ctx: Context, func: cst.Subscript, loc: Location) -> Optional[str]:
    """The one string ``REG[key]`` reads with, when this module knows it (see :func:`_key_value`)."""
    if len(func.slice) != 1 or not isinstance(func.slice[0].slice, cst.Index):
        return None
    return _key_value(ctx, func.slice[0].slice.value, loc, 0)


def _key_value(ctx: Context, expr: cst.BaseExpression, loc: Location, depth: int) -> Optional[str]:
    """The one string ``expr`` holds at ``loc``: its value, the default of the flag it
    reads (``HEADS[args.task]``, ``--task`` defaulting to "classification"), or for a
    parameter, what the followed call (else every call of the file) passes it, read so."""
    key = ctx.values.value(expr, loc)
    if isinstance(key, str):
        return key
    if FlagDefaults in ctx.analyses:
        flag = ctx.get(FlagDefaults).default_of(expr, loc)
        key = None if flag is None else ctx.values.value(flag[0], flag[1])
        if isinstance(key, str):
            return key
    binding = loc.lookup(expr.value) if isinstance(expr, cst.Name) else None
    if binding is None or binding.kind != "param" or binding.scope is None or depth > 3:
        return None
    followed = loc.frame_of(binding.scope.node)
    if followed is not None:
        frame = followed[0]
        assert isinstance(binding.node, cst.Param)
        given = ctx.values.bound_argument(frame.function, binding.node, frame.call, frame.offset, frame.caller)
        return _key_value(ctx, given, frame.caller, depth + 1) if isinstance(given, cst.BaseExpression) else None
    sources = ctx.values.param_sources(binding)
    keys = {_key_value(ctx, source, where, depth + 1) for source, where, _ in sources or []}
    return keys.pop() if len(keys) == 1 else None


def registered_entry(ctx: Context, registry: Tuple[str, str], key: str) -> Optional[Tuple[str, str]]:
    """(module file, function or class name) registered under ``key`` in the dict
    ``registry`` (its module file and name) names, or None (see the module's doc)."""
    path, name = registry
    parsed = parsed_module(path)
    if parsed is None or not _empty_dict_bound_once(parsed[1], name):
        return None
    writers = _writers(parsed[1], name)
    if not writers:
        return None
    found: Set[Tuple[str, str]] = set()
    for candidate in _entry_modules(ctx, path):
        module = parsed_module(candidate)
        if module is None:
            continue
        for statement in module[1].body:
            if not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                continue
            for decorator in statement.decorators:
                call = decorator.decorator
                if isinstance(call, cst.Call) and _registers(ctx, candidate, module[1], call.func, path, writers) \
                        and _key_of(call) == key:
                    found.add((candidate, statement.name.value))
    return found.pop() if len(found) == 1 else None


def _empty_dict_bound_once(module: cst.Module, name: str) -> bool:
    """``NAME = {}`` is the module's one top-level binding of ``NAME``, and no top-level
    statement changes it (``NAME.update(...)``, ``NAME["k"] = ...``)."""
    bound = 0
    for line in module.body:
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for small in line.body:
            if isinstance(small, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name
                                                     for t in small.targets):
                if not (isinstance(small.value, cst.Dict) and not small.value.elements):
                    return False
                bound += 1
            elif isinstance(small, cst.Assign) and any(
                    isinstance(t.target, cst.Subscript) and dotted_name(t.target.value) == name for t in small.targets):
                return False
            elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) \
                    and dotted_name(small.value.func) in {f"{name}.{m}" for m in ("update", "setdefault", "pop")}:
                return False
    return bound == 1


def _writers(module: cst.Module, name: str) -> Set[str]:
    """Top-level decorator factories whose inner function stores into ``NAME[...]``
    by the factory's own first parameter (``def register(key): def deco(fn):
    NAME[key] = fn; return fn; return deco``)."""
    found: Set[str] = set()
    for statement in module.body:
        if not isinstance(statement, cst.FunctionDef) or not statement.params.params:
            continue
        param = statement.params.params[0].name.value
        for inner in find_all(statement.body, cst.FunctionDef):
            for assign in find_all(inner, cst.Assign):
                for target in assign.targets:
                    sub = target.target
                    if isinstance(sub, cst.Subscript) and dotted_name(sub.value) == name and len(sub.slice) == 1 \
                            and isinstance(sub.slice[0].slice, cst.Index) \
                            and dotted_name(sub.slice[0].slice.value) == param:
                        found.add(statement.name.value)
    return found


def _entry_modules(ctx: Context, registry: str) -> List[str]:
    """The registry's module, its package's ``__init__`` and the modules they and the
    checked file import at their top level: where a registration may run."""
    out: List[str] = [registry]
    init = os.path.join(os.path.dirname(registry), "__init__.py")
    importers: List[Tuple[str, cst.Module]] = [(ctx.path, ctx.module)]
    parsed_init = parsed_module(init) if os.path.isfile(init) else None
    if parsed_init is not None:
        out.append(init)
        importers.append((init, parsed_init[1]))
    root = project_root(ctx)
    for importer, module in importers:
        for imported in _imported_modules(module):
            full = absolute_import(imported, os.path.abspath(importer), root)
            found = module_file(full, importer, root)
            if found is not None and found not in out:
                out.append(found)
    return out


def _imported_modules(module: cst.Module) -> List[str]:
    """Every dotted name a top-level import statement may load as a module (``import
    heads.classification``, ``from heads import classification``: ``heads.classification``)."""
    out: List[str] = []
    for line in module.body:
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for small in line.body:
            if isinstance(small, cst.Import):
                out += [n for n in (dotted_name(a.name) for a in small.names) if n]
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                base = "." * len(small.relative) + (dotted_name(small.module) or "" if small.module else "")
                for alias in small.names:
                    name = dotted_name(alias.name)
                    if name:
                        out.append(base + name if base.endswith(".") else f"{base}.{name}")
    return out


def _registers(ctx: Context, path: str, module: cst.Module, func: cst.BaseExpression, registry: str,
               writers: Set[str]) -> bool:
    """The decorator ``func`` in the module at ``path`` is one of ``writers`` of the
    registry's module."""
    written = dotted_name(func)
    if written is None:
        return False
    if path == registry:
        return written in writers
    head, _, rest = written.partition(".")
    target = top_level_imports(module).get(head)
    if target is None:
        return False
    root = project_root(ctx)
    full = absolute_import(target, os.path.abspath(path), root) + ("." + rest if rest else "")
    owner, _, name = full.rpartition(".")
    return bool(owner) and name in writers and module_file(owner, path, root) == registry


def _key_of(call: cst.Call) -> Optional[str]:
    first = call.args[0] if call.args else None
    if first is None or first.keyword is not None or first.star:
        return None
    value = first.value
    return value.evaluated_value if isinstance(value, cst.SimpleString) and isinstance(value.evaluated_value, str) \
        else None
