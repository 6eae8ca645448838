"""MP502: an epsilon that float16 rounds to exactly zero, in 16-bit compute code."""

from __future__ import annotations

from typing import FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from mplint.analysis.compute_regions import ComputeRegions
from mplint.analysis.layers import computes_in_float32
from mplint.analysis.models import LayerProducer
from mplint.analysis.tensor_kinds import LOW, TensorKinds, Where
from mplint.rule.check import Check, Context, Needs
from mplint.semantic.call_args import keyword_only, positional_or_keyword
from mplint.semantic.facts import PolicyState
from mplint.semantic.scopes import Scope
from mplint.semantic.vocabulary import ADDONS_SIXTEEN_BIT_NORMALIZATION, KERAS2_GROUP_NORMALIZATION

#: half of float16's smallest subnormal (5.96e-8): anything below rounds to 0.0
#: (TF 2.21: 2.9e-8 -> 0.0, 3e-8 -> 5.96e-8)
UNDERFLOW = 2.98e-8

#: hand-written normalization ops: canonical name -> (epsilon position, keyword)
_NORM_OPS = {
    "tensorflow.nn.batch_normalization": (5, "variance_epsilon"),
    "tensorflow.nn.l2_normalize": (2, "epsilon"),
    "tensorflow.math.l2_normalize": (2, "epsilon"),
    "tensorflow.linalg.l2_normalize": (2, "epsilon"),
}


class Float16UnderflowLiteral(Check):
    rule_id = "MP502"
    requires = (ComputeRegions, TensorKinds)

    #: only under a mixed policy
    needs = Needs(mixed_policy=True, library=True)

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        #: normalization calls: (call, canonical names, where, Keras packages)
        self._norm_calls: List[Tuple[cst.Call, FrozenSet[str], Where, FrozenSet[str]]] = []

    def visit_Call(self, node: cst.Call) -> None:
        names = self.names.resolve(node.func)
        if names & (set(_NORM_OPS) | ADDONS_SIXTEEN_BIT_NORMALIZATION | KERAS2_GROUP_NORMALIZATION):
            kinds = self.ctx.get(TensorKinds)
            self._norm_calls.append((node, names, kinds.here(), self.names.origins(node.func)))

    def finish(self) -> None:
        policy = self.facts.library_policy()  # a library's layers: as its users run them
        if policy is None or not policy.float16:
            return  # bfloat16 keeps float32's exponent range: 1e-12 stays nonzero
        kinds = self.ctx.get(TensorKinds)
        seen: Set[cst.CSTNode] = set()
        for site in kinds.sites:
            here = kinds.policy_reaching(self.facts, site.where.loc.scope)
            if here is None or not here.float16 or kinds.region(site.where.loc) is None:
                continue  # none reaches it, or a library's private code: how it runs is its own
            for node, values, context, caller in kinds.literals_with_callers(site):
                if context != LOW or node in seen:
                    continue
                tiny = [v for v in values if v != 0 and abs(v) < UNDERFLOW]
                if tiny:
                    seen.add(node)
                    called = f" (the function is called with one from {caller})" if caller is not None else ""
                    self._report(node, tiny[0], here.note, f"it meets a float16 tensor here{called}")
        for call, names, where, origins in self._norm_calls:
            here = self._float16_at(where.loc.scope)
            if here is None or here.library:
                continue  # a library's normalization call: its layer and dtype are its users' choice
            op = next((n for n in names if n in _NORM_OPS), None)
            if op is not None:
                if kinds.region(where.loc) is None:
                    continue
                x = positional_or_keyword(call, 0, "x")
                if x is None or kinds.kind(x, where) != LOW:
                    continue
                position, keyword = _NORM_OPS[op]
                epsilon = positional_or_keyword(call, position, keyword)
            else:
                if names & KERAS2_GROUP_NORMALIZATION and not self._keras2(origins):
                    continue
                layer = LayerProducer(call, names, where.loc)
                if computes_in_float32(layer, self.ctx) is not False:
                    continue
                epsilon = keyword_only(call, "epsilon")
            self._check_epsilon(epsilon, kinds, where, seen, here.note)

    def _float16_at(self, scope: Scope) -> Optional[PolicyState]:
        """The mixed_float16 policy that reaches code in ``scope`` (None: none, or only
        bfloat16, whose range keeps the constant): a layer's methods run under a
        program's policy only where a program builds the layer."""
        here = self.facts.library_policy(scope)
        return here if here is not None and here.float16 else None

    def _keras2(self, origins: FrozenSet[str]) -> bool:
        """Whether this layer is Keras 2's. The file's generation says so for
        ``keras``/``tf.keras`` layers unless the file also imports ``tf_keras``: then
        that import is why the file counts as Keras 2, and ``tf.keras`` beside it is
        Keras 3."""
        if "tf_keras" in origins:
            return True
        imports_tf_keras = any(q.startswith("tf_keras") for targets in
                               self.names.module_scope.aliases.values() for q in targets)
        return self.facts.keras_version == 2 and not imports_tf_keras

    def _check_epsilon(self, epsilon: Optional[cst.BaseExpression], kinds: TensorKinds,
                       where: Where, seen: Set[cst.CSTNode], note: str) -> None:
        if epsilon is None or epsilon in seen:
            return
        values = kinds.constant(epsilon, where)
        if values is None:
            return
        tiny = [v for v in values if v != 0 and abs(v) < UNDERFLOW]
        if tiny:
            seen.add(epsilon)
            self._report(epsilon, tiny[0], note, "this normalization applies it in float16")

    def _report(self, node: cst.CSTNode, value: float, note: str, where: str) -> None:
        text = " ".join(self.ctx.module.code_for_node(node).split())
        literal = isinstance(node, (cst.Float, cst.Integer)) or (
            isinstance(node, cst.UnaryOperation) and isinstance(node.expression, (cst.Float, cst.Integer))
        )
        shown = text if literal else f"{text} ({value:g})"
        self.report(
            node,
            f"`{shown}` is 0.0 in float16{note}; {where}, so it no longer guards a "
            f"division, log or sqrt against zero (NaN/inf); use at least 1e-7 (float16's "
            f"smallest normal is 6.1e-5) or do this math in float32",
        )
