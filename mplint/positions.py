"""Line and column of the nodes a file's findings point at, and only of those.

libcst's PositionProvider regenerates the whole module to count positions, which
costs about as much as parsing it again. A finding needs the positions inside one
top-level statement, so only the statements that hold a reported (or edited) node
are regenerated, and Python's own ``ast`` (a tenth of a libcst parse) says on which
line each top-level statement starts.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

from mplint.walker import _child_fields


def positions_of(module: cst.Module, text: str, nodes: Iterable[cst.CSTNode]) -> Dict[cst.CSTNode, CodeRange]:
    """Positions of every node in the innermost statements that hold ``nodes``."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    starts = _statement_starts(module.body, tree.body) if tree is not None else None
    if starts is None:  # ast disagrees (newer syntax, odd input): count everything
        return dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider))
    wanted = {id(node) for node in nodes}
    out: Dict[cst.CSTNode, CodeRange] = {}
    for stmt, start in zip(module.body, starts):
        if wanted and _holds(stmt, wanted):
            _positions_in(stmt, start, module, wanted, out)
    return out


def _positions_in(stmt: cst.BaseStatement, start: Tuple[int, ast.stmt], module: cst.Module,
                  wanted: Set[int], out: Dict[cst.CSTNode, CodeRange]) -> None:
    """Regenerate only the path from a top-level statement down to the innermost
    statement holding a wanted node (a method of a large class, say), shifted to the
    line ``ast`` gives that innermost statement."""
    path: List[cst.BaseStatement] = [stmt]
    line, node = start
    while id(path[-1]) not in wanted and isinstance(path[-1], _DESCEND) \
            and isinstance(path[-1].body, cst.IndentedBlock):
        inner = path[-1].body.body
        inner_starts = _statement_starts(inner, getattr(node, "body", []))
        if inner_starts is None:
            break
        holding = [(s, at) for s, at in zip(inner, inner_starts) if _holds(s, wanted)]
        if len(holding) != 1 or _held(holding[0][0], wanted) != _held(path[-1], wanted):
            break  # several statements, or the header too (a default value): this one whole
        path.append(holding[0][0])
        line, node = holding[0][1]
    target = path[-1]
    rebuilt: Set[int] = set()
    for parent in reversed(path[:-1]):  # rebuild the ancestors around the target only
        block = parent.body.with_changes(body=[target])
        target = parent.with_changes(body=block)
        rebuilt.update((id(block), id(target)))
    alone = cst.Module(body=[target], header=[], footer=[], default_indent=module.default_indent,
                       default_newline=module.default_newline)
    found = MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider)
    innermost = path[-1]
    span = found[innermost]
    if isinstance(innermost, (cst.FunctionDef, cst.ClassDef)) and innermost.decorators:
        span = CodeRange(found[innermost.decorators[0]].start, span.end)
    shift = line - span.start.line
    for node_, rng in found.items():
        if node_ is alone or id(node_) in rebuilt or not _inside(rng, span):
            continue
        out[node_] = CodeRange(CodePosition(rng.start.line + shift, rng.start.column),
                               CodePosition(rng.end.line + shift, rng.end.column))


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
        for name in _child_fields(type(node)):
            value = getattr(node, name)
            if isinstance(value, cst.CSTNode):
                stack.append(value)
            elif isinstance(value, (list, tuple)):
                stack.extend(v for v in value if isinstance(v, cst.CSTNode))
    return found
