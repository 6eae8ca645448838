"""Check many files: the prefilter and the cache first, then a pool of forked workers.

Each file is read once here; its bytes give the cache key and travel to the
worker, so a result is always cached under the content it was computed from.
Workers are forked after the linter (and libcst) is loaded, inherit it and the
work list, and receive only indices; results are small picklable dataclasses.
The linter is built only when some file misses the cache, so a fully cached
run never imports libcst.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from mplint.run.cache import Cache, content_hash
from mplint.core.findings import FileError, Finding
from mplint.core.prefilter import may_matter

#: Below this many files to parse, starting workers costs more than it saves.
MIN_FILES_FOR_POOL = 8
#: allocations between young-generation collections while checking (default 700)
GC_THRESHOLD = 50_000

_LINTER = None
_TODO: List[Tuple[str, bytes, os.stat_result]] = []
_PARSED: Dict[str, object] = {}


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


def _work(index: int):
    path, raw, _ = _TODO[index]
    try:
        return index, _LINTER.lint_bytes(path, raw, _PARSED.get(os.path.abspath(path)))
    except Exception as exc:  # never lose the whole run to one file
        from mplint.core.linter import REPORT_URL, FileResult

        return index, FileResult(path, errors=[FileError(
            path, f"internal error: {type(exc).__name__}: {exc}. Please report this at {REPORT_URL}")])


def check_files(files: Sequence[str], make_linter: Callable[[], object], cache: Optional[Cache],
                jobs: int, progress: bool = False, contents: Optional[Dict[str, bytes]] = None,
                parsed: Optional[Dict[str, object]] = None) -> Tuple[List[Finding], List[FileError]]:
    """Findings and per-file errors for ``files``, in no particular order.

    ``contents`` holds bytes already read and ``parsed`` modules already parsed
    from them (by the project index); each is used once.
    """
    global _LINTER, _TODO, _PARSED
    findings: List[Finding] = []
    errors: List[FileError] = []
    todo: List[Tuple[str, bytes, os.stat_result]] = []
    bar = Progress(len(files), progress)
    contents = contents if contents is not None else {}
    for path in files:
        try:
            st = os.stat(path)
            hit = cache.lookup(path, st) if cache is not None else None
            raw = None if hit is not None else contents.pop(path, None)
            if hit is None and raw is None:
                with open(path, "rb") as handle:
                    raw = handle.read()
        except OSError:
            from mplint.core.source import SourceError, read_bytes

            try:  # the same one-line message as everywhere else
                read_bytes(path)
                message = "cannot be read"
            except SourceError as err:
                message = str(err)
            errors.append(FileError(path, message))
            bar.step()
            continue
        if hit is None and raw is not None:
            digest = content_hash(raw)
            if not may_matter(raw):
                hit = ([], [])
            elif cache is not None:
                hit = cache.get(path, digest)
            if hit is None:
                todo.append((path, raw, st))
                continue
            if cache is not None:
                cache.put(path, digest, hit[0], hit[1], st)
        findings += hit[0]
        errors += hit[1]
        bar.step()
    if todo:
        _LINTER = make_linter()
        thresholds = _tune_gc()
        # Biggest files first, so no worker is left with a long one at the end.
        _TODO = sorted(todo, key=lambda item: -len(item[1]))
        _PARSED = parsed or {}
        try:
            for index, result in _results(len(_TODO), jobs):
                findings += result.findings
                errors += result.errors
                if cache is not None:
                    path, raw, st = _TODO[index]
                    cache.put(path, content_hash(raw), result.findings, result.errors, st)
                bar.step()
        finally:
            _LINTER, _TODO, _PARSED = None, [], {}
            gc.unfreeze()
            gc.set_threshold(*thresholds)
    bar.close()
    if cache is not None:
        cache.save()
    order = {path: n for n, path in enumerate(files)}
    errors.sort(key=lambda e: order.get(e.path, -1))
    return findings, errors


def _tune_gc() -> Tuple[int, ...]:
    """Fewer garbage-collector passes while libcst builds trees (about 7% of the parse).

    A libcst tree is acyclic and freed by reference counting; the default
    thresholds make the collector walk the live heap every few hundred
    allocations all the same. Freezing what exists now (modules, the linter)
    also keeps forked workers from copying those pages when the collector would
    touch them.
    """
    old = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_THRESHOLD, 20, 20)
    return old


def _results(count: int, jobs: int):
    jobs = min(jobs, count)
    if jobs <= 1 or count < MIN_FILES_FOR_POOL or not _can_fork():
        for index in range(count):
            yield _work(index)
        return
    import multiprocessing

    context = multiprocessing.get_context("fork")
    chunk = max(1, min(8, count // (jobs * 8)))
    with context.Pool(jobs) as pool:
        yield from pool.imap_unordered(_work, range(count), chunksize=chunk)


def _can_fork() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()
