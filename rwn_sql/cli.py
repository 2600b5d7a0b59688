"""rwn-sql: the command-line interface.

    rwn-sql perturb INPUT OUTPUT --columns a,b,c [--k 5] [--eps 0] [--q 1] ...
    rwn-sql neighborhoods INPUT --columns a,b,c [--k 5] [--eps 0] ...

INPUT and OUTPUT may be CSV, Parquet, or file.duckdb:table.
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
import time

import duckdb

from . import __version__, api, engine
from .errors import RWNError
from .randomness import read_key_file
from .spec import ON_MISSING, SCALES


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
    p.add_argument("--threads", type=int, default=None, help="DuckDB worker threads (default: all cores)")
    p.add_argument("--memory-limit", default=None, metavar="SIZE",
                   help="DuckDB memory limit such as 2GB (DuckDB spills to disk beyond it)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rwn-sql",
        description="Statistical disclosure control in DuckDB: Randomization Within Neighborhoods (RWN).",
        epilog="INPUT/OUTPUT: a .csv, .tsv or .parquet file, or file.duckdb:table.")
    parser.add_argument("--version", action="version", version=f"rwn-sql {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("perturb", help="write an RWN release of INPUT to OUTPUT",
                       description="Write an RWN release: every row of INPUT once, in order; each cell of "
                                   "--columns replaced with probability q by the same column of a uniformly "
                                   "drawn neighbour (independently per column). Other columns pass through.")
    p.add_argument("input", metavar="INPUT")
    p.add_argument("output", metavar="OUTPUT")
    _add_rwn_options(p, with_q=True)
    p.add_argument("--drop", type=column_list, default=[], metavar="ID1,ID2",
                   help="columns left out of the release (for example direct identifiers)")
    keys = p.add_mutually_exclusive_group()
    keys.add_argument("--key-file", metavar="F",
                      help="file holding the secret key (>= 16 characters): the same key reproduces the release")
    keys.add_argument("--seed", type=int, default=None,
                      help="integer seed, FOR EXPERIMENTS ONLY: anyone who knows it can redo the draws. "
                           "Without --key-file or --seed a fresh random key is used and never stored")
    p.add_argument("--overwrite", action="store_true", help="replace OUTPUT if it exists")
    p.add_argument("--show-sql", action="store_true",
                   help="print the SQL the run executes (the key shown as getvariable('rwn_key'))")

    n = sub.add_parser("neighborhoods", help="print the neighbourhood-size and closest-record distributions",
                       description="Compute the exact RWN neighbourhoods of INPUT and print the distribution of "
                                   "their sizes and of each record's distance to its closest other record (DCR).")
    n.add_argument("input", metavar="INPUT")
    _add_rwn_options(n, with_q=False)
    n.add_argument("--output", default=None, metavar="FILE",
                   help="also write per-record (record, size, radius, dcr) to a .csv/.parquet file")
    n.add_argument("--overwrite", action="store_true", help="replace --output if it exists")
    return parser


def _connect(args) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    if args.threads is not None:
        if args.threads < 1:
            raise RWNError(f"--threads must be >= 1, got {args.threads}")
        con.execute(f"SET threads = {int(args.threads)}").fetchall()
    if args.memory_limit is not None:
        try:
            con.execute("SET memory_limit = ?", [args.memory_limit]).fetchall()
        except duckdb.Error as exc:
            raise RWNError(f"--memory-limit {args.memory_limit!r}: {exc}") from None
    if sys.stderr.isatty():   # DuckDB's own progress bar for long statements
        con.execute("SET enable_progress_bar = true").fetchall()
    return con


def _common(args) -> dict:
    return dict(k=args.k, eps=args.eps, scale=args.scale, strata=args.strata,
                categorical=args.categorical, weight=args.weight, on_missing=args.on_missing)


def _same_target(a: str, b: str) -> bool:
    da, db = engine.split_db_target(a), engine.split_db_target(b)
    if da and db:
        return os.path.abspath(da[0]) == os.path.abspath(db[0]) and da[1] == db[1]
    return os.path.abspath(a) == os.path.abspath(b)


def cmd_perturb(args) -> int:
    if _same_target(args.input, args.output):
        raise RWNError("OUTPUT is the same as INPUT; rwn-sql never modifies its input")
    key = read_key_file(args.key_file) if args.key_file else None
    con = _connect(args)
    opts = dict(_common(args), q=args.q, drop=args.drop, key=key, seed=args.seed)
    if args.show_sql:
        print(api.perturb_statement(con, args.input, args.columns, show=True, **opts))
    log(f"rwn-sql perturb: {args.input} -> {args.output}")
    log(f"  columns {', '.join(args.columns)}; k = {args.k}, eps = {args.eps}, q = {args.q}, "
        f"scale = {args.scale}" + (f", strata {', '.join(args.strata)}" if args.strata else ""))
    log("  key: " + ("from " + args.key_file if args.key_file else
                     f"seed {args.seed} (experiments only)" if args.seed is not None else
                     "fresh random key (not stored; the release cannot be reproduced)"))
    start = time.perf_counter()
    sql = api.perturb_statement(con, args.input, args.columns, **opts)
    rows = engine.write_output(con, sql, args.output, overwrite=args.overwrite)
    log(f"  wrote {rows} rows in {time.perf_counter() - start:.2f} s")
    return 0


def cmd_neighborhoods(args) -> int:
    con = _connect(args)
    start = time.perf_counter()
    rel = api.neighborhoods(con, args.input, args.columns, **_common(args))
    con.execute(f"CREATE TEMP TABLE hoods AS {rel.sql_query()}").fetchall()
    elapsed = time.perf_counter() - start
    n, k = engine.run(con, "SELECT count(*) FROM hoods")[0][0], args.k
    print(f"rwn-sql neighborhoods: {args.input}: {n} records, columns {', '.join(args.columns)}; "
          f"k = {k}, eps = {args.eps}, scale = {args.scale} ({elapsed:.2f} s)")
    q = "SELECT min({c}), quantile_cont({c}, 0.25), median({c}), avg({c}), quantile_cont({c}, 0.75), max({c}) FROM hoods"
    print(f"{'':24s}{'min':>10s}{'q25':>10s}{'median':>10s}{'mean':>10s}{'q75':>10s}{'max':>10s}")
    for label, c in [("neighbourhood size", "size"), ("radius max(eps, r_k)", "radius"),
                     ("closest record (DCR)", "dcr")]:
        vals = engine.run(con, q.format(c=c))[0]
        print(f"{label:24s}" + "".join(f"{v:10.4g}" if v is not None else f"{'-':>10s}" for v in vals))
    at_k = engine.run(con, f"SELECT avg((size = {k})::INT), avg((size = 0)::INT) FROM hoods")[0]
    print(f"share of records with exactly k = {k} neighbours: {at_k[0]:.3f}")
    if at_k[1]:
        print(f"share with an empty neighbourhood (cells become NULL): {at_k[1]:.3f}")
    if args.output:
        engine.write_output(con, "SELECT * FROM hoods ORDER BY record", args.output, overwrite=args.overwrite)
        print(f"wrote per-record neighbourhoods to {args.output}")
    return 0


def log(message: str) -> None:
    print(message, file=sys.stderr)


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return {"perturb": cmd_perturb, "neighborhoods": cmd_neighborhoods}[args.command](args)
    except RWNError as exc:
        print(f"rwn-sql: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rwn-sql: interrupted; nothing was written", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
