"""Which tensors are 16-bit and which are float32, inside code that runs under a policy.

A small, flow-aware dtype inference over one function at a time. An expression is
``LOW`` (the 16-bit compute dtype), ``F32`` (certainly float32) or unknown (None);
rules only fire on what is known, so unknowns keep them silent.

- ``LOW``: the autocast first argument of a layer's ``call`` or of a Lambda function,
  weights from ``add_weight`` read inside ``call``, outputs of 16-bit sublayers,
  casts to ``self.compute_dtype`` / ``x.dtype`` of a 16-bit ``x`` / float16, and
  dtype-preserving TensorFlow ops of those.
- ``F32``: ``tf.cast(.., tf.float32)`` (any spelling: ``'float32'``, ``np.float32``,
  ``K.floatx()``, ``self.dtype``, which is the *variable* dtype), ``tf.constant`` of
  floats or with a float32 dtype, ``tf.ones/zeros/eye`` without a dtype, random ops
  without a dtype, ``tf.range`` of floats or with a float32 dtype, ``tf.image.resize``
  (not nearest-neighbour), TensorFlow ops of Python floats only (``tf.sqrt(2.0)``),
  and raw ``tf.Variable`` attributes made in ``build``.

Values are followed through ``self`` attributes assigned once or always alike
(``self.mask = None`` aside; items of list and dict attributes), through the returns
of the file's helpers, judged with each call's arguments bound (an ``Env``), and into a
function from its callers in the file (:meth:`TensorKinds.contexts`): a helper given a
float32 mask, a layer's ``call`` given one as a keyword. Methods that ``call`` calls run
under autocast as ``call`` does; the weights a built-in base layer makes
(``self.kernel`` of a ``Conv2D`` subclass) read as 16-bit there.

A name is followed to its binding only when that binding certainly reaches the use
(it sits in the same block or an enclosing one): after ``if ...: x = tf.cast(x,
'float32')`` the dtype of ``x`` is unknown. ``np.float32(2.0)`` scalars are not
float32 tensors: TensorFlow converts them to the other operand's dtype (checked
with TF 2.21).

The same walk records the *sites* the numeric rules inspect: every outermost
arithmetic expression and every call of an op that combines tensors.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.compute_regions import ComputeRegions, Region
from mplint.analysis.dtype_kinds import F32, LOW
from mplint.analysis.tensor_imports import returned_kinds
from mplint.rule.check import Analysis, Context
from mplint.semantic.call_args import UNREADABLE, argument_for, keyword_only, positional_or_keyword
from mplint.semantic.scopes import Binding, Location, Scope, is_public
from mplint.semantic.vocabulary import (
    CASTS, CONSTANTS, DTYPE_LIMITS, DTYPE_NAMES, DTYPE_PRESERVING_OPS, FILL_OPS, FINFO_FUNCTIONS, FLOAT32_BY_DEFAULT,
    FLOATX_FUNCTIONS, GLOBAL_POLICY_FUNCTIONS, LIMIT_ATTRIBUTES,
    IMAGE_RESIZE, KERAS_OP_NAMESPACES, LIKE_OPS, NEAREST_RESIZE_METHODS, RANGE_OPS, TF_OP_NAMESPACES, TF_VARIABLES,
    UNPACKING_OPS,
)


Path = Tuple[int, ...]
#: the kinds of a helper's parameters at one call: (id of the ``cst.Param``, kind, index
#: of the argument in ``TensorKinds._arguments``), sorted; () outside any call
Env = Tuple[Tuple[int, Optional[str], int], ...]

_MAX_DEPTH = 24

#: arithmetic operators whose operands must share a dtype in TensorFlow
ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide,
              cst.Modulo, cst.Power, cst.MatrixMultiply)

_AUG_ARITHMETIC = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign,
                   cst.MatrixMultiplyAssign, cst.PowerAssign)


#: ops whose tensor operands must share one dtype: name -> how to find them
_COMBINING = {
    "add": "args", "subtract": "args", "multiply": "args", "divide": "args",
    "truediv": "args", "maximum": "args", "minimum": "args", "pow": "args",
    "matmul": "args", "squared_difference": "args", "tensordot": "args2",
    "where": "tail", "einsum": "tail", "clip_by_value": "args3",
    "concat": "list", "stack": "list", "add_n": "list",
}
#: Keras 2 backend functions that call the TF ops above
_BACKEND_COMBINING = {
    "keras.backend.dot": "args", "keras.backend.batch_dot": "args",
    "keras.backend.maximum": "args", "keras.backend.minimum": "args",
    "keras.backend.concatenate": "list",
}
#: Keras 3 ops promote mixed dtypes instead of failing, but still convert Python
#: literals to the tensor's dtype, so they give literals a context (MP501/MP502)
_KERAS_OPS = {
    "keras.ops.add": "args", "keras.ops.subtract": "args", "keras.ops.multiply": "args",
    "keras.ops.divide": "args", "keras.ops.maximum": "args", "keras.ops.minimum": "args",
    "keras.ops.where": "tail", "keras.ops.clip": "args3",
}

#: the argument position of ``dtype`` in the creation and cast ops above
_DTYPE_POSITION = {
    "tensorflow.cast": 1, "tensorflow.saturate_cast": 1, "keras.ops.cast": 1, "keras.backend.cast": 1,
    "tensorflow.image.convert_image_dtype": 1, "tensorflow.constant": 1,
    "tensorflow.convert_to_tensor": 1, "keras.ops.convert_to_tensor": 1,
    "keras.backend.constant": 1, "tensorflow.ones": 1, "tensorflow.zeros": 1,
    "keras.ops.ones": 1, "keras.ops.zeros": 1, "tensorflow.ones_like": 1,
    "tensorflow.zeros_like": 1, "keras.ops.ones_like": 1, "keras.ops.zeros_like": 1,
    "tensorflow.eye": 3, "tensorflow.linalg.eye": 3, "keras.ops.eye": 3,
    "tensorflow.random.normal": 3, "tensorflow.random.uniform": 3,
    "tensorflow.random.truncated_normal": 3, "tensorflow.random_normal": 3,
    "tensorflow.random_uniform": 3, "tensorflow.truncated_normal": 3,
    "tensorflow.random.stateless_normal": 4, "tensorflow.random.stateless_uniform": 4,
    "tensorflow.random.stateless_truncated_normal": 4,
    "keras.random.normal": 3, "keras.random.uniform": 3, "keras.random.truncated_normal": 3,
    "keras.backend.random_normal": 3, "keras.backend.random_uniform": 3,
    "tensorflow.range": 3,
}


#: weights a built-in layer makes with ``add_weight`` (autocast inside ``call``), by the
#: attribute a subclass reads them through
_BUILT_IN_WEIGHTS: Dict[str, Tuple[str, ...]] = {
    "kernel": ("Dense", "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
               "Conv3DTranspose", "Convolution1D", "Convolution2D", "Convolution3D"),
    "bias": ("Dense", "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
             "Conv3DTranspose", "Convolution1D", "Convolution2D", "Convolution3D",
             "DepthwiseConv2D", "SeparableConv1D", "SeparableConv2D"),
    "depthwise_kernel": ("DepthwiseConv2D", "SeparableConv1D", "SeparableConv2D"),
    "pointwise_kernel": ("SeparableConv1D", "SeparableConv2D"),
    "embeddings": ("Embedding",),
}

#: methods a layer's ``call`` may call that still never run under autocast
_NOT_CALLED_FROM_CALL = frozenset({"__init__", "build", "get_config", "from_config"})

#: keywords under which the dtype-preserving ops take their tensor
_TENSOR_KEYWORDS = ("a", "x", "input", "tensor", "inputs", "input_tensor", "logits", "features", "value")

_COMPUTE_DTYPE_ATTRS = frozenset({"compute_dtype", "_compute_dtype"})
_VARIABLE_DTYPE_ATTRS = frozenset({"dtype", "variable_dtype", "_dtype", "_variable_dtype"})


def _short(call: cst.Call, kinds: "TensorKinds") -> str:
    for name in kinds.ctx.names.resolve(call.func):
        return name.rsplit(".", 1)[-1]
    return ""


def _is_self(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "self"


def _targets(for_in: Optional[cst.CompFor]) -> FrozenSet[str]:
    """The names a comprehension's ``for`` clauses bind."""
    out: Set[str] = set()
    while for_in is not None:
        out |= {n.value for n in _names_in(for_in.target)}
        for_in = for_in.inner_for_in
    return frozenset(out)


def _names_in(node: cst.CSTNode) -> List[cst.Name]:
    found: List[cst.Name] = []
    todo = [node]
    while todo:
        current = todo.pop()
        if isinstance(current, cst.Name):
            found.append(current)
        todo.extend(current.children)
    return found


def _mentions(expr: cst.BaseExpression, names: FrozenSet[str]) -> bool:
    return bool(names) and any(n.value in names for n in _names_in(expr))


def _target_path(target: cst.BaseExpression, name: str) -> Optional[Path]:
    """The position of ``name`` in an assignment target (``a, (b, c)``: c is (1, 1)):
    () for the plain name, None when absent or behind a starred part."""
    if isinstance(target, cst.Name):
        return () if target.value == name else None
    if isinstance(target, (cst.Tuple, cst.List)):
        for index, element in enumerate(target.elements):
            if isinstance(element, cst.StarredElement):
                return None
            inner = _target_path(element.value, name)
            if inner is not None:
                return (index,) + inner
    return None


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _child(scope: Scope, node: cst.CSTNode) -> Optional[Scope]:
    """The scope ``node`` (a ``def``) opens inside ``scope``."""
    for child in scope.children:
        if child.node is node:
            return child
    return None


def _decorated(node: cst.CSTNode) -> bool:
    """A decorated ``def`` may return anything (``tf.function`` aside, which keeps it)."""
    return isinstance(node, cst.FunctionDef) and any(
        not (isinstance(d.decorator, cst.Attribute) and d.decorator.attr.value == "function")
        and not (isinstance(d.decorator, cst.Call) and isinstance(d.decorator.func, cst.Attribute)
                 and d.decorator.func.attr.value == "function")
        for d in node.decorators)


@dataclass(frozen=True)
class Where:
    """A location plus the chain of blocks (by id) that encloses it."""

    loc: Location
    path: Path


@dataclass
class OperationSite:
    """An outermost arithmetic expression, or a call that combines tensors."""

    node: cst.CSTNode
    where: Where


@dataclass
class Mismatch:
    """A float32 tensor meeting a 16-bit one in a TensorFlow op."""

    node: cst.CSTNode
    f32: cst.BaseExpression
    low: cst.BaseExpression
    where: Where
    #: the caller's arguments under which the operands have these kinds
    env: Env = ()


class TensorKinds(Analysis):
    """Records sites and block paths in the walk; infers kinds afterwards."""

    requires = (ComputeRegions,)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._blocks: List[int] = []
        self._paths: Dict[cst.CSTNode, Path] = {}
        self._not_root: set = set()
        #: arithmetic arguments of combining calls -> the call (its context)
        self._arg_of: Dict[cst.CSTNode, Tuple[cst.Call, Where]] = {}
        self.sites: List[OperationSite] = []
        #: sites entered and not yet left
        self._open: Dict[cst.CSTNode, OperationSite] = {}
        self._kinds: Dict[Tuple[cst.CSTNode, Env], Optional[str]] = {}
        self._regions: Dict[int, Optional[Region]] = {}
        #: the parameters' kinds of the helper whose code is being judged (see ``Env``)
        self._env: Env = ()
        #: the arguments envs point at: the expression, where, and the caller's env
        self._arguments: List[Tuple[cst.BaseExpression, Where, Env]] = []
        self._call_envs: Dict[Tuple[cst.Call, Env], Env] = {}
        #: ``return`` values by the id of their function scope
        self._returns: Dict[int, List[Tuple[cst.BaseExpression, Where]]] = {}
        #: ``self.<attr>.append(value)`` by (id of the class scope, attr)
        self._appends: Dict[Tuple[int, str], List[Tuple[cst.BaseExpression, Where]]] = {}
        #: ``self.<method>(...)`` calls: the method's name and the scope calling it
        self._self_calls: Dict[str, List[Scope]] = {}
        #: calls that may run a function or a layer of this file (``helper(x)``,
        #: ``self.attn(x, mask=m)``), and the callers found for each function scope
        self._calls: List[Tuple[cst.Call, Where]] = []
        self._callers: Optional[Dict[int, List[Tuple[cst.Call, Where, int]]]] = None

    @property
    def regions(self) -> ComputeRegions:
        return self.ctx.get(ComputeRegions)

    # -- collection -------------------------------------------------------------------
    def here(self) -> Where:
        return Where(self.ctx.scopes.location(), tuple(self._blocks))

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.append(id(node))

    def leave_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.pop()

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._blocks.append(id(node))

    def leave_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._blocks.pop()

    def _record_path(self, node: cst.CSTNode) -> None:
        self._paths[node] = tuple(self._blocks)

    visit_Assign = visit_AnnAssign = _record_path

    def _open_site(self, node: cst.CSTNode) -> None:
        self._open[node] = OperationSite(node, self.here())

    def _close_site(self, node: cst.CSTNode) -> None:
        # sites are listed as they are left: an operation nested in another's
        # arguments (``K.sum(x * m) / K.sum(m)``) comes first, as it runs first
        site = self._open.pop(node, None)
        if site is not None:
            self.sites.append(site)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._record_path(node)
        if isinstance(node.operator, _AUG_ARITHMETIC):
            self._open_site(node)

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        self._close_site(node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        for child in (node.left, node.right):
            self._not_root.add(child)
        if node not in self._not_root:
            self._open_site(node)

    def leave_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self._close_site(node)

    def leave_Call(self, node: cst.Call) -> None:
        self._close_site(node)

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if node in self._not_root:
            self._not_root.add(node.expression)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            where = self.here()
            self._returns.setdefault(id(where.loc.scope), []).append((node.value, where))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name) or (isinstance(func, cst.Attribute) and _is_self(func.value)):
            self._calls.append((node, self.here()))
        if isinstance(func, cst.Attribute):
            owner = func.value
            if _is_self(owner):
                self._self_calls.setdefault(func.attr.value, []).append(self.ctx.scopes.current)
            elif (func.attr.value == "append" and len(node.args) == 1 and isinstance(owner, cst.Attribute)
                  and _is_self(owner.value)):
                cls = self.ctx.scopes.current.enclosing_class()
                if cls is not None:
                    self._appends.setdefault((id(cls), owner.attr.value), []).append((node.args[0].value, self.here()))
        if self.combining(node) is None:
            return
        where = self.here()
        self._open[node] = OperationSite(node, where)
        for arg in node.args:
            if isinstance(arg.value, cst.BinaryOperation):
                self._arg_of[arg.value] = (node, where)

    # -- queries --------------------------------------------------------------------------
    def region(self, loc: Location) -> Optional[Region]:
        """The 16-bit region of a location (cached per scope for function regions)."""
        key = id(loc.scope)
        if key not in self._regions:
            self._regions[key] = None  # cycle guard: helpers calling each other
            found = self.regions.function_region(loc.scope) or self._called_from_call(loc.scope, set())
            self._regions[key] = found or self._called_from_region(loc.scope)
        found = self._regions[key]
        if found is not None:
            return found
        return Region("functional", None) if self.regions.in_functional(loc) else None

    def _from_call(self, scope: Scope) -> Optional[Region]:
        """The layer region of a ``call`` method (or code nested in one)."""
        found = self.regions.function_region(scope)
        if found is None or found.function is None or not isinstance(found.function.node, cst.FunctionDef):
            return None
        return found if found.function.node.name.value == "call" else None

    def called_from_public_call(self, scope: Scope) -> bool:
        """A private helper method that a public layer's ``call`` runs: in a library,
        it runs under the user's policy as the ``call`` does."""
        region = self._called_from_call(scope, set())
        return region is not None and region.function is not None and region.function.parent is not None \
            and is_public(region.function.parent)

    def _called_from_call(self, scope: Optional[Scope], seen: Set[int]) -> Optional[Region]:
        """A method of a 16-bit layer that the layer's ``call`` calls (``self.helper(x)``,
        directly or through other such methods): it runs under autocast too."""
        while scope is not None and not (scope.kind == "function" and scope.parent is not None
                                         and scope.parent.kind == "class"):
            scope = scope.parent
        if scope is None or id(scope) in seen or not isinstance(scope.node, cst.FunctionDef):
            return None
        seen.add(id(scope))
        name = scope.node.name.value
        cls = self.regions.layer_class(scope.parent.node) if scope.parent is not None else None
        if cls is None or not cls.sixteen_bit or name in _NOT_CALLED_FROM_CALL:
            return None
        for caller in self._self_calls.get(name, []):
            if caller.enclosing_class() is not scope.parent:
                continue
            found = self._from_call(caller) or self._called_from_call(caller, seen)
            if found is not None and found.kind == "layer":
                return Region("layer", scope, cls)
        return None

    def _called_from_region(self, scope: Scope) -> Optional[Region]:
        """A function of this file (not a method) that 16-bit code of the file calls
        (``apply_mask(scores, mask)`` in a layer's ``call``): it runs under autocast
        there, with the arguments each such caller gives it (:meth:`contexts`)."""
        while scope.kind != "function" and scope.parent is not None:
            scope = scope.parent
        if scope.kind != "function" or (scope.parent is not None and scope.parent.kind == "class"):
            return None
        for _, where, _ in self._caller_map().get(id(scope), []):
            caller = self.region(where.loc)
            if caller is not None and caller.kind != "functional":
                return Region("helper", scope)
        return None

    def _caller_map(self) -> Dict[int, List[Tuple[cst.Call, Where, int]]]:
        """The calls of this file that may run each function scope (by id)."""
        if self._callers is None:
            self._callers = {}
            for call, where in self._calls:
                for callee, offset in self._callees(call, where):
                    self._callers.setdefault(id(callee), []).append((call, where, offset))
        return self._callers

    def combining(self, call: cst.Call) -> Optional[Tuple[str, bool]]:
        """(operand layout, whether mixed dtypes raise) for an op combining tensors."""
        for name in self.ctx.names.resolve(call.func):
            if name.startswith("tensorflow."):
                short = name.rsplit(".", 1)[-1]
                if short in _COMBINING and name.rsplit(".", 1)[0] + "." in TF_OP_NAMESPACES:
                    return _COMBINING[short], True
            if name in _BACKEND_COMBINING:
                return _BACKEND_COMBINING[name], True
            if name in _KERAS_OPS:
                return _KERAS_OPS[name], False
        return None

    def operands(self, call: cst.Call) -> List[cst.BaseExpression]:
        """The tensor operands of a combining call (positional arguments)."""
        found = self.combining(call)
        if found is None:
            return []
        layout = found[0]
        args = [a.value for a in call.args if a.keyword is None and not a.star]
        if layout == "args":
            return args[:2] + [a.value for a in call.args if a.keyword is not None and a.keyword.value in ("x", "y", "a", "b")]
        if layout == "args2":
            return args[:2]
        if layout == "args3":
            return args[:3]
        if layout == "tail":
            return args[1:3] if len(args) >= 3 else []
        if layout == "list" and args and isinstance(args[0], (cst.List, cst.Tuple)):
            return [e.value for e in args[0].elements if not isinstance(e, cst.StarredElement)]
        return []

    # -- constants ------------------------------------------------------------------------
    def constant(self, expr: cst.BaseExpression, where: Where) -> Optional[FrozenSet[float]]:
        """The numeric values of a constant expression, including ``self.eps`` set once, a
        dtype's limit (``tf.float32.min``, ``np.finfo(np.float32).max``), and a constant made
        a 16-bit tensor on purpose (``tf.constant(-1e9, dtype=scores.dtype)``,
        ``tf.cast(-1e9, x.dtype)``, ``tf.fill(shape, ...)`` of one)."""
        if isinstance(expr, cst.Call):
            return self._made_constant(expr, where)
        if isinstance(expr, cst.Subscript):
            return None
        if isinstance(expr, cst.Name):  # ``neg = tf.fill(shape, tf.cast(-1e9, x.dtype))``
            binding, reaching = self.reaching(expr, where)
            if binding is not None and reaching and binding.kind == "assign" \
                    and isinstance(binding.value, cst.Call):
                bw = self.binding_where(binding)
                return self._made_constant(binding.value, bw) if bw is not None else None
        limit = self._dtype_limit(expr)
        if limit is not None:
            return frozenset({limit})
        found = self.ctx.values.values(expr, where.loc)
        if found is None and isinstance(expr, cst.Attribute):
            binding = self._self_attribute(expr, where)
            if binding is not None and binding.value is not None and binding.scope is not None:
                found = self.ctx.values.values(binding.value, binding.location())
        if not found or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in found):
            return None
        return found  # type: ignore[return-value]

    def written_constant(self, expr: cst.BaseExpression, where: Where, depth: int = 0) -> cst.BaseExpression:
        """Where the number of a :meth:`constant` is written: ``neg`` bound to
        ``tf.fill(shape, tf.cast(-1e9, x.dtype))`` is written as ``-1e9``."""
        if depth > _MAX_DEPTH:
            return expr
        if isinstance(expr, cst.Name):
            binding, reaching = self.reaching(expr, where)
            if binding is not None and reaching and binding.kind == "assign" and isinstance(binding.value, cst.Call):
                bw = self.binding_where(binding)
                if bw is not None and self._made_constant(binding.value, bw) is not None:
                    return self.written_constant(binding.value, bw, depth + 1)
            return expr
        if isinstance(expr, cst.Call):
            value = self._constant_argument(expr)
            return expr if value is None else self.written_constant(value, where, depth + 1)
        return expr

    def _constant_argument(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        """The value a constant, cast or fill call makes a tensor of; None for other calls."""
        called = self.ctx.names.resolve(call.func)
        if called & (CONSTANTS | CASTS):
            return positional_or_keyword(call, 0, "value") or positional_or_keyword(call, 0, "x")
        if called & FILL_OPS:
            return positional_or_keyword(call, 1, "value")
        return None

    def _made_constant(self, call: cst.Call, where: Where) -> Optional[FrozenSet[float]]:
        """A constant value made a 16-bit tensor: the value's numbers, else None."""
        value = self._constant_argument(call)
        if value is None or self.kind(call, where) != LOW:
            return None
        return self.constant(value, where)

    def _dtype_limit(self, expr: cst.BaseExpression) -> Optional[float]:
        """``tf.float32.min``, ``np.finfo(np.float32).max``: the number, else None."""
        if not isinstance(expr, cst.Attribute) or expr.attr.value not in LIMIT_ATTRIBUTES:
            return None
        sign = LIMIT_ATTRIBUTES[expr.attr.value]
        owner = expr.value
        if isinstance(owner, cst.Call) and self.ctx.names.resolve(owner.func) & FINFO_FUNCTIONS and owner.args:
            owner = owner.args[0].value
            if isinstance(owner, cst.SimpleString) and owner.evaluated_value in DTYPE_LIMITS:
                return sign * DTYPE_LIMITS[str(owner.evaluated_value)]
        dtypes = {DTYPE_NAMES.get(name) for name in self.ctx.names.resolve(owner)}
        if len(dtypes) == 1:
            dtype = dtypes.pop()
            if dtype in DTYPE_LIMITS:
                return sign * DTYPE_LIMITS[dtype]
        return None

    def _self_attribute(self, expr: cst.Attribute, where: Where) -> Optional[Binding]:
        """The single assignment of ``self.<attr>`` in the enclosing class, if there is one."""
        if not (isinstance(expr.value, cst.Name) and expr.value.value == "self"):
            return None
        cls = where.loc.scope.enclosing_class()
        if cls is None:
            return None
        bindings = cls.attributes.get(expr.attr.value, [])
        if len(bindings) != 1 or bindings[0].kind != "assign":
            return None
        return bindings[0]

    # -- kinds ------------------------------------------------------------------------------
    def kind(self, expr: cst.BaseExpression, where: Where, depth: int = 0) -> Optional[str]:
        key = (expr, self._env)
        if key in self._kinds:
            return self._kinds[key]
        if depth > _MAX_DEPTH:
            return None
        self._kinds[key] = None  # cycle guard
        found = self._kind(expr, where, depth)
        self._kinds[key] = found
        return found

    def _kind(self, expr: cst.BaseExpression, where: Where, depth: int) -> Optional[str]:
        if isinstance(expr, cst.Name):
            candidates = self.candidates(expr, where)
            if not candidates:
                return None
            kinds = {self._binding_kind(b, depth) for b in candidates}
            return next(iter(kinds)) if len(kinds) == 1 else None
        if isinstance(expr, cst.Attribute):
            return self._attribute_kind(expr, where, depth)
        if isinstance(expr, cst.Subscript):
            elements = self._elements(expr.value, where, depth + 1)
            if elements is not None:  # an item of a list or dict of tensors
                return next(iter(elements)) if len(elements) == 1 else None
            return self.kind(expr.value, where, depth + 1)
        if isinstance(expr, cst.UnaryOperation):
            return self.kind(expr.expression, where, depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            if not isinstance(expr.operator, ARITHMETIC):
                return None
            kinds = {self.kind(expr.left, where, depth + 1), self.kind(expr.right, where, depth + 1)} - {None}
            # float32 meeting 16-bit fails at run time; once fixed the result is
            # 16-bit, so later operands are judged against the 16-bit side
            return LOW if LOW in kinds else next(iter(kinds), None)
        if isinstance(expr, cst.IfExp):
            # ``make_mask() if shift else None``: None is no tensor (a use checks for it)
            sides = [side for side in (expr.body, expr.orelse) if not _is_none(side)]
            kinds = {self.kind(side, where, depth + 1) for side in sides}
            return next(iter(kinds)) if len(kinds) == 1 else None
        if isinstance(expr, cst.Call):
            return self._call_kind(expr, where, depth)
        return None

    def reaching(self, name: cst.Name, where: Where) -> Tuple[Optional[Binding], bool]:
        """The binding of a name at ``where`` and whether it certainly reaches it."""
        binding = where.loc.lookup(name.value)
        if binding is None and where.loc.scope.kind == "lambda":
            # lambda parameters are bound at the lambda's own statement order
            binding = where.loc.scope.lookup(name.value, None)
        if binding is None:
            return None, False
        if binding.kind == "param":
            return binding, True
        path = self._paths.get(binding.node)
        if path is None:
            return binding, False
        return binding, where.path[:len(path)] == path

    def candidates(self, name: cst.Name, where: Where) -> List[Binding]:
        """The bindings of a name that may reach ``where``, latest first.

        After ``x = a`` then ``if c: x = b``, both may reach a later use; the list
        ends at the first binding that certainly reaches (same or enclosing block).
        Empty when that cannot be worked out (then the name's kind is unknown).
        """
        binding, reaching = self.reaching(name, where)
        if binding is None:
            return []
        if reaching:
            return [binding]
        scope = binding.scope
        if scope is None or scope is not where.loc.scope:
            return []
        earlier = [b for b in scope.bindings.get(name.value, []) if b.order <= binding.order]
        out: List[Binding] = []
        for candidate in reversed(earlier):
            out.append(candidate)
            if candidate.kind == "param":
                return out
            path = self._paths.get(candidate.node)
            if path is None:
                return []
            if where.path[:len(path)] == path:
                return out
        return []

    def assigned(self, name: cst.Name, where: Where, kinds: Optional[Tuple[str, ...]] = ("assign",)
                 ) -> Optional[Tuple[cst.BaseExpression, Where]]:
        """The value the one binding that certainly reaches ``name`` assigns, and where
        (None for a parameter, a loop target, an unpacking, or a binding of another of
        ``kinds``; any kind when None)."""
        binding, reaching = self.reaching(name, where)
        if binding is None or not reaching or binding.value is None \
                or (kinds is not None and binding.kind not in kinds):
            return None
        at = self.binding_where(binding)
        return None if at is None else (binding.value, at)

    def binding_where(self, binding: Binding) -> Optional[Where]:
        if binding.scope is None:
            return None
        return Where(binding.location(), self._paths.get(binding.node, ()))

    def _binding_kind(self, binding: Binding, depth: int) -> Optional[str]:
        if binding.kind == "param":
            if self.regions.is_low_param(binding):
                return LOW
            for param, kind, _ in self._env:
                if param == id(binding.node):
                    return kind
            return None
        where = self.binding_where(binding)
        if where is None:
            return None
        if binding.kind in ("assign", "annassign") and binding.value is not None:
            return self.kind(binding.value, where, depth + 1)
        if binding.kind == "assign" and isinstance(binding.node, cst.Assign):
            # ``q, k, v = self.project(x)``, ``mean, var = tf.nn.moments(x, ...)``
            parts = self.unpacked(binding, depth)
            if not parts:
                return None
            kinds = set()
            for value, at, env in parts:
                with self._under(env):
                    kinds.add(self.kind(value, at, depth + 1))
            return next(iter(kinds)) if len(kinds) == 1 else None
        if binding.kind == "augassign" and isinstance(binding.node, cst.AugAssign):
            node = binding.node
            if not isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign)):
                return None
            if not isinstance(node.target, cst.Name):
                return None
            before = self.kind(node.target, where, depth + 1)
            added = self.kind(node.value, where, depth + 1)
            kinds = {before, added} - {None}
            return next(iter(kinds)) if len(kinds) == 1 else None
        return None

    def unpacked(self, binding: Binding, depth: int) -> Optional[List[Tuple[cst.BaseExpression, Where, Env]]]:
        """What a name bound by unpacking (``q, k, v = ...``) may hold: the expressions
        its part comes from, each with where and under which helper arguments to judge
        it; None when that cannot be followed."""
        node = binding.node
        where = self.binding_where(binding)
        if not isinstance(node, cst.Assign) or where is None:
            return None
        for target in node.targets:
            path = _target_path(target.target, binding.name)
            if path is not None:
                return self._parts(node.value, where, path, depth + 1)
        return None

    def _parts(self, value: cst.BaseExpression, where: Where, path: Path, depth: int
               ) -> Optional[List[Tuple[cst.BaseExpression, Where, Env]]]:
        """The expressions part ``path`` of ``value`` comes from (see :meth:`unpacked`):
        an item of a tuple or list written out, of each tuple a helper returns (its
        arguments bound), and any part of a tensor, which has the tensor's dtype (a
        slice, ``tf.unstack``, the autocast nest of a layer's inputs)."""
        if not path:
            return [(value, where, self._env)]
        if depth > _MAX_DEPTH:
            return None
        index, rest = path[0], path[1:]
        if isinstance(value, (cst.Tuple, cst.List)):
            elements = value.elements
            if index >= len(elements) or any(isinstance(e, cst.StarredElement) for e in elements[:index + 1]):
                return None
            return self._parts(elements[index].value, where, rest, depth + 1)
        if isinstance(value, cst.Name):
            found = self.assigned(value, where)
            if found is not None:
                return self._parts(found[0], found[1], path, depth + 1)
        if isinstance(value, cst.Call):
            helper = self.helper(value, where)
            if helper is not None:
                function, offset = helper
                returns = self._returns.get(id(function), [])
                if not returns:
                    return None
                out: List[Tuple[cst.BaseExpression, Where, Env]] = []
                with self._under(self.call_env(function, offset, value, where, depth)):
                    for returned, at in returns:
                        parts = self._parts(returned, at, path, depth + 1)
                        if parts is None:
                            return None
                        out += parts
                return out
            if value.args and self.ctx.names.resolve(value.func) & UNPACKING_OPS:
                # ``mean, var = tf.nn.moments(x, ...)``: every part has x's dtype
                return [(value.args[0].value, where, self._env)]
        # a tensor: each part has its dtype; anything else (a shape, a Python tuple
        # from an unknown call) has no known kind
        return [(value, where, self._env)]

    def _attribute_kind(self, expr: cst.Attribute, where: Where, depth: int) -> Optional[str]:
        values = self._attribute_values(expr, where)
        if values is None:
            return self._inherited_weight_kind(expr, where)
        kinds = {self._attribute_value_kind(value, at, where, depth) for value, at in values}
        return next(iter(kinds)) if len(kinds) == 1 else None

    def attribute_values(self, expr: cst.BaseExpression, where: Where
                         ) -> Optional[List[Tuple[cst.BaseExpression, Where]]]:
        """:meth:`_attribute_values`, for the analyses that follow values out of the file."""
        return self._attribute_values(expr, where)

    def _attribute_values(self, expr: cst.BaseExpression, where: Where
                          ) -> Optional[List[Tuple[cst.BaseExpression, Where]]]:
        """What the methods of the enclosing class assign to ``self.<attr>``, and where.

        None when it is never assigned in the class or any assignment is not a plain
        one (``self.x += ...``, unpacking). ``self.x = None`` (a value not made yet,
        or an optional one a ``call`` checks for) is left out.
        """
        if not (isinstance(expr, cst.Attribute) and _is_self(expr.value)):
            return None
        cls = where.loc.scope.enclosing_class()
        if cls is None:
            return None
        bindings = cls.attributes.get(expr.attr.value, [])
        if not bindings:
            return None
        out: List[Tuple[cst.BaseExpression, Where]] = []
        for binding in bindings:
            at = self.binding_where(binding)
            if binding.kind != "assign" or binding.value is None or at is None:
                return None
            if not _is_none(binding.value):
                out.append((binding.value, at))
        return out or None

    def _attribute_value_kind(self, value: cst.BaseExpression, at: Where, use: Where, depth: int) -> Optional[str]:
        """The kind one assignment of a ``self`` attribute gives it where it is read."""
        if isinstance(value, cst.Call):
            if self.ctx.names.resolve(value.func) & TF_VARIABLES:
                return self._variable_kind(value, at, depth)
            func = value.func
            if isinstance(func, cst.Attribute) and func.attr.value == "add_weight" and _is_self(func.value):
                region = self.region(use.loc)
                if region is None or region.kind != "layer" or keyword_only(value, "dtype") is not None:
                    return None
                # ``experimental_autocast=False`` (Keras 2) / ``autocast=False`` (Keras 3):
                # the weight is read in its own dtype, float32, a deliberate float32 path
                off = keyword_only(value, "experimental_autocast") or keyword_only(value, "autocast")
                return None if isinstance(off, cst.Name) and off.value == "False" else LOW
        # a tensor made once (in ``__init__`` or ``build``) keeps its dtype: judged
        # where it was made, with none of the current helper's parameters
        with self._under(()):
            return self.kind(value, at, depth + 1)

    def _inherited_weight_kind(self, expr: cst.Attribute, where: Where) -> Optional[str]:
        """``self.kernel`` in a subclass of ``Dense``/``Conv2D``...: the built-in layer's
        ``add_weight`` weight, read in the compute dtype inside ``call``."""
        if not _is_self(expr.value):
            return None
        layers = _BUILT_IN_WEIGHTS.get(expr.attr.value)
        region = self.region(where.loc)
        if layers is None or region is None or region.kind != "layer" or region.layer_class is None:
            return None
        for _, names in region.layer_class.bases:
            if any(n.startswith("keras.layers.") and n.rsplit(".", 1)[-1] in layers for n in names):
                return LOW
        return None

    def _item_kind(self, item: cst.BaseExpression, targets: FrozenSet[str], where: Where, depth: int) -> Optional[str]:
        """The kind of a comprehension's item, judged without its loop's own names (the
        scopes know no comprehension, so they would resolve them outside it)."""
        if not _mentions(item, targets):
            return self.kind(item, where, depth)
        if isinstance(item, cst.Call) and self.ctx.names.resolve(item.func) & (CASTS | CONSTANTS | FLOAT32_BY_DEFAULT):
            dtype = self._dtype_argument(item, self.ctx.names.resolve(item.func))
            if dtype is not None and not _mentions(dtype, targets):
                return self.dtype_kind(dtype, where, depth)
            return self.kind(item, where, depth) if dtype is None and not (
                self.ctx.names.resolve(item.func) & (CASTS | CONSTANTS)) else None
        if isinstance(item, cst.BinaryOperation) and isinstance(item.operator, ARITHMETIC):
            kinds = {self._item_kind(side, targets, where, depth + 1) for side in (item.left, item.right)} - {None}
            return LOW if LOW in kinds else next(iter(kinds), None)
        return None

    def _elements(self, expr: cst.BaseExpression, where: Where, depth: int) -> Optional[Set[Optional[str]]]:
        """The kinds of the items of a list, tuple or dict that ``expr`` certainly is
        (``self.masks`` built in ``build()``, read back as ``self.masks[i]``); None
        when ``expr`` is not known to be one."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set)):
            if any(isinstance(e, cst.StarredElement) for e in expr.elements):
                return {None}
            return {self.kind(e.value, where, depth + 1) for e in expr.elements}
        if isinstance(expr, cst.Dict):
            if any(not isinstance(e, cst.DictElement) for e in expr.elements):
                return {None}
            return {self.kind(e.value, where, depth + 1) for e in expr.elements if isinstance(e, cst.DictElement)}
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
            item = expr.value if isinstance(expr, cst.DictComp) else expr.elt
            return {self._item_kind(item, _targets(expr.for_in), where, depth + 1)}
        if isinstance(expr, cst.Name):
            found = self.assigned(expr, where)
            return self._elements(found[0], found[1], depth + 1) if found is not None else None
        if isinstance(expr, cst.Attribute):
            values = self._attribute_values(expr, where)
            if values is None:
                return None
            cls = where.loc.scope.enclosing_class()
            out: Set[Optional[str]] = set()
            with self._under(()):
                for value, at in values:
                    items = self._elements(value, at, depth + 1)
                    if items is None:
                        return None
                    out |= items
                for value, at in self._appends.get((id(cls), expr.attr.value), []):
                    out.add(self.kind(value, at, depth + 1))
            return out
        return None

    def _variable_kind(self, call: cst.Call, where: Where, depth: int) -> Optional[str]:
        """A raw ``tf.Variable``: float32 unless its dtype or initial value says otherwise."""
        dtype = positional_or_keyword(call, 5, "dtype")
        if dtype is not None:
            return F32 if self.dtype_kind(dtype, where, depth + 1) == F32 else None
        initial = positional_or_keyword(call, 0, "initial_value")
        if initial is None:
            return None
        found = self.ctx.values.values(initial, where.loc)
        if found is not None:
            return F32 if found and all(isinstance(v, float) for v in found) else None
        # an initializer's output or a float tensor: float32 unless known to be 16-bit
        return None if self.kind(initial, where, depth + 1) == LOW else F32

    def _call_kind(self, call: cst.Call, where: Where, depth: int) -> Optional[str]:
        func = call.func
        # a 16-bit sublayer: self.dense(x), Dense(3)(x), or dense(x) for a layer variable
        layer = self._called_layer(func, where)
        if layer is not None:
            return LOW if layer else None
        helper = self.helper(call, where)
        if helper is not None:
            kinds = {kind for kind, _, _ in self._returned(helper, call, where, depth)}
            return next(iter(kinds)) if len(kinds) == 1 else None
        names = self.ctx.names.resolve(func)
        if not names:
            imported = returned_kinds(self, call, where, depth)  # a function of another module
            return next(iter(imported)) if imported is not None and len(imported) == 1 else None
        if names & IMAGE_RESIZE:
            method = positional_or_keyword(call, 2, "method")
            if method is None:
                return F32
            if self._is_nearest(method, where):
                return self.kind(call.args[0].value, where, depth + 1) if call.args else None
            found = self.ctx.values.values(method, where.loc)
            return F32 if found and all(isinstance(v, str) for v in found) else None
        if names & RANGE_OPS:
            dtype = self._dtype_argument(call, names)
            if dtype is not None:
                return self.dtype_kind(dtype, where, depth + 1)
            bounds = [a.value for a in call.args if a.keyword is None and not a.star][:3]
            return F32 if any(self._python_float(b, where) for b in bounds) else None
        if names & CASTS:
            dtype = self._dtype_argument(call, names)
            return self.dtype_kind(dtype, where, depth + 1) if dtype is not None else None
        if names & CONSTANTS:
            dtype = self._dtype_argument(call, names)
            if dtype is not None:
                return self.dtype_kind(dtype, where, depth + 1)
            if names & {"keras.backend.constant"}:
                return F32  # floatx() by default
            if names & {"tensorflow.constant"} and call.args:
                values = self.ctx.values.values(call.args[0].value, where.loc)
                if values and all(isinstance(v, float) for v in values):
                    return F32
            return None
        if names & FLOAT32_BY_DEFAULT:
            dtype = self._dtype_argument(call, names)
            return F32 if dtype is None else self.dtype_kind(dtype, where, depth + 1)
        if names & LIKE_OPS:
            dtype = self._dtype_argument(call, names)
            if dtype is not None:
                return self.dtype_kind(dtype, where, depth + 1)
            return self.kind(call.args[0].value, where, depth + 1) if call.args else None
        if names & FILL_OPS:  # the value's dtype: a Python float is float32, a tensor keeps its own
            value = positional_or_keyword(call, 1, "value")
            if value is None:
                return None
            found = self.ctx.values.values(value, where.loc)
            if found and all(isinstance(v, float) for v in found):
                return F32
            return self.kind(value, where, depth + 1)
        for name in names:
            module, short = name.rsplit(".", 1)
            if module + "." in TF_OP_NAMESPACES + KERAS_OP_NAMESPACES and short in DTYPE_PRESERVING_OPS:
                operands = self.operands(call) if self.combining(call) else []
                if not operands:
                    first = [a.value for a in call.args if a.keyword is None and not a.star]
                    operands = first[1:] if short == "einsum" else first[:1]
                if not operands:  # ``tf.transpose(a=x, perm=...)``
                    operands = [a.value for a in call.args
                                if a.keyword is not None and a.keyword.value in _TENSOR_KEYWORDS][:1]
                kinds = {self.kind(o, where, depth + 1) for o in operands} - {None}
                if len(kinds) == 1:
                    return next(iter(kinds))
                if not module.startswith("keras.") and operands and all(
                        self._python_float(o, where) for o in operands):
                    return F32  # ``tf.sqrt(float(d))``: a Python float becomes a float32 tensor
                if kinds != {LOW, F32}:
                    return None
                # Keras ops promote float16 with float32 to float32; a TensorFlow op
                # fails there (reported), and once fixed its result is 16-bit
                return F32 if module.startswith("keras.") else LOW
        return None

    def _python_float(self, expr: cst.BaseExpression, where: Where) -> bool:
        """A Python float (a literal, a constant name, ``float(...)``): TensorFlow makes
        it a float32 tensor when no tensor gives it another dtype."""
        if isinstance(expr, cst.Call):
            return (isinstance(expr.func, cst.Name) and expr.func.value == "float"
                    and where.loc.lookup("float") is None)
        if isinstance(expr, cst.UnaryOperation):
            return self._python_float(expr.expression, where)
        found = self.ctx.values.values(expr, where.loc)
        return bool(found) and all(isinstance(v, float) for v in found)  # type: ignore[union-attr]

    def _is_nearest(self, method: cst.BaseExpression, where: Where) -> bool:
        if self.ctx.names.resolve(method) & NEAREST_RESIZE_METHODS:
            return True
        found = self.ctx.values.values(method, where.loc)
        return bool(found) and all(v in NEAREST_RESIZE_METHODS for v in found)  # type: ignore[union-attr]

    # -- helpers: methods and functions of this file whose returns are followed ----------
    def helper(self, call: cst.Call, where: Where) -> Optional[Tuple[Scope, int]]:
        """The function scope a call runs when it is a function or method of this file
        (``self._split(x)``, ``window_partition(x, 7)``, a nested ``def``), with the
        number of leading parameters the call does not pass (``self``)."""
        func = call.func
        if isinstance(func, cst.Attribute) and _is_self(func.value):
            cls = where.loc.scope.enclosing_class()
            if cls is None:
                return None
            defs = [b for b in cls.bindings.get(func.attr.value, []) if b.kind == "def"]
            if len(defs) != 1 or len(cls.bindings[func.attr.value]) != 1:
                return None
            scope = _child(cls, defs[0].node)
            if scope is None or _decorated(defs[0].node):
                return None
            return scope, 1
        if isinstance(func, cst.Name):
            binding = where.loc.lookup(func.value)
            if binding is None or binding.kind != "def" or binding.scope is None or _decorated(binding.node):
                return None
            scope = _child(binding.scope, binding.node)
            if scope is None:
                return None
            return scope, 1 if binding.scope.kind == "class" else 0
        return None

    def call_env(self, function: Scope, offset: int, call: cst.Call, where: Where, depth: int) -> Env:
        """The kinds the call gives the function's parameters (unknown where it passes
        ``*args``/``**kwargs`` or leaves a default)."""
        key = (call, self._env)
        if key not in self._call_envs:
            self._call_envs[key] = ()  # cycle guard
            self._call_envs[key] = self._call_env(function, offset, call, where, depth)
        return self._call_envs[key]

    def _call_env(self, function: Scope, offset: int, call: cst.Call, where: Where, depth: int) -> Env:
        node = function.node
        if not isinstance(node, cst.FunctionDef):
            return ()
        params = list(node.params.posonly_params) + list(node.params.params) + list(node.params.kwonly_params)
        env = []
        for param in params[offset:]:
            argument = argument_for(node, param, call, offset)
            if argument is None or argument is UNREADABLE:
                continue
            assert isinstance(argument, cst.BaseExpression)
            index = len(self._arguments)
            self._arguments.append((argument, where, self._env))
            env.append((id(param), self.kind(argument, where, depth + 1), index))
        return tuple(sorted(env, key=lambda item: item[0]))

    def contexts(self, scope: Scope) -> List[Env]:
        """The parameters' kinds each call of this file gives the function that
        ``scope`` is in: a helper called with a float32 mask, a layer whose ``call`` is
        given one as a keyword (``self.attn(x, mask=self.attn_mask)``; keyword and
        later arguments are not autocast). Only the envs that know some kind."""
        while scope.kind != "function" and scope.parent is not None:
            scope = scope.parent
        out: List[Env] = []
        for call, where, offset in self._caller_map().get(id(scope), []):
            caller = self.region(where.loc)
            if caller is None or caller.kind == "functional":
                continue  # outside autocast (``train_step``): weights read as float32 there
            with self._under(()):
                env = self.call_env(scope, offset, call, where, 0)
            if any(kind is not None for _, kind, _ in env) and env not in out:
                out.append(env)
        return out

    def _callees(self, call: cst.Call, where: Where) -> List[Tuple[Scope, int]]:
        """The function scopes of this file a call may run: a helper, or the ``call``
        of the layer class the called attribute holds an instance of."""
        helper = self.helper(call, where)
        if helper is not None:
            return [helper]
        values = self._attribute_values(call.func, where)
        if not values or self.region(where.loc) is None:
            return []
        classes = set()
        cls_scope: Optional[Scope] = None
        for value, at in values:
            if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
                return []
            binding = at.loc.lookup(value.func.value)
            if binding is None or binding.kind != "class" or binding.scope is None:
                return []
            classes.add((binding.node, id(binding.scope)))
            cls_scope = _child(binding.scope, binding.node)
            layer = self.regions.layer_class(binding.node)
            if cls_scope is None or layer is None or not layer.sixteen_bit:
                return []
        if len(classes) != 1 or cls_scope is None:
            return []
        calls = [b for b in cls_scope.bindings.get("call", []) if b.kind == "def"]
        method = _child(cls_scope, calls[0].node) if len(calls) == 1 else None
        return [(method, 1)] if method is not None else []

    def returns_of(self, call: cst.Call, where: Where, depth: int = 0) -> List[Tuple[cst.BaseExpression, Where]]:
        """What the helper of this file that ``call`` runs returns, each where it is
        returned (none for any other call)."""
        helper = self.helper(call, where)
        if helper is None:
            return []
        return [(value, at) for _, value, at in self._returned(helper, call, where, depth) if value is not call]

    def _returned(self, helper: Tuple[Scope, int], call: cst.Call, where: Where, depth: int
                  ) -> List[Tuple[Optional[str], cst.BaseExpression, Where]]:
        """The kind of each ``return`` of a helper, with the call's arguments bound, and
        the value and where (judged under the call's ``Env``: see :meth:`under`)."""
        function, offset = helper
        returns = self._returns.get(id(function), [])
        if not returns or depth > _MAX_DEPTH:
            return [(None, call, where)]
        with self._under(self.call_env(function, offset, call, where, depth)):
            return [(self.kind(value, at, depth + 1), value, at) for value, at in returns]

    def _called_layer(self, func: cst.BaseExpression, where: Where) -> Optional[bool]:
        """True/False when ``func`` is a layer (16-bit or not); None when not a layer."""
        regions = self.regions
        if isinstance(func, cst.Attribute):
            # ``self.query = None`` in ``__init__``, ``self.query = Dense(...)`` in ``build``
            values = self._attribute_values(func, where)
            if not values:
                return None
            region = self.region(where.loc)
            if not all(isinstance(value, cst.Call) and self._is_layer_constructor(value, at.loc)
                       for value, at in values):
                return None
            if (region is None or region.kind != "layer") and not all(self._governed(at.loc) for _, at in values):
                return None
            return all(regions.is_sixteen_bit_layer(value, at.loc) for value, at in values)
        if isinstance(func, cst.Call):  # Dense(3)(x)
            if self._is_layer_constructor(func, where.loc):
                governed = self.region(where.loc) is not None or self._governed(where.loc)
                return governed and regions.is_sixteen_bit_layer(func, where.loc)
            return None
        if isinstance(func, cst.Name):
            binding, reaching = self.reaching(func, where)
            if binding is None or binding.value is None or binding.scope is None:
                return None
            loc = binding.location()
            if isinstance(binding.value, cst.Call) and self._is_layer_constructor(binding.value, loc):
                governed = self.region(where.loc) is not None or self._governed(loc)
                return reaching and governed and regions.is_sixteen_bit_layer(binding.value, loc)
        return None

    def _governed(self, loc: Location) -> bool:
        """A mixed policy governs the code at ``loc``: a Keras layer built there computes
        in the 16-bit dtype wherever it is called (a ``tf.Module``'s ``__call__``, a
        plain function), not only inside another layer's ``call``."""
        return self.ctx.facts.mixed_policy(loc.scope) is not None

    def _is_layer_constructor(self, call: cst.Call, loc: Location) -> bool:
        names = self.ctx.names.resolve(call.func)
        if names:
            return any(n.startswith("keras.layers.") and n.rsplit(".", 1)[-1][:1].isupper() for n in names)
        if isinstance(call.func, cst.Name):
            binding = loc.lookup(call.func.value)
            return binding is not None and binding.kind == "class" and self.regions.layer_class(binding.node) is not None
        return False

    def _dtype_argument(self, call: cst.Call, names: FrozenSet[str]) -> Optional[cst.BaseExpression]:
        position = max((_DTYPE_POSITION.get(n, -1) for n in names), default=-1)
        return positional_or_keyword(call, position, "dtype") if position >= 0 else keyword_only(call, "dtype")

    def dtype_kind(self, expr: cst.BaseExpression, where: Where, depth: int = 0) -> Optional[str]:
        """LOW/F32 for an expression that names a dtype, else None."""
        if depth > _MAX_DEPTH:
            return None
        found = self.ctx.values.values(expr, where.loc)
        if found is not None:
            if found == frozenset({"float32"}):
                return F32
            if found and all(isinstance(v, str) and v in ("float16", "bfloat16") for v in found):
                return LOW
            return None
        if isinstance(expr, cst.Call):
            if self.ctx.names.resolve(expr.func) & FLOATX_FUNCTIONS and not expr.args:
                return F32
            if self.ctx.names.resolve(expr.func) & {"tensorflow.as_dtype", "tensorflow.dtypes.as_dtype"} and expr.args:
                return self.dtype_kind(expr.args[0].value, where, depth + 1)
            return None
        if isinstance(expr, cst.Attribute):
            owner = expr.value
            attr = expr.attr.value
            if _is_self(owner) or (
                isinstance(owner, cst.Attribute) and owner.attr.value in ("dtype_policy", "_dtype_policy")
                and _is_self(owner.value)
            ):
                cls = where.loc.scope.enclosing_class()
                layer = self.regions.layer_class(cls.node) if cls is not None else None
                if layer is None or not layer.sixteen_bit:
                    return None
                if attr in _COMPUTE_DTYPE_ATTRS:
                    return LOW
                if attr in _VARIABLE_DTYPE_ATTRS:
                    return F32
                return None
            if isinstance(owner, cst.Call) and self.ctx.names.resolve(owner.func) & GLOBAL_POLICY_FUNCTIONS:
                # global_policy().compute_dtype: only inside code that runs under it
                if self.region(where.loc) is None:
                    return None
                return LOW if attr == "compute_dtype" else F32 if attr == "variable_dtype" else None
            if attr in ("dtype", "base_dtype"):
                return self.kind(owner, where, depth + 1)
            return None
        if isinstance(expr, cst.Name):
            binding, reaching = self.reaching(expr, where)
            if binding is None or not reaching or binding.value is None:
                return None
            if binding.kind not in ("assign", "annassign"):
                return None
            bw = self.binding_where(binding)
            return self.dtype_kind(binding.value, bw, depth + 1) if bw is not None else None
        return None

    # -- what the rules ask --------------------------------------------------------------------
    def mismatches_in_context(self, site: OperationSite) -> Iterator[Mismatch]:
        """:meth:`mismatches` as the code stands, then with the arguments each caller
        in this file passes (a float32 mask meets 16-bit scores inside the callee)."""
        yield from self.mismatches(site)
        for env in self.contexts(site.where.loc.scope):
            with self._under(env):
                yield from list(self.mismatches(site))

    def origin_in_context(self, mismatch: Mismatch) -> Optional[Tuple[cst.CSTNode, Where]]:
        """:meth:`origin` of a mismatch, under the caller's arguments it was found with."""
        with self._under(mismatch.env):
            return self.origin(mismatch.f32, mismatch.where)

    def mismatches(self, site: OperationSite) -> Iterator[Mismatch]:
        """Every place in a site where a float32 tensor meets a 16-bit one in a TF op."""
        if isinstance(site.node, cst.Call):
            found = self.combining(site.node)
            if found is None or not found[1]:
                return
            operands = self.operands(site.node)
            kinds = [(o, self.kind(o, site.where)) for o in operands]
            f32 = [o for o, k in kinds if k == F32]
            low = [o for o, k in kinds if k == LOW]
            if f32 and low:
                yield Mismatch(site.node, f32[0], low[0], site.where, self._env)
            return
        if isinstance(site.node, cst.AugAssign):
            node = site.node
            yield from self._binop_mismatches(node.value, site.where)
            target, value = self.kind(node.target, site.where), self.kind(node.value, site.where)
            if {target, value} == {F32, LOW}:
                f32_side, low_side = (node.target, node.value) if target == F32 else (node.value, node.target)
                yield Mismatch(node, f32_side, low_side, site.where, self._env)
            return
        assert isinstance(site.node, cst.BaseExpression)  # an outermost arithmetic expression
        yield from self._binop_mismatches(site.node, site.where)

    def _binop_mismatches(self, node: cst.BaseExpression, where: Where) -> Iterator[Mismatch]:
        if isinstance(node, cst.UnaryOperation):
            yield from self._binop_mismatches(node.expression, where)
            return
        if not isinstance(node, cst.BinaryOperation) or not isinstance(node.operator, ARITHMETIC):
            return
        yield from self._binop_mismatches(node.left, where)
        yield from self._binop_mismatches(node.right, where)
        left, right = self.kind(node.left, where), self.kind(node.right, where)
        if {left, right} == {F32, LOW}:
            f32, low = (node.left, node.right) if left == F32 else (node.right, node.left)
            yield Mismatch(node, f32, low, where, self._env)

    def literals(self, site: OperationSite, operators: Optional[FrozenSet[str]] = None) -> Iterator[Tuple[cst.BaseExpression, FrozenSet[float], Optional[str]]]:
        """Numeric constants in a site with the kind of the tensor they combine with.

        A constant takes the kind of its sibling operand, or, when that is unknown,
        of its parent's sibling (``scores + (1 - mask) * -1e9``: -1e9 meets
        ``scores``). ``operators`` limits which combining calls count (by short name).
        """
        node, where = site.node, site.where
        if isinstance(node, cst.Call):
            found = self.combining(node)
            if found is None or (operators is not None and _short(node, self) not in operators):
                return
            operands = self.operands(node)
            context = self._context(operands, where)
            for operand in operands:
                values = self.constant(operand, where)
                if values is not None:
                    yield operand, values, context
            return
        if isinstance(node, cst.AugAssign):
            yield from self._literals(node.value, where, self.kind(node.target, where))
            return
        context = None
        outer = self._arg_of.get(node)
        if outer is not None and (operators is None or _short(outer[0], self) in operators):
            context = self._context(self.operands(outer[0]), outer[1])
        assert isinstance(node, cst.BaseExpression)  # an outermost arithmetic expression
        yield from self._literals(node, where, context)

    def literals_in_context(self, site: OperationSite, operators: Optional[FrozenSet[str]] = None
                            ) -> Iterator[Tuple[cst.BaseExpression, FrozenSet[float], Optional[str]]]:
        """:meth:`literals` as the code stands, then with the arguments each caller in
        this file passes (``apply_mask(scores, mask)``: -1e9 meets 16-bit scores)."""
        yield from self.literals(site, operators)
        for env in self.contexts(site.where.loc.scope):
            with self._under(env):
                yield from list(self.literals(site, operators))

    def _context(self, operands: List[cst.BaseExpression], where: Where) -> Optional[str]:
        kinds = {self.kind(o, where) for o in operands} - {None}
        return next(iter(kinds)) if len(kinds) == 1 else None

    def _literals(self, node: cst.BaseExpression, where: Where, context: Optional[str],
                  depth: int = 0) -> Iterator[Tuple[cst.BaseExpression, FrozenSet[float], Optional[str]]]:
        if depth > _MAX_DEPTH:
            return
        values = self.constant(node, where)
        if values is not None:
            yield node, values, context
            return
        if isinstance(node, cst.UnaryOperation):
            yield from self._literals(node.expression, where, context, depth + 1)
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, ARITHMETIC):
            left, right = self.kind(node.left, where), self.kind(node.right, where)
            yield from self._literals(node.left, where, right or context, depth + 1)
            yield from self._literals(node.right, where, left or context, depth + 1)
        elif isinstance(node, cst.Name) and context is not None and self.kind(node, where) is None:
            # ``adder = (1.0 - mask) * -1e9; scores += adder``: the constant meets
            # ``scores`` through the variable
            binding, reaching = self.reaching(node, where)
            if binding is not None and reaching and binding.kind == "assign" and isinstance(binding.value, cst.BinaryOperation):
                bw = self.binding_where(binding)
                if bw is not None:
                    yield from self._literals(binding.value, bw, context, depth + 1)

    def origin(self, expr: cst.BaseExpression, where: Where, depth: int = 0) -> Optional[Tuple[cst.CSTNode, Where]]:
        """The expression that created a float32 tensor (a cast, constant, variable...),
        followed through names, ``self`` attributes, containers and helpers' returns."""
        if depth > _MAX_DEPTH or self.kind(expr, where) != F32:
            return None
        if isinstance(expr, cst.Name):
            for binding in self.candidates(expr, where):
                if binding.kind == "param":
                    return self._argument_origin(binding, depth)
                if binding.value is None and binding.kind == "assign":
                    for value, at, env in self.unpacked(binding, depth) or []:
                        with self._under(env):
                            if self.kind(value, at) == F32:
                                return self.origin(value, at, depth + 1)
                    return None
                bw = self.binding_where(binding)
                if binding.value is not None and bw is not None and self.kind(binding.value, bw) == F32:
                    return self.origin(binding.value, bw, depth + 1)
            return None
        if isinstance(expr, cst.Attribute):
            values = self._attribute_values(expr, where)
            for value, at in values or []:
                if self._attribute_value_kind(value, at, where, depth) == F32:
                    with self._under(()):
                        return self.origin(value, at, depth + 1) or (value, at)
            return None
        if isinstance(expr, cst.Subscript):
            return self._item_origin(expr.value, where, depth + 1) or self.origin(expr.value, where, depth + 1)
        if isinstance(expr, cst.UnaryOperation):
            return self.origin(expr.expression, where, depth + 1)
        if isinstance(expr, cst.IfExp):
            for side in (expr.body, expr.orelse):
                if self.kind(side, where) == F32:
                    return self.origin(side, where, depth + 1)
            return None
        if isinstance(expr, cst.BinaryOperation):
            for side in (expr.left, expr.right):
                if self.kind(side, where) == F32:
                    return self.origin(side, where, depth + 1)
            return None
        if isinstance(expr, cst.Call):
            if self._called_layer(expr.func, where) is not None:
                return None
            helper = self.helper(expr, where)
            if helper is not None:
                function, offset = helper
                env = self.call_env(function, offset, expr, where, depth)
                for kind, value, at in self._returned(helper, expr, where, depth):
                    if kind == F32:
                        with self._under(env):
                            return self.origin(value, at, depth + 1)
                return None
            names = self.ctx.names.resolve(expr.func)
            if names & (CASTS | CONSTANTS | FLOAT32_BY_DEFAULT | LIKE_OPS | FILL_OPS | RANGE_OPS):
                if names & LIKE_OPS and self._dtype_argument(expr, names) is None and expr.args:
                    return self.origin(expr.args[0].value, where, depth + 1)
                return expr, where
            if names & IMAGE_RESIZE:
                method = positional_or_keyword(expr, 2, "method")
                if method is None or not self._is_nearest(method, where):
                    return expr, where
            for arg in expr.args:
                if (arg.keyword is None or arg.keyword.value in _TENSOR_KEYWORDS) \
                        and self.kind(arg.value, where) == F32:
                    return self.origin(arg.value, where, depth + 1)
            if any(arg.keyword is None for arg in expr.args):
                return expr, where  # ``tf.sqrt(2.0)``: the op makes it from Python floats
        return None

    def _argument_origin(self, param: Binding, depth: int) -> Optional[Tuple[cst.CSTNode, Where]]:
        """Where the argument a helper's caller passed for ``param`` was made."""
        for key, kind, index in self._env:
            if key == id(param.node) and kind == F32 and index >= 0:  # -1: another module's argument
                argument, at, env = self._arguments[index]
                with self._under(env):
                    return self.origin(argument, at, depth + 1)
        return None

    def _item_origin(self, container: cst.BaseExpression, where: Where, depth: int
                     ) -> Optional[Tuple[cst.CSTNode, Where]]:
        """The float32 item of a list or dict attribute (``self.masks[i]``)."""
        if depth > _MAX_DEPTH:
            return None
        items: List[Tuple[cst.BaseExpression, Where]] = []
        if isinstance(container, cst.Attribute):
            cls = where.loc.scope.enclosing_class()
            for value, at in self._attribute_values(container, where) or []:
                found = self._item_origin(value, at, depth + 1)
                if found is not None:
                    return found
            items = list(self._appends.get((id(cls), container.attr.value), [])) if cls is not None else []
        elif isinstance(container, cst.Name):
            found = self.assigned(container, where)
            return self._item_origin(found[0], found[1], depth + 1) if found is not None else None
        elif isinstance(container, (cst.List, cst.Tuple, cst.Set)):
            items = [(e.value, where) for e in container.elements]
        elif isinstance(container, cst.Dict):
            items = [(e.value, where) for e in container.elements if isinstance(e, cst.DictElement)]
        elif isinstance(container, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            items = [(container.elt, where)]
        elif isinstance(container, cst.DictComp):
            items = [(container.value, where)]
        with self._under(()):
            for item, at in items:
                found = self.origin(item, at, depth + 1)
                if found is not None:
                    return found
        return None

    # -- what another module asks (``tensor_imports``) ------------------------------------
    def calls(self) -> List[Tuple[cst.Call, Where]]:
        """The calls that may run a function or a layer of the file or of another module."""
        return list(self._calls)

    def returned_under(self, function: Scope, env: Env) -> Set[Optional[str]]:
        """The kinds a function of this file returns with its parameters bound as ``env``."""
        returns = self._returns.get(id(function), [])
        if not returns or _decorated(function.node):
            return {None}
        with self._under(env):
            return {self.kind(value, at) for value, at in returns}

    def mismatches_under(self, function: Scope, env: Env) -> List[Mismatch]:
        """The mismatches of a function's own operations with its parameters bound as ``env``."""
        with self._under(env):
            return [m for site in self.sites if site.where.loc.scope is function for m in self.mismatches(site)]

    @contextmanager
    def _under(self, env: Env) -> Iterator[None]:
        """Judge code with a helper's parameters bound as ``env`` says."""
        saved, self._env = self._env, env
        try:
            yield
        finally:
            self._env = saved

    def takes_dtype(self, call: cst.Call) -> bool:
        """A creation or cast op whose dtype argument decides its result's dtype."""
        names = self.ctx.names.resolve(call.func)
        return bool(names & (CASTS | CONSTANTS | FLOAT32_BY_DEFAULT | LIKE_OPS | RANGE_OPS))

    def dtype_expression(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        """The dtype argument of a creation or cast call, if it has one."""
        return self._dtype_argument(call, self.ctx.names.resolve(call.func))
