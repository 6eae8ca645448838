"""The project index's parses, held to the run's per-file time budget (``file-timeout``).

The index parses with libcst each file that may set a policy or enable the rewrite,
before any file is checked. libcst's parser cannot be interrupted from Python, so a
pathological file that sets a policy (nesting just under the depth guard, a huge
generated module) would hold the whole run for as long as the parser takes. With a
budget, those parses run in forked workers (:mod:`mplint.run.pool`), as the check's
do: a file over the budget, or whose worker dies, contributes no facts (they are
unknown, and rules stay silent on what they would need from it) and comes back with
the reason, which the run says in one line.

The module a worker parsed stays in the worker, so a checked file that sets a policy
is parsed again by its check. Without a budget (an editor, the API) or where
processes cannot be forked, this process parses and keeps each module for the check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, Iterator, Optional, Sequence, Tuple

from mplint.run.garbage import file_done

#: ``index_one(path, raw, parsed)``: the file's facts (``parsed`` receives the module)
IndexOne = Callable[[str, bytes, Optional[Dict[str, object]]], object]


@dataclass
class Indexed:
    """What the index's parses gave: facts by file key, and the files left unindexed."""

    facts: Dict[str, object] = field(default_factory=dict)
    #: files whose facts are unknown, with what their check would say
    #: (``took longer than 3 s (file-timeout); skipped``)
    skipped: Dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Skipped:
    reason: str


def index_files(todo: Sequence[Tuple[str, str, bytes]], index_one: IndexOne, budget: Optional[float],
                jobs: int = 1, parsed: Optional[Dict[str, object]] = None) -> Indexed:
    """``index_one`` for each ``(key, path, raw)`` of ``todo``, each within ``budget``
    seconds of CPU time when one is given (None: no limit, in this process)."""
    out = Indexed()
    if not todo:
        return out  # a cached run: the pool (and multiprocessing) is never imported
    from mplint.run.pool import worker_count

    workers = worker_count(len(todo), jobs, budget) if budget else 0
    if not workers or budget is None:
        for key, path, raw in todo:
            out.facts[key] = index_one(path, raw, parsed)
            file_done()
        return out
    for index, answer in _in_workers(todo, index_one, workers, budget):
        key = todo[index][0]
        if isinstance(answer, _Skipped):
            out.skipped[key] = answer.reason
        elif answer is not None:
            out.facts[key] = answer
    return out


def _in_workers(todo: Sequence[Tuple[str, str, bytes]], index_one: IndexOne, workers: int,
                budget: float) -> Iterator[Tuple[int, object]]:
    from mplint.run.pool import died_message, in_workers, late_message

    def work(index: int) -> Tuple[int, object]:
        _, path, raw = todo[index]
        try:
            return index, index_one(path, raw, None)
        except Exception:  # no facts, as for a file the index cannot parse: its check says why
            return index, None
        finally:
            file_done()

    def died(_index: int, how: str) -> _Skipped:
        return _Skipped(died_message(how))

    def late(_index: int) -> _Skipped:
        return _Skipped(late_message(budget))

    yield from in_workers(work, len(todo), workers, _nothing, (), died, late, budget)


def _nothing() -> None:
    """Index workers need no set-up: fork hands them the project being indexed."""
