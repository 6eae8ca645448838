"""The byte-level prefilter: which files cannot produce a finding, decided without parsing.

Every rule matches canonical names, and a name only becomes canonical through an
import of ``tensorflow``/``keras``/``tf_keras`` in the same file (or notebook); the
graph rewrite can also be switched on by its environment variable. A file whose
bytes contain none of these words is skipped before it is decoded or parsed. This
module imports nothing heavy, so a run answered by the cache never loads libcst.
"""

from __future__ import annotations

#: ``keras`` also covers ``tf_keras``; ``tensorflow`` covers ``import tensorflow as tf``.
PREFILTER = (b"tensorflow", b"keras", b"TF_ENABLE_AUTO_MIXED_PRECISION")


def may_matter(raw: bytes) -> bool:
    return any(token in raw for token in PREFILTER)
