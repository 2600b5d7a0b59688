"""The error every rwn_sql failure raises: its message names the problem; and the last line
of a run a signal ended (light: rwn_sql.__main__ uses it before the heavy imports)."""


class RWNError(ValueError):
    """Bad input or parameters; nothing was written."""


def signal_report(word: str, written) -> str:
    """The last line of a run a signal ended (`word`: interrupted, terminated). Publishing stops
    at the signal (rwn_sql.engine.cancel), so `written` holds only outputs published, whole,
    before it."""
    done = (f"; written whole before the signal: {', '.join(written)}; nothing after it" if written
            else "; nothing was written")
    return f"rwn-sql: {word}{done}"
