"""A stamp of mplint's own code and rule catalog: cached results and the program
model's result are keyed by it, so an edit to mplint (an editable install) or an
upgrade never serves a stale answer. Computed once per process."""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path
from typing import List

from mplint import __version__

_PACKAGE = Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=1)
def code_stamp() -> str:
    """Changes when mplint's own code or rule catalog changes (editable installs too)."""
    from mplint.rule.catalog import catalog_dir

    parts: List[str] = [__version__]
    folders = [folder for folder, _, _ in os.walk(_PACKAGE) if "__pycache__" not in folder]
    for folder in (*sorted(folders), str(catalog_dir())):
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name.endswith((".py", ".yaml")):
                st = entry.stat()
                parts.append(f"{entry.path}:{st.st_mtime_ns}:{st.st_size}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()
