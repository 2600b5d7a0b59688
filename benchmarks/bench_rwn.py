"""Benchmark: rwn_sql inside DuckDB against a numpy + scipy reference implementation of RWN.

Both sides do the same work on the same in-memory data: min-max scale the columns, find
every record's exact neighbourhood S_i = {j != i : d(i, j) <= max(eps, r_k(i))} (ties at
the radius included) and, per record and column, with probability q replace the value by
that column of a member of S_i drawn uniformly. Timed separately (data generation and
loading are not timed):

  package    rwn_sql.perturb(con, "data", [...], k, eps, q, seed, into="released")
  reference  cKDTree on the scaled points, k+2 nearest (self included), exact squared
             distances recomputed in the same order as the SQL, query_ball_point for the
             records where more points might lie within the radius, numpy draws and gather

Afterwards, untimed: neighbourhood sizes and radii from rwn_sql.neighborhoods against the
reference's, and a check that every released cell of the package comes from a member of
the reference's S_i. Needs scipy (pip install -e '.[bench]').

    python benchmarks/bench_rwn.py                      # 1,000,000 uniform rows, 2 threads
    python benchmarks/bench_rwn.py --rows 20000         # quick check, a few seconds
    python benchmarks/bench_rwn.py --data clustered --threads 1
"""
from __future__ import annotations

import argparse
import time

import duckdb
import numpy as np
import pyarrow as pa
from scipy.spatial import cKDTree

import rwn_sql
from machine import peak_rss_mb, cpu_name

COLUMNS = ["a", "b", "c"]
DATA_SEED = 20240601
SLACK = 1e-9   # relative margin: far above kd-tree rounding, so no possible member is missed


def make_data(rows: int, kind: str) -> np.ndarray:
    """rows x 3 float64 values: uniform on the unit cube, or a mixture of Gaussian blobs
    with unequal weights, spreads and column scales (dense cores and sparse tails)."""
    rng = np.random.default_rng(DATA_SEED)
    if kind == "uniform":
        return rng.random((rows, len(COLUMNS)))
    blobs = 6
    centres = rng.uniform(0, 100, (blobs, len(COLUMNS)))
    spreads = rng.uniform(0.5, 15, (blobs, len(COLUMNS)))
    blob = rng.choice(blobs, size=rows, p=rng.dirichlet(np.ones(blobs)))
    values = centres[blob] + spreads[blob] * rng.standard_normal((rows, len(COLUMNS)))
    return values * np.array([1.0, 1000.0, 0.01])


def exact_d2(cols: list[np.ndarray], i, j: np.ndarray) -> np.ndarray:
    """Squared distances from record(s) i to records j (i broadcasts against j) with the
    SQL's operations in its order, (a.x_1 - b.x_1)^2 + (a.x_2 - b.x_2)^2 + ..., so that
    ties compare bit for bit. `cols` are the scaled columns."""
    d2 = 0.0
    for x in cols:
        diff = x[i] - x[j]
        d2 = d2 + diff * diff
    return d2


def reference_hoods(values: np.ndarray, k: int, eps: float, threads: int):
    """Exact neighbourhoods: (cand, sizes, radius2, extra). Members of record i are
    cand[i, :sizes[i]], or extra[i] for the records that needed a ball query."""
    lo, hi = values.min(axis=0), values.max(axis=0)
    x = (values - lo) / (hi - lo)
    cols = [np.ascontiguousarray(x[:, c]) for c in range(x.shape[1])]
    n = len(x)
    tree = cKDTree(x)
    dist, cand = tree.query(x, k=k + 2, workers=threads)     # self plus k+1 others, usually
    rows = np.arange(n)
    d2 = exact_d2(cols, rows[:, None], cand)
    d2[cand == rows[:, None]] = np.inf                       # drop the self-match wherever it sits
    order = np.argsort(d2, axis=1, kind="stable")
    cand, d2 = np.take_along_axis(cand, order, 1), np.take_along_axis(d2, order, 1)
    radius2 = np.maximum(eps * eps, d2[:, k - 1])            # exact unless suspicious below
    sizes = (d2 <= radius2[:, None]).sum(axis=1)
    # Every point outside the k+2 found lies at kd-tree distance >= dist[:, -1]. Where that is
    # not clearly beyond the radius (ties, duplicates, eps), collect the whole ball instead.
    suspicious = np.flatnonzero(dist[:, -1] <= np.sqrt(radius2) * (1 + SLACK))
    extra = {}
    if len(suspicious):
        balls = tree.query_ball_point(x[suspicious], np.sqrt(radius2[suspicious]) * (1 + SLACK),
                                      workers=threads)
        for i, ball in zip(suspicious, balls):
            others = np.array([j for j in ball if j != i], dtype=np.int64)
            od2 = exact_d2(cols, i, others)
            radius2[i] = max(eps * eps, np.sort(od2)[k - 1])
            extra[i] = others[od2 <= radius2[i]]
            sizes[i] = len(extra[i])
    return cand, sizes, radius2, extra


def reference_perturb(values: np.ndarray, k: int, eps: float, q: float, seed: int, threads: int):
    """The full RWN release in numpy + scipy, plus the neighbourhoods it used."""
    cand, sizes, radius2, extra = reference_hoods(values, k, eps, threads)
    n, ncol = values.shape
    rng = np.random.default_rng(seed)
    pos = rng.integers(0, sizes[:, None], size=(n, ncol))    # a fresh uniform member per column
    donor = np.take_along_axis(cand, np.minimum(pos, cand.shape[1] - 1), 1)
    for i, members in extra.items():
        donor[i] = members[pos[i]]
    donor = np.where(rng.random((n, ncol)) < q, donor, np.arange(n)[:, None])
    released = np.take_along_axis(values, donor, 0)
    return released, (cand, sizes, radius2, extra)


def from_neighbourhood(released: np.ndarray, values: np.ndarray, hoods) -> int:
    """Number of released cells whose value is not that column of any member of S_i
    (nor the record's own value, which q < 1 keeps)."""
    cand, sizes, _, extra = hoods
    inside = np.arange(cand.shape[1]) < sizes[:, None]
    bad = 0
    for c in range(values.shape[1]):
        ok = ((released[:, c, None] == values[cand, c]) & inside).any(axis=1)
        ok |= released[:, c] == values[:, c]
        for i in extra:
            ok[i] = released[i, c] in values[extra[i], c] or released[i, c] == values[i, c]
        bad += int((~ok).sum())
    return bad






def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Times exclude data generation and loading; the sanity "
                                        "checks after the timings are untimed.")
    ap.add_argument("--rows", type=int, default=1_000_000, help="number of records (default 1,000,000)")
    ap.add_argument("--data", choices=["uniform", "clustered"], default="uniform",
                    help="uniform on the unit cube, or a mixture of 6 Gaussian blobs with different "
                         "weights, spreads and column scales (default uniform)")
    ap.add_argument("--threads", type=int, default=2,
                    help="DuckDB threads and cKDTree workers (default 2)")
    ap.add_argument("--k", type=int, default=5, help="RWN k, at least 1 (default 5)")
    ap.add_argument("--eps", type=float, default=0.0,
                    help="RWN eps in scaled units (default 0); large eps makes neighbourhoods large "
                         "and the reference falls back to slow per-record ball queries")
    ap.add_argument("--q", type=float, default=1.0, help="replacement probability (default 1)")
    ap.add_argument("--seed", type=int, default=1,
                    help="perturbation seed for both implementations (default 1); the data seed is fixed")
    args = ap.parse_args(argv)
    if args.k < 1 or args.rows <= args.k or args.threads < 1:
        ap.error("need --k >= 1, --rows > k and --threads >= 1")

    values = make_data(args.rows, args.data)
    con = duckdb.connect()
    con.execute(f"SET threads = {args.threads}")
    con.from_arrow(pa.table({c: values[:, i] for i, c in enumerate(COLUMNS)})).create("data")
    params = dict(k=args.k, eps=args.eps, q=args.q, seed=args.seed)

    print(f"rows      {args.rows:,} ({args.data})")
    print(f"columns   {len(COLUMNS)} ({', '.join(COLUMNS)}); k = {args.k}, eps = {args.eps}, "
          f"q = {args.q}, seed = {args.seed}")
    print(f"threads   {args.threads}")
    print(f"duckdb    {duckdb.__version__}; numpy {np.__version__}; rwn_sql {rwn_sql.__version__}")
    print(f"machine   {cpu_name()}")
    print(f"peak RSS  {peak_rss_mb():,.0f} MB after loading the data")

    t0 = time.perf_counter()
    rwn_sql.perturb(con, "data", COLUMNS, **params, into="released")
    t_package = time.perf_counter() - t0
    print(f"\npackage   {t_package:8.2f} s   rwn_sql.perturb(..., into='released') in DuckDB"
          f"   (peak RSS so far {peak_rss_mb():,.0f} MB)")

    t0 = time.perf_counter()
    ref_released, hoods = reference_perturb(values, args.k, args.eps, args.q, args.seed, args.threads)
    t_reference = time.perf_counter() - t0
    print(f"reference {t_reference:8.2f} s   numpy + scipy cKDTree, full perturbed array"
          f"   (peak RSS so far {peak_rss_mb():,.0f} MB)")
    print(f"ratio     {t_package / t_reference:8.2f}     package / reference")

    # --- sanity checks (untimed) ---------------------------------------------------------
    _, ref_sizes, ref_radius2, extra = hoods
    nb = rwn_sql.neighborhoods(con, "data", COLUMNS, k=args.k, eps=args.eps).fetchnumpy()
    sizes, radius = np.asarray(nb["size"]), np.asarray(nb["radius"])
    size_values, counts = np.unique(sizes, return_counts=True)
    ref_values, ref_counts = np.unique(ref_sizes, return_counts=True)
    fmt = lambda v, c: ", ".join(f"{a}: {b:,}" for a, b in list(zip(v, c))[:6]) + (" ..." if len(v) > 6 else "")  # noqa: E731
    # the timed release is in keyed order (it says nothing about input positions); the same
    # release in input order pairs each row with its record for the checks
    rwn_sql.perturb(con, "data", COLUMNS, **params, order="input", into="released_in_order")
    released = np.column_stack([np.asarray(v) for v in
                                con.table("released_in_order").select(*COLUMNS).fetchnumpy().values()])
    print("\nsanity checks (untimed)")
    print(f"  sum of |S_i|        package {sizes.sum():,}   reference {ref_sizes.sum():,}")
    print(f"  |S_i| distribution  package {{{fmt(size_values, counts)}}}")
    print(f"                      reference {{{fmt(ref_values, ref_counts)}}}")
    print(f"  records whose |S_i| differ   {int((sizes != ref_sizes).sum()):,} of {args.rows:,}"
          f"   (reference needed ball queries for {len(extra):,})")
    print(f"  max |radius difference|      {np.abs(radius - np.sqrt(ref_radius2)).max():.3g}")
    print(f"  cells changed       package {np.mean(released != values):.4f}   "
          f"reference {np.mean(ref_released != values):.4f}")
    print(f"  package cells not from a reference neighbour   "
          f"{from_neighbourhood(released, values, hoods):,} of {released.size:,}")
    print(f"\npeak RSS  {peak_rss_mb():,.0f} MB (whole process, at the end)")


if __name__ == "__main__":
    main()
