"""The public Python API of RWN: a thin layer over rwn_sql.rwn.run, on a DuckDB connection or a SparkSession."""
from __future__ import annotations

from dataclasses import dataclass

from .. import limits
from ..engines import duckdb as engine, sources
from . import run as rwn
from ..engines.backend import Session, backend_for
from ..errors import RWNError
from ..randomness import KEY_PLACEHOLDER, key_scope, resolve_key
from .spec import RWNSpec

__all__ = ["neighborhoods", "perturb", "perturb_statement", "donors", "check_pair_budget", "row_counts",
           "RowCounts", "forget_keys"]

def _spec(columns, *, k, eps, q=1.0, scale, strata, categorical, weight, on_missing, drop=(), id=None) -> RWNSpec:
    return rwn.spec(columns, categorical=categorical, k=k, eps=eps, q=q, scale=scale, strata=strata,
                    weight=weight, on_missing=on_missing, drop=drop, id=id)


def check_pair_budget(con, src, spec: RWNSpec) -> None:
    """Refuse data whose neighbourhoods cannot fit in the memory limit (rwn_sql.rwn.check_pair_budget)."""
    rwn.check_pair_budget(backend_for(con), src, spec)


def neighborhoods(con: Session, source, columns, k: int = 5, eps: float = 0.0,
                  scale: str = "minmax", strata=(), categorical=(), weight: float = 1.0,
                  on_missing: str = "error", pairs: bool = False, sql: bool = False, id: str | None = None):
    """Exact RWN neighbourhoods of every record of `source`.

    Returns a DuckDB relation with one row per record: `record` (1-based input position, or
    the rank of the id column `id`), `size` = |S_i|, `radius` = max(eps, r_k) and `dcr`
    (distance to the closest other record, in scaled units). With pairs=True: (record,
    neighbor, distance) per member. With sql=True: the SQL text instead. On a SparkSession
    (id= required): a DataFrame with the same rows.
    """
    be = backend_for(con)
    spec = _spec(columns, k=k, eps=eps, scale=scale, strata=strata, categorical=categorical,
                 weight=weight, on_missing=on_missing, id=id)
    src = rwn.check_source(be, source, spec, guard=not sql)
    if sql:
        return rwn.script(be, src, spec, "neighborhoods", pairs=pairs)
    if pairs:               # one row per pair: every member listed, none counted
        rwn.listed_pairs_budget(be, src, spec, limits.current().BYTES_PER_PAIR, "neighborhoods(pairs=True)")
    return rwn.deliver(be, rwn.prepare(be, src, spec, "neighborhoods", pairs=pairs))


def perturb(con: Session, source, columns, k: int = 5, eps: float = 0.0,
            q: float = 1.0, scale: str = "minmax", strata=(), categorical=(), weight: float = 1.0,
            on_missing: str = "error", drop=(), key: str | None = None, seed: int | None = None,
            into: str | None = None, replace: bool = False, sql: bool = False, order: str = "keyed",
            id: str | None = None):
    """Randomization Within Neighborhoods.

    Every input row appears once; each cell of `columns` is, with
    probability q, replaced by the same column of a neighbour drawn uniformly from S_i
    (a fresh draw per column), else kept. Other columns pass through unchanged, except
    those in `drop`. Column types are preserved.

    Randomness: `key` (a secret string) makes the release reproducible; without key and
    seed a fresh 256-bit key is drawn from the operating system and never stored.
    `seed` is for experiments only: anyone who knows it can redo the draws. The key is held
    in a TEMP table of `con` and read by a scan, never written into the SQL text or its plans
    (see the docs, design/randomness.md).

    Row order: order='keyed' (default) writes the rows in an order drawn by the keyed hash, so
    it reveals nothing about the input order (a sorted input would otherwise leak through
    it); order='input' keeps the input order, for experiments that pair records by position.

    Record identity: id= names a unique integer or text column (no NULL) whose value keys
    every draw and the row order, and whose rank numbers the records (ties in distance are
    broken by it): the release is then the same whatever the input order. It passes through
    like any other unperturbed column. Without it the record is its input position.

    Returns a DuckDB relation (problems in the data, such as NULLs or a stratum smaller
    than k + 1, raise duckdb.InvalidInputException "rwn_sql: ..." when it is first
    fetched), or None when `into` names a table to create: that runs at once, in one
    statement, so an error or interrupt leaves no table, and data problems raise RWNError.
    With sql=True returns the SQL text, with the key shown as getvariable('rwn_key').
    How many rows on_missing='drop' left out: row_counts(con, source, <table or relation>).
    On a SparkSession (with a table name, DataFrame or .csv/.parquet path, and id= required):
    a DataFrame with the same rows, or with into= a .parquet path written atomically; sql=True
    gives every step the engine runs.
    """
    be = backend_for(con)
    spec = _spec(columns, k=k, eps=eps, q=q, scale=scale, strata=strata, categorical=categorical,
                 weight=weight, on_missing=on_missing, drop=drop, id=id)
    the_key = resolve_key(key, seed)
    be.check_into(into)
    src = rwn.check_source(be, source, spec, guard=not sql)
    if sql:
        return rwn.script(be, src, spec, "perturb", order=order)
    with key_scope(be, lasting=into is None):     # with into=, the key is gone once the table is written
        key_sql = be.key_sql(the_key)
        return rwn.deliver(be, rwn.prepare(be, src, spec, "perturb", key_sql, order=order), into, replace)


def perturb_statement(con, source, columns, *, k, eps, q, scale, strata, categorical, weight,
                      on_missing, drop, key, seed, show: bool = False, order: str = "keyed",
                      key_ref=None, id: str | None = None) -> str:
    """The SQL of a perturb call as one statement (an engine with recursive CTEs: DuckDB).
    show=True puts getvariable('rwn_key') where the key goes; else key_ref(con, key) (by
    default the backend's key_sql) gives the SQL that reads the key (never the key as a literal)."""
    be = backend_for(con)
    spec = _spec(columns, k=k, eps=eps, q=q, scale=scale, strata=strata, categorical=categorical,
                 weight=weight, on_missing=on_missing, drop=drop, id=id)
    the_key = resolve_key(key, seed)
    src = rwn.check_source(be, source, spec, guard=not show)
    key_sql = KEY_PLACEHOLDER if show else key_ref(con, the_key) if key_ref else be.key_sql(the_key)
    return rwn.prepare(be, src, spec, "perturb", key_sql, order=order).sql


def donors(con: Session, source, columns, k: int = 5, eps: float = 0.0,
           q: float = 1.0, scale: str = "minmax", strata=(), categorical=(), weight: float = 1.0,
           on_missing: str = "error", key: str | None = None, seed: int | None = None,
           id: str | None = None):
    """Diagnostics for the data steward (never publish): per record and perturbed column,
    the donor record (the record itself when the cell was kept) and |S_i|. Same key,
    parameters and id as `perturb` give the donors that `perturb` used (records numbered by
    the rank of the id, else the input position). On a SparkSession: a DataFrame."""
    be = backend_for(con)
    spec = _spec(columns, k=k, eps=eps, q=q, scale=scale, strata=strata, categorical=categorical,
                 weight=weight, on_missing=on_missing, id=id)
    if key is None and seed is None:
        raise RWNError("donors() needs the key or seed of the release it explains")
    src = rwn.check_source(be, source, spec)
    with key_scope(be, lasting=True):
        key_sql = be.key_sql(resolve_key(key, seed))
        return rwn.deliver(be, rwn.prepare(be, src, spec, "donors", key_sql))


@dataclass(frozen=True)
class RowCounts:
    """Rows of an input and of a release of it; `dropped` = rows the release left out."""
    rows_in: int
    rows_out: int

    @property
    def dropped(self) -> int:
        return self.rows_in - self.rows_out


def row_counts(con: engine.Connection, source, release) -> RowCounts:
    """How many rows of `source` a release left out: on_missing='drop' in perturb, neighborhoods
    and donors, nulls='drop' or suppress_small in randomize. `release` is a table name (as given
    to into=) or the relation a call returned; a relation is run once more to count it, so for
    large data write the release with into= and count the table."""
    rows_in = engine.run(con, f"SELECT count(*) FROM {sources.resolve_source(con, source).sql}")[0][0]
    if isinstance(release, engine.Relation):
        try:
            rows_out = release.aggregate("count(*)").fetchall()[0][0]
        except engine.Error as exc:
            raise engine.translate(exc) from None
    else:
        rows_out = engine.run(con, f"SELECT count(*) FROM {sources.resolve_source(con, release).sql}")[0][0]
    return RowCounts(rows_in, rows_out)


def forget_keys(con: Session) -> None:
    """Remove every key that rwn_sql stored on `con` (a DuckDB connection or a SparkSession) for
    the lazy relations it returned (one per distinct key) and for the SQL macros. Those
    relations, and views made from them, then fail ("the key of this statement is not set")
    instead of running: call it once the releases are written."""
    backend_for(con).forget_keys(None)
