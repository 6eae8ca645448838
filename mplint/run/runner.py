"""Check or fix many files: the prefilter and the cache first, then a pool of forked workers.

``check`` and ``fix`` take the same path: each file is read once here, its bytes
give the cache key and travel to the worker, so a result is always cached under
the content it was computed from. What a worker does with a file is a *task*
(:class:`CheckTask`, :class:`FixTask`). Workers are forked after the task's linter
(and libcst) is loaded and inherit it with the work list; they receive only
indices, and results are small picklable dataclasses. The linter is built only
when some file misses the cache, so a fully cached run never imports libcst.

With a time ``budget`` (the ``file-timeout`` setting) every file that must be
parsed is worked on in a forked worker, one at a time, even in a serial run: a
file that holds its worker longer than the budget (libcst's parser cannot be
interrupted from Python) is one line, its worker replaced. Without one (or where
processes cannot be forked) a serial run works in this process.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, TypeVar, Union

from mplint.core.findings import FileError, Finding
from mplint.core.prefilter import may_matter
from mplint.core.results import FileResult, FixOutcome, internal_error
from mplint.run.cache import Cache, content_hash
from mplint.run.garbage import collected_per_file, file_done

if TYPE_CHECKING:  # pragma: no cover (the linter loads libcst; a cached run must not)
    from mplint.core.gatekeeper import Gatekeeper
    from mplint.core.linter import Linter

Result = Union[FileResult, FixOutcome]
R = TypeVar("R", FileResult, FixOutcome)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover (macOS, Windows)
        return max(1, os.cpu_count() or 1)


class Progress:
    """``mplint: 120/1250 files`` on stderr, only on an interactive terminal."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.done = 0
        self.enabled = enabled and total >= 50 and sys.stderr.isatty() and not os.environ.get("CI")
        self._last = 0.0

    def step(self, count: int = 1) -> None:
        self.done += count
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last >= 0.1 or self.done == self.total:
            self._last = now
            sys.stderr.write(f"\rmplint: {self.done}/{self.total} files")
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


# -- tasks: what a worker does with one file ------------------------------------------
class CheckTask:
    """Check a file. ``parsed`` holds modules the project index already parsed.

    ``gate`` (the linter's :class:`Gatekeeper`, built without libcst): when no file to
    work on may hold a finding of a selected rule, the linter is never built, and each
    file is checked without libcst (a pre-commit run on a file far from mixed precision).
    """

    def __init__(self, make_linter: Callable[[], "Linter"], parsed: Optional[Dict[str, object]] = None,
                 gate: Optional[Callable[[], "Gatekeeper"]] = None) -> None:
        self.make_linter = make_linter
        self.parsed = parsed if parsed is not None else {}
        self.make_gate = gate
        self.linter: Optional["Linter"] = None
        self.gate: Optional["Gatekeeper"] = None

    def start(self, todo: Sequence[Tuple[str, bytes]] = ()) -> None:
        """Before the workers fork: the linter, unless no file of ``todo`` needs it."""
        if self.make_gate is not None:
            self.gate = self.make_gate()
            gate = self.gate
            if not any(os.path.abspath(path) in self.parsed or gate.needs_checks(path, raw) for path, raw in todo):
                return
        self.linter = self.make_linter()

    def run(self, path: str, raw: bytes) -> FileResult:
        from mplint.core.source_kinds import load_source

        module = self.parsed.pop(os.path.abspath(path), None)
        src = load_source(path, raw)
        if self.linter is None:
            assert self.gate is not None
            if module is None:
                result = self.gate.check_unparsed(src)
                if result is not None:
                    return result
            self.linter = self.make_linter()
        return self.linter.check(src, module)  # type: ignore[arg-type]

    def failed(self, path: str, exc: BaseException) -> FileResult:
        return FileResult(path, errors=[internal_error(path, exc)], cacheable=False)

    def not_done(self, path: str, message: str) -> FileResult:
        """A file not worked on (over the time budget, a dead worker), never cached."""
        return FileResult(path, errors=[FileError(path, message)], cacheable=False)

    def from_cache(self, path: str, findings: List[Finding], errors: List[FileError]) -> Optional[FileResult]:
        return FileResult(path, findings, errors)

    def cached_content(self, result: FileResult, raw: bytes) -> Optional[bytes]:
        return raw if result.cacheable else None


class FixTask:
    """Fix a file, and write it (atomically) when ``write``.

    A file whose cached result offers no fix these flags apply is not parsed at all.
    """

    def __init__(self, make_linter: Callable[[], "Linter"], unsafe: bool, write: bool,
                 within: Optional["os.PathLike[str]"] = None) -> None:
        self.make_linter = make_linter
        #: the tree no write may leave (through a symlink); None: no limit
        self.within = os.fspath(within) if within is not None else None
        self.unsafe = unsafe
        self.write = write
        self.wanted = ("safe", "unsafe") if unsafe else ("safe",)
        self.linter: Optional["Linter"] = None
        #: the outcomes of the files written in this process, the moment each is
        #: written (Ctrl-C may come before the outcome is returned)
        self.wrote: List[FixOutcome] = []

    def start(self, todo: Sequence[Tuple[str, bytes]] = ()) -> None:
        self.linter = self.make_linter()

    def run(self, path: str, raw: bytes) -> FixOutcome:
        from mplint.core.source import SourceError, write_atomic
        from mplint.core.source_kinds import load_source

        assert self.linter is not None
        outcome = self.linter.fix(load_source(path, raw), self.unsafe)
        if self.write and outcome.changed:
            try:
                write_atomic(path, outcome.fixed or b"", expected=raw, within=self.within)
                outcome.written = True
                self.wrote.append(outcome)
            except SourceError as exc:
                # Not written: nothing was fixed, and every finding of the file remains.
                unfixed = self.linter.check(load_source(path, raw))
                outcome.fixed, outcome.applied, outcome.applied_rules = None, 0, []
                outcome.remaining = unfixed.findings
                outcome.errors = unfixed.errors + [FileError(path, str(exc))]
                outcome.cacheable = False
        return outcome

    def failed(self, path: str, exc: BaseException) -> FixOutcome:
        return FixOutcome(path, errors=[internal_error(path, exc)], cacheable=False)

    def not_done(self, path: str, message: str) -> FixOutcome:
        """A file not worked on (over the time budget, a dead worker), never cached."""
        return FixOutcome(path, errors=[FileError(path, message)], cacheable=False)

    def from_cache(self, path: str, findings: List[Finding], errors: List[FileError]) -> Optional[FixOutcome]:
        if any(f.fix in self.wanted for f in findings):
            return None  # something to fix: do the work
        return FixOutcome(path, remaining=findings, errors=errors)

    def cached_content(self, result: FixOutcome, raw: bytes) -> Optional[bytes]:
        """The content to cache ``result`` under: only a file nothing was done to and
        nothing went wrong in, whose result is what ``check`` finds. A fixed file's
        remaining findings, a fix that failed (which hides the findings ``check``
        reports), a write that failed (the file may be writable next time) and the
        warnings a fix leaves out are never the cache's: the next ``check`` reads the
        file again."""
        if result.changed or result.errors or not result.cacheable:
            return None
        return raw


Task = Union[CheckTask, FixTask]


def findings_of(result: Result) -> List[Finding]:
    return result.findings if isinstance(result, FileResult) else result.remaining


# -- the run -------------------------------------------------------------------------
@dataclass
class _Work:
    """One file a worker must do, with its bytes and the stat it was read under."""

    path: str
    raw: bytes
    stat: os.stat_result


@dataclass
class _Batch:
    """What forked workers inherit: the task (with its linter) and the work list."""

    task: Task
    items: List[_Work]


_BATCH: Optional[_Batch] = None  # set in each worker by _adopt (and for a serial run)


def _adopt(batch: _Batch) -> None:
    global _BATCH
    _BATCH = batch


def _work(index: int) -> Tuple[int, Result]:
    assert _BATCH is not None
    item = _BATCH.items[index]
    try:
        return index, _BATCH.task.run(item.path, item.raw)
    except Exception as exc:  # never lose the whole run to one file
        return index, _BATCH.task.failed(item.path, exc)
    finally:
        file_done()


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run, with the results of the files done before it (a fix
    must say which files it already wrote)."""

    def __init__(self, results: Sequence[Result]) -> None:
        super().__init__()
        self.results = list(results)


def run_files(files: Sequence[str], task: Task, cache: Optional[Cache], jobs: int,
              progress: bool = False, contents: Optional[Dict[str, bytes]] = None,
              budget: Optional[float] = None) -> List[Result]:
    """The task's result for every file, in the order of ``files``.

    ``contents`` holds bytes already read (by the project index); each is used once.
    ``budget``: the most seconds one file may take (None: no limit). Ctrl-C raises
    :class:`RunInterrupted` with the results so far. Temporary files a killed
    mplint left beside the files to work on are removed first
    (:mod:`mplint.core.temp_files`).
    """
    results: Dict[str, Result] = {}
    todo: List[_Work] = []
    bar = Progress(len(files), progress)
    contents = contents if contents is not None else {}
    for path in files:
        try:
            st = os.stat(path)
            hit = cache.lookup(path, st) if cache is not None else None
            done: Optional[Result] = task.from_cache(path, *hit) if hit is not None else None
            # Read unless the cache answered (a stat hit the task cannot use is read after all).
            raw = None if done is not None else contents.pop(path, None)
            if done is None and raw is None:
                with open(path, "rb") as handle:
                    raw = handle.read()
        except OSError:
            results[path] = FileResult(path, errors=[FileError(path, _unreadable(path))])
            bar.step()
            continue
        if done is None and raw is not None:
            digest = content_hash(raw)
            found = ([], []) if not may_matter(raw) else cache.get(path, digest) if cache is not None else None
            done = task.from_cache(path, *found) if found is not None else None
            if done is None:
                todo.append(_Work(path, raw, st))
                continue
            if cache is not None:
                cache.put(path, digest, findings_of(done), done.errors, st)
        assert done is not None
        results[path] = done
        bar.step()
    if todo:
        from mplint.core.temp_files import remove_stale

        # What a killed fix left beside the files it was fixing, which are still to fix
        # (a folder whose files all come from the cache is not even listed).
        remove_stale({os.path.dirname(item.path) for item in todo})
        task.start([(item.path, item.raw) for item in todo])
        from mplint.run.pool import worker_count

        workers = worker_count(len(todo), jobs, budget)
        # Biggest files first, so no worker is left with a long one at the end.
        batch = _Batch(task, sorted(todo, key=lambda item: -len(item.raw)))

        def take(index: int, result: Result) -> None:
            item = batch.items[index]
            results[item.path] = result
            content = task.cached_content(result, item.raw)  # type: ignore[arg-type]
            if cache is not None and content is not None:
                written = item.stat if content is item.raw else _stat(item.path)
                cache.put(item.path, content_hash(content), findings_of(result), result.errors, written,
                          result.reads)
            bar.step()

        stream = _results(batch, workers, budget)
        try:
            # One worker (for the budget alone) is not worth the full collection freezing costs.
            with collected_per_file(freeze=workers > 1):
                try:
                    for index, result in stream:
                        take(index, result)
                except KeyboardInterrupt:
                    for index, result in _after_interrupt(stream):
                        take(index, result)
                    for outcome in task.wrote if isinstance(task, FixTask) else ():
                        results.setdefault(outcome.path, outcome)
                    if isinstance(task, FixTask) and task.write:
                        for item in batch.items:
                            if item.path not in results and _rewritten(item):
                                results[item.path] = FixOutcome(item.path, original=item.raw, written=True)
                    bar.close()
                    raise RunInterrupted([results[path] for path in files if path in results]) from None
        finally:
            _adopt(None)  # type: ignore[arg-type]
    bar.close()
    if cache is not None:
        cache.save()
    return [results[path] for path in files if path in results]


def _rewritten(item: _Work) -> bool:
    """Whether a file was replaced since it was read for this run: a worker still busy
    after the interrupt's grace is killed, and may have written its file (a rename,
    done or not) without answering; the user must still hear it was fixed."""
    now = _stat(item.path)
    if now is None or (now.st_ino, now.st_mtime_ns, now.st_size) == \
            (item.stat.st_ino, item.stat.st_mtime_ns, item.stat.st_size):
        return False
    try:
        with open(item.path, "rb") as handle:
            return handle.read() != item.raw
    except OSError:
        return False


def _stat(path: str) -> Optional[os.stat_result]:
    try:
        return os.stat(path)
    except OSError:
        return None


def _unreadable(path: str) -> str:
    """The same one-line message as everywhere else for a file that cannot be read."""
    from mplint.core.source import SourceError, read_bytes

    try:
        read_bytes(path)
        return "cannot be read"
    except SourceError as err:
        return str(err)


def _results(batch: _Batch, workers: int, budget: Optional[float]) -> Iterator[Tuple[int, Result]]:
    count = len(batch.items)
    if not workers:
        _adopt(batch)
        for index in range(count):
            yield _work(index)
        return
    from mplint.run.pool import in_workers

    # Forked workers receive the batch through the initializer's arguments, which
    # fork hands over without pickling (the linter holds unpicklable state).
    late = partial(_late, batch, budget) if budget else None
    yield from in_workers(_work, count, workers, _adopt, (batch,), partial(_died, batch), late, budget)


def _after_interrupt(stream: Iterator[Tuple[int, Result]]) -> Iterator[Tuple[int, Result]]:
    """What a worker pool still answers once Ctrl-C reached this process outside it
    (the files in flight, given a moment to finish); nothing when it reached the pool."""
    throw = getattr(stream, "throw", None)
    if throw is None:
        return
    try:
        yield throw(KeyboardInterrupt)
        yield from stream
    except (KeyboardInterrupt, StopIteration):
        return


def _died(batch: _Batch, index: int, how: str) -> Result:
    """The result of a file whose worker process died on it (a native crash)."""
    from mplint.run.pool import died_message

    return _not_done(batch, index, died_message(how))


def _late(batch: _Batch, budget: float, index: int) -> Result:
    """The result of a file that held its worker longer than the budget."""
    from mplint.run.pool import late_message

    return _not_done(batch, index, late_message(budget))


def _not_done(batch: _Batch, index: int, message: str) -> Result:
    return batch.task.not_done(batch.items[index].path, message)

