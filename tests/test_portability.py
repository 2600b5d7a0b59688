"""Portability (issue 11): the plans that run on Spark, rendered with the Spark dialect, parse as
Spark SQL with sqlglot (read="spark") and call no function sqlglot does not know for Spark,
except the Spark built-ins listed here, whose existence tests/test_spark.py checks on a real
SparkSession. No cluster needed. (So far the randomization: the other methods are not yet
rendered for Spark; see README, "Engines".)"""
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
