"""What mplint derives from its own inputs alone, kept across runs in the user's cache folder.

Every run needs the parsed rule catalog and the matcher of the ``exclude`` patterns;
parsing some forty YAML files, and importing a YAML parser and pathspec at all, cost a
one-file pre-commit run a large part of its time. Each derived value is stored once
under a key made of everything it was derived from (the bytes read, the deriving
code, the library versions), so an edit to any of them computes it anew. JSON, never
pickle: a file planted in the cache folder cannot run code, and a value that does not
decode is a miss. A folder that cannot be written is skipped silently.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple, TypeVar

from mplint import __version__
from mplint.core.regular_files import read_regular

#: values kept of each kind (one per catalog content, pattern list, install)
KEEP = 32

T = TypeVar("T")


def cache_home() -> Optional[Path]:
    """``$XDG_CACHE_HOME/mplint``, else ``~/.cache/mplint``; None without a home folder."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mplint" if os.path.isabs(base) else None


def key_of(*parts: bytes) -> str:
    """The digest of ``parts`` (each one's length counts: no two lists share a key)."""
    digest = hashlib.sha256(__version__.encode())
    for part in parts:
        digest.update(b"\0%d\0" % len(part))
        digest.update(part)
    return digest.hexdigest()[:40]


def load(kind: str, key: str, decode: Callable[[Any], T]) -> Optional[T]:
    """The value of ``kind`` stored under ``key`` (``decode`` turns the JSON back into
    it), or None: not stored, unreadable, or not of the shape ``decode`` expects."""
    home = cache_home()
    if home is None:
        return None
    path = home / f"{kind}-{key}.json"
    try:
        if os.path.islink(path):
            return None
        return decode(json.loads(read_regular(path)))
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None


def store(kind: str, key: str, data: Any) -> None:
    """Write ``data`` (JSON values only) under ``key``, atomically; keep the newest few."""
    home = cache_home()
    if home is None:
        return
    try:
        text = json.dumps(data, separators=(",", ":"))
        home.mkdir(parents=True, exist_ok=True)
        import tempfile

        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=str(home))
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, home / f"{kind}-{key}.json")
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        _prune(home, kind)
    except (OSError, TypeError, ValueError):
        pass


def _prune(home: Path, kind: str) -> None:
    kept: List[Tuple[int, str]] = []
    for entry in os.scandir(home):
        if entry.name.startswith(kind + "-") and entry.name.endswith(".json") \
                and entry.is_file(follow_symlinks=False):
            kept.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.path))
    kept.sort(reverse=True)
    for _, old in kept[KEEP:]:
        try:
            os.unlink(old)
        except OSError:
            pass
