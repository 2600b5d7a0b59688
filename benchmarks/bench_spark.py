"""Benchmark: the same RWN perturb (k = 5, eps = 0, three uniform columns) on DuckDB and on
local Apache Spark, time and peak memory side by side, and the Spark search's per-level
figures (records still searching, candidate pairs per searching record).

Each engine runs in a child process on the same Parquet file (written untimed), so each has
its own peak memory: the resident set of the child and everything it starts (Spark's JVM),
sampled every 0.1 s. Both write the release to Parquet; the two releases are then compared
as multisets (they must be equal: same data, parameters, id and key).

    python benchmarks/bench_spark.py                        # 1,000,000 rows, then 100,000
    python benchmarks/bench_spark.py --rows 200000 50000    # smaller runs
    python benchmarks/bench_spark.py --master local[2] --driver-memory 8g
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

COLUMNS = ["a", "b", "c"]
DATA_SEED = 20240601


def make_parquet(rows: int, path: str) -> None:
    """rows x 3 uniform values and a unique id column `rid` unrelated to the row order."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    rng = np.random.default_rng(DATA_SEED)
    values = rng.random((rows, len(COLUMNS)))
    pq.write_table(pa.table({"rid": rng.permutation(rows).astype(np.int64) * 7 + 11,
                             **{c: values[:, i] for i, c in enumerate(COLUMNS)}}), path)


def tree_rss_mb(pid: int) -> float:
    """Resident memory of a process and all its descendants, in MB."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as fh:
                total += next((int(line.split()[1]) for line in fh if line.startswith("VmRSS:")), 0)
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            pass
    return total / 1024


def run_child(args: list[str]) -> tuple[dict, float]:
    """Run this script as a child with `args`; returns its JSON result and the peak tree RSS."""
    proc = subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.PIPE, text=True)
    peak, done = [0.0], threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss_mb(proc.pid))
            time.sleep(0.1)
    threading.Thread(target=sample, daemon=True).start()
    out, _ = proc.communicate()
    done.set()
    if proc.returncode:
        raise SystemExit(f"child {args} failed with exit code {proc.returncode}")
    return json.loads(out.strip().splitlines()[-1]), peak[0]


def child_duckdb(data: str, out: str, threads: int) -> dict:
    import duckdb

    import rwn_sql
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}").fetchall()
    start = time.perf_counter()
    rel = rwn_sql.perturb(con, data, COLUMNS, k=5, eps=0.0, seed=7, id="rid")
    con.execute(f"COPY ({rel.sql_query()}) TO '{out}' (FORMAT parquet)").fetchall()
    return dict(seconds=time.perf_counter() - start)


def child_spark(data: str, out: str, master: str, driver_memory: str, partitions: int, trace: bool) -> dict:
    from pyspark.sql import SparkSession

    from rwn_sql.rwn import run as rwn
    from rwn_sql.engines.backend import backend_for
    from rwn_sql.randomness import resolve_key
    spark = (SparkSession.builder.master(master).config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.driver.memory", driver_memory)
             .config("spark.sql.shuffle.partitions", str(partitions)).getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    start = time.perf_counter()
    levels = [] if trace else None
    be = backend_for(spark)
    spec = rwn.spec(COLUMNS, k=5, eps=0.0, id="rid")
    prepared = rwn.prepare(be, rwn.check_source(be, data, spec), spec, "perturb", be.key_sql(resolve_key(None, 7)),
                           trace=levels)
    rwn.write(be, prepared, out)
    seconds = time.perf_counter() - start
    spark.stop()
    return dict(seconds=seconds, levels=levels)


def same_rows(a: str, b: str) -> bool:
    import duckdb
    pattern = lambda p: f"{p}/*.parquet" if os.path.isdir(p) else p        # noqa: E731
    return duckdb.execute(f"""SELECT (SELECT count(*) FROM (SELECT * FROM read_parquet('{pattern(a)}')
                                      EXCEPT ALL SELECT * FROM read_parquet('{pattern(b)}')))
                                   + (SELECT count(*) FROM (SELECT * FROM read_parquet('{pattern(b)}')
                                      EXCEPT ALL SELECT * FROM read_parquet('{pattern(a)}')))""").fetchall()[0][0] == 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 100_000])
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--driver-memory", default="8g")
    ap.add_argument("--partitions", type=int, default=8, help="spark.sql.shuffle.partitions (default 8)")
    ap.add_argument("--threads", type=int, default=2, help="DuckDB threads (default 2, as local[2])")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, data, out = args.child[:3]
        result = (child_duckdb(data, out, args.threads) if kind == "duckdb" else
                  child_spark(data, out, args.master, args.driver_memory, args.partitions, kind == "spark-trace"))
        print(json.dumps(result))
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from machine import cpu_name
    print(f"machine: {cpu_name()}; Spark {args.master}, DuckDB {args.threads} threads")
    common = ["--master", args.master, "--driver-memory", args.driver_memory, "--partitions", str(args.partitions),
              "--threads", str(args.threads)]
    with tempfile.TemporaryDirectory(prefix="bench_spark_") as tmp:
        for rows in args.rows:
            data = os.path.join(tmp, f"data_{rows}.parquet")
            make_parquet(rows, data)
            duck, duck_mb = run_child(["--child", "duckdb", data, os.path.join(tmp, f"duck_{rows}.parquet"), *common])
            spark, spark_mb = run_child(["--child", "spark", data, os.path.join(tmp, f"spark_{rows}.parquet"), *common])
            same = same_rows(os.path.join(tmp, f"duck_{rows}.parquet"), os.path.join(tmp, f"spark_{rows}.parquet"))
            print(f"\n{rows:,} rows x 3, k = 5, eps = 0: identical releases: {same}")
            print(f"  {'engine':8s}{'seconds':>10s}{'peak MB':>10s}")
            print(f"  {'duckdb':8s}{duck['seconds']:10.1f}{duck_mb:10.0f}")
            print(f"  {'spark':8s}{spark['seconds']:10.1f}{spark_mb:10.0f}")
            traced, _ = run_child(["--child", "spark-trace", data, os.path.join(tmp, f"trace_{rows}.parquet"), *common])
            print(f"  Spark search levels (a traced run: {traced['seconds']:.1f} s with the figures' extra counts):")
            print(f"    {'level':>6s}{'searching':>12s}{'candidates':>14s}{'per record':>12s}{'done':>10s}")
            for lv in traced["levels"]:
                per = lv["candidates"] / lv["searching"] if lv["searching"] else 0.0
                print(f"    {lv['level']:6d}{lv['searching']:12,d}{lv['candidates']:14,d}{per:12.1f}{lv['done']:10,d}")


if __name__ == "__main__":
    main()
