"""Apache Spark as the engine (issue 11, first method): uniform perturbation of a sensitive
attribute, planned by the same builder as on DuckDB (rp_sql.randomize_sql) with the Spark
dialect, so the same data, parameters, id and key give the same release, row for row.

The only part of rwn_sql that talks to a SparkSession. Spark needs `id=`: it has no input
order to number records by. The key never enters SQL text: it sits in a one-row temporary
view that the plan reads with a scalar subquery. Not yet on Spark: enforcement, the audit,
estimates and RWN (README, "Engines")."""
from __future__ import annotations

import os
import secrets
import shutil

from . import engine, rp_sql
from .dialect import SPARK, UnsupportedByEngine
from .errors import RWNError
from .identifiers import quote_ident
from .randomness import resolve_key
from .spec import RESERVED_PREFIX

ID_TYPES = ("tinyint", "smallint", "int", "bigint", "string")


def is_spark(obj) -> bool:
    """Is `obj` a SparkSession? (Checked by class name: pyspark is an optional extra.)"""
    return any(c.__name__ == "SparkSession" for c in type(obj).__mro__)


def session(master: str = "local[*]", conf=()):
    """A SparkSession for the command line: `master` (local[*] by default, or a cluster URL) and
    `conf` pairs "key=value"."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise RWNError("--engine spark needs pyspark: pip install 'rwn_sql[spark]' (and Java 17)") from None
    builder = SparkSession.builder.master(master).appName("rwn-sql").config("spark.ui.enabled", "false")
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
        if os.path.exists(path):
            old = os.path.join(scratch, "replaced")
            os.replace(path, old)
            os.replace(tmp, path)
            shutil.rmtree(old) if os.path.isdir(old) else os.remove(old)
        else:
            os.replace(tmp, path)
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


def randomize(spark, source, sensitive: str, p: float, public=None, domain=None, key: str | None = None,
              seed: int | None = None, enforce=None, test: str = "exact", nulls: str = "error",
              id: str | None = None, suppress_small: bool = False):
    """rwn_sql.randomize on Spark: returns a DataFrame (the public columns and the randomized
    sensitive column, in the keyed order). Same semantics and checks as on DuckDB."""
    if enforce is not None or suppress_small:
        raise UnsupportedByEngine("engine spark does not support enforcement yet (issue 11); run it on DuckDB")
    if id is None:
        raise RWNError("on Spark, id= is required: Spark has no input order to number records by, so the "
                       "draws need a unique id column")
    df = _dataframe(spark, source)
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    for role, names in (("sensitive", [sensitive]), ("id", [id]), ("public", list(public or []))):
        for name in names:
            if name not in types:
                raise RWNError(f"{role}: column {name!r} is not in the source (its columns: {', '.join(types)})")
    reserved = [c for c in types if c.lower().startswith(RESERVED_PREFIX)]
    if reserved:
        raise RWNError(f"column {reserved[0]!r}: names starting with {RESERVED_PREFIX!r} are reserved")
    if types[id] not in ID_TYPES:
        raise RWNError(f"id column {id!r} has type {types[id]}; a record id must be an integer or text column")
    pub = tuple(public) if public is not None else tuple(c for c in types if c not in (sensitive, id))
    try:
        spec = rp_sql.RandomizeSpec(sensitive=sensitive, p=float(p), public=pub, nulls=nulls, id=id)
        the_key = resolve_key(key, seed)
    except (TypeError, ValueError) as exc:
        raise RWNError(str(exc)) from None
    view = "__rwn_src_" + secrets.token_hex(6)
    df.createOrReplaceTempView(view)
    s, i = quote_ident(sensitive), quote_ident(id)
    rows, null_ids, distinct_ids, null_values = spark.sql(_spark_sql(
        f"SELECT count(*), count(*) - count({i}), count(DISTINCT {i}), count(*) - count({s}) FROM {view}"
        + (f" WHERE {s} IS NOT NULL" if nulls == "drop" else ""))).collect()[0]
    if null_ids:
        raise RWNError(f"id column {id!r} has {null_ids} NULL values; every record needs an id")
    if distinct_ids != rows:
        raise RWNError(f"id column {id!r} has duplicate values ({rows - distinct_ids} records share an id "
                       f"with another); every record needs its own id")
    if nulls == "error" and null_values:
        raise RWNError(f"the sensitive column {sensitive!r} has {null_values} NULL values; clean them or use "
                       f"nulls='drop' (those records are then left out of the release)")
    if domain is None:
        values = sorted(r[0] for r in spark.sql(_spark_sql(f"SELECT DISTINCT CAST({s} AS STRING) FROM {view} "
                                                           f"WHERE {s} IS NOT NULL")).collect())
    elif isinstance(domain, (str, os.PathLike)):
        values = rp_sql.read_domain_file(domain)
    else:
        values = [str(v) for v in domain]
    if len(values) < 2:
        raise RWNError(f"the domain of {sensitive!r} has {len(values)} value(s); uniform perturbation needs at least 2")
    key_view = "__rwn_key_" + secrets.token_hex(8)
    spark.createDataFrame([(the_key,)], "k string").createOrReplaceTempView(key_view)
    output = [c for c in types if c in pub or c == sensitive]
    sql = rp_sql.randomize_sql(view, spec, output, values, types[sensitive], f"(SELECT k FROM {key_view})",
                               check_domain=domain is not None, dialect=SPARK)
    return spark.sql(_spark_sql(sql))


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
