"""Benchmark: the SQL macros of reconstruction privacy over a TEMP table against the same calls over
a table, in one process (issue 54, part 3).

A macro plans on a cursor, which cannot see its caller's TEMP tables; its statement then hands
the source to the planner as it runs (rwn_sql.rp.temp_source). For each call, over the UCI Adult
data (32,561 records, examples/data/adult.csv) and over the first 800 of them: the statement's
size over the table and over the TEMP copy, and the whole call's time (planning included:
`SELECT * FROM rwn_randomize(...)`), the best of --repeat runs, table and TEMP alternating. The
rows must be equal (checked). Target: the TEMP statement at most twice the table's size and its
call within 1.5x the table's time.

    python benchmarks/bench_temp_sources.py [--repeat 9] [--threads 2]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import duckdb

import rwn_sql
from machine import cpu_name

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "examples" / "data" / "adult.csv"
KEY = "temp source benchmark key, long enough"

# (label, macro call with {src}, the planning function's call with {src})
CALLS = [
    ("randomize, public sex+race",
     f"rwn_randomize('{{src}}', 'occupation', 0.5, public := ['sex', 'race'], key := '{KEY}')",
     f"rwn_randomize_sql('{{src}}', 'occupation', 0.5, ['sex', 'race'], NULL, '{KEY}', NULL, NULL, NULL, 'exact', "
     f"'error', NULL, NULL, NULL)"),
    ("randomize, every other column public",
     f"rwn_randomize('{{src}}', 'occupation', 0.5, key := '{KEY}', l_diversity := 1)",
     f"rwn_randomize_sql('{{src}}', 'occupation', 0.5, NULL, NULL, '{KEY}', NULL, NULL, NULL, 'exact', 'error', "
     f"NULL, 1, NULL)"),
    ("randomize, enforced (0.5, 0.1), id",
     f"rwn_randomize('{{src}}', 'occupation', 0.45, public := ['sex', 'race'], epsilon := 0.5, delta := 0.1, "
     f"id := 'rid', key := '{KEY}', l_diversity := 1)",
     f"rwn_randomize_sql('{{src}}', 'occupation', 0.45, ['sex', 'race'], NULL, '{KEY}', NULL, 0.5, 0.1, 'exact', "
     f"'error', 'rid', 1, NULL)"),
    ("audit, public sex+race+relationship",
     "rwn_audit('{src}', 'occupation', 0.5, 0.5, 0.1, public := ['sex', 'race', 'relationship'])",
     "rwn_audit_sql('{src}', 'occupation', 0.5, 0.5, 0.1, ['sex', 'race', 'relationship'], NULL, 'exact', false, "
     "'error')"),
    ("audit, enforced",
     "rwn_audit('{src}', 'occupation', 0.45, 0.5, 0.1, public := ['sex', 'race'], enforce := true)",
     "rwn_audit_sql('{src}', 'occupation', 0.45, 0.5, 0.1, ['sex', 'race'], NULL, 'exact', true, 'error')"),
]


def best(con, sql: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        con.execute(sql).fetchall()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    con = duckdb.connect(config={"threads": args.threads})
    rwn_sql.install(con)
    print(f"duckdb {duckdb.__version__}, {args.threads} threads, best of {args.repeat}; {cpu_name()}")
    print(f"{'rows':>6}  {'call':38} {'size table':>10} {'TEMP':>7} {'ratio':>6}   {'time table':>10} "
          f"{'TEMP':>8} {'ratio':>6}")
    for rows in (800, 32_561):
        con.execute(f"CREATE OR REPLACE TABLE adult AS SELECT row_number() OVER () AS rid, sex, race, relationship, "
                    f"occupation FROM read_csv('{ADULT}') LIMIT {rows}").fetchall()
        con.execute("CREATE OR REPLACE TEMP TABLE adult_t AS SELECT * FROM adult").fetchall()
        for label, call, plan in CALLS:
            sizes = [len(con.execute(f"SELECT {plan.format(src=s)}").fetchone()[0]) for s in ("adult", "adult_t")]
            expected = con.execute(f"SELECT * FROM {call.format(src='adult')}").fetchall()
            assert con.execute(f"SELECT * FROM {call.format(src='adult_t')}").fetchall() == expected, label
            table = temp = float("inf")
            for _ in range(2):          # alternating, so a change of the machine's load hits both
                table = min(table, best(con, f"SELECT * FROM {call.format(src='adult')}", args.repeat))
                temp = min(temp, best(con, f"SELECT * FROM {call.format(src='adult_t')}", args.repeat))
            print(f"{rows:>6}  {label:38} {sizes[0]:>10,} {sizes[1]:>7,} {sizes[1] / sizes[0]:>6.2f}   "
                  f"{table * 1000:>8.1f}ms {temp * 1000:>6.1f}ms {temp / table:>6.2f}")


if __name__ == "__main__":
    main()
