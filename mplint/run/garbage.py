"""Garbage collection once per file, instead of every few hundred allocations.

A file's libcst tree is held by its analyses' cycles (scopes and their parents,
the context and its analyses) until the collector finds them. Automatic
collections meanwhile scan the live tree being built again and again, and promote
it to older generations, which are scanned again later: a fifth of a run's time.
With automatic collection off, :func:`file_done` collects the youngest generation
once after each file: everything the file allocated is scanned once and its
cycles are freed, so memory stays that of one file.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def collected_per_file(freeze: bool = False) -> Iterator[None]:
    """Automatic collection off inside (call :func:`file_done` after each file).

    ``freeze``: before forking workers, freeze what exists now (modules, the
    linter), so workers do not copy those pages when the collector would touch
    them. A serial run skips that full collection, which in a long-lived process
    (an editor, pytest, the API) walks everything it ever loaded.
    """
    was_enabled = gc.isenabled()
    if freeze:
        gc.collect()
        gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.unfreeze()
        if was_enabled:
            gc.enable()


def file_done() -> None:
    """Free what the file just handled left in cycles (its tree, its analyses)."""
    gc.collect(0)
