"""The TensorFlow version and Keras generation a file's code runs on, and where each
answer came from: computed once per file (``ModuleFacts.versions``), asked by every rule.

Evidence, in order of trust:

1. the ``keras-version`` setting;
2. the file imports ``tf_keras`` (or sets ``TF_USE_LEGACY_KERAS``): Keras 2;
3. the file's own pins (a notebook's ``!pip install tensorflow-gpu==2.0``);
4. the project's pins nearest the file (``dependency_pins``: a requirements file in
   the file's folder or above it, ``setup.py``, ``setup.cfg``, pyproject, conda);
5. APIs only one generation has (``keras.ops``, ``keras.config``: Keras 3;
   ``optimizers.legacy``: Keras 2);
6. the installed packages (Keras generation only: TensorFlow installed where mplint
   runs says nothing of the TensorFlow a pinned project runs on).

A rule never counts the calls it judges as evidence: MP207 judges ``get_scaled_loss``
and asks with ``ignoring={LOSS_SCALING}``, so Keras 3 code calling it is Keras 3 code
that crashes, not Keras 2 code. Pins that disagree at one level give no answer there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, List, Optional, Sequence, Set, Tuple

Version = Tuple[int, int, int]

#: evidence kinds a rule may ignore: the loss-scaling methods (get_scaled_loss,
#: get_unscaled_gradients: Keras 2; scale_loss: Keras 3), which MP207 judges
LOSS_SCALING = "loss-scaling"
#: APIs only one generation has, which no rule judges for the generation
API = "api"

#: ``Versions.legacy_keras`` when only a ``tf_keras`` import says Keras 2: evidence about the
#: names read from tf_keras, not about ``keras``/``tf.keras`` objects the file also builds
TF_KERAS_IMPORTED = "the file imports tf_keras"
#: the generation of each Keras package an object is built from (``names.keras_package``);
#: ``keras`` and ``tf.keras`` depend on the versions, tf_keras is always Keras 2
TF_KERAS_GENERATION = 2

#: the first TensorFlow whose ``tf.keras`` is Keras 3
KERAS3_TENSORFLOW: Version = (2, 16, 0)


def version(text: str) -> Optional[Version]:
    """``"2.15"``/``"2.15.1"``/``"2.0.0rc0"`` -> (2, 15, 0) / (2, 15, 1) / (2, 0, 0)."""
    parts: List[int] = []
    for part in text.split(".")[:3]:
        digits = ""
        for ch in part:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) != len(part):
            break  # 0rc0: the rest is a pre-release tag
    if not parts:
        return None
    padded = parts + [0, 0, 0]
    return padded[0], padded[1], padded[2]


@dataclass(frozen=True)
class VersionRange:
    """The versions a requirement allows (None: unbounded on that side)."""

    lower: Optional[Version] = None
    lower_inclusive: bool = True
    upper: Optional[Version] = None
    upper_inclusive: bool = True

    def reaches(self, v: Version) -> bool:
        """Some allowed version is ``v`` or later (the latest, when unbounded)."""
        if self.upper is None:
            return True
        return self.upper >= v if self.upper_inclusive else self.upper > v

    def all_from(self, v: Version) -> bool:
        """Every allowed version is ``v`` or later."""
        return self.lower is not None and self.lower >= v

    def all_before(self, v: Version) -> bool:
        """Every allowed version is before ``v``."""
        return not self.reaches(v)

    def empty(self) -> bool:
        if self.lower is None or self.upper is None:
            return False
        if self.lower == self.upper:
            return not (self.lower_inclusive and self.upper_inclusive)
        return self.lower > self.upper

    def intersect(self, other: "VersionRange") -> "VersionRange":
        lower, lower_inc = self.lower, self.lower_inclusive
        if other.lower is not None and (lower is None or other.lower > lower
                                        or (other.lower == lower and not other.lower_inclusive)):
            lower, lower_inc = other.lower, other.lower_inclusive
        upper, upper_inc = self.upper, self.upper_inclusive
        if other.upper is not None and (upper is None or other.upper < upper
                                        or (other.upper == upper and not other.upper_inclusive)):
            upper, upper_inc = other.upper, other.upper_inclusive
        return VersionRange(lower, lower_inc, upper, upper_inc)

    def hull(self, other: "VersionRange") -> "VersionRange":
        """The smallest range holding both."""
        lower, lower_inc = self.lower, self.lower_inclusive
        if lower is not None and (other.lower is None or other.lower < lower
                                  or (other.lower == lower and other.lower_inclusive)):
            lower, lower_inc = other.lower, other.lower_inclusive
        upper, upper_inc = self.upper, self.upper_inclusive
        if upper is not None and (other.upper is None or other.upper > upper
                                  or (other.upper == upper and other.upper_inclusive)):
            upper, upper_inc = other.upper, other.upper_inclusive
        return VersionRange(lower, lower_inc, upper, upper_inc)

    @property
    def exact(self) -> Optional[Version]:
        """The one version allowed (``==2.2.0``), else None."""
        if self.lower is not None and self.lower == self.upper and self.lower_inclusive and self.upper_inclusive:
            return self.lower
        return None


def _bump(parts: Tuple[int, ...], index: int) -> Version:
    """The first version after every ``parts[:index + 1]`` release: (2, 15), 1 -> 2.16.0."""
    cut = list(parts[:index]) + [parts[index] + 1]
    return version(".".join(str(p) for p in cut)) or (0, 0, 0)


def clause_range(op: str, text: str) -> Optional[VersionRange]:
    """One clause as a range: ``^2.16`` is ``>=2.16,<3``; ``~2.15`` and ``~=2.15.1`` are
    ``>=,<2.16``; ``~=2.15`` is ``>=2.15,<3``; ``==2.15.*`` is ``>=2.15,<2.16``; conda's
    ``=2.15`` and a bare version are ``==`` (conda's ``=2.15`` allows 2.15.x)."""
    star = text.endswith("*")
    parts = tuple(int(p) for p in text.rstrip(".*").split(".") if p.isdigit())
    v = version(text.rstrip(".*"))
    if v is None or not parts:
        return None
    if star or op == "=":  # 2.15.* ; conda's "=2.15" means 2.15.*
        return VersionRange(v, True, _bump(parts, len(parts) - 1), False)
    if op == "^":
        first = next((i for i, part in enumerate(parts) if part), len(parts) - 1)
        return VersionRange(v, True, _bump(parts, first), False)
    if op == "~":
        return VersionRange(v, True, _bump(parts, 0 if len(parts) == 1 else 1), False)
    if op == "~=":
        return VersionRange(v, True, _bump(parts, len(parts) - 2), False) if len(parts) >= 2 else None
    if op in ("", "==", "==="):
        return VersionRange(v, True, v, True)
    if op in (">=", ">"):
        return VersionRange(lower=v, lower_inclusive=op == ">=")
    if op in ("<=", "<"):
        return VersionRange(upper=v, upper_inclusive=op == "<=")
    return VersionRange()  # "!=": excludes one version, bounds nothing


def requirement_range(clauses: Sequence[Tuple[str, str]]) -> Optional[VersionRange]:
    """The range of a requirement's clauses (None when one cannot be read or none is met)."""
    found = VersionRange()
    for op, text in clauses:
        one = clause_range(op, text)
        if one is None:
            return None
        found = found.intersect(one)
    return None if found.empty() else found


@dataclass(frozen=True)
class Pin:
    """A TensorFlow, Keras or tf-keras requirement, where it is written."""

    package: str  # "tensorflow", "keras" or "tf-keras" (every TensorFlow distribution is "tensorflow")
    spec: str  # the constraint as written: "==2.2.0", ">=2.12,<2.16"
    range: VersionRange
    #: where, as shown to the user ("requirements/base.txt"); "" for the checked file itself
    file: str = ""
    line: int = 0
    #: the container image the pin stands for (``nvcr.io/nvidia/tensorflow:21.02-tf2-py3``)
    image: str = ""
    #: a version a README states in prose, not an install command
    stated: bool = False

    @property
    def generation(self) -> Optional[int]:
        """The Keras generation ``tf.keras``/``keras`` give under this pin, if it says."""
        if self.package == "tf-keras":
            return None
        switch: Version = (3, 0, 0) if self.package == "keras" else KERAS3_TENSORFLOW
        if self.range.all_from(switch):
            return 3
        if self.range.all_before(switch):
            return 2
        return None

    def describe(self) -> str:
        """``TensorFlow 2.2 pinned in requirements/base.txt:3``, ``tensorflow>=2.2 in setup.py:9``."""
        where = f"in {self.file}:{self.line}" if self.file else "by this notebook's pip install"
        if self.image and self.range.upper is not None:  # an image: "<2.5" holds 2.4 or older
            major, minor = self.range.upper[0], self.range.upper[1]
            newest = "1.x" if major == 2 and minor == 0 else f"{major}.{minor - 1} or older"
            return f"TensorFlow {newest} in {self.image} ({self.file}:{self.line})"
        if self.stated:
            return f"TensorFlow {self.spec.lstrip('=')} stated {where}"
        exact = self.range.exact
        if exact is not None and self.spec.lstrip("=").strip().count(".") <= 2:
            name = {"tensorflow": "TensorFlow", "keras": "Keras"}.get(self.package, self.package)
            shown = self.spec.lstrip("=").strip()
            return f"{name} {shown} pinned {where}"
        return f"{self.package}{self.spec} {where}"

    def to_json(self) -> List[object]:
        return [self.package, self.spec, self.file, self.line]


@dataclass(frozen=True)
class ApiUse:
    """A spelling only one Keras generation has, seen in the file."""

    generation: int
    kind: str  # LOSS_SCALING or API
    api: str  # as shown: "keras.ops"


@dataclass(frozen=True)
class KerasAnswer:
    generation: int
    why: str


@dataclass(frozen=True)
class TensorFlowAnswer:
    range: VersionRange
    why: str


def _pins_generation(pins: Sequence[Pin]) -> Optional[KerasAnswer]:
    """The generation the pins agree on (a tf-keras pin leaves it open: TF_USE_LEGACY_KERAS
    may be set outside the code), with the first pin that says it."""
    if any(p.package == "tf-keras" for p in pins):
        return None
    said = [(p.generation, p) for p in pins if p.generation is not None]
    if len({g for g, _ in said}) != 1:
        return None
    generation, pin = said[0]
    assert generation is not None
    return KerasAnswer(generation, pin.describe())


def _pins_tensorflow(pins: Sequence[Pin]) -> Optional[TensorFlowAnswer]:
    """Every TensorFlow some pin allows (``requirements-gpu.txt`` and a Dockerfile are
    alternatives: the code runs on each), named by the pin allowing the newest, which
    decides whether a removed API is still there."""
    tf = [p for p in pins if p.package == "tensorflow"]
    if not tf:
        return None
    found = tf[0].range
    for pin in tf[1:]:
        found = found.hull(pin.range)
    deciding = next(p for p in tf if p.range.upper == found.upper)
    return TensorFlowAnswer(found, deciding.describe())


@dataclass(frozen=True)
class Versions:
    """Everything known about one file's versions; ask :meth:`keras` and :meth:`tensorflow`."""

    configured: Optional[int] = None
    #: "the file imports tf_keras" or "the file sets TF_USE_LEGACY_KERAS"; "" when neither
    legacy_keras: str = ""
    file_pins: Tuple[Pin, ...] = ()
    project_pins: Tuple[Pin, ...] = ()
    apis: Tuple[ApiUse, ...] = ()
    installed: Optional[int] = None
    #: per program that sets a policy governing the file's code (``main.py`` calling
    #: ``keras.config.set_dtype_policy`` and then ``make_train_step`` of this module):
    #: its place and the spellings only one generation has in it. The file runs in
    #: those programs, so where it spells nothing itself they say (set by the project)
    governing: Tuple[Tuple[str, Tuple[ApiUse, ...]], ...] = ()

    def keras(self, ignoring: FrozenSet[str] = frozenset(),
              package: Optional[str] = None) -> Optional[KerasAnswer]:
        """The Keras generation, not counting the evidence kinds in ``ignoring``; with
        ``package`` (``names.keras_package`` of the constructor), that of an object built
        from that package: a ``tf_keras`` import beside it says nothing of a
        ``keras.mixed_precision.LossScaleOptimizer``, and a tf_keras one is Keras 2."""
        if package == "tf_keras":
            return KerasAnswer(TF_KERAS_GENERATION, "it is built from tf_keras")
        if self.configured is not None:
            return KerasAnswer(self.configured, f"keras-version = {self.configured} in the configuration")
        if self.legacy_keras and not (package is not None and self.legacy_keras == TF_KERAS_IMPORTED):
            return KerasAnswer(2, self.legacy_keras)
        for pins in (self.file_pins, self.project_pins):
            if pins:
                found = _pins_generation(pins)
                if found is not None:
                    return found
        uses = [u for u in self.apis if u.kind not in ignoring]
        generations: Set[int] = {u.generation for u in uses}
        if len(generations) == 1:
            use = uses[0]
            return KerasAnswer(use.generation, f"the file uses {use.api}")
        if not uses:
            found = self._governing(ignoring)
            if found is not None:
                return found
        if self.installed is not None:
            spelled = {u.generation for u in self.apis if u.kind in ignoring}
            if spelled and self.installed not in spelled:
                # What the file spells is no evidence, but the packages installed where
                # mplint runs (a CI runner) never overrule it either.
                return None
            if ignoring and self._pins_allow_both():
                # A rule judging one generation's calls: ``tensorflow>=2.5`` allows Keras 2
                # as well, and the machine mplint runs on is no evidence of the project's.
                return None
            return KerasAnswer(self.installed, f"Keras {self.installed} is installed here")
        return None

    def _governing(self, ignoring: FrozenSet[str]) -> Optional[KerasAnswer]:
        """The generation every program whose policy governs the file spells, each on its
        own (one that spells nothing, or both, leaves it unknown)."""
        answers = []
        for place, apis in self.governing:
            generations = {u.generation for u in apis if u.kind not in ignoring}
            if len(generations) != 1:
                return None
            answers.append((place, next(u for u in apis if u.kind not in ignoring)))
        if not answers or len({use.generation for _, use in answers}) != 1:
            return None
        place, use = answers[0]
        return KerasAnswer(use.generation, f"the policy that governs it is set in {place}, which uses {use.api}")

    def _pins_allow_both(self) -> bool:
        """A TensorFlow or Keras pin of the file or the project allows both generations
        (an open lower bound such as ``tensorflow>=2.5``)."""
        return any(p.package in ("tensorflow", "keras") and p.generation is None
                   for p in (*self.file_pins, *self.project_pins))

    @property
    def keras_generation(self) -> Optional[int]:
        found = self.keras()
        return found.generation if found is not None else None

    def tensorflow_requirement(self) -> Optional[Pin]:
        """The file's or its project's TensorFlow requirement, if one is written: a project
        that installs TensorFlow runs its Keras 3 code on TensorFlow tensors unless it
        chooses another backend, TensorFlow being Keras 3's default one."""
        return next((p for p in (*self.file_pins, *self.project_pins) if p.package == "tensorflow"), None)

    def tensorflow(self) -> Optional[TensorFlowAnswer]:
        """The TensorFlow versions the file runs on, when something says (None: any, the latest
        included). Keras 3 (configured, or only Keras 3 APIs used) means TensorFlow 2.16 or later."""
        keras3 = VersionRange(lower=KERAS3_TENSORFLOW)
        if self.configured == 3:
            return TensorFlowAnswer(keras3, "keras-version = 3 in the configuration")
        for pins in (self.file_pins, self.project_pins):
            found = _pins_tensorflow(pins)
            if found is not None:
                return found
        uses = [u for u in self.apis if u.kind == API]
        if uses and all(u.generation == 3 for u in uses) and not self.legacy_keras:
            return TensorFlowAnswer(keras3, f"the file uses {uses[0].api}, which Keras 3 (TensorFlow 2.16+) has")
        return None
