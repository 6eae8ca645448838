"""MP101: a model output computed by a softmax in the 16-bit compute dtype."""

from __future__ import annotations

from typing import Set

from mplint.analysis.layers import (
    ABSENT, computes_in_float32, is_keras_layer, is_softmax_layer, layer_dtype, sixteen_bit_name,
)
from mplint.analysis.models import LayerCall, ModelOutputs
from mplint.checker import Check, Fix
from mplint.edits import quote_of, string, with_keyword


class Float16FinalSoftmax(Check):
    rule_id = "MP101"
    requires = (ModelOutputs,)

    def finish(self) -> None:
        policy = self.facts.mixed_policy()
        reported: Set[int] = set()
        for output in self.ctx.get(ModelOutputs).outputs():
            layer = output.producer
            if not isinstance(layer, LayerCall) or id(layer.constructor) in reported:
                continue
            if not is_keras_layer(layer) or not is_softmax_layer(layer, self.ctx):
                continue
            if computes_in_float32(layer, self.ctx) is not False:
                continue  # float32 (any spelling) or a dtype we cannot read: silent
            dtype = layer_dtype(layer, self.ctx)
            if dtype == ABSENT:
                if policy is None:
                    continue  # follows a float32 global policy
                compute, note = sixteen_bit_name(policy.names), policy.note
            else:
                compute, note = ("bfloat16" if "bfloat16" in dtype else "float16"), ""
            reported.add(id(layer.constructor))
            call = layer.constructor
            fixed = with_keyword(call, "dtype", string("float32", quote_of(call, self.ctx.module)))
            self.report(
                call,
                f"final softmax computed in {compute}{note}; give the output layer "
                f"dtype='float32' so the model's probabilities are float32",
                Fix({call: fixed}, safety="safe" if dtype == ABSENT else "unsafe"),
            )


