"""Every read or write of a variable name in a file, with where it happens.

Rules ask "is this model still used after the policy call?" or "is every use of this
constant an aligned size?". One analysis records the names once, for all of them:
Name nodes that denote variables, not attribute names, keywords, parameters or the
names a ``def``/``class``/``import`` declares.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from mplint.core.prefilter import POLICY_CALL_WORDS
from mplint.rule.check import Analysis, Context
from mplint.semantic.scopes import Branches, Location, Scope


class Reference:
    """One occurrence of a variable name (a plain slotted class: there is one per
    name in the file, so it is built cheaply and its Location only on demand)."""

    __slots__ = ("node", "attr", "functions", "store", "called", "_where")

    def __init__(self, node: cst.Name, where: Tuple[Scope, int, Branches], attr: Optional[str],
                 functions: Tuple[cst.FunctionDef, ...], store: bool, called: bool = False) -> None:
        self.node = node
        #: ``x.attr``: the attribute read on the name, if any
        self.attr = attr
        #: the functions the reference sits in, outermost first
        self.functions = functions
        #: the name is (re)bound or deleted here, not read
        self.store = store
        #: the name is called right here (``name(...)``)
        self.called = called
        self._where = where

    @property
    def location(self) -> Location:
        return Location(*self._where)


#: the policy-call words as text (the prescan's are bytes)
_POLICY_WORDS = tuple(word.decode() for word in POLICY_CALL_WORDS)


class References(Analysis):
    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.by_name: Dict[str, List[Reference]] = {}
        self._skip: Set[int] = set()
        self._stores: Set[int] = set()
        self._attr_of: Dict[int, str] = {}
        #: ids of the Names that are called (``name(...)``)
        self._called: Set[int] = set()
        #: the functions being walked, outermost first (one tuple shared by every
        #: reference made inside them)
        self._functions: Tuple[cst.FunctionDef, ...] = ()
        # The rules that read references act only under a mixed policy: a file that
        # sets none, with none assumed or set elsewhere in its program, needs none.
        facts = ctx.facts
        self._active = bool(
            facts.assumed_policy or facts.project_policies
            or any(word in ctx.text for word in _POLICY_WORDS))

    def get(self, name: str) -> List[Reference]:
        return self.by_name.get(name, [])

    def is_variable(self, node: cst.Name) -> bool:
        """False for a keyword, a parameter, an attribute name or a declared name (def,
        class, import). Known once the walk has passed the node's parent."""
        return id(node) not in self._skip

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._skip.add(id(node.attr))
        self._attr_of[id(node.value)] = node.attr.value

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self._called.add(id(node.func))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._skip.add(id(node.keyword))

    def visit_Param(self, node: cst.Param) -> None:
        self._skip.add(id(node.name))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._skip.add(id(node.name))
        self._functions += (node,)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions = self._functions[:-1]

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._skip.add(id(node.name))

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if isinstance(node.name, cst.Name):
            self._skip.add(id(node.name))
        if node.asname is not None and isinstance(node.asname.name, cst.Name):
            self._skip.add(id(node.asname.name))

    # -- names that are bound, not read ---------------------------------------------
    def _store(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self._stores.add(id(target))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._store(element.value.value if isinstance(element.value, cst.StarredElement)
                            else element.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._store(target.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._store(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._store(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._store(node.asname.name)

    def visit_Del(self, node: cst.Del) -> None:
        self._store(node.target)

    def visit_Name(self, node: cst.Name) -> None:
        key = id(node)
        if not self._active or key in self._skip:
            return
        tracker = self.ctx.scopes
        self.by_name.setdefault(node.value, []).append(Reference(
            node, (tracker.current, tracker.order, tracker.branches()), self._attr_of.get(key),
            self._functions, key in self._stores, key in self._called))
