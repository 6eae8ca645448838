"""MP507: a distribution over a large event has 16-bit parameters, so log_prob sums its terms in float16."""

from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from mplint.analysis.tensor_kinds import F32, LOW, TensorKinds, Where
from mplint.rule.check import Check, Context, Needs
from mplint.semantic.call_args import positional_or_keyword
from mplint.semantic.scopes import Scope, trains_nothing
from mplint.semantic.vocabulary import CASTS, INDEPENDENT_DISTRIBUTIONS, TFP_DISTRIBUTIONS

#: an event of this many dimensions or more is an image (H x W x C) or a volume
_LARGE_EVENT_NDIMS = 2
_MAX_DEPTH = 12


class Float16EventLogProb(Check):
    rule_id = "MP507"
    requires = (TensorKinds,)

    #: a tfp Independent distribution, under a mixed policy
    needs = Needs(mixed_policy=True, also=(b"Independent",))

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._independents: List[Tuple[cst.Call, Where]] = []

    def visit_Call(self, node: cst.Call) -> None:
        if self.names.resolve(node.func) & INDEPENDENT_DISTRIBUTIONS:
            self._independents.append((node, self.ctx.get(TensorKinds).here()))

    def finish(self) -> None:
        kinds = self.ctx.get(TensorKinds)
        for call, where in self._independents:
            policy = self.facts.mixed_policy(where.loc.scope)
            if policy is None or not policy.float16:
                continue  # bfloat16 sums keep float32's range
            ndims = positional_or_keyword(call, 1, "reinterpreted_batch_ndims")
            values = kinds.constant(ndims, where) if ndims is not None else None
            if not values or min(values) < _LARGE_EVENT_NDIMS:
                continue  # a vector event, or a size mplint cannot read
            inner = positional_or_keyword(call, 0, "distribution")
            if not isinstance(inner, cst.Call) or not any(
                    n.startswith(TFP_DISTRIBUTIONS) for n in self.names.resolve(inner.func)):
                continue
            loc = positional_or_keyword(inner, 0, "loc")
            if loc is None or not self._sixteen_bit(loc, where):
                continue
            if trains_nothing(where.loc.scope, self.ctx.module, self.ctx.path):
                continue
            parameter = " ".join(self.ctx.module.code_for_node(loc).split())
            self.report(inner, f"`{parameter}` is 16-bit here{policy.note}, so the distribution computes in "
                               f"float16 and log_prob sums its event of {min(values)}+ dimensions (an image: "
                               f"64x64x3 is 12,288 terms) in float16, whose resolution is 8 past 8192 and "
                               f"which is inf past 65504; cast the parameters to float32 before building "
                               f"the distribution")

    def _sixteen_bit(self, expr: cst.BaseExpression, where: Where) -> bool:
        """Known 16-bit, or made in code that casts its input to the compute dtype
        (a decoder's ``tf.cast(features, global_policy().compute_dtype)``) with no cast
        to float32 on the way that mplint can see."""
        kind = self.ctx.get(TensorKinds).kind(expr, where)
        if kind == LOW:
            return True
        if kind == F32 or self._cast_to_float32(expr, where, 0):
            return False
        function = where.loc.scope.node
        if function is not None and not isinstance(function, cst.Module) \
                and "float32" in self.ctx.module.code_for_node(function):
            return False  # a cast to float32 in the function, on a path mplint cannot follow
        return self._casts_to_compute_dtype(where.loc.scope)

    def _cast_to_float32(self, expr: cst.BaseExpression, where: Where, depth: int) -> bool:
        """Whether the value comes from a cast (to any dtype but the compute dtype),
        followed through names."""
        if depth > _MAX_DEPTH:
            return False
        kinds = self.ctx.get(TensorKinds)
        if isinstance(expr, cst.Call):
            if self.names.resolve(expr.func) & CASTS:
                dtype = kinds.dtype_expression(expr)
                return dtype is None or "compute_dtype" not in self.ctx.module.code_for_node(dtype)
            first = [a.value for a in expr.args if a.keyword is None]
            return bool(first) and self._cast_to_float32(first[0], where, depth + 1)
        if isinstance(expr, (cst.Subscript,)):
            return self._cast_to_float32(expr.value, where, depth + 1)
        if isinstance(expr, cst.Name):
            found = kinds.assigned(expr, where, None)
            return found is not None and self._cast_to_float32(found[0], found[1], depth + 1)
        return False

    def _casts_to_compute_dtype(self, scope: Optional[Scope]) -> bool:
        """The function (or its class, for a method) casts a value to the compute dtype:
        the code is written to run in it (a tf.Module decoder under a mixed policy)."""
        cls = scope.enclosing_class() if scope is not None else None
        node = cls.node if cls is not None else scope.node if scope is not None else None
        if node is None or isinstance(node, cst.Module):
            return False
        code = self.ctx.module.code_for_node(node)
        return "compute_dtype" in code and "cast" in code
