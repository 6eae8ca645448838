"""Loss scaling done by code a module calls in other modules.

A training script that switches on the grappler option (``auto_mixed_precision``)
and hands the training to a trainer class from the project's package (``trainer =
FastSpeechTrainer(..., is_mixed_precision=args.amp); trainer.fit(...)``) has no
scaling call of its own: the trainer wraps its optimizer in a LossScaleOptimizer
and scales the loss. MP407 must not say that the program trains with no loss
scaling anywhere. Found from the program model's call graph: the functions of the
module, and everything they may call (methods through bases in other modules, the
methods of instances they make), are searched for a scaling call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Set, Tuple

from mplint.run.scaling_overrides import SCALE_METHODS
from mplint.run.summaries import METHOD
from mplint.semantic.vocabulary import GRAPPLER_AMP_OPTION

if TYPE_CHECKING:  # pragma: no cover
    from mplint.run.program import Node, ProgramModel

#: calls that say the code does loss scaling (Keras 2 and Keras 3)
SCALING_CALLS = frozenset({*SCALE_METHODS, "get_unscaled_gradients", "LossScaleOptimizer"})
#: the functions searched from one module, at most (a framework's whole call graph is not needed)
MAX_NODES = 5000


def uses_grappler_option(raw: bytes) -> bool:
    return GRAPPLER_AMP_OPTION.encode() in raw


def find_scaling(model: "ProgramModel", candidates: Iterable[str]) -> Dict[str, Tuple[str, int]]:
    """path -> (file, line) of a scaling call that code of the module may run, in
    another module (its own calls are the check's to see)."""
    found: Dict[str, Tuple[str, int]] = {}
    for path in candidates:
        place = _reached_scaling(model, path)
        if place is not None:
            found[path] = place
    return found


def _reached_scaling(model: "ProgramModel", path: str) -> Optional[Tuple[str, int]]:
    start: List["Node"] = [(path, name) for name in model.summary(path).functions]
    seen: Set["Node"] = set(start)
    queue = list(start)
    while queue and len(seen) < MAX_NODES:
        node = queue.pop()
        if node[0] != path:
            function = model.summary(node[0]).functions.get(node[1])
            for line, callee in function.calls if function is not None else ():
                if _scales(callee):
                    return node[0], line
        for _, targets in model.edges_of(node):
            for target in targets:
                if target not in seen:
                    seen.add(target)
                    queue.append(target)
    return None


def _scales(callee: str) -> bool:
    """``self._optimizer.get_scaled_loss``, ``mixed_precision.LossScaleOptimizer``,
    ``opt#scale_loss``."""
    return callee.rsplit(METHOD, 1)[-1].rsplit(".", 1)[-1] in SCALING_CALLS
