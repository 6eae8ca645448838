"""MP506: a sum of squares, a high power, a norm or a product of sizes computed in float16."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.compute_regions import ComputeRegions
from mplint.analysis.tensor_kinds import LOW, TensorKinds, Where
from mplint.core.find_nodes import mentions
from mplint.rule.check import Check, Context, Needs
from mplint.rule.messages import snippet
from mplint.semantic.call_args import positional_or_keyword
from mplint.semantic.facts import PolicyState
from mplint.semantic.scopes import Scope
from mplint.semantic.vocabulary import (
    BOUNDED_FUNCTIONS, CASTS, NORMALIZING_LAYERS, POWER_FUNCTIONS, PRODUCT_FUNCTIONS, SATURATING_FUNCTIONS,
    SCALING_FUNCTIONS, SHAPE_FUNCTIONS,
    SQUARE_FUNCTIONS, SUM_FUNCTIONS, SUM_OF_SQUARES_FUNCTIONS,
)

if TYPE_CHECKING:  # pragma: no cover
    from mplint.core.prefilter import Prescan

_MAX_DEPTH = 12
#: ``self.add_loss(...)``/``self.add_metric(...)`` and metric state updates: MP505's sinks
_SINKS = frozenset({"add_loss", "add_metric", "assign_add", "assign", "assign_sub"})


class Float16SquareOverflow(Check):
    rule_id = "MP506"
    requires = (ComputeRegions, TensorKinds)

    #: under a mixed policy, or in a library's module (its users may set one)
    needs = Needs(mixed_policy=True, library=True)

    @classmethod
    def may_report(cls, file: "Prescan") -> bool:
        # every finding names a sum, a power, a norm or a shape
        return super().may_report(file) and file.has(b"shape", b"sum", b"pow", b"**", b"norm")

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        #: (node, what it computes, the 16-bit operand, where)
        self._sites: List[Tuple[cst.CSTNode, str, cst.BaseExpression, Where]] = []
        #: sizes multiplied: (product, where)
        self._products: List[Tuple[cst.BinaryOperation, Where]] = []
        #: calls inside the value handed to a sink MP505 judges (a sum reported there)
        self._in_sinks: Set[int] = set()
        #: nodes inside the argument of a saturating op (tanh, sigmoid, softmax)
        self._saturated: Set[int] = set()
        #: (a division or product, its two operands, where): a count cast to its partner's dtype
        self._meetings: List[Tuple[cst.CSTNode, cst.BaseExpression, cst.BaseExpression, Where]] = []

    # -- collection ------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _SINKS and node.args:
            for inner in _calls_in(node.args[0].value):
                self._in_sinks.add(id(inner))
        names = self.names.resolve(func)
        if not names or not node.args:
            return
        if names & SATURATING_FUNCTIONS:
            # ``tanh(c * (x + 0.044715 * x ** 3))`` (GELU's approximation): an inf saturates
            self._saturated.update(id(n) for n in _nodes_in(node.args[0].value))
        where = self.ctx.get(TensorKinds).here()
        first = node.args[0].value
        if names & SCALING_FUNCTIONS and len(node.args) >= 2:
            self._meetings.append((node, first, node.args[1].value, where))
        if names & SUM_FUNCTIONS:
            self._sites.append((node, "sum", first, where))
        elif names & SUM_OF_SQUARES_FUNCTIONS:
            self._sites.append((node, "norm", first, where))
        elif names & POWER_FUNCTIONS and len(node.args) >= 2:
            self._sites.append((node, "power", first, where))

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        where = self.ctx.get(TensorKinds).here()
        if isinstance(node.operator, cst.Power):
            self._sites.append((node, "power", node.left, where))
        elif isinstance(node.operator, cst.Multiply):
            self._products.append((node, where))
        if isinstance(node.operator, (cst.Multiply, cst.Divide)):
            self._meetings.append((node, node.left, node.right, where))

    # -- judgement -------------------------------------------------------------------------
    def finish(self) -> None:
        kinds = self.ctx.get(TensorKinds)
        reported: Set[int] = set()
        # powers first: a sum of cubes is reported once, at the cube
        ordered = sorted(self._sites, key=lambda site: site[1] != "power")
        for node, what, operand, where in ordered:
            if what == "sum":
                if id(node) in self._in_sinks:
                    continue  # MP505 reports a float16 sum that feeds a loss or metric
                squared = self._squared(operand, where, 0)
                if squared is None or id(squared) in reported:
                    continue
                operand = squared
            elif what == "power":
                if id(node) in self._saturated:
                    continue  # the op it feeds maps inf to a finite value
                exponent = node.right if isinstance(node, cst.BinaryOperation) else \
                    positional_or_keyword(node, 1, "y") if isinstance(node, cst.Call) else None
                values = kinds.constant(exponent, where) if exponent is not None else None
                if not values or min(values) < 3:
                    continue  # a square alone overflows only past 256; its sum is judged above
            if not self._low_unbounded(kinds, operand, where):
                continue
            # A library's squares and norms are not judged: how large they grow depends
            # on data the library never sees, while an image side is 256 or more.
            note = self._judged(where.loc.scope, library=False)
            if note is None:
                continue
            reported.add(id(operand))
            text = snippet(self.ctx.module.code_for_node(node), 48)
            effect = {
                "sum": "a sum of squares in float16 is inf past 65504 (a 1024-wide feature of magnitude 8 "
                       "is enough)",
                "norm": "the norm sums squares in float16, which is inf past 65504 (a 1024-wide feature of "
                        "magnitude 8 is enough; l2_normalize then returns zeros)",
                "power": "a cube in float16 is inf past 40 (41**3 = 68921 > 65504)",
            }[what]
            self.report(node, f"`{text}` is computed in float16{note}: {effect}; cast the operand to "
                              f"float32 first (and the result back to the compute dtype), or normalise it before")
        for product, where in self._products:
            if not (self._size(product.left, where, 0) and self._size(product.right, where, 0)):
                continue
            note = self._judged(where.loc.scope)
            if note is None:
                continue
            text = snippet(self.ctx.module.code_for_node(product), 48)
            self.report(product, f"`{text}` multiplies image sizes cast to the 16-bit compute dtype{note}: in "
                                 f"float16 256 x 256 = 65536 is already inf (max 65504); compute sizes in "
                                 f"float32 (or int32) and cast the result")
        self._counts_meeting_inputs()

    def _counts_meeting_inputs(self) -> None:
        """``loss / tf.cast(tf.reduce_prod(tf.shape(features)[1:]), loss.dtype)``: an
        element count cast to the dtype of the tensor it then divides, a tensor that
        a network handed to the function returns (its kind unknown here). Under float16 that
        dtype is float16, and a 64x64x256 feature map's count is inf there."""
        kinds = self.ctx.get(TensorKinds)
        for node, left, right, where in self._meetings:
            for side, other in ((left, right), (right, left)):
                owner = kinds.cast_to_network_dtype_of(side, where)
                if owner is None or not mentions(other, owner.value):
                    continue
                assert isinstance(side, cst.Call)
                if not self._count(side.args[0].value, where, 0) or kinds.regions.is_pipeline(where.loc):
                    continue
                if kinds.passed_kinds(owner, where) - {None}:
                    continue  # a caller in the file says which dtype it is
                note = self._judged(where.loc.scope, library=False)
                if note is None:
                    continue
                text = snippet(" ".join(self.ctx.module.code_for_node(side.args[0].value).split()), 48)
                self.report(side, f"the element count `{text}` is cast to `{owner.value}.dtype`, the dtype of "
                                  f"a network's output it divides or scales, float16{note}: a count past "
                                  f"65504 (a 64x64x16 feature map) is inf there; cast the count to float32 "
                                  f"and do the division in float32")
                break

    def _count(self, expr: cst.BaseExpression, where: Where, depth: int) -> bool:
        """A product of a tensor's sizes: ``tf.reduce_prod(tf.shape(x)[1:])``,
        ``np.prod(x.shape[1:])``, or a name bound to one."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, cst.Call) and self.names.resolve(expr.func) & PRODUCT_FUNCTIONS and expr.args:
            sizes = expr.args[0].value
            if isinstance(sizes, cst.Subscript) and all(isinstance(e.slice, cst.Slice) for e in sizes.slice):
                sizes = sizes.value  # a slice of the sizes: still several of them
            if isinstance(sizes, cst.Attribute) and sizes.attr.value == "shape":
                return True
            return isinstance(sizes, cst.Call) and bool(self.names.resolve(sizes.func) & SHAPE_FUNCTIONS)
        if isinstance(expr, cst.Name):
            return self._assigned(expr, where, lambda value, at: self._count(value, at, depth + 1))
        return False

    def _low_unbounded(self, kinds: TensorKinds, operand: cst.BaseExpression, where: Where) -> bool:
        """16-bit and not normalised before, as the code stands or with the arguments a
        caller in the file passes (``self._unit(x)`` of a 16-bit ``x``)."""
        for env in kinds.every_context(where.loc.scope):
            with kinds.under(env):
                if kinds.kind(operand, where) == LOW and not self._bounded(operand, where, 0):
                    return True
        return False

    def _judged(self, scope: Scope, library: bool = True) -> Optional[str]:
        """The note for a message when the code may run in float16, else None: under a
        mixed_float16 policy that reaches it, or (``library``) in a library's module,
        whose users may set one (the program model's library mode)."""
        policy: Optional[PolicyState] = self.facts.library_policy(scope) if library \
            else self.facts.mixed_policy(scope)
        if policy is None or not policy.float16:
            return None
        return policy.note

    def _squared(self, expr: cst.BaseExpression, where: Where, depth: int) -> Optional[cst.BaseExpression]:
        """The tensor squared by ``expr`` (``tf.square(x)``, ``x * x``, ``x ** 2``,
        ``tf.pow(x, 2)``), followed through names that certainly reach it."""
        if depth > _MAX_DEPTH:
            return None
        kinds = self.ctx.get(TensorKinds)
        if isinstance(expr, cst.Call) and expr.args:
            names = self.names.resolve(expr.func)
            if names & SQUARE_FUNCTIONS:
                return expr.args[0].value
            if names & POWER_FUNCTIONS and len(expr.args) >= 2:
                values = kinds.constant(expr.args[1].value, where)
                return expr.args[0].value if values and min(values) >= 2 else None
            return None
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.Power):
                values = kinds.constant(expr.right, where)
                return expr.left if values and min(values) >= 2 else None
            if isinstance(expr.operator, cst.Multiply):
                code = self.ctx.module.code_for_node
                return expr.left if code(expr.left).strip() == code(expr.right).strip() else None
            return None
        if isinstance(expr, cst.Name):
            found = kinds.assigned(expr, where)
            return None if found is None else self._squared(found[0], found[1], depth + 1)
        return None

    def _bounded(self, expr: cst.BaseExpression, where: Where, depth: int) -> bool:
        """Whether ``expr`` was normalised before: the output of a bounded op
        (softmax, sigmoid, tanh, l2_normalize), of a normalisation layer, or a division
        by its own norm."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, cst.Call):
            names = self.names.resolve(expr.func)
            if names & BOUNDED_FUNCTIONS:
                return True
            if self._normalizing_layer(expr.func, where):
                return True
            first = [a.value for a in expr.args if a.keyword is None]
            # ops that keep their input's scale (a reshape, a cast) keep it bounded
            return bool(first) and bool(names & CASTS or any(n.rsplit(".", 1)[-1] in (
                "reshape", "transpose", "expand_dims", "squeeze", "identity", "cast") for n in names)) \
                and self._bounded(first[0], where, depth + 1)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide):
            divisor = expr.right
            return isinstance(divisor, cst.Call) and bool(
                self.names.resolve(divisor.func) & SUM_OF_SQUARES_FUNCTIONS)
        if isinstance(expr, cst.Subscript):
            return self._bounded(expr.value, where, depth + 1)
        if isinstance(expr, cst.Name):
            return self._assigned(expr, where, lambda value, at: self._bounded(value, at, depth + 1))
        return False

    def _normalizing_layer(self, func: cst.BaseExpression, where: Where) -> bool:
        """``self.norm(x)`` where ``self.norm = LayerNormalization(...)``, or
        ``LayerNormalization(...)(x)``."""
        if isinstance(func, cst.Call):
            return bool(self.names.resolve(func.func) & NORMALIZING_LAYERS)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            cls = where.loc.scope.enclosing_class()
            bindings = cls.attributes.get(func.attr.value, []) if cls is not None else []
            return len(bindings) == 1 and isinstance(bindings[0].value, cst.Call) and bool(
                self.names.resolve(bindings[0].value.func) & NORMALIZING_LAYERS)
        return False

    def _size(self, expr: cst.BaseExpression, where: Where, depth: int) -> bool:
        """A tensor size (``tf.shape(x)[1]``, ``x.shape[1]``) cast to a 16-bit dtype:
        the compute dtype, or float16 itself."""
        if depth > _MAX_DEPTH:
            return False
        kinds = self.ctx.get(TensorKinds)
        if isinstance(expr, cst.Call):
            if not self.names.resolve(expr.func) & CASTS or not expr.args:
                return False
            dtype = kinds.dtype_expression(expr)
            if dtype is None or not (kinds.dtype_kind(dtype, where) == LOW or _compute_dtype(dtype)):
                return False
            values = self.ctx.values.values(dtype, where.loc)
            if values is not None and values != frozenset({"float16"}):
                return False  # bfloat16 has float32's range
            return self._is_shape(expr.args[0].value, where, 0)
        if isinstance(expr, cst.Subscript):
            return self._size(expr.value, where, depth + 1)  # sizes = tf.cast(tf.shape(x), ...); sizes[1]
        if isinstance(expr, cst.Name):
            binding, reaching = kinds.reaching(expr, where)
            if binding is None or not reaching or binding.kind != "assign":
                return False
            at = kinds.binding_where(binding)
            if binding.value is None and isinstance(binding.node, cst.Assign) and at is not None:
                return self._shape_helper(binding.node.value, at)  # heights, widths = ...
            return binding.value is not None and at is not None and self._size(binding.value, at, depth + 1)
        return False

    def _shape_helper(self, value: cst.BaseExpression, where: Where) -> bool:
        """``heights, widths = get_images_shape(images, dtype=self.compute_dtype)``: a
        helper named for shapes or sizes, asked for them in a 16-bit dtype."""
        if not isinstance(value, cst.Call):
            return False
        name = value.func.attr.value if isinstance(value.func, cst.Attribute) else \
            value.func.value if isinstance(value.func, cst.Name) else ""
        if "shape" not in name and "size" not in name:
            return False
        dtype = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "dtype"), None)
        if dtype is None:
            return False
        if _compute_dtype(dtype):
            return True
        return self.ctx.values.values(dtype, where.loc) == frozenset({"float16"})

    def _is_shape(self, expr: cst.BaseExpression, where: Where, depth: int) -> bool:
        """``tf.shape(x)[i]``, ``x.shape[i]``, or a name bound to one."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, cst.Subscript):
            value = expr.value
            if isinstance(value, cst.Attribute) and value.attr.value == "shape":
                return True
            if isinstance(value, cst.Call) and self.names.resolve(value.func) & SHAPE_FUNCTIONS:
                return True
            return self._is_shape(value, where, depth + 1) if isinstance(value, cst.Name) else False
        if isinstance(expr, cst.Call):
            return bool(self.names.resolve(expr.func) & SHAPE_FUNCTIONS)
        if isinstance(expr, cst.Name):
            return self._assigned(expr, where, lambda value, at: self._is_shape(value, at, depth + 1))
        return False

    def _assigned(self, name: cst.Name, where: Where,
                  holds: Callable[[cst.BaseExpression, Where], bool]) -> bool:
        """Whether the one plain assignment reaching ``name`` binds a value that ``holds``."""
        found = self.ctx.get(TensorKinds).assigned(name, where)
        return found is not None and holds(*found)


def _compute_dtype(expr: cst.BaseExpression) -> bool:
    """``self.compute_dtype``: the layer's compute dtype, 16-bit under a mixed policy,
    whether or not the analysis knows the class (its base may live in another module)."""
    return isinstance(expr, cst.Attribute) and expr.attr.value in ("compute_dtype", "_compute_dtype") \
        and isinstance(expr.value, cst.Name) and expr.value.value == "self"


def _nodes_in(node: cst.CSTNode) -> List[cst.CSTNode]:
    """Every node of an expression (a small subtree: one argument)."""
    out: List[cst.CSTNode] = []
    todo: List[cst.CSTNode] = [node]
    while todo:
        current = todo.pop()
        out.append(current)
        todo.extend(current.children)
    return out


def _calls_in(node: cst.CSTNode) -> List[cst.Call]:
    """Every call in an expression (a sink's argument)."""
    return [n for n in _nodes_in(node) if isinstance(n, cst.Call)]
