"""The temporary files ``fix`` writes beside a file before renaming them over it, named
so that mplint can later prove a left-over one is its own.

A write is a temporary file and a rename; a process killed in between (``kill -9``,
the out-of-memory killer, a worker over its time budget) leaves the temporary file.
Its name says who wrote it: ``.mplint-tmp-<host>-<pid>-<random>.tmp``, the host a
digest of this machine's name, the pid the writing process's. The next run that
works in that folder removes such a file when the name has exactly that shape, the
host is this one, no process with that pid is alive here, and the file is a regular
file (not a link) owned by this user. Anything else, a file another tool or an
older mplint named alike included, is left alone.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import socket
import stat
from typing import Iterable, List, Tuple

PREFIX = ".mplint-tmp-"
SUFFIX = ".tmp"
_NAME = re.compile(re.escape(PREFIX) + r"(?P<host>[0-9a-f]{8})-(?P<pid>[1-9][0-9]{0,9})-[0-9a-f]{8}"
                   + re.escape(SUFFIX))
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)


def _host() -> str:
    return hashlib.sha256(socket.gethostname().encode("utf-8", "surrogateescape")).hexdigest()[:8]


def create(folder: str) -> Tuple[int, str]:
    """A new temporary file in ``folder``, open for writing (mode 0600): its
    descriptor and path."""
    while True:
        path = os.path.join(folder, f"{PREFIX}{_host()}-{os.getpid()}-{secrets.token_hex(4)}{SUFFIX}")
        try:
            return os.open(path, _FLAGS, 0o600), path
        except FileExistsError:
            continue


def remove_stale(folders: Iterable[str]) -> List[str]:
    """Remove the temporary files a dead mplint process left in ``folders``; the
    paths removed."""
    if not hasattr(os, "geteuid"):  # pragma: no cover (Windows: no owner to prove)
        return []
    host, removed = _host(), []
    for folder in folders:
        try:
            entries = [entry for entry in os.scandir(folder or ".") if entry.name.startswith(PREFIX)]
        except OSError:
            continue
        for entry in entries:
            match = _NAME.fullmatch(entry.name)
            if match is None or match["host"] != host or _alive(int(match["pid"])):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
                    continue
                os.unlink(entry.path)
            except OSError:
                continue
            removed.append(entry.path)
    return removed


def _alive(pid: int) -> bool:
    """Whether a process with this pid exists (another user's counts)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True
