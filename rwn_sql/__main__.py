"""The rwn-sql command (`rwn-sql ...` and `python -m rwn_sql ...`).

Signal handlers come first, before the imports of DuckDB, numpy and sqlglot (a noticeable
moment, longer on a loaded machine), so that a SIGINT or SIGTERM at any moment of a run ends it with the
documented message and exit code 130 or 143. Only the interpreter's own start-up, before this
module runs, is left to Python's defaults. While the command works, rwn_sql.cli.main's handlers
take over (they stop publishing at once, then cancel DuckDB); they hand back to these when it
returns, and once the command has finished, signals are ignored until the process exits with its
code. Whichever handler takes a signal, no output is published after it (files.cancel), and an
output exists after a signal only when the run exits with its own code."""
import os
import signal
import sys

from .errors import signal_report

SIGNAL_MESSAGES = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}


def exit_on_signal(signum, frame) -> None:
    """Outside the work itself: stop publishing, remove this run's temporary files (if any were
    made), say what was written and leave with 128 + signum; or, once the work has ended on its
    own (rwn_sql.cli.main.work_ended), nothing: its outputs are whole and its exit code stands."""
    for s in SIGNAL_MESSAGES:
        signal.signal(s, signal.SIG_IGN)
    if getattr(sys.modules.get("rwn_sql.cli.main"), "work_ended", False):
        return
    files = sys.modules.get("rwn_sql.engines.files")     # possibly still being imported
    if hasattr(files, "cancel"):
        files.cancel()
    if hasattr(files, "remove_private_dirs"):
        files.remove_private_dirs(ending=True)
    written = list(getattr(files, "published", []))
    try:
        os.write(2, f"{signal_report(SIGNAL_MESSAGES[signum], written)}\n".encode())
    except OSError:
        pass
    os._exit(128 + signum)


def main() -> int:
    for s in SIGNAL_MESSAGES:
        signal.signal(s, exit_on_signal)
    from .cli.main import main as run
    code = run()
    # The run is over and has said how it ended; a signal while the interpreter shuts down
    # (its modules half torn down) would misreport it, so its exit code stands.
    for s in SIGNAL_MESSAGES:
        signal.signal(s, signal.SIG_IGN)
    return code


if __name__ == "__main__":
    sys.exit(main())
