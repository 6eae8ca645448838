"""Which model outputs are computed in the 16-bit compute dtype (MP101, MP102).

An output is 16-bit when what computes it runs in the compute dtype of a mixed
policy: a Keras layer without a float32 dtype of its own, or a dtype-preserving op
(softmax, sigmoid, reshape...) applied to such a tensor. A cast or a float32 layer
settles it as float32. A ``Lambda`` or a custom layer class of the file is judged by
what its function or ``call`` returns (:mod:`mplint.analysis.custom_layers`). Anything
else (layers from elsewhere, unknown ops, function parameters, a dtype we cannot read)
is unknown, and the rules stay silent on it.

The division between the rules: an output whose last computation is a softmax is
MP101's; every other 16-bit output is MP102's. A shape-only op after a softmax
(``tf.reshape(probs, ...)``) still counts as a softmax output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.flag_defaults import FlagDefaults
from mplint.analysis.custom_layers import CustomLayer, CustomLayers, custom_layer_fix, float32_dtype
from mplint.analysis.layers import (
    ABSENT, built_under_float32_policy, computes_in_float32, computes_under_policy,
    activation_argument, is_sigmoid_layer, is_softmax_layer, is_softmax_value, layer_dtype, sixteen_bit_name, under_kept_values,
)
from mplint.analysis.models import LayerProducer, ModelOutput, ModelOutputs, OpProducer, Producer
from mplint.analysis.references import References
from mplint.analysis.uncalled import never_run
from mplint.rule.check import Analysis, Context, Fix
from mplint.rule.edits import cast, string
from mplint.rule.levels import Safety
from mplint.semantic.call_args import keyword_only, positional_or_keyword
from mplint.semantic.facts import PolicyState
from mplint.semantic.public_reach import public_reach
from mplint.semantic.scopes import (
    Location, Scope, built_for_tests_that_train_nothing, enclosing_fixture, enclosing_test, function_key,
    test_trains_nothing, trains_nothing,
)
from mplint.semantic.test_modules import is_test_path
from mplint.semantic.vocabulary import (
    ACTIVATION_FIRST_LAYERS, CLASSIFIER_APPLICATION_DEFAULTS, ELEMENTWISE_OPS, LAYER_WRAPPERS, SHAPE_OPS, SIGMOID_FUNCTIONS,
    SOFTMAX_FUNCTIONS, WRAPPED_LAYER_PARAMETER, is_classifier_application,
)

_MAX_DEPTH = 16


@dataclass
class SixteenBitOutput:
    """A model output computed in 16 bits, and the node a finding points at."""

    output: ModelOutput
    producer: Producer  # LayerProducer (report its constructor) | OpProducer (report the call)
    softmax: bool
    #: ABSENT when the dtype comes from the mixed policy, else the explicit 16-bit dtype
    dtype: str
    #: set when the producer is a Lambda or a custom layer class of the file
    custom: Optional[CustomLayer] = None
    #: found only as a library's public model, under the mixed policy its users may set
    #: (``ModuleFacts.library_policy``): MP101's; MP102's only where the model's own code
    #: computes a loss on the output (other logits are the user's to cast)
    library: bool = False
    #: the 16-bit layers that only move or keep the softmax's values on to the output
    #: (a Reshape, a Dropout): each autocasts its input, so each needs float32 too
    kept_by: Tuple[LayerProducer, ...] = ()
    #: computed by a sigmoid: probabilities, which go to a loss as they are (a block's
    #: output is features or logits, rarely a sigmoid's)
    sigmoid: bool = False

    @property
    def node(self) -> cst.Call:
        """Where the finding points: the producer; or, for a layer of another module (the
        last layer of a model built there and called here as a layer, a GAN's generator;
        a head class or function there), the functional model whose output it becomes,
        with that layer's line in the message: the layer is no bug on its own (the same
        generator or head inside a bigger network is right), its use as this model's
        output is, and one finding per bug lands where the model is. So for a part of
        the tuple a custom layer's ``call`` returns (``box, obj = YoloOutput(n)(x)``):
        the construction makes every part, the model's outputs pick this one."""
        if self.custom is not None and self.custom.line and not self.custom.closure \
                and isinstance(self.output.model_call, cst.Call):
            return self.output.model_call
        if isinstance(self.producer, LayerProducer) and self.producer.output_part \
                and isinstance(self.output.model_call, cst.Call):
            return self.output.model_call
        return self.producer_node

    @property
    def producer_node(self) -> cst.Call:
        """The call that computes the output (a layer's constructor, an op)."""
        if isinstance(self.producer, LayerProducer):
            return self.producer.constructor
        assert isinstance(self.producer, OpProducer)
        return self.producer.call


class OutputPrecision(Analysis):
    """Judges every model output once, for both output rules."""

    requires = (ModelOutputs, CustomLayers, References, FlagDefaults)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._found: Optional[List[SixteenBitOutput]] = None

    def _followed_from_ungoverned(self, where: Location) -> bool:
        """The output is built inside calls followed from a function that no policy
        reaches (``EfficientNetLiteB1()``, which nothing calls, handing ``include_top`` on
        to the builder a policy reaches through ``EfficientNetLiteB0(include_top=False)``):
        that construction runs in no mixed program. The file's own policy calls reach
        its code, so a file that sets one is judged as before; so is a library's, whose
        users call its public builders (not asked)."""
        facts = self.ctx.facts
        if facts.program_reached is None or not where.context or facts.policy_calls or facts.library:
            return False
        outer = where.context[0].caller.scope
        root: Scope = outer
        while root.parent is not None:
            root = root.parent
        if root.node is not self.ctx.module:
            return False  # a call another module's code makes (a base class's dispatch): judged there
        return outer.kind == "function" and function_key(outer) not in facts.program_reached

    def sixteen_bit_outputs(self) -> List[SixteenBitOutput]:
        """Outputs certainly computed in 16 bits, one per reported node."""
        if self._found is None:
            self._found = []
            seen: Dict[Tuple[int, bool], int] = {}
            facts = self.ctx.facts
            policy = facts.mixed_policy()
            library = policy is None and facts.library_policy() is not None
            if library:
                policy = facts.library_policy()
            models = self.ctx.get(ModelOutputs)
            parts = facts.project_part_classes
            for output in models.outputs():
                if output.producer is None:
                    continue
                if facts.kernel_resets and not library:  # a notebook restarted: the run it is in
                    policy = facts.mixed_policy(order=output.producer.location.order)
                if isinstance(output.model_call, cst.ClassDef) and output.model_call.name.value in parts:
                    continue  # a block another model builds: its output is a layer's, not the model's
                if never_run(self.ctx, output.producer.location):
                    continue  # built in a private builder nothing names: never run
                if not library and self._followed_from_ungoverned(output.producer.location):
                    continue  # built through a call that code no policy reaches makes
                if self._in_test_that_trains_nothing(output.producer):
                    continue  # a layer test's model (predict, dtype checks): no loss sees it
                if self._test_subject(output.producer):
                    continue  # built in 16 bits on purpose by a test's fixture, or a test that trains nothing
                if library and not public_reach(self.ctx.scopes).runs(output.producer.location.scope):
                    continue  # a library's users call its public builders and classes, and what they run
                kept = under_kept_values(output.expression, output.producer, models, self.ctx)
                under = None if kept is None else self._judge(kept[0], policy, models, 1)
                judged: Optional[Tuple[Producer, bool, str]] = under
                kept_by = kept[1] if kept is not None and under is not None and under[1] else ()
                if not kept_by:
                    judged = self._judge(output.producer, policy, models, 0) \
                        or self._cast_softmax(output, policy, models)
                sigmoid = judged is not None and self._sigmoid(judged[0])
                if judged is None or (library and not judged[1] and not sigmoid
                                      and not models.loss_computed_on(output)):
                    continue  # a library's logits are its users' to cast, unless its own loss reads them
                # (its probabilities, a softmax's or a sigmoid's, go to its users' losses as they are)
                found = SixteenBitOutput(output, judged[0], judged[1], judged[2], self._custom(judged[0]),
                                         library, kept_by, sigmoid)
                if found.custom is not None and not found.custom.line and output.style == "functional" \
                        and not self.ctx.get(CustomLayers).input_is_float(output):
                    continue  # an integer input stays integer: Keras autocasts only floats
                if (id(found.producer_node), found.softmax) in seen:
                    continue  # judged again in another call of its builder, alike
                # ``build(10, "softmax")`` and ``build(1, "sigmoid")``: one layer, a softmax
                # (MP101's) in one call and a 16-bit output (MP102's) in the other
                seen[(id(found.producer_node), found.softmax)] = len(self._found)
                self._found.append(found)
        return self._found

    def _sigmoid(self, producer: Producer) -> bool:
        """The output is a sigmoid's probabilities (a layer's activation or the op)."""
        if isinstance(producer, LayerProducer):
            return is_sigmoid_layer(producer, self.ctx)
        return isinstance(producer, OpProducer) and bool(producer.function & SIGMOID_FUNCTIONS)

    def _policy(self, scope: Optional[Scope]) -> Optional[PolicyState]:
        """The mixed policy at ``scope``; a library's users' where no program sets one
        (only softmax outputs of public models are kept from those)."""
        return self.ctx.facts.library_policy(scope)

    def _test_subject(self, producer: Producer) -> bool:
        """In a test file, every mixed policy reaching the code is set by a pytest fixture
        (test setup that the tests checking 16-bit behaviour request) or by a test that
        trains nothing: the model is what those tests exercise, not a program's output."""
        if not is_test_path(self.ctx.path):
            return False
        calls = self.ctx.facts.mixed_calls_governing(producer.location.scope)
        if not calls:
            return False
        module, path = self.ctx.module, self.ctx.path
        for call in calls:
            test = enclosing_test(call.location.scope)
            if enclosing_fixture(call.location.scope) is None \
                    and (test is None or not test_trains_nothing(test, module, path)):
                return False
        return True

    def _in_test_that_trains_nothing(self, producer: Producer) -> bool:
        """Built in a ``test*`` function that trains nothing (``scopes.trains_nothing``),
        or in a test file's helper that only such tests call; a helper that builds a model
        for tests to train is judged as any builder."""
        scope = producer.location.scope
        module, path = self.ctx.module, self.ctx.path
        return (enclosing_test(scope) is not None and trains_nothing(scope, module, path)) \
            or built_for_tests_that_train_nothing(scope, module, path)

    def _judge(self, producer: Producer, policy: Optional[PolicyState], models: ModelOutputs,
               depth: int) -> Optional[Tuple[Producer, bool, str]]:
        """(producer to report, computed by a softmax, dtype) for a 16-bit tensor."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(producer, LayerProducer) and producer.layer_class & LAYER_WRAPPERS:
            # The wrapped layer computes (and its copies, for Bidirectional); a dtype on
            # the wrapper leaves it in 16 bits. Judge, report and fix that layer.
            keyword = WRAPPED_LAYER_PARAMETER[min(producer.layer_class & LAYER_WRAPPERS)]
            wrapped = positional_or_keyword(producer.constructor, 0, keyword)
            runs = None if wrapped is None else models.layer(wrapped, producer.location)
            return None if runs is None else self._judge(runs, policy, models, depth + 1)
        if isinstance(producer, LayerProducer) and is_classifier_application(producer.layer_class):
            return self._application_top(producer, policy)
        if isinstance(producer, LayerProducer):
            custom = self._custom(producer)
            if not computes_under_policy(producer) and custom is None:
                return None  # a lookup layer, or a Lambda/custom layer whose output is not known 16-bit
            if custom is not None and custom.float32_built:
                dtype = ABSENT  # built float32, but its sublayer follows the global policy
            elif computes_in_float32(producer, self.ctx) is not False:
                return None  # float32 in any spelling, or an unreadable dtype
            else:
                dtype = layer_dtype(producer, self.ctx)
            if dtype == ABSENT and (policy is None or built_under_float32_policy(producer, self.ctx)
                                    or self._policy(producer.location.scope) is None):
                return None  # no policy, float32 where it is built, or another test's policy
            softmax = custom.softmax if custom is not None else is_softmax_layer(producer, self.ctx)
            return producer, softmax, dtype
        if not isinstance(producer, OpProducer):
            return None
        function = producer.function
        if not function & (SOFTMAX_FUNCTIONS | SHAPE_OPS | ELEMENTWISE_OPS):
            return None  # casts (explicit intent) and ops we do not know
        inner_producer = models.op_input(producer)
        inner = None if inner_producer is None else self._judge(inner_producer, policy, models, depth + 1)
        if inner is None:
            return None
        if function & SOFTMAX_FUNCTIONS:
            return producer, True, inner[2]
        if function & SHAPE_OPS and inner[1]:
            return inner  # reshaping probabilities: the softmax is still the output
        return producer, False, inner[2]

    def _cast_softmax(self, output: ModelOutput, policy: Optional[PolicyState],
                      models: ModelOutputs) -> Optional[Tuple[Producer, bool, str]]:
        """``Activation("linear", dtype="float32")(probabilities)`` at the output: it only
        casts a softmax already rounded to 16 bits, which stays MP101's (on logits it
        is the fix, and silent)."""
        producer, expression = output.producer, output.expression
        if not isinstance(producer, LayerProducer) or not producer.layer_class & ACTIVATION_FIRST_LAYERS \
                or not isinstance(expression, cst.Call) or expression.func is not producer.constructor \
                or computes_in_float32(producer, self.ctx) is not True:
            return None
        activation = activation_argument(producer)
        if activation is None or self.ctx.values.values(*activation) not in (frozenset({"linear"}), frozenset({None})):
            return None
        first = positional_or_keyword(expression, 0, "inputs")
        inner = None if first is None else models.producer(first, producer.location)
        judged = None if inner is None else self._judge(inner, policy, models, 1)
        return judged if judged is not None and judged[1] else None

    def _application_top(self, producer: LayerProducer,
                         policy: Optional[PolicyState]) -> Optional[Tuple[Producer, bool, str]]:
        """A ``keras.applications`` classifier built under the mixed policy: its top
        Dense computes in 16 bits, a softmax unless ``classifier_activation`` says
        otherwise. Silent without a top, or on any argument not read for certain
        (positional ones, ``**kwargs``)."""
        call = producer.constructor
        if any(arg.keyword is None or arg.star for arg in call.args):
            return None
        given = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
        top = given.get("include_top")
        if top is not None and self.ctx.values.values(top, producer.location) != frozenset({True}):
            return None
        where = producer.location
        if policy is None or built_under_float32_policy(producer, self.ctx) \
                or self._policy(where.scope) is None \
                or any(c.location.scope is where.scope and c.location.order > where.order
                       for c in self.ctx.facts.policy_calls):
            return None  # built before the policy its own scope sets (MP405's)
        activation = given.get("classifier_activation")
        softmax = activation is None and CLASSIFIER_APPLICATION_DEFAULTS["classifier_activation"] == "softmax" \
            or activation is not None and is_softmax_value(activation, self.ctx, producer)
        return producer, softmax, ABSENT

    def _custom(self, producer: object) -> Optional[CustomLayer]:
        """The Lambda or custom layer class behind a layer call, when judged 16-bit."""
        if not isinstance(producer, LayerProducer) or computes_under_policy(producer):
            return None
        return self.ctx.get(CustomLayers).judge(producer)

    # -- wording and fixes shared by the rules ---------------------------------------
    def layer_advice(self, found: SixteenBitOutput) -> str:
        """What to do about a 16-bit output layer, in a finding's words."""
        advice = self._layer_advice(found)
        if self.ctx.get(ModelOutputs).recast_after(found.producer):
            advice += " and to the pass-through layer after it (it autocasts its input to 16 bits again)"
        return advice

    @staticmethod
    def _layer_advice(found: SixteenBitOutput) -> str:
        custom = found.custom
        if isinstance(found.producer, LayerProducer) and is_classifier_application(found.producer.layer_class):
            name = min(found.producer.layer_class).rpartition(".")[2]
            return (f"{name}'s top Dense ('predictions') computes it; pass classifier_activation=None "
                    f"and end the model with Activation('softmax', dtype='float32')")
        if custom is None and found.kept_by:
            after = ", ".join(_layer_name(layer) for layer in reversed(found.kept_by))
            return f"give it and the layers that pass it on ({after}) dtype='float32'"
        if custom is None:
            return "give the output layer dtype='float32'"
        if custom.line and custom.model:
            return (f"the {custom.name} built at {custom.built_in}:{custom.line}, the last layer of the model "
                    f"`{custom.head}` builds, computes it; give that layer dtype='float32' or cast the "
                    f"output here")
        if custom.line and custom.closure:
            return (f"the {custom.name} built at {custom.built_in}:{custom.line}, in the function `{custom.head}` "
                    f"returns, computes it; give that layer dtype='float32'")
        if custom.line:
            return (f"the {custom.name} built at {custom.built_in}:{custom.line}, whose output `{custom.head}` "
                    f"returns, computes it; give that layer dtype='float32'")
        if custom.built_in:
            return (f"the layer `{custom.name}` in {custom.built_in} returns computes in it; "
                    f"give that layer dtype='float32'")
        if custom.float32_built:
            return (f"the custom layer `{custom.name}` is built with a float32 dtype, but its sublayer "
                    f"{custom.sublayer} follows the global policy, not the layer's dtype, and computes it; "
                    f"give that sublayer dtype=self.dtype_policy or cast to float32 in `call`")
        if custom.sublayer:
            what = f"the custom layer `{custom.name}` computes in it through its sublayer {custom.sublayer}, " \
                "which follows the global policy even under dtype='float32'"
            if found.softmax:
                return (f"{what}; compute the softmax in float32 in `call` (cast before a softmax op, or give "
                        f"a softmax sublayer dtype='float32')")
            return f"{what}; cast its output to float32 in `call` or end the model with a float32 Activation('linear')"
        if isinstance(found.producer, LayerProducer) and found.producer.output_part:
            element = ", ".join(str(i) for i in found.producer.output_part)
            return (f"the custom layer `{custom.name}` computes it (element {element} of the tuple its `call` "
                    f"returns; Keras autocasts its inputs and weights); cast that element to float32 in `call` "
                    f"or pass it through a float32 Activation('linear') before it becomes an output")
        if custom.name == "Lambda":
            what = "the Lambda computes in it (Keras autocasts its inputs)"
        else:
            what = f"the custom layer `{custom.name}` computes in it (Keras autocasts its inputs and weights)"
        return f"{what}; give it dtype='float32' or end the model with a float32 Activation('linear')"

    def compute_name(self, found: SixteenBitOutput) -> str:
        """"float16" / "bfloat16" plus the run-time policy note where it applies."""
        if found.dtype != ABSENT:
            return "bfloat16" if "bfloat16" in found.dtype else "float16"
        location = getattr(found.producer, "location", None)
        policy = self._policy(location.scope if location is not None else None)
        policy = policy or self._policy(None)
        assert policy is not None
        return sixteen_bit_name(policy.names) + policy.note

    def float32_cast(self, value: cst.BaseExpression, op: Optional[OpProducer]) -> Optional[Tuple[cst.Call, bool]]:
        """``value`` cast to float32 in the file's own spelling, and whether that
        spelling comes from the op's own module (else from another import)."""
        names = self.ctx.names
        if op is not None:
            node = op.call.func
            while isinstance(node, cst.Attribute):
                node = node.value
                found = self._cast_for(node, names.resolve(node), value)
                if found is not None:
                    return found, True
        for prefix in ("tensorflow", "keras.ops"):
            for local, qualified in names.module_scope.aliases.items():
                if {q.replace("tensorflow.keras", "keras") for q in qualified} == {prefix}:
                    casted = self._cast_for(cst.Name(local), frozenset({prefix}), value)
                    return (casted, False) if casted is not None else None
        return None

    def _cast_for(self, prefix: cst.BaseExpression, resolved: FrozenSet[str],
                  value: cst.BaseExpression) -> Optional[cst.Call]:
        text = self.ctx.module.code_for_node(prefix)
        if resolved == {"tensorflow"}:
            return cast(value, f"{text}.cast", cst.parse_expression(f"{text}.float32"))
        if resolved == {"keras.ops"}:
            quote = '"' if self.ctx.text.count('"') >= self.ctx.text.count("'") else "'"
            return cast(value, f"{text}.cast", string("float32", quote))
        return None


def _layer_name(layer: LayerProducer) -> str:
    """``Reshape`` for a Keras layer, the class's own name for a project's."""
    if layer.layer_class:
        return min(layer.layer_class).rpartition(".")[2]
    func = layer.constructor.func
    return func.value if isinstance(func, cst.Name) else "layer"


def float32_keyword_fix(call: cst.Call, ctx: Context) -> cst.Call:
    """The layer constructor with ``dtype='float32'`` (quotes as the call has them)."""
    return float32_dtype(call, ctx)


def output_layer_fix(found: SixteenBitOutput, ctx: Context) -> Optional[Fix]:
    """``dtype='float32'`` on the output layer: safe when the layer followed the
    policy, unsafe when it replaces a 16-bit dtype the code spelled out. A Lambda or
    custom layer gets :func:`custom_layer_fix`. No fix where the tensor reaches the output
    through a pass-through layer class: it casts a float32 input back to 16 bits."""
    if ctx.get(ModelOutputs).recast_after(found.producer):
        return None
    if found.custom is not None and found.dtype == ABSENT:
        assert isinstance(found.producer, LayerProducer)
        return custom_layer_fix(found.custom, found.producer, found.output, ctx)
    assert isinstance(found.producer, LayerProducer)  # the rules fix only output layers here
    if is_classifier_application(found.producer.layer_class):
        return None  # its constructor takes no dtype: the head is rebuilt by hand
    call = found.producer.constructor
    if keyword_only(call, "dtype") is not None and found.dtype == ABSENT:
        return None  # ``dtype=dtype`` left None by this call: the float32 belongs at the call site
    safe = found.dtype == ABSENT and not built_for_other_calls(found.producer, ctx)
    replacements: Dict[cst.CSTNode, cst.CSTNode] = {call: float32_keyword_fix(call, ctx)}
    for layer in found.kept_by:  # each would cast the float32 probabilities back to 16 bits
        replacements[layer.constructor] = float32_keyword_fix(layer.constructor, ctx)
        # a project layer's ``__init__`` may not take a dtype: the user checks that one
        safe = safe and bool(layer.layer_class) and not built_for_other_calls(layer, ctx)
    return Fix(replacements, safety=Safety.SAFE if safe else Safety.UNSAFE)


def built_for_other_calls(layer: LayerProducer, ctx: Context) -> bool:
    """The layer is built in a function the output reaches through one of several calls
    (``block(x, "softmax")`` beside ``block(x, "relu")``, a method): float32 there
    changes the layer every call builds, not only the output's."""
    for frame in layer.location.context:
        if frame.entry:
            continue  # a call of the model's builder: the layer is its head in each
        func = frame.call.func
        if isinstance(func, cst.Call):
            continue  # the closure a factory call returned: that call's frame decides
        if isinstance(func, cst.Name):
            calls = len(ctx.scopes.calls.get(func.value, ()))
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            calls = ctx.get(ModelOutputs).method_calls(func.attr.value)
        else:
            return True
        if calls > 1:
            return True
    return False

