"""MP503: casting data to a 16-bit dtype in a tf.data pipeline or preprocessing code."""

from __future__ import annotations

import os
from typing import List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.compute_regions import ComputeRegions
from mplint.analysis.imported_casts import imported_input_cast
from mplint.analysis.references import References
from mplint.rule.check import Check, Context, Fix, Needs
from mplint.rule.levels import Safety
from mplint.semantic.call_args import positional_or_keyword
from mplint.semantic.scopes import Location
from mplint.semantic.vocabulary import CASTS, SIXTEEN_BIT_DTYPES

#: attribute spellings of 16-bit dtypes that have a float32 sibling on the same module
_ATTRS = frozenset({"float16", "half", "bfloat16"})


class Float16InputCast(Check):
    rule_id = "MP503"
    requires = (ComputeRegions, References)

    #: only under a mixed policy
    needs = Needs(mixed_policy=True)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._casts: List[Tuple[cst.Call, cst.BaseExpression, Location]] = []
        #: names and calls a ``return`` hands back as they are (``return img``,
        #: ``return img, kp``, ``return tf.cast(img, tf.bfloat16)``)
        self._returned: Set[int] = set()

    def visit_Return(self, node: cst.Return) -> None:
        value = node.value
        for item in value.elements if isinstance(value, cst.Tuple) else [value] if value is not None else []:
            element = item.value if isinstance(item, cst.BaseElement) else item
            self._returned.add(id(element))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        dtype: Optional[cst.BaseExpression] = None
        if isinstance(func, cst.Attribute) and func.attr.value == "astype" and not self.names.resolve(func):
            dtype = positional_or_keyword(node, 0, "dtype")  # numpy arrays in a generator or py_function
        elif self.names.resolve(func) & CASTS:
            dtype = positional_or_keyword(node, 1, "dtype")
        if dtype is not None:
            self._casts.append((node, dtype, self.ctx.scopes.location()))

    def finish(self) -> None:
        policy = self.facts.mixed_policy()
        if policy is None:
            return
        regions = self.ctx.get(ComputeRegions)
        self._imported_casts(regions, policy.note)
        for call, dtype, loc in self._casts:
            found = self.ctx.values.values(dtype, loc)
            if not found or not found <= SIXTEEN_BIT_DTYPES:
                continue
            if not regions.is_pipeline(loc):
                continue
            if found == {"bfloat16"} and self._only_returned(call, loc):
                continue  # the last step: a TPU infeed of half the bytes, bfloat16's range
            name = next(iter(found))
            # ``.astype`` results often feed tf.numpy_function with a declared
            # Tout, which a new dtype would contradict: unsafe there.
            safety = Safety.UNSAFE if _is_astype(call) else Safety.SAFE
            self.report(
                dtype,
                f"input data cast to {name} in the input pipeline{policy.note}; keep "
                f"input processing in float32 and let the model's first layer cast "
                f"to the compute dtype (the mixed precision guide's advice)",
                self._fix(dtype, safety),
            )

    def _imported_casts(self, regions: ComputeRegions, note: str) -> None:
        """A helper of another module called in the pipeline that casts to float16."""
        for call, loc in regions.pipeline_calls():
            if loc.lookup(call.func.value if isinstance(call.func, cst.Name) else "") is not None:
                continue  # a function of this file: its own casts are judged where they are
            found = imported_input_cast(self.ctx, call.func)
            if found is None:
                continue
            self.report(
                call,
                f"input data cast to float16 in the input pipeline{note}: `{self.ctx.module.code_for_node(call.func)}"
                f"()` casts at {os.path.basename(found[0])}:{found[1]}; keep input processing in float32 and "
                f"let the model's first layer cast to the compute dtype (the mixed precision guide's advice)",
            )

    def _only_returned(self, call: cst.Call, loc: Location) -> bool:
        """The cast is the pipeline's last step: returned as it is, or bound to a name
        that every later read in its function returns as it is (nothing computes on the
        16-bit values on the host)."""
        if id(call) in self._returned:
            return True
        if loc.scope.kind not in ("function", "lambda"):
            return False
        binding = next((b for found in loc.scope.bindings.values() for b in found
                        if b.value is call and b.kind == "assign"), None)
        if binding is None:
            return False
        name = binding.name
        reads = [ref for ref in self.ctx.get(References).get(name) if not ref.store
                 and ref.location.scope is loc.scope and ref.location.order > binding.order
                 and ref.location.lookup(name) is binding]
        return bool(reads) and all(id(ref.node) in self._returned and ref.attr is None for ref in reads)

    def _fix(self, dtype: cst.BaseExpression, safety: Safety) -> Optional[Fix]:
        """Cast to float32 in the same spelling: ``tf.float16`` -> ``tf.float32``."""
        if isinstance(dtype, cst.Attribute) and dtype.attr.value in _ATTRS:
            new: cst.BaseExpression = dtype.with_changes(attr=cst.Name("float32"))
        elif isinstance(dtype, cst.SimpleString):
            quote = dtype.quote
            new = cst.SimpleString(f"{dtype.prefix}{quote}float32{quote}")
        else:
            return None
        return Fix({dtype: new}, safety=safety)


def _is_astype(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "astype"
