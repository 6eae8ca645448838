"""What a ``Lambda`` or a custom layer class of the file computes its output in.

Under a mixed policy Keras autocasts the floating inputs of every layer, Lambdas and
custom layers included, and their weights read as 16-bit inside ``call`` (checked in
Keras 3.15 and tf_keras 2.21: ``Lambda(lambda t: t * 2.0)`` and a weightless
``call`` returning ``x * 2.0`` both output float16). What the function or ``call``
returns is judged by :class:`TensorKinds`, the dtype inference the numeric rules
use: 16-bit when every ``return`` is (a tied-embedding ``matmul`` of the autocast
input), float32 after a final ``tf.cast(..., tf.float32)``, and unknown otherwise.
Only unknown-free answers count. A function or class imported from another module
of the project is judged the same way in that module (:mod:`imported_layers`);
anything that cannot be read there is unknown.
"""

from __future__ import annotations

import os

from dataclasses import dataclass, replace
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from mplint.analysis.activations import called_function
from mplint.analysis.compute_regions import ComputeRegions, LayerClass
from mplint.analysis.dispatch import Dispatch, Overrides
from mplint.analysis.imported_layers import (
    imported_factory, imported_function, imported_head, imported_layer, imported_method_head,
    imported_model,
)
from mplint.analysis.imported_registries import imported_registry_entry
from mplint.analysis.layers import (
    built_under_float32_policy, computes_in_float32, computes_under_policy, is_keras_layer, is_softmax_layer,
)
from mplint.analysis.models import AFTER_ALL, LayerProducer, ModelOutput, ModelOutputs, OpProducer, Producer
from mplint.analysis.tensor_kinds import F32, LOW, TensorKinds, Where
from mplint.analysis.tensor_sites import Path
from mplint.core.positions import positions_of
from mplint.core.walker import child_nodes
from mplint.rule.check import Analysis, Context, Fix
from mplint.rule.edits import quote_of, spell, string, with_keyword
from mplint.rule.levels import Safety
from mplint.semantic.call_args import keyword_only, positional_or_keyword
from mplint.semantic.scopes import Binding, CallContext, CallFrame, Location, Scope, class_chain
from mplint.semantic.stored_attributes import InstanceAttributes
from mplint.semantic.vocabulary import (
    DTYPE_PRESERVING_FUNCTIONS, ELEMENTWISE_OPS, FLOAT32_NAMES, INPUT_FUNCTIONS, LAMBDA_LAYERS, LAYER_WRAPPERS,
    PARTIALS, SHAPE_OPS, SOFTMAX_FUNCTIONS, VARIABLE_CONSTRUCTORS,
)

#: calls in a class body that create weights (whose compute dtype a float32 policy changes)
_WEIGHT_METHODS = frozenset({"add_weight", "add_variable"})
#: ``keras.Input`` arguments that leave it a plain dense tensor of its dtype
_PLAIN_INPUT_ARGUMENTS = frozenset({"shape", "batch_size", "name", "dtype", "batch_shape"})
_FLOAT_DTYPES = frozenset({"float16", "float32", "float64", "bfloat16", "half", "float"})
_MAX_DEPTH = 8
#: methods whose layers are a class's sublayers: made once, under the global policy
_SUBLAYER_METHODS = frozenset({"__init__", "build"})
#: renders a node's code
_EMPTY = cst.Module(body=[])


@dataclass(frozen=True)
class CustomLayer:
    """A Lambda or custom layer whose output is certainly 16-bit."""

    name: str  # "Lambda" or the class name, for messages
    softmax: bool
    #: the constructor takes ``dtype=`` (a Lambda, or a class passing ``**kwargs`` on)
    accepts_dtype: bool
    #: the class makes weights or sublayers: a float32 dtype changes how they compute
    has_weights: bool
    #: for a function of another module that returns a Keras layer, where it is
    #: (``heads.py``): the layer it builds is the one to give dtype='float32'
    built_in: str = ""
    #: for a function of another module that returns a layer's output (a head), the
    #: line in ``built_in`` where that layer is built (0: the function returns the layer)
    line: int = 0
    #: that function or class (``make_head``, ``ClassificationHead``)
    head: str = ""
    #: ``head`` builds a model (``Unet.build_generator``) that the other module calls
    #: as a layer: the layer at ``line`` is that model's last
    model: bool = False
    #: ``head`` is a factory whose closure builds the layer at ``line`` (``make_head(10,
    #: "softmax")`` returns ``def head(x): return Dense(...)(x)``): the factory's call here
    #: picks the layer's arguments, and the finding lands at that call
    closure: bool = False
    #: the Keras sublayer the class makes in ``__init__`` or ``build`` whose 16-bit output
    #: ``call`` returns (``Dense`` at ``heads.py:10``): it follows the global policy, not
    #: the class's dtype, so ``dtype='float32'`` on the construction leaves the output 16-bit
    sublayer: str = ""
    #: the construction already gives the class a float32 dtype (or the class pins one):
    #: only ``sublayer`` makes its output 16-bit
    float32_built: bool = False


class CustomLayers(Analysis):
    """Records where each function returns (with its block path); judges layers on demand."""

    requires = (TensorKinds, ModelOutputs)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._returns: Dict[int, List[Tuple[cst.BaseExpression, Where]]] = {}
        self._lambdas: Dict[int, Where] = {}
        self._judged: Dict[Tuple[int, ...], Optional[CustomLayer]] = {}
        #: where each call is made, to follow a layer application's input
        self._calls: Dict[int, Location] = {}
        #: a class of this module as another module's construction builds it, by the
        #: class's name and the construction's arguments as that module writes them
        self._constructions: Dict[Tuple[str, Tuple[Tuple[object, str, str], ...], Path],
                                  Optional[CustomLayer]] = {}
        kinds = ctx.analyses.get(TensorKinds)
        if isinstance(kinds, TensorKinds):
            kinds.nested_model = self.nested_model_is_low  # the tensor rules' nested models

    @property
    def kinds(self) -> TensorKinds:
        return self.ctx.get(TensorKinds)

    def visit_Return(self, node: cst.Return) -> None:
        where = self.kinds.here()
        if node.value is not None and isinstance(where.loc.scope.node, cst.FunctionDef):
            self._returns.setdefault(id(where.loc.scope.node), []).append((node.value, where))

    def visit_Call(self, node: cst.Call) -> None:
        self._calls[id(node)] = self.ctx.scopes.location()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._lambdas[id(node)] = self.kinds.here()  # the scope tracker has entered the lambda

    # -- queries ----------------------------------------------------------------------
    def judge(self, layer: LayerProducer) -> Optional[CustomLayer]:
        """The layer, when it is a Lambda or custom layer of this file computing a
        16-bit output under the policy; None when anything about it is unknown."""
        # once per construction and the calls followed to it (each call of a builder
        # may pass another head: ``build(CONFIG)``, ``build(OTHER)``)
        key = (id(layer.constructor), *(id(frame.call) for frame in layer.location.context), -1, *layer.output_part)
        if key not in self._judged:
            self._judged[key] = self._judge(layer)
        return self._judged[key]

    def _judge(self, layer: LayerProducer) -> Optional[CustomLayer]:
        if layer.output_part:
            return self._judge_part(layer)
        if layer.layer_class & LAMBDA_LAYERS:
            return self._lambda(layer)
        if any(name.startswith("keras.") for name in layer.layer_class):
            return None  # a Keras layer: not ours
        func = layer.constructor.func
        binding = layer.location.lookup(func.value) if isinstance(func, cst.Name) else None
        if binding is not None and binding.kind == "class" and isinstance(binding.node, cst.ClassDef):
            return self._judge_class(binding.node, (layer.constructor, layer.location))
        inherited = self.ctx.get(ModelOutputs).inherited(func, layer.location)
        if inherited is not None:
            # ``self.build_head(x)`` with ``build_head`` a method of a model class of another
            # module this class derives from: what it returns, judged there
            assert isinstance(func, cst.Attribute)
            where, values = layer.location, self.ctx.values

            def attributes(attr: str) -> object:
                return values.instance_attribute(where, attr)

            return imported_method_head(self.ctx, inherited[0], func.attr.value, layer.constructor, inherited[1],
                                        attributes)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            # ``unet.build_generator()`` with ``unet = Unet(...)``, a class of another
            # module: the model that method builds, judged there
            receiver = layer.location.lookup(func.value.value)
            if receiver is not None and receiver.kind in ("assign", "annassign") \
                    and isinstance(receiver.value, cst.Call):
                return imported_model(self.ctx, receiver.value.func, func.attr.value)
        if binding is None and layer.part:
            # a part of what it returns: a tensor (``enc, dec = heads.build(x)``) or a layer
            # (``trunk, head = blocks.build(64)``, called here)
            return imported_head(self.ctx, layer.constructor, layer.location, layer.part) \
                or imported_factory(self.ctx, layer.constructor.func, layer.constructor, layer.part, layer.location)
        if binding is None and isinstance(func, cst.Subscript):
            # ``HEADS[config.TASK](n)``: the entry of another module's dict of builders the key
            # picks, a builder of a layer or a head returning a layer's output (``(x)``)
            return imported_registry_entry(self.ctx, func, layer.constructor, layer.location) \
                or imported_registry_entry(self.ctx, func, layer.constructor, layer.location, head=True)
        picked = self._picked_by_name(func, binding, layer.location)
        if picked is not None:
            # ``head_cls = getattr(heads, config.HEAD_CLASS)``: that class of the module
            return imported_layer(self.ctx, picked) or imported_factory(self.ctx, picked, layer.constructor,
                                                                         loc=layer.location)
        if binding is None and isinstance(func, (cst.Name, cst.Attribute)):
            # a class of another module of the project, or a function there that returns a layer
            # (the Keras layer whose output a class or function there returns first: it names
            # the layer to fix, and knows a softmax from its activation)
            return imported_head(self.ctx, layer.constructor, layer.location) \
                or imported_layer(self.ctx, func, layer.constructor, layer.location) \
                or imported_factory(self.ctx, func, layer.constructor, loc=layer.location)
        return None

    def _judge_part(self, layer: LayerProducer) -> Optional[CustomLayer]:
        """Part ``layer.output_part`` of the tuple a custom layer class's ``call`` returns
        (``box, obj = YoloOutput(n)(x)``), for a class of this module or one imported from
        another; None for anything else."""
        func = layer.constructor.func
        binding = layer.location.lookup(func.value) if isinstance(func, cst.Name) else None
        if binding is not None and binding.kind == "class" and isinstance(binding.node, cst.ClassDef):
            return self._judge_class(binding.node, (layer.constructor, layer.location), layer.output_part)
        if binding is None and isinstance(func, (cst.Name, cst.Attribute)):
            return imported_layer(self.ctx, func, layer.constructor, layer.location, layer.output_part)
        return None

    def _picked_by_name(self, func: cst.BaseExpression, binding: Optional[Binding],
                        loc: Location) -> Optional[cst.Attribute]:
        """``module.Name`` for ``getattr(module, key)`` (called at once, or bound once to the
        name called) with ``module`` an import of the file and ``key`` one known string:
        a class or function of another module picked by a name from a config."""
        picker: Optional[cst.BaseExpression] = func
        if binding is not None:
            picker = binding.value if binding.kind == "assign" and len(loc.reaching(binding.name)) == 1 else None
            loc = binding.location().within(loc.context)
        if not isinstance(picker, cst.Call) or not isinstance(picker.func, cst.Name) \
                or picker.func.value != "getattr" or loc.lookup("getattr") is not None or len(picker.args) != 2:
            return None
        module, key = picker.args[0].value, self.ctx.values.value(picker.args[1].value, loc)
        if not isinstance(module, cst.Name) or not isinstance(key, str) or not key.isidentifier() \
                or loc.lookup(module.value) is not None:
            return None  # a local object, or a name not known here
        return cst.Attribute(value=module, attr=cst.Name(key))

    def model_call_output(self, call: cst.Call, loc: Optional[Location] = None) -> Optional[CustomLayer]:
        """When ``call`` calls a model as a layer (``gen_out = self.gen_model(x)``, the model
        built by a function or a class's method of this file or another module): the
        Keras layer computing its one output, when certainly 16-bit under a mixed policy
        (its line and module in the answer); None when anything is unknown. The tensor
        rules ask it for a nested model's output dtype (``loc``: where the call is made,
        with the calls followed to reach it; by default, where the walk saw it)."""
        loc = loc if loc is not None else self._calls.get(id(call))
        if loc is None:
            return None
        models = self.ctx.get(ModelOutputs)
        layer = models.layer(call.func, loc)
        if layer is None:
            return None
        outputs = models.built_model_outputs(layer.constructor, layer.location)
        if outputs is not None:
            return self._single_head(outputs, "", self.ctx.path, model=True)
        judged = self.judge(layer)
        return judged if judged is not None and judged.model else None

    def nested_model_is_low(self, call: cst.Call, loc: Location) -> bool:
        """``gen_out = self.gen_model(x)``: the model's one output is certainly 16-bit
        (:meth:`model_call_output`) and a mixed policy governs where the model is built,
        not a float32 one set before it there. What :class:`TensorKinds` asks."""
        built = self.ctx.get(ModelOutputs).layer(call.func, loc)
        if built is None or self.ctx.facts.mixed_policy(built.location.scope) is None \
                or built_under_float32_policy(built, self.ctx):
            return False
        found = self.model_call_output(call, loc)
        return found is not None and found.model

    def judge_factory_named(self, name: str, args: Sequence[cst.Arg], path: str,
                            part: Path = (), key: Optional[str] = None) -> Optional[CustomLayer]:
        """A function of this module called from another with ``args`` (``classifier(10)``),
        when it returns one Keras layer (as part ``part`` of the tuple it returns, when
        given: ``trunk, head = build(64)``) certainly built 16-bit under a mixed policy:
        the call's literal arguments bind its parameters, any other argument is unknown.
        With ``key``, ``name`` is a dict of builders and the entry under ``key`` is called."""
        binding = self.ctx.scopes.module_scope.lookup(name)
        if binding is None or any(arg.star for arg in args):
            return None
        func: cst.BaseExpression = cst.Name(name)
        if key is not None:
            if binding.kind != "assign" or not isinstance(binding.value, cst.Dict):
                return None
            func = cst.Subscript(value=func, slice=[cst.SubscriptElement(cst.Index(cst.SimpleString(repr(key))))])
        elif binding.kind != "def" or not isinstance(binding.node, cst.FunctionDef):
            return None
        call = cst.Call(func=func, args=[arg.with_changes(value=_literal(arg.value)) for arg in args])
        where = Location(self.ctx.scopes.module_scope, _AFTER_ALL)
        models = self.ctx.get(ModelOutputs)
        built = models.layer(call, where, part)
        if built is None and not part and isinstance(binding.node, cst.FunctionDef) \
                and is_closure_factory(binding.node):
            # ``make_head(10, "softmax")`` returns a closure that builds and applies a layer:
            # the closure is the layer, its output the one the call applied to a tensor gives
            applied = cst.Call(func=call, args=[cst.Arg(_UNKNOWN_ARGUMENT)])
            head = self._single_head(models.tensors(applied, where), name, path)
            return None if head is None else replace(head, closure=True)
        if built is None or not is_keras_layer(built) or not computes_under_policy(built) \
                or built.layer_class & LAMBDA_LAYERS or computes_in_float32(built, self.ctx) is not False:
            return None
        named = name if key is None else f"{name}[{key!r}]"
        return CustomLayer(named, is_softmax_layer(built, self.ctx), False, True, os.path.basename(path))

    def judge_head_named(self, name: str, args: Sequence[cst.Arg], path: str,
                         part: Path = (), key: Optional[str] = None) -> Optional[CustomLayer]:
        """A function of this module called from another with ``args`` (``make_head(x)``),
        when what it returns (part ``part`` of the tuple it returns, when given) is the
        output of one Keras layer certainly computed in 16
        bits under a mixed policy (through local helpers, pass-through layers and
        ``Activation(name)``): the call's literal arguments bind its parameters, any other
        argument is unknown. A float32 layer, Lambda or cast after it settles it float32.
        With ``key``, ``name`` is a dict of heads and the entry under ``key`` is called."""
        binding = self.ctx.scopes.module_scope.lookup(name)
        models = self.ctx.get(ModelOutputs)
        if key is not None:
            if binding is None or binding.kind != "assign" or not isinstance(binding.value, cst.Dict) or part \
                    or any(arg.star for arg in args):
                return None
            entry = cst.Subscript(value=cst.Name(name),
                                  slice=[cst.SubscriptElement(cst.Index(cst.SimpleString(repr(key))))])
            call = cst.Call(func=entry, args=[arg.with_changes(value=_literal(arg.value)) for arg in args])
            return self._single_head(models.tensors(call, Location(self.ctx.scopes.module_scope, _AFTER_ALL)),
                                     f"{name}[{key!r}]", path)
        if binding is not None and binding.kind == "class" and isinstance(binding.node, cst.ClassDef) and not part:
            # a layer class whose ``call`` returns a Keras layer it holds (``self.classifier(x)``)
            regions = self.ctx.get(ComputeRegions)
            cls = regions.layer_class(binding.node)
            if cls is None or not cls.sixteen_bit or _is_model(cls):
                return None
            # read inside the construction: its arguments bind ``__init__``'s parameters
            built = cst.Call(func=cst.Name(name), args=[arg.with_changes(value=_literal(arg.value)) for arg in args])
            outputs = models.call_outputs(binding.node, (built, Location(self.ctx.scopes.module_scope, _AFTER_ALL)))
        elif binding is not None and binding.kind == "def" and isinstance(binding.node, cst.FunctionDef) \
                and not any(arg.star for arg in args):
            call = cst.Call(func=cst.Name(name), args=[arg.with_changes(value=_literal(arg.value)) for arg in args])
            where = Location(self.ctx.scopes.module_scope, _AFTER_ALL)
            # a builder returning a model (called as a layer there): that model's output
            model = None if part else models.built_model_outputs(call, where)
            if model is not None:
                return self._single_head(model, name, path, model=True)
            outputs = models.tensors(call, where, part)
        else:
            return None
        return self._single_head(outputs, name, path)

    def judge_method_named(self, cls: str, method: str, args: Sequence[cst.Arg], bound: FrozenSet[str],
                           path: str, attributes: InstanceAttributes) -> Optional[CustomLayer]:
        """A method of a model class of this module that a subclass in another module
        calls on itself with ``args`` (``self.build_head(x, 10)``): the one Keras layer
        computing what it returns, when certainly 16-bit under a mixed policy; the call's
        literal arguments bind its parameters. ``bound``: the names the subclass binds in its
        class bodies; a method reading one is unknown (``ModelOutputs.inherited_outputs``);
        ``attributes``: ``self.<attr>`` of the instance, answered by the subclass's module."""
        literal = [arg.with_changes(value=_literal(arg.value)) for arg in args]
        outputs = self.ctx.get(ModelOutputs).inherited_outputs(cls, method, literal, bound, attributes)
        return None if outputs is None else self._single_head(outputs, f"{cls}.{method}", path)

    def dispatched_named(self, cls: str, overrides: Overrides,
                         attributes: InstanceAttributes) -> Optional[List[Dispatch]]:
        """For a subclass in another module that inherits ``call`` from the model class
        ``cls`` of this module and overrides ``overrides``: the calls of its overrides
        whose result ``call`` returns (:meth:`ModelOutputs.dispatch_outputs`)."""
        return self.ctx.get(ModelOutputs).dispatch_outputs(cls, overrides, attributes)

    def judge_model_named(self, cls: str, method: str, path: str) -> Optional[CustomLayer]:
        """A method of a class of this module that builds and returns a model
        (``Unet(...).build_generator()`` in another module, whose model that module calls
        as a layer): the model's one output, when one Keras layer certainly computes it
        in 16 bits under a mixed policy. The method's parameters stay unknown."""
        binding = self.ctx.scopes.module_scope.lookup(cls)
        if binding is None or binding.kind != "class" or not isinstance(binding.node, cst.ClassDef):
            return None
        body = binding.node.body.body if isinstance(binding.node.body, cst.IndentedBlock) else ()
        function = next((s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == method), None)
        returns = [] if function is None else self._returns.get(id(function), [])
        if len(returns) != 1:
            return None
        value, where = returns[0]
        outputs = self.ctx.get(ModelOutputs).built_model_outputs(value, where.loc)
        return None if outputs is None else self._single_head(outputs, f"{cls}.{method}", path, model=True)

    def _single_head(self, outputs: Sequence[Tuple[cst.BaseExpression, Optional[Producer]]], name: str,
                     path: str, model: bool = False) -> Optional[CustomLayer]:
        """The one Keras layer computing ``outputs`` in 16 bits under a mixed policy, as a
        head of this module another module's model ends in; None when anything is unknown."""
        built = [producer for _, producer in outputs]
        if len(built) != 1 or not isinstance(built[0], LayerProducer):
            return None
        layer = built[0]
        if not is_keras_layer(layer) or not computes_under_policy(layer) or layer.layer_class & LAMBDA_LAYERS \
                or computes_in_float32(layer, self.ctx) is not False:
            return None
        position = positions_of(self.ctx.module, self.ctx.text, [layer.constructor]).get(layer.constructor)
        if position is None:
            return None
        return CustomLayer(min(layer.layer_class).rpartition(".")[2], is_softmax_layer(layer, self.ctx), False,
                           True, os.path.basename(path), position.start.line, name, model)

    def passthrough_named(self, name: str, call: cst.Call) -> Optional[int]:
        """Which input the layer class ``name`` of this module hands on unchanged when
        another module's ``call`` builds it (its literal arguments bind ``__init__``)."""
        binding = self.ctx.scopes.module_scope.lookup(name)
        if binding is None or binding.kind != "class" or not isinstance(binding.node, cst.ClassDef):
            return None
        built = cst.Call(func=cst.Name(name), args=[arg.with_changes(value=_literal(arg.value)) for arg in call.args])
        return self.ctx.get(ModelOutputs).passthrough(binding.node, built,
                                                      Location(self.ctx.scopes.module_scope, _AFTER_ALL))

    def partial_named(self, name: str) -> Optional[Tuple[FrozenSet[str], List[cst.Arg], int]]:
        """``NAME = functools.partial(layers.Dense, 100, activation="swish")``, bound once at
        the top of this module, as another module that calls ``NAME()`` reads it: the layer
        class's canonical names, the preset arguments (each value a literal when this module
        knows its one value, else an unknown) and the partial's line. None for anything else."""
        scope = self.ctx.scopes.module_scope
        bindings = scope.bindings.get(name, ())
        binding = scope.lookup(name)
        if len(bindings) != 1 or binding is None or binding.kind != "assign" \
                or not isinstance(binding.value, cst.Call):
            return None
        partial = binding.value
        if not self.ctx.names.resolve(partial.func) & PARTIALS or not partial.args \
                or partial.args[0].keyword is not None or any(arg.star for arg in partial.args):
            return None
        resolved = self.ctx.names.resolve(partial.args[0].value)
        position = positions_of(self.ctx.module, self.ctx.text, [partial]).get(partial)
        if not resolved or position is None:
            return None
        where = Location(scope, _AFTER_ALL)
        args = [arg.with_changes(value=self._known_literal(arg.value, where)) for arg in partial.args[1:]]
        return resolved, args, position.start.line

    def _known_literal(self, expr: cst.BaseExpression, where: Location) -> cst.BaseExpression:
        """A literal of the one value this module knows ``expr`` holds (a string, a
        non-negative int), else the unknown another module cannot read."""
        written = _literal(expr)
        if written is not _UNKNOWN_ARGUMENT:
            return written
        value = self.ctx.values.value(expr, where)
        if isinstance(value, str):
            return cst.SimpleString(repr(value))
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return cst.Integer(str(value))
        return _UNKNOWN_ARGUMENT

    def judge_class_named(self, name: str, args: Optional[Sequence[cst.Arg]] = None,
                          part: Path = ()) -> Optional[CustomLayer]:
        """A class of this module, by name, judged as :meth:`judge` would (another
        module's layer classes are judged so; their own imports are not followed); with
        ``args``, as the construction another module makes with them builds it (each a
        literal where that module knows the value, else an unknown), once per set of them."""
        binding = self.ctx.scopes.module_scope.lookup(name)
        if binding is None or binding.kind != "class" or not isinstance(binding.node, cst.ClassDef):
            return None
        if args is None:
            return self._judge_class(binding.node, None, part)
        literal = [arg.with_changes(value=_literal(arg.value)) for arg in args]
        key = (name, tuple((a.star, a.keyword.value if a.keyword is not None else "", _EMPTY.code_for_node(a.value))
                           for a in literal), part)
        if key not in self._constructions:
            built = cst.Call(func=cst.Name(name), args=literal)
            where = Location(self.ctx.scopes.module_scope, _AFTER_ALL)
            self._constructions[key] = self._judge_class(binding.node, (built, where), part)
        return self._constructions[key]

    def is_model_class_named(self, name: str) -> bool:
        """A class of this module, by name, is a Keras model (asked by a module whose
        class derives from it)."""
        return self.ctx.get(ModelOutputs).is_model_class_named(name)

    def judge_function_named(self, name: str) -> Optional[bool]:
        """A function of this module as a Lambda's function: whether it returns a softmax,
        when every return is 16-bit (else None)."""
        binding = self.ctx.scopes.module_scope.lookup(name)
        if binding is None or binding.kind != "def" or not isinstance(binding.node, cst.FunctionDef):
            return None
        self.ctx.get(ComputeRegions).mark_lambda_function(binding.node)
        return self._returns_low(binding.node)

    def _judge_class(self, node: cst.ClassDef, construction: Optional[Tuple[cst.Call, Location]] = None,
                     part: Path = ()) -> Optional[CustomLayer]:
        """The class as ``construction`` builds it (its arguments bound to ``__init__``'s
        parameters, read into ``self``), else as any construction would; with ``part``,
        that part of the tuple its ``call`` returns (a literal tuple in every ``return``)."""
        regions = self.ctx.get(ComputeRegions)
        cls = regions.layer_class(node)
        if cls is None or _is_model(cls):
            return None
        if not cls.sixteen_bit or self._built_float32(cls, construction):
            if part:
                return None  # which sublayer computes a part is not followed
            # a float32 layer casts its inputs and computes its own ops in float32; only
            # a sublayer it makes in ``__init__``/``build`` still follows the global policy
            inner = self._sixteen_bit_sublayer(cls, construction)
            if inner is None:
                return None
            sublayer, softmax = inner
            return CustomLayer(cls.node.name.value, softmax, _accepts_dtype(class_chain(cls.scope)), True,
                               sublayer=sublayer, float32_built=True)
        chain = self._chain(cls, regions)
        if chain is None:
            return None
        call = _method(chain, "call")
        if call is None:
            return None
        returned = self._returns_low(call, self._construction_frame(chain, construction), part)
        if returned is None:
            return None
        inner = None if part else self._sixteen_bit_sublayer(cls, construction)
        return CustomLayer(cls.node.name.value, returned, _accepts_dtype(chain), self._has_weights(chain),
                           sublayer=inner[0] if inner is not None else "")

    def _construction_frame(self, chain: List[Scope], construction: Optional[Tuple[cst.Call, Location]]
                            ) -> Optional[Tuple[CallFrame, Location]]:
        """The construction followed into the nearest ``__init__`` (``self`` bound), and
        where it is made; None without one."""
        if construction is None:
            return None
        init = _method(chain, "__init__")
        function: cst.CSTNode = init if init is not None else chain[0].node
        return CallFrame(function, construction[0], construction[1], 1, entry=True), construction[1]

    def _built_float32(self, cls: LayerClass, construction: Optional[Tuple[cst.Call, Location]]) -> bool:
        """The construction certainly gives the layer a float32 dtype (written, or in a
        ``**spread`` whose keys are known) that its ``__init__`` hands on to Keras."""
        if construction is None or not _accepts_dtype(class_chain(cls.scope)):
            return False
        call, where = construction
        dtype = keyword_only(call, "dtype")
        at = where
        if dtype is None:
            spread = self.ctx.values.spread_argument(call, "dtype", where)
            if spread is None:
                return False
            dtype, at = spread
        found = self.ctx.values.values(dtype, at)
        return bool(found) and all(isinstance(v, str) and v in FLOAT32_NAMES for v in found or ())

    def _sixteen_bit_sublayer(self, cls: LayerClass, construction: Optional[Tuple[cst.Call, Location]]
                              ) -> Optional[Tuple[str, bool]]:
        """When what ``call`` returns is the output of a Keras sublayer made in
        ``__init__`` or ``build`` without a dtype of its own (through softmax, element-wise
        and shape ops), which follows the global policy whatever the class's dtype
        (Keras 2 and 3): that layer, in words (``Dense`` at ``heads.py:10``), and whether a
        softmax computes the output. None for anything else (a cast, an op of the input
        or of the class's own weights, which a float32 dtype makes float32)."""
        models = self.ctx.get(ModelOutputs)
        outputs = models.call_outputs(cls.node, construction)
        if len(outputs) != 1 or outputs[0][1] is None:
            return None
        found = self._through_ops(outputs[0][1], models, 0)
        if found is None:
            return None
        layer, softmax = found
        position = positions_of(self.ctx.module, self.ctx.text, [layer.constructor]).get(layer.constructor)
        if position is None:
            return None
        name = min(layer.layer_class).rpartition(".")[2]
        return f"`{name}` made at {os.path.basename(self.ctx.path)}:{position.start.line}", softmax

    def _through_ops(self, producer: Producer, models: ModelOutputs, depth: int
                     ) -> Optional[Tuple[LayerProducer, bool]]:
        """The sublayer under dtype-keeping ops (see :meth:`_sixteen_bit_sublayer`)."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(producer, OpProducer):
            function = producer.function
            if not function & (SOFTMAX_FUNCTIONS | SHAPE_OPS | ELEMENTWISE_OPS):
                return None
            inner = models.op_input(producer)
            found = None if inner is None else self._through_ops(inner, models, depth + 1)
            if found is None:
                return None
            return found[0], bool(function & SOFTMAX_FUNCTIONS) or (bool(function & SHAPE_OPS) and found[1])
        if not is_keras_layer(producer) or not computes_under_policy(producer) \
                or producer.layer_class & (LAMBDA_LAYERS | LAYER_WRAPPERS) \
                or computes_in_float32(producer, self.ctx) is not False:
            return None
        scope = producer.location.scope
        if scope.kind != "function" or not isinstance(scope.node, cst.FunctionDef) \
                or scope.node.name.value not in _SUBLAYER_METHODS or scope.parent is None \
                or scope.parent.kind != "class":
            return None  # made elsewhere (handed in, built in ``call``): not followed
        return producer, is_softmax_layer(producer, self.ctx)

    def _lambda(self, layer: LayerProducer) -> Optional[CustomLayer]:
        fn = positional_or_keyword(layer.constructor, 0, "function")
        if fn is None:
            return None
        if isinstance(fn, cst.Lambda):
            where = self._lambdas.get(id(fn))
            if where is None:
                return None
            softmax = self._low(fn.body, where)
        elif isinstance(fn, (cst.Name, cst.Attribute)) and self.ctx.names.resolve(fn) & DTYPE_PRESERVING_FUNCTIONS:
            softmax = bool(self.ctx.names.resolve(fn) & SOFTMAX_FUNCTIONS)  # Lambda(tf.nn.softmax)
        elif isinstance(fn, cst.Name) and layer.location.lookup(fn.value) is not None:
            found = layer.location.lookup(fn.value)
            if found is None or found.kind != "def" or not isinstance(found.node, cst.FunctionDef):
                return None
            softmax = self._returns_low(found.node)
        elif isinstance(fn, (cst.Name, cst.Attribute)):
            softmax = imported_function(self.ctx, fn)  # a function of another module
        else:
            return None
        if softmax is None:
            return None
        return CustomLayer("Lambda", softmax, True, False)

    def _returns_low(self, function: cst.FunctionDef,
                     construction: Optional[Tuple[CallFrame, Location]] = None,
                     part: Path = ()) -> Optional[bool]:
        """Whether the function's returns are softmaxes, when all of them are 16-bit (else
        None); a method's, inside the construction followed into ``__init__`` when given;
        with ``part``, that element of the tuple each ``return`` writes out."""
        returns = self._returns.get(id(function), [])
        if not returns:
            return None
        picked = [(_element(value, part), where) for value, where in returns]
        if any(value is None for value, _ in picked):
            return None
        verdicts = [self._low(value, where, construction) for value, where in picked if value is not None]
        if any(v is None for v in verdicts):
            return None
        return all(verdicts)

    def _low(self, expr: cst.BaseExpression, where: Where,
             construction: Optional[Tuple[CallFrame, Location]] = None) -> Optional[bool]:
        """None unless ``expr`` is one 16-bit tensor; then whether a softmax computes it
        (read inside ``construction``: which activation it stored on ``self``)."""
        context: CallContext = ()
        if construction is not None:
            frame, made = construction
            context = where.loc.within(made.context).entering(frame).context
        if self.kinds.kind(expr, where) != LOW or not self._certain(expr, where, 0, context):
            return None
        return self._softmax(expr, Where(where.loc.within(context), where.path), 0)

    def _candidates(self, name: cst.Name, where: Where, context: CallContext) -> List[Binding]:
        """The bindings of ``name`` that may reach ``where`` (:meth:`TensorKinds.candidates`),
        less those in ``if`` arms the followed calls ``context`` decide against, and those an
        arm they decide for replaces (``x = self.proj(x)`` then ``if self.activation ==
        "softmax": x = tf.nn.softmax(x)``, inside ``ProjectionHead(n, activation="softmax")``)."""
        candidates = self.kinds.candidates(name, where)
        if len(candidates) <= 1 or not context:
            return candidates
        models, use = self.ctx.get(ModelOutputs), where.loc.within(context)
        decided = {id(b): models.arm_decisions(b, use) for b in candidates}
        live = [b for b in candidates if False not in decided[id(b)]]
        taken = [b for b in live if b.branches and decided[id(b)] and all(d is True for d in decided[id(b)])]
        return [a for a in live if not any(a.order < b.order and set(a.branches) <= set(b.branches) for b in taken)]

    def _certain(self, expr: cst.BaseExpression, where: Where, depth: int, context: CallContext = ()) -> bool:
        """No doubt in the arithmetic that computes ``expr``: it is a single tensor (not a
        tuple of outputs), no float32 operand meets the 16-bit ones (that fails at run
        time: MP504's finding), and no other parameter than the autocast input takes part
        (Keras 2 autocasts only the first). ``context``: the construction followed, which
        decides ``if`` arms on what it stored."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, (cst.Tuple, cst.List, cst.Dict, cst.Set, cst.ListComp, cst.SetComp,
                             cst.DictComp, cst.GeneratorExp)):
            return False
        if self.kinds.kind(expr, where) == F32:
            return False
        if isinstance(expr, cst.BinaryOperation):
            return self._certain(expr.left, where, depth + 1, context) \
                and self._certain(expr.right, where, depth + 1, context)
        if isinstance(expr, cst.UnaryOperation):
            return self._certain(expr.expression, where, depth + 1, context)
        if isinstance(expr, cst.Name):
            candidates = self._candidates(expr, where, context)
            if len(candidates) != 1:
                return not candidates and where.loc.lookup(expr.value) is None  # a builtin
            binding = candidates[0]
            if binding.kind == "param":
                return self.ctx.get(ComputeRegions).is_low_param(binding)
            inner = self.kinds.binding_where(binding)
            if binding.value is None or inner is None:
                return binding.kind not in ("for", "with")
            return self._certain(binding.value, inner, depth + 1, context)
        return True

    def _softmax(self, expr: cst.BaseExpression, where: Where, depth: int) -> bool:
        """A softmax computes ``expr`` on every path: a softmax op, an activation kept on
        ``self`` or in a variable that is one (``self.activation = activations.get(act)``
        with the construction's ``act="softmax"``), or a Keras sublayer with a softmax
        activation (``self.act = Activation(activation)``)."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, cst.Call):
            func = expr.func
            if self.ctx.names.resolve(func) & SOFTMAX_FUNCTIONS:
                return True
            if self.ctx.names.resolve(func) or not isinstance(func, (cst.Name, cst.Attribute)):
                return False
            function = called_function(func, where.loc, self.ctx)
            if function is not None:
                return function <= SOFTMAX_FUNCTIONS
            layer = self.ctx.get(ModelOutputs).layer(func, where.loc)
            return layer is not None and is_keras_layer(layer) and computes_in_float32(layer, self.ctx) is False \
                and is_softmax_layer(layer, self.ctx)
        if isinstance(expr, cst.Name):
            candidates = self._candidates(expr, where, where.loc.context)
            if len(candidates) != 1 or candidates[0].value is None:
                return False
            inner = self.kinds.binding_where(candidates[0])
            return inner is not None and self._softmax(
                candidates[0].value, Where(inner.loc.within(where.loc.context), inner.path), depth + 1)
        return False

    def input_is_float(self, output: ModelOutput) -> Optional[bool]:
        """Whether the tensor a functional output's layer is applied to is a float tensor
        (Keras autocasts only floating inputs): None when that is not known."""
        expr = output.expression
        if isinstance(output.producer, LayerProducer) and output.producer.applied is not None:
            expr = output.producer.applied  # ``box, obj = YoloOutput(n)(x)``: the layer's call
        if output.style != "functional" or not isinstance(expr, cst.Call) or not expr.args \
                or expr.args[0].keyword is not None or expr.args[0].star:
            return None
        where = self._calls.get(id(expr))
        if where is None:
            return None
        first = expr.args[0].value
        if isinstance(first, (cst.List, cst.Tuple)) and first.elements:
            # ``EmbeddingSim()([features, table])``: Keras autocasts each floating tensor
            # of the structure; the layer's float arithmetic needs each to be one
            if any(isinstance(e, cst.StarredElement) for e in first.elements):
                return None
            kinds = {self._tensor_is_float(e.value, where) for e in first.elements}
            return True if kinds == {True} else None
        return self._tensor_is_float(first, where)

    def _tensor_is_float(self, tensor: cst.BaseExpression, where: Location) -> Optional[bool]:
        """Whether ``tensor`` is a float tensor (None: not known)."""
        producer = self.ctx.get(ModelOutputs).producer(tensor, where)
        if isinstance(producer, LayerProducer):
            return True if computes_under_policy(producer) or self.judge(producer) is not None else None
        if isinstance(producer, OpProducer) and producer.function & INPUT_FUNCTIONS:
            if any(a.star or (a.keyword is not None and a.keyword.value not in _PLAIN_INPUT_ARGUMENTS)
                   for a in producer.call.args):
                return None  # a sparse, ragged or extension-type input, or a given tensor
            dtype = keyword_only(producer.call, "dtype")
            if dtype is None:
                return True  # floatx()
            found = self.ctx.values.values(dtype, producer.location)
            if found is None or len(found) != 1:
                return None
            return next(iter(found)) in _FLOAT_DTYPES
        return None

    # -- the class and its local bases ----------------------------------------------------
    def _chain(self, cls: LayerClass, regions: ComputeRegions) -> Optional[List[Scope]]:
        """The class scope and those of its local base classes, nearest first; None
        when a base is neither a local layer class nor a Keras layer/model API."""
        chain: List[Scope] = []
        current: Optional[LayerClass] = cls
        seen: Set[int] = set()
        while current is not None and id(current.node) not in seen and len(chain) < _MAX_DEPTH:
            seen.add(id(current.node))
            chain.append(current.scope)
            local = [expr for expr, names in current.bases if not names]
            if len(current.bases) != 1 or len(local) > 1:
                return None  # several bases: which __init__/call runs is not followed
            if not local:
                return chain  # a Keras base
            expr = local[0]
            binding = _class_binding(expr, current.scope)
            parent = regions.layer_class(binding.node) if binding is not None else None
            if parent is None or not parent.sixteen_bit:
                return None
            current = parent
        return None

    def _has_weights(self, chain: List[Scope]) -> bool:
        regions = self.ctx.get(ComputeRegions)
        for scope in chain:
            for node in _walk(scope.node):
                if not isinstance(node, cst.Call):
                    continue
                func = node.func
                if isinstance(func, cst.Attribute) and func.attr.value in _WEIGHT_METHODS:
                    return True
                names = self.ctx.names.resolve(func)
                if names & VARIABLE_CONSTRUCTORS or any(n.startswith("keras.layers.") for n in names):
                    return True
                if isinstance(func, cst.Name) and not names:  # a sublayer of a class of this file
                    binding = scope.lookup(func.value, None)
                    if binding is not None and binding.kind == "class" and regions.layer_class(binding.node):
                        return True
        return False


#: a statement order after every statement of a module: a name looked up there has its final binding
_AFTER_ALL = AFTER_ALL
#: what an argument the other module cannot read stands for there: a name bound nowhere
_UNKNOWN_ARGUMENT = cst.Name("__mplint_unknown__")


def _literal(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The argument itself when a literal another module can read, else an unknown."""
    if isinstance(expr, (cst.SimpleString, cst.Integer, cst.Float)) \
            or (isinstance(expr, cst.Name) and expr.value in ("True", "False", "None")):
        return expr
    return _UNKNOWN_ARGUMENT


def is_closure_factory(function: cst.FunctionDef) -> bool:
    """Every ``return`` of ``function``'s own body hands back a function it defines
    (``def head(x): ...; return head``): calling the result runs that closure."""
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    nested = {s.name.value for s in body if isinstance(s, cst.FunctionDef)}
    returns = [s.body[0] for s in body
               if isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Return)]
    return bool(nested) and bool(returns) and all(
        isinstance(r.value, cst.Name) and r.value.value in nested for r in returns)


def _is_model(cls: LayerClass) -> bool:
    return any(names & {"keras.Model", "keras.Sequential"} for _, names in cls.bases)


def _class_binding(expr: cst.BaseExpression, scope: Scope) -> Optional[Binding]:
    if not isinstance(expr, cst.Name) or scope.parent is None:
        return None
    binding = scope.parent.lookup(expr.value, None)
    if binding is None or binding.kind != "class":
        return None
    return binding


def _method(chain: List[Scope], name: str) -> Optional[cst.FunctionDef]:
    for scope in chain:
        found = scope.bindings.get(name)
        if found:
            node = found[-1].node
            return node if found[-1].kind == "def" and isinstance(node, cst.FunctionDef) else None
    return None


def _accepts_dtype(chain: List[Scope]) -> bool:
    """The constructor takes ``dtype=``: no ``__init__`` of its own up to the Keras base,
    or the nearest one passes its ``**kwargs`` on to ``super().__init__``."""
    init = _method(chain, "__init__")
    if init is None:
        return True
    star = init.params.star_kwarg
    if star is None:
        return False
    kwargs = star.name.value
    for node in _walk(init.body):
        if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                and node.func.attr.value == "__init__" and isinstance(node.func.value, cst.Call)
                and isinstance(node.func.value.func, cst.Name) and node.func.value.func.value == "super"):
            return any(a.star == "**" and isinstance(a.value, cst.Name) and a.value.value == kwargs
                       for a in node.args)
    return False


def _walk(root: cst.CSTNode) -> List[cst.CSTNode]:
    out: List[cst.CSTNode] = []
    stack = [root]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(child_nodes(node))
    return out


# -- the fix ------------------------------------------------------------------------------
_KERAS_PACKAGES = ("keras", "tensorflow.keras", "tf_keras")


def _element(expr: cst.BaseExpression, part: Path) -> Optional[cst.BaseExpression]:
    """Part ``part`` of a tuple or list written out (``return box, obj``); None where it
    cannot be told (a starred element, an index out of range, any other expression)."""
    for index in part:
        if not isinstance(expr, (cst.Tuple, cst.List)) \
                or any(isinstance(e, cst.StarredElement) for e in expr.elements) \
                or not -len(expr.elements) <= index < len(expr.elements):
            return None
        expr = expr.elements[index].value
    return expr


def custom_layer_fix(custom: CustomLayer, layer: LayerProducer, output: ModelOutput, ctx: Context) -> Optional[Fix]:
    """``dtype='float32'`` where the layer is made (safe for a Lambda or a weightless
    class), else a float32 ``Activation('linear')`` after the output of a functional
    model (safe: the layer keeps computing as before, its output is cast; never for a
    softmax, which would still be computed in 16 bits), else the dtype on a class
    with weights (unsafe: they would compute in float32)."""
    if custom.float32_built or layer.output_part:
        # the dtype is there: the sublayer inside needs one, or a cast; or a part of a
        # tuple, whose other parts the layer's dtype would change too
        return None
    if custom.accepts_dtype and not custom.has_weights:
        return Fix({layer.constructor: float32_dtype(layer.constructor, ctx)}, safety=Safety.SAFE)
    appended = None if custom.softmax else _float32_activation(output, ctx)
    if appended is not None:
        return appended
    if custom.accepts_dtype and not custom.sublayer:  # a float32 dtype leaves a sublayer's output 16-bit
        return Fix({layer.constructor: float32_dtype(layer.constructor, ctx)}, safety=Safety.UNSAFE)
    return None


def float32_dtype(call: cst.Call, ctx: Context) -> cst.Call:
    """The constructor with ``dtype='float32'`` (quotes as the call has them)."""
    return with_keyword(call, "dtype", string("float32", quote_of(call, ctx.text)))


def _float32_activation(output: ModelOutput, ctx: Context) -> Optional[Fix]:
    """``Activation("linear", dtype="float32")(<output>)`` in a functional model."""
    model = output.model_call
    if output.style != "functional" or not isinstance(model, cst.Call) or not isinstance(output.expression, cst.Call):
        return None
    qualified = ctx.names.qualified(model.func)
    if len(qualified) != 1:
        return None
    (name,) = qualified
    package = next((p for p in _KERAS_PACKAGES if name in (f"{p}.Model", f"{p}.models.Model")), None)
    if package is None:
        return None
    spelled = spell(f"{package}.layers.Activation", ctx.names)
    if spelled is None:
        return None
    activation, imports = spelled
    quote = quote_of(output.expression, ctx.text)
    wrapped = cst.Call(
        func=cst.Call(func=activation, args=[
            cst.Arg(string("linear", quote), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(string("float32", quote), keyword=cst.Name("dtype"),
                    equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))),
        ]),
        args=[cst.Arg(output.expression)],
    )
    # A tensor bound to a name that other code reads too (``gen_out`` concatenated with
    # the input and fed to the discriminator besides being an output): the float32 copy
    # replaces it in every use, which changes the outer model, not only its output.
    safety = Safety.UNSAFE if _read_elsewhere(output.expression, ctx.module) else Safety.SAFE
    return Fix({output.expression: wrapped}, safety=safety, imports=imports)


def _read_elsewhere(expr: cst.BaseExpression, module: cst.Module) -> bool:
    """Whether ``expr`` is assigned to a name that the module reads more than once."""
    targets: List[str] = []
    reads: Dict[str, int] = {}

    class _Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if node.value is expr:
                targets.extend(t.target.value for t in node.targets if isinstance(t.target, cst.Name))

        def visit_Name(self, node: cst.Name) -> None:
            reads[node.value] = reads.get(node.value, 0) + 1

    module.visit(_Finder())
    return any(reads.get(name, 0) > 2 for name in targets)  # the target itself, and the output's read
