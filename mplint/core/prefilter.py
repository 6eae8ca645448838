"""Byte-level tests that decide, without parsing, which files cannot produce a finding.

Two levels, both on the raw bytes (a notebook's JSON too):

* :func:`may_matter`: every rule matches canonical names, and a name only becomes
  canonical through an import of ``tensorflow``/``keras``/``tf_keras`` in the same
  file (or notebook), or through keras_applications' ``get_submodules_from_kwargs``;
  the graph rewrite can also be switched on by its environment variable. A file without these words is not even decoded.
* :class:`Prescan`: each check says, through ``Check.needs`` (or ``may_report``), which words its
  findings need (``LossScaleOptimizer`` for a loss-scaling rule) or that it reports
  only where a mixed policy may govern the file. A file no selected check may report
  in is not parsed with libcst; most TensorFlow code never touches mixed precision.

This module imports nothing heavy, so a run answered by the cache never loads libcst.
"""

from __future__ import annotations

from typing import Dict

from mplint.semantic.vocabulary import AMP_ENV_VAR, KERAS_SUBMODULE_INJECTORS, LIBRARY_PACKAGES, POLICY_SETTER_WORDS

#: ``keras`` also covers ``tf_keras``; ``tensorflow`` covers ``import tensorflow as tf``;
#: a library with its own precision switch (DeepXDE) is used without naming either, and
#: a module handed Keras by its caller (``get_submodules_from_kwargs``) names neither.
PREFILTER = (b"tensorflow", b"keras", AMP_ENV_VAR.encode()) + tuple(p.encode() for p in LIBRARY_PACKAGES) \
    + tuple(name.encode() for name in KERAS_SUBMODULE_INJECTORS)

#: Every API that sets the global policy has one of these in its name
#: (``set_global_policy``, ``experimental.set_policy``, ``config.set_dtype_policy``).
POLICY_CALL_WORDS = tuple(word.encode() for word in POLICY_SETTER_WORDS)


def may_matter(raw: bytes) -> bool:
    """Whether the file must be read further. Bytes with a NUL are UTF-16/32 text or
    not text at all: their words cannot be searched as bytes, and decoding them
    reports the file (the README's "null bytes" error), as ``fix`` always did."""
    return b"\x00" in raw or any(token in raw for token in PREFILTER)


class Prescan:
    """What a file's bytes say before it is parsed: which words it holds, and whether
    a mixed policy may govern its code (set in it, set in a file that runs it, or
    assumed by configuration). Each word is searched for once per file."""

    def __init__(self, raw: bytes, policy_elsewhere: bool = False, drops_base_scaling: bool = False,
                 library: bool = False) -> None:
        self.raw = raw
        #: a mixed (or run-time chosen) policy comes from the project or the config
        self.policy_elsewhere = policy_elsewhere
        #: the file is a library's, whose users may run it under a mixed policy
        self.library = library
        #: a method here overrides a base method that scales the loss, and does not
        self.drops_base_scaling = drops_base_scaling
        self._seen: Dict[bytes, bool] = {}

    def has(self, *words: bytes) -> bool:
        """Whether the file holds any of ``words`` (as bytes, anywhere: code, strings,
        comments; a false yes only costs a parse)."""
        for word in words:
            found = self._seen.get(word)
            if found is None:
                found = self._seen[word] = word in self.raw
            if found:
                return True
        return False

    @property
    def sets_policy(self) -> bool:
        """Whether the file itself may set the global policy (``ModuleFacts.policy_calls``)."""
        return self.has(*POLICY_CALL_WORDS)

    @property
    def policy(self) -> bool:
        """Whether a mixed policy may govern this file: ``ModuleFacts.mixed_policy()``
        can only be set when this is true."""
        return self.policy_elsewhere or self.sets_policy
