"""SQL plumbing the baselines (`rank_swapping`, MDAV in `baselines`) share: the column list and
source checks, the staged rows with their input positions, the fingerprint guard of the rows a
computation saw, and the encodings that embed computed values in a statement."""
from __future__ import annotations

import re

import numpy as np

from ..engines import duckdb as engine, sources
from ..engines.dialects import DUCKDB
from ..errors import RWNError
from ..identifiers import column_names, quote_ident, quote_literal
from ..rwn.spec import RESERVED_PREFIX

RID = quote_ident("__rwn_rid")
REP = quote_ident("__rwn_rep")
TEMPORAL_OR_ENUM = re.compile(r"^(DATE|TIME|TIMESTAMP(_S|_MS|_NS)?|TIMESTAMP WITH TIME ZONE|"
                              r"TIME WITH TIME ZONE|ENUM\(.*\))$", re.IGNORECASE | re.DOTALL)
FLOAT_TYPES = re.compile(r"^(FLOAT|DOUBLE|REAL)$", re.IGNORECASE)


def column_list(columns) -> list[str]:
    names = list(column_names(columns, "columns", reserved=RESERVED_PREFIX))
    if not names:
        raise RWNError("columns: give at least one column")
    return names


def resolve(con, source, columns, method: str, type_ok, type_hint: str) -> sources.Source:
    src = sources.resolve_source(con, source)
    sources.require_columns(src, columns)
    sources.refuse_reserved(src)
    for c in columns:
        if not type_ok(src.type_of(c)):
            raise RWNError(f"column {c!r} has type {src.type_of(c)}; {method} needs {type_hint}")
    return src


def staged(src: sources.Source) -> str:
    # record identity: 1-based input position, as in the RWN statements
    return f"staged AS MATERIALIZED (\n    SELECT row_number() OVER () AS {RID}, * FROM {src.sql}\n)"


def fingerprint(columns) -> str:
    return f"bit_xor(hash({RID}, {', '.join(quote_ident(c) for c in columns)}))"


def fetch(con, sql: str) -> dict:
    try:
        return con.execute(sql).fetchnumpy()
    except engine.Error as exc:
        raise engine.translate(exc) from None


def check_values(con, src, columns, n_what: str, finite: bool) -> int:
    """Number of records; RWNError if there are none or a chosen column has NULL / NaN
    (and, with finite=True, infinite) values."""
    parts = ["count(*)"]
    for c in columns:
        q = quote_ident(c)
        if finite:
            parts.append(f"count(*) FILTER (WHERE {q} IS NULL OR NOT isfinite(CAST({q} AS DOUBLE)))")
        elif FLOAT_TYPES.match(src.type_of(c)):
            parts.append(f"count(*) FILTER (WHERE {q} IS NULL OR isnan({q}))")
        else:
            parts.append(f"count(*) FILTER (WHERE {q} IS NULL)")
    row = engine.run(con, f"SELECT {', '.join(parts)} FROM {src.sql}")[0]
    n = int(row[0])
    if n == 0:
        raise RWNError(f"{src.label} has no records")
    for c, bad in zip(columns, row[1:]):
        if bad:
            kinds = "NULL, NaN or infinite" if finite else "NULL or NaN"
            raise RWNError(f"column {c!r} has {bad} {kinds} values; {n_what} needs a value in every "
                           f"record (clean them or filter those records out first)")
    return n


def int_list(values) -> str:
    return quote_literal(",".join(str(int(v)) for v in values))


def float_list(values) -> str:
    # repr is the shortest text that parses back to the same double
    return quote_literal(",".join(repr(float(v)) for v in values))


def hex_digits(values: np.ndarray, width: int) -> str:
    """Non-negative integers as one text of `width` hex digits each (no separators)."""
    shifts = 4 * np.arange(width - 1, -1, -1)
    nibbles = (np.asarray(values, dtype=np.int64)[:, None] >> shifts) & 15
    return np.frombuffer(b"0123456789abcdef", np.uint8)[nibbles].tobytes().decode("ascii")


def hex_element(digits: str, index_sql: str, width: int) -> str:
    """SQL for element `index_sql` (0-based) of a hex_digits text: one fixed-width substring per
    row, where unnesting string_split of a comma list (tens of thousands of values) builds and
    casts the whole list."""
    return f"CAST('0x' || substr({quote_literal(digits)}, {width} * {index_sql} + 1, {width}) AS BIGINT)"


def guard(src, columns, n: int, fp: int) -> tuple[str, str]:
    """The `guard` CTE and the WHERE condition that fails unless the rows are those seen."""
    message = quote_literal(
        f"rwn_sql: the rows of {src.label} changed between reads, or their order is not "
        f"deterministic; create a table from it first and pass that table")
    return (f"guard AS (\n    SELECT count(*) = {n} AND {fingerprint(columns)} = {int(fp)}::UBIGINT AS ok "
            f"FROM staged\n)"), f"CASE WHEN guard.ok THEN true ELSE {DUCKDB.raise_error(message)} END"


def no_sql(sql: bool, name: str) -> None:
    if sql:
        raise RWNError(f"{name}: sql=True is not supported, since the release depends on values "
                       f"computed in Python (numpy); use into= or the returned relation")
