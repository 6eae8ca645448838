"""Where each removed mixed-precision API lives now: mplint's ``tf_upgrade_v2`` table.

Works on fully qualified (not canonical) names, so a fix can keep the file's own
spelling: ``tf.keras.mixed_precision.experimental.set_policy`` becomes
``tf.keras.mixed_precision.set_global_policy``, ``from tensorflow.keras.mixed_precision
import experimental as mp`` becomes ``from tensorflow.keras import mixed_precision as mp``.
Facts: reference sections 2 and 10 (names checked on TF 2.15 and 2.21).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

#: Keras package roots; the compat/python ones map to ``tensorflow.keras``, which
#: is where the current API lives (``tf.compat.v1.keras.mixed_precision`` only has
#: LossScaleOptimizer in TF 2.15).
_KERAS_ROOTS: Tuple[Tuple[str, str], ...] = (
    ("tensorflow.compat.v1.keras", "tensorflow.keras"),
    ("tensorflow.compat.v2.keras", "tensorflow.compat.v2.keras"),
    ("tensorflow.python.keras", "tensorflow.keras"),
    ("tensorflow.keras", "tensorflow.keras"),
    ("tf_keras", "tf_keras"),
    ("keras", "keras"),
)

#: members of ``keras.mixed_precision.experimental`` and their current names
KERAS_RENAMES = {
    "Policy": "Policy",
    "set_policy": "set_global_policy",
    "global_policy": "global_policy",
    "LossScaleOptimizer": "LossScaleOptimizer",
    "get_layer_policy": None,  # a call becomes ``layer.dtype_policy``
}

_V1_MP = "tensorflow.compat.v1.mixed_precision"
#: TensorFlow (non-Keras) members that moved under tf.compat.v1.mixed_precision
_TF_MOVED = frozenset({
    "enable_mixed_precision_graph_rewrite", "disable_mixed_precision_graph_rewrite",
    "LossScale", "DynamicLossScale", "FixedLossScale",
})
_TF_OLD_MODULES = ("tensorflow.train.experimental", "tensorflow.mixed_precision.experimental")


@dataclass(frozen=True)
class Migration:
    """``old`` is gone; ``new`` is its current name (None: no mechanical rename).

    ``removed`` is the TF minor version that no longer has it, ``since`` the first
    that has the replacement (targets older than that are left alone).
    """

    old: str
    new: Optional[str]
    removed: Tuple[int, int]
    since: Tuple[int, int]


def migrate(qualified: str) -> Optional[Migration]:
    """The migration of a removed module or member, None when ``qualified`` is current."""
    for root, new_root in _KERAS_ROOTS:
        old_mod = root + ".mixed_precision.experimental"
        if qualified == old_mod:
            return Migration(qualified, new_root + ".mixed_precision", (2, 9), (2, 4))
        if qualified.startswith(old_mod + "."):
            member, _, rest = qualified[len(old_mod) + 1:].partition(".")
            renamed = KERAS_RENAMES.get(member)
            new = None if renamed is None else ".".join(
                p for p in (new_root + ".mixed_precision", renamed, rest) if p)
            return Migration(qualified, new, (2, 9), (2, 4))
    if qualified == "tensorflow.mixed_precision.experimental":
        return Migration(qualified, _V1_MP, (2, 9), (2, 4))
    for old_mod in _TF_OLD_MODULES:
        if qualified.startswith(old_mod + "."):
            member, _, rest = qualified[len(old_mod) + 1:].partition(".")
            if member not in _TF_MOVED:
                return None
            removed = (2, 6) if member.endswith("graph_rewrite") else (2, 9)
            return Migration(qualified, ".".join(p for p in (_V1_MP, member, rest) if p), removed, (2, 4))
    return None


def parse_version(text: str) -> Optional[Tuple[int, int]]:
    """``"2.8"``/``"2.8.4"`` -> (2, 8); None for "" or anything unreadable (= latest)."""
    parts = text.strip().split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        return None
    return int(parts[0]), int(parts[1])
