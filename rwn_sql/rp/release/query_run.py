"""An analyst's query, run: rewritten by rwn_sql.rp.release.analyst, then answered on a separate DuckDB
connection that sees only the release, read-only, with external access disabled and the
configuration locked (isolated_connection), or through another engine's backend over a
release folder (run_query_on)."""
from __future__ import annotations

import dataclasses
import os

from ...engines import duckdb as engine
from ...errors import RWNError
from ...identifiers import display_name, quote_ident, quote_literal
from .analyst import TOO_DEEP, Rewritten, Scope, describe, parse, refuse, rewrite, selected, source
from .release_db import METADATA_MEMORY_LIMIT, TRIALS_TABLE, ReleaseMeta, read_metadata

ISOLATED_RELEASE = "rwn_release"      # the release's alias on the isolated connection


def lock(iso: engine.Connection) -> None:
    """No file, network or extension access on `iso`, and no SET can turn it back on."""
    iso.execute("SET enable_external_access = false").fetchall()
    iso.execute("SET lock_configuration = true").fetchall()


ISOLATED_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


def attached(path: str, settings: dict) -> engine.Connection:
    """A new in-memory connection with `settings` (memory_limit, threads), external access off
    and the configuration locked, then the release file `path` attached READ_ONLY."""
    iso = engine.connect(config={**ISOLATED_CONFIG, **settings})
    try:
        # The file is untrusted input: access is off and locked before it is attached, so
        # nothing in it reaches another file; only the release itself (and its WAL) may be read.
        allowed = ", ".join(quote_literal(f) for f in (path, path + ".wal"))
        iso.execute(f"SET allowed_paths = [{allowed}]").fetchall()
        lock(iso)
        try:
            iso.execute(f"ATTACH {quote_literal(path)} AS {ISOLATED_RELEASE} (READ_ONLY, TYPE duckdb)").fetchall()
        except engine.IOException as exc:
            if "not a valid DuckDB database" not in str(exc):
                raise
            raise RWNError(f"{path!r} is not a DuckDB database file (a release is the file rwn-sql "
                           "release writes)") from None
    except BaseException:
        iso.close()
        raise
    return iso


def isolated_connection(con: engine.Connection, path: str | None, table: str,
                        schema: str | None) -> tuple[engine.Connection, ReleaseMeta, str]:
    """A new in-memory connection holding only the release, with external access disabled
    and the configuration locked; its metadata; and the SQL naming the released table.

    With `path` the release file is attached READ_ONLY. Without it the release lives in the
    caller's connection `con`, which may hold raw data as well, so nothing the analyst wrote
    runs there: the released table's published columns (and an enforced release's trials
    table) are copied through Arrow by fixed SQL naming them by their quoted names from the
    metadata. That costs memory the size of the release; pass release= for large releases."""
    settings = {}
    if con is not None:   # the analyst query runs within the caller's memory limit and threads
        settings = dict(con.execute("SELECT name, value FROM duckdb_settings() "
                                    "WHERE name IN ('memory_limit', 'threads')").fetchall())
    iso = None
    try:
        if path is not None:
            path = os.path.realpath(path)      # DuckDB opens the WAL beside the link's target
            # The metadata are read first on a connection of their own, limited to
            # METADATA_MEMORY_LIMIT: a crafted file's compressed text cannot grow past it.
            probe = attached(path, {"memory_limit": METADATA_MEMORY_LIMIT, "threads": "1"})
            try:
                read_metadata(probe, table, ISOLATED_RELEASE)
            finally:
                probe.close()
            iso = attached(path, settings)
            meta = read_metadata(iso, table, ISOLATED_RELEASE)
            release_sql = meta.rows_sql
        else:
            iso = engine.connect(config={**ISOLATED_CONFIG, **settings})
            meta = read_metadata(con, table, schema)
            prefix = f"{quote_ident(schema)}." if schema else ""
            columns = ", ".join(quote_ident(c) for c in meta.public + (meta.sensitive,))
            iso.register(meta.table_name, con.sql(f"SELECT {columns} FROM {meta.rows_sql}").to_arrow_table())
            if meta.enforced:
                iso.register(TRIALS_TABLE, con.sql(f"SELECT size, t FROM {prefix}{TRIALS_TABLE}").to_arrow_table())
                meta = dataclasses.replace(meta, trials_sql=f"{TRIALS_TABLE} AS __rwn_tr")
            release_sql = quote_ident(meta.table_name)
            lock(iso)
    except engine.Error as exc:
        if iso is not None:
            iso.close()
        raise RWNError(f"cannot open the release: {exc}") from None
    except BaseException:
        if iso is not None:
            iso.close()
        raise
    return iso, meta, release_sql


def release_column_types(con: engine.Connection, release_sql: str) -> dict:
    """The release table's column types, as rewrite's column_types (DuckDB)."""
    return {r[0]: r[1] for r in con.execute(f"DESCRIBE SELECT * FROM {release_sql}").fetchall()}


def run_query(con: engine.Connection, sql: str, schema: str | None = None,
              release: str | None = None) -> tuple[engine.Relation, Rewritten]:
    """Answer a count query on a release: the rows as a DuckDB relation of `con` (over an
    Arrow table: computed already) and the rewrite. `release` is a release database file;
    without it the release is in `con`, `schema` naming an ATTACHed release (or FROM
    alias.table names it). The rewritten SQL runs on an isolated connection only."""
    try:
        table = source(parse(sql))
    except RecursionError:
        raise refuse(TOO_DEEP) from None
    named = table.text("db") or None
    if release is not None and named:
        raise RWNError(f"the query reads from {display_name(named)}; with a release file name the table "
                       "without a database")
    if named and schema and named.lower() != schema.lower():
        raise RWNError(f"the query reads from {display_name(named)} but schema {display_name(schema)} was given")
    iso, meta, release_sql = isolated_connection(con, release, table.name, schema or named)
    try:
        rewritten = rewrite(sql, meta, release_sql, column_types=release_column_types(iso, release_sql))
        result = iso.sql(rewritten.sql).to_arrow_table()
    except engine.Error as exc:
        raise RWNError(f"the rewritten query failed: {exc}") from None
    finally:
        iso.close()
    if not rewritten.exact:
        micro = any(result.column("micro_reconstruction").to_pylist())
        select = parse(sql)
        measure = selected(select, Scope(meta.public + (meta.sensitive,), table.alias or table.name,
                                          f"table {display_name(meta.table_name)}"))[1]
        rewritten = dataclasses.replace(rewritten, micro=micro, note=describe(
            meta, False, micro, meta.sensitive in rewritten.group_by, measure))
    return con.from_arrow(result), rewritten


def run_query_on(be, sql: str, folder: str):
    """Answer a count query on a release folder with another engine's backend (Spark): the
    release's table and trials are read as the engine's relations, the rewritten SQL runs in
    its dialect. Returns (the engine's lazy result, Rewritten)."""
    from .release_db import read_release_folder
    try:
        table = source(parse(sql))
    except RecursionError:
        raise refuse(TOO_DEEP) from None
    if table.text("db"):
        raise RWNError(f"the query reads from {display_name(table.text('db'))}; with a release folder name the "
                       "table without a database")
    meta, data, trials = read_release_folder(folder, table.name)
    released = be.source(data)
    release_sql = released.sql
    if trials is not None:
        meta = dataclasses.replace(meta, trials_sql=f"{be.source(trials).sql} AS __rwn_tr")
    rewritten = rewrite(sql, meta, release_sql, be.dialect, column_types=dict(released.schema))
    result = be.relation(rewritten.sql)
    if not rewritten.exact:
        micro = any(r[0] for r in be.rows(f"SELECT micro_reconstruction FROM ({rewritten.sql}) AS __rwn_rows"))
        measure = selected(parse(sql), Scope(meta.public + (meta.sensitive,), table.alias or table.name,
                                              f"table {display_name(meta.table_name)}"))[1]
        rewritten = dataclasses.replace(rewritten, micro=micro, note=describe(
            meta, False, micro, meta.sensitive in rewritten.group_by, measure))
    return result, rewritten
