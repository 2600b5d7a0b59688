"""Sources on DuckDB: a table, view, query, CSV/TSV/Parquet file or database table resolved to a
relation with its real schema, the columns checked against it, and a source the connection
does not see (a TEMP table of another cursor) checked inside the statement instead."""
from __future__ import annotations

import difflib
import os
import re
import secrets
from dataclasses import dataclass

import duckdb

from .dialects import DUCKDB, source_from_table
from .duckdb import NUMERIC_TYPES, describe_error, first_line, run
from ..errors import NoSuchSource, RWNError
from ..identifiers import name_parts, quote_ident, quote_literal
from ..messages import SQL, Message


QUERY_START = re.compile(r"^\s*(\(|select\b|with\b|from\b|values\b|table\b)", re.IGNORECASE)
FILE_SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet"}
DB_SUFFIXES = (".duckdb", ".db", ".ddb")


@dataclass(frozen=True)
class Source:
    sql: str                         # a relation usable after FROM
    schema: tuple[tuple[str, str], ...]   # (column name, DuckDB type)
    label: str                       # how messages name it
    csv: str | None = None           # the CSV/TSV file it reads, for explaining a numeric column read as text
    csv_nulls: tuple[str, ...] = ()  # the cells that file's reading takes as NULL besides empty ones
    visible: bool = True             # False: the planner cannot read it (unseen_source; no schema known)

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
        from ..statements import single_statement  # lazy: sqlglot loads only when needed
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
    not do through query_table (one thread reads it)."""
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
            raise RWNError(RESERVED_COLUMN.text(label=src.label, column=repr(n), prefix=RESERVED_PREFIX))


RESERVED_COLUMN = Message("{label} has a column named {column}; names starting with {prefix!r} are reserved for "
                          "rwn_sql's internal columns, rename it")


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
    message, its other parts) of `typed` fails unless the column's type matches, the message
    given the column's type as its part `type_name`.
    `conditions`: SQL that is true on every row or fails the statement (raise_unless); `named`:
    columns that must exist (bound here, so a missing one fails the statement); `keep`: the
    columns to keep (default all), in the source's order."""
    guard = RESERVED_PREFIX + "guard"
    checked = [(raise_unless(dialect, dialect.type_matches(quote_ident(c), pattern),
                             message.sql(type_name=SQL(dialect.type_name(quote_ident(c))), **parts),
                             quote_ident(c)), quote_ident(c))
               for c, pattern, message, parts in typed]
    # every column named __rwn_*: the guard added here, and any of the source's
    column = dialect.column_name(dialect.columns_matching(f"(?i)^{RESERVED_PREFIX}"))
    reserved = raise_unless(dialect, f"{column} = {quote_literal(guard)}",
                            RESERVED_COLUMN.sql(label=f"table {name!r}", column=["'", SQL(column), "'"],
                                                prefix=RESERVED_PREFIX))
    bound = [f"({quote_ident(c)} IS NULL OR true)" for c in dict.fromkeys(named)]
    where = " AND ".join([reserved, *conditions, *bound])
    sql = (f"(SELECT {dialect.star('', [guard], checked)}\n"
           f"    FROM (SELECT *, true AS {guard} FROM {source_from_table(name, dialect)}) AS __rwn_unseen\n"
           f"    WHERE {where})")
    if keep is not None:
        sql = (f"(SELECT {dialect.columns_among(keep)} FROM {sql} AS __rwn_checked\n"
               f"    WHERE {' AND '.join(f'({quote_ident(c)} IS NULL OR true)' for c in keep)})")
    sql += " AS __rwn_source"
    return Source(sql=sql, schema=(), label=f"table {name!r}", visible=False)


# Record ids whose text form (hashed by every draw) is the same on every engine (type names
# of DuckDB, and of Spark: int, string).
ID_TYPES = re.compile(r"(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|VARCHAR|STRING)", re.IGNORECASE)


def require_record_id(src: Source, name: str) -> None:
    """The id column exists and has a type whose text form is the same on every engine."""
    require_columns(src, [name], "id")
    if not ID_TYPES.fullmatch(src.type_of(name)):
        raise RWNError(ID_TYPE.text(column=name, type_name=src.type_of(name)))


ID_TYPE = Message("id column {column!r} has type {type_name}; a record id must be an integer or text column")


def id_type_check(name: str):
    """The `typed` entry of unseen_source that checks a record id's type as require_record_id does."""
    return name, ID_TYPES.pattern, ID_TYPE, {"column": name}


def table_exists(con, name: str) -> bool:
    return _table_columns(con, name) is not None
