"""Classical disclosure-control baselines the RWN paper compares against: rank swapping
and MDAV microaggregation, with the calling conventions of `rwn_sql.perturb`.

    rel = rank_swap(con, "people", ["Age", "Weight"], p_percent=15, key=my_secret)
    mdav(con, "people", ["Age", "Weight", "Height"], k=5, into="release")

Both return a DuckDB relation (every input row once, in input order, the other columns
unchanged), or create the table `into` in one statement. The sequential parts (the rank-swap
pairing, the MDAV grouping) run in Python/numpy on the chosen columns; the release itself is
built in DuckDB by joining the original rows to the computed permutation / groups by row
position, so column types of the other columns are preserved exactly.

Row positions: record i is the i-th row of `source` as DuckDB reads it (as everywhere in
rwn_sql). The source is read more than once (checks, the values for Python, the release),
so the release carries a fingerprint (count and XOR of hash(position, chosen values)) of
the rows the computation saw; if the source changes in between, or its row order is not
deterministic (for example a query with GROUP BY and no ORDER BY), reading the release
fails with "rwn_sql: ..." instead of giving a wrong release. Materialise such a source
into a table first.

`sql=True` is not supported: the release depends on values computed in Python.

Rank swapping (both variants, "simple" and sdcMicro's) lives in `rank_swapping` and is
re-exported here; the plumbing both baselines share (checks, staging, the guard) in
`baseline_sql`.
"""
from __future__ import annotations

import numpy as np

from ..engines import duckdb as engine, outputs
from ..engines.dialects import DUCKDB, require_duckdb
from ..errors import RWNError
from ..identifiers import quote_ident
from ..rwn.spec import MAX_COUNT, check_scale
from .baseline_sql import (RID, check_values, column_list, fetch, fingerprint, float_list, guard, int_list, no_sql,
                           resolve, staged)
# rank swapping lives in rank_swapping; its names stay importable from here
from .rank_swapping import (BATCHED_PAIRINGS, RANK_SWAP_PURPOSE, RANK_SWAP_VARIANTS, WINDOW_WALK_PER_BIT, _pairs,
                            _pairs_batched, _pairs_batched_window, check_rank_swap_inputs, rank_swap,
                            rank_swap_donors, rank_swap_pairs, rank_swap_statement, rank_swap_statements)

__all__ = ["check_mdav_inputs", "check_rank_swap_inputs", "mdav", "mdav_groups", "mdav_labels", "mdav_statement",
           "rank_swap", "rank_swap_donors", "rank_swap_pairs", "rank_swap_statement", "rank_swap_statements"]


# --------------------------------------------------------------------------------------
# MDAV microaggregation
# --------------------------------------------------------------------------------------

def _sqdist(Xt: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances of the columns of Xt (p x m) to the point v, summed over
    the coordinates in order."""
    d = Xt[0] - v[0]
    d *= d
    t = np.empty_like(d)
    for j in range(1, Xt.shape[0]):
        np.subtract(Xt[j], v[j], out=t)
        np.multiply(t, t, out=t)
        d += t
    return d


def _nearest(d: np.ndarray, centre: int, k: int) -> np.ndarray:
    """Indices of `centre` and the k-1 other entries with the smallest (d, index)."""
    d = d.copy()
    d[centre] = -1.0                                   # distances are >= 0: centre comes first
    if k >= len(d):
        return np.arange(len(d))
    t = np.partition(d, k - 1)[k - 1]
    below = np.flatnonzero(d < t)
    at = np.flatnonzero(d == t)[: k - len(below)]
    return np.concatenate([below, at])


def mdav_labels(X, k: int) -> np.ndarray:
    """MDAV groups of the rows of X (n x p, already scaled); see `mdav`. Returns the group
    label of every row, 0, 1, ... in the order the groups are formed."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    n = X.shape[0]
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
        raise RWNError(f"k must be an integer between 1 and the number of records ({n}), got {k!r}")
    labels = np.full(n, -1, dtype=np.int64)
    rest = np.arange(n)                                # remaining rows, ascending input position
    Xt = np.ascontiguousarray(X.T)                     # p x m: each coordinate contiguous
    group = 0

    def take(sel):
        nonlocal rest, Xt, group
        labels[rest[sel]] = group
        group += 1
        keep = np.ones(len(rest), dtype=bool)
        keep[sel] = False
        rest, Xt = rest[keep], np.compress(keep, Xt, axis=1)

    while len(rest) >= 3 * k:
        centroid = Xt.mean(axis=1)
        r = int(np.argmax(_sqdist(Xt, centroid)))      # argmax: first (lowest position) on ties
        d_r = _sqdist(Xt, Xt[:, r])
        sel = _nearest(d_r, r, k)
        keep = np.ones(len(rest), dtype=bool)
        keep[sel] = False
        s = int(np.argmax(d_r[keep]))                   # farthest from r among the others
        take(sel)
        take(_nearest(_sqdist(Xt, Xt[:, s]), s, k))
    if len(rest) >= 2 * k:
        centroid = Xt.mean(axis=1)
        r = int(np.argmax(_sqdist(Xt, centroid)))
        take(_nearest(_sqdist(Xt, Xt[:, r]), r, k))
    if len(rest):
        take(np.arange(len(rest)))
    return labels


def _scaled(X: np.ndarray, scale: str) -> np.ndarray:
    if scale == "none":
        return X.copy()
    if scale == "minmax":
        lo, span = X.min(axis=0), X.max(axis=0) - X.min(axis=0)
        return np.where(span > 0, (X - lo) / np.where(span > 0, span, 1.0), 0.0)
    mean = X.mean(axis=0)
    sd = X.std(axis=0, ddof=1) if len(X) > 1 else np.zeros(X.shape[1])
    return np.where(sd > 0, (X - mean) / np.where(sd > 0, sd, 1.0), 0.0)


def check_mdav_inputs(con, source, columns, group_sizes, scale: str, name: str = "k"):
    """MDAV's inputs checked, before any grouping (RWNError): the columns (named once, numeric,
    without NULL, NaN or infinite values), `scale`, and every group size of `group_sizes` an
    integer from 2 to the number of records (`name`: how the messages call it). Returns
    (src, columns, n). mdav and tune.sweep (name "MDAV's k") check with it."""
    columns = column_list(columns)
    check_scale(scale)
    for k in group_sizes:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise RWNError(f"{name} must be an integer >= 2, got {k!r}")
        if not 2 <= k <= MAX_COUNT:
            raise RWNError(f"{name} must be >= 2 (groups of at least k records; at most {MAX_COUNT}), got {k}")
    src = resolve(con, source, columns, "MDAV", lambda t: bool(engine.NUMERIC_TYPES.match(t)),
                   "a numeric column")
    n = check_values(con, src, columns, "MDAV", finite=True)
    for k in group_sizes:
        if k > n:
            raise RWNError(f"{name} = {k} is larger than the number of records ({n}) in {src.label}")
    return src, columns, n


def _mdav_plan(con, source, columns, k, scale):
    src, columns, n = check_mdav_inputs(con, source, columns, [k], scale)
    values = ", ".join(f"CAST({quote_ident(c)} AS DOUBLE) AS x_{i}" for i, c in enumerate(columns))
    text = (f"WITH {staged(src)}\nSELECT {RID} AS rid, {values}, {fingerprint(columns)} OVER () AS fp\n"
            f"FROM staged ORDER BY {RID}")
    data = fetch(con, text)
    rid = np.asarray(data["rid"], dtype=np.int64)
    if len(rid) != n or not np.array_equal(rid, np.arange(1, n + 1)):
        raise RWNError(f"the rows of {src.label} changed between reads; create a table from it first")
    X = np.column_stack([np.asarray(data[f"x_{i}"], dtype=np.float64) for i in range(len(columns))])
    Xs = _scaled(X, scale)
    if not np.isfinite(Xs).all() or not np.isfinite(Xs.max(axis=0) - Xs.min(axis=0)).all():
        raise RWNError("the scaled values are too large for double-precision distances; "
                       "use scale='minmax' or 'zscore'")
    labels = mdav_labels(Xs, int(k))
    return src, columns, n, int(data["fp"][0]), X, labels


def _group_means(X: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Mean of every group (rows of the result in label order), summed in input order."""
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    starts = np.flatnonzero(np.r_[True, sorted_labels[1:] != sorted_labels[:-1]])
    sums = np.add.reduceat(X[order], starts, axis=0)
    counts = np.diff(np.r_[starts, len(labels)])
    return sums / counts[:, None]


def mdav(con: engine.Connection, source, columns, k: int, scale: str = "minmax",
         into: str | None = None, replace: bool = False, sql: bool = False):
    """MDAV microaggregation (Maximum Distance to Average Vector; Domingo-Ferrer and
    Mateo-Sanz 2002, the fixed-size variant of sdcMicro / mu-Argus).

    Distances are Euclidean over `columns` scaled over all records: `minmax` (default,
    (x - min) / (max - min)), `zscore` ((x - mean) / sample sd) or `none`; a constant column
    scales to 0. With R the set of remaining records (initially all), and every tie broken
    towards the lowest input position:
      while |R| >= 3k:
        c = mean of R; r = the record of R farthest from c;
        G_r = r and the k-1 records of R nearest to r; s = the record of R \\ G_r farthest
        from r (= the farthest record from r in R whenever that one is unique);
        remove G_r; G_s = s and the k-1 records of R nearest to s; remove G_s;
      if 2k <= |R| <= 3k-1: c, r as above, one group of r and its k-1 nearest, removed;
      the remaining records (k..2k-1 of them, or all n if n < 2k) form the last group.
    Every group has k records except the last, which has k..2k-1.

    Each record's values in `columns` are replaced by its group's mean of the ORIGINAL
    (unscaled) values, so every released column is DOUBLE and column means are preserved
    (up to rounding). Other columns pass through unchanged; every input row once, in input
    order. Deterministic: no randomness. Columns must be numeric, without NULL, NaN or
    infinite values; 2 <= k <= n. Time O(n^2 p / k) in numpy.

    Returns a DuckDB relation, or None when `into` names a table to create (one CREATE TABLE
    ... AS statement: an error leaves no table). sql=True is not supported.
    """
    require_duckdb(con, "mdav")
    no_sql(sql, "mdav")
    return outputs.deliver(con, mdav_statement(con, source, columns, k, scale=scale), into, replace, row_order="input")


def mdav_statement(con: engine.Connection, source, columns, k: int,
                   scale: str = "minmax") -> str:
    """The SELECT statement of an `mdav` release (same arguments), for writers such as
    `outputs.write_output`. It embeds the group of every record and the group means."""
    src, columns, n, fp, X, labels = _mdav_plan(con, source, columns, k, scale)
    means = _group_means(X, labels)
    guard_cte, guard_ok = guard(src, columns, n, fp)
    agg = ", ".join(f"unnest(string_split({float_list(means[:, i])}, ','))::DOUBLE AS m_{i}"
                    for i in range(len(columns)))
    replaced = [(f"a.m_{i}", quote_ident(c)) for i, c in enumerate(columns)]
    return (f"WITH {staged(src)},\n"
            f"grp AS (\n    SELECT unnest(range(1, {n + 1})) AS rid, "
            f"unnest(string_split({int_list(labels)}, ','))::BIGINT AS g\n),\n"
            f"agg AS (\n    SELECT unnest(range(0, {len(means)})) AS g, {agg}\n),\n{guard_cte}\n"
            f"SELECT {DUCKDB.star('s', (RID,), replaced)}\n"
            f"FROM staged s\nJOIN grp ON grp.rid = s.{RID}\nJOIN agg a ON a.g = grp.g\nCROSS JOIN guard\n"
            f"WHERE {guard_ok}\nORDER BY s.{RID}")


def mdav_groups(con: engine.Connection, source, columns, k: int,
                scale: str = "minmax") -> np.ndarray:
    """The MDAV group label of every record (input order; labels 0, 1, ... in the order the
    groups are formed), as used by `mdav` with the same arguments."""
    return _mdav_plan(con, source, columns, k, scale)[5]
