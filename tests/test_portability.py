"""Portability (issue 11): the plans that run on Spark, rendered with the Spark dialect, parse as
Spark SQL with sqlglot (read="spark") and call no function sqlglot does not know for Spark,
except the Spark built-ins listed here, whose existence tests/test_spark.py checks on a real
SparkSession. No cluster needed. (The randomization and RWN so far; see README, "Engines".)"""
import pytest
import sqlglot
from sqlglot import exp

from rwn_sql import rp_sql
from rwn_sql.dialect import SPARK
from rwn_sql.spark_engine import _spark_sql

# Spark SQL built-ins that sqlglot parses as anonymous functions
SPARK_BUILTINS_SQLGLOT_LACKS = {"conv", "pmod", "raise_error"}


@pytest.mark.parametrize("check_domain", [True, False])
@pytest.mark.parametrize("nulls", ["error", "drop"])
def test_randomize_plan_is_spark_sql(check_domain, nulls):
    spec = rp_sql.RandomizeSpec(sensitive="job title", p=0.5, public=("sex", 'we"ird'), nulls=nulls, id="rid")
    sql = _spark_sql(rp_sql.randomize_sql("src_view", spec, ["sex", 'we"ird', "job title"], ["a", "it's", "b\\c"],
                                          "string", "(SELECT k FROM key_view)", check_domain=check_domain,
                                          dialect=SPARK))
    tree = sqlglot.parse_one(sql, read="spark")
    unknown = {node.name.lower() for node in tree.find_all(exp.Anonymous)}
    assert unknown <= SPARK_BUILTINS_SQLGLOT_LACKS, unknown
    # the names reach Spark as identifiers (backquoted), not as strings (Spark's reading of "...")
    assert {"sex", 'we"ird', "job title", "rid"} <= {c.name for c in tree.find_all(exp.Column)}


# Spark built-ins of the RWN plans that sqlglot parses as anonymous functions, and the table function
SPARK_RWN_BUILTINS = {"inline", "min_by", "named_struct", "count_if"}
SPARK_TABLE_FUNCTIONS = {"range"}


@pytest.mark.parametrize("options", [
    dict(columns=("x y", 'we"ird', "it's")),                                    # the grid: all three columns
    dict(columns=("x y", 'we"ird'), eps=0.1, k=0, on_missing="drop", drop=("d",)),
    dict(columns=("x y", 'we"ird', "it's", "w", "c"), categorical=("c",), strata=("wo'man",)),  # grid_order
])
def test_rwn_plan_is_spark_sql(options):
    """Every statement the Spark driver runs for RWN (the setup steps, one search level, the
    level figures, the neighbourhoods, the release and the donors), rendered with the Spark
    dialect, parses as Spark SQL and calls only functions sqlglot knows for Spark or the
    Spark built-ins listed (checked to exist in tests/test_spark.py)."""
    from rwn_sql.spark_rwn import RWNPlan
    from rwn_sql.spec import RWNSpec
    spec = RWNSpec(id="rid", **options)
    plan = RWNPlan("src_view", spec)
    key = "(SELECT k FROM key_view)"
    statements = [plan.staged(), plan.settings("v1"), plan.points("v1", "v2"), plan.seed("v3"),
                  plan.level("v3", "v2", "v4"), plan.level_candidates("v3", "v2", "v4"), plan.hood("v2", "v5"),
                  plan.neighborhoods("v6"), plan.neighborhoods("v6", pairs=True),
                  plan.perturb("v1", "v6", key, ["rid", *spec.columns, *spec.strata, *spec.drop]),
                  plan.donors("v1", "v6", key)]
    names = set()
    for sql in statements:
        tree = sqlglot.parse_one(_spark_sql(sql), read="spark")
        unknown = {node.name.lower() for node in tree.find_all(exp.Anonymous)}
        assert unknown <= SPARK_BUILTINS_SQLGLOT_LACKS | SPARK_RWN_BUILTINS | SPARK_TABLE_FUNCTIONS, unknown
        names |= {c.name for c in tree.find_all(exp.Column)}
    assert {"x y", 'we"ird', "rid"} <= names       # identifiers (backquoted), not strings
