"""The other files a check reads (an imported module's layer classes), by content.

A result depends on the checked file, the run's settings and project facts, and on
whatever module an analysis opened to judge a name imported from it. Every such
read goes through :func:`read`, which notes the file's content digest while
:func:`recording` is on; the cache stores the digests with the result and answers
only while :func:`unchanged` holds, so fixing ``heads.py`` re-checks the files whose
findings it decided, with no invalidation written by hand.
"""

from __future__ import annotations

import hashlib
import os
from contextlib import contextmanager
from typing import Dict, Iterator, List, Mapping, Optional, Tuple

#: the digests noted by the checks running now, innermost recording last
_RECORDING: List[Dict[str, str]] = []
#: contents read instead of the disk's (an editor's unsaved buffers), by absolute path
_OVERLAY: Dict[str, bytes] = {}
#: the digest noted for a file that could not be read (its absence is a fact too)
MISSING = ""


def digest(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


@contextmanager
def recording() -> Iterator[Dict[str, str]]:
    """Collect, by path, the digest of every file :func:`read` sees."""
    found: Dict[str, str] = {}
    _RECORDING.append(found)
    try:
        yield found
    finally:
        _RECORDING.remove(found)


@contextmanager
def overlay(contents: Mapping[str, bytes]) -> Iterator[None]:
    """Read ``contents`` (by path) instead of those files on disk, as an editor's
    user sees them: an unsaved edit to ``heads.py`` decides the files importing it."""
    saved = dict(_OVERLAY)
    _OVERLAY.update({os.path.abspath(path): raw for path, raw in contents.items()})
    try:
        yield
    finally:
        _OVERLAY.clear()
        _OVERLAY.update(saved)


def read(path: str, limit: int) -> Optional[Tuple[bytes, str]]:
    """The bytes of ``path`` and their digest (None when unreadable or over ``limit``
    bytes), noted for the recordings in progress (an unreadable file as MISSING)."""
    raw = _bytes(path, limit)
    found = MISSING if raw is None else digest(raw)
    for recorded in _RECORDING:
        recorded[path] = found
    return None if raw is None or len(raw) > limit else (raw, found)


def unchanged(reads: Mapping[str, str], limit: int = 2_000_000) -> bool:
    """Whether every file noted still has the content it had."""
    for path, before in reads.items():
        raw = _bytes(path, limit)
        if (MISSING if raw is None else digest(raw)) != before:
            return False
    return True


def _bytes(path: str, limit: int) -> Optional[bytes]:
    """Up to ``limit + 1`` bytes of ``path`` (one more tells an oversized file)."""
    if _OVERLAY:
        given = _OVERLAY.get(os.path.abspath(path))
        if given is not None:
            return given[:limit + 1]
    try:
        with open(path, "rb") as handle:
            return handle.read(limit + 1)
    except OSError:
        return None
