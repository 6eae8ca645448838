"""MP501: a constant too large for float16 combined with a 16-bit tensor."""

from __future__ import annotations

from typing import List, Optional, Set, Tuple

import libcst as cst

from mplint.core.walker import child_nodes
from mplint.analysis.compute_regions import ComputeRegions
from mplint.analysis.tensor_kinds import LOW, OperationSite, TensorKinds, Where
from mplint.rule.messages import snippet
from mplint.rule.check import Check, Fix, Needs
from mplint.rule.levels import Safety

#: the smallest magnitude that float16 rounds to infinity (65519 still rounds to 65504)
OVERFLOW = 65520.0
#: positive constants at least this large are "infinity" sentinels, not scales
SENTINEL = 1e8

#: combining calls in which an infinite operand is harmful. Clipping at +-inf
#: (``tf.clip_by_value(x, -1e5, 1e5)``, ``tf.maximum(x, -1e9)``) is a no-op, and
#: ``tf.where(mask, x, -1e9)`` only selects: the masked slots are -inf and a softmax
#: gives them exactly 0 (TF 2.21, run); NaN comes only from a row with every slot
#: masked, which depends on data no linter sees, so selection is not reported
_OPERATORS = frozenset({"add", "subtract", "multiply", "divide", "truediv"})


class Float16OverflowLiteral(Check):
    rule_id = "MP501"
    requires = (ComputeRegions, TensorKinds)

    #: only under a mixed policy
    needs = Needs(mixed_policy=True, library=True)

    def finish(self) -> None:
        policy = self.facts.library_policy()  # a library's layers: as its users run them
        if policy is None or not policy.float16:
            return  # bfloat16 has float32's range: -1e9 is finite there
        kinds = self.ctx.get(TensorKinds)
        seen: Set[cst.CSTNode] = set()
        for site in kinds.sites:
            # the policy that reaches this code: a layer's methods run under a program's
            # policy only where a program builds the layer, not where it imports its module
            here = kinds.policy_reaching(self.facts, site.where.loc.scope)
            if here is None or not here.float16:
                continue
            region = kinds.region(site.where.loc)  # after the policy: it may read other modules
            if region is None:
                continue
            for operand, values, context, caller in kinds.literals_with_callers(site, _OPERATORS):
                # reported where the number is written (``neg = tf.fill(shape,
                # tf.cast(-1e9, x.dtype))``), which is what a fix changes
                node = kinds.written_constant(operand, site.where)
                if context != LOW or node in seen:
                    continue
                big = [v for v in values if abs(v) >= OVERFLOW]
                if not big:
                    continue
                seen.add(node)
                value = big[0]
                text = " ".join(self.ctx.module.code_for_node(node).split())
                meets = "here" if node is operand else f"in `{self._snippet(site.node)}`"
                if caller is not None:
                    meets += f" (the function is called with one from {caller})"
                # a name's number is written before the site: only self.compute_dtype
                # is surely readable there
                in_layer = region.kind == "layer"
                fix = self._fix(node, value, site, in_layer) if node is operand or in_layer else None
                self.report(
                    node,
                    f"`{text}` overflows float16 to {'-' if value < 0 else ''}inf{here.note} "
                    f"and meets a float16 tensor {meets}; inf turns into NaN (0 * inf in a "
                    f"mask, or a softmax over a fully masked row); use the dtype's own "
                    f"limit (float16 ends at 65504) or do this math in float32",
                    fix,
                )
        self._input_dtype_constants(kinds, seen)

    def _input_dtype_constants(self, kinds: TensorKinds, seen: Set[cst.CSTNode]) -> None:
        """``beta = tf.cast(20.0 ** 4, x.dtype)`` then ``beta * x``: the number is made a
        tensor of the very input it meets, whose kind the file cannot see (a parameter
        other modules pass). Under float16 that input is the 16-bit activation the cast
        was written for, and the number is inf there."""
        for site in kinds.sites:
            here = kinds.policy_reaching(self.facts, site.where.loc.scope)
            # a plain function reached by the policy (no layer of this file calls it)
            # counts; a tf.data function runs in float32 whatever the policy
            loc = site.where.loc
            if here is None or not here.float16 or not kinds.arms_run(loc) or kinds.regions.is_pipeline(loc):
                continue
            for side, other in _operand_pairs(site.node):
                found = kinds.cast_to_input_dtype(side, site.where)
                if found is None or not isinstance(other, cst.Name):
                    continue
                value, node, param = found
                if other.value != param.value or abs(value) < OVERFLOW or node in seen:
                    continue
                if self._kind_known(kinds, param, site):
                    continue  # a caller in the file says: 16-bit is reported above, float32 is fine
                seen.add(node)
                text = " ".join(self.ctx.module.code_for_node(node).split())
                self.report(
                    node,
                    f"`{text}` is {value:g}, made a tensor of `{param.value}.dtype` and combined with "
                    f"`{param.value}` in `{self._snippet(site.node)}`: where `{param.value}` is float16"
                    f"{here.note} it is {'-' if value < 0 else ''}inf (float16 ends at 65504), and inf "
                    f"turns into NaN; keep the number within float16's range or do this math in float32",
                )

    @staticmethod
    def _kind_known(kinds: TensorKinds, param: cst.Name, site: OperationSite) -> bool:
        return bool(kinds.passed_kinds(param, site.where) - {None})

    def _snippet(self, node: cst.CSTNode) -> str:
        return snippet(self.ctx.module.code_for_node(node), 48)

    def _fix(self, node: cst.BaseExpression, value: float, site: OperationSite, in_layer: bool) -> Optional[Fix]:
        """``tf.as_dtype(<16-bit tensor>.dtype).min`` (or ``self.compute_dtype``).

        Only for sentinels that stand for -inf/+inf (masks, padding fill values):
        negative constants and huge ones. A scale such as ``x * 1e5`` has no
        mechanical replacement, so it gets no fix.
        """
        if (value > 0 and value < SENTINEL) or isinstance(node, cst.Name):
            return None  # a scale; or a name: the constant is made where it is bound
        tf = self.names.module_alias("tensorflow")
        if tf is None:
            return None
        dtype = self._dtype_source(site, in_layer)
        if dtype is None:
            return None
        limit = "min" if value < 0 else "max"
        new = cst.parse_expression(f"{tf}.as_dtype({dtype}).{limit}")
        if node.lpar:
            new = new.with_changes(lpar=node.lpar, rpar=node.rpar)
        return Fix({node: new}, safety=Safety.UNSAFE)

    def _dtype_source(self, site: OperationSite, in_layer: bool) -> Optional[str]:
        if in_layer:
            return "self.compute_dtype"
        name = self._low_name(site.node, site.where)
        return f"{name}.dtype" if name else None

    def _low_name(self, node: cst.CSTNode, where: Where) -> Optional[str]:
        """A plain name of a 16-bit tensor in the same expression, to read its dtype."""
        kinds = self.ctx.get(TensorKinds)
        stack = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, cst.Name) and kinds.kind(current, where) == LOW:
                return current.value
            if isinstance(current, cst.AugAssign):
                stack += [current.value, current.target]
            elif isinstance(current, cst.BinaryOperation):
                stack += [current.right, current.left]
            elif isinstance(current, cst.UnaryOperation):
                stack.append(current.expression)
            elif isinstance(current, cst.Call) and kinds.combining(current):
                stack += list(reversed(kinds.operands(current)))
        return None


def _operand_pairs(node: cst.CSTNode) -> List[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    """Each (operand, the other operand) of the arithmetic within a site, both ways."""
    out: List[Tuple[cst.BaseExpression, cst.BaseExpression]] = []
    todo: List[cst.CSTNode] = [node]
    while todo:
        current = todo.pop()
        if isinstance(current, cst.BinaryOperation):
            out += [(current.left, current.right), (current.right, current.left)]
        todo.extend(child for child in child_nodes(current) if isinstance(child, cst.BaseExpression)
                    or isinstance(child, (cst.Arg, cst.AugAssign)))
    return out
