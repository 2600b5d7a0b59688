"""Benchmark: the RWN parameter sweep on the bundled bodyfat data (241 x 14).

Times rwn_sql.tune.sweep over the eps grid 0.2:1.2:0.05 (21 settings) with k = 5, q = 1 and
--reps releases each (default 20), every release evaluated on all measures (BodyFat as the
OLS target), and, separately, writing the HTML report. The issue's bar: under a minute on 2
cores.

    python benchmarks/bench_tune.py [--reps 20] [--threads 2]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import duckdb

from machine import cpu_name, peak_rss_mb
from rwn_sql import tune

DATA = Path(__file__).resolve().parent.parent / "examples" / "data" / "bodyfat_clean.csv"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=20, help="releases per eps (default 20)")
    ap.add_argument("--threads", type=int, default=2, help="DuckDB threads (default 2)")
    args = ap.parse_args()
    con = duckdb.connect()
    con.execute(f"SET threads = {args.threads}").fetchall()
    con.execute(f"CREATE TABLE bodyfat AS SELECT * FROM read_csv('{DATA}')").fetchall()
    columns = [r[0] for r in con.execute("DESCRIBE bodyfat").fetchall()]
    grid = tune.parse_grid("0.2:1.2:0.05")
    print(f"bodyfat 241 x {len(columns)}; eps grid {len(grid)} values; {args.reps} releases each; "
          f"{args.threads} threads; duckdb {duckdb.__version__}; {cpu_name()}")
    start = time.perf_counter()
    result = tune.sweep(con, "bodyfat", columns, grid, reps=args.reps, target="BodyFat", seed=1)
    sweep_s = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        tune.report_html(result, Path(tmp) / "report.html")
        report_s = time.perf_counter() - start
    print(f"sweep   {sweep_s:6.2f} s  ({len(grid) * args.reps} releases evaluated)")
    print(f"report  {report_s:6.2f} s")
    print(f"total   {sweep_s + report_s:6.2f} s  (bar: under 60 s)   peak RSS {peak_rss_mb():,.0f} MB")


if __name__ == "__main__":
    main()
