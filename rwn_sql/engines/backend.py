"""The seam between the methods and the engines.

A method plans SQL (pure builders: sqlgen, rp_sql, ...) with a Dialect and hands it to a
Backend, the only object that talks to an engine: it resolves sources, runs statements and
returns their rows or a lazy result, stages intermediate results, and holds the key where the
SQL can read it without containing it. DuckDBBackend lives in rwn_sql.engines.duckdb_backend (over the
other DuckDB modules: duckdb, sources, outputs, files), SparkBackend in rwn_sql.engines.spark. One orchestration path per
method then serves both engines: `backend_for` picks the backend from what the user passed (a
DuckDB connection or a SparkSession)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, Union

from .dialects import is_spark

if TYPE_CHECKING:
    import duckdb
    from pyspark.sql import SparkSession


class Backend(Protocol):
    name: str          # "duckdb" or "spark", as messages name the engine
    dialect: object    # rwn_sql.dialect.Dialect of the engine

    def source(self, source):
        """A rwn_sql.engine.Source (SQL to read it, schema in the engine's type names, label)."""

    def rows(self, sql: str) -> list[tuple]:
        """Run `sql` to completion; its rows. Errors raised by rwn_sql's in-SQL checks become
        RWNError with their message."""

    def relation(self, sql: str):
        """`sql` as the engine's lazy result (a DuckDB relation, a Spark DataFrame)."""

    def engine_sql(self, sql: str) -> str:
        """A builder's SQL as this engine reads it (quoting), for users who ask for the SQL."""

    def write(self, sql: str, target: str, overwrite: bool = False, row_order: str | None = None,
              design=None) -> int:
        """Write the result of `sql` to the output `target` atomically; the number of rows.
        `row_order` ("keyed" or "input", for a release) and `design` (a randomized table's
        design_record.Design): recorded where the format can hold them."""

    session: object    # the engine session the backend talks to (key scopes are kept per session)

    def key_sql(self, key: str, scope=None) -> str:
        """SQL that reads `key` (a randomness.KeySQL), stored where the engine keeps it for this
        session, in `scope` or else the session's innermost randomness.key_scope; neither the
        SQL text nor any plan of it contains the key or a value derived from it alone."""

    def forget_keys(self, handles=None) -> None:
        """Remove the stored keys `handles` (a KeyScope's `made`; None: every key of the session)."""

    def stage(self, sql: str, joins_as_written: bool = False) -> str:
        """Compute `sql` once into a temporary relation; its name (for FROM). `joins_as_written`:
        each join hashes its right side, whatever the optimizer estimates (a level of the RWN
        search, whose staged rows the estimates undercount)."""

    def drop(self, name: str) -> None:
        """Forget a relation made by stage()."""

    has_input_order: bool   # can records be numbered by their input position (else id= is required)?
    # Can a statement call Python scalar functions registered on the session (DuckDB's
    # create_function)? Else what such a function would compute is computed beforehand and
    # joined in as a small table (the audit's exact tails).
    has_python_udfs: bool
    # Do the session's own tables hold a randomized table's recorded design (a table's COMMENT, an
    # attached release database's metadata)? Then randomize(into=) writes such a table and
    # estimates look the design up in the catalog; else a design travels only in Parquet metadata.
    records_design_in_catalog: bool
    # Is a release one database file (rp.release.release_db.write_release), else a folder of Parquet
    # files beside its metadata (write_release_folder), which query() then reads?
    releases_to_database_file: bool

    def try_rows(self, sql: str) -> list[tuple] | None:
        """rows(), or None when the engine fails the statement (rwn_sql's own checks still raise)."""

    def memory_limit(self) -> int | None:
        """Bytes the engine may use for one statement, if it has one such limit."""

    def deliver(self, sql: str, into=None, replace: bool = False, reads_staged: bool = False,
                row_order: str | None = None):
        """The lazy result of `sql` (into=None), or written to `into` at once, atomically.
        `reads_staged`: `sql` reads relations of stage() that are dropped once this returns.
        `row_order`: as for write(), recorded with a table written to `into`."""

    def check_into(self, into) -> None:
        """Refuse a deliver() target the engine cannot write, before any work."""

    def write_relation(self, relation, target: str, overwrite: bool = False) -> int:
        """write() for a lazy result this backend returned."""

    def fetch(self, relation) -> tuple[list[str], list[tuple]]:
        """Column names and rows of a lazy result."""

    def passthrough_source(self, source, output: str, typed):
        """The source as a command reads it for `output`: DuckDB reads the columns other than
        `typed` of a CSV as text when the output is CSV too, so they are written back byte for
        byte."""


# What the public functions take: a DuckDB connection, a SparkSession, or the Backend of either.
Session = Union["duckdb.DuckDBPyConnection", "SparkSession", Backend]


def backend_for(con: Session) -> Backend:
    """The backend of a DuckDB connection or a SparkSession (a backend is returned as is)."""
    if hasattr(con, "dialect") and hasattr(con, "stage"):
        return con
    if is_spark(con):
        from .spark import SparkBackend
        return SparkBackend(con)
    from .duckdb_backend import DuckDBBackend
    return DuckDBBackend(con)
