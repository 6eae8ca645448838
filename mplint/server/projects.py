"""The editor's projects: one run session per project, and what each open
document's diagnostics depend on.

A document is checked inside the session of the project it belongs to, found as
the command line finds it: settings from the closest configuration above the
document, what it ``extend``s included (:class:`ConfigTree`, the one answer
``mplint check`` and ``--show-settings`` give), the index from the nearest project
marker, so a policy set in ``train.py`` governs ``model.py`` in the editor as it
does in CI. The index answers for the open documents and reads their unsaved
buffers; it is built again when one of them is opened, edited, saved or closed
(the cache keeps that cheap). Each result remembers what it depended on: the other
files its checks read (:mod:`mplint.core.reads`) and the facts the project gave it
(:meth:`ProjectFacts.digest_for`), so :meth:`Projects.stale` tells which other
open documents a change reaches. This module knows nothing of the protocol: the
server turns its results into messages.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Set, Tuple

from mplint.core import reads
from mplint.core.findings import Finding
from mplint.core.results import FileAnalysis, FileResult, FixOutcome
from mplint.core.source import Source
from mplint.core.source_kinds import load_source
from mplint.rule.catalog import RuleEntry, load_catalog
from mplint.run.config import Settings, find_config, selected_rules
from mplint.run.discovery import is_excluded
from mplint.run.hierarchy import ConfigTree
from mplint.run.project import find_root
from mplint.run.session import Environment, FileStore, Session, buffer_paths

if TYPE_CHECKING:  # pragma: no cover
    import libcst as cst

#: the files an index answers for when they are saved (open documents always)
CHECKED_SUFFIXES = (".py", ".pyi", ".ipynb")
#: a configuration file and its (mtime, size), so an edited one is read again
Stamp = Tuple[str, Tuple[int, int]]


@dataclass
class Project:
    """A session, the configuration files its settings came from, and what its
    index was built for."""

    session: Session
    tree: ConfigTree
    #: every configuration file a document's settings were read from (``extend``ed ones too)
    configs: Set[Stamp] = field(default_factory=set)
    #: the documents the index answers for, and the unsaved buffers it read
    indexed_for: Set[str] = field(default_factory=set)
    given: Dict[str, bytes] = field(default_factory=dict)
    indexed: bool = False

    def settings_for(self, path: str) -> Settings:
        """:meth:`ConfigTree.settings_for`, noting the files the answer came from."""
        settings = self.tree.settings_for(path)
        for config in (settings.config_path, *settings.extends):
            if config is not None:
                self.configs.add(_stamp(config))
        return settings

    def current(self, path: str) -> bool:
        """Whether no configuration file it read changed, and ``path`` still gets the
        configuration it got (a new ``pyproject.toml`` in a sub-project changes that)."""
        if any(_stamp(Path(config)) != (config, stamp) for config, stamp in self.configs):
            return False
        folder = Path(path).parent
        nearest = find_config(folder) if folder.is_dir() else None
        return _same_file(nearest, self.settings_for(path).config_path)


@dataclass(frozen=True)
class Seen:
    """What a document's last result depended on besides its own text."""

    project: Project
    #: the other files its checks read, by content digest
    reads: Dict[str, str]
    #: :meth:`ProjectFacts.digest_for` of the document
    facts: str


class Projects:
    """Finds, builds and re-indexes the session of each document's project."""

    def __init__(self, catalog: Optional[Dict[str, RuleEntry]] = None, use_cache: bool = True,
                 environment: Optional[Environment] = None) -> None:
        self.catalog = catalog if catalog is not None else load_catalog()
        self.use_cache = use_cache
        self.environment = environment if environment is not None else Environment.detect()
        self._projects: Dict[str, Project] = {}
        #: the open documents' contents as the editor holds them, by path
        self.buffers: Dict[str, bytes] = {}
        self._seen: Dict[str, Seen] = {}

    # -- the editor's documents --------------------------------------------------------------
    def opened(self, path: str, raw: bytes) -> None:
        """The document at ``path`` is open and holds ``raw`` now."""
        self.buffers[path] = raw

    def closed(self, path: str) -> None:
        """The document is closed: the disk speaks for the file again."""
        self.buffers.pop(path, None)
        self._seen.pop(path, None)

    # -- finding a document's project ----------------------------------------------------
    def project_for(self, path: str) -> Project:
        """The project of the document at ``path`` (ConfigError for a broken config)."""
        root = self.root_of(path)
        # A file in no project is a program of its own (its index is the file alone).
        where = self.where(path)
        project = self._projects.get(where)
        if project is not None and not project.current(path):
            del self._projects[where]  # a changed configuration replaces the session it configured
            project = None
        if project is None:
            home = str(root or Path(path).parent)
            tree = ConfigTree(self.catalog, lambda found: found, Path(home))
            # The run's settings are the project root's, as for `mplint check .` there
            # (the index and the cache use them); each document gets its own.
            settings = tree.settings_for(home)
            # The index holds each file to the run's `file-timeout`, as `check` does: a file
            # libcst takes minutes on is one logged line, not a server that stops answering.
            session = Session(settings, self.catalog, selected_rules(self.catalog, settings.select, settings.ignore),
                              use_cache=self.use_cache, jobs=1, environment=self.environment,
                              settings_for=tree.settings_for, budget=True)
            project = Project(session, tree)
            project.settings_for(home)
            project.settings_for(path)
            self._projects[where] = project
        return project

    @staticmethod
    def root_of(path: str) -> Optional[Path]:
        paths = buffer_paths(path)
        return find_root(paths, markerless=False) if paths else None

    def settings_of(self, path: str) -> Settings:
        """The settings the document is checked with (those ``mplint check`` gives it)."""
        return self.project_for(path).settings_for(path)

    def excluded(self, path: str) -> bool:
        """Whether the configuration leaves the file out (as ``--force-exclude`` does)."""
        settings = self.settings_of(path)
        return is_excluded(path, settings.root, settings.exclude, settings.respect_gitignore)

    # -- the index -------------------------------------------------------------------------
    def first_index(self, path: str) -> bool:
        """Whether checking ``path`` builds its project's first index (seconds, in a
        big repository)."""
        return not self.project_for(path).indexed

    def ready(self, path: str) -> None:
        """Index the project of ``path`` now, if checking it would."""
        self._ready(path)

    def _ready(self, path: str) -> Session:
        """The session of ``path``, its project indexed for the open documents as the
        editor holds them now."""
        project = self.project_for(path)
        given = self._given(project)
        if not project.indexed or path not in project.indexed_for or given != project.given:
            self._index(project, path, given)
        return project.session

    def saved(self, path: str) -> None:
        """A file was saved: index its project again (the cache keeps that cheap)."""
        project = self.project_for(path)
        if project.indexed:
            self._index(project, path, self._given(project))

    def _given(self, project: Project) -> Dict[str, bytes]:
        """The open documents of ``project`` whose buffer is not what the disk holds."""
        given = {}
        for path, raw in self.buffers.items():
            if self._projects.get(self.where(path)) is project and _on_disk(path) != raw:
                given[path] = raw
        return given

    def where(self, path: str) -> str:
        """What names the project of ``path`` (its root, or the file outside any project)."""
        root = self.root_of(path)
        return str(root) if root is not None else "file:" + os.path.abspath(path)

    def _index(self, project: Project, path: str, given: Dict[str, bytes]) -> None:
        session = project.session
        # The program model answers for the open documents (and a Python file just saved:
        # a configuration file saved is no program).
        files = sorted({*([path] if path.endswith(CHECKED_SUFFIXES) else []),
                        *(p for p in self.buffers if self._projects.get(self.where(p)) is project)})
        # The store holds the bytes the last index read; a fresh one reads the disk again.
        session.store = FileStore()
        session.index(buffer_paths(path), files, given=given)
        if session.cache is not None:  # the facts and summaries just computed, for the next index
            session.cache.save()
        project.indexed, project.indexed_for, project.given = True, set(files), given

    # -- checking and fixing one buffer --------------------------------------------------
    def check(self, path: str, raw: bytes) -> FileResult:
        """Check the buffer, and remember what its result depended on."""
        session = self._ready(path)
        with reads.overlay(self.buffers):
            result = session.check_buffer(path, raw)
        self._seen[path] = Seen(self.project_for(path), dict(result.reads), session.project.digest_for(path))
        # What the document's check would say of the other files the index gave up on,
        # as the command line warns about them: the policy they may set is unknown.
        result.errors = [*result.errors, *session.unindexed([path])]
        return result

    def stale(self, path: str) -> bool:
        """Whether the open document's last result may be out of date though its own
        text is not: its configuration, a file its checks read or a fact the project
        gives it changed (the index is brought up to date to know)."""
        seen = self._seen.get(path)
        if seen is None:
            return False
        if self.project_for(path) is not seen.project:
            return True
        session = self._ready(path)
        with reads.overlay(self.buffers):
            if not reads.unchanged(seen.reads):
                return True
        return session.project.digest_for(path) != seen.facts

    def fix_all(self, path: str, raw: bytes, unsafe: bool = False) -> FixOutcome:
        session = self._ready(path)
        with reads.overlay(self.buffers):
            return session.fix_buffer(path, raw, unsafe)

    def fix_one(self, path: str, raw: bytes, target: Finding) -> FixOutcome:
        """Apply the fix of the one finding ``target`` (as the buffer's check
        reported it), and nothing else; unsafe fixes too, since it was asked for."""
        session = self._ready(path)
        linter = session.linter(session.settings_of(path))
        src = load_source(path, raw)
        passes = 0

        def analyze_one(source: Source, module: cst.Module, classes: Optional[Sequence[type]] = None) -> FileAnalysis:
            nonlocal passes
            analysis = linter.analyze(source, module, classes)
            analysis.fixes = [c for c in analysis.fixes
                              if passes == 0 and _same(src.finding(c.finding), target)]
            passes += 1
            return analysis

        # The linter's own fix (prefilter, encoding, notebook cells), with an
        # analysis that offers the one fix on the first pass and none after it.
        one = copy.copy(linter)
        setattr(one, "analyze", analyze_one)
        with reads.overlay(self.buffers):
            return one.fix(src, unsafe=True)



def _same(a: Finding, b: Finding) -> bool:
    return (a.rule, a.line, a.col, a.cell) == (b.rule, b.line, b.col, b.cell)


def _same_file(a: Optional[Path], b: Optional[Path]) -> bool:
    if a is None or b is None:
        return a is b
    return os.path.realpath(a) == os.path.realpath(b)


def _on_disk(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _stamp(config: Path) -> Stamp:
    try:
        st = os.stat(config)
    except OSError:
        return (str(config), (0, 0))
    return (str(config), (st.st_mtime_ns, st.st_size))
