"""The string fields of a module's config objects, for its summary: ``CFG.policy`` ->
``"mixed_float16"`` where ``CFG = ModelConfig()`` is bound once at the top level and the
dataclass (or attrs class, ``NamedTuple``, plain class, ``SimpleNamespace``) gives the
field that string. The program model reads them as it reads ``POLICY = "..."``
(``ModuleSummary.constants``), so ``set_global_policy(config.CFG.policy)`` names a policy.

Read with CPython's ``ast``, as the summaries are; the checked file's evaluator reads the
same shapes with libcst (:mod:`semantic.config_objects`), which decides every other field.
A field some code of the module sets (``CFG.policy = args.policy``, ``setattr``), a
construction with ``*args`` or ``**overrides``, or a class with bases of its own gives
nothing.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple

from mplint.run.dotted import dotted
from mplint.semantic.vocabulary import DATACLASS_DECORATORS

#: the field-making decorators as a module may write them: in full, or imported by name
_FIELD_DECORATORS = DATACLASS_DECORATORS | frozenset(
    name.rpartition(".")[2] for name in DATACLASS_DECORATORS if name.rpartition(".")[2] != "s")
_NAMESPACES = frozenset({"SimpleNamespace", "types.SimpleNamespace", "EasyDict", "easydict.EasyDict",
                         "ConfigDict", "ml_collections.ConfigDict", "argparse.Namespace"})


def object_facts(tree: ast.Module) -> Tuple[Dict[str, str], List[str]]:
    """In one walk of the module: its config objects' string fields (``NAME.field`` ->
    the string, for the top-level names bound once to a config object, and ``Class.ATTR``
    of a plain class's string attributes), and the attributes its code sets on an object
    other than ``self`` (``cfg.norm_eps = args.eps``; "*" for ``setattr``)."""
    body = tree.body
    stores: Dict[str, int] = {}
    set_attributes: Set[str] = set()
    elsewhere: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stores[node.name] = stores.get(node.name, 0) + 1
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            set_attributes.add(node.attr)
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                elsewhere.add(node.attr)
        elif isinstance(node, ast.Call) and dotted(node.func) in ("setattr", "object.__setattr__"):
            set_attributes.add("*")
            if not (node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == "self"):
                elsewhere.add("*")
    if "*" in set_attributes:
        return {}, sorted(elsewhere)
    classes = {stmt.name: stmt for stmt in body if isinstance(stmt, ast.ClassDef) and stores.get(stmt.name) == 1}
    out: Dict[str, str] = {}
    for name, cls in classes.items():
        if not cls.bases and not cls.decorator_list and not _method(cls, "__init__"):
            for attr, value in _class_strings(cls).items():
                if attr not in set_attributes:
                    out[f"{name}.{attr}"] = value
    for stmt in body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
            stmt.target if isinstance(stmt, ast.AnnAssign) else None
        call = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
        if not isinstance(target, ast.Name) or stores.get(target.id) != 1 or not isinstance(call, ast.Call) \
                or any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            continue
        for attr, value in _fields(call, classes).items():
            if attr not in set_attributes:
                out[f"{target.id}.{attr}"] = value
    return out, sorted(elsewhere)


def _fields(call: ast.Call, classes: Dict[str, ast.ClassDef]) -> Dict[str, str]:
    func = dotted(call.func)
    if func in _NAMESPACES:
        return {k.arg: k.value.value for k in call.keywords
                if k.arg is not None and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)}
    cls = classes.get(func or "")
    if cls is None:
        return {}
    if not _fields_class(cls):
        if call.args or call.keywords or cls.bases or _method(cls, "__init__"):
            return {}
        return _class_strings(cls)
    if any(dotted(b) not in ("NamedTuple", "typing.NamedTuple") for b in cls.bases) \
            or any(isinstance(s, ast.FunctionDef) and s.name == "__post_init__" for s in cls.body):
        return {}
    order = [s.target.id for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
             and "ClassVar" not in ast.dump(s.annotation)]
    given: Dict[str, ast.expr] = dict(zip(order, call.args))
    given.update({k.arg: k.value for k in call.keywords if k.arg is not None})
    out: Dict[str, str] = {}
    for stmt in cls.body:
        if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name) \
                or stmt.target.id not in order:
            continue
        value = given.get(stmt.target.id, stmt.value)
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            out[stmt.target.id] = value.value
    return out


def _fields_class(cls: ast.ClassDef) -> bool:
    return any(dotted(d.func if isinstance(d, ast.Call) else d) in _FIELD_DECORATORS for d in cls.decorator_list) \
        or any(dotted(b) in ("NamedTuple", "typing.NamedTuple") for b in cls.bases)


def _class_strings(cls: ast.ClassDef) -> Dict[str, str]:
    found: Dict[str, Optional[str]] = {}
    for stmt in cls.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
            if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else []
        value = getattr(stmt, "value", None)
        for target in targets:
            if isinstance(target, ast.Name):
                string = value.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and len(targets) == 1 \
                    and isinstance(value, ast.Constant) and isinstance(value.value, str) else None
                found[target.id] = string if target.id not in found else None
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.FunctionDef, ast.Expr, ast.Pass)):
            return {}
    return {name: value for name, value in found.items() if value is not None}


def _method(cls: ast.ClassDef, name: str) -> bool:
    return any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name for s in cls.body)
