"""Utility and disclosure-risk measures: original data against a release.

    ev = evaluate(con, "people", "release.parquet", ["Age", "Weight", "Height"], target="Weight")
    ev.utility.corr_mad, ev.risk.linkage_rate
    ev.to_dict(); ev.to_json("evaluation.json")

Row i of the release must correspond to row i of the original (RWN keeps every row, in input
order). The measures are those of docs/METHODS.md section 1 ("Measures the paper's experiments
use"). Numeric columns are the `columns` not listed in `categorical`; they must have numeric
types in both data sets. Each measure's exact definition:

Utility
* ``corr_mad``: mean over the pairs i < j of numeric columns of |r_ij(original) - r_ij(released)|,
  r = Pearson correlation. Needs >= 2 numeric columns (else None); NaN (null in JSON) if a
  released column is constant.
* PCA: both data sets are standardized with the ORIGINAL column means and sample standard
  deviations (ddof=1); the principal components are the eigenvectors of each data set's sample
  covariance matrix (ddof=1, so each is centred on its own mean) of those standardized values.
  ``pca_loadings``: the unit eigenvectors of PC1 and PC2. The original's sign is fixed so that
  its largest-magnitude entry is positive; a released vector is negated when its dot product
  with the original's is negative. ``pca_loading_mad``: mean of |loading difference| over the
  2 x p entries. ``pca_variance_share``: eigenvalue / sum of all eigenvalues, for PC1 and PC2.
  Needs >= 2 numeric columns (else None).
* ``ols`` (only with `target`): least squares of `target` on an intercept and the OTHER numeric
  columns (categorical columns are not regressors), on each data set. Standard errors
  sqrt(diag(s^2 (X'X)^-1)) with s^2 = RSS / (n - p), p = number of coefficients; R^2 =
  1 - RSS / TSS; 95% confidence intervals beta +- t * se with t the 0.975 quantile of Student's
  t with n - p degrees of freedom (scipy.special.stdtrit, as scipy.stats.t.ppf). ``ci_overlap`` per
  coefficient is Karr et al.'s (2006) measure
  0.5 * (|I_o n I_r| / |I_o| + |I_o n I_r| / |I_r|), 0 when the intervals are disjoint;
  ``ci_overlap_mean`` averages it over the coefficients, intercept included.
* ``cooks_max``: the largest Cook's distance D_i = e_i^2 / (p s^2) * h_ii / (1 - h_ii)^2 of
  the OLS fit on the original and on the released data (only with `target`).
* ``ks``: per numeric column, the two-sample Kolmogorov-Smirnov statistic
  D = max_x |F_original(x) - F_released(x)| (empirical CDFs; as scipy's ks_2samp statistic).
* ``tv``: per categorical column, the total variation distance
  0.5 * sum_v |P_original(v) - P_released(v)|. Values are compared as text (CAST AS VARCHAR);
  NULL is a category of its own.
* ``multi_information``: over the categorical columns, sum of the marginal entropies minus the
  joint entropy (plug-in estimates, natural log, so in nats), for each data set. Needs >= 2
  categorical columns (else None).

Risk (numeric columns are min-max scaled with the ORIGINAL minimum and maximum; a categorical
column adds 1 to the squared distance when its values differ, as RWN's default weight w = 1)
* ``dcr_mean``: mean over ORIGINAL records of the Euclidean distance to the closest RELEASED
  record (any record, its own release included).
* ``linkage_rate``: share of RELEASED records whose nearest ORIGINAL record is their own source
  (row i of the original for released row i). Tie rule: a released record counts as linked when
  its source is AMONG the nearest originals (distance equal to the minimum), i.e. an attacker
  who guesses among tied candidates is credited with the right one: an upper bound on the
  success of nearest-neighbour linkage. ``linkage_rate_expected`` instead credits a linked
  record with 1 / (number of originals at the minimum distance): the expected rate of an
  attacker who breaks ties at random (equal to linkage_rate when there are no ties).
* ``sdid``: share of records i whose original values ALL lie within
  [released_ic - k * sd_c, released_ic + k * sd_c] for every numeric column c, with sd_c the
  ORIGINAL column's sample standard deviation (ddof=1) and k = `sdid_k` (default 1), following
  sdcMicro's ``dRisk`` (method SDID of Mateo-Sanz, Sebe and Domingo-Ferrer, PSD 2004).
  sdcMicro's own ``dRiskWORK`` differs in three details: sd from the PERTURBED data, default
  k = 0.05, and a record counts when AT MOST ONE of its columns lies outside its interval;
  that exact rule, with the same k, is reported as ``sdid_sdcmicro``.
* ``unique_survival``: among original records unique on the chosen columns (their exact
  combination of values occurs once in the original), the share whose exact combination
  appears in at least one released record. None when the original has no unique records;
  ``unique_records`` is their number. Numeric values are compared as DOUBLE (integers beyond
  2^53 lose precision), categorical ones as text.

Cost: the two nearest-neighbour searches (dcr, linkage) run over the distinct records
(duplicates searched once, counted with their multiplicity) with scipy's cKDTree on the numeric
columns, searched within one combination of categorical values at a time (within one, every
distance has the same mismatch count): one tree per combination when there are at most 64,
else one tree in which the combinations lie apart along an extra coordinate. Trees only
propose candidates: the distances that decide a minimum are recomputed exactly, column by
column, and every record within a 1e-9 relative allowance of the minimum is rechecked, so zero
distances and ties are exact (a tie is exact floating-point equality of distances computed in
the same order). Records whose nearest neighbour is a mismatch away are searched in the
combinations 1, 2, ... mismatches away while the best distance so far still reaches them (a
blocked brute force takes those records instead when that would be cheaper); searches of at
most SMALL_SEARCH pairs, or against at most SMALL_REFERENCE records, are a blocked brute force.
evaluate_replicates evaluates the releases of a setting together (tune's sweeps): every measure
in one numpy pass over all of them, their linkage searches in one search; per release the
numbers are evaluate()'s (risk exactly, utility up to the last bit of numpy's reductions).
Measured with benchmarks/bench_tune.py on 2 cores shared with a load average of 10 to 15,
100,000 rows: 12 independent normal columns + 1 category 9 to 10.5 s wall, 4.1 s of CPU;
adult-like, 6 numeric + 7 categorical columns (thousands of combinations), 6.2 to 8.6 s wall,
3.0 to 4.0 s of CPU (the code before the grouped tree and the level search: 12 s of CPU).
Everything else is O(n log n) or O(n p^2).
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
from dataclasses import dataclass
from typing import Any

import duckdb
import numpy as np
from scipy import special
from scipy.spatial import cKDTree

from ..engines import duckdb as engine
from ..rwn import run as rwn, sqlgen
from ..engines.dialects import require_duckdb
from ..engines.duckdb import NUMERIC_TYPES, Source, resolve_source
from ..errors import RWNError
from ..identifiers import quote_ident
from ..randomness import key_scope

__all__ = ["Evaluation", "OLSComparison", "Pair", "Risk", "Utility", "ci_overlap", "evaluate", "evaluate_replicates",
           "t_quantile"]

MISMATCH_COST = 1.0                # squared distance added by a categorical mismatch (RWN's w = 1)
SMALL_SEARCH = 250_000             # at most this many pairs: blocked brute force, no trees
SMALL_REFERENCE = 512              # nor against at most this many reference rows (tune: many releases' queries)
CACHED_ELEMENTS = 65_536           # the brute force's blocks when the reference is small: they stay in cache
FEW_GROUPS = 64                    # at most this many category combinations: one k-d tree each
GROUP_QUERY_COST = 1500           # a bounded k-d tree query (~1.5 us) against one brute-force element (~1 ns)
CHUNK_ELEMENTS = 4_000_000         # distances held at once by the blocked brute force
ONEHOT_LEVELS = 64                 # in the brute force, columns with more levels are compared directly
TREE_SLACK = 1e-9                  # relative allowance for the tree's rounding (actual: ~1e-15)
TREE_FLOOR = 1e-300                # absolute allowance, for squared distances that underflow
TREE_BATCH = 128                   # queries per bounded second-neighbour search (similar radii)
BATCH_ELEMENTS = 4_000_000         # evaluate_replicates: releases evaluated together, values at once
INTERCEPT = "(Intercept)"


# ----------------------------------------------------------------------------- result types

@dataclass(frozen=True)
class Pair:
    """One statistic on the original and on the released data."""
    original: Any
    released: Any


@dataclass(frozen=True)
class OLSComparison:
    """OLS of `target` on an intercept and `terms[1:]`, fitted on both data sets."""
    target: str
    terms: tuple[str, ...]                 # "(Intercept)" first, then the regressors
    df: int                                # residual degrees of freedom n - p
    critical_value: float                  # Student t 0.975 quantile with df degrees of freedom
    coefficients: Pair                     # each {term: beta}
    std_errors: Pair                       # each {term: se}
    ci: Pair                               # each {term: [low, high]}
    r2: Pair
    coef_abs_diff: dict[str, float]        # |beta_original - beta_released| per term
    ci_overlap: dict[str, float]           # Karr et al. overlap per term
    ci_overlap_mean: float


@dataclass(frozen=True)
class Utility:
    corr_mad: float | None
    pca_loading_mad: float | None
    pca_variance_share: Pair | None        # each {"PC1": share, "PC2": share}
    pca_loadings: Pair | None              # each {"PC1": {column: loading}, "PC2": {...}}
    ols: OLSComparison | None
    cooks_max: Pair | None
    ks: dict[str, float]                   # numeric columns
    tv: dict[str, float]                   # categorical columns
    multi_information: Pair | None         # nats


@dataclass(frozen=True)
class Risk:
    dcr_mean: float
    linkage_rate: float                    # ties count as linked
    linkage_rate_expected: float           # a random pick among tied nearest: 1 / (number tied)
    sdid: float | None                     # None without numeric columns
    sdid_sdcmicro: float | None
    unique_survival: float | None          # None when no original record is unique
    unique_records: int


@dataclass(frozen=True)
class Evaluation:
    """Original against released data; see the module docstring for each definition."""
    original: str                          # how the sources were named (labels)
    released: str
    rows: int
    columns: tuple[str, ...]
    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    target: str | None
    sdid_k: float
    utility: Utility
    risk: Risk
    paired_by: str = "position"            # "position", or the id column
    dropped: int = 0                       # original records without a released record (id pairing)

    def to_dict(self) -> dict:
        """Plain dicts, lists, str, int, float and None; NaN and infinities become None."""
        return _plain(dataclasses.asdict(self))

    def to_json(self, path=None, indent: int | None = 2) -> str:
        """The JSON text of to_dict(); also written to `path` (UTF-8) when given."""
        text = json.dumps(self.to_dict(), indent=indent, allow_nan=False)
        if path is not None:       # written under a temporary name, then renamed: never half a file
            target = os.fspath(path)
            tmp = f"{target}.{os.getpid()}.tmp"
            try:
                with open(tmp, "w", encoding="utf-8") as fh:
                    fh.write(text + "\n")
                os.replace(tmp, target)
            finally:
                if os.path.exists(tmp):
                    os.remove(tmp)
        return text


def _plain(value):
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    return value


# ----------------------------------------------------------------------------- entry point

def evaluate(con: duckdb.DuckDBPyConnection, original, released, columns, target: str | None = None,
             categorical=(), sdid_k: float = 1.0, id: str | None = None, key: str | None = None,
             seed: int | None = None, order: str | None = None) -> Evaluation:
    """Compare `released` with `original` (each a table/view name, a SQL query, a CSV/Parquet
    path or 'file.duckdb:table') on `columns`.

    Pairing (the risk measures compare each original record with its own release, so a wrong
    pairing understates them while the utility, order-free, looks right):
    * `id`: a column in both whose values identify the records (unique in each);
    * `key` (or `seed`): the key of a release perturb wrote in its default keyed order (without
      id=): the keyed order of the original's records is recomputed and the rows paired exactly;
    * by position, row i with row i: only for a release recorded as written in input order
      (perturb(order='input', into=...), `--keep-order`, to Parquet or a DuckDB table), or with
      order='input' for one that cannot record it (a CSV file, a query, a relation).
    Any other release is refused (RWNError): one in keyed order, or one not known to be in
    input order. A release with fewer rows (on_missing='drop') leaves the original records
    without a release out and counts them in `dropped`; by the key or by position, those
    are the records with a missing value (NULL, NaN or inf; NULL for categorical) in
    `columns`, as perturb drops them when `columns` are its columns.

    `categorical`: columns among `columns` compared as categories (any type); the others must
    be numeric in both. `target`: a numeric column among `columns` to regress on the other
    numeric columns (OLS, CI overlap, Cook's distance). `sdid_k`: interval half-width in
    original standard deviations for the SDID risk. Raises RWNError on bad input.
    """
    require_duckdb(con, "evaluate")
    columns, categorical, numeric = _check_parameters(columns, categorical, target)
    sdid_k = _check_sdid_k(sdid_k)

    src_o = resolve_source(con, original)
    src_r = resolve_source(con, released)
    if id is not None and (not isinstance(id, str) or id in columns):
        raise RWNError(f"id must be a column name not among columns, got {id!r}")
    by_key = key is not None or seed is not None
    if order is not None and order != "input":
        raise RWNError(f"order must be 'input' (the release is in input order) or left out, got {order!r}")
    if (id is not None) + by_key + (order is not None) > 1:
        raise RWNError("give one way to pair the records: id= (--id), key= or seed= (--key-file, --seed), or "
                       "order='input' (--input-order)")
    the_key = rwn.the_key(key, seed) if by_key else None
    for role, src in (("original", src_o), ("released", src_r)):
        _check_columns(src, role, columns, numeric)
        if id is not None:
            engine.require_columns(src, [id], "id", where=f"the {role} data, {src.label}")
    if id is None:
        _check_pairing(src_r, engine.recorded_row_order(con, released), by_key, order)
    xo, co, n, null_o = _read(con, src_o, "original", numeric, categorical, checked=False)
    xr, cr, n_r = _read(con, src_r, "released", numeric, categorical)
    if n == 0:
        raise RWNError(f"the original data ({src_o.label}) has no rows")
    dropped, paired_by = 0, "position"
    if id is not None or by_key or n_r < n:
        if id is not None:
            keep_o, keep_r = _pair_by_id(con, src_o, src_r, id)
            paired_by = id
        elif by_key:
            keep_o, keep_r = _pair_by_key(con, src_o, src_r, columns, categorical, the_key, n, n_r)
            paired_by = KEYED_ORDER
        else:
            keep_o, keep_r = _pair_in_input_order(con, src_o, src_r, columns, categorical, n, n_r)
        dropped = n - len(keep_o)
        xo, xr = xo[keep_o], xr[keep_r]
        co = [(index[keep_o], values) for index, values in co]
        cr = [(index[keep_r], values) for index, values in cr]
        _check_values(xo, null_o[keep_o], numeric, "original", rows=keep_o)
        n = n_r = len(keep_o)
    else:
        _check_values(xo, null_o, numeric, "original")
    if n_r != n:
        raise RWNError(f"the released data ({src_r.label}) has {n_r} rows but the original "
                       f"({src_o.label}) has {n}: row i of the release must be the release of row i "
                       f"of the original, or pass id= to pair records by an id column")
    original_data = _checked_original(xo, co, n, numeric)
    return _measures(original_data, xr, cr, src_o.label, src_r.label, columns, numeric, categorical, target,
                     sdid_k, paired_by=paired_by, dropped=dropped)


KEYED_ORDER = "keyed order"        # Evaluation.paired_by of a release paired by its key


def _check_pairing(src_r: Source, recorded: str | None, by_key: bool, order: str | None) -> None:
    """Refuse a pairing that contradicts the row order recorded with the release, and position
    pairing of a release not known to be in input order."""
    if by_key and recorded == "input":
        raise RWNError(f"the released data ({src_r.label}) records that it is in input order: it is paired by "
                       f"position; leave key= / seed= (--key-file / --seed) out")
    if order == "input" and recorded == "keyed":
        raise RWNError(f"the released data ({src_r.label}) records that it is in keyed order, not input order: "
                       f"pair it by its key (key= / --key-file, seed= / --seed) or by an id column (id= / --id)")
    if by_key or order == "input" or recorded == "input":
        return
    state = ("is in keyed order (perturb's default: an order drawn by the key)" if recorded == "keyed" else
             "is not known to be in input order (a CSV file, a query, a view or a relation records no row order)")
    raise RWNError(f"the released data ({src_r.label}) {state}: paired by position, each original record would be "
                   f"compared with another record's release and the risk understated. Pair the records by an "
                   f"id column in both (id= / --id), by the release's key (key= or seed= / --key-file or --seed), "
                   f"or write the release in input order (order='input' / --keep-order); a release so written to "
                   f"a CSV file (which records no order) is evaluated with order='input' (--input-order)")


def _pair_in_input_order(con, src_o: Source, src_r: Source, columns, categorical, n: int, n_r: int):
    """Row indices (original, released) of an input-order release with fewer rows than the
    original (on_missing='drop'): the original's records perturb keeps, in input order, paired
    by position with the release's rows."""
    spec = rwn.spec(columns, categorical=categorical, on_missing="drop")
    rows = engine.DuckDBBackend(con).rows(sqlgen.kept_positions_sql(src_o.sql, spec))
    if len(rows) != n_r:
        raise RWNError(f"the released data ({src_r.label}) has {n_r} rows but the original ({src_o.label}) has {n}, "
                       f"{len(rows)} of them with a value in every one of columns (the records on_missing='drop' "
                       f"(--on-missing drop) keeps): row i of the release must be the release of the i-th such "
                       f"record, or pass id= (--id) to pair records by an id column")
    return np.fromiter((r[0] for r in rows), np.int64, len(rows)) - 1, np.arange(n_r)


def _pair_by_key(con, src_o: Source, src_r: Source, columns, categorical, the_key: str, n: int, n_r: int):
    """Row indices (original, released) of a keyed-order release paired through its key: the
    original's records in the order perturb (no id=) wrote their releases (sqlgen's keyed order,
    over the records its drop filter keeps when the release has fewer rows), sorted back into
    original order as _pair_by_id sorts them."""
    be = engine.DuckDBBackend(con)
    spec = rwn.spec(columns, categorical=categorical, on_missing="drop" if n_r < n else "error")
    with key_scope(be, lasting=False):
        rows = be.rows(sqlgen.keyed_positions_sql(src_o.sql, spec, be.key_sql(the_key)))
    if len(rows) != n_r:
        raise RWNError(f"the released data ({src_r.label}) has {n_r} rows but the original ({src_o.label}) has {n}, "
                       f"{len(rows)} of them with a value in every one of columns (the records on_missing='drop' "
                       f"(--on-missing drop) keeps): it is not a release of the original by perturb on these "
                       f"columns; pair it by an id column (id= / --id)")
    keep_o = np.fromiter((r[0] for r in rows), np.int64, len(rows)) - 1      # by released row
    released_rows = np.argsort(keep_o, kind="stable")                        # by original row
    return keep_o[released_rows], released_rows


def evaluate_replicates(con: duckdb.DuckDBPyConnection, original, released, reps: int, columns,
                        target: str | None = None, categorical=(), sdid_k: float = 1.0,
                        replicate: str = "replicate"):
    """Yields evaluate(con, original, <the rows of `released` with `replicate` = r>, ...) for
    r = 0 .. reps - 1, each replicate's rows in the order `released` gives them, paired by
    position: for replicates in input order, as tune's are (perturb's and rank swapping's with
    reps= write every replicate in input order; tests/test_tune.py checks tune's risk figures
    against keyed releases paired by their keys). The original and `released` are each read once, at the first value; the
    replicates are evaluated in batches of about BATCH_ELEMENTS values, each in one numpy
    pass (tune's sweeps: many small releases, where one call each would mostly pay numpy's
    fixed costs)."""
    require_duckdb(con, "evaluate_replicates")
    columns, categorical, numeric = _check_parameters(columns, categorical, target)
    sdid_k = _check_sdid_k(sdid_k)
    src_o = resolve_source(con, original)
    src_r = resolve_source(con, released)
    for role, src in (("original", src_o), ("released", src_r)):
        _check_columns(src, role, columns, numeric)
    engine.require_columns(src_r, [replicate], "replicate", where=f"the released data, {src_r.label}")
    xo, co, n = _read(con, src_o, "original", numeric, categorical)
    if n == 0:
        raise RWNError(f"the original data ({src_o.label}) has no rows")
    xr, cr, _, rep = _read(con, src_r, "released", numeric, categorical, replicate=replicate)
    original_data = _checked_original(xo, co, n, numeric)
    batch = max(1, BATCH_ELEMENTS // max(n * (len(numeric) + len(categorical)), 1))
    for first in range(0, reps, batch):
        rows = []
        for r in range(first, min(reps, first + batch)):
            rows.append(np.flatnonzero(rep == r))
            if len(rows[-1]) != n:
                raise RWNError(f"replicate {r} of the released data ({src_r.label}) has {len(rows[-1])} rows but "
                               f"the original ({src_o.label}) has {n}")
        yield from _measures_batch(original_data, np.stack([xr[i] for i in rows]),
                                   [[(index[i], values) for index, values in cr] for i in rows], src_o.label,
                                   [f"{src_r.label}, {replicate} {first + j}" for j in range(len(rows))],
                                   columns, numeric, categorical, target, sdid_k)


def _check_sdid_k(sdid_k) -> float:
    if isinstance(sdid_k, bool):
        raise RWNError(f"sdid_k must be a number, got {sdid_k!r}")
    try:
        sdid_k = float(sdid_k)
    except (TypeError, ValueError, OverflowError):    # OverflowError: an int beyond a float
        raise RWNError(f"sdid_k must be a number, got {sdid_k!r}") from None
    if not math.isfinite(sdid_k) or sdid_k < 0:
        raise RWNError(f"sdid_k must be a finite number >= 0, got {sdid_k!r}")
    return sdid_k


def _checked_original(xo, co, n, numeric):
    """(xo, co, n, sd, lo, hi) after the checks that concern the original alone."""
    if n < 2:
        raise RWNError("the data has a single row: the measures need at least 2 rows")
    sd = xo.std(axis=0, ddof=1) if numeric else np.zeros(0)
    lo, hi = (xo.min(axis=0), xo.max(axis=0)) if numeric else (np.zeros(0), np.zeros(0))
    for j, c in enumerate(numeric):
        if not hi[j] > lo[j]:
            raise RWNError(f"column {c!r} is constant in the original data: scaling by its range or "
                           f"standard deviation is undefined; leave it out of columns")
        with np.errstate(over="ignore"):
            if not (np.isfinite(hi[j] - lo[j]) and np.isfinite(sd[j])):
                raise RWNError(f"column {c!r} spans {float(lo[j])!r} to {float(hi[j])!r}, too wide for a "
                               f"double-precision range and standard deviation; rescale it (e.g. divide "
                               f"it by a power of ten)")
    return xo, co, n, sd, lo, hi


def _measures(original_data, xr, cr, label_o, label_r, columns, numeric, categorical, target, sdid_k,
              paired_by="position", dropped=0) -> Evaluation:
    return _measures_batch(original_data, xr[None], [cr], label_o, [label_r], columns, numeric, categorical, target,
                           sdid_k, paired_by, dropped)[0]


def _measures_batch(original_data, xr, crs, label_o, labels_r, columns, numeric, categorical, target, sdid_k,
                    paired_by="position", dropped=0) -> list[Evaluation]:
    """The Evaluation of each of R releases of one original: xr (R, n, p) numeric values, crs[r]
    the categorical columns of release r. One numpy pass over all R for every measure that
    allows it (one call per release would pay numpy's fixed costs R times: tune's sweeps);
    evaluate() is the case R = 1, so both give the same numbers."""
    xo, co, n, sd, lo, hi = original_data
    reps = len(xr)
    corr_mad = _corr_mad(xo, xr) if len(numeric) >= 2 else [None] * reps
    pca = _pca(xo, xr, numeric, sd)
    ols = _ols_measures(xo, xr, numeric, target, n)
    ks = _ks(xo, xr)
    category_stats = []
    for cr in crs:          # categorical utility: codes of the original and this release alone
        ko, kr = _codes(co, cr, n)
        category_stats.append(({c: _tv(ko[:, j], kr[:, j]) for j, c in enumerate(categorical)},
                               Pair(_multi_information(ko), _multi_information(kr)) if len(categorical) >= 2 else None))
    ko, kr = _codes_of_all(co, crs, n) if reps > 1 else (ko, kr[None])     # reps = 1: the codes above
    risks = _risk(xo, xr, ko, kr, lo, hi, sd, sdid_k, bool(numeric))
    out = []
    for r in range(reps):
        utility = Utility(
            corr_mad=corr_mad[r], **pca[r], **ols[r],
            ks=dict(zip(numeric, ks[r].tolist())),
            tv=category_stats[r][0], multi_information=category_stats[r][1])
        out.append(Evaluation(original=label_o, released=labels_r[r], rows=n, columns=columns,
                              numeric=numeric, categorical=categorical, target=target, sdid_k=sdid_k,
                              utility=utility, risk=risks[r], paired_by=paired_by, dropped=dropped))
    return out


def _pair_by_id(con, src_o: Source, src_r: Source, id: str):
    """Row indices (original, released) of the records paired by `id`, in original order (so a
    shuffled release gives the measures of its input-order twin, to the last bit)."""
    ids = []
    for role, src in (("original", src_o), ("released", src_r)):
        try:
            values = [r[0] for r in con.execute(f"SELECT CAST({quote_ident(id)} AS VARCHAR) FROM {src.sql}").fetchall()]
        except duckdb.Error as exc:
            raise RWNError(f"cannot read the {role} data, {src.label}: {exc}") from None
        if None in values:
            raise RWNError(f"id column {id!r} is NULL in the {role} data")
        if len(set(values)) != len(values):
            raise RWNError(f"id column {id!r} repeats values in the {role} data; ids must be unique")
        ids.append(values)
    where = {v: i for i, v in enumerate(ids[0])}
    unknown = [v for v in ids[1] if v not in where]
    if unknown:
        raise RWNError(f"the released data has {len(unknown)} ids not in the original (first: {unknown[0]!r})")
    keep_o = np.array([where[v] for v in ids[1]], dtype=np.int64)
    by_original = np.argsort(keep_o, kind="stable")
    return keep_o[by_original], by_original


# ----------------------------------------------------------------------------- input

def _check_parameters(columns, categorical, target):
    def names(value, what):
        if value is None:
            return ()
        if isinstance(value, str):
            value = [value]
        try:
            out = tuple(value)
        except TypeError:
            raise RWNError(f"{what} must be a list of column names, got {value!r}") from None
        seen = set()
        for c in out:
            if not isinstance(c, str) or c == "":
                raise RWNError(f"{what}: column names must be non-empty strings, got {c!r}")
            if c in seen:
                raise RWNError(f"{what}: column {c!r} is listed twice")
            seen.add(c)
        return out

    columns = names(columns, "columns")
    categorical = names(categorical, "categorical")
    if not columns:
        raise RWNError("columns: give at least one column to evaluate")
    for c in categorical:
        if c not in columns:
            raise RWNError(f"categorical: {c!r} is not among columns {list(columns)}")
    numeric = tuple(c for c in columns if c not in categorical)
    if target is not None:
        if not isinstance(target, str) or target not in columns:
            raise RWNError(f"target {target!r} is not among columns {list(columns)}")
        if target in categorical:
            raise RWNError(f"target {target!r} is categorical; the regression needs a numeric target")
        if len(numeric) < 2:
            raise RWNError(f"target {target!r}: the regression needs at least one other numeric column")
    return columns, categorical, numeric


def _check_columns(src: Source, role: str, columns, numeric) -> None:
    engine.require_columns(src, columns, "columns", where=f"the {role} data, {src.label}")
    for c in numeric:
        if not NUMERIC_TYPES.match(src.type_of(c)):
            raise RWNError(f"column {c!r} has type {src.type_of(c)} in the {role} data, not a numeric "
                           f"type; list it in categorical= (--categorical) to compare it as categories")


def _read(con, src: Source, role: str, numeric, categorical, replicate: str | None = None, checked: bool = True):
    """(numeric columns as an (n, p) float64 array, [(index, values) per categorical column], n),
    and with `replicate` also that column as int64 values. A categorical column is dictionary
    encoded by Arrow: values[index[i]] is row i's text, index -1 marks NULL. A NULL numeric
    value is NaN; `checked`: refuse NULL, NaN and infinite values (else _check_values, on the
    rows that are compared)."""
    exprs = [f"CAST({quote_ident(c)} AS DOUBLE) AS n{j}" for j, c in enumerate(numeric)]
    exprs += [f"CAST({quote_ident(c)} AS VARCHAR) AS c{j}" for j, c in enumerate(categorical)]
    if replicate is not None:
        exprs.append(f"CAST({quote_ident(replicate)} AS BIGINT) AS replicate")
    try:
        data = con.sql(f"SELECT {', '.join(exprs)} FROM {src.sql}").to_arrow_table()
    except duckdb.Error as exc:
        raise RWNError(f"cannot read the {role} data, {src.label}: {exc}") from None
    n = data.num_rows
    cols, null = [], np.zeros((n, len(numeric)), bool)
    for j, c in enumerate(numeric):
        v = data.column(f"n{j}")
        if v.null_count:
            null[:, j] = v.is_null().to_numpy(zero_copy_only=False)
        v = v.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
        cols.append(v + 0.0)                       # + 0.0 turns -0.0 into 0.0; NULL is NaN
    x = np.column_stack(cols) if cols else np.zeros((n, 0))
    if checked:
        _check_values(x, null, numeric, role)
    cats = []
    for j, _ in enumerate(categorical):
        encoded = data.column(f"c{j}").dictionary_encode().combine_chunks()
        index = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
        cats.append((index, np.array(encoded.dictionary.to_pylist(), dtype=object)))
    if replicate is None:
        return (x, cats, n) if checked else (x, cats, n, null)
    rep = data.column("replicate")
    if rep.null_count:
        raise RWNError(f"column {replicate!r} of the {role} data is NULL in {rep.null_count} rows")
    return x, cats, n, rep.to_numpy().astype(np.int64, copy=False)


def _check_values(x, null, numeric, role: str, rows=None) -> None:
    """Refuse a numeric column with a NULL (`null`, a mask like x), NaN or infinite value among
    the rows x holds; `rows`: their row numbers (0-based) in the data read, for the message."""
    def first(bad):
        return f"{len(bad)} rows (first: row {(bad[0] if rows is None else rows[bad[0]]) + 1})"
    for j, c in enumerate(numeric):
        bad = np.flatnonzero(null[:, j])
        if len(bad):
            raise RWNError(f"column {c!r} of the {role} data is NULL in {first(bad)}; numeric measures need "
                           f"values in every row")
        bad = np.flatnonzero(~np.isfinite(x[:, j]))
        if len(bad):
            raise RWNError(f"column {c!r} of the {role} data is NaN or infinite in {first(bad)}")


def _shared_codes(datasets, n):
    """For data sets of n rows each given as [(index, values) per categorical column] (see _read), (n, m)
    integer codes per data set, one numbering for all: the texts in sorted order, NULL a code of
    its own right after the empty string, only values that occur numbered (0 .. levels - 1)."""
    if not datasets[0]:
        return [np.zeros((n, 0), np.int64) for _ in datasets]
    columns = []
    for j in range(len(datasets[0])):
        values = np.unique(np.concatenate([d[j][1] for d in datasets]))          # sorted texts, small
        has_null = any((d[j][0] < 0).any() for d in datasets)
        null_code = int(len(values) > 0 and values[0] == "") if has_null else len(values)
        codes = []
        for index, own in (d[j] for d in datasets):
            at = np.searchsorted(values, own).astype(np.int64) if len(own) else np.zeros(0, np.int64)
            at = np.append(at + (at >= null_code), null_code)                     # index -1: NULL
            codes.append(at[index])
        used = np.zeros(len(values) + 1, bool)
        for c in codes:
            used[c] = True
        if not used[:len(values) + has_null].all():                             # a value no longer occurs (id pairing)
            dense = np.cumsum(used) - 1
            codes = [dense[c] for c in codes]
        columns.append(codes)
    return [np.column_stack([col[d] for col in columns]) for d in range(len(datasets))]


def _codes(co, cr, n):
    """(n, m) integer codes per categorical column of the original and one release, shared by both."""
    ko, kr = _shared_codes([co, cr], n)
    return ko, kr


def _codes_of_all(co, crs, n):
    """_shared_codes over the original and every release at once: (n, m) and (R, n, m) codes
    (the risk searches compare codes only for equality, so any numbering gives the same
    measures)."""
    codes = _shared_codes([co] + list(crs), n)
    return codes[0], np.stack(codes[1:]).reshape(len(crs), n, len(co))


# ----------------------------------------------------------------------------- utility

def _correlations(x):
    """Pearson correlation matrices of the columns of each x[r] (x: R x n x p), NaN where a
    column is constant."""
    centred = x - x.mean(axis=1, keepdims=True)
    c = np.matmul(centred.transpose(0, 2, 1), centred)
    d = np.sqrt(np.diagonal(c, axis1=1, axis2=2))
    with np.errstate(divide="ignore", invalid="ignore"):
        c = c / d[:, :, None] / d[:, None, :]
    return np.clip(c, -1.0, 1.0)


def _corr_mad(xo, xr) -> list[float]:
    iu = np.triu_indices(xo.shape[1], 1)
    ro = _correlations(xo[None])[0][iu]
    rr = _correlations(xr)[:, iu[0], iu[1]]
    return [float(v) for v in np.mean(np.abs(ro - rr), axis=1)]


def _covariances(z):
    """Sample covariance matrices (ddof=1) of the columns of each z[r] (z: R x n x p)."""
    centred = z - z.mean(axis=1, keepdims=True)
    return np.matmul(centred.transpose(0, 2, 1), centred) / (z.shape[1] - 1)


def _pca(xo, xr, numeric, sd) -> list[dict]:
    if len(numeric) < 2:
        return [dict(pca_loading_mad=None, pca_variance_share=None, pca_loadings=None)] * len(xr)
    mean = xo.mean(axis=0)

    def components(x):          # leading two of every x[r]: (shares R x 2, loadings R x p x 2)
        values, vectors = np.linalg.eigh(_covariances((x - mean) / sd))     # ascending
        values, vectors = np.clip(values[:, ::-1], 0.0, None), vectors[:, :, ::-1]
        return values[:, :2] / values.sum(axis=1, keepdims=True), vectors[:, :, :2]

    share_o, load_o = components(xo[None])
    share_o, load_o = share_o[0], load_o[0].copy()
    share_r, load_r = components(xr)
    for j in range(2):
        big = np.argmax(np.abs(load_o[:, j]))
        if load_o[big, j] < 0:
            load_o[:, j] = -load_o[:, j]
    load_r = load_r * np.where(np.einsum("pj,rpj->rj", load_o, load_r) < 0, -1.0, 1.0)[:, None, :]
    mad = np.mean(np.abs(load_o - load_r), axis=(1, 2))

    def as_dict(load):
        return {f"PC{j + 1}": dict(zip(numeric, load[:, j].tolist())) for j in range(2)}

    shares_o, loadings_o = {"PC1": float(share_o[0]), "PC2": float(share_o[1])}, as_dict(load_o)
    return [dict(pca_loading_mad=float(mad[r]),
                 pca_variance_share=Pair(shares_o, {"PC1": float(share_r[r, 0]), "PC2": float(share_r[r, 1])}),
                 pca_loadings=Pair(loadings_o, as_dict(load_r[r])))
            for r in range(len(xr))]


def _ols_fit(y, X, role: str) -> dict:
    """Least squares of each y[r] on X[r] (y: R x n, X: R x n x p)."""
    n, p = X.shape[1:]
    rank = np.linalg.matrix_rank(X)
    if np.any(rank < p):
        raise RWNError(f"OLS on the {role} data: the intercept and regressors are collinear (rank "
                       f"{int(rank.min())} < {p}); leave a column out or evaluate without target")
    q, r = np.linalg.qr(X)
    beta = np.linalg.solve(r, np.matmul(q.transpose(0, 2, 1), y[:, :, None]))[:, :, 0]
    resid = y - np.matmul(X, beta[:, :, None])[:, :, 0]
    rss = np.sum(resid * resid, axis=1)
    s2 = rss / (n - p)
    rinv = np.linalg.inv(r)
    se = np.sqrt(s2[:, None] * np.sum(rinv * rinv, axis=2))      # diag(R^-1 R^-T) = row sums of squares
    tss = np.sum((y - y.mean(axis=1, keepdims=True)) ** 2, axis=1)
    h = np.sum(q * q, axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = np.where(tss > 0, 1.0 - rss / tss, np.nan)
        cooks = resid ** 2 / (p * s2[:, None]) * h / (1.0 - h) ** 2
    return dict(beta=beta, se=se, r2=r2, cooks_max=np.max(cooks, axis=1))


def _overlaps(lo_a, hi_a, lo_b, hi_b):
    """ci_overlap elementwise over arrays of interval bounds (the same operations)."""
    inter = np.minimum(hi_a, hi_b) - np.maximum(lo_a, lo_b)
    la, lb = hi_a - lo_a, hi_b - lo_b
    with np.errstate(divide="ignore", invalid="ignore"):
        both = 0.5 * (inter / la + inter / lb)
    return np.where((la > 0) & (lb > 0), np.where(inter <= 0, 0.0, both), np.nan)


def _ols_measures(xo, xr, numeric, target, n) -> list[dict]:
    if target is None:
        return [dict(ols=None, cooks_max=None)] * len(xr)
    t = numeric.index(target)
    others = [j for j in range(len(numeric)) if j != t]
    terms = (INTERCEPT,) + tuple(numeric[j] for j in others)
    p = len(terms)
    if n <= p:
        raise RWNError(f"OLS of {target!r}: {n} rows are too few for {p} coefficients (need more rows "
                       f"than coefficients)")
    df = n - p
    crit = t_quantile(0.975, df)

    def design(x):
        return np.concatenate([np.ones(x.shape[:2] + (1,)), x[:, :, others]], axis=2)

    fo = _ols_fit(xo[None, :, t], design(xo[None]), "original")
    fr = _ols_fit(xr[:, :, t], design(xr), "released")
    ci_o = (fo["beta"] - crit * fo["se"], fo["beta"] + crit * fo["se"])         # each 1 x p
    ci_r = (fr["beta"] - crit * fr["se"], fr["beta"] + crit * fr["se"])         # each R x p
    overlap = _overlaps(ci_o[0], ci_o[1], ci_r[0], ci_r[1])
    overlap_mean = np.mean(overlap, axis=1)
    diff = np.abs(fo["beta"] - fr["beta"])

    def per_term(values):           # tolist: Python floats in one call (tune evaluates thousands)
        return dict(zip(terms, values.tolist()))

    def intervals(low, high):
        return {term: [a, b] for term, a, b in zip(terms, low.tolist(), high.tolist())}

    out = []
    for r in range(len(xr)):
        ols = OLSComparison(
            target=target, terms=terms, df=df, critical_value=crit,
            coefficients=Pair(per_term(fo["beta"][0]), per_term(fr["beta"][r])),
            std_errors=Pair(per_term(fo["se"][0]), per_term(fr["se"][r])),
            ci=Pair(intervals(ci_o[0][0], ci_o[1][0]), intervals(ci_r[0][r], ci_r[1][r])),
            r2=Pair(float(fo["r2"][0]), float(fr["r2"][r])),
            coef_abs_diff=per_term(diff[r]),
            ci_overlap=per_term(overlap[r]),
            ci_overlap_mean=float(overlap_mean[r]),
        )
        out.append(dict(ols=ols, cooks_max=Pair(float(fo["cooks_max"][0]), float(fr["cooks_max"][r]))))
    return out


def ci_overlap(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Karr et al. (2006): 0.5 * (|a n b| / |a| + |a n b| / |b|); 0 if disjoint; NaN if an
    interval has zero length."""
    inter = min(a[1], b[1]) - max(a[0], b[0])
    la, lb = a[1] - a[0], b[1] - b[0]
    if not (la > 0 and lb > 0):
        return float("nan")
    if inter <= 0:
        return 0.0
    return 0.5 * (inter / la + inter / lb)


def _ks(xo, xr) -> np.ndarray:
    """The two-sample Kolmogorov-Smirnov statistic of every column of xo (n x p) against the same
    column of each xr[r] (R x m x p): an R x p array, each as scipy.stats.ks_2samp's statistic
    (both empirical CDFs at every data point; ks_2samp itself is not called: its p-value, unused
    here, costs about 0.5 ms a column)."""
    reps, m, p = xr.shape
    out = np.empty((reps, p))
    merged = []
    for j in range(p):
        values = np.unique(xo[:, j])
        released = xr[:, :, j].reshape(-1)
        at = np.minimum(np.searchsorted(values, released), len(values) - 1)
        if np.array_equal(values[at], released):    # every released value is an original one (swaps, draws)
            out[:, j] = _ks_on_codes(np.concatenate([np.searchsorted(values, xo[:, j]), at]), len(values),
                                     len(xo), reps, m)
        else:
            merged.append(j)
    if merged:
        out[:, merged] = _ks_merged(xo[:, merged], xr[:, :, merged])
    return out


def _ks_on_codes(codes, levels: int, n: int, reps: int, m: int) -> np.ndarray:
    """_ks of one column from the codes (0 .. levels - 1, in the order of the values) of the
    original's n values then each release's m: both samples' counts of values <= each level.
    At a level present in neither sample of a release the counts are those of the level
    below, so the maximum over all levels is the maximum over that release's data points, and
    the gaps are the same divisions of the same counts as _ks_merged's."""
    count_o = np.cumsum(np.bincount(codes[:n], minlength=levels))
    where = (np.repeat(np.arange(reps), m) * levels) + codes[n:]
    count_r = np.cumsum(np.bincount(where, minlength=reps * levels).reshape(reps, levels), axis=1)
    return np.max(np.abs(count_o / n - count_r / m), axis=1)


def _ks_merged(xo, xr) -> np.ndarray:
    """_ks through one merged sort per column and release: both samples are merged and sorted;
    at the last of every run of equal values the counts so far are each sample's count of
    values <= it."""
    reps, m, p = xr.shape
    n = len(xo)
    # R x p x (n + m): each column's two samples sorted, side by side; a stable sort of two
    # sorted runs is a merge (the original is sorted once for all releases)
    merged = np.concatenate([np.broadcast_to(np.sort(xo, axis=0).T, (reps, p, n)),
                             np.sort(xr, axis=1).transpose(0, 2, 1)], axis=2)
    order = np.argsort(merged, axis=2, kind="stable")
    values = np.take_along_axis(merged, order, axis=2)
    count_o = np.cumsum(order < n, axis=2)
    count_r = np.arange(1, n + m + 1) - count_o
    last = np.ones(values.shape, dtype=bool)
    last[:, :, :-1] = values[:, :, 1:] != values[:, :, :-1]
    gap = np.abs(count_o / n - count_r / m)
    return np.max(np.where(last, gap, 0.0), axis=2)


def _tv(a, b) -> float:
    m = int(max(a.max(), b.max())) + 1
    pa = np.bincount(a, minlength=m) / len(a)
    pb = np.bincount(b, minlength=m) / len(b)
    return float(0.5 * np.sum(np.abs(pa - pb)))


def _entropy(counts) -> float:
    """Plug-in entropy in nats. scipy.special.entr(p) = -p log p (0 at p = 0); the same sum as
    scipy.stats.entropy, which costs 300 microseconds a call in argument handling."""
    return float(np.sum(special.entr(counts / counts.sum())))


def _multi_information(k) -> float:
    marginal = sum(_entropy(np.bincount(k[:, j])) for j in range(k.shape[1]))
    return max(marginal - _entropy(_combinations(k)[1]), 0.0)        # >= 0 in exact arithmetic


# ----------------------------------------------------------------------------- Student t

def t_quantile(p: float, df: float) -> float:
    """The p quantile of Student's t with df degrees of freedom, for 0 < p < 1 and df > 0:
    scipy.special.stdtrit, the function behind scipy.stats.t.ppf (called directly: t.ppf's
    argument handling costs 100 microseconds a call, 80 times the quantile itself)."""
    if not 0.0 < p < 1.0 or not df > 0:
        raise ValueError(f"t_quantile needs 0 < p < 1 and df > 0, got p={p}, df={df}")
    return float(special.stdtrit(df, p))


# ----------------------------------------------------------------------------- risk

def _sqdist(a_num, a_cat, b_num, b_cat):
    """Row-wise exact squared distances (same operations, same order, everywhere)."""
    d = np.zeros(len(a_num))
    for j in range(a_num.shape[1]):
        diff = a_num[:, j] - b_num[:, j]
        d = d + diff * diff
    if a_cat.shape[1]:
        d = d + MISMATCH_COST * np.sum(a_cat != b_cat, axis=1)
    return d


def _row_ids(num, cat):
    """(ids, first): ids[i] numbers row i's distinct value combination, `first` holds one row
    index per id. Identical records have identical distances to everything, so the searches
    below handle each combination once and weigh it by its count."""
    rows = np.ascontiguousarray(np.column_stack([num, cat.astype(np.float64)]))
    if rows.shape[1] == 0:
        return np.zeros(len(rows), np.int64), np.zeros(min(len(rows), 1), np.int64)
    # bytes compared instead of np.unique(axis=0) (twice as fast): values are never NaN, and
    # -0.0 became 0.0 when read, so equal bytes <=> equal values
    keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).reshape(-1)
    _, first, ids = np.unique(keys, return_index=True, return_inverse=True)
    return ids.reshape(-1), first


def _distinct(ids, rows):
    """The distinct combinations among `rows` (indices into ids): (local ids of those rows,
    one row index per combination, its count)."""
    _, first, local, counts = np.unique(ids[rows], return_index=True, return_inverse=True, return_counts=True)
    return local.reshape(-1), rows[first], counts


def _numeric_points(num):
    """The points of a k-d tree over the numeric columns (one zero column when there are none)."""
    return np.ascontiguousarray(num) if num.shape[1] else np.zeros((len(num), 1))


def _augmented(q_num, q_cat, r_num, r_cat):
    """The blocked brute force's operands (see _blocked_nearest): (q_aug, r_aug, direct, slack)
    with q_aug . r_aug^T = |q - r|^2 - |q|^2 + the mismatches of the one-hot columns, `direct`
    the categorical columns with more than ONEHOT_LEVELS levels (compared directly), and
    `slack` per query the allowance within which a candidate is recomputed exactly."""
    nq = len(q_num)
    q_sq = np.sum(q_num * q_num, axis=1)
    r_sq = np.sum(r_num * r_num, axis=1)
    slack = TREE_SLACK * (1.0 + q_sq + float(r_sq.max(initial=0.0)) + q_cat.shape[1])
    q_parts, r_parts, direct = [-2.0 * q_num, np.ones((nq, 1))], [r_num, r_sq[:, None].copy()], []
    for j in range(q_cat.shape[1]):
        levels = int(max(q_cat[:, j].max(initial=0), r_cat[:, j].max(initial=0))) + 1
        if levels <= ONEHOT_LEVELS:
            q_parts.append(-(q_cat[:, j, None] == np.arange(levels)).astype(np.float64))
            r_parts.append((r_cat[:, j, None] == np.arange(levels)).astype(np.float64))
            r_parts[1] += 1.0
        else:
            direct.append(j)
    return np.hstack(q_parts), np.hstack(r_parts), direct, slack


def _where(mask):
    """np.nonzero of a 3-d mask with few True values, through its flat positions (a third of
    the time on small blocks)."""
    at = np.flatnonzero(mask)
    _, b, c = mask.shape
    return at // (b * c), at // c % b, at % c


def _searches_both_ways(o_num, o_cat, o_counts, r_num, r_cat):
    """Both risk searches of R small releases at once (tune's sweeps of tiny data), from one
    matrix of approximate distances per release (_blocked_nearest's product): for distinct
    original rows o_num, o_cat (o_counts: how many records each stands for) and releases
    r_num[r], r_cat[r] (R x n x p, R x n x c), returns (dcr2, nearest, ties): dcr2 (R, no)
    the squared distance of every original row to its nearest row of release r; nearest and
    ties (R, n) every release row's squared distance to its nearest original rows and how
    many records share it. Every candidate within the allowance (one, the largest of either
    direction's) is recomputed by _sqdist, which is symmetric to the last bit, so the answers
    are a brute force's."""
    reps, n = r_num.shape[:2]
    no = len(o_num)
    flat_num, flat_cat = r_num.reshape(reps * n, r_num.shape[2]), r_cat.reshape(reps * n, r_cat.shape[2])
    o_aug, r_aug, direct, slack = _augmented(o_num, o_cat, flat_num, flat_cat)
    o_sq = np.sum(o_num * o_num, axis=1)
    slack = float(slack.max(initial=0.0))                 # covers every row's and column's allowance
    r_aug_t = np.ascontiguousarray(r_aug.reshape(reps, n, r_aug.shape[1]).transpose(0, 2, 1))
    per = max(1, CACHED_ELEMENTS // max(no * n, 1))           # releases per block (that stay in cache)
    to_release, to_original = [], []           # candidate pairs (release r, original row, release row)
    for s in range(0, reps, per):
        e = min(reps, s + per)
        approx = np.matmul(o_aug, r_aug_t[s:e])                 # (e - s, no, n): |o - x|^2 - |o|^2
        approx += o_sq[:, None]                                 # |o - x|^2 (+ mismatches)
        for j in direct:
            approx += o_cat[None, :, j, None] != r_cat[s:e, None, :, j]
        rel, rows, cols = _where(approx <= (approx.min(axis=2) + slack)[:, :, None])   # dcr: by original row
        to_release.append((s + rel, rows, cols))
        rel, rows, cols = _where(approx <= (approx.min(axis=1) + slack)[:, None, :])   # linkage: by release row
        to_original.append((s + rel, rows, cols))
    rel, rows, cols = (np.concatenate(v) for v in zip(*to_release))       # in (rel, rows) order
    exact = _sqdist(o_num[rows], o_cat[rows], flat_num[rel * n + cols], flat_cat[rel * n + cols])
    dcr2 = np.minimum.reduceat(exact, np.searchsorted(rel * no + rows, np.arange(reps * no))).reshape(reps, no)
    rel, rows, cols = (np.concatenate(v) for v in zip(*to_original))
    at = rel * n + cols
    exact = _sqdist(flat_num[at], flat_cat[at], o_num[rows], o_cat[rows])
    nearest = np.full(reps * n, np.inf)
    np.minimum.at(nearest, at, exact)
    ties = np.bincount(at, weights=np.where(exact == nearest[at], o_counts[rows], 0), minlength=reps * n)
    return dcr2, nearest.reshape(reps, n), ties.astype(np.int64).reshape(reps, n)


def _blocked_nearest(q_num, q_cat, r_num, r_cat, r_counts):
    """_nearest's answer by a blocked brute force (the method before the k-d trees), for the
    queries whose nearest record is a mismatch away when there are too many category
    combinations to visit one by one: O(nq nr (p + levels)) time, O(CHUNK_ELEMENTS + (nq + nr) (p + levels)) memory. Candidate minima
    come from one matrix product, [-2q, 1, -onehot(q)] . [r, |r|^2 + m, onehot(r)] = |q - r|^2
    - |q|^2 + mismatches (as [a != b] = 1 - onehot(a).onehot(b)), and every candidate within a
    1e-9 relative allowance is recomputed exactly by _sqdist."""
    nq, nr = len(q_num), len(r_num)
    chunk = max(1, min(CHUNK_ELEMENTS // max(nr, 1), max(256, CACHED_ELEMENTS // max(nr, 1))))
    q_aug, r_aug, direct, slack = _augmented(q_num, q_cat, r_num, r_cat)
    r_aug_t = np.ascontiguousarray(r_aug.T)
    best, ties = np.empty(nq), np.empty(nq, np.int64)
    for s in range(0, nq, chunk):
        e = min(nq, s + chunk)
        approx = q_aug[s:e] @ r_aug_t
        for j in direct:
            approx += q_cat[s:e, j, None] != r_cat[None, :, j]
        limit = approx.min(axis=1) + slack[s:e]
        rows, cols = np.nonzero(approx <= limit[:, None])
        exact = _sqdist(q_num[s + rows], q_cat[s + rows], r_num[cols], r_cat[cols])
        starts = np.searchsorted(rows, np.arange(e - s))
        low = np.minimum.reduceat(exact, starts)
        best[s:e] = low
        ties[s:e] = np.add.reduceat(np.where(exact == low[rows], r_counts[cols], 0), starts)
    return best, ties


def _workers(queries: int) -> int:
    """cKDTree's threads pay off for large batches only (starting them costs ~0.1 ms)."""
    return -1 if queries >= 2000 else 1


def _nearest(q_num, q_cat, r_num, r_cat, r_counts):
    """For distinct query rows against distinct reference rows (r_counts: how many records
    each stands for): the exact nearest squared distance and how many records share it.

    k-d trees (scipy's cKDTree) over the NUMERIC columns propose candidates: one over all
    reference rows, and _GroupTrees, searched within one combination of categorical values
    (a "group", in which the categorical part of every distance is the same number of
    mismatches m) per query. Every distance that decides the answer is computed exactly by
    _sqdist, so the minimum and the ties are a brute force's (a tie is exact floating-point
    equality). Why exact: an upper bound U of the minimum comes from the exact distances of
    two candidates (the nearest in numeric space overall and within the query's own group).
    A row of a group with m mismatches is within U only if its numeric squared distance is
    within U - m, so every such row lies in that group's ball of squared radius (U - m) (1 +
    TREE_SLACK) + U TREE_SLACK (rounding of the trees and of the sums is ~1e-15 relative);
    all rows of those balls are checked exactly (a ball search where a second row of the
    group may lie inside, else its nearest row). When U < MISMATCH_COST only the own group
    (m = 0) can hold such rows; otherwise _wide_search visits the groups within reach."""
    nq, nr = len(q_num), len(r_num)
    if nq * nr <= SMALL_SEARCH or nr <= SMALL_REFERENCE:    # tiny data (bodyfat: 241 x 241): blocks beat the trees
        return _blocked_nearest(q_num, q_cat, r_num, r_cat, r_counts)
    comb, _ = _combinations(np.vstack([q_cat, r_cat]))
    q_comb, r_comb = comb[:nq], comb[nq:]
    q_points, r_points = _numeric_points(q_num), _numeric_points(r_num)
    trees = _GroupTrees(q_points, r_points, r_comb, MISMATCH_COST * q_cat.shape[1])
    if trees.spacing is not None and not math.isfinite(trees.spacing * (comb.max() + 1.0)):
        return _blocked_nearest(q_num, q_cat, r_num, r_cat, r_counts)           # values beyond 1e150
    has_own = np.bincount(r_comb, minlength=comb.max() + 1)[q_comb] > 0
    _, own = trees.query(q_points, q_comb)                                     # nearest of the own group
    own = np.where(has_own, own[:, 0], 0)
    upper = np.where(has_own, _sqdist(q_num, q_cat, r_num[own], r_cat[own]), np.inf)
    # no own group, or its nearest is a mismatch away: the nearest in numeric space overall
    far = np.flatnonzero(~(upper + upper * TREE_SLACK + TREE_FLOOR < MISMATCH_COST))
    if len(far):
        _, cand = cKDTree(r_points).query(q_points[far], k=1, workers=_workers(len(far)))
        upper[far] = np.minimum(upper[far], _sqdist(q_num[far], q_cat[far], r_num[cand], r_cat[cand]))

    pairs_q, pairs_r = [], []

    def collect(qs, groups, radius2):
        """Every row of group groups[i] within squared radius radius2[i] of query qs[i]."""
        found_q, found_r = trees.ball(q_points[qs], groups, np.sqrt(radius2))
        pairs_q.append(qs[found_q])
        pairs_r.append(found_r)

    slack = upper * TREE_SLACK + TREE_FLOOR
    narrow = upper + slack < MISMATCH_COST        # then `own` is a row at distance upper
    # is a second row of the own group as near? (a row of another group lies beyond `spacing`)
    second = np.full(nq, np.inf)
    mine = np.flatnonzero(has_own)
    second[mine] = trees.query(q_points[mine], q_comb[mine], k=2,
                               radius=np.sqrt(upper[mine] * (1.0 + TREE_SLACK) + slack[mine]))[0][:, 1]
    best, ties = upper.copy(), r_counts[own].astype(np.int64)
    crowded = np.flatnonzero(narrow & (second <= np.sqrt(upper + slack)))     # another own row may be as near
    if len(crowded):
        collect(crowded, q_comb[crowded], upper[crowded] + slack[crowded])
    wide = np.flatnonzero(~narrow)
    blocked = wide[:0]
    if len(wide):
        r_groups = np.unique(r_comb)
        order = np.argsort(r_comb, kind="stable")
        r_tuples = r_cat[order[np.searchsorted(r_comb, r_groups, sorter=order)]]      # each group's categories
        blocked = _wide_search(wide, own, second, q_num, q_cat, q_comb, r_num, r_cat, r_groups, r_tuples,
                               q_points, trees, upper, collect, pairs_q, pairs_r)
    if pairs_q:
        rows, cols = np.concatenate(pairs_q), np.concatenate(pairs_r)
        exact = _sqdist(q_num[rows], q_cat[rows], r_num[cols], r_cat[cols])
        checked = np.unique(rows)
        low = np.full(nq, np.inf)
        np.minimum.at(low, rows, exact)
        counted = np.bincount(rows, weights=np.where(exact == low[rows], r_counts[cols], 0), minlength=nq)
        best[checked], ties[checked] = low[checked], counted[checked].astype(np.int64)
    if len(blocked):
        best[blocked], ties[blocked] = _blocked_nearest(q_num[blocked], q_cat[blocked], r_num, r_cat, r_counts)
    return best, ties


class _GroupTrees:
    """k-d trees over the numeric columns of the reference rows, searched within one group
    (combination of categorical values) per query. At most FEW_GROUPS groups: one tree each.
    More: one tree in which each group is moved along an extra coordinate, `spacing` apart,
    so that a search within a radius below the spacing stays in its group: one call for all
    groups instead of a Python loop over thousands (adult-like data), but 2.5 times the CPU
    of one tree per group on 12 Gaussian columns with 5 groups (measured), hence FEW_GROUPS."""

    def __init__(self, q_points, r_points, r_comb, most_mismatch):
        self.groups = np.unique(r_comb)
        self.spacing = None
        if len(self.groups) <= FEW_GROUPS:
            order = np.argsort(r_comb, kind="stable")
            cuts = np.searchsorted(r_comb[order], np.r_[self.groups, self.groups[-1] + 1])
            self.trees = {int(g): (cKDTree(r_points[order[a:b]]), order[a:b])
                          for g, a, b in zip(self.groups, cuts[:-1], cuts[1:])}
            return
        # every numeric squared distance, and so every search radius, is at most the squared
        # extent of all points plus the mismatches; the groups lie further apart than that
        extent = np.maximum(q_points.max(axis=0), r_points.max(axis=0)) - np.minimum(q_points.min(axis=0),
                                                                                     r_points.min(axis=0))
        with np.errstate(over="ignore"):
            self.spacing = 2.0 * math.sqrt(float(np.sum(extent * extent)) + most_mismatch) + 1.0
        if math.isfinite(self.spacing * (self.groups[-1] + 1.0)):
            self.tree = cKDTree(self._placed(r_points, r_comb))

    def _placed(self, points, groups):
        return np.column_stack([points, groups * self.spacing])

    def _by_group(self, groups):
        """(group, positions of its queries) for every group among `groups` that has rows."""
        order = np.argsort(groups, kind="stable")
        cuts = np.flatnonzero(np.r_[True, groups[order][1:] != groups[order][:-1], True])
        for a, b in zip(cuts[:-1], cuts[1:]):
            g = int(groups[order[a]])
            if g in self.trees:
                yield g, order[a:b]

    def query(self, points, groups, k=1, radius=None):
        """(d, j), each (len(points), k): the k nearest rows of group groups[i] to points[i] (j
        indexes the reference rows), or with `radius` only those within radius[i]; missing
        neighbours have d = inf. A bound is one number per call, so bounded queries go in
        batches of TREE_BATCH similar radii: a bounded search costs little more than k = 1, an
        unbounded second neighbour in 12 dimensions 50 times more."""
        d, j = np.full((len(points), k), np.inf), np.zeros((len(points), k), np.int64)
        if self.spacing is None:
            for g, at in self._by_group(groups):
                tree, members = self.trees[g]
                d[at], found = self._search(tree, points[at], k, None if radius is None else radius[at])
                j[at] = members[np.minimum(found, len(members) - 1)]
        else:
            d[:], j[:] = self._search(self.tree, self._placed(points, groups), k, radius)
        return d, j

    @staticmethod
    def _search(tree, points, k, radius):
        ks = list(range(1, k + 1))              # a list: 2-d results even for k = 1
        if radius is None:
            return tree.query(points, k=ks, workers=_workers(len(points)))
        d, j = np.full((len(points), k), np.inf), np.zeros((len(points), k), np.int64)
        by_radius = np.argsort(radius, kind="stable")
        for batch in np.array_split(by_radius, max(1, len(by_radius) // TREE_BATCH)):
            if len(batch):
                d[batch], j[batch] = tree.query(points[batch], k=ks, workers=_workers(len(batch)),
                                                distance_upper_bound=np.nextafter(radius[batch[-1]], np.inf))
        return d, j

    def ball(self, points, groups, radius):
        """(i, row) for every reference row of group groups[i] within radius[i] of points[i]."""
        parts_i, parts_r = [], []
        if self.spacing is None:
            for g, at in self._by_group(groups):
                tree, members = self.trees[g]
                found = tree.query_ball_point(points[at], radius[at], workers=_workers(len(at)))
                lengths = np.fromiter((len(f) for f in found), np.int64, len(found))
                parts_i.append(np.repeat(at, lengths))
                parts_r.append(members[np.fromiter(itertools.chain.from_iterable(found), np.int64, int(lengths.sum()))])
        else:
            found = self.tree.query_ball_point(self._placed(points, groups), radius, workers=_workers(len(points)))
            lengths = np.fromiter((len(f) for f in found), np.int64, len(found))
            parts_i.append(np.repeat(np.arange(len(points)), lengths))
            parts_r.append(np.fromiter(itertools.chain.from_iterable(found), np.int64, int(lengths.sum())))
        if not parts_i:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(parts_i), np.concatenate(parts_r)


def _combinations(k):
    """(ids, counts): np.unique(k, axis=0, return_inverse=True, return_counts=True) for
    non-negative integer codes, through one int64 key per row (a mixed-radix number,
    renumbered densely before it could overflow): the same order, 20 times faster than
    sorting rows."""
    key = np.zeros(len(k), np.int64)
    for j in range(k.shape[1]):
        levels = int(k[:, j].max(initial=0)) + 1
        if int(key.max(initial=0)) + 1 > np.iinfo(np.int64).max // levels:
            _, key = np.unique(key, return_inverse=True)
            key = key.reshape(-1).astype(np.int64)
        key = key * levels + k[:, j]
    _, ids, counts = np.unique(key, return_inverse=True, return_counts=True)
    return ids.reshape(-1), counts


def _wide_search(wide, own, second, q_num, q_cat, q_comb, r_num, r_cat, r_groups, r_tuples, q_points, trees,
                 upper, collect, pairs_q, pairs_r):
    """The candidates of the queries `wide`, whose nearest row may be a mismatch away, appended
    to pairs_q / pairs_r: every reference row within each query's final upper bound. Returns
    the queries left to _blocked_nearest instead (when the (query, group) pairs of a count,
    at GROUP_QUERY_COST each, would cost more than a brute force of the queries in reach).

    Groups are visited by mismatch count m = 0, 1, 2, ...: at count m only the groups exactly
    m mismatches from a query's combination, and only while the query's upper bound U (an
    exact distance) still reaches m. For all those (query, group) pairs at once a k = 2
    search within the query's U - m gives the group's nearest row (its exact distance lowers
    U) and whether a second row might be as near; m = 0, the own group, was searched by
    _nearest. Once U is final, every
    row within it lies in a visited group (U only decreases, so a group out of reach at its
    turn stays out) and is either that nearest row or found by a ball search of the groups
    with a second candidate. Rounding allowance as in _nearest. Updates `upper`."""
    def allowance(u):
        return u * TREE_SLACK + TREE_FLOOR

    wide = wide[np.argsort(q_comb[wide], kind="stable")]
    starts = np.flatnonzero(np.r_[True, q_comb[wide][1:] != q_comb[wide][:-1]])
    sizes = np.diff(np.r_[starts, len(wide)])
    tuple_of = np.repeat(np.arange(len(starts)), sizes)                   # combination of each wide query
    q_tuples = q_cat[wide[starts]]                                        # T x c
    count_type = np.uint8 if q_cat.shape[1] < 256 else np.int64
    rows_per_chunk = max(1, CHUNK_ELEMENTS // len(r_groups))
    mine = np.isin(q_comb[wide], r_groups)                                # m = 0: from _nearest's search
    found = [(wide[mine], q_comb[wide[mine]], own[wide[mine]], second[wide[mine]], np.zeros(mine.sum()))]
    blocked = wide[:0]
    for m in range(1, q_cat.shape[1] + 1):
        cost = MISMATCH_COST * m
        reach = upper[wide] + allowance(upper[wide]) >= cost
        active = np.unique(tuple_of[reach])
        if not len(active):
            break
        at_t, at_g = [], []                      # (combination, group) pairs exactly m mismatches apart
        for s in range(0, len(active), rows_per_chunk):
            chunk = active[s:s + rows_per_chunk]
            mismatches = np.zeros((len(chunk), len(r_groups)), count_type)
            for j in range(q_cat.shape[1]):
                mismatches += q_tuples[chunk, j, None] != r_tuples[None, :, j]
            t, g = np.nonzero(mismatches == m)
            at_t.append(chunk[t])
            at_g.append(r_groups[g])
        at_t, at_g = np.concatenate(at_t), np.concatenate(at_g)
        # every query of each pair's combination still within reach
        lengths = sizes[at_t]
        pos = np.repeat(starts[at_t] - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
        keep = reach[pos]
        qs, gs = wide[pos[keep]], np.repeat(at_g, lengths)[keep]
        if len(qs) * GROUP_QUERY_COST > reach.sum() * len(r_num) * (q_num.shape[1] + 1 + q_cat.shape[1]):
            blocked = np.concatenate([blocked, wide[reach]])     # cheaper by brute force
            wide, tuple_of = wide[~reach], tuple_of[~reach]
            continue
        radius = np.sqrt(np.maximum(upper[qs] - cost, 0.0) * (1.0 + TREE_SLACK) + allowance(upper[qs]))
        d, j = trees.query(q_points[qs], gs, k=2, radius=radius)
        hit = np.isfinite(d[:, 0])
        qs, gs, rows, d = qs[hit], gs[hit], j[hit, 0], d[hit]
        np.minimum.at(upper, qs, _sqdist(q_num[qs], q_cat[qs], r_num[rows], r_cat[rows]))
        found.append((qs, gs, rows, d[:, 1], np.full(len(qs), cost)))
    qs, gs, rows, second, cost = (np.concatenate(v) for v in zip(*found))
    room = upper[qs] - cost                   # (the blocked queries' answers replace theirs)
    keep = room + allowance(upper[qs]) >= 0
    qs, gs, rows, second, room = qs[keep], gs[keep], rows[keep], second[keep], room[keep]
    radius2 = np.maximum(room, 0.0) * (1.0 + TREE_SLACK) + allowance(upper[qs])
    crowded = second <= np.sqrt(radius2)                  # a second row may be as near: a ball search
    pairs_q.append(qs[~crowded])
    pairs_r.append(rows[~crowded])
    if crowded.any():
        collect(qs[crowded], gs[crowded], radius2[crowded])
    return blocked


def nearest_sqdist(q_num, q_cat, r_num, r_cat, count_ties: bool = False):
    """For every query row, the exact squared distance to its nearest reference row (and, with
    count_ties, how many reference rows share that distance). Numeric columns are compared by
    squared difference, categorical codes (integers) add MISMATCH_COST per mismatch. k-d
    tree searches with an exact recheck (see _nearest)."""
    q_ids, q_first = _row_ids(q_num, q_cat)
    r_ids, r_first = _row_ids(r_num, r_cat)
    r_counts = np.bincount(r_ids, minlength=len(r_first))
    best, ties = _nearest(q_num[q_first], q_cat[q_first], r_num[r_first], r_cat[r_first], r_counts)
    return (best[q_ids], ties[q_ids]) if count_ties else best[q_ids]


def _risk(xo, xr, ko, kr, lo, hi, sd, k, has_numeric) -> list[Risk]:
    """The Risk of each release xr[r], kr[r] (R x n x p, R x n x m) against xo, ko."""
    n, reps = len(xo), len(xr)
    so = (xo - lo) / (hi - lo)
    sr = (xr - lo) / (hi - lo)
    # the distinct original records, once: the reference of every release's linkage search
    o_ids, o_rows = _row_ids(xo, ko)
    o_counts = np.bincount(o_ids, minlength=len(o_rows))
    # one numbering of the distinct records of the original and every release (any subset's
    # numbers keep the order of that subset numbered alone): unique survival, distinct queries
    ids, _ = _row_ids(np.vstack([xo, xr.reshape(reps * n, xr.shape[2])]),
                      np.vstack([ko, kr.reshape(reps * n, kr.shape[2])]))
    combinations = int(ids.max()) + 1
    unique = np.bincount(ids[:n], minlength=combinations)[ids[:n]] == 1
    unique_id = np.zeros(combinations, bool)
    unique_id[ids[:n][unique]] = True
    released = ids[n:].reshape(reps, n)
    kept = (np.arange(reps)[:, None] * combinations + released)[unique_id[released]]    # (release, id)
    survival = np.bincount(np.unique(kept) // combinations, minlength=reps)      # unique records kept
    if n * n <= SMALL_SEARCH or n <= SMALL_REFERENCE:          # tiny data: every release at once, both ways
        dcr2, nearest, ties = _searches_both_ways(so[o_rows], ko[o_rows], o_counts, sr, kr)
        dcr = np.sqrt(dcr2[:, o_ids])
    else:
        queries, dcr = [], np.empty((reps, n))
        for r in range(reps):
            r_local, r_rows, r_counts = _distinct(ids, np.arange(n * (r + 1), n * (r + 2)))
            r_rows = r_rows - n * (r + 1)
            dcr2, _ = _nearest(so[o_rows], ko[o_rows], sr[r][r_rows], kr[r][r_rows], r_counts)
            dcr[r] = np.sqrt(dcr2[o_ids])
            queries.append((r_local, r_rows))
        # every release's distinct records searched against the original's in one search
        near_u, ties_u = _nearest(np.concatenate([sr[r][rows] for r, (_, rows) in enumerate(queries)]),
                                  np.concatenate([kr[r][rows] for r, (_, rows) in enumerate(queries)]),
                                  so[o_rows], ko[o_rows], o_counts)
        local = np.stack([q[0] for q in queries]) + np.cumsum([0] + [len(rows) for _, rows in queries])[:-1, None]
        nearest, ties = near_u[local], ties_u[local]
    if has_numeric:
        inside = np.abs(xo - xr) <= k * sd
        sdid = np.mean(np.all(inside, axis=2), axis=1)
        sd_r = xr.std(axis=1, ddof=1)[:, None, :]
        outside = (xo < xr - k * sd_r) | (xo > xr + k * sd_r)
        sdid_sdcmicro = np.mean(np.sum(outside, axis=2) <= 1, axis=1)
    own = _sqdist(sr.reshape(reps * n, sr.shape[2]), kr.reshape(reps * n, kr.shape[2]),
                  np.tile(so, (reps, 1)), np.tile(ko, (reps, 1))).reshape(reps, n)
    linked = own <= nearest                  # own source among the nearest (own >= nearest always)
    n_unique = int(unique.sum())
    out = []
    for r in range(reps):
        survived = int(survival[r])
        out.append(Risk(
            dcr_mean=float(dcr[r].mean()),
            linkage_rate=float(np.mean(linked[r])),
            linkage_rate_expected=float(np.mean(np.where(linked[r], 1.0 / ties[r], 0.0))),
            sdid=float(sdid[r]) if has_numeric else None,
            sdid_sdcmicro=float(sdid_sdcmicro[r]) if has_numeric else None,
            unique_survival=survived / n_unique if n_unique else None,
            unique_records=n_unique,
        ))
    return out
