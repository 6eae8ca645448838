"""The dotted name a Python ``ast`` node spells (``a.b.c``): the byte-level summaries
and the escape scan both read callees and decorators this way."""

from __future__ import annotations

import ast
from typing import List, Optional


def dotted(node: ast.AST) -> Optional[str]:
    """``a.b.c`` for a chain of names, else None."""
    if isinstance(node, ast.Name):  # the most common case, without the list
        return node.id
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None
