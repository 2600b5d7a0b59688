"""Benchmark: evaluation and tuning (issue 13, part 3), new code against the old in one process.

Three workloads, each timed with this package and, unless --skip-old, with the evaluation code
as it was before the k-d tree (rwn_sql/evaluate.py of commit OLD_COMMIT, loaded from git):

  evaluate  rwn_sql.evaluate on 100,000 rows x 13 columns, two data sets: "gaussian", 12
            independent standard normal columns (the worst case for a k-d tree) and a 5-level
            category, released = original + normal noise (sd 0.05) with 5% of the categories
            redrawn; "adult", adult.csv resampled to 100,000 rows (6 numeric columns jittered
            by 1% of their sd, 7 categorical), released the same way. Both also check that
            old and new give the same measures.
  paper     a tune.sweep on bodyfat (241 x 14; the grids examples/paper_reproduction.py once used): RWN eps 0.25:0.95:0.05,
            rank swapping P 12:54:6, MDAV k 2..16, 100 releases per random setting (2,315
            evaluations), plus the HTML report; time per part, with its CPU time and the time
            inside the evaluation (the rest: the releases' SQL). Then a check: the batched
            sweep against one release statement and one evaluate() per release (the sweep
            before the batching) on part of the grid with 3 releases per setting.
  tune28k   `rwn-sql tune`'s sweep on the first 28,000 rows of adult.csv, columns age,
            education_num, hours_per_week, fnlwgt and sex (categorical), eps 0.05 and 0.1
            (mean neighbourhoods 56 and 409), 2 releases each; time in evaluation apart.

Targets: evaluate under 5 s, paper and tune28k under 10 s each, on 2 cores.

    python benchmarks/bench_tune.py [--threads 2] [--skip-old] [--only evaluate,paper,tune28k]
"""
from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

import rwn_sql
import rwn_sql.randomness
from machine import cpu_name, peak_rss_mb
from rwn_sql.evaluation import tune, tune_report

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "examples" / "data"
OLD_COMMIT = "80f74b6"          # the last commit with the blocked numpy search
ROWS = 100_000


def old_evaluate_module():
    """rwn_sql/evaluate.py as of OLD_COMMIT, imported as a module of the rwn_sql package."""
    text = subprocess.run(["git", "-C", str(ROOT), "show", f"{OLD_COMMIT}:rwn_sql/evaluate.py"],
                          capture_output=True, text=True, check=True).stdout
    # Its imports named the flat layout of that time; engine.py is now the DuckDB modules of
    # rwn_sql/engines, stood in for by one module holding all their names.
    import types
    from rwn_sql.engines import duckdb, duckdb_backend, files, outputs, sources
    engine = types.ModuleType("rwn_sql.engine")
    for part in (duckdb, sources, outputs, files, duckdb_backend):
        engine.__dict__.update({k: v for k, v in vars(part).items() if not k.startswith("__")})
    sys.modules["rwn_sql.engine"] = engine
    spec = importlib.util.spec_from_loader("rwn_sql._evaluate_before", loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "rwn_sql"
    sys.modules[spec.name] = module            # dataclasses look their module up there
    exec(compile(text, f"{OLD_COMMIT}:rwn_sql/evaluate.py", "exec"), module.__dict__)
    return module


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def same_measures(a, b) -> bool:
    """Risk measures identical, utility within 1e-9 (the t quantile moved from bisection to scipy)."""
    da, db = a.to_dict(), b.to_dict()
    if da["risk"] != db["risk"]:
        return False

    def close(x, y):
        if isinstance(x, dict):
            return x.keys() == y.keys() and all(close(x[k], y[k]) for k in x)
        if isinstance(x, list):
            return len(x) == len(y) and all(close(u, v) for u, v in zip(x, y))
        if isinstance(x, float) and isinstance(y, float):
            return abs(x - y) <= 1e-9 * max(1.0, abs(x))
        return x == y
    return close(da["utility"], db["utility"])


def load(con, name, columns: dict) -> None:
    arrow_table = pa.table(columns)   # noqa: F841  (read by DuckDB's replacement scan)
    con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM arrow_table").fetchall()


def evaluate_workloads(con, old, rng):
    n = ROWS
    x = rng.normal(size=(n, 12))
    cat = rng.integers(0, 5, n)
    numeric = [f"x{j}" for j in range(12)]
    redraw = rng.random(n) < 0.05
    load(con, "gauss_o", {**{c: x[:, j] for j, c in enumerate(numeric)}, "g": cat.astype(str)})
    load(con, "gauss_r", {**{c: x[:, j] + rng.normal(0, 0.05, n) for j, c in enumerate(numeric)},
                          "g": np.where(redraw, rng.integers(0, 5, n), cat).astype(str)})
    yield "gaussian", "gauss_o", "gauss_r", numeric + ["g"], ["g"], "x0"

    num = ["age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week"]
    cats = ["workclass", "marital_status", "occupation", "relationship", "race", "sex", "income"]
    con.execute(f"CREATE OR REPLACE TABLE adult_all AS SELECT * FROM read_csv('{DATA / 'adult.csv'}')").fetchall()
    data = con.execute(f"SELECT {', '.join(num + cats)} FROM adult_all").fetchnumpy()
    pick = rng.integers(0, len(data["age"]), n)
    orig = {c: np.asarray(data[c], float)[pick] for c in num}
    orig = {c: v + rng.normal(0, 0.01 * v.std(), n) for c, v in orig.items()}
    orig.update({c: np.asarray(data[c], object)[pick].astype(str) for c in cats})
    rel = {c: orig[c] + rng.normal(0, 0.05 * orig[c].std(), n) for c in num}
    for c in cats:
        rel[c] = np.where(rng.random(n) < 0.05, orig[c][rng.permutation(n)], orig[c])
    load(con, "adult_o", orig)
    load(con, "adult_r", rel)
    yield "adult", "adult_o", "adult_r", num + cats, cats, "hours_per_week"


def bench_evaluate(con, old, rng) -> None:
    print(f"\nevaluate, {ROWS:,} rows x 13 columns (target: under 5 s; cpu: this process's CPU time, all "
          f"threads, which a busy machine inflates less than the wall time)")
    for name, o, r, columns, categorical, target in evaluate_workloads(con, old, rng):
        cpu = time.process_time()
        new, t_new = timed(lambda: rwn_sql.evaluate(con, o, r, columns, target=target, categorical=categorical,
                                                    order="input"))
        line = f"  {name:9s} new {t_new:6.2f} s (cpu {time.process_time() - cpu:5.2f} s)"
        if old:
            before, t_old = timed(lambda: old.evaluate(con, o, r, columns, target=target, categorical=categorical))
            line += f"   old {t_old:6.1f} s   ratio {t_old / t_new:5.1f}x   same measures: {same_measures(new, before)}"
        print(line + f"   (linkage {new.risk.linkage_rate:.3f}, dcr {new.risk.dcr_mean:.4f})", flush=True)


def with_old_evaluation(old):
    """Make tune.sweep evaluate with the old module (as the old sweep did: one read per release)."""
    def replicates(con, original, released, reps, columns, target=None, categorical=()):
        for r in range(reps):
            yield old.evaluate(con, original, f"SELECT * EXCLUDE (replicate) FROM ({released}) WHERE replicate = {r}",
                               columns, target=target, categorical=categorical)
    saved = tune.evaluate, tune.evaluate_replicates
    tune.evaluate, tune.evaluate_replicates = old.evaluate, replicates
    return saved


class EvaluationClock:
    """Context manager: the seconds tune.sweep spends inside the evaluation (evaluate_replicates
    and evaluate), apart from its SQL statements, in `spent`."""

    def __enter__(self):
        self.spent, self.saved = 0.0, (tune.evaluate, tune.evaluate_replicates)
        real_one, real_many = self.saved

        def one(*args, **kwargs):
            start = time.perf_counter()
            try:
                return real_one(*args, **kwargs)
            finally:
                self.spent += time.perf_counter() - start

        def many(*args, **kwargs):
            it = real_many(*args, **kwargs)
            while True:
                start = time.perf_counter()
                try:
                    ev = next(it)
                except StopIteration:
                    return
                finally:
                    self.spent += time.perf_counter() - start
                yield ev
        tune.evaluate, tune.evaluate_replicates = one, many
        return self

    def __exit__(self, *exc):
        tune.evaluate, tune.evaluate_replicates = self.saved


def paper_sweeps(con, columns, reps, clock=False):
    """{part: (result, seconds)}; with `clock`, also {part: (CPU seconds, seconds in evaluation)}."""
    common = dict(k=5, q=1.0, reps=reps, target="BodyFat", seed=2024)
    results, split = {}, {}
    for part, kwargs in (("rwn", dict(eps_values=tune.parse_grid("0.25:0.95:0.05"))),
                         ("rank_swap", dict(eps_values=[], rank_swap=tune.parse_grid("12:54:6"))),
                         ("mdav", dict(eps_values=[], mdav=list(range(2, 17))))):
        if not clock:
            results[part] = timed(lambda: tune.sweep(con, "bodyfat", columns, **kwargs, **common))
            continue
        cpu = time.process_time()
        with EvaluationClock() as evaluation:
            results[part] = timed(lambda: tune.sweep(con, "bodyfat", columns, **kwargs, **common))
        split[part] = (time.process_time() - cpu, evaluation.spent)
    return (results, split) if clock else results


def per_release_sweep(con, columns, reps, eps_values, swaps, groups, seed):
    """The sweep as it ran before the batching: one release statement (perturb or rank_swap with
    the key key#r) and one evaluate() per release; the settings tune.sweep would report."""
    key, settings = rwn_sql.randomness.key_from_seed(seed), []
    for method, values in (("rwn", eps_values), ("rank_swap", swaps), ("mdav", groups)):
        for value in values:
            evs = []
            for r in range(reps if method != "mdav" else 1):
                if method == "rwn":
                    rwn_sql.perturb(con, "bodyfat", columns, k=5, eps=value, q=1.0, key=key.replicate(r), into="one",
                                    replace=True, order="input")
                elif method == "rank_swap":
                    rwn_sql.rank_swap(con, "bodyfat", columns, value, key=key.replicate(r), into="one", replace=True)
                else:
                    rwn_sql.mdav(con, "bodyfat", columns, value, into="one", replace=True)
                evs.append(rwn_sql.evaluate(con, "bodyfat", "one", columns, target="BodyFat"))
            settings.append(tune._summarise(evs))
    con.execute("DROP TABLE one").fetchall()
    return settings


def same_settings(a, b) -> bool:
    """Risk means and sds identical, utility ones within 1e-9 (numpy's reductions may round the
    last bit differently for batched arrays)."""
    for x, y in zip(a, b):
        for name, (kind, _) in tune.MEASURES.items():
            for u, v in zip(x[name], y[name]):
                if kind == "risk" and u != v:
                    return False
                if kind == "utility" and not (u == v or abs(u - v) <= 1e-9 * max(1.0, abs(u))):
                    return False
    return len(a) == len(b)


def check_paper(con, columns) -> None:
    """The batched sweep against one statement and one evaluation per release, on part of the
    grid with 3 releases per setting."""
    eps_values, swaps, groups, reps = [0.25, 0.95], [12.0, 54.0], [2], 3
    new = tune.sweep(con, "bodyfat", columns, eps_values, k=5, q=1.0, reps=reps, target="BodyFat", seed=2024,
                     rank_swap=swaps, mdav=groups)
    (before, t_before) = timed(lambda: per_release_sweep(con, columns, reps, eps_values, swaps, groups, 2024))
    print(f"  same measures as one statement and one evaluation per release (eps {eps_values}, P {swaps}, "
          f"MDAV k {groups}, {reps} releases each; {t_before:.1f} s): "
          f"{same_settings([s.measures for s in new.settings], before)}")


def bench_paper(con, old, reps: int) -> None:
    con.execute(f"CREATE OR REPLACE TABLE bodyfat AS SELECT * FROM read_csv('{DATA / 'bodyfat_clean.csv'}')").fetchall()
    columns = [r[0] for r in con.execute("DESCRIBE bodyfat").fetchall()]
    print(f"\npaper reproduction, bodyfat 241 x 14, {reps} releases per random setting (target: under 10 s)")
    new, split = paper_sweeps(con, columns, reps, clock=True)
    result = new["rwn"][0]
    result.settings += new["rank_swap"][0].settings + new["mdav"][0].settings
    with tempfile.TemporaryDirectory() as tmp:
        _, t_report = timed(lambda: tune_report.report_html(result, Path(tmp) / "report.html"))
    before = None
    if old:
        saved = with_old_evaluation(old)
        try:
            before = paper_sweeps(con, columns, reps)
        finally:
            tune.evaluate, tune.evaluate_replicates = saved
    for part in new:
        cpu, evaluation = split[part]
        line = (f"  {part:9s} new {new[part][1]:6.2f} s (CPU {cpu:5.2f} s; in evaluation {evaluation:5.2f} s, "
                f"releases and the rest {new[part][1] - evaluation:5.2f} s)")
        if before:
            line += f"   old {before[part][1]:6.1f} s   ratio {before[part][1] / new[part][1]:5.1f}x"
        print(line)
    total = sum(t for _, t in new.values()) + t_report
    print(f"  report    new {t_report:6.2f} s (matplotlib imported the first time)")
    line = f"  total     new {total:6.2f} s"
    if before:
        old_total = sum(t for _, t in before.values()) + t_report
        line += f"   old {old_total:6.1f} s   ratio {old_total / total:5.1f}x (old total with the new report time)"
    print(line)
    check_paper(con, columns)


def bench_tune28k(con, old) -> None:
    con.execute(f"CREATE OR REPLACE TABLE adult28k AS SELECT * FROM read_csv('{DATA / 'adult.csv'}') LIMIT 28000"
                ).fetchall()
    columns = ["age", "education_num", "hours_per_week", "fnlwgt", "sex"]
    print("\ntune, 28,000 adult rows, eps 0.05 and 0.1, 2 releases each (target: under 10 s)")
    def run():
        return timed(lambda: tune.sweep(con, "adult28k", columns, [0.05, 0.1], reps=2, categorical=["sex"], seed=1))
    with EvaluationClock() as clock:
        (result, t_new) = run()
    eval_new = clock.spent
    sizes = ", ".join(f"{s.sizes['size_mean']:.0f}" for s in result.settings)
    print(f"  new {t_new:6.2f} s, of which evaluation {eval_new:5.2f} s and neighbourhoods + releases "
          f"{t_new - eval_new:5.2f} s (mean neighbourhoods {sizes})")
    if old:
        saved = with_old_evaluation(old)
        try:
            with EvaluationClock() as clock:
                _, t_old = run()
        finally:
            tune.evaluate, tune.evaluate_replicates = saved
        print(f"  old {t_old:6.1f} s, of which evaluation {clock.spent:5.1f} s   ratio {t_old / t_new:5.1f}x "
              f"(evaluation {clock.spent / eval_new:5.0f}x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2, help="DuckDB threads (default 2)")
    ap.add_argument("--reps", type=int, default=100, help="releases per random setting of the paper run (default 100)")
    ap.add_argument("--skip-old", action="store_true", help="skip the old code (it takes several minutes)")
    ap.add_argument("--only", default="evaluate,paper,tune28k", help="comma-separated workloads")
    args = ap.parse_args()
    con = duckdb.connect()
    con.execute(f"SET threads = {args.threads}").fetchall()
    old = None if args.skip_old else old_evaluate_module()
    print(f"{args.threads} threads; duckdb {duckdb.__version__}; python {sys.version.split()[0]}; {cpu_name()}")
    only = set(args.only.split(","))
    if "evaluate" in only:
        bench_evaluate(con, old, np.random.default_rng(20261201))
    if "paper" in only:
        bench_paper(con, old, args.reps)
    if "tune28k" in only:
        bench_tune28k(con, old)
    print(f"\npeak RSS {peak_rss_mb():,.0f} MB")


if __name__ == "__main__":
    main()
