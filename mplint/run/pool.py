"""Forked workers that survive one of them dying or running too long on a file.

``multiprocessing.Pool`` waits for ever on the result of a worker that died (a
segfault in a native parser, the kernel's out-of-memory killer), and no pool can
stop a task stuck in native code (libcst's parser ignores Python's signals: a
pathological file holds it for minutes). So each worker here does one task at a
time, sent down its own pipe: the parent knows which task each worker holds. A
worker that dies is answered by ``died`` with the reason, and one that overruns
the budget by ``late``; either is replaced and the run goes on.

The budget is CPU time, which the kernel enforces (``RLIMIT_CPU``: SIGXCPU once a
task has used its seconds), so a loaded machine (a CI runner, a laptop building
something else) does not skip files that are merely slow to get a core. A task
that uses no CPU and never answers (a read that blocks) is killed after
:data:`WALL_FACTOR` times the budget of wall-clock time; one that is using CPU then,
however slowly it gets it, is left to the kernel's limit (where a process's CPU time
cannot be read, as on macOS, the wall-clock limit stops it too).

Workers ignore Ctrl-C: the parent stops handing out tasks, gives those in flight
a moment to finish (a fix may be writing its file), then stops the workers and
lets the interrupt go on.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import signal
import time
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Deque, Dict, Iterator, List, Optional, Tuple, TypeVar, cast

T = TypeVar("T")

#: a task run in a worker: its index in, ``(index, result)`` out
Work = Callable[[int], Tuple[int, T]]

#: after Ctrl-C, how long the tasks in flight may take to finish, in seconds
GRACE = 2.0
#: a task is stopped after this many times its CPU budget in wall-clock time, unless it
#: is using CPU (:data:`IDLE_SHARE`)
WALL_FACTOR = 4
#: a task that used less than this share of one core over that wall-clock time is idle
IDLE_SHARE = 0.05
#: Below this many tasks, starting several workers costs more than it saves.
MIN_TASKS_FOR_POOL = 8


def can_fork() -> bool:
    """Whether workers can be forked here (not on Windows)."""
    return "fork" in multiprocessing.get_all_start_methods()


def worker_count(count: int, jobs: int, budget: Optional[float]) -> int:
    """How many processes to fork for ``count`` tasks: as many as ``jobs`` when the
    tasks are worth it, one for a time budget alone, none to work in this process."""
    if not can_fork():
        return 0
    if min(jobs, count) > 1 and count >= MIN_TASKS_FOR_POOL:
        return min(jobs, count)
    return 1 if budget else 0


def late_message(budget: float) -> str:
    """What a file over its budget is told, wherever it was parsed (index or check)."""
    return f"took longer than {budget:g} s (file-timeout); skipped"


def died_message(how: str) -> str:
    """What a file whose worker died on it is told, wherever it was parsed."""
    from mplint.core.results import REPORT_TO

    return f"mplint's worker process died on this file ({how}); not checked. Please report this to {REPORT_TO}"


@dataclass
class _Worker:
    process: Any
    pipe: Connection
    #: the task it holds, and since when (None: idle)
    index: Optional[int] = None
    started: float = 0.0
    #: the process's CPU seconds at ``started`` (None: unknown)
    cpu_mark: Optional[float] = None


def in_workers(work: "Work[T]", count: int, jobs: int, initializer: Callable[..., None], initargs: tuple,
               died: Callable[[int, str], T], late: Optional[Callable[[int], T]] = None,
               budget: Optional[float] = None) -> Iterator[Tuple[int, T]]:
    """``work(index)`` for each index below ``count`` in ``jobs`` forked workers
    (each set up by ``initializer(*initargs)``, handed over by fork, not pickled),
    in the order they finish. A task held longer than ``budget`` seconds is
    answered by ``late(index)``."""
    pool = _Pool(work, initializer, initargs, budget)
    waiting: Deque[int] = deque(range(count))
    try:
        for _ in range(max(1, min(jobs, count))):
            pool.start()
        while waiting or pool.busy():
            for worker in pool.idle():
                if not waiting:
                    break
                pool.give(worker, waiting.popleft())
            yield from pool.answers(died, late, budget, replace=bool(waiting))
    except KeyboardInterrupt:
        waiting.clear()
        yield from pool.drain(died, GRACE)
        raise
    finally:
        pool.close()


class _Pool:
    def __init__(self, work: "Work[Any]", initializer: Callable[..., None], initargs: tuple,
                 budget: Optional[float]) -> None:
        self.context = multiprocessing.get_context("fork")
        self.work = work
        self.initializer = initializer
        self.initargs = initargs
        self.budget = budget
        self.workers: List[_Worker] = []

    def start(self) -> None:
        parent, child = self.context.Pipe()
        process = self.context.Process(target=_serve, daemon=True,
                                       args=(self.work, self.initializer, self.initargs, child, self.budget))
        process.start()
        child.close()
        self.workers.append(_Worker(process, parent))

    def busy(self) -> List[_Worker]:
        return [w for w in self.workers if w.index is not None]

    def idle(self) -> List[_Worker]:
        return [w for w in self.workers if w.index is None]

    def give(self, worker: _Worker, index: int) -> None:
        worker.index, worker.started = index, time.monotonic()
        worker.cpu_mark = _cpu_seconds(worker.process.pid)
        try:
            worker.pipe.send(index)
        except OSError:
            pass  # it died idle: wait() sees the closed pipe and answers for the task

    def answers(self, died: Callable[[int, str], T], late: Optional[Callable[[int], T]],
                budget: Optional[float], replace: bool, until: Optional[float] = None) -> Iterator[Tuple[int, T]]:
        """The answers that arrive before the first deadline (a task's budget, or ``until``)."""
        busy = self.busy()
        wall = budget * WALL_FACTOR if budget else None
        deadlines = [w.started + wall for w in busy] if wall else []
        if until is not None:
            deadlines.append(until)
        timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
        for pipe in cast(List[Connection], wait([w.pipe for w in busy], timeout)):
            worker = next(w for w in busy if w.pipe is pipe)
            index = cast(int, worker.index)
            try:
                answer = pipe.recv()
            except Exception:  # EOF, or an answer cut short by the worker's death
                self.retire(worker, replace)
                over = late is not None and worker.process.exitcode == -signal.SIGXCPU
                yield index, late(index) if over and late is not None else died(index, _death(worker.process.exitcode))
                continue
            worker.index = None
            yield answer
        if wall and late is not None:
            now = time.monotonic()
            for worker in self.busy():
                if now - worker.started >= wall and not _still_working(worker, now, wall):
                    index = cast(int, worker.index)
                    self.retire(worker, replace, kill=True)
                    yield index, late(index)

    def drain(self, died: Callable[[int, str], T], grace: float) -> Iterator[Tuple[int, T]]:
        """The answers of the tasks in flight that finish within ``grace`` seconds."""
        until = time.monotonic() + grace
        while self.busy() and time.monotonic() < until:
            yield from self.answers(died, None, None, replace=False, until=until)

    def retire(self, worker: _Worker, replace: bool, kill: bool = False) -> None:
        if kill and worker.process.is_alive():
            worker.process.kill()
        worker.process.join()
        worker.pipe.close()
        self.workers.remove(worker)
        if replace:
            self.start()

    def close(self) -> None:
        for worker in self.workers:
            if worker.index is not None:
                worker.process.kill()  # still busy: only an interrupt leaves one so
                continue
            try:
                worker.pipe.send(None)  # no EOF: workers forked later hold this end too
            except OSError:
                pass
        for worker in self.workers:
            worker.pipe.close()
            worker.process.join(1.0)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
        self.workers = []


def _serve(work: "Work[Any]", initializer: Callable[..., None], initargs: tuple, pipe: Connection,
           budget: Optional[float]) -> None:
    """A worker: tasks from ``pipe`` one at a time, each answer sent back, until the
    parent sends None. Each task may use ``budget`` seconds of CPU time."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides what Ctrl-C stops
    _no_core_files()
    try:
        initializer(*initargs)
        while True:
            try:
                index = pipe.recv()
            except (EOFError, OSError):
                break
            if index is None:
                break
            if budget:
                _limit_cpu(budget)
            pipe.send(work(index))
    except BaseException:  # an answer that cannot be sent: the parent sees a death, not a traceback
        os._exit(70)


def _still_working(worker: _Worker, now: float, wall: float) -> bool:
    """Whether a worker past its wall-clock deadline used CPU since its last one (it is
    waiting for a core, not blocked): its deadline moves on, and RLIMIT_CPU still
    stops it at its budget."""
    cpu = _cpu_seconds(worker.process.pid)
    if cpu is None or worker.cpu_mark is None or cpu - worker.cpu_mark < IDLE_SHARE * (now - worker.started):
        return False
    worker.started, worker.cpu_mark = now, cpu
    return True


def _cpu_seconds(pid: Optional[int]) -> Optional[float]:
    """The CPU time (user and system) process ``pid`` has used; None where it cannot be
    read (no ``/proc``: macOS)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()  # after the command's name
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    except (OSError, ValueError, IndexError):
        return None


def _no_core_files() -> None:
    """A worker stopped by SIGXCPU (or a native crash) must not leave a ``core``
    file in the user's folder."""
    import resource

    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    except (ValueError, OSError):
        pass


def _limit_cpu(budget: float) -> None:
    """Let the kernel stop this process (SIGXCPU) once it has used ``budget`` more
    seconds of CPU time (whole seconds: the limit's unit)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    soft = math.ceil(used + budget)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _death(exitcode: object) -> str:
    """How a worker died, in words: ``killed by signal SIGSEGV``."""
    if isinstance(exitcode, int) and exitcode < 0:
        try:
            return f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exited with status {exitcode}"
