"""MP303: a batch size (fit/evaluate/predict, Input, tf.data batch) not aligned."""

from __future__ import annotations

from typing import Callable

from mplint.analysis.dimensions import BATCH, AlignedDimensions, DimensionValue, DimensionSite, nearest_multiple
from mplint.checks._alignment import AlignmentCheck
from mplint.semantic.facts import PolicyState


class BatchSizeNotMultipleOf8(AlignmentCheck):
    rule_id = "MP303"
    kinds = (BATCH,)

    def wants(self, dims: AlignedDimensions, site: DimensionSite, origin: DimensionValue) -> bool:
        # A batch smaller than the alignment is a deliberate choice no multiple of 8
        # serves: one example (inference, online learning), a test's batch of 2, a
        # large model fine-tuned 4 at a time to fit in memory. Rounding up to 8
        # would only run slower or out of memory.
        return origin.value > self.option("alignment") and dims.is_training_batch(site, origin)

    def accepts(self, dims: AlignedDimensions) -> Callable[[DimensionSite], bool]:
        return lambda site: site.kind == BATCH

    def target(self, value: int, alignment: int) -> int:
        return nearest_multiple(value, alignment)

    def message(self, site: DimensionSite, origin: DimensionValue, alignment: int, target: int, policy: PolicyState) -> str:
        return (
            f"{self.describe(site, origin)} is not a multiple of {alignment}: the batch is a "
            f"dimension of every {self.compute_dtype(policy)} matrix multiply, which then misses "
            f"Tensor Cores; use {target}{policy.note}"
        )
