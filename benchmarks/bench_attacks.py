"""Benchmark: the attacks of rwn_sql.attack_risk (issue #25) against the anonymeter package.

Each workload is an ORIGINAL of n records, a CONTROL of n // 5 further records of the same
population (held out: never released) and a RELEASE, rwn_sql.perturb of the original (k = 5,
eps = 0, q = 1, seed 1, the numeric columns perturbed; data generation and the release are not
timed). Workloads (--workload; --rows gives the sizes n, default 10,000 and 100,000):

  gauss   4 standard Gaussian columns a, b, c, d (numeric); secret d
  adult   adult.csv drawn with replacement: age, education_num, hours_per_week (age and hours
          jittered by up to half a unit, uniformly) and sex, race (categorical); secret
          hours_per_week; the original and the control drawn from disjoint halves of the file

Timed, in one process, the data in DuckDB tables:

  rwn_sql    attack_risk(con, "o", "r", "c", columns, secret=..., categorical=..., seed=1) with
             the defaults (--attacks, default 500; n_cols 3, n_neighbors 1), and within that
             run each attack: singling out (the multivariate and the univariate together, as
             attack_risk runs them), linkability, inference; the rest of the total is reading
             the three sets into numpy
  anonymeter anonymeter 1.1.0's evaluators on the same pandas frames, n_jobs 1: the
             SinglingOutEvaluator's multivariate and univariate modes (seed 1), the
             LinkabilityEvaluator (the same two column halves) and the InferenceEvaluator (the
             same secret; regression for a numeric one); its numba functions compiled on a
             small run first, untimed

anonymeter's singling-out search evaluates its predicates with polars, 1,000 at a time over
every released record, and about 1 in 1,000 predicates singles out among 100,000 records: at
100k rows and 500 predicates it would take minutes. So up to --ref-rows (default 10,000) it
runs with --ref-so-attacks predicates (default: --attacks), above that with --big-so-attacks
(default 50; 0 skips it), and rwn_sql's singling out is timed again at that n_attacks (a second
attack_risk run) for the ratio. Linkability and inference run at every size with --attacks.
Ratios are rwn_sql time / anonymeter time, both from this process.

    python benchmarks/bench_attacks.py                    # gauss and adult at 10k and 100k
    python benchmarks/bench_attacks.py --quick            # 2,000 rows, 100 attacks
    python benchmarks/bench_attacks.py --workload adult --rows 100000 --skip-reference
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import time
import warnings
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.csv  # noqa: F401  (pa.csv)

import rwn_sql
from machine import cpu_name, peak_rss_mb
from rwn_sql.evaluation import attacks

DATA = Path(__file__).resolve().parent.parent / "examples" / "data"
DATA_SEED = 20240601
WORKLOADS = ["gauss", "adult"]


class Workload:
    """columns, categorical, secret, link halves, and the original and control as dicts of arrays."""

    def __init__(self, name, columns, categorical, secret, original, control):
        self.name, self.columns, self.categorical, self.secret = name, columns, categorical, secret
        self.original, self.control = original, control
        half = len(columns) // 2
        self.halves = (columns[:half], columns[half:])

    @property
    def rows(self) -> int:
        return len(next(iter(self.original.values())))


def make_workload(name: str, rows: int) -> Workload:
    rng = np.random.default_rng(DATA_SEED)
    n_control = max(rows // 5, 1)
    if name == "gauss":
        x = rng.standard_normal((rows + n_control, 4))
        data = {c: x[:, j] for j, c in enumerate("abcd")}
        return Workload(name, list("abcd"), [], "d", {c: v[:rows] for c, v in data.items()},
                        {c: v[rows:] for c, v in data.items()})
    if name == "adult":
        t = pa.csv.read_csv(DATA / "adult.csv")
        numeric, categorical = ["age", "education_num", "hours_per_week"], ["sex", "race"]
        frame = {c: t[c].to_numpy().astype(float) for c in numeric}
        frame.update({c: np.asarray(t[c].to_numpy(zero_copy_only=False), dtype=object) for c in categorical})
        split = rng.permutation(t.num_rows)            # original and control from disjoint halves
        halves = [split[: t.num_rows // 2], split[t.num_rows // 2:]]
        drawn = []
        for pool, size in zip(halves, (rows, n_control)):
            pick = pool[rng.integers(0, len(pool), size)]
            part = {c: v[pick] for c, v in frame.items()}
            for c in ("age", "hours_per_week"):
                part[c] = part[c] + rng.uniform(-0.5, 0.5, size)
            drawn.append(part)
        return Workload(name, numeric + categorical, categorical, "hours_per_week", *drawn)
    raise ValueError(name)


def load(wl: Workload, threads: int):
    """A DuckDB connection with tables o (original), r (the RWN release of o) and c (control)."""
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    for table, part in (("o", wl.original), ("c", wl.control)):
        arrow_table = pa.table(part)      # noqa: F841  (read by DuckDB's replacement scan)
        con.execute(f"CREATE TABLE {table} AS SELECT * FROM arrow_table")
    numeric = [c for c in wl.columns if c not in wl.categorical]
    rwn_sql.perturb(con, "o", numeric, k=5, eps=0.0, q=1.0, seed=1, into="r")
    return con


# ----------------------------------------------------------------------------- rwn_sql

@contextlib.contextmanager
def timing_attacks(times: dict):
    """Times attacks._singling_out, _linkability and _inference while attack_risk calls them."""
    names = {"_singling_out": "singling_out", "_linkability": "linkability", "_inference": "inference"}
    saved = {name: getattr(attacks, name) for name in names}

    def wrap(name, fn):
        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                times[names[name]] = times.get(names[name], 0.0) + time.perf_counter() - t0
        return timed
    for name, fn in saved.items():
        setattr(attacks, name, wrap(name, fn))
    try:
        yield times
    finally:
        for name, fn in saved.items():
            setattr(attacks, name, fn)


def run_rwn_sql(con, wl: Workload, n_attacks: int) -> tuple[dict, object]:
    times: dict = {}
    with timing_attacks(times):
        t0 = time.perf_counter()
        result = rwn_sql.attack_risk(con, "o", "r", "c", wl.columns, secret=wl.secret, categorical=wl.categorical,
                                     n_attacks=n_attacks, link_columns=wl.halves, seed=1)
        times["total"] = time.perf_counter() - t0
    return times, result


# ----------------------------------------------------------------------------- anonymeter

def frames(con, wl: Workload):
    return [con.table(t).select(*wl.columns).df() for t in ("o", "r", "c")]


def anonymeter_singling_out(ori, syn, ctl, n_attacks: int) -> tuple[float, dict]:
    from anonymeter.evaluators import SinglingOutEvaluator
    t0 = time.perf_counter()
    out = {}
    for mode in ("multivariate", "univariate"):
        ev = SinglingOutEvaluator(ori=ori, syn=syn, control=ctl, n_attacks=n_attacks, n_cols=3, seed=1)
        res = ev.evaluate(mode=mode).results()
        out[mode] = (res.n_success, res.n_control)
    return time.perf_counter() - t0, out


def anonymeter_linkability(ori, syn, ctl, halves, n_attacks: int) -> tuple[float, tuple]:
    from anonymeter.evaluators import LinkabilityEvaluator
    t0 = time.perf_counter()
    res = LinkabilityEvaluator(ori=ori, syn=syn, control=ctl, aux_cols=tuple(halves), n_attacks=n_attacks,
                               n_neighbors=1).evaluate(n_jobs=1).results()
    return time.perf_counter() - t0, (res.n_success, res.n_control)


def anonymeter_inference(ori, syn, ctl, wl: Workload, n_attacks: int) -> tuple[float, tuple]:
    from anonymeter.evaluators import InferenceEvaluator
    t0 = time.perf_counter()
    ev = InferenceEvaluator(ori=ori, syn=syn, control=ctl, aux_cols=[c for c in wl.columns if c != wl.secret],
                            secret=wl.secret, regression=wl.secret not in wl.categorical,
                            n_attacks=n_attacks).evaluate(n_jobs=1)
    res = ev.results()
    return time.perf_counter() - t0, (res.n_success, res.n_control)


def warm_up_anonymeter(wl: Workload) -> None:
    """anonymeter's nearest-neighbour search is numba code: compile it on a small run, untimed."""
    small = make_workload(wl.name, 200)
    con = load(small, 1)
    ori, syn, ctl = frames(con, small)
    anonymeter_linkability(ori, syn, ctl, small.halves, 20)
    anonymeter_inference(ori, syn, ctl, small, 20)
    con.close()


# ----------------------------------------------------------------------------- one workload

def run(wl: Workload, args) -> dict:
    con = load(wl, args.threads)
    n_control = len(next(iter(wl.control.values())))
    print(f"\n== {wl.name}: {wl.rows:,} original, {n_control:,} control records; columns "
          f"{', '.join(wl.columns)}" + (f" (categorical {', '.join(wl.categorical)})" if wl.categorical else "")
          + f"; secret {wl.secret}; link halves {'+'.join(wl.halves[0])} | {'+'.join(wl.halves[1])}; "
          f"n_attacks {args.attacks}")
    times, result = run_rwn_sql(con, wl, args.attacks)
    out = dict(workload=wl.name, rows=wl.rows, **{f"rwn_{k}": v for k, v in times.items()})
    read = times["total"] - sum(times[k] for k in ("singling_out", "linkability", "inference"))
    print(f"rwn_sql     total {times['total']:7.2f} s: singling out {times['singling_out']:.2f} s, linkability "
          f"{times['linkability']:.2f} s, inference {times['inference']:.2f} s, reading {read:.2f} s "
          f"(peak RSS {peak_rss_mb():,.0f} MB)")
    so = result.singling_out
    print(f"            singling out: {so.n_queries} predicates found, {so.successes} / "
          f"{so.control_successes:.1f} on original / control; risks: singling out {so.risk:.4f}, "
          f"linkability {result.linkability.risk:.4f}, inference {result.inference.risk:.4f}")
    if args.skip_reference:
        con.close()
        return out
    ori, syn, ctl = frames(con, wl)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # anonymeter's sanity-check warnings
        warm_up_anonymeter(wl)
        t_link, link = anonymeter_linkability(ori, syn, ctl, wl.halves, args.attacks)
        t_inf, inf = anonymeter_inference(ori, syn, ctl, wl, args.attacks)
        so_attacks = args.ref_so_attacks if wl.rows <= args.ref_rows else args.big_so_attacks
        if so_attacks:
            t_so, so_ref = anonymeter_singling_out(ori, syn, ctl, so_attacks)
    out.update(ref_linkability=t_link, ref_inference=t_inf)
    print(f"anonymeter  linkability {t_link:.2f} s (successes {link[0]} / {link[1]}; rwn_sql "
          f"{result.linkability.successes} / {result.linkability.control_successes:g}), ratio "
          f"{times['linkability'] / t_link:.3f}")
    print(f"            inference   {t_inf:.2f} s (successes {inf[0]} / {inf[1]}; rwn_sql "
          f"{result.inference.successes} / {result.inference.control_successes:g}), ratio "
          f"{times['inference'] / t_inf:.3f}")
    out.update(ratio_linkability=times["linkability"] / t_link, ratio_inference=times["inference"] / t_inf)
    if not so_attacks:
        print(f"            singling out not run at {wl.rows:,} rows (above --ref-rows {args.ref_rows:,}; "
              f"--big-so-attacks N runs it with N predicates)")
    else:
        t_ours = times["singling_out"]
        if so_attacks != args.attacks:           # rwn_sql again, with the reference's n_attacks
            again: dict = {}
            with timing_attacks(again):
                rwn_sql.attack_risk(con, "o", "r", "c", wl.columns, secret=wl.secret, categorical=wl.categorical,
                                    n_attacks=so_attacks, link_columns=wl.halves, seed=1)
            t_ours = again["singling_out"]
        out.update(ref_singling_out=t_so, so_attacks=so_attacks, rwn_so_same=t_ours,
                   ratio_singling_out=t_ours / t_so)
        print(f"            singling out {t_so:.2f} s with n_attacks {so_attacks} (multivariate successes "
              f"{so_ref['multivariate'][0]} / {so_ref['multivariate'][1]:g}); rwn_sql {t_ours:.2f} s at the same "
              f"n_attacks, ratio {t_ours / t_so:.3f}")
    con.close()
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Data generation, the release and loading are not timed.")
    ap.add_argument("--workload", default="all", choices=WORKLOADS + ["all"], help="which workload (default all)")
    ap.add_argument("--rows", default="10000,100000", help="original records, a comma list (default 10000,100000)")
    ap.add_argument("--attacks", type=int, default=500, help="n_attacks of every attack (default 500)")
    ap.add_argument("--threads", type=int, default=2, help="DuckDB threads (default 2)")
    ap.add_argument("--ref-rows", type=int, default=10_000,
                    help="anonymeter's singling out up to this many rows (default 10,000)")
    ap.add_argument("--ref-so-attacks", type=int, default=None,
                    help="anonymeter's singling-out n_attacks up to --ref-rows (default: --attacks)")
    ap.add_argument("--big-so-attacks", type=int, default=50,
                    help="anonymeter's singling-out n_attacks above --ref-rows (default 50; 0: not run)")
    ap.add_argument("--skip-reference", action="store_true", help="time rwn_sql only")
    ap.add_argument("--quick", action="store_true", help="a small run: 2,000 rows, 100 attacks")
    args = ap.parse_args(argv)
    if args.quick:
        args.rows, args.attacks = "2000", 100
    args.ref_so_attacks = args.ref_so_attacks or args.attacks
    sizes = [int(r) for r in str(args.rows).split(",")]
    logging.getLogger("anonymeter").setLevel(logging.ERROR)
    import scipy
    print(f"threads   {args.threads} (DuckDB; cKDTree workers -1; anonymeter n_jobs 1)")
    print(f"duckdb    {duckdb.__version__}; numpy {np.__version__}; scipy {scipy.__version__}; "
          f"rwn_sql {rwn_sql.__version__}" + ("" if args.skip_reference else f"; anonymeter {_version('anonymeter')}"))
    print(f"machine   {cpu_name()}")
    results = []
    for name in (WORKLOADS if args.workload == "all" else [args.workload]):
        for rows in sizes:
            results.append(run(make_workload(name, rows), args))
    print("\nsummary (times in s; ratio = rwn_sql / anonymeter; singling out compared at the n_attacks shown)")
    print(f"{'workload':8} {'rows':>8} {'total':>7} {'s-out':>6} {'link':>6} {'infer':>6} {'ref s-out':>12} "
          f"{'ratio':>6} {'ref link':>8} {'ratio':>6} {'ref inf':>8} {'ratio':>6}")
    nan = float("nan")
    for r in results:
        so_ref = f"{r['ref_singling_out']:.2f} ({r['so_attacks']})" if "ref_singling_out" in r else "-"
        print(f"{r['workload']:8} {r['rows']:>8,} {r['rwn_total']:>7.2f} {r['rwn_singling_out']:>6.2f} "
              f"{r['rwn_linkability']:>6.2f} {r['rwn_inference']:>6.2f} {so_ref:>12} "
              f"{r.get('ratio_singling_out', nan):>6.3f} {r.get('ref_linkability', nan):>8.2f} "
              f"{r.get('ratio_linkability', nan):>6.3f} {r.get('ref_inference', nan):>8.2f} "
              f"{r.get('ratio_inference', nan):>6.3f}")


def _version(package: str) -> str:
    from importlib.metadata import version
    return version(package)


if __name__ == "__main__":
    main()
