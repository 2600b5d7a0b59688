"""The error every rwn_sql failure raises: its message names the problem; and the last line
of a run a signal ended (light: rwn_sql.__main__ uses it before the heavy imports)."""


class RWNError(ValueError):
    """Bad input or parameters; nothing was written."""


class NoSuchSource(RWNError):
    """A source named as a table or view that the connection does not see: none exists, or a TEMP
    one of another connection (the SQL macros' caller: their cursor cannot see it, so the
    statement resolves it where it runs, handing it to the planner or checking it itself)."""


class OutputExists(RWNError):
    """The output (a file, a table, a release database or folder) exists and replacing it was not
    asked for (overwrite / replace)."""


def signal_report(word: str, written) -> str:
    """The last line of a run a signal ended (`word`: interrupted, terminated). Publishing stops
    at the signal (rwn_sql.engines.files.cancel), so `written` holds only outputs published, whole,
    before it."""
    done = (f"; written whole before the signal: {', '.join(written)}; nothing after it" if written
            else "; nothing was written")
    return f"rwn-sql: {word}{done}"
