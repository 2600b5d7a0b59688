"""The error every rwn_sql failure raises: its message names the problem."""


class RWNError(ValueError):
    """Bad input or parameters; nothing was written."""
