"""TensorFlow and Keras modules a project function returns: ``get_submodules_from_kwargs``
in a package ``__init__`` returns ``kwargs.get('layers', keras.layers)`` and every model
module does ``backend, layers, models, utils = get_submodules_from_kwargs(kwargs)``.
Without knowing that, ``layers.Dense(...)`` there names nothing mplint knows.

Each top-level function's returns are read with CPython's ``ast``, only in files that bind
TensorFlow or Keras names and return a bare name or a tuple of names (a cheap search over
the bytes first). What a function returns is handed on beside the file's imports
(:mod:`mplint.run.reexports`) as ``(name + "()", module)`` for a single value and
``(name + "()#i", module)`` for the i-th item of a returned tuple, so the project's digest,
the cache and ``from pkg import name`` lookups cover it as they cover ``from pkg import tf``.

A value that cannot be followed makes the function's whole answer unknown (nothing is
handed on): ``kwargs.get(key)`` with no default, a default that is a parameter, returns
that differ in shape, a name bound twice. The default of ``kwargs.get(key, default)`` is
taken as the value: callers that pass another module under that key pass a Keras module
too in every project seen, and the rules ask only which API a call names.

A default that names no TensorFlow or Keras module (``kwargs.get('layers',
keras_applications._KERAS_LAYERS)``) hands on the key instead, as ``{layers}``: the value is
then what the project's dicts with known keys hold under that key (``{'layers':
tfkeras.layers}`` returned by a factory's ``get_kwargs``, :func:`keyed_modules`), joined over
the project by :class:`mplint.run.reexports.HandedOn`; unknown where no dict holds one.
"""

from __future__ import annotations

import ast
import functools
import re
from typing import Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

from mplint.core.python_syntax import tree_or_none
from mplint.semantic.vocabulary import TENSORFLOW_PACKAGES

#: a ``return`` of a bare name, a dotted name or a tuple of them (the shape followed); it
#: starts with a literal word, which the engine finds with a fast search, and that only
#: indentation stands before it is checked for each match (:func:`_indented`)
_RETURN = re.compile(rb"return[ \t]+\(?[\w.]+(?:[ \t]*,[ \t]*[\w.]+)*,?\)?[ \t]*(?:#[^\n]*)?$", re.MULTILINE)

Exports = Tuple[Tuple[str, str], ...]


def returned_modules(raw: bytes, exports: Exports) -> Exports:
    """``(function + "()" or "()#i", module)`` for each top-level function of the file
    whose every return is a TensorFlow or Keras module (or a tuple of them)."""
    if not _may_return_modules(raw, exports):
        return ()
    tree = tree_or_none(raw.decode("utf-8", errors="replace"))
    if tree is None:
        return ()
    imported: Dict[str, Set[str]] = {}
    for local, module in exports:
        imported.setdefault(local, set()).add(module)
    names = _module_level_names(tree, imported)
    found: Set[Tuple[str, str]] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for slot, meanings in _returns(node, names).items():
                found.update((node.name + slot, meaning) for meaning in meanings)
    return tuple(sorted(found))


def _may_return_modules(raw: bytes, exports: Exports) -> bool:
    """The cheap gate before a parse: some ``return`` hands back an imported name
    (``return layers``, ``return tf.keras.layers``) or a name assigned from a ``.get(``
    or from an imported module's attribute (``layers = kwargs.get('layers', keras.layers)``,
    ``_LAYERS = keras.layers``). Most files return computed values and are not parsed:
    on a pre-commit run the index asks this of every file of the project."""
    if not exports and b".get(" not in raw:
        return False
    imported = {local.encode() for local, _ in exports}
    returned: Set[bytes] = set()
    for match in _RETURN.finditer(raw):
        if not _indented(raw, match.start()):
            continue
        for name in _NAME.findall(match.group(0).split(b"return", 1)[1].split(b"#", 1)[0]):
            if name.split(b".", 1)[0] in imported:
                return True
            returned.add(name)
    if not returned:
        return False
    for match in _assigned_values(frozenset(imported), b".get(" in raw).finditer(raw):
        value = match.group(1)
        if value.endswith(b".get(") or (b"." in value and value.split(b".", 1)[0] in imported):
            target = _TARGET.fullmatch(raw, raw.rfind(b"\n", 0, match.start()) + 1, match.start())
            if target is not None and target.group(1) in returned:
                return True
    return False


def _indented(raw: bytes, at: int) -> bool:
    """Only spaces and tabs, at least one, stand before ``at`` on its line."""
    before = raw[raw.rfind(b"\n", 0, at) + 1:at]
    return bool(before) and not before.strip(b" \t")


#: a name or dotted name in a ``return`` line
_NAME = re.compile(rb"[A-Za-z_][\w.]*")
#: the value of ``name = something.get(`` or ``name = a.dotted.name`` (a module's
#: attribute, maybe), from its ``=`` (a literal start: a fast search); the name is read
#: back from the start of the line (:data:`_TARGET`)
_ASSIGNED_VALUE = re.compile(rb"=[ \t]*([\w.]+\.get\(|[\w.]+(?=[ \t]*(?:#[^\n]*)?$))", re.MULTILINE)


@functools.lru_cache(maxsize=64)
def _assigned_values(imported: FrozenSet[bytes], gets: bool) -> "re.Pattern[bytes]":
    """:data:`_ASSIGNED_VALUE` narrowed to the values the gate takes (an imported name's
    attribute, or a ``.get(`` where the file holds one), so the search stops at few of a
    file's ``=`` (the gate runs on every file of a pre-commit run's project)."""
    heads = b"|".join(re.escape(name) for name in sorted(imported, key=lambda n: (-len(n), n)))
    branches = [rb"(?:" + heads + rb")\.[\w.]*(?=[ \t]*(?:#[^\n]*)?$)"] if heads else []
    if gets:
        branches.append(rb"[\w.]+\.get\(")
    return re.compile(rb"=[ \t]*(" + b"|".join(branches or [rb"(?!)"]) + rb")", re.MULTILINE)


#: the line before such an ``=``: one name, indented or not
_TARGET = re.compile(rb"[ \t]*(\w+)[ \t]*")


def _module_level_names(tree: ast.Module, imported: Dict[str, Set[str]]) -> Dict[str, FrozenSet[str]]:
    """The file's import names, and module-level names assigned once from one
    (``_LAYERS = keras.layers``); a name assigned twice, or rebound from an import, is
    left out."""
    names = {local: frozenset(modules) for local, modules in imported.items()}
    counts: Dict[str, int] = {}
    for node in _statements(tree.body):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        counts[name.id] = counts.get(name.id, 0) + 1
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            local = node.targets[0].id
            meanings = _dotted_meaning(node.value, names)
            if meanings and counts.get(local) == 1 and local not in imported:
                names[local] = meanings
    return {local: meanings for local, meanings in names.items()
            if local not in counts or local not in imported}


def _returns(function: ast.FunctionDef, names: Dict[str, FrozenSet[str]]) -> Dict[str, FrozenSet[str]]:
    """Slot (``()`` or ``()#i``) -> the modules returned there, joined over every return;
    empty when any return is something else."""
    params = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    params |= {a.arg for a in (function.args.vararg, function.args.kwarg) if a is not None}
    local = _local_bindings(function, names, params)
    shapes: Set[Optional[int]] = set()
    joined: Dict[str, Set[str]] = {}
    returns = [node for node in _own_nodes(function) if isinstance(node, ast.Return)]
    if not returns:
        return {}
    for node in returns:
        items = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value] if node.value else []
        if not items:
            return {}
        shapes.add(len(items) if isinstance(node.value, ast.Tuple) else None)
        for index, item in enumerate(items):
            meanings = _value(item, local, names, params)
            if not meanings:
                return {}  # one value not followed: the function's answer is unknown
            slot = "()" if not isinstance(node.value, ast.Tuple) else f"()#{index}"
            joined.setdefault(slot, set()).update(meanings)
    if len(shapes) != 1:
        return {}
    return {slot: frozenset(meanings) for slot, meanings in joined.items()}


def _local_bindings(function: ast.FunctionDef, names: Dict[str, FrozenSet[str]],
                    params: Set[str]) -> Dict[str, FrozenSet[str]]:
    """Local name -> modules, for names the function assigns once from a module or a
    ``.get(key, default)``; every other local name maps to nothing (unknown), so it
    hides a module-level name of that spelling."""
    counts: Dict[str, int] = {}
    values: Dict[str, ast.expr] = {}
    for node in _own_nodes(function):
        targets: List[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.withitem,
                               ast.NamedExpr)):
            target = node.optional_vars if isinstance(node, ast.withitem) else node.target
            targets = [target] if target is not None else []
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for declared in node.names:
                counts[declared] = counts.get(declared, 0) + 2  # bound elsewhere too: not followed
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    counts[name.id] = counts.get(name.id, 0) + 1
                    if isinstance(node, ast.Assign) and len(node.targets) == 1 and target is name:
                        values[name.id] = node.value
    out: Dict[str, FrozenSet[str]] = {}
    unknown_locals: Dict[str, FrozenSet[str]] = {local: frozenset() for local in counts}  # a local's own value is not followed
    for local, count in counts.items():
        value = values.get(local)
        if count == 1 and value is not None and local not in params:
            out[local] = _value(value, unknown_locals, names, params)
        else:
            out[local] = frozenset()  # bound more than once, or not from a plain value
    return out


def _value(node: ast.expr, local: Dict[str, FrozenSet[str]], names: Dict[str, FrozenSet[str]],
           params: Set[str]) -> FrozenSet[str]:
    """The modules an expression denotes: a dotted name of an import (or of a local or
    module-level name bound from one), or ``x.get(key, default)`` of such a default."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
            and len(node.args) == 2 and not node.keywords:
        default = _value(node.args[1], local, names, params)
        key = node.args[0]
        if default or not _is_constant_default(node.args[1], local, params) \
                or not (isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.isidentifier()):
            return default
        return frozenset({"{" + key.value + "}"})  # what the project's dicts hold under the key
    head = node
    while isinstance(head, ast.Attribute):
        head = head.value
    if not isinstance(head, ast.Name) or head.id in params:
        return frozenset()
    if head.id in local:
        base = local[head.id]
    else:
        base = names.get(head.id, frozenset())
    return _extend(base, node)


def _is_constant_default(node: ast.expr, local: Dict[str, FrozenSet[str]], params: Set[str]) -> bool:
    """A default the caller cannot choose: an attribute of a module-level name (an import),
    never a parameter or a local name."""
    head = node
    while isinstance(head, ast.Attribute):
        head = head.value
    return isinstance(head, ast.Name) and head is not node and head.id not in params and head.id not in local


#: the quoted key just before a dict display entry's ``:``
_KEY_BEFORE = re.compile(rb"""['"]([A-Za-z_]\w*)['"][ \t]*$""")


def keyed_modules(raw: bytes, exports: Exports) -> Exports:
    """``("{key}", module)`` for each dict display entry ``'key': tf.keras.layers`` whose
    value is a TensorFlow or Keras module the file imports (read from the bytes): what a
    ``kwargs.get('key', <not a Keras module>)`` elsewhere may be handed. The search starts
    at a ``:`` before an imported name (a literal-led pattern: fast), the key is read back."""
    names: Dict[str, Set[str]] = {}
    for local, module in exports:
        if "(" not in local and "{" not in local:
            names.setdefault(local, set()).add(module)
    if not names:
        return ()
    heads = b"|".join(re.escape(local.encode()) for local in sorted(names))
    entry = re.compile(rb":[ \t]*(" + heads + rb")((?:\.\w+)*)[ \t]*(?=[,}\n#])")
    found: Set[Tuple[str, str]] = set()
    for match in entry.finditer(raw):
        key = _KEY_BEFORE.search(raw, max(0, match.start() - 80), match.start())
        if key is None:
            continue
        head, rest = match.group(1).decode("ascii", "replace"), match.group(2).decode("ascii", "replace")
        for module in names.get(head, ()):
            meaning = module + rest
            if meaning.split(".", 1)[0] in TENSORFLOW_PACKAGES:
                found.add(("{" + key.group(1).decode("ascii", "replace") + "}", meaning))
    return tuple(sorted(found))


def _dotted_meaning(node: ast.expr, names: Dict[str, FrozenSet[str]]) -> FrozenSet[str]:
    head = node
    while isinstance(head, ast.Attribute):
        head = head.value
    if not isinstance(head, ast.Name):
        return frozenset()
    return _extend(names.get(head.id, frozenset()), node)


def _extend(base: FrozenSet[str], node: ast.expr) -> FrozenSet[str]:
    """``base`` + the attributes ``node`` reads after its head; only TensorFlow and Keras."""
    rest: List[str] = []
    while isinstance(node, ast.Attribute):
        rest.append(node.attr)
        node = node.value
    suffix = ".".join(reversed(rest))
    keyed = frozenset(b for b in base if b.startswith("{")) if not suffix else frozenset()
    return keyed | frozenset(f"{b}.{suffix}" if suffix else b for b in base
                             if b.split(".", 1)[0] in TENSORFLOW_PACKAGES)


def _statements(body: List[ast.stmt]) -> Iterator[ast.AST]:
    """Every statement of ``body`` and of the blocks within, nested functions and classes
    too (and the ``except`` and ``case`` clauses holding blocks): what :func:`ast.walk`
    finds of assignments, without visiting the expressions, most of a tree's nodes."""
    stack: List[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        for block in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(getattr(node, block, ()))


def _own_nodes(function: ast.FunctionDef) -> List[ast.AST]:
    """The function's nodes, nested functions, classes and lambdas left out."""
    out: List[ast.AST] = []
    stack: List[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        out.append(node)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)
    return out
