"""Benchmark: the blow-up cases of issue 10, time and peak memory per case.

  tied     3 integer columns with 10, 8 and 5 distinct values (400 distinct rows), k = 1,
           eps = 1e-6: every record's neighbourhood holds all its exact duplicates, so the
           pairs grow quadratically; large inputs must be refused at once by the guard.
  strata   two numeric columns and strata=["sex"], from a table, a Parquet file and a CSV
           file (file-sourced strata used to be quadratic).
  memory   2M uniform rows x 3 columns under DuckDB memory limits: neighbourhoods alone
           and the whole perturb (DuckDB spills to its temp directory), around the floor
           (400 MB runs out of memory, 450 MB completes).

Every case runs in a fresh process, so its peak RSS is its own. Data generation and loading
are not timed; the time is the rwn_sql call, into a table.

    python benchmarks/bench_guards.py                 # every case (several minutes)
    python benchmarks/bench_guards.py --only tied     # one group
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from machine import cpu_name, peak_rss_mb

TIED_ROWS = (50_000, 100_000, 200_000, 2_000_000)
STRATA_ROWS = (50_000, 100_000, 200_000)
MEMORY_CASES = (("neighborhoods", "400MB"), ("neighborhoods", "500MB"), ("perturb", "400MB"), ("perturb", "450MB"),
                ("perturb", "500MB"), ("perturb", "1GB"))


def run_case(case: str, rows: int, source: str, limit: str | None, workdir: str) -> dict:
    """One case in this process; returns what happened, its time and the peak RSS."""
    import duckdb

    import rwn_sql
    con = duckdb.connect()
    con.execute(f"SET temp_directory = '{workdir}/spill'").fetchall()
    if case == "tied":
        con.execute(f"CREATE TABLE data AS SELECT (range % 10)::INTEGER AS a, (range // 10 % 8)::INTEGER AS b, "
                    f"(range // 80 % 5)::INTEGER AS c FROM range({rows})").fetchall()
        call = lambda: rwn_sql.perturb(con, "data", ["a", "b", "c"], k=1, eps=1e-6, seed=1, into="out")  # noqa: E731
    elif case == "strata":
        con.execute(f"CREATE TABLE data AS SELECT (hash(range, 1) % 80 + 18)::INTEGER AS age, "
                    f"(hash(range, 2) % 100000) / 10.0 AS income, "
                    f"CASE WHEN hash(range, 3) % 2 = 0 THEN 'F' ELSE 'M' END AS sex FROM range({rows})").fetchall()
        name = "data"
        if source != "table":
            name = os.path.join(workdir, f"data.{source}")
            con.execute(f"COPY data TO '{name}' (FORMAT {source})").fetchall()
        call = lambda: rwn_sql.perturb(con, name, ["age", "income"], k=5, strata=["sex"],  # noqa: E731
                                       seed=1, into="out")
    else:
        con.execute(f"CREATE TABLE data AS SELECT (hash(range, 1) % 1000003) / 1000003 AS a, "
                    f"(hash(range, 2) % 999983) / 999983 AS b, (hash(range, 3) % 1000033) / 1000033 AS c "
                    f"FROM range({rows})").fetchall()
        if source == "neighborhoods":
            call = lambda: con.execute(  # noqa: E731
                "CREATE TABLE out AS " + rwn_sql.neighborhoods(con, "data", ["a", "b", "c"], k=5, sql=True)).fetchall()
        else:
            call = lambda: rwn_sql.perturb(con, "data", ["a", "b", "c"], k=5, seed=1, into="out")  # noqa: E731
    if limit:
        con.execute(f"SET memory_limit = '{limit}'").fetchall()
    start = time.perf_counter()
    try:
        call()
        outcome = "done"
    except (rwn_sql.RWNError, duckdb.Error) as exc:
        outcome = f"{type(exc).__name__}: {str(exc).splitlines()[0][:150]}"
    return {"seconds": time.perf_counter() - start, "peak_rss_mb": peak_rss_mb(), "outcome": outcome}


def in_subprocess(case: str, rows: int, source: str, limit: str | None) -> dict:
    with tempfile.TemporaryDirectory() as workdir:
        args = [sys.executable, __file__, "--case", case, "--rows", str(rows), "--source", source,
                "--workdir", workdir] + (["--limit", limit] if limit else [])
        done = subprocess.run(args, capture_output=True, text=True, cwd=os.path.dirname(os.path.abspath(__file__)))
        if done.returncode != 0:
            return {"seconds": float("nan"), "peak_rss_mb": float("nan"),
                    "outcome": f"process failed: {done.stderr.strip().splitlines()[-1:]}"}
        return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", choices=["tied", "strata", "memory"])
    p.add_argument("--case", help=argparse.SUPPRESS)
    p.add_argument("--rows", type=int, help=argparse.SUPPRESS)
    p.add_argument("--source", default="table", help=argparse.SUPPRESS)
    p.add_argument("--limit", help=argparse.SUPPRESS)
    p.add_argument("--workdir", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case, args.rows, args.source, args.limit, args.workdir)))
        return
    print(f"machine: {cpu_name()}")
    cases = []
    if args.only in (None, "tied"):
        cases += [("tied", n, "table", None) for n in TIED_ROWS]
    if args.only in (None, "strata"):
        cases += [("strata", n, src, None) for n in STRATA_ROWS for src in ("table", "parquet", "csv")]
    if args.only in (None, "memory"):
        cases += [("memory", 2_000_000, what, limit) for what, limit in MEMORY_CASES]
    print(f"{'case':8} {'rows':>10} {'source':14} {'limit':6} {'time s':>8} {'peak MB':>8}  outcome")
    for case, rows, source, limit in cases:
        r = in_subprocess(case, rows, source, limit)
        print(f"{case:8} {rows:>10,} {source:14} {limit or '-':6} {r['seconds']:8.2f} {r['peak_rss_mb']:8,.0f}  "
              f"{r['outcome']}", flush=True)


if __name__ == "__main__":
    main()
