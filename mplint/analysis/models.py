"""Model outputs: which layer call or op produces each output of each Keras model.

Three model styles are recognised:

- functional: ``keras.Model(inputs, outputs)``; outputs are followed backwards
  through variables, lists/tuples/dicts, helper functions that return the tensor
  (every ``return``), and nested models called as layers;
- sequential: ``keras.Sequential`` ends in its last layer (a list literal, a list
  variable and its ``.append``/``.extend`` calls and ``+=``, the last ``.add``, or
  the adds of a local helper handed the model); :meth:`ModelOutputs.sequential_tail`
  gives the known layers before it (a class-count Dense before a float32 activation);
- subclassed: a class deriving (directly, through local classes or through a
  model class of another module of the project) from ``keras.Model``; its outputs are what ``call`` returns, e.g. ``self.head(x)``
  with ``self.head = Dense(...)`` set in ``__init__``, or ``tf.nn.softmax(x)``
  (a class with no ``call`` that overrides ``__call__`` runs that one instead).

A function or layer class of another module of the project at an output
(``heads.make_head(x)``, ``ClassificationHead(...)(x)``) stands for what it returns
there: :class:`CustomLayers` judges it in its own module. So does ``self.build_head(x)``
in a class deriving from a model class of another module that defines the method
(the call's literal arguments bind it there, and this module answers what ``self.<attr>``
holds there: the subclass's stores and those of the base's helpers it calls,
``self.set_properties(kwargs)``); where the subclass binds a name in its class body that
the base's code reads on ``self`` (an overriding ``build_top``, a class attribute), that
module cannot see which one runs, and the output stays unknown.

Anything not followed with certainty yields no producer, and rules stay silent on
it (the runtime checker measures what static analysis cannot see).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Dict, FrozenSet, Iterator, List, Mapping, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from mplint.analysis.activations import called_function
from mplint.analysis.discarded_models import discarded
from mplint.analysis.dispatch import (
    LAYER, TENSOR, Dispatch, DispatchState, Overrides, calls_super_init, overrides_of, portable, reads_overridden, unique,
)
from mplint.analysis.imported_layers import (
    imported_definition, imported_dispatch, imported_function_definition, imported_model_class,
    imported_partial_preset, imported_passthrough, known_argument,
)
from mplint.analysis.tensor_sites import Path
from mplint.analysis.tensor_syntax import target_path
from mplint.core.find_nodes import find_all, mentions
from mplint.rule.check import Analysis, Context
from mplint.semantic.call_args import first_tensor_argument, keyword_only, positional_or_keyword
from mplint.semantic.governed_arms import governed_truth
from mplint.semantic.stored_attributes import InstanceAttributes
from mplint.semantic.values import is_constant
from mplint.semantic.scopes import (
    MAX_CALL_CONTEXT, Binding, CallContext, CallFrame, Location, Scope, attributes_of, calls_of, class_chain,
    function_key, instance_class, local_def, bound_leading, method_of,
)
from mplint.semantic.vocabulary import (
    ANY_MODEL_CLASSES, LAMBDA_LAYERS, MODEL_CLASSES, PARTIALS, SEQUENTIAL_CLASSES, SHAPE_OPS, SIZE_KEEPING_LAYERS,
    WHOLE_MODEL_METHODS, WHOLE_MODEL_VARIABLES, is_classifier_application, names_tensorflow,
)


#: a model builder called more often than this is judged once, not per call
_MAX_BUILDER_CALLS = 8
#: a statement order after every statement of a file: where another module's call is judged
AFTER_ALL = 1 << 30

#: list/model methods that change which layer comes last
_MUTATORS = frozenset({"add", "append", "extend", "insert", "pop", "remove", "clear"})
#: builtins that may receive a model or a list of layers without changing it
_HARMLESS_CALLEES = frozenset({"print", "len", "isinstance", "id", "repr", "str", "type"})

_MAX_DEPTH = 16
#: the known end of a list of layers, and whether it is the whole list
_Tail = Tuple[List[Tuple[cst.BaseExpression, Location]], bool]

Output = Tuple[cst.BaseExpression, Optional["Producer"]]


@dataclass
class LayerProducer:
    """A tensor produced by calling a layer made by ``constructor``."""

    constructor: cst.Call
    layer_class: FrozenSet[str]  # canonical class names (empty when not a known API)
    location: Location  # where the constructor ran
    #: the ``functools.partial(Layer, ...)`` the constructor calls, whose arguments
    #: come before the call's own, and where it was made
    preset: Optional[Tuple[cst.Call, Location]] = None
    #: for a function of another module (``enc, dec = heads.build(x)``): the part of the
    #: tuple it returns that the output is, judged in that module
    part: Path = ()
    #: for a layer whose ``call`` returns a tuple (``box, obj = YoloOutput(n)(x)``): the
    #: part of it the tensor is, and the call applying the layer (:class:`CustomLayers`
    #: judges that part of what the class's ``call`` returns)
    output_part: Path = ()
    applied: Optional[cst.Call] = None


@dataclass
class OpProducer:
    """A tensor produced by a function/op call such as ``tf.cast`` or ``tf.nn.softmax``."""

    call: cst.Call
    function: FrozenSet[str]
    location: Location


#: what computes a tensor: a layer call, or an op call
Producer = Union[LayerProducer, OpProducer]


@dataclass
class ModelOutput:
    """One output of one model: the expression and, when known, what produced it.

    ``model_call`` is the ``Model(...)``/``Sequential(...)`` call, or the
    ``ClassDef`` of a subclassed model (style ``subclassed``).
    """

    model_call: cst.CSTNode
    expression: cst.BaseExpression
    producer: Optional[Producer]
    style: str  # functional | sequential | subclassed | application (a keras.applications classifier)


@dataclass
class _MethodCall:
    """``receiver.method(...)`` on a plain variable: ``model.add``, ``layers.append``."""

    method: str
    call: cst.Call
    location: Location
    in_loop: bool


class ModelOutputs(Analysis):
    """Collects model constructions during the walk; resolves outputs afterwards."""

    #: asked whether a class of another module is a model (:mod:`imported_layers`)
    companions = ("mplint.analysis.custom_layers.CustomLayers",)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._models: List[Tuple[cst.Call, Location, str]] = []
        self._classes: List[Tuple[cst.ClassDef, Scope, Location]] = []
        #: mutating method calls by receiver variable name
        self._mutations: Dict[str, List[_MethodCall]] = {}
        #: calls that receive a bare variable as an argument, by variable name
        self._passed: Dict[str, List[Tuple[cst.Call, Location]]] = {}
        #: return values of each function, by id of its FunctionDef
        self._returns: Dict[int, List[Tuple[cst.BaseExpression, Location]]] = {}
        self._function_scopes: Dict[int, Scope] = {}
        #: canonical names of call targets, resolved during the walk (local imports
        #: are only visible then)
        self._callee_names: Dict[int, FrozenSet[str]] = {}
        self._loops: List[int] = [0]
        self._attribute_adds = 0
        #: ``self.x(...)`` calls made inside classes (sub-models used as layers)
        self._self_calls: List[Tuple[cst.Call, Location]] = []
        #: calls whose result is used as a layer: ``F(...)(x)``, ``[F(...), ...]``,
        #: ``blocks.append(F(...))``; and calls made inside class bodies
        self._positions: List[Tuple[cst.Call, Location]] = []
        self._class_calls: List[Tuple[cst.Call, Location]] = []
        #: ``super().__init__(inputs, outputs)`` in classes: functional subclasses
        self._super_inits: List[Tuple[cst.Call, Location, Scope]] = []
        #: variables handed to a list's ``append``/``extend``/``insert`` (``blocks.append(stem)``)
        self._appended: List[Tuple[cst.Name, Location]] = []
        #: ``model.compile(...)``, ``model.fit(...)``...: where each variable is used as a whole model
        self._whole_model_uses: Dict[str, List[Location]] = {}
        #: ``models[0].fit(...)``: the item a whole-model method is called on, and where
        self._item_uses: List[Tuple[cst.Subscript, Location]] = []
        self._containers: Optional[List[Tuple[cst.BaseExpression, Location]]] = None
        self._nested: Optional[Set[int]] = None
        #: assignments made inside a loop body (a new value each iteration)
        self._loop_assigns: Set[int] = set()
        #: ``outputs[key] = value`` by container name (value None: ``outputs[key] += ...``)
        self._stores: Dict[str, List[Tuple[Optional[cst.BaseExpression], Location]]] = {}
        #: the ``container[key]`` target of each store, by id of the value stored
        self._store_keys: Dict[int, cst.Subscript] = {}
        #: loss functions called in the file (``ops.categorical_crossentropy(...)``), where
        self._loss_calls: List[Tuple[cst.Call, Location]] = []
        #: producers whose tensor reaches an output through a pass-through layer class,
        #: which autocasts its floating inputs to the compute dtype again
        self._recast: Set[int] = set()
        self._resolved: Optional[List[ModelOutput]] = None
        self._model_class_scopes: Optional[Dict[int, Tuple[cst.ClassDef, Scope]]] = None
        self._expanding: Set[int] = set()
        #: calls of another module's function whose returned list ends a Sequential's layers
        self._listed: Set[int] = set()
        #: whether each base expression names a model class of another module, by id
        self._imported_bases: Dict[int, bool] = {}
        #: the known end of each Sequential model, by id of its last layer
        self._tails: Dict[int, List[Tuple[cst.BaseExpression, Location]]] = {}
        #: while a subclass of another module asks what the ``call`` it inherits returns
        #: (:meth:`dispatch_outputs`): its overrides, and the calls dispatched to them
        self._dispatch: Optional[DispatchState] = None
        #: tuples a ``return`` hands back (a builder's results, not a list of layers)
        self._returned_tuples: Set[int] = set()

    # -- collection --------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._function_scopes[id(node)] = self.ctx.scopes.current
        self._loops.append(0)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        # a lambda's body is its one return value, read inside its own scope (after
        # its parameters, which are bound at the statement's order)
        at = self.ctx.scopes.location()
        self._returns[id(node)] = [(node.body, Location(at.scope, at.order + 1, at.branches))]

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._loops.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        scope = self.ctx.scopes.current
        assert scope.parent is not None
        self._classes.append((node, scope, Location(scope.parent, self.ctx.scopes.order)))
        for base in node.bases:
            self._callee_names[id(base.value)] = self.ctx.names.resolve(base.value)
        self._loops.append(0)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._loops.pop()

    def _enter_loop(self, node: cst.CSTNode) -> None:
        self._loops[-1] += 1

    def _leave_loop(self, node: cst.CSTNode) -> None:
        self._loops[-1] -= 1

    visit_For = visit_While = visit_ListComp = visit_GeneratorExp = _enter_loop
    visit_SetComp = visit_DictComp = _enter_loop
    leave_For = leave_While = leave_ListComp = leave_GeneratorExp = _leave_loop
    leave_SetComp = leave_DictComp = _leave_loop

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._loops[-1] > 0:
            self._loop_assigns.add(id(node))
        for target in node.targets:
            self._note_store(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if self._loops[-1] > 0:
            self._loop_assigns.add(id(node))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._note_store(node.target, None)
        if isinstance(node.target, cst.Name) and isinstance(node.operator, cst.AddAssign):
            # ``layers += [...]``: read as ``layers.extend([...])``, where it happens
            extend = cst.Call(cst.Attribute(node.target, cst.Name("extend")), [cst.Arg(node.value)])
            self._mutations.setdefault(node.target.value, []).append(
                _MethodCall("extend", extend, self.ctx.scopes.location(), self._loops[-1] > 0))

    def _note_store(self, target: cst.BaseExpression, value: Optional[cst.BaseExpression]) -> None:
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            self._stores.setdefault(target.value.value, []).append((value, self.ctx.scopes.location()))
            self._store_keys[id(value)] = target

    def visit_List(self, node: cst.List) -> None:
        loc = self.ctx.scopes.location()
        for element in node.elements:
            if isinstance(element.value, cst.Call):
                self._positions.append((element.value, loc))

    def visit_Tuple(self, node: cst.Tuple) -> None:
        if id(node) in self._returned_tuples:
            return  # ``return encoder, decoder, joined(...)``: the builder's results, no layers
        self.visit_List(node)  # type: ignore[arg-type]

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is None:
            return
        if isinstance(node.value, cst.Tuple):
            self._returned_tuples.add(id(node.value))
        loc = self.ctx.scopes.location()
        if isinstance(loc.scope.node, cst.FunctionDef):
            self._returns.setdefault(id(loc.scope.node), []).append((node.value, loc))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in WHOLE_MODEL_VARIABLES and isinstance(node.value, cst.Name):
            self._whole_model_uses.setdefault(node.value.value, []).append(self.ctx.scopes.location())

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        loc = self.ctx.scopes.location()
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in _MUTATORS
            and isinstance(func.value, cst.Name)
        ):
            self._mutations.setdefault(func.value.value, []).append(
                _MethodCall(func.attr.value, node, loc, self._loops[-1] > 0)
            )
        elif isinstance(func, cst.Attribute) and func.attr.value == "add" and len(node.args) == 1:
            self._attribute_adds += 1
        if loc.scope.enclosing_class() is not None:
            if _self_attribute(func):
                self._self_calls.append((node, loc))
            else:
                self._class_calls.append((node, loc))
        if isinstance(func, cst.Call):
            self._positions.append((func, loc))
        if isinstance(func, cst.Attribute) and func.attr.value in _MUTATORS:
            self._positions += [(a.value, loc) for a in node.args if isinstance(a.value, cst.Call)]
            if func.attr.value in ("append", "extend", "insert"):
                self._appended += [(a.value, loc) for a in node.args if isinstance(a.value, cst.Name)]
        if isinstance(func, cst.Attribute) and func.attr.value in WHOLE_MODEL_METHODS \
                and isinstance(func.value, cst.Name):
            self._whole_model_uses.setdefault(func.value.value, []).append(loc)
        elif isinstance(func, cst.Attribute) and func.attr.value in WHOLE_MODEL_METHODS \
                and isinstance(func.value, cst.Subscript):
            self._item_uses.append((func.value, loc))  # ``models[0].fit(...)``
        for arg in node.args:
            if isinstance(arg.value, cst.Name):
                self._passed.setdefault(arg.value.value, []).append((node, loc))
        resolved = self.ctx.names.resolve(func)
        self._callee_names[id(func)] = resolved
        if _is_loss_function(resolved):
            self._loss_calls.append((node, loc))
        if resolved & PARTIALS and node.args and node.args[0].keyword is None:
            self._callee_names[id(node.args[0].value)] = self.ctx.names.resolve(node.args[0].value)
        if _is_super_init(func) and positional_or_keyword(node, 1, "outputs") is not None:
            # ``class M(keras.Model): def __init__(...): super().__init__(inputs, outputs)``
            cls = loc.scope.enclosing_class()
            if cls is not None:
                self._super_inits.append((node, loc, cls))
        if not resolved:
            return
        if resolved & MODEL_CLASSES:
            self._models.append((node, loc, "functional"))
        elif resolved & SEQUENTIAL_CLASSES:
            self._models.append((node, loc, "sequential"))
        elif is_classifier_application(resolved):
            self._models.append((node, loc, "application"))

    # -- queries -------------------------------------------------------------------
    def resolve(self, expr: cst.BaseExpression) -> FrozenSet[str]:
        """Canonical names of a call target or class base, as seen during the walk."""
        found = self._callee_names.get(id(expr))
        return found if found is not None else self.ctx.names.resolve(expr)

    def outputs(self) -> List[ModelOutput]:
        """Every model output found in the file (call after the walk)."""
        if self._resolved is None:
            self._resolved = []
            nested = self._nested_models()
            for call, loc, style in self._models:
                if id(call) in nested:
                    continue  # its outputs feed another model: reported through that one
                if style == "application" and not self.used_as_whole_model(call):
                    continue  # a backbone whose inner tensors (``base.layers[-2].output``) are read
                for where in self._builder_contexts(loc):
                    for expr, producer in self._model_outputs(call, where, 0):
                        self._resolved.append(ModelOutput(call, expr, producer, style))
            for call, loc, cls in self._super_inits:
                if id(cls.node) in self._model_classes() and id(cls.node) not in nested:
                    outputs = positional_or_keyword(call, 1, "outputs")
                    assert outputs is not None
                    for where in self._construction_contexts(loc):
                        for expr, producer in self._tensor(outputs, where, 0):
                            self._resolved.append(ModelOutput(call, expr, producer, "functional"))
            for classdef, scope in self._model_classes().values():
                if id(classdef) in nested or self._only_a_base(classdef, scope):
                    continue
                if _method(scope, "call") is None and _method(scope, "__call__") is None \
                        and self._foreign_model_base(scope) is not None:
                    # ``call`` inherited from a base of another module: what it returns
                    # through the methods this class overrides (virtual dispatch)
                    for expr, producer in self._inherited_call(scope):
                        self._resolved.append(ModelOutput(classdef, expr, producer, "subclassed"))
                    continue
                builds: List[Optional[Tuple[cst.Call, Location]]] = list(self._built_here(classdef))
                if not builds or len(builds) > _MAX_BUILDER_CALLS:
                    # judged as its own class: a ``call`` it inherits reads the
                    # attributes of whichever class builds it (only one that is built)
                    if _method(scope, "call") is None and _method(scope, "__call__") is None:
                        continue
                    builds = [None]
                for built in builds:
                    for expr, producer in self._subclassed(scope, 0, built):
                        self._resolved.append(ModelOutput(classdef, expr, producer, "subclassed"))
        return self._resolved

    def _only_a_base(self, classdef: cst.ClassDef, scope: Scope) -> bool:
        """A model class the file never builds, whose subclasses here each override
        ``call`` (``ProbNet(LogitsNet)`` returning ``softmax(super().call(x))``), or
        some of which the file builds (``SoftmaxNet(Base)`` setting ``head_act``): its
        own outputs are theirs, judged through them (as the class each one is)."""
        derived = [s for node, s, _ in self._classes if s is not scope and any(c is scope for c in class_chain(s))]
        if not derived or self._built_here(classdef):
            return False
        return all(_method(s, "call") is not None for s in derived) \
            or any(isinstance(s.node, cst.ClassDef) and self._built_here(s.node) for s in derived)

    def _built_here(self, classdef: cst.ClassDef) -> List[Tuple[cst.Call, Location]]:
        """The file's calls that build the class (``SoftmaxNet()``), where each is made."""
        name = classdef.name.value
        return [(call, where) for call, where in self.ctx.scopes.calls.get(name, ())
                if getattr(where.lookup(name), "node", None) is classdef]

    def method_calls(self, name: str) -> int:
        """How many ``self.<name>(...)`` calls the file's classes make."""
        return sum(1 for call, _ in self._self_calls
                   if isinstance(call.func, cst.Attribute) and call.func.attr.value == name)

    def _builder_contexts(self, loc: Location) -> List[Location]:
        """Where a model built in a function is judged: once per call of that function in
        the file (``build(head="softmax")`` and ``build(head="linear")`` each decide the
        head), up to ``_MAX_BUILDER_CALLS``; else once, with any call's values."""
        function = loc.scope.node
        if not isinstance(function, cst.FunctionDef) or loc.scope.parent is None \
                or loc.scope.parent.kind == "class":
            return [loc]
        sites = calls_of(self.ctx.scopes.calls, loc.scope)
        if not sites or len(sites) > _MAX_BUILDER_CALLS:
            return [loc]
        return [loc.entering(CallFrame(function, call, where, entry=True)) for call, where, _ in sites]

    def _construction_contexts(self, loc: Location) -> List[Location]:
        """Where a functional subclass's ``__init__`` graph is judged: as any construction
        would build it, and once per construction in the file (``ResNet50()`` passing
        ``classifier_activation="softmax"`` to ``ResNet`` whose default is linear), up
        to ``_MAX_BUILDER_CALLS``."""
        function = loc.scope.node
        if not isinstance(function, cst.FunctionDef) or function.name.value != "__init__":
            return [loc]
        sites = calls_of(self.ctx.scopes.calls, loc.scope)
        if len(sites) > _MAX_BUILDER_CALLS:
            return [loc]
        return [loc, *(loc.entering(CallFrame(function, call, where, offset, entry=True))
                       for call, where, offset in sites)]

    def producer(self, expr: cst.BaseExpression, loc: Location, depth: int = 0) -> Optional[Producer]:
        """What computes the tensor ``expr`` (a layer call or an op call), if known.

        None when unknown, or when several tensors may be meant (a helper function
        with several returns, a multi-output nested model).
        """
        found = list(self._tensor(expr, loc, depth))
        if len(found) != 1:
            return None
        return found[0][1]

    def tensors(self, expr: cst.BaseExpression, loc: Location, part: Path = ()) -> List[Output]:
        """Each single tensor ``expr`` may stand for, with its producer (None: unknown):
        what another module asks of a function of this one it calls (a model's head),
        or of part ``part`` of the tuple it returns."""
        return list(self._tensor(expr, loc, 0, part))

    def call_outputs(self, classdef: cst.ClassDef,
                     built: Optional[Tuple[cst.Call, Location]] = None) -> List[Output]:
        """What the ``call`` of a class of this file returns, each tensor with its producer:
        what another module asks of a layer class of this one at its model's output;
        inside the construction ``built`` when given (its arguments bind ``__init__``'s
        parameters, so ``self.<attr>`` holds what that construction stored)."""
        scope = next((s for node, s, _ in self._classes if node is classdef), None)
        return [] if scope is None else list(self._subclassed(scope, 0, built))

    def built_model_outputs(self, expr: cst.BaseExpression, loc: Location) -> Optional[List[Output]]:
        """The outputs of the model ``expr`` denotes (a ``Model(...)`` call, through
        variables and the functions that return it: ``build_generator()`` returning
        ``Model(inputs, out)``), each with its producer; None when ``expr`` is no model
        followed here. What another module asks of a builder of this one whose model it
        calls as a layer (a GAN's generator inside the combined model)."""
        layer = self._layer(expr, loc, 0)
        if layer is None or not self.is_model_constructor(layer.constructor, layer.location):
            return None
        return list(self._model_outputs(layer.constructor, layer.location, 0))

    def layer(self, expr: cst.BaseExpression, loc: Location, part: Path = ()) -> Optional[LayerProducer]:
        """The layer ``expr`` denotes (a constructor call, through variables and
        ``self`` attributes), if known: the layer a wrapper such as TimeDistributed runs;
        with ``part``, the layer that part of the tuple ``expr`` gives is."""
        return self._layer_part(expr, loc, 0, part) if part else self._layer(expr, loc, 0)

    def op_input(self, op: OpProducer) -> Optional[Producer]:
        """The producer of an op's first tensor argument (``x`` in ``tf.nn.softmax(x)``)."""
        expr = first_tensor_argument(op.call)
        return None if expr is None else self.producer(expr, op.location)

    def is_model_constructor(self, call: cst.Call, loc: Location) -> bool:
        """``keras.Model(...)``, ``keras.Sequential(...)``, a ``keras.applications``
        classifier or a local Model subclass."""
        resolved = self.resolve(call.func)
        if resolved & (MODEL_CLASSES | SEQUENTIAL_CLASSES) or is_classifier_application(resolved):
            return True
        return self._local_model_class(call.func, loc) is not None

    def used_as_whole_model(self, model: cst.CSTNode, smoke_tests: bool = True) -> bool:
        """Whether the model (a ``ModelOutput.model_call``) is certainly trained or run
        as a whole in this file: compiled, fit, evaluated or asked to predict, through
        the variable it is bound to or the result of a function that returns it. A
        model not seen so may be a block of a bigger one (an encoder, a stem, a class
        another file uses as a layer), whose last layer is no output. ``smoke_tests``:
        whether a use in a ``__main__`` guard no mixed policy governs counts
        (:meth:`_smoke_test`): it shows the model whole, not trained under the policy."""
        made = {id(call): (call, loc) for call, loc, _ in self._models}
        classes = {id(call): cls.node for call, _, cls in self._super_inits}

        def makes(value: cst.BaseExpression, where: Location) -> bool:
            return self._makes_model(value, where, model, made, classes)

        for value, where in self._container_uses():
            if makes(value, where):
                return True
        for name, uses in self._whole_model_uses.items():
            for use in uses:
                if not smoke_tests and self._smoke_test(use):
                    continue
                binding = use.lookup(name)
                if binding is None or binding.scope is None or binding.kind not in ("assign", "annassign") \
                        or binding.value is None:
                    continue
                if makes(binding.value, binding.location()):
                    return True
        return False

    def _smoke_test(self, use: Location) -> bool:
        """A use in the module's ``__main__`` guard that no mixed policy governs: that
        code runs only when the module itself is the program (``backbone.summary()`` in a
        builder's self-test), not in the program that sets the policy elsewhere."""
        return any(arm == "body" and _is_main_test(test) for _, arm, test in use.branches) \
            and not self.ctx.facts.main_guard_mixed()

    def _makes_model(self, value: cst.BaseExpression, where: Location, model: cst.CSTNode,
                     made: Mapping[int, Tuple[cst.Call, Location]], classes: Mapping[int, cst.CSTNode]) -> bool:
        """``value`` builds the model: its constructor, a local builder, its class."""
        if not isinstance(value, cst.Call):
            return False
        if id(model) in made and self._makes(value, where, made[id(model)]):
            return True
        found = self._local_model_class(value.func, where)
        return found is not None and found[0] is classes.get(id(model), model)

    def _trained_elements(self) -> Set[int]:
        """The calls written as elements of a tuple or list whose elements are trained or
        run as whole models (:meth:`_container_uses`): models, not layers of one."""
        return {id(value) for value, _ in self._container_uses()}

    def _container_uses(self) -> List[Tuple[cst.BaseExpression, Location]]:
        """The elements of containers a whole-model method is called on, one at a time:
        ``for m in models: m.fit(...)`` over a tuple or list written out (or a name bound
        once to one), and ``models[0].fit(...)`` (memoised)."""
        if self._containers is not None:
            return self._containers
        out: List[Tuple[cst.BaseExpression, Location]] = []
        for name, uses in self._whole_model_uses.items():
            for use in uses:
                binding = use.lookup(name)
                if binding is not None and binding.kind == "for" and isinstance(binding.node, cst.For) \
                        and isinstance(binding.node.target, cst.Name) and binding.scope is not None:
                    out += self._elements(binding.node.iter, binding.location())
        for item, loc in self._item_uses:
            found = self.ctx.values.item(item, loc)
            if found is not None:
                out.append(found)
        self._containers = out
        return out

    def _elements(self, iterable: cst.BaseExpression, loc: Location) -> List[Tuple[cst.BaseExpression, Location]]:
        """The elements of a tuple or list literal a loop runs over: written there, or
        bound once to a name never changed in place (``models = [build_a(), build_b()]``)."""
        if isinstance(iterable, cst.Name):
            bindings = loc.reaching(iterable.value)
            if len(bindings) != 1 or not is_constant(bindings[0]) or bindings[0].scope is None \
                    or self.ctx.values.changed_in_place(bindings[0].scope, iterable.value):
                return []
            assert bindings[0].value is not None
            return self._elements(bindings[0].value, bindings[0].location())
        if isinstance(iterable, (cst.Tuple, cst.List)):
            return [(e.value, loc) for e in iterable.elements if isinstance(e, cst.Element)]
        return []

    def model_variables(self, model: cst.CSTNode) -> Set[str]:
        """The names of the file bound to the model (a ``ModelOutput.model_call``): to its
        constructor call, or to a call of a local function that returns it
        (``model = wide_resnet(...)``)."""
        made = {id(call): (call, loc) for call, loc, _ in self._models}
        names: Set[str] = set()
        for scope in self.ctx.scopes.all_scopes():
            for name, bindings in scope.bindings.items():
                for binding in bindings:
                    value = binding.value
                    if value is model:
                        names.add(name)
                    elif isinstance(value, cst.Call) and id(model) in made and binding.scope is not None \
                            and self._makes(value, binding.location(), made[id(model)]):
                        names.add(name)
        return names

    def discarded(self, model: cst.CSTNode) -> bool:
        """The model (a ``ModelOutput.model_call``) is handed back by its builder beside
        another and thrown away by every caller (``model, _ = con_auto()``):
        :mod:`discarded_models`."""
        made = next(((call, loc) for call, loc, _ in self._models if call is model), None)
        if made is None or not isinstance(made[1].scope.node, cst.FunctionDef):
            return False
        return discarded(self.ctx, model, made, self._returns.get(id(made[1].scope.node), []))

    def stored_on_instance(self, model: cst.CSTNode) -> bool:
        """The model (a ``ModelOutput.model_call``) is built straight into an attribute of
        ``self`` (``self.gate = Sequential([..., Activation("sigmoid")])``): a block its
        class calls, whose last activation is a gate, not the output of a whole model."""
        return any(binding.value is model for scope in self.ctx.scopes.all_scopes()
                   for bindings in scope.attributes.values() for binding in bindings)

    def trained_as_whole(self, model: cst.CSTNode) -> bool:
        """Whether the model is seen trained or run as a whole: here
        (:meth:`used_as_whole_model`), or by code elsewhere in the project that trains
        what its class or its builder function makes (the program model's facts)."""
        if self.used_as_whole_model(model, smoke_tests=False):
            return True
        trained = self.ctx.facts.project_trained_models
        if isinstance(model, cst.ClassDef):
            return model.name.value in trained
        for call, _, cls in self._super_inits:
            if call is model:
                return isinstance(cls.node, cst.ClassDef) and cls.node.name.value in trained
        for call, loc, _ in self._models:
            if call is model:
                return function_key(loc.scope) in trained
        return False

    def feeds_a_layer(self, output: ModelOutput) -> bool:
        """Whether a functional model's output tensor is also the input of a layer of
        the file: the model is a view into a bigger graph (a feature extractor built
        beside the model that is trained), and the tensor is an inner one there."""
        if output.style != "functional" or not isinstance(output.expression, cst.Call) \
                or output.producer is None:
            return False
        where = output.producer.location
        name = _bound_to(output.expression, where)
        binding = None if name is None else _binding_of(output.expression, where, name)
        if name is None or binding is None:
            return False
        for call, loc in self._passed.get(name, []):
            if call is output.model_call or loc.scope is not where.scope or loc.lookup(name) is not binding:
                continue
            layer = self._layer(call.func, loc, 0) if isinstance(call.func, (cst.Call, cst.Name)) else None
            if layer is not None and self._passed_through(layer, call, loc) is not None:
                continue  # a pass-through layer (``Named()(logits)``) hands the tensor on as it is
            if layer is not None and not layer.layer_class & SIZE_KEEPING_LAYERS:
                return True  # a layer that computes on it (not a softmax for a predictor)
        return False

    def recast_after(self, producer: "Producer") -> bool:
        """Whether the producer's tensor reaches a model output through a pass-through
        layer class (``Masked()([probs, mask])``): Keras autocasts that layer's floating
        inputs to the compute dtype, so a float32 producer alone leaves the output 16-bit."""
        return id(_producer_call(producer)) in self._recast

    def loss_computed_on(self, output: ModelOutput) -> bool:
        """Whether the model's own code computes a loss on the output tensor: the variable
        it is bound to is read by a loss function called after it, in the same function
        (``logits = self.head(h)`` then ``self.last_loss = ops.categorical_crossentropy(
        ops.reshape(logits, ...), ...)`` in ``call``). Such a 16-bit output is no user's
        logits to cast: the library's loss itself runs on it."""
        if not isinstance(output.expression, cst.Call):
            return False
        for call, loc in self._loss_calls:
            name = _bound_to(output.expression, loc)
            binding = None if name is None else _binding_of(output.expression, loc, name)
            if name is not None and binding is not None and loc.order > binding.order \
                    and loc.lookup(name) is binding and mentions(call, name):
                return True
        return False

    def _makes(self, value: cst.Call, loc: Location, model: Tuple[cst.Call, Location]) -> bool:
        """``value`` is the model's constructor call, or a call of a local function
        that returns it (``def build(): model = Sequential(...); return model``)."""
        call, where = model
        if value is call:
            return True
        helper = self._local_function(value.func, loc)
        if helper is None:
            return False
        for returned, at in self._returns.get(id(helper), []):
            if returned is call:
                return True
            if isinstance(returned, cst.Name):
                binding = at.lookup(returned.value)
                if binding is not None and binding.value is call:
                    return True
        return False

    # -- sub-models ----------------------------------------------------------------------
    def _nested_models(self) -> Set[int]:
        """Models used as layers of another model (ids of constructor calls and
        ClassDefs): an encoder, a backbone, a GAN's generator. Their outputs are
        intermediate tensors unless they end the outer model."""
        if self._nested is None:
            nested: Set[int] = set()
            for call, loc, style in self._models:
                if style == "functional":
                    outputs = positional_or_keyword(call, 1, "outputs")
                    if outputs is None:
                        continue
                    # once per call of its builder: a model handed in (``vae(encoder, decoder)``)
                    # is known through the call's argument
                    for where in self._builder_contexts(loc):
                        self._mark_graph(outputs, where, nested)
                elif style == "sequential":
                    self._mark_sequential(call, loc, nested)
            # Blocks: models made where a layer goes, or made or called inside a
            # Keras class or a class that builds a functional graph (a training
            # wrapper that is a plain class only runs them).
            trained = self._trained_elements()
            for call, loc in self._positions:
                if id(call) not in trained:  # ``models = [build_a(), build_b()]`` then each trained
                    self._mark_layer(call, loc, nested)
            for name, loc in self._appended:
                self._mark_appended(name, loc, nested)
            self._mark_wrapped(nested)
            keras_classes = self._keras_classes() | {id(cls.node) for _, _, cls in self._super_inits
                                                     if not self._plain_project_class(cls)}
            for calls, target in ((self._self_calls, True), (self._class_calls, False)):
                for call, loc in calls:
                    cls = loc.scope.enclosing_class()
                    if cls is not None and id(cls.node) in keras_classes:
                        self._mark_layer(call.func if target else call, loc, nested)
            self._nested = nested
        return self._nested

    def _mark_layer(self, expr: cst.BaseExpression, loc: Location, nested: Set[int]) -> None:
        layer = self._layer(expr, loc, 0)
        if layer is None or not self.is_model_constructor(layer.constructor, layer.location):
            return
        nested.add(id(layer.constructor))
        found = self._local_model_class(layer.constructor.func, layer.location)
        if found is not None:
            nested.add(id(found[0]))

    def _mark_wrapped(self, nested: Set[int]) -> None:
        """A model handed to the constructor of a model class (``ContrastiveModel(encoder)``,
        ``GAN(generator, discriminator)``): a part the wrapper runs in its own ``call`` or
        ``train_step``; what reaches a loss is the wrapper's to say (judged as its class)."""
        for name, sites in self.ctx.scopes.calls.items():
            if "." in name:
                continue
            for call, loc in sites:
                if not call.args or (self._local_model_class(call.func, loc) is None
                                     and not self._imported_model_base(call.func, loc)):
                    continue
                for arg in call.args:
                    if arg.star:
                        continue
                    self._mark_layer(arg.value, loc, nested)

    def _mark_appended(self, name: cst.Name, loc: Location, nested: Set[int]) -> None:
        """A model put in a list of blocks (``downsample_layers.append(stem)``, built
        in a loop or not), unless it is trained or run as a whole (an ensemble)."""
        binding = loc.lookup(name.value)
        if binding is None or binding.kind not in ("assign", "annassign") or binding.scope is None:
            return
        value = binding.value
        if not isinstance(value, cst.Call) or not self.is_model_constructor(value, binding.location()):
            return
        found = self._local_model_class(value.func, binding.location())
        if self.used_as_whole_model(value) or (found is not None and self.used_as_whole_model(found[0])):
            return
        nested.add(id(value))
        if found is not None:
            nested.add(id(found[0]))

    def _mark_sequential(self, call: cst.Call, loc: Location, nested: Set[int]) -> None:
        layers = positional_or_keyword(call, 0, "layers")
        if isinstance(layers, (cst.List, cst.Tuple)):
            for element in layers.elements:
                if not isinstance(element, cst.StarredElement):
                    self._mark_layer(element.value, loc, nested)
        variable = _bound_to(call, loc)
        if variable is not None:
            for mutation in self._mutations.get(variable, []):
                if mutation.method == "add" and mutation.call.args:
                    self._mark_layer(mutation.call.args[0].value, mutation.location, nested)

    def _mark_graph(self, outputs: cst.BaseExpression, loc: Location, nested: Set[int]) -> None:
        """Walk a functional graph back from its outputs, marking models called in it."""
        stack: List[Tuple[cst.BaseExpression, Location]] = [(outputs, loc)]
        seen: Set[int] = set()
        budget = 5000
        while stack and budget:
            budget -= 1
            expr, where = stack.pop()
            if id(expr) in seen:
                continue
            seen.add(id(expr))
            if isinstance(expr, (cst.List, cst.Tuple)):
                stack += [(e.value, where) for e in expr.elements]
            elif isinstance(expr, cst.Dict):
                stack += [(e.value, where) for e in expr.elements]
            elif isinstance(expr, cst.Name):
                binding = self._plain_binding(expr, where)
                if binding is not None and binding.scope is not None and binding.value is not None:
                    # inside the same calls: a parameter is the argument of the builder's call
                    stack.append((binding.value, binding.location().within(where.context)))
                # (``mu, sigma, z = encoder(inputs)`` is not followed: an output unpacked
                # there may still reach a loss, the KL term's mu and sigma)
            elif isinstance(expr, cst.BinaryOperation):
                stack += [(expr.left, where), (expr.right, where)]
            elif isinstance(expr, cst.Subscript):
                stack.append((expr.value, where))
            elif isinstance(expr, cst.Call):
                helper = self._local_function(expr.func, where)
                if helper is not None:
                    stack += self._returns.get(id(helper), [])
                elif isinstance(expr.func, (cst.Call, cst.Name)) or _self_attribute(expr.func):
                    self._mark_layer(expr.func, where, nested)
                stack += [(arg.value, where) for arg in expr.args]

    # -- model styles ---------------------------------------------------------------
    def _model_outputs(self, call: cst.Call, loc: Location, depth: int) -> Iterator[Output]:
        """The outputs of the model that ``call`` constructs (any style)."""
        if depth > _MAX_DEPTH or id(call) in self._expanding:
            return
        self._expanding.add(id(call))
        try:
            resolved = self.resolve(call.func)
            if resolved & MODEL_CLASSES:
                outputs = positional_or_keyword(call, 1, "outputs")
                if outputs is not None:
                    yield from self._tensor(outputs, loc, depth + 1)
            elif resolved & SEQUENTIAL_CLASSES:
                last = self._sequential_last(call, loc)
                if last is not None:
                    yield from self._layer_outputs(last[0], last[1], depth + 1)
            elif is_classifier_application(resolved):
                # its top, when it has one: the "predictions" Dense the call configures
                yield call, LayerProducer(call, resolved, loc)
            else:
                found = self._local_model_class(call.func, loc)
                if found is not None:
                    yield from self._subclassed(found[1], depth + 1, (call, loc))
        finally:
            self._expanding.discard(id(call))

    def _subclassed(self, class_scope: Scope, depth: int,
                    built: Optional[Tuple[cst.Call, Location]] = None) -> Iterator[Output]:
        """What ``call`` returns in a subclassed model (each ``return``); inside the
        construction ``built`` when given: ``self`` is an instance of the class it
        builds (whose overrides and class attributes win), and ``__init__`` takes its
        arguments."""
        found = method_of(class_scope, "call") or method_of(class_scope, "__call__")
        method = found.node if found is not None and found.kind == "def" else None
        if not isinstance(method, cst.FunctionDef):
            return
        frame: Optional[CallFrame] = None
        if built is not None:
            init = method_of(class_scope, "__init__")
            function = init.node if init is not None and isinstance(init.node, cst.FunctionDef) \
                else class_scope.node
            frame = CallFrame(function, built[0], built[1], 1, entry=True)
        for value, where in self._returns.get(id(method), []):
            if frame is not None:
                where = where.within(built[1].context).entering(frame)  # type: ignore[index]
            yield from self._tensor(value, where, depth + 1)

    def _model_classes(self) -> Dict[int, Tuple[cst.ClassDef, Scope]]:
        """Local classes deriving from keras.Model (or Sequential), directly, via local
        classes or via a model class of another module of the project: what their
        ``call`` returns are the model's outputs."""
        if self._model_class_scopes is None:
            self._model_class_scopes = self._derived_classes(
                lambda names: bool(names & ANY_MODEL_CLASSES), self._imported_model_base)
        return self._model_class_scopes

    def is_model_class_named(self, name: str) -> bool:
        """The top-level class ``name`` of this file is a Keras model (another module
        asks, for a class deriving from it there)."""
        binding = self.ctx.scopes.module_scope.lookup(name)
        return binding is not None and binding.kind == "class" and id(binding.node) in self._model_classes()

    def inherited(self, func: cst.BaseExpression, loc: Location) -> Optional[Tuple[cst.BaseExpression, FrozenSet[str]]]:
        """``self.m`` in a class of this file when no class of its chain here binds ``m``
        and the chain's one base from elsewhere is a model class of another project
        module: that base (``m`` is judged there) and every name the class bodies here
        bind (methods, class attributes): code of the base reading one of them would
        reach the subclass's (virtual dispatch), which that module cannot see. Instance
        attributes are not among them: this module answers ``self.<attr>`` there."""
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.value.value == "self"):
            return None
        cls = loc.scope.enclosing_class()
        if cls is None:
            return None
        chain = class_chain(cls)
        if any(func.attr.value in s.attributes for s in chain):
            return None
        bound = frozenset(name for s in chain for name in s.bindings)
        if func.attr.value in bound:
            return None
        local = {id(s.node) for s in chain}
        foreign = [base.value for s in chain if isinstance(s.node, cst.ClassDef) for base in s.node.bases
                   if id(getattr(loc.lookup(base.value.value), "node", None) if isinstance(base.value, cst.Name)
                         else None) not in local]
        if len(foreign) != 1 or not self._imported_model_base(foreign[0], loc):
            return None
        return foreign[0], bound

    def inherited_outputs(self, cls_name: str, method: str, args: Sequence[cst.Arg],
                          bound: FrozenSet[str], attributes: InstanceAttributes) -> Optional[List[Output]]:
        """What ``method`` of the class ``cls_name`` of this file returns when a subclass
        in another module calls ``self.<method>(args)`` (``args`` literal or unknown): None
        when a base of the class lives elsewhere, or its code reads on ``self`` a name
        the subclass binds (``bound``: its own ``build_top`` would run instead)."""
        binding = self.ctx.scopes.module_scope.lookup(cls_name)
        if binding is None or binding.kind != "class" or any(arg.star for arg in args):
            return None
        scope = next((s for node, s, _ in self._classes if node is binding.node), None)
        if scope is None:
            return None
        chain = class_chain(scope)
        local = {id(s.node) for s in chain}
        for current in chain:
            for base in current.node.bases if isinstance(current.node, cst.ClassDef) else ():
                named = self.resolve(base.value)
                known = isinstance(base.value, cst.Name) \
                    and id(getattr(self.ctx.scopes.module_scope.lookup(base.value.value), "node", None)) in local
                if not known and not names_tensorflow(named):
                    return None  # a base of a third module: its methods and attributes are unknown here
            for attr in find_all(current.node, cst.Attribute):
                if isinstance(attr.value, cst.Name) and attr.value.value == "self" and attr.attr.value in bound:
                    return None
        found = method_of(scope, method)
        if found is None or found.kind != "def" or not isinstance(found.node, cst.FunctionDef):
            return None
        call = cst.Call(func=cst.Attribute(cst.Name("self"), cst.Name(method)), args=list(args))
        self.ctx.values.instance_of_call(call, attributes)  # ``self.<attr>`` of the subclass's instance
        frame = CallFrame(found.node, call, Location(self.ctx.scopes.module_scope, AFTER_ALL), 1)
        out: List[Output] = []
        for value, where in self._returns.get(id(found.node), []):
            out += self._tensor(value, where.entering(frame), 1)
        return out

    def dispatch_outputs(self, cls_name: str, overrides: Overrides,
                         attributes: InstanceAttributes) -> Optional[List[Dispatch]]:
        """For an instance of a subclass in another module that binds ``overrides`` and
        inherits ``call`` from the class ``cls_name`` of this file: the calls of overridden
        methods on the instance whose returned layer or tensor ``call`` returns (each
        judged in the subclass's module). Outputs the base computes itself are its own
        (judged here as its class). None when the base cannot be followed for that
        instance: a base of a third module, a name the subclass binds read other than by
        calling it. ``attributes``: ``self.<attr>`` of the instance, answered there."""
        binding = self.ctx.scopes.module_scope.lookup(cls_name)
        if binding is None or binding.kind != "class":
            return None
        scope = next((s for node, s, _ in self._classes if node is binding.node), None)
        if scope is None or self._dispatch is not None:
            return None
        chain = class_chain(scope)
        if self._third_module_base(chain) or reads_overridden([s.node for s in chain], overrides):
            return None
        found = method_of(scope, "call") or method_of(scope, "__call__")
        if found is None or found.kind != "def" or not isinstance(found.node, cst.FunctionDef):
            return None
        call = cst.Call(func=cst.Attribute(cst.Name("self"), cst.Name("call")), args=[])
        self.ctx.values.instance_of_call(call, attributes)  # ``self.<attr>`` of the subclass's instance
        frame = CallFrame(found.node, call, Location(self.ctx.scopes.module_scope, AFTER_ALL), 1)
        state = DispatchState(frozenset(id(s.node) for s in chain), overrides, {})
        self._dispatch = state
        out: List[Dispatch] = []
        try:
            for value, where in self._returns.get(id(found.node), []):
                for _, producer in self._tensor(value, where.entering(frame), 1):
                    hit = state.hits.get(id(producer.constructor)) if isinstance(producer, LayerProducer) else None
                    if hit is not None:
                        out.append(hit)
        finally:
            self._dispatch = None
        return unique(out)

    def _third_module_base(self, chain: Sequence[Scope]) -> bool:
        """A class of ``chain`` (a class of this file and its bases here) derives from a
        class of another module that is no TensorFlow/Keras API: its methods and
        attributes are unknown here."""
        local = {id(s.node) for s in chain}
        for current in chain:
            for base in current.node.bases if isinstance(current.node, cst.ClassDef) else ():
                known = isinstance(base.value, cst.Name) \
                    and id(getattr(self.ctx.scopes.module_scope.lookup(base.value.value), "node", None)) in local
                if not known and not names_tensorflow(self.resolve(base.value)):
                    return True
        return False

    def _dispatched(self, call: cst.Call, loc: Location, kind: str) -> bool:
        """During :meth:`dispatch_outputs`: ``call`` calls on the instance a method its
        class in the other module overrides (noted, with its arguments, as a layer or a
        tensor the override returns)."""
        state = self._dispatch
        func = call.func
        if state is None or not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                                 and func.value.value == "self") or func.attr.value not in state.overrides.methods:
            return False
        cls = instance_class(loc)
        if cls is None or id(cls.node) not in state.chain:
            return False  # ``self`` of another class (a block the model builds)
        args = portable([known_argument(self.ctx, arg, loc) for arg in call.args])
        state.hits[id(call)] = Dispatch(kind, func.attr.value, args)
        return True

    def _stored_by_subclass(self, attr: str, cls: Scope) -> bool:
        """During :meth:`dispatch_outputs`: the subclass in the other module stores
        ``self.<attr>`` itself, so which layer it holds is not the base's to say."""
        state = self._dispatch
        return state is not None and attr in state.overrides.assigned and id(cls.node) in state.chain

    def _inherited_call(self, scope: Scope) -> Iterator[Output]:
        """The outputs of a model class of this file that inherits ``call`` from its one
        base of another module: what the base's ``call`` returns through methods this
        class overrides (``make_head``), each judged here as this class's method with the
        arguments the base passes (literals; others unknown). Nothing when the base
        cannot be followed, or this class's ``__init__`` does not hand on to the base's."""
        base = self._foreign_model_base(scope)
        if base is None:
            return
        chain = class_chain(scope)
        init = method_of(scope, "__init__")
        if init is not None and (not isinstance(init.node, cst.FunctionDef) or not calls_super_init(init.node)):
            return
        inside = Location(scope, AFTER_ALL)
        values = self.ctx.values

        def attributes(attr: str) -> object:
            return values.instance_attribute(inside, attr)

        for dispatch in imported_dispatch(self.ctx, base, overrides_of(chain), attributes) or ():
            if dispatch.args is None:
                continue
            call = cst.Call(func=cst.Attribute(cst.Name("self"), cst.Name(dispatch.method)),
                            args=list(dispatch.args))
            if dispatch.kind == TENSOR:
                for expr, producer in self._tensor(call, inside, 1):
                    if producer is not None and expr is not call:
                        yield expr, producer
                continue
            layer = self._layer(call, inside, 1)
            if layer is None or layer.constructor is call:
                continue
            if self.is_model_constructor(layer.constructor, layer.location):
                # ``make_stack`` returns a Sequential the base's ``call`` returns through:
                # its last layer is this model's output (a block of it otherwise)
                yield from self._model_outputs(layer.constructor, layer.location, 2)
                continue
            inner = self._wrapped(layer, 2)
            yield inner if inner is not None else (layer.constructor, layer)

    def _foreign_model_base(self, scope: Scope) -> Optional[cst.BaseExpression]:
        """The one base of a model class of this file (through its bases here) that is a
        model class of another project module, whose ``call`` it may inherit; else None
        (bases here only: the class is judged as this file's own)."""
        chain = class_chain(scope)
        local = {id(s.node) for s in chain}
        where = next((loc for node, s, loc in self._classes if s is scope), None)
        if where is None:
            return None
        foreign = [base.value for s in chain if isinstance(s.node, cst.ClassDef) for base in s.node.bases
                   if id(getattr(where.lookup(base.value.value), "node", None) if isinstance(base.value, cst.Name)
                         else None) not in local]
        if len(foreign) != 1 or not self._imported_model_base(foreign[0], where):
            return None
        return foreign[0]

    def _plain_project_class(self, cls: Scope) -> bool:
        """A class whose every base is a class of this file or of another project module,
        none of them a Keras model (``JointFpn(BaseModel)`` with ``class BaseModel(object)``
        elsewhere): its ``super().__init__(config, datagen)`` builds no functional model,
        and the models its methods build are its products, not blocks of it."""
        if not isinstance(cls.node, cst.ClassDef) or id(cls.node) in self._model_classes():
            return False
        chain = class_chain(cls)
        local = {id(s.node) for s in chain}
        for scope in chain:
            for base in scope.node.bases if isinstance(scope.node, cst.ClassDef) else ():
                written = base.value
                if isinstance(written, cst.Name) and id(getattr(
                        self.ctx.scopes.module_scope.lookup(written.value), "node", None)) in local:
                    continue
                if isinstance(written, cst.Name) and written.value == "object":
                    continue
                if names_tensorflow(self.resolve(written)) or imported_definition(self.ctx, written) is None:
                    return False  # a Keras base, or one of a third package: may be a model
        return True

    def _imported_model_base(self, base: cst.BaseExpression, loc: Location) -> bool:
        """``base`` names a model class of another module of the project (not one bound
        in this file, not a TensorFlow/Keras name)."""
        if not isinstance(base, (cst.Name, cst.Attribute)) or names_tensorflow(self.resolve(base)):
            return False
        head: cst.BaseExpression = base
        while isinstance(head, cst.Attribute):
            head = head.value
        if not isinstance(head, cst.Name) or loc.lookup(head.value) is not None:
            return False  # bound in this file (imports are no bindings)
        if id(base) not in self._imported_bases:  # asked again for each pass and each ``self.m()``
            self._imported_bases[id(base)] = imported_model_class(self.ctx, base)
        return self._imported_bases[id(base)]

    def _keras_classes(self) -> Set[int]:
        """Local classes deriving from any Keras class (Model, Layer...), or from a model
        class of another module of the project (``SmallNet(ImageClassifier)``: the model
        its ``make_body`` builds is a block of it, as of a class deriving from Keras's)."""
        return set(self._derived_classes(lambda names: any(n.startswith("keras.") for n in names))) \
            | set(self._model_classes())

    def _derived_classes(self, is_base: Callable[[FrozenSet[str]], bool],
                         imported: Optional[Callable[[cst.BaseExpression, Location], bool]] = None,
                         ) -> Dict[int, Tuple[cst.ClassDef, Scope]]:
        """Local classes with a base ``is_base`` accepts, directly or through other
        local classes (repeated until no class is added), or a base of another module
        ``imported`` accepts."""
        found: Dict[int, Tuple[cst.ClassDef, Scope]] = {}
        changed = True
        while changed:
            changed = False
            for node, scope, loc in self._classes:
                if id(node) in found:
                    continue
                for base in node.bases:
                    if is_base(self.resolve(base.value)) or self._is_found_class(base.value, loc, found) \
                            or (imported is not None and imported(base.value, loc)):
                        found[id(node)] = (node, scope)
                        changed = True
                        break
        return found

    @staticmethod
    def _is_found_class(expr: cst.BaseExpression, loc: Location,
                        found: Dict[int, Tuple[cst.ClassDef, Scope]]) -> bool:
        if not isinstance(expr, cst.Name):
            return False
        binding = loc.lookup(expr.value)
        return binding is not None and binding.kind == "class" and id(binding.node) in found

    def _local_model_class(self, func: cst.BaseExpression, loc: Location) -> Optional[Tuple[cst.ClassDef, Scope]]:
        if not isinstance(func, cst.Name):
            return None
        binding = loc.lookup(func.value)
        if binding is None or binding.kind != "class":
            return None
        return self._model_classes().get(id(binding.node))

    # -- sequential -------------------------------------------------------------------
    def _sequential_last(self, call: cst.Call, loc: Location) -> Optional[Tuple[cst.BaseExpression, Location]]:
        """The last layer of a Sequential model, when it is known for certain."""
        tail = self._sequential_tail(call, loc)
        if not tail:
            return None
        self._tails[id(tail[-1][0])] = tail
        return tail[-1]

    def sequential_tail(self, last: cst.BaseExpression) -> List[Tuple[cst.BaseExpression, Location]]:
        """The layers that end the Sequential model whose last layer is ``last``, in
        order, as far back as they are known for certain (however the list was
        assembled: a literal, appends, ``+=``, ``extend``, ``model.add``); [] when
        ``last`` ends no model (call after :meth:`outputs`)."""
        return self._tails.get(id(last), [])

    def _sequential_tail(self, call: cst.Call, loc: Location) -> Optional[List[Tuple[cst.BaseExpression, Location]]]:
        tail: _Tail = ([], True)
        layers = positional_or_keyword(call, 0, "layers")
        if layers is not None and not (isinstance(layers, cst.Name) and layers.value == "None"):
            found = self._layer_tail(layers, loc, call, 0)
            if found is None or not (found[0] or found[1]):
                return None
            tail = found
        # model = Sequential(...); model.add(...): the adds in the same scope, in order
        variable = _bound_to(call, loc)
        if variable is None:
            # Returned, stored on ``self`` or passed on: layers may be added where
            # we cannot follow, so only trust it when no unexplained add exists.
            return None if self._unexplained_adds() else tail[0]
        binding = _binding_of(call, loc, variable)
        mutations = self._mutations_of(variable, binding, loc)
        if mutations is None:
            return None
        # ``add_head(model)``: a local helper's adds to the parameter it is given
        followed: Dict[int, Tuple[int, List[_MethodCall]]] = {}
        for passed, where in self._passed.get(variable, []):
            if where.scope is loc.scope and where.order > loc.order and where.lookup(variable) is binding:
                adds = self._helper_adds(passed, where, variable)
                if adds is not None:
                    followed[id(passed)] = (where.order, adds)
        steps = sorted([(m.location.order, [m]) for m in mutations] + list(followed.values()), key=lambda s: s[0])
        added = [m for _, ms in steps for m in ms]
        if any(m.method != "add" or not m.call.args for m in added):
            return None  # pop()/insert() on a model: order unknown
        for mutation in added:
            tail = self._mutated(tail, mutation, 0)
        skip = frozenset(followed)
        if steps and self._passed_between(variable, binding, loc.order, steps[-1][0], loc, followed=skip):
            return None
        if self._adds_elsewhere(variable, binding, loc, skip):
            return None
        return tail[0]

    def _helper_adds(self, call: cst.Call, where: Location, variable: str) -> Optional[List[_MethodCall]]:
        """The ``.add`` calls a local function makes, in its own body, on the parameter
        that receives ``variable`` (None: not such a helper, or not followed)."""
        callee = self._local_function(call.func, where)
        scope = self._function_scopes.get(id(callee)) if callee is not None else None
        if callee is None or scope is None:
            return None
        param = _receiving_param(call, callee, variable)
        binding = next((b for b in scope.bindings.get(param, []) if b.kind == "param"), None) if param else None
        if param is None or binding is None:
            return None
        adds = self._mutations_of(param, binding, where)
        return adds if adds else None

    def _mutated(self, tail: "_Tail", mutation: _MethodCall, depth: int) -> "_Tail":
        """The known end of a list after ``append``/``add``/``extend`` (one in a loop
        adds an unknown number of layers: nothing before it stays known)."""
        if mutation.in_loop:
            return [], False
        value = mutation.call.args[0].value
        if mutation.method != "extend":
            return tail[0] + [(value, mutation.location)], tail[1]
        added = self._layer_tail(value, mutation.location, mutation.call, depth + 1)
        if added is None:
            return [], False
        return (tail[0] + added[0], tail[1]) if added[1] else added

    def _layer_tail(self, expr: cst.BaseExpression, loc: Location, use: cst.Call,
                    depth: int) -> Optional["_Tail"]:
        """The known end of a list of layers (literal, variable with its appends,
        ``a + b``, a helper's returned list), and whether it is the whole list."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, (cst.List, cst.Tuple)):
            items: List[Tuple[cst.BaseExpression, Location]] = []
            for element in reversed(expr.elements):
                if isinstance(element, cst.StarredElement):  # ``*head_layers(10)``: what it holds
                    inner = self._layer_tail(element.value, loc, use, depth + 1)
                    if inner is None:
                        return (items, False) if items else None
                    return inner[0] + items, inner[1] and element is expr.elements[0]
                items.insert(0, (element.value, loc))
            return items, True
        if isinstance(expr, cst.Call):
            callee = self._callable(expr.func, loc, depth + 1)
            if callee is None and not names_tensorflow(self.resolve(expr.func)) \
                    and self._imported_head(expr.func, loc):
                # ``Sequential(heads.classifier_layers(10))``: the last layer of the list
                # that function returns, judged in its module (:meth:`_layer`)
                self._listed.add(id(expr))
                return [(expr, loc)], False
            returns = self._returns.get(id(callee[0]), []) if callee is not None else []
            if callee is None or len(returns) != 1:
                return None
            value, where = returns[0]
            return self._layer_tail(value, self._inside(callee, expr, loc, where), use, depth + 1)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            right = self._layer_tail(expr.right, loc, use, depth + 1)
            if right is None or not right[1]:
                return right
            left = self._layer_tail(expr.left, loc, use, depth + 1)
            return (left[0] + right[0], left[1]) if left is not None else (right[0], False)
        if isinstance(expr, cst.Name):
            binding = self._list_binding(loc.lookup(expr.value))
            if binding is None or binding.kind != "assign" or binding.scope is None or binding.value is None:
                return None
            where = binding.location()
            tail = self._layer_tail(binding.value, where, use, depth + 1) or ([], False)
            # appends between the list's creation and its use
            mutations = self._mutations_of(expr.value, binding, where)
            if mutations is None:
                return None
            mutations = [m for m in mutations if m.location.order <= loc.order]
            if any(m.method not in ("append", "extend") or not m.call.args for m in mutations):
                return None
            for mutation in mutations:
                tail = self._mutated(tail, mutation, depth)
            if self._passed_between(expr.value, binding, binding.order, loc.order, loc, use):
                return None
            return tail
        return None

    @staticmethod
    def _list_binding(binding: Optional[Binding]) -> Optional[Binding]:
        """The assignment that made a list ``layers += [...]`` then grew (an
        augmented assignment is read as an ``extend`` of it)."""
        if binding is None or binding.kind != "augassign" or binding.scope is None:
            return binding
        earlier = [b for b in binding.scope.bindings.get(binding.name, [])
                   if b.order < binding.order and b.kind != "augassign"]
        return max(earlier, key=lambda b: b.order) if earlier else None

    def _unexplained_adds(self) -> bool:
        """An ``.add`` call on something not plainly bound to a Sequential call."""
        if self._attribute_adds:
            return True
        for mutations in self._mutations.values():
            for m in mutations:
                if m.method != "add":
                    continue
                receiver = m.call.func.value  # type: ignore[attr-defined]
                binding = m.location.lookup(receiver.value)
                value = binding.value if binding is not None else None
                if not (isinstance(value, cst.Call) and self.resolve(value.func) & SEQUENTIAL_CLASSES) \
                        and not self._only_given_sequentials(binding):
                    return True
        return False

    def _only_given_sequentials(self, binding: Optional[Binding]) -> bool:
        """A local helper's parameter (``def add_head(model)``) that every call in the
        file fills with a variable bound to a Sequential: its adds are read there."""
        if binding is None or binding.kind != "param" or binding.scope is None:
            return False
        function = binding.scope.node
        if not isinstance(function, cst.FunctionDef) or binding.scope.enclosing_class() is not None:
            return False
        calls = self.ctx.scopes.calls.get(function.name.value, [])
        for call, where in calls:
            passed = [a.value for a in call.args if isinstance(a.value, cst.Name)
                      and _receiving_param(call, function, a.value.value) == binding.name]
            given = where.lookup(passed[0].value) if len(passed) == 1 else None
            if given is None or given.kind != "assign" or not isinstance(given.value, cst.Call) \
                    or not self.resolve(given.value.func) & SEQUENTIAL_CLASSES:
                return False
        return bool(calls)

    def _mutations_of(self, variable: str, binding: Optional[Binding], loc: Location) -> Optional[List[_MethodCall]]:
        """Mutating calls on ``variable`` after ``binding`` and before it is rebound.

        None when one happens in another scope (a closure): order unknown.
        """
        if binding is None or binding.scope is None:
            return None
        out = []
        later = [b.order for b in binding.scope.bindings.get(variable, [])
                 if b.order > binding.order and b.kind != "augassign"]
        end = min(later) if later else None
        for mutation in self._mutations.get(variable, []):
            if self._list_binding(mutation.location.lookup(variable)) is not binding:
                continue
            if mutation.location.scope is not binding.scope:
                return None
            if mutation.location.order <= binding.order or (end is not None and mutation.location.order >= end):
                continue
            out.append(mutation)
        return out

    def _adds_elsewhere(self, variable: str, binding: Optional[Binding], loc: Location,
                        followed: FrozenSet[int] = frozenset()) -> bool:
        """The model is handed to a local function that adds layers to something
        (other than the helpers in ``followed``, whose adds are read)."""
        for call, where in self._passed.get(variable, []):
            if where.scope is not loc.scope or where.order <= loc.order or id(call) in followed:
                continue
            if where.lookup(variable) is not binding:
                continue
            callee = self._local_function(call.func, where)
            if callee is not None and any(
                m.method == "add" and m.location.scope.node is callee
                for ms in self._mutations.values() for m in ms
            ):
                return True
        return False

    def _passed_between(self, variable: str, binding: Optional[Binding], start: int, end: int,
                        loc: Location, use: Optional[cst.Call] = None,
                        followed: FrozenSet[int] = frozenset()) -> bool:
        """The variable is given to unknown code that may add or append to it."""
        for call, where in self._passed.get(variable, []):
            if call is use or id(call) in followed or where.lookup(variable) is not binding:
                continue
            if not (start < where.order <= end):
                continue
            func = call.func
            if isinstance(func, cst.Name) and func.value in _HARMLESS_CALLEES:
                continue
            if self.resolve(func):
                continue  # a TF/Keras API (plot_model, Model(...)) does not add layers
            return True
        return False

    # -- following tensors backwards ------------------------------------------------------
    def _tensor(self, expr: cst.BaseExpression, loc: Location, depth: int, path: Path = ()) -> Iterator[Output]:
        """Each single tensor ``expr`` may stand for, with its producer (None: unknown).
        ``path`` picks a part of a tuple or list ``expr`` holds (``enc, dec = build(x)``:
        ``dec`` is part (1,) of ``build(x)``): the element of a tuple written out, of
        what each ``return`` of a helper gives, of a name bound to one; unknown where
        the part cannot be told (a starred element before it, returns of different
        lengths, any other value)."""
        if depth > _MAX_DEPTH:
            yield expr, None
            return
        expr = self.ctx.values.chosen(expr, loc)  # ``a or b`` whose ``a`` is None in every call
        if path:
            yield from self._part(expr, loc, depth, path)
            return
        index = _literal_index(expr)
        if index is not None:  # ``parts[1]``: that part of what ``parts`` holds
            assert isinstance(expr, cst.Subscript)
            yield from self._part(expr.value, loc, depth + 1, (index,), expr)
            return
        if isinstance(expr, (cst.List, cst.Tuple)):
            for element in expr.elements:
                if not isinstance(element, cst.StarredElement):
                    yield from self._tensor(element.value, loc, depth + 1)
            return
        if isinstance(expr, cst.Dict):
            for entry in expr.elements:
                if isinstance(entry, cst.DictElement):
                    yield from self._tensor(entry.value, loc, depth + 1)
            return
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):  # ``[Dense(n, ...)(x) for n in sizes]``: one head per item
            yield from self._tensor(expr.elt, loc, depth + 1)
            return
        if isinstance(expr, cst.DictComp):
            yield from self._tensor(expr.value, loc, depth + 1)
            return
        if isinstance(expr, cst.Name):
            argument = self._argument(expr, loc)
            if argument is not None:  # a parameter of a followed call: what that call passes
                yield from self._tensor(argument[0], argument[1], depth + 1)
                return
            # Each arm of an ``if``/``elif`` that assigns the name may be the output:
            # every one is judged, not only the last.
            for binding in self._reaching_values(expr, loc):
                unpacked = _unpacked(binding)
                if unpacked is not None:  # ``enc, dec = build(x)``: that part of the value
                    assert binding is not None
                    yield from self._part(unpacked[0], binding.location().within(loc.context), depth + 1,
                                          unpacked[1], expr)
                elif binding is None or binding.scope is None or binding.value is None:
                    yield expr, None
                elif _empty_container(binding.value, binding.location()):
                    yield from self._filled(expr, binding, loc, depth + 1)
                else:
                    yield from self._tensor(binding.value, binding.location().within(loc.context), depth + 1)
            return
        if not isinstance(expr, cst.Call):
            yield expr, None
            return
        if self._dispatched(expr, loc, TENSOR):
            # a method the instance's class in another module overrides: judged there
            yield expr, LayerProducer(expr, frozenset(), loc)
            return
        func = expr.func
        callee = self._callable(func, loc, depth + 1)
        if callee is not None and not isinstance(callee[0], cst.Lambda):
            yield from self._expand_returns(callee, expr, loc, depth, ())
            return
        if isinstance(func, (cst.Name, cst.Attribute)) and not self.resolve(func):
            function = called_function(func, loc, self.ctx)
            if function is not None:
                # ``self.activation(x)`` with ``self.activation = activations.get(act)``: the
                # activation function the construction followed here picks, as an op
                yield expr, OpProducer(expr, function, loc)
                return
        if isinstance(func, (cst.Call, cst.Name, cst.Subscript)) or _self_attribute(func):
            layer = self._layer(func, loc, depth + 1)
            if layer is not None:
                if self.is_model_constructor(layer.constructor, layer.location):
                    nested = list(self._model_outputs(layer.constructor, layer.location, depth + 1))
                    yield from nested if nested else [(expr, None)]
                else:
                    passed = self._passed_through(layer, expr, loc)
                    if passed is not None and expr.args and passed[0] is expr.args[0].value:
                        # a layer handing on its whole input (sliced, reshaped): where that
                        # is not certainly 16-bit (a float32 layer it autocasts again), the
                        # layer is judged itself
                        given = list(self._tensor(passed[0], passed[1], depth + 1))
                        if not all(self._sixteen_bit_layer(found[1]) for found in given):
                            yield expr, layer
                            return
                    if passed is not None:  # ``Masked()([probs, mask])`` hands ``probs`` on
                        for found in self._tensor(passed[0], passed[1], depth + 1):
                            if isinstance(found[1], (LayerProducer, OpProducer)):
                                self._recast.add(id(_producer_call(found[1])))
                            yield found
                        return
                    inner = self._wrapped(layer, depth + 1)
                    yield inner if inner is not None else (expr, layer)
                return
        resolved = self.resolve(func)
        if callee is None and self.inherited(func, loc) is not None:
            # ``self.build_head(x)`` inherited from a model class of another module:
            # :class:`CustomLayers` judges that method there
            yield expr, LayerProducer(expr, frozenset(), loc)
            return
        if callee is None and not names_tensorflow(resolved) and self._imported_head(func, loc):
            # ``heads.make_head(x)``: a function of another module of the project returns
            # the tensor; :class:`CustomLayers` judges what it returns in that module
            yield expr, LayerProducer(expr, frozenset(), loc)
            return
        if resolved and not isinstance(func, cst.Call):
            yield expr, OpProducer(expr, resolved, loc)
            return
        yield expr, None

    def _helper_returns(self, call: cst.Call, loc: Location, depth: int,
                        path: Path = ()) -> Optional[Iterator[Output]]:
        """What a call of a function of the file gives (part ``path`` of it): each of
        its ``return`` values, its arguments bound; None when ``call`` calls no such
        function. A helper already being followed (recursion) gives an unknown."""
        callee = self._callable(call.func, loc, depth + 1)
        if callee is None or isinstance(callee[0], cst.Lambda):
            return None
        return self._expand_returns(callee, call, loc, depth, path)

    def _expand_returns(self, callee: Tuple[cst.CSTNode, CallContext, int], call: cst.Call, loc: Location,
                        depth: int, path: Path) -> Iterator[Output]:
        helper = callee[0]
        returns = self._returns.get(id(helper), [])
        if not returns or id(helper) in self._expanding or (path and not _same_lengths(returns)):
            yield call, None
            return
        self._expanding.add(id(helper))
        try:
            for value, where in returns:
                yield from self._tensor(value, self._inside(callee, call, loc, where), depth + 1, path)
        finally:
            self._expanding.discard(id(helper))

    def _part(self, expr: cst.BaseExpression, loc: Location, depth: int, path: Path,
              read: Optional[cst.BaseExpression] = None) -> Iterator[Output]:
        """The tensors part ``path`` of ``expr`` may be (see :meth:`_tensor`); ``read``
        is the expression that reads the part (the unknown to report)."""
        unknown = read if read is not None else expr
        if not path:
            yield from self._tensor(expr, loc, depth + 1)
            return
        if depth > _MAX_DEPTH:
            yield unknown, None
            return
        index, rest = path[0], path[1:]
        if isinstance(expr, (cst.Tuple, cst.List)):
            elements = expr.elements
            if not -len(elements) <= index < len(elements) or any(
                    isinstance(e, cst.StarredElement) for e in elements):
                yield unknown, None
                return
            yield from self._part(elements[index].value, loc, depth + 1, rest, read)
            return
        if isinstance(expr, cst.Name):
            argument = self._argument(expr, loc)
            if argument is not None:
                yield from self._part(argument[0], argument[1], depth + 1, path, read)
                return
            for binding in self._reaching_values(expr, loc):
                if binding is None or binding.scope is None \
                        or self.ctx.values.changed_in_place(binding.scope, expr.value):
                    yield unknown, None
                    continue
                unpacked = _unpacked(binding)
                value, prefix = unpacked if unpacked is not None else (binding.value, ())
                if value is None:
                    yield unknown, None
                else:
                    yield from self._part(value, binding.location().within(loc.context), depth + 1,
                                          prefix + path, read)
            return
        if isinstance(expr, cst.Subscript) and _literal_index(expr) is not None:
            inner = _literal_index(expr)
            assert inner is not None
            yield from self._part(expr.value, loc, depth + 1, (inner,) + path, read)
            return
        if isinstance(expr, cst.Call):
            returned = self._helper_returns(expr, loc, depth, path)
            if returned is not None:
                yield from returned
                return
            if not names_tensorflow(self.resolve(expr.func)) and self._imported_head(expr.func, loc):
                # ``enc, dec = heads.build(x)``: :class:`CustomLayers` judges that part of
                # what the function of another module returns, there
                yield unknown, LayerProducer(expr, frozenset(), loc, part=path)
                return
            applied = self._applied_layer_part(expr, loc, depth, path)
            if applied is not None:
                yield unknown, applied
                return
        yield unknown, None

    def _applied_layer_part(self, expr: cst.Call, loc: Location, depth: int,
                            path: Path) -> Optional[LayerProducer]:
        """``box, obj = YoloOutput(n)(x)``: a custom layer class (of this module or another)
        applied here, whose ``call`` returns a tuple; part ``path`` of it, for
        :class:`CustomLayers` to judge in the class. None for a Keras layer (its parts,
        an RNN's states, are not followed), a model (its outputs are its own) and
        anything unknown."""
        func = expr.func
        if not (isinstance(func, (cst.Call, cst.Name, cst.Subscript)) or _self_attribute(func)):
            return None
        layer = self._layer(func, loc, depth + 1)
        if layer is None or layer.part or layer.output_part \
                or any(name.startswith("keras.") for name in layer.layer_class) \
                or self.is_model_constructor(layer.constructor, layer.location):
            return None
        return replace(layer, output_part=path, applied=expr)

    def _imported_head(self, func: cst.BaseExpression, loc: Location, dicts: bool = False) -> bool:
        """``func`` names a function defined in another module of the project (through
        a package's re-export too), not one of this file or a TensorFlow/Keras API."""
        if isinstance(func, cst.Subscript):  # ``HEADS[config.TASK](x)``: an entry of another module's dict
            return self._imported_head(func.value, loc, dicts=True)
        if not isinstance(func, (cst.Name, cst.Attribute)) or _self_attribute(func):
            return False
        head: cst.BaseExpression = func
        while isinstance(head, cst.Attribute):
            head = head.value
        if not isinstance(head, cst.Name):
            return False
        if loc.lookup(head.value) is not None:
            return False  # bound in this file (imports are no bindings): not another module's
        if dicts:
            return imported_definition(self.ctx, func, assigned=cst.Dict) is not None
        return imported_function_definition(self.ctx, func)

    def _filled(self, name: cst.Name, binding: Binding, use: Location, depth: int) -> Iterator[Output]:
        """The tensors an empty dict or list holds when ``use`` reads it: every value
        stored (``outputs[task] = head(x)``) or appended (``outs.append(head(x))``)
        between its creation and the use, in its own scope, in a loop or not. Unknown
        when anything else may change it (another method, an item read back and
        replaced, a call it is handed to, a store made in another function)."""
        stored: List[Tuple[cst.BaseExpression, Location]] = []
        for value, where in self._stores.get(name.value, []):
            if where.lookup(name.value) is not binding or not binding.order < where.order <= use.order:
                continue
            if value is None or where.scope is not binding.scope or mentions(value, name.value):
                yield name, None
                return
            stored.append((value, where))
        mutations = self._mutations_of(name.value, binding, binding.location())
        if mutations is None:
            yield name, None
            return
        for mutation in mutations:
            if mutation.location.order > use.order:
                continue
            if mutation.method != "append" or len(mutation.call.args) != 1 \
                    or mentions(mutation.call.args[0].value, name.value):
                yield name, None
                return
            stored.append((mutation.call.args[0].value, mutation.location))
        if self._passed_between(name.value, binding, binding.order, use.order, use):
            yield name, None
            return
        if not stored:
            yield name, None
            return
        for value, where in stored:
            yield from self._tensor(value, where.within(use.context), depth + 1)

    def _wrapped(self, layer: LayerProducer, depth: int) -> Optional[Output]:
        """A layer class of the file whose ``call`` only hands its input to one Keras layer
        it holds (``return self.inner(x)``): that layer computes the output, and is the
        one to report and fix (a dtype on the wrapper does not reach it)."""
        func = layer.constructor.func
        binding = layer.location.lookup(func.value) if isinstance(func, cst.Name) else None
        if binding is None or binding.kind != "class" or id(binding.node) not in self._keras_classes() \
                or id(binding.node) in self._model_classes():
            return None
        scope = next((s for node, s, _ in self._classes if node is binding.node), None)
        method = _method(scope, "call") if scope is not None else None
        returns = self._returns.get(id(method), []) if method is not None else []
        if method is None or len(returns) != 1:
            return None
        value, where = returns[0]
        params = [p.name.value for p in method.params.params[1:2]]
        if not (isinstance(value, cst.Call) and _self_attribute(value.func) and len(value.args) == 1
                and value.args[0].keyword is None and isinstance(value.args[0].value, cst.Name)
                and [value.args[0].value.value] == params):
            return None
        init = method_of(scope, "__init__") if scope is not None else None
        if init is not None and isinstance(init.node, cst.FunctionDef):
            # inside this construction: ``Named(Dense(...))`` hands ``__init__`` the layer it stores
            where = where.within(layer.location.context).entering(
                CallFrame(init.node, layer.constructor, layer.location, 1))
        inner = self._layer(value.func, where, depth + 1)
        if inner is None or not any(name.startswith("keras.") for name in inner.layer_class):
            return None
        return value, inner

    def _passed_through(self, layer: LayerProducer, call: cst.Call,
                        loc: Location) -> Optional[Tuple[cst.BaseExpression, Location]]:
        """The input a pass-through layer class hands on as its output when ``call``
        applies it (``Masked(name="MLM")([probs, mask])`` whose ``call`` returns
        ``inputs[0] + 0``): a class of this file or of another module of the project
        (:func:`imported_passthrough`), judged with the constructor's literal arguments."""
        func = layer.constructor.func
        first = call.args[0] if call.args and call.args[0].keyword is None and not call.args[0].star else None
        if layer.layer_class & LAMBDA_LAYERS:
            # ``Lambda(lambda x: x[:, 2:])``: it only slices, reshapes or transposes its input
            return (first.value, loc) if first is not None and self._moves_its_input(layer) else None
        if any(name.startswith("keras.") for name in layer.layer_class) or not isinstance(func, cst.Name):
            return None
        binding = layer.location.lookup(func.value)
        if binding is not None:
            if binding.kind != "class" or not isinstance(binding.node, cst.ClassDef):
                return None
            selector = self.passthrough(binding.node, layer.constructor, layer.location)
        else:
            selector = imported_passthrough(self.ctx, func, layer.constructor)
        if selector is None or first is None:
            return None
        if selector == _WHOLE and binding is not None:
            return None  # a class of the file returning its input: the kept-values judgement's (layers.py)
        if selector == _WHOLE:
            return first.value, loc
        value = first.value
        if isinstance(value, cst.Name):  # ``pair = [probs, mask]`` then ``Masked()(pair)``
            bound = self._plain_binding(value, loc)
            if bound is None or bound.scope is None or bound.value is None:
                return None
            value, loc = bound.value, bound.location().within(loc.context)
        if not isinstance(value, (cst.List, cst.Tuple)) or selector >= len(value.elements) \
                or any(isinstance(e, cst.StarredElement) for e in value.elements):
            return None
        return value.elements[selector].value, loc

    @staticmethod
    def _sixteen_bit_layer(producer: Optional["Producer"]) -> bool:
        """An op (judged through its input), or a layer built with no dtype and no
        ``**kwargs`` (it follows the policy); any dtype at all, even one mplint cannot
        read, leaves the pass-through layer judged itself."""
        if isinstance(producer, OpProducer):
            return True
        return isinstance(producer, LayerProducer) and keyword_only(producer.constructor, "dtype") is None \
            and not any(arg.star for arg in producer.constructor.args)

    def _moves_its_input(self, layer: LayerProducer) -> bool:
        """A ``Lambda`` with no dtype of its own whose function, a ``lambda`` of one
        parameter, only moves its input's values: slices it (``x[:, k:]``), reshapes,
        transposes, squeezes or expands it (``SHAPE_OPS``). Its output has its input's
        dtype (Keras autocasts the input to the compute dtype first)."""
        constructor = layer.constructor
        fn = positional_or_keyword(constructor, 0, "function")
        if not isinstance(fn, cst.Lambda) or keyword_only(constructor, "dtype") is not None \
                or any(a.star for a in constructor.args):
            return False
        params = fn.params
        if len(params.params) != 1 or params.posonly_params or params.kwonly_params \
                or not isinstance(params.star_arg, cst.MaybeSentinel) or params.star_kwarg is not None:
            return False
        return self._moved(fn.body, params.params[0].name.value, 0)

    def _moved(self, expr: cst.BaseExpression, param: str, depth: int) -> bool:
        """``expr`` is the parameter ``param`` itself, sliced or indexed, or handed to a
        shape op as its first argument (see :meth:`_moves_its_input`)."""
        if depth > 4:
            return False
        if isinstance(expr, cst.Name):
            return expr.value == param
        if isinstance(expr, cst.Subscript):
            return self._moved(expr.value, param, depth + 1)
        if isinstance(expr, cst.Call) and self.resolve(expr.func) & SHAPE_OPS and expr.args \
                and expr.args[0].keyword is None and not expr.args[0].star:
            return self._moved(expr.args[0].value, param, depth + 1)
        return False

    def passthrough(self, classdef: cst.ClassDef, constructor: cst.Call, built: Location) -> Optional[int]:
        """Which input a layer class of this file returns unchanged, when every ``return``
        of its ``call`` that can run for this construction is the input (``_WHOLE``) or
        one item of it (``inputs[0]``, ``inputs[0] + 0``, through a local name): a masking
        or naming layer. Returns in an arm the construction decides against (``if
        self.return_masked:`` left at its False default) do not count. None otherwise."""
        scope = next((s for node, s, _ in self._classes if node is classdef), None)
        method = _method(scope, "call") if scope is not None else None
        if scope is None or method is None or len(method.params.params) < 2:
            return None
        param = method.params.params[1].name.value
        init = method_of(scope, "__init__")
        frame = None if init is None or not isinstance(init.node, cst.FunctionDef) \
            else CallFrame(init.node, constructor, built, 1)
        found: Set[int] = set()
        for value, where in self._returns.get(id(method), []):
            if frame is not None:
                where = where.within(built.context).entering(frame)
            if frame is not None and self._return_skipped(where, scope, frame):
                continue
            selector = _selected(value, where, param, 0, self.resolve)
            if selector is None:
                return None
            found.add(selector)
        return found.pop() if len(found) == 1 else None

    def _return_skipped(self, where: Location, scope: Scope, frame: CallFrame) -> bool:
        """A ``return`` in an arm whose test, ``self.<flag>`` (or ``not self.<flag>``) kept
        from an ``__init__`` parameter, the construction decides against."""
        for _, arm, test in where.branches:
            negate = False
            while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                test, negate = test.expression, not negate
            kept = self._constructed_value(test, scope, frame) if test is not None else None
            if kept is not None and (kept != negate) != (arm == "body"):
                return True
        return False

    def _constructed_value(self, test: cst.BaseExpression, scope: Scope, frame: CallFrame) -> Optional[bool]:
        """The truth of ``self.<attr>`` when ``__init__`` sets it once from one of its
        parameters and the construction passes a literal there, or leaves its literal
        default; None otherwise."""
        init = frame.function
        if not _self_attribute(test) or not isinstance(init, cst.FunctionDef):
            return None
        assert isinstance(test, cst.Attribute)
        bindings = attributes_of(scope, test.attr.value)
        if len(bindings) != 1 or not isinstance(bindings[0].value, cst.Name) or bindings[0].scope is None \
                or bindings[0].scope.node is not init:
            return None
        name = bindings[0].value.value
        param = next((p for p in (*init.params.params, *init.params.kwonly_params) if p.name.value == name), None)
        if param is None:
            return None
        given = self.ctx.values.bound_argument(init, param, frame.call, frame.offset, frame.caller)
        expr = given if isinstance(given, cst.BaseExpression) else param.default if given is None else None
        found = None if expr is None else self.ctx.values.values(expr, frame.caller)
        truths = {bool(v) for v in found} if found else set()
        return truths.pop() if len(truths) == 1 else None

    def _layer_outputs(self, expr: cst.BaseExpression, loc: Location, depth: int) -> Iterator[Output]:
        """The output of a layer given as a layer (Sequential items), expanding models."""
        layer = self._layer(expr, loc, depth + 1)
        if layer is None:
            yield expr, None
        elif self.is_model_constructor(layer.constructor, layer.location):
            yield from self._model_outputs(layer.constructor, layer.location, depth + 1)
        else:
            inner = self._wrapped(layer, depth + 1)
            yield inner if inner is not None else (expr, layer)

    def _layer(self, expr: cst.BaseExpression, loc: Location, depth: int) -> Optional[LayerProducer]:
        """The layer an expression denotes: a constructor call, possibly via a variable,
        a ``self.attr`` set once in the class, or a helper returning the layer."""
        if depth > _MAX_DEPTH:
            return None
        expr = self.ctx.values.chosen(expr, loc)
        if isinstance(expr, cst.Name):
            argument = self._argument(expr, loc)
            if argument is not None:
                return self._layer(argument[0], argument[1], depth + 1)
            binding = self._plain_binding(expr, loc)
            unpacked = _unpacked(binding) if binding is not None and id(binding.node) not in self._loop_assigns else None
            if unpacked is not None and binding is not None and binding.scope is not None:
                # ``trunk, head = build(64)``: that part of what ``build`` returns
                return self._layer_part(unpacked[0], binding.location().within(loc.context), depth + 1,
                                        unpacked[1])
            if binding is None or binding.scope is None or binding.value is None:
                return None
            return self._layer(binding.value, binding.location().within(loc.context), depth + 1)
        if isinstance(expr, cst.Subscript):  # ``self.heads[0]``, ``HEADS["classify"]``
            element = self.ctx.values.item(expr, loc)
            return None if element is None else self._layer(element[0], element[1], depth + 1)
        if _self_attribute(expr):
            assert isinstance(expr, cst.Attribute)
            cls = instance_class(loc)
            if cls is None or self._stored_by_subclass(expr.attr.value, cls):
                return None
            bindings = attributes_of(cls, expr.attr.value)
            # Set more than once (if/else heads, a later replacement): which one is
            # the output is a run-time matter.
            if len(bindings) != 1 or bindings[0].value is None or bindings[0].scope is None:
                return None
            return self._layer(bindings[0].value, Location(bindings[0].scope, bindings[0].order, (), loc.context),
                               depth + 1)
        if isinstance(expr, cst.Call):
            if id(expr) in self._listed:
                return self._layer_part(expr, loc, depth + 1, (-1,))
            if self._dispatched(expr, loc, LAYER):
                return LayerProducer(expr, frozenset(), loc)  # the override of another module builds it
            callee = self._callable(expr.func, loc, depth + 1)
            if callee is not None:
                returns = self._returns.get(id(callee[0]), [])
                if len(returns) != 1:
                    return None
                return self._layer(returns[0][0], self._inside(callee, expr, loc, returns[0][1]), depth + 1)
            preset = self._partial(expr.func, loc)
            if preset is not None:
                layer = preset[0].args[0].value
                return LayerProducer(expr, self.resolve(layer), loc, preset)
            imported = imported_partial_preset(self.ctx, expr.func) \
                if isinstance(expr.func, (cst.Name, cst.Attribute)) and not names_tensorflow(self.resolve(expr.func)) \
                else None
            if imported is not None:  # ``ProbDense(n)``, a partial of another module
                return LayerProducer(expr, imported[0], loc, (imported[1], loc))
            return LayerProducer(expr, self.resolve(expr.func) or self._named_class(expr.func, loc), loc)
        return None

    def _layer_part(self, expr: cst.BaseExpression, loc: Location, depth: int, path: Path) -> Optional[LayerProducer]:
        """The layer part ``path`` of ``expr`` denotes: an element of a tuple or list
        written out, of the one ``return`` of a helper of the file, or of what a function
        of another module returns (judged there, as :meth:`_part` does for tensors)."""
        if not path:
            return self._layer(expr, loc, depth)
        if depth > _MAX_DEPTH:
            return None
        index, rest = path[0], path[1:]
        if isinstance(expr, (cst.Tuple, cst.List)):
            elements = expr.elements
            if not -len(elements) <= index < len(elements) or any(isinstance(e, cst.StarredElement) for e in elements):
                return None
            return self._layer_part(elements[index].value, loc, depth + 1, rest)
        if not isinstance(expr, cst.Call):
            return None
        callee = self._callable(expr.func, loc, depth + 1)
        if callee is not None:
            returns = self._returns.get(id(callee[0]), [])
            if len(returns) != 1:
                return None
            return self._layer_part(returns[0][0], self._inside(callee, expr, loc, returns[0][1]), depth + 1, path)
        if not names_tensorflow(self.resolve(expr.func)) and self._imported_head(expr.func, loc):
            return LayerProducer(expr, frozenset(), loc, part=path)
        return None

    def _argument(self, name: cst.Name, loc: Location) -> Optional[Tuple[cst.BaseExpression, Location]]:
        """What a followed call passes for the parameter ``name`` (``inner`` of
        ``Named.__init__`` in ``Named(Dense(...))``), read where the call is made;
        None when ``name`` is no parameter of a followed call or the call leaves it out."""
        binding = loc.lookup(name.value)
        if binding is None or binding.kind != "param" or binding.scope is None \
                or not isinstance(binding.node, cst.Param):
            return None
        followed = loc.frame_of(binding.scope.node)
        if followed is None:
            return None
        frame = followed[0]
        expr = self.ctx.values.bound_argument(frame.function, binding.node, frame.call, frame.offset, frame.caller)
        return (expr, frame.caller) if isinstance(expr, cst.BaseExpression) else None

    def _named_class(self, func: cst.BaseExpression, loc: Location) -> FrozenSet[str]:
        """The Keras layer class a name picks at run time, when the name is known:
        ``getattr(layers, "Softmax")`` or ``eval("Softmax")`` (the file's imports
        name it), directly or through a variable. Several possible names: unknown."""
        if isinstance(func, cst.Name):
            binding = self._plain_binding(func, loc)
            if binding is None or binding.scope is None or not isinstance(binding.value, cst.Call):
                return frozenset()
            func, loc = binding.value, binding.location().within(loc.context)
        if not isinstance(func, cst.Call) or not isinstance(func.func, cst.Name) \
                or func.func.value not in ("getattr", "eval") or loc.lookup(func.func.value) is not None:
            return frozenset()
        getter = func.func.value == "getattr"
        if len(func.args) != (2 if getter else 1) or any(a.keyword is not None or a.star for a in func.args):
            return frozenset()
        name = self.ctx.values.value(func.args[-1].value, loc)
        if not isinstance(name, str) or not all(part.isidentifier() for part in name.split(".")) \
                or (getter and "." in name):
            return frozenset()
        named: cst.BaseExpression = cst.Attribute(func.args[0].value, cst.Name(name)) if getter \
            else cst.parse_expression(name)
        return frozenset(n for n in self.ctx.names.resolve(named) if n.startswith("keras.layers."))

    def _callable(self, func: cst.BaseExpression, loc: Location,
                  depth: int) -> Optional[Tuple[cst.CSTNode, CallContext, int]]:
        """The function of the file a call target denotes: ``(function, the calls
        followed to reach its definition, parameters bound already)``. A local function
        or ``self.method``, a name bound to a lambda, or what a factory call returns
        (``head(10, "softmax")`` returning its inner ``apply``): the factory's
        arguments then decide the closure's free names."""
        if depth > _MAX_DEPTH:
            return None
        func = self.ctx.values.chosen(func, loc)
        helper = self._local_function(func, loc)
        if helper is not None:
            return helper, loc.context, bound_leading(func, helper)
        if isinstance(func, cst.Subscript):  # ``HEADS["softmax"](x, 10)``
            element = self.ctx.values.item(func, loc)
            if element is not None and isinstance(element[0], cst.Lambda):
                # ``HEADS = {"softmax": lambda n: Dense(n, ...)}``: the entry is the callable
                return element[0], element[1].context, 0
            if element is not None:
                return self._callable(element[0], element[1], depth + 1)
            registered = self._registered(func, loc)
            return None if registered is None else (registered, loc.context, 0)
        if isinstance(func, cst.Name):
            argument = self._argument(func, loc)
            if argument is not None:  # ``build(softmax_head)`` calling its ``head_fn(x, n)``
                return self._callable(argument[0], argument[1], depth + 1)
            binding = self._plain_binding(func, loc)
            if binding is None or binding.scope is None or binding.value is None:
                return None
            if isinstance(binding.value, cst.Lambda):
                return binding.value, loc.context, 0
            if isinstance(binding.value, cst.Call):  # ``apply = head(10, "softmax")``
                return self._callable(binding.value, binding.location().within(loc.context), depth + 1)
            return None
        if not isinstance(func, cst.Call):
            return None
        factory = self._callable(func.func, loc, depth + 1)
        returns = self._returns.get(id(factory[0]), []) if factory is not None else []
        if factory is None or len(returns) != 1:
            return None
        value, where = returns[0]
        inside = self._inside(factory, func, loc, where)
        if isinstance(value, cst.Lambda):
            return value, inside.context, 0
        if isinstance(value, cst.Name):
            binding = inside.lookup(value.value)
            if binding is not None and binding.kind == "def" and id(binding.node) in self._function_scopes:
                return binding.node, inside.context, 0
        return None

    def _registered(self, func: cst.Subscript, loc: Location) -> Optional[cst.FunctionDef]:
        """The function of the file a registry holds under a key known here: an empty
        dict filled only by ``REGISTRY[name] = fn`` inside a decorator factory
        (``@register("softmax")`` on a ``def``) or by ``REGISTRY["key"] = function`` at
        the top level. None when any store is of another shape, or the key is held by
        none or by several."""
        if not isinstance(func.value, cst.Name) or len(func.slice) != 1 \
                or not isinstance(func.slice[0].slice, cst.Index):
            return None
        key = self.ctx.values.value(func.slice[0].slice.value, loc)
        name = func.value.value
        binding = loc.lookup(name)
        if key is None or binding is None or binding.kind != "assign" or binding.scope is None \
                or binding.value is None or not _empty_container(binding.value, binding.location()) \
                or len(binding.scope.bindings.get(name, ())) != 1:
            return None
        held: List[cst.FunctionDef] = []
        for value, where in self._stores.get(name, []):
            if where.lookup(name) is not binding:
                continue
            target = self._store_keys.get(id(value))
            found = None if value is None or target is None else self._stored_function(target, value, where, key)
            if found is None:
                return None  # a store this does not read: the registry is unknown
            held += found
        return held[0] if len(held) == 1 else None

    def _stored_function(self, target: cst.Subscript, value: cst.BaseExpression, where: Location,
                         key: object) -> Optional[List[cst.FunctionDef]]:
        """The functions one store puts under ``key`` ([] when it stores another key)."""
        index = target.slice[0].slice if len(target.slice) == 1 else None
        if not isinstance(value, cst.Name) or not isinstance(index, cst.Index):
            return None
        if where.scope.kind == "module":
            stored = where.lookup(value.value)
            written = self.ctx.values.value(index.value, where)
            if stored is None or stored.kind != "def" or written is None:
                return None
            return [stored.node] if written == key and isinstance(stored.node, cst.FunctionDef) else []
        inner, outer = where.scope.node, where.scope.parent.node if where.scope.parent else None
        if not isinstance(inner, cst.FunctionDef) or not isinstance(outer, cst.FunctionDef) \
                or not isinstance(index.value, cst.Name) or not inner.params.params \
                or inner.params.params[0].name.value != value.value:
            return None
        key_param = next((p for p in outer.params.params if p.name.value == index.value.value), None)
        if key_param is None:
            return None
        out: List[cst.FunctionDef] = []
        module = self.ctx.scopes.module_scope
        for bindings in module.bindings.values():
            for decorated in bindings:
                if decorated.kind != "def" or not isinstance(decorated.node, cst.FunctionDef):
                    continue
                for decorator in decorated.node.decorators:
                    call = decorator.decorator
                    if not isinstance(call, cst.Call) or local_def(call.func, decorated.location()) is None \
                            or local_def(call.func, decorated.location()).node is not outer:  # type: ignore[union-attr]
                        continue
                    given = self.ctx.values.bound_argument(outer, key_param, call, 0, decorated.location())
                    written = self.ctx.values.value(given, decorated.location()) \
                        if isinstance(given, cst.BaseExpression) else None
                    if written is None:
                        return None
                    if written == key:
                        out.append(decorated.node)
        return out

    @staticmethod
    def _inside(callee: Tuple[cst.CSTNode, CallContext, int], call: cst.Call, caller: Location,
                where: Location) -> Location:
        """``where`` (a place in the callee's body) inside this one call of it."""
        function, context, offset = callee
        return where.within(context).entering(CallFrame(function, call, caller, offset))

    def _partial(self, func: cst.BaseExpression, loc: Location) -> Optional[Tuple[cst.Call, Location]]:
        """``dense = functools.partial(layers.Dense, activation="softmax")`` behind
        ``dense``, or held by a container under a known key (``HEADS["classify"]``)."""
        value: Optional[cst.BaseExpression] = None
        if isinstance(func, cst.Name):
            binding = self._plain_binding(func, loc)
            if binding is None or binding.scope is None:
                return None
            value, where = binding.value, binding.location().within(loc.context)
        elif isinstance(func, cst.Subscript):
            element = self.ctx.values.item(func, loc)
            if element is None:
                return None
            value, where = element
        if not isinstance(value, cst.Call) or not self.resolve(value.func) & PARTIALS or not value.args \
                or value.args[0].keyword is not None or any(arg.star for arg in value.args):
            return None
        return value, where

    def _reaching_values(self, name: cst.Name, loc: Location) -> List[Optional[Binding]]:
        """The plain assignments (see :meth:`_plain_binding`) whose value ``name`` may
        hold here, one per arm that assigns it; None stands for any other binding."""
        reaching = loc.reaching(name.value)
        # An arm whose test the followed calls decide against never runs there
        # (``if not last: x = ReLU()(x)`` in ``conv_t_block(x, 3, last=True)``).
        live = [b for b in reaching if not self._arm_skipped(b, loc)]
        # and one whose tests they all decide for it replaces what came before it on its
        # path (``x = inputs`` then ``if self._include_top: x = self.build_top(x, ...)``;
        # ``x = Conv2D(...)(x)`` then ``if act: ... else: x = eval(act)()(x)``)
        taken = [b for b in live if b.branches and self._arms_taken(b, loc)]
        live = [a for a in live if not any(a.order < b.order and set(a.branches) <= set(b.branches)
                                           for b in taken)]
        decided = bool(live) and len(live) < len(reaching)
        if decided:
            reaching = live
        # ``out = Dense(n)(x)`` then ``if mixed: out = Activation(..., dtype="float32")(out)``
        # overrides the first value under a condition that may always hold where the
        # policy is mixed: only the latest is judged, as before. A value rebound under
        # conditions that make no float32 (``if include_top: x = Dense(...)(x) elif
        # pooling: x = GlobalAveragePooling2D()(x)``, after a loop of blocks) is no
        # such override: every arm is judged.
        if len(reaching) <= 1 or any(
                set(a.branches) < set(b.branches) and _names_float32(b.value)
                for a in reaching for b in reaching):
            if not decided:
                return [self._plain_binding(name, loc)]
            reaching = [max(reaching, key=lambda b: b.order)]
        return [b if b.kind in ("assign", "annassign") and id(b.node) not in self._loop_assigns else None
                for b in reaching]

    def _arm_skipped(self, binding: Binding, use: Location) -> bool:
        """Whether a test of an arm around ``binding`` is certainly decided against it by
        the calls followed to ``use`` (their arguments and defaults): that arm never runs."""
        return False in self._arm_decisions(binding, use)

    def _arms_taken(self, binding: Binding, use: Location) -> bool:
        """Whether every test of the arms around ``binding`` is certainly decided for it
        by the calls followed to ``use`` (the converse of :meth:`_arm_skipped`)."""
        decisions = self._arm_decisions(binding, use)
        return bool(decisions) and all(d is True for d in decisions)

    def _arm_decisions(self, binding: Binding, use: Location) -> List[Optional[bool]]:
        """For each arm around ``binding``, whether the calls followed to ``use`` certainly
        take it (True), certainly skip it (False), or leave it open (None: unknown, or a
        parameter a user of a public builder chooses, ``ResNet18(include_top=False)``)."""
        if binding.scope is None or not binding.branches:
            return []
        where = binding.location().within(use.context)
        out: List[Optional[bool]] = []
        for _, arm, test in binding.branches:
            if self._test_chosen_by_users(test, where):
                out.append(None)
                continue
            # no call followed here: what the calls that run under a policy pass decides
            # (``include_top=False`` handed two calls down; :mod:`semantic.governed_arms`)
            truth = _truth(test, where, self.ctx) if use.context \
                else governed_truth(test, where, self.ctx.values, self.ctx.facts.program_reached)
            out.append(None if truth is None else truth == (arm == "body"))
        return out

    def arm_decisions(self, binding: Binding, use: Location) -> List[Optional[bool]]:
        """:meth:`_arm_decisions`, for the layer analysis reading a class's ``call`` inside
        one construction (``if self.activation == "softmax":``)."""
        return self._arm_decisions(binding, use)

    def _test_chosen_by_users(self, test: cst.BaseExpression, where: Location) -> bool:
        """A name the test reads, or a constructor parameter an attribute of ``self`` it
        reads was stored from (``self.activation = activation``), is chosen by users
        (:meth:`_chosen_by_users`). ``self`` itself is the instance, no value chosen."""
        if any(self._chosen_by_users(name.value, where, 0) for name in find_all(test, cst.Name)
               if isinstance(name, cst.Name) and name.value != "self"):
            return True
        cls = instance_class(where)
        for read in find_all(test, cst.Attribute):
            if not _self_attribute(read) or cls is None:
                continue
            assert isinstance(read, cst.Attribute)
            for stored in attributes_of(cls, read.attr.value):
                if stored.scope is not None and isinstance(stored.value, cst.Name) and self._chosen_by_users(
                        stored.value.value, stored.location().within(where.context), 0):
                    return True
        return False

    def _chosen_by_users(self, name: str, loc: Location, depth: int) -> bool:
        """The parameter ``name`` read at ``loc`` takes, through the followed calls, a
        parameter of a function whose callers mplint does not all see (a library's public
        builder): its default there is only what a user leaves out."""
        found = loc.lookup(name)
        if found is None or found.kind != "param" or found.scope is None or depth > MAX_CALL_CONTEXT:
            return False
        frame = loc.frame_of(found.scope.node)
        if frame is None:
            return self.ctx.values.callers_unread(found)
        call, _ = frame
        if not isinstance(found.node, cst.Param):
            return False
        argument = self.ctx.values.bound_argument(call.function, found.node, call.call, call.offset, call.caller)
        return isinstance(argument, cst.Name) and self._chosen_by_users(argument.value, call.caller, depth + 1)

    def _plain_binding(self, name: cst.Name, loc: Location) -> Optional[Binding]:
        """The single-value assignment ``name`` refers to; None for parameters, loop
        targets, augmented assignments and assignments inside a loop body (one layer
        per iteration: no single layer to report or fix)."""
        binding = loc.lookup(name.value)
        if binding is None or binding.kind not in ("assign", "annassign"):
            return None
        if id(binding.node) in self._loop_assigns:
            return None
        return binding

    def _local_function(self, func: cst.BaseExpression, loc: Location) -> Optional[cst.FunctionDef]:
        """The FunctionDef a call target names (:func:`scopes.local_def`), when walked here."""
        binding = local_def(func, loc)
        if binding is None or id(binding.node) not in self._function_scopes:
            return None
        assert isinstance(binding.node, cst.FunctionDef)
        return binding.node


def _producer_call(producer: "Producer") -> cst.Call:
    return producer.constructor if isinstance(producer, LayerProducer) else producer.call


#: a pass-through layer's selector: it returns its whole input
_WHOLE = -1


def _selected(value: cst.BaseExpression, where: Location, param: str, depth: int,
              resolve: Optional[Callable[[cst.BaseExpression], FrozenSet[str]]] = None) -> Optional[int]:
    """``_WHOLE`` when ``value`` is the parameter ``param`` itself, ``i`` when it is
    ``param[i]``, through ``+ 0``, ``* 1`` and plain local names; None otherwise. With
    ``resolve`` (API names of a callee), a slice of the whole input (``x[:, 1:]``) and a
    shape op on it (``tf.reshape(x, ...)``, ``SHAPE_OPS``) are the whole input too: they
    move its values and keep its dtype."""
    if depth > 4:
        return None
    if isinstance(value, cst.BinaryOperation) and (
            isinstance(value.operator, cst.Add) and _is_literal(value.right, "0")
            or isinstance(value.operator, cst.Multiply) and _is_literal(value.right, "1")):
        return _selected(value.left, where, param, depth + 1, resolve)
    if isinstance(value, cst.Name):
        binding = where.lookup(value.value)
        if binding is None:
            return None
        if binding.kind == "param":
            return _WHOLE if value.value == param else None
        if binding.kind == "assign" and binding.value is not None and binding.scope is where.scope \
                and len(where.scope.bindings.get(value.value, ())) == 1:
            return _selected(binding.value, binding.location(), param, depth + 1, resolve)
        return None
    if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and len(value.slice) == 1 \
            and isinstance(value.slice[0].slice, cst.Index) and isinstance(value.slice[0].slice.value, cst.Integer):
        index = int(value.slice[0].slice.value.value)
        return index if _selected(value.value, where, param, depth + 1, resolve) == _WHOLE else None
    if resolve is None:
        return None
    if isinstance(value, cst.Subscript) and any(isinstance(e.slice, cst.Slice) for e in value.slice):
        return _WHOLE if _selected(value.value, where, param, depth + 1, resolve) == _WHOLE else None
    if isinstance(value, cst.Call) and resolve(value.func) & SHAPE_OPS and value.args \
            and value.args[0].keyword is None and not value.args[0].star:
        return _WHOLE if _selected(value.args[0].value, where, param, depth + 1, resolve) == _WHOLE else None
    return None


def _literal_index(expr: cst.BaseExpression) -> Optional[int]:
    """``parts[1]`` (``parts[-1]``): the integer written as the one index; None for
    anything else (a slice, a name, a string key)."""
    if not isinstance(expr, cst.Subscript) or len(expr.slice) != 1 \
            or not isinstance(expr.slice[0].slice, cst.Index):
        return None
    value = expr.slice[0].slice.value
    sign = 1
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value, sign = value.expression, -1
    if isinstance(value, cst.Integer):
        return sign * int(value.value, 0)
    return None


def _unpacked(binding: Optional[Binding]) -> Optional[Tuple[cst.BaseExpression, Path]]:
    """A name bound by unpacking (``enc, dec = build(x)``, ``(a, b) = ...``, ``a, *rest
    = ...`` for ``a``): the value unpacked and the name's position in it; None for
    any other binding, and for a name behind a starred target."""
    if binding is None or binding.kind != "assign" or binding.value is not None \
            or not isinstance(binding.node, cst.Assign):
        return None
    for target in binding.node.targets:
        found = target_path(target.target, binding.name)
        if found:
            return binding.node.value, found
    return None


def _same_lengths(returns: Sequence[Tuple[cst.BaseExpression, Location]]) -> bool:
    """Every tuple or list a function returns written out has the same length: which
    element a caller's part is does not depend on the ``return`` taken."""
    return len({len(value.elements) for value, _ in returns if isinstance(value, (cst.Tuple, cst.List))}) <= 1


def _is_literal(expr: cst.BaseExpression, text: str) -> bool:
    return isinstance(expr, (cst.Integer, cst.Float)) and float(expr.value) == float(text)


def _truth(test: Optional[cst.BaseExpression], loc: Location, ctx: Context) -> Optional[bool]:
    """Whether ``test`` is certainly true (False: certainly false) where ``loc`` is, read
    through the followed calls' arguments; None when any of its values is unknown."""
    if test is None:
        return None
    negate = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, negate = test.expression, not negate
    if isinstance(test, cst.Comparison):
        truths = _compared(test, loc, ctx)
    else:
        found = ctx.values.values(test, loc)
        truths = {bool(value) for value in found} if found else set()
    if len(truths) != 1:
        return None
    return truths.pop() != negate


def _compared(test: cst.Comparison, loc: Location, ctx: Context) -> Set[bool]:
    """The outcomes ``a == b`` (``!=``) may have, from the values both sides may hold
    (``activation == 'Sigmoid'`` with ``activation`` 'Softmax'); empty when unknown."""
    if len(test.comparisons) != 1 or not isinstance(test.comparisons[0].operator, (cst.Equal, cst.NotEqual)):
        return set()
    left = ctx.values.values(test.left, loc)
    right = ctx.values.values(test.comparisons[0].comparator, loc)
    if not left or not right or not all(isinstance(v, (str, int, float, bool)) for v in left | right):
        return set()
    equal = isinstance(test.comparisons[0].operator, cst.Equal)
    return {(a == b) == equal for a in left for b in right}


#: loss functions of TensorFlow and Keras, by the last part of their canonical name
_LOSS_FUNCTIONS = frozenset({
    "categorical_crossentropy", "sparse_categorical_crossentropy", "binary_crossentropy",
    "binary_focal_crossentropy", "categorical_focal_crossentropy",
    "softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_v2",
    "sparse_softmax_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits",
    "mean_squared_error", "mean_absolute_error", "huber", "kl_divergence", "log_cosh",
})


def _is_loss_function(names: FrozenSet[str]) -> bool:
    """A TensorFlow or Keras loss function (``keras.ops.categorical_crossentropy``,
    ``tf.nn.softmax_cross_entropy_with_logits``, ``keras.losses.mean_squared_error``)."""
    return names_tensorflow(names) and any(name.rpartition(".")[2] in _LOSS_FUNCTIONS for name in names)




def _is_super_init(func: cst.BaseExpression) -> bool:
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value == "__init__"
        and isinstance(func.value, cst.Call)
        and isinstance(func.value.func, cst.Name)
        and func.value.func.value == "super"
    )


def _self_attribute(expr: cst.BaseExpression) -> bool:
    return (
        isinstance(expr, cst.Attribute)
        and isinstance(expr.value, cst.Name)
        and expr.value.value == "self"
    )


def _method(class_scope: Scope, name: str) -> Optional[cst.FunctionDef]:
    found = class_scope.bindings.get(name)
    if not found or found[-1].kind != "def" or not isinstance(found[-1].node, cst.FunctionDef):
        return None
    return found[-1].node


def _receiving_param(call: cst.Call, function: cst.FunctionDef, variable: str) -> Optional[str]:
    """The parameter of ``function`` that ``call`` fills with the plain name ``variable``."""
    positional = [*function.params.posonly_params, *function.params.params]
    index = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if isinstance(arg.value, cst.Name) and arg.value.value == variable:
                return arg.keyword.value
            continue
        if isinstance(arg.value, cst.Name) and arg.value.value == variable:
            return positional[index].name.value if index < len(positional) else None
        index += 1
    return None


def _bound_to(call: cst.Call, loc: Location) -> Optional[str]:
    for name, bindings in loc.scope.bindings.items():
        for binding in bindings:
            if binding.value is call:
                return name
    return None


def _binding_of(call: cst.Call, loc: Location, name: str) -> Optional[Binding]:
    for binding in loc.scope.bindings.get(name, []):
        if binding.value is call:
            return binding
    return None


def _empty_container(expr: cst.BaseExpression, loc: Location) -> bool:
    """``{}``, ``[]``, or the builtin ``dict()`` / ``list()``: a container filled later."""
    if isinstance(expr, (cst.Dict, cst.List)):
        return not expr.elements
    return isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Name) \
        and expr.func.value in ("dict", "list") and loc.lookup(expr.func.value) is None


def _names_float32(expr: Optional[cst.BaseExpression]) -> bool:
    """Whether ``expr`` names float32 (``dtype="float32"``, ``tf.float32``), as a
    conditional override that keeps an output in float32 does; None: it may."""
    if expr is None:
        return True
    found = False

    class _Finder(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            nonlocal found
            found = found or node.value == "float32"

        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            nonlocal found
            found = found or "float32" in node.value

    expr.visit(_Finder())
    return found


def _is_main_test(test: cst.BaseExpression) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 \
            or not isinstance(test.comparisons[0].operator, cst.Equal):
        return False
    sides = (test.left, test.comparisons[0].comparator)
    return any(isinstance(a, cst.Name) and a.value == "__name__" and isinstance(b, cst.SimpleString)
               and b.evaluated_value == "__main__" for a, b in (sides, sides[::-1]))
