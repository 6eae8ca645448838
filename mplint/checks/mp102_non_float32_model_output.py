"""MP102: a model output (not a softmax: that is MP101) computed in 16 bits."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from mplint.analysis.models import LayerProducer, ModelOutputs, OpProducer
from mplint.analysis.precision import OutputPrecision, output_layer_fix
from mplint.core.find_nodes import find_all
from mplint.rule.check import Check, Context, Fix, Needs
from mplint.rule.levels import Safety
from mplint.semantic.call_args import positional_or_keyword
from mplint.semantic.scopes import Location
from mplint.semantic.vocabulary import CASTS

#: Keras trains on the raw output: its loss sees the 16-bit tensor
_KERAS_TRAINING = frozenset({"compile", "fit", "train_on_batch", "evaluate"})


class NonFloat32ModelOutput(Check):
    rule_id = "MP102"
    requires = (OutputPrecision,)

    #: the 16-bit compute comes from a mixed policy or a layer dtype spelled in the file (float16, bfloat16, half),
    #: or from a library's users' policy (a public model computing its own loss on its output)
    needs = Needs((b"float16", b"half"), mixed_policy=True, library=True)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._called: Counter[str] = Counter()  # model variable -> calls `model(...)`
        self._cast: Counter[str] = Counter()  # model variable -> calls wrapped in a float32 cast
        self._keras_trained: Set[str] = set()
        #: callee -> (block, index, where) of each ``name = callee(...)``
        self._assigned_calls: Dict[str, List[Tuple[Sequence[cst.BaseStatement], int, Location]]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name):
            self._called[func.value] += 1
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and func.attr.value in _KERAS_TRAINING:
            self._keras_trained.add(func.value.value)
        if node.args and isinstance(node.args[0].value, cst.Call) \
                and isinstance(node.args[0].value.func, cst.Name) \
                and self._is_float32_cast(node, self.ctx.scopes.location()):
            self._cast[node.args[0].value.func.value] += 1

    def visit_Module(self, node: cst.Module) -> None:
        self._note_assigned_calls(node.body)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._note_assigned_calls(node.body)

    def _note_assigned_calls(self, body: Sequence[cst.BaseStatement]) -> None:
        """Keep each ``name = f(...)`` of the block, read in :meth:`_recast_calls` when
        ``f`` turns out to name a 16-bit model."""
        loc = self.ctx.scopes.location()
        for index, statement in enumerate(body):
            assigned = _assigned_call(statement)
            if assigned is not None and isinstance(assigned[1].func, cst.Name):
                self._assigned_calls.setdefault(assigned[1].func.value, []).append((body, index, loc))

    def _recast_calls(self, name: str) -> int:
        """How many ``out = name(...)`` have their next statement reading ``out`` cast it
        to float32 (``out = tf.cast(out, tf.float32)``, alone or as the only statement of
        an ``if`` arm: a custom loop under a bfloat16 flag): those calls' 16-bit output
        never reaches a loss either."""
        count = 0
        for body, index, loc in self._assigned_calls.get(name, []):
            assigned = _assigned_call(body[index])
            assert assigned is not None
            variable = assigned[0]
            for later in body[index + 1:]:
                if any(read.value == variable for read in find_all(later, cst.Name)):
                    count += self._recasts(later, variable, loc)
                    break
        return count

    def _recasts(self, statement: cst.BaseStatement, variable: str, loc: Location) -> bool:
        if isinstance(statement, cst.If) and statement.orelse is None \
                and isinstance(statement.body, cst.IndentedBlock) and len(statement.body.body) == 1:
            statement = statement.body.body[0]
        assigned = _assigned_call(statement)
        if assigned is None:
            return False
        target, call = assigned
        first = call.args[0].value if call.args else None
        return target == variable and isinstance(first, cst.Name) and first.value == variable \
            and self._is_float32_cast(call, loc)

    def _is_float32_cast(self, node: cst.Call, loc: Location) -> bool:
        if not self.names.resolve(node.func) & CASTS:
            return False
        dtype = positional_or_keyword(node, 1, "dtype")
        return dtype is not None and self.ctx.values.values(dtype, loc) == frozenset({"float32"})

    def _cast_by_every_caller(self, model_call: cst.CSTNode) -> bool:
        """The model is only ever called as ``tf.cast(model(x), tf.float32)``, or with its
        result cast so right after: the 16-bit output never reaches a loss (a common
        custom-loop idiom)."""
        names = self.ctx.get(ModelOutputs).model_variables(model_call)
        return bool(names) and all(
            self._called[name] > 0 and name not in self._keras_trained
            and self._cast[name] + self._recast_calls(name) == self._called[name]
            for name in names)

    def _unless_a_block(self, model: cst.CSTNode, fix: Optional[Fix]) -> Optional[Fix]:
        """The fix, unsafe when the model is not seen trained or run as a whole here: it
        may be a block of a bigger one (a ConvNeXt stem, an encoder's pooler, a class
        another file uses as a layer), where float32 would slow the network down. A
        model class of the file never run as a whole gets no fix at all: subclassing
        ``Model`` is how blocks are written (a UNet's down-sampling block returning its
        pooled and skip tensors), and a float32 layer inside one is no fix to merge."""
        if fix is None or self.ctx.get(ModelOutputs).used_as_whole_model(model):
            return fix
        if isinstance(model, cst.ClassDef):
            return None
        return replace(fix, safety=Safety.UNSAFE) if fix.safety == Safety.SAFE else fix

    def finish(self) -> None:
        precision = self.ctx.get(OutputPrecision)
        models = self.ctx.get(ModelOutputs)
        for found in precision.sixteen_bit_outputs():
            if found.softmax:
                continue  # MP101 reports softmax outputs, once
            if self._cast_by_every_caller(found.output.model_call):
                continue
            if models.discarded(found.output.model_call):
                continue  # ``model, _ = build()``: the other model is never trained or run
            whole = models.trained_as_whole(found.output.model_call)
            if found.sigmoid and not whole and models.stored_on_instance(found.output.model_call):
                continue  # ``self.gate = Sequential([..., sigmoid])``: a gate of the class's block
            if self.facts.policy_from_elsewhere and not found.library and not found.sigmoid and not whole:
                continue  # a module of a bigger program: maybe a block (an encoder, a head) of its model
            # (a sigmoid's probabilities are a whole model's output, as a softmax's are MP101's)
            # (a library's model is kept only where its own code computes a loss on the output)
            if models.feeds_a_layer(found.output):
                continue  # an inner tensor of another model of the file (a feature extractor's output)
            compute = precision.compute_name(found)
            if isinstance(found.producer, LayerProducer):
                self.report(
                    found.node,
                    f"model output computed in {compute}; {precision.layer_advice(found)} "
                    f"so the model's outputs (and the loss) are float32",
                    self._unless_a_block(found.output.model_call, output_layer_fix(found, self.ctx)),
                )
                continue
            assert isinstance(found.producer, OpProducer)
            op = found.producer
            casted = precision.float32_cast(op.call, op)
            self.report(
                op.call,
                f"model output computed in {compute}; cast it to float32 so the "
                f"model's outputs (and the loss) are float32",
                None if casted is None else Fix({op.call: casted[0]}, safety=Safety.UNSAFE),
            )


def _assigned_call(statement: cst.BaseStatement) -> Optional[Tuple[str, cst.Call]]:
    """(``name``, the call) for ``name = call(...)`` alone on its line."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
            and isinstance(small.value, cst.Call):
        return small.targets[0].target.value, small.value
    return None
