"""Reconstruction privacy on the UCI Adult data (32,561 records).

Public attributes: sex, race, relationship, education, marital_status (released exactly);
sensitive attribute: occupation (15 values), randomized with retention probability p.

1. Audit of the original data: personal groups (records sharing all public values) and
   records failing (eps, delta)-reconstruction-privacy, under the Chernoff and the exact test,
   before and after enforcement.
2. Utility: relative error of aggregate count queries (sex x occupation, race x occupation,
   education x occupation; true count >= 100), averaged over several keys, without and with
   enforcement.
3. A Monte Carlo attack on the largest enforced groups: how often the micro reconstruction
   misses by more than eps in each direction (must be >= delta).
4. An analyst's count query answered from a standalone release database.

Run from the project root:  python examples/adult_reconstruction.py [--keys 10] [--reps 400]
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import duckdb
import numpy as np

import rwn_sql

DATA = Path(__file__).resolve().parent / "data" / "adult.csv"
PUBLIC = ["sex", "race", "relationship", "education", "marital_status"]
QUERY = ("SELECT sex, COUNT(*) FROM adult WHERE occupation = 'Sales' AND race IN ('Black', 'Other') "
         "GROUP BY sex")


def relative_errors(con, release: str, p: float, domain: list[str]) -> float:
    """Mean |estimate - truth| / truth over the aggregate count queries with truth >= 100."""
    errs = []
    for by in ("sex", "race", "education"):
        est = rwn_sql.estimates(con, release, "occupation", p, domain, group_by=[by]).sql_query()
        rows = con.execute(f"""SELECT abs(e.estimate - t.n) / t.n FROM ({est}) e
            JOIN (SELECT {by}, occupation AS value, count(*) AS n FROM adult GROUP BY ALL) t USING ({by}, value)
            WHERE t.n >= 100""").fetchall()
        errs += [r[0] for r in rows]
    return float(np.mean(errs))


def attack(con, p, eps, delta, test, reps, groups=5):
    """Monte Carlo tails of micro reconstruction for the largest enforced groups: replicate
    each group `reps` times (copy number public) and release once."""
    pub = ", ".join(PUBLIC)
    audit = rwn_sql.audit(con, "adult", "occupation", p, eps, delta, public=PUBLIC, test=test, enforce=True)
    con.execute(f"""CREATE OR REPLACE TEMP TABLE big AS SELECT DISTINCT {pub}, group_size, trials
        FROM ({audit.rows.sql_query()}) WHERE enforced ORDER BY group_size DESC LIMIT {groups}""").fetchall()
    con.execute(f"""CREATE OR REPLACE TEMP TABLE reps AS SELECT r AS rep, adult.{pub.replace(', ', ', adult.')},
        adult.occupation FROM adult JOIN big USING ({pub}), range({reps}) t(r)""").fetchall()
    domain = [r[0] for r in con.execute("SELECT DISTINCT occupation FROM adult ORDER BY 1").fetchall()]
    # the micro-reconstruction attack on these groups is the subject, not attribute disclosure
    rwn_sql.randomize(con, "reps", "occupation", p, public=["rep"] + PUBLIC, domain=domain,
                      enforce=(eps, delta), test=test, seed=99, into="mc", replace=True, l_diversity=1)
    b = (1 - p) / len(domain)
    row = con.execute(f"""
        WITH truth AS (SELECT {pub}, occupation AS value, count(*) / any_value(big.group_size) AS f,
                              any_value(big.group_size) AS n FROM adult JOIN big USING ({pub}) GROUP BY ALL),
             counts AS (SELECT rep, {pub}, occupation AS value, count(*) AS o FROM mc GROUP BY ALL),
             rec AS (SELECT t.*, (coalesce(c.o, 0) / t.n - {b}) / {p} AS f_rec
                     FROM truth t CROSS JOIN range({reps}) r(rep)
                     LEFT JOIN counts c ON c.rep = r.rep AND c.value = t.value
                          AND {' AND '.join(f'c.{c} = t.{c}' for c in PUBLIC)}),
             tails AS (SELECT {pub}, value, avg(((f_rec - f) / f > {eps})::INT) AS up,
                              avg(((f_rec - f) / f < -{eps})::INT) AS lo
                       FROM rec GROUP BY {pub}, value)
        SELECT min(least(up, lo)), count(*) FILTER (WHERE least(up, lo) < {delta}), count(*) FROM tails""").fetchone()
    sizes = [r[0] for r in con.execute("SELECT group_size || ' (' || trials || ' blocks)' FROM big ORDER BY group_size DESC").fetchall()]
    return row, sizes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--p", type=float, default=0.5, help="retention probability (default 0.5)")
    ap.add_argument("--eps", type=float, default=0.5, help="eps (default 0.5)")
    ap.add_argument("--delta", type=float, default=0.05, help="delta (default 0.05)")
    ap.add_argument("--keys", type=int, default=10, help="keys averaged for the utility figures (default 10)")
    ap.add_argument("--reps", type=int, default=400, help="Monte Carlo releases per group (default 400)")
    args = ap.parse_args()
    p, eps, delta = args.p, args.eps, args.delta

    con = duckdb.connect()
    con.execute(f"CREATE TABLE adult AS SELECT * FROM read_csv('{DATA}')").fetchall()
    domain = [r[0] for r in con.execute("SELECT DISTINCT occupation FROM adult ORDER BY 1").fetchall()]
    print(f"adult: 32,561 records; public {', '.join(PUBLIC)}; sensitive occupation (m = {len(domain)}); "
          f"p = {p}, (eps, delta) = ({eps}, {delta})\n")

    print("1. Audit (personal groups and records failing)")
    for test in ("chernoff", "exact"):
        for enforce in (False, True):
            print("   " + rwn_sql.audit(con, "adult", "occupation", p, eps, delta, public=PUBLIC, test=test,
                                        enforce=enforce).summary())

    print(f"\n2. Mean relative error of aggregate count queries (truth >= 100), over {args.keys} keys")
    for label, enforce, test in (("no enforcement", None, "chernoff"), ("enforced, Chernoff test", (eps, delta), "chernoff"),
                                 ("enforced, exact test", (eps, delta), "exact")):
        errs = []
        for k in range(args.keys):
            # the count errors of these groups are measured (46 of them hold one occupation)
            rwn_sql.randomize(con, "adult", "occupation", p, public=PUBLIC, enforce=enforce, test=test,
                              seed=1000 + k, into="released", replace=True, l_diversity=1)
            errs.append(relative_errors(con, "released", p, domain))
        print(f"   {label:26s} {np.mean(errs):.3f} (sd over keys {np.std(errs, ddof=1):.3f})")

    print(f"\n3. Monte Carlo attack on the 5 largest enforced groups ({args.reps} releases each): smallest tail "
          f"probability of a >eps reconstruction error, over every value of every group (needs >= {delta})")
    for test in ("chernoff", "exact"):
        (worst, below, pairs), sizes = attack(con, p, eps, delta, test, args.reps)
        print(f"   {test:8s} test: groups of {', '.join(sizes)} records; smallest tail {worst:.3f}; "
              f"{below} of {pairs} (group, value) pairs below delta")

    print("\n4. An analyst's query on a standalone release database")
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "adult_release.duckdb")
        # a release the steward would publish: the public set the attribute-disclosure check passes
        rwn_sql.release(con, "adult", path, "occupation", p, public=["sex", "race", "relationship"],
                        enforce=(eps, delta), test="exact", seed=7)
        rel, info = rwn_sql.query(con, QUERY, release=path)
        print(f"   {QUERY}")
        truth = dict(con.execute("SELECT sex, count(*) FROM adult WHERE occupation = 'Sales' AND "
                                 "race IN ('Black', 'Other') GROUP BY sex").fetchall())
        for sex, released, size, est, se, lo, hi, *_ in rel.fetchall():
            print(f"   {sex:6s} estimate {est:6.1f} +- {se:4.1f} (95% [{lo:.1f}, {hi:.1f}]); released count {released}, "
                  f"true count {truth[sex]}")


if __name__ == "__main__":
    main()
