"""MP301: a hidden layer's units (Dense, RNN, EinsumDense, Embedding, attention) not aligned."""

from __future__ import annotations

from mplint.analysis.dimensions import UNITS, DimensionValue, DimensionSite
from mplint.checks._alignment import HiddenLayerAlignment
from mplint.semantic.facts import PolicyState


class UnitsNotMultipleOf8(HiddenLayerAlignment):
    rule_id = "MP301"
    kinds = (UNITS,)

    def message(self, site: DimensionSite, origin: DimensionValue, alignment: int, target: int, policy: PolicyState) -> str:
        return (
            f"{self.describe(site, origin)} is not a multiple of {alignment}: "
            f"{self.compute_dtype(policy)} matrix multiplies of this size miss Tensor Cores; "
            f"use {target}{policy.note}"
        )
