"""The one place that turns names and values into SQL text.

Every identifier and literal that reaches generated SQL passes through here, so odd
names (quotes, spaces, unicode, injection attempts) are always data, never syntax.
"""
from __future__ import annotations

import math

from .errors import RWNError


def quote_ident(name: str) -> str:
    """Quote an identifier, doubling embedded double quotes: my"col becomes "my""col"."""
    if not isinstance(name, str) or name == "":
        raise RWNError(f"identifier must be a non-empty string, got {name!r}")
    if "\x00" in name:
        raise RWNError(f"identifier {name!r} contains a NUL character")
    return '"' + name.replace('"', '""') + '"'


def quote_literal(value: str) -> str:
    """Quote a string literal, doubling embedded single quotes: it's becomes 'it''s'."""
    if not isinstance(value, str):
        raise RWNError(f"expected a string, got {type(value).__name__}")
    if "\x00" in value:
        raise RWNError("string literal contains a NUL character")
    return "'" + value.replace("'", "''") + "'"


def float_literal(value: float) -> str:
    """A DOUBLE literal that round-trips exactly (repr gives the shortest exact form)."""
    value = float(value)
    if math.isnan(value):
        return "'NaN'::DOUBLE"
    if math.isinf(value):
        return "'Infinity'::DOUBLE" if value > 0 else "'-Infinity'::DOUBLE"
    return repr(value) + "::DOUBLE"


def display_name(name: str) -> str:
    """How a column is named in error messages: the name in double quotes, as SQL spells it."""
    return quote_ident(name)


def name_parts(name: str) -> list[str] | None:
    """The parts of a qualified name as SQL reads it (catalog, schema, table; those given), None
    when sqlglot cannot split it (sqlglot loads only when a name needs splitting)."""
    try:
        import sqlglot
        table = sqlglot.exp.to_table(name, dialect="duckdb")
        parts = [p for p in (table.catalog, table.db, table.name) if p]
        return parts or None
    except Exception:
        return None


def column_names(value, what: str = "columns", *, hint: str = "", lists_only: bool = False,
                 strings: bool = True, show_list: bool = False, reserved: str | None = None) -> tuple:
    """A parameter naming columns (`what`: "columns", "keys", ...) as a tuple of names: a list
    or any iterable of names, or one name as text (with `lists_only`, a list or tuple only). An
    RWNError otherwise, naming `what` (`hint` follows "must be a list of column names"), when a
    name is not a non-empty string (unless `strings` is False), when a column is named twice
    (naming it, or with `show_list` showing the whole list once every name is checked), or when
    it starts with the `reserved` prefix. An empty list passes: the callers word that refusal."""
    if lists_only and (isinstance(value, str) or not isinstance(value, (list, tuple))):
        raise RWNError(f"{what} must be a list of column names{hint}, got {value!r}")
    if isinstance(value, str):
        value = [value]
    try:
        names = tuple(value)
    except TypeError:
        raise RWNError(f"{what} must be a list of column names{hint}, got {value!r}") from None
    seen = set()
    for name in names:
        if strings and (not isinstance(name, str) or name == ""):
            raise RWNError(f"{what}: column names must be non-empty strings, got {name!r}")
        if name in seen and not show_list:
            raise RWNError(f"{what}: column {name!r} is listed twice")
        if reserved is not None and name.lower().startswith(reserved):
            raise RWNError(f"column {name!r}: names starting with {reserved!r} are reserved")
        seen.add(name)
    if len(seen) != len(names):
        raise RWNError(f"{what} names a column twice: {list(names)!r}")
    return names
