"""Portability (issue 11): the plans that run on Spark, rendered with the Spark dialect, parse as
Spark SQL with sqlglot (read="spark") and call no function sqlglot does not know for Spark,
except the Spark built-ins listed here, whose existence tests/engines/test_spark.py checks on a real
SparkSession. No cluster needed. Every plan is covered: RWN (every level statement) and
the randomization (with and without enforcement blocks), the audit (its cases query and its
rows with the tails table), the audit's per-group verdicts, the estimates and the query
rewriter's output.""" 
import pytest
import sqlglot
from sqlglot import exp

from rwn_sql.rp.release import analyst
from rwn_sql.rp.core import privacy, sqlgen as rp_sql
from rwn_sql.rp import plan as rp_plan
from rwn_sql.engines.dialects import SPARK
from rwn_sql.rp.release.release_db import ReleaseMeta
from rwn_sql.engines.spark import _spark_sql
from helpers.spark_builtins import SPARK_BUILTINS_SQLGLOT_LACKS, SPARK_RWN_BUILTINS, SPARK_TABLE_FUNCTIONS


@pytest.mark.parametrize("check_domain", [True, False])
@pytest.mark.parametrize("nulls", ["error", "drop"])
def test_randomize_plan_is_spark_sql(check_domain, nulls):
    spec = rp_sql.RandomizeSpec(sensitive="job title", p=0.5, public=("sex", 'we"ird'), nulls=nulls, id="rid")
    for blocks in (None, {3: 1, 10: 4}):
        sql = rp_sql.randomize_sql("src_view", spec, ["sex", 'we"ird', "job title"], ["a", "it's", "b\\c"], "string",
                                   "(SELECT k FROM key_view)", blocks, check_domain=check_domain, dialect=SPARK)
        tree = spark_tree(sql)
        # the names reach Spark as identifiers (backquoted), not as strings (Spark's reading of "...")
        assert {"sex", 'we"ird', "job title", "rid"} <= {c.name for c in tree.find_all(exp.Column)}


def spark_tree(sql: str) -> exp.Expression:
    """`sql` as Spark reads it, parsed; asserts no unknown function remains."""
    tree = sqlglot.parse_one(_spark_sql(sql), read="spark")
    unknown = {node.name.lower() for node in tree.find_all(exp.Anonymous)}
    assert unknown <= SPARK_BUILTINS_SQLGLOT_LACKS, unknown
    return tree


@pytest.mark.parametrize("blocks", [None, {3: 1, 12: 5}])
@pytest.mark.parametrize("public", [("sex", "age band"), ()])
def test_audit_plans_are_spark_sql(blocks, public):
    spec = rp_sql.RandomizeSpec(sensitive="job", p=0.5, public=public, nulls="drop")
    args = ("src_view", spec, 4, 0.5, 0.1, "exact", blocks)
    spark_tree(rp_sql.audit_sql(*args, dialect=SPARK, tails_relation="", cases_only=True))
    spark_tree(rp_sql.audit_sql(*args, dialect=SPARK, tails_relation="", counts_only=True))
    spark_tree(rp_sql.audit_sql(*args, dialect=SPARK, tails_relation="", cases_only=True, counts_relation="counts_view"))
    for options in (dict(), dict(ordered=False, group_verdicts=False), dict(failing_designs=(12,)),
                    dict(ordered=False, group_verdicts=False, counts_relation="counts_view")):
        spark_tree(rp_sql.audit_sql(*args, dialect=SPARK, tails_relation="tails_view", **options))
    pp = privacy.PrivacyParams(0.5, 4, 0.5, 0.1, "exact")
    groups = "SELECT group_size, trials, enforced, 1 AS values_present, 0.5 AS worst_chernoff, 0.5 AS worst_exact, " \
             "true AS passes FROM rows_view"
    spark_tree(rp_plan.judged_groups(groups, [], {(3, 1): 0.2, (12, 5): 0.05}, pp))


@pytest.mark.parametrize("options", [dict(), dict(group_by=("sex",), where_sql="`sex` LIKE 'F%'"),
                                     dict(values=["CAST('a' AS string)", "CAST('b' AS string)"]),
                                     dict(group_by=("sex",), design=(rp_sql.trials_values({3: 1, 9: 2}),
                                                                     ("sex", "race")))])
def test_estimates_plan_is_spark_sql(options):
    domain = rp_sql.domain_literal(["a", "b", "c"], "string", SPARK)
    spark_tree(rp_sql.estimates_sql("rel_view", "job", "0.5", domain, dialect=SPARK, **options))


@pytest.mark.parametrize("query", [
    "SELECT sex, COUNT(*) FROM people WHERE job = 'a' AND race IN ('x', 'y') GROUP BY sex",
    "SELECT job, COUNT(*) AS n FROM people WHERE sex = 'F' GROUP BY job ORDER BY n DESC LIMIT 2",
    "SELECT sex, race, COUNT(*) FROM people WHERE job IN ('a', 'b') GROUP BY sex, race HAVING COUNT(*) > 3",
    "SELECT race, COUNT(*) FROM people WHERE race NOT LIKE 'W%' GROUP BY race",
    "SELECT sex, SUM(age) AS total FROM people WHERE job IN ('a', 'b') GROUP BY sex ORDER BY total DESC",
    "SELECT job, AVG(age) FROM people WHERE sex = 'F' GROUP BY job HAVING AVG(age) > 30"])
@pytest.mark.parametrize("enforced", [False, True])
def test_rewritten_queries_are_spark_sql(query, enforced):
    meta = ReleaseMeta(table_name="people_randomized", release_name="people", sensitive="job", sensitive_type="string",
                       public=("sex", "race", "age"), p=0.5, domain=("a", "b", "c"), enforced=enforced, epsilon=0.5,
                       delta=0.1, test="exact", trials_sql="trials_view AS __rwn_tr" if enforced else None)
    spark_tree(analyst.rewrite(query, meta, "rel_view", SPARK).sql)


@pytest.mark.parametrize("options", [
    dict(columns=("x y", 'we"ird', "it's")),                                    # the grid: all three columns
    dict(columns=("x y", 'we"ird'), eps=0.1, k=0, on_missing="drop", drop=("d",)),
    dict(columns=("x y", 'we"ird', "it's", "w", "c"), categorical=("c",), strata=("wo'man",)),  # grid_order
])
def test_rwn_plan_is_spark_sql(options):
    """Every statement the Spark driver runs for RWN (the setup steps, one search level, the
    level figures, the neighbourhoods, the release and the donors), rendered with the Spark
    dialect, parses as Spark SQL and calls only functions sqlglot knows for Spark or the
    Spark built-ins listed (checked to exist in tests/engines/test_spark.py)."""
    from rwn_sql.rwn.steps import RWNPlan
    from rwn_sql.rwn.spec import RWNSpec
    spec = RWNSpec(id="rid", **options)
    plan = RWNPlan("src_view", spec)
    key = "(SELECT k FROM key_view)"
    numbering = [make("v0") for _, make in plan.numbering()]
    assert len(numbering) == 2          # Spark ranks the ids in two parallel steps, not one window
    statements = [*numbering, plan.staged(), plan.settings("v1"), plan.points("v1", "v2"), plan.seed("v3"),
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
