"""Line and column of the nodes a file's findings point at, and only of those.

libcst's PositionProvider regenerates the whole module to count positions, which
costs about as much as parsing it again. A finding needs the positions inside one
top-level statement, so only the statements that hold a reported (or edited) node
are regenerated, and Python's own ``ast`` (a tenth of a libcst parse) says on which
line each top-level statement starts.
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

from mplint.core.python_syntax import tree_or_none
from mplint.core.walker import child_nodes


def positions_of(module: cst.Module, text: str, nodes: Iterable[cst.CSTNode]) -> Dict[cst.CSTNode, CodeRange]:
    """Positions of every node in the innermost statements that hold ``nodes``."""
    tree = tree_or_none(text)
    starts = _statement_starts(module.body, tree.body) if tree is not None else None
    if starts is None:  # ast disagrees (newer syntax, odd input): count everything
        return dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider))
    wanted = {id(node) for node in nodes}
    out: Dict[cst.CSTNode, CodeRange] = {}
    holding = [(stmt, start) for stmt, start in zip(module.body, starts) if wanted and _holds(stmt, wanted)]
    # All of them in one module, positioned at once: libcst's provider costs about
    # as much to set up as to run on one line, so one module per statement made
    # the positions of a file's findings cost milliseconds each.
    for at in range(0, len(holding), _BATCH):
        _positions_in(holding[at:at + _BATCH], module, wanted, out)
    return out


#: top-level statements positioned together (bounded: libcst's positions recurse
#: through a module's body one statement after another)
_BATCH = 200


def _positions_in(statements: Sequence[Tuple[cst.BaseStatement, Tuple[int, ast.stmt]]], module: cst.Module,
                  wanted: Set[int], out: Dict[cst.CSTNode, CodeRange]) -> None:
    """Positions in the innermost statements of ``statements`` that hold wanted nodes
    (a line of a method of a large class, say). They are regenerated together, inside
    copies of their enclosing statements that keep nothing else, and each is shifted
    to the line ``ast`` gives it."""
    targets: List[Tuple[cst.BaseStatement, int]] = []
    rebuilt: Set[int] = set()
    pruned = []
    for stmt, start in statements:
        kept = _prune(stmt, start, _Holding(stmt, wanted), wanted, targets, rebuilt)
        assert isinstance(kept, (cst.SimpleStatementLine, cst.BaseCompoundStatement))  # every statement is
        pruned.append(kept)
    alone = cst.Module(body=pruned, header=[], footer=[], default_indent=module.default_indent,
                       default_newline=module.default_newline)
    found = MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider)
    spans: List[Tuple[CodeRange, int]] = []  # each target's span here, and its shift
    for target, line in targets:
        span = found[target]
        if isinstance(target, (cst.FunctionDef, cst.ClassDef)) and target.decorators:
            span = CodeRange(found[target.decorators[0]].start, span.end)
        spans.append((span, line - span.start.line))
    spans.sort(key=lambda item: (item[0].start.line, item[0].start.column))
    starts = [(span.start.line, span.start.column) for span, _ in spans]
    for node_, rng in found.items():
        if node_ is alone or id(node_) in rebuilt:
            continue
        at = bisect_right(starts, (rng.start.line, rng.start.column)) - 1
        if at < 0 or not _inside(rng, spans[at][0]):
            continue  # a copied header's part, outside every target
        shift = spans[at][1]
        out[node_] = CodeRange(CodePosition(rng.start.line + shift, rng.start.column),
                               CodePosition(rng.end.line + shift, rng.end.column))


class _Holding:
    """Which statements under a top-level one hold wanted nodes, and which hold one
    outside their block (a decorator, a default value, an ``if`` test or ``else``), in
    one pass over it."""

    def __init__(self, root: cst.BaseStatement, wanted: Set[int]) -> None:
        self.statements: Set[int] = set()
        self.in_header: Set[int] = set()
        chain: List[List] = []  # [statement, inside its own block yet] from the top down
        stack: List[Tuple[cst.CSTNode, bool]] = [(root, False)]
        while stack:
            node, leaving = stack.pop()
            if leaving:
                if isinstance(node, cst.BaseStatement):
                    chain.pop()
                elif chain and node is getattr(chain[-1][0], "body", None):
                    chain[-1][1] = False
                continue
            if id(node) in wanted:
                for above, inside in chain:
                    self.statements.add(id(above))
                    if not inside:
                        self.in_header.add(id(above))
                self.statements.add(id(node))
            if isinstance(node, cst.BaseStatement):
                chain.append([node, False])
            elif chain and node is getattr(chain[-1][0], "body", None):
                chain[-1][1] = True
            stack.append((node, True))
            stack.extend((child, False) for child in child_nodes(node))


def _prune(stmt: cst.BaseStatement, start: Tuple[int, ast.stmt], holding: _Holding, wanted: Set[int],
           targets: List[Tuple[cst.BaseStatement, int]], rebuilt: Set[int]) -> cst.BaseStatement:
    """``stmt`` keeping, in its block, only the statements that hold wanted nodes,
    recursively; the statements kept whole are the targets."""
    line, node = start
    if id(stmt) not in wanted and id(stmt) not in holding.in_header and isinstance(stmt, _DESCEND) \
            and isinstance(stmt.body, cst.IndentedBlock):
        inner_starts = _statement_starts(stmt.body.body, getattr(node, "body", []))
        if inner_starts is not None:
            kept = [_prune(child, at, holding, wanted, targets, rebuilt)
                    for child, at in zip(stmt.body.body, inner_starts) if id(child) in holding.statements]
            block = stmt.body.with_changes(body=kept)
            copy = stmt.with_changes(body=block)
            rebuilt.update((id(block), id(copy)))
            return copy
    targets.append((stmt, line))
    return stmt


_DESCEND = (cst.ClassDef, cst.FunctionDef, cst.If, cst.For, cst.While, cst.With, cst.Try)


def _inside(rng: CodeRange, outer: CodeRange) -> bool:
    return (rng.start.line, rng.start.column) >= (outer.start.line, outer.start.column) and \
        (rng.end.line, rng.end.column) <= (outer.end.line, outer.end.column)


def _statement_starts(body: Sequence[cst.BaseStatement],
                      ast_body: Sequence[ast.stmt]) -> Optional[List[Tuple[int, ast.stmt]]]:
    """For each libcst statement, the line of its first token (decorators included)
    and the matching ``ast`` statement; None when the two trees disagree."""
    starts: List[Tuple[int, ast.stmt]] = []
    i = 0
    for stmt in body:
        count = len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
        if i + count > len(ast_body):
            return None
        first = ast_body[i]
        line = first.lineno
        for decorator in getattr(first, "decorator_list", ()):
            line = min(line, decorator.lineno)
        starts.append((line, first))
        i += count
    return starts if i == len(ast_body) else None


def _holds(root: cst.CSTNode, wanted: Set[int]) -> bool:
    """Whether any wanted node lies in ``root``'s subtree (a read-only search)."""
    return bool(_held(root, wanted, first_only=True))


def _held(root: cst.CSTNode, wanted: Set[int], first_only: bool = False) -> Set[int]:
    """The wanted nodes (ids) in ``root``'s subtree."""
    found: Set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in wanted:
            found.add(id(node))
            if first_only or len(found) == len(wanted):
                return found
        stack.extend(child_nodes(node))
    return found
