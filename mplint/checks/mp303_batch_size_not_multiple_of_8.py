"""MP303: a training batch size (fit, Input, a tf.data batch that reaches training) not aligned."""

from __future__ import annotations

import re
from typing import Callable

import libcst as cst

from mplint.analysis.dimensions import BATCH, AlignedDimensions, DimensionValue, DimensionSite, nearest_multiple
from mplint.analysis.training_batches import TrainingBatches
from mplint.checks._alignment import AlignmentCheck
from mplint.semantic.facts import PolicyState
from mplint.semantic.call_args import keyword_only
from mplint.semantic.vocabulary import DATASET_FACTORIES, INPUT_LAYERS

#: a variable named for the training split (``train_ds``, ``training_data``), not a validation one
_TRAINING_NAME = re.compile(r"^(?!.*(val|test|eval)).*train", re.IGNORECASE)


class BatchSizeNotMultipleOf8(AlignmentCheck):
    rule_id = "MP303"
    kinds = (BATCH,)
    requires = (AlignedDimensions, TrainingBatches)

    def wants(self, dims: AlignedDimensions, site: DimensionSite, origin: DimensionValue) -> bool:
        # A batch smaller than the alignment is a deliberate choice no multiple of 8
        # serves: one example (inference, online learning), a test's batch of 2, a
        # large model fine-tuned 4 at a time to fit in memory. Rounding up to 8
        # would only run slower or out of memory.
        return (origin.value > self.option("alignment") and dims.is_training_batch(site, origin)
                and self._feeds_training(site))

    def _feeds_training(self, site: DimensionSite) -> bool:
        """Only training batches: a batch that ``predict``, ``evaluate``, a plot or a
        printout reads is sized for the reader, not for Tensor Cores (a test file's
        sizes are its data: the base class skips those files)."""
        func = site.call.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("fit", "evaluate", "predict"):
            return func.attr.value == "fit"
        if site.layer_class & INPUT_LAYERS:
            return True  # the model's batch, fixed for every use, training included
        return self.ctx.get(TrainingBatches).feeds_training(site.call) or self._loads_training_data(site)

    def _loads_training_data(self, site: DimensionSite) -> bool:
        """A dataset loader that says it loads the training split: ``subset="training"``,
        or its dataset is named for training (``train_ds = image_dataset_from_directory(...)``)
        where the file reads it no further."""
        if not self.ctx.names.resolve(site.call.func) & DATASET_FACTORIES:
            return False
        subset = keyword_only(site.call, "subset")
        if subset is not None:
            return self.ctx.values.value(subset, site.location) == "training"
        return _TRAINING_NAME.search(self.ctx.get(AlignedDimensions).assigned_name(site.call)) is not None

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
