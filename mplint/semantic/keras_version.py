"""Which Keras generation (2 or 3) a file's code runs on.

The loss-scaling API differs by generation (Keras 2: ``get_scaled_loss`` /
``get_unscaled_gradients``; Keras 3: ``scale_loss``, and ``apply`` unscales), so
rules and fixes need to know it. In order of trust:

1. the ``keras-version`` setting;
2. the file imports ``tf_keras`` (or sets ``TF_USE_LEGACY_KERAS``): always Keras 2;
3. the Keras or TensorFlow version the project's dependency declarations pin;
4. the spelling the file already uses (only Keras-2 or only Keras-3 APIs): code
   written consistently for one generation was written for it, whatever happens to
   be installed where mplint runs (a CI runner, pre-commit's environment);
5. the installed ``keras``/``tensorflow`` distributions, read from their metadata
   without importing them (importing TensorFlow takes seconds), once per process.

None means unknown: rules that depend on the generation stay silent.
"""

from __future__ import annotations

import functools
import re
from importlib import metadata
from typing import Iterable, Optional, Tuple

#: distributions that ship the ``tensorflow`` package
TENSORFLOW_DISTRIBUTIONS = (
    "tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tensorflow-macos", "tensorflow-intel",
    "tensorflow-rocm", "intel-tensorflow", "tf-nightly", "tf-nightly-cpu", "tf-nightly-gpu",
)

_TF_KERAS_USE = re.compile(
    r"^\s*(?:from\s+tf_keras\b|import\s+[^\n#]*(?<![\w.])tf_keras\b)|TF_USE_LEGACY_KERAS", re.M)
# Spellings only one generation has. A hint, used only when nothing better is known.
_KERAS2_SPELLING = re.compile(
    r"\.get_scaled_loss\s*\(|\.get_unscaled_gradients\s*\(|optimizers\.legacy\b"
    r"|mixed_precision\.experimental\b"
)
_KERAS3_SPELLING = re.compile(
    r"\.scale_loss\s*\(|\bkeras\.config\.|\bkeras\.ops\b|from\s+keras\s+import\s+[^\n]*\bops\b"
    r"|\bauto_scale_loss\b|\bset_dtype_policy\b"
)


def _major_minor(version: str) -> Optional[Tuple[int, int]]:
    match = re.match(r"(\d+)\.(\d+)", version)
    return (int(match.group(1)), int(match.group(2))) if match else None


def generation_from_versions(keras: Optional[str], tensorflow: Optional[str]) -> Optional[int]:
    """The generation that ``tf.keras``/``keras`` give with these installed versions."""
    if keras:
        parsed = _major_minor(keras)
        if parsed is not None and parsed[0] >= 2:
            return 3 if parsed[0] >= 3 else 2
    if tensorflow:
        parsed = _major_minor(tensorflow)
        if parsed is not None and parsed[0] == 2:
            return 3 if parsed[1] >= 16 else 2
    return None


def _version(names: Iterable[str]) -> Optional[str]:
    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


@functools.lru_cache(maxsize=1)
def installed_generation() -> Optional[int]:
    """The generation of the installed packages; computed once per process."""
    return generation_from_versions(_version(("keras",)), _version(TENSORFLOW_DISTRIBUTIONS))


def spelling_generation(text: str) -> Optional[int]:
    """2 or 3 when the file only uses one generation's spellings, else None."""
    two = _KERAS2_SPELLING.search(text) is not None
    three = _KERAS3_SPELLING.search(text) is not None
    if two != three:
        return 2 if two else 3
    return None


def detect(configured: Optional[int], text: str, installed: Optional[int] = None,
           use_installed: bool = True, declared: Optional[int] = None) -> Optional[int]:
    """The Keras generation for a file with source ``text`` (see the module doc).

    ``declared`` is what the project's dependency declarations pin (project facts);
    it comes before the packages installed where mplint happens to run.
    """
    if configured is not None:
        return configured
    if ("tf_keras" in text or "TF_USE_LEGACY_KERAS" in text) and _TF_KERAS_USE.search(text):
        return 2
    if declared is not None:
        return declared
    spelled = spelling_generation(text)
    if spelled is not None:
        return spelled
    if use_installed:
        found = installed if installed is not None else installed_generation()
        if found is not None:
            return found
    return None
