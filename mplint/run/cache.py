"""Per-file result cache in ``.mplint_cache/``, so an unchanged tree re-checks at once.

An entry is keyed by the file's content hash; the file holding the entries is
named by a run key that covers everything else a result depends on: mplint's
version and code, the selected rules, the settings and the project facts. Files
with findings are cached too (their findings are the result). The format is JSON,
never pickle: a cache folder committed to a repository by mistake must not be able
to run code. Nothing here imports libcst, so a full cache hit never loads it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import stat
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from mplint import __version__
from mplint.core import reads
from mplint.core.findings import FileError, Finding
from mplint.core.regular_files import read_regular
from mplint.run.code_stamp import code_stamp

FOLDER = ".mplint_cache"
#: the layout of the files in a version's folder (2: summaries in their own file; 4: the
#: index keeps the TensorFlow and Keras names each file hands on and takes; 5: a result keeps
#: the digests of the other files its checks read; 6: what a file hands on includes the
#: modules its functions return; 7: an index entry keeps the modules a file imports under a
#: version guard, and a file left unparsed keeps its bytes' facts; 8: ``mentions_policy`` is
#: False for a library's policy switch, :mod:`mplint.run.policy_switches`; 9: and True for
#: a program that imports mixed_precision, :func:`mplint.run.library.program_weighs_precision`)
FORMAT = 9
#: index key of the program model's result
PROGRAM = "program:"
#: results for named files kept besides the whole project's (one per set of files)
SCOPED_PROGRAMS = 8
KEEP_RUN_FILES = 8
#: the most changed index entries kept in ``index-delta.json`` beside ``index.json`` before
#: the whole index is written again: a pre-commit run after an edit changes an entry or
#: two of an index of thousands, and writing those alone is what keeps it cheap
INDEX_DELTA_LIMIT = 256
RACY_NS = 2_000_000_000


#: a file's content digest: the one :mod:`mplint.core.reads` notes for the files checks read
content_hash = reads.digest


def run_key(rule_ids: Sequence[str], settings: Any, project_digest: str, environment: str) -> str:
    """Everything a file's result depends on besides its content: mplint's code, the
    rules, the settings, the project's facts and the environment (the installed
    Keras generation)."""
    # select/ignore matter only through the rule ids they enable
    settings = dataclasses.replace(settings, select=(), ignore=())
    data = [code_stamp(), list(rule_ids), repr(settings), project_digest, environment]
    return hashlib.sha256(json.dumps(data, default=str).encode()).hexdigest()[:32]


class Cache:
    """Results and project-index entries of one run key, loaded and saved once."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.version_dir = folder / f"{__version__}-{FORMAT}"
        #: False when the folder is not mplint's own (see :func:`_owned`): nothing is
        #: read from it or written to it, and the run goes on without a cache
        self.usable = _owned(folder) and _plain_folder_or_none(self.version_dir)
        self._index: Dict[str, list] = self._load(self.version_dir / "index.json") if self.usable else {}
        #: entries written since ``index.json`` was (None: deleted), applied over it
        self._delta: Dict[str, Optional[list]] = {}
        if self.usable and self._index:
            self._delta.update(self._load(self.version_dir / DELTA))
        for key, entry in self._delta.items():
            if entry is None:
                self._index.pop(key, None)
            else:
                self._index[key] = entry
        #: index keys this run wrote or deleted, and its index entries found unchanged
        self._changed: Set[str] = set()
        self._unchanged = 0
        self._index_dirty = False
        #: index payloads already read, by their repr (see _facts)
        self._facts_by_shape: Dict[str, Any] = {}
        #: module summaries, in their own file: most runs never read them (a run whose
        #: program model is reused does not), and they are most of the index's bytes
        self._summaries: Optional[Dict[str, list]] = None
        self._summaries_dirty = False
        self._results: Dict[str, list] = {}
        self._results_path: Optional[Path] = None
        self._results_dirty = False

    @staticmethod
    def _load(path: Path) -> Dict[str, list]:
        """The entries of one cache file. Whatever cannot be read (a FIFO, broken
        JSON, JSON nested too deep to decode) or is not an entry (valid JSON of
        another shape) is left out: a cache miss, and the next save rewrites it."""
        if os.path.islink(path):
            return {}  # the cache never follows a link
        try:
            data = json.loads(read_regular(path))
        except (OSError, ValueError, RecursionError, MemoryError):
            return {}
        if not isinstance(data, dict):
            return {}
        return data  # each entry is checked when it is read (_valid): most never are

    # Each entry is [content hash, payload, [mtime_ns, ctime_ns, inode], size,
    # written_ns]. A file whose stamp and size match is not even read, unless it
    # changed within RACY_NS of the write (it may have changed again in the same
    # clock tick, as git's "racily clean" entries), in which case the content hash
    # decides. The ctime and inode catch a same-size edit whose mtime was put back
    # (``cp -p``, ``rsync -t``, ``tar x``, ``touch -r``): no tool can set a ctime, and
    # an editor that saves by rename makes a new inode.
    @staticmethod
    def _fresh(entry: list, st: os.stat_result) -> bool:
        return entry[2] == _stamp(st) and entry[3] == st.st_size \
            and max(st.st_mtime_ns, st.st_ctime_ns) < entry[4] - RACY_NS

    @staticmethod
    def _entry(digest: str, payload: Any, st: Optional[os.stat_result]) -> list:
        if st is None:
            return [digest, payload, 0, -1, 0]
        return [digest, payload, _stamp(st), st.st_size, time.time_ns()]

    # -- project index ---------------------------------------------------------------
    def index_lookup(self, key: str, st: os.stat_result):
        entry = _valid(self._index.get(key))
        if entry is None or not self._fresh(entry, st):
            return None
        self._unchanged += 1
        return self._facts(entry)

    def index_get(self, key: str, raw: bytes):
        entry = _valid(self._index.get(key))
        return self._facts(entry) if entry and entry[0] == content_hash(raw) else None

    def _facts(self, entry: list):
        """The entry's facts; most files' facts are one of a few payloads, each checked
        and built once per run."""
        data = entry[1]
        shape = repr(data)
        if shape in self._facts_by_shape:
            return self._facts_by_shape[shape]
        from mplint.run.project import FileFacts

        found = None
        if isinstance(data, list) and len(data) == 8 and _strings(data[0]) \
                and isinstance(data[1], bool) and _strings(data[2]) and isinstance(data[5], bool) \
                and _strings(data[6]) and isinstance(data[7], bool) \
                and all(isinstance(pairs, list) and all(isinstance(e, list) and _strings(e) and len(e) == 2
                                                        for e in pairs) for pairs in data[3:5]):
            found = FileFacts.from_json(data)
        self._facts_by_shape[shape] = found
        return found

    def index_put(self, key: str, raw: bytes, facts, st: Optional[os.stat_result] = None) -> None:
        self._index[key] = self._entry(content_hash(raw), facts.to_json(), st)
        self._changed.add(key)
        self._index_dirty = True

    # -- module summaries (the program model), loaded when first asked for ---------------
    def _summary_entries(self) -> Dict[str, list]:
        if self._summaries is None:
            self._summaries = self._load(self.version_dir / "summaries.json") if self.usable else {}
        return self._summaries

    def summary_get(self, key: str, raw: bytes) -> object:
        """The cached summary payload for this content (None when there is none)."""
        entry = _valid(self._summary_entries().get(key))
        if entry is not None and entry[0] == content_hash(raw):
            return entry[1]
        return None

    def summary_put(self, key: str, raw: bytes, payload: object) -> None:
        self._summary_entries()[key] = self._entry(content_hash(raw), payload, None)
        self._summaries_dirty = True

    # -- the program model's result for a whole tree, by its stamp ---------------------
    def program_get(self, stamp: str, scope: str = "") -> object:
        """The program model's stored result for these checked files (``scope``; ""
        for the whole project)."""
        entry = _valid(self._index.get(PROGRAM + scope))
        if entry is not None and entry[0] == stamp:
            return entry[1]
        return None

    def program_put(self, stamp: str, payload: object, scope: str = "") -> None:
        """Store a result; the whole project's has one slot, and the most recent
        results for named files (pre-commit runs) keep theirs, so a run over the whole
        tree in between does not make the next pre-commit run build the model again."""
        self._index[PROGRAM + scope] = [stamp, payload, 0, -1, time.time_ns()]
        self._changed.add(PROGRAM + scope)
        for bad in [k for k in self._index if k.startswith(PROGRAM) and _valid(self._index[k]) is None]:
            del self._index[bad]
            self._changed.add(bad)
        scoped = sorted((k for k in self._index if k.startswith(PROGRAM) and k != PROGRAM),
                        key=lambda k: self._index[k][4])
        for old in scoped[:-SCOPED_PROGRAMS]:
            del self._index[old]
            self._changed.add(old)
        self._index_dirty = True

    # -- results ---------------------------------------------------------------------
    def use_run(self, key: str) -> None:
        self._results_path = self.version_dir / f"results-{key}.json"
        self._results = self._load(self._results_path) if self.usable else {}

    def lookup(self, path: str, st: os.stat_result) -> Optional[Tuple[List[Finding], List[FileError]]]:
        """The cached result when the file's size and stamp say it is unchanged."""
        entry = _valid(self._results.get(os.path.abspath(path)))
        return self._result(path, entry) if entry is not None and self._fresh(entry, st) else None

    def get(self, path: str, digest: str) -> Optional[Tuple[List[Finding], List[FileError]]]:
        """The cached result for this content."""
        entry = _valid(self._results.get(os.path.abspath(path)))
        return self._result(path, entry) if entry and entry[0] == digest else None

    @staticmethod
    def _result(path: str, entry: list) -> Optional[Tuple[List[Finding], List[FileError]]]:
        payload = entry[1]
        if not (isinstance(payload, list) and len(payload) == 3 and isinstance(payload[0], list)
                and isinstance(payload[1], list) and all(map(_is_finding, payload[0]))
                and all(isinstance(e, list) and len(e) == 2 and _strings(e) for e in payload[1])
                and isinstance(payload[2], dict) and _strings(list(payload[2]))
                and _strings(list(payload[2].values()))):
            return None
        if not reads.unchanged(payload[2]):  # a module its checks read changed since
            return None
        findings = [Finding(path=path, **f) for f in payload[0]]
        errors = [FileError(path, m, k) for m, k in payload[1]]
        return findings, errors

    def put(self, path: str, digest: str, findings: Sequence[Finding],
            errors: Sequence[FileError], st: Optional[os.stat_result] = None,
            read: Optional[Dict[str, str]] = None) -> None:
        """``read``: the other files the result depends on, by content digest (None: the
        ones the entry for this content already holds, when a stamp is refreshed)."""
        if read is None:
            before = _valid(self._results.get(os.path.abspath(path)))
            kept = before[1] if before and before[0] == digest and isinstance(before[1], list) else None
            read = kept[2] if kept and len(kept) == 3 and isinstance(kept[2], dict) else {}
        stored = []
        for f in findings:
            data = f.to_dict()
            del data["path"]
            stored.append(data)
        payload = [stored, [[e.message, e.kind] for e in errors], dict(read)]
        self._results[os.path.abspath(path)] = self._entry(digest, payload, st)
        self._results_dirty = True

    def save(self) -> None:
        """Write what changed; a cache that cannot be written is silently skipped."""
        try:
            if not self.usable or not (self._index_dirty or self._summaries_dirty or self._results_dirty):
                return
            self._prepare()
            if self._index_dirty:
                self._save_index()
                self._index_dirty = False
            if self._summaries_dirty and self._summaries is not None:
                _write_json(self.version_dir / "summaries.json", self._summaries)
                self._summaries_dirty = False
            if self._results_dirty and self._results_path is not None:
                for gone in [k for k in self._results if not os.path.exists(k)]:
                    del self._results[gone]
                _write_json(self._results_path, self._results)
                self._results_dirty = False
                self._prune()
        except OSError:
            pass

    def _save_index(self) -> None:
        """Only the changed entries (``index-delta.json``) when they are few and the run
        found most of the index unchanged (a pre-commit run); else the whole index. An
        index that could not be read, or that this run mostly rewrote, is written whole."""
        delta = dict(self._delta)
        delta.update((key, self._index.get(key)) for key in self._changed)
        if self._index and len(delta) <= INDEX_DELTA_LIMIT and self._unchanged >= 8 * len(self._changed) \
                and os.path.isfile(self.version_dir / "index.json"):
            _write_json(self.version_dir / DELTA, delta)
            self._delta = delta
        else:
            _write_json(self.version_dir / "index.json", self._index)
            self._delta = {}
            if os.path.lexists(self.version_dir / DELTA):
                os.unlink(self.version_dir / DELTA)
        self._changed.clear()

    def _prepare(self) -> None:
        """Create the folder, tagged as mplint's first of all; re-check that it is
        still mplint's own (it may have been replaced by a link since the run began)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        tag = self.folder / "CACHEDIR.TAG"
        if not os.path.lexists(tag):
            _create(tag, TAG)
        if not (_owned(self.folder) and _plain_folder_or_none(self.version_dir)):
            raise OSError("the cache folder is not mplint's own")
        self.version_dir.mkdir(exist_ok=True)
        ignore = self.folder / ".gitignore"
        if not os.path.lexists(ignore):
            _create(ignore, "# Created by mplint automatically.\n*\n")

    def _prune(self) -> None:
        """Keep the newest result files only (one per recent selection/config).
        Only files mplint names and writes are deleted: ``results-`` and a run key,
        plain files (never a link) in the version folder of mplint's own folder."""
        runs = []
        for path in self.version_dir.iterdir():
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if _RESULTS_NAME.fullmatch(path.name) and stat.S_ISREG(st.st_mode):
                runs.append((st.st_mtime_ns, path))
        runs.sort(reverse=True)
        for _, old in runs[KEEP_RUN_FILES:]:
            old.unlink()


#: the index entries changed since ``index.json`` was written (see ``Cache._save_index``)
DELTA = "index-delta.json"
#: what marks a cache folder as mplint's (https://bford.info/cachedir/)
TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
       "# This file is a cache directory tag created by mplint.\n")
#: the name of a results file: ``run_key`` is 32 hex digits
_RESULTS_NAME = re.compile(r"results-[0-9a-f]{32}\.json")


def _owned(folder: Path) -> bool:
    """Whether mplint may read and write in ``folder``: it does not exist yet (mplint
    creates and tags it), or it is a plain folder (not a link) that mplint tagged
    or that is empty. A folder a repository points the cache at (a committed link,
    ``cache-dir`` in its config) is not written to unless mplint made it."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        return False
    tag = folder / "CACHEDIR.TAG"
    try:
        if stat.S_ISREG(os.lstat(tag).st_mode):
            return read_regular(tag).decode("utf-8", "replace") == TAG
    except OSError:
        pass
    try:
        return not any(os.scandir(folder))
    except OSError:
        return False


def made_by_mplint(folder: Path) -> bool:
    """Whether ``folder`` is a cache folder mplint made: a plain folder (not a link)
    holding mplint's CACHEDIR.TAG, or an empty one; what ``mplint clean`` may delete."""
    return os.path.lexists(folder) and _owned(folder)


def _plain_folder_or_none(path: Path) -> bool:
    """``path`` does not exist or is a folder, not a link to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _create(path: Path, text: str) -> None:
    """Write a new file; never through a link, never over a file already there."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def _stamp(st: os.stat_result) -> List[int]:
    return [st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _valid(value: Any) -> Optional[list]:
    """``value`` when it is an entry (:func:`_is_entry`), else None (a miss)."""
    return value if _is_entry(value) else None


def _is_entry(value: Any) -> bool:
    """``[hash, payload, stamp, size, written_ns]`` with the types :meth:`Cache._fresh`
    compares (the payload is checked where it is read)."""
    return isinstance(value, list) and len(value) == 5 and isinstance(value[0], str) \
        and (_ints([value[2]]) or (isinstance(value[2], list) and _ints(value[2]))) and _ints(value[3:])


def _ints(values: List[Any]) -> bool:
    return all(type(v) is int for v in values)


def _strings(values: Any) -> bool:
    return isinstance(values, list) and all(isinstance(v, str) for v in values)


_FINDING_TYPES = {"line": int, "col": int, "end_line": int, "end_col": int, "rule": str,
                  "severity": str, "message": str}


def _is_finding(data: Any) -> bool:
    """A stored finding: the fields of :class:`Finding` but its path, with their types."""
    return isinstance(data, dict) and all(type(data.get(k)) is t for k, t in _FINDING_TYPES.items()) \
        and data.get("fix") in (None, "safe", "unsafe") and set(data) <= {*_FINDING_TYPES, "fix", "cell"} \
        and "fix" in data and type(data.get("cell", 0)) is int


def _write_json(path: Path, data: Dict[str, Any]) -> None:
    import tempfile  # only when writing

    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(data, separators=(",", ":")))  # the C encoder; dump() is pure Python
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
