"""MP102: a model output (not a softmax: that is MP101) computed in 16 bits."""

from __future__ import annotations

from mplint.analysis.layers import ABSENT
from mplint.analysis.models import LayerCall, OpCall
from mplint.analysis.precision import OutputPrecision, float32_keyword_fix
from mplint.checker import Check, Fix


class NonFloat32ModelOutput(Check):
    rule_id = "MP102"
    requires = (OutputPrecision,)

    def finish(self) -> None:
        precision = self.ctx.get(OutputPrecision)
        for found in precision.sixteen_bit_outputs():
            if found.softmax:
                continue  # MP101 reports softmax outputs, once
            compute = precision.compute_name(found)
            if isinstance(found.producer, LayerCall):
                call = found.producer.constructor
                self.report(
                    call,
                    f"model output computed in {compute}; give the output layer "
                    f"dtype='float32' so the model's outputs (and the loss) are float32",
                    Fix({call: float32_keyword_fix(call, self.ctx)},
                        safety="safe" if found.dtype == ABSENT else "unsafe"),
                )
                continue
            assert isinstance(found.producer, OpCall)
            op = found.producer
            casted = precision.float32_cast(op.call, op)
            self.report(
                op.call,
                f"model output computed in {compute}; cast it to float32 so the "
                f"model's outputs (and the loss) are float32",
                None if casted is None else Fix({op.call: casted[0]}, safety="unsafe"),
            )
