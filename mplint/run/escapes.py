"""Where a class's name escapes into code mplint cannot follow, read with CPython's ``ast``.

A class is built where it is called, and also wherever its name is handed on as a value:
``functools.partial(Block, ...)``, ``super().__init__(block_cls=Block)``, an argument of any
call, an item of a container, a returned value, a default parameter value
(``def build(block=Block)``), an alias (``cls = Block``). The code that receives it
(Keras' own scaffolds, a user's registry, a loader) may build it, so the program model
counts such a reference as a possible construction where the code holding it runs.

A name is not handed on where it is only tested or named: ``isinstance(x, Block)``,
``issubclass``, ``type(x) is Block``, ``super(Block, self)``, a base class, an
annotation, an ``except`` clause, the receiver of an attribute (``Block.CONSTANT``,
``Block.method(...)``, which the call graph follows itself) and the callee of a call.

Only names whose last part starts with a capital letter are recorded (PEP 8 class
names): the summary stays small, and the program model checks that each names a class of
the project before it counts.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from mplint.run.dotted import dotted

#: calls whose class arguments are tested, not built
_TESTS = frozenset({"isinstance", "issubclass"})

Escape = Tuple[int, str]


class _Names:
    """How a module summary names the code that is not a function: its body, and the
    body of its ``__main__`` guard (given by :mod:`summaries`, which reads the same way)."""

    def __init__(self, body: str, main: str, is_main_guard: Callable[[ast.stmt], bool]) -> None:
        self.body, self.main, self.is_main_guard = body, main, is_main_guard


def escapes_by_function(body: Sequence[ast.stmt], body_name: str, main_name: str,
                        is_main_guard: Callable[[ast.stmt], bool]) -> Dict[str, List[Escape]]:
    """Function (qualified as a module summary names it: ``Cls.method``, ``body_name`` for
    the module body, ``main_name`` for its ``__main__`` guard) -> the class-like names its
    code hands on as values, each with the first line it does so. A closure's code is its
    enclosing function's; a function's default values are its own (they are what its
    body receives); a class attribute's value is handed on by the methods of the class
    that read it; the rest of a class body is the module body's code. A module-level
    name bound to a value that runs nothing (``LAYERS = {"a": A}``) hands nothing on by
    being defined: the code that reads it does."""
    found: Dict[str, List[Escape]] = {}
    _block(body, [], found, _Names(body_name, main_name, is_main_guard))
    return {name: escapes for name, escapes in found.items() if escapes}


def _block(body: Sequence[ast.stmt], classes: List[str], found: Dict[str, List[Escape]], names: _Names) -> None:
    """A module or class body: definitions are their own functions, the rest is the
    module body's code (a class body runs on import), but for a class attribute
    (``block_cls = Block``), which the methods of the class that read it hand on."""
    loose: List[ast.AST] = []
    methods: List[Tuple[str, ast.AST]] = []
    attributes: Dict[str, List[Escape]] = {}
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            loose += stmt.decorator_list
            _block(stmt.body, [*classes, stmt.name], found, names)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            loose += stmt.decorator_list
            name = ".".join([*classes, stmt.name])
            methods.append((name, stmt))
            found[name] = _escapes([*_defaults(stmt.args), *stmt.body])
        elif not classes and names.is_main_guard(stmt):
            assert isinstance(stmt, ast.If)
            loose += [stmt.test, *stmt.orelse]
            found[names.main] = _escapes(stmt.body)
        elif classes and _bound_names(stmt):
            value = _escapes([stmt.value] if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value else [])
            for target in _bound_names(stmt):
                attributes[target] = value
        elif classes or not _defines(stmt):
            loose.append(stmt)
    found[names.body] = _merged(found.get(names.body, []), _escapes(loose))
    if any(attributes.values()):
        for name, method in methods:
            for attribute in _attributes_read(method, classes[-1]) & set(attributes):
                found[name] = _merged(found[name], attributes[attribute])


def _bound_names(stmt: ast.stmt) -> List[str]:
    """The names ``stmt`` binds when it is an assignment to names only."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) \
        else []
    return [t.id for t in targets if isinstance(t, ast.Name)] if all(isinstance(t, ast.Name) for t in targets) else []


def _attributes_read(method: ast.AST, owner: str) -> Set[str]:
    """The attributes a method reads of its own class: ``self.x``, ``cls.x``, ``Owner.x``,
    ``type(self).x``, ``self.__class__.x``."""
    found: Set[str] = set()
    for node in ast.walk(method):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            receiver = node.value
            if isinstance(receiver, ast.Call) and dotted(receiver.func) == "type" and receiver.args:
                receiver = receiver.args[0]
            elif isinstance(receiver, ast.Attribute) and receiver.attr == "__class__":
                receiver = receiver.value
            if isinstance(receiver, ast.Name) and receiver.id in ("self", "cls", owner):
                found.add(node.attr)
    return found


def _defines(stmt: ast.stmt) -> bool:
    """A module-level name bound to a value that runs nothing (``LAYERS = {"a": A}``,
    ``Default = Block``): importing the module hands no class on; the code that reads
    the name does (a registry call follows it)."""
    if isinstance(stmt, ast.Assign):
        value: Optional[ast.AST] = stmt.value
        targets = stmt.targets
    elif isinstance(stmt, ast.AnnAssign):
        value, targets = stmt.value, [stmt.target]
    else:
        return False
    return all(isinstance(t, ast.Name) for t in targets) and not any(
        isinstance(node, ast.Call) for node in ast.walk(value or ast.Constant(None)))


def _merged(first: List[Escape], second: List[Escape]) -> List[Escape]:
    lines: Dict[str, int] = {}
    for line, name in [*first, *second]:
        lines[name] = min(line, lines.get(name, line))
    return sorted((line, name) for name, line in lines.items())


def _defaults(args: ast.arguments) -> List[ast.AST]:
    return [*args.defaults, *(d for d in args.kw_defaults if d is not None)]


def _class_like(name: str) -> bool:
    return name.rsplit(".", 1)[-1][:1].isupper()


def _escapes(roots: Sequence[ast.AST]) -> List[Escape]:
    """The class-like names the code hands on as values (see the module's docstring)."""
    lines: Dict[str, int] = {}
    stack: List[ast.AST] = list(reversed(roots))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Name, ast.Attribute)):
            name = dotted(node)
            if name is None:  # ``make().Block``: what the receiver's code hands on
                stack.append(node.value)  # type: ignore[union-attr]
            elif isinstance(node.ctx, ast.Load) and _class_like(name):
                lines[name] = min(node.lineno, lines.get(name, node.lineno))
            continue
        stack.extend(reversed(_children(node)))
    return sorted((line, name) for name, line in lines.items())


def handed_arguments(call: ast.Call, callee: Optional[str]) -> List[ast.expr]:
    """The arguments a call hands on to its callee to use (``callee``: the call's dotted
    name, None when it has none): all but the classes of ``isinstance(x, Block)`` and
    ``issubclass``, which are only tested, and those of ``super(Block, self)``."""
    arguments = [*call.args, *(k.value for k in call.keywords)]
    if callee == "super":
        return []
    if (callee or "").rsplit(".", 1)[-1] in _TESTS:
        return arguments[:1]
    return arguments


def _children(node: ast.AST) -> List[ast.AST]:
    """The parts of ``node`` that may hand a name on: a callee, a tested class, an
    annotation and a base class are left out."""
    if isinstance(node, ast.Call):
        callee = dotted(node.func)
        parts: List[ast.AST] = [] if callee is not None else [node.func]
        return parts + list(handed_arguments(node, callee))
    if isinstance(node, ast.Compare):  # ``type(x) is Block``, ``cls == Block``
        return [side for side in [node.left, *node.comparators] if dotted(side) is None]
    if isinstance(node, ast.Subscript):  # ``Optional[Block]``, ``MODELS[name]``
        return [node.slice] if dotted(node.value) is not None else [node.value, node.slice]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [*node.decorator_list, *_defaults(node.args), *node.body]
    if isinstance(node, ast.Lambda):
        return [*_defaults(node.args), node.body]
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.body]
    if isinstance(node, ast.AnnAssign):
        return [node.value] if node.value is not None else []
    if isinstance(node, ast.MatchClass):  # ``case Block(...)``: an isinstance test
        return [*node.patterns, *node.kwd_patterns]
    if isinstance(node, ast.ExceptHandler):
        return list(node.body)
    if isinstance(node, ast.Raise):  # ``raise Error``: an exception, not a layer
        return [part for part in (node.exc, node.cause) if part is not None and dotted(part) is None]
    if isinstance(node, (ast.arg, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)):
        return []
    return list(ast.iter_child_nodes(node))
