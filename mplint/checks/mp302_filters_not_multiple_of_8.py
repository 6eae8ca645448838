"""MP302: a convolution's filters (output channels) not aligned."""

from __future__ import annotations

from typing import Callable

from mplint.analysis.dimensions import FILTERS, TASK_SIZE_LIMIT, UNITS, AlignedDimensions, Origin, Site
from mplint.checks._alignment import AlignmentCheck
from mplint.facts import PolicyState


class FiltersNotMultipleOf8(AlignmentCheck):
    rule_id = "MP302"
    kinds = (FILTERS,)

    def wants(self, dims: AlignedDimensions, site: Site, origin: Origin) -> bool:
        # An output convolution (3 colour channels, 21 segmentation classes) is
        # sized by the data; MP304 covers large class counts.
        return origin.value >= TASK_SIZE_LIMIT and not dims.is_output(site, origin)

    def accepts(self, dims: AlignedDimensions) -> Callable[[Site], bool]:
        return lambda site: site.kind in (UNITS, FILTERS) and not dims.is_output(site)

    def message(self, site: Site, origin: Origin, alignment: int, target: int, policy: PolicyState) -> str:
        return (
            f"{self.describe(site, origin)} is not a multiple of {alignment}: "
            f"{self.compute_dtype(policy)} convolutions with this many output channels miss "
            f"Tensor Cores; use {target}{policy.note}"
        )
