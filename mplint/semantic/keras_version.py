"""What a file's text and the installed packages say about its Keras generation.

The loss-scaling API differs by generation (Keras 2: ``get_scaled_loss`` /
``get_unscaled_gradients``; Keras 3: ``scale_loss``, and ``apply`` unscales), so
rules and fixes need to know it. This module reads the evidence in the file (a
``tf_keras`` import, APIs only one generation has) and in the installed
``keras``/``tensorflow`` distributions (their metadata, without importing them:
importing TensorFlow takes seconds; once per process). :mod:`versions` weighs it
with the settings and the project's pins; :func:`versions_of` builds that answer.
"""

from __future__ import annotations

import functools
import re
from typing import Iterable, List, Optional, Sequence, Tuple

from mplint.core.lazy_regex import lazy_compile
from mplint.semantic.distributions import installed_version
from mplint.semantic.versions import API, KERAS3_TENSORFLOW, LOSS_SCALING, TF_KERAS_IMPORTED, ApiUse, Pin, Versions
from mplint.semantic.vocabulary import LEGACY_KERAS_ENV_VAR, TENSORFLOW_DISTRIBUTIONS

_TF_KERAS_IMPORT = re.compile(r"^\s*(?:from\s+tf_keras\b|import\s+[^\n#]*(?<![\w.])tf_keras\b)", re.M)
_LEGACY_SWITCH = re.compile(rf"^[^#\n]*{re.escape(LEGACY_KERAS_ENV_VAR)}[^\n]*", re.M)
#: a mention that may set the variable: a string key (``os.environ["..."] = "1"``,
#: ``setdefault``, ``update``), an assignment (``%env TF_USE_LEGACY_KERAS=1``, a shell
#: line); prose in a docstring naming it sets nothing
_LEGACY_SET = re.compile(rf"""['"]{re.escape(LEGACY_KERAS_ENV_VAR)}\b|\b{re.escape(LEGACY_KERAS_ENV_VAR)}\s*=""")
#: a mention of the variable that only reads it (``os.environ.get("TF_USE_LEGACY_KERAS")``,
#: ``os.getenv(...)``, ``os.environ["..."] == "1"``, ``"..." in os.environ``): a test of the
#: generation, which sets nothing
_LEGACY_READ = re.compile(
    rf"""(?:getenv|\.get|\.pop)\(\s*['"]{re.escape(LEGACY_KERAS_ENV_VAR)}['"]"""
    rf"""|['"]{re.escape(LEGACY_KERAS_ENV_VAR)}['"]\s*\](?!\s*=(?!=))"""
    rf"""|['"]{re.escape(LEGACY_KERAS_ENV_VAR)}['"]\s+(?:not\s+)?in\b""")

#: (generation, kind, pattern, as shown) of spellings only one generation has; a line
#: comment never counts. Sources: the reference's table of names (section 2).
_SPELLINGS: Sequence[Tuple[int, str, str, str, str]] = (
    # (generation, kind, a word every match holds, pattern, as shown)
    (2, LOSS_SCALING, "get_scaled_loss", r"\.get_scaled_loss\s*\(", "get_scaled_loss()"),
    (2, LOSS_SCALING, "get_unscaled_gradients", r"\.get_unscaled_gradients\s*\(", "get_unscaled_gradients()"),
    (3, LOSS_SCALING, ".scale_loss", r"\.scale_loss\s*\(", "scale_loss()"),
    # Keras 3 raises ImportError for optimizers.legacy; TF <= 2.8 had .experimental
    (2, API, "legacy", r"\boptimizers\.legacy\b", "optimizers.legacy"),
    (2, API, "experimental", r"\bmixed_precision\.experimental\b|\bmixed_precision\s+import\s+experimental\b",
     "mixed_precision.experimental"),
    (3, API, "config", r"\bkeras\.config\.", "keras.config"),
    (3, API, "ops", r"\bkeras\.ops\b|^\s*from\s+keras\s+import\s+[^\n#]*\bops\b", "keras.ops"),
    (3, API, "LossScaleOptimizer", r"\bkeras\.optimizers\.LossScaleOptimizer\b",
     "keras.optimizers.LossScaleOptimizer"),
    (3, API, "DType", r"\bkeras\.(?:dtype_policies\b|DTypePolicy\b)", "keras.DTypePolicy"),
    (3, API, "set_dtype_policy", r"\bset_dtype_policy\s*\(", "set_dtype_policy()"),
    (3, API, "auto_scale_loss", r"\bauto_scale_loss\s*=", "compile(auto_scale_loss=...)"),
)
_PATTERNS = [(g, kind, word, lazy_compile(p, re.M), shown) for g, kind, word, p, shown in _SPELLINGS]
#: ``import keras_core as keras`` spells Keras 3 names next to a Keras 2 ``tf.keras``
_KERAS_CORE = re.compile(r"\bkeras_core\b")


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
            return 3 if parsed >= KERAS3_TENSORFLOW[:2] else 2
    return None


def _version(names: Iterable[str]) -> Optional[str]:
    for name in names:
        found = installed_version(name)
        if found is not None:
            return found
    return None


@functools.lru_cache(maxsize=1)
def installed_generation() -> Optional[int]:
    """The generation of the installed packages; computed once per process."""
    return generation_from_versions(_version(("keras",)), _version(TENSORFLOW_DISTRIBUTIONS))


def legacy_keras(text: str) -> str:
    """Why the file runs on Keras 2 whatever is installed ("" when it does not say)."""
    if "tf_keras" in text and _TF_KERAS_IMPORT.search(text):
        return TF_KERAS_IMPORTED
    if sets_legacy_keras(text):
        return "the file sets TF_USE_LEGACY_KERAS"
    return ""


def sets_legacy_keras(text: str) -> bool:
    """Whether a line outside comments sets ``TF_USE_LEGACY_KERAS`` (any mention but a
    read: a file that only tests the variable picks calls by it, it does not switch)."""
    if LEGACY_KERAS_ENV_VAR not in text:
        return False
    return any(_LEGACY_SET.search(_LEGACY_READ.sub("", line.group(0)))
               for line in _LEGACY_SWITCH.finditer(text))


def api_uses(text: str) -> Tuple[ApiUse, ...]:
    """The spellings only one generation has that the file uses, first use first."""
    found: List[Tuple[int, ApiUse]] = []
    keras_core = "keras_core" in text and _KERAS_CORE.search(text) is not None
    for generation, kind, word, pattern, shown in _PATTERNS:
        if word not in text or (keras_core and kind == API and generation == 3):
            continue
        for match in pattern.finditer(text):
            start = text.rfind("\n", 0, match.start()) + 1
            if text[start:match.start()].lstrip().startswith("#"):
                continue  # a comment
            found.append((match.start(), ApiUse(generation, kind, shown)))
            break
    return tuple(use for _, use in sorted(found, key=lambda item: item[0]))


def program_evidence(text: str) -> Tuple[ApiUse, ...]:
    """What a program's text says of the generation every module it runs gets: the
    spellings only one generation has, and ``TF_USE_LEGACY_KERAS`` set (``tf.keras`` is
    then Keras 2 in each of them). A ``tf_keras`` import is no such evidence: it
    changes only the names imported from it."""
    uses = api_uses(text)
    if sets_legacy_keras(text):
        uses += (ApiUse(2, API, LEGACY_KERAS_ENV_VAR),)
    return uses


def spelling_generation(text: str) -> Optional[int]:
    """2 or 3 when the file only uses one generation's spellings, else None."""
    generations = {use.generation for use in api_uses(text)}
    return generations.pop() if len(generations) == 1 else None


def versions_of(configured: Optional[int], text: str, installed: Optional[int] = None,
                use_installed: bool = True, file_pins: Tuple[Pin, ...] = (),
                project_pins: Tuple[Pin, ...] = ()) -> Versions:
    """Everything known about the versions of a file with source ``text``."""
    if use_installed and installed is None:
        installed = installed_generation()
    return Versions(configured=configured, legacy_keras=legacy_keras(text), file_pins=file_pins,
                    project_pins=project_pins, apis=api_uses(text),
                    installed=installed if use_installed else None)


def detect(configured: Optional[int], text: str, installed: Optional[int] = None,
           use_installed: bool = True, project_pins: Tuple[Pin, ...] = ()) -> Optional[int]:
    """The Keras generation for a file with source ``text`` (see :mod:`versions`)."""
    return versions_of(configured, text, installed, use_installed, project_pins=project_pins).keras_generation
