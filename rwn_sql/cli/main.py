"""rwn-sql: the command-line interface.

    rwn-sql perturb INPUT OUTPUT --columns a,b,c [--k 5] [--eps 0] [--q 1] ...
    rwn-sql neighborhoods INPUT --columns a,b,c [--k 5] [--eps 0] ...
    rwn-sql randomize INPUT OUTPUT --sensitive s --p 0.7 [--public a,b] [--enforce EPS,DELTA] ...
    rwn-sql audit INPUT --sensitive s --p 0.7 --epsilon 0.5 --delta 0.1 [--public a,b] [--test exact]
    rwn-sql release INPUT OUTPUT.duckdb --sensitive s --p 0.7 [--public a,b] [--enforce EPS,DELTA] ...
    rwn-sql query RELEASE.duckdb "SELECT sex, COUNT(*) FROM adult WHERE occupation = 'Sales' GROUP BY sex"
    rwn-sql report RELEASE.duckdb -o report.html
    rwn-sql evaluate ORIGINAL RELEASED --columns a,b,c [--id C | --key-file F | --seed N | --input-order] [--target a] [--keys a,b [--weight w]] [--json out.json]
    rwn-sql tune INPUT --columns a,b,c --eps 0.2:1.2:0.05 [--reps 20] [--rank-swap ...] [--mdav ...]
    rwn-sql rank-swap INPUT OUTPUT --columns a,b --p 15 [--key-file F | --seed N] [--reps N]
    rwn-sql mdav INPUT OUTPUT --columns a,b --k 5

INPUT and OUTPUT may be CSV, TSV, Parquet, or file.duckdb:table. Exit codes: see EXIT_CODES.

This module is the entry point: it runs the command (rwn_sql.cli.commands) in a worker thread,
handles SIGINT and SIGTERM meanwhile, and turns the outcome into the exit code and error line.
The run's connection and its checks are rwn_sql.cli.session's.
"""
from __future__ import annotations

import contextvars
import os
import signal
import sys
import threading

from ..engines import duckdb as engine, files
from ..errors import RWNError, signal_report
from .commands import COMMANDS, log
from .parser import parse_arguments
from .session import connections


SIGNAL_MESSAGES = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}
ABORT_WAIT = 1.2      # seconds a cancelled DuckDB statement gets to return before the process leaves
WRAP_UP_WAIT = 5.0    # seconds a run that has published gets to close up on its own after a signal
SIGNAL_POLL = 0.05    # seconds between the main thread's looks at the signals received


def _attempt(args) -> dict:
    try:
        return {"code": COMMANDS[args.command](args)}
    except BaseException as exc:      # reported by _finish, in the main thread
        return {"error": exc}


def _finish(outcome: dict) -> int:
    """The exit code of a finished run; errors as one line on stderr (see EXIT_CODES)."""
    if "code" in outcome:
        return outcome["code"]
    exc = outcome["error"]
    if isinstance(exc, BrokenPipeError):
        _silence_stdout()
        return 141
    if isinstance(exc, (KeyboardInterrupt, engine.InterruptException)):
        log("rwn-sql: interrupted; nothing was written")
        return 130
    debug = bool(os.environ.get("RWN_SQL_DEBUG"))
    if isinstance(exc, RWNError):
        message = str(exc)
    elif isinstance(exc, MemoryError):
        message = "out of memory"
    elif isinstance(exc, (engine.Error, OSError)):
        message = engine.describe_error(exc)
    elif isinstance(exc, (ValueError, TypeError)) and not debug:   # parameter checks outside RWNError
        message = str(exc)
    else:
        if debug:
            raise exc
        log(f"rwn-sql: internal error: {type(exc).__name__}: {exc} (please report it; RWN_SQL_DEBUG=1 shows "
            f"a traceback)")
        return 3
    log(f"rwn-sql: error: {' '.join(message.split())}")
    return 2


def _silence_stdout() -> None:
    """stdout's reader is gone: point it at /dev/null so the final flush raises nothing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _abort(signum: int, finished: threading.Event, outcome: dict) -> None:
    """Leave soon after a signal (DuckDB gets ABORT_WAIT to return): cancel DuckDB, remove this
    run's temporary files and exit; unless the work ends on its own within that wait, whose exit
    code then stands. A run that has published its output is not cancelled: it gets WRAP_UP_WAIT
    to close up and keep its exit code, so that its output is never left behind an exit of 130
    or 143. os._exit does not wait for a DuckDB thread that ignores the cancel (it can hang in a
    recursive CTE); the writes it was making were never committed or published. The wait is on
    an event the worker sets, not Thread.join: a join that the signal interrupted marks the
    thread as stopped, and later joins return at once, before an output being published is
    recorded (the message would say nothing was written)."""
    for s in SIGNAL_MESSAGES:
        signal.signal(s, signal.SIG_IGN)
    files.cancel()           # done by the handler already; again in case it came before it
    if not finished.is_set():
        if files.published:
            # An output is out: what the work has left is closing up (a detach, dropping its
            # keys, or tune's report, whose publish the cancel refuses). Interrupting that would
            # end the run with 130 and its output in place; it gets time to end on its own.
            finished.wait(WRAP_UP_WAIT)
        else:
            for con in list(connections):
                try:
                    con.interrupt()
                except Exception:     # a closed connection: nothing to cancel
                    pass
            finished.wait(ABORT_WAIT)
    if finished.is_set() and "code" in outcome:
        # The work ended on its own: nothing is published after files.cancel(), so every output
        # it lists was complete before the signal, and the run keeps its own exit code. An output
        # therefore exists after a signal only when the run exits as if there had been none.
        if files.published:
            log(f"rwn-sql: {SIGNAL_MESSAGES[signum]} after the run had finished; written whole: "
                f"{', '.join(files.published)}")
        return
    files.remove_private_dirs(ending=True)
    try:
        log(signal_report(SIGNAL_MESSAGES[signum], files.published))
        sys.stderr.flush()
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    os._exit(128 + signum)


work_ended = False    # the work ended on its own: a signal from here on leaves its exit code alone


def main(argv=None) -> int:
    global work_ended
    work_ended = False
    args = parse_arguments(argv)
    files.published.clear()      # kept after the run: a signal after it returns reports them (__main__)
    try:
        if threading.current_thread() is not threading.main_thread():
            return _finish(_attempt(args))       # signal handlers need the main thread
        outcome: dict = {}
        finished = threading.Event()

        def work() -> None:
            # Signals go to the main thread (this one's mask is inherited by DuckDB's threads),
            # whose wait they interrupt: its handler stops publishing at once.
            if hasattr(signal, "pthread_sigmask"):
                signal.pthread_sigmask(signal.SIG_BLOCK, set(SIGNAL_MESSAGES))
            outcome.update(_attempt(args))
            finished.set()

        # in a copy of this context, so that the caller's rwn_sql.limits hold in the work too
        worker = threading.Thread(target=contextvars.copy_context().run, args=(work,), name="rwn-sql", daemon=True)
        # The handlers record the signal and cancel publishing at once (files.cancel), and
        # raise nothing: an exception raised from a handler inside Event.wait can leave its
        # lock released and surface as a RuntimeError instead.
        received: list[int] = []

        def on_signal(signum, frame) -> None:
            files.cancel()
            received.append(signum)

        previous = {s: signal.signal(s, on_signal) for s in SIGNAL_MESSAGES}
        worker.start()
        while not finished.wait(SIGNAL_POLL) and not received:
            pass
        work_ended = finished.is_set() and "code" in outcome     # read by __main__'s handlers from here on
        for s, handler in previous.items():
            signal.signal(s, handler)
        if received:              # also one that came as the work finished: it is reported as such
            _abort(received[0], finished, outcome)
        code = _finish(outcome)
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _silence_stdout()
            return 141
        return code
    finally:
        files.remove_private_dirs()
        connections.clear()


if __name__ == "__main__":
    sys.exit(main())
