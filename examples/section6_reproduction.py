"""The reconstruction-privacy paper's experiments (its section 6), on bundled real data.

The paper's two findings: (1) (eps, delta)-reconstruction-privacy is violated even when the
retention p is set by rho1-to-rho2 privacy or by local differential privacy, and (2) enforcing
it costs little information. For UCI Adult (occupation, 15 values) and the NIST ACS 2019
excerpt (EDU, 12 values), for several (rho1, rho2) and lambda this script

1. calibrates p (rwn_sql.calibrate_p) for the domain's m values,
2. audits the original data at a grid of (eps, delta) with the exact test and reports the
   personal groups and records that fail,
3. releases at that p without and with enforcement at (eps, delta) = ENFORCE (the same key;
   personal groups for which no block design exists are left out, suppress_small, and counted),
   answers the same random count queries from both releases and reports the mean relative error
   against the true counts of the original data.

A query is `COUNT(*) WHERE <one or two public columns = a value present> AND SA = v`, drawn with a
fixed seed among those whose true count is at least MIN_COUNT (relative errors of tiny counts
measure nothing but their noise); its estimate is the sum of the unbiased estimates of the
personal groups it selects. Run: python examples/section6_reproduction.py [--queries N] [--markdown]
(about five minutes on 2 cores; docs/guides/paper-experiments.md shows its output). The key is
fixed so that the numbers are reproducible; a real release uses a secret key (--key-file).
"""
from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import duckdb
import numpy as np

import rwn_sql

DATA = Path(__file__).resolve().parent / "data"
KEY = "section 6 reproduction: a fixed key so the figures repeat"
DATASETS = (   # name, file, sensitive attribute, public columns, NULL sensitive values
    ("Adult", DATA / "adult.csv", "occupation", ["sex", "race", "relationship"], "error"),
    ("ACS 2019", DATA / "acs2019_national.csv", "EDU", ["SEX", "RAC1P", "MSP", "OWN_RENT"], "drop"),
)
BUDGETS = (("rho", (0.05, 0.5)), ("rho", (0.1, 0.5)), ("rho", (0.2, 0.8)),
           ("ldp", 0.5), ("ldp", 1.0), ("ldp", 2.0))
AUDIT_GRID = ((0.3, 0.1), (0.5, 0.1), (0.5, 0.3))
ENFORCE = (0.5, 0.1)
MIN_COUNT = 20


def budget_name(kind, value) -> str:
    return f"rho1-rho2 = {value[0]:g}-{value[1]:g}" if kind == "rho" else f"lambda = {value:g} (LDP)"


def load(con, name, path) -> str:
    table = "d_" + "".join(c if c.isalnum() else "_" for c in name.lower())
    con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM read_csv(?, nullstr = ['N', ''])", [str(path)])
    return table


def draw_queries(con, table, sensitive, public, nulls, n, rng):
    """n queries (columns, values, sensitive value) with a true count of at least MIN_COUNT."""
    where = f" WHERE {sensitive} IS NOT NULL" if nulls == "drop" else ""
    cells = con.execute(f"SELECT {', '.join(public)}, CAST({sensitive} AS VARCHAR), count(*) FROM {table}{where} "
                        f"GROUP BY ALL ORDER BY ALL").fetchall()   # a fixed order: the same queries every run
    keys = np.array([[str(v) for v in r[:-2]] for r in cells], dtype=object)
    values = np.array([r[-2] for r in cells], dtype=object)
    counts = np.array([r[-1] for r in cells])
    queries = []
    while len(queries) < n:
        cols = sorted(rng.choice(len(public), size=rng.integers(1, 3), replace=False).tolist())
        row = rng.integers(len(cells))           # values that occur together
        mask = np.ones(len(cells), bool)
        for c in cols:
            mask &= keys[:, c] == keys[row, c]
        mask &= values == values[row]
        if counts[mask].sum() >= MIN_COUNT:
            queries.append((cols, [keys[row, c] for c in cols], values[row], int(counts[mask].sum())))
    return queries


def answers(con, release, sensitive, public, queries):
    """The queries' estimates from a release: sums of its personal groups' unbiased estimates."""
    rows = rwn_sql.estimates(con, release, sensitive, group_by=public).fetchall()
    keys = np.array([[str(v) for v in r[:len(public)]] for r in rows], dtype=object)
    values = np.array([str(r[len(public)]) for r in rows], dtype=object)
    estimate = np.array([r[len(public) + 3] for r in rows], dtype=float)
    out = []
    for cols, vals, value, _ in queries:
        mask = values == value
        for c, v in zip(cols, vals):
            mask &= keys[:, c] == v
        out.append(estimate[mask].sum())
    return np.array(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=300, help="random count queries per release (default 300)")
    parser.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    con = duckdb.connect()
    audit_rows, loss_rows = [], []
    for name, path, sensitive, public, nulls in DATASETS:
        table = load(con, name, path)
        where = f" WHERE {sensitive} IS NOT NULL" if nulls == "drop" else ""
        m = con.execute(f"SELECT count(DISTINCT {sensitive}) FROM {table}{where}").fetchone()[0]
        queries = draw_queries(con, table, sensitive, public, nulls, args.queries, np.random.default_rng(6))
        truth = np.array([q[3] for q in queries], dtype=float)
        for kind, value in BUDGETS:
            calibration = rwn_sql.calibrate_p(m, **{kind: value})
            for eps, delta in AUDIT_GRID:
                with rwn_sql.audit(con, table, sensitive, calibration, eps, delta, public=public, nulls=nulls,
                                   l_diversity=1) as audit:
                    audit_rows.append((name, m, budget_name(kind, value), calibration.p, eps, delta,
                                       audit.failing_groups, audit.groups, audit.failing_records, audit.records))
            errors = {}
            for label, enforce in (("plain", None), ("enforced", ENFORCE)):
                release = f"rel_{label}"
                with warnings.catch_warnings():     # suppress_small's count is read from the release below
                    warnings.simplefilter("ignore")
                    rwn_sql.randomize(con, table, sensitive, calibration, public=public, nulls=nulls, key=KEY,
                                      enforce=enforce, into=release, replace=True, l_diversity=1,
                                      suppress_small=enforce is not None)
                estimate = answers(con, release, sensitive, public, queries)
                errors[label] = float(np.mean(np.abs(estimate - truth) / truth))
            released = con.execute("SELECT count(*) FROM rel_enforced").fetchone()[0]
            loss_rows.append((name, budget_name(kind, value), calibration.p, errors["plain"], errors["enforced"],
                              len(truth) and con.execute("SELECT count(*) FROM rel_plain").fetchone()[0] - released))
    show(audit_rows, loss_rows, args.markdown, args.queries)
    print(f"\n{time.perf_counter() - start:.1f} s")
    return 0


def show(audit_rows, loss_rows, markdown: bool, n: int) -> None:
    head = ["data", "m", "budget", "p", "eps", "delta", "failing groups", "failing records"]
    body = [[d, str(m), b, f"{p:.6f}", f"{e:g}", f"{de:g}", f"{fg} of {g} ({100 * fg / g:.1f} %)",
             f"{fr} of {r} ({100 * fr / r:.1f} %)"] for d, m, b, p, e, de, fg, g, fr, r in audit_rows]
    table(head, body, markdown, "Audit at the calibrated p (exact test), before enforcement")
    head = ["data", "budget", "p", "MRE plain", f"MRE enforced {ENFORCE}", "increase", "records suppressed"]
    body = [[d, b, f"{p:.6f}", f"{plain:.4f}", f"{enforced:.4f}", f"{enforced - plain:+.4f}", str(left_out)]
            for d, b, p, plain, enforced, left_out in loss_rows]
    table(head, body, markdown, f"Mean relative error of {n} random count queries (true count >= {MIN_COUNT})")


def table(head, body, markdown: bool, title: str) -> None:
    print(f"\n{title}\n")
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for row in body:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(head)]
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
    for row in body:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)))


if __name__ == "__main__":
    raise SystemExit(main())
