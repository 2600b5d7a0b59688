"""RWN on the paper's bodyfat data (241 men x 14 body measurements, cleaned as in the paper).

1. The tuning view of the paper's Figure 1: for k = 5 and eps from 0.2 to 1.2, the
   distribution of neighbourhood sizes |S_i| and the share of records held at exactly k.
   On min-max scaled data the largest neighbourhood is about 68, 160 and 215 records at
   eps = 0.4, 0.6 and 0.8, and below eps ~ 0.25 every neighbourhood is just the kNN set.
2. One release (k = 5, eps = 0.4, q = 1) and what it changed.

Run from the project root:  python examples/bodyfat_rwn.py [--eps 0.4] [--seed 2024]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import duckdb
import numpy as np

import rwn_sql

DATA = Path(__file__).resolve().parent / "data" / "bodyfat_clean.csv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eps", type=float, default=0.4, help="eps of the release in part 2 (default 0.4)")
    parser.add_argument("--k", type=int, default=5, help="k for both parts (default 5)")
    parser.add_argument("--seed", type=int, default=2024, help="seed of the release (experiments only)")
    args = parser.parse_args()

    con = duckdb.connect()
    con.execute(f"CREATE TABLE bodyfat AS SELECT * FROM read_csv('{DATA}')").fetchall()
    columns = [r[0] for r in con.execute("DESCRIBE bodyfat").fetchall()]
    n = con.execute("SELECT count(*) FROM bodyfat").fetchone()[0]
    print(f"bodyfat: {n} records x {len(columns)} columns ({DATA.name}), min-max scaling, k = {args.k}\n")

    print("1. Neighbourhood sizes |S_i| by eps (S_i = records within max(eps, r_k))")
    print(f"{'eps':>5s} {'median':>7s} {'mean':>7s} {'max':>5s} {'share at k':>11s}")
    for eps in np.round(np.arange(0.2, 1.21, 0.1), 2):
        sql = rwn_sql.neighborhoods(con, "bodyfat", columns, k=args.k, eps=float(eps), sql=True)
        med, mean, mx, at_k = con.execute(
            f"SELECT median(size), avg(size), max(size), avg((size = {args.k})::INT) FROM ({sql})").fetchone()
        print(f"{eps:5.2f} {med:7.1f} {mean:7.1f} {mx:5d} {at_k:11.3f}")

    print(f"\n2. Release: k = {args.k}, eps = {args.eps}, q = 1, seed = {args.seed}")
    # input order: the comparisons below pair each released row with its source row
    rwn_sql.perturb(con, "bodyfat", columns, k=args.k, eps=args.eps, q=1.0, seed=args.seed, order="input",
                    into="released")
    orig = con.execute("SELECT * FROM bodyfat").fetchnumpy()
    rel = con.execute("SELECT * FROM released").fetchnumpy()
    changed = np.mean([np.mean(orig[c] != rel[c]) for c in columns])
    same_rows = np.mean(np.all([orig[c] == rel[c] for c in columns], axis=0))
    a = np.column_stack([orig[c] for c in columns])
    b = np.column_stack([rel[c] for c in columns])
    iu = np.triu_indices(len(columns), 1)
    corr_diff = np.mean(np.abs(np.corrcoef(a, rowvar=False)[iu] - np.corrcoef(b, rowvar=False)[iu]))
    print(f"   {len(rel[columns[0]])} rows written to table 'released'; {changed:.1%} of cells changed; "
          f"{same_rows:.1%} of rows identical to their source")
    print(f"   mean |difference| of the {len(iu[0])} pairwise correlations: {corr_diff:.3f}")
    print(f"   {'column':>9s} {'mean':>9s} {'released':>9s} {'sd':>8s} {'released':>9s}")
    for c in columns[:5]:
        print(f"   {c:>9s} {orig[c].mean():9.2f} {rel[c].mean():9.2f} {orig[c].std():8.2f} {rel[c].std():9.2f}")
    print("   ... (all 14 columns perturbed; see the table for the rest)")


if __name__ == "__main__":
    main()
