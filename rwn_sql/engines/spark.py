"""Apache Spark as the engine: SparkBackend (rwn_sql.engines.backend) runs the plans of
the same builders as on DuckDB, rendered with the Spark dialect, so the same data, parameters,
id and key give the same release, row for row: randomize (with enforcement), audit,
estimates, release folders and the count-query rewriter, and RWN (perturb, donors,
neighborhoods; rwn_sql.rwn.run stages the neighbourhood search one statement per level, each level
checkpointed, since Spark has no recursive CTEs).

The only part of rwn_sql that talks to a SparkSession. Spark needs `id=`: it has no input
order to number records by. The key never enters SQL text: it sits in a one-row temporary
view that the plan reads with a scalar subquery. Not on Spark: scale='zscore' in RWN
(docs/guides/spark.md says why)."""
from __future__ import annotations

import os
import re
import secrets
import weakref

from . import files, outputs, sources
from .dialects import SPARK
from ..errors import OutputExists, RWNError


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


def write_parquet(frame, path: str, overwrite: bool = False, metadata: dict[str, str] | None = None) -> int:
    """Write `frame` as Parquet at `path` (a directory of parts, as Spark writes it), atomically:
    into the run's private folder beside it, then renamed. `metadata`: key-value metadata
    every part carries (Spark's writer takes none: each part is rewritten with it, row group
    by row group, before the folder is published). Returns the number of rows."""
    if not path.lower().rstrip("/").endswith(".parquet"):
        raise RWNError(f"on Spark the output must be a .parquet path (a directory of parts), got {path!r}")
    if os.path.exists(path) and not overwrite:
        raise OutputExists(f"output {path!r} already exists (use --overwrite to replace it)")
    with files.scratch_dir(files.output_folder(path)) as scratch:
        tmp = os.path.join(scratch, "release.parquet")
        frame.write.parquet(tmp)
        rows = frame.sparkSession.read.parquet(tmp).count()
        if metadata:
            _add_parquet_metadata(tmp, metadata)
        files.publish_folder(tmp, path, scratch)
    return rows


def _add_parquet_metadata(folder: str, metadata: dict[str, str]) -> None:
    """Rewrite every part of the Parquet folder `folder` with `metadata` added to its key-value
    metadata (Spark's own entries kept), one row group at a time; Spark's checksum files of
    the rewritten parts are removed (they would no longer match)."""
    import pyarrow.parquet as pq
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".parquet"):
            continue
        part = os.path.join(folder, name)
        source = pq.ParquetFile(part)
        schema = source.schema_arrow.with_metadata({**(source.schema_arrow.metadata or {}),
                                                    **{k.encode(): v.encode() for k, v in metadata.items()}})
        rewritten = part + ".tmp"
        with pq.ParquetWriter(rewritten, schema) as writer:
            for i in range(source.num_row_groups):
                writer.write_table(source.read_row_group(i).cast(schema))
        source.close()
        os.replace(rewritten, part)
        crc = os.path.join(folder, f".{name}.crc")
        if os.path.exists(crc):
            os.unlink(crc)


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


_LASTING_KEYS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()    # session -> {key: view}


class SparkBackend:
    """rwn_sql.backends.Backend over a SparkSession. Sources become temporary views; SQL from
    the builders is re-quoted for Spark (_spark_sql) before it runs."""
    name = "spark"

    def __init__(self, spark):
        self.spark, self.dialect = spark, SPARK

    def source(self, source) -> sources.Source:
        if isinstance(source, sources.Source):
            return source
        df = _dataframe(self.spark, source)
        view = "__rwn_src_" + secrets.token_hex(6)
        df.createOrReplaceTempView(view)
        label = (f"file {source!r}" if isinstance(source, str) and source.lower().rstrip("/").endswith(
            (".parquet", ".csv")) else f"table {source!r}" if isinstance(source, str) else "the DataFrame")
        return sources.Source(sql=view, schema=tuple((f.name, f.dataType.simpleString()) for f in df.schema.fields),
                             label=label)

    def rows(self, sql: str) -> list[tuple]:
        try:
            return [tuple(r) for r in self.spark.sql(_spark_sql(sql)).collect()]
        except Exception as exc:        # pyspark's errors: an rwn_sql check raised in SQL, or a real failure
            raise translate(exc) from None

    def engine_sql(self, sql: str) -> str:
        return _spark_sql(sql)

    def write(self, sql: str, target: str, overwrite: bool = False, row_order: str | None = None,
              design=None) -> int:
        # row_order is not recorded: a Spark release always carries its id column, which
        # evaluate pairs by; a randomized table's design is (outputs.parquet_metadata)
        return write_parquet(self.relation(sql), target, overwrite=overwrite,
                             metadata=outputs.parquet_metadata(None, design))

    def relation(self, sql: str):
        try:
            return self.spark.sql(_spark_sql(sql))
        except Exception as exc:
            raise translate(exc) from None

    @property
    def session(self):
        return self.spark

    def key_sql(self, key: str, scope=None) -> str:
        """The key in a one-row temp view, read by a scan (randomness.KeySQL: subkeys computed in
        the scalar subquery, once per statement). In a lasting scope (or none) one view per
        distinct key per session serves every DataFrame; for a call-only scope a view of its
        own, dropped when the scope ends."""
        from ..randomness import KeySQL, current_scope
        scope = current_scope(self.spark) if scope is None else scope
        lasting = scope is None or scope.lasting
        views = _LASTING_KEYS.setdefault(self.spark, {})
        view = views.get(key) if lasting else None
        if view is None or not self.spark.catalog.tableExists(view):
            view = "__rwn_key_" + secrets.token_hex(8)
            # str(): pyspark 4.0.0 cannot pickle a str subclass (the SeedKey of seed=)
            self.spark.createDataFrame([(str(key),)], "k string").createOrReplaceTempView(view)
            if lasting:
                views[key] = view
            if scope is not None:
                scope.made.append(view)
        return KeySQL("k", view, self.dialect)

    def forget_keys(self, views=None) -> None:
        """Drop the key views `views` (None: every key view of the session)."""
        lasting = _LASTING_KEYS.setdefault(self.spark, {})
        if views is None:
            views = set(lasting.values())
        for key, view in list(lasting.items()):
            if view in views:
                del lasting[key]
        for view in views:
            self.spark.catalog.dropTempView(view)

    def stage(self, sql: str, joins_as_written: bool = False) -> str:
        """Computed now, once, and checkpointed: later reads see these rows, and a plan that
        reads it (the next level of the RWN search) does not carry its lineage. Spark picks its
        join strategies from sizes it measures as it runs: `joins_as_written` changes nothing."""
        name = "__rwn_stage_" + secrets.token_hex(4)
        try:
            frame = self.relation(sql).localCheckpoint(eager=True)
        except Exception as exc:
            raise translate(exc) from None
        frame.createOrReplaceTempView(name)
        return name

    def drop(self, name: str) -> None:
        self.spark.catalog.dropTempView(name)

    has_input_order = False     # id= is required: a distributed table has no input order
    has_python_udfs = False     # the audit's tails come from a table computed beforehand
    records_design_in_catalog = False   # a design is recorded in Parquet metadata only
    releases_to_database_file = False   # a release is a folder of Parquet files and JSON metadata

    def try_rows(self, sql: str):
        try:
            return self.rows(sql)
        except RWNError:
            raise
        except Exception:
            return None

    def memory_limit(self) -> None:
        """A cluster has no single memory limit to check the neighbourhoods against."""
        return None

    def deliver(self, sql: str, into: str | None = None, replace: bool = False, reads_staged: bool = False,
                row_order: str | None = None):
        """A DataFrame (into=None) or, into a .parquet path, written atomically (returns None).
        A DataFrame over staged relations keeps their checkpointed rows once they are dropped."""
        if into is None:
            return self.relation(sql)
        self.check_into(into)
        self.write(sql, into, overwrite=replace)
        return None

    def check_into(self, into) -> None:
        """Refuse a deliver() target before any work."""
        if into is not None and not str(into).lower().rstrip("/").endswith(".parquet"):
            raise RWNError(f"on Spark, into= takes a .parquet path (a folder of parts), got {into!r}; or leave "
                           f"it out to get a DataFrame")

    def passthrough_source(self, source, output: str, typed):
        return source

    def write_relation(self, frame, target: str, overwrite: bool = False) -> int:
        return write_parquet(frame, target, overwrite=overwrite)

    def fetch(self, frame) -> tuple[list[str], list[tuple]]:
        try:
            return list(frame.columns), [tuple(r) for r in frame.collect()]
        except Exception as exc:
            raise translate(exc) from None

    def values(self, rows, schema: str) -> str:
        """A small table of `rows` (Python values) with the Spark DDL `schema`, as a view name."""
        view = "__rwn_values_" + secrets.token_hex(6)
        self.spark.createDataFrame(list(rows), schema).createOrReplaceTempView(view)
        return view


def translate(exc: Exception) -> Exception:
    """rwn_sql's checks fail a Spark job through raise_error('rwn_sql: ...'): their message, as
    an RWNError; anything else keeps Spark's own error."""
    match = re.search(r"rwn_sql: (.*?)(?:\s+SQLSTATE: \w+)?\s*$", str(exc).splitlines()[0] if str(exc) else "")
    return RWNError(match.group(1)) if match else exc
