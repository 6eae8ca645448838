"""Which code runs in the 16-bit compute dtype under a mixed policy, and which feeds it.

Numeric rules (MP501-MP505) only make sense where tensors really are float16 or
bfloat16. Under a mixed policy that is:

- ``call`` (and private ``_helper`` methods) of a class whose bases resolve to a
  Keras layer or model (``keras.layers.Layer``, ``keras.Model``, a built-in layer,
  or another such class in the same file); its first argument is autocast to the
  compute dtype, and weights made by ``add_weight`` read as 16-bit inside it;
- functions (``def`` or ``lambda``) wrapped in ``keras.layers.Lambda``;
- the statements between ``keras.Input(...)`` and ``keras.Model(...)`` in one scope
  (functional model building), where layer outputs are 16-bit.

Excluded on purpose, because the code does not run in 16-bit: layers that pass
``dtype='float32'`` (or any non-16-bit dtype) to their own constructor or turn
``autocast`` off, ``__init__``/``build``/``get_config``, ``train_step`` and the
other trainer hooks, metrics and losses (Keras keeps their state and, in Keras 3,
their inputs in float32).

MP503 also needs the *input pipeline*: functions mapped over a ``tf.data`` dataset
(``ds.map(fn)``) and functions named like preprocessing (``preprocess``, ``augment``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.imported_layers import imported_layer_sixteen_bit
from mplint.analysis.tensor_syntax import is_none
from mplint.rule.check import Analysis, Context
from mplint.semantic.call_args import keyword_only, positional_or_keyword
from mplint.semantic.names import dotted_name
from mplint.semantic.visibility import is_private_name
from mplint.semantic.elsewhere_marks import ELSEWHERE_UNKNOWN
from mplint.semantic.scopes import Binding, Location, Scope, function_key
from mplint.semantic.vocabulary import (
    DATASET_METHODS, FLOAT32_NAMES, INPUT_FUNCTIONS, LAMBDA_LAYERS, LAYER_BASES, MODEL_CLASSES, makes_dataset,
    is_classifier_application, names_tensorflow,
)


#: methods of a layer class that do not run under autocast in the compute dtype
_NOT_COMPUTE = frozenset({
    "__init__", "build", "get_config", "from_config", "compute_output_shape",
    "compute_output_signature", "compute_output_spec", "train_step", "test_step",
    "predict_step", "compute_loss", "compute_metrics", "fit", "evaluate", "predict",
    "compile", "get_build_config", "build_from_config", "save_own_variables",
    "load_own_variables",
})

#: built-in layers whose outputs are integers or strings, never the compute dtype
_NON_FLOAT_LAYERS = ("Lookup", "Hashing", "TextVectorization", "Discretization")

#: Dataset methods that call a function on each element
_MAP_METHODS = frozenset({"map", "flat_map", "interleave"})
_PREPROCESS_WORDS = ("preprocess", "augment")


@dataclass
class LayerClass:
    """A class whose instances are Keras layers or models."""

    node: cst.ClassDef
    scope: Scope
    bases: List[Tuple[cst.BaseExpression, FrozenSet[str]]]
    #: False when the class pins its own dtype to a non-16-bit one or turns autocast off
    sixteen_bit: bool = True


@dataclass
class Region:
    """Where a location runs: kind is ``layer``, ``lambda``, ``functional`` or ``helper``
    (a function 16-bit code of the file calls: ``TensorKinds`` finds those)."""

    kind: str
    #: the function scope of the region (None for functional code)
    function: Optional[Scope]
    #: the layer class whose method this is (``layer`` regions only)
    layer_class: Optional[LayerClass] = None


@dataclass
class _Pending:
    expr: cst.BaseExpression
    loc: Location


@dataclass
class _Functional:
    scope: Scope
    inputs: List[int] = field(default_factory=list)
    models: List[int] = field(default_factory=list)


class ComputeRegions(Analysis):
    """Collects layer classes, Lambda functions, functional spans and pipelines."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._classes: Dict[cst.ClassDef, LayerClass] = {}
        self._all_classes: Dict[cst.ClassDef, Tuple[Scope, List[Tuple[cst.BaseExpression, FrozenSet[str]]]]] = {}
        self._lambda_args: List[_Pending] = []
        #: ``<receiver>.map(fn)`` calls: the receiver and the mapped function
        self._map_args: List[Tuple[cst.BaseExpression, _Pending]] = []
        self._functional: Dict[int, _Functional] = {}
        #: ``super().__init__(...)`` calls by the class they appear in
        self._super_inits: List[Tuple[cst.Call, Scope]] = []
        self._autocast_off: Set[cst.ClassDef] = set()
        #: calls of a plain name (``ArcMarginProduct(n, dtype="float32")``): the file's
        #: constructions of its own classes
        self._constructions: List[Tuple[cst.Call, Location]] = []
        #: calls of ``name.attr(...)``: a function of an imported module among them
        self._module_calls: List[Tuple[cst.Call, Location]] = []
        self._resolved = False
        self._lambda_functions: Set[cst.CSTNode] = set()
        self._pipeline_functions: Set[cst.CSTNode] = set()
        #: ``return`` values by the ``def`` they return from (``load()`` returns a dataset)
        self._returns: Dict[cst.CSTNode, List[Tuple[cst.BaseExpression, Location]]] = {}
        #: classes whose methods make Keras weights or layers (``self.add_weight``,
        #: ``keras.layers.Dense(...)``): a sign that an unknown base is a Keras layer
        self._keras_evidence: Set[cst.CSTNode] = set()

    # -- collection ---------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = [(arg.value, self.ctx.names.resolve(arg.value)) for arg in node.bases if arg.keyword is None]
        self._all_classes[node] = (self.ctx.scopes.current, bases)

    def visit_Return(self, node: cst.Return) -> None:
        scope = self.ctx.scopes.current
        if node.value is not None and scope.kind == "function":
            self._returns.setdefault(scope.node, []).append((node.value, self.ctx.scopes.location()))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute):
            attr = func.attr.value
            if attr in _MAP_METHODS and node.args:
                fn = positional_or_keyword(node, 0, "map_func")
                if fn is not None:
                    self._map_args.append((func.value, _Pending(fn, self.ctx.scopes.location())))
                return
            if attr == "__init__" and _is_super_call(func.value):
                self._super_inits.append((node, self.ctx.scopes.current))
                return
        if isinstance(func, cst.Name):
            self._constructions.append((node, self.ctx.scopes.location()))
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            self._module_calls.append((node, self.ctx.scopes.location()))
        resolved = self.ctx.names.resolve(func)
        if (isinstance(func, cst.Attribute) and func.attr.value == "add_weight" and isinstance(func.value, cst.Name)
                and func.value.value == "self") or _is_layer_base(resolved):
            cls = self.ctx.scopes.current.enclosing_class()
            if cls is not None:
                self._keras_evidence.add(cls.node)
        if not resolved:
            return
        loc = self.ctx.scopes.location()
        if resolved & LAMBDA_LAYERS:
            fn = positional_or_keyword(node, 0, "function")
            dtype = keyword_only(node, "dtype")
            if fn is not None and (dtype is None or not self._not_sixteen_bit(dtype, loc)):
                self._lambda_args.append(_Pending(fn, loc))
        elif resolved & INPUT_FUNCTIONS:
            self._functional_for(loc.scope).inputs.append(loc.order)
        elif resolved & MODEL_CLASSES and node.args:
            self._functional_for(loc.scope).models.append(loc.order)

    def visit_Assign(self, node: cst.Assign) -> None:
        # ``self.autocast = False`` in a layer: inputs keep whatever dtype they had
        for target in node.targets:
            t = target.target
            if (
                isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name)
                and t.value.value == "self" and t.attr.value in ("autocast", "_autocast")
                and isinstance(node.value, cst.Name) and node.value.value == "False"
            ):
                cls = self.ctx.scopes.current.enclosing_class()
                if cls is not None and isinstance(cls.node, cst.ClassDef):
                    self._autocast_off.add(cls.node)

    def _functional_for(self, scope: Scope) -> _Functional:
        found = self._functional.get(id(scope))
        if found is None:
            found = self._functional[id(scope)] = _Functional(scope)
        return found

    def _not_sixteen_bit(self, expr: cst.BaseExpression, loc: Location) -> bool:
        """True unless a dtype argument is certainly a 16-bit or mixed policy name."""
        found = self.ctx.values.values(expr, loc)
        if found is None:
            return True  # unknown dtype: not ours to judge
        return not all(isinstance(v, str) and ("16" in v) for v in found)

    # -- resolution (after the walk) ----------------------------------------------------
    def _resolve(self) -> None:
        if self._resolved:
            return
        self._resolved = True
        # layer classes: bases that are Keras layers/models, or local layer classes
        by_name: Dict[str, cst.ClassDef] = {c.name.value: c for c in self._all_classes}
        changed = True
        while changed:
            changed = False
            for node, (scope, bases) in self._all_classes.items():
                if node in self._classes:
                    continue
                if any(_is_layer_base(names) for _, names in bases) or any(
                    isinstance(expr, cst.Name) and expr.value in by_name
                    and by_name[expr.value] in self._classes
                    for expr, _ in bases
                ) or self._third_party_layer(node, bases, by_name):
                    self._classes[node] = LayerClass(node, scope, bases)
                    changed = True
                    continue
                imported = self._imported_layer_base(bases, by_name)
                if imported is not None:  # a layer class of another module of the project
                    self._classes[node] = LayerClass(node, scope, bases, sixteen_bit=imported)
                    changed = True
        for call, scope in self._super_inits:
            cls_scope = scope.enclosing_class()
            cls_node = cls_scope.node if cls_scope is not None else None
            if not isinstance(cls_node, cst.ClassDef) or cls_node not in self._classes:
                continue
            dtype = keyword_only(call, "dtype")
            autocast = keyword_only(call, "autocast")
            loc = Location(scope, 10**9)
            if dtype is not None and self._not_sixteen_bit(dtype, loc):
                self._classes[cls_node].sixteen_bit = False
            if isinstance(autocast, cst.Name) and autocast.value == "False":
                self._classes[cls_node].sixteen_bit = False
        for node in self._autocast_off:
            if node in self._classes:
                self._classes[node].sixteen_bit = False
        # subclasses of a float32 (or non-autocast) layer class inherit that
        changed = True
        while changed:
            changed = False
            for cls in self._classes.values():
                if not cls.sixteen_bit:
                    continue
                for expr, _ in cls.bases:
                    parent = self._classes.get(by_name[expr.value]) if (
                        isinstance(expr, cst.Name) and expr.value in by_name) else None
                    if parent is not None and not parent.sixteen_bit:
                        cls.sixteen_bit = False
                        changed = True
        self._pinned_by_constructions()
        for pending in self._lambda_args:
            fn = self._function_node(pending.expr, pending.loc)
            if fn is not None:
                self._lambda_functions.add(fn)
        for receiver, pending in self._map_args:
            if not self._is_dataset(receiver, pending.loc, 0):
                continue
            fn = self._function_node(pending.expr, pending.loc)
            if fn is not None:
                self._pipeline_functions.add(fn)
        self._pipeline_helpers()

    def _pipeline_helpers(self) -> None:
        """The functions of the file that a mapped function calls run in the pipeline
        too (``ds.map(lambda x, y: (normalize(x), y))``), and what they call in turn."""
        pending = [(call, loc) for call, loc in self._constructions]
        changed = bool(self._pipeline_functions)
        while changed:
            changed = False
            for call, loc in pending:
                if not self._in_pipeline_function(loc.scope):
                    continue
                assert isinstance(call.func, cst.Name)
                fn = self._function_node(call.func, loc)
                if fn is not None and fn not in self._pipeline_functions:
                    self._pipeline_functions.add(fn)
                    changed = True

    def pipeline_calls(self) -> List[Tuple[cst.Call, Location]]:
        """Calls of a name or ``module.name`` made inside a function mapped over a dataset
        (or one it calls): where a helper of another module runs in the input pipeline."""
        self._resolve()
        if not self._pipeline_functions:
            return []
        return [(call, loc) for call, loc in [*self._constructions, *self._module_calls]
                if self._in_pipeline_function(loc.scope)]

    def _in_pipeline_function(self, scope: Optional[Scope]) -> bool:
        while scope is not None:
            if scope.node in self._pipeline_functions:
                return True
            scope = scope.parent
        return False

    def _pinned_by_constructions(self) -> None:
        """A layer class that every construction in the file builds with a float32 (or
        other non-16-bit) ``dtype`` computes in it: Keras casts its inputs to that dtype,
        so nothing inside it is 16-bit. Judged per construction: one that leaves the dtype
        out or passes one that cannot be followed keeps the class 16-bit. A subclass is
        not pinned by its base's constructions (it has its own)."""
        built: Dict[cst.ClassDef, List[Tuple[cst.Call, Location]]] = {}
        for call, loc in self._constructions:
            assert isinstance(call.func, cst.Name)
            binding = loc.lookup(call.func.value)
            if binding is not None and binding.kind == "class" and isinstance(binding.node, cst.ClassDef) \
                    and binding.node in self._classes:
                built.setdefault(binding.node, []).append((call, loc))
        for node, cls in self._classes.items():
            calls = built.get(node, [])
            elsewhere = self._dtypes_elsewhere(cls)
            if (calls or elsewhere) and elsewhere is not False and all(
                    self._certainly_not_sixteen_bit(keyword_only(call, "dtype"), loc) for call, loc in calls):
                cls.sixteen_bit = False

    def _dtypes_elsewhere(self, cls: LayerClass) -> Optional[bool]:
        """Whether every construction of the class in other modules of the project (the
        program model's summaries) passes a non-16-bit ``dtype`` (``Codebook(n,
        dtype='float32')`` in encoder.py): None when no such construction is known,
        False when one leaves it out or passes one that cannot be read."""
        init = next((c for c in cls.scope.children if isinstance(c.node, cst.FunctionDef)
                     and c.node.name.value == "__init__"), None)
        sites = self.ctx.values.elsewhere.get(function_key(init)) if init is not None else None
        if not sites:
            return None
        for site in sites:
            written = site.get("dtype")
            if written is None or written == ELSEWHERE_UNKNOWN:
                return False
            value = json.loads(written)
            if not (isinstance(value, str) and value in FLOAT32_NAMES):
                return False
        return True

    def _certainly_not_sixteen_bit(self, expr: Optional[cst.BaseExpression], loc: Location) -> bool:
        """A dtype argument whose every value is a known non-16-bit dtype name."""
        found = self.ctx.values.values(expr, loc) if expr is not None else None
        return bool(found) and all(isinstance(v, str) and v in FLOAT32_NAMES for v in found or ())

    def _imported_layer_base(self, bases: List[Tuple[cst.BaseExpression, FrozenSet[str]]],
                             by_name: Dict[str, cst.ClassDef]) -> Optional[bool]:
        """For a class deriving from a Keras layer class of another project module: whether
        that base computes in 16 bits (its subclass does too, unless it pins a dtype
        itself). None when no base is such a class."""
        if not self.ctx.facts.project_root:
            return None
        for expr, names in bases:
            if names_tensorflow(names) or (isinstance(expr, cst.Name) and expr.value in by_name):
                continue
            found = imported_layer_sixteen_bit(self.ctx, expr, type(self))
            if found is not None:
                return found
        return None

    def layer_class_named(self, name: str) -> Optional[LayerClass]:
        """The layer class a top-level class of this module named ``name`` is, if any."""
        binding = self.ctx.scopes.module_scope.lookup(name)
        return self.layer_class(binding.node) if binding is not None and binding.kind == "class" else None

    def _third_party_layer(self, node: cst.ClassDef, bases: List[Tuple[cst.BaseExpression, FrozenSet[str]]],
                           by_name: Dict[str, cst.ClassDef]) -> bool:
        """A class built on a ``Layer`` from a package or module mplint cannot read
        (``params_flow.Layer``, a project's own ``Layer`` base in another module) that
        is written as a Keras layer: it defines ``call`` and its methods make Keras
        weights or layers. Anything less (a ``forward``, no Keras in its methods) is
        another framework's layer, and stays unknown."""
        if node not in self._keras_evidence:
            return False
        if not any(isinstance(s, cst.FunctionDef) and s.name.value == "call" for s in _body(node)):
            return False
        for expr, names in bases:
            last = dotted_name(expr)
            if last is None or (isinstance(expr, cst.Name) and expr.value in by_name):
                continue
            if last.rsplit(".", 1)[-1].endswith("Layer") and not any(
                    n.startswith(("keras.", "tensorflow.", "tf_keras.")) for n in names):
                return True
        return False

    def _function_node(self, expr: cst.BaseExpression, loc: Location) -> Optional[cst.CSTNode]:
        """The ``def`` or ``lambda`` an argument denotes, when it is in this file."""
        if isinstance(expr, cst.Lambda):
            return expr
        if isinstance(expr, cst.Name):
            binding = loc.lookup(expr.value)
            if binding is not None and binding.kind == "def":
                return binding.node
        return None

    def _is_dataset(self, expr: cst.BaseExpression, loc: Location, depth: int) -> bool:
        """Whether ``expr`` certainly evaluates to a tf.data dataset."""
        if depth > 12:
            return False
        if isinstance(expr, cst.Call):
            func = expr.func
            resolved = self.ctx.names.resolve(func)
            if any(makes_dataset(n) for n in resolved):
                return True
            if isinstance(func, cst.Attribute) and func.attr.value in DATASET_METHODS:
                return self._is_dataset(func.value, loc, depth + 1)
            if isinstance(func, cst.Name):  # ``load(n).map(...)``: a function of the file
                binding = loc.lookup(func.value)
                returns = self._returns.get(binding.node, []) if binding is not None and binding.kind == "def" else []
                return bool(returns) and all(self._is_dataset(value, at, depth + 1) for value, at in returns)
            return False
        if isinstance(expr, cst.Name):
            binding = loc.lookup(expr.value)
            if binding is None or binding.scope is None or binding.value is None:
                return False
            if binding.kind not in ("assign", "annassign"):
                return False
            return self._is_dataset(binding.value, binding.location(), depth + 1)
        return False

    # -- queries -------------------------------------------------------------------------
    def layer_classes(self) -> List[LayerClass]:
        self._resolve()
        return list(self._classes.values())

    def layer_class(self, node: cst.CSTNode) -> Optional[LayerClass]:
        self._resolve()
        return self._classes.get(node) if isinstance(node, cst.ClassDef) else None

    def region(self, loc: Location) -> Optional[Region]:
        """The 16-bit region the location runs in, or None."""
        found = self.function_region(loc.scope)
        if found is not None:
            return found
        return Region("functional", None) if self.in_functional(loc) else None

    def mark_lambda_function(self, node: cst.FunctionDef) -> None:
        """``node`` is wrapped in a ``Lambda`` by another module (its first argument is
        autocast there): judge it as this file's own Lambda functions are."""
        self._resolve()
        self._lambda_functions.add(node)

    def function_region(self, scope: Optional[Scope]) -> Optional[Region]:
        """The innermost enclosing function that runs in 16-bit, if any."""
        self._resolve()
        while scope is not None:
            if scope.kind in ("function", "lambda"):
                found = self._function_region(scope)
                if found is not None:
                    return found
            scope = scope.parent
        return None

    def _function_region(self, scope: Scope) -> Optional[Region]:
        node = scope.node
        if node in self._lambda_functions:
            return Region("lambda", scope)
        if isinstance(node, cst.FunctionDef) and scope.parent is not None and scope.parent.kind == "class":
            cls = self._classes.get(scope.parent.node)  # type: ignore[arg-type]
            if cls is None or not cls.sixteen_bit:
                return None
            name = node.name.value
            if name == "call" or (is_private_name(name) and name not in _NOT_COMPUTE) \
                    or (name == "__call__" and overrides_call(cls.node)):
                return Region("layer", scope, cls)
        return None

    def in_functional(self, loc: Location) -> bool:
        """Between ``keras.Input(...)`` and ``keras.Model(...)`` in the same scope."""
        spans = self._functional.get(id(loc.scope))
        if spans is None or not spans.inputs or not spans.models:
            return False
        for model in spans.models:
            inputs = [i for i in spans.inputs if i <= model]
            if inputs and min(inputs) <= loc.order <= model:
                return True
        return False

    def is_low_param(self, binding: Binding) -> bool:
        """A parameter that Keras autocasts to the compute dtype on entry."""
        self._resolve()
        if binding.kind != "param" or binding.scope is None:
            return False
        scope = binding.scope
        node = scope.node
        params = _positional(node)
        region = self._function_region(scope) if scope.kind in ("function", "lambda") else None
        if region is None:
            return False
        if region.kind == "lambda":
            return bool(params) and params[0] is binding.node
        if region.kind == "layer" and isinstance(node, cst.FunctionDef) and node.name.value == "call":
            return len(params) >= 2 and params[1] is binding.node
        return False

    def is_pipeline(self, loc: Location) -> bool:
        """Inside a function mapped over a tf.data dataset or a preprocessing function."""
        self._resolve()
        scope: Optional[Scope] = loc.scope
        while scope is not None:
            node = scope.node
            if node in self._pipeline_functions:
                return True
            if isinstance(node, cst.FunctionDef) and not self._is_layer_method(scope):
                name = node.name.value.lower()
                if any(word in name for word in _PREPROCESS_WORDS):
                    return True
            scope = scope.parent
        return False

    def _is_layer_method(self, scope: Scope) -> bool:
        """A method of a Keras layer class: model code, whatever its name says."""
        parent = scope.parent
        return parent is not None and parent.kind == "class" and parent.node in self._classes

    def constructed_classes(self, func: cst.BaseExpression, loc: Location
                            ) -> Optional[List[Tuple[cst.BaseExpression, Location]]]:
        """The class expressions a constructor call's callee may denote: the callee
        itself, or for a parameter (``norm_layer(epsilon=1e-6)`` with
        ``norm_layer=LayerNormalization``) its default and every argument the calls
        mplint sees pass it (callers mplint cannot see, a library's users, build the
        default when they leave it out). None when a caller passes something unreadable,
        when callers mplint cannot see fill a parameter with no default, or when the
        parameter is rebound in its function: the class is then chosen at run time."""
        if not isinstance(func, cst.Name):
            return [(func, loc)]
        binding = loc.lookup(func.value)
        if binding is None or binding.kind != "param":
            return [(func, loc)]
        scope = binding.scope
        if scope is None or len(scope.bindings.get(func.value, [])) != 1:
            return None
        values = self.ctx.values
        param = binding.node
        if values.callers_unread(binding) and not (isinstance(param, cst.Param) and param.default is not None):
            return None  # no default: what the unseen callers pass is all it holds
        # with a default, a caller mplint does not see (a library's user) who leaves it
        # out builds the default class: judged with the classes the seen calls pass
        sources = values.param_sources(binding)
        if not sources or not all(isinstance(expr, (cst.Name, cst.Attribute)) for expr, _, _ in sources):
            return None
        # ``norm_layer=None``: a call of None raises, so a constructor call that returns
        # was given one of the other sources
        found = [(expr, where) for expr, where, _ in sources if not is_none(expr)]
        return found or None

    def is_sixteen_bit_layer(self, expr: cst.BaseExpression, loc: Location) -> bool:
        """A layer constructor call whose instances compute in the 16-bit dtype (every
        class its callee may denote: :meth:`constructed_classes`)."""
        if not isinstance(expr, cst.Call):
            return False
        classes = self.constructed_classes(expr.func, loc)
        if not classes or not all(self._sixteen_bit_class(func, at) for func, at in classes):
            return False
        dtype = keyword_only(expr, "dtype")
        if dtype is None:
            return True
        found = self.ctx.values.values(dtype, loc)
        return found is not None and all(isinstance(v, str) and "16" in v for v in found)

    def _sixteen_bit_class(self, func: cst.BaseExpression, loc: Location) -> bool:
        """A Keras float layer class, or a layer class of this file that computes in
        16 bits."""
        names = self.ctx.names.resolve(func)
        if names:
            # a ``keras.applications`` model: every layer, its head too, is built under the
            # policy in effect (no dtype of its own), so its outputs are the compute dtype
            return (any(n.startswith("keras.layers.") for n in names)
                    and not any(part in n for n in names for part in _NON_FLOAT_LAYERS)) \
                or is_classifier_application(names)
        if isinstance(func, cst.Name):
            binding = loc.lookup(func.value)
            if binding is None or binding.kind != "class":
                return False
            cls = self.layer_class(binding.node)
            return cls is not None and cls.sixteen_bit
        return False


def _is_layer_base(names: FrozenSet[str]) -> bool:
    for name in names:
        if name in LAYER_BASES:
            return True
        if name.startswith("keras.layers.") and name.rsplit(".", 1)[-1][:1].isupper():
            return True
    return False


def overrides_call(node: cst.ClassDef) -> bool:
    """A layer class whose ``__call__`` replaces Keras's own and defines no ``call``
    (``def __call__(self, x): ...`` never handing on to ``super().__call__``): its
    sublayers and weights still compute as Keras makes them, but Keras's autocast of
    the inputs and of ``add_weight`` variables never runs in it."""
    body = _body(node)
    if any(isinstance(s, cst.FunctionDef) and s.name.value == "call" for s in body):
        return False
    method = next((s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == "__call__"), None)
    return method is not None and not _hands_on_call(method)


def _hands_on_call(method: cst.FunctionDef) -> bool:
    """The method calls ``super().__call__`` (or ``Base.__call__(self, ...)``)."""
    found = False

    class _Finder(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            nonlocal found
            if node.attr.value == "__call__":
                found = True

    method.visit(_Finder())
    return found


def is_call_override(region: Optional[Region]) -> bool:
    """A layer region that runs in an overriding ``__call__`` (see :func:`overrides_call`)."""
    function = region.function if region is not None else None
    return function is not None and isinstance(function.node, cst.FunctionDef) \
        and function.node.name.value == "__call__"


def _body(node: cst.ClassDef) -> List[cst.CSTNode]:
    body = node.body
    return list(body.body) if isinstance(body, cst.IndentedBlock) else []


def _is_super_call(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "super"


def _positional(node: cst.CSTNode) -> List[cst.Param]:
    if isinstance(node, (cst.FunctionDef, cst.Lambda)):
        return list(node.params.posonly_params) + list(node.params.params)
    return []

