"""Reproduce the RWN paper's comparison on the bodyfat data (241 men x 14 measurements), number by
number, beside the paper's values.

The grids of the authors' notebook (noah-perry/RWN-privacy, `Experiments/SDC Comparison
(bodyfat).ipynb`), 15 settings per method, index 1..15:
  RWN (rwn1, k = 5, q = 1)           eps 0.25, 0.30, ..., 0.95      --reps releases each (paper: 100)
  rank swapping (sdcMicro rankSwap)  P 12, 15, ..., 54 %            --reps releases each (paper: 100)
  microaggregation (sdcMicro MDAV)   k 2, 3, ..., 16                deterministic, one release
here rwn_sql's perturb (release r of an eps keyed key#r, all drawn in one statement), rank_swap(
variant="sdcmicro", reps=...) and mdav(scale="zscore") (sdcMicro's MDAV weights distances by
1 / variance). The measures, each as the notebook computes it: dcr_mean_raw (calc_DCR, raw
units), sdid_rwn_paper (sdcMicro's dRisk, k = 1; the paper's "SDID"), rmdid (dRiskRMD's risk1),
corr_mad (corMeanAbsDif) from rwn_sql.evaluate; pc1_loading_mad, pc2_loading_mad
(pcaloadMeanAbsDif), reg_coef_mad and r2 (reg_utilityMetrics, regvars = "all") from
rwn_sql.evaluation.paper_utility.

Prints, for every measure, method and index, the paper's value (examples/data/rwn_paper_figures.csv,
digitized from the notebook's plots) beside this project's mean over the releases, its standard
error (sd / sqrt(reps)), the difference, and a flag where |difference| > 0.03 (dcr_mean_raw, in
raw units: > 3 % of the paper's value). --markdown prints the table as Markdown. Also writes
<output-dir>/paper_comparison.csv (the table), tune.csv and report.html (rwn_sql.evaluation.tune's
format, from the same releases).

Run from the project root:  python examples/paper_reproduction.py [--reps 100] [--markdown]
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from pathlib import Path

import duckdb
import numpy as np

from rwn_sql.engines import duckdb_backend
from rwn_sql.evaluation import baselines, paper_utility, tune, tune_report
from rwn_sql.evaluation.evaluate import evaluate_replicates
from rwn_sql.identifiers import quote_ident
from rwn_sql.randomness import resolve_key

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "bodyfat_clean.csv"
PAPER = HERE / "data" / "rwn_paper_figures.csv"

EPS = [round(0.25 + 0.05 * i, 2) for i in range(15)]          # the notebook's seq(0.25, 0.95, 0.05)
P_PERCENT = [12 + 3 * i for i in range(15)]                    # seq(0.12, 0.54, 0.03) * 100
GROUP_SIZES = list(range(2, 17))                               # seq(2, 16, 1)
METHODS = {"rwn": ("eps", EPS), "rank_swap": ("P", P_PERCENT), "mdav": ("k", GROUP_SIZES)}
MEASURES = ["dcr_mean_raw", "sdid_rwn_paper", "rmdid", "corr_mad", "pc1_loading_mad", "pc2_loading_mad",
            "reg_coef_mad", "r2"]
PAPER_NAME = {"sdid_rwn_paper": "sdid"}                        # the CSV's name for the notebook's dRisk
TOLERANCE, DCR_RELATIVE = 0.03, 0.03
TARGET, WEIGHT, HEIGHT = "BodyFat", "Weight", "Height"
TABLE, RWN_TABLE = "__paper_releases", "__paper_rwn_releases"   # RWN's is a TEMP table


def measured(con, src, columns, xo, table: str, reps: int, where: str = "true") -> tuple[dict, list]:
    """({measure: array over the releases}, the rwn_sql Evaluations) of the `reps` releases in the
    rows of `table` where `where` holds (columns `replicate` and the data's, in (replicate,
    record) order)."""
    rows = f"(SELECT * FROM {quote_ident(table)} WHERE {where} ORDER BY rowid)"
    evs = list(evaluate_replicates(con, src, rows, reps, columns, target=TARGET))
    data = con.execute(f"SELECT {', '.join(map(quote_ident, columns))} FROM {rows}").fetchnumpy()
    xr = np.stack([np.asarray(data[c], dtype=np.float64) for c in columns], axis=1).reshape(reps, *xo.shape)
    coef, r2 = paper_utility.regression_measures(xo, xr, columns.index(TARGET), columns.index(WEIGHT),
                                                 columns.index(HEIGHT))
    out = {"dcr_mean_raw": [ev.risk.dcr_mean_raw for ev in evs],
           "sdid_rwn_paper": [ev.risk.sdid_rwn_paper for ev in evs],
           "rmdid": [ev.risk.rmdid for ev in evs],
           "corr_mad": [ev.utility.corr_mad for ev in evs],
           "pc1_loading_mad": paper_utility.pc_loading_mad(xo, xr, 1),
           "pc2_loading_mad": paper_utility.pc_loading_mad(xo, xr, 2),
           "reg_coef_mad": coef, "r2": r2}
    return {m: np.asarray(v, dtype=np.float64) for m, v in out.items()}, evs


def summary(evs) -> dict:
    """tune's summary of a setting (mean and sd of each of tune.MEASURES), for tune.csv."""
    out = {}
    for name, (_, get) in tune.MEASURES.items():
        vals = [float(v) for v in map(get, evs) if v is not None and not math.isnan(float(v))]
        out[name] = (float(np.mean(vals)) if vals else None, float(np.std(vals, ddof=1)) if len(vals) > 1 else None)
    return out


def run(con, columns, xo, reps: int, seed: int):
    """({(method, index): {measure: array}}, tune.SweepResult of the same releases)."""
    be = duckdb_backend.DuckDBBackend(con)
    src = be.source("bodyfat")
    key = resolve_key(None, seed)
    found = {}
    result = tune.SweepResult(source="bodyfat", columns=columns, k=5, q=1.0, settings=[], figure1={})
    releases = tune.rwn_releases(be, src, columns, EPS, k=5, q=1.0, reps=reps, scale="minmax", categorical=(),
                                 key=key, into=RWN_TABLE)
    try:
        for i, where, size, dcr in releases:
            found["rwn", i + 1], evs = measured(con, src, columns, xo, RWN_TABLE, reps, where)
            result.figure1[EPS[i]] = {"size": size.tolist(), "dcr": dcr.tolist()}
            result.settings.append(tune.Setting("rwn", "eps", EPS[i], reps, summary(evs), {
                "size_min": float(size.min()), "size_median": float(np.median(size)),
                "size_mean": float(size.mean()), "size_max": float(size.max()),
                "share_at_k": float(np.mean(size == 5))}))
    finally:
        releases.close()
        con.execute(f"DROP TABLE IF EXISTS {RWN_TABLE}").fetchall()
    statements = baselines.rank_swap_statements(con, src, columns, P_PERCENT, key=key, reps=reps, variant="sdcmicro")
    for i, p in enumerate(P_PERCENT):
        con.execute(f"CREATE OR REPLACE TABLE {TABLE} AS\n{next(statements)}").fetchall()
        found["rank_swap", i + 1], evs = measured(con, src, columns, xo, TABLE, reps)
        result.settings.append(tune.Setting("rank_swap_sdcmicro", "P", float(p), reps, summary(evs)))
    for i, k in enumerate(GROUP_SIZES):
        statement = baselines.mdav_statement(con, src, columns, k, scale="zscore")
        con.execute(f"CREATE OR REPLACE TABLE {TABLE} AS SELECT 0 AS replicate, * FROM ({statement})").fetchall()
        found["mdav", i + 1], evs = measured(con, src, columns, xo, TABLE, 1)
        result.settings.append(tune.Setting("mdav", "k", float(k), 1, summary(evs)))
    con.execute(f"DROP TABLE IF EXISTS {TABLE}").fetchall()
    return found, result


def paper_values() -> dict:
    with open(PAPER, newline="") as fh:
        return {(r["measure"], r["method"], int(r["index"])): float(r["value"]) for r in csv.DictReader(fh)}


def comparison(found: dict) -> list[dict]:
    """One row per measure, method and index: the paper's value, ours (mean, standard error),
    the difference and whether it is over the tolerance."""
    paper, rows = paper_values(), []
    for measure in MEASURES:
        for method, (parameter, values) in METHODS.items():
            for index, value in enumerate(values, 1):
                v = found[method, index][measure]
                ours = float(np.mean(v))
                se = float(np.std(v, ddof=1) / math.sqrt(len(v))) if len(v) > 1 else None
                theirs = paper[PAPER_NAME.get(measure, measure), method, index]
                tol = DCR_RELATIVE * abs(theirs) if measure == "dcr_mean_raw" else TOLERANCE
                rows.append({"measure": measure, "method": method, "index": index, "parameter": parameter,
                             "value": value, "paper": theirs, "ours": ours, "se": se, "diff": ours - theirs,
                             "flag": abs(ours - theirs) > tol})
    return rows


def table_lines(rows: list[dict], markdown: bool) -> list[str]:
    head = ["measure", "method", "index", "setting", "paper", "ours", "se", "diff", "flag"]
    cells = []
    for r in rows:
        digits = 2 if r["measure"] == "dcr_mean_raw" else 3
        se = "-" if r["se"] is None else f"{r['se']:.{digits + 1}f}"
        cells.append([r["measure"], r["method"], str(r["index"]), f"{r['parameter']}={r['value']:g}",
                      f"{r['paper']:.{digits}f}", f"{r['ours']:.{digits}f}", se, f"{r['diff']:+.{digits}f}",
                      "**GAP**" if r["flag"] and markdown else ("GAP" if r["flag"] else "")])
    if markdown:            # a table per measure, under its own heading
        lines = []
        for measure in MEASURES:
            lines += ["", f"### {measure}", "", "| " + " | ".join(head[1:]) + " |",
                      "|" + "|".join(["---"] * 3 + ["---:"] * 4 + [":---:"]) + "|"]
            lines += ["| " + " | ".join(c[1:]) + " |" for c in cells if c[0] == measure]
        return lines[1:]
    widths = [max(len(x) for x in col) for col in zip(head, *cells)]
    fmt = lambda c: "  ".join(x.ljust(w) if i < 4 else x.rjust(w) for i, (x, w) in enumerate(zip(c, widths)))
    return [fmt(head)] + [fmt(c).rstrip() for c in cells]


def write_csv(rows: list[dict], path: Path) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=100, help="releases per RWN eps and rank-swap P (default 100)")
    ap.add_argument("--output-dir", default=str(HERE / "output"),
                    help="where paper_comparison.csv, tune.csv and report.html go")
    ap.add_argument("--seed", type=int, default=2024, help="seed of the releases (experiments only)")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown (for the docs)")
    args = ap.parse_args()
    if args.reps < 2:
        ap.error("--reps must be at least 2 (the standard errors need two releases)")

    start = time.perf_counter()
    con = duckdb.connect()
    con.execute(f"CREATE TABLE bodyfat AS SELECT * FROM read_csv('{DATA}')").fetchall()
    columns = [r[0] for r in con.execute("DESCRIBE bodyfat").fetchall()]
    xo = np.loadtxt(DATA, delimiter=",", skiprows=1)
    found, result = run(con, columns, xo, args.reps, args.seed)
    rows = comparison(found)
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, out / "paper_comparison.csv")
    result.to_csv(out / "tune.csv")
    tune_report.report_html(result, out / "report.html", risk="sdid_rwn_paper")
    print("\n".join(table_lines(rows, args.markdown)))
    gaps = [r for r in rows if r["flag"]]
    print(f"\n{len(gaps)} of {len(rows)} values differ from the paper's by more than {TOLERANCE} "
          f"(dcr_mean_raw: {DCR_RELATIVE:.0%} of the paper's value); {args.reps} releases per RWN eps and rank-swap P.")
    print(f"{time.perf_counter() - start:.0f} s; wrote {out / 'paper_comparison.csv'}, {out / 'tune.csv'} and "
          f"{out / 'report.html'}", file=sys.stderr)


if __name__ == "__main__":
    main()
