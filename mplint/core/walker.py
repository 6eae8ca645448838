"""One batched traversal of a libcst tree for all checks at once.

libcst's own ``CSTNode.visit`` rebuilds every node's children on the way back up,
which costs more than the parse itself. Checks only read the tree, so this walker
reads the dataclass fields directly, skips whitespace and punctuation, and calls
``visit_<NodeType>`` / ``leave_<NodeType>`` on every check that defines them, in
source order. Leave handlers run in reverse order, so the scope tracker (first in
the list) is still inside a scope while the checks leave it.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import libcst as cst

# Fields that only hold whitespace, comments or punctuation: never walked.
_SKIP_FIELDS = frozenset(
    {
        "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators",
        "header", "footer", "equal", "colon", "dot", "star", "operator", "arrow",
        "asynchronous", "lbracket", "rbracket", "lbrace", "rbrace", "newline",
        "trailing_whitespace", "first_line", "empty_lines", "indent", "whitespace",
        "relative", "default_comma", "default_indent", "default_newline",
        "star_arg", "walrus", "await_", "from_", "keyword_or", "prefix",
        "quote", "string", "encoding", "has_trailing_newline",
    }
)

_FIELDS_BY_TYPE: Dict[type, Tuple[str, ...]] = {}
#: field types that never hold a node (``Name.value``, ``Integer.value``...)
_SCALARS = (str, int, float, bool)


def _child_fields(node_type: type) -> Tuple[str, ...]:
    fields = _FIELDS_BY_TYPE.get(node_type)
    if fields is None:
        fields = tuple(
            f.name
            for f in dataclasses.fields(node_type)
            if f.name not in _SKIP_FIELDS and not f.name.startswith("whitespace")
            and f.type not in _SCALARS
        )
        _FIELDS_BY_TYPE[node_type] = fields
    return fields


def child_nodes(node: cst.CSTNode) -> List[cst.CSTNode]:
    """The children of ``node`` that can hold code, read from its fields (no
    whitespace or punctuation): far cheaper than libcst's ``children``, which runs a
    visitor over the node to collect them."""
    out: List[cst.CSTNode] = []
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, (list, tuple)):
            out.extend(item for item in value if isinstance(item, cst.CSTNode))
        elif isinstance(value, cst.CSTNode):
            out.append(value)
    return out


_IS_NODE: Dict[type, bool] = {}


def _is_node(value_type: type) -> bool:
    """``issubclass(t, CSTNode)``, memoised: CSTNode is an ABC, slow to test each time."""
    known = _IS_NODE.get(value_type)
    if known is None:
        known = _IS_NODE[value_type] = issubclass(value_type, cst.CSTNode)
    return known


Handler = Callable[[cst.CSTNode], None]
ErrorHook = Callable[[object, BaseException], None]


_HANDLER_NAMES: Dict[type, List[Tuple[str, str, bool]]] = {}


def _handler_names(cls: type) -> List[Tuple[str, str, bool]]:
    """``(attribute, node type, is_visit)`` of a visitor class, found once per class."""
    found = _HANDLER_NAMES.get(cls)
    if found is None:
        found = [(attr, attr[6:], attr.startswith("visit_")) for attr in dir(cls)
                 if attr.startswith(("visit_", "leave_"))]
        _HANDLER_NAMES[cls] = found
    return found


class Walker:
    """Dispatches node events to the handlers of several visitors in one pass."""

    def __init__(self, visitors: Sequence[object], on_error: ErrorHook) -> None:
        self._visit: Dict[str, List[Tuple[object, Handler]]] = {}
        self._leave: Dict[str, List[Tuple[object, Handler]]] = {}
        self._on_error = on_error
        self._disabled: set = set()
        for visitor in visitors:
            for attr, node_type, is_visit in _handler_names(type(visitor)):
                table = self._visit if is_visit else self._leave
                table.setdefault(node_type, []).append((visitor, getattr(visitor, attr)))
        for handlers in self._leave.values():
            handlers.reverse()
        #: ancestors of the node being visited, outermost first
        self.stack: List[cst.CSTNode] = []
        self._plans: Dict[type, Tuple[Optional[list], Optional[list], Tuple[str, ...], bool]] = {}

    def _call(self, handlers: List[Tuple[object, Handler]], node: cst.CSTNode) -> None:
        for owner, handler in handlers:
            if owner in self._disabled:  # a leave list taken before its owner failed
                continue
            try:
                handler(node)
            except RecursionError:
                raise
            except Exception as exc:  # one broken check must not stop the others
                self._disable(owner, exc)

    def _disable(self, owner: object, exc: BaseException) -> None:
        """Drop every handler of a visitor that raised; the others go on."""
        self._disabled.add(owner)
        for table in (self._visit, self._leave):
            for name, handlers in table.items():
                table[name] = [(o, h) for o, h in handlers if o is not owner]
        self._plans.clear()
        self._on_error(owner, exc)

    def _plan(self, node_type: type) -> Tuple[Optional[list], Optional[list], Tuple[str, ...], bool]:
        """Per field value type: visit handlers, leave handlers, child fields, and
        whether walking it can do anything at all (a leaf nobody handles, a string or
        None is skipped)."""
        if not _is_node(node_type):
            plan: Tuple[Optional[list], Optional[list], Tuple[str, ...], bool] = (None, None, (), False)
        else:
            name = node_type.__name__
            visit, leave, fields = self._visit.get(name), self._leave.get(name), _child_fields(node_type)
            plan = (visit, leave, fields, bool(visit or leave or fields))
        self._plans[node_type] = plan
        return plan

    def walk(self, node: cst.CSTNode) -> None:
        plans = self._plans
        visit, leave, fields, _ = plans.get(type(node)) or self._plan(type(node))
        if visit:
            for owner, handler in visit:  # inlined _call: this runs for most nodes
                try:
                    handler(node)
                except RecursionError:
                    raise
                except Exception as exc:  # one broken check must not stop the others
                    self._disable(owner, exc)
        stack = self.stack
        stack.append(node)
        for field in fields:
            value = getattr(node, field)
            value_type = type(value)
            if value_type is list or value_type is tuple:
                for item in value:
                    if (plans.get(type(item)) or self._plan(type(item)))[3]:
                        self.walk(item)
            elif (plans.get(value_type) or self._plan(value_type))[3]:
                self.walk(value)
        stack.pop()
        if leave:
            self._call(leave, node)
