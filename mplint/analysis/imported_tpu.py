"""TPU helpers of another module: ``strategy = get_strategy(args.tpu)``, where
``distribute.py`` builds a ``TPUClusterResolver`` and returns a ``TPUStrategy``, puts
the calling program on TPUs as if it built them itself (MP403).

Only a TPU use that every run of the helper makes counts: a call among the function's
own statements (not under an ``if``, a loop or a ``try`` that may fall back to another
strategy), directly or through a function of the same module called so, a few levels
deep. The module is found and parsed as ``imported_layers`` finds it (its read keys the
cached result); a helper that cannot be read is no TPU use, and MP403 stays silent.
"""

from __future__ import annotations

import os
from typing import Dict, Set, Tuple

import libcst as cst

from mplint.core import reads

from mplint.core.find_nodes import find_all
from mplint.analysis.imported_layers import imported_definition, imported_name, parsed_module, top_level_imports
from mplint.rule.check import Context
from mplint.semantic.names import canonical, dotted_name
from mplint.semantic.vocabulary import TPU_NAMES

_MAX_DEPTH = 3
#: a module larger than this is not read for a TPU helper (as ``imported_layers`` reads)
_MAX_BYTES = 2_000_000
#: (path, digest, function) -> whether every run of it uses a TPU
_KNOWN: Dict[Tuple[str, str, str], bool] = {}


def imported_tpu_helper(ctx: Context, func: cst.BaseExpression) -> bool:
    """Whether the call of ``func``, a function a project module defines and the checked
    file imports, always builds a TPU strategy or resolver."""
    first = imported_name(ctx, func)
    if first is None:
        return False
    if os.path.basename(first[0]) != "__init__.py":  # (a package may re-export it from a submodule)
        raw = reads.read(first[0], _MAX_BYTES)
        if raw is None or b"TPU" not in raw[0]:
            return False  # nothing there names a TPU: not parsed
    found = imported_definition(ctx, func)
    if found is None:
        return False
    return _uses_tpu(found[0], found[1], 0, set())


def _uses_tpu(path: str, name: str, depth: int, seen: Set[str]) -> bool:
    parsed = parsed_module(path)
    if parsed is None or depth > _MAX_DEPTH or name in seen:
        return False
    digest, module = parsed
    key = (path, digest, name)
    if key not in _KNOWN:
        function = next((s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)
        _KNOWN[key] = function is not None and _always_calls_tpu(path, module, function, depth, seen | {name})
    return _KNOWN[key]


def _always_calls_tpu(path: str, module: cst.Module, function: cst.FunctionDef, depth: int, seen: Set[str]) -> bool:
    imports = top_level_imports(module)
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else []
    for statement in body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue  # an ``if``, a loop, a ``try``: not every run
        for call in find_all(statement, cst.Call):
            written = dotted_name(call.func)
            if written is None:
                continue
            head, _, rest = written.partition(".")
            target = imports.get(head)
            if target is not None and not target.startswith("."):
                name = canonical(target + ("." + rest if rest else ""))
                if name in TPU_NAMES or name.rpartition(".")[0] in TPU_NAMES:
                    return True
            elif target is None and not rest and _uses_tpu(path, written, depth + 1, seen):
                return True  # a function of the same module
    return False
