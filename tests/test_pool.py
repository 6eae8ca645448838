"""The worker pool's time budget is CPU time: a task that waits for a core (a loaded CI
runner) is not stopped by the wall clock, one blocked without using CPU is, and one
that uses its CPU seconds is stopped by the kernel."""

from __future__ import annotations

import time

import pytest

from mplint.run import pool

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not pool.can_fork(), reason="workers are forked")]
BUDGET = 1.0


def _starved(seconds: float) -> None:
    """Use 10 ms of CPU in every 100 ms for ``seconds`` of wall-clock time: a process
    that gets a core a tenth of the time."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        spin = time.process_time() + 0.01
        while time.process_time() < spin:
            pass
        time.sleep(0.09)


def _spinning() -> None:
    while True:
        pass


TASKS = {
    # past the wall-clock limit (4 x the budget), with a third of the budget's CPU
    "starved": lambda: _starved(pool.WALL_FACTOR * BUDGET + 2),
    "blocked": lambda: time.sleep(60),
    "spinning": _spinning,
}


def _run(name: str):
    def work(index: int):
        TASKS[name]()
        return index, "done"

    started = time.monotonic()
    answers = list(pool.in_workers(work, 1, 1, lambda: None, (), lambda i, how: f"died: {how}",
                                   lambda i: "late", BUDGET))
    return answers, time.monotonic() - started


def test_a_task_waiting_for_a_core_is_not_stopped_by_the_wall_clock():
    answers, _ = _run("starved")
    assert answers == [(0, "done")]


def test_a_task_blocked_without_cpu_is_stopped_after_the_wall_clock_limit():
    answers, took = _run("blocked")
    assert answers == [(0, "late")]
    assert took < 30  # not the task's 60 s


def test_a_task_that_uses_its_cpu_seconds_is_stopped_by_the_kernel():
    answers, _ = _run("spinning")
    assert answers == [(0, "late")]
