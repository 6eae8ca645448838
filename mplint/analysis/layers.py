"""What a Keras layer constructor call says about its dtype and activation."""

from __future__ import annotations

from typing import FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.flag_defaults import FlagDefaults
from mplint.analysis.models import LayerProducer, ModelOutputs, Producer
from mplint.analysis.references import References
from mplint.rule.check import Context
from mplint.semantic.scopes import Location, Scope, function_key
from mplint.semantic.call_args import keyword_only, positional_or_keyword
from mplint.semantic.vocabulary import (
    ACTIVATION_FIRST_LAYERS, ACTIVATION_SECOND_LAYERS, FLOAT32_NAMES, LAYER_CLASSES, LINEAR_ACTIVATIONS,
    MIXED_POLICIES, NOT_FLOAT_COMPUTE_LAYERS, SIGMOID_FUNCTIONS, SIXTEEN_BIT_NAMES, SOFTMAX_FUNCTIONS, SOFTMAX_LAYERS,
    VALUE_KEEPING_LAYERS,
)


ABSENT = "absent"
UNKNOWN_DTYPE = "unknown"


def is_keras_layer(layer: LayerProducer) -> bool:
    return any(name.startswith("keras.layers.") for name in layer.layer_class)


#: a ``**spread`` argument whose keys cannot be read: any keyword may be in it
_ANY_KEYWORD = cst.Name("__any_keyword__")


def spread_keyword(layer: LayerProducer, keyword: str) -> Optional[cst.BaseExpression]:
    """``keyword``'s value in the ``**spread`` arguments of the constructor
    (``Dense(10, **head_kwargs)`` with ``head_kwargs = {"activation": "softmax"}``): the
    value, None when no spread holds it, _ANY_KEYWORD when a spread cannot be read (a
    ``**kwargs`` parameter, a dict built at run time)."""
    found: Optional[cst.BaseExpression] = None
    for arg in layer.constructor.args:
        if arg.star != "**":
            continue
        spread = arg.value
        if isinstance(spread, cst.Name):
            binding = layer.location.lookup(spread.value)
            spread = binding.value if binding is not None and binding.kind == "assign" and binding.value else spread
        if _is_dict_call(spread, layer):  # ``dict(activation="softmax", name="probs")``
            assert isinstance(spread, cst.Call)
            for entry in spread.args:
                if entry.keyword is None:
                    return _ANY_KEYWORD
                if entry.keyword.value == keyword:
                    found = entry.value
            continue
        if not isinstance(spread, cst.Dict):
            return _ANY_KEYWORD
        for element in spread.elements:
            if not isinstance(element, cst.DictElement):
                return _ANY_KEYWORD  # ``{**other}``
            if not isinstance(element.key, cst.SimpleString):
                return _ANY_KEYWORD
            if element.key.evaluated_value == keyword:
                found = element.value
    return found


def _is_dict_call(expr: cst.BaseExpression, layer: LayerProducer) -> bool:
    """The builtin ``dict(...)`` (not a name the program binds)."""
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "dict" \
        and layer.location.lookup("dict") is None


def layer_argument(layer: LayerProducer, position: Optional[int],
                   keyword: str) -> Optional[Tuple[cst.BaseExpression, Location]]:
    """An argument of the layer's construction and where to read it: the call's own
    (in a ``**spread`` too), else one its ``functools.partial`` binds ahead
    (``partial(Dense, activation=...)``)."""
    call, preset = layer.constructor, layer.preset
    bound = [arg for arg in preset[0].args[1:] if arg.keyword is None] if preset is not None else []
    own = keyword_only(call, keyword)
    if own is None and position is not None and position >= len(bound):
        own = positional_or_keyword(call, position - len(bound), keyword)
    if own is None:
        own = spread_keyword(layer, keyword)  # _ANY_KEYWORD when a spread cannot be read
    if own is not None:
        return own, layer.location
    if preset is None:
        return None
    early = bound[position].value if position is not None and position < len(bound) else None
    found = early if early is not None else keyword_only(preset[0], keyword)
    return None if found is None else (found, preset[1])


def layer_dtype(layer: LayerProducer, ctx: Context) -> str:
    """"float32"-like name, a 16-bit name, ABSENT (no dtype argument) or UNKNOWN_DTYPE."""
    argument = layer_argument(layer, None, "dtype")
    if argument is None:
        return ABSENT
    expr, where = argument
    if expr is _ANY_KEYWORD:
        return UNKNOWN_DTYPE
    if isinstance(expr, cst.Name) and expr.value == "None":
        return ABSENT
    found = ctx.values.values(expr, where)
    if found == frozenset({None}):
        return ABSENT  # ``dtype=dtype`` whose value here is the parameter's None
    if found is None or len(found) != 1:
        return UNKNOWN_DTYPE
    value = next(iter(found))
    return str(value) if isinstance(value, str) else UNKNOWN_DTYPE


def computes_in_float32(layer: LayerProducer, ctx: Context) -> Optional[bool]:
    """True when the layer computes in float32, False when 16-bit, None when unknown.

    Without a dtype argument the layer follows the global policy: False here, since
    callers only ask under a mixed policy.
    """
    dtype = layer_dtype(layer, ctx)
    if dtype == ABSENT:
        return False
    if dtype == UNKNOWN_DTYPE:
        return None
    if dtype in FLOAT32_NAMES:
        return True
    if dtype in SIXTEEN_BIT_NAMES:
        return False
    return None


def activation_argument(layer: LayerProducer) -> Optional[Tuple[cst.BaseExpression, Location]]:
    """The activation the layer is built with, and where to read it."""
    if layer.layer_class & ACTIVATION_FIRST_LAYERS:
        found = layer_argument(layer, 0, "activation")
    elif layer.layer_class & ACTIVATION_SECOND_LAYERS:
        found = layer_argument(layer, 1, "activation")
    else:
        found = layer_argument(layer, None, "activation")
    return None if found is None or found[0] is _ANY_KEYWORD else found


def activation_expr(layer: LayerProducer) -> Optional[cst.BaseExpression]:
    found = activation_argument(layer)
    return None if found is None else found[0]


def is_softmax_value(expr: cst.BaseExpression, ctx: Context, layer: LayerProducer,
                     where: Optional[Location] = None) -> bool:
    """``expr`` (read at ``where``, else where the layer is built) is softmax on every path."""
    if ctx.names.resolve(expr) & SOFTMAX_FUNCTIONS:
        return True
    loc = where or layer.location
    found = ctx.values.values(expr, loc)
    if found is None and FlagDefaults in ctx.analyses:  # ``activation=args.activation``, ``--activation softmax``
        flag = ctx.get(FlagDefaults).default_of(expr, loc)
        found = None if flag is None else ctx.values.values(flag[0], flag[1])
    return found is not None and found == frozenset({"softmax"})


def is_softmax_layer(layer: LayerProducer, ctx: Context) -> bool:
    """A Softmax layer, ``Activation('softmax')`` or any layer with ``activation=softmax``."""
    if layer.layer_class & SOFTMAX_LAYERS:
        return True
    found = activation_argument(layer)
    return found is not None and is_softmax_value(found[0], ctx, layer, found[1])


def is_sigmoid_layer(layer: LayerProducer, ctx: Context) -> bool:
    """A layer built with ``activation='sigmoid'`` (or ``tf.nn.sigmoid``) on every path:
    its output is probabilities, as a softmax's are."""
    found = activation_argument(layer)
    if found is None:
        return False
    expr, where = found
    return bool(ctx.names.resolve(expr) & SIGMOID_FUNCTIONS) \
        or ctx.values.values(expr, where) == frozenset({"sigmoid"})


def keeps_values(layer: LayerProducer, ctx: Context) -> bool:
    """A layer that only moves or keeps its input's values (Reshape, Flatten, Dropout,
    Identity, a linear Activation) in the 16-bit compute dtype. A float32 or unreadable
    dtype is a cast, or may be: it ends the softmax's way to the output."""
    if layer.layer_class & ACTIVATION_FIRST_LAYERS:
        found = activation_argument(layer)
        values = None if found is None else ctx.values.values(*found)
        if not values or not values <= LINEAR_ACTIVATIONS:
            return False
    elif not layer.layer_class & VALUE_KEEPING_LAYERS and not returns_its_input(layer, ctx):
        return False
    return computes_in_float32(layer, ctx) is False


def returns_its_input(layer: LayerProducer, ctx: Context) -> bool:
    """A Keras layer class of the file whose ``call`` only returns its input (a project's
    ``Identity``, a hook or a name tag): Keras autocasts the input, nothing else changes."""
    func = layer.constructor.func
    binding = layer.location.lookup(func.value) if isinstance(func, cst.Name) else None
    classdef = binding.node if binding is not None and binding.kind == "class" else None
    if not isinstance(classdef, cst.ClassDef) \
            or not any(ctx.names.resolve(base.value) & LAYER_CLASSES for base in classdef.bases):
        return False
    call = next((s for s in classdef.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "call"), None)
    if call is None or len(call.params.params) < 2 or not isinstance(call.body, cst.IndentedBlock):
        return False
    statements = [s for s in call.body.body if not _is_docstring(s)]
    if len(statements) != 1 or not isinstance(statements[0], cst.SimpleStatementLine):
        return False
    returned = statements[0].body[0]
    return isinstance(returned, cst.Return) and isinstance(returned.value, cst.Name) \
        and returned.value.value == call.params.params[1].name.value


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Expr) \
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


#: value-keeping layers followed down from an output, at most
_MAX_KEPT = 8


def under_kept_values(expression: cst.BaseExpression, producer: Optional[Producer], models: ModelOutputs,
                      ctx: Context) -> Optional[Tuple[Producer, Tuple[LayerProducer, ...]]]:
    """What computes the tensor a model output's value-keeping layers pass on
    (``Reshape(...)(Activation("softmax")(x))``: the Activation), and those layers, the
    output's first; None when the output is no such layer or the tensor under them is not
    one known tensor. Only layers built where they are called are followed
    (``Reshape(shape)(x)``): the call's input is then read where the layer is built."""
    kept: List[LayerProducer] = []
    while isinstance(producer, LayerProducer) and keeps_values(producer, ctx) and len(kept) < _MAX_KEPT:
        if not isinstance(expression, cst.Call) or expression.func is not producer.constructor:
            return None
        first = positional_or_keyword(expression, 0, "inputs")
        tensors = [] if first is None else models.tensors(first, producer.location)
        if len(tensors) != 1 or tensors[0][1] is None:
            return None
        kept.append(producer)
        expression, producer = tensors[0]
    if not kept or producer is None:
        return None
    return producer, tuple(kept)


def sixteen_bit_name(names: FrozenSet[str]) -> str:
    """How to name the compute dtype in messages for these mixed policies."""
    if names == frozenset({"mixed_bfloat16"}):
        return "bfloat16"
    if names == frozenset({"mixed_float16"}):
        return "float16"
    return "float16/bfloat16"


def computes_under_policy(layer: LayerProducer) -> bool:
    """A Keras layer whose float output follows its dtype policy (Dense, Conv,
    Activation, pooling...), not a preprocessing/lookup layer or a Lambda."""
    if not is_keras_layer(layer) or layer.layer_class & NOT_FLOAT_COMPUTE_LAYERS:
        return False
    return not any(
        ".preprocessing." in name or name.startswith("keras.layers.Random")
        for name in layer.layer_class
    )


def built_under_float32_policy(layer: LayerProducer, ctx: Context) -> bool:
    """The global policy is certainly float32 where this layer is constructed.

    Layers take the global policy when they are built, so a float32 policy set
    just before the output layer (in the same scope), or a module-level layer built
    before the module ever sets a policy, computes in float32 even in a module that
    is mixed elsewhere.
    """
    facts = ctx.facts
    where = layer.location
    earlier = [c for c in facts.policy_calls
               if c.location.scope is where.scope and c.location.order < where.order]
    if earlier:
        last = max(earlier, key=lambda c: c.location.order)
        return last.values is not None and not (last.values & MIXED_POLICIES)
    if where.scope.kind == "module":
        return facts.runs_before_policies(where)
    if facts.assumed_policy in MIXED_POLICIES or facts.project_policies or not facts.policy_calls \
            or any(c.location.scope.kind != "module" for c in facts.policy_calls):
        return False
    return _runs_only_before(where.scope, min(c.location.order for c in facts.policy_calls), ctx)


def _runs_only_before(scope: Scope, first: int, ctx: Context, seen: Optional[Set[str]] = None) -> bool:
    """The code of a function or class defined at the top of the module runs only before
    the module's first policy call: the program model follows no policy into it, and
    this file defines it before that call and names it only in direct calls made before
    it at top level or in functions that themselves run only before it, or never (a
    notebook that builds its models, then turns to mixed precision in a later cell)."""
    reached = ctx.facts.program_reached
    if reached is None or function_key(scope) in reached:
        return False
    top = _top_level(scope)
    name = getattr(getattr(top.node, "name", None), "value", None)
    if top.kind not in ("function", "class") or not isinstance(name, str) or top.parent is None:
        return False
    seen = set() if seen is None else seen
    if name in seen:
        return True  # recursion: the outer question decides
    seen.add(name)
    bindings = top.parent.bindings.get(name, [])
    if not bindings or any(b.order > first for b in bindings):
        return False  # defined (or redefined) after the policy: it runs under it if ever
    for ref in ctx.get(References).get(name):
        where = ref.location
        if not ref.called or ref.store:
            return False  # passed on or rebound: whoever holds it may call it later
        if where.scope.kind == "module":
            if where.order > first:
                return False
        elif not _runs_only_before(where.scope, first, ctx, seen):
            return False
    return True


def _top_level(scope: Scope) -> Scope:
    """The function or class defined at the module's top level that holds ``scope``."""
    while scope.parent is not None and scope.parent.kind != "module":
        scope = scope.parent
    return scope
