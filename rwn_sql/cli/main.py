"""rwn-sql: the command-line interface.

    rwn-sql perturb INPUT OUTPUT --columns a,b,c [--k 5] [--eps 0] [--q 1] ...
    rwn-sql neighborhoods INPUT --columns a,b,c [--k 5] [--eps 0] ...
    rwn-sql randomize INPUT OUTPUT --sensitive s --p 0.7 [--public a,b] [--enforce EPS,DELTA] ...
    rwn-sql audit INPUT --sensitive s --p 0.7 --epsilon 0.5 --delta 0.1 [--public a,b] [--test exact]
    rwn-sql release INPUT OUTPUT.duckdb --sensitive s --p 0.7 [--public a,b] [--enforce EPS,DELTA] ...
    rwn-sql query RELEASE.duckdb "SELECT sex, COUNT(*) FROM adult WHERE occupation = 'Sales' GROUP BY sex"
    rwn-sql report RELEASE.duckdb -o report.html
    rwn-sql evaluate ORIGINAL RELEASED --columns a,b,c [--id C | --key-file F | --seed N | --input-order] [--target a] [--json out.json]
    rwn-sql tune INPUT --columns a,b,c --eps 0.2:1.2:0.05 [--reps 20] [--rank-swap ...] [--mdav ...]
    rwn-sql rank-swap INPUT OUTPUT --columns a,b --p 15 [--key-file F | --seed N] [--reps N]
    rwn-sql mdav INPUT OUTPUT --columns a,b --k 5

INPUT and OUTPUT may be CSV, TSV, Parquet, or file.duckdb:table. Exit codes: see EXIT_CODES.
"""
from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import threading
import time

import duckdb

from ..engines import duckdb as engine, duckdb_backend, files, outputs, sources
from ..errors import RWNError, signal_report
from ..randomness import key_scope, read_key_file
from .parser import parse_arguments


_connections: list = []     # every connection of this run, for interrupting it on a signal


def _work_folder(args) -> str | None:
    """Where this run's private folder goes: the (first) output's folder, which holds the
    temporary outputs anyway, else the system temporary folder."""
    for name in ("output", "groups_output", "json", "output_dir"):
        target = getattr(args, name, None)
        if target:
            db = sources.split_db_target(target)
            folder = target if name == "output_dir" else os.path.dirname(os.path.abspath(db[0] if db else target))
            return folder if os.path.isdir(folder) else None
    return None


def max_threads() -> int:
    """The most --threads accepted: DuckDB starts every thread at once, and 100000 of them take
    minutes before any work (and the address space)."""
    return max(64, 4 * (os.cpu_count() or 1))


def check_threads(threads: int) -> int:
    if not 1 <= threads <= max_threads():
        raise RWNError(f"--threads must be between 1 and {max_threads()} (4 per core, at least 64), got {threads}")
    return threads


MIN_MEMORY_LIMIT = 1 << 20
_MEMORY_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]+|%)\s*")


def physical_memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_memory_limit(text: str) -> int:
    """The bytes of a --memory-limit such as 2GB, 512MiB or 50% (of physical memory), refused
    unless it is between 1 MiB and the physical memory: DuckDB takes 'none', '-1' or '1e9GB'
    as no limit at all."""
    m = _MEMORY_SIZE.fullmatch(text)
    unit = m.group(2).lower() if m else None
    if m is None or (unit != "%" and unit not in engine.MEMORY_UNITS):
        raise RWNError(f"--memory-limit {text!r}: expected a size such as 2GB, 512MiB or 50% (units: KB, MB, GB, "
                       f"TB, KiB, MiB, GiB, TiB, bytes)")
    number = float(m.group(1))
    size = int(number / 100 * physical_memory()) if unit == "%" else int(number * engine.MEMORY_UNITS[unit])
    if not MIN_MEMORY_LIMIT <= size <= physical_memory():
        raise RWNError(f"--memory-limit {text!r} is {size} bytes; it must be between 1 MiB and this machine's "
                       f"physical memory ({physical_memory()} bytes)")
    return size


def _connect(args) -> duckdb.DuckDBPyConnection:
    if args.threads is not None:       # refused before any folder or connection is made
        check_threads(args.threads)
    if args.memory_limit is not None:
        check_memory_limit(args.memory_limit)
    spill = os.path.join(files.private_dir(_work_folder(args)), "spill")
    # DuckDB would spill to ./.tmp in the working directory and leave it after a kill.
    con = duckdb.connect(config={"temp_directory": spill})
    _connections.append(con)
    if args.threads is not None:
        con.execute(f"SET threads = {check_threads(args.threads)}").fetchall()
    if args.memory_limit is not None:
        try:
            con.execute("SET memory_limit = ?", [args.memory_limit]).fetchall()
        except duckdb.Error as exc:
            raise RWNError(f"--memory-limit {args.memory_limit!r}: {exc}") from None
    if getattr(args, "na_values", None):
        sources.set_csv_null_strings(con, args.na_values)
    if sys.stderr.isatty():   # DuckDB's own progress bar for long statements
        con.execute("SET enable_progress_bar = true").fetchall()
    return con


def _common(args) -> dict:
    return dict(k=args.k, eps=args.eps, scale=args.scale, strata=args.strata,
                categorical=args.categorical, weight=args.weight, on_missing=args.on_missing)


def _file_of(target: str) -> str:
    db = sources.split_db_target(target)
    return os.path.realpath(db[0] if db else target)


def _check_not_input(args, output: str, whole_file: bool = False) -> None:
    """Refuse an output that is one of the run's input files (by real path, so through
    symlinks too), or the input's table. A new table in the input's database is allowed,
    except for outputs that replace a whole file (`whole_file`: release databases)."""
    if not whole_file and not sources.split_db_target(output) and not output.lower().endswith(".json"):
        outputs.output_format(output)      # an unknown extension fails before any work
    inputs = [getattr(args, n, None) for n in ("input", "original", "released", "key_file", "domain_file")]
    out_db = sources.split_db_target(output)
    for source in filter(None, inputs):
        if _file_of(source) != _file_of(output):
            continue
        in_db = sources.split_db_target(source)
        if out_db and in_db and not whole_file and out_db[1].lower() != in_db[1].lower():
            continue              # another table in the input's database: allowed
        raise RWNError(f"output {output!r} is the input {source!r} or its database; rwn-sql never "
                       f"modifies its input")


def _open(args) -> duckdb.DuckDBPyConnection:
    """The run's connection. An output table in the input's database needs that file attached
    once, read-write, since DuckDB refuses two handles on one file."""
    con = _connect(args)
    source = getattr(args, "input", None)
    out_db, in_db = sources.split_db_target(args.output), source and sources.split_db_target(source)
    if out_db and in_db and _file_of(args.output) == _file_of(args.input):
        sources.attach(con, in_db[0], read_only=False)
    return con


def _read_key(args) -> str | None:
    """The key of --key-file, under the key policy of randomness.check_key."""
    return read_key_file(args.key_file) if args.key_file else None


def _dropped_rows(be, args, written: int) -> None:
    """--on-missing drop: say how many records were left out."""
    if getattr(args, "on_missing", "error") == "drop":
        total = be.rows(f"SELECT count(*) FROM {be.source(args.input).sql}")[0][0]
        log(f"  dropped {total - written} of {total} rows with a missing value (NULL, NaN or inf) in "
            f"{', '.join(args.columns)}")


def _rwn_run(be, args, source, spec_params=None):
    """The checked source and spec of an RWN command (rwn_sql.rwn.run, as the Python API uses it)."""
    from ..rwn import run as rwn
    spec = rwn.spec(args.columns, **_common(args), **(spec_params or {}), id=args.id)
    return rwn.check_source(be, source, spec), spec


def cmd_perturb(args) -> int:
    from ..rwn import run as rwn
    from ..engines.backend import backend_for
    _check_not_input(args, args.output)
    key = _read_key(args)
    order = "input" if args.keep_order else "keyed"
    with _session(args) as session:
        be = backend_for(session)
        the_key = rwn.the_key(key, args.seed)
        source = be.passthrough_source(args.input, args.output, [c for c in args.columns if c not in args.categorical])
        start = time.perf_counter()
        src, spec = _rwn_run(be, args, source, dict(q=args.q, drop=args.drop))
        if args.show_sql:
            print(rwn.script(be, src, spec, "perturb", order=order))
        log(f"rwn-sql perturb{_on(be, args)}: {args.input} -> {args.output}")
        log(f"  columns {', '.join(args.columns)}; k = {args.k}, eps = {args.eps}, q = {args.q}, "
            f"scale = {args.scale}" + (f", strata {', '.join(args.strata)}" if args.strata else ""))
        log("  key: " + ("from " + args.key_file if args.key_file else
                         f"seed {args.seed} (experiments only)" if args.seed is not None else
                         "fresh random key (not stored; the release cannot be reproduced)"))
        with key_scope(be, lasting=False):
            prepared = rwn.prepare(be, src, spec, "perturb", be.key_sql(the_key), order=order)
            rows = rwn.write(be, prepared, args.output, overwrite=args.overwrite)
        log(f"  wrote {rows} rows in {time.perf_counter() - start:.2f} s")
        _dropped_rows(be, args, rows)
    return 0


def _on(be, args) -> str:
    """How log lines name a run on an engine other than DuckDB."""
    return f" ({be.name}, {args.spark_master})" if be.name != "duckdb" else ""


def cmd_neighborhoods(args) -> int:
    from ..rwn import run as rwn
    from ..engines.backend import backend_for
    if args.output:
        _check_not_input(args, args.output)
    with _session(args) as session:
        be = backend_for(session)
        start = time.perf_counter()
        src, spec = _rwn_run(be, args, args.input)
        hoods = rwn.stage(be, rwn.prepare(be, src, spec, "neighborhoods"))
        try:
            elapsed = time.perf_counter() - start
            summary = rwn.summary(be, hoods, args.k)
            print(f"rwn-sql neighborhoods{_on(be, args)}: {args.input}: {summary['records']} records, columns "
                  f"{', '.join(args.columns)}; k = {args.k}, eps = {args.eps}, scale = {args.scale} ({elapsed:.2f} s)")
            print(f"{'':24s}{'min':>10s}{'q25':>10s}{'median':>10s}{'mean':>10s}{'q75':>10s}{'max':>10s}")
            for label, c in [("neighbourhood size", "size"), ("radius max(eps, r_k)", "radius"),
                             ("closest record (DCR)", "dcr")]:
                print(f"{label:24s}" + "".join(f"{v:10.4g}" if v is not None else f"{'-':>10s}"
                                               for v in summary[c]))
            print(f"share of records with exactly k = {args.k} neighbours: {summary['share_at_k']:.3f}")
            if summary["share_empty"]:
                print(f"share with an empty neighbourhood (cells become NULL): {summary['share_empty']:.3f}")
            if args.output:
                be.write(f"SELECT * FROM {hoods} ORDER BY record", args.output, overwrite=args.overwrite)
                print(f"wrote per-record neighbourhoods to {args.output}")
        finally:
            be.drop(hoods)
    return 0


def _rp_opts(args) -> dict:
    # the domain file is read (bounded, checked) by rp_sql.read_domain_file
    return dict(public=args.public, domain=args.domain_file, test=args.test, nulls=args.nulls,
                l_diversity=args.l_diversity, max_top_share=args.max_top_share)


def cmd_randomize(args) -> int:
    from ..rp import plan as rp_plan
    from ..rp.privacy import RPParams
    from ..engines.backend import backend_for
    _check_not_input(args, args.output)
    key = _read_key(args)
    params = RPParams(args.p, args.enforce)
    opts = dict(_rp_opts(args), key=key, seed=args.seed, suppress_small=args.suppress_small, id_column=args.id)
    with _session(args) as session:
        be = backend_for(session)
        start = time.perf_counter()
        with key_scope(be, lasting=False):
            plan = rp_plan.plan_randomize(session, args.input, args.sensitive, params, **opts)
            if args.show_sql:
                print(be.engine_sql(plan.shown_sql))
            rows = be.write(plan.sql, args.output, overwrite=args.overwrite,
                            design=rp_plan.plan_design(plan, args.test))
    _log_suppressed(plan.suppressed_records, plan.suppressed_groups)
    if sources.split_db_target(args.output) is None and sources.file_format(args.output) != "parquet":
        log(f"rwn-sql randomize: a CSV cannot record the design (p, domain, enforcement, blocks): estimates of "
            f"{args.output} need it given (write Parquet or file.duckdb:table to have it recorded)")
    log(f"rwn-sql randomize{_on(be, args)}: {args.input} -> {args.output}: {rows} rows, sensitive {args.sensitive!r}, "
        f"p = {args.p}" + (f", enforced (eps, delta) = {args.enforce} ({args.test} test)" if args.enforce else "")
        + f" in {time.perf_counter() - start:.2f} s")
    return 0


@contextlib.contextmanager
def _session(args):
    """The engine session of a command: a DuckDB connection, or with --engine spark a
    SparkSession (stopped at the end)."""
    if getattr(args, "engine", "duckdb") != "spark":
        yield _open(args) if getattr(args, "output", None) else _connect(args)
        return
    from ..engines import spark as spark_engine
    for option, value in (("--threads", getattr(args, "threads", None)),
                          ("--memory-limit", getattr(args, "memory_limit", None))):
        if value is not None:
            raise RWNError(f"{option} sets DuckDB; with --engine spark use --spark-conf (e.g. spark.executor.memory=8g)")
    if getattr(args, "na_values", None):
        raise RWNError("--na-values applies to CSVs that DuckDB reads; with --engine spark give a Parquet input")
    spark = spark_engine.session(args.spark_master, args.spark_conf)
    try:
        yield spark
    finally:
        spark.stop()


def _log_suppressed(records: int, groups: int | None = None) -> None:
    if records:
        where = f" in {groups} personal groups" if groups is not None else " of personal groups"
        log(f"  suppressed: {records} records{where} without a design were left out")


def cmd_audit(args) -> int:
    from ..rp import api as rp
    for out in (args.output, args.groups_output):
        if out:
            _check_not_input(args, out)
    with _session(args) as session:
        result = rp.audit(session, args.input, args.sensitive, args.p, args.epsilon, args.delta,
                          enforce=args.after_enforcement, **_rp_opts(args))
        print(f"rwn-sql audit: {args.input}: sensitive {args.sensitive!r}, p = {args.p}, "
              f"(eps, delta) = ({args.epsilon}, {args.delta})")
        print(result.summary())
        worst = result.worst_failing(5)
        if worst:
            print("largest failing groups, each with its most exposed value:")
            for d in worst:
                group = ", ".join(f"{c}={d[c]}" for c in result.public)
                print(f"  {group}: {d['group_size']} records ({d['trials']} trials); {d['value']!r} "
                      f"f = {d['frequency']:.3f}: Chernoff U = {d['chernoff_upper']:.3g}, "
                      f"L = {d['chernoff_lower']:.3g}; exact {d['exact_upper']:.3g}, {d['exact_lower']:.3g}")
        if args.output:
            result.write_rows(args.output, overwrite=args.overwrite)
            print(f"wrote the audit rows to {args.output}")
        if args.groups_output:
            result.write_groups(args.groups_output, overwrite=args.overwrite)
            print(f"wrote the per-group verdicts to {args.groups_output}")
        failing = not result.ok
        result.close()
    return 1 if failing else 0


def cmd_query(args) -> int:
    from ..rp import api as rp
    from ..engines.backend import backend_for
    if args.engine != "spark":
        if sources.file_format(args.release) is not None or sources.split_db_target(args.release):
            raise RWNError(f"RELEASE {args.release!r} is not a release database: give the .duckdb file made by "
                           f"'rwn-sql release'")
        if os.path.isdir(args.release):
            raise RWNError(f"RELEASE {args.release!r} is a folder, not a release database")
    if args.output:
        _check_not_input(args, args.output)
        if _file_of(args.output) == _file_of(args.release):
            raise RWNError(f"output {args.output!r} is the release; rwn-sql never modifies its input")
    with _session(args) as session:
        be = backend_for(session)
        answer, rewritten = rp.query(session, args.sql, release=args.release)
        if args.show_sql:
            print(be.engine_sql(rewritten.sql))
        if rewritten.note:
            print(rewritten.note, file=sys.stderr)
        print_table(*be.fetch(answer))
        if args.output:
            be.write_relation(answer, args.output, overwrite=args.overwrite)
    return 0


def cmd_release(args) -> int:
    from ..rp import api as rp
    from ..rp.release_db import METADATA_TABLE, TRIALS_TABLE
    _check_not_input(args, args.output, whole_file=True)
    spark = args.engine == "spark"
    if sources.split_db_target(args.output) or sources.file_format(args.output):
        raise RWNError(f"OUTPUT {args.output!r}: a release is a whole database file such as release.duckdb"
                       + (" (with --engine spark a folder such as release/)" if spark else ""))
    if args.table and args.table.lower() in (METADATA_TABLE, TRIALS_TABLE):
        raise RWNError(f"--table {args.table!r} is reserved for the release's metadata; choose another name")
    if args.rwn_columns:
        outside = [c for c in args.rwn_columns
                   if c == args.sensitive or (args.public is not None and c not in args.public)]
        if outside:
            raise RWNError(f"--rwn-columns {', '.join(outside)} must be among the released public columns "
                           f"(--public); otherwise they would be perturbed and then dropped")
    key = _read_key(args)
    rwn = None
    if args.rwn_columns:
        rwn = dict(columns=args.rwn_columns, k=args.rwn_k, eps=args.rwn_eps, q=args.rwn_q, scale="minmax")
    start = time.perf_counter()
    table = args.table or rp.release_table_name(args.input)
    with _session(args) as session:
        rows = rp.release(session, args.input, args.output, args.sensitive, args.p, key=key, seed=args.seed,
                          enforce=args.enforce, table=table, overwrite=args.overwrite, rwn=rwn,
                          suppress_small=args.suppress_small, id=args.id, **_rp_opts(args))
    if spark:
        from ..rp.release_db import read_release_folder
        _log_suppressed(read_release_folder(args.output)[0].suppressed_records)
        log(f"rwn-sql release (spark, {args.spark_master}): {args.input} -> {args.output}/: table "
            f"{table + '_randomized'!r} ({rows} rows) and its metadata as Parquet in "
            f"{time.perf_counter() - start:.2f} s")
        return 0
    with duckdb.connect(args.output, read_only=True) as written:     # the count the metadata records
        _log_suppressed(written.execute("SELECT suppressed_records FROM rwn_release_metadata").fetchall()[0][0])
    from ..rp.release_db import ROWS_SCHEMA
    log(f"rwn-sql release: {args.input} -> {args.output}: estimate views {table + '_cells'!r}, "
        f"{table + '_estimates'!r} and one-way ones, metadata; the randomized rows (not counts) as "
        f"{ROWS_SCHEMA}.{table}_randomized ({rows} rows); in {time.perf_counter() - start:.2f} s")
    return 0


def cmd_report(args) -> int:
    from ..rp.report import report
    log(f"rwn-sql report: {args.release} -> {report(args.release, args.output, overwrite=args.overwrite)}")
    return 0


def print_table(columns, rows) -> None:
    """Rows as an aligned text table; floats with one decimal (counts and estimates)."""
    def cell(v):
        if isinstance(v, float):
            return f"{v:.1f}"
        return "NULL" if v is None else str(v)
    body = [[cell(v) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in body]) for i, c in enumerate(columns)]
    print("  ".join(c.rjust(w) for c, w in zip(columns, widths)))
    for r in body:
        print("  ".join(v.rjust(w) for v, w in zip(r, widths)))


def cmd_evaluate(args) -> int:
    from ..evaluation.evaluate import KEYED_ORDER, evaluate
    if args.json:
        _check_not_input(args, args.json)
    if args.json and os.path.exists(args.json) and not args.overwrite:
        raise RWNError(f"output file {args.json!r} already exists (use --overwrite to replace it)")
    con = _connect(args)
    ev = evaluate(con, args.original, args.released, args.columns, target=args.target,
                  categorical=args.categorical, sdid_k=args.sdid_k, id=args.id, key=_read_key(args),
                  seed=args.seed, order="input" if args.input_order else None)
    u, r = ev.utility, ev.risk
    fmt = lambda v: "-" if v is None else f"{v:.4f}"  # noqa: E731
    print(f"rwn-sql evaluate: {args.released} against {args.original}: {ev.rows} rows, columns {', '.join(ev.columns)}")
    how = ev.paired_by if ev.paired_by in ("position", KEYED_ORDER) else f"id column {ev.paired_by}"
    print(f"  paired by {how}" + (f"; {ev.dropped} original records not in the release" if ev.dropped else ""))
    print("utility")
    print(f"  correlation matrix, mean |difference|       {fmt(u.corr_mad)}")
    print(f"  PCA loadings (PC1, PC2), mean |difference|  {fmt(u.pca_loading_mad)}")
    if u.ks:
        print(f"  Kolmogorov-Smirnov D, largest               {fmt(max(u.ks.values()))}")
    if u.tv:
        print(f"  total variation, largest                    {fmt(max(u.tv.values()))}")
    if u.ols is not None:
        print(f"  OLS of {u.ols.target}: R^2 {fmt(u.ols.r2.original)} -> {fmt(u.ols.r2.released)}; "
              f"mean 95% CI overlap {fmt(u.ols.ci_overlap_mean)}")
    print("risk")
    print(f"  mean distance to closest record (scaled)    {fmt(r.dcr_mean)}")
    print(f"  record linkage rate                         {fmt(r.linkage_rate)}")
    print(f"  {f'SDID interval risk (k = {args.sdid_k:g})':<44}{fmt(r.sdid)}")
    print(f"  survival of unique records                  {fmt(r.unique_survival)}")
    if args.json:
        _publish_file(args.json, args.overwrite, ev.to_json)
        print(f"wrote every measure to {args.json}")
    return 0


def _publish_file(target: str, overwrite: bool, write) -> None:
    """Have `write(path)` write a file in the run's private folder, then publish it whole."""
    with files.scratch_dir(files.output_folder(target)) as scratch:
        tmp = os.path.join(scratch, "out-" + os.path.basename(target))
        write(tmp)
        files.publish(tmp, target, overwrite)


def cmd_tune(args) -> int:
    from ..evaluation import tune
    if not os.path.isdir(args.output_dir):
        raise RWNError(f"output folder {args.output_dir!r} does not exist")
    eps = tune.parse_grid(args.eps)          # grids are checked before any work
    swaps = tune.parse_grid(args.rank_swap) if args.rank_swap else ()
    mdav = [int(v) for v in tune.parse_grid(args.mdav)] if args.mdav else ()
    con = _connect(args)
    tty = sys.stderr.isatty()
    if tty:     # our bar replaces DuckDB's, which would draw over it
        con.execute("SET enable_progress_bar = false").fetchall()
    with tune.ProgressBar(sys.stderr, redraw=tty) as bar:
        result = tune.sweep(con, args.input, args.columns, eps, k=args.k, q=args.q, reps=args.reps, scale=args.scale,
                            target=args.target, categorical=args.categorical, seed=args.seed, rank_swap=swaps,
                            mdav=mdav, progress=bar if tty or args.progress else None)
    csv_path = os.path.join(args.output_dir, "tune.csv")
    _publish_file(csv_path, True, result.to_csv)
    print(f"wrote {csv_path}")
    if not args.no_report:
        html_path = os.path.join(args.output_dir, "report.html")
        _publish_file(html_path, True, lambda path: tune.report_html(result, path))
        print(f"wrote {html_path}")
    return 0


def cmd_baseline(args) -> int:
    from ..evaluation import baselines
    _check_not_input(args, args.output)
    key = _read_key(args) if args.command == "rank-swap" else None
    con = _open(args)
    start = time.perf_counter()
    source = duckdb_backend.DuckDBBackend(con).passthrough_source(args.input, args.output, args.columns)
    if args.command == "rank-swap":
        sql = baselines.rank_swap_statement(con, source, args.columns, args.p, key=key, seed=args.seed,
                                            reps=args.reps)
    else:
        sql = baselines.mdav_statement(con, source, args.columns, args.k, scale=args.scale)
    # both baselines write in input order (replicates too, each in input order)
    rows = outputs.write_output(con, sql, args.output, overwrite=args.overwrite, row_order="input")
    log(f"rwn-sql {args.command}: {args.input} -> {args.output}: {rows} rows in {time.perf_counter() - start:.2f} s")
    return 0


def log(message: str) -> None:
    print(message, file=sys.stderr)


COMMANDS = {"perturb": cmd_perturb, "neighborhoods": cmd_neighborhoods, "randomize": cmd_randomize,
            "audit": cmd_audit, "query": cmd_query, "release": cmd_release, "report": cmd_report,
            "evaluate": cmd_evaluate,
            "tune": cmd_tune, "rank-swap": cmd_baseline, "mdav": cmd_baseline}
SIGNAL_MESSAGES = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}
ABORT_WAIT = 1.2      # seconds a cancelled DuckDB statement gets to return before the process leaves
WRAP_UP_WAIT = 5.0    # seconds a run that has published gets to close up on its own after a signal
SIGNAL_POLL = 0.05    # seconds between the main thread's looks at the signals received


def _attempt(args) -> dict:
    try:
        return {"code": COMMANDS[args.command](args)}
    except BaseException as exc:      # reported by _finish, in the main thread
        return {"error": exc}


def _finish(outcome: dict) -> int:
    """The exit code of a finished run; errors as one line on stderr (see EXIT_CODES)."""
    if "code" in outcome:
        return outcome["code"]
    exc = outcome["error"]
    if isinstance(exc, BrokenPipeError):
        _silence_stdout()
        return 141
    if isinstance(exc, (KeyboardInterrupt, duckdb.InterruptException)):
        log("rwn-sql: interrupted; nothing was written")
        return 130
    debug = bool(os.environ.get("RWN_SQL_DEBUG"))
    if isinstance(exc, RWNError):
        message = str(exc)
    elif isinstance(exc, MemoryError):
        message = "out of memory"
    elif isinstance(exc, (duckdb.Error, OSError)):
        message = engine.describe_error(exc)
    elif isinstance(exc, (ValueError, TypeError)) and not debug:   # parameter checks outside RWNError
        message = str(exc)
    else:
        if debug:
            raise exc
        log(f"rwn-sql: internal error: {type(exc).__name__}: {exc} (please report it; RWN_SQL_DEBUG=1 shows "
            f"a traceback)")
        return 3
    log(f"rwn-sql: error: {' '.join(message.split())}")
    return 2


def _silence_stdout() -> None:
    """stdout's reader is gone: point it at /dev/null so the final flush raises nothing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _abort(signum: int, finished: threading.Event, outcome: dict) -> None:
    """Leave within ~1.5 s of a signal: cancel DuckDB, remove this run's temporary files and
    exit; unless the work ends on its own within that wait, whose exit code then stands. A run
    that has published its output is not cancelled: it gets WRAP_UP_WAIT to close up and keep
    its exit code, so that its output is never left behind an exit of 130 or 143. os._exit does not wait for a DuckDB thread that ignores the cancel (it can hang in
    a recursive CTE); the writes it was making were never committed or published. The wait is
    on an event the worker sets, not Thread.join: a join that the signal interrupted marks the
    thread as stopped, and later joins return at once, before an output being published is
    recorded (the message would say nothing was written)."""
    for s in SIGNAL_MESSAGES:
        signal.signal(s, signal.SIG_IGN)
    files.cancel()           # done by the handler already; again in case it came before it
    if not finished.is_set():
        if files.published:
            # An output is out: what the work has left is closing up (a detach, dropping its
            # keys, or tune's report, whose publish the cancel refuses). Interrupting that would
            # end the run with 130 and its output in place; it gets time to end on its own.
            finished.wait(WRAP_UP_WAIT)
        else:
            for con in list(_connections):
                try:
                    con.interrupt()
                except Exception:     # a closed connection: nothing to cancel
                    pass
            finished.wait(ABORT_WAIT)
    if finished.is_set() and "code" in outcome:
        # The work ended on its own: nothing is published after files.cancel(), so every output
        # it lists was complete before the signal, and the run keeps its own exit code. An output
        # therefore exists after a signal only when the run exits as if there had been none.
        if files.published:
            log(f"rwn-sql: {SIGNAL_MESSAGES[signum]} after the run had finished; written whole: "
                f"{', '.join(files.published)}")
        return
    files.remove_private_dirs(ending=True)
    try:
        log(signal_report(SIGNAL_MESSAGES[signum], files.published))
        sys.stderr.flush()
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    os._exit(128 + signum)


work_ended = False    # the work ended on its own: a signal from here on leaves its exit code alone


def main(argv=None) -> int:
    global work_ended
    work_ended = False
    args = parse_arguments(argv)
    files.published.clear()      # kept after the run: a signal after it returns reports them (__main__)
    try:
        if threading.current_thread() is not threading.main_thread():
            return _finish(_attempt(args))       # signal handlers need the main thread
        outcome: dict = {}
        finished = threading.Event()

        def work() -> None:
            # Signals go to the main thread (this one's mask is inherited by DuckDB's threads),
            # whose wait they interrupt: its handler stops publishing at once.
            if hasattr(signal, "pthread_sigmask"):
                signal.pthread_sigmask(signal.SIG_BLOCK, set(SIGNAL_MESSAGES))
            outcome.update(_attempt(args))
            finished.set()

        worker = threading.Thread(target=work, name="rwn-sql", daemon=True)
        # The handlers record the signal and cancel publishing at once (files.cancel), and
        # raise nothing: an exception raised from a handler inside Event.wait can leave its
        # lock released and surface as a RuntimeError instead.
        received: list[int] = []

        def on_signal(signum, frame) -> None:
            files.cancel()
            received.append(signum)

        previous = {s: signal.signal(s, on_signal) for s in SIGNAL_MESSAGES}
        worker.start()
        while not finished.wait(SIGNAL_POLL) and not received:
            pass
        work_ended = finished.is_set() and "code" in outcome     # read by __main__'s handlers from here on
        for s, handler in previous.items():
            signal.signal(s, handler)
        if received:              # also one that came as the work finished: it is reported as such
            _abort(received[0], finished, outcome)
        code = _finish(outcome)
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _silence_stdout()
            return 141
        return code
    finally:
        files.remove_private_dirs()
        _connections.clear()


if __name__ == "__main__":
    sys.exit(main())
