"""A run session: the one object that owns every input of a run.

Settings, the rule catalog and selection, the environment mplint runs in, the
project's cross-file facts, the bytes and modules the project index already read,
and the cache all live here, so nothing travels through module globals or
out-parameters, and everything a result depends on is in the cache key. The CLI,
stdin (editors) and the API all run through a session; ``check`` and ``fix`` take
the same parallel, cached path. LibCST's ``CodemodContext`` is the model.
"""

from __future__ import annotations

import hashlib
import os
from functools import partial
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Sequence, Tuple

from mplint.core.findings import FileError, Finding
from mplint.core.results import FileResult, FixOutcome
from mplint.rule.catalog import RuleEntry
from mplint.run import library
from mplint.run.cache import FOLDER, Cache, run_key
from mplint.run.config import Settings, selected_rules
from mplint.run.project import ProjectFacts, build_project, find_root
from mplint.run.runner import (CheckTask, FixTask, Result, RunInterrupted, Task, default_jobs, findings_of,
                               run_files)
from mplint.semantic import keras_version

if TYPE_CHECKING:  # pragma: no cover (the linter loads libcst; a cached run must not)
    import libcst as cst

    from mplint.core.gatekeeper import Gatekeeper
    from mplint.core.linter import Linter


@dataclass(frozen=True)
class Environment:
    """What the machine mplint runs on contributes to results, resolved once per run.

    The installed Keras generation decides which loss-scaling API a file uses when
    nothing in the project says; ``pip install -U tensorflow`` moves it from 2 to 3.
    """

    keras_generation: Optional[int]

    @classmethod
    def detect(cls) -> "Environment":
        return cls(keras_version.installed_generation())

    def key(self) -> str:
        return f"keras={self.keras_generation}"


@dataclass
class FileStore:
    """Bytes the project index read and modules it parsed, handed on to the check
    so each file is read and parsed once per run."""

    contents: Dict[str, bytes] = field(default_factory=dict)
    parsed: Dict[str, object] = field(default_factory=dict)


@dataclass
class RunResult:
    """Findings and per-file errors of a run (``outcomes`` too for ``fix``)."""

    findings: List[Finding] = field(default_factory=list)
    errors: List[FileError] = field(default_factory=list)
    outcomes: List[FixOutcome] = field(default_factory=list)


class Session:
    """Checks and fixes files of one project, each file under its own configuration.

    ``settings`` are the run's (the project index, the cache folder); ``settings_for``
    gives each file's (:class:`mplint.run.hierarchy.ConfigTree`: the closest
    configuration above it), and is the one answer ``--show-settings`` prints too.
    Without it every file gets ``settings`` and ``rule_ids``.
    """

    def __init__(self, settings: Settings, catalog: Dict[str, RuleEntry], rule_ids: Sequence[str], *,
                 use_cache: bool = True, jobs: Optional[int] = None, progress: bool = False,
                 environment: Optional[Environment] = None,
                 settings_for: Optional[Callable[[str], Settings]] = None, budget: bool = False) -> None:
        library.forget_files()  # a tree read by an earlier run in this process may have changed
        self.settings = settings
        self.catalog = catalog
        self.rule_ids = list(rule_ids)
        self._settings_for = settings_for
        self.environment = environment if environment is not None else Environment.detect()
        self.use_cache = use_cache
        self.jobs = jobs or default_jobs()
        self.progress = progress
        #: hold each file to the run's ``file-timeout`` (in forked workers, as the
        #: command line does; an editor's process checks in its own)
        self.budget = budget
        self.root: Optional[Path] = None
        #: where ``fix`` may write (:func:`tree_of`); None: anywhere (no index was built)
        self.tree: Optional[Path] = None
        self.project: ProjectFacts = ProjectFacts()
        self.store = FileStore()
        self.cache: Optional[Cache] = None
        #: skip files no selected rule can report in; off only to test the skipping
        self.prescan = True
        #: one linter per configuration in use, by the settings' identity
        self._linters: Dict[int, "Linter"] = {}

    # -- setting up ----------------------------------------------------------------
    def index(self, paths: Sequence[str], files: Sequence[str] = (),
              given: Optional[Dict[str, bytes]] = None) -> None:
        """Index the project holding ``paths`` (whose checked files are ``files``),
        and open its cache. ``given`` holds contents that differ from the disk
        (an editor's buffer), by path."""
        self.root = find_root(paths)
        self.tree = tree_of(self.settings, self.root, paths)
        if self.use_cache:
            self.cache = Cache(cache_folder(self.settings, self.root, paths))
        # `mplint check .` at the project root: the project's files are the ones just found.
        at_root = self.root is not None and [os.path.realpath(p) for p in paths] == [str(self.root)]
        self.store = FileStore(contents=dict(given or {}))  # a new index reads the files anew
        self.project = build_project(paths, self.settings, self.cache, extra=files,
                                     walked=list(files) if at_root else None,
                                     contents=self.store.contents, parsed=self.store.parsed,
                                     budget=self._budget(), jobs=self.jobs)
        if self.cache is not None:
            self.cache.save()  # the index and program model, for the next run (stdin, editors)
            self.cache.use_run(self._run_key(self.settings))
        self._linters = {}

    # -- each file's configuration ---------------------------------------------------------
    def settings_of(self, path: str) -> Settings:
        """The settings ``path`` is checked with."""
        return self._settings_for(path) if self._settings_for is not None else self.settings

    def rule_ids_of(self, settings: Settings) -> List[str]:
        """The rules a configuration selects (the command line's selection included)."""
        if settings is self.settings:
            return self.rule_ids
        return selected_rules(self.catalog, settings.select, settings.ignore)

    def _budget(self) -> Optional[float]:
        """The most CPU seconds one file's parse may take (index or check); None: no limit."""
        return (self.settings.file_timeout or None) if self.budget else None

    def unindexed(self, files: Sequence[str]) -> List[FileError]:
        """A warning for each file the index could not parse within the budget, other
        than ``files`` (their check says so): what it sets is unknown to the run."""
        checked = {os.path.abspath(path) for path in files}
        return [FileError(self.project.display(key), f"{why}; the policy it may set is unknown to the other "
                                                     f"files' checks", kind="warning")
                for key, why in sorted(self.project.unindexed.items()) if key not in checked]

    def _run_key(self, settings: Settings) -> str:
        return run_key(self.rule_ids_of(settings), settings, self.project.digest(), self.environment.key())

    def linter(self, settings: Optional[Settings] = None) -> "Linter":
        """The linter for files with ``settings`` (the run's by default), built once,
        when a file needs it."""
        settings = self.settings if settings is None else settings
        linter = self._linters.get(id(settings))
        if linter is None:
            from mplint.core.linter import Linter

            linter = Linter(settings, self.catalog, self.rule_ids_of(settings), project=self.project,
                            installed_keras=self.environment.keras_generation)
            linter.prescan = self.prescan
            self._linters[id(settings)] = linter
        return linter

    def gatekeeper(self, settings: Optional[Settings] = None) -> "Gatekeeper":
        """What files with ``settings`` need before their checks (no libcst)."""
        from mplint.core.gatekeeper import Gatekeeper

        settings = self.settings if settings is None else settings
        return Gatekeeper(settings, self.catalog, self.rule_ids_of(settings), project=self.project,
                          prescan=self.prescan)

    def _groups(self, files: Sequence[str]) -> List[Tuple[Settings, List[str]]]:
        """``files`` by the configuration each is checked with, the run's first."""
        groups: Dict[int, Tuple[Settings, List[str]]] = {id(self.settings): (self.settings, [])}
        for path in files:
            settings = self.settings_of(path)
            groups.setdefault(id(settings), (settings, []))[1].append(path)
        return [group for group in groups.values() if group[1]]

    def _run(self, files: Sequence[str], task_for: Callable[[Callable[[], "Linter"], Settings], Task]) -> List[Result]:
        """Each configuration's files with its own linter and cache entries; the
        results in the order of ``files``."""
        by_path: Dict[str, Result] = {}
        groups = self._groups(files)
        if self.cache is not None and any(settings is not self.settings for settings, _ in groups):
            # One result file for the run, whose key holds every configuration in it: a
            # file's entry is its own configuration's, and a monorepo's many
            # configurations do not push each other's result files out of the cache.
            keys = sorted(self._run_key(settings) for settings, _ in groups)
            self.cache.use_run(hashlib.sha256("\n".join(keys).encode()).hexdigest()[:32])
        budget = self._budget()
        for settings, group in groups:
            task = task_for(partial(self.linter, settings), settings)
            # A file the index gave up on would hold its check as long: it is said once.
            by_path.update((path, task.not_done(path, self.project.unindexed[os.path.abspath(path)]))
                           for path in group if os.path.abspath(path) in self.project.unindexed)
            group = [path for path in group if path not in by_path]
            try:
                done = run_files(group, task, self.cache, self.jobs, self.progress, self.store.contents, budget)
            except RunInterrupted as stop:
                by_path.update((result.path, result) for result in stop.results)
                raise RunInterrupted([by_path[path] for path in files if path in by_path]) from None
            by_path.update((result.path, result) for result in done)
        return [by_path[path] for path in files if path in by_path]

    # -- the two operations -----------------------------------------------------------
    def check(self, files: Sequence[str]) -> RunResult:
        results = self._run(files, lambda make, settings: CheckTask(
            make, self.store.parsed, partial(self.gatekeeper, settings)))
        return _collect(results)

    def fix(self, files: Sequence[str], unsafe: bool, write: bool) -> RunResult:
        """Fix ``files``; ``write`` False previews (``--diff``, ``--check``)."""
        results = self._run(files, lambda make, _: FixTask(make, unsafe, write, within=self.tree))
        out = _collect(results)
        out.outcomes = [r for r in results if isinstance(r, FixOutcome)]
        return out

    # -- one buffer (stdin, editors) ----------------------------------------------------
    def check_buffer(self, name: str, raw: bytes) -> FileResult:
        from mplint.core.source_kinds import load_source

        gave_up = self._gave_up_on(name, raw)
        if gave_up is not None:  # its check would hold this process as long: said once
            return FileResult(name, errors=[FileError(name, gave_up)], cacheable=False)
        return self.linter(self.settings_of(name)).check(load_source(name, raw), self._parsed_from(name, raw))

    def _parsed_from(self, name: str, raw: bytes) -> Optional["cst.Module"]:
        """The module the index parsed from these very bytes (an editor's buffer that
        sets a policy is then parsed once per edit, not twice)."""
        module = self.store.parsed.pop(os.path.abspath(name), None)
        read = self.store.contents.get(name)
        return module if module is not None and read == raw else None  # type: ignore[return-value]

    def _gave_up_on(self, name: str, raw: bytes) -> Optional[str]:
        """Why the index gave up on the buffer ``name`` holding these very bytes, if it did."""
        why = self.project.unindexed.get(os.path.abspath(name))
        return why if why is not None and self.store.contents.get(name) == raw else None

    def fix_buffer(self, name: str, raw: bytes, unsafe: bool) -> FixOutcome:
        from mplint.core.source_kinds import load_source

        gave_up = self._gave_up_on(name, raw)
        if gave_up is not None:
            return FixOutcome(name, errors=[FileError(name, gave_up)], cacheable=False)
        return self.linter(self.settings_of(name)).fix(load_source(name, raw), unsafe)


def cache_folder(settings: Settings, root: Optional[Path], paths: Sequence[str]) -> Path:
    """Where the result cache lives: the ``cache-dir`` setting (``--cache-dir``,
    ``MPLINT_CACHE_DIR``), else ``.mplint_cache`` in the project root, else in the
    folder holding the checked paths (never the current folder, which may be
    anywhere)."""
    if settings.cache_dir is not None:
        return settings.cache_dir
    return tree_of(settings, root, paths) / FOLDER


def tree_of(settings: Settings, root: Optional[Path], paths: Sequence[str]) -> Path:
    """The tree a run works on: the project root, else the folder holding the checked
    paths. ``fix`` writes nothing outside it (a symlink out of it is not followed)."""
    if root is not None:
        return root
    folders = [p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) for p in paths]
    return Path(os.path.commonpath([os.path.abspath(f) for f in folders])) if folders else settings.root


def buffer_paths(name: str) -> List[str]:
    """Where an editor's buffer named ``name`` sits, for finding its project: the
    file itself, or its folder when the file is not saved yet."""
    if os.path.exists(name):
        return [name]
    parent = os.path.dirname(os.path.abspath(name))
    return [parent] if os.path.isdir(parent) else []


def _collect(results: Sequence[object]) -> RunResult:
    out = RunResult()
    for result in results:
        assert isinstance(result, (FileResult, FixOutcome))
        out.findings += findings_of(result)
        out.errors += result.errors
    return out
