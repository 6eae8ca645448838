"""Which ``__init__`` parameters of a layer class pick the dtype of a trainable weight it makes.

``class BaseBlock(Layer)`` storing ``self.weight_dtype = weight_dtype`` in ``__init__`` and
calling ``self.add_weight(..., dtype=self.weight_dtype)`` in ``build``: whatever binds
``weight_dtype`` picks the variable's dtype, a construction (``BaseBlock(weight_dtype=
"float16")``) or a subclass's ``super().__init__(weight_dtype="float16", **kw)``, in this
module or another. The class's own module cannot judge the value, which comes from outside
it; MP408 judges it at that call, where the policy in effect is known, and asks this
analysis (of another module: :func:`imported_dtype_params`) which parameters matter.

Precision: only ``add_weight`` that is trainable (``trainable`` left out or ``True``), in a
method the class does not override on the way down, with the dtype the parameter itself or
``self.<attr>`` that exactly one plain ``self.<attr> = <parameter>`` of that ``__init__``
binds (no other store in the class chain); a class with a base of a third module (not
TensorFlow's) may store or build otherwise, and has none.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import libcst as cst

from mplint.core.positions import positions_of
from mplint.rule.check import Analysis, Context
from mplint.semantic.base_inits import own_init
from mplint.semantic.call_args import keyword_only, positional_or_keyword
from mplint.semantic.names import dotted_name
from mplint.semantic.scopes import Location, Scope, attributes_of, class_chain, method_of
from mplint.semantic.stored_attributes import foreign_bases
from mplint.semantic.vocabulary import names_tensorflow

#: ``add_weight(name|shape, shape|initializer, dtype, ...)`` in Keras 2 and 3
_ADD_WEIGHT_DTYPE_POSITION = 2


@dataclass(frozen=True)
class DtypeParam:
    """A parameter of a class's ``__init__`` that is the dtype of a trainable weight."""

    name: str
    #: its index among the positional parameters after ``self`` (-1: keyword-only)
    position: int
    #: where the weight is made, for messages (``base.py:12``)
    made_at: str
    #: the method that makes it (``build``), and ``self.<attr>`` it is read through ("")
    method: str
    attr: str
    #: the class whose ``__init__`` takes the parameter
    owner: str


class WeightDtypeParams(Analysis):
    """Records ``add_weight`` calls; answers per class which parameters pick their dtype."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._weights: List[Tuple[cst.Call, Location]] = []
        self._memo: Dict[int, Dict[str, DtypeParam]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "add_weight" \
                and isinstance(func.value, cst.Name) and func.value.value == "self":
            self._weights.append((node, self.ctx.scopes.location()))

    def params_named(self, name: str) -> Dict[str, DtypeParam]:
        """:meth:`params_of` for a top-level class of this module, by name."""
        module = self.ctx.scopes.module_scope
        binding = module.lookup(name)
        if binding is None or binding.kind != "class":
            return {}
        scope = next((c for c in module.children if c.node is binding.node), None)
        return {} if scope is None else self.params_of(scope)

    def params_of(self, cls: Scope) -> Dict[str, DtypeParam]:
        """The parameters of the ``__init__`` an instance of ``cls`` runs first (its own or
        the nearest base's in this module) that pick a trainable weight's dtype."""
        if id(cls) not in self._memo:
            self._memo[id(cls)] = self._params(cls)
        return self._memo[id(cls)]

    def _params(self, cls: Scope) -> Dict[str, DtypeParam]:
        if any(not names_tensorflow(self.ctx.names.resolve(base)) for base in foreign_bases(cls)):
            return {}  # a base of a third module may store or build otherwise
        chain = class_chain(cls)
        owner = next((c for c in chain if own_init(c) is not None), None)
        init = own_init(owner) if owner is not None else None
        if owner is None or init is None:
            return {}
        positional = [p.name.value for p in [*init.params.posonly_params, *init.params.params]][1:]
        keyword = {p.name.value for p in init.params.kwonly_params}
        out: Dict[str, DtypeParam] = {}
        for call, loc in self._weights:
            method = loc.scope.node
            holder = loc.scope.enclosing_class()
            if not isinstance(method, cst.FunctionDef) or holder is None or not any(c is holder for c in chain):
                continue
            bound = method_of(cls, method.name.value)
            if bound is None or bound.node is not method or not _trainable(call):
                continue  # overridden on the way down, or state no optimizer updates
            dtype = positional_or_keyword(call, _ADD_WEIGHT_DTYPE_POSITION, "dtype")
            found = self._parameter(dtype, loc, cls, init) if dtype is not None else None
            if found is None or (found[0] not in positional and found[0] not in keyword):
                continue
            name, attr = found
            position = positional.index(name) if name in positional else -1
            line = positions_of(self.ctx.module, self.ctx.text, [call]).get(call)
            if line is None:
                continue
            made_at = f"{os.path.basename(self.ctx.path)}:{line.start.line}"
            owner_name = owner.node.name.value if isinstance(owner.node, cst.ClassDef) else ""
            out.setdefault(name, DtypeParam(name, position, made_at, method.name.value, attr, owner_name))
        return out

    def _parameter(self, dtype: cst.BaseExpression, loc: Location, cls: Scope,
                   init: cst.FunctionDef) -> Optional[Tuple[str, str]]:
        """(parameter of ``init``, ``self.<attr>`` read or "") that ``dtype`` certainly is."""
        if isinstance(dtype, cst.Name):
            if loc.scope.node is not init:
                return None
            return (dtype.value, "") if _the_parameter(loc, dtype.value) else None
        if not isinstance(dtype, cst.Attribute) or dotted_name(dtype.value) != "self":
            return None
        stores = attributes_of(cls, dtype.attr.value)
        if len(stores) != 1:
            return None
        store = stores[0]
        if store.kind != "assign" or not isinstance(store.value, cst.Name) or store.scope is None \
                or store.scope.node is not init:
            return None
        name = store.value.value
        return (name, dtype.attr.value) if _the_parameter(store.location(), name) else None


def _the_parameter(loc: Location, name: str) -> bool:
    """``name`` at ``loc`` is only ever the function's parameter (never rebound before)."""
    reaching = loc.reaching(name)
    return len(reaching) == 1 and reaching[0].kind == "param"


def _trainable(call: cst.Call) -> bool:
    flag = keyword_only(call, "trainable")
    return flag is None or (isinstance(flag, cst.Name) and flag.value == "True")


def imported_dtype_params(ctx: Context, func: cst.BaseExpression) -> Dict[str, DtypeParam]:
    """:meth:`WeightDtypeParams.params_of` for the class ``func`` names when it is imported
    from another module of the project, asked there; {} when it cannot be followed."""
    from mplint.analysis.imported_layers import analysed, imported_definition

    found = imported_definition(ctx, func)
    if found is None:
        return {}
    analysis = analysed(found[0], WeightDtypeParams, root=ctx.facts.project_root)
    named = getattr(analysis, "params_named", None)
    return named(found[1]) if named is not None else {}
