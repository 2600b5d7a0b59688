"""The public Python API: a thin layer over the SQL builders and the engine."""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

import duckdb

from . import engine, sqlgen
from .backends import is_spark
from .errors import RWNError
from .identifiers import quote_ident
from .randomness import KEY_PLACEHOLDER, key_variable, resolve_key
from .spec import RWNSpec

__all__ = ["neighborhoods", "perturb", "perturb_statement", "donors", "check_pair_budget", "row_counts",
           "RowCounts"]

# Peak memory per neighbour pair while the neighbourhoods are built: the candidate pair rows,
# the grouped lists and their sorted and filtered copies. Measured about 120 bytes
# (benchmarks/bench_guards.py: tied data, 50k to 200k rows); 128 keeps a margin.
BYTES_PER_PAIR = 128
UNITS = {"bytes": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
         "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def _spec(columns, *, k, eps, q=1.0, scale, strata, categorical, weight, on_missing, drop=(), id=None) -> RWNSpec:
    try:
        return RWNSpec(columns=columns, categorical=categorical, k=k, eps=eps, q=q, scale=scale,
                       strata=strata, weight=weight, on_missing=on_missing, drop=drop, id=id)
    except (TypeError, ValueError) as exc:
        raise RWNError(str(exc)) from None


def _prepare(con, source, spec, guard: bool = True):
    src = engine.resolve_source(con, source)
    engine.check_columns(spec, src)
    _check_spans(con, src, spec)
    if guard:
        check_pair_budget(con, src, spec)
    return src


def _check_spans(con, src, spec) -> None:
    """Refuse a distance column whose range overflows a double before the statement runs: the
    statement checks it too, but DuckDB 1.4 raises its own overflow error from the column
    statistics first."""
    if not spec.numeric:
        return
    cols = [quote_ident(c) for c in spec.numeric]
    row = engine.run(con, "SELECT " + ", ".join(f"min({c}) FILTER (WHERE isfinite({c})), "
                                                  f"max({c}) FILTER (WHERE isfinite({c}))" for c in cols)
                     + f" FROM {src.sql}")[0]
    for i, c in enumerate(spec.numeric):
        lo, hi = row[2 * i], row[2 * i + 1]
        if lo is not None and not math.isfinite(float(hi) - float(lo)):
            raise RWNError(f"column {quote_ident(c)} spans {float(lo)!r} to {float(hi)!r}, too wide for "
                           f"double-precision distances; rescale it (e.g. divide it by a power of ten)")


def memory_limit_bytes(con) -> int:
    """DuckDB's memory_limit setting in bytes (physical memory when it cannot be read)."""
    text = str(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])
    m = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]+)\s*", text)
    if m and m.group(2).lower() in UNITS:
        return int(float(m.group(1)) * UNITS[m.group(2).lower()])
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_pair_budget(con, src, spec: RWNSpec) -> None:
    """Refuse, before any neighbourhood is built, data whose neighbourhoods cannot fit in the
    memory limit: a grouped pre-pass (sqlgen.pair_estimate_sql) bounds the number of
    neighbour pairs from below; every pair beyond the k per record that any run needs (that
    part spills to disk; tests/test_guards.py) costs about BYTES_PER_PAIR bytes."""
    try:
        pairs, records, largest, label = engine.run(con, sqlgen.pair_estimate_sql(src.sql, spec))[0]
    except duckdb.InterruptException:
        raise
    except duckdb.Error:
        return      # bad data: the neighbourhood statement itself reports it, with its message
    limit = memory_limit_bytes(con)
    if (pairs - records * spec.k) * BYTES_PER_PAIR <= limit:
        return
    within = (f"identical values of {', '.join(spec.columns)}" if spec.eps == 0
              else f"values within eps = {spec.eps:g} of each other")
    where = f" (stratum {label})" if spec.strata else ""
    raise RWNError(
        f"the neighbourhoods would hold at least {pairs:,} neighbour pairs (about "
        f"{pairs * BYTES_PER_PAIR / 1e9:,.1f} GB), more than the memory limit of {limit / 1e9:,.2f} GB "
        f"allows (about {limit // BYTES_PER_PAIR:,} pairs beyond the {spec.k} nearest per record): "
        f"{largest:,} records{where} share {within}, "
        f"so each has all the others in its neighbourhood. Remedies: eps = 0 with a "
        f"larger k if eps makes neighbourhoods large; more distance columns, or a little random "
        f"jitter on the values, to break exact ties; strata that split the largest groups; or a "
        f"higher memory limit (SET memory_limit / --memory-limit)")


def neighborhoods(con: duckdb.DuckDBPyConnection, source, columns, k: int = 5, eps: float = 0.0,
                  scale: str = "minmax", strata=(), categorical=(), weight: float = 1.0,
                  on_missing: str = "error", pairs: bool = False, sql: bool = False):
    """Exact RWN neighbourhoods of every record of `source`.

    Returns a DuckDB relation with one row per record: `record` (1-based input position),
    `size` = |S_i|, `radius` = max(eps, r_k) and `dcr` (distance to the closest other
    record, in scaled units). With pairs=True: (record, neighbor, distance) per member.
    With sql=True: the SQL text instead.
    """
    spec = _spec(columns, k=k, eps=eps, scale=scale, strata=strata, categorical=categorical,
                 weight=weight, on_missing=on_missing)
    src = _prepare(con, source, spec, guard=not sql)
    text = sqlgen.neighborhoods_sql(src.sql, spec, pairs=pairs)
    return text if sql else con.sql(text)


def perturb(con: duckdb.DuckDBPyConnection, source, columns, k: int = 5, eps: float = 0.0,
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
    in a session variable of `con`, never written into the SQL text.

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
    a DataFrame, the same rows (rwn_sql.spark_engine.perturb).
    """
    if is_spark(con):
        from . import spark_engine
        if into is not None or sql:
            raise RWNError("on Spark, perturb returns a DataFrame: write it with its own writer")
        return spark_engine.perturb(con, source, columns, k=k, eps=eps, q=q, scale=scale, strata=strata,
                                    categorical=categorical, weight=weight, on_missing=on_missing, drop=drop,
                                    key=key, seed=seed, order=order, id=id)
    text = perturb_statement(con, source, columns, k=k, eps=eps, q=q, scale=scale, strata=strata,
                             categorical=categorical, weight=weight, on_missing=on_missing, drop=drop,
                             key=key, seed=seed, show=sql, order=order, id=id)
    return text if sql else engine.deliver(con, text, into, replace)


def perturb_statement(con, source, columns, *, k, eps, q, scale, strata, categorical, weight,
                      on_missing, drop, key, seed, show: bool = False, order: str = "keyed",
                      key_ref=key_variable, id: str | None = None) -> str:
    """The SQL of a perturb call. show=True puts getvariable('rwn_key') where the key goes;
    else key_ref(con, key) gives the SQL that reads the key (never the key as a literal)."""
    if order not in sqlgen.ORDERS:
        raise RWNError(f"order must be one of {', '.join(sqlgen.ORDERS)}; got {order!r}")
    spec = _spec(columns, k=k, eps=eps, q=q, scale=scale, strata=strata, categorical=categorical,
                 weight=weight, on_missing=on_missing, drop=drop, id=id)
    try:
        the_key = resolve_key(key, seed)
    except (TypeError, ValueError) as exc:
        raise RWNError(str(exc)) from None
    src = _prepare(con, source, spec, guard=not show)
    return sqlgen.perturb_sql(src.sql, spec, KEY_PLACEHOLDER if show else key_ref(con, the_key), order=order)


def donors(con: duckdb.DuckDBPyConnection, source, columns, k: int = 5, eps: float = 0.0,
           q: float = 1.0, scale: str = "minmax", strata=(), categorical=(), weight: float = 1.0,
           on_missing: str = "error", key: str | None = None, seed: int | None = None,
           id: str | None = None):
    """Diagnostics for the data steward (never publish): per record and perturbed column,
    the donor record (the record itself when the cell was kept) and |S_i|. Same key,
    parameters and id as `perturb` give the donors that `perturb` used (records numbered by
    the rank of the id, else the input position). On a SparkSession: a DataFrame
    (rwn_sql.spark_engine.donors)."""
    if is_spark(con):
        from . import spark_engine
        return spark_engine.donors(con, source, columns, k=k, eps=eps, q=q, scale=scale, strata=strata,
                                   categorical=categorical, weight=weight, on_missing=on_missing, key=key,
                                   seed=seed, id=id)
    spec = _spec(columns, k=k, eps=eps, q=q, scale=scale, strata=strata, categorical=categorical,
                 weight=weight, on_missing=on_missing, id=id)
    if key is None and seed is None:
        raise RWNError("donors() needs the key or seed of the release it explains")
    the_key = resolve_key(key, seed)
    src = _prepare(con, source, spec)
    return con.sql(sqlgen.donors_sql(src.sql, spec, key_variable(con, the_key)))


@dataclass(frozen=True)
class RowCounts:
    """Rows of an input and of a release of it; `dropped` = rows the release left out."""
    rows_in: int
    rows_out: int

    @property
    def dropped(self) -> int:
        return self.rows_in - self.rows_out


def row_counts(con: duckdb.DuckDBPyConnection, source, release) -> RowCounts:
    """How many rows of `source` a release left out: on_missing='drop' in perturb, neighborhoods
    and donors, nulls='drop' or suppress_small in randomize. `release` is a table name (as given
    to into=) or the relation a call returned; a relation is run once more to count it, so for
    large data write the release with into= and count the table."""
    rows_in = engine.run(con, f"SELECT count(*) FROM {engine.resolve_source(con, source).sql}")[0][0]
    if isinstance(release, duckdb.DuckDBPyRelation):
        try:
            rows_out = release.aggregate("count(*)").fetchall()[0][0]
        except duckdb.Error as exc:
            raise engine.translate(exc) from None
    else:
        rows_out = engine.run(con, f"SELECT count(*) FROM {engine.resolve_source(con, release).sql}")[0][0]
    return RowCounts(rows_in, rows_out)
