"""MP302: a convolution's filters (output channels) not aligned."""

from __future__ import annotations

from mplint.analysis.dimensions import FILTERS, DimensionValue, DimensionSite
from mplint.checks._alignment import HiddenLayerAlignment
from mplint.semantic.facts import PolicyState


class FiltersNotMultipleOf8(HiddenLayerAlignment):
    rule_id = "MP302"
    kinds = (FILTERS,)

    def message(self, site: DimensionSite, origin: DimensionValue, alignment: int, target: int, policy: PolicyState) -> str:
        return (
            f"{self.describe(site, origin)} is not a multiple of {alignment}: "
            f"{self.compute_dtype(policy)} convolutions with this many output channels miss "
            f"Tensor Cores; use {target}{policy.note}"
        )
