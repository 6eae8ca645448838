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
from typing import Dict, Iterator, List, Mapping, Optional

#: the digests noted by the checks running now, innermost recording last
_RECORDING: List[Dict[str, str]] = []
#: the digest noted for a file that could not be read (its absence is a fact too)
MISSING = ""


def digest(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


@contextmanager
def recording() -> Iterator[Dict[str, str]]:
    """Collect, by path, the digest of every file :func:`read` or :func:`note` sees."""
    found: Dict[str, str] = {}
    _RECORDING.append(found)
    try:
        yield found
    finally:
        _RECORDING.remove(found)


def note(path: str, content_digest: str) -> None:
    """A file read earlier (and remembered) decides the result being computed now."""
    for found in _RECORDING:
        found[path] = content_digest


def read(path: str, limit: int) -> Optional[bytes]:
    """The bytes of ``path`` (None when unreadable or over ``limit`` bytes), noted."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(limit + 1)
    except OSError:
        note(path, MISSING)
        return None
    note(path, digest(raw))
    return raw if len(raw) <= limit else None


def unchanged(reads: Mapping[str, str], limit: int = 2_000_000) -> bool:
    """Whether every file noted still has the content it had."""
    for path, before in reads.items():
        try:
            with open(path, "rb") as handle:
                now = digest(handle.read(limit + 1))
        except OSError:
            now = MISSING
        if now != before:
            return False
    return True
