"""Methods that override a loss-scaling method of a base class and drop the scaling.

A framework's base trainer or task scales the loss for a LossScaleOptimizer in its
``train_step`` (``if isinstance(optimizer, LossScaleOptimizer): loss =
optimizer.get_scaled_loss(loss)``); a subclass in another module overrides
``train_step`` with its own tape and ``apply_gradients``, without the scaling and
without calling ``super()``. Under mixed_float16 that subclass then trains with
unscaled float16 gradients (Keras 2) or gradients divided by the loss scale
(Keras 3). The base class's own handling is the evidence that the optimizer may be
a LossScaleOptimizer there, even where the policy is chosen through a registry or
a config that mplint cannot follow.

Found from the program model's summaries: the candidate modules are those whose
bytes apply gradients without any scaling call; their bases are summarised as
needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Iterable, Optional, Tuple

from mplint.run.optimizer_values import applies_gradients
from mplint.run.summaries import METHOD

if TYPE_CHECKING:  # pragma: no cover
    from mplint.run.program import ProgramModel

#: the loss-scaling methods of LossScaleOptimizer (Keras 2, Keras 3)
SCALE_METHODS = ("get_scaled_loss", "scale_loss")

#: (path of the base method, line of its scaling call, "Base.method", the optimizer it scales)
Override = Tuple[str, int, str, str]


def may_drop_scaling(raw: bytes) -> bool:
    """Whether a module's bytes apply gradients and never call a scaling method."""
    return applies_gradients(raw) and not any(m.encode() in raw for m in SCALE_METHODS)


def find_overrides(model: "ProgramModel", candidates: Iterable[str]) -> Dict[str, Dict[str, Override]]:
    """path -> "Class.method" -> the base method it overrides that scales the loss."""
    found: Dict[str, Dict[str, Override]] = {}
    for path in candidates:
        summary = model.summary(path)
        for cls, info in summary.classes.items():
            for method in info.methods:
                own = summary.functions.get(f"{cls}.{method}")
                if own is None or _defers(own.calls, method):
                    continue
                base = _scaling_base(model, (path, cls), method)
                if base is not None:
                    found.setdefault(path, {})[f"{cls}.{method}"] = base
    return found


def _defers(calls: Iterable[Tuple[int, str]], method: str) -> bool:
    """The override scales by itself or runs the base method (``super().train_step``)."""
    return any(callee.rsplit(".", 1)[-1] in SCALE_METHODS or callee == f"super{METHOD}{method}"
               or callee.endswith(f".{method}") for _, callee in calls)


def _scaling_base(model: "ProgramModel", cls: Tuple[str, str], method: str) -> Optional[Override]:
    """The nearest base method of that name, when it calls a scaling method."""
    for base in model._bases(cls)[1:]:
        info = model.summary(base[0]).classes.get(base[1])
        if info is None or method not in info.methods:
            continue
        function = model.summary(base[0]).functions.get(f"{base[1]}.{method}")
        for line, callee in function.calls if function else []:
            receiver, _, last = callee.rpartition(".")
            if last in SCALE_METHODS and receiver and METHOD not in callee:
                return base[0], line, f"{base[1]}.{method}", receiver
        return None  # the nearest definition decides
    return None
