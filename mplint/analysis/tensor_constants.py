"""Numeric constants in 16-bit code: literals, names set once, a dtype's limits,
and a constant made a 16-bit tensor on purpose (MP501/MP502 read them)."""

from __future__ import annotations

from typing import FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.dtype_kinds import F32, LOW
from mplint.analysis.module_constants import imported_number
from mplint.analysis.tensor_dtypes import DtypeInference
from mplint.analysis.tensor_sites import MAX_DEPTH, Where
from mplint.analysis.tensor_syntax import is_none, is_self
from mplint.core.find_nodes import find_all
from mplint.semantic.call_args import positional_or_keyword
from mplint.semantic.scopes import Binding
from mplint.semantic.vocabulary import (
    CASTS, CONSTANTS, DEFAULT_EPSILON, DTYPE_LIMITS, DTYPE_NAMES, DTYPE_PRESERVING_OPS, EPSILON_FUNCTIONS, FILL_OPS,
    FINFO_FUNCTIONS,
    LIMIT_ATTRIBUTES, SET_EPSILON_FUNCTIONS, SIXTEEN_BIT_DTYPES, SIXTEEN_BIT_NAMES, TF_VARIABLES,
)


class ConstantValues(DtypeInference):
    """The numbers an expression certainly holds, and where they are written."""

    #: whether the file calls ``set_epsilon`` (worked out on first need)
    _epsilon_set: Optional[bool] = None

    def constant(self, expr: cst.BaseExpression, where: Where) -> Optional[FrozenSet[float]]:
        """The numeric values of a constant expression, including ``self.eps`` set once, a
        dtype's limit (``tf.float32.min``, ``np.finfo(np.float32).max``), and a constant made
        a 16-bit tensor on purpose (``tf.constant(-1e9, dtype=scores.dtype)``,
        ``tf.cast(-1e9, x.dtype)``, ``tf.fill(shape, ...)`` of one)."""
        folded = self._folded(expr, where)
        if folded is not None:
            # a float32 tensor of a number is no literal the op converts: it clashes
            # with a 16-bit operand (MP504's), whatever number it holds
            return frozenset({folded}) if self.kind(expr, where) != F32 else None
        if isinstance(expr, cst.Call):
            return self._made_constant(expr, where)
        if isinstance(expr, cst.Subscript):
            return None
        if isinstance(expr, cst.IfExp):
            arm = self._arm_under_sixteen_bits(expr)
            if arm is not None:
                return self.constant(arm, where)
        if isinstance(expr, cst.Name):  # ``neg = tf.fill(shape, tf.cast(-1e9, x.dtype))``
            binding, reaching = self.reaching(expr, where)
            if binding is not None and reaching and binding.kind == "assign" \
                    and isinstance(binding.value, cst.Call):
                bw = self.binding_where(binding)
                return self._made_constant(binding.value, bw) if bw is not None else None
            if binding is not None and reaching and binding.kind == "assign" \
                    and isinstance(binding.value, cst.IfExp) and self._arm_under_sixteen_bits(binding.value):
                bw = self.binding_where(binding)
                return self.constant(binding.value, bw) if bw is not None else None
        limit = self._dtype_limit(expr)
        if limit is not None:
            return frozenset({limit})
        found = self.ctx.values.values(expr, where.loc)
        if found is None and isinstance(expr, cst.Attribute):
            binding = self._self_attribute(expr, where) or self._class_constant(expr, where)
            if binding is not None and binding.value is not None and binding.scope is not None:
                found = self.ctx.values.values(binding.value, binding.location())
                if found is None:
                    found = self._default_filled(binding)
        if found is None and self._unbound_head(expr, where):
            imported = imported_number(self.ctx, expr)  # ``from config import NEG_INF``
            found = None if imported is None else frozenset({imported[0]})
        if not found or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in found):
            return None
        return found  # type: ignore[return-value]

    def _folded(self, expr: cst.BaseExpression, where: Where, depth: int = 0) -> Optional[float]:
        """The number an expression of Keras's fuzz factor or of a tensor made from a
        number folds to (``K.epsilon() / 10``, ``tf.Variable(20.0) ** 2``, ``tf.cast(beta
        ** 2, x.dtype)`` after ``beta = tf.constant(20.0)``); None for any other (plain
        numbers are the value analysis's)."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, cst.Name):
            binding, reaching = self.reaching(expr, where)
            bw = self.binding_where(binding) if binding is not None and reaching and binding.kind == "assign" \
                and binding.value is not None else None
            return self._folded(binding.value, bw, depth + 1) if bw is not None and binding is not None \
                and binding.value is not None else None
        if isinstance(expr, cst.Call):
            made = self._number_tensor(expr, where, depth)
            if made is not None:
                return made
            if expr.args or not self.ctx.names.resolve(expr.func) & EPSILON_FUNCTIONS or self._sets_epsilon():
                return None
            return DEFAULT_EPSILON
        if isinstance(expr, cst.BinaryOperation) and isinstance(
                expr.operator, (cst.Multiply, cst.Divide, cst.Add, cst.Subtract, cst.Power)):
            sides = []
            for side in (expr.left, expr.right):
                value = self._folded(side, where, depth + 1)
                if value is None:
                    found = self.ctx.values.values(side, where.loc)
                    numbers = [v for v in found or () if isinstance(v, (int, float)) and not isinstance(v, bool)]
                    if not found or len(found) != 1 or len(numbers) != 1:
                        return None
                    value = float(numbers[0])
                sides.append(value)
            if not any(self._folded(side, where, depth + 1) is not None for side in (expr.left, expr.right)):
                return None  # plain numbers: the value analysis has them
            left, right = sides
            try:
                if isinstance(expr.operator, cst.Multiply):
                    return left * right
                if isinstance(expr.operator, cst.Divide):
                    return left / right
                if isinstance(expr.operator, cst.Add):
                    return left + right
                if isinstance(expr.operator, cst.Subtract):
                    return left - right
                return float(left ** right)
            except (ZeroDivisionError, OverflowError):
                return None
        return None

    def _number_tensor(self, call: cst.Call, where: Where, depth: int) -> Optional[float]:
        """The number a float tensor made from one number holds (``tf.Variable(20.0)``,
        ``tf.constant(1e4)``, ``tf.cast(beta ** 2, x.dtype)``): the value is kept by a
        float dtype, so it folds like the number; None for any other call, or one whose
        dtype is not known to be a float (an integer cast truncates)."""
        names = self.ctx.names.resolve(call.func)
        if names & TF_VARIABLES:
            value = positional_or_keyword(call, 0, "initial_value")
        elif names & (CONSTANTS | CASTS):
            value = self._constant_argument(call)
        else:
            return None
        if value is None or self.kind(call, where) is None:
            return None
        folded = self._folded(value, where, depth + 1)
        if folded is not None:
            return folded
        found = self.ctx.values.values(value, where.loc)
        numbers = [v for v in found or () if isinstance(v, (int, float)) and not isinstance(v, bool)]
        return float(numbers[0]) if found is not None and len(found) == 1 and len(numbers) == 1 else None

    def cast_to_input_dtype(self, expr: cst.BaseExpression, where: Where
                            ) -> Optional[Tuple[float, cst.BaseExpression, cst.Name]]:
        """A number made a tensor of a parameter's dtype on purpose (``beta =
        tf.cast(20.0 ** 4, x.dtype)``, ``tf.constant(-1e9, dtype=x.dtype)``) where the
        parameter's kind is not known here: the number, where it is written, and the
        parameter. The author casts to the input's dtype because the input is the
        compute dtype, so the number takes float16 wherever the input is float16."""
        call: Optional[cst.BaseExpression] = expr
        at: Optional[Where] = where
        if isinstance(expr, cst.Name):
            binding, reaching = self.reaching(expr, where)
            if binding is None or not reaching or binding.kind != "assign":
                return None
            call, at = binding.value, self.binding_where(binding)
        if not isinstance(call, cst.Call) or at is None:
            return None
        value = self._constant_argument(call)
        dtype = self.dtype_expression(call)
        if value is None or not isinstance(dtype, cst.Attribute) or dtype.attr.value != "dtype" \
                or not isinstance(dtype.value, cst.Name) or self.kind(dtype.value, at) is not None:
            return None
        param, reaching = self.reaching(dtype.value, at)
        if param is None or not reaching or param.kind != "param":
            return None
        folded = self._folded(value, at)
        if folded is None:
            found = self.ctx.values.values(value, at.loc)
            numbers = [v for v in found or () if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if found is None or len(found) != 1 or len(numbers) != 1:
                return None
            folded = float(numbers[0])
        return folded, self.written_constant(value, at), dtype.value

    def cast_to_network_dtype_of(self, call: cst.BaseExpression, where: Where) -> Optional[cst.Name]:
        """The tensor whose dtype a cast takes (``tf.cast(count, loss.dtype)``) when that
        tensor's kind is unknown here and it is what a network handed to the function
        returns (``loss = tf.square(loss_network(images) - ...)``), through arithmetic and
        ops that keep the dtype. Under a mixed policy a network computes in float16, and
        the author casts for that dtype (labels, a parameter alone, may be float32)."""
        if not isinstance(call, cst.Call) or not self.ctx.names.resolve(call.func) & CASTS:
            return None
        dtype = self.dtype_expression(call)
        if not isinstance(dtype, cst.Attribute) or dtype.attr.value != "dtype" \
                or not isinstance(dtype.value, cst.Name) or self.kind(dtype.value, where) is not None:
            return None
        return dtype.value if self._network_output(dtype.value, where, 0) else None

    def _network_output(self, expr: cst.BaseExpression, where: Where, depth: int) -> bool:
        if depth > MAX_DEPTH:
            return False
        if isinstance(expr, cst.Name):
            found = self.assigned(expr, where)
            return found is not None and self._network_output(found[0], found[1], depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            return self._network_output(expr.left, where, depth + 1) \
                or self._network_output(expr.right, where, depth + 1)
        if isinstance(expr, cst.Call):
            if isinstance(expr.func, cst.Name):  # ``loss_network(images)``: a network handed in
                binding, reaching = self.reaching(expr.func, where)
                if binding is not None and reaching and binding.kind == "param":
                    return True
            last = {name.rsplit(".", 1)[-1] for name in self.ctx.names.resolve(expr.func)}
            first = [a.value for a in expr.args if a.keyword is None]
            return bool(first and last & DTYPE_PRESERVING_OPS) \
                and self._network_output(first[0], where, depth + 1)
        return False

    def passed_kinds(self, param: cst.Name, where: Where) -> Set[Optional[str]]:
        """The kinds the file's own calls of the function ``where`` is in hand its
        parameter ``param`` (any caller, in a compute region or not; None for one that
        leaves it unknown): ``float32_inputs(tf.cast(x, tf.float32))``."""
        binding, _ = self.reaching(param, where)
        if binding is None or binding.kind != "param" or binding.scope is None:
            return set()
        found: Set[Optional[str]] = set()
        for call, at, offset in self._caller_map().get(id(binding.scope), []):
            env = self.call_env(binding.scope, offset, call, at, 0)
            kinds = [kind for node, kind, _ in env if node == id(binding.node)]
            found.add(kinds[0] if kinds else None)
        return found

    def _sets_epsilon(self) -> bool:
        """The file calls ``set_epsilon``: its ``epsilon()`` is whatever that set."""
        if self._epsilon_set is None:
            self._epsilon_set = any(
                self.ctx.names.resolve(node.func) & SET_EPSILON_FUNCTIONS
                for node in _calls(self.ctx.module))
        return self._epsilon_set

    def _default_filled(self, binding: Binding) -> Optional[FrozenSet[float]]:
        """``self.epsilon = epsilon`` after ``if epsilon is None: epsilon = K.epsilon() **
        2``: the number a layer built with the parameter's default uses."""
        value = binding.value
        at = self.binding_where(binding)
        if not isinstance(value, cst.Name) or at is None:
            return None
        found: Optional[FrozenSet[float]] = None
        for candidate in self.candidates(value, at):
            if candidate.kind == "param":
                param = candidate.node
                if not isinstance(param, cst.Param) or param.default is None or not is_none(param.default):
                    return None
                continue
            where = self.binding_where(candidate)
            if candidate.kind != "assign" or candidate.value is None or where is None:
                return None
            folded = self._folded(candidate.value, where)
            if folded is None:
                return None
            found = (found or frozenset()) | {folded}
        return found

    def _arm_under_sixteen_bits(self, choice: cst.IfExp) -> Optional[cst.BaseExpression]:
        """The arm a dtype test picks for a 16-bit tensor: ``65504.0 if x.dtype ==
        "float16" else 1e9`` holds 65504.0 where it meets float16 (the constant only
        matters there); None when the test is not about a 16-bit dtype."""
        test = choice.test
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            return None
        target = test.comparisons[0]
        if not (self._names_sixteen_bits(target.comparator) and _reads_dtype(test.left)
                or self._names_sixteen_bits(test.left) and _reads_dtype(target.comparator)):
            return None
        if isinstance(target.operator, (cst.Equal, cst.Is, cst.In)):
            return choice.body
        if isinstance(target.operator, (cst.NotEqual, cst.IsNot, cst.NotIn)):
            return choice.orelse
        return None

    def _names_sixteen_bits(self, expr: cst.BaseExpression) -> bool:
        """``"float16"``, ``tf.float16``, or a tuple of such names."""
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            return bool(expr.elements) and all(self._names_sixteen_bits(e.value) for e in expr.elements)
        if isinstance(expr, cst.SimpleString):
            return expr.evaluated_value in SIXTEEN_BIT_NAMES
        dtypes = {DTYPE_NAMES.get(name) for name in self.ctx.names.resolve(expr)}
        return bool(dtypes) and dtypes <= SIXTEEN_BIT_DTYPES

    def _unbound_head(self, expr: cst.BaseExpression, where: Where) -> bool:
        """``NEG_INF`` or ``config.NEG_INF`` whose first name the file never binds
        (imports are not bindings): a name another module may give."""
        while isinstance(expr, cst.Attribute):
            expr = expr.value
        return isinstance(expr, cst.Name) and where.loc.lookup(expr.value) is None

    def _class_constant(self, expr: cst.Attribute, where: Where) -> Optional[Binding]:
        """``self.NEG_INF`` read from a class-level constant (``NEG_INF = -1e9`` in the
        class body) that no method assigns on ``self``: the one binding, else None."""
        if not is_self(expr.value):
            return None
        cls = where.loc.scope.enclosing_class()
        name = expr.attr.value
        if cls is None or cls.attributes.get(name):
            return None
        bindings = cls.bindings.get(name, [])
        return bindings[0] if len(bindings) == 1 and bindings[0].kind == "assign" else None

    def written_constant(self, expr: cst.BaseExpression, where: Where, depth: int = 0) -> cst.BaseExpression:
        """Where the number of a :meth:`constant` is written: ``neg`` bound to
        ``tf.fill(shape, tf.cast(-1e9, x.dtype))`` is written as ``-1e9``."""
        if depth > MAX_DEPTH:
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
        folded = self._folded(value, where)  # a float32 number tensor cast to 16 bits
        return frozenset({folded}) if folded is not None else self.constant(value, where)

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


def _reads_dtype(expr: cst.BaseExpression) -> bool:
    """``x.dtype``, ``self.compute_dtype``, ``K.dtype(x)``, ``dtype``: an expression that
    names a tensor's or a layer's dtype."""
    if isinstance(expr, cst.Attribute):
        return expr.attr.value in ("dtype", "compute_dtype")
    if isinstance(expr, cst.Call):
        return _reads_dtype(expr.func) or isinstance(expr.func, cst.Name) and expr.func.value == "dtype"
    return isinstance(expr, cst.Name) and expr.value in ("dtype", "compute_dtype")


def _calls(module: cst.Module) -> List[cst.Call]:
    """Every call of a module."""
    return [node for node in find_all(module, cst.Call) if isinstance(node, cst.Call)]
