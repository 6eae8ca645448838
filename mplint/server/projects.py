"""The editor's projects: one run session per project and configuration.

A document is checked inside the session of the project it belongs to, found as
the command line finds it (settings from the nearest config above the document,
the index from the nearest project marker), so a policy set in ``train.py``
governs ``model.py`` in the editor as it does in CI. The index is built when the
project's first document is checked and again when a file of the project is
saved; between saves, checking a buffer costs one parse and one analysis. This
module knows nothing of the protocol: the server turns its results into messages.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Optional, Sequence, Set, Tuple

from mplint.core.findings import Finding
from mplint.core.results import FileAnalysis, FileResult, FixOutcome
from mplint.core.source import Source
from mplint.core.source_kinds import load_source
from mplint.rule.catalog import RuleEntry, load_catalog
from mplint.run.config import find_config, load_settings, selected_rules
from mplint.run.discovery import is_excluded
from mplint.run.project import find_root
from mplint.run.session import Environment, FileStore, Session, buffer_paths

if TYPE_CHECKING:  # pragma: no cover
    import libcst as cst

#: what decides a document's session: its project root (or the file, outside any
#: project), its config file and that file's (mtime, size), so an edited config is read again
ProjectKey = Tuple[str, Optional[str], Tuple[int, int]]


@dataclass
class Project:
    """A session and what the server remembers about its index."""

    session: Session
    #: paths given to the index that are not on disk (unsaved new files)
    unsaved: Set[str] = field(default_factory=set)
    indexed: bool = False


class Projects:
    """Finds, builds and re-indexes the session of each document's project."""

    def __init__(self, catalog: Optional[Dict[str, RuleEntry]] = None, use_cache: bool = True,
                 environment: Optional[Environment] = None) -> None:
        self.catalog = catalog if catalog is not None else load_catalog()
        self.use_cache = use_cache
        self.environment = environment if environment is not None else Environment.detect()
        self._projects: Dict[ProjectKey, Project] = {}

    # -- finding a document's project ----------------------------------------------------
    def project_for(self, path: str) -> Project:
        """The project of the document at ``path`` (ConfigError for a broken config)."""
        config = _config_for(path)
        paths = buffer_paths(path)
        root = find_root(paths, markerless=False) if paths else None
        # A file in no project is a program of its own (its index is the file alone).
        where = str(root) if root is not None else "file:" + os.path.abspath(path)
        key: ProjectKey = (where, str(config) if config else None, _stamp(config))
        project = self._projects.get(key)
        if project is None:
            # A changed config replaces the session it configured.
            for old in [k for k in self._projects if k[:2] == key[:2]]:
                del self._projects[old]
            settings = load_settings(config, self.catalog, root=root or Path(path).parent)
            session = Session(settings, self.catalog, selected_rules(self.catalog, settings.select, settings.ignore),
                              use_cache=self.use_cache, jobs=1, environment=self.environment)
            project = self._projects[key] = Project(session)
        return project

    def excluded(self, path: str) -> bool:
        """Whether the configuration leaves the file out (as ``--force-exclude`` does)."""
        settings = self.project_for(path).session.settings
        return is_excluded(path, settings.root, settings.exclude, settings.respect_gitignore)

    def same_project(self, a: str, b: str) -> bool:
        return self.project_for(a) is self.project_for(b)

    # -- the index -------------------------------------------------------------------------
    def _ready(self, path: str, raw: bytes) -> Session:
        """The session of ``path``, its project indexed (with the buffer itself when
        the file is not on disk yet)."""
        project = self.project_for(path)
        on_disk = os.path.isfile(path)
        if not project.indexed or (not on_disk and path not in project.unsaved):
            if not on_disk:
                project.unsaved.add(path)
            self._index(project, path, {path: raw} if not on_disk else {})
        return project.session

    def saved(self, path: str) -> None:
        """A file was saved: index its project again (the cache keeps that cheap)."""
        project = self.project_for(path)
        project.unsaved.discard(path)
        self._index(project, path, {})

    @staticmethod
    def _index(project: Project, path: str, given: Dict[str, bytes]) -> None:
        session = project.session
        # The store holds the bytes the last index read; a fresh one reads the disk again.
        session.store = FileStore()
        session.index(buffer_paths(path), [path], given=given)
        if session.cache is not None:  # the facts and summaries just computed, for the next index
            session.cache.save()
        project.indexed = True

    # -- checking and fixing one buffer --------------------------------------------------
    def check(self, path: str, raw: bytes) -> FileResult:
        return self._ready(path, raw).check_buffer(path, raw)

    def fix_all(self, path: str, raw: bytes, unsafe: bool = False) -> FixOutcome:
        return self._ready(path, raw).fix_buffer(path, raw, unsafe)

    def fix_one(self, path: str, raw: bytes, target: Finding) -> FixOutcome:
        """Apply the fix of the one finding ``target`` (as the buffer's check
        reported it), and nothing else; unsafe fixes too, since it was asked for."""
        linter = self._ready(path, raw).linter()
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
        return one.fix(src, unsafe=True)


def _same(a: Finding, b: Finding) -> bool:
    return (a.rule, a.line, a.col, a.cell) == (b.rule, b.line, b.col, b.cell)


def _config_for(path: str) -> Optional[Path]:
    folder = Path(path).parent
    return find_config(folder) if folder.is_dir() else None


def _stamp(config: Optional[Path]) -> Tuple[int, int]:
    try:
        st = os.stat(config) if config is not None else None
    except OSError:
        return (0, 0)
    return (st.st_mtime_ns, st.st_size) if st is not None else (0, 0)

