"""Apache Spark (issue 11, first step): the keyed hash is portable. Spark SQL computes, through
rwn_sql.dialect.SparkDialect, the same 52-bit draws and 62-bit order keys as DuckDB (whose
draws equal the Python mirror in rwn_sql.randomness, tests/test_perturb.py and
tests/test_order_attack.py). Skipped with the reason when pyspark or Java is missing."""
import importlib.util
import os
import shutil

import pytest

from rwn_sql.dialect import SPARK
from rwn_sql.identifiers import quote_literal
from rwn_sql.randomness import bits_sql, hash_sql, keyed_bits, keyed_hash, order_key_sql

# .ci/run sets RWN_REQUIRE_SPARK=1: there a missing pyspark or Java fails instead of skipping
_MISSING = ("pyspark is not installed (pip install '.[spark]')" if importlib.util.find_spec("pyspark") is None
            else "Java is not installed (Spark needs it)" if shutil.which("java") is None else None)
if _MISSING:
    if os.environ.get("RWN_REQUIRE_SPARK") == "1":
        raise RuntimeError(f"RWN_REQUIRE_SPARK=1 but {_MISSING}")
    pytest.skip(_MISSING, allow_module_level=True)


@pytest.mark.parametrize("record_type", ["BIGINT", "STRING"])
def test_keyed_draws_equal_the_python_mirror(spark, record_type):
    key, purpose, column = "a secret key of the steward", "rwn.perturb", "age"
    h = hash_sql(quote_literal(key), purpose, "rid", column, SPARK)
    rows = spark.sql(f"SELECT rid, {bits_sql(h, 0, SPARK)} AS u0, {bits_sql(h, 1, SPARK)} AS u1, "
                     f"{order_key_sql(quote_literal(key), 'rp.order', 'rid', SPARK)} AS o "
                     f"FROM (SELECT CAST(id AS {record_type}) AS rid FROM range(1, 2001))").collect()
    assert len(rows) == 2000
    for r in rows:
        record = r["rid"]
        assert (r["u0"], r["u1"]) == keyed_bits(key, purpose, record, column), record
        assert r["o"] == keyed_hash(key, "rp.order", record, "") & ((1 << 62) - 1), record


def test_randomize_on_spark_equals_duckdb(spark, tmp_path):
    """The same data, parameters, id and key give the same release on Spark as on DuckDB, row
    for row (the order is keyed by the id too); the id is not released. Values with quotes and
    backslashes survive both engines' quoting."""
    import duckdb

    import rwn_sql
    from conftest import ROOT
    data = tmp_path / "people.parquet"
    con = duckdb.connect()
    con.execute(f"""COPY (SELECT 7 * row_number() OVER () + 3 AS rid, sex, race,
                         CASE WHEN occupation = 'Sales' THEN 'it''s \\ sales' ELSE occupation END AS occupation
                         FROM read_csv('{ROOT / "examples" / "data" / "adult.csv"}') LIMIT 3000)
                    TO '{data}' (FORMAT parquet)""").fetchall()
    kw = dict(public=["sex", "race"], key="k" * 24, id="rid")
    on_duckdb = rwn_sql.randomize(con, str(data), "occupation", 0.6, **kw).fetchall()
    frame = rwn_sql.randomize(spark, str(data), "occupation", 0.6, **kw)
    assert frame.columns == ["sex", "race", "occupation"]
    on_spark = [tuple(r) for r in frame.collect()]
    assert on_spark == on_duckdb and len(on_spark) == 3000
    assert any(r[2] == "it's \\ sales" for r in on_spark)
    changed = sum(a[2] != b for a, b in zip(on_spark, con.execute(
        f"SELECT occupation FROM '{data}'").fetchall()))
    assert changed > 0
    with pytest.raises(rwn_sql.RWNError, match="id= is required"):
        rwn_sql.randomize(spark, str(data), "occupation", 0.6, public=["sex"], key="k" * 24)
    with pytest.raises(rwn_sql.RWNError, match="engine spark does not support enforcement"):
        rwn_sql.randomize(spark, str(data), "occupation", 0.6, enforce=(0.5, 0.05), **kw)


def test_cli_randomize_on_both_engines(tmp_path):
    """rwn-sql randomize IN.parquet OUT.parquet --id rid --engine spark writes the same rows as
    --engine duckdb (compared as multisets), without the rid column."""
    import subprocess
    import sys

    import duckdb
    data = tmp_path / "in.parquet"
    duckdb.execute(f"""COPY (SELECT 1000 + i AS rid, ['F', 'M'][1 + i % 2] AS sex, ['a', 'b', 'c', 'd'][1 + (i * 7) % 4]
                     AS job FROM range(500) r(i)) TO '{data}' (FORMAT parquet)""").fetchall()
    outs = {}
    for engine in ("duckdb", "spark"):
        out = tmp_path / f"{engine}.parquet"
        run = subprocess.run([sys.executable, "-m", "rwn_sql", "randomize", str(data), str(out), "--sensitive", "job",
                              "--p", "0.5", "--public", "sex", "--seed", "7", "--id", "rid", "--engine", engine],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-2000:]
        pattern = f"{out}/*.parquet" if out.is_dir() else str(out)
        outs[engine] = duckdb.execute(f"SELECT * FROM read_parquet('{pattern}')").fetchall()
        names = [d[0] for d in duckdb.execute(f"SELECT * FROM read_parquet('{pattern}') LIMIT 0").description]
        assert names == ["sex", "job"]
    assert sorted(outs["duckdb"]) == sorted(outs["spark"]) and len(outs["spark"]) == 500


def test_builtins_the_plans_need_exist(spark):
    """The functions tests/test_portability.py lets through exist in this Spark."""
    from test_portability import SPARK_BUILTINS_SQLGLOT_LACKS, SPARK_RWN_BUILTINS, SPARK_TABLE_FUNCTIONS
    assert all(spark.catalog.functionExists(name) for name in SPARK_BUILTINS_SQLGLOT_LACKS | SPARK_RWN_BUILTINS)
    for name in SPARK_TABLE_FUNCTIONS:
        assert spark.sql(f"SELECT count(*) FROM {name}(-1, 2)").collect()[0][0] == 3
