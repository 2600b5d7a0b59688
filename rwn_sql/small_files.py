"""The one reader of the small side files a run is given (a key file, a domain file): a regular
file of bounded size, read as UTF-8 text. Opened without blocking and checked on the open file,
so a FIFO, a device such as /dev/zero or a folder is refused before anything is read, and a
larger file after reading at most the limit (+1 byte, to see that it is exceeded).

Only the standard library and rwn_sql.errors: every layer may read it."""
from __future__ import annotations

import os
import stat

from .errors import RWNError

__all__ = ["read_small_file"]


def read_small_file(path, what: str, limit: int, *, limit_note: str = "", screen=None,
                    line_in_errors: bool = False) -> str:
    """The text of the regular file `path` of at most `limit` bytes, decoded as UTF-8 (an
    editor's byte-order mark dropped). Every refusal is an RWNError naming the file as
    `what` ("key file", "domain file") and its path; `limit_note` follows the limit in the
    size refusal (" (4 MiB)"). `screen(data, name)`, if given, checks the bytes before they
    are decoded (a domain file's NUL byte); with `line_in_errors` the refusal of text that is
    not UTF-8 names the line, else it asks whether the file is binary."""
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
        raise RWNError(f"{what} {name!r} is larger than {limit} bytes{limit_note}, the limit for a {what}")
    if screen is not None:
        screen(data, name)
    try:
        return data.decode("utf-8-sig")    # an editor's byte-order mark is not part of the text
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        where = f"line {line}" if line_in_errors else "a binary file?"
        raise RWNError(f"{what} {name!r} is not UTF-8 text ({where})") from None
