"""The one place that talks to a DuckDB connection: resolving sources, checking columns
against the real schema, running statements and writing outputs atomically."""
from __future__ import annotations

import atexit
import contextlib
import difflib
import errno
import os
import re
import secrets
import shutil
import tempfile
import threading
from dataclasses import dataclass

import duckdb

from .dialects import DUCKDB, source_from_table
from ..errors import NoSuchSource, RWNError
from ..identifiers import name_parts, quote_ident, quote_literal

# DuckDB's connection, relation and error types, for the modules that take a connection or
# catch its errors without importing duckdb (only the engines import it).
Connection = duckdb.DuckDBPyConnection
Relation = duckdb.DuckDBPyRelation
Error = duckdb.Error
IOException = duckdb.IOException
CatalogException = duckdb.CatalogException
InterruptException = duckdb.InterruptException
OutOfMemoryException = duckdb.OutOfMemoryException
connect = duckdb.connect

NUMERIC_TYPES = DUCKDB.NUMERIC
MEMORY_UNITS = {"bytes": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
                "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
QUERY_START = re.compile(r"^\s*(\(|select\b|with\b|from\b|values\b|table\b)", re.IGNORECASE)
FILE_SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet"}
# Outputs follow their extension exactly; anything else is refused rather than guessed.
OUTPUT_FORMATS = {".csv": ("csv", None), ".tsv": ("tsv", None), ".csv.gz": ("csv", "gzip"),
                  ".tsv.gz": ("tsv", "gzip"), ".parquet": ("parquet", None)}
DB_SUFFIXES = (".duckdb", ".db", ".ddb")


@dataclass(frozen=True)
class Source:
    sql: str                         # a relation usable after FROM
    schema: tuple[tuple[str, str], ...]   # (column name, DuckDB type)
    label: str                       # how messages name it
    csv: str | None = None           # the CSV/TSV file it reads, for explaining a numeric column read as text
    csv_nulls: tuple[str, ...] = ()  # the cells that file's reading takes as NULL besides empty ones

    @property
    def names(self) -> list[str]:
        return [n for n, _ in self.schema]

    def type_of(self, name: str) -> str:
        return dict(self.schema)[name]


def file_format(path: str) -> str | None:
    """'csv', 'tsv' or 'parquet' for an input path (text formats may be gzipped), else None."""
    p = path.lower()
    if p.endswith(".gz"):
        p = p[:-3]
        if p.endswith((".parquet", ".pq")):
            return None
    for suffix, fmt in FILE_SUFFIXES.items():
        if p.endswith(suffix):
            return fmt
    return None


def output_format(path: str) -> tuple[str, str | None]:
    """(format, compression) of an output file, from its extension; RWNError for any other."""
    p = path.lower()
    for suffix, fmt in OUTPUT_FORMATS.items():
        if p.endswith(suffix):
            return fmt
    raise RWNError(f"output {path!r}: unknown extension; use .csv, .tsv, .csv.gz, .tsv.gz, .parquet "
                   f"or file.duckdb:table")


def split_db_target(text: str) -> tuple[str, str] | None:
    """'file.duckdb:table' -> ('file.duckdb', 'table'); None if `text` is not of that form."""
    for suffix in DB_SUFFIXES:
        marker = suffix + ":"
        pos = text.lower().rfind(marker)
        if pos > 0:
            return text[: pos + len(suffix)], text[pos + len(marker):]
    return None


def attached_database(con: duckdb.DuckDBPyConnection, path: str) -> tuple[str, bool] | None:
    """(alias, read_only) of the database file `path` if `con` has it attached (by real path)."""
    real = os.path.realpath(path)
    for name, file, read_only in con.execute(
            "SELECT database_name, path, readonly FROM duckdb_databases() WHERE path IS NOT NULL").fetchall():
        if file and os.path.realpath(file) == real:
            return name, bool(read_only)
    return None


def attach(con: duckdb.DuckDBPyConnection, path: str, read_only: bool = True) -> str:
    """Attach a database file once: an attachment of the same file (by real path) is reused,
    since DuckDB refuses a second handle on one file. Returns the alias."""
    if not os.path.exists(path):
        raise RWNError(f"database file {path!r} does not exist")
    if not os.path.isfile(path):
        raise RWNError(f"database file {path!r} is not a file")
    found = attached_database(con, path)
    if found is not None:
        if found[1] and not read_only:
            raise RWNError(f"database file {path!r} is attached read-only; cannot write to it")
        return found[0]
    alias = ("__rwn_db_" if read_only else "__rwn_out_") + secrets.token_hex(4)
    mode = " (READ_ONLY)" if read_only else ""
    try:
        con.execute(f"ATTACH {quote_literal(path)} AS {quote_ident(alias)}{mode}").fetchall()
    except duckdb.Error as exc:
        text = str(exc)
        if "lock" in text.lower():
            raise RWNError(f"database file {path!r} is in use by another process (DuckDB allows one "
                           f"writer): try again when it has finished") from None
        raise RWNError(f"cannot open database file {path!r}: {first_line(text)}") from None
    return alias


def attach_read_only(con: duckdb.DuckDBPyConnection, path: str) -> str:
    return attach(con, path, read_only=True)


def table_in_file(con: duckdb.DuckDBPyConnection, alias: str, table: str) -> tuple[str, str]:
    """(schema, table) that 'file.duckdb:NAME' names: a table of the main schema called NAME,
    else, for NAME = 'schema.table', that schema's table (a release database keeps its
    randomized rows in their own schema)."""
    if "." in table:
        in_main = con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main' "
                              "AND lower(table_name) = lower(?)", [alias, table]).fetchall()[0][0]
        if not in_main:
            schema, name = table.split(".", 1)
            return schema, name
    return "main", table


def require_base_table(con: duckdb.DuckDBPyConnection, alias: str, path: str, table: str,
                       schema: str = "main") -> None:
    """An input 'file.duckdb:table' must name a base table of the file's `schema`: a database
    file can hold views whose SQL reads local files, and reading a view runs that SQL on the
    run's connection, which needs file access for its own output. A base table's columns run
    no SQL of the file (a generated column admits no subquery), and the file's macros are not
    reached by our unqualified calls (an attached database is not on the search path)."""
    found = con.execute(
        "SELECT 'table' FROM duckdb_tables() WHERE database_name = ? AND lower(schema_name) = lower(?) "
        "AND lower(table_name) = lower(?) UNION ALL "
        "SELECT 'view' FROM duckdb_views() WHERE database_name = ? AND lower(schema_name) = lower(?) "
        "AND lower(view_name) = lower(?) AND NOT internal", [alias, schema, table, alias, schema, table]).fetchall()
    kinds = {kind for kind, in found}
    if "view" in kinds:
        raise RWNError(f"{table!r} in {path!r} is a view, not a table: an input database file is read only "
                       f"through its base tables (a view runs the file's own SQL); export the view as a "
                       f"table (CREATE TABLE ... AS SELECT * FROM the view) and give that table")
    if "table" not in kinds:
        where = "" if schema == "main" else f" in schema {schema!r}"
        raise RWNError(f"database file {path!r} has no table {table!r}{where}")


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def resolve_source(con: duckdb.DuckDBPyConnection, source) -> Source:
    """A table or view name, a SQL query, a CSV/Parquet path, or 'file.duckdb:table'."""
    if isinstance(source, Source):
        return source
    from .dialects import require_duckdb
    require_duckdb(con, "this call")
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if isinstance(source, duckdb.DuckDBPyRelation):
        raise RWNError("source must be a table name, a SQL query or a file path, got a DuckDB relation: write it "
                       "first (into='table' or rel.to_parquet(path)) and pass that name or path")
    if not isinstance(source, str) or not source.strip():
        shown = repr(source) if isinstance(source, str) else f"an object of type {type(source).__name__}"
        raise RWNError(f"source must be a table name, a SQL query or a file path, got {shown}")
    db, csv_path = split_db_target(source), None
    if db is not None:
        alias = attach_read_only(con, db[0])
        schema, table = table_in_file(con, alias, db[1])
        require_base_table(con, alias, db[0], table, schema)
        qualified = "" if schema == "main" else f"{quote_ident(schema)}."
        sql, label = f"{quote_ident(alias)}.{qualified}{quote_ident(table)}", f"table {db[1]!r} in {db[0]!r}"
    elif file_format(source) is not None and os.path.isfile(source):
        label = f"file {source!r}"
        sql = (f"read_parquet({quote_literal(source)})" if file_format(source) == "parquet"
               else _csv_reader(con, source, label))
        csv_path = source if file_format(source) != "parquet" else None
    elif QUERY_START.match(source):
        from ..statements import single_statement     # lazy: sqlglot loads only when needed
        single_statement(source, "the source query", trailing=False)   # it is pasted inside (...)
        sql, label = f"({source})", "the query"
    elif (columns := _table_columns(con, source)) is not None:
        sql, label = _direct_table_sql(con, source, columns), f"table {source!r}"
    elif file_format(source) is not None:
        if os.path.exists(source):
            raise RWNError(f"input {source!r} is not a file")
        raise RWNError(f"input file {source!r} does not exist")
    else:
        raise NoSuchSource(f"no table or view named {source!r} (give a table or view name as written in "
                       f"SQL, a SQL query, or a .csv/.parquet path)")
    try:
        rows = con.execute(f"DESCRIBE SELECT * FROM {sql}").fetchall()
    except duckdb.Error as exc:
        raise RWNError(f"cannot read {label}: {describe_error(exc)}") from None
    return Source(sql=sql, schema=tuple((r[0], r[1]) for r in rows), label=label, csv=csv_path,
                  csv_nulls=tuple(csv_null_strings(con)) if csv_path else ())


def _csv_reader(con, path: str, label: str, typed=None) -> str:
    """read_csv of `path` in which every column DuckDB does not sniff as numeric stays text,
    so pass-through columns are written back as they were read ('yes' stays 'yes', dates
    keep their format). With `typed`, only those columns keep a sniffed numeric type. A line
    with another number of fields than the header is refused."""
    options = ", delim = '\t'" if file_format(path) == "tsv" else ""
    nulls = csv_null_strings(con)
    if nulls:
        options += f", nullstr = [{', '.join(quote_literal(v) for v in ['', *nulls])}]"
    reader = f"read_csv({quote_literal(path)}{options}"
    try:
        sniffed = con.execute(f"DESCRIBE SELECT * FROM {reader})").fetchall()
    except duckdb.Error as exc:
        raise RWNError(f"cannot read {label}: {describe_error(exc)}") from None
    _check_field_counts(path, len(sniffed), label, "\t" if options else None)
    _check_quotes(con, path, label, options)
    text = {name: "VARCHAR" for name, typ, *_ in sniffed
            if not NUMERIC_TYPES.match(typ) or (typed is not None and name not in typed)}
    if text:
        pairs = ", ".join(f"{quote_literal(n)}: 'VARCHAR'" for n in text)
        reader += f", types = {{{pairs}}}"
    return reader + ")"


NULL_STRINGS = "__rwn_csv_null_strings"       # the session variable set_csv_null_strings sets


def set_csv_null_strings(con, values) -> None:
    """Have every CSV/TSV this connection reads take cells equal to one of `values` (and empty
    cells) as NULL, in every column (the CLI's --na-values)."""
    con.execute(f"SET VARIABLE {NULL_STRINGS} = ?", [list(values)]).fetchall()


def csv_null_strings(con) -> list[str]:
    try:
        return con.execute(f"SELECT getvariable('{NULL_STRINGS}')").fetchall()[0][0] or []
    except duckdb.Error:
        return []


def _check_field_counts(path: str, columns: int, label: str, delimiter: str | None) -> None:
    """DuckDB's sniffer reads a CSV whose lines disagree in length as one text column; then
    name the first line that differs from the header. Only the first 1 MB is scanned (where
    the sniffer looks); later ragged lines fail inside DuckDB with their line number."""
    if columns != 1:
        return
    import csv
    import io
    head = _read_head(path, label)
    reader = csv.reader(io.StringIO(head), delimiter=delimiter or ",")
    try:
        header = len(next(reader, []))
        if header < 2:
            return
        for row in reader:
            if row and len(row) != header:
                raise RWNError(f"cannot read {label}: line {reader.line_num} has {len(row)} fields, the "
                               f"header has {header} (a ragged CSV)")
    except csv.Error:
        return


def _read_head(path: str, label: str) -> str:
    """The first 1 MB of a text file (gunzipped), cut at its last whole line."""
    import gzip
    opener = gzip.open if path.lower().endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace", newline="") as fh:
            head = fh.read(1 << 20)
    except OSError as exc:
        raise RWNError(f"cannot read {label}: {exc.strerror or exc}") from None
    return head[: head.rfind("\n") + 1] if len(head) == 1 << 20 else head


def _check_quotes(con, path: str, label: str, options: str) -> None:
    """Refuse a CSV with an unterminated quote. DuckDB's sniffer then gives up quoting and reads
    the quote as part of the value ('"1.0' released as text); a file whose quotes are sound
    reads the same with quote '"' forced, which fails on an unterminated one. Decided where the
    sniffer looks (the line is searched in the first 1 MB)."""
    try:
        quote = con.execute(f"SELECT Quote FROM sniff_csv({quote_literal(path)}{options})").fetchall()[0][0]
    except duckdb.Error:
        return                         # the reading itself reports what is wrong
    if quote not in ("", "(empty)", "\0", None) or '"' not in _read_head(path, label):
        return
    try:
        con.execute(f"DESCRIBE SELECT * FROM read_csv({quote_literal(path)}{options}, quote = '\"')").fetchall()
    except duckdb.Error:
        line = next((i for i, text in enumerate(_read_head(path, label).splitlines(), 1)
                     if text.count('"') % 2), None)
        where = f" on line {line}" if line else ""
        raise RWNError(f"cannot read {label}: a quote opens a field{where} and never closes (an unterminated "
                       f"or stray quote); DuckDB would read it as part of the value: fix that line") from None


NUMBER_CELL = re.compile(r"\s*(-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?|nan|NaN|inf|-inf)?\s*")
MISSING_MARKERS = ("NA", "N/A", "#N/A", "NULL", "null", "None", "none", "na", ".", "-", "?")
MISSING = "|".join(re.escape(m) for m in MISSING_MARKERS)
NUMBER_LIKE = re.compile(rf"[-+]?[0-9]+,[0-9]+|\+[0-9.]+([eE][-+]?[0-9]+)?|-?0[xX][0-9a-fA-F]+|{MISSING}")


def explain_text_column(path: str, column: str, nulls=()) -> str | None:
    """Why a mostly numeric column of the CSV/TSV `path` was read as text: the first cell that is
    not a number (its line, its value) and its likely cause with the way to read it, or None
    when the column is not mostly numeric (then it is text). Only the first 1 MB is scanned,
    where DuckDB's sniffer decides the types. A value of no known shape is data and is not
    shown."""
    import csv
    import io
    head = _read_head(path, f"file {path!r}")
    delimiter = "\t" if file_format(path) == "tsv" else ","
    if file_format(path) != "tsv":
        try:      # as DuckDB's sniffer, among its candidates
            delimiter = csv.Sniffer().sniff(head[:1 << 14], delimiters=",;|\t").delimiter
        except csv.Error:
            pass
    reader = csv.reader(io.StringIO(head), delimiter=delimiter)
    try:
        header = next(reader, [])
        if column not in header:
            return None
        at = header.index(column)
        first, numbers, others = None, 0, 0
        for row in reader:
            if at >= len(row) or row[at] in nulls:
                continue
            if NUMBER_CELL.fullmatch(row[at]):
                numbers += row[at].strip() != ""
            else:
                numbers += bool(NUMBER_LIKE.fullmatch(row[at].strip()))   # a number written otherwise
                others += not NUMBER_LIKE.fullmatch(row[at].strip())
                first = first or (reader.line_num, row[at])
            if first and numbers >= 20:
                break
    except csv.Error:
        return None
    if first is None or numbers <= others:
        return None
    line, value = first
    v = value.strip()
    if v in MISSING_MARKERS:
        cause = (f"a missing-value marker (R writes NA): read it as NULL with --na-values {v} (CLI) or "
                 f"give the input as the query \"SELECT * FROM read_csv({quote_literal(path)}, nullstr = "
                 f"[{quote_literal(v)}, ''])\"")
    elif re.fullmatch(r"[-+]?[0-9]+,[0-9]+", v):
        cause = (f"a decimal comma: re-export with decimal points, or (when every number has one) give the "
                 f"input as the query \"SELECT * FROM read_csv({quote_literal(path)}, decimal_separator = ',')\"")
    elif '"' in v:
        cause = "a stray quote: fix the quoting on that line"
    elif v.startswith("+"):
        cause = "a leading '+' sign: remove it (DuckDB reads numbers without one)"
    elif re.fullmatch(r"-?0[xX][0-9a-fA-F]+", v):
        cause = "a hexadecimal number: write it in decimal"
    else:   # ordinary text may be personal data: not echoed (as describe_error)
        return (f"line {line} holds text ({len(value)} characters, not shown), not a number: clean that cell or "
                f"make it empty (NULL); or list the column in categorical= (--categorical)")
    return f"line {line} holds {value!r}, {cause}"


def text_passthrough(con: duckdb.DuckDBPyConnection, source: str, typed) -> "Source | str":
    """A CSV/TSV `source` resolved with every column except `typed` read as text, so that a
    CSV written from it repeats pass-through columns byte for byte ('1.50' stays '1.50').
    Other sources are returned unchanged."""
    if file_format(source) not in ("csv", "tsv") or not os.path.isfile(source):
        return source
    label = f"file {source!r}"
    sql = _csv_reader(con, source, label, typed=set(typed))
    rows = run(con, f"DESCRIBE SELECT * FROM {sql}")
    return Source(sql=sql, schema=tuple((r[0], r[1]) for r in rows), label=label, csv=source,
                  csv_nulls=tuple(csv_null_strings(con)))


def _direct_table_sql(con, name: str, columns: list) -> str:
    """The table or view `name` (its DESCRIBE rows: `columns`) as quoted identifiers, e.g.
    "memory"."main"."people", when that names the same relation; query_table('name') otherwise. Quoting is as
    injection-safe as query_table, and DuckDB scans a quoted table in parallel, which it does
    not do through query_table (half the speed on 2 threads)."""
    candidates = [quote_ident(name)]
    if "." not in name and '"' not in name:
        # Qualified in full, so that no name of the generated SQL's own steps (points, stats,
        # ...) can shadow the table, as DuckDB 1.4 lets a WITH item do; a TEMP object comes
        # first, as DuckDB resolves it.
        db, schema = con.execute("SELECT current_database(), current_schema()").fetchall()[0]
        candidates[:0] = [f'"temp"."main".{quote_ident(name)}',
                          f"{quote_ident(db)}.{quote_ident(schema)}.{quote_ident(name)}"]
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
    parts = name_parts(name)
    return None if parts is None else ".".join(quote_ident(p) for p in parts)


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


def raise_unless(dialect, condition_sql: str, message_sql: str, value_sql: str = "true") -> str:
    """`value_sql` where `condition_sql` holds, else the statement fails with 'rwn_sql: ' and the
    message (a VARCHAR expression), which run() turns into RWNError."""
    return (f"CASE WHEN {condition_sql} THEN {value_sql} "
            f"ELSE {dialect.raise_error(quote_literal('rwn_sql: ') + ' || ' + message_sql)} END")


def unseen_source(name: str, dialect=DUCKDB, typed=(), conditions=(), named=(), keep=None) -> Source:
    """The table or view `name` for a planner that cannot see it (the SQL macros plan on a cursor,
    which does not see the caller's TEMP tables and views), read where the statement runs; no
    schema is known here. The statement checks, as it is bound, what require_columns and
    refuse_reserved check from a schema: a missing column is the engine's binding error (which
    names it), a reserved name the message of refuse_reserved, and each (column, type pattern,
    text before the type, text after it) of `typed` fails unless the column's type matches.
    `conditions`: SQL that is true on every row or fails the statement (raise_unless); `named`:
    columns that must exist (bound here, so a missing one fails the statement); `keep`: the
    columns to keep (default all), in the source's order."""
    guard = RESERVED_PREFIX + "guard"
    checked = [(raise_unless(dialect, dialect.type_matches(quote_ident(c), pattern),
                             f"{quote_literal(before)} || {dialect.type_name(quote_ident(c))} || {quote_literal(after)}",
                             quote_ident(c)), quote_ident(c))
               for c, pattern, before, after in typed]
    # every column named __rwn_*: the guard added here, and any of the source's
    column = dialect.column_name(dialect.columns_matching(f"(?i)^{RESERVED_PREFIX}"))
    reserved = raise_unless(dialect, f"{column} = {quote_literal(guard)}",
                            f"{quote_literal(f'table {name!r} has a column named {chr(39)}')} || {column} || "
                            + quote_literal(f"'; names starting with {RESERVED_PREFIX!r} are reserved for rwn_sql's "
                                            "internal columns, rename it"))
    bound = [f"({quote_ident(c)} IS NULL OR true)" for c in dict.fromkeys(named)]
    where = " AND ".join([reserved, *conditions, *bound])
    sql = (f"(SELECT {dialect.star('', [guard], checked)}\n"
           f"    FROM (SELECT *, true AS {guard} FROM {source_from_table(name, dialect)}) AS __rwn_unseen\n"
           f"    WHERE {where})")
    if keep is not None:
        sql = (f"(SELECT {dialect.columns_among(keep)} FROM {sql} AS __rwn_checked\n"
               f"    WHERE {' AND '.join(f'({quote_ident(c)} IS NULL OR true)' for c in keep)})")
    sql += " AS __rwn_source"
    return Source(sql=sql, schema=(), label=f"table {name!r}")


# Record ids whose text form (hashed by every draw) is the same on every engine (type names
# of DuckDB, and of Spark: int, string).
ID_TYPES = re.compile(r"(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|VARCHAR|STRING)", re.IGNORECASE)


def require_record_id(src: Source, name: str) -> None:
    """The id column exists and has a type whose text form is the same on every engine."""
    require_columns(src, [name], "id")
    if not ID_TYPES.fullmatch(src.type_of(name)):
        raise RWNError(f"id column {name!r} has type {src.type_of(name)}; a record id must be an "
                       f"integer or text column")


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


def write_table(con: duckdb.DuckDBPyConnection, sql: str, into: str, replace: bool = False,
                row_order: str | None = None) -> int:
    """CREATE TABLE `into` AS `sql`: one statement, so an error or interrupt leaves no table
    (with `row_order`, that statement and the table's COMMENT recording it in one transaction).
    Replacing a table the statement reads (directly or through views) is refused."""
    target = table_target(con, into)
    if table_exists(con, into):
        if not replace:
            raise RWNError(f"table {into!r} already exists (pass replace=True / --overwrite to replace it)")
        if _last_name(into) in tables_read(con, sql):
            raise RWNError(f"into={into!r} is the source of the release (or a table it reads); rwn_sql "
                           f"never overwrites its input: write to another table")
    verb = "CREATE OR REPLACE TABLE" if replace else "CREATE TABLE"
    try:
        return _in_one_transaction(con, [f"{verb} {target} AS\n{sql}"] + row_order_comment(target, row_order))
    except duckdb.CatalogException as exc:     # a database or schema that is not there
        raise RWNError(f"into={into!r}: {first_line(str(exc))}") from None


def table_target(con, into) -> str:
    """The SQL name of an into= table: a plain name quoted whole; a name with a dot read as SQL
    reads it (database.table, schema.table, database.schema.table; quote a part holding a dot:
    '"a.b"'), so that into='other.t' writes into the attached database other, and is refused
    when there is no such database or schema, never created as "other.t" in the current one."""
    if not isinstance(into, str) or not into.strip():
        raise RWNError(f"into= must name a table, got {into!r}")
    if "\0" in into:
        raise RWNError(f"into={into!r} holds a NUL character")
    if "." not in into:
        return quote_ident(into)
    parts = name_parts(into)
    if parts is None:
        raise RWNError(f"into={into!r} is not a table name as SQL reads it ([database.][schema.]table); put a "
                       f"part holding a dot in double quotes")
    if len(parts) > 1:
        known = con.execute("SELECT count(*) FROM duckdb_schemas() WHERE lower(database_name) = lower(?) OR "
                            "lower(schema_name) = lower(?)", [parts[0], parts[0]]).fetchall()[0][0]
        if not known:
            raise RWNError(f"into={into!r}: there is no attached database or schema {parts[0]!r} (ATTACH it first, "
                           f"or write {quote_ident(into)!r} for a table whose name holds a dot)")
    return ".".join(quote_ident(p) for p in parts)


def _last_name(name: str) -> str:
    """The table part of a possibly qualified name, lower-cased (DuckDB names are case-insensitive)."""
    try:
        import sqlglot
        return sqlglot.exp.to_table(name, dialect="duckdb").name.lower()
    except Exception:        # a name sqlglot cannot split is one name
        return name.lower()


def tables_read(con: duckdb.DuckDBPyConnection, sql: str, depth: int = 8) -> set[str]:
    """Lower-cased names of the tables a statement reads, through views (a conservative
    answer by name: the same name in another schema counts as read)."""
    try:
        try:
            listed = con.get_table_names(sql, qualified=True)
        except TypeError:        # older DuckDBs list unqualified names only
            listed = con.get_table_names(sql)
        names = {_last_name(n.split(" AS ")[0]) for n in listed}
    except duckdb.Error:     # DuckDB 1.4 cannot bind some statements here: read the names off the syntax tree
        names = _tables_in_syntax(sql)
    found = set(names)
    if depth > 0:
        for (view_sql,) in con.execute("SELECT sql FROM duckdb_views() WHERE NOT internal AND lower(view_name) "
                                       "IN (SELECT unnest(?))", [sorted(names)]).fetchall():
            body = re.sub(r"(?is)^\s*CREATE\s+(OR\s+REPLACE\s+)?(TEMP(ORARY)?\s+)?VIEW\s+.*?\bAS\b", "",
                          view_sql, count=1)
            found |= tables_read(con, body, depth - 1)
    return found


def _tables_in_syntax(sql: str) -> set[str]:
    """Lower-cased names of every table a statement names, from sqlglot's syntax tree (CTE names
    included: a conservative answer)."""
    import sqlglot
    try:
        return {t.name.lower() for tree in sqlglot.parse(sql, read="duckdb") if tree is not None
                for t in tree.find_all(sqlglot.exp.Table) if t.name}
    except sqlglot.errors.SqlglotError:
        return set()


def deliver(con: duckdb.DuckDBPyConnection, sql: str, into: str | None = None, replace: bool = False,
            row_order: str | None = None):
    """The result of a release statement: a lazy relation, or with `into` a table created at
    once in one statement (see write_table), returning None. A lazy relation records no row
    order (evaluate treats it as unknown)."""
    if into is not None:
        write_table(con, sql, into, replace=replace, row_order=row_order)
        return None
    return con.sql(sql)


# --- A release's row order, recorded with it ------------------------------------------------
# A label only ("keyed" or "input"), never the key or anything drawn from it: Parquet carries it
# as key-value metadata, a DuckDB table in its COMMENT; CSV cannot carry it (unknown).
ROW_ORDERS = ("keyed", "input")
ROW_ORDER_METADATA = "rwn_sql.row_order"          # the Parquet key-value metadata key
ROW_ORDER_COMMENT = {
    "keyed": "rwn_sql release, row order: keyed (an order drawn by the key, unrelated to the input "
             "order: pair it with its original by an id column or the key, never by position)",
    "input": "rwn_sql release, row order: input (row i is the release of input row i)",
}
_ROW_ORDER_IN_COMMENT = re.compile(r"rwn_sql release, row order: (keyed|input) ")


def row_order_comment(target_sql: str, row_order: str | None, design=None) -> list[str]:
    """The COMMENT ON TABLE statement recording `row_order` and a randomized table's `design`
    (a design_record.Design: its sentence and record line) on the table `target_sql`, if any."""
    parts = [ROW_ORDER_COMMENT[row_order]] if row_order is not None else []
    if design is not None:
        parts.append(design.comment())
    return [f"COMMENT ON TABLE {target_sql} IS {quote_literal(chr(10).join(parts))}"] if parts else []


def _in_one_transaction(con, statements: list[str]) -> int:
    """Run `statements` in one transaction (the caller's, when one is open); the first one's
    row count (a CREATE TABLE AS)."""
    if len(statements) == 1:
        return run(con, statements[0])[0][0]
    try:
        con.execute("BEGIN TRANSACTION").fetchall()
    except duckdb.TransactionException:         # inside the caller's transaction
        rows = run(con, statements[0])[0][0]
        for statement in statements[1:]:
            run(con, statement)
        return rows
    try:
        rows = run(con, statements[0])[0][0]
        for statement in statements[1:]:
            run(con, statement)
        con.execute("COMMIT").fetchall()
        return rows
    except BaseException:
        try:
            con.execute("ROLLBACK").fetchall()
        except duckdb.Error:
            pass
        raise


def recorded_row_order(con: duckdb.DuckDBPyConnection, source) -> str | None:
    """The row order a writer recorded with the release `source` ("keyed" or "input"), or None
    when none is known: a CSV file, a query, a view, a lazy relation, a table or Parquet file
    written by anything else. `source` as resolve_source takes it (already resolved there)."""
    if not isinstance(source, (str, os.PathLike)):
        return None
    source = os.fspath(source)
    db = split_db_target(source)
    if db is not None:
        found = attached_database(con, db[0])
        if found is None:
            return None
        rows = con.execute("SELECT comment FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main' "
                           "AND lower(table_name) = lower(?)", [found[0], db[1]]).fetchall()
    elif file_format(source) == "parquet" and os.path.isfile(source):
        try:
            rows = con.execute("SELECT decode(value) FROM parquet_kv_metadata(?) WHERE decode(key) = ?",
                               [source, ROW_ORDER_METADATA]).fetchall()
        except duckdb.Error:        # not UTF-8: not ours
            return None
        values = {r[0] for r in rows}
        return values.pop() if len(values) == 1 and values <= set(ROW_ORDERS) else None
    elif file_format(source) is None and not QUERY_START.match(source):
        rows = _table_comments(con, source)
    else:
        return None
    found = {m.group(1) for (comment,) in rows if comment and (m := _ROW_ORDER_IN_COMMENT.match(comment))}
    return found.pop() if len(rows) == 1 and len(found) == 1 else None


def _table_comments(con, name: str) -> list[tuple]:
    """The comments of the base tables `name` may denote ([database.][schema.]table): every
    candidate, so that an ambiguous name reads as unknown."""
    parts = name_parts(name) if "." in name else [name]
    if not parts:
        return []
    table, qualifiers = parts[-1], [p.lower() for p in parts[:-1]]
    rows = con.execute("SELECT database_name, schema_name, comment FROM duckdb_tables() "
                       "WHERE lower(table_name) = lower(?)", [table]).fetchall()
    if not qualifiers:
        temp = [r for r in rows if r[0] == "temp"]           # a TEMP table hides the others
        current = con.execute("SELECT current_database(), current_schema()").fetchall()[0]
        rows = temp or [r for r in rows if (r[0], r[1]) == current]
    elif len(qualifiers) == 1:
        rows = [r for r in rows if qualifiers[0] in (r[0].lower(), r[1].lower())]
    else:
        rows = [r for r in rows if [r[0].lower(), r[1].lower()] == qualifiers[-2:]]
    return [(r[2],) for r in rows]


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
published: list[str] = []                       # outputs this process has completed
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
            raise RWNError("the run is ending (interrupted); the output was not published")
        _publish(tmp, target, overwrite)


def _publish(tmp: str, target: str, overwrite: bool) -> None:
    if overwrite:
        os.replace(tmp, target)
        published.append(target)
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
    published.append(target)


def publish_folder(tmp: str, path: str, scratch: str) -> None:
    """Move the complete folder (or file) `tmp` to `path`, replacing what is there: the old one
    is moved into `scratch` first and removed after, so `path` is never half-written. Refused
    once the run is ending, as publish."""
    with _guard:
        if _ending:
            raise RWNError("the run is ending (interrupted); the output was not published")
        if os.path.exists(path):
            old = os.path.join(scratch, "replaced")
            os.replace(path, old)
            os.replace(tmp, path)
            published.append(path)
            shutil.rmtree(old) if os.path.isdir(old) else os.remove(old)
        else:
            os.replace(tmp, path)
            published.append(path)


def output_folder(target: str) -> str:
    """The folder an output file or database goes to; RWNError if it does not exist."""
    db = split_db_target(target)
    path = db[0] if db else target
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise RWNError(f"output folder {folder!r} does not exist")
    return folder


def write_output(con: duckdb.DuckDBPyConnection, sql: str, target: str, overwrite: bool = False,
                 row_order: str | None = None, design=None) -> int:
    """Write the result of `sql` to a .csv/.tsv(.gz)/.parquet file or 'file.duckdb:table',
    atomically; a release's `row_order` ("keyed"/"input") and a randomized table's `design`
    (design_record.Design) are recorded in Parquet key-value metadata or the table's COMMENT (a
    CSV cannot hold them). Files are written in the run's private directory and published in one step
    (see publish). A table goes into an existing database in one CREATE TABLE statement (an
    interrupt rolls it back; DuckDB's file lock makes a concurrent writer fail clearly); a new
    database is built in the private directory and published like a file."""
    db = split_db_target(target)
    if db is not None:
        return _write_db_table(con, sql, db[0], db[1], overwrite, row_order, design)
    fmt, compression = output_format(target)
    if os.path.isdir(target):
        raise RWNError(f"output {target!r} is a folder")
    if os.path.lexists(target) and not overwrite:
        raise RWNError(f"output file {target!r} already exists (use --overwrite to replace it)")
    options = ["FORMAT parquet"] if fmt == "parquet" else ["FORMAT csv", "HEADER"]
    metadata = parquet_metadata(row_order, design)
    if fmt == "parquet" and metadata:
        options.append("KV_METADATA {" + ", ".join(f"{quote_literal(k)}: {quote_literal(v)}"
                                                   for k, v in metadata.items()) + "}")
    if fmt == "tsv":
        options.append("DELIMITER '\t'")
    if fmt != "parquet":
        options.append(f"COMPRESSION {compression or 'uncompressed'}")
    with scratch_dir(output_folder(target)) as scratch:
        tmp = os.path.join(scratch, "out-" + secrets.token_hex(4) + os.path.basename(target))
        try:
            rows = run(con, f"COPY (\n{sql}\n) TO {quote_literal(tmp)} ({', '.join(options)})")[0][0]
            publish(tmp, target, overwrite)
            return rows
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)


def parquet_metadata(row_order: str | None, design=None) -> dict[str, str]:
    """The key-value metadata a Parquet output carries: its row order, a randomized table's
    design (design_record.RECORD_KEY: the record line)."""
    out = {ROW_ORDER_METADATA: row_order} if row_order is not None else {}
    if design is not None:
        out.update(design.metadata())
    return out


def _write_db_table(con, sql: str, path: str, table: str, overwrite: bool, row_order: str | None = None,
                    design=None) -> int:
    if not table:
        raise RWNError(f"output {path + ':'!r} names no table")
    folder = output_folder(path)
    existing = attached_database(con, path)
    if existing is None and not os.path.exists(path):
        with scratch_dir(folder) as scratch:
            tmp = os.path.join(scratch, "new-" + secrets.token_hex(4) + ".duckdb")
            alias = "__rwn_new_" + secrets.token_hex(4)
            con.execute(f"ATTACH {quote_literal(tmp)} AS {quote_ident(alias)}").fetchall()
            try:
                target = f"{quote_ident(alias)}.{quote_ident(table)}"
                rows = run(con, f"CREATE TABLE {target} AS\n{sql}")[0][0]
                for statement in row_order_comment(target, row_order, design):   # a new file: published whole
                    run(con, statement)
                con.execute(f"DETACH {quote_ident(alias)}").fetchall()
                publish(tmp, path, overwrite=False)
                return rows
            finally:
                _detach_quietly(con, alias)
                for leftover in (tmp, tmp + ".wal"):
                    if os.path.exists(leftover):
                        os.unlink(leftover)
    alias = attach(con, path, read_only=False)
    try:
        exists = con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = ? AND lower(table_name) = "
                             "lower(?)", [alias, table]).fetchall()[0][0]
        if exists and not overwrite:
            raise RWNError(f"table {table!r} already exists in {path!r} (use --overwrite to replace it)")
        if exists and existing is not None and table.lower() in tables_read(con, sql):
            raise RWNError(f"output {path}:{table} is the input (or a table it reads); rwn-sql never "
                           f"overwrites its input")
        verb = "CREATE OR REPLACE TABLE" if overwrite else "CREATE TABLE"
        target = f"{quote_ident(alias)}.{quote_ident(table)}"
        return _create_and_commit(con, [f"{verb} {target} AS\n{sql}"] + row_order_comment(target, row_order, design),
                                  f"{path}:{table}")
    finally:
        if existing is None:
            _detach_quietly(con, alias)


def _create_and_commit(con, statements: list[str], label: str) -> int:
    """Run `statements` (a CREATE TABLE in an existing database, then its COMMENT) in their own
    transaction and commit it under the publish lock, only while the run is not ending: an
    autocommitted statement would publish the table the moment it returns, also after a signal.
    Inside a caller's transaction (Python) the caller's COMMIT publishes it. The first
    statement's row count."""
    try:
        con.execute("BEGIN TRANSACTION").fetchall()
    except duckdb.TransactionException:
        rows = run(con, statements[0])[0][0]
        for statement in statements[1:]:
            run(con, statement)
        return rows
    try:
        rows = run(con, statements[0])[0][0]
        for statement in statements[1:]:
            run(con, statement)
        with _guard:
            if _ending:
                raise RWNError("the run is ending (interrupted); the output was not published")
            con.execute("COMMIT").fetchall()
            published.append(label)
        return rows
    except BaseException:
        try:
            con.execute("ROLLBACK").fetchall()
        except duckdb.Error:      # already rolled back (a failed statement, an interrupt)
            pass
        raise


def _detach_quietly(con, alias: str) -> None:
    try:
        con.execute(f"DETACH DATABASE IF EXISTS {quote_ident(alias)}").fetchall()
    except duckdb.Error:
        pass


# --- Errors -------------------------------------------------------------------------------
def describe_error(exc: BaseException) -> str:
    """One line for a DuckDB or OS error: what went wrong, never the raw data DuckDB quotes
    (its CSV errors echo the offending line)."""
    if isinstance(exc, OSError) and not isinstance(exc, duckdb.Error):
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        return _explain_errno(exc.errno, exc.strerror or str(exc)) + where
    text = str(exc)
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    if isinstance(exc, duckdb.OutOfMemoryException) or "Out of Memory" in text:
        return ("out of memory: DuckDB could not stay within its memory limit (raise --memory-limit, "
                "use fewer --threads, or free memory)")
    for marker, code in (("No space left on device", errno.ENOSPC), ("File too large", errno.EFBIG),
                         ("Read-only file system", errno.EROFS), ("Permission denied", errno.EACCES),
                         ("Disk quota exceeded", errno.EDQUOT)):
        if marker in text:
            return _explain_errno(code, marker)     # DuckDB's line names internal temporary files
    csv_line = re.search(r"CSV Error on Line: (\d+)", text)
    if csv_line:
        detail = next((ln for ln in lines[1:] if not ln.startswith("Original Line")), "")
        detail = re.sub(r'(string|value) "[^"]*"', r"a \1", detail)     # the value is raw data
        return f"CSV line {csv_line[1]}: {detail}".rstrip(": ")
    head = lines[0] if lines else type(exc).__name__
    return head if len(head) <= 400 else head[:400] + "..."


def _explain_errno(code: int | None, detail: str) -> str:
    if code in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        return f"disk full (or file size limit reached) while writing: {detail}"
    if code in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"cannot write there (read-only or no permission): {detail}"
    return detail


class DuckDBBackend:
    """rwn_sql.backends.Backend over a DuckDB connection."""
    name = "duckdb"

    def __init__(self, con: duckdb.DuckDBPyConnection):
        from .dialects import DUCKDB
        self.con, self.dialect = con, DUCKDB

    def source(self, source) -> Source:
        return resolve_source(self.con, source)

    def rows(self, sql: str) -> list[tuple]:
        return run(self.con, sql)

    def relation(self, sql: str):
        return self.con.sql(sql)

    def engine_sql(self, sql: str) -> str:
        return sql

    def write(self, sql: str, target: str, overwrite: bool = False, row_order: str | None = None,
              design=None) -> int:
        return write_output(self.con, sql, target, overwrite=overwrite, row_order=row_order, design=design)

    @property
    def session(self):
        return self.con

    def key_sql(self, key: str, scope=None) -> str:
        """The key stored in a row of the connection's TEMP table __rwn_keys (through a prepared
        parameter), read by a scan so that no plan shows it (randomness.KeySQL). In a lasting
        scope (or none) one row per distinct key serves every relation; for a call-only
        scope a row of its own, removed when the scope ends."""
        from ..randomness import KEY_TABLE, KeySQL, current_scope
        scope = current_scope(self.con) if scope is None else scope
        lasting = scope is None or scope.lasting
        self.con.execute(f"CREATE TEMP TABLE IF NOT EXISTS {KEY_TABLE} (id VARCHAR, k VARCHAR, lasting BOOLEAN)")
        found = self.con.execute(f"SELECT id FROM {KEY_TABLE} WHERE lasting AND k = ?", [key]).fetchall() \
            if lasting else []
        if found:
            token = found[0][0]
        else:
            token = secrets.token_hex(8)
            self.con.execute(f"INSERT INTO {KEY_TABLE} VALUES (?, ?, ?)", [token, key, lasting]).fetchall()
            if scope is not None:
                scope.made.append(token)
        return KeySQL("k", f"{KEY_TABLE} WHERE id = {quote_literal(token)}")

    def forget_keys(self, tokens=None) -> None:
        """Remove the stored keys `tokens` (None: every key of the connection, the macros' too).
        In a transaction that failed, the rows go with its rollback."""
        from ..randomness import KEY_TABLE, MACRO_KEYS
        try:
            if tokens is None:
                self.con.execute(f"DROP TABLE IF EXISTS {KEY_TABLE}").fetchall()
                MACRO_KEYS.get(self.con, {}).clear()
            elif tokens:
                listed = ", ".join(quote_literal(t) for t in tokens)
                self.con.execute(f"DELETE FROM {KEY_TABLE} WHERE id IN ({listed})").fetchall()
        except duckdb.TransactionException:
            pass

    has_input_order = True      # without id=, records are numbered by their input position
    has_python_udfs = True      # rwn_sql.rp.duckdb_udfs registers them on the connection
    records_design_in_catalog = True    # COMMENT ON TABLE, and release databases ATTACHed read-only
    releases_to_database_file = True

    def try_rows(self, sql: str) -> list[tuple] | None:
        """rows(), or None when the engine fails the statement (rwn_sql's checks still raise)."""
        try:
            return run(self.con, sql)
        except duckdb.InterruptException:
            raise
        except duckdb.Error:
            return None

    def memory_limit(self) -> int:
        """DuckDB's memory_limit setting in bytes (physical memory when it cannot be read)."""
        text = str(self.con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])
        m = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]+)\s*", text)
        if m and m.group(2).lower() in MEMORY_UNITS:
            return int(float(m.group(1)) * MEMORY_UNITS[m.group(2).lower()])
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")

    def deliver(self, sql: str, into: str | None = None, replace: bool = False, reads_staged: bool = False,
                row_order: str | None = None):
        """A relation (into=None) or a table `into` created in one statement (returns None). A
        relation over staged tables, which are dropped when this returns, is computed now
        into a TEMP table of the connection (it lasts as long as the connection)."""
        if into is None and reads_staged:
            return self.con.table(self.stage(sql))
        return deliver(self.con, sql, into, replace, row_order=row_order)

    def check_into(self, into) -> None:
        """Refuse a deliver() target before any work (deliver checks it again)."""
        if into is not None:
            table_target(self.con, into)

    def passthrough_source(self, source: str, output: str, typed):
        """CSV to CSV/TSV: the columns other than `typed` read as text, so that they are written
        back byte for byte; otherwise the source itself."""
        if output.lower().endswith((".csv", ".tsv", ".csv.gz", ".tsv.gz")):
            return text_passthrough(self.con, source, typed)
        return source

    def write_relation(self, relation, target: str, overwrite: bool = False) -> int:
        """write() for a relation this backend returned."""
        return write_output(self.con, relation.sql_query(), target, overwrite=overwrite)

    def fetch(self, relation) -> tuple[list[str], list[tuple]]:
        """Column names and rows of a relation."""
        try:
            return [d[0] for d in relation.description], relation.fetchall()
        except duckdb.Error as exc:
            raise translate(exc) from None

    def stage(self, sql: str, joins_as_written: bool = False) -> str:
        name = "rwn_stage_" + secrets.token_hex(4)
        if not joins_as_written:
            run(self.con, f"CREATE TEMP TABLE {name} AS\n{sql}")
            return name
        # A level of the RWN search: DuckDB estimates its searching records far too low (a filter
        # on a staged boolean column), hashes the candidate side instead of the grid points and
        # needs 2-3x the time and 20x the memory (200k x 3: 500 MB of hash table against 25 MB).
        # The build_side_probe_side optimizer is what flips the sides; the user's setting returns.
        before = run(self.con, "SELECT current_setting('disabled_optimizers')")[0][0]
        disabled = ",".join(o for o in [before, "build_side_probe_side"] if o)
        run(self.con, f"SET disabled_optimizers = {quote_literal(disabled)}")
        try:
            run(self.con, f"CREATE TEMP TABLE {name} AS\n{sql}")
        finally:
            run(self.con, f"SET disabled_optimizers = {quote_literal(before)}")
        return name

    def drop(self, name: str) -> None:
        self.con.execute(f"DROP TABLE IF EXISTS {name}").fetchall()
