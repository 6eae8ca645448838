"""MP303: a batch size (fit/evaluate/predict, Input, tf.data batch) not aligned."""

from __future__ import annotations

from typing import Callable

from mplint.analysis.dimensions import BATCH, AlignedDimensions, Origin, Site, nearest_multiple
from mplint.checks._alignment import AlignmentCheck
from mplint.facts import PolicyState


class BatchSizeNotMultipleOf8(AlignmentCheck):
    rule_id = "MP303"
    kinds = (BATCH,)

    def wants(self, dims: AlignedDimensions, site: Site, origin: Origin) -> bool:
        # A batch of one (single-example inference, online learning) is a choice
        # no multiple of 8 can serve.
        return origin.value > 1 and dims.is_training_batch(site, origin)

    def accepts(self, dims: AlignedDimensions) -> Callable[[Site], bool]:
        return lambda site: site.kind == BATCH

    def target(self, value: int, alignment: int) -> int:
        return nearest_multiple(value, alignment)

    def message(self, site: Site, origin: Origin, alignment: int, target: int, policy: PolicyState) -> str:
        return (
            f"{self.describe(site, origin)} is not a multiple of {alignment}: the batch is a "
            f"dimension of every {self.compute_dtype(policy)} matrix multiply, which then misses "
            f"Tensor Cores; use {target}{policy.note}"
        )
