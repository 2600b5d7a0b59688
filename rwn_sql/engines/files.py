"""The run's private folders and atomic publishing: temporary outputs live in a private folder
beside their target, are renamed into place whole, and are removed on every exit path,
signals included."""
from __future__ import annotations

import atexit
import contextlib
import errno
import os
import re
import secrets
import shutil
import tempfile
import threading

from . import sources
from ..errors import RWNError


# --- Run-private directories -------------------------------------------------------------
# Temporary outputs and DuckDB's spill files live in one directory per run and folder,
# <folder>/.rwn-sql-<pid>-<random>/, mode 0700, removed on every exit path the process sees.
# The run holds an flock on <dir>/lock for its lifetime; the kernel drops it when the process
# dies, even by SIGKILL, so a later run that can take the lock knows the directory is stale.
PRIVATE_PREFIX = ".rwn-sql-"
# new-: being made; gone-: being removed (renamed first, see _remove_dir)
_PRIVATE_NAME = re.compile(r"^\.rwn-sql-(new-|gone-)?(\d+)-[0-9a-f]{8}$")
_live: dict[str, tuple[str, object]] = {}      # real folder -> (private dir, open lock file)
_folders: set[str] = set()                      # every folder this process made a private directory in
# Directories being made, registered before they exist so that a signal at any bytecode of
# private_dir finds them: real folder -> (name while made, final name)
_making: dict[str, tuple[str, str]] = {}
# The CLI works in a thread while the main thread waits for signals: making a directory,
# publishing an output and removing them at the end exclude each other, and once the run
# is ending (cancel, remove_private_dirs) nothing new is made or published.
_guard = threading.RLock()
_ending = False
NOT_PUBLISHED = "the run is ending (interrupted); the output was not published"


class Outputs(list):
    """The outputs this process has completed, in the order first published, each named once
    (what a signal's report lists): publishing a target again (tune rewrites tune.csv after
    every setting) replaces the file and keeps its one entry."""

    def add(self, target: str) -> None:
        if target not in self:
            self.append(target)


published = Outputs()
atexit.register(lambda: remove_private_dirs())


def cancel() -> None:
    """The first step of a signal: from here on nothing is made or published. Every publish
    checks the flag under the lock, so it either passed its check before this or is refused.
    The handler does not wait for the lock (a thread may hold it removing a large spill folder):
    remove_private_dirs(ending=True), which the signal path runs before it reports, takes it,
    so by then a publish that passed its check has completed and `published` lists it."""
    global _ending
    _ending = True


def private_dir(folder: str | None = None) -> str:
    """This run's private directory in `folder` (default: the system temporary folder),
    created on first use; stale ones of dead runs in that folder are removed first."""
    folder = os.path.realpath(folder or tempfile.gettempdir())
    with _guard:
        if _ending:
            raise RWNError("the run is ending (interrupted); nothing more is written")
        return _live[folder][0] if folder in _live else _make_private_dir(folder)


def _make_private_dir(folder: str) -> str:
    clean_stale(folder)
    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    path = os.path.join(folder, PRIVATE_PREFIX + token)
    # Made under a name clean_stale does not match and renamed once locked, so another run
    # never sees it unlocked.
    making = os.path.join(folder, f"{PRIVATE_PREFIX}new-{token}")
    _making[folder] = (making, path)
    _folders.add(folder)
    try:
        os.mkdir(making, 0o700)
        lock = open(os.path.join(making, "lock"), "w")
        try:
            import fcntl
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except (ImportError, OSError):   # no flock here: staleness falls back to the pid in the name
            pass
        os.rename(making, path)
    except OSError as exc:
        shutil.rmtree(making, ignore_errors=True)
        _making.pop(folder, None)
        raise RWNError(f"cannot write in folder {folder!r}: {exc.strerror}") from None
    _live[folder] = (path, lock)
    _making.pop(folder, None)
    return path


@contextlib.contextmanager
def scratch_dir(folder: str):
    """The run's private directory in `folder` for the duration of a write; removed afterwards
    unless the run made it before (the CLI keeps one for the whole run)."""
    existed = os.path.realpath(folder) in _live
    path = private_dir(folder)
    try:
        yield path
    finally:
        if not existed:      # removed before it is forgotten, so a signal in between finds it
            with _guard:
                _remove_dir(path)
                _, lock = _live.pop(os.path.realpath(folder), (None, None))
                if lock is not None:
                    lock.close()


def remove_private_dirs(ending: bool = False) -> None:
    """Remove every private directory this process made (safe to call repeatedly). With
    `ending` (a signal ends the process) nothing is made or published afterwards."""
    global _ending
    with contextlib.ExitStack() as held:
        if _guard.acquire(timeout=5):    # a thread stuck inside a guarded step: remove anyway
            held.callback(_guard.release)
        _ending = _ending or ending
        _remove_private_dirs()


def _remove_private_dirs() -> None:
    # Each directory is removed before it is forgotten: a signal whose handler runs this again
    # in the middle (on the same thread, through the re-entrant lock) still finds it.
    for folder, paths in list(_making.items()):
        for path in paths:
            _remove_dir(path)
        _making.pop(folder, None)
    for folder, (path, lock) in list(_live.items()):
        _remove_dir(path)
        _live.pop(folder, None)
        lock.close()
    # Anything else of this process's (a removal cut short by a signal on this thread): the
    # directories are made and removed only under the lock held here, so none is in use.
    for folder in _folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            m = _PRIVATE_NAME.match(name)
            if m and int(m.group(2)) == os.getpid():
                _remove_dir(os.path.join(folder, name))


def _remove_dir(path: str) -> None:
    """Remove a private directory, renamed first: a DuckDB thread that ignored the interrupt
    and still writes there (a spill file, an output) can then create nothing new in it by
    path, which would leave the directory behind. The new name is one clean_stale removes
    once this process is gone."""
    head, name = os.path.split(path)
    rest = name[len(PRIVATE_PREFIX):]
    dying = path if rest.startswith("gone-") else os.path.join(head, PRIVATE_PREFIX + "gone-" + rest.removeprefix("new-"))
    try:
        os.rename(path, dying)
    except OSError:         # already gone
        dying = path
    shutil.rmtree(dying, ignore_errors=True)


def clean_stale(folder: str) -> None:
    """Remove private directories in `folder` left by runs that no longer live."""
    try:
        names = [n for n in os.listdir(folder) if _PRIVATE_NAME.match(n)]
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        making, pid = _PRIVATE_NAME.match(name).groups()
        if any(path == p for p, _ in _live.values()):
            continue
        if not (_pid_dead(int(pid)) if making else _is_stale(path, int(pid))):
            continue
        shutil.rmtree(path, ignore_errors=True)


def _is_stale(path: str, pid: int) -> bool:
    try:
        import fcntl
        fd = os.open(os.path.join(path, "lock"), os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False                  # its run holds the lock: alive
        finally:
            os.close(fd)
        return True
    except (ImportError, OSError):        # no lock file (or no flock): judge by the pid
        return _pid_dead(pid)


def _pid_dead(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def publish(tmp: str, target: str, overwrite: bool) -> None:
    """Move the complete file `tmp` to `target` in one step. Without `overwrite` a hard link,
    which fails if `target` exists, so of two concurrent runs one wins whole and the other
    is told; with `overwrite` a rename over it."""
    with _guard:
        if _ending:
            raise RWNError(NOT_PUBLISHED)
        _publish(tmp, target, overwrite)


def _publish(tmp: str, target: str, overwrite: bool) -> None:
    if overwrite:
        os.replace(tmp, target)
        published.add(target)
        return
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise RWNError(f"output {target!r} appeared while this run was writing it (another run?); "
                       f"it was left as it is and this run's result discarded") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        if os.path.exists(target):   # a file system without hard links: check, then rename
            raise RWNError(f"output {target!r} appeared while this run was writing it") from None
        os.replace(tmp, target)
    else:
        os.unlink(tmp)
    published.add(target)


def publish_folder(tmp: str, path: str, scratch: str) -> None:
    """Move the complete folder (or file) `tmp` to `path`, replacing what is there: the old one
    is moved into `scratch` first and removed after, so `path` is never half-written. Refused
    once the run is ending, as publish."""
    with _guard:
        if _ending:
            raise RWNError(NOT_PUBLISHED)
        if os.path.exists(path):
            old = os.path.join(scratch, "replaced")
            os.replace(path, old)
            os.replace(tmp, path)
            published.add(path)
            shutil.rmtree(old) if os.path.isdir(old) else os.remove(old)
        else:
            os.replace(tmp, path)
            published.add(path)


def output_folder(target: str) -> str:
    """The folder an output file or database goes to; RWNError if it does not exist."""
    db = sources.split_db_target(target)
    path = db[0] if db else target
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise RWNError(f"output folder {folder!r} does not exist")
    return folder
