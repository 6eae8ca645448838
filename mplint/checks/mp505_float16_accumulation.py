"""MP505: a sum of 16-bit values that feeds a metric state or a loss total."""

from __future__ import annotations

from typing import Iterator, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.compute_regions import ComputeRegions
from mplint.analysis.tensor_kinds import LOW, Env, TensorKinds, Where
from mplint.core.positions import positions_of
from mplint.rule.check import Check, Context, Fix, Needs
from mplint.rule.edits import quote_of, string
from mplint.rule.levels import Safety
from mplint.rule.messages import snippet
from mplint.semantic.vocabulary import SUM_FUNCTIONS

#: ``self.<state>.assign_add(...)`` and friends, and ``self.add_loss/add_metric(...)``
_STATE_UPDATES = frozenset({"assign_add", "assign", "assign_sub"})
_SELF_SINKS = frozenset({"add_loss", "add_metric"})
_MAX_DEPTH = 8


class Float16Accumulation(Check):
    rule_id = "MP505"
    requires = (ComputeRegions, TensorKinds)

    #: only under a mixed policy
    needs = Needs(mixed_policy=True)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._sinks: List[Tuple[cst.Call, Where]] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or not node.args:
            return
        attr = func.attr.value
        owner = func.value
        if attr in _SELF_SINKS and _is_self(owner) or (
            attr in _STATE_UPDATES and isinstance(owner, cst.Attribute) and _is_self(owner.value)
        ):
            self._sinks.append((node, self.ctx.get(TensorKinds).here()))

    def finish(self) -> None:
        policy = self.facts.mixed_policy()
        if policy is None or not policy.float16:
            return  # bfloat16 sums do not overflow (float32's range)
        kinds = self.ctx.get(TensorKinds)
        reported: Set[cst.CSTNode] = set()
        for sink, where in self._sinks:
            value = sink.args[0].value
            for total, at, direct, env, named in self._sums(value, where, True, (), 0, False):
                if total in reported or not total.args:
                    continue
                with kinds.under(env):
                    if kinds.kind(total.args[0].value, at) != LOW:
                        continue
                reported.add(total)
                overflow = (f"{policy.note}; a float16 sum overflows to inf past 65504 (70000 ones "
                            f"sum to inf); cast to float32 before summing")
                if named and at.loc.scope is where.loc.scope:
                    # summed into a name, added on another line: reported where it is added
                    self.report(
                        sink,
                        f"adds a float16 sum (made at line {self._line(total)} by "
                        f"`{snippet(self.ctx.module.code_for_node(total), 40)}`) to a metric state "
                        f"or loss{overflow}",
                        self._fix(total, direct), noqa_at=(total,),
                    )
                    continue
                into = "" if at.loc.scope is where.loc.scope else \
                    f" (returned into `{snippet(self.ctx.module.code_for_node(sink), 40)}` at line {self._line(sink)})"
                self.report(total, f"sums float16 values into a metric state or loss{into}{overflow}",
                            self._fix(total, direct))

    def _sums(self, expr: cst.BaseExpression, where: Where, direct: bool, env: Env,
              depth: int, named: bool) -> Iterator[Tuple[cst.Call, Where, bool, Env, bool]]:
        """Sum calls whose result flows into ``expr`` (through arithmetic, names and
        the returns of the file's helpers), with the helper's arguments to judge them
        under, and whether the sum reached it through a name (``named``).

        ``direct`` is True while the sum's result reaches the sink unchanged or
        combined only with constants, where a float32 result is certainly accepted
        (not through a helper, whose other callers may need its dtype).
        """
        if depth > _MAX_DEPTH:
            return
        kinds = self.ctx.get(TensorKinds)
        if isinstance(expr, cst.Call):
            if self.names.resolve(expr.func) & SUM_FUNCTIONS:
                yield expr, where, direct, env, named
                return
            with kinds.under(env):
                returned = kinds.helper_returns(expr, where)
            if returned is not None:  # ``self.add_loss(1e-4 * l1(x))``
                inner, values = returned
                for value, at in values:
                    yield from self._sums(value, at, False, inner, depth + 1, named)
            return
        if isinstance(expr, cst.BinaryOperation):
            for side, other in ((expr.left, expr.right), (expr.right, expr.left)):
                with kinds.under(env):
                    constant = kinds.constant(other, where) is not None
                yield from self._sums(side, where, direct and constant, env, depth + 1, named)
        elif isinstance(expr, cst.UnaryOperation):
            yield from self._sums(expr.expression, where, direct, env, depth + 1, named)
        elif isinstance(expr, cst.Name):
            binding, reaching = kinds.reaching(expr, where)
            if binding is not None and reaching and binding.kind == "assign" and binding.value is not None:
                bound = kinds.binding_where(binding)
                if bound is not None:
                    yield from self._sums(binding.value, bound, direct, env, depth + 1, True)

    def _line(self, node: cst.CSTNode) -> int:
        found = positions_of(self.ctx.module, self.ctx.text, [node]).get(node)
        return found.start.line if found is not None else 0

    def _fix(self, total: cst.Call, direct: bool) -> Optional[Fix]:
        """Wrap the summed tensor in a cast to float32, spelled like the sum."""
        names = self.names.resolve(total.func)
        arg = total.args[0]
        if any(n.startswith("tensorflow.") for n in names):
            tf = self.names.module_alias("tensorflow")
            if tf is None:
                return None
            cast_func = cst.parse_expression(f"{tf}.cast")
            float32: cst.BaseExpression = cst.parse_expression(f"{tf}.float32")
        elif isinstance(total.func, cst.Attribute):
            cast_func = total.func.with_changes(attr=cst.Name("cast"))
            float32 = string("float32", quote_of(total, self.ctx.text))
        else:
            return None
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        cast = cst.Call(func=cast_func, args=[cst.Arg(arg.value, comma=comma), cst.Arg(float32)])
        new_arg = arg.with_changes(value=cast)
        args = [new_arg if a is arg else a for a in total.args]
        return Fix({total: total.with_changes(args=args)}, safety=Safety.SAFE if direct else Safety.UNSAFE)


def _is_self(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "self"
