"""rwn_sql.engines.backend.Backend over a DuckDB connection."""
from __future__ import annotations

import functools
import os
import re
import secrets

import duckdb

from . import outputs, sources
from .dialects import DUCKDB
from .duckdb import MEMORY_UNITS, describe_error, run, translate
from ..errors import RWNError
from ..identifiers import quote_ident, quote_literal


class DuckDBBackend:
    """rwn_sql.backends.Backend over a DuckDB connection."""
    name = "duckdb"

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con, self.dialect = con, DUCKDB

    def source(self, source) -> sources.Source:
        return sources.resolve_source(self.con, source)

    def rows(self, sql: str) -> list[tuple]:
        return run(self.con, sql)

    def relation(self, sql: str):
        return self.con.sql(sql)

    def engine_sql(self, sql: str) -> str:
        return sql

    def write(self, sql: str, target: str, overwrite: bool = False, row_order: str | None = None,
              design=None) -> int:
        return outputs.write_output(self.con, sql, target, overwrite=overwrite, row_order=row_order, design=design)

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
    has_python_udfs = True      # rwn_sql.rp.core.duckdb_udfs registers them on the connection
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
        return outputs.deliver(self.con, sql, into, replace, row_order=row_order)

    def check_into(self, into) -> None:
        """Refuse a deliver() target before any work (deliver checks it again)."""
        if into is not None:
            outputs.table_target(self.con, into)

    def passthrough_source(self, source: str, output: str, typed):
        """CSV to CSV/TSV: the columns other than `typed` read as text, so that they are written
        back byte for byte; otherwise the source itself."""
        if output.lower().endswith((".csv", ".tsv", ".csv.gz", ".tsv.gz")):
            return sources.text_passthrough(self.con, source, typed)
        return source

    def write_relation(self, relation, target: str, overwrite: bool = False) -> int:
        """write() for a relation this backend returned."""
        return outputs.write_output(self.con, relation.sql_query(), target, overwrite=overwrite)

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
        # needs more time and 20x the memory (200k x 3: 500 MB of hash table against 25 MB).
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


SHIPPED_TABLE = "__rwn_shipped"
@functools.lru_cache(maxsize=1)
def _scratch_database() -> duckdb.DuckDBPyConnection:
    """One private in-memory database per process, opened when first needed, which reads no file
    and whose settings cannot be changed: what a statement hands it is the caller's SQL, which
    may run where external access is off."""
    return duckdb.connect(config={"enable_external_access": False, "lock_configuration": True})


def _scratch_cursor() -> duckdb.DuckDBPyConnection:
    """A connection of its own (its TEMP tables and views go with it) to the private database."""
    return _scratch_database().cursor()


@functools.lru_cache(maxsize=256)
def _parsed_type(type_sql: str) -> str | None:
    try:
        return str(duckdb.sqltype(type_sql))
    except (duckdb.Error, TypeError, ValueError):
        return None


def _type_text(type_sql: str, label: str) -> str:
    """A column type as DuckDB writes it, refused unless it parses as one type."""
    parsed = _parsed_type(type_sql)
    if parsed is None:
        raise RWNError(f"cannot read {label} for planning: {type_sql!r} is not a column type")
    return parsed


def scratch_backend(schema, shipped, rows, label: str) -> tuple[DuckDBBackend, sources.Source]:
    """A backend over a connection of its own to a private in-memory database (close it when
    done: its TEMP tables go with it) holding a source that a statement handed to its planner
    as it ran (rwn_sql.rp.temp_source): `schema` the source's (name, type) pairs, `rows` an Arrow
    list array of one element, the distinct records as lists of text, holding the columns
    `shipped` (names, in that order) and then the record's count (dialect.rows_as_text); the
    other columns are NULL. Each value is cast back to its column's type and each record
    repeated its count, so the planner reads the source's records as it would read the table
    itself (in another order)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    schema = [(name, _type_text(type_sql, label)) for name, type_sql in schema]
    records = pc.list_flatten(rows)               # one list of text per distinct record
    fields = [pc.list_element(records, i) if len(records) else pa.array([], pa.string())
              for i in range(len(shipped) + 1)]
    names = [f"c{i}" for i in range(len(shipped))] + ["n"]
    con = _scratch_cursor()
    con.register(SHIPPED_TABLE, pa.Table.from_arrays(fields[:-1] + [pc.cast(fields[-1], pa.int64())], names=names))
    position = {name: i for i, name in enumerate(shipped)}
    columns = ", ".join(f"CAST({f'c{position[name]}' if name in position else 'NULL'} AS {type_sql}) AS "
                        f"{quote_ident(name)}" for name, type_sql in schema)
    try:
        # a view: the rules aggregate, so reading the shipped rows again is cheaper than storing the copy
        con.execute(f"CREATE TEMP VIEW __rwn_source AS SELECT {columns} FROM {SHIPPED_TABLE}, "
                    f"range({SHIPPED_TABLE}.n)").fetchall()
    except duckdb.Error as exc:
        con.close()
        raise RWNError(f"cannot read {label} for planning: {describe_error(exc)}; copy it into a table "
                       f"(CREATE TABLE ... AS SELECT * FROM it)") from None
    return DuckDBBackend(con), sources.Source('"temp"."main"."__rwn_source"', tuple(schema), label)
