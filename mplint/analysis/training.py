"""Custom training loops: optimizers, tapes, gradients, and the steps joining them.

A *train step* is an ``optimizer.apply_gradients``/``apply``/``minimize`` call fed,
through local variables, by ``tape.gradient`` on a ``tf.GradientTape`` (or by
``tf.gradients``). The optimizer is followed back to its creation: a name (in the
step's function, an enclosing function or the module), a ``self.<attr>`` set in a
method of the class, or the optimizer ``compile()`` gives a Model subclass. Anything
not followed with certainty is UNKNOWN_OPTIMIZER, and the loss-scaling rules stay silent on it.
``tape.gradient`` whose result reaches no optimizer (saliency maps, input gradients)
is not a train step.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Literal, Mapping, Optional, Set, Tuple, Union

import libcst as cst

from mplint.analysis.conditional_reads import ConditionalReads
from mplint.analysis.imported_clips import ClippedParameter, UnscaledParameter, imported_clip, imported_unscaling
from mplint.analysis.module_constants import imported_binding, imported_constructor
from mplint.core.walker import child_nodes
from mplint.rule.check import Analysis, Context
from mplint.semantic.call_args import argument_for, keyword_only, positional_or_keyword
from mplint.semantic.conditions import Conditions, Truths, capabilities, conflict, decides_generation
from mplint.semantic.facts import REWRITE_GRAPPLER
from mplint.semantic.names import dotted_name, string_key
from mplint.semantic.base_inits import base_init_calls, init_caller, own_init
from mplint.run.summaries import PART
from mplint.semantic.scopes import (
    Binding, Branches, Location, Scope, attributes_of, class_chain, exclusive, function_key, local_function,
    method_of,
)
from mplint.semantic.stored_attributes import StoredForm, foreign_bases, stored_form
from mplint.semantic.vocabulary import (
    CONSTANTS, DISTRIBUTED_OPTIMIZERS, DISTRIBUTED_TAPES, EXPERIMENTAL_LSO, FLOAT32_BY_DEFAULT, GRADIENT_CLIPS,
    GRADIENT_TAPES, LOSS_SCALE_FACTOR_KEYWORD,
    LOSS_SCALE_OPTIMIZERS, MIXED_POLICIES, MODEL_CLASSES, RUNS_AS_CALLED, STABLE_LSO, SYMBOLIC_GRADIENTS, is_optimizer_class,
    is_optimizer_constructor,
    names_tensorflow,
)

APPLY_METHODS = frozenset({"apply_gradients", "apply", "minimize"})
#: what a file must hold for it to have a train step (``TrainingLoops.steps``): the
#: name of an update method ("apply" is in "apply_gradients")
UPDATE_WORDS = (b"apply", b"minimize")
#: loss-scaling method -> the Keras generation that has it
SCALE_METHODS = {"scale_loss": 3, "get_scaled_loss": 2}
UNSCALE_METHOD = "get_unscaled_gradients"
#: the loss-scaling methods, each with the only Keras generation whose LossScaleOptimizer has it
SCALING_GENERATION = {**SCALE_METHODS, UNSCALE_METHOD: 2}
#: the methods MP207 judges, with the generation that has them
GENERATION_OF_METHOD = {**SCALING_GENERATION, "minimize": 2, "apply": 3}
#: attributes holding the current loss scale (Keras 3, Keras 2)
LOSS_SCALE_ATTRIBUTES = frozenset({"dynamic_scale", "loss_scale"})

PLAIN = "plain"  # a Keras optimizer, never wrapped
LSO = "lso"  # a LossScaleOptimizer created here
#: a Keras 3 optimizer given ``loss_scale_factor=``: scale_loss() scales, apply() unscales
FACTOR = "factor"
COMPILED = "compiled"  # ``self.optimizer`` of a Model subclass: what compile() made
UNKNOWN_OPTIMIZER = "unknown"  # not followed with certainty: the rules stay silent
#: ``None`` (a parameter left to its ``None`` default): only ``opt or Adam()`` reads past it;
#: anywhere else it is reported as UNKNOWN_OPTIMIZER
NO_OPTIMIZER = "none"
#: a subclass in another module leaves a base's ``__init__`` parameter to its default,
#: which the base's module reads (:meth:`TrainingLoops.inherited_attribute`)
_DEFAULT = "default"
#: a project factory "kind" that names the API the call stands for (``run.optimizer_values.API``)
API = "api:"

_MAX_DEPTH = 12
#: what a subclass in another module binds to a parameter of its base's ``__init__``
#: here: the ``__init__``, the parameter, the depth and the origins followed so far
InitBinder = Callable[[cst.FunctionDef, cst.Param, int, FrozenSet[int]], List["OptimizerOrigin"]]
_MAX_FLOW = 3000


@dataclass(frozen=True, eq=False)
class OptimizerOrigin:
    """Where an optimizer value comes from."""

    kind: str
    call: Optional[cst.Call] = None  # the constructor call (PLAIN and LSO)
    location: Optional[Location] = None
    inner: Tuple["OptimizerOrigin", ...] = ()  # LSO: what it wraps
    #: made in a factory function of the file and returned (``make_optimizer(lr)``)
    returned: bool = False


@dataclass
class Gradient:
    """``tape.gradient(target, sources)`` on a GradientTape, or ``tf.gradients``."""

    call: cst.Call
    location: Location
    target: Optional[cst.BaseExpression]
    statement: Optional[cst.SimpleStatementLine]
    tape_block: Optional[cst.With]  # the ``with`` block the tape records in
    symbolic: bool = False


@dataclass
class Clip:
    """A known clipping call (``GRADIENT_CLIPS``) on the way from the gradients to the update."""

    call: cst.Call
    location: Location
    #: the gradients it clips were unscaled before (get_unscaled_gradients, or a
    #: division by the optimizer's loss scale, lies on the way to it)
    after_unscaling: bool
    #: the gradients it clips are of a scaled loss (False: those of a branch that
    #: differentiates the plain loss, beside one that scales)
    scaled: bool = True
    #: a function of another module clips them (``clip_grads(grads, n)``): what it clips
    #: with, and where it is (``imported_clips``); None for a clipping API called here
    helper: Optional[ClippedParameter] = None


@dataclass
class TrainStep:
    """One optimizer update fed by gradients computed in the same function."""

    call: cst.Call
    method: str
    receiver: cst.BaseExpression
    location: Location
    statement: Optional[cst.SimpleStatementLine]
    origins: Tuple[OptimizerOrigin, ...]
    gradients: List[Gradient]
    #: how the differentiated loss was scaled: "scale_loss", "get_scaled_loss", "manual"
    scaling: FrozenSet[str] = frozenset()
    scale_calls: List[cst.Call] = field(default_factory=list)
    unscale_calls: List[cst.Call] = field(default_factory=list)
    #: ``g / optimizer.dynamic_scale``-style manual unscaling on the way to the update
    divisions: List[cst.BinaryOperation] = field(default_factory=list)
    #: calls of a function of another project module that divides the gradients by the
    #: loss scale (``imported_clips.imported_unscaling``), with what it unscales
    helper_unscales: List[Tuple[cst.Call, UnscaledParameter]] = field(default_factory=list)
    #: the gradients are clipped on the way (clipping scaled gradients needs care)
    clipped: bool = False
    #: the known clipping calls applied to the gradients on the way
    clips: List[Clip] = field(default_factory=list)
    #: what the step's ``if`` arms need of each condition (``conditions.Conditions.truths``)
    assumed: Truths = field(default_factory=dict)
    #: some optimizer binding was left out because its arm needs a condition the other
    #: way (wrapped only ``if amp:``, the step under ``else``)
    narrowed: bool = False
    #: the gradients reach the update through a helper's parameter (``apply(opt, grads,
    #: variables)``): the names a fix would write at the gradient are the helper's, not its caller's
    crossed: bool = False
    #: the gradients pass through a call not followed that is handed the optimizer
    #: (``unscale(opt, grads)`` of another module): it may unscale them, or scale them
    handed_on: bool = False

    @property
    def kinds(self) -> FrozenSet[str]:
        return frozenset(o.kind for o in self.origins)

    @property
    def loss_scaled(self) -> bool:
        return bool(self.scaling)

    @property
    def unscaled(self) -> bool:
        return bool(self.unscale_calls or self.divisions or self.helper_unscales)


class TrainingLoops(Analysis):
    """Collects optimizer, tape and gradient calls; joins them into train steps."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        #: canonical names of every call's callee, resolved while its imports are in scope
        self.call_names: Dict[int, FrozenSet[str]] = {}
        self.qualified: Dict[int, FrozenSet[str]] = {}
        #: Keras packages (``names.keras_package``) each optimizer or LossScaleOptimizer
        #: constructor call is read through: the generation of what it builds
        self._call_packages: Dict[int, FrozenSet[str]] = {}
        self.lso_calls: List[Tuple[cst.Call, Location]] = []
        #: calls of a loss-scaling method by name (scale_loss, get_scaled_loss, ...)
        self.method_calls: Dict[str, List[Tuple[cst.Call, Location]]] = {}
        self.applies: List[Tuple[cst.Call, Location, str, Optional[cst.SimpleStatementLine]]] = []
        self._gradient_calls: Dict[int, Tuple[cst.Call, Location, Optional[cst.SimpleStatementLine], bool]] = {}
        self._divisions: Dict[int, Location] = {}
        self._helper_clips: Dict[int, Optional[ClippedParameter]] = {}
        self._helper_unscalings: Dict[int, Optional[UnscaledParameter]] = {}
        self._clip_calls: Dict[int, Location] = {}
        #: calls whose callee names no API (a function of the project, maybe another module's)
        self._project_calls: Dict[int, Location] = {}
        self._with_of_item: Dict[int, cst.With] = {}
        self._withs: List[Tuple[cst.With, Location]] = []
        self._model_classes: Set[int] = set()
        self.defined_functions: Set[str] = set()
        #: ``name(...)`` calls by callee name, to follow an optimizer passed as an argument
        self._calls_by_name: Dict[str, List[Tuple[cst.Call, Location]]] = {}
        #: ``self.name(...)`` calls by method name, and how often ``self.name`` is read at all
        self._self_calls: Dict[str, List[Tuple[cst.Call, Location]]] = {}
        self._self_reads: Dict[str, List[Location]] = {}
        self.auto_scale_off = False
        self._statement: List[cst.SimpleStatementLine] = []
        #: ``if hasattr(opt, "get_scaled_loss")`` tests and ``try``/``except AttributeError``
        #: blocks around the node being visited: version-portable code
        self._guards: List[cst.CSTNode] = []
        #: ids of loss-scaling method calls made under such a guard
        self.guarded: Set[int] = set()
        #: ``if KERAS_3: return opt.scale_loss(loss)`` with no ``else``: the scope and the
        #: order after which the rest of the block runs only for the other generation
        self._generation_exits: List[Tuple[Scope, int]] = []
        self._steps: Optional[List[TrainStep]] = None
        #: what branch tests mean (flags, config attributes, constructor parameters)
        self.conditions = Conditions(ctx.names, ctx.scopes.calls, ctx.scopes.global_names)
        self._assumed: Truths = {}
        #: whether the last :meth:`optimizer_origins` left a binding out for its conditions
        self.narrowed = False
        self._deciding: Set[int] = set()
        #: how often each name is read (a function's name only in calls of it: every
        #: caller of it is known); ids of names that are no reads (``def`` names,
        #: attribute names, keywords)
        self._name_uses: Dict[str, int] = {}
        self._not_reads: Set[int] = set()
        #: the reads of names under conditions (``if`` arms, a conditional expression's arm)
        self._conditional = ConditionalReads()
        #: the nodes the last :meth:`flow` reached through a parameter, in the calls of its function
        self.crossed: Set[int] = set()
        #: the helper calls the last :meth:`flow` entered to reach each node inside one
        self.frames: Dict[int, _Frames] = {}
        self._step_frames: Dict[int, _Frames] = {}
        #: ``X.__init__(...)`` calls (``super().__init__(model, optimizer)``): what binds a
        #: base's ``__init__`` parameters for an instance of a subclass (``base_inits``)
        self._init_calls: List[Tuple[cst.Call, Location]] = []
        #: the class of ``self`` while an attribute is followed: the class of the method that
        #: reads it (``AmpTrainer.train_step``), kept through its bases' ``__init__``
        self._instance: Optional[Scope] = None
        #: while a subclass in another module asks what its base here stores
        #: (:meth:`inherited_attribute`): that base class, and what the subclass binds to
        #: the parameters of the ``__init__`` it runs
        self._binder: Optional[Tuple[Scope, "InitBinder"]] = None

    # -- collection -----------------------------------------------------------------
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statement.append(node)

    def leave_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statement.pop()

    def _imported(self, name: cst.Name) -> Optional[Tuple[cst.BaseExpression, Mapping[str, Optional[cst.BaseExpression]]]]:
        """What another module of the project binds a name of a version test to."""
        return imported_binding(self.ctx, name)

    def visit_If(self, node: cst.If) -> None:
        where = self.ctx.scopes.location()
        if node.orelse is None and _exits(node.body) and decides_generation(node.test, where, self._imported):
            self._generation_exits.append((where.scope, where.order))

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._guards.append(node.test)
        self._conditional.enter_ifexp(node)

    def leave_IfExp(self, node: cst.IfExp) -> None:
        self._guards.pop()

    def visit_Try(self, node: cst.Try) -> None:
        catches = any(h.type is not None and "AttributeError" in self.ctx.module.code_for_node(h.type)
                      for h in node.handlers)
        self._guards.append(cst.Name("AttributeError") if catches else cst.Name("_"))

    def leave_Try(self, node: cst.Try) -> None:
        self._guards.pop()

    def _is_guarded(self, method: str) -> bool:
        """A call of ``method`` made where a capability test decides it exists: an arm
        that needs the method, or another of its generation's loss-scaling methods,
        present (``if hasattr(opt, "get_scaled_loss"):``), or one of the other
        generation's absent (the ``else`` of that test, calling ``scale_loss``), or a
        ``try``/``except AttributeError``; a test of an unrelated attribute is none."""
        conditions = self.ctx.scopes.open_conditions()
        where = self.ctx.scopes.location()
        if any(decides_generation(test, where, self._imported) for test, _ in conditions) or any(
                scope is where.scope and order < where.order for scope, order in self._generation_exits):
            return True  # `if KERAS_3:` / `if tf.__version__ >= ...`: each arm for its generation
        needs = capabilities(conditions)
        generation = GENERATION_OF_METHOD.get(method)
        for name, present in needs.items():
            if name == method and present:
                return True
            other = SCALING_GENERATION.get(name)
            if other is not None and generation is not None and (other == generation) == present:
                return True
        for test in self._guards:
            if isinstance(test, cst.Name) and test.value == "AttributeError":
                return True
            for node in _expression_nodes(test):
                if (isinstance(node, cst.Call) and isinstance(node.func, cst.Name)
                        and node.func.value in ("hasattr", "getattr") and len(node.args) >= 2
                        and isinstance(node.args[1].value, cst.SimpleString)
                        and node.args[1].value.evaluated_value == method):
                    return True
        return False

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            self._with_of_item[id(item)] = node
        self._withs.append((node, self.ctx.scopes.location()))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if any(self.ctx.names.resolve(base.value) & MODEL_CLASSES for base in node.bases):
            self._model_classes.add(id(node))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.defined_functions.add(node.name.value)
        self._not_reads.add(id(node.name))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._not_reads.add(id(node.attr))
        if isinstance(node.value, cst.Name) and node.value.value == "self":
            self._self_reads.setdefault(node.attr.value, []).append(self.ctx.scopes.location())

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._not_reads.add(id(node.keyword))

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) not in self._not_reads:
            self._name_uses[node.value] = self._name_uses.get(node.value, 0) + 1
            self._conditional.read(node, self.ctx.scopes)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.Divide):
            self._divisions[id(node)] = self.ctx.scopes.location()

    def visit_Call(self, node: cst.Call) -> None:
        names = self.ctx.names
        func = node.func
        if isinstance(func, cst.Name):
            self._calls_by_name.setdefault(func.value, []).append((node, self.ctx.scopes.location()))
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            self._self_calls.setdefault(func.attr.value, []).append((node, self.ctx.scopes.location()))
        if isinstance(func, cst.Attribute) and func.attr.value == "__init__":
            self._init_calls.append((node, self.ctx.scopes.location()))
        statement = self._statement[-1] if self._statement else None
        resolved = names.resolve(func)
        if resolved:
            self.call_names[id(node)] = resolved
            if resolved & LOSS_SCALE_OPTIMIZERS:
                self.lso_calls.append((node, self.ctx.scopes.location()))
                self._call_packages[id(node)] = names.packages(func)
            elif any(is_optimizer_constructor(n) for n in resolved):
                self.qualified[id(node)] = names.qualified(func)
                self._call_packages[id(node)] = names.packages(func)
            elif resolved & SYMBOLIC_GRADIENTS:
                self._gradient_calls[id(node)] = (node, self.ctx.scopes.location(), statement, True)
            elif resolved & GRADIENT_CLIPS:
                self._clip_calls[id(node)] = self.ctx.scopes.location()
        if isinstance(func, (cst.Name, cst.Attribute)) and not names_tensorflow(resolved):
            # a project function called by name: it may clip what it is handed (``imported_clips``)
            self._project_calls[id(node)] = self.ctx.scopes.location()
        for arg in node.args:
            if (arg.keyword is not None and arg.keyword.value == "auto_scale_loss"
                    and isinstance(arg.value, cst.Name) and arg.value.value == "False"):
                self.auto_scale_off = True
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if method == "gradient":
            self._gradient_calls[id(node)] = (node, self.ctx.scopes.location(), statement, False)
        elif method in APPLY_METHODS:
            self.applies.append((node, self.ctx.scopes.location(), method, statement))
        if method in SCALE_METHODS or method == UNSCALE_METHOD or method == "minimize" or method == "apply":
            self.method_calls.setdefault(method, []).append((node, self.ctx.scopes.location()))
            if self._is_guarded(method):
                self.guarded.add(id(node))

    def callee_names(self, call: cst.Call) -> FrozenSet[str]:
        """The canonical names of what ``call`` runs: the API its callee names, or the
        vocabulary wrapper a project function in another module stands for (its
        arguments handed on: ``dmp.DistributedGradientTape(tape)``); call after the walk."""
        names = self.call_names.get(id(call), frozenset())
        kinds = self.ctx.facts.project_optimizer_factories.get(dotted_name(call.func) or "", ())
        return names | {k[len(API):] for k in kinds if k.startswith(API)}

    # -- optimizers -------------------------------------------------------------------
    def built_package(self, origins: Iterable[OptimizerOrigin]) -> Optional[str]:
        """The one Keras package (``keras``, ``tf.keras``, ``tf_keras``) every origin's
        optimizer is built from, its wrapper's for a LossScaleOptimizer: the generation of
        its methods is that package's, whatever else the file imports. None when some
        origin is not built here or they differ."""
        found: Set[str] = set()
        for origin in origins:
            if origin.call is None or origin.kind not in (PLAIN, LSO, FACTOR):
                return None
            packages = self._call_packages.get(id(origin.call), frozenset())
            if len(packages) != 1:
                return None
            found |= packages
        return found.pop() if len(found) == 1 else None

    def optimizer_origins(self, expr: cst.BaseExpression, loc: Location,
                          assumed: Optional[Truths] = None, called: bool = False) -> Tuple[OptimizerOrigin, ...]:
        """Every origin the optimizer ``expr`` seen at ``loc`` may have; with ``assumed``
        (what the use's ``if`` arms need of each condition), only the bindings that can
        run together with the use (see :attr:`narrowed`). ``called``: the use calls a
        method of it (``self.opt.apply(...)``), so where it also has other values it is
        not ``None`` there (``self.opt = None`` in ``__init__``, the optimizer made in a
        ``setup()`` the object runs first: a step on ``None`` would crash)."""
        saved = self._assumed
        self._assumed, self.narrowed = assumed or {}, False
        try:
            found = list(self._origins(expr, loc, 0, frozenset()))
            if called and any(o.kind != NO_OPTIMIZER for o in found):
                found = [o for o in found if o.kind != NO_OPTIMIZER]
            return tuple(_known(iter(found)))
        finally:
            self._assumed = saved

    def _possible(self, binding: Optional[Binding]) -> bool:
        """Whether a binding can hold the value the use sees: not in an arm whose
        condition the use's arms need the other way (``if loss_scale:`` wrapping, a use
        under ``else`` of ``if self.use_amp:`` set from it), nor in an arm an
        ``isinstance`` test shuts (:meth:`never_runs`)."""
        if binding is None or not binding.branches or binding.scope is None:
            return True
        where = binding.location()
        if self.never_runs(binding.branches, where):
            return False
        if self._assumed and conflict(self.conditions.truths(binding.branches, where), self._assumed):
            self.narrowed = True
            return False
        return True

    def _forced(self, binding: Binding) -> bool:
        """A binding in ``if`` arms that the use's conditions all take (``if loss_scale:``
        wrapping, the use under ``if self.use_amp:`` set from it)."""
        if not self._assumed or not binding.branches or binding.scope is None:
            return False
        needs = self.conditions.truths(binding.branches, binding.location())
        return len(needs) == len(binding.branches) and all(self._assumed.get(k) == v for k, v in needs.items())

    def never_runs(self, branches: Branches, loc: Location) -> bool:
        """An arm that no run takes: the body of ``if isinstance(opt, C):`` where no
        value ``opt`` may hold is a ``C`` (the program builds another class, or none),
        or its ``else`` where every value is one."""
        for _, arm, test in branches:
            wanted = arm == "body"
            while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                test, wanted = test.expression, not wanted
            truth = self._isinstance_truth(test, loc)
            if truth is not None and truth != wanted:
                return True
        return False

    def _isinstance_truth(self, test: cst.BaseExpression, loc: Location) -> Optional[bool]:
        """``isinstance(opt, <LossScaleOptimizer class>)`` decided from the optimizer's
        origins: None unless every origin decides it the same way."""
        if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
                and len(test.args) == 2 and not any(a.keyword or a.star for a in test.args)) \
                or loc.lookup("isinstance") is not None or id(test) in self._deciding:
            return None
        classes = test.args[1].value
        parts = [e.value for e in classes.elements] if isinstance(classes, cst.Tuple) else [classes]
        tested = [self.ctx.names.resolve(part) for part in parts]
        if not tested or not all(names and names <= LOSS_SCALE_OPTIMIZERS for names in tested):
            return None  # a class of another kind, or one not known
        self._deciding.add(id(test))
        saved = self._assumed, self.narrowed
        try:
            self._assumed = {}
            origins = tuple(_known(self._origins(test.args[0].value, loc, 0, frozenset())))
        finally:
            self._deciding.discard(id(test))
            self._assumed, self.narrowed = saved
        truths = {self._is_instance(origin, frozenset().union(*tested)) for origin in origins}
        return truths.pop() if len(truths) == 1 else None

    def _is_instance(self, origin: OptimizerOrigin, tested: FrozenSet[str]) -> Optional[bool]:
        if origin.kind in (PLAIN, FACTOR):
            return False  # a Keras optimizer no LossScaleOptimizer wraps
        if origin.kind != LSO or origin.call is None:
            return None
        built = self.call_names.get(id(origin.call), frozenset()) & LOSS_SCALE_OPTIMIZERS
        if not built:
            return None  # made by a factory of the project: which class is not known
        if built & tested:
            return True
        if built == {EXPERIMENTAL_LSO} and STABLE_LSO in tested:
            return True  # the experimental class derives from the stable one (TF 2.4-2.8)
        if built == {STABLE_LSO} and tested == {EXPERIMENTAL_LSO}:
            return False  # the stable class is no experimental one
        return None

    def _origins(self, expr: cst.BaseExpression, loc: Location, depth: int,
                 seen: FrozenSet[int]) -> Iterator[OptimizerOrigin]:
        if depth > _MAX_DEPTH:
            yield OptimizerOrigin(UNKNOWN_OPTIMIZER)
            return
        if isinstance(expr, cst.Call):
            names = self.call_names.get(id(expr), frozenset())
            if names & LOSS_SCALE_OPTIMIZERS:
                inner = lso_argument(expr)
                inner_origins = tuple(self._origins(inner, loc, depth + 1, seen)) if inner is not None else ()
                yield OptimizerOrigin(LSO, expr, loc, inner_origins)
            elif self.callee_names(expr) & DISTRIBUTED_OPTIMIZERS:
                inner = positional_or_keyword(expr, 0, "optimizer")
                if inner is None:
                    yield OptimizerOrigin(UNKNOWN_OPTIMIZER)
                else:  # the wrapper scales exactly as the optimizer it wraps
                    yield from self._origins(inner, loc, depth + 1, seen)
            elif any(is_optimizer_constructor(n) for n in names):
                factor = keyword_only(expr, LOSS_SCALE_FACTOR_KEYWORD)
                if factor is not None and not (isinstance(factor, cst.Name) and factor.value == "None"):
                    yield OptimizerOrigin(FACTOR, expr, loc)  # Keras 3 static loss scaling, no wrapper needed
                else:
                    yield OptimizerOrigin(PLAIN, expr, loc)
            elif id(expr) not in seen and (returns := _helper_returns(expr, loc)):
                # a factory of this file (``make_optimizer(lr)``): what each return makes,
                # where the call's literal flags let it run (``make(lr, scaled=False)``)
                saved = self._assumed
                self._assumed = {**saved, **self._literal_truths(expr, loc, returns[0][1])}
                try:
                    for value, inside, arms in returns:
                        if conflict(self.conditions.truths(arms, inside), self._assumed):
                            continue
                        for origin in self._origins(value, inside, depth + 1, seen | {id(expr)}):
                            yield replace(origin, returned=True)
                finally:
                    self._assumed = saved
            elif isinstance(expr.func, cst.Subscript) and self._picks_optimizer_class(expr.func, loc):
                yield OptimizerOrigin(PLAIN, expr, loc)  # ``OPTIMIZERS[name](lr)``: every class it may pick
            else:  # a factory of the project (another module): what it returns, if known
                made = self.ctx.facts.project_optimizer_factories.get(dotted_name(expr.func) or "", ())
                kinds = tuple(k for k in made if not k.startswith(API))
                yield from (OptimizerOrigin(kind, expr, loc, returned=True) for kind in kinds) if kinds \
                    else [OptimizerOrigin(UNKNOWN_OPTIMIZER)]
        elif isinstance(expr, cst.IfExp):
            yield from self._origins(expr.body, loc, depth + 1, seen)
            yield from self._origins(expr.orelse, loc, depth + 1, seen)
        elif isinstance(expr, cst.Subscript) and (key := string_key(expr)) is not None:
            # ``setup()["optimizer"]``: the entry of the dict literal(s) the value is
            values = list(self._dict_entries(expr.value, key, loc, depth + 1, seen))
            if not values:
                yield OptimizerOrigin(UNKNOWN_OPTIMIZER)
            for entry, where in values:
                if entry is None or where is None:
                    yield OptimizerOrigin(UNKNOWN_OPTIMIZER)
                else:
                    yield from self._origins(entry, where, depth + 1, seen)
        elif isinstance(expr, cst.BooleanOperation) and isinstance(expr.operator, cst.Or):
            # ``optimizer or Adam()``: the left value where it is one, else the right
            left = list(self._origins(expr.left, loc, depth + 1, seen))
            yield from (o for o in left if o.kind != NO_OPTIMIZER)
            if not left or any(o.kind in (NO_OPTIMIZER, UNKNOWN_OPTIMIZER) for o in left):
                yield from self._origins(expr.right, loc, depth + 1, seen)
        elif isinstance(expr, cst.Name) and expr.value == "None" and loc.lookup("None") is None:
            yield OptimizerOrigin(NO_OPTIMIZER)
        elif isinstance(expr, cst.Name):
            # ``opt = Adam(); if amp: opt = LossScaleOptimizer(opt)``: either may arrive
            found = [b for b in _reaching(loc, expr.value) if self._possible(b)]
            if not found and loc.lookup(expr.value) is None:
                # ``from config import OPTIMIZER``: what that module makes it, once
                yield self._imported_origin(expr)
                return
            forced = [b.order for b in found if self._forced(b)]
            if forced:  # the use's conditions make this one run: it replaces the earlier ones
                found = [b for b in found if b.order >= max(forced)]
            reaching: List[Optional[Binding]] = list(found) or [None]
            for binding in reaching:
                yield from self._binding_origins(binding, depth, seen)
        elif (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)
              and expr.value.value == "self"):
            cls = loc.scope.enclosing_class()
            if cls is None:
                yield OptimizerOrigin(UNKNOWN_OPTIMIZER)
                return
            # the class of the instance: this method's, or a subclass's whose ``__init__`` is
            # being followed into this base's (``super().__init__(model, optimizer)``)
            instance = self._instance if self._instance is not None \
                and any(c is cls for c in class_chain(self._instance)) else cls
            saved_instance, self._instance = self._instance, instance
            try:
                yield from self._attribute_origins(instance, expr.attr.value, expr, loc, depth, seen)
            finally:
                self._instance = saved_instance
        elif isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) \
                and loc.lookup(expr.value.value) is None:
            yield self._imported_origin(expr)  # ``config.OPTIMIZER`` of an imported module
        else:
            yield OptimizerOrigin(UNKNOWN_OPTIMIZER)

    def _imported_origin(self, expr: cst.BaseExpression) -> OptimizerOrigin:
        """The optimizer a name of another module of the project is bound to, once, at its
        top level, by a Keras optimizer or LossScaleOptimizer constructor (no fix here:
        the value is made there)."""
        found = imported_constructor(self.ctx, expr)
        if found is None:
            return OptimizerOrigin(UNKNOWN_OPTIMIZER)
        name, call = found
        if name in LOSS_SCALE_OPTIMIZERS:
            return OptimizerOrigin(LSO, inner=(OptimizerOrigin(UNKNOWN_OPTIMIZER),))
        if is_optimizer_constructor(name) and keyword_only(call, LOSS_SCALE_FACTOR_KEYWORD) is None:
            return OptimizerOrigin(PLAIN)
        return OptimizerOrigin(UNKNOWN_OPTIMIZER)

    def _attribute_origins(self, instance: Scope, attr: str, expr: Optional[cst.Attribute],
                           loc: Optional[Location], depth: int, seen: FrozenSet[int]) -> Iterator[OptimizerOrigin]:
        """``self.<attr>`` of an ``instance`` of a class, read at ``loc`` (None: asked by a
        subclass in another module, :meth:`inherited_attribute`): what the nearest class of
        its chain that sets it stores, in this file or in a base of another module."""
        chain = class_chain(instance)
        # the nearest class that sets it: this one, or a base of it in this file
        # (``self.optimizer`` made in ``BaseTrainer.__init__``, used by a subclass)
        owner = next((c for c in chain if c.attributes.get(attr)), None)
        compiled = attr == "optimizer" and any(id(c.node) in self._model_classes for c in chain)
        if owner is None and loc is not None and not compiled:
            # (a Keras model's ``self.optimizer`` is what compile() sets, whatever a base
            # of another module stores: ``Model.compile`` in a repository of Keras itself)
            inherited = self._foreign_attribute(chain, attr, depth, seen)
            if inherited is not None:  # stored by a base of another module
                yield from inherited
                return
        # `self.opt = LossScaleOptimizer(self.opt)` reads the attribute's earlier
        # value: a binding is never the value of an expression in its own right side.
        # Nor one made in the other arm of an `if` the use is in (`if fp16: self.opt =
        # LossScaleOptimizer(self.opt)` / `elif rewrite: self.opt = rewrite(self.opt)`).
        bindings = [b for b in (owner or instance).attributes.get(attr, []) if id(b) not in seen
                    and not (expr is not None and b.value is not None and contains(b.value, expr))
                    and not (loc is not None and exclusive(b.branches, loc.branches)) and self._possible(b)]
        if bindings:
            for binding in bindings:
                yield from self._binding_origins(binding, depth, seen)
        elif compiled and loc is not None:
            # a Model subclass, directly or through a base of this file (``SegModel(ScaledModel)``)
            yield OptimizerOrigin(COMPILED, None, loc)
        else:
            yield OptimizerOrigin(UNKNOWN_OPTIMIZER)

    def _foreign_attribute(self, chain: List[Scope], attr: str, depth: int,
                           seen: FrozenSet[int]) -> Optional[List[OptimizerOrigin]]:
        """``self.<attr>`` that no class of ``chain`` (an instance's class and its bases in
        this file) sets, stored by a base class of another project module: what that
        module's analysis follows there, the parameters of the ``__init__`` it runs bound
        from the call this file's class makes (``super().__init__(model, optimizer)``).
        Origins in that module keep only their kind (a fix edits this file only). None
        when no such base stores it."""
        from mplint.analysis.imported_layers import analysed, imported_definition

        bases = foreign_bases(chain[0])
        names = [dotted_name(base) or "" for base in bases]
        for base in bases:
            found = imported_definition(self.ctx, base)
            other = None if found is None else analysed(found[0], TrainingLoops)
            if found is None or not isinstance(other, TrainingLoops):
                continue

            def bind(init: cst.FunctionDef, param: cst.Param, at: int, _seen: FrozenSet[int]) -> List[OptimizerOrigin]:
                return list(self._bound_here(chain, names, init, param, at, seen))

            inherited = other.inherited_attribute(found[1], attr, bind, depth + 1)
            if inherited is not None:
                return [o if self._made_here(o) else _kind_only(o) for o in inherited]
        return None

    def _made_here(self, origin: OptimizerOrigin) -> bool:
        scope: Optional[Scope] = None if origin.location is None else origin.location.scope
        while scope is not None and scope.parent is not None:
            scope = scope.parent
        return origin.call is None or (scope is not None and scope.node is self.ctx.module)

    def _bound_here(self, chain: List[Scope], names: List[str], init: cst.FunctionDef, param: cst.Param,
                    depth: int, seen: FrozenSet[int]) -> Iterator[OptimizerOrigin]:
        """What this file's classes (``chain``, the instance's class first) bind to
        ``param`` of the ``__init__`` of their base in another module (``names``: how
        this file names its bases there)."""
        caller = init_caller(chain, len(chain))
        sites = base_init_calls(self._init_calls, caller, (), names) if caller is not None \
            else self._constructions(chain[0])
        yield from self._site_origins(sites, init, param, None, depth, seen)

    def _constructions(self, cls: Scope) -> List[Tuple[cst.Call, Location, int]]:
        """The file's constructions of ``cls`` (``self`` bound: offset 1), when they are all
        of them: a script's classes, or a private class of a library module."""
        name = getattr(getattr(cls.node, "name", None), "value", "_")
        if not self.ctx.values.script and not name.startswith("_"):
            return []  # a library module's public class: other modules construct it too
        return [(call, where, 1) for call, where in self.ctx.scopes.calls.get(name, ())
                if (found := where.lookup(name)) is not None and found.node is cls.node]

    def _site_origins(self, sites: List[Tuple[cst.Call, Location, int]], init: cst.FunctionDef,
                      param: cst.Param, default_at: Optional[Location], depth: int,
                      seen: FrozenSet[int]) -> Iterator[OptimizerOrigin]:
        """What each call of ``init`` binds to ``param``: its argument's origins, its
        default's where it leaves it (``None``: no optimizer; ``default_at``: where the
        default is read, None for a module other than the call's), or UNKNOWN."""
        if not sites:
            yield OptimizerOrigin(UNKNOWN_OPTIMIZER)
        for call, where, offset in sites:
            arg = argument_for(init, param, call, offset)
            if arg is None and param.default is not None \
                    and isinstance(param.default, cst.Name) and param.default.value == "None":
                yield OptimizerOrigin(NO_OPTIMIZER)
            elif arg is None and param.default is not None:
                yield from self._origins(param.default, default_at, depth + 1, seen) if default_at is not None \
                    else [OptimizerOrigin(_DEFAULT)]
            elif not isinstance(arg, cst.BaseExpression):
                yield OptimizerOrigin(UNKNOWN_OPTIMIZER)
            else:
                yield from self._origins(arg, where, depth + 1, seen)

    def instance_truth(self, attr: str, cls: Scope) -> Optional[bool]:
        """The truth of ``self.<attr>`` for an instance of ``cls``, when its class chain stores
        it once (:func:`stored_attributes.stored_form`), here or in a base of another module:
        a constant, or a parameter of an ``__init__``, bound by the ``super().__init__(...)``
        call of the class below it (or the class's constructions); None when unknown."""
        from mplint.analysis.imported_layers import analysed, imported_definition

        chain = class_chain(cls)
        if any(c.attributes.get(attr) for c in chain):
            form = stored_form(cls, attr, self.ctx.values)
            definer = next((c for c in chain if form is not None and own_init(c) is form.method), None)
            if form is None or (form.constant is None and definer is None):
                return None
            if form.constant is not None:
                return _truth(form.constant)
            assert definer is not None
            index = chain.index(definer)
            caller = init_caller(chain, index)
            sites = base_init_calls(self._init_calls, caller, chain[chain.index(caller) + 1:index + 1]) \
                if caller is not None else self._constructions(chain[0])
            return _truth(self._site_values(sites, form))
        bases = foreign_bases(cls)
        for base in bases:
            found = imported_definition(self.ctx, base)
            other = None if found is None else analysed(found[0], TrainingLoops)
            stored = other.stored(found[1], attr) if found is not None and isinstance(other, TrainingLoops) else None
            if stored is None:
                continue
            form, bound_here = stored
            if form.constant is not None:
                return _truth(form.constant)
            if not bound_here:
                return None
            caller = init_caller(chain, len(chain))
            names = [dotted_name(b) or "" for b in bases]
            sites = base_init_calls(self._init_calls, caller, (), names) if caller is not None \
                else self._constructions(chain[0])
            return _truth(self._site_values(sites, form))
        return None

    def _site_values(self, sites: List[Tuple[cst.Call, Location, int]], form: StoredForm) -> Optional[Set[object]]:
        """The values the calls of an ``__init__`` bind to the parameter ``form`` stores."""
        if form.param is None or form.key is not None:
            return None
        out: Set[object] = set()
        for call, where, offset in sites:
            arg = argument_for(form.method, form.param, call, offset)
            found = form.default if arg is None else (
                self.ctx.values.values(arg, where) if isinstance(arg, cst.BaseExpression) else None)
            if found is None:
                return None
            out |= found
        return out if sites else None

    def stored(self, class_name: str, attr: str) -> Optional[Tuple[StoredForm, bool]]:
        """How the top-level class ``class_name`` (and its bases here) stores ``self.<attr>``,
        and whether the method storing it is the ``__init__`` a subclass's
        ``super().__init__(...)`` runs (its parameters are that call's arguments)."""
        binding = self.ctx.scopes.module_scope.lookup(class_name)
        cls = next((c for c in self.ctx.scopes.module_scope.children
                    if binding is not None and c.node is binding.node and c.kind == "class"), None)
        form = None if cls is None else stored_form(cls, attr, self.ctx.values)
        if cls is None or form is None:
            return None
        runs = next((init for init in map(own_init, class_chain(cls)) if init is not None), None)
        return form, runs is form.method

    def inherited_attribute(self, class_name: str, attr: str, bind: "InitBinder",
                            depth: int) -> Optional[List[OptimizerOrigin]]:
        """``self.<attr>`` of an instance of a subclass (in another module) of the top-level
        class ``class_name`` here, when this class or a base of it here stores it: what the
        stores hold, the parameters of the ``__init__`` the subclass runs bound by ``bind``
        (the subclass's own ``super().__init__(...)``); None when none stores it."""
        binding = self.ctx.scopes.module_scope.lookup(class_name)
        cls = next((c for c in self.ctx.scopes.module_scope.children
                    if binding is not None and c.node is binding.node and c.kind == "class"), None)
        if cls is None or not attributes_of(cls, attr) or depth > _MAX_DEPTH:
            return None
        saved = self._binder, self._instance, self._assumed
        self._binder, self._instance, self._assumed = (cls, bind), cls, {}
        try:
            return list(self._attribute_origins(cls, attr, None, None, depth, frozenset()))
        finally:
            self._binder, self._instance, self._assumed = saved

    def _bound_by_subclass(self, binding: Binding, depth: int,
                           seen: FrozenSet[int]) -> Optional[Iterator[OptimizerOrigin]]:
        """A parameter of a base's ``__init__`` while ``self`` is an instance of a subclass
        (:attr:`_instance`): what the call of the class below it binds (``super().__init__(model,
        optimizer)`` in ``AmpTrainer.__init__``), or, for the top class a subclass of
        another module asks about, what that subclass binds (:attr:`_binder`); None when
        the instance is of the parameter's own class (every construction of it binds it)."""
        scope = binding.scope
        definer = None if scope is None else scope.parent
        init, param = None if scope is None else scope.node, binding.node
        if self._instance is None or definer is None or definer.kind != "class" \
                or not isinstance(init, cst.FunctionDef) or init.name.value != "__init__" \
                or not isinstance(param, cst.Param):
            return None
        chain = class_chain(self._instance)
        index = next((i for i, c in enumerate(chain) if c is definer), None)
        if index is None:
            return None
        caller = init_caller(chain, index)
        if caller is None and self._binder is not None and self._binder[0] is chain[0]:
            found = self._binder[1](init, param, depth, seen)  # the subclass in the other module binds it
            return iter([o for d in found for o in (
                self._default_origins(param, binding, depth, seen) if d.kind == _DEFAULT else [d])])
        if index == 0:
            return None
        sites = base_init_calls(self._init_calls, caller, chain[chain.index(caller) + 1:index + 1]) \
            if caller is not None else self._constructions(chain[0])
        return self._site_origins(sites, init, param, binding.location(), depth, seen)

    def _default_origins(self, param: cst.Param, binding: Binding, depth: int,
                         seen: FrozenSet[int]) -> List[OptimizerOrigin]:
        assert param.default is not None
        return list(self._origins(param.default, binding.location(), depth + 1, seen))

    def _picks_optimizer_class(self, func: cst.Subscript, loc: Location) -> bool:
        """Whether every class a container lookup may pick is a Keras optimizer class
        (:meth:`Evaluator.choices`): a dict of classes chosen by a flag."""
        picked = self.ctx.values.choices(func, loc)
        return picked is not None and all(
            any(is_optimizer_class(n) for n in self.ctx.names.resolve(entry)) for entry, _ in picked)

    def _dict_entries(self, expr: cst.BaseExpression, key: str, loc: Location, depth: int, seen: FrozenSet[int]
                      ) -> Iterator[Tuple[Optional[cst.BaseExpression], Optional[Location]]]:
        """The values the dict ``expr`` may hold under ``key``: entries of the dict
        literals it is, through names, a helper's returns and ``self`` attributes;
        (None, None) for any value not followed (the caller stays unknown)."""
        if depth > _MAX_DEPTH:
            yield None, None
        elif isinstance(expr, cst.Dict):
            entries = [e for e in expr.elements if isinstance(e, cst.DictElement)
                       and isinstance(e.key, cst.SimpleString) and e.key.evaluated_value == key]
            if len(entries) != 1 or any(isinstance(e, cst.StarredDictElement) for e in expr.elements):
                yield None, None
            else:
                yield entries[0].value, loc
        elif isinstance(expr, cst.Call) and id(expr) not in seen and (returns := _helper_returns(expr, loc)):
            for value, inside, _ in returns:
                yield from self._dict_entries(value, key, inside, depth + 1, seen | {id(expr)})
        elif isinstance(expr, cst.Name):
            found: List[Optional[Binding]] = [b for b in loc.reaching(expr.value) if self._possible(b)]
            for binding in found or [None]:
                if binding is None or id(binding) in seen or binding.value is None \
                        or binding.kind not in ("assign", "annassign") or binding.scope is None:
                    yield None, None
                else:
                    yield from self._dict_entries(binding.value, key, binding.location(), depth + 1,
                                                  seen | {id(binding)})
        elif isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self" \
                and (cls := loc.scope.enclosing_class()) is not None:
            owner = next((c for c in class_chain(cls) if c.attributes.get(expr.attr.value)), cls)
            bindings: List[Optional[Binding]] = [
                b for b in owner.attributes.get(expr.attr.value, []) if self._possible(b)]
            for binding in bindings or [None]:
                if binding is None or id(binding) in seen or binding.value is None or binding.scope is None:
                    yield None, None
                else:
                    yield from self._dict_entries(binding.value, key, binding.location(), depth + 1,
                                                  seen | {id(binding)})
        else:
            yield None, None

    def _literal_truths(self, call: cst.Call, caller: Location, inside: Location) -> Truths:
        """The truth of each parameter of the helper ``call`` runs that the call fixes to a
        literal (``scaled=False``, or a default left alone), keyed as its ``if`` tests are."""
        helper = local_function(call, caller)
        function = helper.node if helper is not None else None
        if not isinstance(function, cst.FunctionDef):
            return {}
        offset = 1 if isinstance(call.func, cst.Attribute) else 0
        out: Truths = {}
        for param in [*function.params.params, *function.params.kwonly_params]:
            name = param.name.value
            binding = inside.lookup(name)
            if binding is None or binding.kind != "param" or len(inside.scope.bindings.get(name, ())) != 1:
                continue  # rebound in the body: the test reads another value
            passed = argument_for(function, param, call, offset)
            if passed is None and param.default is not None:
                value = self.ctx.values.value(param.default, caller)
            elif isinstance(passed, cst.BaseExpression):
                value = self.ctx.values.value(passed, caller)
            else:
                continue
            key = self.conditions.key(param.name, inside)
            if isinstance(value, bool) and key is not None:
                out[key] = value
        return out

    def _binding_origins(self, binding: Optional[Binding], depth: int,
                         seen: FrozenSet[int]) -> Iterator[OptimizerOrigin]:
        if binding is None or binding.scope is None or id(binding) in seen:
            yield OptimizerOrigin(UNKNOWN_OPTIMIZER)
            return
        if binding.kind == "param":
            yield from self._argument_origins(binding, depth, seen | {id(binding)})
            return
        if binding.value is None and binding.element is not None:
            yield from self._element_origins(binding, binding.element)
            return
        if binding.value is None or binding.kind not in ("assign", "annassign"):
            yield OptimizerOrigin(UNKNOWN_OPTIMIZER)
            return
        yield from self._origins(binding.value, binding.location(), depth + 1,
                                 seen | {id(binding)})

    def _element_origins(self, binding: Binding, element: Tuple[cst.BaseExpression, int]) -> Iterator[OptimizerOrigin]:
        """``self.g_opt, self.d_opt = optimizers``: element 1 of the tuple a parameter
        holds, which every call of the program passes written out (``Trainer(model,
        (opt_g, opt_d))``: ``optimizers@1`` of the program model's optimizer parameters)."""
        source, index = element
        bindings = binding.location().reaching(source.value) if isinstance(source, cst.Name) else []
        scope = bindings[0].scope if len(bindings) == 1 and bindings[0].kind == "param" else None
        outermost = scope is not None and scope.parent is not None and scope.parent.kind in ("module", "class")
        passed = self.ctx.facts.project_optimizer_params.get(function_key(scope), {}).get(
            f"{bindings[0].name}{PART}{index}", ()) if scope is not None and outermost else ()
        if not passed:
            yield OptimizerOrigin(UNKNOWN_OPTIMIZER)
            return
        yield from (OptimizerOrigin(kind) for kind in passed)

    def _argument_origins(self, binding: Binding, depth: int, seen: FrozenSet[int]) -> Iterator[OptimizerOrigin]:
        """An optimizer parameter: what every direct call of the function passes for it.

        Only plain functions called by name in this file are followed; a function
        handed to ``strategy.run`` or called from elsewhere stays UNKNOWN_OPTIMIZER.
        """
        bound = self._bound_by_subclass(binding, depth, seen)
        if bound is not None:  # ``super().__init__(model, optimizer)`` of the instance's class
            yield from bound
            return
        scope = binding.scope
        function = scope.node if scope is not None else None
        outermost = scope is not None and scope.parent is not None and scope.parent.kind in ("module", "class")
        passed = () if scope is None or not outermost else \
            self.ctx.facts.project_optimizer_params.get(function_key(scope), {}).get(binding.name, ())
        if passed:  # what every call site in the program passes (the program model's summaries)
            yield from (OptimizerOrigin(kind) for kind in passed)
            return
        if isinstance(function, cst.FunctionDef) and scope is not None and scope.parent is not None \
                and scope.parent.kind == "class" and isinstance(binding.node, cst.Param):
            yield from self._constructor_origins(binding, depth, seen)  # ``Trainer(model, Adam())``
            return
        if not isinstance(function, cst.FunctionDef) or scope is None or scope.parent is None:
            yield OptimizerOrigin(UNKNOWN_OPTIMIZER)
            return
        params = function.params
        positional = [i for i, p in enumerate(params.params) if p is binding.node]
        if not positional and not any(p is binding.node for p in params.kwonly_params):
            yield OptimizerOrigin(UNKNOWN_OPTIMIZER)
            return
        position = positional[0] if positional else -1
        sites = [(call, loc) for call, loc in self._calls_by_name.get(function.name.value, [])
                 if _defines(loc.lookup(function.name.value), function)]
        if not sites:
            yield OptimizerOrigin(UNKNOWN_OPTIMIZER)
            return
        for call, loc in sites:
            arg = positional_or_keyword(call, position, binding.name) if position >= 0 else keyword_only(call, binding.name)
            if arg is None or any(a.star for a in call.args):
                yield OptimizerOrigin(UNKNOWN_OPTIMIZER)
                continue
            yield from self._origins(arg, loc, depth + 1, seen)

    def _constructor_origins(self, binding: Binding, depth: int,
                             seen: FrozenSet[int]) -> Iterator[OptimizerOrigin]:
        """A parameter of ``__init__``: what every construction of the class in the file passes."""
        assert binding.scope is not None and isinstance(binding.node, cst.Param)
        definer = binding.scope.parent
        public = definer is not None and not getattr(getattr(definer.node, "name", None), "value", "_").startswith("_")
        sites = self.conditions.calls_of(binding.scope) if self.ctx.values.script or not public else []
        if not sites:  # a library module's public class: other modules construct it too
            yield OptimizerOrigin(UNKNOWN_OPTIMIZER)
            return
        for call, where, offset in sites:
            arg = argument_for(binding.scope.node, binding.node, call, offset)
            if arg is None and binding.node.default is not None \
                    and isinstance(binding.node.default, cst.Name) and binding.node.default.value == "None":
                yield OptimizerOrigin(NO_OPTIMIZER)  # ``Trainer(model)``: ``optimizer=None`` left alone
                continue
            if not isinstance(arg, cst.BaseExpression):
                yield OptimizerOrigin(UNKNOWN_OPTIMIZER)  # left to another default, or unreadable
                continue
            yield from self._origins(arg, where, depth + 1, seen)

    def wrapped_elsewhere(self, call: cst.Call) -> bool:
        """Whether some LossScaleOptimizer(...) in the file wraps this constructor's result."""
        for lso, loc in self.lso_calls:
            inner = lso_argument(lso)
            if inner is None:
                continue
            if any(o.call is call for o in self._origins(inner, loc, 0, frozenset())):
                return True
        return False

    # -- steps --------------------------------------------------------------------------
    def steps(self) -> List[TrainStep]:
        """Every train step of the file (call after the walk)."""
        if self._steps is None:
            self._steps = [s for s in map(self._step, self.applies) if s is not None]
        return self._steps

    def _step(self, entry: Tuple[cst.Call, Location, str, Optional[cst.SimpleStatementLine]]) -> Optional[TrainStep]:
        call, loc, method, statement = entry
        assert isinstance(call.func, cst.Attribute)
        if method == "minimize":
            return self._minimize_step(call, loc, statement)
        grads = positional_or_keyword(call, 0, "grads_and_vars" if method == "apply_gradients" else "grads")
        if grads is None:
            return None
        if self.never_runs(loc.branches, loc):
            return None  # under an isinstance test no value passes
        flow = self.flow(grads, loc)
        self._step_frames = self.frames
        gradients = [g for g in (self._gradient(n) for n in flow if isinstance(n, cst.Call)) if g is not None]
        if not gradients:
            return None
        crossed = any(id(g.call) in self.crossed for g in gradients)
        assumed = {**self._invoked_under(loc.scope), **self.conditions.truths(loc.branches, loc)}
        step = TrainStep(call, method, call.func.value, loc, statement,
                         self.optimizer_origins(call.func.value, loc, assumed, called=True), gradients,
                         assumed=assumed, narrowed=self.narrowed, crossed=crossed)
        self._scaling(step, flow)
        return step

    def _invoked_under(self, scope: Scope) -> Truths:
        """What every use of a method needs of the conditions, where the method can only
        run through them: a method of a class with no base (no framework calls it by
        itself), whose every ``self.<method>`` of the file (called, or handed on:
        ``self.step_fn = tf.function(self.train_step)``) sits in arms that agree on a
        condition (``else:`` of ``if args.mixed_precision and not args.use_tpu:``). A
        function nested in it (``step_fn`` handed to ``strategy.run``) runs only within it."""
        while scope.parent is not None and scope.parent.kind == "function":
            scope = scope.parent
        function, cls = scope.node, scope.parent
        if isinstance(function, cst.FunctionDef) and cls is not None and cls.kind == "module":
            return self._function_invoked_under(function)
        if not isinstance(function, cst.FunctionDef) or cls is None or cls.kind != "class" \
                or not isinstance(cls.node, cst.ClassDef) or function.decorators \
                or any(dotted_name(base.value) != "object" for base in cls.node.bases):
            return {}
        name = function.name.value
        if name.startswith("__") or self._name_uses.get(name, 0):
            return {}  # a bare name may be another function's, or an instance's method read elsewhere
        reads = [where for where in self._self_reads.get(name, []) if where.scope.enclosing_class() is cls]
        if not reads or len(reads) != len(self._self_reads.get(name, [])):
            return {}
        shared: Optional[Truths] = None
        for where in reads:
            needs = self.conditions.truths(where.branches, where)
            shared = needs if shared is None else {k: v for k, v in shared.items() if needs.get(k) == v}
        return shared or {}

    def _function_invoked_under(self, function: cst.FunctionDef) -> Truths:
        """What every read of a module-level function's name needs of the conditions,
        when each read sits under one (``train_fn = amp_step if amp else step``, or
        ``step(x)`` in the ``else:`` of ``if amp:``): it runs only so. Its only decorator
        may be ``tf.function``, which runs it as it is called."""
        if any(not self.ctx.names.resolve(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)
               & RUNS_AS_CALLED for d in function.decorators):
            return {}
        name = function.name.value
        return self._conditional.agreed(name, self._name_uses.get(name, 0),
                                        lambda loc: self.conditions.truths(loc.branches, loc))

    def _minimize_step(self, call: cst.Call, loc: Location,
                       statement: Optional[cst.SimpleStatementLine]) -> Optional[TrainStep]:
        """Keras 2 ``optimizer.minimize(loss, var_list, tape=tape)``: scales by itself when wrapped."""
        assert isinstance(call.func, cst.Attribute)
        origins = self.optimizer_origins(call.func.value, loc, called=True)
        if not any(o.kind in (PLAIN, LSO) for o in origins):
            return None  # a TF1 optimizer or something unknown
        loss = positional_or_keyword(call, 0, "loss")
        if loss is None:
            return None
        step = TrainStep(call, "minimize", call.func.value, loc, statement, origins, [])
        self._scaling(step, self.flow(loss, loc))
        return step

    def _gradient(self, call: cst.Call) -> Optional[Gradient]:
        entry = self._gradient_calls.get(id(call))
        if entry is None:
            return None
        node, loc, statement, symbolic = entry
        target = positional_or_keyword(node, 0, "ys" if symbolic else "target")
        if symbolic:
            return Gradient(node, loc, target, statement, None, True)
        assert isinstance(node.func, cst.Attribute)
        block = self._tape_block(node.func.value, loc)
        if block is None:
            return None
        return Gradient(node, loc, target, statement, block or None)

    def tape_block(self, tape: cst.BaseExpression, loc: Location) -> Optional[cst.With]:
        """The ``with`` block of the GradientTape that ``tape`` names at ``loc``, if found."""
        return self._tape_block(tape, loc) or None

    def _tape_block(self, tape: cst.BaseExpression, loc: Location, depth: int = 0
                    ) -> Union[cst.With, Literal[False], None]:
        """The ``with`` block of a GradientTape (False: a tape with no block found). A
        helper's parameter (``def _compute_grads(self, tape, loss)``) is the tape every
        call of the helper in this file passes, when they all pass one block's tape."""
        if not isinstance(tape, cst.Name):
            return None
        binding = loc.lookup(tape.value)
        if binding is None:
            return None
        if binding.kind == "param":
            passed = self.passed(binding) if depth < 3 else []
            blocks = {id(found): found for found in (self._tape_block(arg, site, depth + 1) for _, arg, site in passed)}
            found = next(iter(blocks.values()), None) if len(blocks) == 1 else None
            return found if isinstance(found, cst.With) else None
        if binding.kind == "with" and isinstance(binding.node, cst.WithItem):
            item = binding.node.item
            if isinstance(item, cst.Call) and self.call_names.get(id(item), frozenset()) & GRADIENT_TAPES:
                return self._with_of_item.get(id(binding.node), False)
            return None
        if (binding.kind == "assign" and isinstance(binding.value, cst.Call)
                and self.callee_names(binding.value) & DISTRIBUTED_TAPES):
            wrapped = positional_or_keyword(binding.value, 0, "gradtape")
            if wrapped is None or wrapped is tape:
                return None
            return self._tape_block(wrapped, binding.location(), depth)  # the tape it wraps
        if (binding.kind == "assign" and isinstance(binding.value, cst.Call)
                and self.call_names.get(id(binding.value), frozenset()) & GRADIENT_TAPES):
            for block, where in reversed(self._withs):
                if (where.scope is binding.scope and binding.order < where.order <= loc.order
                        and any(isinstance(i.item, cst.Name) and i.item.value == tape.value for i in block.items)):
                    return block
            return False
        return None

    def _scaling(self, step: TrainStep, grads_flow: List[cst.CSTNode]) -> None:
        scaling: Set[str] = set()
        targets: List[Tuple[Optional[cst.BaseExpression], Location]] = [
            (g.target, g.location) for g in step.gradients if g.target is not None]
        if step.method == "minimize":
            targets = [(positional_or_keyword(step.call, 0, "loss"), step.location)]
        for target, where in targets:
            if target is None:
                continue
            how, calls = self.scaling_of(target, where)
            scaling |= how
            step.scale_calls.extend(calls)
        step.scaling = frozenset(scaling)
        clip_calls: List[cst.Call] = []
        receiver = self.ctx.module.code_for_node(step.receiver)
        for node in grads_flow:
            if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                    and node.func.attr.value == UNSCALE_METHOD):
                step.unscale_calls.append(node)
            elif isinstance(node, cst.Call) and id(node) in self._project_calls \
                    and not _helper_returns(node, step.location) and self._helper_unscaling(node) is not None:
                unscaling = self._helper_unscaling(node)
                assert unscaling is not None
                step.helper_unscales.append((node, unscaling))
            elif isinstance(node, cst.Call) and not names_tensorflow(self.callee_names(node)) \
                    and not _helper_returns(node, step.location) \
                    and any(self.ctx.module.code_for_node(arg.value) == receiver for arg in node.args):
                step.handed_on = True
            elif isinstance(node, cst.Call) and "clip" in (dotted_name(node.func) or "").lower():
                step.clipped = True
                clip_calls.append(node)
            elif isinstance(node, cst.Call) and id(node) in self._project_calls \
                    and not _helper_returns(node, step.location) and self._helper_clip(node) is not None:
                step.clipped = True
                clip_calls.append(node)
            elif isinstance(node, cst.BinaryOperation) and id(node) in self._divisions:
                if self.is_loss_scale(node.right, self._divisions[id(node)]):
                    step.divisions.append(node)
        step.clips = [c for c in (self._clip(step, call, grads_flow) for call in clip_calls) if c is not None]

    def scaling_of(self, target: cst.BaseExpression, loc: Location) -> Tuple[Set[str], List[cst.Call]]:
        """How the value differentiated as ``target`` was scaled ("scale_loss",
        "get_scaled_loss", "manual"), and the scaling method calls on its way."""
        how: Set[str] = set()
        calls: List[cst.Call] = []
        for node in self.flow(target, loc):
            if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                    and node.func.attr.value in SCALE_METHODS):
                how.add(node.func.attr.value)
                calls.append(node)
            elif _manual_scaling(node):
                how.add("manual")
        return how, calls

    def unscaled_addends(self, step: TrainStep) -> List[cst.BaseExpression]:
        """Terms added to the scaled loss after its scaling (``opt.get_scaled_loss(d_cost)
        + gp * weight``): differentiated with it, their gradients are then divided by the
        loss scale as well, so those terms barely train. A term counts when it is computed
        by a call (a penalty, the model's losses), not a number, and nothing on its way
        scales it too."""
        out: List[cst.BaseExpression] = []
        for gradient in step.gradients:
            if gradient.target is None:
                continue
            places: Dict[int, Location] = {}
            flowed = self.flow(gradient.target, gradient.location, places)
            before_scaling = {id(node) for call in step.scale_calls if id(call) in places and call.args
                              for node in self.flow(call.args[0].value, places[id(call)])}
            for node in flowed:
                if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract))) \
                        or id(node) in before_scaling:
                    continue  # a sum the loss is scaled after is scaled as a whole
                where = places[id(node)]
                # only the optimizer's own scaling calls: ``tf.nn.scale_regularization_loss``
                # reads like a manual scaling but divides by the replicas
                sides = [(side, bool(self.scaling_of(side, where)[1])) for side in (node.left, node.right)]
                if sum(scaled for _, scaled in sides) != 1:
                    continue
                term = next(side for side, scaled in sides if not scaled)
                if any(isinstance(sub, cst.Call) and not self.callee_names(sub) & (CONSTANTS | FLOAT32_BY_DEFAULT)
                       for sub in self.flow(term, where)):
                    out.append(term)
        return out

    def gradients(self) -> List[Gradient]:
        """Every ``tape.gradient`` on a GradientTape whose block was found, and every
        ``tf.gradients``, whether or not it feeds an optimizer (call after the walk)."""
        found = (self._gradient(entry[0]) for entry in self._gradient_calls.values())
        return [g for g in found if g is not None]

    def _clip(self, step: TrainStep, call: cst.Call, grads_flow: List[cst.CSTNode]) -> Optional[Clip]:
        """The clipping call as a fact of the step, if it clips the step's gradients."""
        where = self._clip_calls.get(id(call))
        clipped = positional_or_keyword(call, 0, "t_list") or keyword_only(call, "t") or keyword_only(call, "x")
        helper = None
        if where is None and id(call) in self._project_calls:
            helper = self._helper_clip(call)
            where = self._project_calls[id(call)] if helper is not None else None
            clipped = positional_or_keyword(call, helper.index, helper.name) if helper is not None else None
        if where is None or clipped is None:
            return None
        instance = step.location.scope.enclosing_class()
        needs = helper.needs if helper is not None else _attribute_needs(where.branches)
        if instance is not None and any(self.instance_truth(attr, instance) is (not wanted) for attr, wanted in needs):
            return None  # ``if self.clip_gradients:`` around the clip, False for this instance
        if any(arg.value is not clipped and self._scaled_threshold(arg.value, where) for arg in call.args):
            # the threshold is scaled as the gradients are (``clip_by_global_norm(grads,
            # opt.scale_loss(clip_norm))``): the true gradients are clipped at ``clip_norm``
            return None
        clipped = _comprehension_source(clipped, call, grads_flow)
        upstream = self.flow(clipped, where, frames=self._step_frames.get(id(call), ()))
        sources = [g for g in step.gradients if any(g.call is node for node in upstream)]
        if not sources:
            return None  # not the gradients (a learning rate, a loss)
        unscaled = any(
            (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
             and node.func.attr.value == UNSCALE_METHOD)
            or any(node is d for d in step.divisions)
            for node in upstream)
        scaled = any(g.target is None or self.scaling_of(g.target, g.location)[0] for g in sources)
        return Clip(call, where, unscaled, scaled, helper)

    def _scaled_threshold(self, value: cst.BaseExpression, where: Location) -> bool:
        """A clipping threshold multiplied by the loss scale itself (``opt.scale_loss(clip)``,
        ``clip * opt.loss_scale``), not one computed from the scaled gradients."""
        flowed = self.flow(value, where)
        if any(id(node) in self._gradient_calls for node in flowed):
            return False  # ``0.1 * global_norm(grads)``: read from the gradients
        return bool(self.scaling_of(value, where)[0])

    def _helper_clip(self, call: cst.Call) -> Optional[ClippedParameter]:
        """What a function of another project module that ``call`` calls clips."""
        if id(call) not in self._helper_clips:
            self._helper_clips[id(call)] = imported_clip(self.ctx, call, type(self), self._project_calls.get(id(call)))
        return self._helper_clips[id(call)]

    def _helper_unscaling(self, call: cst.Call) -> Optional[UnscaledParameter]:
        """What a function of another project module that ``call`` calls divides by the loss scale."""
        if id(call) not in self._helper_unscalings:
            self._helper_unscalings[id(call)] = imported_unscaling(self.ctx, call, type(self),
                                                                   self._project_calls.get(id(call)))
        return self._helper_unscalings[id(call)]

    def unscaled_parameter(self, name: str) -> Optional[Tuple[int, str]]:
        """(index, name) of the parameter the top-level function ``name`` of this module
        returns divided by a loss scale (``return [g / opt.dynamic_scale for g in grads]``);
        None when none is."""
        found = self._return_flows(name)
        if found is None:
            return None
        params, inner, flows = found
        for flowed in flows:
            for node in flowed:
                if not (isinstance(node, cst.BinaryOperation) and id(node) in self._divisions
                        and self.is_loss_scale(node.right, self._divisions[id(node)])):
                    continue
                reached = {n.value for n in self.flow(node.left, self._divisions[id(node)]) if isinstance(n, cst.Name)}
                found_param = _reached_parameter(reached | {n.value for n in flowed if isinstance(n, cst.Name)},
                                                 params, inner)
                if found_param is not None:
                    return found_param
        return None

    def _return_flows(self, name: str) -> Optional[Tuple[List[str], Scope, List[List[cst.CSTNode]]]]:
        found = self._returns_with_arms(name)
        return None if found is None else (found[0], found[1], [flowed for flowed, _ in found[2]])

    def _returns_with_arms(self, name: str
                           ) -> Optional[Tuple[List[str], Scope, List[Tuple[List[cst.CSTNode], Branches]]]]:
        """For the top-level function ``name`` of this module (or ``Cls.method``, a method
        of a top-level class, ``self`` left out): its parameters, its scope, and for each
        value it returns every node that value may be computed from."""
        owner, _, method = name.rpartition(".")
        module = self.ctx.scopes.module_scope
        scope: Optional[Scope] = module
        binding = module.lookup(name) if not owner else None
        if owner:
            cls = module.lookup(owner)
            scope = next((c for c in module.children if cls is not None and cls.kind == "class"
                          and c.node is cls.node), None)
            # the class's own, or a base's of this module: never a module function of that name
            binding = method_of(scope, method) if scope is not None else None
        if scope is None:
            return None
        function = binding.node if binding is not None and binding.kind == "def" else None
        definer = scope if binding is None or binding.scope is None else binding.scope
        inner = next((c for c in definer.children if c.node is function), None)
        if not isinstance(function, cst.FunctionDef) or inner is None:
            return None
        params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)][1 if owner else 0:]
        end = Location(inner, _END, ())
        return params, inner, [(self.flow(value, end), arms) for value, arms in _returned(function.body)]

    def unscaled_inner_gradient(self, name: str) -> Optional[Gradient]:
        """A ``tape.gradient`` on a tape of its own that the top-level function ``name``
        of this module (or ``Cls.method``) returns a value computed from, its target not
        scaled (a gradient penalty helper): a second gradient when a caller's outer tape
        differentiates what it returns. None when there is none, or it is scaled."""
        found = self._returns_with_arms(name)
        if found is None:
            return None
        by_call = {id(g.call): g for g in self.gradients() if not g.symbolic and g.tape_block is not None}
        for flowed, _arms in found[2]:
            for node in flowed:
                gradient = by_call.get(id(node))
                if gradient is not None and gradient.target is not None \
                        and not self.scaling_of(gradient.target, gradient.location)[0]:
                    return gradient
        return None

    def clipped_parameter(self, name: str) -> Optional[Tuple[int, str, str, Tuple[Tuple[str, bool], ...]]]:
        """(index, name, clipping function, needs) of the parameter the top-level function
        ``name`` of this module returns through a known clipping call (``clipped, _ =
        tf.clip_by_global_norm(grads, n); return clipped``); None when none does, or when
        the value is unscaled on the way (then the clip comes after unscaling). ``needs``:
        the instance attributes the ``if`` arms around that ``return`` test, with the
        truth each needs (``if self.clip_gradients:``), for the caller to decide."""
        found = self._returns_with_arms(name)
        if found is None:
            return None
        params, inner, flows = found
        for flowed, arms in flows:
            if any(isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                   and node.func.attr.value == UNSCALE_METHOD for node in flowed) \
                    or any(id(node) in self._divisions for node in flowed):
                return None
            for node in flowed:
                where = self._clip_calls.get(id(node)) if isinstance(node, cst.Call) else None
                clipped = None if where is None or not isinstance(node, cst.Call) else (
                    positional_or_keyword(node, 0, "t_list") or keyword_only(node, "t") or keyword_only(node, "x"))
                if where is None or clipped is None or not isinstance(node, cst.Call):
                    continue
                clipped = _comprehension_source(clipped, node, flowed)
                reached = {n.value for n in self.flow(clipped, where) if isinstance(n, cst.Name)}
                found_param = _reached_parameter(reached, params, inner)
                if found_param is not None:
                    names = self.call_names.get(id(node), frozenset())
                    return (*found_param, min(n.rsplit(".", 1)[-1] for n in names) if names else "clip",
                            _attribute_needs(arms))
        return None

    def is_loss_scale(self, expr: cst.BaseExpression, loc: Location) -> bool:
        """``opt.dynamic_scale``/``opt.loss_scale``, directly or through a local name."""
        if isinstance(expr, cst.Attribute):
            return expr.attr.value in LOSS_SCALE_ATTRIBUTES
        if isinstance(expr, cst.Name):
            binding = loc.lookup(expr.value)
            if binding is not None and binding.kind == "assign" and isinstance(binding.value, cst.Attribute):
                return binding.value.attr.value in LOSS_SCALE_ATTRIBUTES
        return False

    # -- local data flow ------------------------------------------------------------------
    def flow(self, expr: cst.BaseExpression, loc: Location,
             places: Optional[Dict[int, Location]] = None, frames: "_Frames" = ()) -> List[cst.CSTNode]:
        """Every node the value of ``expr`` may be computed from, in ``loc``'s function.

        Follows local names back to every statement that bound them earlier in the
        same scope (both branches of an ``if``; tuple targets, augmented
        assignments, ``for`` targets); names of enclosing scopes, attributes and
        parameters end the trail. ``places``, when given, gets where each node is read.
        A helper's return is followed into it from the call (``frames``: the calls
        entered already, where ``expr`` is in such a helper), so its parameters are that
        call's arguments; :attr:`frames` keeps, for each node reached inside one, the calls.
        """
        out: List[cst.CSTNode] = []
        seen: Set[int] = set()
        work: List[Tuple[cst.CSTNode, Location, bool, _Frames]] = [(expr, loc, False, frames)]
        self.crossed = set()
        self.frames = {}
        while work and len(out) < _MAX_FLOW:
            node, where, crossed, frames = work.pop()
            for sub in _expression_nodes(node):
                out.append(sub)
                if frames:
                    self.frames[id(sub)] = frames
                if places is not None:
                    places[id(sub)] = where
                if crossed:
                    self.crossed.add(id(sub))
                if isinstance(sub, cst.Call):
                    # a helper of the file: what it returns (``return opt.scale_loss(loss)``)
                    for value, inside, _ in _helper_returns(sub, where):
                        if id(value) not in seen:
                            seen.add(id(value))
                            frame = _Frame(inside.scope, sub, where, crossed, frames)
                            work.append((value, inside, crossed, (*frames, frame)))
                    continue
                if not isinstance(sub, cst.Name):
                    continue
                for binding in where.scope.bindings.get(sub.value, ()):
                    if binding.order >= where.order or id(binding) in seen:
                        continue
                    if binding.branches and (exclusive(binding.branches, where.branches)
                                             or self.never_runs(binding.branches, binding.location())):
                        # the other arm of an ``if`` the use is in, or an arm no run takes:
                        # ``if isinstance(opt, <a class never built>): loss = opt.get_scaled_loss(loss)``
                        continue
                    seen.add(id(binding))
                    entered = next((f for f in reversed(frames) if f.scope is where.scope), None)
                    bound = _bound_argument(binding, entered) if entered is not None else None
                    if bound is not None and entered is not None:
                        # the helper's return followed from one call of it (``grads =
                        # self.postprocess_gradients(grads)``): its parameter is that call's argument
                        work.append((bound, entered.site, entered.crossed, entered.frames))
                        continue
                    if binding.kind == "param":
                        # a helper's parameter (``def apply(opt, grads, variables)``): what
                        # every call of the helper in this file passes for it
                        work.extend((arg, site, True, ()) for _, arg, site in self.passed(binding))
                        continue
                    source = binding_source(binding)
                    if source is not None:
                        work.append((source, Location(where.scope, binding.order, binding.branches), crossed, frames))
                    if binding.kind == "augassign":
                        out.append(binding.node)  # `loss *= scale`
        return out

    def passed(self, binding: Binding) -> List[Tuple[cst.Call, cst.BaseExpression, Location]]:
        """The arguments every call of a plain function of this file passes for its
        parameter ``binding``; none unless the function is only ever called by name here
        (not handed to ``strategy.run``, a decorator or another module's code). A method
        counts where the class only ever calls it on ``self`` (``self._apply(grads)``)
        and its name is private (``_apply``: no other module calls it)."""
        scope = binding.scope
        function = scope.node if scope is not None else None
        if not isinstance(function, cst.FunctionDef) or not isinstance(binding.node, cst.Param) \
                or scope is None or scope.parent is None or function.decorators:
            return []
        name = function.name.value
        if scope.parent.kind == "class":
            return self._passed_to_method(binding, function)
        sites = self._calls_by_name.get(name, [])
        if not sites or self._name_uses.get(name, 0) != len(sites):
            return []
        out: List[Tuple[cst.Call, cst.BaseExpression, Location]] = []
        for call, where in sites:
            arg = argument_for(function, binding.node, call)
            if not _defines(where.lookup(name), function) or not isinstance(arg, cst.BaseExpression):
                return []  # another function of that name, or the argument left to its default
            out.append((call, arg, where))
        return out

    def _passed_to_method(self, binding: Binding, method: cst.FunctionDef
                          ) -> List[Tuple[cst.Call, cst.BaseExpression, Location]]:
        """What every ``self.<method>(...)`` call of the file passes for a parameter of
        a private method (``self`` already bound); none where ``self.<method>`` is read
        other than to call it (handed on as a callback) or a call runs another
        definition of that name (an override)."""
        name = method.name.value
        definer = binding.scope.parent if binding.scope is not None else None
        if definer is None or not name.startswith("_") or name.startswith("__") or binding.node is _first_param(method):
            return []

        def related(where: Location) -> bool:  # code whose ``self`` may be an instance of the class
            cls = where.scope.enclosing_class()
            return cls is None or any(c is definer for c in class_chain(cls)) \
                or any(c is cls for c in class_chain(definer))

        sites = [(call, where) for call, where in self._self_calls.get(name, []) if related(where)]
        reads = [where for where in self._self_reads.get(name, []) if related(where)]
        if not sites or len(reads) != len(sites):
            return []
        out: List[Tuple[cst.Call, cst.BaseExpression, Location]] = []
        for call, where in sites:
            runs = local_function(call, where)
            arg = argument_for(method, binding.node, call, 1) if isinstance(binding.node, cst.Param) else None
            if runs is None or runs.node is not method or not isinstance(arg, cst.BaseExpression):
                return []
            out.append((call, arg, where))
        return out


def _truth(values: Optional[Iterable[object]]) -> Optional[bool]:
    """The one truth every value has; None when unknown, none, or both."""
    truths = {bool(v) for v in values} if values is not None else set()
    return truths.pop() if len(truths) == 1 else None


def _attribute_needs(arms: Branches) -> Tuple[Tuple[str, bool], ...]:
    """The ``self.<attr>`` tests of ``if`` arms (``if self.clip:``, ``if not self.clip:``),
    each with the truth its arm needs."""
    out: List[Tuple[str, bool]] = []
    for _, arm, test in arms:
        wanted = arm == "body"
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, wanted = test.expression, not wanted
        if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and test.value.value == "self":
            out.append((test.attr.value, wanted))
    return tuple(out)


@dataclass(frozen=True, eq=False)
class _Frame:
    """A helper :meth:`TrainingLoops.flow` entered through one call of it, to follow its
    return: the helper's scope, the call, where the call is read, and the trail there."""

    scope: Scope
    call: cst.Call
    site: Location
    crossed: bool
    frames: Tuple["_Frame", ...]


_Frames = Tuple[_Frame, ...]


def _bound_argument(binding: Binding, frame: _Frame) -> Optional[cst.BaseExpression]:
    """What the call of ``frame`` passes for the parameter ``binding`` (``self`` bound by
    ``self.method(...)``); None when it is no parameter, or the call's argument is not read."""
    function = frame.scope.node
    if binding.kind != "param" or not isinstance(binding.node, cst.Param) or not isinstance(function, cst.FunctionDef):
        return None
    func = frame.call.func
    method = frame.scope.parent is not None and frame.scope.parent.kind == "class" and isinstance(func, cst.Attribute)
    if method and not function.decorators and binding.node is _first_param(function):
        return None  # ``self``: the instance, no argument
    arg = argument_for(function, binding.node, frame.call, 1 if method and not function.decorators else 0)
    return arg if isinstance(arg, cst.BaseExpression) else None


def _reaching(loc: Location, name: str) -> List[Binding]:
    """The bindings whose value ``name`` may have at ``loc``; a name of an enclosing
    scope (a global read in a function) may have any value that reaches the end of
    that scope's code (``opt = Adam()`` and ``if amp: opt = LossScaleOptimizer(opt)``
    at the top level, read in ``step()`` that runs after them)."""
    found = loc.reaching(name)
    if len(found) != 1 or found[0].scope is None or found[0].scope is loc.scope:
        return found
    outer = found[0].scope
    return outer.reaching(name, found[0].order + 1) or found


def _first_param(function: cst.FunctionDef) -> Optional[cst.Param]:
    """A method's ``self``."""
    params = [*function.params.posonly_params, *function.params.params]
    return params[0] if params else None


def _kind_only(origin: OptimizerOrigin) -> OptimizerOrigin:
    """An origin of another module as this file knows it: its kind, and what it wraps."""
    return OptimizerOrigin(origin.kind, inner=tuple(map(_kind_only, origin.inner)), returned=origin.returned)


def _known(origins: Iterator[OptimizerOrigin]) -> Iterator[OptimizerOrigin]:
    """The origins a rule judges: ``None`` outside ``opt or default`` is not followed."""
    for origin in origins:
        yield OptimizerOrigin(UNKNOWN_OPTIMIZER) if origin.kind == NO_OPTIMIZER else origin


def _comprehension_source(expr: cst.BaseExpression, call: cst.Call,
                          flow: List[cst.CSTNode]) -> cst.BaseExpression:
    """``g`` in ``[clip(g) for g in grads]`` stands for ``grads``: what it iterates over."""
    if not isinstance(expr, cst.Name):
        return expr
    for node in flow:
        if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp)) and contains(node.elt, call):
            comp: Optional[cst.CompFor] = node.for_in
            while comp is not None:
                if any(isinstance(n, cst.Name) and n.value == expr.value for n in _expression_nodes(comp.target)):
                    return comp.iter
                comp = comp.inner_for_in
    return expr


def _exits(body: cst.BaseSuite) -> bool:
    """An ``if`` arm whose last statement returns or raises: what follows it runs only
    when the test failed."""
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    last = statements[-1] if statements else None
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(small, (cst.Return, cst.Raise)) for small in last.body)
    return isinstance(last, cst.SimpleStatementSuite) and any(
        isinstance(small, (cst.Return, cst.Raise)) for small in last.body)


def _defines(binding: Optional[Binding], function: cst.FunctionDef) -> bool:
    return binding is not None and binding.kind == "def" and binding.node is function


def _helper_returns(call: cst.Call, where: Location) -> List[Tuple[cst.BaseExpression, Location, Branches]]:
    """The values a helper function or method of this file returns (``compute_loss(x)``,
    ``self._loss(x)``), each where its function's names are read (after its body ran),
    with the ``if`` arms its ``return`` is in."""
    binding = local_function(call, where)
    if binding is None or binding.scope is None or not isinstance(binding.node, cst.FunctionDef):
        return []
    inner = next((child for child in binding.scope.children if child.node is binding.node), None)
    if inner is None:
        return []
    end = Location(inner, _END, ())
    return [(value, end, arms) for value, arms in _returned(binding.node.body)]


#: an order after every statement of a function: its names as the body leaves them
_END = 1 << 30


def _reached_parameter(reached: Set[str], params: List[str], inner: Scope) -> Optional[Tuple[int, str]]:
    """(index, name) of the first of ``params`` among the names a value was computed from,
    where it is still the parameter (not rebound)."""
    for index, param in enumerate(params):
        if param in reached and any(b.kind == "param" for b in inner.bindings.get(param, ())):
            return index, param
    return None


def _returned(body: cst.BaseSuite) -> Iterator[Tuple[cst.BaseExpression, Branches]]:
    """The values of the function's own ``return`` statements (not nested functions'),
    each with the ``if`` arms around it (as ``Binding.branches`` writes them)."""
    stack: List[Tuple[cst.CSTNode, Branches]] = [(body, ())]
    while stack:
        node, arms = stack.pop()
        if isinstance(node, cst.Return):
            if node.value is not None:
                yield node.value, arms
            continue
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.BaseExpression)):
            continue
        if isinstance(node, cst.If):
            stack.append((node.body, (*arms, (id(node), "body", node.test))))
            if node.orelse is not None:
                stack.append((node.orelse, (*arms, (id(node), "else", node.test))))
            continue
        stack.extend((child, arms) for child in child_nodes(node))


def binding_source(binding: Binding) -> Optional[cst.CSTNode]:
    """The expression a binding's value is computed from (the whole right-hand side)."""
    node = binding.node
    if binding.value is not None:
        return binding.value
    if isinstance(node, (cst.Assign, cst.AugAssign)):
        return node.value
    if isinstance(node, cst.For):
        return node.iter
    if isinstance(node, cst.WithItem):
        return node.item
    return None


def _expression_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes of an expression, skipping attribute and keyword names."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, cst.Attribute):
            stack.append(current.value)
        elif isinstance(current, cst.Arg):
            stack.append(current.value)
        elif isinstance(current, (cst.Name, cst.BaseString, cst.Integer, cst.Float, cst.Imaginary)):
            continue
        else:
            stack.extend(c for c in child_nodes(current)
                         if isinstance(c, (cst.BaseExpression, cst.Arg, cst.BaseElement, cst.BaseDictElement,
                                           cst.CompFor, cst.CompIf, cst.BaseSlice, cst.SubscriptElement,
                                           cst.AugAssign)))


def _manual_scaling(node: cst.CSTNode) -> bool:
    """``loss * loss_scale``, ``loss *= scale`` or ``scale_fn(loss)``: the loop scales its own way
    (a helper function named like the optimizer methods, ``scale_loss(opt, loss)``, too)."""
    if isinstance(node, cst.Call):
        name = dotted_name(node.func)
        last = name.rsplit(".", 1)[-1] if name else ""
        method = isinstance(node.func, cst.Attribute) and last in SCALE_METHODS
        return last[:1].islower() and "scale" in last.lower() and not method
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
        return _mentions_scale(node.left) or _mentions_scale(node.right)
    if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.MultiplyAssign):
        return _mentions_scale(node.value)
    return False


def _mentions_scale(expr: cst.BaseExpression) -> bool:
    """Whether a name or attribute inside ``expr`` says "scale" (``loss_scale``, ``self.scale``)."""
    for node in _expression_nodes(expr):
        if isinstance(node, cst.Name) and "scale" in node.value.lower():
            return True
        if isinstance(node, cst.Attribute) and "scale" in node.attr.value.lower():
            return True
    return False


def lso_argument(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The optimizer a LossScaleOptimizer(...) call wraps."""
    return positional_or_keyword(call, 0, "inner_optimizer") or keyword_only(call, "optimizer")


def contains(root: cst.CSTNode, target: cst.CSTNode) -> bool:
    """Whether ``target`` (by identity) is ``root`` or inside it."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node is target:
            return True
        stack.extend(child_nodes(node))
    return False


def float16_source(ctx: Context, loops: TrainingLoops, at: Optional[Scope] = None,
                   where: Optional[Location] = None) -> Optional[str]:
    """Why float16 compute may be on for code in scope ``at`` (at ``where``, when the
    rule knows the place): a policy note, or None."""
    if where is not None and ctx.facts.runs_before_policies(where):
        return None  # a float32 baseline trained before the script sets the policy
    policy = ctx.facts.mixed_policy(at)
    if policy is not None and policy.float16:
        return "mixed_float16" + policy.note
    sites = ctx.facts.rewrite_sites_of(REWRITE_GRAPPLER)
    if sites:
        return "the grappler auto_mixed_precision option" + ("" if any(s.certain for s in sites)
                                                              else " (chosen at run time)")
    return None


def compiled_is_wrapped(ctx: Context, loops: TrainingLoops, at: Optional[Scope] = None,
                        chosen: bool = False) -> bool:
    """compile() wraps ``self.optimizer`` for certain only under a certain mixed_float16
    policy (for code in scope ``at``), or where the program picks it over mixed_bfloat16
    (``"mixed_bfloat16" if tpu else "mixed_float16"``: wrapped on GPUs). ``chosen``: a
    policy chosen at run time (a ``--precision_policy`` flag) counts too, for a rule
    that says so in its message; float32 set by this file's own literal calls (a test
    that resets it) does not."""
    policy = ctx.facts.mixed_policy(at)
    if policy is None or "mixed_float16" not in policy.names or loops.auto_scale_off \
            or not (policy.certain or (chosen and policy.chosen)):
        return False
    # A mode switch ("strict": the policy, "auto": the graph rewrite) judged per
    # branch: on the rewrite's branch no policy is set, so compile() wraps nothing.
    mixed = [c for c in ctx.facts.policy_calls if c.values and c.values & MIXED_POLICIES]
    return not any(mixed and all(exclusive(c.branches, site.branches) for c in mixed)
                   for site in ctx.facts.rewrite_sites)
