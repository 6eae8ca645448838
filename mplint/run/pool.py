"""Forked workers that survive one of them dying.

``multiprocessing.Pool`` waits for ever on the result of a worker that died (a
segfault in a native parser, the kernel's out-of-memory killer): the run hangs.
``concurrent.futures`` notices the death and fails every pending task instead, so
the tasks still pending are run again, each in a process of its own; a task whose
own process dies is answered by ``died`` with the reason, and the run goes on.
"""

from __future__ import annotations

import multiprocessing
import signal
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Dict, Iterator, List, Sequence, Tuple, TypeVar, cast

T = TypeVar("T")

#: a task run in a worker: its index in, ``(index, result)`` out
Work = Callable[[int], Tuple[int, T]]


def in_workers(work: "Work[T]", count: int, jobs: int, initializer: Callable[..., None], initargs: tuple,
           died: Callable[[int, str], T], chunk: int = 1) -> Iterator[Tuple[int, T]]:
    """``work(index)`` for each index below ``count`` in ``jobs`` forked workers
    (each set up by ``initializer(*initargs)``, handed over by fork, not pickled),
    in the order they finish."""
    context = multiprocessing.get_context("fork")
    done: set = set()
    chunks = [list(range(start, min(count, start + chunk))) for start in range(0, count, chunk)]
    try:
        with ProcessPoolExecutor(jobs, mp_context=context, initializer=initializer, initargs=initargs) as pool:
            futures: List[Future] = [pool.submit(_run_chunk, work, indices) for indices in chunks]
            for future in _as_completed(futures):
                try:
                    answers = future.result()
                except BrokenProcessPool:
                    continue  # a worker died: what it and the others still held runs again below
                for index, result in answers:
                    done.add(index)
                    yield index, result
    except BrokenProcessPool:
        pass
    left = [index for index in range(count) if index not in done]
    if left:
        yield from _one_process_each(work, left, jobs, initializer, initargs, died)


def _as_completed(futures: Sequence[Future]) -> Iterator[Future]:
    from concurrent.futures import as_completed

    return as_completed(futures)


def _run_chunk(work: "Work[T]", indices: Sequence[int]) -> List[Tuple[int, T]]:
    return [work(index) for index in indices]


def _one_process_each(work: "Work[T]", indices: Sequence[int], jobs: int, initializer: Callable[..., None],
                      initargs: tuple, died: Callable[[int, str], T]) -> Iterator[Tuple[int, T]]:
    """Each task in a forked process of its own, ``jobs`` at a time: the one whose
    process dies is the one that killed it."""
    context = multiprocessing.get_context("fork")
    waiting = list(reversed(indices))
    running: Dict[Any, Tuple[int, Any]] = {}
    while waiting or running:
        while waiting and len(running) < max(1, jobs):
            index = waiting.pop()
            receiver, writer = context.Pipe(duplex=False)
            process = context.Process(target=_child, args=(work, index, initializer, initargs, writer), daemon=True)
            process.start()
            writer.close()
            running[receiver] = (index, process)
        for ready in cast(List[Connection], wait(list(running))):
            index, process = running.pop(ready)
            try:
                answer = ready.recv()
            except (EOFError, OSError):
                answer = None
            ready.close()
            process.join()
            if answer is None:
                yield index, died(index, _death(process.exitcode))
            else:
                yield answer


def _child(work: "Work[T]", index: int, initializer: Callable[..., None], initargs: tuple,
           writer: Connection) -> None:
    initializer(*initargs)
    writer.send(work(index))
    writer.close()


def _death(exitcode: object) -> str:
    """How a worker died, in words: ``killed by signal SIGSEGV``."""
    if isinstance(exitcode, int) and exitcode < 0:
        try:
            return f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exited with status {exitcode}"
