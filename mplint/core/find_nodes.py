"""Every node of one libcst class below a node, in the order a visit meets them.

``libcst.matchers.findall(node, m.Call())`` does the same, but importing
``libcst.matchers`` builds some 450 dataclasses (a third to half a second of CPU on
every run that parses a file, a one-file pre-commit run included) for the few
class-only searches mplint makes. This is the visit ``findall`` runs, with the
matcher reduced to the class test it is here (a matcher compares node classes, and
libcst's node classes have no subclasses).
"""

from __future__ import annotations

from typing import List, Type, TypeVar

import libcst as cst

N = TypeVar("N", bound=cst.CSTNode)


class _Collect(cst.CSTVisitor):
    def __init__(self, kind: Type[cst.CSTNode]) -> None:
        super().__init__()
        self.kind = kind
        self.found: List[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, self.kind):
            self.found.append(node)
        return True


def find_all(node: cst.CSTNode, kind: Type[N]) -> List[N]:
    """``node`` and the nodes below it that are ``kind``, in visit (source) order."""
    collect = _Collect(kind)
    node.visit(collect)
    return collect.found  # type: ignore[return-value]


def mentions(node: cst.CSTNode, name: str) -> bool:
    """Whether ``node`` or a node below it is the name ``name`` (``tf.reduce_mean(loss)``
    mentions ``loss``)."""
    return any(found.value == name for found in find_all(node, cst.Name))
