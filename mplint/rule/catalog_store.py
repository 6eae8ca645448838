"""The parsed rule catalog, kept as JSON in the user's cache folder and keyed by content.

Every run needs the catalog (the rule ids a selection names, their options), but
parsing some forty YAML files, and importing a YAML parser at all, cost a
one-file pre-commit run a large part of its time. The parsed entries are stored once
under a key made of the catalog files' bytes, the loader's own code and their folder,
so any edit to an entry or to the loader, or another install, reads the YAML again.
JSON, never pickle: a file planted in the cache folder cannot run code, and an entry
that does not decode is a miss. A folder that cannot be written is skipped silently.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from mplint import __version__
from mplint.core.regular_files import read_regular

#: compiled catalogs kept (one per catalog content and install)
KEEP = 8
_PREFIX = "catalog-"


def cache_home() -> Optional[Path]:
    """``$XDG_CACHE_HOME/mplint``, else ``~/.cache/mplint``; None without a home folder."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mplint" if os.path.isabs(base) else None


def catalog_key(folder: Path, paths: Sequence[Path], loader_code: bytes) -> Optional[str]:
    """The digest of everything the parsed entries depend on; None when a file cannot
    be read (the YAML loader then says why)."""
    digest = hashlib.sha256(f"{__version__}\0{folder}\0".encode())
    digest.update(hashlib.sha256(loader_code).digest())
    try:
        for path in paths:
            data = read_regular(path)
            digest.update(f"\0{path.name}\0{len(data)}\0".encode())
            digest.update(data)
    except OSError:
        return None
    return digest.hexdigest()[:40]


def load(key: str, decode: Callable[[Any], Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The entries stored under ``key`` (``decode`` turns the JSON back into them), or
    None: not stored, unreadable, or not of the shape ``decode`` expects."""
    home = cache_home()
    if home is None:
        return None
    path = home / f"{_PREFIX}{key}.json"
    try:
        if os.path.islink(path):
            return None
        return decode(json.loads(read_regular(path)))
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None


def store(key: str, data: Any) -> None:
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
            os.replace(tmp, home / f"{_PREFIX}{key}.json")
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        _prune(home)
    except (OSError, TypeError, ValueError):
        pass


def _prune(home: Path) -> None:
    kept: List[Tuple[int, str]] = []
    for entry in os.scandir(home):
        if entry.name.startswith(_PREFIX) and entry.name.endswith(".json") and entry.is_file(follow_symlinks=False):
            kept.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.path))
    kept.sort(reverse=True)
    for _, old in kept[KEEP:]:
        try:
            os.unlink(old)
        except OSError:
            pass
