"""Model outputs: which layer call or op produces each output of each Keras model.

Functional models (``keras.Model(inputs, outputs)``) are followed backwards from
the outputs through plain variable assignments to the producing layer call;
Sequential models end in their last layer (list literal, a list variable, or the
last ``.add``). Anything not followed with certainty yields no producer, and rules
stay silent on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterator, List, Optional, Tuple

import libcst as cst

from mplint.checker import Analysis, Context
from mplint.scopes import Location

MODEL_CLASSES = frozenset({"keras.Model"})
SEQUENTIAL_CLASSES = frozenset({"keras.Sequential"})

#: canonical names that compute softmax as a function or activation value
SOFTMAX_FUNCTIONS = frozenset({
    "tensorflow.nn.softmax", "keras.activations.softmax", "keras.ops.softmax",
    "keras.backend.softmax",
})

_MAX_DEPTH = 16


@dataclass
class LayerCall:
    """A tensor produced by calling a layer made by ``constructor``."""

    constructor: cst.Call
    layer_class: FrozenSet[str]  # canonical class names (empty when not a known API)
    location: Location  # where the constructor ran


@dataclass
class OpCall:
    """A tensor produced by a function/op call such as ``tf.cast`` or ``tf.nn.softmax``."""

    call: cst.Call
    function: FrozenSet[str]
    location: Location


Producer = object  # LayerCall | OpCall


@dataclass
class ModelOutput:
    """One output of one model: the expression and, when known, what produced it."""

    model_call: cst.Call
    expression: cst.BaseExpression
    producer: Optional[Producer]
    style: str  # functional | sequential


class ModelOutputs(Analysis):
    """Collects model constructions during the walk; resolves outputs afterwards."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._models: List[Tuple[cst.Call, Location, str]] = []
        #: ``x.add(layer)`` calls by receiver variable name
        self._adds: Dict[str, List[Tuple[cst.Call, Location]]] = {}
        self._resolved: Optional[List[ModelOutput]] = None

    # -- collection --------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "add"
            and isinstance(func.value, cst.Name)
            and node.args
        ):
            self._adds.setdefault(func.value.value, []).append((node, self.ctx.scopes.location()))
            return
        resolved = self.ctx.names.resolve(func)
        if not resolved:
            return
        if resolved & MODEL_CLASSES:
            self._models.append((node, self.ctx.scopes.location(), "functional"))
        elif resolved & SEQUENTIAL_CLASSES:
            self._models.append((node, self.ctx.scopes.location(), "sequential"))

    # -- queries -------------------------------------------------------------------
    def outputs(self) -> List[ModelOutput]:
        """Every model output found in the file (call after the walk)."""
        if self._resolved is None:
            self._resolved = []
            for call, loc, style in self._models:
                if style == "functional":
                    self._resolved += self._functional(call, loc)
                else:
                    self._resolved += self._sequential(call, loc)
        return self._resolved

    def _functional(self, call: cst.Call, loc: Location) -> List[ModelOutput]:
        outputs = _argument(call, 1, "outputs")
        if outputs is None:
            return []
        return [
            ModelOutput(call, expr, self.producer(expr, where), "functional")
            for expr, where in self._leaves(outputs, loc, 0)
        ]

    def _leaves(self, expr: cst.BaseExpression, loc: Location, depth: int) -> Iterator[Tuple[cst.BaseExpression, Location]]:
        """Split list/tuple/dict outputs (through variables) into single tensors."""
        if depth > _MAX_DEPTH:
            return
        if isinstance(expr, (cst.List, cst.Tuple)):
            for element in expr.elements:
                if isinstance(element, cst.StarredElement):
                    return
                yield from self._leaves(element.value, loc, depth + 1)
        elif isinstance(expr, cst.Dict):
            for element in expr.elements:
                if isinstance(element, cst.DictElement):
                    yield from self._leaves(element.value, loc, depth + 1)
        elif isinstance(expr, cst.Name):
            binding = loc.lookup(expr.value)
            if (
                binding is not None and binding.kind == "assign" and binding.scope is not None
                and isinstance(binding.value, (cst.List, cst.Tuple, cst.Dict))
            ):
                yield from self._leaves(binding.value, Location(binding.scope, binding.order), depth + 1)
            else:
                yield expr, loc
        else:
            yield expr, loc

    def _sequential(self, call: cst.Call, loc: Location) -> List[ModelOutput]:
        last: Optional[Tuple[cst.BaseExpression, Location]] = None
        layers = _argument(call, 0, "layers")
        if layers is not None:
            items = self._list_items(layers, loc)
            if items is None:
                return []
            if items:
                last = items[-1]
        # model = Sequential(...); model.add(...): the last add in the same scope wins
        variable = self._bound_to(call, loc)
        if variable is not None:
            adds = [
                (add, where) for add, where in self._adds.get(variable, [])
                if where.scope is loc.scope and where.order > loc.order
            ]
            rebinds = [b for b in loc.scope.bindings.get(variable, []) if b.order > loc.order]
            if rebinds:
                adds = [(a, w) for a, w in adds if w.order < rebinds[0].order]
            if adds:
                add, where = adds[-1]
                last = (add.args[0].value, where)
        if last is None:
            return []
        expr, where = last
        return [ModelOutput(call, expr, self._layer(expr, where, 0), "sequential")]

    def _list_items(self, expr: cst.BaseExpression, loc: Location) -> Optional[List[Tuple[cst.BaseExpression, Location]]]:
        if isinstance(expr, cst.Name):
            binding = loc.lookup(expr.value)
            if binding is None or binding.kind != "assign" or binding.scope is None or binding.value is None:
                return None
            # A list that is appended to later is not known statically.
            return self._list_items(binding.value, Location(binding.scope, binding.order))
        if isinstance(expr, (cst.List, cst.Tuple)):
            out = []
            for element in expr.elements:
                if isinstance(element, cst.StarredElement):
                    return None
                out.append((element.value, loc))
            return out
        return None

    @staticmethod
    def _bound_to(call: cst.Call, loc: Location) -> Optional[str]:
        for name, bindings in loc.scope.bindings.items():
            for binding in bindings:
                if binding.value is call:
                    return name
        return None

    # -- producers ---------------------------------------------------------------------
    def producer(self, expr: cst.BaseExpression, loc: Location, depth: int = 0) -> Optional[Producer]:
        """What computes the tensor ``expr`` (a layer call or an op call), if known."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, cst.Name):
            binding = loc.lookup(expr.value)
            if binding is None or binding.kind != "assign" or binding.value is None or binding.scope is None:
                return None
            return self.producer(binding.value, Location(binding.scope, binding.order), depth + 1)
        if not isinstance(expr, cst.Call):
            return None
        func = expr.func
        if isinstance(func, cst.Call):  # Dense(10)(x)
            return self._layer(func, loc, depth + 1)
        if isinstance(func, cst.Name):
            binding = loc.lookup(func.value)
            if binding is not None and binding.kind == "assign" and isinstance(binding.value, cst.Call) and binding.scope is not None:
                return self._layer(binding.value, Location(binding.scope, binding.order), depth + 1)
        resolved = self.ctx.names.resolve(func)
        if resolved:
            return OpCall(expr, resolved, loc)
        return None

    def _layer(self, expr: cst.BaseExpression, loc: Location, depth: int) -> Optional[LayerCall]:
        """The layer an expression denotes: a constructor call, possibly via a variable."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, cst.Name):
            binding = loc.lookup(expr.value)
            if binding is None or binding.kind != "assign" or binding.value is None or binding.scope is None:
                return None
            return self._layer(binding.value, Location(binding.scope, binding.order), depth + 1)
        if isinstance(expr, cst.Call):
            return LayerCall(expr, self.ctx.names.resolve(expr.func), loc)
        return None


def _argument(call: cst.Call, position: int, keyword: str) -> Optional[cst.BaseExpression]:
    """The argument passed at ``position`` or as ``keyword``, if any."""
    positional = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if positional == position:
                return arg.value
            positional += 1
        elif arg.keyword.value == keyword:
            return arg.value
    return None


def argument(call: cst.Call, position: int, keyword: str) -> Optional[cst.BaseExpression]:
    """Public form of the argument lookup, for checks that read layer arguments."""
    if position < 0:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == keyword:
                return arg.value
        return None
    return _argument(call, position, keyword)
