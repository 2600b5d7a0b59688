"""Small side files (keys, domains) read with a bound: regular files only, at most a limit."""
from __future__ import annotations

import os
import stat

from .errors import RWNError


def read_bounded(path, what: str, limit: int, shown: str = "") -> bytes:
    """The bytes of `path`, a regular file of at most `limit` bytes (`what` names it in errors,
    `shown` adds the limit in words). Opened without blocking and checked on the open file, so a
    FIFO, a device such as /dev/zero or a folder is refused before anything is read, and a
    larger file after reading at most the limit."""
    name = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise RWNError(f"cannot read {what} {name!r}: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise RWNError(f"{what} {name!r} is a directory, not a file")
        if not stat.S_ISREG(mode):
            raise RWNError(f"{what} {name!r} is not a regular file (a device, FIFO or socket); give a file")
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise RWNError(f"{what} {name!r} is larger than {limit} bytes{shown}, the limit for a {what}")
    return data
