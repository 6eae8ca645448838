"""MP304: an output layer sized by a large vocabulary or class count that is not padded."""

from __future__ import annotations

from typing import Callable

from mplint.analysis.dimensions import FILTERS, UNITS, VOCABULARY, AlignedDimensions, DimensionValue, DimensionSite
from mplint.checks._alignment import AlignmentCheck
from mplint.semantic.facts import PolicyState


class VocabularyNotPadded(AlignmentCheck):
    rule_id = "MP304"
    kinds = (UNITS, FILTERS)

    def wants(self, dims: AlignedDimensions, site: DimensionSite, origin: DimensionValue) -> bool:
        # Exactly the sites MP301/MP302 leave alone as outputs, when large.
        return origin.value >= self.option("vocabulary-threshold") and dims.is_output(site, origin)

    def accepts(self, dims: AlignedDimensions) -> Callable[[DimensionSite], bool]:
        # Padding a vocabulary grows its embedding table with it.
        return lambda site: site.kind in (UNITS, FILTERS, VOCABULARY)

    def message(self, site: DimensionSite, origin: DimensionValue, alignment: int, target: int, policy: PolicyState) -> str:
        return (
            f"{self.describe(site, origin)} sizes an output layer by a vocabulary or class count "
            f"that is not a multiple of {alignment}: pad the vocabulary to {target} (the extra "
            f"entries are never targets) so the {self.compute_dtype(policy)} output projection "
            f"can use Tensor Cores{policy.note}"
        )
