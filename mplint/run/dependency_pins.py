"""The TensorFlow and Keras versions a project pins, and which files each pin covers.

Where mplint runs without TensorFlow (pre-commit's isolated environment, a CI lint
job), the project's own pins are what says which TensorFlow and Keras the code runs
on. They are read from every place Python projects put them: PEP 621 and Poetry
tables in ``pyproject.toml`` (``tensorflow = "^2.16"``, ``{ version = "~2.15" }``),
``setup.cfg`` and ``setup.py`` ``install_requires``, conda ``environment.yml``
(``tensorflow=2.15``, ``conda-forge::keras>=3``, a ``pip:`` section), requirements
files (``requirements*.txt``, ``*requirements.in``, every file of a
``requirements/`` folder), a notebook's ``!pip install tensorflow-gpu==2.0``, and the
``pip install`` lines of shell scripts (``setup.sh``), Dockerfiles and READMEs (with the
official image a README names). A lock file (``poetry.lock``, ``uv.lock``, ``pdm.lock``,
``Pipfile.lock``) says the version its declaration resolved to, and replaces that
declaration's range. A README that only states the version in prose ("We used Python 3.7
with **TensorFlow 2.2**") counts where nothing else in its folder pins TensorFlow.

A pin covers the files of its folder and below: ``project_a/requirements.txt`` says
nothing of ``project_b/``. A dependency file in a folder without code
(``requirements/base.txt``, ``docker/requirements.txt``) belongs to the folder above.
Each file is judged by the nearest pins above it (see :class:`ProjectPins`). A README
also covers its folder with the Dockerfile or requirements file of the tree it links
to, and a script with the pins of a project folder it puts on ``sys.path``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Set, Tuple

from mplint.core.lazy_regex import lazy_compile
from mplint.core.regular_files import read_regular
from mplint.semantic.versions import Pin, VersionRange, requirement_range
from mplint.semantic.vocabulary import TENSORFLOW_DISTRIBUTIONS

#: the names a pin may give Keras or TensorFlow (``-`` or ``_`` between words, as pip reads them)
_PACKAGE = "(" + "|".join(["keras", "tf[-_]keras", *(re.escape(name).replace(r"\-", "[-_]") for name in
                                                     sorted(TENSORFLOW_DISTRIBUTIONS, key=len, reverse=True))]) + ")"
_PACKAGE_NAME = lazy_compile(_PACKAGE, re.IGNORECASE)
#: ``tensorflow>=2.16,<2.18`` (requirements, PEP 508 strings, setup.cfg lines)
_REQUIREMENT = lazy_compile(rf"""^\s*["']?\s*{_PACKAGE}(?![\w.-])\s*(?:\[[^\]]*\])?\s*"""
                          r"""((?:[<>=!~]=?=?\s*[\d.*]+[\w.]*\s*,?\s*)*)""", re.IGNORECASE)
#: conda: ``tensorflow=2.15``, ``conda-forge::keras>=3``, ``tensorflow 2.15.*``
_CONDA = lazy_compile(rf"""^(?:[\w-]+::)?{_PACKAGE}(?![\w.-])((?:\s*(?:[<>=!~]=?=?)?\s*\d[\d.*]*\s*,?)*)""",
                    re.IGNORECASE)
#: ``install_requires = tensorflow<2.16`` (setup.cfg, one requirement on the key's line)
_KEY = lazy_compile(r"^[\w.-]+\s*=\s*(?P<value>\S.*)$")
#: Poetry: ``tensorflow = "^2.16"`` or ``tensorflow = { version = "~2.15", ... }``
_POETRY = lazy_compile(rf"""^\s*["']?{_PACKAGE}["']?\s*=\s*(?:\{{[^}}]*?\bversion\s*=\s*)?["']([^"']+)["']""",
                     re.IGNORECASE)
#: ``2.0.0-rc0``, ``2.0.0b1``, ``2.0.0.alpha0``: the release they lead to is what counts
_PRE_RELEASE = lazy_compile(r"(\d)(?:[-_.]?(?:a|b|c|rc|alpha|beta|dev|pre|post)\d*)+", re.IGNORECASE)
_NAMED = lazy_compile(r"keras|tensorflow|tf-nightly", re.IGNORECASE)
_QUOTED = lazy_compile(r"[\"']([^\"']+)[\"']")
_CLAUSE = lazy_compile(r"(\^|~=|~|[<>=!]=?=?|(?<![\d.]))\s*(\d[\d.*]*)")
#: ``!pip install -q tensorflow-gpu==2.0``, ``%pip install``, ``!python -m pip install``
_PIP_INSTALL = lazy_compile(r"(?:^|[\s!%/}])(?:pip3?|-m\s+pip)\s+install\s+(?P<args>.*)$")
#: ``FROM tensorflow/tensorflow:2.4.1-gpu`` (the official images; ``latest`` pins nothing),
#: also as an ``ARG`` default that a ``FROM ${IMAGE}`` uses
_TENSORFLOW_IMAGE = lazy_compile(
    r"^\s*(?:FROM|ARG)\s.*?(?:(?<![\w/.-])(?:docker\.io/)?tensorflow/tensorflow"
    # the clouds' TensorFlow images: AWS Deep Learning Containers
    # (``<account>.dkr.ecr.<region>.amazonaws.com/tensorflow-training:2.2.0-gpu-py37``)
    r"|\.amazonaws\.com/tensorflow-(?:training|inference))"
    r":(\d+\.\d+(?:\.\d+)?)", re.IGNORECASE)
#: Google's Deep Learning Containers, ``gcr.io/deeplearning-platform-release/tf2-gpu.2-4``
_GOOGLE_DLC_IMAGE = lazy_compile(r"^\s*(?:FROM|ARG)\s.*?deeplearning-platform-release/tf2?-(?:gpu|cpu)\.(\d+)-(\d+)",
                                 re.IGNORECASE)
#: NVIDIA's NGC images, ``nvcr.io/nvidia/tensorflow:21.02-tf2-py3``: year.month of the release
_NGC_IMAGE = lazy_compile(r"^\s*(?:FROM|ARG)\s.*?(nvcr\.io/nvidia/tensorflow:(\d\d)\.(\d\d)-tf([12])\S*)", re.IGNORECASE)
#: (year, month) each TensorFlow minor version was released [public release dates]: an NGC
#: image of a month holds no TensorFlow released after it, whatever its exact version
_TENSORFLOW_RELEASES = (((20, 12), "2.4"), ((21, 5), "2.5"), ((21, 8), "2.6"), ((21, 11), "2.7"),
                        ((22, 2), "2.8"), ((22, 5), "2.9"), ((22, 9), "2.10"), ((22, 11), "2.11"),
                        ((23, 3), "2.12"), ((23, 7), "2.13"), ((23, 9), "2.14"), ((23, 11), "2.15"),
                        ((24, 3), "2.16"))
#: an unnumbered official ``-py3`` tag (``tensorflow/tensorflow:latest-gpu-py3``): Docker Hub
#: tagged Python 3 images "-py3" only up to TF 1.15.0 and 2.1.0 ("All newer images are Python
#: 3 only. Tags containing -py3 are deprecated", hub.docker.com/r/tensorflow/tensorflow, quoted
#: in Delta-ML/delta#238 and tensorflow/tensorflow#41153), so ``latest-*py3`` holds TF 2.1 or
#: older; ``nightly-*py3`` stopped when the tag was dropped (tensorflow/docs#1588, June 2020),
#: a 2.3 nightly at the newest
_PY3_IMAGE = lazy_compile(r"^\s*(?:FROM|ARG)\s.*?((?<![\w/.-])(?:docker\.io/)?tensorflow/tensorflow:"
                          r"(latest|nightly)(?:-[\w]+)*?-py3\b\S*)", re.IGNORECASE)
_PY3_NEWEST = {"latest": 1, "nightly": 3}  # the newest 2.x minor version each held
_DOCKERFILE = lazy_compile(r"^(?:dockerfile(?:\..*)?|.*\.dockerfile)$", re.IGNORECASE)
#: a README's install instructions: its ``pip install`` lines and the official image it names
_README = lazy_compile(r"^readme(?:\.(?:md|rst|txt))?$", re.IGNORECASE)
_IMAGE_MENTION = lazy_compile(r"(?<![\w/.-])(?:docker\.io/)?tensorflow/tensorflow:(\d+\.\d+(?:\.\d+)?)")
#: files that may pin TensorFlow or Keras wherever they are
DECLARATION_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "environment.yml", "environment.yaml", "Pipfile")
#: lock files, and the declaration each resolves: the locked version replaces its range
LOCK_FILES = {"poetry.lock": "pyproject.toml", "uv.lock": "pyproject.toml", "pdm.lock": "pyproject.toml",
              "Pipfile.lock": "Pipfile"}
#: a TOML lock's package entry: ``[[package]]`` then ``name = "tensorflow"`` ... ``version = "2.3.0"``
_LOCKED_ENTRY = lazy_compile(r'^name\s*=\s*"([^"]+)"\s*$(?:\n(?!\[)[^\n]*)*?\nversion\s*=\s*"([^"]+)"', re.MULTILINE)
#: Pipfile.lock (JSON): ``"tensorflow": { ... "version": "==2.3.0" }``
_PIPFILE_LOCKED = lazy_compile(r'"([\w.-]+)"\s*:\s*\{[^{}]*?"version"\s*:\s*"==([^"]+)"')
#: a README stating the version in prose: ``with **Tensorflow 2.2**``, ``TensorFlow version 2.4.1``,
#: ``tensorflow-gpu v1.15``; "2.4 or later", "2.4+" and ">= 2.4" state a lowest version
_STATED = lazy_compile(r"(?<![\w/.=-])(?:tensorflow(?:[-_]gpu)?|tf)[\s*_`]*(?:version[\s:*_`]*)?(>=\s*)?v?"
                       r"(\d+\.\d+(?:\.\d+)?)(?!\w|\.\d)"
                       r"(\s*(?:\+|or (?:later|newer|higher|above|greater)|and (?:later|newer|higher|above)))?",
                       re.IGNORECASE | re.ASCII)  # ASCII words: "在tensorflow2.0上运行" states 2.0
#: "TensorFlow 2.0" names the second generation as often as its first release
_GENERATION_NAMES = frozenset({"2.0", "1.0"})
#: a TensorFlow 1 release other than 1.0 (``1.14``, ``1.15.2``): a line that names one beside
#: "TensorFlow 2.0" ("runs on tensorflow2.0 or 1.14") speaks of releases, not generations
_TF1_RELEASE = lazy_compile(r"(?<![\w.])1\.(?:1[0-5]|[1-9])(?:\.\d+)?(?!\w|\.\d)", re.ASCII)
_AT_LEAST = lazy_compile(r"(?:>=|at least|minimum|requires?|required|or later|or newer)\s*[*_`]*\s*(?:tensorflow|tf)?[\s*_`]*$", re.IGNORECASE)
_REQUIREMENTS = lazy_compile(r"^requirements.*\.(?:txt|in)$|^.*requirements\.(?:txt|in)$")
_SKIP_FOLDERS = {".git", ".venv", "venv", "node_modules", "build", "dist", "site-packages", "__pycache__"}


def _package(name: str) -> str:
    name = name.lower().replace("_", "-")
    if name == "keras":
        return "keras"
    return "tf-keras" if name == "tf-keras" else "tensorflow"


def _requirements_of(line: str, conda: bool) -> Iterator[Tuple[str, str]]:
    """(package, constraint text) of each TensorFlow/Keras pin on one line of a
    dependency file (``conda``: an environment file)."""
    line = line.split("#", 1)[0].strip()
    poetry = None if conda else _POETRY.match(line)
    if poetry:
        yield poetry.group(1), poetry.group(2)
        return
    line = line.lstrip("-").strip()
    pattern = _CONDA if conda else _REQUIREMENT
    key = None if conda else _KEY.match(line)
    seen: Set[Tuple[str, str]] = set()
    for item in [line, *_QUOTED.findall(line), *([key.group("value")] if key else [])]:
        match = pattern.match(item)
        if match and (match.group(2).strip() or _package(match.group(1)) == "tf-keras"):
            found = (match.group(1).lower(), match.group(2).strip())
            if found not in seen:  # the line and its quoted requirement are one
                seen.add(found)
                yield found


def _pin(package: str, constraint: str, file: str, line: int) -> Optional[Pin]:
    clauses = _CLAUSE.findall(_PRE_RELEASE.sub(r"\1", constraint))
    found = requirement_range(clauses)
    name = _package(package)
    if found is None or (not clauses and name != "tf-keras"):
        return None
    spec = ",".join(f"{op}{text}" for op, text in clauses)
    return Pin(name, spec, found, file, line)


def pins_in_text(text: str, file: str, conda: bool = False) -> List[Pin]:
    """The pins of a dependency file's text (``file``: its name as shown)."""
    found: List[Pin] = []
    if not _NAMED.search(text):
        return found
    for number, line in enumerate(text.splitlines(), 1):
        if not _NAMED.search(line):
            continue
        for package, constraint in _requirements_of(line, conda):
            pin = _pin(package, constraint, file, number)
            if pin is not None:
                found.append(pin)
    return found


def shell_pins(lines: Iterable[str], file: str = "") -> Tuple[Pin, ...]:
    """The pins ``pip install`` commands among ``lines`` install (a notebook's
    ``!pip install tensorflow-gpu==2.0`` cells: the notebook's own, ``file`` "";
    a Dockerfile's ``RUN pip install``), and a Dockerfile's ``FROM tensorflow/tensorflow:2.4.1-gpu``."""
    found: List[Pin] = []
    variables: Dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        line = _expand(line, variables)
        image = _TENSORFLOW_IMAGE.match(line) if file else None
        if image:
            pin = _pin("tensorflow", "==" + image.group(1), file, number)
            found += [pin] if pin is not None else []
        google = _GOOGLE_DLC_IMAGE.match(line) if file and "deeplearning-platform-release" in line else None
        if google:
            pin = _pin("tensorflow", f"=={google.group(1)}.{google.group(2)}.*", file, number)
            found += [pin] if pin is not None else []
        ngc = _NGC_IMAGE.match(line) if file and "nvcr.io" in line else None
        if ngc:
            found += [p for p in [_ngc_pin(ngc, file, number)] if p is not None]
        py3 = _PY3_IMAGE.match(line) if file and "py3" in line and not image else None
        if py3:
            found.append(_py3_pin(py3, file, number))
        match = _PIP_INSTALL.search(line.strip())
        if match is None:
            continue
        for arg in match.group("args").split():
            arg = arg.strip("\"'")
            if arg.startswith("-"):
                continue
            requirement = _REQUIREMENT.match(arg)
            if requirement and requirement.group(2).strip():
                pin = _pin(requirement.group(1), requirement.group(2), file, number if file else 0)
                if pin is not None:
                    found.append(pin)
    return tuple(found)


#: ``ENV TENSORFLOW_VERSION=2.4.0``, ``ARG TF=2.4`` (Dockerfiles), ``TF_VERSION=2.4.0``
#: or ``export TF_VERSION=2.4.0`` (shell)
_VARIABLE = lazy_compile(r"^\s*(?:(?:ENV|ARG)\s+|export\s+)?([A-Za-z_]\w*)(?:=|\s+(?=[\w.\"']))\s*"
                         r"([\"']?)([\w.+-]+)\2\s*$")
_REFERENCE = lazy_compile(r"\$\{(\w+)\}|\$(\w+)")


def _expand(line: str, variables: Dict[str, str]) -> str:
    """``line`` with the variables set on earlier lines put in (``pip install
    tensorflow==${TENSORFLOW_VERSION}``); records a variable this line sets."""
    if "$" in line:
        line = _REFERENCE.sub(lambda m: variables.get(m.group(1) or m.group(2), m.group(0)), line)
    setting = _VARIABLE.match(line) if "=" in line or line.lstrip()[:4] in ("ENV ", "ARG ") else None
    if setting:
        variables[setting.group(1)] = setting.group(3)
    return line


def readme_pins(lines: Iterable[str], file: str) -> List[Pin]:
    """What a README's install instructions pin: ``pip install tensorflow==2.4.0`` lines
    and the official image it names (``docker image tensorflow/tensorflow:2.4.0-gpu``)."""
    lines = list(lines)
    found = [pin for pin in shell_pins(lines, file) if not pin.image]
    for number, line in enumerate(lines, 1):
        for match in _IMAGE_MENTION.finditer(line):
            pin = _pin("tensorflow", "==" + match.group(1), file, number)
            found += [pin] if pin is not None else []
    return found


def stated_pins(lines: Iterable[str], file: str) -> List[Pin]:
    """The TensorFlow versions a README states in prose (``We used Python 3.7 with
    **Tensorflow 2.2**``): the versions the authors ran, each one a version the code runs on."""
    found: List[Pin] = []
    for number, line in enumerate(lines, 1):
        if "pip" in line or "docker" in line.lower():
            continue  # install commands are read as pins already
        for match in _STATED.finditer(line):
            if match.group(2) in _GENERATION_NAMES and not _TF1_RELEASE.search(line[:match.start()] + " "
                                                                               + line[match.end():]):
                continue  # "the tf2.0 version", "tf.keras (TensorFlow 2.0)": TF 2, not the 2.0 release
            lowest = bool(match.group(1) or match.group(3)) or bool(_AT_LEAST.search(line[:match.start()][-20:]))
            pin = _pin("tensorflow", (">=" if lowest else "=") + match.group(2), file, number)  # 2.2: any 2.2.x
            found += [replace(pin, stated=True)] if pin is not None else []
    return found


def lock_pins(text: str, file: str) -> List[Pin]:
    """The TensorFlow and Keras versions a lock file resolved (``poetry.lock``'s
    ``[[package]]`` entries, ``Pipfile.lock``'s ``"version": "==2.3.0"``)."""
    entries = _PIPFILE_LOCKED if file.endswith("Pipfile.lock") else _LOCKED_ENTRY
    found: List[Pin] = []
    for match in entries.finditer(text):
        name = match.group(1)
        if _PACKAGE_NAME.fullmatch(name):
            line = text.count("\n", 0, match.start(2)) + 1  # the version's line
            pin = _pin(name, "==" + match.group(2), file, line)
            found += [pin] if pin is not None else []
    return found


def _py3_pin(image: "re.Match[str]", file: str, line: int) -> Pin:
    """An unnumbered ``-py3`` official image as the newest TensorFlow its tag ever held."""
    minor = _PY3_NEWEST[image.group(2).lower()]
    return Pin("tensorflow", f"<2.{minor + 1}", VersionRange(upper=(2, minor + 1, 0), upper_inclusive=False),
               file, line, image.group(1))


def _ngc_pin(image: "re.Match[str]", file: str, line: int) -> Optional[Pin]:
    """An NGC image as the newest TensorFlow it can hold: the last minor version released
    by its month (``21.02``: 2.4); a ``-tf1`` image holds TensorFlow 1.x."""
    if image.group(4) == "1":
        return Pin("tensorflow", "<2", VersionRange(upper=(2, 0, 0), upper_inclusive=False), file, line,
                   image.group(1))
    month = (int(image.group(2)), int(image.group(3)))
    if month >= _TENSORFLOW_RELEASES[-1][0]:
        return None  # newer than this table: any version
    newest = 3
    for released, minor in _TENSORFLOW_RELEASES:
        if released <= month:
            newest = int(minor.split(".")[1])
    return Pin("tensorflow", f"<2.{newest + 1}", VersionRange(upper=(2, newest + 1, 0), upper_inclusive=False),
               file, line, image.group(1))


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


@dataclass
class ProjectPins:
    """The pins of a project by the folder they cover ("" is the root)."""

    root: Optional[Path] = None
    by_folder: Dict[str, Tuple[Pin, ...]] = field(default_factory=dict)
    #: module (absolute path) -> the pins the version guards on every import of it state
    #: (:mod:`mplint.run.version_routes`): nearer to its code than any folder's
    guarded: Dict[str, Tuple[Pin, ...]] = field(default_factory=dict)

    def for_file(self, path: str, text: str = "") -> Tuple[Pin, ...]:
        """The pins that decide for the file ``path``: for each package, those of the
        nearest folder at or above it that pins that package; for a package none of
        them pins, those of a project folder the file's ``text`` puts on ``sys.path``
        to import its code (``sys.path.append('/opt/ml/code/models/detection')``): the
        file runs in that code's environment."""
        if self.root is None or not (self.by_folder or self.guarded):
            return ()
        folder = _relative(Path(os.path.abspath(path)).parent, self.root)
        chain = _chain(folder) if not (folder.startswith("/") or folder.startswith("..")) else [""]
        route = list(self.guarded.get(os.path.abspath(path), ()))
        out, seen = self._nearest(chain, {p.package for p in route})
        out = route + out
        if "sys.path" in text:
            for added in _sys_path_folders(text, Path(os.path.abspath(path)).parent, self.root):
                more, seen = self._nearest(_chain(added), seen)
                out += more
        return tuple(out)

    def _nearest(self, chain: List[str], seen: Set[str]) -> Tuple[List[Pin], Set[str]]:
        """The pins of each package not in ``seen`` from the first folder of ``chain`` pinning it."""
        out: List[Pin] = []
        seen = set(seen)
        for name in chain:
            pins = self.by_folder.get(name, ())
            packages = {p.package for p in pins} - seen
            out += [p for p in pins if p.package in packages]
            seen |= packages
        return out, seen

    def to_json(self) -> List[object]:
        """Every pin and where it is: a part of the run's cache key, so editing a
        requirements file changes the next cached run."""
        found: List[object] = [[folder, [p.to_json() for p in pins]] for folder, pins in sorted(self.by_folder.items())]
        found += [[module, [p.to_json() for p in pins]] for module, pins in sorted(self.guarded.items())]
        return found


def _chain(folder: str) -> List[str]:
    """``folder`` (relative to the root, "" or "." for the root) and each folder above it."""
    chain = ["" if folder == "." else folder]
    while chain[-1]:
        chain.append(chain[-1].rpartition("/")[0])
    return chain


#: ``sys.path.append("…/detection")``, ``sys.path.insert(0, '../lib')``: a literal folder only
#: (a statement of its own line, not a string that shows one)
_SYS_PATH = lazy_compile(r"""^[ \t]*sys\.path\.(?:append\(|insert\(\s*\d+\s*,)\s*[rR]?(["'])([^"'\n]+)\1\s*\)""",
                         re.MULTILINE)


def _sys_path_folders(text: str, here: Path, root: Path) -> List[str]:
    """The project folders (relative to ``root``) that ``text`` puts on ``sys.path``: a
    relative path from the file's folder, or an absolute one (a container's
    ``/opt/ml/code/models/detection``) whose last parts name a folder of the project."""
    found: List[str] = []
    for match in _SYS_PATH.finditer(text):
        written = match.group(2).rstrip("/")
        if not written or written in (".", ".."):
            continue  # the file's own folder or its parent: already in its chain
        candidates: List[Path] = []
        if os.path.isabs(written):
            parts = Path(written).parts[1:]
            candidates = [root.joinpath(*parts[i:]) for i in range(len(parts))]
        else:
            candidates = [here / written]
        for candidate in candidates:
            folder = _relative(Path(os.path.normpath(candidate)), root)
            if not folder.startswith(("/", "..")) and folder not in (".", "") and candidate.is_dir():
                found.append(folder)
                break
    return found


def dependency_files(root: str, code_folders: Optional[Set[str]] = None) -> List[Tuple[str, str]]:
    """(file, folder it covers) of every file that may pin versions: in the root and
    every folder holding code, and in their subfolders without code (``requirements/``,
    ``docker/``), which cover the folder above (absolute paths)."""
    code = code_folders or set()
    found: List[Tuple[str, str]] = []
    for folder in sorted({root, *code}):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in sorted(names):
            if name in DECLARATION_FILES or name in LOCK_FILES or ("requirements" in name and _REQUIREMENTS.match(name)) \
                    or ("ockerfile" in name.lower() and _DOCKERFILE.match(name)) or name.endswith(".sh") \
                    or _README.match(name):
                if not os.path.isdir(folder + os.sep + name):  # a folder named Dockerfile holds one
                    found.append((folder + os.sep + name, folder))
                    continue
            if "." not in name and name not in _SKIP_FOLDERS:
                path = folder + os.sep + name
                if path in code or not os.path.isdir(path):
                    continue
                # a folder without code: requirements/base.txt, docker/requirements.txt
                every = name.startswith("requirements")
                try:
                    inner = sorted(os.listdir(path))
                except OSError:
                    continue
                found += [(path + os.sep + n, folder) for n in inner
                          if _REQUIREMENTS.match(n) or (every and n.endswith((".txt", ".in")))
                          or _DOCKERFILE.match(n) or n.endswith(".sh")]
    return found


def project_pins(root: Optional[Path], files: Iterable[str] = ()) -> ProjectPins:
    """The pins of the project at ``root`` whose code is ``files`` (absolute paths)."""
    if root is None:
        return ProjectPins()
    top = os.path.abspath(root)
    inside = top.rstrip(os.sep) + os.sep
    code_folders: Set[str] = set()
    for folder in {path.rpartition(os.sep)[0] for path in files}:
        while folder not in code_folders and folder.startswith(inside):
            code_folders.add(folder)
            folder = folder.rpartition(os.sep)[0]
    by_folder: Dict[str, List[Pin]] = {}
    for path, folder in dependency_files(top, code_folders):
        try:  # a FIFO named setup.cfg is skipped, never waited on
            text = read_regular(Path(path)).decode("utf-8", "replace")
        except OSError:
            continue
        pins = _pins_of(path, text, top)
        if _README.match(os.path.basename(path)):
            # "A sample Dockerfile is available [here](../detection/docker/Dockerfile)":
            # the environment the README's folder is run in
            for linked in _linked_files(text, os.path.dirname(path), top):
                try:
                    pins += _pins_of(linked, read_regular(Path(linked)).decode("utf-8", "replace"), top)
                except OSError:
                    continue
            pins = pins or stated_pins(text.splitlines(), _relative(Path(path), Path(top)))
        if pins:
            key = os.path.relpath(folder, top).replace(os.sep, "/")
            by_folder.setdefault("" if key == "." else key, []).extend(pins)
    return ProjectPins(root, {k: _resolved(v) for k, v in by_folder.items()})


def _resolved(pins: List[Pin]) -> Tuple[Pin, ...]:
    """A folder's pins with what its lock files resolved in place of the ranges their
    declarations wrote, and a README's prose only where nothing else pins TensorFlow."""
    locked = {(LOCK_FILES[os.path.basename(p.file)], p.package) for p in pins if os.path.basename(p.file) in LOCK_FILES}
    kept = [p for p in pins if (os.path.basename(p.file), p.package) not in locked]
    written = [p for p in kept if p.package == "tensorflow" and not p.stated]
    return tuple(p for p in kept if not (written and p.stated))


def _pins_of(path: str, text: str, top: str) -> List[Pin]:
    """The pins of the dependency file ``path`` (inside ``top``) holding ``text``."""
    shown = _relative(Path(path), Path(top))
    name = os.path.basename(path)
    if name == "setup.py" and "install_requires" not in text and "extras_require" not in text:
        return []  # a module named setup.py (utils/setup.py), not a package's declaration
    if _DOCKERFILE.match(name) or name.endswith(".sh"):
        return list(shell_pins(text.splitlines(), shown))
    if _README.match(name):
        return readme_pins(text.splitlines(), shown)
    if name in LOCK_FILES:
        return lock_pins(text, shown)
    return pins_in_text(text, shown, conda=name.startswith("environment."))


#: a relative link's target: ``[here](../docker/Dockerfile)``
_RELATIVE_LINK = lazy_compile(r"\]\(\s*<?(?![a-z][\w+.-]*:)([^)\s>#?]+)")
#: a file of a GitHub repository: ``https://github.com/OWNER/REPO/blob/BRANCH/PATH``
_REPOSITORY_LINK = lazy_compile(r"https?://github\.com/[\w.-]+/[\w.-]+/(?:blob|raw)/[^/\s]+/([^\s)>\]\"'#?]+)")


def _linked_files(text: str, folder: str, top: str) -> List[str]:
    """The Dockerfiles and requirements files of this tree that a README links to (a
    relative link, or a GitHub URL whose path exists here): the environment its folder
    is run in, when the README points there instead of repeating it."""
    found: List[str] = []
    if "ockerfile" not in text and "requirements" not in text and "environment.y" not in text:
        return found
    inside = top.rstrip(os.sep) + os.sep
    targets = [os.path.join(folder, m.group(1)) for m in _RELATIVE_LINK.finditer(text)]
    targets += [os.path.join(top, m.group(1)) for m in _REPOSITORY_LINK.finditer(text)]
    for target in targets:
        name = target.rstrip("/").rpartition("/")[2]
        if not (_DOCKERFILE.match(name) or _REQUIREMENTS.match(name) or name in ("environment.yml", "environment.yaml")):
            continue
        path = os.path.normpath(target)
        if path.startswith(inside) and path not in found and os.path.isfile(path) and not os.path.islink(path):
            found.append(path)
    return found


def declared_keras_version(root: Path) -> Optional[int]:
    """Keras 2 or 3 from the dependency declarations of the project's root folder, if
    they agree (what ``--show-settings`` prints as the project's)."""
    from mplint.semantic.versions import Versions

    return Versions(project_pins=project_pins(root).for_file(str(root / "_"))).keras_generation
