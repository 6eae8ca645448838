"""Line and column of the nodes a file's findings point at, and only of those.

libcst's PositionProvider regenerates the whole module to count positions, which
costs about as much as parsing it again. A finding needs the positions inside one
top-level statement, so only the statements that hold a reported (or edited) node
are regenerated, and Python's own ``ast`` (a tenth of a libcst parse) says on which
line each top-level statement starts.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterable, List, Optional, Set

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

from mplint.walker import _child_fields


def positions_of(module: cst.Module, text: str, nodes: Iterable[cst.CSTNode]) -> Dict[cst.CSTNode, CodeRange]:
    """Positions of every node in the top-level statements that hold ``nodes``."""
    starts = _statement_starts(module, text)
    if starts is None:  # ast disagrees (newer syntax, odd input): count everything
        return dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider))
    wanted = {id(node) for node in nodes}
    out: Dict[cst.CSTNode, CodeRange] = {}
    for stmt, start in zip(module.body, starts):
        if not wanted or not _holds(stmt, wanted):
            continue
        alone = cst.Module(body=[stmt], header=[], footer=[], default_indent=module.default_indent,
                           default_newline=module.default_newline)
        shift = start - 1 - len(stmt.leading_lines)
        for node, rng in MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider).items():
            if node is not alone:
                out[node] = CodeRange(CodePosition(rng.start.line + shift, rng.start.column),
                                      CodePosition(rng.end.line + shift, rng.end.column))
    return out


def _statement_starts(module: cst.Module, text: str) -> Optional[List[int]]:
    """The line of the first token of each top-level statement (decorators included)."""
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    starts: List[int] = []
    i = 0
    for stmt in module.body:
        count = len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
        if i + count > len(body):
            return None
        first = body[i]
        line = first.lineno
        for decorator in getattr(first, "decorator_list", ()):
            line = min(line, decorator.lineno)
        starts.append(line)
        i += count
    return starts if i == len(body) else None


def _holds(root: cst.CSTNode, wanted: Set[int]) -> bool:
    """Whether any wanted node lies in ``root``'s subtree (a read-only search)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in wanted:
            return True
        for name in _child_fields(type(node)):
            value = getattr(node, name)
            if isinstance(value, cst.CSTNode):
                stack.append(value)
            elif isinstance(value, (list, tuple)):
                stack.extend(v for v in value if isinstance(v, cst.CSTNode))
    return False
