"""MP406: the policy is set through one Keras package and the layers come from another."""

from __future__ import annotations

from typing import Dict, FrozenSet, Optional, Set

import libcst as cst

from mplint.rule.check import Check, Fix, Needs
from mplint.rule.edits import import_spec, spell
from mplint.rule.levels import Safety
from mplint.semantic.names import dotted_name, separate_policies
from mplint.semantic.vocabulary import MIXED_POLICIES, SET_POLICY_FUNCTIONS

_ROOTS = {"keras": "keras", "tf.keras": "tensorflow.keras", "tf_keras": "tf_keras"}
_SPELLING = {"keras": "keras", "tf.keras": "tf.keras", "tf_keras": "tf_keras"}


class SplitKerasPolicy(Check):
    rule_id = "MP406"

    #: reported at a policy call in the file
    needs = Needs(policy_call=True)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._layer_packages: Set[str] = set()
        self._policy_packages: Dict[int, FrozenSet[str]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        resolved = self.names.resolve(node.func)
        if any(n.startswith("keras.layers.") for n in resolved) or resolved & {"keras.Model", "keras.Sequential"}:
            self._layer_packages |= self.names.packages(node.func)
        elif resolved & SET_POLICY_FUNCTIONS:
            self._policy_packages[id(node)] = self.names.packages(node.func)

    def _split(self, a: str, b: str) -> bool:
        """Do these packages keep separate global policies? (reference, section 3)"""
        pair = {a, b}
        if separate_policies(a, b):
            return True  # different packages under every TensorFlow version
        if pair == {"tf_keras", "tf.keras"}:
            # tf.keras is tf_keras itself under TF <= 2.15 or TF_USE_LEGACY_KERAS=1,
            # so only a known Keras 3 target makes them separate.
            return self.facts.keras_version == 3 and not self.facts.legacy_keras_env
        return False  # keras and tf.keras share one Keras (2 or 3) in practice

    def finish(self) -> None:
        # the layers this file builds, and those the code its policy reaches in other
        # modules builds (``model.build()`` making tf_keras layers)
        layers = self._layer_packages | self.facts.project_layer_packages
        if not layers:
            return
        for call in self.facts.policy_calls:
            if not call.values or not call.values & MIXED_POLICIES:
                continue
            assert isinstance(call.node, cst.Call)
            policy = self._policy_packages.get(id(call.node), frozenset())
            if len(policy) != 1:
                continue
            (package,) = policy
            if package in layers or not all(self._split(package, other) for other in layers):
                continue
            target = sorted(layers)[0] if len(layers) == 1 else None
            self.report(
                call.node,
                f"the policy is set through {_SPELLING[package]} but the layers come from "
                f"{' and '.join(_SPELLING[p] for p in sorted(layers))}: each package keeps its "
                f"own global policy, so the model stays float32; set it through "
                f"{_SPELLING[target] if target else 'the package the layers use'}",
                self._fix(call.node, target),
            )


    def _fix(self, call: cst.Call, target: Optional[str]) -> Optional[Fix]:
        if target is None:
            return None
        spelled = spell(_ROOTS[target] + ".mixed_precision.set_global_policy", self.names)
        if spelled is None:
            return None
        expr, imports = spelled
        head = (dotted_name(call.func) or "").split(".")[0]
        spec = import_spec(head, self.ctx.module)  # dropped only if left unused
        return Fix({call: call.with_changes(func=expr)}, Safety.SAFE, imports, (spec,) if spec else ())
