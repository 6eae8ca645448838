"""Names a ``from tensorflow.keras.layers import *`` binds.

A star import binds every public name of the module, which mplint cannot list
without importing TensorFlow. But a capitalized name the module uses and never binds
itself (no ``def``, ``class``, assignment, parameter or other import of that name
anywhere in the file) and that is not a builtin can only come from the star import:
anything else is a ``NameError``. So where the file's star imports all name one
TensorFlow or Keras module, such a name (``Dense``, ``LayerNormalization``) is that
module's. A file with a star import of anything else (its own package, numpy) gets
nothing: the name may come from there.
"""

from __future__ import annotations

import builtins
from typing import Dict, Iterable, Set

import libcst as cst

_BUILTINS = frozenset(dir(builtins))


def star_bound(module: cst.Module, star_modules: Iterable[str]) -> Dict[str, str]:
    """``{local: qualified}`` for the names only the star import can bind; empty unless
    every star import of the file names the same TensorFlow or Keras module."""
    modules = set(star_modules)
    if len(modules) != 1:
        return {}
    source = next(iter(modules))
    if source.split(".", 1)[0] not in ("tensorflow", "keras", "tf_keras"):
        return {}
    names = _Names()
    module.visit(names)
    free = names.used - names.bound - _BUILTINS
    return {name: f"{source}.{name}" for name in sorted(free) if name[:1].isupper()}


class _Names(cst.CSTVisitor):
    """Every name the file reads, and every name it binds in any scope (a name bound
    anywhere counts as its own, whichever scope reads it: the conservative answer)."""

    def __init__(self) -> None:
        self.used: Set[str] = set()
        self.bound: Set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.used.add(node.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.bound.add(node.name.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.bound.add(node.name.value)

    def visit_Param(self, node: cst.Param) -> None:
        self.bound.add(node.name.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._targets(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._targets(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._targets(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._targets(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._targets(node.name)

    def visit_Global(self, node: cst.Global) -> None:
        self.bound.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.bound.update(item.name.value for item in node.names)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None:
            name: cst.BaseExpression = node.name
            while isinstance(name, cst.Attribute):
                name = name.value
            if isinstance(name, cst.Name):
                self.bound.add(name.value)

    def _targets(self, node: cst.BaseExpression) -> None:
        if isinstance(node, cst.Name):
            self.bound.add(node.value)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                self._targets(element.value)
        elif isinstance(node, cst.StarredElement):
            self._targets(node.value)
