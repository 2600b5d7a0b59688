"""Utility and disclosure-risk measures: original data against a release.

    ev = evaluate(con, "people", "release.parquet", ["Age", "Weight", "Height"], target="Weight")
    ev.utility.corr_mad, ev.risk.linkage_rate
    ev.to_dict(); ev.to_json("evaluation.json")
    evaluate(..., keys=["sex", "age"]).key_risk      # key-variable risk of the release (key_risk)
    evaluate(..., attacks=True, control="held_out", secret="Weight").attacks   # attacks.attack_risk

Row i of the release must correspond to row i of the original (RWN keeps every row, in input
order). The measures are those of docs/METHODS.md section 1 ("Measures the paper's experiments
use"); `risk.sdid_rwn_paper`, `risk.rmdid` and `risk.dcr_mean_raw` are the paper's SDID, RMDID
and DCR exactly as its authors computed them (sdcMicro 5.7.6's dRisk with k = sdid_k and
dRiskRMD's risk1, its calc_DCR in raw units). Numeric columns are the `columns` not listed in `categorical`; they must have numeric
types in both data sets. Each measure's exact definition is in rwn_sql.evaluation.utility
(utility) and rwn_sql.evaluation.risk (disclosure risk).

Cost: the two nearest-neighbour searches of the risk measures (rwn_sql.evaluation.risk).
evaluate_replicates evaluates the releases of a setting together (tune's sweeps): every measure
in one numpy pass over all of them, their linkage searches in one search; per release the
numbers are evaluate()'s (risk exactly, utility up to the last bit of numpy's reductions).
Everything else is O(n log n) or O(n p^2). The timings (benchmarks/bench_tune.py, 100,000 rows
of Gaussian and of adult-like columns): docs/benchmarks.md.
"""
from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass

import numpy as np

from .. import limits
from ..engines import duckdb as engine, duckdb_backend, outputs, sources
from ..rwn import run as rwn, sqlgen
from ..engines.dialects import require_duckdb
from ..engines.duckdb import NUMERIC_TYPES
from ..engines.sources import Source, resolve_source
from ..errors import RWNError
from ..identifiers import column_names, quote_ident
from ..randomness import key_scope, resolve_key
from ..rwn.spec import finite_number
from . import risk, utility
from .attacks import AttackRisk, attack_risk
from .key_risk import KeyRisk, key_variable_risk
from .report_values import plain
from .risk import Risk
from .utility import Pair, Utility

__all__ = ["Evaluation", "evaluate", "evaluate_replicates"]


# ----------------------------------------------------------------------------- result type

@dataclass(frozen=True)
class Evaluation:
    """Original against released data; rwn_sql.evaluation.utility and rwn_sql.evaluation.risk
    define each measure."""
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
    key_risk: KeyRisk | None = None        # the release's key-variable risk (keys=), else None
    attacks: AttackRisk | None = None      # singling out, linkability, inference (attacks=True), else None

    def to_dict(self) -> dict:
        """Plain dicts, lists, str, int, float and None; NaN and infinities become None."""
        return plain(dataclasses.asdict(self))

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


# ----------------------------------------------------------------------------- entry point

def evaluate(con: engine.Connection, original, released, columns, target: str | None = None,
             categorical=(), sdid_k: float = 1.0, id: str | None = None, key: str | None = None,
             seed: int | None = None, order: str | None = None, keys=None, weight=None, attacks: bool = False,
             control=None, secret: str | None = None, attack_seed: int | None = None) -> Evaluation:
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
    standard deviations for the SDID risks (the original's for `sdid`, the release's for
    `sdid_sdcmicro` and `sdid_rwn_paper`; the RWN paper used 1). `keys` (key variables, columns of the release;
    `weight` its sampling weights): `key_risk` is key_variable_risk(con, released, keys, weight),
    else None. `attacks=True` (with `control`, records of the same population held out of the
    release): `attacks` is attack_risk(con, original, released, control, columns, secret,
    categorical, seed=attack_seed) (rwn_sql.evaluation.attacks: singling out, linkability,
    inference; no pairing needed; the other attack parameters at their defaults), else None.
    Raises RWNError on bad input.
    """
    require_duckdb(con, "evaluate")
    columns, categorical, numeric = _check_parameters(columns, categorical, target)
    sdid_k = _check_sdid_k(sdid_k)
    _check_attack_options(attacks, control, secret, attack_seed)

    src_o = resolve_source(con, original)
    src_r = resolve_source(con, released)
    by_key, the_key = _pairing_options(columns, id, key, seed, order)
    for role, src in (("original", src_o), ("released", src_r)):
        _check_columns(src, role, columns, numeric)
        if id is not None:
            sources.require_columns(src, [id], "id", where=f"the {role} data, {src.label}")
    if id is None:
        _check_pairing(src_r, outputs.recorded_row_order(con, released), by_key, order)
    key_risk = _release_key_risk(con, src_r, keys, weight)
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
    ev = _measures(original_data, xr, cr, src_o.label, src_r.label, columns, numeric, categorical, target,
                   sdid_k, paired_by=paired_by, dropped=dropped)
    attack = None if not attacks else attack_risk(con, src_o, src_r, control, columns, secret=secret,
                                                  categorical=categorical, seed=attack_seed)
    return dataclasses.replace(ev, key_risk=key_risk, attacks=attack)


def _pairing_options(columns, id, key, seed, order):
    """(by_key, the key or None) after checking that at most one way of pairing is given."""
    if id is not None and (not isinstance(id, str) or id in columns):
        raise RWNError(f"id must be a column name not among columns, got {id!r}")
    by_key = key is not None or seed is not None
    if order is not None and order != "input":
        raise RWNError(f"order must be 'input' (the release is in input order) or left out, got {order!r}")
    if (id is not None) + by_key + (order is not None) > 1:
        raise RWNError("give one way to pair the records: id= (--id), key= or seed= (--key-file, --seed), or "
                       "order='input' (--input-order)")
    return by_key, (resolve_key(key, seed) if by_key else None)


def _check_attack_options(attacks, control, secret, attack_seed) -> None:
    """control=, secret= and attack_seed= go with attacks=True; attacks=True needs control=."""
    if not isinstance(attacks, bool):
        raise RWNError(f"attacks must be True or False, got {attacks!r}")
    if attacks and control is None:
        raise RWNError("attacks=True (--attacks) needs control= (--control): records of the same population "
                       "held out of the release, against which the attacks' success is compared")
    if not attacks and (control is not None or secret is not None or attack_seed is not None):
        raise RWNError("control=, secret= and attack_seed= (--control, --secret, --attack-seed) are for the "
                       "attacks: give attacks=True (--attacks) too")


def _release_key_risk(con, released: Source, keys, weight) -> KeyRisk | None:
    """The release's key-variable risk over `keys` (None without keys; `released` the resolved
    release, not resolved again); weight= needs keys=."""
    if keys is None:
        if weight is not None:
            raise RWNError("weight= (--weight) weighs the key-variable risk: give keys= (--keys) too")
        return None
    return key_variable_risk(con, released, keys, weight=weight)


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
    rows = duckdb_backend.DuckDBBackend(con).rows(sqlgen.kept_positions_sql(src_o.sql, spec))
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
    be = duckdb_backend.DuckDBBackend(con)
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


def evaluate_replicates(con: engine.Connection, original, released, reps: int, columns,
                        target: str | None = None, categorical=(), sdid_k: float = 1.0,
                        replicate: str = "replicate"):
    """Yields evaluate(con, original, <the rows of `released` with `replicate` = r>, ...) for
    r = 0 .. reps - 1, each replicate's rows in the order `released` gives them, paired by
    position: for replicates in input order, as tune's are (perturb's and rank swapping's with
    reps= write every replicate in input order; tests/evaluation/test_tune.py checks tune's risk figures
    against keyed releases paired by their keys). The original and `released` are each read once, at the first value; the
    replicates are evaluated in batches of about Limits.BATCH_ELEMENTS values, each in one numpy
    pass (tune's sweeps: many small releases, where one call each would mostly pay numpy's
    fixed costs)."""
    require_duckdb(con, "evaluate_replicates")
    columns, categorical, numeric = _check_parameters(columns, categorical, target)
    sdid_k = _check_sdid_k(sdid_k)
    src_o = resolve_source(con, original)
    src_r = resolve_source(con, released)
    for role, src in (("original", src_o), ("released", src_r)):
        _check_columns(src, role, columns, numeric)
    sources.require_columns(src_r, [replicate], "replicate", where=f"the released data, {src_r.label}")
    xo, co, n = _read(con, src_o, "original", numeric, categorical)
    if n == 0:
        raise RWNError(f"the original data ({src_o.label}) has no rows")
    xr, cr, _, rep = _read(con, src_r, "released", numeric, categorical, replicate=replicate)
    original_data = _checked_original(xo, co, n, numeric)
    batch = max(1, limits.current().BATCH_ELEMENTS // max(n * (len(numeric) + len(categorical)), 1))
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
    if finite_number(sdid_k, "sdid_k") < 0:
        raise RWNError(f"sdid_k must be a finite number >= 0, got {sdid_k!r}")
    return float(sdid_k)


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
    corr_mad = utility.corr_mad(xo, xr) if len(numeric) >= 2 else [None] * reps
    pca = utility.pca(xo, xr, numeric, sd)
    ols = utility.ols_measures(xo, xr, numeric, target, n)
    ks = utility.ks(xo, xr)
    category_stats = []
    for cr in crs:          # categorical utility: codes of the original and this release alone
        ko, kr = _codes(co, cr, n)
        category_stats.append(({c: utility.tv(ko[:, j], kr[:, j]) for j, c in enumerate(categorical)},
                               Pair(utility.multi_information(ko), utility.multi_information(kr))
                               if len(categorical) >= 2 else None))
    ko, kr = _codes_of_all(co, crs, n) if reps > 1 else (ko, kr[None])     # reps = 1: the codes above
    risks = risk.measures(xo, xr, ko, kr, lo, hi, sd, sdid_k, bool(numeric))
    out = []
    for r in range(reps):
        utility_r = Utility(
            corr_mad=corr_mad[r], **pca[r], **ols[r],
            ks=dict(zip(numeric, ks[r].tolist())),
            tv=category_stats[r][0], multi_information=category_stats[r][1])
        out.append(Evaluation(original=label_o, released=labels_r[r], rows=n, columns=columns,
                              numeric=numeric, categorical=categorical, target=target, sdid_k=sdid_k,
                              utility=utility_r, risk=risks[r], paired_by=paired_by, dropped=dropped))
    return out


def _pair_by_id(con, src_o: Source, src_r: Source, id: str):
    """Row indices (original, released) of the records paired by `id`, in original order (so a
    shuffled release gives the measures of its input-order twin, to the last bit)."""
    ids = []
    for role, src in (("original", src_o), ("released", src_r)):
        try:
            values = [r[0] for r in con.execute(f"SELECT CAST({quote_ident(id)} AS VARCHAR) FROM {src.sql}").fetchall()]
        except engine.Error as exc:
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
        return () if value is None else column_names(value, what)

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
    sources.require_columns(src, columns, "columns", where=f"the {role} data, {src.label}")
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
    except engine.Error as exc:
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
