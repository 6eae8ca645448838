"""What a base class's method stores on ``self``, as a subclass in another module reads it.

Model libraries keep their options in a helper of the base class that the subclass's
constructor calls (``self.set_properties(kwargs)`` with ``self._classifier_activation =
kwargs.pop("classifier_activation", "softmax")`` in ``base_model.py``). The base's
module knows the shape of each store, the subclass's module knows what the call hands
it; a :class:`StoredForm` carries the one to the other:

- a constant (``self._preprocessing_mode = False``);
- a parameter of the method (``self._act = act``), with its default;
- an entry read from a dict parameter (``kwargs.pop(KEY, DEFAULT)`` / ``.get``), with
  the default's values.

Anything else, a store inside an ``if`` arm, or an attribute another method of the
base also stores, is unknown (None).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, FrozenSet, List, Optional

import libcst as cst

from mplint.semantic.mapping_entries import READERS
from mplint.semantic.scopes import Scope, attributes_of, class_chain

if TYPE_CHECKING:
    from mplint.semantic.values import Evaluator

Values = FrozenSet[object]
#: ``self.<attr>`` as the class being built sees it (its module's evaluator asks), handed
#: to the module of a base whose method it runs: values, None (unknown) or NOT_HERE
InstanceAttributes = Callable[[str], object]


class _NotHere:
    """The subclass's module neither stores nor binds the attribute: the base's own."""


NOT_HERE = _NotHere()


@dataclass(frozen=True)
class StoredForm:
    """``self.<attr> = ...`` in ``method`` of a base class of another module."""

    method: cst.FunctionDef
    #: the values when the store is a constant
    constant: Optional[Values] = None
    #: the method's parameter the store reads (itself, or an entry of its dict)
    param: Optional[cst.Param] = None
    #: the dict entry read (``kwargs.pop(key, ...)``), with its reader ``pop``/``get``
    key: Optional[str] = None
    reader: str = ""
    #: the values of the parameter's or the reader's default (None: unknown or none)
    default: Optional[Values] = None


def stored_form(cls: Scope, attr: str, evaluator: "Evaluator") -> Optional[StoredForm]:
    """How the class ``cls`` (and its bases in its module) stores ``self.<attr>``: one
    plain store at the top level of one method's body; None otherwise."""
    bindings = attributes_of(cls, attr)
    if len(bindings) != 1:
        return None
    binding = bindings[0]
    scope = binding.scope
    if binding.kind not in ("assign", "annassign") or binding.value is None or scope is None \
            or binding.branches or not isinstance(scope.node, cst.FunctionDef) \
            or scope.parent is None or scope.parent.kind != "class":
        return None
    method = scope.node
    value = binding.value
    constant = evaluator.values(value, None)
    if constant is not None:
        return StoredForm(method, constant=constant)
    params = {p.name.value: p for p in [*method.params.posonly_params, *method.params.params,
                                         *method.params.kwonly_params]}
    if isinstance(value, cst.Name) and value.value in params and len(scope.bindings.get(value.value, ())) == 1:
        param = params[value.value]
        default = None if param.default is None else evaluator.values(param.default, None)
        return StoredForm(method, param=param, default=default)
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and value.func.attr.value in READERS and isinstance(value.func.value, cst.Name) \
            and value.func.value.value in params and 1 <= len(value.args) <= 2 \
            and not any(arg.keyword is not None or arg.star for arg in value.args) \
            and len(scope.bindings.get(value.func.value.value, ())) == 1:
        key = value.args[0].value
        if not isinstance(key, cst.SimpleString) or not isinstance(key.evaluated_value, str):
            return None
        default = evaluator.values(value.args[1].value, None) if len(value.args) == 2 else frozenset({None})
        return StoredForm(method, param=params[value.func.value.value], key=key.evaluated_value,
                          reader=value.func.attr.value, default=default)
    return None


def foreign_bases(cls: Scope) -> List[cst.BaseExpression]:
    """The bases of ``cls`` and of its bases in this file that this file does not define
    (a class of another module, or a library's)."""
    chain = class_chain(cls)
    local = {id(s.node) for s in chain}
    out: List[cst.BaseExpression] = []
    for current in chain:
        if not isinstance(current.node, cst.ClassDef) or current.parent is None:
            continue
        for base in current.node.bases:
            bound = current.parent.lookup(base.value.value, current.order) \
                if isinstance(base.value, cst.Name) else None
            if bound is None or id(bound.node) not in local:
                out.append(base.value)
    return out
