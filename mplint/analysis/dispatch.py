"""Virtual dispatch across modules: the methods a concrete class overrides, as the
module of its base class sees them.

``class MultiLabelTagger(Tagger)`` in one module, ``Tagger`` (a model class with ``call``)
in another: an instance of the subclass runs the ``call`` it inherits there, and every
``self.make_head(...)`` that code makes runs the subclass's override. The base's module
follows its own code for an instance whose class binds ``Overrides.methods``: where a
value comes from a call of an overridden method on the instance, it answers a
:class:`Dispatch` (which method, with which arguments, used as a layer or as a tensor)
instead of following its own definition, and the subclass's module judges its override
there (``ModelOutputs``). What the base cannot follow for that instance (a name the
subclass binds read other than by calling it, an attribute the subclass stores that the
base uses as a layer, arguments it cannot hand on) stays unknown, and the rules stay
silent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from mplint.core.find_nodes import find_all
from mplint.semantic.scopes import Scope

#: an argument another module cannot read: its parameter stays unknown there
UNKNOWN_ARGUMENT = cst.Name("__mplint_unknown__")
#: how a dispatched call's value is used: the layer it returns, or the tensor it returns
LAYER = "layer"
TENSOR = "tensor"


@dataclass(frozen=True)
class Overrides:
    """What the class bodies of a concrete class (and its bases) in the subclass's module
    bind: ``methods`` (methods and class attributes: an instance looks them up there
    first) and ``assigned`` (the ``self.<attr>`` its methods store)."""

    methods: FrozenSet[str]
    assigned: FrozenSet[str]


@dataclass(frozen=True)
class Dispatch:
    """A call the base's code makes on the instance of a method the subclass overrides:
    ``self.<method>(*args)``, whose returned layer or tensor (``kind``) is an output."""

    kind: str
    method: str
    #: literal arguments as written, any other value :data:`UNKNOWN_ARGUMENT`;
    #: None when they cannot be handed on (a starred argument)
    args: Optional[Tuple[cst.Arg, ...]]


@dataclass
class DispatchState:
    """One question to the base's module: the classes of the instance's chain there
    (by id of their ``ClassDef``), the subclass's overrides, and the dispatched calls
    met so far (by id of the call)."""

    chain: FrozenSet[int]
    overrides: Overrides
    hits: Dict[int, Dispatch]


def overrides_of(chain: Sequence[Scope]) -> Overrides:
    """The names a class and its bases of the same module bind (``chain``, in lookup order)."""
    return Overrides(frozenset(name for scope in chain for name in scope.bindings),
                     frozenset(name for scope in chain for name in scope.attributes))


def calls_super_init(function: cst.FunctionDef) -> bool:
    """``__init__`` of a subclass hands the construction on to its base (``super().__init__(...)``
    somewhere in it): the base's attributes are stored as its own ``__init__`` stores them."""
    for call in find_all(function, cst.Call):
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "__init__" and isinstance(func.value, cst.Call) \
                and isinstance(func.value.func, cst.Name) and func.value.func.value == "super":
            return True
    return False


def reads_overridden(classes: Sequence[cst.CSTNode], overrides: Overrides) -> bool:
    """The base's class bodies read on ``self`` a name the subclass binds other than by
    calling it (``head = self.make_head``, a class attribute ``self.activation``): the
    value the instance has there is not followed."""
    for node in classes:
        called: Set[int] = {id(call.func) for call in find_all(node, cst.Call)}
        for attr in find_all(node, cst.Attribute):
            if isinstance(attr.value, cst.Name) and attr.value.value == "self" \
                    and attr.attr.value in overrides.methods and id(attr) not in called:
                return True
    return False


def portable(args: Sequence[cst.Arg]) -> Optional[Tuple[cst.Arg, ...]]:
    """Arguments another module can bind: literals as written (a string, a number, a
    bool, None), any other value unknown; None with a starred argument."""
    if any(arg.star for arg in args):
        return None
    return tuple(arg.with_changes(value=arg.value if _is_literal(arg.value) else UNKNOWN_ARGUMENT)
                 for arg in args)


def unique(found: Sequence[Dispatch]) -> List[Dispatch]:
    """Each dispatched call once, in the order met (arguments compared by their code)."""
    seen: Set[Tuple[str, str, Optional[Tuple[str, ...]]]] = set()
    out: List[Dispatch] = []
    for item in found:
        key = (item.kind, item.method,
               None if item.args is None else tuple(cst.Module([]).code_for_node(a) for a in item.args))
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _is_literal(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.SimpleString, cst.Integer, cst.Float)) \
        or (isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"))

