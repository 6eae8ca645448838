"""Which call binds the parameters of a base class's ``__init__`` for an instance of a subclass.

``class AmpTrainer(BaseTrainer)`` whose ``__init__`` makes a LossScaleOptimizer and
hands it on with ``super().__init__(model, optimizer, clip_norm)``: ``BaseTrainer.__init__``
stores ``self.optimizer = optimizer``, so in an ``AmpTrainer`` that attribute is what the
subclass's call passes, not what other code passes ``BaseTrainer(...)``. Python runs the
first ``__init__`` of the instance's class chain; the one of a base runs only through the
call the class below it makes (``super().__init__(...)``, ``super(Cls, self).__init__(...)``
or ``Base.__init__(self, ...)``). With no ``__init__`` below the base, the construction of
the instance's class binds the base's parameters itself.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import libcst as cst

from mplint.semantic.scopes import Location, Scope, is_super

#: ``X.__init__(...)`` calls of a file, with where each is made
InitCalls = Sequence[Tuple[cst.Call, Location]]


def own_init(cls: Scope) -> Optional[cst.FunctionDef]:
    """The ``__init__`` the class body itself defines."""
    node = cls.node
    if not isinstance(node, cst.ClassDef) or not isinstance(node.body, cst.IndentedBlock):
        return None
    return next((s for s in node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)


def init_caller(chain: Sequence[Scope], index: int) -> Optional[Scope]:
    """The class of ``chain`` (an instance's class first, its bases after, as
    :func:`scopes.class_chain` orders them) whose ``__init__`` calls that of
    ``chain[index]``: the nearest one below it that defines ``__init__``; None when none
    does (the instance's construction binds it)."""
    return next((c for c in reversed(chain[:index]) if own_init(c) is not None), None)


def base_init_calls(calls: InitCalls, caller: Scope, bases: Sequence[Scope],
                    base_names: Sequence[str] = ()) -> List[Tuple[cst.Call, Location, int]]:
    """The calls in ``caller.__init__`` that run a base's ``__init__`` (the classes between
    it and the base, the base last: ``bases``), each with how many leading parameters are
    bound already (``super().__init__(x)``: ``self``, 1; ``Base.__init__(self, x)``: 0).
    ``base_names``: the names the caller's module gives a base it does not define (a class
    of another module), for ``Base.__init__(self, ...)``."""
    init = own_init(caller)
    if init is None:
        return []
    names = {getattr(getattr(b.node, "name", None), "value", None) for b in bases} | set(base_names)
    own = getattr(getattr(caller.node, "name", None), "value", None)
    out: List[Tuple[cst.Call, Location, int]] = []
    for call, where in calls:
        if where.scope.node is not init or not isinstance(call.func, cst.Attribute) \
                or call.func.attr.value != "__init__":
            continue
        receiver = call.func.value
        if is_super(receiver) or _super_of(receiver, own):
            out.append((call, where, 1))
        elif isinstance(receiver, cst.Name) and receiver.value in names and call.args \
                and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == "self" \
                and call.args[0].keyword is None and not call.args[0].star:
            out.append((call, where, 0))
    return out


def _super_of(receiver: cst.BaseExpression, own: Optional[str]) -> bool:
    """``super(Cls, self)`` naming the class that makes the call."""
    return isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name) \
        and receiver.func.value == "super" and len(receiver.args) == 2 \
        and isinstance(receiver.args[0].value, cst.Name) and receiver.args[0].value.value == own \
        and isinstance(receiver.args[1].value, cst.Name) and receiver.args[1].value.value == "self"
