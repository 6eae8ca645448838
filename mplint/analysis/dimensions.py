"""Aligned dimensions: which argument of which call sets a Tensor Core GEMM size.

Under a mixed policy, float16 matrix multiplies and convolutions run on Tensor
Cores efficiently only when their sizes are multiples of 8 (MP301-MP304). This
analysis finds, in one walk, every argument that sets such a size (a layer's
units or filters, a batch size) and, after the walk, traces each one back to the
integer literals it may hold: inline, through constants, parameter defaults and
the arguments of calls in this module. It also tells output layers (whose size the
data fixes) from hidden ones, and whether a literal may be rounded without
touching anything but aligned dimensions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from mplint.analysis.custom_layers import CustomLayers
from mplint.analysis.flag_defaults import FlagDefaults
from mplint.analysis.imported_batches import batched_parameter
from mplint.analysis.imported_layers import imported_partial
from mplint.analysis.layers import activation_expr, computes_in_float32, is_softmax_value
from mplint.analysis.models import LayerProducer, ModelOutputs, OpProducer, Producer
from mplint.analysis.module_constants import imported_constant, imported_elements
from mplint.analysis.references import References
from mplint.core.find_nodes import find_all
from mplint.rule.check import Analysis, Context
from mplint.semantic.call_args import keyword_only, positional_or_keyword
from mplint.semantic.conditions import Conditions
from mplint.semantic.scopes import (
    Binding, Branches, Location, Scope, attributes_of, calls_of, class_attribute, instance_class, subclasses_in_file,
)
from mplint.semantic.config_objects import FROM_CALL, field_assigned, field_source, is_config_class
from mplint.semantic.values import Evaluator, argument_for, is_constant
from mplint.semantic.vocabulary import (
    ANY_MODEL_CLASSES, DATASET_FACTORIES, DATASET_METHODS, DATASET_ONLY_METHODS, EINSUM_DENSE,
    INTERNAL_SIZE_LAYERS, LAYER_WRAPPERS, PARTIALS, RESHAPES, SHAPE_OPS, SIGMOID_FUNCTIONS, SIZE_KEEPING_LAYERS,
    WRAPPED_LAYER_PARAMETER,
    makes_dataset, names_tensorflow,
)

UNITS, FILTERS, BATCH, VOCABULARY = "units", "filters", "batch", "vocabulary"


@dataclass(frozen=True)
class Parameter:
    """A constructor argument that is a dimension: its kind, position and keyword."""

    kind: str
    position: Optional[int]  # None: keyword-only
    keyword: str


def _table() -> Dict[str, Tuple[Parameter, ...]]:
    units = (Parameter(UNITS, 0, "units"),)
    filters = (Parameter(FILTERS, 0, "filters"),)
    table: Dict[str, Tuple[Parameter, ...]] = {
        "keras.layers.Dense": units,
        # Embedding(input_dim, output_dim): output_dim feeds the next matmul; the
        # vocabulary (input_dim) is a table lookup, recorded only so that padding a
        # vocabulary constant counts as a use that may grow with it (MP304).
        "keras.layers.Embedding": (Parameter(UNITS, 1, "output_dim"), Parameter(VOCABULARY, 0, "input_dim")),
        # MultiHeadAttention(num_heads, key_dim, value_dim): per-head sizes of the
        # score and value matmuls. num_heads is not a GEMM dimension.
        "keras.layers.MultiHeadAttention": (Parameter(UNITS, 1, "key_dim"), Parameter(UNITS, 2, "value_dim")),
        # GroupQueryAttention(head_dim, num_query_heads, num_key_value_heads)
        "keras.layers.GroupQueryAttention": (Parameter(UNITS, 0, "head_dim"),),
        "keras.Input": (Parameter(BATCH, 1, "batch_size"),),
        "keras.layers.InputLayer": (Parameter(BATCH, 1, "batch_size"),),
    }
    for rnn in ("LSTM", "GRU", "SimpleRNN", "LSTMCell", "GRUCell", "SimpleRNNCell", "CuDNNLSTM", "CuDNNGRU"):
        # Bidirectional/RNN/TimeDistributed wrap a layer built by its own call,
        # which is found here like any other: the wrappers need no entry.
        table[f"keras.layers.{rnn}"] = units
    for conv in ("Conv", "Convolution"):
        for dims in ("1D", "2D", "3D"):
            table[f"keras.layers.{conv}{dims}"] = filters
            table[f"keras.layers.{conv}{dims}Transpose"] = filters
            table[f"keras.layers.Separable{conv}{dims}"] = filters
    for dims in ("1D", "2D", "3D"):
        table[f"keras.layers.ConvLSTM{dims}"] = filters
    # DepthwiseConv*D has no filters: its channels follow its input.
    for fn in DATASET_FACTORIES:
        table[fn] = (Parameter(BATCH, None, "batch_size"),)
    for fn in ("make_csv_dataset", "make_batched_features_dataset"):
        table[f"tensorflow.data.experimental.{fn}"] = (Parameter(BATCH, 1, "batch_size"),)
    return table


LAYER_DIMENSIONS = _table()
#: Model methods whose ``batch_size`` runs the model, with its positional index
MODEL_METHODS = {"fit": 2, "evaluate": 2, "predict": 1}

#: names that say a size is fixed by the data (class or vocabulary counts, outputs)
DATA_NAME = re.compile(r"class|label|categor|vocab|token|target|output|n_out|num_out", re.IGNORECASE)
#: layer names, and names of the variable or attribute a layer or its result is
#: assigned to, that say a layer is a model's output (``logits = Dense(10)(x)``)
OUTPUT_LAYER_NAME = re.compile(r"logit|output|predict|classif|prob", re.IGNORECASE)

#: sizes below this (a score, a box, colour channels) are set by the task, not tuned
TASK_SIZE_LIMIT = 8

_MAX_DEPTH = 12
#: an expression a parameter may be bound to, where, and the call passing it (None: the default)
_Source = Tuple[cst.BaseExpression, Location, Optional[cst.Call]]


@dataclass
class DimensionSite:
    """One argument that sets an aligned dimension."""

    kind: str
    owner: str  # what it sizes, for messages: "Dense units", "fit batch_size"
    call: cst.Call
    expr: cst.BaseExpression  # the argument (or tuple element) itself
    location: Location
    layer_class: FrozenSet[str] = frozenset()
    #: where to report a value written outside ``call`` (a partial's literal: at the
    #: call that builds the layer), None for ``expr`` itself
    at: Optional[cst.CSTNode] = None
    #: the layer's arguments when ``call`` is not the constructor itself: a
    #: ``functools.partial(layers.Dense, ...)`` called later, its arguments merged
    arguments: Optional[cst.Call] = None
    #: where ``expr`` is written when not at ``location`` (a ``**spread`` dict's entry)
    written: Optional[Location] = None
    #: where another module's partial writes ``expr`` (``blocks.py:6``): a literal read
    #: there, which this file cannot round
    foreign: Optional[str] = None

    @property
    def constructor(self) -> cst.Call:
        """The call whose arguments configure the layer (dtype, activation, name)."""
        return self.arguments if self.arguments is not None else self.call


@dataclass(frozen=True)
class DimensionValue:
    """One value a site may take, and where it is written down.

    ``literal`` is the integer literal that holds it (None when computed);
    ``chain`` the constants and parameters it went through, nearest the site first;
    ``entry`` the argument of the call that passed it into a helper, if any (the
    place a reader changes it, so the finding points there).
    """

    value: int
    literal: Optional[cst.Integer] = None
    chain: Tuple[Binding, ...] = ()
    entry: Optional[cst.BaseExpression] = None
    computed: Optional[cst.BaseExpression] = None  # the expression, when arithmetic
    via: Optional[cst.Call] = None  # the call that passes ``entry``
    #: the ``if`` arms that bind it (``num_units = 500`` on the GPU branch)
    branches: Branches = ()
    #: where a value read from outside this file's expressions comes from
    #: (``config.HIDDEN``, ``default of --batch-size``)
    source: Optional[str] = None


class AlignedDimensions(Analysis):
    """Collects dimension sites during the walk; traces their values afterwards."""

    requires = (ModelOutputs, References, FlagDefaults)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._sites: List[DimensionSite] = []
        #: ``.batch`` calls on no pipeline the walk could see: judged again once it has
        #: seen every call (a parameter's callers may come after its function)
        self._pending: List[Tuple[cst.Call, Location]] = []
        self._evaluator: Optional[Evaluator] = None
        self._outputs: Optional[Set[int]] = None
        #: per scope node: the integer literals written in its reshape targets
        self._reshaped: Dict[int, Tuple[cst.CSTNode, FrozenSet[int]]] = {}
        self._refs: Optional[Dict[str, List[Tuple[cst.Name, Tuple[cst.CSTNode, ...]]]]] = None
        self._by_expr: Optional[Dict[int, DimensionSite]] = None
        self._call_args: Optional[Dict[int, Tuple[Binding, Location]]] = None
        #: ``Layer(...)(x)`` applications by the constructor they call
        self._applied: Dict[int, List[Tuple[cst.Call, Location]]] = {}
        #: canonical classes of the layer constructors seen (resolved during the walk,
        #: while function-local imports are still visible)
        self._classes: Dict[int, FrozenSet[str]] = {}
        #: the name a constructor (or the tensor it computes) is assigned to
        self._assigned: Dict[int, str] = {}
        #: Dataset batch calls batched (or unbatched) again downstream
        self._rebatched: Set[int] = set()
        #: calls of functions of other modules: a dataset factory's batch size is its argument
        self._factory_calls: List[Tuple[cst.Call, Location]] = []
        #: layer constructors whose dimension only a ``**spread`` may hold
        #: (``Conv2D(**CONV)``): read once the walk has seen every binding
        self._spread: List[Tuple[Parameter, str, cst.Call, FrozenSet[str], Location]] = []

    @property
    def sites(self) -> List[DimensionSite]:
        """Every dimension site (asked after the walk)."""
        spread, self._spread = self._spread, []
        for param, owner, call, resolved, at in spread:
            found = self.evaluator.spread_argument(call, param.keyword, at)
            if found is not None:  # reported at the constructor: the dict may serve several
                self._sites.append(DimensionSite(param.kind, owner, call, found[0], at, resolved, at=call,
                                                 written=found[1]))
        factories, self._factory_calls = self._factory_calls, []
        for node, at in factories:
            batched = batched_parameter(self.ctx, node.func, AlignedDimensions, BATCH)
            expr = None if batched is None else positional_or_keyword(node, batched.index, batched.name)
            if batched is not None and expr is not None:  # ``make_dataset(pattern, FLAGS.batch_size)``
                self._sites.append(DimensionSite(BATCH, f"{batched.where} {batched.name}",
                                                 node, expr, at))
        pending, self._pending = self._pending, []
        for node, loc in pending:
            upstream: List[cst.Call] = []
            assert isinstance(node.func, cst.Attribute)
            if self._pipeline(node.func.value, loc, 0, upstream, params=True):
                self._rebatched.update(id(call) for call in upstream)
                expr = positional_or_keyword(node, 0, "batch_size")
                if expr is not None:
                    self._sites.append(DimensionSite(BATCH, "Dataset.batch batch_size", node, expr, loc))
        return self._sites

    # -- collection (during the walk) ------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.value, cst.Call):
            return
        target = node.targets[0].target
        name = target.value if isinstance(target, cst.Name) else (
            target.attr.value if isinstance(target, cst.Attribute) else None)
        if name is None:
            return
        call = node.value
        self._assigned[id(call)] = name
        if isinstance(call.func, cst.Call):  # logits = Dense(10)(x)
            self._assigned[id(call.func)] = name

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Call):
            self._applied.setdefault(id(func), []).append((node, self.ctx.scopes.location()))
        elif isinstance(func, cst.Attribute):
            self._method_call(node, func)
        resolved = self.ctx.names.resolve(func)
        if not resolved:
            self._partial_call(node)
            return
        if any(name.startswith("keras.layers.") for name in resolved):
            self._classes[id(node)] = resolved
        for name in resolved:
            params = LAYER_DIMENSIONS.get(name)
            if params is not None:
                short = name.rsplit(".", 1)[-1]
                for param in params:
                    expr = keyword_only(node, param.keyword) if param.position is None \
                        else positional_or_keyword(node, param.position, param.keyword)
                    if expr is not None:
                        self._add(param.kind, f"{short} {param.keyword}", node, expr, resolved)
                    elif any(arg.star == "**" for arg in node.args):
                        self._spread.append((param, f"{short} {param.keyword}", node, resolved,
                                             self.ctx.scopes.location()))
                return
        if resolved & EINSUM_DENSE:
            expr = self._einsum_output(node)
            if expr is not None:
                self._add(UNITS, "EinsumDense output dimension", node, expr, resolved)
        elif not names_tensorflow(resolved):
            self._imported_partial_call(node)
            if node.args:  # a dataset factory of another module, batching by its argument (read after the walk)
                self._factory_calls.append((node, self.ctx.scopes.location()))

    def _add(self, kind: str, owner: str, call: cst.Call, expr: cst.BaseExpression,
             resolved: FrozenSet[str] = frozenset(), arguments: Optional[cst.Call] = None) -> None:
        self._sites.append(DimensionSite(kind, owner, call, expr, self.ctx.scopes.location(), resolved,
                                        arguments=arguments))

    def _partial_call(self, node: cst.Call) -> None:
        """``Hidden()`` where ``Hidden = functools.partial(layers.Dense, 100)``: the
        layer's arguments are the partial's, then the call's (keywords of the call win)."""
        if not isinstance(node.func, cst.Name):
            return
        binding = self.ctx.scopes.location().lookup(node.func.value)
        if binding is None or binding.kind != "assign" or not isinstance(binding.value, cst.Call) \
                or binding.scope is None or len(binding.scope.bindings.get(binding.name, ())) != 1:
            return
        partial = binding.value
        if not self.ctx.names.resolve(partial.func) & PARTIALS or not partial.args \
                or partial.args[0].keyword is not None or partial.args[0].star:
            return
        layer = partial.args[0].value
        resolved = self.ctx.names.resolve(layer)
        params = next((LAYER_DIMENSIONS[name] for name in resolved if name in LAYER_DIMENSIONS), None)
        if params is None or any(a.star for a in (*partial.args, *node.args)):
            return
        where = binding.location()
        self._preset_call(node, layer, partial.args[1:], resolved, params,
                          lambda kind, what, expr, merged: DimensionSite(
                              kind, what, node, expr, where, resolved, node, merged))  # traced where the partial is made

    def _imported_partial_call(self, node: cst.Call) -> None:
        """``HiddenDense()`` with ``HiddenDense = functools.partial(layers.Dense, 100)`` in
        another module of the project: the partial's literal arguments (read there), then
        the call's, configure the layer built here; a size the partial presets is reported
        at this call, naming where the partial is written."""
        if not isinstance(node.func, (cst.Name, cst.Attribute)) or any(a.star for a in node.args):
            return
        preset = imported_partial(self.ctx, node.func, CustomLayers)
        if preset is None:
            return
        resolved, preset_args, written = preset
        params = next((LAYER_DIMENSIONS[name] for name in resolved if name in LAYER_DIMENSIONS), None)
        if params is None:
            return
        where = self.ctx.scopes.location()
        self._preset_call(node, node.func, preset_args, resolved, params,
                          lambda kind, what, expr, merged: DimensionSite(
                              kind, what, node, expr, where, resolved, node, merged, foreign=written))

    def _preset_call(self, node: cst.Call, layer: cst.BaseExpression, preset: Sequence[cst.Arg],
                     resolved: FrozenSet[str], params: Sequence[Parameter],
                     preset_site: Callable[[str, str, cst.BaseExpression, cst.Call], DimensionSite]) -> None:
        """A layer built by calling a partial: its preset arguments, then the call's
        (keywords of the call win), configure the layer; a size the partial presets is
        a site made by ``preset_site``, one the call passes is judged here."""
        positional = [a for a in (*preset, *node.args) if a.keyword is None]
        given = {a.keyword.value for a in node.args if a.keyword is not None}
        keywords = [a for a in preset if a.keyword is not None and a.keyword.value not in given]
        keywords += [a for a in node.args if a.keyword is not None]
        merged = cst.Call(func=layer, args=[*positional, *keywords])
        self._classes[id(node)] = resolved
        short = next(name for name in resolved if name in LAYER_DIMENSIONS).rsplit(".", 1)[-1]
        for param in params:
            expr = keyword_only(merged, param.keyword) if param.position is None \
                else positional_or_keyword(merged, param.position, param.keyword)
            if expr is None:
                continue
            if any(expr is a.value for a in preset):
                self._sites.append(preset_site(param.kind, f"{short} {param.keyword}", expr, merged))
            else:
                self._add(param.kind, f"{short} {param.keyword}", node, expr, resolved, merged)

    def _method_call(self, node: cst.Call, func: cst.Attribute) -> None:
        method = func.attr.value
        if method in MODEL_METHODS:
            # The keyword is unambiguous; a positional batch size only counts when
            # the receiver is plainly a Keras model built in this file.
            expr = keyword_only(node, "batch_size")
            if expr is None and self._is_model(func.value):
                expr = positional_or_keyword(node, MODEL_METHODS[method], "batch_size")
            if expr is not None:
                self._add(BATCH, f"{method} batch_size", node, expr)
        elif method in ("batch", "padded_batch", "unbatch"):
            upstream: List[cst.Call] = []
            is_dataset = self._pipeline(func.value, self.ctx.scopes.location(), 0, upstream)
            if is_dataset or method != "batch":
                self._rebatched.update(id(call) for call in upstream)
            if method == "batch" and not is_dataset:
                self._pending.append((node, self.ctx.scopes.location()))  # a parameter's, maybe
            if method == "unbatch" or not (is_dataset or method == "padded_batch"):
                return
            expr = positional_or_keyword(node, 0, "batch_size")
            if expr is not None:
                self._add(BATCH, f"Dataset.{method} batch_size", node, expr)

    def _is_model(self, expr: cst.BaseExpression) -> bool:
        if not isinstance(expr, cst.Name):
            return False
        binding = self.ctx.scopes.location().lookup(expr.value)
        return (
            binding is not None and binding.kind == "assign" and isinstance(binding.value, cst.Call)
            and bool(self.ctx.names.resolve(binding.value.func) & ANY_MODEL_CLASSES)
        )

    def _pipeline(self, expr: cst.BaseExpression, loc: Location, depth: int, upstream: List[cst.Call],
                  params: bool = False) -> bool:
        """Whether ``expr`` is a tf.data pipeline (Dataset methods on a tf.data source).
        ``params``: a parameter is one when its callers' arguments are (once the walk
        has seen every call).

        Collects the ``batch`` calls found upstream into ``upstream``: a pipeline
        batched twice (``ids.batch(seq_len + 1)`` ... ``.batch(64)``) forms sequences
        with its first batch, and only its last one is the training batch.
        """
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, cst.Name):
            binding = loc.lookup(expr.value)
            if binding is not None and binding.kind == "param" and params:
                # ``def train(model, ds): model.fit(ds.batch(60))``: a pipeline when every
                # caller in reach hands one (a caller's array or an unknown value: not)
                sources = self.evaluator.param_sources(binding)
                return bool(sources) and all(self._pipeline(source, where, depth + 1, [], params)
                                             for source, where, _ in sources or ())
            if binding is None or binding.kind != "assign" or binding.value is None or binding.scope is None:
                return False
            return self._pipeline(binding.value, binding.location(), depth + 1, upstream, params)
        if not isinstance(expr, cst.Call):
            return False
        if any(makes_dataset(name) for name in self.ctx.names.resolve(expr.func)):
            return True
        func = expr.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in DATASET_METHODS:
            return False
        if func.attr.value in ("batch", "padded_batch"):
            upstream.append(expr)
        found = self._pipeline(func.value, loc, depth + 1, upstream, params)
        return found or func.attr.value in DATASET_ONLY_METHODS

    def _einsum_output(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        """The output_shape entry of EinsumDense that is the kernel's own dimension.

        Only the plain forms are read: an equation without an ellipsis (output_shape
        then leaves out the batch axis) or with a leading one, and exactly one output
        axis that comes from the kernel alone. Anything else stays silent.
        """
        equation = positional_or_keyword(call, 0, "equation")
        shape = positional_or_keyword(call, 1, "output_shape")
        if equation is None or shape is None:
            return None
        text = self.ctx.values.value(equation, self.ctx.scopes.location())
        if not isinstance(text, str) or text.count("->") != 1:
            return None
        inputs, output = text.replace(" ", "").split("->")
        if inputs.count(",") != 1:
            return None
        lhs, kernel = inputs.split(",")
        if "..." in kernel or ("..." in output and not output.startswith("...")):
            return None
        letters = output[3:] if output.startswith("...") else output[1:]
        elements: List[cst.BaseExpression]
        if isinstance(shape, (cst.Tuple, cst.List)):
            if any(isinstance(e, cst.StarredElement) for e in shape.elements):
                return None
            elements = [e.value for e in shape.elements]
        else:
            elements = [shape]
        own = [i for i, letter in enumerate(letters) if letter in kernel and letter not in lhs]
        if len(elements) != len(letters) or len(own) != 1:
            return None
        return elements[own[0]]

    # -- values (after the walk) --------------------------------------------------------
    @property
    def evaluator(self) -> Evaluator:
        if self._evaluator is None:
            self._evaluator = Evaluator(self.ctx.names, call_sites=self.ctx.scopes.calls)
            # arithmetic over another module's constants (``int(WIDTH / 3)``) reads them as the file's does
            self._evaluator.imported_literal = self.ctx.values.imported_literal
        return self._evaluator

    def origins(self, site: DimensionSite) -> List[DimensionValue]:
        """The integer values a site may hold; empty when any is unknown."""
        if site.foreign is not None:
            value = site.expr.evaluated_value if isinstance(site.expr, cst.Integer) else None
            return [DimensionValue(value, source=f"set by its functools.partial at {site.foreign}")] \
                if isinstance(value, int) else []
        found = self._trace(site.expr, site.written or site.location, 0)
        return found or []

    def _trace(self, expr: cst.BaseExpression, loc: Location, depth: int) -> Optional[List[DimensionValue]]:
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, cst.Integer):
            value = expr.evaluated_value
            return [DimensionValue(value, literal=expr)] if isinstance(value, int) else None
        if isinstance(expr, cst.Name):
            binding = loc.lookup(expr.value)
            if binding is None:
                return self._from_elsewhere(expr)
            if binding.scope is None:
                return None
            if binding.kind == "param":
                sources = self.evaluator.param_sources(binding)
                if sources is None:
                    clicked = self.ctx.get(FlagDefaults).click_default(binding)
                    return None if clicked is None else self._default(clicked, depth)
                passed = self._passed_elsewhere(binding, sources)
                if passed is None:
                    return None
                sources, out = passed
                for source, where, call in sources:
                    inner = self._trace(source, where, depth + 1)
                    if inner is None:
                        return None
                    for origin in inner:
                        if origin.entry is None and call is not None:
                            origin = replace(origin, entry=source, via=call)
                        out.append(replace(origin, chain=(binding,) + origin.chain))
                return out
            target = _loop_target(binding, expr)
            if target is not None:  # ``for filters, stride in STAGES: Conv2D(filters, 3)``
                return self._loop_values(binding, *target, depth)
            part = _unpacked_part(binding)
            if part is not None:  # ``hidden, depth = 100, 2``
                inner = self._trace(part, binding.location(), depth + 1)
                return None if inner is None else [replace(origin, chain=(binding,) + origin.chain) for origin in inner]
            # A name assigned twice (``BATCH = 64`` then ``if debug: BATCH = 50``)
            # may hold either at run time: only single assignments are traced, and
            # names bound in the arms of one ``if`` (each value with its arm).
            if not is_constant(binding):
                return None
            bindings = [binding]
            if len(binding.scope.bindings.get(binding.name, [])) != 1:
                bindings = loc.reaching(expr.value)
                if not _arms_of_one_if(bindings) or not all(is_constant(b) for b in bindings):
                    return None
            out = []
            for bound in bindings:
                assert bound.value is not None and bound.scope is not None
                inner = self._trace(bound.value, bound.location(), depth + 1)
                if inner is None:
                    return None
                out += [replace(origin, chain=(bound,) + origin.chain, branches=bound.branches + origin.branches)
                        for origin in inner]
            return out
        if isinstance(expr, cst.Subscript):
            return self._dict_entry(expr, loc, depth)
        if isinstance(expr, cst.Attribute):
            flag = self.ctx.get(FlagDefaults).default_of(expr, loc)
            if flag is not None:
                return self._default(flag, depth)
            field_values = self._dataclass_field(expr, loc)
            if field_values is not None:  # ``cfg = ModelConfig()`` then ``Dense(cfg.hidden)``
                out = []
                for field_expr, where, instance, call in field_values:
                    inner = self._trace(field_expr, where, depth + 1)
                    if inner is None:
                        return None
                    out += [replace(o, chain=(instance,) + o.chain, entry=o.entry or (field_expr if call else None),
                                    via=o.via or call) for o in inner]
                return out
            attribute = self._own_attribute(expr, loc)
            if attribute is not None:  # ``self.width = width`` once, then ``Dense(self.width)``
                assert attribute.value is not None
                inner = self._trace(attribute.value, attribute.location(), depth + 1)
                return None if inner is None else [replace(o, chain=(attribute,) + o.chain) for o in inner]
            held = self._class_attribute(expr, loc)
            if held is not None:  # ``width = 20`` in the class body, then ``Conv2D(self.width)``
                out = []
                for bound in held:
                    assert bound.value is not None
                    inner = self._trace(bound.value, bound.location(), depth + 1)
                    if inner is None:
                        return None
                    out += [replace(o, chain=(bound,) + o.chain) for o in inner]
                return out
            return self._from_elsewhere(expr)
        found = self.evaluator.values(expr, loc)
        if found is None or not all(_is_int(v) or v is None for v in found):
            return None
        return [DimensionValue(v, computed=expr) for v in found if isinstance(v, int) and _is_int(v)]

    def _loop_values(self, binding: Binding, loop: cst.For, path: Tuple[int, ...], depth: int
                     ) -> Optional[List[DimensionValue]]:
        """The values a loop variable takes in turn: its part (``path`` in the target,
        ``for filters, stride in ...``) of each element of a sequence literal written in
        the loop, bound once to a name of the file and never changed in place, or bound
        so by another module of the project (``from configs import STAGES``)."""
        iterable, loc = loop.iter, binding.location()
        if isinstance(iterable, (cst.Name, cst.Attribute)):
            bound = loc.lookup(iterable.value) if isinstance(iterable, cst.Name) else None
            if bound is None:
                return self._imported_loop_values(binding, loop, path, iterable)
            if bound.kind != "assign" or bound.scope is None or not isinstance(bound.value, (cst.List, cst.Tuple)) \
                    or len(bound.scope.bindings.get(bound.name, [])) != 1 \
                    or self.ctx.values.changed_in_place(bound.scope, bound.name):
                return None
            iterable, loc = bound.value, bound.location()
        if not isinstance(iterable, (cst.Tuple, cst.List)) or not iterable.elements \
                or any(isinstance(e, cst.StarredElement) for e in iterable.elements):
            return None
        out: List[DimensionValue] = []
        for element in iterable.elements:
            part = _part_of(element.value, loop.target, path)
            inner = None if part is None else self._trace(part, loc, depth + 1)
            if inner is None:
                return None
            out += [replace(origin, chain=(binding,) + origin.chain) for origin in inner]
        return out

    def _imported_loop_values(self, binding: Binding, loop: cst.For, path: Tuple[int, ...],
                              iterable: cst.BaseExpression) -> Optional[List[DimensionValue]]:
        found = imported_elements(self.ctx, iterable)
        if found is None or not found[0]:
            return None
        elements, where = found
        out = []
        for element in elements:
            value = _value_part(element, loop.target, path)
            if not isinstance(value, int) or isinstance(value, bool):
                return None
            out.append(DimensionValue(value, chain=(binding,), source=f"from {where}"))
        return out

    def _passed_elsewhere(self, binding: Binding, sources: List[_Source]
                          ) -> Optional[Tuple[List[_Source], List[DimensionValue]]]:
        """A parameter's sources in this file, with what the calls in the project's other
        modules pass it: their literals, and its default only where some call (here or
        there) leaves it out. A constructor whose every caller passes the size never
        builds a layer of its default's size. None when a call elsewhere passes a value
        that is not read (a config value, a variable): the size is unknown."""
        passed = self.ctx.values.arguments_elsewhere(binding)
        if passed is None:
            return sources, []
        if passed.unknown or not all(_is_int(v) for v in passed.values):
            return None
        assert binding.scope is not None and isinstance(binding.node, cst.Param)
        defaults = [source for source in sources if source[2] is None]
        if not calls_of(self.ctx.scopes.calls, binding.scope) and not passed.defaulted:
            sources = [source for source in sources if source[2] is not None]  # the default: never used
        elif passed.defaulted and not defaults:  # every call here passes it; one there leaves it out
            if binding.node.default is None:
                return None
            scope = binding.scope
            sources = [*sources, (binding.node.default, Location(scope.parent or scope, binding.order), None)]
        name = _callee_name(binding)
        return sources, [DimensionValue(value, chain=(binding,), source=f"passed to {name}() in another module")
                         for value in sorted(v for v in passed.values if isinstance(v, int))]

    def _dataclass_field(self, expr: cst.Attribute, loc: Location
                         ) -> Optional[List[Tuple[cst.BaseExpression, Location, Binding, Optional[cst.Call]]]]:
        """``cfg.hidden`` where ``cfg = ModelConfig(...)`` is bound once to an instance of a
        dataclass of this file, or is a parameter every call hands such a construction
        (``build(ModelConfig(hidden=100))``): the argument each construction gives the
        field, else its default (``hidden: int = 100``), where it is written; with the
        binding read. None when the file writes the field (``cfg.hidden = 64``,
        ``setattr``), the class derives from another or has a ``__post_init__``, or a
        call unpacks arguments. The call that hands a parameter its construction comes last."""
        if not isinstance(expr.value, cst.Name):
            return None
        instance = loc.lookup(expr.value.value)
        if instance is None or instance.scope is None or _field_written(self.ctx.text, instance.name, expr.attr.value) \
                or len(instance.scope.bindings.get(instance.name, [])) != 1:
            return None
        if instance.kind == "param":
            sources = self.evaluator.param_sources(instance)
            if not sources:
                return None
            out: List[Tuple[cst.BaseExpression, Location, Binding, Optional[cst.Call]]] = []
            for source, where, call in sources:
                found = self._field_of_construction(source, where, expr.attr.value)
                if found is None:
                    return None
                out.append((found[0], found[1], instance, call))
            return out
        if not is_constant(instance):
            return None
        assert instance.value is not None
        found = self._field_of_construction(instance.value, instance.location(), expr.attr.value)
        return None if found is None else [(found[0], found[1], instance, None)]

    def _field_of_construction(self, call: cst.BaseExpression, where: Location, field: str
                               ) -> Optional[Tuple[cst.BaseExpression, Location]]:
        """What ``DataclassOfThisFile(...)``, evaluated at ``where``, gives ``field``."""
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name):
            return None
        cls = where.lookup(call.func.value)
        node = cls.node if cls is not None and cls.kind == "class" else None
        if cls is None or not isinstance(node, cst.ClassDef) or not is_config_class(node, self.ctx.names.resolve):
            return None
        found = field_source(node, call, field, self.ctx.names.resolve)
        if found is None:
            return None
        return (found[0], where) if found[1] == FROM_CALL else (found[0], cls.location())

    def _own_attribute(self, expr: cst.Attribute, loc: Location) -> Optional[Binding]:
        """The one assignment of ``self.<attr>`` read in a method of its class: none
        other in the class (``+=``, a second method), and no other class of the file
        (a subclass) assigns that attribute."""
        if not (isinstance(expr.value, cst.Name) and expr.value.value == "self") or loc.scope.kind != "function":
            return None
        cls = loc.scope.enclosing_class()
        if cls is None:
            return None
        assigned = cls.attributes.get(expr.attr.value, [])
        if len(assigned) != 1 or assigned[0].kind not in ("assign", "annassign") or assigned[0].value is None \
                or assigned[0].scope is None:
            return None
        others = [c for c in self.ctx.scopes.all_scopes() if c.kind == "class" and c is not cls]
        return None if any(expr.attr.value in c.attributes for c in others) else assigned[0]

    def _class_attribute(self, expr: cst.Attribute, loc: Location) -> Optional[List[Binding]]:
        """The class-body bindings ``self.<attr>`` (``cls.<attr>`` in a classmethod) may
        read in a method: the nearest one through the instance's class and its bases in
        this file (``width = 20``). A subclass of the file that binds it again makes the
        instance's class matter: then only the classes the file builds count, and none
        built is unknown. Unknown too when any instance sets the attribute
        (``self.width = ...``), the file writes it (``Stem.width = 32``, ``setattr``), or
        a binding is not a plain constant."""
        receiver = expr.value
        if not isinstance(receiver, cst.Name) or loc.scope.kind != "function" \
                or receiver.value != _first_parameter(loc.scope):
            return None
        cls = instance_class(loc)
        attr = expr.attr.value
        if cls is None or _attribute_written(self.ctx.text, attr):
            return None
        family = [cls, *subclasses_in_file(cls)]
        if any(attributes_of(owner, attr) for owner in family):
            return None
        nearest = class_attribute(cls, attr)
        if nearest is None:
            return None
        held = {id(b): b for b in (class_attribute(owner, attr) for owner in family) if b is not None}
        if len(held) > 1:  # overridden in a subclass: the classes the file builds decide
            built = [owner for owner in family if self._built(owner)]
            if not built:
                return None
            held = {id(b): b for b in (class_attribute(owner, attr) for owner in built) if b is not None}
        bindings = list(held.values())
        if not all(is_constant(b) and b.value is not None and b.scope is not None for b in bindings):
            return None
        return bindings

    def _built(self, cls: Scope) -> bool:
        """The file constructs the class (``Stem(...)``, the name bound to it)."""
        node = cls.node
        if not isinstance(node, cst.ClassDef):
            return False
        name = node.name.value
        return any((found := where.lookup(name)) is not None and found.node is node
                   for _, where in self.ctx.scopes.calls.get(name, []))

    def _default(self, flag: Tuple[cst.BaseExpression, Location, str], depth: int) -> Optional[List[DimensionValue]]:
        """A flag's default: the value a run without the flag uses (no fix: the flag may
        size other things too)."""
        default, where, written = flag
        inner = self._trace(default, where, depth + 1)
        if inner is None:
            return None
        return [replace(origin, literal=None, source=f"the default of {written}") for origin in inner]

    def _from_elsewhere(self, expr: cst.BaseExpression) -> Optional[List[DimensionValue]]:
        """A constant of another module of the project (``config.HIDDEN``)."""
        found = imported_constant(self.ctx, expr)
        return None if found is None else [DimensionValue(found[0], source=f"from {found[1]}")]

    def _dict_entry(self, expr: cst.Subscript, loc: Location, depth: int) -> Optional[List[DimensionValue]]:
        """``CONFIG["hidden_units"]`` of a dict bound once and never written to: a dict
        display, ``dict(units=1000, ...)``, or an entry of one (``CONFIG["model"]["units"]``)."""
        if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
            return None
        key = self.evaluator.value(expr.slice[0].slice.value, loc)
        if isinstance(expr.value, cst.Attribute):  # config.SIZES["units"]
            return self._from_elsewhere(expr) if isinstance(key, str) else None
        if isinstance(expr.value, cst.Name) and loc.lookup(expr.value.value) is None:
            return self._from_elsewhere(expr) if isinstance(key, str) else None
        container = self._container(expr.value, loc, 0)
        if container is None or not isinstance(key, str):
            return None
        literal, where, chain = container
        value = self._entry(literal, key, where)
        if value is None:
            return None
        inner = self._trace(value, where, depth + 1)
        if inner is None:
            return None
        return [replace(origin, chain=chain + origin.chain) for origin in inner]

    def _container(self, expr: cst.BaseExpression, loc: Location, nesting: int
                   ) -> Optional[Tuple[cst.BaseExpression, Location, Tuple[Binding, ...]]]:
        """The dict a name bound once holds (never written into: ``CONFIG[k] = v`` at any
        depth, ``CONFIG.update(...)``), or the dict one of its entries holds, with where it
        is written and the binding read."""
        if isinstance(expr, cst.Subscript) and nesting < 4:
            if len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
                return None
            key = self.evaluator.value(expr.slice[0].slice.value, loc)
            outer = self._container(expr.value, loc, nesting + 1)
            if outer is None or not isinstance(key, str):
                return None
            value = self._entry(outer[0], key, outer[1])
            return None if value is None else (value, outer[1], outer[2])
        if not isinstance(expr, cst.Name):
            return None
        binding = loc.lookup(expr.value)
        if binding is None or not is_constant(binding) or binding.scope is None \
                or len(binding.scope.bindings.get(binding.name, [])) != 1 or binding.value is None \
                or _mutated(self.ctx.text, binding.name):
            return None
        return binding.value, binding.location(), (binding,)

    def _entry(self, literal: cst.BaseExpression, key: str, where: Location) -> Optional[cst.BaseExpression]:
        """The value a dict display or a ``dict(k=v, ...)`` call gives ``key``; None when
        it unpacks anything (``**defaults``: the key may come from there) or is no dict."""
        if isinstance(literal, cst.Dict):
            if any(isinstance(e, cst.StarredDictElement) for e in literal.elements):
                return None
            entries = [e.value for e in literal.elements if isinstance(e, cst.DictElement)
                       and self.evaluator.value(e.key, where) == key]
            return entries[0] if len(entries) == 1 else None
        if isinstance(literal, cst.Call) and isinstance(literal.func, cst.Name) and literal.func.value == "dict" \
                and where.lookup("dict") is None and all(a.keyword is not None and not a.star for a in literal.args):
            given = [a.value for a in literal.args if a.keyword is not None and a.keyword.value == key]
            return given[0] if len(given) == 1 else None
        return None

    def assigned_name(self, call: cst.Call) -> str:
        """The variable or attribute a call's result is assigned to ("" if none)."""
        return self._assigned.get(id(call), "")

    @property
    def conditions(self) -> Conditions:
        return self.ctx.get(FlagDefaults).conditions

    def computes_in_16_bit(self, site: DimensionSite) -> bool:
        """The layer follows the mixed policy (or names a 16-bit dtype).

        A layer given ``dtype='float32'`` multiplies in float32, where float16
        Tensor Core sizes do not apply; a dtype that cannot be read stays silent.
        """
        if not site.layer_class:
            return True  # a batch size sizes whatever the model computes in
        return computes_in_float32(LayerProducer(site.constructor, site.layer_class, site.location), self.ctx) is False

    def rebatched(self, call: cst.Call) -> bool:
        """A ``batch`` call whose pipeline is batched (or unbatched) again downstream."""
        return id(call) in self._rebatched

    def is_training_batch(self, site: DimensionSite, origin: DimensionValue) -> bool:
        """False for a batch that forms sequences rather than training batches.

        A pipeline batched again downstream, or a size written ``n + 1`` / ``n - 1``
        (windows of a sequence and its shifted target), is not the batch the model
        runs on.
        """
        if id(site.call) in self._rebatched:
            return False
        expr = origin.computed if origin.computed is not None else site.expr
        return not (
            isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract))
            and isinstance(expr.right, cst.Integer) and expr.right.value == "1"
        )

    # -- output layers ------------------------------------------------------------------
    def is_output(self, site: DimensionSite, origin: Optional[DimensionValue] = None) -> bool:
        """The site sizes a model's output: its size is fixed by the data."""
        if site.kind not in (UNITS, FILTERS) or site.layer_class & INTERNAL_SIZE_LAYERS:
            return False
        if id(site.call) in self._output_constructors():
            return True
        layer = LayerProducer(site.constructor, site.layer_class, site.location)
        activation = activation_expr(layer)
        if activation is not None and (
            is_softmax_value(activation, self.ctx, layer) or self._is_sigmoid(activation, layer)
        ):
            return True
        name = keyword_only(site.constructor, "name")
        if name is not None:
            text = self.ctx.values.value(name, site.location)
            if isinstance(text, str) and OUTPUT_LAYER_NAME.search(text):
                return True
        if OUTPUT_LAYER_NAME.search(self._assigned.get(id(site.call), "")):
            return True
        if any(DATA_NAME.search(name) for name in _names_in(site.expr)):
            return True
        if origin is None:
            return False
        # the value enters through a custom layer that is itself the output:
        # outputs = CustomDense(10)(inputs)
        via = origin.via
        if via is not None and (
            id(via) in self._output_constructors() or OUTPUT_LAYER_NAME.search(self._assigned.get(id(via), ""))
        ):
            return True
        # num_classes passed into a helper, NUM_ANCHORS * (5 + NUM_CLASSES)
        if any(DATA_NAME.search(b.name) for b in origin.chain) \
                or (origin.source is not None and DATA_NAME.search(origin.source)):
            return True
        return origin.computed is not None and any(DATA_NAME.search(n) for n in _names_in(origin.computed))

    def pinned_by_reshape(self, site: DimensionSite, origin: DimensionValue) -> bool:
        """The size is written again, as its own literal, in a reshape target of the
        same function (``Conv2D(36, ...)`` then ``Reshape((36, t, -1))``): a data
        dimension, since rounding one literal breaks the other. A reshape that reads
        the same name (``Reshape((filters, -1))``) changes with it and pins nothing."""
        scope = site.location.scope
        node = scope.node if scope is not None else None
        if node is None:
            return False
        entry = self._reshaped.get(id(node))
        if entry is None or entry[0] is not node:
            entry = (node, frozenset(self._reshape_literals(node, origin.literal)))
            self._reshaped[id(node)] = entry
        return origin.value in entry[1]

    def _reshape_literals(self, region: cst.CSTNode, skip: Optional[cst.Integer]) -> Iterator[int]:
        for call in find_all(region, cst.Call):
            assert isinstance(call, cst.Call)
            if not self.ctx.names.resolve(call.func) & RESHAPES:
                continue
            for arg in call.args[1:] if self.ctx.names.resolve(call.func) & SHAPE_OPS else call.args:
                for literal in find_all(arg.value, cst.Integer):
                    assert isinstance(literal, cst.Integer)
                    if literal is not skip:
                        yield literal.evaluated_value

    def _is_sigmoid(self, expr: cst.BaseExpression, layer: LayerProducer) -> bool:
        if self.ctx.names.resolve(expr) & SIGMOID_FUNCTIONS:
            return True
        return self.ctx.values.values(expr, layer.location) == frozenset({"sigmoid"})

    def _output_constructors(self) -> Set[int]:
        if self._outputs is None:
            found: Set[int] = set()
            for output in self.ctx.get(ModelOutputs).outputs():
                if output.style == "sequential" and isinstance(output.model_call, cst.Call):
                    self._sequential_output(output.expression, found)
                else:
                    self._follow_output(output.producer, found, 0)
            self._outputs = found
        return self._outputs

    def _follow_output(self, producer: Optional[Producer], found: Set[int], depth: int) -> None:
        """Mark an output's layer, and through size-keeping layers and ops, the one before."""
        if depth > 4:
            return
        models = self.ctx.get(ModelOutputs)
        if isinstance(producer, LayerProducer):
            self._add_output(producer.constructor, producer.location, found, 0)
            if not (producer.layer_class | self._class_of(producer.constructor)) & SIZE_KEEPING_LAYERS:
                return  # the model outputs' class of the layer: ``getattr(layers, "Softmax")()`` too
            for application, where in self._applications(producer):
                first = positional_or_keyword(application, 0, "inputs")
                if first is not None:
                    self._follow_output(models.producer(first, where), found, depth + 1)
        elif isinstance(producer, OpProducer):
            # tf.cast(x, tf.float32), tf.nn.softmax(x), tf.reshape(x, ...): any op
            # on the output. At worst this silences a layer near the output.
            first = positional_or_keyword(producer.call, 0, "x")
            if first is not None:
                self._follow_output(models.producer(first, producer.location), found, depth + 1)

    def _applications(self, layer: LayerProducer) -> List[Tuple[cst.Call, Location]]:
        """Where a layer is called on a tensor: ``Layer(...)(x)`` or ``layer(x)``."""
        out = list(self._applied.get(id(layer.constructor), []))
        for name, bindings in layer.location.scope.bindings.items():
            if not any(b.value is layer.constructor for b in bindings):
                continue
            for call, where in self.ctx.scopes.calls.get(name, []):
                binding = where.lookup(name)
                if binding is not None and binding.value is layer.constructor:
                    out.append((call, where))
        return out

    def _sequential_output(self, last: cst.BaseExpression, found: Set[int]) -> None:
        """The last layer of a Sequential model, and those before trailing size-keepers
        (``Dense(classes)`` then ``Activation("softmax", dtype="float32")``), read from
        the model's end as :class:`ModelOutputs` assembled it."""
        layers = self.ctx.get(ModelOutputs).sequential_tail(last)
        if not layers:
            if isinstance(last, cst.Call):
                found.add(id(last))
            return
        for expr, where in reversed(layers):
            if not isinstance(expr, cst.Call):
                return
            self._add_output(expr, where, found, 0)
            if not self._class_of(expr) & SIZE_KEEPING_LAYERS:
                return

    def _class_of(self, call: cst.Call) -> FrozenSet[str]:
        found = self._classes.get(id(call))
        return found if found is not None else self.ctx.names.resolve(call.func)

    def _add_output(self, call: cst.Call, loc: Optional[Location], found: Set[int], depth: int) -> None:
        found.add(id(call))
        wrapper = self._class_of(call) & LAYER_WRAPPERS
        if depth < 3 and wrapper:
            inner = positional_or_keyword(call, 0, WRAPPED_LAYER_PARAMETER[min(wrapper)])
            layer = self._constructor(inner, loc, 0) if inner is not None else None
            if layer is not None:
                self._add_output(layer[0], layer[1], found, depth + 1)

    def _constructor(self, expr: cst.BaseExpression, loc: Optional[Location], depth: int) -> Optional[Tuple[cst.Call, Optional[Location]]]:
        """The constructor call a layer expression denotes (through variables/attributes)."""
        if isinstance(expr, cst.Call):
            return expr, loc
        if depth > _MAX_DEPTH or loc is None:
            return None
        binding: Optional[Binding] = None
        if isinstance(expr, cst.Name):
            binding = loc.lookup(expr.value)
        elif isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = loc.scope.enclosing_class()
            found = cls.attributes.get(expr.attr.value, []) if cls is not None else []
            binding = found[0] if len(found) == 1 else None
        if binding is None or binding.kind != "assign" or binding.value is None or binding.scope is None:
            return None
        return self._constructor(binding.value, binding.location(), depth + 1)

    # -- may a literal be rounded? ---------------------------------------------------------
    def may_round(self, origin: DimensionValue, accept: Callable[[DimensionSite], bool]) -> bool:
        """Whether rounding the origin's literal changes aligned dimensions only.

        An inline literal sizes its site alone. A literal written in a constant, a
        default or a call's argument may be rounded only when every use of the
        binding nearest it is an accepted site, or is passed to a parameter whose
        uses all are (checked recursively).
        """
        if origin.literal is None:
            return False
        if not origin.chain:
            return True
        return self._uses_aligned(origin.chain[-1], accept, 0)

    def _uses_aligned(self, binding: Binding, accept: Callable[[DimensionSite], bool], depth: int) -> bool:
        scope = binding.scope
        if depth > _MAX_DEPTH or scope is None or scope.kind not in ("module", "function"):
            return False
        definition = _target_of(binding)
        refs = self._references().get(binding.name, [])
        region = scope.node
        by_expr, call_args = self._site_index(), self._call_arg_index()
        for ref, functions in refs:
            if ref is definition:
                continue
            if scope.kind == "function" and region not in functions:
                continue
            site = by_expr.get(id(ref))
            if site is not None:
                if accept(site) and site.location.lookup(binding.name) is binding:
                    continue
                return False
            passed = call_args.get(id(ref))
            if passed is not None:
                param, where = passed
                if where.lookup(binding.name) is binding and self._uses_aligned(param, accept, depth + 1):
                    continue
            return False
        return True

    def _site_index(self) -> Dict[int, DimensionSite]:
        if self._by_expr is None:
            self._by_expr = {id(site.expr): site for site in self.sites}
        return self._by_expr

    def _call_arg_index(self) -> Dict[int, Tuple[Binding, Location]]:
        """Name arguments of calls to this module's functions -> the parameter they bind."""
        if self._call_args is None:
            index: Dict[int, Tuple[Binding, Location]] = {}
            for name, calls in self.ctx.scopes.calls.items():
                for call, where in calls:
                    callee = where.lookup(name)
                    if callee is None or callee.scope is None:
                        continue
                    function: Optional[cst.CSTNode] = callee.node
                    offset = 0
                    if isinstance(function, cst.ClassDef):
                        function, offset = _init_of(function), 1
                    scope = _scope_of(callee, function)
                    if scope is None or function is None:
                        continue
                    for params in scope.bindings.values():
                        for param in params:
                            if param.kind != "param" or not isinstance(param.node, cst.Param):
                                continue
                            expr = argument_for(function, param.node, call, offset)
                            if isinstance(expr, cst.Name):
                                index[id(expr)] = (param, where)
            self._call_args = index
        return self._call_args

    def _references(self) -> Dict[str, List[Tuple[cst.Name, Tuple[cst.CSTNode, ...]]]]:
        """Every name read or written in the file, with its enclosing functions."""
        if self._refs is None:
            self._refs = {name: [(ref.node, ref.functions) for ref in refs]
                          for name, refs in self.ctx.get(References).by_name.items()}
        return self._refs


def _loop_target(binding: Binding, use: cst.Name) -> Optional[Tuple[cst.For, Tuple[int, ...]]]:
    """The loop a name is the variable of, and where it sits in the target (``()`` for
    ``for filters in ...``, ``(0,)`` for ``for filters, stride in ...``), for a use
    inside that loop's body (after it, only the last), the name bound by nothing else
    than loops, none of them inside this one (``for filters in A: ...`` then ``for
    filters in B: ...`` reuse the name; ``filters *= 2`` in the body changes it)."""
    node = binding.node
    if binding.kind != "for" or binding.scope is None or not isinstance(node, cst.For):
        return None
    others = binding.scope.bindings.get(binding.name, [])
    if len(others) > 1:
        inner = {id(loop) for loop in find_all(node.body, cst.For)}
        if any(other.kind != "for" or id(other.node) in inner for other in others):
            return None
    path = _target_path(node.target, binding.name)
    if path is None:
        return None
    if not any(found is use and found.value == binding.name for found in find_all(node.body, cst.Name)):
        return None
    return node, path


def _target_path(target: cst.BaseExpression, name: str) -> Optional[Tuple[int, ...]]:
    """The indexes that lead to ``name`` in an unpacking target (no starred part)."""
    if isinstance(target, cst.Name):
        return () if target.value == name else None
    if isinstance(target, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement)
                                                             for e in target.elements):
        for index, element in enumerate(target.elements):
            inner = _target_path(element.value, name)
            if inner is not None:
                return (index,) + inner
    return None


def _part_of(element: cst.BaseExpression, target: cst.BaseExpression, path: Tuple[int, ...]
             ) -> Optional[cst.BaseExpression]:
    """The part of a sequence literal's element that ``path`` in ``target`` binds: each
    level a tuple or list literal of the target's length (else unknown)."""
    for index in path:
        if not isinstance(element, (cst.Tuple, cst.List)) or not isinstance(target, (cst.Tuple, cst.List)) \
                or len(element.elements) != len(target.elements) \
                or any(isinstance(e, cst.StarredElement) for e in element.elements):
            return None
        element, target = element.elements[index].value, target.elements[index].value
    return element


def _value_part(element: object, target: cst.BaseExpression, path: Tuple[int, ...]) -> object:
    """:func:`_part_of` for an element another module evaluated (tuples of values)."""
    for index in path:
        if not isinstance(element, tuple) or not isinstance(target, (cst.Tuple, cst.List)) \
                or len(element) != len(target.elements):
            return None
        element, target = element[index], target.elements[index].value
    return element


def _unpacked_part(binding: Binding) -> Optional[cst.BaseExpression]:
    """The element of ``a, b = 100, 2`` a name bound once in its scope takes (not a
    swap, ``a, b = b, a``, nor a starred side: its part is not one element)."""
    node = binding.node
    if binding.kind != "assign" or binding.value is not None or binding.scope is None \
            or not isinstance(node, cst.Assign) or len(node.targets) != 1 \
            or len(binding.scope.bindings.get(binding.name, [])) != 1:
        return None
    target, value = node.targets[0].target, node.value
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(value, (cst.Tuple, cst.List)) \
            or len(target.elements) != len(value.elements) \
            or any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
        return None
    names = [e.value.value for e in target.elements if isinstance(e.value, cst.Name)]
    if len(names) != len(target.elements) or any(isinstance(n, cst.Name) and n.value in names
                                              for e in value.elements for n in find_all(e.value, cst.Name)):
        return None
    return value.elements[names.index(binding.name)].value


def _arms_of_one_if(bindings: List[Binding]) -> bool:
    """Every binding sits in an arm of one ``if`` and not all in the same arm
    (``if gpu: units = 500`` / ``else: units = 64``); a default rebound under a
    condition (``BATCH = 64`` then ``if debug: BATCH = 50``) is not."""
    if len(bindings) < 2 or any(not b.branches for b in bindings):
        return False
    shared = set.intersection(*({key for key, _, _ in b.branches} for b in bindings))
    return any(len({arm for b in bindings for key, arm, _ in b.branches if key == if_id}) > 1 for if_id in shared)


def _first_parameter(scope: Scope) -> Optional[str]:
    """The name of a method's first parameter (``self``, ``cls``)."""
    function = scope.node
    if not isinstance(function, cst.FunctionDef) or scope.parent is None or scope.parent.kind != "class" \
            or not function.params.params:
        return None
    return function.params.params[0].name.value


def _attribute_written(text: str, attr: str) -> bool:
    """The file sets the attribute on some object (``Stem.width = 32``,
    ``self.width += 8``) or sets attributes by name (``setattr``)."""
    return field_assigned(text, attr)


def _field_written(text: str, instance: str, field: str) -> bool:
    """The file sets the field (``cfg.hidden = 64``, ``cfg.hidden *= 2``) or sets
    attributes by name (``setattr(cfg, ...)``)."""
    return re.search(rf"\b{re.escape(instance)}\.{re.escape(field)}\s*(\+|-|\*|/|//)?=(?!=)", text) is not None \
        or re.search(rf"\bsetattr\(\s*{re.escape(instance)}\b", text) is not None


def _mutated(text: str, name: str) -> bool:
    """The file writes into the dict (``CONFIG["units"] = 64``, ``CONFIG["model"]["units"] = 64``,
    ``CONFIG.update(...)``)."""
    return re.search(rf"\b{re.escape(name)}(\s*\[[^\]\n]*\])+\s*(\+|-|\*|/|//)?=(?!=)", text) is not None \
        or re.search(rf"\b{re.escape(name)}(\s*\[[^\]\n]*\])*\.(update|setdefault|pop|popitem|clear)\(", text) is not None \
        or re.search(rf"\bdel\s+{re.escape(name)}\[", text) is not None


def _names_in(expr: cst.BaseExpression) -> Iterator[str]:
    """Variable names an arithmetic size expression is made of (an attribute's name,
    ``cfg.num_classes``, and a constant key, ``CONFIG["num_classes"]``, too)."""
    if isinstance(expr, cst.Name):
        yield expr.value
    elif isinstance(expr, cst.Attribute):
        yield expr.attr.value
    elif isinstance(expr, cst.Subscript):
        yield from _names_in(expr.value)
        for element in expr.slice:
            index = element.slice.value if isinstance(element.slice, cst.Index) else None
            if isinstance(index, cst.SimpleString) and isinstance(index.evaluated_value, str):
                yield index.evaluated_value
    elif isinstance(expr, cst.BinaryOperation):
        yield from _names_in(expr.left)
        yield from _names_in(expr.right)
    elif isinstance(expr, cst.UnaryOperation):
        yield from _names_in(expr.expression)
    elif isinstance(expr, cst.IfExp):
        yield from _names_in(expr.body)
        yield from _names_in(expr.orelse)


def _target_of(binding: Binding) -> Optional[cst.CSTNode]:
    node = binding.node
    if isinstance(node, cst.Assign) and len(node.targets) == 1:
        return node.targets[0].target
    if isinstance(node, cst.AnnAssign):
        return node.target
    return None


def _init_of(cls: cst.ClassDef) -> Optional[cst.FunctionDef]:
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else []
    for stmt in body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__":
            return stmt
    return None


def _scope_of(callee: Binding, function: Optional[cst.CSTNode]) -> Optional[Scope]:
    """The scope of a function defined where ``callee`` is bound (or its class's)."""
    if function is None or callee.scope is None:
        return None
    for child in callee.scope.children:
        if child.node is function:
            return child
        if child.node is callee.node:  # a class: its __init__ is one level down
            for grandchild in child.children:
                if grandchild.node is function:
                    return grandchild
    return None


def _callee_name(param: Binding) -> str:
    """The callee a parameter belongs to, as callers write it (the class for ``__init__``)."""
    scope = param.scope
    node = scope.node if scope is not None else None
    if not isinstance(node, cst.FunctionDef):
        return "the function"
    owner = scope.parent if scope is not None else None
    if node.name.value == "__init__" and owner is not None and isinstance(owner.node, cst.ClassDef):
        return owner.node.name.value
    return node.name.value


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def next_multiple(value: int, alignment: int) -> int:
    """The smallest multiple of ``alignment`` at or above ``value``."""
    return -(-value // alignment) * alignment


def nearest_multiple(value: int, alignment: int) -> int:
    """The multiple of ``alignment`` nearest ``value`` (ties go up), never below it."""
    low = value // alignment * alignment
    high = low + alignment
    best = low if value - low < high - value else high
    return max(best, alignment)
