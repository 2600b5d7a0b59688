"""Benchmark: uniform perturbation and the reconstruction-privacy audit (rwn_sql.rp.api) in DuckDB
against a plain GROUP BY count over the same columns.

One process, one in-memory DuckDB connection. The data are census-like records generated
in SQL from range(N) with keyed-hash columns (fixed data seed): public attributes sex (2
values), race (5), age_band (10), education (16) and region (50) with skewed frequencies,
and the sensitive attribute occupation (15 values) whose distribution shifts with
education, so the personal groups differ. Generating and materializing the table `people`
is not timed. Timed separately, each writing a table:

  baseline        CREATE TABLE ... AS SELECT <5 public>, occupation, count(*) FROM people GROUP BY ALL
  randomize       rp.randomize(con, "people", "occupation", p, public=[...], seed, into="released")
  audit chernoff  rp.audit(..., p, eps, delta, test="chernoff"): every (group, value) row with
                  its statistics, exact tails and verdicts computed into a temporary table,
                  and the summary counts (reading result.rows, sorted on reading, is not timed)
  audit exact     the same with test="exact"
  enforce exact   rp.randomize(..., enforce=(eps, delta), test="exact", into="released_enforced")

rwn_sql's in-process caches of exact tail probabilities are emptied before every step, so
no step profits from an earlier one; before the steps, one untimed audit of 1,000 rows pays
the one-time costs of a process (importing scipy.special, registering the SQL functions),
and its time is printed. Earlier audits' temporary tables are dropped between runs. Every
time is also shown as a ratio to the baseline; the headline the project tracks is
(randomize + chernoff audit) / baseline, target at most 5x. A step that rwn_sql refuses
(RWNError) is reported and the others go on. Afterwards, untimed: the share of released
count of each sensitive value against its expectation p n_v + (1-p) n/m, and that every
personal group keeps its size (releases are in keyed order, so nothing is paired by position).

    python benchmarks/bench_rp.py                       # 10,000,000 rows, 2 threads, best of 3
    python benchmarks/bench_rp.py --rows 200000         # quick check, a few seconds
    python benchmarks/bench_rp.py --threads 1 --p 0.7
    python benchmarks/bench_rp.py --repeat 1            # one run of every step
"""
from __future__ import annotations

import argparse
import time

import duckdb
import numpy as np

import rwn_sql
from machine import cpu_seconds, peak_rss_mb, cpu_name
from rwn_sql.rp.core import privacy
from rwn_sql.rp import api as rp

PUBLIC = ["sex", "race", "age_band", "education", "region"]
SENSITIVE = "occupation"
DATA_SEED = 20240601
HEADLINE_TARGET = 5.0


def uniform_sql(column: int) -> str:
    """A uniform double in [0, 1) per row i, independent across `column`s: the top 53 bits of
    DuckDB's hash of one distinct integer per (data seed, row, column)."""
    return (f"((hash(i * 16 + {column} + {DATA_SEED} * 10000000000) >> 11)::DOUBLE"
            f" / 9007199254740992.0)")


def make_people(con: duckdb.DuckDBPyConnection, rows: int) -> None:
    """CREATE TABLE people: `rows` census-like records. Skews: sex 51/49, race 60/18/13/6/3 %,
    age_band, education and region from powers of a uniform (region 0 holds ~17%, region 49
    ~0.9%); occupation has its mode at about education * 15/16 and a long tail above it
    (wrapping round the 15 values)."""
    u = uniform_sql
    con.execute(f"""
        CREATE TABLE people AS
        SELECT sex, race, age_band, education, region,
            printf('occ%02d', (CAST(education AS INTEGER) * 15 // 16
                               + CAST(floor(15 * pow(u_occ, 2.5)) AS INTEGER)) % 15 + 1) AS occupation
        FROM (
            SELECT
                CASE WHEN {u(1)} < 0.51 THEN 'F' ELSE 'M' END AS sex,
                CASE WHEN {u(2)} < 0.60 THEN 'white' WHEN {u(2)} < 0.78 THEN 'hispanic'
                     WHEN {u(2)} < 0.91 THEN 'black' WHEN {u(2)} < 0.97 THEN 'asian'
                     ELSE 'other' END AS race,
                CAST(floor(10 * pow({u(3)}, 1.3)) AS TINYINT) AS age_band,
                CAST(floor(16 * pow({u(4)}, 0.7)) AS TINYINT) AS education,
                CAST(floor(50 * pow({u(5)}, 2.2)) AS SMALLINT) AS region,
                {u(6)} AS u_occ
            FROM range({rows}) t(i)
            ORDER BY i)""")


def clear_caches() -> None:
    """Empty rwn_sql's in-process memo caches (the exact tail probabilities are lru_cached
    Python functions) so that every timed step starts cold, as in a fresh process."""
    for obj in vars(privacy).values():
        if callable(getattr(obj, "cache_clear", None)):
            obj.cache_clear()








def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Times exclude data generation; the check after the "
                                        "timings is untimed. Every step writes a table in the "
                                        "same in-memory database.")
    ap.add_argument("--rows", type=int, default=10_000_000, help="number of records (default 10,000,000)")
    ap.add_argument("--threads", type=int, default=2, help="DuckDB threads (default 2)")
    ap.add_argument("--p", type=float, default=0.5, help="retention probability p (default 0.5)")
    ap.add_argument("--eps", type=float, default=0.5,
                    help="reconstruction-privacy eps for the audits and enforcement (default 0.5)")
    ap.add_argument("--delta", type=float, default=0.05,
                    help="reconstruction-privacy delta for the audits and enforcement (default 0.05)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="run every step this many times (replacing its table) and report the fastest "
                         "(default 3); timings on small VMs vary by 20-30%% from run to run")
    ap.add_argument("--seed", type=int, default=1,
                    help="perturbation seed (default 1); the data seed is fixed")
    args = ap.parse_args(argv)
    if args.rows < 1 or args.threads < 1 or args.repeat < 1:
        ap.error("need --rows >= 1, --threads >= 1 and --repeat >= 1")

    con = duckdb.connect()
    con.execute(f"SET threads = {args.threads}")
    t0 = time.perf_counter()
    make_people(con, args.rows)
    t_gen = time.perf_counter() - t0
    groups, cells = con.execute(
        f"SELECT count(DISTINCT ({', '.join(PUBLIC)})), count(DISTINCT ({', '.join(PUBLIC)}, {SENSITIVE})) "
        f"FROM people").fetchone()
    sizes = con.execute(f"SELECT min(n), median(n), max(n) FROM (SELECT count(*) AS n FROM people "
                        f"GROUP BY {', '.join(PUBLIC)})").fetchone()
    m = con.execute(f"SELECT count(DISTINCT {SENSITIVE}) FROM people").fetchone()[0]

    print(f"rows      {args.rows:,} (census-like, generated in {t_gen:.1f} s, untimed)")
    print(f"columns   public {', '.join(PUBLIC)} (2 x 5 x 10 x 16 x 50); sensitive {SENSITIVE} (m = {m})")
    print(f"groups    {groups:,} personal groups, {cells:,} (group, value) cells; group size "
          f"min {sizes[0]:,}, median {sizes[1]:,.0f}, max {sizes[2]:,}")
    print(f"params    p = {args.p}, eps = {args.eps}, delta = {args.delta}, seed = {args.seed}")
    print(f"threads   {args.threads}; repeat {args.repeat}")
    print(f"duckdb    {duckdb.__version__}; numpy {np.__version__}; rwn_sql {rwn_sql.__version__}")
    print(f"machine   {cpu_name()}")
    print(f"peak RSS  {peak_rss_mb():,.0f} MB after generating the data")

    cols = ", ".join(PUBLIC + [SENSITIVE])
    common = dict(public=PUBLIC)
    audits, stale = {}, []

    # one-time costs of a process, shown and then kept out of the step times: the first audit
    # imports scipy.special and registers rwn_sql's SQL functions
    con.execute("CREATE TABLE warm_up AS SELECT * FROM people LIMIT 1000")
    t0 = time.perf_counter()
    rp.audit(con, "warm_up", SENSITIVE, args.p, args.eps, args.delta, **common).close()
    print(f"first use {time.perf_counter() - t0:.2f} s: an audit of 1,000 rows, the first of the process "
          f"(imports scipy.special, registers the SQL functions); not in the times below")

    def baseline():
        con.execute(f"CREATE OR REPLACE TABLE group_counts AS "
                    f"SELECT {cols}, count(*) AS n FROM people GROUP BY ALL")

    def randomize():
        rp.randomize(con, "people", SENSITIVE, p=args.p, **common, seed=args.seed, into="released",
                     replace=True)

    def audit(test):
        def run():
            result = rp.audit(con, "people", SENSITIVE, args.p, args.eps, args.delta, **common, test=test)
            if test in audits:
                stale.append(audits[test])
            audits[test] = result
        return run

    def enforce():
        rp.randomize(con, "people", SENSITIVE, p=args.p, **common, seed=args.seed,
                     enforce=(args.eps, args.delta), test="exact", into="released_enforced", replace=True)

    steps = [
        ("baseline", baseline, f"CREATE TABLE AS SELECT <5 public>, {SENSITIVE}, count(*) GROUP BY ALL"),
        ("randomize", randomize, "rp.randomize(..., into='released')"),
        ("audit chernoff", audit("chernoff"), "rp.audit(..., test='chernoff')"),
        ("audit exact", audit("exact"), "rp.audit(..., test='exact')"),
        ("enforce exact", enforce, "rp.randomize(..., enforce=(eps, delta), test='exact')"),
    ]
    times, failed = {}, {}
    best = f", best of {args.repeat}" if args.repeat > 1 else ""
    print(f"\n{'step':<15} {'wall':>10} {'/ base':>8} {'cpu':>9}   (cpu = user + sys of the process{best})")
    for name, fn, what in steps:
        runs = []
        for _ in range(args.repeat):
            clear_caches()
            while stale:                        # drop earlier runs' temporary tables (untimed)
                stale.pop().close()
            t0, c0 = time.perf_counter(), cpu_seconds()
            try:
                fn()
            except rwn_sql.RWNError as exc:    # report a refused step and go on with the others
                failed[name] = str(exc)
            runs.append((time.perf_counter() - t0, cpu_seconds() - c0))
            if name in failed:
                break
        times[name], cpu = min(runs)
        ratio = "" if name == "baseline" else f"{times[name] / times['baseline']:7.2f}x"
        print(f"{name:<15} {times[name]:8.2f} s {ratio:>8} {cpu:7.2f} s   {what}"
              f"   (peak RSS so far {peak_rss_mb():,.0f} MB)")
        if len(runs) > 1:
            print(f"{'':<15} all runs: {', '.join(f'{w:.2f}' for w, _ in runs)} s")
        if name in failed:
            print(f"{'':<15} FAILED after {times[name]:.2f} s: RWNError: {failed[name]}")

    if "randomize" in failed or "audit chernoff" in failed:
        print("\nheadline  not available: a step it needs failed")
    else:
        headline = (times["randomize"] + times["audit chernoff"]) / times["baseline"]
        print(f"\nheadline  {headline:8.2f}x    (randomize + audit chernoff) / baseline"
              f"   (target <= {HEADLINE_TARGET:g}x: {'met' if headline <= HEADLINE_TARGET else 'MISSED'})")

    print("\naudits (summary counts from rp.audit)")
    for test, result in audits.items():
        print(f"  {test:<9} {result.failing_groups:,} of {result.groups:,} personal groups fail "
              f"({result.failing_records:,} of {result.records:,} records); "
              f"{result.rows.aggregate('count(*)').fetchall()[0][0]:,} audit rows")

    # --- sanity check (untimed): a release is in keyed order, so it is checked by counts -----
    # public columns: the same multiset of personal groups; sensitive values: each value's
    # released count against its expectation p n_v + (1 - p) n / m (without enforcement)
    print("\nsanity check (untimed)")
    pub = ", ".join(PUBLIC)
    for table in ("released", "released_enforced"):
        if not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?",
                           [table]).fetchone()[0]:
            print(f"  {table:<18} not written")
            continue
        n, = con.execute(f"SELECT count(*) FROM {table}").fetchone()
        groups_differ, = con.execute(f"""SELECT count(*) FROM (
            (SELECT {pub}, count(*) FROM people GROUP BY ALL) EXCEPT ALL
            (SELECT {pub}, count(*) FROM {table} GROUP BY ALL))""").fetchone()
        worst, = con.execute(f"""SELECT max(abs(coalesce(r.n, 0) - ({args.p} * o.n + (1 - {args.p}) * {n} / {m}))
                                           / sqrt({n}))
            FROM (SELECT {SENSITIVE} AS v, count(*) AS n FROM people GROUP BY ALL) o
            LEFT JOIN (SELECT {SENSITIVE} AS v, count(*) AS n FROM {table} GROUP BY ALL) r USING (v)""").fetchone()
        print(f"  {table:<18} {n:,} rows; personal groups whose size changed: {groups_differ:,}; largest "
              f"|released - expected| count of a value: {worst:.3f} sqrt(n) (a count's standard deviation is at most "
              f"0.5 sqrt(n) without enforcement, larger with blocks)")
    print(f"\npeak RSS  {peak_rss_mb():,.0f} MB (whole process, at the end)")


if __name__ == "__main__":
    main()
