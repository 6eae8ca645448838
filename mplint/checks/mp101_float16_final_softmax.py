"""MP101: a model output computed by a softmax in the 16-bit compute dtype."""

from __future__ import annotations

from mplint.analysis.models import LayerProducer, ModelOutputs, OpProducer
from mplint.analysis.precision import OutputPrecision, built_for_other_calls, output_layer_fix
from mplint.rule.check import Check, Fix, Needs
from mplint.rule.levels import Safety
from mplint.rule.messages import snippet
from mplint.semantic.call_args import first_tensor_argument


class Float16FinalSoftmax(Check):
    rule_id = "MP101"
    requires = (OutputPrecision, ModelOutputs)

    #: the 16-bit compute comes from a mixed policy or a layer dtype spelled in the file (float16, bfloat16, half)
    #: and a library's public models, which its users may run under a mixed policy
    needs = Needs((b"float16", b"half"), mixed_policy=True, library=True)

    def finish(self) -> None:
        precision = self.ctx.get(OutputPrecision)
        for found in precision.sixteen_bit_outputs():
            if not found.softmax:
                continue  # MP102's
            if found.library and self.ctx.get(ModelOutputs).feeds_a_layer(found.output):
                continue  # a block of a bigger model of the library: its output is no model's
            compute = precision.compute_name(found)
            if isinstance(found.producer, LayerProducer):
                self.report(
                    found.node,
                    f"final softmax computed in {compute}{self._through(found.producer)}; "
                    f"{precision.layer_advice(found)} so the model's probabilities are float32",
                    output_layer_fix(found, self.ctx),
                )
                continue
            assert isinstance(found.producer, OpProducer)
            op = found.producer
            fix = None
            value = first_tensor_argument(op.call)
            casted = None if value is None or self.ctx.get(ModelOutputs).recast_after(op) \
                else precision.float32_cast(value, op)
            if value is not None and casted is not None:
                new, own_module = casted
                fix = Fix({value: new}, safety=Safety.SAFE if own_module else Safety.UNSAFE)
            self.report(
                op.call,
                f"final softmax computed in {compute}; cast its input to float32 so "
                f"the model's probabilities are float32",
                fix,
            )

    def _through(self, layer: LayerProducer) -> str:
        """Which call builds the head, where its function builds other layers too."""
        if not built_for_other_calls(layer, self.ctx):
            return ""
        outermost = next(frame.call for frame in layer.location.context if not frame.entry)
        return f" (the layer the call `{snippet(self.ctx.module.code_for_node(outermost), 60)}` builds)"
