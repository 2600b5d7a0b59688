"""The rwn-sql commands: one cmd_* function per command (COMMANDS maps the command names to
them), their shared helpers, and the lines they print and log."""
from __future__ import annotations

import contextlib
import json
import os
import sys
import time

from ..engines import duckdb as engine, duckdb_backend, files, outputs, sources
from ..errors import OutputExists, RWNError
from ..randomness import key_scope, resolve_key
from .session import OutputTarget, check_not_input, file_of, new_connection, open_connection, read_key


def _common(args) -> dict:
    return dict(k=args.k, eps=args.eps, scale=args.scale, strata=args.strata,
                categorical=args.categorical, weight=args.weight, on_missing=args.on_missing)


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
    out = OutputTarget.parse(args.output)
    check_not_input(args, out)
    key = read_key(args)
    order = "input" if args.keep_order else "keyed"
    with _session(args, out) as session:
        be = backend_for(session)
        the_key = resolve_key(key, args.seed)
        source = be.passthrough_source(args.input, args.output, [c for c in args.columns if c not in args.categorical])
        start = time.perf_counter()
        src, spec = _rwn_run(be, args, source, dict(q=args.q, drop=args.drop))
        pre = rwn.pre_passes(be, src, spec, "perturb")      # read once: shown and run
        if args.show_sql:
            print(rwn.script(be, src, spec, "perturb", order=order, pre=pre))
        log(f"rwn-sql perturb{_on(args)}: {args.input} -> {args.output}")
        log(f"  columns {', '.join(args.columns)}; k = {args.k}, eps = {args.eps}, q = {args.q}, "
            f"scale = {args.scale}" + (f", strata {', '.join(args.strata)}" if args.strata else ""))
        log("  key: " + ("from " + args.key_file if args.key_file else
                         f"seed {args.seed} (experiments only)" if args.seed is not None else
                         "fresh random key (not stored; the release cannot be reproduced)"))
        with key_scope(be, lasting=False):
            prepared = rwn.prepare(be, src, spec, "perturb", be.key_sql(the_key), order=order, pre=pre)
            rows = rwn.write(be, prepared, args.output, overwrite=args.overwrite)
        log(f"  wrote {rows} rows in {time.perf_counter() - start:.2f} s")
        _dropped_rows(be, args, rows)
    return 0


def _on(args) -> str:
    """How log lines name a run on an engine other than DuckDB (the one --engine chose)."""
    return f" ({args.engine}, {args.spark_master})" if args.engine != "duckdb" else ""


def _engine(args):
    """The Backend class of the engine --engine chose: its capability flags (engines.backend),
    known before the session opens."""
    if getattr(args, "engine", "duckdb") == "spark":
        from ..engines.spark import SparkBackend
        return SparkBackend
    return duckdb_backend.DuckDBBackend


def cmd_neighborhoods(args) -> int:
    from ..rwn import run as rwn
    from ..engines.backend import backend_for
    out = OutputTarget.parse(args.output) if args.output else None
    if out:
        check_not_input(args, out)
    with _session(args, out) as session:
        be = backend_for(session)
        start = time.perf_counter()
        src, spec = _rwn_run(be, args, args.input)
        hoods = rwn.stage(be, rwn.prepare(be, src, spec, "neighborhoods"))
        try:
            elapsed = time.perf_counter() - start
            summary = rwn.summary(be, hoods, args.k)
            print(f"rwn-sql neighborhoods{_on(args)}: {args.input}: {summary['records']} records, columns "
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
    # the domain file is read (bounded, checked) by rp.core.checks.read_domain_file
    return dict(public=args.public, domain=args.domain_file, nulls=args.nulls,
                l_diversity=args.l_diversity, max_top_share=args.max_top_share)


def _p(args, session):
    """--p, or the calibration.Calibration --p-from asks for, for the domain's m values."""
    if args.p_from is None:
        return args.p
    from ..rp.core.calibration import calibrate_p
    from ..rp.core.checks import domain_size
    m = domain_size(session, args.input, args.sensitive, args.domain_file, args.nulls)
    calibration = calibrate_p(m, **args.p_from)
    log(f"rwn-sql {args.command}: --p-from {calibration.describe()}")
    return calibration


def cmd_randomize(args) -> int:
    from ..rp import plan as rp_plan
    from ..rp.core.privacy import RPParams
    from ..engines.backend import backend_for
    out = OutputTarget.parse(args.output)
    check_not_input(args, out)
    key = read_key(args)
    opts = dict(_rp_opts(args), key=key, seed=args.seed, suppress_small=args.suppress_small, id_column=args.id)
    with _session(args, out) as session:
        params = RPParams(_p(args, session), args.enforce, args.test)
        be = backend_for(session)
        start = time.perf_counter()
        with key_scope(be, lasting=False):
            plan = rp_plan.plan_randomize(session, args.input, args.sensitive, params, **opts)
            if args.show_sql:
                print(be.engine_sql(plan.shown_sql))
            rows = be.write(plan.sql, args.output, overwrite=args.overwrite,
                            design=rp_plan.plan_design(plan))
    _log_suppressed(plan.suppressed_records, plan.suppressed_groups)
    if out.kind != "table" and out.format != "parquet":
        log(f"rwn-sql randomize: a CSV cannot record the design (p, domain, enforcement, blocks): estimates of "
            f"{args.output} need it given (write Parquet or file.duckdb:table to have it recorded)")
    log(f"rwn-sql randomize{_on(args)}: {args.input} -> {args.output}: {rows} rows, sensitive {args.sensitive!r}, "
        f"p = {params.p}" + (f", enforced (eps, delta) = {args.enforce} ({args.test} test)" if args.enforce else "")
        + f" in {time.perf_counter() - start:.2f} s")
    return 0


@contextlib.contextmanager
def _session(args, out: OutputTarget | None = None, near: str | None = None):
    """The engine session of a command: a DuckDB connection (for writing `out`, if given; else
    with its private folder in `near`), or with --engine spark a SparkSession (stopped at the end)."""
    if getattr(args, "engine", "duckdb") != "spark":
        yield open_connection(args, out) if out else new_connection(args, near)
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
    from ..rp.core.privacy import RPParams
    rows_out, groups_out = (OutputTarget.parse(o) if o else None for o in (args.output, args.groups_output))
    for out in (rows_out, groups_out):
        if out:
            check_not_input(args, out)
    with _session(args, rows_out, near=groups_out and groups_out.folder) as session:
        p = _p(args, session)
        params = RPParams(p, (args.epsilon, args.delta), args.test)     # as rp.audit checks them first
        result = rp.audit(session, args.input, args.sensitive, p, args.epsilon, args.delta,
                          enforce=args.after_enforcement, test=args.test, **_rp_opts(args))
        print(f"rwn-sql audit: {args.input}: sensitive {args.sensitive!r}, p = {params.p}, "
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
    if _engine(args).releases_to_database_file:
        if sources.file_format(args.release) is not None or sources.split_db_target(args.release):
            raise RWNError(f"RELEASE {args.release!r} is not a release database: give the .duckdb file made by "
                           f"'rwn-sql release'")
        if os.path.isdir(args.release):
            raise RWNError(f"RELEASE {args.release!r} is a folder, not a release database")
    out = OutputTarget.parse(args.output) if args.output else None
    if out:
        check_not_input(args, out)
        if out.real == file_of(args.release):
            raise RWNError(f"output {args.output!r} is the release; rwn-sql never modifies its input")
    with _session(args, out) as session:
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
    from ..rp.release.release_db import check_release_name
    out = OutputTarget.parse(args.output)
    check_not_input(args, out, whole_file=True)
    to_folder = not _engine(args).releases_to_database_file
    if out.kind in ("table", "data"):
        raise RWNError(f"OUTPUT {args.output!r}: a release is a whole database file such as release.duckdb"
                       + (" (with --engine spark a folder such as release/)" if to_folder else ""))
    if args.table:
        check_release_name(args.table)      # before the input is read
    if args.rwn_columns:
        outside = [c for c in args.rwn_columns
                   if c == args.sensitive or (args.public is not None and c not in args.public)]
        if outside:
            raise RWNError(f"--rwn-columns {', '.join(outside)} must be among the released public columns "
                           f"(--public); otherwise they would be perturbed and then dropped")
    key = read_key(args)
    rwn = None
    if args.rwn_columns:
        rwn = dict(columns=args.rwn_columns, k=args.rwn_k, eps=args.rwn_eps, q=args.rwn_q, scale="minmax")
    start = time.perf_counter()
    table = args.table or rp.release_table_name(args.input)
    with _session(args, out) as session:
        rows = rp.release(session, args.input, args.output, args.sensitive, _p(args, session), key=key, seed=args.seed,
                          enforce=args.enforce, table=table, overwrite=args.overwrite, rwn=rwn,
                          suppress_small=args.suppress_small, id=args.id, test=args.test, **_rp_opts(args))
    if to_folder:
        from ..rp.release.release_db import read_release_folder
        _log_suppressed(read_release_folder(args.output)[0].suppressed_records)
        log(f"rwn-sql release{_on(args)}: {args.input} -> {args.output}/: table "
            f"{table + '_randomized'!r} ({rows} rows) and its metadata as Parquet in "
            f"{time.perf_counter() - start:.2f} s")
        return 0
    with engine.connect(args.output, read_only=True) as written:     # the count the metadata records
        _log_suppressed(written.execute("SELECT suppressed_records FROM rwn_release_metadata").fetchall()[0][0])
    from ..rp.release.release_db import ROWS_SCHEMA
    log(f"rwn-sql release: {args.input} -> {args.output}: estimate views {table + '_cells'!r}, "
        f"{table + '_estimates'!r} and one-way ones, metadata; the randomized rows (not counts) as "
        f"{ROWS_SCHEMA}.{table}_randomized ({rows} rows); in {time.perf_counter() - start:.2f} s")
    return 0


def cmd_report(args) -> int:
    from ..rp.release.report import report
    log(f"rwn-sql report: {args.release} -> {report(args.release, args.output, overwrite=args.overwrite)}")
    return 0


def cmd_calibrate(args) -> int:
    from ..rp.core.calibration import calibrate_p
    calibration = calibrate_p(args.m, rho=args.rho, ldp=args.ldp)
    print(json.dumps(calibration.as_dict()) if args.json else calibration.describe())
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
    out = OutputTarget.parse(args.json) if args.json else None
    if out:
        check_not_input(args, out)
    if out and os.path.exists(args.json) and not args.overwrite:
        raise OutputExists(f"output file {args.json!r} already exists (use --overwrite to replace it)")
    con = new_connection(args, out and out.folder)
    ev = evaluate(con, args.original, args.released, args.columns, target=args.target,
                  categorical=args.categorical, sdid_k=args.sdid_k, id=args.id, key=read_key(args),
                  seed=args.seed, order="input" if args.input_order else None, keys=args.keys,
                  weight=args.weight, attacks=args.attacks, control=args.control, secret=args.secret,
                  attack_seed=args.attack_seed)
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
    print(f"  {f'SDID, RWN paper / sdcMicro dRisk (k = {args.sdid_k:g})':<44}{fmt(r.sdid_rwn_paper)}")
    print(f"  RMDID, RWN paper / sdcMicro dRiskRMD risk1  {fmt(r.rmdid)}")
    print(f"  mean distance to closest record (raw units) {fmt(r.dcr_mean_raw)}")
    print(f"  survival of unique records                  {fmt(r.unique_survival)}")
    if ev.key_risk is not None:
        _print_key_risk(ev.key_risk)
    if ev.attacks is not None:
        _print_attacks(ev.attacks)
    if args.json:
        _publish_file(args.json, args.overwrite, ev.to_json)
        print(f"wrote every measure to {args.json}")
    return 0


def _print_key_risk(kr) -> None:
    """The release's key-variable risk, under evaluate's risk measures (the audit prints it alike)."""
    print(kr.describe("the release"))


def _print_attacks(ar) -> None:
    """The attacks' risks (Anonymeter's design), under evaluate's risk measures."""
    print(f"attacks against {ar.control_rows} control records ({ar.control}; risk [95% CI], "
          f"success on original / control / random-guess baseline)")
    for name, res in (("singling out (multivariate)", ar.singling_out), ("linkability", ar.linkability),
                      (f"inference of {ar.secret}", ar.inference)):
        if res is None:
            print(f"  {name:<44}- (needs at least 2 columns)")
            continue
        print(f"  {name:<44}{res.risk:.4f} [{res.ci[0]:.4f}, {res.ci[1]:.4f}]; "
              f"{res.attack_rate:.3f} / {res.control_rate:.3f} / {res.baseline_rate:.3f} of {res.n_attacks}")


def _publish_file(target: str, overwrite: bool, write) -> None:
    """Have `write(path)` write a file in the run's private folder, then publish it whole."""
    with files.scratch_dir(files.output_folder(target)) as scratch:
        tmp = os.path.join(scratch, "out-" + os.path.basename(target))
        write(tmp)
        files.publish(tmp, target, overwrite)


def cmd_tune(args) -> int:
    from ..evaluation import tune, tune_report
    eps = tune.parse_grid(args.eps)          # grids, axes, key and outputs are checked before any work
    swaps = tune.parse_grid(args.rank_swap) if args.rank_swap else ()
    mdav = tune.parse_grid(args.mdav) if args.mdav else ()        # whole numbers: sweep checks them
    tune.check_axes(args.risk, args.utility, has_target=args.target is not None)
    csv_path, html_path = (os.path.join(args.output_dir, name) for name in ("tune.csv", "report.html"))
    for path in (csv_path, html_path):
        check_not_input(args, OutputTarget.parse(path), whole_file=True)      # whole files, replaced
    key = read_key(args)
    if os.path.exists(args.output_dir) and not os.path.isdir(args.output_dir):
        raise RWNError(f"--output-dir {args.output_dir!r} is a file, not a folder")
    os.makedirs(args.output_dir, exist_ok=True)
    con = new_connection(args, args.output_dir)
    tty = sys.stderr.isatty()
    if tty:     # our bar replaces DuckDB's, which would draw over it
        con.execute("SET enable_progress_bar = false").fetchall()
    saved = [0]      # the number of settings in tune.csv

    def save(result) -> None:
        """After every setting: tune.csv holds the settings done, so a later failure keeps them
        (published again each time: files.published names it once)."""
        _publish_file(csv_path, True, result.to_csv)
        saved[0] = len(result.settings)
    try:
        with tune.ProgressBar(sys.stderr, redraw=tty) as bar:
            result = tune.sweep(con, args.input, args.columns, eps, k=args.k, q=args.q, reps=args.reps,
                                scale=args.scale, target=args.target, categorical=args.categorical,
                                strata=args.strata, key=key, seed=args.seed, rank_swap=swaps, mdav=mdav,
                                progress=bar if tty or args.progress else None, on_setting=save,
                                rank_swap_variant=args.rank_swap_variant)
    except Exception:
        if saved[0]:
            stale = os.path.exists(html_path) and not args.no_report
            log(f"rwn-sql tune: stopped after {saved[0]} settings; {csv_path} holds them"
                + (f" ({html_path} is an earlier run's)" if stale else ""))
        raise
    for note in result.notes:
        log(f"rwn-sql tune: note: {note}")
    print(f"wrote {csv_path}")      # after every setting (save): a sweep has at least one
    if not args.no_report:
        _publish_file(html_path, True, lambda path: tune_report.report_html(result, path, utility=args.utility,
                                                                     risk=args.risk))
        print(f"wrote {html_path}")
    return 0


RWN_ONLY = ("columns", "target", "categorical", "strata", "control", "holdout", "secret")
RP_ONLY = ("sensitive", "epsilon", "delta", "public", "domain_file", "p_from", "l_diversity", "max_top_share",
           "enforce")


def cmd_recommend(args) -> int:
    """rwn-sql recommend: rwn_sql.recommendation.rwn (RWN) or rwn_sql.recommendation.rp (p)."""
    method = args.method or ("rp" if args.sensitive is not None else "rwn" if args.columns else None)
    if method is None:
        raise RWNError("give --columns (RWN: recommend k, eps and q) or --sensitive (reconstruction privacy: "
                       "recommend the retention p)")
    given = [o for o in (RP_ONLY if method == "rwn" else RWN_ONLY) if getattr(args, o) not in (None, [], False)]
    if given:
        raise RWNError(f"--{given[0].replace('_', '-')} is an option of the "
                       f"{'reconstruction-privacy' if method == 'rwn' else 'RWN'} recommendation, not of {method}'s")
    from ..recommendation import rwn as recommend
    if method == "rp":
        for option in ("epsilon", "delta"):
            if getattr(args, option) is None:
                raise RWNError(f"--{option} is required for the reconstruction-privacy recommendation")
        if args.seed is not None:
            raise RWNError("--seed: the release command reads its key from a file; give --key-file (the key is "
                           "not read here)")
        paths = {name: value for name, value in (("output", args.output), ("key_file", args.key_file)) if value}
        rec = recommend.recommend(new_connection(args), args.input, args.sensitive, args.epsilon, args.delta,
                                  method="rp", public=args.public, domain=args.domain_file,
                                  l_diversity=args.l_diversity, max_top_share=args.max_top_share,
                                  enforce=args.enforce, **(args.p_from or {}), **paths)
    else:
        rec = _recommend_rwn(args, new_connection(args), read_key(args), recommend)
    print(json.dumps(rec.to_dict(), indent=2, allow_nan=False) if args.json else rec.summary())
    return 0


def _recommend_rwn(args, con, key, recommend):
    from ..evaluation import tune
    if not args.columns:
        raise RWNError("--columns is required for the RWN recommendation")
    grids = {name: tune.parse_grid(getattr(args, name)) for name in ("k", "eps", "q")}
    targets = {name: getattr(args, f"target_{name}") for name in (*recommend.TARGETS, *recommend.ATTACK_TARGETS)
               if getattr(args, f"target_{name}") is not None}
    if not targets:
        raise RWNError("give at least one risk target: --max-linkage, --max-sdid, --max-unique-survival, --min-dcr, "
                       "--max-singling-out, --max-linkability or --max-inference")
    tty = sys.stderr.isatty()
    if tty:     # our bar replaces DuckDB's, which would draw over it
        con.execute("SET enable_progress_bar = false").fetchall()
    with tune.ProgressBar(sys.stderr, redraw=tty) as bar:
        rec = recommend.recommend_rwn(con, args.input, args.columns, targets, **grids, utility=args.utility,
                                      reps=args.reps, margin=args.margin, scale=args.scale,
                                      categorical=args.categorical, strata=args.strata, target=args.target,
                                      key=key, seed=args.seed, key_file=args.key_file,
                                      output=args.output or "release.parquet",
                                      progress=bar if tty or args.progress else None, control=args.control,
                                      holdout=args.holdout, secret=args.secret, n_attacks=args.n_attacks)
    if args.na_values:      # the command reads the input as this run did
        import dataclasses
        import shlex
        rec = dataclasses.replace(rec, command=f"{rec.command} --na-values {shlex.quote(','.join(args.na_values))}")
    return rec


def cmd_baseline(args) -> int:
    from ..evaluation import baselines
    out = OutputTarget.parse(args.output)
    check_not_input(args, out)
    key = read_key(args) if args.command == "rank-swap" else None
    con = open_connection(args, out)
    start = time.perf_counter()
    source = duckdb_backend.DuckDBBackend(con).passthrough_source(args.input, args.output, args.columns)
    if args.command == "rank-swap":
        sql = baselines.rank_swap_statement(con, source, args.columns, args.p, key=key, seed=args.seed,
                                            reps=args.reps, variant=args.variant, top_percent=args.top_percent,
                                            bottom_percent=args.bottom_percent)
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
            "calibrate": cmd_calibrate, "evaluate": cmd_evaluate,
            "tune": cmd_tune, "recommend": cmd_recommend, "rank-swap": cmd_baseline, "mdav": cmd_baseline}
