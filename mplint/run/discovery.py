"""Which files to check: walk the paths, honour ``exclude`` and .gitignore.

An explicitly named file is always checked, unless ``--force-exclude`` (which the
pre-commit hook passes, because pre-commit names every file) says to apply
``exclude`` to it too. ``exclude`` patterns are matched with pathspec, the gitignore
implementation that black and others rely on. .gitignore files are read as git reads
them (:mod:`mplint.run.gitignore`): pathspec answers "does a pattern match this path or a
folder above it", which cannot tell ``*`` then ``!lib/`` (git walks lib/ and judges
each file in it again) from ``build/`` then ``!build/keep.py`` (git never looks inside
build/), and it misreads ``lib/**/`` and ``[[:upper:]]``.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from mplint.core import user_cache
from mplint.semantic.distributions import installed_version
from mplint.run.gitignore import IgnoreFile, is_risky, path_or_parent_matcher

from mplint.core.findings import FileError
from mplint.core.regular_files import read_regular
from mplint.run.config import Settings

if TYPE_CHECKING:  # pragma: no cover (imported where a pattern list is new: see _combined_source)
    import pathspec

SOURCE_SUFFIXES = (".py", ".pyi")
#: what ``check`` and ``fix`` look at: Python sources and Jupyter notebooks
LINT_SUFFIXES = SOURCE_SUFFIXES + (".ipynb",)


@dataclass
class Discovery:
    files: List[str] = field(default_factory=list)
    errors: List[FileError] = field(default_factory=list)


Matcher = Callable[[str], bool]


def _spec(patterns: Iterable[str]) -> "pathspec.PathSpec":
    import pathspec

    with warnings.catch_warnings():  # pathspec compiles "[[:alpha:]]" as a nested set
        warnings.simplefilter("ignore", FutureWarning)
        return pathspec.GitIgnoreSpec.from_lines(list(patterns))


def _matcher(patterns: Iterable[str]) -> Matcher:
    """``spec.match_file`` as one regex when no pattern negates (the common case).

    pathspec tries each pattern in turn, which made matching the bulk of a warm
    run; without ``!`` patterns "any pattern matches" is the whole semantics.
    """
    patterns = list(patterns)
    if any(map(is_risky, patterns)):  # pathspec's regex could backtrack for ever
        return path_or_parent_matcher(patterns)
    source = _combined_source(tuple(patterns))
    if source is None:
        return _spec(patterns).match_file
    if not source:
        return lambda path: False
    combined = re.compile(source)
    # search, as pathspec does: pathspec 1.x writes "*/" as a bare "(?P<ps_d>/)"
    return lambda path: combined.search(path) is not None


#: the form of the stored regex (a change to :func:`_translate` needs a new one)
_MATCHER_FORMAT = b"exclude-regex-1"


@functools.lru_cache(maxsize=64)
def _combined_source(patterns: Tuple[str, ...]) -> Optional[str]:
    """The one regex matching what any of ``patterns`` matches ("" when none is
    active), or None when only pathspec can answer (a "!" pattern). pathspec's
    translation is kept across runs (:mod:`mplint.core.user_cache`), keyed by the
    patterns and pathspec's version, so a run that walks with the usual patterns
    never imports it."""
    version = installed_version("pathspec")
    key = user_cache.key_of(_MATCHER_FORMAT, version.encode(), json.dumps(patterns).encode()) \
        if version else None
    if key is not None:
        stored = user_cache.load("exclude", key, _stored_source)
        if stored is not None:
            return stored[0]
    source = _translate(patterns)
    if key is not None:
        user_cache.store("exclude", key, [source])
    return source


def _stored_source(data: object) -> Tuple[Optional[str]]:
    if not (isinstance(data, list) and len(data) == 1 and (data[0] is None or isinstance(data[0], str))):
        raise TypeError("not a stored pattern")
    return (data[0],)


def _translate(patterns: Tuple[str, ...]) -> Optional[str]:
    """pathspec's regexes for ``patterns`` as one (see :func:`_combined_source`)."""
    spec = _spec(patterns)
    active = [p for p in spec.patterns if p.include is not None]
    if any(p.include is False for p in active) or not all(hasattr(p, "regex") for p in active):
        return None
    if not active:
        return ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        source = "|".join("(?:" + p.regex.pattern.replace("(?P<ps_d>", "(?:") + ")" for p in active)
    try:
        re.compile(source)
    except re.error:  # pragma: no cover (a pathspec with another regex style)
        return None
    return source


def _rel(path: str, base: str) -> Optional[str]:
    """``path`` relative to ``base`` in posix form (plain string work: this runs per file)."""
    if path == base:
        return "."
    prefix = base if base.endswith(os.sep) else base + os.sep
    if path.startswith(prefix):
        rel = path[len(prefix):]
        return rel.replace(os.sep, "/") if os.sep != "/" else rel
    return None


class _Ignorer:
    """Answers "is this path excluded?" from config patterns and .gitignore files."""

    def __init__(self, root: Path, exclude: Sequence[str], respect_gitignore: bool) -> None:
        self.root = root
        self._root = str(root)
        self._root_parent = str(root.parent)
        self.patterns = list(exclude)
        self.exclude = _matcher(exclude)
        self.respect_gitignore = respect_gitignore
        self._chains: Dict[str, Tuple[Tuple[str, IgnoreFile], ...]] = {}
        #: whether .gitignore files ignore a folder (git then never looks inside)
        self._ignored_folders: Dict[str, bool] = {}
        git_root = self._find_git_root(root) if respect_gitignore else None
        self._git_root = str(git_root) if git_root is not None else None
        #: folders whose parents' .gitignore files no longer apply
        self._stops = {self._git_root, self._root_parent}

    def add_boundary(self, path: Path) -> None:
        """Bound .gitignore lookups for a path outside the root as the root's own are:
        at its git repository's top or the named folder's parent, whichever comes
        first (so a stray ``.gitignore`` far above cannot hide a named tree)."""
        if not self.respect_gitignore or _rel(str(path), self._root) is not None:
            return
        git_root = self._find_git_root(path)
        self._stops.update({str(path.parent), str(git_root) if git_root is not None else None})

    @staticmethod
    def _find_git_root(start: Path) -> Optional[Path]:
        for folder in (start, *start.parents):
            if (folder / ".git").exists():
                return folder
        return None

    def _gitignore(self, folder: str) -> Optional[IgnoreFile]:
        lines: List[str] = []
        # later lines win: .git/info/exclude yields to .gitignore, as in git
        names = [".gitignore", ".ignore"]
        if folder == self._git_root:
            names.insert(0, os.path.join(".git", "info", "exclude"))
        for name in names:
            try:  # a FIFO named .gitignore is skipped, never waited on
                text = read_regular(os.path.join(folder, name)).decode("utf-8", "replace")
            except OSError:
                continue
            lines += text[text.startswith("\ufeff"):].splitlines()
        return IgnoreFile(lines) if lines else None

    def _chain(self, folder: str) -> Tuple[Tuple[str, IgnoreFile], ...]:
        """The .gitignore files that apply to entries of ``folder``, innermost first."""
        chain = self._chains.get(folder)
        if chain is None:
            spec = self._gitignore(folder)
            own = ((folder, spec),) if spec is not None else ()
            parent = os.path.dirname(folder)
            last = folder in self._stops or parent == folder
            chain = own if last else own + self._chain(parent)
            self._chains[folder] = chain
        return chain

    def _gitignored(self, path: str, parent: str, is_dir: bool) -> bool:
        """Whether the .gitignore files above ``path`` ignore it, as git decides."""
        if is_dir:
            known = self._ignored_folders.get(path)
            if known is None:
                known = self._ignored_folders[path] = self._judge(path, parent, True)
            return known
        return self._judge(path, parent, False)

    def _judge(self, path: str, parent: str, is_dir: bool) -> bool:
        chain = self._chain(parent)
        if not chain:
            return False
        # git does not look inside an ignored folder, whatever a "!" says about the files
        # in it (the walk never gets there; a named path asks about its folders here) ...
        if parent != chain[-1][0] and self._gitignored(parent, os.path.dirname(parent), True):
            return True
        # ... otherwise the innermost .gitignore with a pattern for the path decides.
        for folder, spec in chain:
            sub = _rel(path, folder)
            verdict = spec.verdict(sub, is_dir) if sub is not None else None
            if verdict is not None:
                return verdict
        return False

    def below(self, folder: Path) -> "_Ignorer":
        """The ignorer for walking a folder named on the command line.

        Patterns that exclude the named folder itself are dropped: naming it asks for
        it (``mplint check fixtures/`` with ``exclude = ["fixtures/"]``); patterns
        that exclude something inside it still apply.
        """
        rel = _rel(str(folder), self._root)
        probe = (rel if rel is not None else folder.name) + "/"
        if not self.exclude(probe) and not any(p.startswith("!") or is_risky(p) for p in self.patterns):
            return self  # no pattern matches it (without "!", the patterns together match what one does)
        keep = [p for p in self.patterns if not _matcher([p])(probe)]
        if len(keep) == len(self.patterns):
            return self
        narrowed = _Ignorer.__new__(_Ignorer)
        narrowed.__dict__.update(self.__dict__)
        narrowed.patterns, narrowed.exclude = keep, _matcher(keep)
        return narrowed

    def excluded(self, path: Path, is_dir: bool) -> bool:
        return self._excluded(str(path), path.name, str(path.parent), is_dir)

    def _excluded(self, path: str, name: str, parent: str, is_dir: bool) -> bool:
        slash = "/" if is_dir else ""
        rel = _rel(path, self._root)
        if self.exclude((rel if rel is not None else name) + slash):
            return True
        # A bare name pattern such as "build" also matches outside the root.
        if rel is None and self.exclude(name + slash):
            return True
        return self.respect_gitignore and self._gitignored(path, parent, is_dir)


def is_excluded(path: str, root: Path, exclude: Sequence[str], respect_gitignore: bool = True) -> bool:
    """Whether ``exclude`` or .gitignore covers one file (``--stdin-filename`` with
    ``--force-exclude``); the file need not exist."""
    return _Ignorer(root, exclude, respect_gitignore).excluded(Path(path).absolute(), False)


class OwnExclusion:
    """Whether a file's own configuration (the closest one above it, in a monorepo's
    sub-project) leaves it out, where that is not the run's configuration, which
    the walk already applied."""

    def __init__(self, settings_for: Callable[[str], Settings], run_settings: Settings) -> None:
        self.settings_for = settings_for
        self.run_settings = run_settings
        self._ignorers: Dict[Tuple[int, bool], _Ignorer] = {}

    def walked(self, path: str) -> bool:
        """A file the walk found: the walk applied the .gitignore files already, so
        only the configuration's own ``exclude`` is left to ask."""
        settings = self.settings_for(path)
        return settings is not self.run_settings and self._excluded(path, settings, gitignore=False)

    def named(self, path: str, force_exclude: bool) -> bool:
        """A file named on the command line: left out only under ``force-exclude``
        (the command line's, or that of the file's own configuration)."""
        settings = self.settings_for(path)
        return (force_exclude or settings.force_exclude) and self._excluded(
            path, settings, gitignore=settings.respect_gitignore)

    def _excluded(self, path: str, settings: Settings, gitignore: bool) -> bool:
        key = (id(settings), gitignore)
        ignorer = self._ignorers.get(key)
        if ignorer is None:
            ignorer = self._ignorers[key] = _Ignorer(settings.root, settings.exclude, gitignore)
        return ignorer.excluded(Path(os.path.abspath(path)), False)


def discover(paths: Sequence[str], root: Path, exclude: Sequence[str],
             respect_gitignore: bool = True, force_exclude: bool = False,
             suffixes: Tuple[str, ...] = SOURCE_SUFFIXES,
             excluded_by_own: Optional[OwnExclusion] = None) -> Discovery:
    """Expand ``paths`` into the sorted list of files to check (``excluded_by_own``:
    each file's own configuration too)."""
    out = Discovery()
    ignorer = _Ignorer(root, exclude, respect_gitignore)
    seen = set()

    several = len(paths) > 1

    def add(display: str) -> None:
        # Directory symlinks are not followed, so one path cannot list a file twice.
        key = os.path.realpath(display) if several else display
        if key not in seen:
            seen.add(key)
            out.files.append(display)

    for given in paths:
        path = Path(given)
        absolute = path.resolve() if path.exists() else path.absolute()
        if not os.path.lexists(given):
            out.errors.append(FileError(given, "no such file or directory"))
            continue
        ignorer.add_boundary(absolute if path.is_dir() else absolute.parent)
        if path.is_dir():
            if force_exclude and ignorer.excluded(absolute, True):
                continue
            for display in _walk(given, absolute, ignorer.below(absolute), suffixes, out):
                if excluded_by_own is None or not excluded_by_own.walked(display):
                    add(display)
        elif path.is_file():
            if force_exclude and ignorer.excluded(absolute, False):
                continue
            if excluded_by_own is not None and excluded_by_own.named(given, force_exclude):
                continue
            add(given)
        else:
            out.errors.append(FileError(given, _not_a_file(given)))
    return out


def _not_a_file(path: str) -> str:
    """Why a path that exists as a name cannot be read as a file."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link loop"
        if os.path.islink(path):
            return "is a broken symbolic link"
        return f"cannot be read: {exc.strerror or exc}"
    return "not a regular file or directory"


def _walk(display_root: str, root: Path, ignorer: _Ignorer, suffixes: Tuple[str, ...],
          out: Discovery) -> List[str]:
    found: List[str] = []
    stack = [(os.path.normpath(display_root), str(root))]
    while stack:
        display, folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            out.errors.append(FileError(display, f"cannot be listed: {exc.strerror or exc}"))
            continue
        subdirs = []
        # os.path.join's result by string work (this runs per entry)
        prefix = "" if display == "." else display if display.endswith(os.sep) else display + os.sep
        for entry in entries:
            name = entry.name
            child = entry.path
            child_display = prefix + name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = not is_dir and name.endswith(suffixes) and entry.is_file()
                # A source file's link that leads nowhere is an error, as when it is
                # named on the command line or loops (is_file() says False for it).
                broken = not (is_dir or is_file) and name.endswith(suffixes) and entry.is_symlink() \
                    and not os.path.exists(child)
            except OSError:  # a symbolic link loop, among others
                broken = name.endswith(suffixes)
            if broken:
                if not ignorer._excluded(child, name, folder, False):
                    out.errors.append(FileError(child_display, _not_a_file(str(child))))
                continue
            if is_dir:
                if not ignorer._excluded(child, name, folder, True):
                    subdirs.append((child_display, child))
            elif is_file:
                if not ignorer._excluded(child, name, folder, False):
                    found.append(child_display)
        stack.extend(reversed(subdirs))
    found.sort()
    return found
