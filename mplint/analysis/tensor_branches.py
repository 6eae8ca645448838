"""Arms of ``if`` statements that test the same stable condition.

``if self._norm_first: source = x`` then, later in the same block,
``if self._norm_first: y = source + y``: the second arm runs only on the paths
where the first did, so the binding made in the first reaches the use in the
second, and a binding in the first's ``else`` does not. A test is stable when it
reads only names and attributes (``flag``, ``self._norm_first``, ``not
self.training_mode``) that the function never rebinds; anything else (a call, a
comparison with a value computed in between) is not compared.
"""

from __future__ import annotations

from typing import Callable, Dict, FrozenSet, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.tensor_sites import Path

#: an arm: (the ``if`` statement's test, as code without its ``not``, and whether the
#: arm runs when it is true)
Arm = Tuple[str, bool]


def stable_test(test: cst.BaseExpression, code: Callable[[cst.CSTNode], str]) -> Optional[Arm]:
    """The test's code and polarity when it reads only names and attributes."""
    polarity = True
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        polarity = not polarity
        test = test.expression
    node: cst.BaseExpression = test
    while isinstance(node, cst.Attribute):
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    return code(test), polarity


def rebound(function: cst.CSTNode, code: Callable[[cst.CSTNode], str]) -> FrozenSet[str]:
    """The names and attributes (as code) a function assigns anywhere in its body
    (its parameters are not counted): a test reading one of them is not stable."""
    found: Set[str] = set()

    class _Targets(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            _add(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            _add(node.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            _add(node.target)

        def visit_For(self, node: cst.For) -> None:
            _add(node.target)

    def _add(target: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                _add(element.value)
        elif isinstance(target, (cst.Name, cst.Attribute)):
            found.add(code(target))

    function.visit(_Targets())
    return frozenset(found)


def correlated(arms: Dict[int, Arm], binding_path: Path, use_path: Path,
               changed: FrozenSet[str] = frozenset()) -> Optional[bool]:
    """Whether a binding made in ``binding_path`` certainly reaches (True) or never
    reaches (False) a use in ``use_path`` because both sit in arms of two sibling
    ``if`` statements with the same stable test; None when no such pair encloses them.

    True only for a binding made directly in its arm's block (one nested deeper may
    not run); False for any binding in the arm of the other polarity. A test that
    reads a name or attribute in ``changed`` (see :func:`rebound`) is not compared."""
    for index, block in enumerate(binding_path):
        arm = arms.get(block)
        if arm is None or index >= len(use_path) or binding_path[:index] != use_path[:index]:
            continue
        other = arms.get(use_path[index])
        if other is None or use_path[index] == block or other[0] != arm[0] \
                or arm[0] in changed or arm[0].split(".", 1)[0] in changed:
            continue
        if other[1] != arm[1]:
            return False
        return True if len(binding_path) == index + 1 else None
    return None
