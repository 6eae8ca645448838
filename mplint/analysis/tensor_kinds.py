"""
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

The inference is layered, one job per module: :mod:`tensor_walk` (what the walk
records, which binding reaches a use), :mod:`tensor_helpers` (calls into the file's
own functions and layers), :mod:`tensor_dtypes` (the kind of an expression),
:mod:`tensor_constants` (numbers), and this module, what the rules ask.
"""

from __future__ import annotations

from typing import ContextManager, FrozenSet, Iterator, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.dtype_kinds import F32, LOW
from mplint.analysis.tensor_calls import ARITHMETIC, TENSOR_KEYWORDS
from mplint.analysis.tensor_constants import ConstantValues
from mplint.analysis.tensor_sites import MAX_DEPTH, Env, Mismatch, OperationSite, Where
from mplint.analysis.tensor_syntax import decorated, loop_iterable
from mplint.semantic.scopes import Binding, Scope
from mplint.semantic.vocabulary import (
    CASTS, CONSTANTS, CONVERSIONS, FILL_OPS, FLOAT32_BY_DEFAULT, IMAGE_RESIZE, INPUT_FUNCTIONS, LIKE_OPS, RANGE_OPS, TF_VARIABLES,
)


def _short(call: cst.Call, kinds: "TensorKinds") -> str:
    for name in kinds.ctx.names.resolve(call.func):
        return name.rsplit(".", 1)[-1]
    return ""


class TensorKinds(ConstantValues):
    """What the numeric rules ask: mismatches, the literals in a site, origins."""

    def every_context(self, scope: Scope) -> List[Env]:
        """The code as it stands (``()``), then each set of arguments the file's callers
        give the function ``scope`` is in (:meth:`contexts`): judge under each with
        :meth:`under`."""
        return [()] + self.contexts(scope)

    def under(self, env: Env) -> ContextManager[None]:
        """Judge code with the parameters bound as ``env`` (one of :meth:`every_context`)."""
        return self._under(env)

    def function_returns(self, function: Scope) -> List[Tuple[cst.BaseExpression, Where]]:
        """The values a function of this file returns, each with where."""
        return list(self._returns.get(id(function), []))

    def helper_returns(self, call: cst.Call, where: Where
                       ) -> Optional[Tuple[Env, List[Tuple[cst.BaseExpression, Where]]]]:
        """What a call of the file's own function or method returns: the values of its
        ``return``s, and the arguments (an ``Env``) to judge them under; None when the
        call runs no such function (or one that may return anything)."""
        helper = self.helper(call, where)
        if helper is None:
            return None
        function, offset = helper
        returns = self._returns.get(id(function), [])
        if not returns:
            return None
        return self.call_env(function, offset, call, where, 0), list(returns)

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
        for node, values, context, _ in self.literals_with_callers(site, operators):
            yield node, values, context

    def literals_with_callers(self, site: OperationSite, operators: Optional[FrozenSet[str]] = None
                              ) -> Iterator[Tuple[cst.BaseExpression, FrozenSet[float], Optional[str], Optional[str]]]:
        """:meth:`literals_in_context`, each with where the call of another module that
        gives its context is written (``blocks.py:42``; None for this file's own)."""
        for node, values, context in self.literals(site, operators):
            yield node, values, context, None
        for env in self.contexts(site.where.loc.scope):
            caller = self.foreign_caller(env)
            with self._under(env):
                for node, values, context in list(self.literals(site, operators)):
                    yield node, values, context, caller

    def _context(self, operands: List[cst.BaseExpression], where: Where) -> Optional[str]:
        kinds = {self.kind(o, where) for o in operands} - {None}
        return next(iter(kinds)) if len(kinds) == 1 else None

    def _literals(self, node: cst.BaseExpression, where: Where, context: Optional[str],
                  depth: int = 0) -> Iterator[Tuple[cst.BaseExpression, FrozenSet[float], Optional[str]]]:
        if depth > MAX_DEPTH:
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
        if depth > MAX_DEPTH or self.kind(expr, where) != F32:
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
                node = binding.node
                if binding.kind == "augassign" and isinstance(node, cst.AugAssign) and bw is not None:
                    # ``patches += pos_emb``: float32 from before, or from what is added
                    for side in (node.target, node.value):
                        if self.kind(side, bw) == F32:
                            return self.origin(side, bw, depth + 1)
                    return None
                iterated = loop_iterable(binding)
                if iterated is not None and bw is not None:  # ``for token in self.tokens``
                    return self._item_origin(iterated, bw, depth + 1)
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
            layer = self._called_layer(expr.func, where)
            if layer is not None:  # a float32 layer output is made by the call
                return (expr, where) if layer == F32 else None
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
            if names & TF_VARIABLES:
                return expr, where  # a raw variable: made float32 there, whatever its initial value
            if names & INPUT_FUNCTIONS:
                return expr, where  # a model input, however its shape is passed (``Input(shape=...)``)
            if names & (CASTS | CONSTANTS | FLOAT32_BY_DEFAULT | LIKE_OPS | FILL_OPS | RANGE_OPS):
                if names & (LIKE_OPS | CONVERSIONS) and self._dtype_argument(expr, names) is None and expr.args:
                    return self.origin(expr.args[0].value, where, depth + 1)
                return expr, where
            if names & IMAGE_RESIZE and self.resizes_nearest(expr, names, where.loc) is False:
                return expr, where
            for arg in expr.args:
                if (arg.keyword is None or arg.keyword.value in TENSOR_KEYWORDS) \
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
        if depth > MAX_DEPTH:
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

    def returned_under(self, function: Scope, env: Env, part: Tuple[int, ...] = ()) -> Set[Optional[str]]:
        """The kinds a function of this file returns with its parameters bound as
        ``env`` (of item ``part`` of each value it returns, as unpacking takes it)."""
        returns = self._returns.get(id(function), [])
        if not returns or decorated(function.node):
            return {None}
        with self._under(env):
            if not part:
                return {self.kind(value, at) for value, at in returns}
            out: Set[Optional[str]] = set()
            for value, at in returns:
                parts = self.parts(value, at, part)
                if parts is None:
                    return {None}
                for item, item_at, item_env in parts:
                    with self._under(item_env):
                        out.add(self.kind(item, item_at))
            return out

    def mismatches_under(self, function: Scope, env: Env) -> List[Mismatch]:
        """The mismatches of a function's own operations with its parameters bound as ``env``."""
        with self._under(env):
            return [m for site in self.sites if site.where.loc.scope is function for m in self.mismatches(site)]
