"""Apache Spark as the engine (issue 11): SparkBackend (rwn_sql.backends) runs the plans of
the same builders as on DuckDB, rendered with the Spark dialect, so the same data, parameters,
id and key give the same release, row for row: randomize (with enforcement), audit,
estimates, release folders and the count-query rewriter, and RWN (perturb, donors,
neighborhoods), whose neighbourhood search runs one statement per level (rwn_sql.spark_rwn),
each level checkpointed.

The only part of rwn_sql that talks to a SparkSession. Spark needs `id=`: it has no input
order to number records by. The key never enters SQL text: it sits in a one-row temporary
view that the plan reads with a scalar subquery. Not yet on Spark: scale='zscore' in RWN and
the RWN step of a release (README, "Engines")."""
from __future__ import annotations

import os
import re
import secrets

from . import engine, spark_rwn
from .dialect import SPARK, UnsupportedByEngine
from .errors import RWNError
from .randomness import resolve_key
from .spec import RESERVED_PREFIX, RWNSpec

ID_TYPES = ("tinyint", "smallint", "int", "bigint", "string")
NUMERIC_TYPES = re.compile(r"^(tinyint|smallint|int|bigint|float|double|decimal\(\d+,\d+\))$")
MAX_LEVELS = 400        # the search ends by level log2(2 diameter / s0) + a few; this only guards a bug


def session(master: str = "local[*]", conf=()):
    """A SparkSession for the command line: `master` (local[*] by default, or a cluster URL) and
    `conf` pairs "key=value"."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise RWNError("--engine spark needs pyspark: pip install 'rwn_sql[spark]' (and Java 17)") from None
    builder = (SparkSession.builder.master(master).appName("rwn-sql").config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false"))
    for pair in conf:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise RWNError(f"--spark-conf takes key=value, got {pair!r}")
        builder = builder.config(key, value)
    return builder.getOrCreate()


def write_parquet(frame, path: str, overwrite: bool = False) -> int:
    """Write `frame` as Parquet at `path` (a directory of parts, as Spark writes it), atomically:
    into the run's private folder beside it, then renamed. Returns the number of rows."""
    if not path.lower().rstrip("/").endswith(".parquet"):
        raise RWNError(f"on Spark the output must be a .parquet path (a directory of parts), got {path!r}")
    if os.path.exists(path) and not overwrite:
        raise RWNError(f"output {path!r} already exists (use --overwrite to replace it)")
    with engine.scratch_dir(engine.output_folder(path)) as scratch:
        tmp = os.path.join(scratch, "release.parquet")
        frame.write.parquet(tmp)
        rows = frame.sparkSession.read.parquet(tmp).count()
        engine.publish_folder(tmp, path, scratch)
    return rows


def _dataframe(spark, source):
    """A DataFrame for a DataFrame, a .parquet/.csv path (a file or a folder of parts) or a table name."""
    if hasattr(source, "createOrReplaceTempView"):
        return source
    if not isinstance(source, str):
        raise RWNError(f"source must be a DataFrame, a table name or a .csv/.parquet path, got {type(source).__name__}")
    lower = source.lower().rstrip("/")
    if lower.endswith(".parquet"):
        return spark.read.parquet(source)
    if lower.endswith(".csv"):
        return spark.read.csv(source, header=True, inferSchema=True)
    return spark.table(source)


def _rwn_spec(spark, source, columns, k, eps, scale, strata, categorical, weight, on_missing,
              id, q=1.0, drop=()):
    """The spec and the source's DataFrame, checked as on DuckDB; the id's NULL and duplicate values
    are refused by the plan's own checks, with DuckDB's messages."""
    if id is None:
        raise RWNError("on Spark, id= is required: Spark has no input order to number records by, so the "
                       "draws need a unique id column")
    if scale == "zscore":
        raise UnsupportedByEngine("engine spark does not support scale='zscore' yet: the standard deviation is "
                                  "rounded with a data-dependent number of digits, which Spark's round() refuses; "
                                  "use scale='minmax' or 'none', or DuckDB")
    try:
        spec = RWNSpec(columns=columns, categorical=categorical, k=k, eps=eps, q=q, scale=scale, strata=strata,
                       weight=weight, on_missing=on_missing, drop=drop, id=id)
    except (TypeError, ValueError) as exc:
        raise RWNError(str(exc)) from None
    df = _dataframe(spark, source)
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    for role, names in (("columns", spec.columns), ("strata", spec.strata), ("drop", spec.drop), ("id", [id])):
        for name in names:
            if name not in types:
                raise RWNError(f"{role}: column {name!r} is not in the source (its columns: {', '.join(types)})")
    reserved = [c for c in types if c.lower().startswith(RESERVED_PREFIX)]
    if reserved:
        raise RWNError(f"column {reserved[0]!r}: names starting with {RESERVED_PREFIX!r} are reserved")
    if types[id] not in ID_TYPES:
        raise RWNError(f"id column {id!r} has type {types[id]}; a record id must be an integer or text column")
    for c in spec.numeric:
        if not NUMERIC_TYPES.match(types[c]):
            raise RWNError(f"column {c!r} has type {types[c]}, not a numeric type; list it in "
                           f"categorical= (--categorical) to use mismatch distance for it")
    return spec, df


class _Run:
    """The temporary views of one RWN run: each step checkpointed (computed once, its lineage cut)
    under a fresh name."""

    def __init__(self, spark):
        self.spark, self.views = spark, []

    def view(self, frame) -> str:
        name = "__rwn_step_" + secrets.token_hex(6)
        frame.createOrReplaceTempView(name)
        self.views.append(name)
        return name

    def sql(self, text: str):
        return self.spark.sql(_spark_sql(text))

    def rows(self, text: str):
        try:
            return self.sql(text).collect()
        except Exception as exc:
            raise _translate(exc) from None

    def step(self, text: str) -> str:
        try:
            return self.view(self.sql(text).localCheckpoint(eager=True))
        except Exception as exc:
            raise _translate(exc) from None

    def result(self, text: str):
        """The DataFrame of the run's last statement. Its plan holds the steps it reads (checkpointed
        data), so the run's temporary views are dropped."""
        frame = self.sql(text)
        for name in self.views:
            self.spark.catalog.dropTempView(name)
        return frame


def _translate(exc: Exception) -> Exception:
    """rwn_sql's in-SQL checks (raise_error('rwn_sql: ...')) as RWNError."""
    m = re.search(r"rwn_sql: (.*?)(?: SQLSTATE|\n|$)", str(exc))
    return RWNError(m.group(1).strip()) if m else exc


def _hoods(run: _Run, df, spec: RWNSpec, trace=None):
    """Run the neighbourhood search; returns the plan and the views of `staged` and `hood`.
    `trace`: a list that gets one dict per level (records searching, candidate pairs, done)."""
    plan = spark_rwn.RWNPlan(run.view(df), spec)
    staged = run.step(plan.staged())
    settings = run.step(plan.settings(staged))
    points = run.step(plan.points(staged, settings))
    previous, levels = run.view(run.sql(plan.seed(points))), []
    for _ in range(MAX_LEVELS):
        figures = run.rows(plan.level_candidates(points, settings, previous))[0] if trace is not None else None
        previous = run.step(plan.level(points, settings, previous))
        levels.append(previous)
        lvl, done, left = run.rows(f"SELECT max(lvl), count_if(done), count_if(NOT done) FROM {previous}")[0]
        if trace is not None:
            trace.append(dict(level=lvl, searching=figures[0], candidates=figures[1], done=done))
        if not left:
            break
    else:
        raise RWNError(f"the neighbourhood search did not end within {MAX_LEVELS} levels (a bug: please report it)")
    finished = run.view(run.sql(" UNION ALL ".join(f"SELECT * FROM {v} WHERE done" for v in levels)))
    return plan, staged, run.view(run.sql(plan.hood(settings, finished)))


def _key_view(run: _Run, key, seed) -> str:
    try:
        the_key = resolve_key(key, seed)
    except (TypeError, ValueError) as exc:
        raise RWNError(str(exc)) from None
    return f"(SELECT k FROM {run.view(run.spark.createDataFrame([(the_key,)], 'k string'))})"


def perturb(spark, source, columns, k: int = 5, eps: float = 0.0, q: float = 1.0, scale: str = "minmax",
            strata=(), categorical=(), weight: float = 1.0, on_missing: str = "error", drop=(),
            key: str | None = None, seed: int | None = None, order: str = "keyed", id: str | None = None,
            trace=None):
    """rwn_sql.perturb on Spark: returns a DataFrame, the same rows as on DuckDB for the same data,
    parameters, id and key (in the keyed order). The neighbourhoods are computed (and
    checkpointed) before it returns; the draws run when the DataFrame is read. `trace`: a list
    that gets the figures of every search level."""
    if order not in ("keyed", "input"):
        raise RWNError(f"order must be one of keyed, input; got {order!r}")
    spec, df = _rwn_spec(spark, source, columns, k, eps, scale, strata, categorical, weight, on_missing, id,
                         q=q, drop=drop)
    run = _Run(spark)
    key_sql = _key_view(run, key, seed)
    plan, staged, hood = _hoods(run, df, spec, trace)
    return run.result(plan.perturb(staged, hood, key_sql, df.columns, order))


def donors(spark, source, columns, k: int = 5, eps: float = 0.0, q: float = 1.0, scale: str = "minmax",
           strata=(), categorical=(), weight: float = 1.0, on_missing: str = "error", key: str | None = None,
           seed: int | None = None, id: str | None = None):
    """rwn_sql.donors on Spark (diagnostics, never publish): per record (the rank of its id) and
    perturbed column, the donor record and |S_i|, as perturb with the same key drew them."""
    if key is None and seed is None:
        raise RWNError("donors() needs the key or seed of the release it explains")
    spec, df = _rwn_spec(spark, source, columns, k, eps, scale, strata, categorical, weight, on_missing, id, q=q)
    run = _Run(spark)
    key_sql = _key_view(run, key, seed)
    plan, staged, hood = _hoods(run, df, spec)
    return run.result(plan.donors(staged, hood, key_sql))


def neighborhoods(spark, source, columns, k: int = 5, eps: float = 0.0, scale: str = "minmax", strata=(),
                  categorical=(), weight: float = 1.0, on_missing: str = "error", pairs: bool = False,
                  id: str | None = None):
    """rwn_sql.neighborhoods on Spark: per record (the rank of its id) size, radius and dcr, or
    with pairs=True one row per (record, neighbor, distance)."""
    spec, df = _rwn_spec(spark, source, columns, k, eps, scale, strata, categorical, weight, on_missing, id)
    run = _Run(spark)
    plan, _, hood = _hoods(run, df, spec)
    return run.result(plan.neighborhoods(hood, pairs))


def _spark_sql(sql: str) -> str:
    """rwn_sql's builders quote identifiers with double quotes and strings SQL-style ('it''s');
    Spark reads double quotes as strings and backslashes in strings as escapes. Identifiers are
    re-quoted with backquotes, strings re-escaped with backslashes, comments dropped."""
    out, i, n = [], 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch == "'":                                   # a string literal: 'it''s' -> 'it\'s'
            text, i = _quoted(sql, i)
            out.append("'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'")
        elif ch == '"':                                 # a quoted identifier: "a""b" -> `a"b`
            name, i = _quoted(sql, i)
            out.append("`" + name.replace("`", "``") + "`")
        elif sql.startswith("--", i):                   # a comment: dropped (it may hold quotes)
            end = sql.find("\n", i)
            i = n if end < 0 else end
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _quoted(sql: str, start: int) -> tuple[str, int]:
    """The text of the quoted token opening at `start` (its quote doubled inside), and the
    position after its closing quote."""
    quote, parts, j = sql[start], [], start + 1
    while j < len(sql):
        end = sql.find(quote, j)
        if end < 0:
            break
        parts.append(sql[j:end])
        if sql.startswith(quote * 2, end):
            parts.append(quote)
            j = end + 2
        else:
            return "".join(parts), end + 1
    return "".join(parts) + sql[j:], len(sql)


class SparkBackend:
    """rwn_sql.backends.Backend over a SparkSession. Sources become temporary views; SQL from
    the builders is re-quoted for Spark (_spark_sql) before it runs."""
    name = "spark"

    def __init__(self, spark):
        self.spark, self.dialect = spark, SPARK

    def source(self, source) -> engine.Source:
        if isinstance(source, engine.Source):
            return source
        df = _dataframe(self.spark, source)
        view = "__rwn_src_" + secrets.token_hex(6)
        df.createOrReplaceTempView(view)
        label = (f"file {source!r}" if isinstance(source, str) and source.lower().rstrip("/").endswith(
            (".parquet", ".csv")) else f"table {source!r}" if isinstance(source, str) else "the DataFrame")
        return engine.Source(sql=view, schema=tuple((f.name, f.dataType.simpleString()) for f in df.schema.fields),
                             label=label)

    def rows(self, sql: str) -> list[tuple]:
        try:
            return [tuple(r) for r in self.spark.sql(_spark_sql(sql)).collect()]
        except Exception as exc:        # pyspark's errors: an rwn_sql check raised in SQL, or a real failure
            raise translate(exc) from None

    def engine_sql(self, sql: str) -> str:
        return _spark_sql(sql)

    def write(self, sql: str, target: str, overwrite: bool = False) -> int:
        return write_parquet(self.relation(sql), target, overwrite=overwrite)

    def relation(self, sql: str):
        try:
            return self.spark.sql(_spark_sql(sql))
        except Exception as exc:
            raise translate(exc) from None

    def key_sql(self, key: str) -> str:
        view = "__rwn_key_" + secrets.token_hex(8)
        self.spark.createDataFrame([(key,)], "k string").createOrReplaceTempView(view)
        return f"(SELECT k FROM {view})"

    def stage(self, sql: str) -> str:
        name = "__rwn_stage_" + secrets.token_hex(4)
        frame = self.relation(sql).persist()
        try:
            frame.count()        # computed now, once: later reads see these rows
        except Exception as exc:
            frame.unpersist()
            raise translate(exc) from None
        frame.createOrReplaceTempView(name)
        return name

    def drop(self, name: str) -> None:
        if self.spark.catalog.tableExists(name):
            self.spark.table(name).unpersist()
            self.spark.catalog.dropTempView(name)

    def values(self, rows, schema: str) -> str:
        """A small table of `rows` (Python values) with the Spark DDL `schema`, as a view name."""
        view = "__rwn_values_" + secrets.token_hex(6)
        self.spark.createDataFrame(list(rows), schema).createOrReplaceTempView(view)
        return view


def translate(exc: Exception) -> Exception:
    """rwn_sql's checks fail a Spark job through raise_error('rwn_sql: ...'): their message, as
    an RWNError; anything else keeps Spark's own error."""
    import re
    match = re.search(r"rwn_sql: (.*?)(?:\s+SQLSTATE: \w+)?\s*$", str(exc).splitlines()[0] if str(exc) else "")
    return RWNError(match.group(1)) if match else exc
