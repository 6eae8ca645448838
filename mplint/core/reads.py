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
from contextlib import contextmanager
from typing import Dict, Iterator, List, Mapping, Optional, Tuple

#: the digests noted by the checks running now, innermost recording last
_RECORDING: List[Dict[str, str]] = []
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
    try:
        with open(path, "rb") as handle:
            return handle.read(limit + 1)
    except OSError:
        return None
