"""Deleting a statement as a reviewer would: no ``pass`` left in an ``if`` whose body
emptied, no ``else:`` with nothing in it, and no comment that described the deleted
code left behind to lie.

A comment written right above a statement (no blank line between) or after it on its
line describes that statement and goes with it; a comment separated from it by a
blank line heads the code that follows and stays, on the next statement. When what
remains cannot be tidied for certain (a loop or function body that would be empty, an
``if`` with an ``else`` whose body would be empty, a test that may have side effects),
no edit is offered at all.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence

import libcst as cst

from mplint.rule.check import Replacement

#: nodes that hold statements (the only ones the search descends into)
_HOLDERS = (cst.Module, cst.BaseCompoundStatement, cst.BaseSuite, cst.Else, cst.ExceptHandler,
            cst.ExceptStarHandler, cst.Finally, cst.MatchCase)
#: fields of those nodes that lead to statements
_FIELDS = ("body", "orelse", "handlers", "finalbody", "cases")


def statement_path(module: cst.Module, statement: cst.BaseStatement) -> Optional[List[cst.CSTNode]]:
    """The nodes from ``module`` down to ``statement`` (both included), by identity."""
    path: List[cst.CSTNode] = [module]

    def search(node: cst.CSTNode) -> bool:
        for name in _FIELDS:
            value = getattr(node, name, None)
            children = value if isinstance(value, (list, tuple)) else [value]
            for child in children:
                if child is statement:
                    path.append(child)
                    return True
                if isinstance(child, _HOLDERS):
                    path.append(child)
                    if search(child):
                        return True
                    path.pop()
        return False

    return path if search(module) else None


def remove_statement(module: cst.Module, statement: cst.BaseStatement) -> Optional[Dict[cst.CSTNode, Replacement]]:
    """:func:`remove_statements` of one statement."""
    return remove_statements(module, [statement])


def remove_statements(module: cst.Module, statements: Sequence[cst.BaseStatement]
                      ) -> Optional[Dict[cst.CSTNode, Replacement]]:
    """Replacements (for a :class:`~mplint.rule.check.Fix`) that delete ``statements``
    and the ``if``/``else`` they alone filled; None when that cannot be done cleanly."""
    edits = _Removal(module, statements)
    for statement in statements:
        path = statement_path(module, statement)
        if path is None or not edits.remove(path):
            return None
    return edits.replacements()


class _Removal:
    """Deletions in one file, merged: two deleted neighbours hand the comments they keep
    to the same following statement."""

    def __init__(self, module: cst.Module, statements: Sequence[cst.BaseStatement]) -> None:
        self.gone = {id(s) for s in statements}
        self.out: Dict[cst.CSTNode, Replacement] = {}
        #: statement (or block, for its footer) -> lines to put above it (or in the footer)
        self.kept: Dict[int, tuple] = {}

    def remove(self, path: List[cst.CSTNode]) -> bool:
        statement, container = path[-1], path[-2]
        body = getattr(container, "body", ())
        if not isinstance(container, (cst.Module, cst.IndentedBlock)) or not isinstance(body, (list, tuple)):
            return False  # ``if x: a; b`` on one line: leave it to a human
        rest = [s for s in body if id(s) not in self.gone]
        if rest:
            self.out[statement] = cst.RemovalSentinel.REMOVE
            kept = _kept_lines(statement)
            index = next(i for i, s in enumerate(body) if s is statement)
            following = next((s for s in body[index + 1:] if id(s) not in self.gone), None)
            target = following if following is not None else container
            if any(line.comment is not None for line in kept) or (following is not None and kept):
                entry = self.kept.setdefault(id(target), (target, []))
                entry[1].extend(kept)
            return True
        # The block empties: the statement that owns it goes too, when that is clean.
        owner, above = path[-3], path[-4] if len(path) > 3 else None
        if isinstance(owner, cst.Else) and isinstance(above, (cst.If, cst.For, cst.While, cst.Try)):
            self.out[above] = above.with_changes(orelse=None)  # ``else:`` with nothing left in it
            return True
        if isinstance(owner, cst.If) and owner.orelse is None and _pure(owner.test):
            if isinstance(above, cst.If) and above.orelse is owner:  # a last ``elif``
                self.out[above] = above.with_changes(orelse=None)
                return True
            self.gone.add(id(owner))
            return self.remove(path[:-2])
        return False

    def replacements(self) -> Optional[Dict[cst.CSTNode, Replacement]]:
        out = dict(self.out)
        for target, lines in self.kept.values():
            if target in out:
                return None  # a block that is replaced whole: its lines went with it
            if isinstance(target, (cst.Module, cst.IndentedBlock)):
                body = [s for s in target.body if id(s) not in self.gone]
                out[target] = target.with_changes(body=body, footer=[*lines, *target.footer])
                for statement in target.body:
                    out.pop(statement, None)
            else:
                out[target] = target.with_changes(leading_lines=_joined(lines, target.leading_lines))
        return out


def _kept_lines(statement: cst.CSTNode) -> List[cst.EmptyLine]:
    """The lines above ``statement`` that do not describe it: everything before the
    comments written right above it (its trailing comment goes with it too)."""
    lines = list(getattr(statement, "leading_lines", ()))
    end = len(lines)
    while end and lines[end - 1].comment is not None:
        end -= 1
    return lines[:end]


def _joined(kept: List[cst.EmptyLine], following: Sequence[cst.EmptyLine]) -> List[cst.EmptyLine]:
    """``kept`` then ``following``, with no more blank lines in a row than either had."""
    if following and following[0].comment is None:
        while kept and kept[-1].comment is None:
            kept = kept[:-1]
    return [*kept, *following]


def _pure(test: cst.BaseExpression) -> bool:
    """A test that only reads names, attributes, subscripts and constants: dropping the
    ``if`` with it changes nothing but the (now empty) branch."""
    if isinstance(test, (cst.Name, cst.BaseNumber, cst.SimpleString)):
        return True
    if isinstance(test, cst.Attribute):
        return _pure(test.value)
    if isinstance(test, cst.Subscript):
        return _pure(test.value) and all(
            isinstance(e.slice, cst.Index) and _pure(e.slice.value) for e in test.slice)
    if isinstance(test, cst.UnaryOperation):
        return _pure(test.expression)
    if isinstance(test, cst.BooleanOperation):
        return _pure(test.left) and _pure(test.right)
    if isinstance(test, cst.Comparison):
        return _pure(test.left) and all(_pure(c.comparator) for c in test.comparisons)
    return False
