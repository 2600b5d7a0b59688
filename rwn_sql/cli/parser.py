"""The rwn-sql command line's parser: one small function per command, driven by one command
table that also holds each command's --help examples; an option a command does not know is
reported by that command, with the closest one it has."""
from __future__ import annotations

import argparse
import csv
import difflib
import os
import sys
from dataclasses import dataclass
from typing import Callable

from ..rwn.spec import ON_MISSING, SCALES
from ..version import __version__


def column_list(text: str) -> list[str]:
    """'a,b,"c,d"' -> ['a', 'b', 'c,d'] (CSV quoting for names with commas)."""
    names = next(csv.reader([text], skipinitialspace=True), [])
    names = [n.strip() for n in names]
    if not names or any(n == "" for n in names):
        raise argparse.ArgumentTypeError(f"expected comma-separated column names, got {text!r}")
    return names


def _add_rwn_options(p: argparse.ArgumentParser, with_q: bool) -> None:
    p.add_argument("--columns", required=True, type=column_list, metavar="A,B,C",
                   help="distance columns, which are also the perturbed columns (comma-separated; "
                        "quote names containing commas CSV-style)")
    p.add_argument("--k", type=int, default=5,
                   help="neighbourhood holds at least the k nearest other records (default 5; 0 = eps only)")
    p.add_argument("--eps", type=float, default=0.0,
                   help="neighbourhood holds every record within distance eps, in scaled units (default 0)")
    if with_q:
        p.add_argument("--q", type=float, default=1.0,
                       help="probability that a cell is replaced by a random neighbour's value (default 1)")
    p.add_argument("--scale", choices=SCALES, default="minmax",
                   help="scaling of numeric columns before distances (default minmax)")
    p.add_argument("--strata", type=column_list, default=[], metavar="S1,S2",
                   help="columns that neighbours must match exactly; they pass through unperturbed")
    p.add_argument("--categorical", type=column_list, default=[], metavar="C1,C2",
                   help="columns among --columns that use mismatch distance (adds weight^2 when values differ)")
    p.add_argument("--weight", type=float, default=1.0,
                   help="distance of a categorical mismatch, in scaled units (default 1)")
    p.add_argument("--on-missing", choices=ON_MISSING, default="error",
                   help="records with NULL/NaN/inf in a distance column: error (default) or drop them "
                        "from the output")
    p.add_argument("--threads", type=int, default=None, help=THREADS_HELP)
    p.add_argument("--memory-limit", default=None, metavar="SIZE", help=MEMORY_HELP)


def _ram_gb() -> str:
    try:
        return f", here {0.8 * os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 1e9:.1f} GB"
    except (AttributeError, ValueError, OSError):
        return ""


MEMORY_HELP = ("DuckDB memory limit such as 2GB (default: DuckDB's, 80%% of the machine's RAM" + _ram_gb() + "). "
               "Beyond it DuckDB spills intermediate results to this run's "
               "private temporary folder (beside the output, else in the system temporary folder; removed at "
               "exit); what cannot spill ends with an out-of-memory error (exit 2). Work whose neighbour pairs "
               "would not fit (perturb, neighborhoods, tune's listed neighbourhoods) is refused before it "
               "starts, with the estimate and a limit that would do")


MEMORY_HELP += "; from 1MiB to the physical memory, also as a share such as 50%%"


THREADS_HELP = "DuckDB worker threads (default: all cores; at most 4 per core or 64, whichever is more)"


EXIT_CODES = """exit codes:
  0    success
  1    audit: some personal group fails the privacy test or violates l-diversity, or a public
       column determines the sensitive attribute (unless --l-diversity 1)
  2    bad input or environment: unknown column, bad parameter, unreadable or malformed file,
       output exists (no --overwrite) or is an input, disk full, read-only folder, out of memory
  3    internal error (a bug: please report it)
  130  interrupted by SIGINT (Ctrl-C); 143 terminated by SIGTERM: nothing was written (a signal
       after the work has ended leaves the run's own code)
  141  standard output closed early (e.g. | head)"""


FORMATS = ("INPUT/OUTPUT: .csv, .tsv (tab-separated), .csv.gz/.tsv.gz (gzip), .parquet, or file.duckdb:table;\n"
           "other extensions are refused; an input file.duckdb:table must be a base table (not a view).\n"
           "Outputs appear whole or not at all.")


class _HelpFormatter(argparse.HelpFormatter):
    """Wraps descriptions as usual; keeps texts laid out in lines (the exit-code table) as written."""
    def _fill_text(self, text, width, indent):
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def _add_engine_options(parser, spark_note: str) -> None:
    parser.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb",
                        help=f"duckdb (default) or spark (pip install '.[spark]', Java 17; {spark_note})")
    parser.add_argument("--spark-master", default="local[*]", metavar="URL",
                        help="with --engine spark: the Spark master (default local[*])")
    parser.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                        help="with --engine spark: a Spark configuration setting (repeatable)")


def _add_perturb(sub) -> argparse.ArgumentParser:
    sp = sub.add_parser("perturb", help="write an RWN release of INPUT to OUTPUT",
                        description="Write an RWN release: every row of INPUT once, in an order drawn by the "
                                    "key (--keep-order keeps the input order); each cell of "
                                    "--columns replaced with probability q by the same column of a uniformly "
                                    "drawn neighbour (independently per column). Other columns pass through.")
    sp.add_argument("input", metavar="INPUT")
    sp.add_argument("output", metavar="OUTPUT")
    _add_rwn_options(sp, with_q=True)
    sp.add_argument("--drop", type=column_list, default=[], metavar="ID1,ID2",
                    help="columns left out of the release (for example direct identifiers)")
    _add_key_options(sp)
    sp.add_argument("--keep-order", action="store_true",
                    help="write the rows in input order (experiments only: a sorted input then leaks "
                         "through the row order)")
    _add_id_option(sp, "it passes through")
    sp.add_argument("--overwrite", action="store_true", help="replace OUTPUT if it exists")
    _add_engine_options(sp, "needs --id; OUTPUT a .parquet directory; no --scale zscore yet; the same release for "
                            "the same data, parameters, id and key")
    sp.add_argument("--show-sql", action="store_true",
                    help="print the SQL the run executes (the key shown as the session variable rwn_key)")
    return sp


def _add_neighborhoods(sub) -> argparse.ArgumentParser:
    sp = sub.add_parser("neighborhoods", help="print the neighbourhood-size and closest-record distributions",
                        description="Compute the exact RWN neighbourhoods of INPUT and print the distribution of "
                                    "their sizes and of each record's distance to its closest other record (DCR).")
    sp.add_argument("input", metavar="INPUT")
    _add_rwn_options(sp, with_q=False)
    sp.add_argument("--output", default=None, metavar="FILE",
                    help="also write per-record (record, size, radius, dcr) to a .csv/.parquet file")
    sp.add_argument("--overwrite", action="store_true", help="replace --output if it exists")
    _add_id_option(sp, "records are numbered by its rank")
    _add_engine_options(sp, "needs --id; --output a .parquet directory; the same neighbourhoods as on DuckDB")
    return sp


def _add_randomize(sub) -> argparse.ArgumentParser:
    sp = sub.add_parser("randomize", help="uniform perturbation of a sensitive attribute",
                        description="Write a release of INPUT where the --sensitive column keeps its value with "
                                    "probability p and otherwise takes a uniformly drawn domain value. The "
                                    "--public columns are released exactly; other columns are left out. The "
                                    "design (p, domain, enforcement, blocks) is recorded in a Parquet output's "
                                    "metadata or a file.duckdb:table output's COMMENT, where estimates read it; "
                                    "a CSV cannot carry it.")
    sp.add_argument("input", metavar="INPUT")
    sp.add_argument("output", metavar="OUTPUT")
    _add_rp_options(sp)
    _add_key_options(sp)
    sp.add_argument("--overwrite", action="store_true", help="replace OUTPUT if it exists")
    _add_engine_options(sp, "needs --id; OUTPUT a .parquet directory; the same release for the same data, "
                            "parameters, id and key")
    sp.add_argument("--show-sql", action="store_true",
                    help="print the SQL the run executes (the key shown as the session variable rwn_key)")
    return sp


def _add_audit(sub) -> argparse.ArgumentParser:
    sp = sub.add_parser("audit", help="(eps, delta)-reconstruction-privacy audit of every personal group",
                        description="Audit the ORIGINAL data: for every personal group (records sharing all public "
                                    "values) and every sensitive value in it, the Chernoff bounds and exact tail "
                                    "probabilities of micro reconstruction, and the verdict; per group its distinct "
                                    "and entropy l-diversity and the share of its most frequent value; then a "
                                    "summary: the groups that fail, those that violate l-diversity, and the public "
                                    "columns (and pairs) that determine the sensitive attribute (proxies).",
                        epilog="exit codes: 0 every group passes, 1 some group fails the test or violates\n"
                               "l-diversity, or a public column is a proxy (unless --l-diversity 1), 2 bad input\n"
                               "(see rwn-sql --help for all exit codes).")
    sp.add_argument("input", metavar="INPUT")
    _add_rp_options(sp, audit=True)
    sp.add_argument("--after-enforcement", action="store_true",
                    help="audit the groups as randomize --enforce splits them into blocks")
    sp.add_argument("--output", default=None, metavar="FILE",
                    help="write the per-group, per-value audit rows to a .csv/.parquet file")
    sp.add_argument("--groups-output", default=None, metavar="FILE",
                    help="write one row per personal group (size, trials, values present, worst Chernoff bound "
                         "and exact tail, verdict) to a .csv/.parquet file")
    sp.add_argument("--overwrite", action="store_true", help="replace --output / --groups-output if they exist")
    _add_engine_options(sp, "outputs .parquet directories; the same verdicts as on DuckDB")
    return sp


def _add_query(sub) -> argparse.ArgumentParser:
    from ..rp.release.release_limits import METADATA_LIMITS, QUERY_GRAMMAR, QUERY_LIMITS
    sp = sub.add_parser("query", help="answer a COUNT(*), SUM or AVG query on a release with reconstruction",
                        description="Rewrite a count (or SUM / AVG) query over a release database (made by 'rwn-sql "
                                    "release') into the unbiased reconstruction: per output row the released value, "
                                    "the estimate, its standard error and a 95% interval (AVG: a ratio of estimates, "
                                    "its error by the delta method, approximate). S" + QUERY_GRAMMAR[1:] + "; "
                                    + QUERY_LIMITS + ". The release file is untrusted input; limits on its metadata: "
                                    + METADATA_LIMITS + "; the query itself runs within --memory-limit.")
    sp.add_argument("release", metavar="RELEASE", help="a release database file (.duckdb); with --engine spark a "
                    "release folder")
    sp.add_argument("sql", metavar="SQL", help="the query (COUNT(*), SUM(x) or AVG(x))")
    sp.add_argument("--output", default=None, metavar="FILE", help="also write the answer to a .csv/.parquet file")
    sp.add_argument("--overwrite", action="store_true", help="replace --output if it exists")
    sp.add_argument("--show-sql", action="store_true", help="print the rewritten SQL")
    _add_engine_options(sp, "RELEASE a release folder written by release --engine spark; --output a .parquet "
                            "directory")
    return sp


def _add_release(sub) -> argparse.ArgumentParser:
    sp = sub.add_parser("release", help="write a standalone release database for analysts and BI tools",
                        description="Randomize the --sensitive column (optionally after RWN on --rwn-columns) and "
                                    "write a DuckDB database holding only the released table, the published "
                                    "parameters (rwn_release_metadata; never the key or raw data) and ready-made "
                                    "reconstruction views that a plain DuckDB can query.")
    sp.add_argument("input", metavar="INPUT")
    sp.add_argument("output", metavar="OUTPUT.duckdb")
    _add_rp_options(sp)
    _add_key_options(sp)
    sp.add_argument("--table", default=None, help="name of the released table (default: the input's name)")
    sp.add_argument("--rwn-columns", type=column_list, default=[], metavar="A,B",
                    help="also perturb these numeric columns with RWN before randomizing (they stay public)")
    sp.add_argument("--rwn-k", type=int, default=5, help="k of the RWN step (default 5)")
    sp.add_argument("--rwn-eps", type=float, default=0.0, help="eps of the RWN step (default 0)")
    sp.add_argument("--rwn-q", type=float, default=1.0, help="q of the RWN step (default 1)")
    sp.add_argument("--overwrite", action="store_true", help="replace OUTPUT if it exists")
    _add_engine_options(sp, "needs --id; OUTPUT a release FOLDER of Parquet files (table, metadata, trials); "
                            "no --rwn-columns yet")
    return sp


def _add_report(sub) -> argparse.ArgumentParser:
    from ..rp.release.release_limits import METADATA_LIMITS
    sp = sub.add_parser("report", help="write a self-contained HTML report of a release database",
                        description="Write one HTML page describing a release database (made by 'rwn-sql release') "
                                    "for the data steward and the analysts: the published parameters, an audit "
                                    "summary (personal groups; for an enforced release every block design's worst "
                                    "exact tail, recomputed), and per public column with a one-way view (at most "
                                    "100 values) the estimates by sensitive value with 95% intervals (normal "
                                    "approximation), as tables and plots. It reads the release only, never raw "
                                    "data; the page loads nothing from the network and runs no script. The release "
                                    "file is untrusted input; limits on its metadata: " + METADATA_LIMITS + ".")
    sp.add_argument("release", metavar="RELEASE", help="a release database file (.duckdb)")
    sp.add_argument("-o", "--output", required=True, metavar="REPORT.html", help="the HTML file to write")
    sp.add_argument("--overwrite", action="store_true", help="replace --output if it exists")
    return sp


def _add_calibrate(sub) -> argparse.ArgumentParser:
    sp = sub.add_parser("calibrate", help="the retention p allowed by a rho1-to-rho2 or local-DP budget",
                        description="The largest retention probability p of uniform perturbation (keep the value "
                                    "with probability p, else draw one of the m domain values uniformly, the kept "
                                    "value included) under rho1-to-rho2 privacy: p < (rho2 - rho1) / (rho2 - rho1 + "
                                    "m rho1 (1 - rho2)), strict, computed exactly; or under lambda-local differential "
                                    "privacy: p <= (e^lambda - 1) / (e^lambda - 1 + m). Prints the bound and the p "
                                    "to use (the bound rounded down to 6 decimals, below it when strict). Audit that "
                                    "p with 'rwn-sql audit': these budgets do not bound reconstruction.")
    sp.add_argument("--m", type=int, required=True, metavar="M",
                    help="the number of values of the sensitive attribute's published domain")
    budget = sp.add_mutually_exclusive_group(required=True)
    budget.add_argument("--rho", type=_rho_pair, metavar="RHO1,RHO2",
                        help="rho1-to-rho2 privacy: no property of prior probability at most RHO1 gets a posterior "
                             "above RHO2 (0 < RHO1 < RHO2 < 1)")
    budget.add_argument("--ldp", type=float, metavar="LAMBDA", help="lambda-local differential privacy (LAMBDA > 0)")
    sp.add_argument("--json", action="store_true", help="print the calibration as one JSON object")
    return sp


def _budget(text: str) -> dict:
    kind, _, value = text.partition(":")
    try:
        if kind == "rho":
            return {"rho": _rho_pair(value)}
        if kind == "ldp":
            return {"ldp": float(value)}
    except (argparse.ArgumentTypeError, ValueError):
        pass
    raise argparse.ArgumentTypeError(f"expected rho:RHO1,RHO2 or ldp:LAMBDA such as rho:0.2,0.8 or ldp:1.0; got {text!r}")


def _rho_pair(text: str):
    try:
        rho1, rho2 = (float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected RHO1,RHO2 such as 0.05,0.5; got {text!r}") from None
    return rho1, rho2


def _add_evaluate(sub) -> argparse.ArgumentParser:
    sp = sub.add_parser("evaluate", help="utility and disclosure-risk measures of RELEASED against ORIGINAL",
                        description="Compare a release with its original record by record: correlation, PCA, OLS "
                                    "and distribution measures of utility; distance to closest record, record "
                                    "linkage, SDID interval risk and survival of unique records. Records are paired "
                                    "by --id, by the release's key (--key-file or --seed: perturb's default keyed "
                                    "order recomputed), or by position for a release recorded as written with "
                                    "--keep-order (Parquet, DuckDB table) or declared so with --input-order (CSV); "
                                    "any other release is refused, since pairing it by position understates the "
                                    "risk.")
    sp.add_argument("original", metavar="ORIGINAL")
    sp.add_argument("released", metavar="RELEASED")
    sp.add_argument("--columns", required=True, type=column_list, metavar="A,B,C", help="columns to compare")
    sp.add_argument("--categorical", type=column_list, default=[], metavar="C1,C2",
                    help="columns among --columns compared as categories (total variation, multi-information)")
    sp.add_argument("--target", default=None, help="numeric column regressed (OLS) on the other numeric columns")
    sp.add_argument("--sdid-k", type=float, default=1.0,
                    help="SDID interval half-width in original standard deviations (default 1)")
    sp.add_argument("--id", default=None, metavar="COLUMN",
                    help="pair records by this id column in both (unique in each); original records without "
                         "a released record are left out and counted")
    pairing = sp.add_mutually_exclusive_group()
    pairing.add_argument("--key-file", metavar="F",
                         help="the key file of a release written in keyed order (perturb's default, without "
                              "--id): its order is recomputed and the records paired exactly; with "
                              "--on-missing drop, the original records with a missing value in --columns are "
                              "left out and counted")
    pairing.add_argument("--seed", type=int, default=None, help="as --key-file, for a release made with --seed")
    pairing.add_argument("--input-order", action="store_true",
                         help="RELEASED was written with --keep-order to a file that records no order (CSV): "
                              "pair by position (never for a keyed release: that understates the risk)")
    sp.add_argument("--keys", type=column_list, default=None, metavar="K1,K2",
                    help="key variables (quasi-identifiers), columns of RELEASED: also report their risk in the "
                         "release (k-anonymity violations, sample uniques, individual risk)")
    sp.add_argument("--weight", default=None, metavar="COLUMN",
                    help="with --keys: a column of sampling weights (>= 1) of RELEASED for the individual risk")
    sp.add_argument("--attacks", action="store_true",
                    help="also run Anonymeter's singling-out, linkability and inference attacks against the "
                         "release and against --control records: risk with a confidence interval")
    sp.add_argument("--control", default=None, metavar="SOURCE",
                    help="with --attacks: records of the same population held out of the release (table, "
                         "query, CSV/Parquet file)")
    sp.add_argument("--secret", default=None, metavar="COLUMN",
                    help="with --attacks: the column the inference attack guesses from the other --columns "
                         "(default: the last of --columns)")
    sp.add_argument("--attack-seed", type=int, default=None, metavar="N",
                    help="with --attacks: seed of the attacks' random draws (default: fresh ones each run)")
    sp.add_argument("--json", default=None, metavar="FILE", help="also write every measure to a JSON file")
    sp.add_argument("--overwrite", action="store_true", help="replace --json if it exists")
    return sp


def _add_tune(sub) -> argparse.ArgumentParser:
    sp = sub.add_parser("tune", help="sweep eps (and baselines) and write a CSV and an HTML report",
                        description="For each eps of a grid (k, q fixed): the neighbourhood-size distribution and "
                                    "the mean and spread of every utility and risk measure over --reps releases; "
                                    "optionally rank swapping and MDAV on the same measures. Writes "
                                    "OUTPUT_DIR/tune.csv and OUTPUT_DIR/report.html (plots need matplotlib: "
                                    "pip install \"rwn_sql[report]\").")
    sp.add_argument("input", metavar="INPUT")
    sp.add_argument("--columns", required=True, type=column_list, metavar="A,B,C",
                    help="distance and perturbed columns (as for perturb)")
    sp.add_argument("--eps", required=True, metavar="START:STOP:STEP",
                    help="eps grid, e.g. 0.2:1.2:0.05 (end included), or comma-separated values")
    sp.add_argument("--k", type=int, default=5, help="k for every setting (default 5)")
    sp.add_argument("--q", type=float, default=1.0, help="q for every setting (default 1)")
    sp.add_argument("--reps", type=int, default=20, help="releases per random setting (default 20)")
    sp.add_argument("--scale", choices=SCALES, default="minmax", help="scaling (default minmax)")
    sp.add_argument("--categorical", type=column_list, default=[], metavar="C1,C2",
                    help="columns among --columns with mismatch distance (rank swapping and MDAV leave them as "
                         "they are, and say so)")
    sp.add_argument("--strata", type=column_list, default=[], metavar="S1,S2",
                    help="columns that neighbours must match exactly; they pass through unperturbed (release r "
                         "of an eps is perturb --strata's with the key KEY#r); refused with --rank-swap or --mdav, "
                         "which cannot keep to strata")
    sp.add_argument("--target", default=None, help="numeric column for the OLS measures")
    sp.add_argument("--rank-swap", default=None, metavar="P1,P2 | START:STOP:STEP",
                    help="also rank swapping with these P (percent of n); the --reps releases of a P are "
                         "drawn in one statement, release r with the key KEY#r")
    sp.add_argument("--rank-swap-variant", choices=RANK_SWAP_VARIANTS, default="simple",
                    help="rank swapping's variant (as rank-swap --variant; sdcmicro is reported as method "
                         "rank_swap_sdcmicro; default simple)")
    sp.add_argument("--mdav", default=None, metavar="K1,K2 | START:STOP:STEP",
                    help="also MDAV microaggregation with these group sizes")
    sp.add_argument("--risk", default="sdid", metavar="MEASURE",
                    help="the report's risk axis: " + TUNE_RISK + " (default sdid)")
    sp.add_argument("--utility", default="corr_mad", metavar="MEASURE",
                    help="the report's utility axis: " + TUNE_UTILITY + " (default corr_mad; ols_* need --target)")
    sp.add_argument("--output-dir", default=".", metavar="DIR",
                    help="where tune.csv and report.html go, created if missing (default .); tune.csv is "
                         "rewritten after every setting, so a run that fails keeps the settings done")
    sp.add_argument("--no-report", action="store_true", help="write the CSV only (no matplotlib needed)")
    sp.add_argument("--progress", action="store_true",
                    help="progress lines on stderr even when it is not a terminal (on a terminal: always a bar)")
    _add_key_options(sp)
    return sp


# The measures tune's --risk and --utility choose among (rwn_sql.evaluation.tune.MEASURES, by
# kind; the parser does not import it, and tests/evaluation/test_tune.py checks that these are its names)
TUNE_RISK = "dcr_mean, linkage_rate, sdid, unique_survival, sdid_rwn_paper, rmdid or dcr_mean_raw"
TUNE_UTILITY = "corr_mad, pca_loading_mad, ks_max, ols_ci_overlap or ols_r2"
# rank swapping's variants (rwn_sql.evaluation.rank_swapping.RANK_SWAP_VARIANTS, not imported for
# the same reason; tests/evaluation/test_rank_swap_sdcmicro.py checks they are the same)
RANK_SWAP_VARIANTS = ("simple", "sdcmicro")


def _add_recommend_attacks(sp) -> None:
    """recommend's attack-risk targets and their control (rwn_sql.recommendation.rwn)."""
    for option, dest, what in (("--max-singling-out", "singling_out", "singling out"),
                               ("--max-linkability", "linkability", "linkability"),
                               ("--max-inference", "inference", "inference (of --secret)")):
        sp.add_argument(option, dest=f"target_{dest}", type=float, default=None, metavar="X",
                        help=f"RWN attack target: the {what} attack's risk at most X, by the upper end of its "
                             f"95%% confidence interval (needs --key-file or --seed)")
    sp.add_argument("--control", default=None, metavar="SOURCE",
                    help="RWN, attack targets: records of the same population held out of INPUT, the attacks' "
                         "control (default: --holdout)")
    sp.add_argument("--holdout", type=float, default=None, metavar="FRACTION",
                    help="RWN, attack targets: hold this share of INPUT out as the attacks' control, chosen by "
                         "the keyed hash (default 0.2); the printed command still releases every record")
    sp.add_argument("--secret", default=None, metavar="COLUMN",
                    help="RWN, --max-inference: the column the inference attack guesses (default: the last of "
                         "--columns)")
    sp.add_argument("--n-attacks", type=int, default=500, metavar="N",
                    help="RWN, attack targets: attacks (target records) per attack type (default 500, "
                         "Anonymeter's); more narrow the confidence intervals and take longer")


def _add_recommend(sub) -> argparse.ArgumentParser:
    sp = sub.add_parser("recommend", help="recommend a release setting that meets risk targets, with its command",
                        description="RWN (--columns): sweep every (k, eps, q) of the grids (--reps releases each, "
                                    "as tune does), keep the settings whose risks meet every target by the rule "
                                    "mean + --margin standard deviations of one release (mean - for --min-dcr), and "
                                    "recommend the one with the best --utility; with --key-file or --seed the release "
                                    "the printed command writes is evaluated too and must meet the targets itself. "
                                    "Attack targets (--max-singling-out, --max-linkability, --max-inference; need a "
                                    "key) are met by the upper end of the attack's confidence interval, measured for "
                                    "those settings, best first, on the release of the records not held out "
                                    "(--holdout, default 0.2, or --control). "
                                    "Prints the setting, the Pareto frontier and the exact 'rwn-sql perturb' command "
                                    "(the key by its file, never the key). Reconstruction privacy (--sensitive): the "
                                    "largest retention p meeting (--epsilon, --delta) and the 'rwn-sql release' "
                                    "command. When nothing meets the targets: exit 2, naming the nearest achievable "
                                    "targets.")
    sp.add_argument("input", metavar="INPUT")
    sp.add_argument("--method", choices=("rwn", "rp"), default=None,
                    help="rwn or rp (reconstruction privacy); default: rwn with --columns, rp with --sensitive")
    sp.add_argument("--columns", type=column_list, default=None, metavar="A,B,C",
                    help="RWN: distance and perturbed columns (as for perturb)")
    for name, default, what in (("k", "3,5,10", "k"), ("eps", "0,0.1,0.2,0.3", "eps"), ("q", "0.5,1", "q")):
        sp.add_argument(f"--{name}", default=default, metavar="V1,V2 | START:STOP:STEP",
                        help=f"RWN: the {what} grid (default {default})")
    for option, dest, what in (("--max-linkage", "linkage_rate", "at most this share of released records linked "
                                "to their own source by nearest neighbour (linkage_rate)"),
                               ("--max-sdid", "sdid", "at most this share of records within one sd interval of "
                                "their release (sdid)"),
                               ("--max-unique-survival", "unique_survival", "at most this share of the unique "
                                "records repeated by a released record (unique_survival)"),
                               ("--min-dcr", "dcr_mean", "at least this mean distance (scaled) to the closest "
                                "released record (dcr_mean)")):
        sp.add_argument(option, dest=f"target_{dest}", type=float, default=None, metavar="X",
                        help=f"RWN target: {what}")
    _add_recommend_attacks(sp)
    sp.add_argument("--utility", default="corr_mad", metavar="MEASURE",
                    help="RWN: the utility to optimise: corr_mad, pca_loading_mad, ks_max or ols_ci_overlap "
                         "(default corr_mad; ols_ci_overlap needs --target)")
    sp.add_argument("--target", default=None, help="RWN: numeric column for the OLS measures")
    sp.add_argument("--reps", type=int, default=10, help="RWN: releases per setting (default 10, at least 2)")
    sp.add_argument("--margin", type=float, default=2.0,
                    help="RWN: standard deviations of one release the mean must stay within a target by (default 2)")
    sp.add_argument("--scale", choices=SCALES, default="minmax", help="RWN: scaling (default minmax)")
    sp.add_argument("--categorical", type=column_list, default=[], metavar="C1,C2",
                    help="RWN: columns among --columns with mismatch distance")
    sp.add_argument("--strata", type=column_list, default=[], metavar="S1,S2",
                    help="RWN: columns that neighbours must match exactly; they pass through unperturbed")
    sp.add_argument("--output", default=None, metavar="OUTPUT",
                    help="the OUTPUT of the printed command (default release.parquet; for rp its release "
                         "database); nothing is written")
    sp.add_argument("--progress", action="store_true",
                    help="RWN: progress lines on stderr even when it is not a terminal (on a terminal: a bar)")
    sp.add_argument("--sensitive", default=None, help="reconstruction privacy: the sensitive attribute")
    sp.add_argument("--epsilon", type=float, default=None, help="reconstruction privacy: relative error eps")
    sp.add_argument("--delta", type=float, default=None, help="reconstruction privacy: tail probability delta")
    sp.add_argument("--public", type=column_list, default=None, metavar="A,B,C",
                    help="reconstruction privacy: public attributes (default: every other column)")
    sp.add_argument("--domain-file", default=None, metavar="F",
                    help="reconstruction privacy: the sensitive attribute's domain, one value per line")
    sp.add_argument("--p-from", type=_budget, default=None, metavar="rho:R1,R2|ldp:L",
                    help="reconstruction privacy: also bound p by rho1-to-rho2 privacy or lambda-local DP")
    sp.add_argument("--l-diversity", type=int, default=None, metavar="L",
                    help="reconstruction privacy: the audit's l-diversity rule (default 2; 1 turns it off)")
    sp.add_argument("--max-top-share", type=float, default=None, metavar="S",
                    help="reconstruction privacy: the audit's limit on a group's most frequent value")
    sp.add_argument("--enforce", action="store_true",
                    help="reconstruction privacy: also consider releases enforced with blocks (release --enforce "
                         "EPS,DELTA) and recommend, enforced or not, the p with the smallest standard error of "
                         "one-way counts")
    sp.add_argument("--json", action="store_true", help="print the recommendation as one JSON object")
    _add_key_options(sp)
    return sp


def _add_rank_swap(sub) -> argparse.ArgumentParser:
    sp = sub.add_parser("rank-swap", help="baseline: rank swapping of INPUT to OUTPUT",
                        description="Rank swapping (a baseline of the RWN paper): independently per column, values "
                                    "are swapped between records whose ranks differ by at most P percent of the records; "
                                    "--variant sdcmicro follows sdcMicro's rankSwap, which first replaces the top and "
                                    "bottom 5 percent of each column by their mean. Every row once, in input order; "
                                    "other columns unchanged.")
    sp.add_argument("input", metavar="INPUT")
    sp.add_argument("output", metavar="OUTPUT")
    sp.add_argument("--columns", required=True, type=column_list, metavar="A,B,C", help="columns to swap")
    sp.add_argument("--p", type=float, required=True,
                    help="largest rank distance of a swap, in percent of n (sdcmicro: of the swapped records; "
                         "sdcMicro's P = 0.12 is --p 12)")
    sp.add_argument("--variant", choices=RANK_SWAP_VARIANTS, default="simple",
                    help="simple (default): every value swapped within the window; sdcmicro: as sdcMicro's "
                         "rankSwap, the top and bottom percents of each column replaced by their mean (released "
                         "as DOUBLE) and the others swapped")
    sp.add_argument("--top-percent", type=float, default=None, metavar="T",
                    help="sdcmicro only: the largest T percent of each column replaced by their mean (default 5)")
    sp.add_argument("--bottom-percent", type=float, default=None, metavar="B",
                    help="sdcmicro only: the smallest B percent of each column replaced by their mean (default 5)")
    sp.add_argument("--reps", type=int, default=None, metavar="N",
                    help="experiments: N releases in one run, in a leading column replicate (0..N-1), each in "
                         "input order; release r equals the release with the key KEY#r")
    _add_key_options(sp)
    sp.add_argument("--overwrite", action="store_true", help="replace OUTPUT if it exists")
    return sp


def _add_mdav(sub) -> argparse.ArgumentParser:
    sp = sub.add_parser("mdav", help="baseline: MDAV microaggregation of INPUT to OUTPUT",
                        description="MDAV microaggregation (a baseline of the RWN paper): records are grouped by "
                                    "the MDAV algorithm into groups of k to 2k-1 and their --columns replaced by "
                                    "the group means (as DOUBLE). Other columns unchanged.")
    sp.add_argument("input", metavar="INPUT")
    sp.add_argument("output", metavar="OUTPUT")
    sp.add_argument("--columns", required=True, type=column_list, metavar="A,B,C", help="numeric columns")
    sp.add_argument("--k", type=int, required=True, help="minimum group size")
    sp.add_argument("--scale", choices=SCALES, default="minmax", help="scaling for distances (default minmax)")
    sp.add_argument("--overwrite", action="store_true", help="replace OUTPUT if it exists")
    return sp


@dataclass(frozen=True)
class Command:
    """One subcommand: what adds its parser, whether it reads CSV/TSV inputs (--na-values) and
    takes DuckDB's resources as options of its own (RWN's options carry them for the others),
    and example invocations for its --help (run from the repository's folder)."""
    name: str
    add: Callable
    reads_csv: bool
    resources: bool
    examples: tuple[str, ...]


ADULT, BODYFAT = "examples/data/adult.csv", "examples/data/bodyfat_clean.csv"
COMMAND_TABLE = (
    Command("perturb", _add_perturb, True, False, (
        f"rwn-sql perturb {BODYFAT} release.parquet --columns Age,Weight,Height --k 5 --eps 0.3 --key-file secret.key",
        f"rwn-sql perturb {ADULT} adult_rwn.parquet --columns age,hours_per_week,sex --categorical sex "
        "--strata race --key-file secret.key")),
    Command("neighborhoods", _add_neighborhoods, True, False, (
        f"rwn-sql neighborhoods {BODYFAT} --columns Age,Weight,Height --eps 0.3",)),
    Command("randomize", _add_randomize, True, True, (
        f"rwn-sql randomize {ADULT} adult_rp.parquet --sensitive occupation --p 0.5 --public sex,race "
        "--enforce 0.5,0.05 --key-file secret.key",)),
    Command("audit", _add_audit, True, True, (
        f"rwn-sql audit {ADULT} --sensitive occupation --p 0.5 --public sex,race,relationship "
        "--epsilon 0.5 --delta 0.05 --after-enforcement",)),
    Command("query", _add_query, False, True, (
        "rwn-sql query adult_release.duckdb \"SELECT sex, COUNT(*) FROM adult WHERE occupation = 'Sales' "
        "GROUP BY sex\"",)),
    Command("release", _add_release, True, True, (
        f"rwn-sql release {ADULT} adult_release.duckdb --sensitive occupation --p 0.5 --public sex,race,relationship "
        "--enforce 0.5,0.05 --key-file secret.key",)),
    Command("report", _add_report, False, False, (
        "rwn-sql report adult_release.duckdb -o adult_report.html",)),
    Command("calibrate", _add_calibrate, False, False, (
        "rwn-sql calibrate --m 15 --rho 0.2,0.8",
        "rwn-sql calibrate --m 15 --ldp 1.0 --json")),
    Command("evaluate", _add_evaluate, True, True, (
        f"rwn-sql evaluate {BODYFAT} release.parquet --columns Age,Weight,Height --key-file secret.key",)),
    Command("tune", _add_tune, True, True, (
        f"rwn-sql tune {BODYFAT} --columns Age,Weight,Height --eps 0.2:1.2:0.1 --reps 5",
        f"rwn-sql tune {BODYFAT} --columns Age,Weight,Height,Abdomen --eps 0.1,0.2,0.4,0.8 --reps 5 "
        "--rank-swap 10,30 --mdav 3,6 --risk linkage_rate --utility ks_max --output-dir tune_out --seed 1")),
    Command("recommend", _add_recommend, True, True, (
        f"rwn-sql recommend {BODYFAT} --columns Age,Weight,Height --max-linkage 0.1 --max-sdid 0.9 "
        "--key-file secret.key",
        f"rwn-sql recommend {ADULT} --sensitive occupation --public sex,race --epsilon 0.5 --delta 0.1")),
    Command("rank-swap", _add_rank_swap, True, True, (
        f"rwn-sql rank-swap {BODYFAT} swapped.csv --columns Age,Weight,Height --p 15 --key-file secret.key",
        f"rwn-sql rank-swap {BODYFAT} sdcmicro.csv --columns Age,Weight,Height --p 12 --variant sdcmicro "
        "--top-percent 5 --bottom-percent 5 --key-file secret.key")),
    Command("mdav", _add_mdav, True, True, (
        f"rwn-sql mdav {BODYFAT} mdav.csv --columns Age,Weight,Height --k 3",)),
)


def _examples(lines) -> str:
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rwn-sql",
        description="Statistical disclosure control in DuckDB: Randomization Within Neighborhoods (RWN).",
        epilog=FORMATS + "\n\n" + EXIT_CODES, formatter_class=_HelpFormatter)
    parser.add_argument("--version", action="version", version=f"rwn-sql {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMAND_TABLE:
        sp = command.add(sub)
        sp.formatter_class = _HelpFormatter
        sp.epilog = _examples(command.examples) + "\n\n" + (sp.epilog or EXIT_CODES)
        if command.reads_csv:
            sp.add_argument("--na-values", type=column_list, default=None, metavar="NA,N/A",
                            help="CSV/TSV inputs: cells equal to one of these (such as NA, R's missing value) read "
                                 "as NULL in every column, as empty cells do")
        if command.resources:
            sp.add_argument("--threads", type=int, default=None, help=THREADS_HELP)
            sp.add_argument("--memory-limit", default=None, metavar="SIZE", help=MEMORY_HELP)
    return parser


def _enforce_pair(text: str):
    try:
        eps, delta = (float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected EPS,DELTA such as 0.5,0.1; got {text!r}") from None
    return eps, delta


def _add_rp_options(p: argparse.ArgumentParser, audit: bool = False) -> None:
    p.add_argument("--sensitive", required=True, help="the sensitive attribute (one column)")
    retention = p.add_mutually_exclusive_group(required=True)
    retention.add_argument("--p", type=float, help="retention probability, in (0, 1)")
    retention.add_argument("--p-from", type=_budget, metavar="rho:R1,R2|ldp:L",
                           help="instead of --p: the largest p that rho1-to-rho2 privacy (rho:0.2,0.8) or lambda-local "
                                "differential privacy (ldp:1.0) allows for the domain's m values (the --domain-file's, "
                                "else the values present), as 'rwn-sql calibrate' computes it; logged, and recorded in "
                                "a release's metadata")
    p.add_argument("--public", type=column_list, default=None, metavar="A,B,C",
                   help="public attributes, released exactly (default: every other column)")
    p.add_argument("--domain-file", default=None, metavar="F",
                   help="the sensitive attribute's domain, one value per line, in a regular UTF-8 file of at most "
                        "4 MiB (default: the values in the data)")
    p.add_argument("--test", choices=("chernoff", "exact"), default="exact",
                   help="privacy test: exact (default; exact tail probabilities at every count, certifies) "
                        "or chernoff (the paper's screening bound; proves violations only, certifies nothing)")
    p.add_argument("--nulls", choices=("error", "drop"), default="error",
                   help="NULL sensitive values: error (default) or drop those records from the release")
    p.add_argument("--l-diversity", type=int, default=None, metavar="L",
                   help="attribute disclosure: personal groups of at least 2 records must hold at least L distinct "
                        "sensitive values, and no public column (or pair) may determine the sensitive attribute; "
                        "default 2 (" + ("the audit fails otherwise" if audit else "refused otherwise; with "
                        "randomize only under --enforce unless given") + "); 1 turns it off"
                        + ("" if audit else " (a release's metadata records it)"))
    p.add_argument("--max-top-share", type=float, default=None, metavar="S",
                   help="with that rule, personal groups of at least 2 records must not have one sensitive value in "
                        "more than a share S of their records (default: the better of p + (1-p)/m, what a record's "
                        "own released value gives, and the most frequent value's share of all records, so that a "
                        "majority vote within a group recovers no more than either); 1 turns this part off")
    if audit:
        p.add_argument("--epsilon", type=float, required=True, help="relative reconstruction error eps")
        p.add_argument("--delta", type=float, required=True, help="minimum tail probability delta, in (0, 1)")
    else:
        p.add_argument("--enforce", type=_enforce_pair, default=None, metavar="EPS,DELTA",
                       help="enforce (eps, delta)-reconstruction-privacy with the block mechanism")
        p.add_argument("--suppress-small", action="store_true",
                       help="with --enforce: leave out the records of personal groups that no design can "
                            "protect (reported; recorded in a release's metadata) instead of refusing the data")
        _add_id_option(p, "never released")


def _add_id_option(p: argparse.ArgumentParser, fate: str) -> None:
    p.add_argument("--id", default=None, metavar="COLUMN",
                   help="record id column (integer or text, unique, no NULL): the identity of every keyed "
                        f"draw and of the row order, so the release does not depend on the input order; "
                        f"{fate} (default: the input position)")


def _add_key_options(p: argparse.ArgumentParser) -> None:
    keys = p.add_mutually_exclusive_group()
    keys.add_argument("--key-file", metavar="F",
                      help="regular file holding the secret key: one line of 16 to 1024 characters, no control "
                           "characters, at most 4096 bytes; the same key reproduces the release")
    keys.add_argument("--seed", type=int, default=None,
                      help="integer seed, FOR EXPERIMENTS ONLY: anyone who knows it can redo the draws. "
                           "Without --key-file or --seed a fresh random key is used and never stored")


def _command_parsers(parser: argparse.ArgumentParser) -> dict:
    return next(a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def _check_options(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """A misspelled option is named by its command's parser (its usage, the closest option),
    before argparse would report a missing required option or print the top-level usage."""
    commands = _command_parsers(parser)
    position = next((i for i, a in enumerate(argv) if a in commands), None)
    if position is None:
        return
    command = commands[argv[position]]
    known = [o for o in command._option_string_actions if o.startswith("--")]
    for token in argv[position + 1:]:
        if token == "--":
            return
        if not token.startswith("--"):
            continue
        name = token.split("=", 1)[0]
        if name in known or sum(o.startswith(name) for o in known) == 1:
            continue
        close = difflib.get_close_matches(name, known, n=1)
        command.error(f"unrecognized option {name}" + (f" (did you mean {close[0]}?)" if close else "")
                      + f"; see rwn-sql {argv[position]} --help")


def parse_arguments(argv=None) -> argparse.Namespace:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    _check_options(parser, argv)
    return parser.parse_args(argv)
