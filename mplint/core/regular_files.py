"""Read a file only when it is a regular file, without ever blocking on one that is not.

A FIFO named ``pyproject.toml``, ``.gitignore``, a cache file or a source file would
make a plain ``open()`` wait for a writer for ever. Opening with ``O_NONBLOCK``
returns at once whatever the file is, and ``fstat`` on the open descriptor (not a
``stat`` of the name, which could change in between) says what was opened.
This module imports nothing heavy: the cache and the configuration use it.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Union

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


class NotRegularFile(OSError):
    """The name exists but is a FIFO, socket or device, not a file to read."""


def read_regular(path: Union[str, "os.PathLike[str]"]) -> bytes:
    """The bytes of ``path``; OSError when it cannot be read, IsADirectoryError for a
    folder, :class:`NotRegularFile` for anything else that is not a regular file."""
    fd = os.open(path, _FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        if not stat.S_ISREG(mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file (a FIFO, socket or device)", str(path))
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:  # O_NONBLOCK has no effect on reading a regular file
        return handle.read()
