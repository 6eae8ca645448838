"""MP101: a model output computed by a softmax in the 16-bit compute dtype."""

from __future__ import annotations

from typing import Dict, List, Optional, Set

import libcst as cst

from mplint.analysis.compute_regions import ComputeRegions
from mplint.analysis.custom_layers import CustomLayers
from mplint.analysis.models import LayerProducer, ModelOutputs, OpProducer
from mplint.analysis.output_uses import output_use
from mplint.analysis.precision import OutputPrecision, built_for_other_calls, output_layer_fix
from mplint.analysis.tensor_kinds import LOW, TensorKinds, Where
from mplint.core.find_nodes import find_all
from mplint.rule.check import Check, Context, Fix, Needs
from mplint.rule.levels import Safety
from mplint.rule.messages import snippet
from mplint.semantic.call_args import first_tensor_argument
from mplint.semantic.visibility import is_private_name
from mplint.semantic.vocabulary import SOFTMAX_FUNCTIONS


class Float16FinalSoftmax(Check):
    rule_id = "MP101"
    requires = (OutputPrecision, ModelOutputs, CustomLayers, TensorKinds)

    #: the 16-bit compute comes from a mixed policy or a layer dtype spelled in the file (float16, bfloat16, half)
    #: and a library's public models, which its users may run under a mixed policy
    needs = Needs((b"float16", b"half"), mixed_policy=True, library=True)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        #: id of each softmax call of the module -> where it runs (read for library heads)
        self._softmax_at: Dict[int, Where] = {}

    def visit_Call(self, node: cst.Call) -> None:
        if self.names.resolve(node.func) & SOFTMAX_FUNCTIONS:
            self._softmax_at[id(node)] = self.ctx.get(TensorKinds).here()

    def finish(self) -> None:
        precision = self.ctx.get(OutputPrecision)
        for found in precision.sixteen_bit_outputs():
            if not found.softmax:
                continue  # MP102's
            if found.library and self.ctx.get(ModelOutputs).feeds_a_layer(found.output):
                continue  # a block of a bigger model of the library: its output is no model's
            if self.ctx.get(ModelOutputs).discarded(found.output.model_call):
                continue  # ``model, _ = build()``: the other model is never trained or run
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

        self._library_heads({found.custom.name for found in precision.sixteen_bit_outputs()
                             if found.custom is not None and not found.custom.line})

    def _library_heads(self, reported: Set[str]) -> None:
        """A library's public layer class whose ``call`` returns a 16-bit softmax, used
        as a model's output by other code of the project (its tests, examples):
        reported at what ``call`` returns, where the fix is (the library builds no model
        with it; a layer of attention weights that no model outputs stays silent)."""
        facts = self.ctx.facts
        if facts.mixed_policy() is not None or facts.library_policy() is None or not facts.project_files:
            return
        layers = self.ctx.get(CustomLayers)
        for statement in self.ctx.module.body:
            if not isinstance(statement, cst.ClassDef) or is_private_name(statement.name.value) \
                    or statement.name.value in reported:
                continue
            name = statement.name.value
            returned = _last_return(statement)
            if isinstance(returned, cst.Name):
                # ``out = softmax(logits)`` on one path of ``call`` (another computes the
                # probabilities otherwise): that softmax, when its input is certainly 16-bit
                found = self._assigned_softmax(statement, returned.value)
                use = None if found is None else output_use(self.ctx, name)
                if found is None or use is None:
                    continue
                returned = found
            else:
                if not isinstance(returned, cst.Call) or not self.names.resolve(returned.func) & SOFTMAX_FUNCTIONS:
                    continue  # judged only where it returns a softmax call (the layer analysis memoises)
                use = output_use(self.ctx, name)
                judged = None if use is None else layers.judge_class_named(name)
                if judged is None or not judged.softmax:
                    continue
            self.report(
                returned,
                f"final softmax computed in float16/bfloat16 (a library's code: its users may run it "
                f"under a mixed policy): the layer `{name}` returns it and {use} makes the layer a "
                f"model's output; compute the softmax on a float32 cast so the model's probabilities "
                f"are float32",
            )

    def _assigned_softmax(self, cls: cst.ClassDef, variable: str) -> Optional[cst.Call]:
        """The first ``variable = softmax(x)`` of the class's own ``call`` whose ``x`` is
        a 16-bit tensor there (the class is a layer the mixed policy governs)."""
        layer = self.ctx.get(ComputeRegions).layer_class(cls)
        call = _call_method(cls)
        if layer is None or not layer.sixteen_bit or call is None:
            return None
        kinds = self.ctx.get(TensorKinds)
        for assign in find_all(call, cst.Assign):
            value = assign.value
            if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name) \
                    or assign.targets[0].target.value != variable or not isinstance(value, cst.Call):
                continue
            where = self._softmax_at.get(id(value))
            tensor = first_tensor_argument(value)
            if where is not None and tensor is not None and kinds.kind(tensor, where) == LOW:
                return value
        return None

    def _through(self, layer: LayerProducer) -> str:
        """Which call builds the head, where its function builds other layers too."""
        if not built_for_other_calls(layer, self.ctx):
            return ""
        outermost = next(frame.call for frame in layer.location.context if not frame.entry)
        return f" (the layer the call `{snippet(self.ctx.module.code_for_node(outermost), 60)}` builds)"


def _call_method(cls: cst.ClassDef) -> Optional[cst.FunctionDef]:
    return next((s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "call"), None)


def _last_return(cls: cst.ClassDef) -> Optional[cst.BaseExpression]:
    """The value of the last ``return`` of the class's own ``call`` (not of a function
    nested in it)."""
    call = _call_method(cls)
    if call is None:
        return None
    found: List[cst.BaseExpression] = []

    class _Returns(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is call

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Return(self, node: cst.Return) -> None:
            if node.value is not None:
                found.append(node.value)

    call.visit(_Returns())
    return found[-1] if found else None
