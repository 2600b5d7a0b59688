"""The one place that talks to a DuckDB connection: resolving sources, checking columns
against the real schema, running statements and writing outputs atomically."""
from __future__ import annotations

import difflib
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

import duckdb

from .errors import RWNError
from .identifiers import quote_ident, quote_literal
from .spec import RWNSpec
from .sqlgen import source_from_table

NUMERIC_TYPES = re.compile(
    r"^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|"
    r"FLOAT|DOUBLE|REAL|DECIMAL(\(\d+,\s*\d+\))?)$", re.IGNORECASE)
QUERY_START = re.compile(r"^\s*(\(|select\b|with\b|from\b|values\b|table\b)", re.IGNORECASE)
FILE_SUFFIXES = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet"}
DB_SUFFIXES = (".duckdb", ".db", ".ddb")


@dataclass(frozen=True)
class Source:
    sql: str                         # a relation usable after FROM
    schema: tuple[tuple[str, str], ...]   # (column name, DuckDB type)
    label: str                       # how messages name it

    @property
    def names(self) -> list[str]:
        return [n for n, _ in self.schema]

    def type_of(self, name: str) -> str:
        return dict(self.schema)[name]


def file_format(path: str) -> str | None:
    p = path.lower()
    if p.endswith(".gz"):
        p = p[:-3]
    for suffix, fmt in FILE_SUFFIXES.items():
        if p.endswith(suffix):
            return fmt
    return None


def split_db_target(text: str) -> tuple[str, str] | None:
    """'file.duckdb:table' -> ('file.duckdb', 'table'); None if `text` is not of that form."""
    for suffix in DB_SUFFIXES:
        marker = suffix + ":"
        pos = text.lower().rfind(marker)
        if pos > 0:
            return text[: pos + len(suffix)], text[pos + len(marker):]
    return None


def attach_read_only(con: duckdb.DuckDBPyConnection, path: str) -> str:
    if not os.path.exists(path):
        raise RWNError(f"database file {path!r} does not exist")
    alias = "__rwn_db_" + secrets.token_hex(4)
    con.execute(f"ATTACH {quote_literal(path)} AS {quote_ident(alias)} (READ_ONLY)").fetchall()
    return alias


def resolve_source(con: duckdb.DuckDBPyConnection, source) -> Source:
    """A table or view name, a SQL query, a CSV/Parquet path, or 'file.duckdb:table'."""
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if not isinstance(source, str) or not source.strip():
        raise RWNError(f"source must be a table name, a SQL query or a file path, got {source!r}")
    db = split_db_target(source)
    if db is not None:
        alias = attach_read_only(con, db[0])
        sql, label = f"{quote_ident(alias)}.{quote_ident(db[1])}", f"table {db[1]!r} in {db[0]!r}"
    elif file_format(source) is not None and os.path.isfile(source):
        reader = "read_parquet" if file_format(source) == "parquet" else "read_csv"
        sql, label = f"{reader}({quote_literal(source)})", f"file {source!r}"
    elif QUERY_START.match(source):
        sql, label = f"({source})", "the query"
    elif (columns := _table_columns(con, source)) is not None:
        sql, label = _direct_table_sql(con, source, columns), f"table {source!r}"
    elif file_format(source) is not None:
        raise RWNError(f"input file {source!r} does not exist")
    else:
        raise RWNError(f"no table or view named {source!r} (give a table or view name as written in "
                       f"SQL, a SQL query, or a .csv/.parquet path)")
    try:
        rows = con.execute(f"DESCRIBE SELECT * FROM {sql}").fetchall()
    except duckdb.Error as exc:
        raise RWNError(f"cannot read {label}: {exc}") from None
    return Source(sql=sql, schema=tuple((r[0], r[1]) for r in rows), label=label)


def _direct_table_sql(con, name: str, columns: list) -> str:
    """The table or view `name` (its DESCRIBE rows: `columns`) as quoted identifiers, e.g.
    "main"."people", when that names the same relation; query_table('name') otherwise. Quoting is as
    injection-safe as query_table, and DuckDB scans a quoted table in parallel, which it does
    not do through query_table (half the speed on 2 threads)."""
    candidates = [quote_ident(name)]
    if "." in name or '"' in name:
        if (reading := _as_sql_reads(name)) is not None:
            candidates.insert(0, reading)   # query_table's reading first
    for sql in candidates:
        try:
            if con.execute(f"DESCRIBE SELECT * FROM {sql}").fetchall() == columns:
                return sql
        except duckdb.Error:
            continue
    return source_from_table(name)


def _as_sql_reads(name: str) -> str | None:
    """`name` split as SQL reads it ('a."b c"' -> a, b c) and quoted part by part; None when sqlglot
    cannot split it."""
    try:
        import sqlglot
        table = sqlglot.exp.to_table(name, dialect="duckdb")
        return ".".join(quote_ident(p) for p in (table.catalog, table.db, table.name) if p)
    except Exception:
        return None


def _table_columns(con, name: str) -> list | None:
    """DESCRIBE rows of the table or view `name`, None when there is none."""
    sources = [source_from_table(name)]
    if '"' in name and (reading := _as_sql_reads(name)) is not None:
        sources.append(reading)          # query_table before DuckDB 2.0 drops doubled quotes ("we""ird")
    for sql in sources:
        try:
            return con.execute(f"DESCRIBE SELECT * FROM {sql}").fetchall()
        except duckdb.Error:
            continue
    return None


def require_columns(src: Source, columns, role: str = "columns", where: str | None = None) -> None:
    """Raise RWNError naming the first of `columns` that `src` lacks, its columns and the
    closest name. `where` replaces the source's label in the message."""
    names = src.names
    for c in columns:
        if not isinstance(c, str) or c not in names:
            near = difflib.get_close_matches(c, names, n=1) if isinstance(c, str) else []
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise RWNError(f"{role}: column {c!r} is not in {where or src.label} (its columns: "
                           f"{', '.join(names)}){hint}")


RESERVED_PREFIX = "__rwn_"


def refuse_reserved(src: Source) -> None:
    """Refuse a source with a column in rwn_sql's reserved namespace: the generated SQL names
    its internal columns and CTEs '__rwn_...', so such an input column could alter a release."""
    for n in src.names:
        if n.lower().startswith(RESERVED_PREFIX):
            raise RWNError(f"{src.label} has a column named {n!r}; names starting with "
                           f"{RESERVED_PREFIX!r} are reserved for rwn_sql's internal columns, rename it")


def check_columns(spec: RWNSpec, src: Source) -> None:
    """Every named column exists, and numeric roles have numeric types."""
    for role, cols in (("columns", spec.columns), ("strata", spec.strata), ("drop", spec.drop)):
        require_columns(src, cols, role)
    for c in spec.numeric:
        if not NUMERIC_TYPES.match(src.type_of(c)):
            raise RWNError(f"column {c!r} has type {src.type_of(c)}, not a numeric type; list it in "
                           f"categorical= (--categorical) to use mismatch distance for it")
    refuse_reserved(src)


def run(con: duckdb.DuckDBPyConnection, sql: str, params=None) -> list[tuple]:
    """Run a statement to completion and return its rows, turning rwn_sql's in-SQL checks
    into RWNError."""
    try:
        return con.execute(sql, params).fetchall() if params else con.execute(sql).fetchall()
    except duckdb.Error as exc:
        raise translate(exc) from None


def translate(exc: duckdb.Error) -> Exception:
    text = str(exc)
    m = re.search(r"rwn_sql: (.*)", text, re.DOTALL)
    if m:
        return RWNError(m.group(1).strip())
    return exc


def preserves_insertion_order(con: duckdb.DuckDBPyConnection) -> bool:
    """DuckDB's preserve_insertion_order setting (default true): whether a statement without
    ORDER BY keeps its input order. Row identities (row_number() OVER ()) are input positions
    either way; only the order of output rows depends on it."""
    return bool(con.execute("SELECT current_setting('preserve_insertion_order')").fetchall()[0][0])


def table_exists(con, name: str) -> bool:
    return _table_columns(con, name) is not None


def write_table(con: duckdb.DuckDBPyConnection, sql: str, into: str, replace: bool = False) -> int:
    """CREATE TABLE `into` AS `sql`: one statement, so an error or interrupt leaves no table."""
    if table_exists(con, into) and not replace:
        raise RWNError(f"table {into!r} already exists (pass replace=True / --overwrite to replace it)")
    verb = "CREATE OR REPLACE TABLE" if replace else "CREATE TABLE"
    target = quote_ident(into)
    return run(con, f"{verb} {target} AS\n{sql}")[0][0]


def deliver(con: duckdb.DuckDBPyConnection, sql: str, into: str | None = None, replace: bool = False):
    """The result of a release statement: a lazy relation, or with `into` a table created at
    once in one statement (see write_table), returning None."""
    if into is not None:
        write_table(con, sql, into, replace=replace)
        return None
    return con.sql(sql)


def write_output(con: duckdb.DuckDBPyConnection, sql: str, target: str, overwrite: bool = False) -> int:
    """Write the result of `sql` to a CSV/Parquet file or 'file.duckdb:table', atomically:
    files are written under a temporary name and renamed; tables are created in one statement."""
    db = split_db_target(target)
    if db is not None:
        path, table = db
        alias = "__rwn_out_" + secrets.token_hex(4)
        con.execute(f"ATTACH {quote_literal(path)} AS {quote_ident(alias)}").fetchall()
        try:
            exists = con.execute(
                "SELECT count(*) FROM duckdb_tables() WHERE database_name = ? AND table_name = ?",
                [alias, table]).fetchone()[0]
            if exists and not overwrite:
                raise RWNError(f"table {table!r} already exists in {path!r} (use --overwrite)")
            verb = "CREATE OR REPLACE TABLE" if overwrite else "CREATE TABLE"
            return run(con, f"{verb} {quote_ident(alias)}.{quote_ident(table)} AS\n{sql}")[0][0]
        finally:
            con.execute(f"DETACH {quote_ident(alias)}").fetchall()
    fmt = file_format(target)
    if fmt is None:
        raise RWNError(f"output {target!r}: use a .csv, .parquet or file.duckdb:table target")
    if os.path.exists(target) and not overwrite:
        raise RWNError(f"output file {target!r} already exists (use --overwrite to replace it)")
    out = Path(target)
    if not out.parent.exists():
        raise RWNError(f"output folder {str(out.parent)!r} does not exist")
    tmp = out.with_name(f".{out.name}.{secrets.token_hex(4)}.tmp")
    options = "(FORMAT parquet)" if fmt == "parquet" else "(FORMAT csv, HEADER)"
    try:
        rows = run(con, f"COPY (\n{sql}\n) TO {quote_literal(str(tmp))} {options}")[0][0]
        os.replace(tmp, out)
        return rows
    finally:
        if tmp.exists():
            tmp.unlink()
