"""MP301: a hidden layer's units (Dense, RNN, EinsumDense, Embedding, attention) not aligned."""

from __future__ import annotations

from typing import Callable

from mplint.analysis.dimensions import FILTERS, TASK_SIZE_LIMIT, UNITS, AlignedDimensions, Origin, Site
from mplint.checks._alignment import AlignmentCheck
from mplint.facts import PolicyState


class UnitsNotMultipleOf8(AlignmentCheck):
    rule_id = "MP301"
    kinds = (UNITS,)

    def wants(self, dims: AlignedDimensions, site: Site, origin: Origin) -> bool:
        # Output layers are sized by the data (10 classes): MP304 covers the large
        # ones. Sizes below 8 (a score, a box) are fixed by the task.
        return origin.value >= TASK_SIZE_LIMIT and not dims.is_output(site, origin)

    def accepts(self, dims: AlignedDimensions) -> Callable[[Site], bool]:
        return lambda site: site.kind in (UNITS, FILTERS) and not dims.is_output(site)

    def message(self, site: Site, origin: Origin, alignment: int, target: int, policy: PolicyState) -> str:
        return (
            f"{self.describe(site, origin)} is not a multiple of {alignment}: "
            f"{self.compute_dtype(policy)} matrix multiplies of this size miss Tensor Cores; "
            f"use {target}{policy.note}"
        )
