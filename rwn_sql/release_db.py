"""Standalone release databases for analysts and BI tools.

A release database is a DuckDB file holding only:
  * the released table(s);
  * `rwn_release_metadata`: one row per released table with the published parameters
    (method, p, the domain, eps, delta, test, RWN parameters) and never the key or raw data;
  * for an enforced release, `rwn_release_trials(size, t)`: the number of blocks of a personal
    group of each size (public: it follows from the group sizes and the parameters);
  * ready-made reconstruction views `<table>_estimates` (per sensitive value) and
    `<table>_estimates_by_<column>` (per public column and sensitive value), plain SQL that
    a DuckDB without rwn_sql can run.
"""
from __future__ import annotations

import datetime as _dt
import os
import re
import secrets
from dataclasses import dataclass, field

import duckdb

from . import __version__, engine, rp_sql
from .errors import RWNError
from .identifiers import float_literal, quote_ident, quote_literal

METADATA_TABLE = "rwn_release_metadata"
TRIALS_TABLE = "rwn_release_trials"       # enforced releases: blocks per personal-group size (public)
TYPE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_ ]*(\(\d+(,\s*\d+)?\))?|ENUM\('(''|[^'])*'(, '(''|[^'])*')*\)")
METADATA_COLUMNS = """
    table_name VARCHAR, method VARCHAR, sensitive VARCHAR, sensitive_type VARCHAR, public VARCHAR[],
    p DOUBLE, domain VARCHAR[], m INTEGER, enforced BOOLEAN, epsilon DOUBLE, delta DOUBLE, test VARCHAR,
    rwn_columns VARCHAR[], rwn_k INTEGER, rwn_eps DOUBLE, rwn_q DOUBLE, rwn_scale VARCHAR,
    rows BIGINT, created_at TIMESTAMP, rwn_sql_version VARCHAR, suppressed_records BIGINT"""


@dataclass(frozen=True)
class ReleaseMeta:
    """The published parameters of one released table."""
    table_name: str
    sensitive: str
    sensitive_type: str
    public: tuple[str, ...]
    p: float
    domain: tuple[str, ...]
    method: str = "uniform_perturbation"
    enforced: bool = False
    epsilon: float | None = None
    delta: float | None = None
    test: str | None = None
    rwn: dict = field(default_factory=dict)
    trials_sql: str | None = None     # enforced releases: relation "<table> AS __rwn_tr" of (size, t)
    suppressed_records: int = 0       # records of groups without a design left out (suppress_small)

    @property
    def m(self) -> int:
        return len(self.domain)

    def domain_sql(self) -> str:
        return rp_sql.domain_literal(self.domain, self.sensitive_type)

    def p_sql(self) -> str:
        return float_literal(self.p)


def view_name(table: str, by: str | None = None) -> str:
    """`<table>_estimates` or `<table>_estimates_by_<column>` (non-word characters -> _)."""
    base = f"{table}_estimates" + (f"_by_{by}" if by else "")
    return re.sub(r"\W", "_", base)


def estimates_view_sql(meta: ReleaseMeta, by: str | None) -> str:
    """A view over the released table that reads p and the domain from the metadata table."""
    md = (f"(SELECT {{}} FROM {METADATA_TABLE} WHERE table_name = {quote_literal(meta.table_name)})")
    p_sql = md.format("p")
    domain_sql = f"CAST({md.format('domain')} AS {meta.sensitive_type}[])"
    design = (f"{TRIALS_TABLE} AS __rwn_tr", meta.public) if meta.enforced else None
    return rp_sql.estimates_sql(quote_ident(meta.table_name), meta.sensitive, p_sql, domain_sql,
                                (by,) if by else (), design=design)


def read_metadata(con: duckdb.DuckDBPyConnection, table: str | None = None, schema: str | None = None) -> ReleaseMeta:
    """The metadata of `table` (or of the only released table) in a release database."""
    prefix = f"{quote_ident(schema)}." if schema else ""
    try:
        rows = con.execute(f"SELECT table_name, sensitive, sensitive_type, public, p, domain, method, enforced, "
                           f"epsilon, delta, test FROM {prefix}{METADATA_TABLE}").fetchall()
    except duckdb.Error:
        raise RWNError(f"not a release database: it has no {METADATA_TABLE} table") from None
    if table is not None:
        rows = [r for r in rows if r[0].lower() == table.lower()]
        if not rows:
            raise RWNError(f"the release has no table {table!r}")
    if not rows:
        raise RWNError(f"the release database lists no table in {METADATA_TABLE}")
    if len(rows) > 1:
        raise RWNError(f"the release holds several tables ({', '.join(r[0] for r in rows)}); name one")
    r = rows[0]
    if not isinstance(r[2], str) or not TYPE_NAME.fullmatch(r[2]):   # it is printed into SQL as a type
        raise RWNError(f"the release's metadata gives the sensitive type {r[2]!r}, not a DuckDB type name")
    return ReleaseMeta(table_name=r[0], sensitive=r[1], sensitive_type=r[2], public=tuple(r[3]), p=r[4],
                       domain=tuple(r[5]), method=r[6], enforced=r[7], epsilon=r[8], delta=r[9], test=r[10],
                       trials_sql=f"{prefix}{TRIALS_TABLE} AS __rwn_tr" if r[7] else None)


def write_release(con: duckdb.DuckDBPyConnection, release_sql: str, path: str, meta: ReleaseMeta,
                  overwrite: bool = False, trials: dict[int, int] | None = None) -> int:
    """Write a standalone release database at `path`, atomically: built under a temporary
    name beside it and renamed when complete. Returns the number of released rows."""
    if engine.attached_database(con, path) is not None:
        raise RWNError(f"release database {path!r} is a database the input is read from; rwn_sql never "
                       f"overwrites its input (write a new release file)")
    if meta.table_name.lower() in (METADATA_TABLE, TRIALS_TABLE):
        raise RWNError(f"table name {meta.table_name!r} is reserved for the release's metadata; choose another")
    if os.path.exists(path) and not overwrite:
        raise RWNError(f"release database {path!r} already exists (use --overwrite to replace it)")
    with engine.scratch_dir(engine.output_folder(path)) as scratch:
        return _write_release(con, release_sql, path, meta, overwrite, trials,
                              os.path.join(scratch, f"release-{secrets.token_hex(4)}.duckdb"))


def _write_release(con, release_sql, path, meta, overwrite, trials, tmp) -> int:
    alias = "__rwn_release_" + secrets.token_hex(4)
    con.execute(f"ATTACH {quote_literal(tmp)} AS {quote_ident(alias)}").fetchall()
    try:
        target = f"{quote_ident(alias)}.{quote_ident(meta.table_name)}"
        rows = engine.run(con, f"CREATE TABLE {target} AS\n{release_sql}")[0][0]
        con.execute(f"CREATE TABLE {quote_ident(alias)}.{METADATA_TABLE} ({METADATA_COLUMNS})").fetchall()
        rwn = meta.rwn or {}
        con.execute(f"INSERT INTO {quote_ident(alias)}.{METADATA_TABLE} VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [meta.table_name, meta.method, meta.sensitive, meta.sensitive_type, list(meta.public),
                     meta.p, list(meta.domain), meta.m, meta.enforced, meta.epsilon, meta.delta, meta.test,
                     rwn.get("columns"), rwn.get("k"), rwn.get("eps"), rwn.get("q"), rwn.get("scale"),
                     rows, _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None), __version__,
                     meta.suppressed_records]).fetchall()
        if meta.enforced:
            con.execute(f"CREATE TABLE {quote_ident(alias)}.{TRIALS_TABLE} AS SELECT * FROM "
                        f"{rp_sql.trials_values(trials or {})}").fetchall()
        previous = con.execute("SELECT current_database(), current_schema()").fetchone()
        con.execute(f"USE {quote_ident(alias)}").fetchall()
        try:   # views are bound in the release database itself, so they name its tables only
            for by in (None,) + tuple(meta.public):
                con.execute(f"CREATE VIEW {quote_ident(view_name(meta.table_name, by))} AS\n"
                            f"{estimates_view_sql(meta, by)}").fetchall()
        finally:
            con.execute(f"USE {quote_ident(previous[0])}.{quote_ident(previous[1])}").fetchall()
        con.execute(f"DETACH {quote_ident(alias)}").fetchall()
        engine.publish(tmp, path, overwrite)
        return rows
    except BaseException:
        try:
            con.execute(f"DETACH {quote_ident(alias)}").fetchall()
        except duckdb.Error:
            pass
        raise
    finally:
        for leftover in (tmp, tmp + ".wal"):
            if os.path.exists(leftover):
                os.remove(leftover)
