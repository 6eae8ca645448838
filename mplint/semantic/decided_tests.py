"""Branches that no run of the program takes: an ``if`` test decided by what every
caller passes.

``SequencePool(mode="mean")`` built at each construction the project makes, with
``self.mode = mode`` in ``__init__``, never runs the arm of ``if self.mode == "max":``.
A test is decided only where all its values are known: a parameter of the function
(bound nowhere else in it) whose every call mplint sees (the file's calls, and those of
other modules the program model hands; not a library's public function, which its users
call with anything), or an attribute every assignment of which stores such a parameter
or a literal (an assignment in an arm no run takes stores nothing). A layer class of
another module is judged per route: the constructions that reach it hand their literal
arguments to its ``__init__`` there (``tensor_imports``). Anything else leaves the arm
possible: unknown stays unknown.
"""

from __future__ import annotations

import operator
from typing import Callable, Dict, Optional, Set, Tuple, Type

import libcst as cst

from mplint.semantic.scopes import Binding, Location, attributes_of, subclasses_in_file
from mplint.semantic.values import Evaluator, Values

_COMPARE: Dict[Type[cst.BaseCompOp], Callable[[object, object], bool]] = {
    cst.Equal: operator.eq,
    cst.NotEqual: operator.ne,
    cst.Is: operator.is_,
    cst.IsNot: operator.is_not,
}

#: the attributes whose assignments are being judged now (class scope id, name): an
#: assignment guarded by a test of the same attribute is a cycle, and stays unknown
_ASKING: Set[Tuple[int, str]] = set()


def never_runs(loc: Location, values: Evaluator) -> bool:
    """Some ``if`` arm around ``loc`` needs its test the way no run gives it."""
    for _, arm, test in loc.branches:
        truth = decided(test, loc, values)
        if truth is not None and truth != (arm == "body"):
            return True
    return False


def decided(test: cst.BaseExpression, loc: Location, values: Evaluator) -> Optional[bool]:
    """The truth every run gives ``test`` at ``loc``; None when runs may differ or it
    cannot be read."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = decided(test.expression, loc, values)
        return None if inner is None else not inner
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        left = _operand(test.left, loc, values)
        if left is None:
            return None
        if isinstance(target.operator, (cst.In, cst.NotIn)):
            listed = _literals(target.comparator, values)
            if listed is None:
                return None
            truths = {value in listed for value in left}
            if isinstance(target.operator, cst.NotIn):
                truths = {not truth for truth in truths}
        else:
            compare = _COMPARE.get(type(target.operator))
            right = _operand(target.comparator, loc, values)
            if compare is None or right is None:
                return None
            truths = {bool(compare(a, b)) for a in left for b in right}
        return truths.pop() if len(truths) == 1 else None
    if isinstance(test, (cst.Name, cst.Attribute)):
        found = _operand(test, loc, values)
        truths = {bool(value) for value in found} if found is not None else set()
        return truths.pop() if len(truths) == 1 else None
    return None


def _operand(expr: cst.BaseExpression, loc: Location, values: Evaluator) -> Optional[Values]:
    """The values of a literal, of a parameter every call of which is seen, or of
    ``self.<attr>`` whose every assignment stores one of those."""
    if isinstance(expr, (cst.SimpleString, cst.Integer, cst.Float)) \
            or (isinstance(expr, cst.Name) and expr.value in ("True", "False", "None")):
        return values.values(expr, loc)
    if isinstance(expr, cst.Name):
        binding = loc.lookup(expr.value)
        return values.values(expr, loc) if binding is not None and _known_parameter(binding, values) else None
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return _attribute(expr, loc, values)
    return None


def _attribute(expr: cst.Attribute, loc: Location, values: Evaluator) -> Optional[Values]:
    """``self.<attr>``: what every assignment that runs stores. An assignment in an arm
    no construction takes (``self.norm = norm_layer(...)`` under ``if norm_layer is not
    None:``, every construction leaving ``norm_layer`` None) stores nothing; the others
    must each store a literal or a known parameter."""
    cls = loc.scope.enclosing_class()
    stored = attributes_of(cls, expr.attr.value) if cls is not None else []
    key = (id(cls), expr.attr.value)
    if not stored or key in _ASKING:
        return None  # (an attribute whose assignments are guarded by itself: unknown)
    _ASKING.add(key)
    try:
        out: Set[object] = set()
        for binding in stored:
            value = binding.value
            if binding.kind != "assign" or value is None or binding.scope is None:
                return None
            at = binding.location()
            if at.branches and never_runs(at, values):
                continue
            if isinstance(value, cst.Name) and value.value not in ("True", "False", "None"):
                source = at.lookup(value.value)
                if source is None or not _known_parameter(source, values):
                    return None
            elif not isinstance(value, (cst.SimpleString, cst.Integer, cst.Float, cst.Name)):
                return None
            found = values.values(value, at)
            if found is None:
                return None
            out |= found
        return frozenset(out) if out else None
    finally:
        _ASKING.discard(key)


def _known_parameter(binding: Binding, values: Evaluator) -> bool:
    """A parameter bound nowhere else in its function, whose every call is seen (not a
    constructor's that a subclass may call through ``super().__init__(...)``)."""
    scope = binding.scope
    if binding.kind != "param" or scope is None or len(scope.bindings.get(binding.name, ())) != 1:
        return False
    if isinstance(scope.node, cst.FunctionDef) and scope.node.name.value == "__init__" \
            and scope.parent is not None and scope.parent.kind == "class" and subclasses_in_file(scope.parent):
        return False
    return not values.callers_unread(binding)


def _literals(expr: cst.BaseExpression, values: Evaluator) -> Optional[Set[object]]:
    """The items of a literal tuple, list or set of constants."""
    if not isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return None
    out: Set[object] = set()
    for element in expr.elements:
        found = values.values(element.value, None) if isinstance(element, cst.Element) else None
        if found is None:
            return None
        out |= found
    return out
