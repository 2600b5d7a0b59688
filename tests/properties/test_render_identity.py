"""Every SQL text the package sends to an engine, over a grid of calls for every method, is
byte-identical to the corpus in tests/golden/render/ (regenerated with RWN_UPDATE_GOLDEN=1).

The corpus is what a code move must not change: moving a builder, splitting a function or
renaming a module leaves these texts as they are, and a change that alters one shows up here
as a diff of the statement, not as a subtle difference in a release. DuckDB's own query log
records every statement of the connection (cursors and the macros' UDF included); on Spark,
every text the backend hands to `SparkSession.sql`. Per-run names (staging tokens, temporary
paths) are replaced by placeholders before the comparison."""
import difflib
import os
import re
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pytest

import rwn_sql
from helpers.data import ADULT, BODYFAT
from rwn_sql import limits
from rwn_sql.rwn import run as rwn

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "render"
KEY = "render corpus key, long enough to use"
SEPARATOR = "\n-- ----------------------------------------------------------------- statement\n"


def normalize(text: str, tmp: Path) -> str:
    """A statement without what differs from run to run: the test's temporary folder, hex
    tokens (8 or more hex digits after '_' or '-') of staged names, scratch files and DuckDB's own
scan names, key scope ids (16 hex digits quoted), process ids in scratch names, and the
    per-process counter DuckDB appends to the scan name of a Python object (it depends on which
    tests ran before)."""
    text = text.replace(str(tmp), "<tmp>")
    text = re.sub(r"(?<=[_-])[0-9a-f]{8,}(?![0-9a-zA-Z])|(?<=')[0-9a-f]{16}(?=')", "<hex>", text)
    text = re.sub(r"(__duckdb_source_<hex>)_\d+", r"\1_<n>", text)
    return re.sub(r"\b\d{1,8}-<hex>", "<pid>-<hex>", text)


# A number the package computed with numpy or scipy (the design weights of the reconstruction-
# privacy test) and wrote with repr: its last digits follow the library version's rounding, not
# the code, so such numbers are compared to 12 significant digits. Shorter numbers (parameters,
# bounds, literals) stay byte-exact.
COMPUTED_NUMBER = re.compile(r"(?<![\w.])-?[0-9]+\.[0-9]+(?:e[-+]?[0-9]+)?(?![\w.])")


def rounded(text: str) -> str:
    def twelve_digits(m):
        digits = sum(c.isdigit() for c in m.group(0).split("e")[0].lstrip("-0."))
        return m.group(0) if digits <= 12 else f"{float(m.group(0)):.12g}"
    return COMPUTED_NUMBER.sub(twelve_digits, text)


def compare(name: str, statements: list[str], tmp: Path) -> None:
    text = SEPARATOR.join(normalize(s, tmp) for s in statements) + "\n"
    path = GOLDEN / f"{name}.sql"
    if os.environ.get("RWN_UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    expected = path.read_text(encoding="utf-8")
    if rounded(text) != rounded(expected):
        diff = "".join(list(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                                 f"golden/{name}.sql", "rendered", n=2))[:80])
        pytest.fail(f"the SQL of {name!r} differs from tests/golden/render/{name}.sql:\n{diff}")


def logged(run, tmp: Path) -> list[str]:
    """The statements `run(con, tmp)` sends to a fresh DuckDB connection, in order, then those it
    returns (statements run on connections of their own)."""
    con = duckdb.connect(config={"threads": 2, "memory_limit": "1GB"})
    con.execute("CREATE TABLE bodyfat AS SELECT * FROM read_csv(?)", [str(BODYFAT)]).fetchall()
    con.execute("CREATE TABLE adult AS SELECT * FROM read_csv(?) LIMIT 3000", [str(ADULT)]).fetchall()
    con.execute("CALL enable_logging('QueryLog')").fetchall()
    try:
        elsewhere = run(con, tmp) or []
        con.execute("CALL disable_logging()").fetchall()
        rows = con.execute("SELECT message FROM duckdb_logs() WHERE type = 'QueryLog'").fetchall()
    finally:
        con.close()
    return [r[0] for r in rows if r[0] != "CALL disable_logging()"] + list(elsewhere)


def with_categories(con) -> str:
    rng = np.random.default_rng(5)
    n = 241
    frame = pa.table({"a": rng.random(n), "b": rng.integers(0, 6, n).astype(float), "c": rng.random(n),
                      "d": rng.random(n), "e": rng.random(n), "colour": rng.choice(["red", "blue", "green"], n),
                      "region": rng.choice(["north", "south"], n), "w": rng.random(n) + 0.5,
                      "rid": np.arange(n, 0, -1)})
    con.register("__frame", frame)
    con.execute("CREATE TABLE mixed AS SELECT *, CASE WHEN rid % 17 = 0 THEN NULL ELSE c END AS gappy FROM __frame")
    con.unregister("__frame")
    return "mixed"


def rwn_calls(con, tmp):
    cols = ["Age", "Weight", "Height"]
    rwn_sql.perturb(con, "bodyfat", cols, key=KEY).fetchall()
    rwn_sql.perturb(con, "bodyfat", cols, k=3, eps=0.3, q=0.8, scale="zscore", key=KEY, order="input").fetchall()
    rwn_sql.perturb(con, "bodyfat", ["Age", "Weight", "Height", "Chest", "Abdomen"], eps=0.2, key=KEY).fetchall()
    rwn_sql.neighborhoods(con, "bodyfat", cols, eps=0.25).fetchall()
    rwn_sql.neighborhoods(con, "bodyfat", cols, k=4, pairs=True).fetchall()
    rwn_sql.donors(con, "bodyfat", cols, eps=0.1, key=KEY).fetchall()
    rwn_sql.perturb(con, "bodyfat", cols, eps=0.1, key=KEY, into="bodyfat_release")
    rwn_sql.row_counts(con, "bodyfat", "bodyfat_release")
    table = with_categories(con)
    rwn_sql.perturb(con, table, ["a", "b", "colour"], categorical=["colour"], strata=["region"], eps=0.1,
                    key=KEY).fetchall()
    rwn_sql.perturb(con, table, ["a", "b", "colour"], categorical=["colour"], weight=0.5, id="rid", key=KEY).fetchall()
    rwn_sql.perturb(con, table, ["a", "gappy"], on_missing="drop", key=KEY).fetchall()
    rwn_sql.perturb(con, table, ["a", "b", "c", "d", "e"], eps=0.15, key=KEY).fetchall()


def rwn_paths(con, tmp):
    """The ball path and the search in steps (level by level, and chunked), forced."""
    cols = ["Age", "Weight", "Height"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rwn, "ball_path", lambda be, src, spec, estimate=None: 2 if spec.eps > 0 else None)
        rwn_sql.perturb(con, "bodyfat", cols, eps=0.3, key=KEY).fetchall()
    with limits.use(RECURSIVE_BYTES_PER_RECORD=10 ** 15, LEVEL_SHARE=1.0):
        rwn_sql.perturb(con, "bodyfat", cols, key=KEY).fetchall()
        with limits.use(LEVEL_SHARE=20_000 / (1 << 30), HASHED_BYTES_PER_POINT=0):
            rwn_sql.perturb(con, "bodyfat", cols, eps=0.05, key=KEY).fetchall()


def rp_calls(con, tmp):
    public = ["sex", "race"]
    rwn_sql.randomize(con, "adult", "occupation", p=0.5, public=public, key=KEY).fetchall()
    rwn_sql.randomize(con, "adult", "occupation", p=0.45, public=public, enforce=(0.5, 0.1), test="exact",
                      key=KEY, into="adult_rel")
    rwn_sql.randomize(con, "adult", "occupation", p=0.6, public=["sex", "relationship"], enforce=(0.5, 0.1),
                      test="chernoff", l_diversity=1, key=KEY).fetchall()
    rwn_sql.audit(con, "adult", "occupation", p=0.5, public=public, epsilon=0.5, delta=0.1, test="exact")
    rwn_sql.audit(con, "adult", "occupation", p=0.5, public=["sex", "education"], epsilon=0.5, delta=0.05,
                  enforce=True, l_diversity=1)
    rwn_sql.estimates(con, "adult_rel", "occupation", group_by=["sex"]).fetchall()
    rwn_sql.estimates(con, "adult_rel", "occupation", values=["Sales", "Tech-support"],
                      where="race = 'White'").fetchall()
    release = tmp / "release.duckdb"
    rwn_sql.release(con, "adult", str(release), "occupation", p=0.45, public=public + ["age"],
                    enforce=(0.5, 0.1), key=KEY, rwn={"columns": ["age"], "k": 5, "eps": 0.1}, l_diversity=1)
    rewritten = []        # run on the query's own connection, which the log does not see
    for text in ("SELECT sex, COUNT(*) FROM adult WHERE occupation = 'Sales' GROUP BY sex",
                 "SELECT occupation, COUNT(*) FROM adult WHERE race IN ('White', 'Black') GROUP BY occupation",
                 "SELECT race, SUM(age) FROM adult WHERE occupation IN ('Sales', 'Craft-repair') GROUP BY race",
                 "SELECT AVG(age) FROM adult WHERE occupation = 'Sales' AND sex = 'Female'"):
        relation, plan = rwn_sql.query(con, text, release=str(release))
        relation.fetchall()
        rewritten.append(plan.sql)
    return rewritten


def macro_calls(con, tmp):
    rwn_sql.install(con)
    con.sql(f"SELECT * FROM rwn_perturb('bodyfat', ['Age', 'Weight'], key := '{KEY}')").fetchall()
    con.sql(f"SELECT * FROM rwn_randomize('adult', 'occupation', 0.5, public := ['sex', 'race'], "
            f"key := '{KEY}')").fetchall()
    con.sql(f"SELECT rwn_randomize_into('adult_macro', 'adult', 'occupation', 0.5, public := ['sex', 'race'], "
            f"key := '{KEY}')").fetchall()
    con.sql("SELECT * FROM rwn_estimates('adult_macro', 'occupation', NULL, NULL)").fetchall()


def unseen_macro_calls(con, tmp):
    """The statements the macros plan for TEMP sources, which their planner cannot see: the checks
    that read the data are written into the statement (returned by the planning functions, which
    query() runs without logging them)."""
    rwn_sql.install(con)
    con.execute("CREATE TEMP TABLE adult_t AS SELECT row_number() OVER () AS rid, sex, race, education, "
                "occupation, age FROM adult").fetchall()
    con.execute("CREATE TEMP VIEW adult_v AS SELECT sex, race, occupation FROM adult_t").fetchall()
    null, key = "NULL", f"'{KEY}'"
    races = "['White', 'Black', 'Asian-Pac-Islander', 'Amer-Indian-Eskimo', 'Other']"
    randomize = [  # source, sensitive, p, public, domain, key, seed, epsilon, delta, test, nulls, id, l, top share
        ["'adult_v'", "'occupation'", "0.5", null, null, key, null, null, null, "'exact'", "'error'", null, null, null],
        ["'adult_t'", "'occupation'", "0.45", "['sex', 'race']", null, key, null, "0.5", "0.1", "'exact'", "'error'",
         "'rid'", null, null],
        ["'adult_t'", "'race'", "0.6", "['sex']", races, key, null, null, null, "'exact'", "'drop'", "'rid'", "2", "0.9"],
        ["'adult_v'", "'occupation'", "0.45", null, null, key, null, "0.5", "0.1", "'chernoff'", "'drop'", null,
         null, null],
    ]
    audit = [  # source, sensitive, p, epsilon, delta, public, domain, test, enforce, nulls
        ["'adult_v'", "'occupation'", "0.5", "0.5", "0.1", null, null, "'exact'", "false", "'error'"],
        ["'adult_t'", "'race'", "0.6", "0.5", "0.1", "['sex']", races, "'exact'", "true", "'error'"],
        ["'adult_v'", "'occupation'", "0.45", "0.5", "0.1", "['sex', 'race']", null, "'chernoff'", "true", "'drop'"],
    ]
    con.execute("CREATE TEMP TABLE released_t AS SELECT sex, race, occupation FROM adult_t").fetchall()
    occupations = [r[0] for r in con.execute("SELECT DISTINCT occupation FROM adult_t ORDER BY 1").fetchall()]
    domain = "[" + ", ".join("'" + v.replace("'", "''") + "'" for v in occupations) + "]"
    white = "'race = ''White'''"
    estimates = [  # release, sensitive, p, domain, group_by, where, values, public, epsilon, delta, test, enforced
        ["'released_t'", "'occupation'", "0.5", domain, null, null, null, null, null, null, null, "false"],
        ["'released_t'", "'occupation'", "0.5", domain, "['sex']", white, "['Sales', 'Tech-support']",
         "['sex', 'race']", null, null, null, "false"],
        ["'released_t'", "'occupation'", "0.45", domain, "['race']", null, null, "['sex', 'race']", "0.5", "0.1",
         "'exact'", null],
    ]
    texts = []
    for function, calls in (("rwn_randomize_sql", randomize), ("rwn_audit_sql", audit),
                            ("rwn_estimates_sql", estimates)):
        for args in calls:
            texts.append(con.execute(f"SELECT {function}({', '.join(args)})").fetchone()[0])
    return texts


def baseline_calls(con, tmp):
    cols = ["Age", "Weight", "Height"]
    rwn_sql.rank_swap(con, "bodyfat", cols, 10, key=KEY).fetchall()
    rwn_sql.mdav(con, "bodyfat", cols, k=3).fetchall()
    rwn_sql.perturb(con, "bodyfat", cols, eps=0.2, key=KEY, order="input", into="bf_in_order")
    rwn_sql.evaluate(con, "bodyfat", "bf_in_order", cols)


DUCKDB_CASES = {"rwn": rwn_calls, "rwn_paths": rwn_paths, "rp": rp_calls, "macros": macro_calls,
                "macros_unseen": unseen_macro_calls,
                "baselines": baseline_calls}


@pytest.mark.parametrize("name", sorted(DUCKDB_CASES))
def test_duckdb_statements_equal_the_corpus(name, tmp_path):
    compare(f"duckdb_{name}", logged(DUCKDB_CASES[name], tmp_path), tmp_path)


def spark_calls(spark, tmp):
    """RWN and reconstruction privacy on Spark, from Parquet with an id (Spark has no input order)."""
    con = duckdb.connect()
    bodyfat, adult = tmp / "bodyfat.parquet", tmp / "adult.parquet"
    con.execute(f"COPY (SELECT row_number() OVER () AS rid, * FROM read_csv('{BODYFAT}')) TO '{bodyfat}'").fetchall()
    con.execute(f"COPY (SELECT row_number() OVER () AS rid, sex, race, occupation FROM read_csv('{ADULT}') "
                f"LIMIT 3000) TO '{adult}'").fetchall()
    con.close()
    cols = ["Age", "Weight", "Height", "Neck"]
    rwn_sql.perturb(spark, str(bodyfat), cols, k=5, eps=0.05, q=0.7, key=KEY, id="rid").collect()
    rwn_sql.neighborhoods(spark, str(bodyfat), cols[:3], id="rid").collect()
    rwn_sql.donors(spark, str(bodyfat), cols[:3], eps=0.1, key=KEY, id="rid").collect()
    kw = {"public": ["sex", "race"], "key": KEY, "id": "rid"}
    rwn_sql.randomize(spark, str(adult), "occupation", 0.6, **kw).collect()
    rwn_sql.randomize(spark, str(adult), "occupation", 0.45, enforce=(0.5, 0.1), **kw).collect()
    with rwn_sql.audit(spark, str(adult), "occupation", p=0.45, public=["sex", "race"],
                       epsilon=0.5, delta=0.1) as result:
        result.rows.collect()


@pytest.mark.spark
def test_spark_statements_equal_the_corpus(spark_if_installed, tmp_path, monkeypatch):
    spark = spark_if_installed
    texts = []
    real = spark.sql
    monkeypatch.setattr(spark, "sql", lambda text, *a, **kw: texts.append(text) or real(text, *a, **kw))
    def staged():
        return {t.name for t in spark.catalog.listTables() if t.name.startswith("__rwn_stage_")}
    before = staged()
    spark_calls(spark, tmp_path)
    # Tables left behind would change what later tests on the shared session see.
    assert staged() == before
    compare("spark", texts, tmp_path)
