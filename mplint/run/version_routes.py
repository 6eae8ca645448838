"""Version evidence from the import route: a module the project imports only under a
version guard runs under the version that guard states.

``bin/exec.py`` imports ``src.utils.tensorflow1.trainer`` only in the ``else`` of
``if tf.__version__.startswith("2"):``: that trainer runs on TensorFlow 1, whatever
``requirements.txt`` asks for the project (which the TensorFlow 2 trainer runs on).
The guards read (on ``tf.__version__``, ``tensorflow.__version__``, ``keras.__version__``):
``X.startswith("1")``, ``X[0] == "2"``, ``int(X[0]) < 2``, ``int(X.split(".")[0]) >= 2``,
``X < "2"`` and ``version.parse(X) < version.parse("2.4")`` (``LooseVersion`` too), their
``not`` and their ``else``. A module imported anywhere without such a guard, or run as a
program, gets nothing: unknown stays unknown.

Reads bytes, and parses with :mod:`ast` only the files that name ``__version__``.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from mplint.run.library import imported_modules, is_script
from mplint.run.module_paths import absolute_import, importable, on_path
from mplint.semantic.versions import Pin, Version, VersionRange, version

#: the packages whose ``__version__`` a guard may test, by the module a name imports
_PACKAGES = {"tensorflow": "tensorflow", "keras": "keras", "tensorflow.keras": "keras"}
#: a guard's range, by package
Guard = Tuple[str, VersionRange]


def guarded_modules(files: Iterable[str], read: Callable[[str], Optional[bytes]],
                    root: Optional[Path],
                    imports_of: Optional[Callable[[str], Sequence[str]]] = None) -> Dict[str, Tuple[Pin, ...]]:
    """Module (absolute path) -> the pins its import guards state, for each module every
    import of which in the project sits under a version guard of one package, or in a
    module that is itself imported only so (``distributed_trainer.py`` beside it doing
    ``from . import trainer``). ``imports_of``: each file's :func:`guarded_names`, as the
    project index keeps them by content (default: read from its bytes now)."""
    if root is None:
        return {}
    if imports_of is None:
        imports_of = lambda key: guarded_names(read(key))  # noqa: E731
    keys = sorted({os.path.abspath(path) for path in files if path.endswith(".py")})
    # Most projects guard no import: the module map is built only for one that does.
    guarded = [(key, found) for key, found in ((key, imports_of(key)) for key in keys) if found]
    if not guarded:
        return {}
    targets: Dict[str, List[Tuple[str, Path]]] = {}
    for key in keys:
        for name, folder in importable(key, root):
            targets.setdefault(name, []).append((key, folder))
    #: module -> its import sites: (importer, the guard there or None, line)
    sites: Dict[str, List[Tuple[str, Optional[Guard], int]]] = {}
    seeds: Set[str] = set()
    for key, names in guarded:
        for name in names:
            seeds.update(_modules(name, key, root, targets))
    if not seeds:
        return {}
    _collect_sites(seeds, keys, read, root, targets, sites)
    alive = {module for module in sites if not _is_program(module, read)}
    changed = True
    while changed:  # a module imported outside a guard, by no guarded module, gives no evidence
        changed = False
        for module in sorted(alive):
            if any(guard is None and importer not in alive for importer, guard, _ in sites[module]):
                alive.discard(module)
                changed = True
    ranges: Dict[str, Tuple[str, VersionRange, str, int]] = {}
    for _ in range(8):  # ranges flow from the guards into what guarded modules import
        for module in sorted(alive):
            found: Optional[Tuple[str, VersionRange, str, int]] = None
            for importer, guard, line in sites[module]:
                one: Optional[Tuple[str, VersionRange, str, int]] = \
                    (guard[0], guard[1], importer, line) if guard is not None else ranges.get(importer)
                if one is None:
                    found = None
                    break
                if found is None:
                    found = one
                elif found[0] != one[0]:
                    found = None
                    break
                else:
                    found = (found[0], found[1].hull(one[1]), found[2], found[3])
            if found is not None:
                ranges[module] = found
    out: Dict[str, Tuple[Pin, ...]] = {}
    for module, (package, allowed, importer, line) in ranges.items():
        if allowed.lower is None and allowed.upper is None:
            continue
        shown = os.path.relpath(importer, root).replace(os.sep, "/")
        out[module] = (Pin(package, _spec(allowed), allowed, shown, line),)
    return out


def guarded_names(raw: Optional[bytes]) -> Tuple[str, ...]:
    """The modules a file imports under a version guard, a fact of its bytes alone (a
    byte test first: most files name no ``__version__``)."""
    if raw is None or b"__version__" not in raw or b"import" not in raw:
        return ()
    return tuple(sorted({name for name, _, _ in _guarded_imports(raw)}))


def _is_program(module: str, read: Callable[[str], Optional[bytes]]) -> bool:
    raw = read(module)
    return raw is None or is_script(raw)


def _modules(name: str, importer: str, root: Path, targets: Dict[str, List[Tuple[str, Path]]]) -> List[str]:
    """The project modules an imported dotted name loads, from ``importer``."""
    return [key for key, folder in targets.get(absolute_import(name, importer, root), ())
            if key != importer and on_path(folder, importer, root)]


def _collect_sites(seeds: Set[str], keys: List[str], read: Callable[[str], Optional[bytes]], root: Path,
                   targets: Dict[str, List[Tuple[str, Path]]],
                   sites: Dict[str, List[Tuple[str, Optional[Guard], int]]]) -> None:
    """Every import site of the seeds, and of what they import (its candidates too)."""
    imports: Dict[str, List[Tuple[str, Optional[Guard], int]]] = {}

    def imports_of(key: str) -> List[Tuple[str, Optional[Guard], int]]:
        if key not in imports:
            raw = read(key) or b""
            if b"__version__" in raw:
                guarded = _guarded_imports(raw)
                lines = {(name, line) for name, _, line in guarded}
                imports[key] = guarded + [(name, None, line) for name, line in _all_imports(raw)
                                          if (name, line) not in lines]
            else:
                imports[key] = [(name, None, 0) for name in sorted(imported_modules(raw.decode("utf-8", "replace")))]
        return imports[key]

    wanted = set(seeds)
    todo = list(seeds)
    while todo:  # what a candidate imports is a candidate
        module = todo.pop()
        for name, _, _ in imports_of(module):
            for imported in _modules(name, module, root, targets):
                if imported not in wanted:
                    wanted.add(imported)
                    todo.append(imported)
    words = {os.path.splitext(os.path.basename(m))[0].encode() for m in wanted}
    words |= {os.path.basename(os.path.dirname(m)).encode() for m in wanted}
    for key in keys:
        raw = read(key)
        if raw is None or b"import" not in raw or not any(word in raw for word in words):
            continue
        for name, guard, line in imports_of(key):
            for module in _modules(name, key, root, targets):
                if module in wanted:
                    sites.setdefault(module, []).append((key, guard, line))


def _all_imports(raw: bytes) -> List[Tuple[str, int]]:
    """Every import of the file: (module name, line)."""
    tree = _parse(raw)
    return [] if tree is None else [(name, getattr(node, "lineno", 0)) for node in ast.walk(tree)
                                    for name in _names(node)]


def _parse(raw: bytes) -> Optional[ast.AST]:
    try:
        return ast.parse(raw)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _names(node: ast.AST) -> List[str]:
    """The dotted modules an import statement may load (as ``imported_modules`` reads them)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = "." * node.level + (node.module or "")
        joined = [base + alias.name if base.endswith(".") else f"{base}.{alias.name}"
                  for alias in node.names if alias.name != "*"]
        return ([base] if base.strip(".") else []) + joined
    return []


def _guarded_imports(raw: bytes) -> List[Tuple[str, Guard, int]]:
    """Each import under a version guard: (module name, the guard's range, line)."""
    tree = _parse(raw)
    if tree is None:
        return []
    packages = _version_names(tree)
    if not packages:
        return []
    found: List[Tuple[str, Guard, int]] = []

    def visit(body: List[ast.stmt], guard: Optional[Guard]) -> None:
        for statement in body:
            if guard is not None:
                found.extend((name, guard, statement.lineno) for name in _names(statement))
            if isinstance(statement, ast.If):
                test = _guard(statement.test, packages)
                inner = _narrow(guard, test)
                other = _narrow(guard, None if test is None else (test[0], _complement(test[1])))
                visit(statement.body, inner if test is not None else guard)
                visit(statement.orelse, other if test is not None else guard)
                continue
            for field in ("body", "orelse", "finalbody"):
                nested = getattr(statement, field, None)
                if isinstance(nested, list) and nested and isinstance(nested[0], ast.stmt):
                    visit(nested, guard)
            for handler in getattr(statement, "handlers", []) or []:
                visit(handler.body, guard)

    visit(getattr(tree, "body", []), None)
    return found


def _narrow(outer: Optional[Guard], inner: Optional[Guard]) -> Optional[Guard]:
    if inner is None:
        return outer
    if outer is None or outer[0] != inner[0]:
        return inner
    return (inner[0], outer[1].intersect(inner[1]))


def _version_names(tree: ast.AST) -> Dict[str, str]:
    """Name bound by an import -> the package whose version ``name.__version__`` is."""
    found: Dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                package = _PACKAGES.get(alias.name)
                if package is not None:
                    found[alias.asname or alias.name] = package
        elif isinstance(node, ast.ImportFrom) and node.module == "tensorflow" and not node.level:
            for alias in node.names:
                if alias.name == "keras":
                    found[alias.asname or alias.name] = "keras"
    return found


def _complement(found: VersionRange) -> VersionRange:
    """The versions outside a one-sided range (a guard's ``else``)."""
    if found.lower is not None and found.upper is None:
        return VersionRange(upper=found.lower, upper_inclusive=not found.lower_inclusive)
    if found.upper is not None and found.lower is None:
        return VersionRange(lower=found.upper, lower_inclusive=not found.upper_inclusive)
    if found.lower is not None and found.upper is not None and found.lower[0] == 2 and found.upper == (3, 0, 0):
        return VersionRange(upper=(2, 0, 0), upper_inclusive=False)  # not 2.x: TensorFlow 1
    if found.lower is not None and found.upper is not None and found.upper == (2, 0, 0) \
            and found.lower == (1, 0, 0):
        return VersionRange(lower=(2, 0, 0))  # not 1.x: 2 or later
    return VersionRange()


def _guard(test: ast.expr, packages: Dict[str, str]) -> Optional[Guard]:
    """The range a version test states for its true branch, or None when it is no guard."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _guard(test.operand, packages)
        return None if inner is None else (inner[0], _complement(inner[1]))
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "startswith" \
            and len(test.args) == 1 and isinstance(test.args[0], ast.Constant) \
            and isinstance(test.args[0].value, str):
        package = _version_of(test.func.value, packages)
        major = test.args[0].value.rstrip(".")
        if package is None or not major.isdigit():
            return None
        return package, _major_range(int(major))
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    package = _version_of(left, packages) or _major_of(left, packages) or _parsed(left, packages)
    bound = _constant_version(right)
    if package is None or bound is None:
        return None
    major_only = _major_of(left, packages) is not None
    return package, _compare(op, bound, major_only)


def _compare(op: ast.cmpop, bound: Version, major_only: bool) -> VersionRange:
    if major_only:  # int(X[0]) < 2: a whole major version
        major = bound[0]
        if isinstance(op, ast.Eq):
            return _major_range(major)
        if isinstance(op, ast.NotEq):
            return VersionRange()
        if isinstance(op, ast.Lt):
            return VersionRange(upper=(major, 0, 0), upper_inclusive=False)
        if isinstance(op, ast.LtE):
            return VersionRange(upper=(major + 1, 0, 0), upper_inclusive=False)
        if isinstance(op, ast.Gt):
            return VersionRange(lower=(major + 1, 0, 0))
        if isinstance(op, ast.GtE):
            return VersionRange(lower=(major, 0, 0))
        return VersionRange()
    if isinstance(op, ast.Lt):
        return VersionRange(upper=bound, upper_inclusive=False)
    if isinstance(op, ast.LtE):
        return VersionRange(upper=bound)
    if isinstance(op, ast.Gt):
        return VersionRange(lower=bound, lower_inclusive=False)
    if isinstance(op, ast.GtE):
        return VersionRange(lower=bound)
    return VersionRange()


def _major_range(major: int) -> VersionRange:
    return VersionRange((major, 0, 0), True, (major + 1, 0, 0), False)


def _version_of(node: ast.expr, packages: Dict[str, str]) -> Optional[str]:
    """``tf.__version__`` -> "tensorflow"."""
    if isinstance(node, ast.Attribute) and node.attr == "__version__":
        if isinstance(node.value, ast.Name):
            return packages.get(node.value.id)
        if isinstance(node.value, ast.Attribute) and isinstance(node.value.value, ast.Name) \
                and node.value.attr == "keras" and packages.get(node.value.value.id) == "tensorflow":
            return "keras"
    return None


def _major_of(node: ast.expr, packages: Dict[str, str]) -> Optional[str]:
    """``X[0]``, ``int(X[0])``, ``X.split(".")[0]``, ``int(X.split(".")[0])``: the major version."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "int" and len(node.args) == 1:
        node = node.args[0]
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Constant) or node.slice.value != 0:
        return None
    value = node.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "split":
        value = value.func.value
    return _version_of(value, packages)


def _parsed(node: ast.expr, packages: Dict[str, str]) -> Optional[str]:
    """``version.parse(X)``, ``parse_version(X)``, ``LooseVersion(X)``, ``Version(X)``."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and _callee(node.func) in (
            "parse", "parse_version", "LooseVersion", "StrictVersion", "Version"):
        return _version_of(node.args[0], packages)
    return None


def _callee(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _constant_version(node: ast.expr) -> Optional[Version]:
    """``"2.4"``, ``2``, ``version.parse("2.4")``."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and _callee(node.func) in (
            "parse", "parse_version", "LooseVersion", "StrictVersion", "Version"):
        node = node.args[0]
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int)) and not isinstance(node.value, bool):
        return version(str(node.value))
    return None


def _spec(found: VersionRange) -> str:
    """The range as a requirement is written: ``<2``, ``>=2.4,<3``."""
    parts: List[str] = []
    if found.lower is not None:
        parts.append((">=" if found.lower_inclusive else ">") + _shown(found.lower))
    if found.upper is not None:
        parts.append(("<=" if found.upper_inclusive else "<") + _shown(found.upper))
    return ",".join(parts)


def _shown(v: Version) -> str:
    parts = list(v)
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return ".".join(map(str, parts))
