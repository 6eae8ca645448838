"""MP210: a float16 loss is passed to get_scaled_loss or scale_loss, where the loss scale overflows it."""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.tensor_kinds import LOW, TensorKinds, Where
from mplint.analysis.training import FACTOR, SCALE_METHODS, TrainingLoops
from mplint.rule.check import Check, Context, Fix, Needs
from mplint.rule.edits import cast, quote_of, string
from mplint.rule.levels import Safety
from mplint.semantic.scopes import Location, Scope, exclusive
from mplint.semantic.vocabulary import CASTS, SYMBOLIC_GRADIENTS

_MAX_DEPTH = 12


class Float16LossScaled(Check):
    rule_id = "MP210"
    requires = (TrainingLoops, TensorKinds)

    #: a scaling call, and float16 spelled out, or the cast that makes the loss float16
    #: (its dtype may be an argument another module passes: ``tf.cast(loss, compute_dtype)``)
    needs = Needs((b"get_scaled_loss", b"scale_loss"), also=(b"float16", b"half", b"cast", b"convert_image_dtype"))

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._calls: List[Tuple[cst.Call, Where]] = []
        #: ``scaled = <scaling call>``: the call's id -> the name it is bound to
        self._bound: Dict[int, cst.Name] = {}
        #: names read, by scope, with their statement order
        self._reads: Dict[Tuple[int, str], List[Tuple[cst.Name, Location]]] = {}
        #: nodes that are not reads of a value: assignment targets and gradient targets
        self._not_reads: Set[int] = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self._not_reads.add(id(target.target))
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                and isinstance(node.value, cst.Call):
            self._bound[id(node.value)] = node.targets[0].target

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._not_reads.add(id(node.attr))

    def visit_Name(self, node: cst.Name) -> None:
        loc = self.ctx.scopes.location()
        self._reads.setdefault((id(loc.scope), node.value), []).append((node, loc))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if node.args and (isinstance(func, cst.Attribute) and func.attr.value == "gradient"
                          or self.names.resolve(func) & SYMBOLIC_GRADIENTS):
            self._not_reads.add(id(node.args[0].value))
        if isinstance(func, cst.Attribute) and func.attr.value in SCALE_METHODS and len(node.args) == 1 \
                and node.args[0].keyword is None and not node.args[0].star:
            self._calls.append((node, self.ctx.get(TensorKinds).here()))

    def finish(self) -> None:
        kinds = self.ctx.get(TensorKinds)
        loops = self.ctx.get(TrainingLoops)
        for call, where in self._calls:
            assert isinstance(call.func, cst.Attribute)
            method = call.func.attr.value
            loss = call.args[0].value
            if kinds.kind(loss, where) != LOW:
                continue
            made = self._float16_cast(loss, where, 0)
            if made is None:
                continue  # bfloat16 (float32's range), or a 16-bit value it cannot trace to a cast
            if method == "scale_loss":
                # Keras 3: a LossScaleOptimizer multiplies by its float32 scale variable
                # once built (only the first eager step is float16); a plain optimizer
                # returns the loss as it is. Only loss_scale_factor, a Python float,
                # multiplies in the loss's dtype on every step.
                origins = loops.optimizer_origins(call.func.value, where.loc)
                if not origins or any(o.kind != FACTOR for o in origins):
                    continue
            read = self._read_again(call, where)
            if read is None:
                continue  # only differentiated: the gradients do not depend on the product
            name = read.value
            self.report(call.args[0].value,
                        f"the loss passed to {method}() is float16, so the scaled loss `{name}` is "
                        f"computed in float16 and is inf whenever the loss exceeds 65504 / scale "
                        f"(2 at the initial scale of 32768); the gradients are right, but `{name}` "
                        f"is read again later in this function (logged, returned or tested), where it reads inf; "
                        f"pass the loss in float32", self._fix(loss, made))

    def _read_again(self, call: cst.Call, where: Where) -> Optional[cst.Name]:
        """A later read, in the same function, of the name the scaled loss is bound
        to, other than as the target of a gradient. The scaling statement's own reads
        come before the binding (``loss = opt.get_scaled_loss(loss)``), and a read in
        the other arm of an ``if`` around the scaling (``else: total_loss = ...``) reads
        the unscaled value: neither is a read of the product."""
        bound = self._bound.get(id(call))
        if bound is None:
            return None
        scope: Scope = where.loc.scope
        for name, loc in self._reads.get((id(scope), bound.value), []):
            if name is bound or id(name) in self._not_reads or loc.order <= where.loc.order:
                continue
            if loc.branches and where.loc.branches and exclusive(loc.branches, where.loc.branches):
                continue
            return name
        return None

    def _float16_cast(self, expr: cst.BaseExpression, where: Where, depth: int) -> Optional[cst.Call]:
        """The cast to float16 that makes ``expr`` 16-bit, followed through names that
        certainly reach it, arithmetic and ops that keep their input's dtype."""
        if depth > _MAX_DEPTH:
            return None
        kinds = self.ctx.get(TensorKinds)
        if isinstance(expr, cst.Call):
            names = self.names.resolve(expr.func)
            if names & CASTS:
                dtype = kinds.dtype_expression(expr)
                if dtype is not None and self.ctx.values.values(dtype, where.loc) == frozenset({"float16"}):
                    return expr
                return None
            returned = kinds.returns_of(expr, where, depth)
            if returned:  # a helper of the file (``def half(t): return tf.cast(t, tf.float16)``)
                made = [self._float16_cast(value, at, depth + 1) for value, at in returned]
                return made[0] if made[0] is not None and all(m is made[0] for m in made) else None
            for arg in expr.args:
                if arg.keyword is None and kinds.kind(arg.value, where) == LOW:
                    return self._float16_cast(arg.value, where, depth + 1)
            return None
        if isinstance(expr, cst.BinaryOperation):
            for side in (expr.left, expr.right):
                if kinds.kind(side, where) == LOW:
                    return self._float16_cast(side, where, depth + 1)
            return None
        if isinstance(expr, cst.UnaryOperation):
            return self._float16_cast(expr.expression, where, depth + 1)
        if isinstance(expr, cst.Subscript):
            return self._float16_cast(expr.value, where, depth + 1)
        if isinstance(expr, cst.Name):
            found = kinds.assigned(expr, where, ("assign", "annassign"))
            return None if found is None else self._float16_cast(found[0], found[1], depth + 1)
        return None

    def _fix(self, loss: cst.BaseExpression, made: cst.Call) -> Optional[Fix]:
        """A cast to float32 of the loss passed, spelled like the cast that made it
        float16; the cast itself when it is the argument (its dtype becomes float32)."""
        kinds = self.ctx.get(TensorKinds)
        dtype = kinds.dtype_expression(made)
        if dtype is None:
            return None
        float32 = _float32_like(dtype, self.ctx.text, made)
        if float32 is None:
            return None
        if loss is made:
            return Fix({dtype: float32}, safety=Safety.SAFE)
        function = self.ctx.module.code_for_node(made.func)
        return Fix({loss: cast(loss, function, float32)}, safety=Safety.SAFE)


def _float32_like(dtype: cst.BaseExpression, text: str, call: cst.Call) -> Optional[cst.BaseExpression]:
    """``tf.float32`` for ``tf.float16``/``tf.half``, ``"float32"`` for ``"float16"``."""
    if isinstance(dtype, cst.Attribute) and dtype.attr.value in ("float16", "half"):
        return dtype.with_changes(attr=cst.Name("float32"))
    if isinstance(dtype, cst.SimpleString):
        return string("float32", quote_of(call, text))
    return None
