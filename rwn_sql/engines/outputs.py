"""Writing on DuckDB: a table or relation delivered in one statement, an output file or database
table written atomically (into the run's private folder, then published), and the row order
a release records."""
from __future__ import annotations

import os
import re
import secrets

import duckdb

from . import files, sources
from .duckdb import first_line, run
from ..errors import OutputExists, RWNError
from ..identifiers import name_parts, quote_ident, quote_literal


# Outputs follow their extension exactly; anything else is refused rather than guessed.
OUTPUT_FORMATS = {".csv": ("csv", None), ".tsv": ("tsv", None), ".csv.gz": ("csv", "gzip"),
                  ".tsv.gz": ("tsv", "gzip"), ".parquet": ("parquet", None)}


def output_format(path: str) -> tuple[str, str | None]:
    """(format, compression) of an output file, from its extension; RWNError for any other."""
    p = path.lower()
    for suffix, fmt in OUTPUT_FORMATS.items():
        if p.endswith(suffix):
            return fmt
    raise RWNError(f"output {path!r}: unknown extension; use .csv, .tsv, .csv.gz, .tsv.gz, .parquet "
                   f"or file.duckdb:table")


def write_table(con: duckdb.DuckDBPyConnection, sql: str, into: str, replace: bool = False,
                row_order: str | None = None) -> int:
    """CREATE TABLE `into` AS `sql`: one statement, so an error or interrupt leaves no table
    (with `row_order`, that statement and the table's COMMENT recording it in one transaction).
    Replacing a table the statement reads (directly or through views) is refused."""
    target = table_target(con, into)
    if sources.table_exists(con, into):
        if not replace:
            raise OutputExists(f"table {into!r} already exists (pass replace=True / --overwrite to replace it)")
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
    return _in_transaction(con, statements, lambda: con.execute("COMMIT").fetchall())


def _in_transaction(con, statements: list[str], commit) -> int:
    """Run `statements` in a transaction of their own, ended by `commit()` (rolled back on any
    error or interrupt), or inside the caller's open transaction, whose COMMIT publishes them.
    The first statement's row count."""
    def run_all() -> int:
        rows = run(con, statements[0])[0][0]
        for statement in statements[1:]:
            run(con, statement)
        return rows
    try:
        con.execute("BEGIN TRANSACTION").fetchall()
    except duckdb.TransactionException:         # inside the caller's transaction
        return run_all()
    try:
        rows = run_all()
        commit()
        return rows
    except BaseException:
        try:
            con.execute("ROLLBACK").fetchall()
        except duckdb.Error:      # already rolled back (a failed statement, an interrupt)
            pass
        raise


def recorded_row_order(con: duckdb.DuckDBPyConnection, source) -> str | None:
    """The row order a writer recorded with the release `source` ("keyed" or "input"), or None
    when none is known: a CSV file, a query, a view, a lazy relation, a table or Parquet file
    written by anything else. `source` as resolve_source takes it (already resolved there)."""
    if not isinstance(source, (str, os.PathLike)):
        return None
    source = os.fspath(source)
    db = sources.split_db_target(source)
    if db is not None:
        found = sources.attached_database(con, db[0])
        if found is None:
            return None
        rows = con.execute("SELECT comment FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main' "
                           "AND lower(table_name) = lower(?)", [found[0], db[1]]).fetchall()
    elif sources.file_format(source) == "parquet" and os.path.isfile(source):
        try:
            rows = con.execute("SELECT decode(value) FROM parquet_kv_metadata(?) WHERE decode(key) = ?",
                               [source, ROW_ORDER_METADATA]).fetchall()
        except duckdb.Error:        # not UTF-8: not ours
            return None
        values = {r[0] for r in rows}
        return values.pop() if len(values) == 1 and values <= set(ROW_ORDERS) else None
    elif sources.file_format(source) is None and not sources.QUERY_START.match(source):
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


def write_output(con: duckdb.DuckDBPyConnection, sql: str, target: str, overwrite: bool = False,
                 row_order: str | None = None, design=None) -> int:
    """Write the result of `sql` to a .csv/.tsv(.gz)/.parquet file or 'file.duckdb:table',
    atomically; a release's `row_order` ("keyed"/"input") and a randomized table's `design`
    (design_record.Design) are recorded in Parquet key-value metadata or the table's COMMENT (a
    CSV cannot hold them). Files are written in the run's private directory and published in one step
    (see publish). A table goes into an existing database in one CREATE TABLE statement (an
    interrupt rolls it back; DuckDB's file lock makes a concurrent writer fail clearly); a new
    database is built in the private directory and published like a file."""
    db = sources.split_db_target(target)
    if db is not None:
        return _write_db_table(con, sql, db[0], db[1], overwrite, row_order, design)
    fmt, compression = output_format(target)
    if os.path.isdir(target):
        raise RWNError(f"output {target!r} is a folder")
    if os.path.lexists(target) and not overwrite:
        raise OutputExists(f"output file {target!r} already exists (use --overwrite to replace it)")
    options = ["FORMAT parquet"] if fmt == "parquet" else ["FORMAT csv", "HEADER"]
    metadata = parquet_metadata(row_order, design)
    if fmt == "parquet" and metadata:
        options.append("KV_METADATA {" + ", ".join(f"{quote_literal(k)}: {quote_literal(v)}"
                                                   for k, v in metadata.items()) + "}")
    if fmt == "tsv":
        options.append("DELIMITER '\t'")
    if fmt != "parquet":
        options.append(f"COMPRESSION {compression or 'uncompressed'}")
    with files.scratch_dir(files.output_folder(target)) as scratch:
        tmp = os.path.join(scratch, "out-" + secrets.token_hex(4) + os.path.basename(target))
        try:
            rows = run(con, f"COPY (\n{sql}\n) TO {quote_literal(tmp)} ({', '.join(options)})")[0][0]
            files.publish(tmp, target, overwrite)
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
    folder = files.output_folder(path)
    existing = sources.attached_database(con, path)
    if existing is None and not os.path.exists(path):
        with files.scratch_dir(folder) as scratch:
            tmp = os.path.join(scratch, "new-" + secrets.token_hex(4) + ".duckdb")
            alias = "__rwn_new_" + secrets.token_hex(4)
            con.execute(f"ATTACH {quote_literal(tmp)} AS {quote_ident(alias)}").fetchall()
            try:
                target = f"{quote_ident(alias)}.{quote_ident(table)}"
                rows = run(con, f"CREATE TABLE {target} AS\n{sql}")[0][0]
                for statement in row_order_comment(target, row_order, design):   # a new file: published whole
                    run(con, statement)
                con.execute(f"DETACH {quote_ident(alias)}").fetchall()
                files.publish(tmp, path, overwrite=False)
                return rows
            finally:
                _detach_quietly(con, alias)
                for leftover in (tmp, tmp + ".wal"):
                    if os.path.exists(leftover):
                        os.unlink(leftover)
    alias = sources.attach(con, path, read_only=False)
    try:
        exists = con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = ? AND lower(table_name) = "
                             "lower(?)", [alias, table]).fetchall()[0][0]
        if exists and not overwrite:
            raise OutputExists(f"table {table!r} already exists in {path!r} (use --overwrite to replace it)")
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
    def commit() -> None:
        with files._guard:
            if files._ending:
                raise RWNError(files.NOT_PUBLISHED)
            con.execute("COMMIT").fetchall()
            files.published.add(label)
    return _in_transaction(con, statements, commit)


def _detach_quietly(con, alias: str) -> None:
    try:
        con.execute(f"DETACH DATABASE IF EXISTS {quote_ident(alias)}").fetchall()
    except duckdb.Error:
        pass
