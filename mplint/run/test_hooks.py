"""A test file's setup hooks and which of its tests train, read with CPython's ``ast``
for the program model (no libcst).

A policy set in ``setUp``/``setUpClass`` runs before each test of its class; one set in
``setup_module``/``setUpModule``/``setup_function`` or an autouse pytest fixture before
each test of the module, and one in another fixture before the tests that request it.
Each such test runs under the policy as if it had set it in its own body. A test that
trains (``fit``, ``train_on_batch``, an optimizer update) is a training program for the
code it calls; one that only builds a model, checks shapes and dtypes, or checks that a
gradient is finite is not.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, Iterator, List, Optional, Tuple

from mplint.semantic.test_modules import UPDATE_CALL

#: a line as ``ast`` counts them (``\r\n``, ``\r`` or ``\n`` ends one; not a form feed),
#: with its end: the lines ``ast.get_source_segment`` splits a source into
_LINE = re.compile(r"[^\r\n]*(?:\r\n|[\r\n])|[^\r\n]+\Z")

#: hooks a test class runs before its tests
_CLASS_HOOKS = frozenset({"setUp", "setUpClass", "asyncSetUp", "setup_method", "setup_class", "setup"})
#: hooks a test module runs before its tests
_MODULE_HOOKS = frozenset({"setup_module", "setUpModule", "setup_function", "setup"})


class TestFile:
    """The hooks and tests of one test file."""

    def __init__(self, source: bytes) -> None:
        try:
            self._tree: Optional[ast.Module] = ast.parse(source)
        except (SyntaxError, ValueError):
            self._tree = None
        self._source = source.decode("utf-8", "replace")
        #: the source's lines, split once as ``ast.get_source_segment`` splits them (it
        #: splits the whole file again on every call: a quadratic cost in a large test file)
        self._lines: Optional[List[str]] = None
        self._functions: Dict[str, ast.AST] = dict(self._defs())

    def _defs(self) -> Iterator[Tuple[str, ast.AST]]:
        for node in self._tree.body if self._tree is not None else []:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield node.name, node
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        yield f"{node.name}.{item.name}", item

    def tests_after(self, hook: str) -> List[str]:
        """The tests that run after ``hook`` (a function's name as the program model
        writes it, ``Class.method`` for a method); [] when it is no hook."""
        node = self._functions.get(hook)
        if node is None:
            return []
        owner, _, name = hook.rpartition(".")
        tests = [n for n in self._functions if n.rpartition(".")[2].startswith("test")]
        if owner:
            return [t for t in tests if t.startswith(owner + ".")] if name in _CLASS_HOOKS else []
        if name in _MODULE_HOOKS:
            return tests
        fixture = _fixture(node)
        if fixture is None:
            return []
        autouse, requested = fixture
        if autouse:
            return tests
        return [t for t in tests if requested in _params(self._functions[t])]

    def trains(self, function: str, depth: int = 0) -> bool:
        """Whether the function, or a function of this file it calls (two calls deep),
        updates a model's weights (``fit``, an optimizer's ``apply_gradients``)."""
        node = self._functions.get(function)
        code = self._segment(node) if node is not None else None
        if node is None or code is None:
            return False
        if UPDATE_CALL.search(code):
            return True
        if depth >= 2:
            return False
        owner = function.rpartition(".")[0]
        for call in ast.walk(node):
            if isinstance(call, ast.Call):
                name = _called_name(call.func, owner)
                if name is not None and name != function and self.trains(name, depth + 1):
                    return True
        return False


    def _segment(self, node: ast.AST) -> Optional[str]:
        """``ast.get_source_segment(source, node)``, from the lines split once."""
        end_lineno = getattr(node, "end_lineno", None)
        end_col = getattr(node, "end_col_offset", None)
        if end_lineno is None or end_col is None:
            return None
        lineno, col = getattr(node, "lineno") - 1, getattr(node, "col_offset")
        end_lineno -= 1
        if self._lines is None:
            self._lines = _LINE.findall(self._source)
        lines = self._lines
        if end_lineno == lineno:
            return lines[lineno].encode()[col:end_col].decode()
        first = lines[lineno].encode()[col:].decode()
        last = lines[end_lineno].encode()[:end_col].decode()
        return "".join([first, *lines[lineno + 1:end_lineno], last])


def _called_name(func: ast.expr, owner: str) -> Optional[str]:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
            and func.value.id in ("self", "cls") and owner:
        return f"{owner}.{func.attr}"
    return None


def _fixture(node: ast.AST) -> Optional[Tuple[bool, str]]:
    """``(autouse, the name tests request it by)`` for a pytest fixture, else None."""
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    for decorator in node.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        target = call.func if call is not None else decorator
        written = ast.unparse(target)
        if written not in ("pytest.fixture", "fixture"):
            continue
        autouse, name = False, node.name
        for keyword in call.keywords if call is not None else []:
            if keyword.arg == "autouse" and isinstance(keyword.value, ast.Constant):
                autouse = keyword.value.value is True
            elif keyword.arg == "name" and isinstance(keyword.value, ast.Constant) \
                    and isinstance(keyword.value.value, str):
                name = keyword.value.value
        return autouse, name
    return None


def _params(node: ast.AST) -> List[str]:
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    args = node.args
    return [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
