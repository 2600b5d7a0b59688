"""Parameter sweeps and the tuning report: what a release costs in utility and buys in
protection, per setting, so a data steward can choose eps, k and q with evidence (the RWN
paper's Sections 7 and 8).

For a grid of eps (k and q fixed) the sweep searches the exact neighbourhoods once, at the
largest eps (every smaller eps's are prefixes of those lists), and draws `reps` releases
per eps, on small data all in one SQL statement (rwn_releases; release r of an eps uses the key
`key#r`, so it equals rwn_sql.perturb(eps=eps, key=f"{key}#{r}", strata=strata)); it evaluates
the releases of each eps together (evaluate_replicates: per release the numbers of
rwn_sql.evaluate) and keeps the mean and spread of each measure, handing the result so far to
on_setting after every setting.
Baselines (rank swapping, MDAV) can be added on the same measures, checked before any work
(no strata; the categorical columns left as they are, in the result's notes); rank swapping's
releases of a P come from one statement too (rank_swap(reps=...), release r with the key key#r).
The report of a sweep (its HTML page and plots) is rwn_sql.evaluation.tune_report.
"""
from __future__ import annotations

import csv
import math
import os
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from .. import limits
from ..engines import duckdb as engine, duckdb_backend, sources
from ..rwn import run as rwn, search_sql, sqlgen
from ..engines.dialects import require_duckdb
from ..errors import RWNError
from .evaluate import Evaluation, evaluate, evaluate_replicates
from ..identifiers import float_literal, quote_ident
from ..randomness import KeyScope, bits_sql, hash_sql, resolve_key
from ..rwn.spec import MAX_COUNT, finite_number

# The measures a sweep keeps, each a number from one evaluation (None when not defined).
MEASURES = {
    "corr_mad": ("utility", lambda ev: ev.utility.corr_mad),
    "pca_loading_mad": ("utility", lambda ev: ev.utility.pca_loading_mad),
    "ks_max": ("utility", lambda ev: max(ev.utility.ks.values()) if ev.utility.ks else None),
    "ols_ci_overlap": ("utility", lambda ev: ev.utility.ols.ci_overlap_mean if ev.utility.ols else None),
    "ols_r2": ("utility", lambda ev: ev.utility.ols.r2.released if ev.utility.ols else None),
    "dcr_mean": ("risk", lambda ev: ev.risk.dcr_mean),
    "linkage_rate": ("risk", lambda ev: ev.risk.linkage_rate),
    "sdid": ("risk", lambda ev: ev.risk.sdid),
    "unique_survival": ("risk", lambda ev: ev.risk.unique_survival),
    "sdid_rwn_paper": ("risk", lambda ev: ev.risk.sdid_rwn_paper),
    "rmdid": ("risk", lambda ev: ev.risk.rmdid),
    "dcr_mean_raw": ("risk", lambda ev: ev.risk.dcr_mean_raw),
}


MAX_SETTINGS = 10_000      # each setting is a full neighbourhood search plus reps releases


def parse_grid(text: str) -> list[float]:
    """'0.2:1.2:0.05' -> [0.2, 0.25, ..., 1.2] (end included); '0.3,0.5' -> [0.3, 0.5].
    Every number must be finite, and a grid holds at most MAX_SETTINGS values."""
    try:
        parts = [float(x) for x in text.split(":")] if ":" in text else None
        values = None if parts else [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise RWNError(f"grid {text!r}: use START:STOP:STEP or comma-separated values") from None
    if parts is not None:
        if len(parts) != 3:
            raise RWNError(f"grid {text!r}: use START:STOP:STEP or comma-separated values")
        bad = [x for x in parts if not math.isfinite(x)]
        if bad:
            raise RWNError(f"grid {text!r}: {bad[0]!r} is not a finite number (START, STOP and STEP must be)")
        start, stop, step = parts
        if step <= 0:
            raise RWNError(f"grid {text!r}: the step must be > 0")
        span = (stop - start) / step      # +-inf only when the count is huge or negative anyway
        if span < 0:
            raise RWNError(f"grid {text!r} is empty (STOP is below START)")
        if span + 1 > MAX_SETTINGS:
            raise RWNError(f"grid {text!r} has about {span + 1:.3g} values; at most {MAX_SETTINGS} "
                           f"are allowed (each is a full run): use a larger step")
        count = math.floor(span + 1e-9) + 1
        values = [round(start + i * step, 12) for i in range(max(count, 0))]
    if not values:
        raise RWNError(f"grid {text!r} is empty")
    return _checked_grid(values, f"grid {text!r}")


def _checked_grid(values, what: str) -> list[float]:
    """`values` as floats, each finite by RWNSpec's rule for eps (spec.finite_number), at most
    MAX_SETTINGS of them."""
    values = list(values)
    if len(values) > MAX_SETTINGS:
        raise RWNError(f"{what} has {len(values)} values; at most {MAX_SETTINGS} are allowed")
    return [finite_number(v, f"each value of {what}") for v in values]


@dataclass
class Setting:
    """One setting of one method: the mean, standard deviation and count of every measure
    over its releases; for RWN also the neighbourhood-size distribution."""
    method: str
    parameter: str
    value: float
    reps: int
    measures: dict[str, tuple[float | None, float | None]]     # name -> (mean, sd over reps)
    sizes: dict[str, float] = field(default_factory=dict)

    def label(self) -> str:
        return f"{self.method} {self.parameter}={self.value:g}"


@dataclass
class SweepResult:
    source: str
    columns: list[str]
    k: int
    q: float
    settings: list[Setting]
    figure1: dict[float, dict[str, list[float]]]    # eps -> {"size": [...], "dcr": [...]}
    strata: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the baselines left as it was, and why

    def to_dict(self) -> dict:
        return {"source": self.source, "columns": self.columns, "k": self.k, "q": self.q,
                "strata": self.strata, "notes": self.notes, "settings": [s.__dict__ for s in self.settings],
                "figure1": {repr(e): v for e, v in self.figure1.items()}}

    def to_csv(self, path) -> None:
        """One row per setting: method, parameter, value, reps, size statistics, and
        <measure>_mean / <measure>_sd for every measure. Written atomically."""
        size_keys = ["size_min", "size_median", "size_mean", "size_max", "share_at_k"]
        header = ["method", "parameter", "value", "reps"] + size_keys + \
            [f"{m}_{s}" for m in MEASURES for s in ("mean", "sd")]
        rows = []
        for st in self.settings:
            row = [st.method, st.parameter, repr(st.value), st.reps] + [_num(st.sizes.get(k)) for k in size_keys]
            for m in MEASURES:
                mean, sd = st.measures.get(m, (None, None))
                row += [_num(mean), _num(sd)]
            rows.append(row)
        _atomic_write(path, lambda fh: (csv.writer(fh).writerow(header), csv.writer(fh).writerows(rows)))


def _num(v) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else repr(float(v))


def _atomic_write(path, write, mode: str = "w") -> None:
    target = os.fspath(path)
    tmp = f"{target}.{os.getpid()}.tmp"
    try:
        with open(tmp, mode, encoding=None if "b" in mode else "utf-8", newline="" if "b" not in mode else None) as fh:
            write(fh)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _summarise(evaluations: list[Evaluation]) -> dict[str, tuple[float | None, float | None]]:
    out = {}
    for name, (_, get) in MEASURES.items():
        vals = [get(ev) for ev in evaluations]
        vals = [float(v) for v in vals if v is not None and not (isinstance(v, float) and math.isnan(v))]
        if not vals:
            out[name] = (None, None)
        else:
            out[name] = (float(np.mean(vals)), float(np.std(vals, ddof=1)) if len(vals) > 1 else None)
    return out


def sweep(con: engine.Connection, source, columns, eps_values, k: int = 5, q: float = 1.0,
          reps: int = 20, scale: str = "minmax", target: str | None = None, categorical=(),
          key: str | None = None, seed: int | None = None, rank_swap=(), mdav=(), progress=None,
          strata=(), on_setting=None, rank_swap_variant: str = "simple") -> SweepResult:
    """RWN over a grid of eps (k, q fixed), `reps` releases each, plus optional baselines:
    rank swapping for each P in `rank_swap` (percent, `reps` releases each, drawn in one
    statement: release r equals rank_swap(key=f"{key}#{r}", variant=rank_swap_variant); the
    variant "sdcmicro", with sdcMicro's top and bottom 5 % replaced by their means, is reported
    as method "rank_swap_sdcmicro") and MDAV for each group size in
    `mdav` (deterministic: one release). RWN's release r of an eps equals
    perturb(eps=eps, key=f"{key}#{r}", strata=strata, categorical=categorical): with `strata`,
    neighbourhoods within strata, whose columns pass through. The baselines cannot honour
    `strata` (refused) and leave the `categorical` columns as they are (said in the result's
    `notes`); they are checked (settings, column types, values) before any work starts.
    `progress(done, total, label)` counts releases evaluated (total = reps per eps and per P,
    plus one per MDAV k); it is called at once (label "checking ..."), when each stage and
    setting starts (e.g. "rwn eps=0.25..0.95: neighbourhoods and 20 releases each", then
    "rwn eps=0.3: 20 releases drawn") and after every release evaluated.
    `on_setting(result)` is called with the SweepResult so far after every setting, to save
    what is done (a later failure keeps it)."""
    require_duckdb(con, "sweep")
    eps_values = _checked_sweep(reps, eps_values, rank_swap, mdav)
    total = (len(eps_values) + len(rank_swap)) * reps + len(mdav)
    if progress:
        progress(0, total, "checking the source and the settings")
    the_key = resolve_key(key, seed)      # once: RWN and rank swapping draw with the same key
    run = _SweepRun(con, source, columns, reps, target, categorical, progress, total, strata, on_setting, k, q)
    run.result.notes = _checked_baselines(run, rank_swap, mdav, scale, rank_swap_variant)
    try:
        if eps_values:
            _rwn_settings(run, eps_values, k, q, scale, the_key)
        _rank_swap_settings(run, rank_swap, the_key, rank_swap_variant)
        _mdav_settings(run, mdav, scale)
    finally:
        for t in (RWN_TABLE, BASELINE_TABLE):
            con.execute(f"DROP TABLE IF EXISTS {quote_ident(t)}").fetchall()
    return run.result


RWN_TABLE = "__rwn_sweep_releases"      # the RWN releases of every eps (rwn_releases' into=)
BASELINE_TABLE = RWN_TABLE + "_b"       # the baselines' releases: plain tables (rank_swap's and mdav's into=)


def _checked_sweep(reps, eps_values, rank_swap, mdav) -> list[float]:
    """The eps grid, checked (after reps); RWNError for a sweep without any setting."""
    if isinstance(reps, bool) or not isinstance(reps, int) or not 1 <= reps <= MAX_COUNT:
        raise RWNError(f"reps must be an integer >= 1 (at most {MAX_COUNT}), got {reps!r}")
    eps_values = _checked_grid(eps_values, "eps_values")
    if not eps_values and not rank_swap and not mdav:
        raise RWNError("the sweep is empty: give at least one eps (or a baseline setting)")
    return eps_values


def _checked_baselines(run: _SweepRun, p_values, group_sizes, scale: str, variant: str = "simple") -> list[str]:
    """The baselines' settings, columns and values checked before any work (RWNError): they
    cannot honour strata (a swap or a group would cross them), change only the columns that are
    not categorical (rank swapping needs an order, MDAV numbers), which need a value in every
    record; the rank-swap `variant`, P in (0, 100], 2 <= k <= n (baselines.check_rank_swap_inputs
    and check_mdav_inputs, as the baselines check them). Returns the notes of the result: the
    categorical columns they leave as they are."""
    from . import baselines
    if variant not in baselines.RANK_SWAP_VARIANTS:
        raise RWNError(f"rank_swap_variant must be 'simple' or 'sdcmicro', got {variant!r}")
    methods = [name for name, values in (("rank swapping", p_values), ("MDAV", group_sizes)) if values]
    if not methods:
        return []
    what = " and ".join(methods)
    if run.strata:
        crossing = " and ".join({"rank swapping": "swaps", "MDAV": "groups"}[m] for m in methods)
        raise RWNError(f"{what} cannot honour strata ({', '.join(run.strata)}): "
                       f"{'their' if len(methods) > 1 else 'its'} {crossing} would cross them; sweep the baselines "
                       f"without strata, or each stratum's records on their own")
    columns = run.baseline_columns()
    if not columns:
        raise RWNError(f"every column is categorical, and {what} change only the others: leave the baselines out")
    if p_values:
        baselines.check_rank_swap_inputs(run.con, run.src, columns, p_values, run.reps, variant=variant)
    if group_sizes:         # a grid's whole numbers (3.0) are group sizes
        sizes = [int(k) if isinstance(k, float) and k.is_integer() else k for k in group_sizes]
        baselines.check_mdav_inputs(run.con, run.src, columns, sizes, scale, name="MDAV's k")
    kept = [c for c in run.columns if c in run.categorical]
    if not kept:
        return []
    one, both = len(kept) == 1, len(methods) > 1
    return [f"{what} {'leave' if both else 'leaves'} the categorical column{'' if one else 's'} {', '.join(kept)} "
            f"unchanged (RWN perturbs {'it' if one else 'them'}): {'their' if both else 'its'} measures are those "
            f"of releases with the original values there"]


class _SweepRun:
    """What the settings of one sweep share: the connection and source, the columns and
    measures of the evaluations, the count of releases evaluated that progress reports, and
    the result so far (`add` appends a setting and hands the result to on_setting)."""

    def __init__(self, con, source, columns, reps: int, target, categorical, progress, total: int,
                 strata, on_setting, k: int, q: float):
        self.con = con
        self.be = duckdb_backend.DuckDBBackend(con)          # evaluation reads DuckDB relations: sweeps run on DuckDB
        self.src = self.be.source(source)
        self.columns = list(columns)
        self.reps, self.target, self.categorical, self.strata = reps, target, list(categorical), list(strata)
        self.progress, self.total, self.done, self.on_setting = progress, total, 0, on_setting
        self.result = SweepResult(source=self.src.label, columns=self.columns, k=k, q=q, settings=[], figure1={},
                                  strata=self.strata)

    def add(self, setting: Setting) -> None:
        self.result.settings.append(setting)
        if self.on_setting:
            self.on_setting(self.result)

    def baseline_columns(self) -> list[str]:
        """The columns the baselines change: the columns but the categorical ones."""
        return [c for c in self.columns if c not in self.categorical]

    def report(self, label):
        if self.progress:
            self.progress(self.done, self.total, label)

    def rows_of(self, released: str, where: str = "true") -> sources.Source:
        """The rows of table `released` where `where` holds, in the table's order, as a Source
        (a query text would be checked by tokenizing it, once per call)."""
        table = self.be.source(released)
        return sources.Source(f"(SELECT * FROM {table.sql} WHERE {where} ORDER BY rowid)", table.schema, table.label)

    def evaluated(self, released: str, label: str, where: str = "true") -> list:
        """The evaluations of the `reps` releases in the rows of table `released` where `where`
        holds (one batch, in the table's order), with progress."""
        evs = []
        for ev in evaluate_replicates(self.con, self.src, self.rows_of(released, where), self.reps, self.columns,
                                      target=self.target, categorical=self.categorical):
            evs.append(ev)
            self.done += 1
            self.report(f"{label}: release {len(evs)}/{self.reps} evaluated")
        return evs


def _rwn_settings(run: _SweepRun, eps_values, k: int, q: float, scale: str, the_key: str) -> None:
    """RWN's settings, one per eps, added to the run's result with Figure 1's data (each eps's
    neighbourhood sizes and distances to the closest record); every eps's releases drawn into
    RWN_TABLE by rwn_releases."""
    run.report(f"rwn eps={eps_values[0]:g}..{eps_values[-1]:g}: neighbourhoods and {run.reps} releases each")
    releases = rwn_releases(run.be, run.src, run.columns, eps_values, k=k, q=q, reps=run.reps, scale=scale,
                            categorical=run.categorical, key=the_key, into=RWN_TABLE, strata=run.strata)
    try:
        for setting, where, size, dcr in releases:
            eps = eps_values[setting]
            run.report(f"rwn eps={eps:g}: {run.reps} releases drawn")
            evs = run.evaluated(RWN_TABLE, f"rwn eps={eps:g}", where=where)
            run.result.figure1[eps] = {"size": size.tolist(), "dcr": dcr.tolist()}
            run.add(Setting("rwn", "eps", eps, run.reps, _summarise(evs), {
                "size_min": float(size.min()), "size_median": float(np.median(size)),
                "size_mean": float(size.mean()), "size_max": float(size.max()),
                "share_at_k": float(np.mean(size == k))}))
    finally:
        releases.close()


def _rank_swap_settings(run: _SweepRun, p_values, the_key: str, variant: str = "simple") -> None:
    """Rank swapping's settings, one per P, of the columns but the categorical ones: every P
    from one query of the keyed draws; all reps releases of a P in one statement, release r
    with the key key#r. The variant "sdcmicro" is reported as method "rank_swap_sdcmicro"."""
    if not p_values:
        return
    from . import baselines
    method = "rank_swap" if variant == "simple" else f"rank_swap_{variant}"
    statements = baselines.rank_swap_statements(run.con, run.src, run.baseline_columns(), p_values, key=the_key,
                                                reps=run.reps, variant=variant)
    for value in p_values:
        run.report(f"{method} P={value:g}: {run.reps} releases")
        # the sweep's own table (no write_table: its check that the statement does not read
        # the table parses the statement, which embeds every swap; so for MDAV)
        engine.run(run.con, f"CREATE OR REPLACE TABLE {quote_ident(BASELINE_TABLE)} AS\n{next(statements)}")
        evs = run.evaluated(BASELINE_TABLE, f"{method} P={value:g}")
        run.add(Setting(method, "P", float(value), run.reps, _summarise(evs)))


def _mdav_settings(run: _SweepRun, group_sizes, scale: str) -> None:
    """MDAV's settings, one per group size k, of the columns but the categorical ones: one
    release each (MDAV is deterministic)."""
    from . import baselines
    for value in group_sizes:
        run.report(f"mdav k={value:g}: release 1/1")
        engine.run(run.con, f"CREATE OR REPLACE TABLE {quote_ident(BASELINE_TABLE)} AS\n"
                            + baselines.mdav_statement(run.con, run.src, run.baseline_columns(), int(value),
                                                       scale=scale))
        evs = [evaluate(run.con, run.src, run.rows_of(BASELINE_TABLE), run.columns, target=run.target,
                        categorical=run.categorical, order="input")]      # mdav_statement writes in input order
        run.done += 1
        run.add(Setting("mdav", "k", float(value), 1, _summarise(evs)))
        run.report(f"mdav k={value:g}: done")


# Peak memory per listed neighbour pair of a sweep: the staged lists of the largest eps, their
# narrowed copies and the releases drawn from them. Measured: 20k x 3 uniform records, eps up
# to 0.3 (31.5M pairs), peaked at 10.5 GB (about 330 bytes a pair); 5k x 3 at 0.3 (2M pairs)
# at 0.5 GB of RSS.
TUNE_BYTES_PER_PAIR = 320

# DuckDB copies a constant list into each chunk of this many rows (STANDARD_VECTOR_SIZE): the
# one-statement sweep's copies, against Limits.ONE_STATEMENT_COPY_BYTES.
CHUNK_ROWS = 2048


def rwn_releases(be, src: sources.Source, columns, eps_values, k: int, q: float, reps: int, scale: str,
                 categorical, key: str, into: str, strata=()):
    """Yields, for each eps of `eps_values` in turn, (setting, where, size, dcr) once its
    `reps` releases are in the table `into`: they are its rows where the SQL condition `where`
    holds, columns `replicate` and the source's columns, ordered by (replicate, record) in the
    table's order (rowid); release r equals rwn_sql.perturb(eps=eps_values[setting],
    key=f"{key}#{r}", strata=strata, categorical=categorical, order="input"): with `strata`,
    neighbourhoods within strata, whose columns pass through. size and dcr are the neighbourhoods' sizes and closest
    distances (the paper's Figure 1), by record. Close the generator when done (its finally
    drops the staged neighbourhoods).

    One neighbourhood search serves the whole grid: at the largest eps, whose lists hold every
    smaller eps's as a prefix (narrowed_hoods_sql). On small data (the paper's 241 records)
    every statement's fixed cost outweighs its work, so all eps and replicates are drawn in
    one more statement (sweep_release_sql: the keyed draws hashed once for every eps; rows of
    eps i where setting = i); otherwise one perturb statement per eps over its narrowed lists."""
    specs = [rwn.spec(tuple(columns), categorical=tuple(categorical), k=k, eps=eps, q=q, scale=scale,
                      strata=tuple(strata)) for eps in eps_values]
    widest = specs[max(range(len(specs)), key=lambda i: eps_values[i])]
    rwn.check_source(be, src, widest)        # the largest eps has the most pairs
    rwn.listed_pairs_budget(be, src, widest, TUNE_BYTES_PER_PAIR, "tune")
    hoods = rwn.stage_neighborhoods(be, src, widest)
    target = quote_ident(into)
    keys = KeyScope(lasting=False)      # not the session's scope: the caller runs between the yields
    try:
        key_sql = be.key_sql(key, keys)
        data = be.relation(narrowed_hoods_sql(hoods.hood, widest, eps_values, be.dialect)
                           + "\nSELECT setting, size, sqrt(dcr2) AS dcr FROM hoods ORDER BY setting, rid").fetchnumpy()
        setting = np.asarray(data["setting"])
        size, dcr = np.asarray(data["size"], float), np.asarray(data["dcr"], float)
        n = int(np.sum(setting == 0))
        listed = n + int(be.rows(f"SELECT coalesce(sum(size), 0) FROM {hoods.hood}")[0][0]) + n * len(src.names)
        copied = math.ceil(len(eps_values) * reps * n / CHUNK_ROWS) * listed * 8
        one_statement = copied <= limits.current().ONE_STATEMENT_COPY_BYTES
        if one_statement:
            engine.run(be.con, f"CREATE OR REPLACE TEMP TABLE {target} AS "
                               + sweep_release_sql(hoods.rows, hoods.hood, widest, eps_values, key_sql, reps,
                                                   src.names, be.dialect))
        for i, spec in enumerate(specs):
            if not one_statement:
                narrowed = None if spec.eps == widest.eps else be.stage(
                    narrowed_hood_sql(hoods.hood, widest, spec.eps, be.dialect))
                try:
                    hood = rwn.Neighborhoods(be, src, spec, hoods.rows, narrowed or hoods.hood, [])
                    engine.run(be.con, f"CREATE OR REPLACE TEMP TABLE {target} AS "
                                       + hood.final("perturb", key_sql, reps=reps))
                finally:
                    if narrowed:
                        be.drop(narrowed)
            yield i, (f"setting = {i}" if one_statement else "true"), size[setting == i], dcr[setting == i]
    finally:
        be.forget_keys(keys.made)
        rwn.forget(be, hoods.staged)


def narrowed_hood_sql(hood: str, widest, eps: float, dialect) -> str:
    """The neighbourhoods (rid, members, radius2, dcr2, size) at `eps` <= widest.eps, from those
    staged for `widest` (see narrowed_hoods_sql), for Neighborhoods.final."""
    members, radius2 = search_sql.members_within("h.members", float_literal(eps * eps), widest, dialect)
    return (f"SELECT rid, members, radius2, dcr2, {dialect.list_length('members')} AS size\n"
            f"FROM (SELECT h.rid, {members} AS members, {radius2} AS radius2, h.dcr2 FROM {hood} h)")


def narrowed_hoods_sql(hood: str, widest, eps_values, dialect) -> str:
    """WITH ... hoods(setting, rid, size, dcr2): the neighbourhood sizes for each eps of
    `eps_values` (setting = its position), from the neighbourhoods `hood` staged for `widest`
    (the spec of the largest eps); S_i at that eps is the first `size` members of i's list.

    Exact, the same lists as a search at each eps (tests/evaluation/test_tune.py checks it): the search
    keeps j when its computed squared distance d2 <= R * F, with R = max(eps^2, d2 of the k-th
    nearest) and F the tie factor (search_sql.members_within, the rule applied here too), members
    sorted by (d2, j) from distances computed by the same expression whatever eps is. A smaller eps gives a smaller R, so its members
    are the first ones of the widest list with d2 <= R * F, and the k nearest are its first k
    (dcr2, the closest record's, does not depend on eps)."""
    grid = ", ".join(f"({i}, {float_literal(eps * eps)})" for i, eps in enumerate(eps_values))
    members, _ = search_sql.members_within("h.members", "g.eps2", widest, dialect)
    return (f"WITH\ngrid(setting, eps2) AS (VALUES {grid}),\n"
            f"hoods AS (\n    SELECT g.setting, h.rid, {dialect.list_length(members)} AS size, h.dcr2\n"
            f"    FROM {hood} h, grid g\n)")


def sweep_release_sql(rows: str, hood: str, widest, eps_values, key_sql: str, reps: int, names, dialect) -> str:
    """The statement of rwn_releases' one-statement table, over the staged rows (__rwn_rid and the
    source's columns `names`) and the neighbourhoods of the largest eps.

    The draws are those of sqlgen.perturb_tail_ctes with reps: for record rid of replicate r
    and column c, the keyed hash of (key#r, rwn.perturb, rid, c), turned into a draw by
    sqlgen.cell_draw (keep the value, or take c of the member at 1 + floor(u |S_i|) of S_i in
    (d2, j) order). They are computed once per (replicate, record) and serve every eps.
    The donor is read by position from one list `js`: positions 1..n hold the records
    themselves, then every record's widest members, record after record (member m of record
    i at n + offset_i + m: S_i at any eps is a prefix of the widest list, narrowed_hoods_sql);
    its values from one list per column, by record number. No join per column, and no
    neighbourhood list copied into the release rows. With strata the lists hold the record's
    stratum only (the search keeps to it), and the strata pass through as every column that is
    not perturbed does (its own record's value)."""
    if widest.id or widest.drop:
        raise ValueError("sweep_release_sql: tune's specs have no id or drop")
    key_sql = sqlgen.replicate_key_sql(key_sql, "rep", dialect)
    bits, positions = [], []
    for i, c in enumerate(widest.columns, 1):
        h = hash_sql(key_sql, sqlgen.PERTURB_PURPOSE, "rid", c, dialect)
        bits.append(f"{bits_sql(h, 0, dialect)} AS keep_{i}, {bits_sql(h, 1, dialect)} AS pick_{i}")
        replaced, index = sqlgen.cell_draw(f"d.keep_{i}", f"d.pick_{i}", "h.size", widest, dialect)
        positions.append(f"CASE WHEN NOT ({replaced}) THEN d.rid WHEN h.size > 0 THEN h.offset_ + {index} "
                         f"END AS pos_{i}")
    donor = {c: f"p.donor_{i}" for i, c in enumerate(widest.columns, 1)}
    lists = ", ".join(f"{dialect.sorted_list_agg(quote_ident(c), '__rwn_rid')} AS l_{i}" for i, c in enumerate(names))
    values = ", ".join(f"{dialect.list_element(f'v.l_{i}', donor.get(c, 'p.rid'))} AS {quote_ident(c)}"
                       for i, c in enumerate(names))
    donors = ", ".join(f"{dialect.list_element('e.js', f'p.pos_{i}')} AS donor_{i}"
                       for i in range(1, len(widest.columns) + 1))
    m = dialect.materialized()
    # Each list is read in its own step, beside one row (a cross product): joined with
    # anything larger, the optimizer may copy the list into every row of a hash table.
    return (narrowed_hoods_sql(hood, widest, eps_values, dialect) + ",\n"
            f"records AS (SELECT count(*) AS n FROM {hood}),\n"
            f"widest AS (\n    SELECT rid, n + CAST(sum(size) OVER (ORDER BY rid) AS BIGINT) - size AS offset_\n"
            f"    FROM {hood}, records\n),\n"
            f"everyone AS (\n    SELECT {dialect.sorted_list_agg('j', 'pos')} AS js FROM (\n"
            f"        SELECT rid AS pos, rid AS j FROM {hood}\n        UNION ALL\n"
            f"        SELECT n + row_number() OVER (ORDER BY u.rid, u.d2, u.j) AS pos, u.j\n"
            f"        FROM {dialect.unnest_struct_list(hood, 'rid', 'members', ['rid', 'd2', 'j'])}, records)\n),\n"
            f"vals AS (SELECT {lists} FROM {rows}),\n"
            f"draws AS {m}(\n    SELECT rid, rep, {', '.join(bits)}\n"
            f"    FROM (SELECT rid FROM {hood}), range({int(reps)}) AS r(rep)\n),\n"
            f"picks AS {m}(\n    SELECT h.setting, d.rep, d.rid, {', '.join(positions)}\n"
            f"    FROM draws d JOIN (SELECT n.setting, n.rid, n.size, w.offset_ FROM hoods n JOIN widest w ON w.rid = n.rid) h\n"
            f"        ON h.rid = d.rid\n),\n"
            f"donors AS {m}(\n    SELECT p.setting, p.rep, p.rid, {donors}\n    FROM picks p, everyone e\n)\n"
            f"SELECT p.setting, p.rep AS replicate, {values}\n"
            f"FROM donors p, vals v\n"
            f"ORDER BY p.setting, p.rep, p.rid")


class ProgressBar:
    """A `progress` callback for sweep() that draws on `stream` (stderr, say). With
    redraw=True (a terminal): one line, redrawn in place with a bar, the releases evaluated,
    what runs now and the elapsed seconds, also every `tick` seconds while a long statement
    runs, so it moves from the first second. With redraw=False (a log file): one line per call.
    Use as a context manager; leaving it ends the line and stops the redrawing thread. A caller
    counting something else than releases names it: bar(done, total, label, unit="...")."""

    def __init__(self, stream, redraw: bool, width: int = 24, tick: float = 0.5):
        self.stream, self.redraw, self.width, self.tick = stream, redraw, width, tick
        self.state = (0, 1, "starting")
        self.start = time.perf_counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._ticks, daemon=True) if redraw else None

    def __enter__(self):
        self.start = time.perf_counter()
        if self._thread:
            self._draw()
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread:
            self._thread.join()
            with self._lock:
                self.stream.write("\n")
                self.stream.flush()

    def __call__(self, done: int, total: int, label: str, unit: str = "releases") -> None:
        with self._lock:
            self.state = (done, total, label, unit)
        self._draw()

    def line(self) -> str:
        done, total, label, *unit = self.state
        filled = self.width * done // max(total, 1)
        bar = "#" * filled + "-" * (self.width - filled)
        return (f"[{bar}] {done}/{total} {unit[0] if unit else 'releases'}  {label}  "
                f"({time.perf_counter() - self.start:.0f} s)")

    def _draw(self) -> None:
        with self._lock:
            if self.redraw:
                self.stream.write("\r\x1b[2K" + self.line())      # \x1b[2K: clear the old line
            else:
                self.stream.write(self.line() + "\n")
            self.stream.flush()

    def _ticks(self) -> None:
        while not self._stop.wait(self.tick):
            self._draw()


# --- the measures a report or a recommendation ranks by ------------------------------------

# The measures whose larger values are the better ones (more utility kept, or released records
# farther from the closest original): the risk-utility plot's axis labels say so.
HIGHER_IS_BETTER = ("ols_ci_overlap", "ols_r2", "dcr_mean", "dcr_mean_raw")


def measures_of(kind: str) -> list[str]:
    """The names of MEASURES of one kind, "risk" or "utility", in their order."""
    return [name for name, (k, _) in MEASURES.items() if k == kind]


def check_axes(risk: str, utility: str, has_target: bool = True) -> None:
    """RWNError unless `risk` is a risk measure and `utility` a utility measure the sweep keeps
    (MEASURES), naming the choices; the OLS measures need a sweep with a target."""
    for kind, name in (("risk", risk), ("utility", utility)):
        if name not in measures_of(kind):
            raise RWNError(f"{name!r} is not a {kind} measure the sweep keeps: choose the {kind} axis among "
                           f"{', '.join(measures_of(kind))}")
    if utility.startswith("ols_") and not has_target:
        raise RWNError(f"the utility measure {utility!r} needs a target column for the OLS fit (--target)")
