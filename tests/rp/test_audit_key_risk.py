"""The audit's key-variable risk of the public columns (AuditResult.key_risk), computed from its
personal groups, equals rwn_sql.key_variable_risk over the same columns and records (which
tests/evaluation/test_key_risk.py checks against a brute force), on DuckDB and on Spark; the summary and
`rwn-sql audit` print it."""
import random

import pytest

import rwn_sql
from helpers.data import ADULT

ARGS = dict(p=0.45, epsilon=0.5, delta=0.1)


@pytest.fixture
def small(con):
    """300 records: public columns with NULLs (NULL a value of its own), a few unique cells,
    and NULL sensitive values (for nulls='drop')."""
    rng = random.Random(11)
    con.execute("CREATE TABLE small (a VARCHAR, b INTEGER, job VARCHAR)").fetchall()
    rows = [(rng.choice(["x", "y", None]), rng.choice([1, 2, 3, 4, None]) if i % 50 else 1000 + i,
             rng.choice(["s", "t", "u", None] if i % 7 == 0 else ["s", "t", "u"])) for i in range(300)]
    con.executemany("INSERT INTO small VALUES (?, ?, ?)", rows)
    return con


@pytest.mark.parametrize("enforce", [False, True])
def test_audit_key_risk_equals_key_variable_risk(con, enforce):
    con.execute(f"CREATE TABLE adult AS SELECT * FROM read_csv('{ADULT}') LIMIT 3000").fetchall()
    public = ["sex", "race"]
    with rwn_sql.audit(con, "adult", "occupation", **ARGS, public=public, enforce=enforce) as a:
        expected = rwn_sql.key_variable_risk(con, "adult", public)
        assert a.key_risk == expected
        assert a.key_risk.cells == a.groups and a.key_risk.rows == a.records
        assert a.key_risk.weight is None
        assert expected.describe("the public columns", unweighted="no weights") in a.summary()
        assert a.summary().index("key-variable risk") < a.summary().index("verdict:")


def test_nulls_in_public_columns_and_dropped_records(small):
    """NULL in a public column is a value of its own in both; nulls='drop' measures the records
    audited (those with a sensitive value)."""
    with rwn_sql.audit(small, "small", "job", **ARGS, public=["a", "b"], nulls="drop") as a:
        kept = rwn_sql.key_variable_risk(small, "SELECT * FROM small WHERE job IS NOT NULL", ["a", "b"])
        assert a.key_risk.to_dict() | {"source": None} == kept.to_dict() | {"source": None}
        assert a.key_risk.sample_uniques >= 5           # the records with b = 1000 + i
    small.execute("DELETE FROM small WHERE job IS NULL").fetchall()
    with rwn_sql.audit(small, "small", "job", **ARGS, public=["a", "b"]) as a:
        assert a.key_risk == rwn_sql.key_variable_risk(small, "small", ["a", "b"])


def test_no_public_columns_no_key_risk(small):
    small.execute("DELETE FROM small WHERE job IS NULL").fetchall()
    with rwn_sql.audit(small, "SELECT job FROM small", "job", **ARGS, l_diversity=1) as a:
        assert a.public == () and a.key_risk is None
        assert "key-variable risk" not in a.summary()


def test_the_cli_prints_it(tmp_path, capsys):
    from rwn_sql.cli.main import main
    code = main(["audit", str(ADULT), "--sensitive", "occupation", "--p", "0.5", "--public", "sex,race",
                 "--epsilon", "0.5", "--delta", "0.1"])
    out = capsys.readouterr().out
    assert code in (0, 1)
    assert "key-variable risk of the public columns (sex, race; no weights): 10 combinations" in out


@pytest.mark.spark
def test_on_spark_equals_duckdb(spark_if_installed, tmp_path, con):
    spark = spark_if_installed
    data = tmp_path / "adult.parquet"
    con.execute(f"COPY (SELECT row_number() OVER () AS rid, sex, race, occupation FROM read_csv('{ADULT}') "
                f"LIMIT 3000) TO '{data}' (FORMAT parquet)").fetchall()
    public = ["sex", "race"]
    for enforce in (False, True):
        with rwn_sql.audit(spark, str(data), "occupation", **ARGS, public=public, enforce=enforce) as b:
            expected = rwn_sql.key_variable_risk(con, str(data), public)
            assert b.key_risk.to_dict() | {"source": None} == expected.to_dict() | {"source": None}
