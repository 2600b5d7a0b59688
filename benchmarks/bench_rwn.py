"""Benchmark: rwn_sql inside DuckDB against a numpy + scipy reference implementation of RWN.

Both sides do the same work on the same in-memory data: min-max scale the numeric columns, find
every record's exact neighbourhood S_i = {j != i in i's stratum : d(i, j) <= max(eps, r_k(i))}
(ties at the radius included; a categorical mismatch costs the weight w) and, per record and
column, with probability q replace the value by that column of a member of S_i drawn uniformly.
Timed separately (data generation and loading are not timed):

  package    rwn_sql.perturb(con, "data", [...], k, eps, q, seed, into="released")
  reference  cKDTree per stratum on the scaled points (categorical columns one-hot encoded,
             scaled by w / sqrt(2) so that a mismatch costs exactly w), k+2 nearest (self
             included), exact squared distances recomputed as the SQL does, ball queries (in
             chunks) for the records where more points might lie within the radius, numpy
             draws and gather

Workloads (--workload; --rows scales every one down):

  W1   1M x 3 uniform on the unit cube
  W1c  1M x 3, 6 Gaussian blobs, columns on different scales (was --data clustered)
  W1g  1M x 5 standard Gaussian
  W2   1M x 6 correlated: three latent factors plus small noise (intrinsic dimension about 3)
  W3   california_housing.csv, its 9 numeric columns resampled to 1M rows with small jitter
  W4   adult.csv resampled to 1M rows: 4 numeric columns (jittered), 2 categorical, strata sex
  W5   10M x 5 Gaussian under memory_limit = '2GB', the package only; its target is 12x W2's
       time, so after each W5 run the same process times W2's package run (no memory limit, eps
       = 0 or W2's own eps > 0) and prints the ratio (--no-w2 skips it)
  W6   1M x 3 uniform with eps chosen so that the mean neighbourhood holds about 1,000 records

Each runs with k = 5 and eps = 0, then with one eps > 0 (1.5 times the median k-th neighbour
distance of a sample; W6: the median distance to the 1,000th neighbour).

Afterwards, untimed: neighbourhood sizes and radii from rwn_sql.neighborhoods against the
reference's (equal sizes and radii mean equal sets: S_i is everything within the radius), and a
check that every released cell of the package comes from a member of the reference's S_i.
With --compare-listed, the release is timed again with every neighbourhood listed as pairs (the
path before the ball path: large eps-balls are otherwise counted per grid cell and their donors
fetched by rank, rwn_sql.rwn.ball_sql.BallPieces). With --candidates, per record: the probe rows of the grid's cell join (records times neighbour
cells, over all levels) and the candidate pairs it emits (distances computed). With
--compare-grid, the release is timed again with the grid on the columns instead of principal axes
(rwn.grid_axes), and the two releases are checked identical. --search one|steps forces the
package's search into one recursive statement or level by level (rwn.search_in_steps; by
default the memory limit decides: W5 runs in steps). With --cli, both sides are timed
again as command lines with Parquet in and out, process start included: `python -m rwn_sql
perturb in.parquet out.parquet ...` against this script's `--as-reference IN OUT ...` mode, which
imports only numpy, scipy and pyarrow; each side's peak RSS is its own process's (W5, which has
no reference, is not run through the CLI). Needs scipy
(pip install -e '.[bench]').

    python benchmarks/bench_rwn.py --rows 100000 --workload all     # everything, scaled down
    python benchmarks/bench_rwn.py --workload W1g --eps 0           # one workload, eps = 0 only
"""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import os
import subprocess
import sys
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.csv  # noqa: F401  (pa.csv)
import pyarrow.parquet as pq
from scipy.spatial import cKDTree

# duckdb and rwn_sql are imported where used: the reference's CLI process (--as-reference)
# then starts with numpy, scipy and pyarrow only, as a user's script would.

DATA = Path(__file__).resolve().parent.parent / "examples" / "data"
DATA_SEED = 20240601
SLACK = 1e-9        # relative margin: far above kd-tree rounding, so no possible member is missed
BALL_CHUNK = 20_000  # records per ball query: bounds the reference's memory on large neighbourhoods
KEEP_MEMBERS = 5_000_000   # members the reference keeps for the cell check (beyond: sizes only)
WORKLOADS = ["W1", "W1c", "W1g", "W2", "W3", "W4", "W5", "W6"]


@dataclass
class Workload:
    name: str
    numeric: dict                     # column -> float64 values
    categorical: dict = field(default_factory=dict)   # column -> int64 codes
    strata: dict = field(default_factory=dict)        # column -> int64 codes
    memory_limit: str | None = None
    reference: bool = True            # W5: package only (the check still runs, untimed)
    big_hoods: bool = False           # W6: eps for about 1,000 members

    @property
    def columns(self):
        return list(self.numeric) + list(self.categorical)

    def table(self) -> pa.Table:
        return pa.table({**self.numeric, **self.categorical, **self.strata})


def resample(frame: dict, rows: int, rng, jitter: float = 0.01) -> dict:
    """`rows` rows drawn with replacement; numeric float columns get Gaussian jitter of
    `jitter` times their standard deviation (breaks the ties that resampling creates)."""
    n = len(next(iter(frame.values())))
    pick = rng.integers(0, n, rows)
    out = {}
    for c, v in frame.items():
        v = v[pick]
        if v.dtype.kind == "f":
            v = v + jitter * np.std(v) * rng.standard_normal(rows)
        out[c] = v
    return out


def make_workload(name: str, rows: int | None) -> Workload:
    rng = np.random.default_rng(DATA_SEED)
    size = rows or (10_000_000 if name == "W5" else 1_000_000)
    if name in ("W1", "W6"):
        x = rng.random((size, 3))
        return Workload(name, {c: x[:, i] for i, c in enumerate("abc")}, big_hoods=name == "W6")
    if name == "W1c":
        blobs = 6
        centres = rng.uniform(0, 100, (blobs, 3))
        spreads = rng.uniform(0.5, 15, (blobs, 3))
        blob = rng.choice(blobs, size=size, p=rng.dirichlet(np.ones(blobs)))
        x = (centres[blob] + spreads[blob] * rng.standard_normal((size, 3))) * np.array([1.0, 1000.0, 0.01])
        return Workload(name, {c: x[:, i] for i, c in enumerate("abc")})
    if name in ("W1g", "W5"):
        x = rng.standard_normal((size, 5))
        return Workload(name, {c: x[:, i] for i, c in enumerate("abcde")},
                        memory_limit="2GB" if name == "W5" else None, reference=name != "W5")
    if name == "W2":
        latent = rng.standard_normal((size, 3))
        mix = rng.normal(size=(3, 6))
        x = latent @ mix + 0.05 * rng.standard_normal((size, 6))
        return Workload(name, {c: x[:, i] for i, c in enumerate("abcdef")})
    if name == "W3":
        t = pa.csv.read_csv(DATA / "california_housing.csv")
        cols = [c for c in t.column_names if c != "ocean_proximity"]
        frame = {c: t[c].to_numpy(zero_copy_only=False).astype(float) for c in cols}
        keep = ~np.isnan(frame["total_bedrooms"])
        return Workload(name, resample({c: v[keep] for c, v in frame.items()}, size, rng))
    if name == "W4":
        t = pa.csv.read_csv(DATA / "adult.csv")
        numeric = ["age", "fnlwgt", "education_num", "hours_per_week"]
        frame = {c: t[c].to_numpy().astype(float) for c in numeric}
        codes = {}
        for c in ["marital_status", "race", "sex"]:
            _, codes[c] = np.unique(t[c].to_numpy(zero_copy_only=False), return_inverse=True)
        drawn = resample({**frame, **codes}, size, rng)
        return Workload(name, {c: drawn[c] for c in numeric},
                        {c: drawn[c].astype(np.int64) for c in ["marital_status", "race"]},
                        {"sex": drawn["sex"].astype(np.int64)})
    raise ValueError(name)


class Reference:
    """The numpy + scipy side: scaled points, exact squared distances as the SQL computes them."""

    def __init__(self, wl: Workload, weight: float):
        self.wl, self.weight = wl, weight
        self.v = [np.ascontiguousarray(v) for v in wl.numeric.values()]
        self.sc = [v.max() - v.min() for v in self.v]
        self.cats = [np.ascontiguousarray(c) for c in wl.categorical.values()]
        self.n = len(self.v[0])

    def points(self) -> np.ndarray:
        lo = [v.min() for v in self.v]
        parts = [((v - l) / s)[:, None] for v, l, s in zip(self.v, lo, self.sc)]
        for c in self.cats:          # one-hot, a mismatch differs in two coordinates
            values, codes = np.unique(c, return_inverse=True)
            hot = np.zeros((self.n, len(values)))
            hot[np.arange(self.n), codes] = self.weight / np.sqrt(2.0)
            parts.append(hot)
        return np.hstack(parts)

    def d2(self, i, j) -> np.ndarray:
        """Squared distances as the SQL computes them: ((v_i - v_j) / sc)^2 summed in column
        order, then w^2 per categorical mismatch."""
        d2 = 0.0
        for v, s in zip(self.v, self.sc):
            diff = (v[i] - v[j]) / s
            d2 = d2 + diff * diff
        for c in self.cats:
            d2 = d2 + np.where(c[i] == c[j], 0.0, self.weight ** 2)
        return d2

    def perturb(self, k: int, eps: float, q: float, seed: int, threads: int):
        """The full release and the neighbourhoods: (released, sizes, radius2, members), members
        a dict record -> array for the records resolved by ball queries (kept while small)."""
        n, ncol = self.n, len(self.wl.columns)
        rng = np.random.default_rng(seed)
        u = rng.random((n, ncol))                      # member rank = floor(u * size)
        keep = rng.random((n, ncol)) >= q
        x = self.points()
        groups = [np.arange(n)] if not self.wl.strata else \
            [np.flatnonzero(g == s) for g in self.wl.strata.values() for s in np.unique(g)]
        donor = np.empty((n, ncol), dtype=np.int64)
        sizes = np.empty(n, dtype=np.int64)
        radius2 = np.empty(n)
        members, kept = {}, 0
        for idx in groups:
            tree = cKDTree(x[idx])
            want = min(k + 2, len(idx))
            dist, cand = tree.query(x[idx], k=want, workers=threads)
            cand = idx[cand]
            d2 = self.d2(idx[:, None], cand)
            d2[cand == idx[:, None]] = np.inf          # drop the self-match wherever it sits
            order = np.argsort(d2, axis=1, kind="stable")
            cand, d2 = np.take_along_axis(cand, order, 1), np.take_along_axis(d2, order, 1)
            r2 = np.maximum(eps * eps, d2[:, k - 1])
            s = (d2 <= r2[:, None]).sum(axis=1)
            pos = np.minimum((u[idx] * s[:, None]).astype(np.int64), cand.shape[1] - 1)
            donor[idx] = np.take_along_axis(cand, pos, 1)
            # Every point outside those found lies at tree distance >= dist[:, -1]; where that is
            # not clearly beyond the radius (ties, duplicates, eps), collect the whole ball.
            suspicious = np.flatnonzero(dist[:, -1] <= np.sqrt(r2) * (1 + SLACK))
            for start in range(0, len(suspicious), BALL_CHUNK):
                part = suspicious[start:start + BALL_CHUNK]
                balls = tree.query_ball_point(x[idx[part]], np.sqrt(r2[part]) * (1 + SLACK), workers=threads)
                for local, ball in zip(part, balls):
                    i = idx[local]
                    others = idx[np.asarray(ball, dtype=np.int64)]
                    others = others[others != i]
                    od2 = self.d2(i, others)
                    r2[local] = max(eps * eps, np.partition(od2, k - 1)[k - 1]) if k else eps * eps
                    inside = others[od2 <= r2[local]]
                    inside.sort()
                    s[local] = len(inside)
                    donor[i] = inside[(u[i] * len(inside)).astype(np.int64)]
                    if kept + len(inside) <= KEEP_MEMBERS:
                        members[i] = inside
                        kept += len(inside)
            sizes[idx], radius2[idx] = s, r2
        donor = np.where(keep, np.arange(n)[:, None], donor)
        released = np.column_stack([col[donor[:, c]] for c, col in
                                    enumerate(list(self.v) + list(self.cats))])
        return released, sizes, radius2, members, donor

    def bad_cells(self, released, sizes, radius2, members) -> tuple[int, int]:
        """(cells checked, cells whose value is no member's value in that column nor the record's own)."""
        values = np.column_stack(list(self.v) + list(self.cats))
        checked = bad = 0
        rng = np.random.default_rng(0)
        sample = rng.choice(self.n, size=min(self.n, 2_000), replace=False)
        for i in sample:        # a sample of records: members recomputed from the radius
            if i in members:
                m = members[i]
            else:
                m = self._members(i, radius2[i])
            for c in range(values.shape[1]):
                checked += 1
                if released[i, c] != values[i, c] and not (values[m, c] == released[i, c]).any():
                    bad += 1
        return checked, bad

    def _members(self, i, r2):
        idx = np.arange(self.n)
        for g in self.wl.strata.values():
            idx = idx[g[idx] == g[i]]
        d2 = self.d2(i, idx)
        return idx[(d2 <= r2) & (idx != i)]


def choose_eps(wl: Workload, weight: float, k: int) -> float:
    """A positive eps: 1.5 x the median k-th neighbour distance over a sample of records (W6:
    the median distance to the 1,000th neighbour), in scaled units."""
    ref = Reference(wl, weight)
    x = ref.points()
    rng = np.random.default_rng(7)
    sample = rng.choice(ref.n, size=min(ref.n, 500), replace=False)
    tree = cKDTree(x)
    rank = 1001 if wl.big_hoods else k + 1
    dist, _ = tree.query(x[sample], k=min(rank, ref.n))
    return float(np.median(dist[:, -1]) * (1.0 if wl.big_hoods else 1.5))


def run(wl: Workload, eps: float, args) -> dict:
    """One workload timed (and checked), its search forced by --search (one statement, steps)."""
    from rwn_sql import limits
    # one statement: neither the records nor the listed pairs (rwn.search_in_steps) count
    forced = {"auto": {}, "one": {"RECURSIVE_BYTES_PER_RECORD": 0, "BYTES_PER_PAIR": 0},
              "steps": {"RECURSIVE_BYTES_PER_RECORD": float("inf")}}[args.search]
    with limits.use(**forced):
        return _run(wl, eps, args)


def _run(wl: Workload, eps: float, args) -> dict:
    import duckdb
    import rwn_sql
    from rwn_sql import limits
    from rwn_sql.rwn import run as rwn
    from rwn_sql.engines.backend import backend_for
    con = duckdb.connect()
    con.execute(f"SET threads = {args.threads}")
    if wl.memory_limit:
        con.execute(f"SET memory_limit = '{wl.memory_limit}'")
    con.from_arrow(wl.table()).create("data")
    params = dict(k=args.k, eps=eps, q=args.q, seed=args.seed, strata=list(wl.strata),
                  categorical=list(wl.categorical), weight=args.weight)
    n = len(next(iter(wl.numeric.values())))
    print(f"\n== {wl.name}: {n:,} rows, numeric {', '.join(wl.numeric)}"
          + (f"; categorical {', '.join(wl.categorical)}" if wl.categorical else "")
          + (f"; strata {', '.join(wl.strata)}" if wl.strata else "")
          + f"; k = {args.k}, eps = {eps:.6g}, q = {args.q}"
          + (f"; memory_limit {wl.memory_limit}" if wl.memory_limit else ""))
    be = backend_for(con)
    spec = rwn.spec(wl.columns, k=args.k, eps=eps, categorical=list(wl.categorical), strata=list(wl.strata),
                    weight=args.weight)
    in_steps = rwn.pre_passes(be, rwn.check_source(be, "data", spec), spec, "perturb").in_steps
    print(f"search    {'level by level (staged tables)' if in_steps else 'one recursive statement'}")
    _reset_peak()
    rss0 = peak_rss_mb()
    t0 = time.perf_counter()
    rwn_sql.perturb(con, "data", wl.columns, **params, into="released")
    t_package = time.perf_counter() - t0
    out = dict(workload=wl.name, rows=n, eps=eps, package=t_package, rss_package=peak_rss_mb())
    print(f"package   {t_package:8.2f} s   rwn_sql.perturb(..., into='released')   "
          f"(peak RSS {out['rss_package']:,.0f} MB, {rss0:,.0f} MB at the start)")
    if args.compare_grid:
        # the same release with the grid on the columns (no principal axes), same process
        with limits.use(PCA_GAIN=float("inf")):
            t0 = time.perf_counter()
            rwn_sql.perturb(con, "data", wl.columns, **params, into="released_on_columns")
            out["package_columns"] = time.perf_counter() - t0
        same = con.execute("SELECT (SELECT count(*) FROM (SELECT * FROM released EXCEPT ALL SELECT * FROM "
                           "released_on_columns)) + (SELECT count(*) FROM (SELECT * FROM released_on_columns "
                           "EXCEPT ALL SELECT * FROM released))").fetchone()[0] == 0
        con.execute("DROP TABLE released_on_columns")
        spec = rwn_sql.RWNSpec(columns=tuple(wl.columns), k=args.k, eps=eps, q=args.q, strata=tuple(wl.strata),
                               categorical=tuple(wl.categorical), weight=args.weight)
        be = backend_for(con)
        out["axes"] = rwn.grid_axes(be, rwn.check_source(be, "data", spec, guard=False), spec) is not None
        print(f"columns   {out['package_columns']:8.2f} s   the same with the grid on the columns "
              f"(principal axes {'used' if out['axes'] else 'not used'}; releases "
              f"{'identical' if same else 'DIFFER'})")
    if args.compare_listed:
        # the same parameters with every neighbourhood listed (the path before the ball path), same process
        with limits.use(BALL_MIN_MEMBERS=float("inf")):
            _reset_peak()
            t0 = time.perf_counter()
            rwn_sql.perturb(con, "data", wl.columns, **params, into="released_listed")
            out["package_listed"] = time.perf_counter() - t0
            out["rss_listed"] = peak_rss_mb()
        con.execute("DROP TABLE released_listed")
        print(f"listed    {out['package_listed']:8.2f} s   the same with every neighbourhood listed "
              f"(no ball path; peak RSS {out['rss_listed']:,.0f} MB)")
    if args.package_only:
        con.close()
        return out
    ref = Reference(wl, args.weight)
    if wl.reference:
        _reset_peak()
        t0 = time.perf_counter()
        result = ref.perturb(args.k, eps, args.q, args.seed, args.threads)
        out["reference"] = time.perf_counter() - t0
        out["rss_reference"] = peak_rss_mb()
        out["ratio"] = t_package / out["reference"]
        print(f"reference {out['reference']:8.2f} s   numpy + scipy cKDTree   (peak RSS {out['rss_reference']:,.0f} MB)")
        print(f"ratio     {out['ratio']:8.2f}     package / reference")
    if args.candidates:       # untimed, and independent of the checks below (--skip-check keeps it)
        out["probes"], out["candidates"] = candidates_per_record(con, wl, eps, args)
        print(f"per record: {out['probes']:,.1f} probe rows (neighbour cells tried), "
              f"{out['candidates']:,.1f} candidate pairs (all levels)")

    # --- sanity checks (untimed) ---------------------------------------------------------
    if not wl.reference and not args.check_w5:
        print("check     skipped (W5: pass --check-w5 to run the reference untimed)")
        return out
    if args.skip_check:
        print("check     skipped (--skip-check)")
        con.close()
        return out
    released_ref, ref_sizes, ref_radius2, members, _ = result if wl.reference else \
        ref.perturb(args.k, eps, args.q, args.seed, args.threads)
    nb = rwn_sql.neighborhoods(con, "data", wl.columns, k=args.k, eps=eps, strata=list(wl.strata),
                               categorical=list(wl.categorical), weight=args.weight).fetchnumpy()
    sizes, radius = np.asarray(nb["size"]), np.asarray(nb["radius"])
    out["differ"] = int((sizes != ref_sizes).sum())
    out["hood"] = float(sizes.mean())
    # the timed release is in keyed order; the same release in input order pairs rows with records
    rwn_sql.perturb(con, "data", wl.columns, **params, order="input", into="released_in_order")
    released = np.column_stack([np.asarray(v) for v in
                                con.table("released_in_order").select(*wl.columns).fetchnumpy().values()])
    checked, bad = ref.bad_cells(released, sizes, ref_radius2, members)
    print(f"check     |S_i| differ for {out['differ']:,} of {n:,} records; max |radius difference| "
          f"{np.abs(radius - np.sqrt(ref_radius2)).max():.3g}; mean |S_i| {out['hood']:,.1f}; "
          f"{bad:,} of {checked:,} sampled released cells not from a reference neighbour")
    con.close()
    return out


W5_TARGET = 12     # W5 within 12x W2's time


def versus_w2(w5: dict, args) -> dict:
    """W2's package run in this process, right after W5 (so W5's peak RSS is its own): at eps = 0
    after W5 at eps = 0, else at W2's own positive eps (--eps with a number: that number), at
    W5's rows / 10 when --rows is given. Prints W5's time over W2's against the target."""
    w2 = make_workload("W2", args.rows // 10 if args.rows else None)
    eps = 0.0 if w5["eps"] == 0 else w5["eps"] if args.eps not in ("both", "positive") \
        else choose_eps(w2, args.weight, args.k)
    out = run(w2, eps, argparse.Namespace(**{**vars(args), "package_only": True}))
    out["w5_over_w2"] = w5["package"] / out["package"]
    w5["ratio"] = out["w5_over_w2"]
    print(f"W5 / W2   {out['w5_over_w2']:8.2f}     W5's time over W2's, this process "
          f"(target <= {W5_TARGET}: {'met' if out['w5_over_w2'] <= W5_TARGET else 'missed'})")
    return out


# Runs a command and writes its peak RSS (KB) to a file. Linux carries a process's peak RSS across
# fork and exec, so a child forked straight from this (large) process would report ours; forked
# from this small launcher, it reports its own.
LAUNCHER = """import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_cli(wl: Workload, eps: float, args) -> dict:
    """Both sides as command lines, Parquet in and out, process start included: `rwn-sql perturb`
    against this script's --as-reference mode (numpy + scipy + pyarrow only)."""
    n = len(next(iter(wl.numeric.values())))
    with tempfile.TemporaryDirectory(prefix="bench-rwn-cli-") as folder:
        data = os.path.join(folder, "data.parquet")
        pq.write_table(wl.table(), data)                    # untimed
        common = ["--columns", ",".join(wl.columns), "--k", str(args.k), "--eps", repr(eps), "--q", str(args.q),
                  "--seed", str(args.seed), "--threads", str(args.threads), "--weight", str(args.weight)]
        common += ["--categorical", ",".join(wl.categorical)] if wl.categorical else []
        common += ["--strata", ",".join(wl.strata)] if wl.strata else []
        package = [sys.executable, "-m", "rwn_sql", "perturb", data, os.path.join(folder, "package.parquet"), *common]
        package += ["--memory-limit", wl.memory_limit] if wl.memory_limit else []
        reference = [sys.executable, __file__, "--as-reference", data, os.path.join(folder, "reference.parquet"), *common]
        print(f"\n== {wl.name} (CLI, Parquet in and out): {n:,} rows, eps = {eps:.6g}")
        out = dict(workload=wl.name + " cli", rows=n, eps=eps)
        sides = [("package", package)] + ([("reference", reference)] if wl.reference else [])
        for side, command in sides:
            peak = os.path.join(folder, side + ".peak")
            t0 = time.perf_counter()
            done = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, peak, *command],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            out[side] = time.perf_counter() - t0
            if done.returncode:
                raise SystemExit(f"{side} failed ({done.returncode}): {done.stderr[-2000:]}")
            with open(peak) as fh:
                out["rss_" + side] = int(fh.read()) / 1024
            print(f"{side:9} {out[side]:8.2f} s   {' '.join(command[1:4])} ...   (peak RSS {out['rss_' + side]:,.0f} MB)")
        released = pq.read_table(os.path.join(folder, "package.parquet"))
        if released.num_rows != n:
            raise SystemExit(f"the package's CLI wrote {released.num_rows:,} rows, not {n:,}")
        if wl.reference:
            out["ratio"] = out["package"] / out["reference"]
            print(f"ratio     {out['ratio']:8.2f}     package CLI / reference CLI")
    return out


def as_reference(argv) -> None:
    """--as-reference IN OUT ...: the reference as a user's script: read Parquet, release, write Parquet."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--as-reference", nargs=2, metavar=("IN", "OUT"))
    for name in ("--columns", "--categorical", "--strata"):
        ap.add_argument(name, default="")
    for name, kind in (("--k", int), ("--eps", float), ("--q", float), ("--seed", int), ("--threads", int),
                       ("--weight", float)):
        ap.add_argument(name, type=kind)
    args = ap.parse_args(argv)
    source, target = args.as_reference
    table = pq.read_table(source)
    listed = lambda text: [c for c in text.split(",") if c]          # noqa: E731
    categorical, strata = listed(args.categorical), listed(args.strata)
    numeric = [c for c in listed(args.columns) if c not in categorical]
    col = lambda c: table[c].to_numpy()                               # noqa: E731
    wl = Workload("cli", {c: col(c).astype(float) for c in numeric}, {c: col(c) for c in categorical},
                  {c: col(c) for c in strata})
    released = Reference(wl, args.weight).perturb(args.k, args.eps, args.q, args.seed, args.threads)[0]
    for i, c in enumerate(wl.columns):
        table = table.set_column(table.column_names.index(c), c, pa.array(released[:, i]).cast(table[c].type))
    pq.write_table(table, target)


def candidates_per_record(con, wl: Workload, eps: float, args) -> tuple[float, float]:
    """Per record, summed over the search's levels: (probe rows of the cell join, i.e. records
    times neighbour cells; candidate pairs, the pairs of records in neighbouring cells that the
    join emits, before the margin). From an extra, untimed EXPLAIN ANALYZE run of the
    neighbourhood statement."""
    import rwn_sql
    text = rwn_sql.neighborhoods(con, "data", wl.columns, k=args.k, eps=eps, strata=list(wl.strata),
                                 categorical=list(wl.categorical), weight=args.weight, sql=True)
    plan = json.loads(con.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + text).fetchall()[0][1])
    probes = pairs = 0
    stack = list(plan["operator"])
    while stack:
        node = stack.pop()
        conditions = str(node.get("extra_info", {}).get("Conditions", ""))
        # the cell join: on the packed cell key, or on a struct of it and the strata
        if node.get("type") == "HASH_JOIN" and ("nb_key" in conditions or "struct_pack(c," in conditions):
            pairs += node["intermediate_rows"]
            probes += node["children"][0]["intermediate_rows"]
        stack.extend(node.get("children", []))
    n = len(next(iter(wl.numeric.values())))
    return probes / n, pairs / n


def _reset_peak() -> None:
    """Linux: reset the process's peak RSS (VmHWM), so each side's peak is its own."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def peak_rss_mb() -> float:
    """The process's peak RSS since the last _reset_peak (VmHWM; Linux)."""
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM")) / 1024


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Times exclude data generation and loading; the sanity "
                                        "checks after the timings are untimed.")
    ap.add_argument("--workload", default="W1", choices=WORKLOADS + ["all"],
                    help="which workload (default W1); 'all' runs every one")
    ap.add_argument("--data", choices=["uniform", "clustered"],
                    help="old name: uniform = W1, clustered = W1c")
    ap.add_argument("--rows", type=int, default=None,
                    help="records for every workload (default: 1,000,000; W5 10,000,000)")
    ap.add_argument("--threads", type=int, default=2,
                    help="DuckDB threads and cKDTree workers (default 2)")
    ap.add_argument("--k", type=int, default=5, help="RWN k, at least 1 (default 5)")
    ap.add_argument("--eps", default="both",
                    help="'both' (default: eps = 0, then the workload's eps > 0), 'positive', or a number")
    ap.add_argument("--weight", type=float, default=1.0, help="categorical mismatch distance (default 1)")
    ap.add_argument("--q", type=float, default=1.0, help="replacement probability (default 1)")
    ap.add_argument("--seed", type=int, default=1,
                    help="perturbation seed for both implementations (default 1); the data seed is fixed")
    ap.add_argument("--candidates", action="store_true",
                    help="also count candidate pairs per record (an extra EXPLAIN ANALYZE run)")
    ap.add_argument("--compare-grid", action="store_true",
                    help="also time the package with the grid on the columns instead of principal axes, "
                         "and check that both releases are identical")
    ap.add_argument("--compare-listed", action="store_true",
                    help="also time the package with every neighbourhood listed as pairs (no ball path: "
                         "Limits.BALL_MIN_MEMBERS set to infinity); W6 at 20k rows needs about 2 GB that way")
    ap.add_argument("--package-only", action="store_true",
                    help="time the package only: no reference, no checks (for sizes the reference or the "
                         "checks would take too long for)")
    ap.add_argument("--check-w5", action="store_true", help="run W5's reference check (untimed)")
    ap.add_argument("--no-w2", action="store_true",
                    help="W5: do not time W2's package run after it (W5's target is 12x W2's time)")
    ap.add_argument("--search", choices=["auto", "one", "steps"], default="auto",
                    help="the package's neighbourhood search: one recursive statement, level by level, or "
                         "(auto, the default) as the memory limit decides (rwn.search_in_steps)")
    ap.add_argument("--skip-check", action="store_true",
                    help="skip the untimed checks (they recompute the neighbourhoods and a release in input "
                         "order: about twice the package's time)")
    ap.add_argument("--cli", action="store_true",
                    help="also time both sides as command lines with Parquet in and out (process start "
                         "included): rwn-sql perturb against this script's reference mode")
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--as-reference":
        return as_reference(argv)
    args = ap.parse_args(argv)
    if args.k < 1 or args.threads < 1 or (args.rows is not None and args.rows <= args.k + 1):
        ap.error("need --k >= 1, --rows > k + 1 and --threads >= 1")
    names = WORKLOADS if args.workload == "all" else [args.workload]
    if args.data:
        names = ["W1" if args.data == "uniform" else "W1c"]

    print(f"threads   {args.threads}")
    import duckdb
    import rwn_sql
    from machine import cpu_name
    print(f"duckdb    {duckdb.__version__}; numpy {np.__version__}; rwn_sql {rwn_sql.__version__}")
    print(f"machine   {cpu_name()}")
    results = []
    for name in names:
        wl = make_workload(name, args.rows)
        if args.eps == "both":
            eps_values = [0.0, choose_eps(wl, args.weight, args.k)]
        elif args.eps == "positive":
            eps_values = [choose_eps(wl, args.weight, args.k)]
        else:
            eps_values = [float(args.eps)]
        if wl.big_hoods and args.eps == "both":
            eps_values = eps_values[1:]        # W6 is about the large neighbourhoods
        for eps in eps_values:
            results.append(run(wl, eps, args))
            if wl.name == "W5" and not args.no_w2:
                results.append(versus_w2(results[-1], args))
            if args.cli and wl.reference:
                results.append(run_cli(wl, eps, args))
            elif args.cli:      # W5's ratio is against W2 in process; a CLI run alone gives none
                print(f"\n== {wl.name} (CLI): skipped, no reference to give a ratio against")
    print("\nsummary (times in s; peak RSS of the process in MB during each side's run, the data included)")
    print(f"{'workload':9} {'rows':>10} {'eps':>9} {'package':>8} {'reference':>9} {'ratio':>6} "
          f"{'mean|S|':>8} {'differ':>6} {'RSS pkg':>8} {'RSS ref':>8}" + (" probes/rec pairs/rec" if args.candidates else "")
          + (" columns-grid axes" if args.compare_grid else "")
          + (" listed RSS-listed" if args.compare_listed else ""))
    for r in results:
        print(f"{r['workload']:9} {r['rows']:>10,} {r['eps']:>9.4g} {r['package']:>8.2f} "
              f"{r.get('reference', float('nan')):>9.2f} {r.get('ratio', float('nan')):>6.2f} "
              f"{r.get('hood', float('nan')):>8.1f} {r.get('differ', -1):>6} {r.get('rss_package', float('nan')):>8,.0f} "
              f"{r.get('rss_reference', float('nan')):>8,.0f}"
              + (f" {r.get('probes', float('nan')):10.1f} {r.get('candidates', float('nan')):9.1f}"
                 if args.candidates else "")
              + (f" {r['package_columns']:12.2f} {'yes' if r['axes'] else 'no':>4}" if args.compare_grid else "")
              + (f" {r['package_listed']:6.2f} {r['rss_listed']:10,.0f}" if args.compare_listed else ""))
    if any("w5_over_w2" in r for r in results):
        print(f"(W5's ratio is its time over W2's on the row below it, target <= {W5_TARGET})")


if __name__ == "__main__":
    main()
