"""The rwn_query SQL macro (issue 12, point 3): inside DuckDB, after rwn_sql.install(con), an
analyst's count query gets the same answer as rwn_sql.query, over a release ATTACHed and named
in FROM or over the release file opened itself (read-only)."""
import duckdb
import pytest

import rwn_sql
from helpers.data import ADULT

PUBLIC = ["sex", "race", "relationship"]
QUERIES = [
    "SELECT COUNT(*) FROM adult WHERE occupation = 'Sales'",
    "SELECT sex, COUNT(*) FROM adult WHERE occupation = 'Sales' AND race IN ('Black', 'Other') GROUP BY sex",
    "SELECT race, occupation, COUNT(*) AS n FROM adult WHERE sex = 'Female' GROUP BY race, occupation",
    "SELECT relationship, COUNT(*) AS n FROM adult WHERE (relationship LIKE '%band' OR race NOT LIKE 'W%') "
    "AND occupation IN ('Sales', 'Tech-support') GROUP BY relationship ORDER BY n DESC LIMIT 2",
    "SELECT occupation, COUNT(*) FROM adult GROUP BY occupation HAVING COUNT(*) > 1000 ORDER BY occupation",
    "SELECT sex, COUNT(*) FROM adult GROUP BY sex",                                   # exact: no SA
    "SELECT COUNT(*) FROM adult WHERE sex = 'Female' AND race = 'White' AND relationship = 'Wife' "
    "AND occupation = 'Sales'",                                                       # micro reconstruction
]


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """An enforced release: its rewritten queries also read the trials table."""
    path = tmp_path_factory.mktemp("macro") / "adult.duckdb"
    with duckdb.connect() as con:
        rwn_sql.release(con, str(ADULT), str(path), "occupation", 0.5, public=PUBLIC, enforce=(0.5, 0.05),
                        test="exact", seed=5)
    return str(path)


def python_answer(sql, path):
    with duckdb.connect() as con:
        rel, _ = rwn_sql.query(con, sql, release=path)
        return [d[0] for d in rel.description], rel.fetchall()


def macro_answer(con, sql):
    cursor = con.execute("SELECT * FROM rwn_query(?)", [sql])
    return [d[0] for d in cursor.description], cursor.fetchall()


def same(a, b):
    """Same columns and rows: the same SQL over the same rows, so equal up to the rounding of
    sums that DuckDB's threads may add in another order (1e-12 relative)."""
    assert a[0] == b[0]
    assert len(a[1]) == len(b[1])
    for x, y in zip(a[1], b[1]):
        assert list(x) == [pytest.approx(v, rel=1e-12, abs=1e-9) if isinstance(v, float) else v for v in y]


@pytest.mark.parametrize("sql", QUERIES)
def test_attached_release_answers_as_python(release, sql):
    con = duckdb.connect()
    rwn_sql.install(con)
    con.execute(f"ATTACH '{release}' AS rel (READ_ONLY)").fetchall()
    same(macro_answer(con, sql.replace("FROM adult", "FROM rel.adult")), python_answer(sql, release))
    con.close()


def test_release_file_opened_itself(release):
    """Opened read-only (as a BI tool or the duckdb shell would): install() writes nothing to the
    file (TEMP macros) and FROM names the release or its randomized table."""
    con = duckdb.connect(release, read_only=True)
    rwn_sql.install(con)
    for sql in QUERIES[1], QUERIES[4]:
        same(macro_answer(con, sql), python_answer(sql, release))
        same(macro_answer(con, sql.replace("FROM adult", "FROM adult_randomized")), python_answer(sql, release))
    micro = macro_answer(con, QUERIES[-1])
    assert micro[1][0][micro[0].index("micro_reconstruction")] is True
    con.close()


def test_refusals_and_missing_release(release):
    con = duckdb.connect()
    rwn_sql.install(con)
    with pytest.raises(duckdb.Error, match="holds no release.*ATTACH the release file"):
        con.execute("SELECT * FROM rwn_query('SELECT COUNT(*) FROM adult')").fetchall()
    con.execute(f"ATTACH '{release}' AS rel (READ_ONLY)").fetchall()
    with pytest.raises(duckdb.Error, match="unsupported query: subqueries"):
        con.execute("SELECT * FROM rwn_query('SELECT COUNT(*) FROM rel.adult WHERE sex IN (SELECT 1)')").fetchall()
    with pytest.raises(duckdb.Error, match="unsupported query: .*occupation LIKE"):
        con.execute("SELECT * FROM rwn_query('SELECT COUNT(*) FROM rel.adult WHERE occupation LIKE ''S%''')"
                    ).fetchall()
    con.close()


def test_no_release_is_told_by_the_error_type(release):
    """A database without rwn_release_metadata raises NoReleaseMetadata, which rwn_query catches
    by type; a release without the table asked for raises the NotARelease it always did, passed on."""
    from rwn_sql.rp.release.release_db import NoReleaseMetadata, NotARelease, read_metadata
    con = duckdb.connect()
    with pytest.raises(NoReleaseMetadata) as caught:
        read_metadata(con)
    assert isinstance(caught.value, NotARelease)
    assert str(caught.value) == "not a release database: it has no rwn_release_metadata table"
    con.execute(f"ATTACH '{release}' AS rel (READ_ONLY)").fetchall()
    with pytest.raises(NotARelease) as caught:
        read_metadata(con, "nosuch", "rel")
    assert not isinstance(caught.value, NoReleaseMetadata)
    rwn_sql.install(con)
    with pytest.raises(duckdb.Error, match="the release has no table 'nosuch'"):
        con.execute("SELECT * FROM rwn_query('SELECT COUNT(*) FROM rel.nosuch')").fetchall()
    con.close()


def test_comment_explains_the_macro():
    con = duckdb.connect()
    rwn_sql.install(con)
    (comment,), = con.execute("SELECT comment FROM duckdb_functions() WHERE function_name = 'rwn_query' "
                              "AND function_type = 'table_macro'").fetchall()
    assert "rwn_sql.query" in comment and "ATTACH" in comment and "micro_reconstruction" in comment
    con.close()


def test_every_macro_comment_names_its_parameters():
    """duckdb_functions() explains every rwn_* table macro: its comment names each parameter."""
    con = duckdb.connect()
    rwn_sql.install(con)
    macros = con.execute("SELECT function_name, comment, parameters FROM duckdb_functions() "
                         "WHERE function_name LIKE 'rwn_%' AND function_type = 'table_macro'").fetchall()
    assert {m[0] for m in macros} == {"rwn_perturb", "rwn_neighborhoods", "rwn_neighbor_pairs", "rwn_randomize",
                                      "rwn_audit", "rwn_estimates", "rwn_query"}
    for name, comment, parameters in macros:
        missing = [p for p in parameters if p.strip('"') not in (comment or "")]
        assert not missing, (name, missing)
    con.close()


def test_estimates_macro_reads_the_published_design(release):
    """rwn_estimates over the randomized table of an enforced release database, without epsilon /
    delta / test, gives the block-aware errors of rwn_sql.estimates with enforce= (the published
    rwn_release_trials equal the design recomputed from the group sizes); a p other than the
    published one is refused."""
    from rwn_sql.rp import api as rp
    domain = [r[0] for r in duckdb.connect(release, read_only=True).execute(
        "SELECT unnest(domain) FROM rwn_release_metadata").fetchall()]
    con = duckdb.connect()
    rwn_sql.install(con)
    con.execute(f"ATTACH '{release}' AS rel (READ_ONLY)").fetchall()
    python = rp.estimates(con, "rel.adult_randomized", "occupation", 0.5, domain, group_by=["sex"], public=PUBLIC,
                          enforce=(0.5, 0.05), test="exact").fetchall()
    macro = con.execute("SELECT * FROM rwn_estimates('rel.adult_randomized', 'occupation', 0.5, ?, "
                        "group_by := ['sex'])", [domain]).fetchall()
    assert macro == python and len(python) == 2 * len(domain)
    con.execute("CREATE TABLE copy AS SELECT * FROM rel.randomized_rows_not_counts.adult_randomized").fetchall()     # no metadata: independent
    plain = con.execute("SELECT * FROM rwn_estimates('copy', 'occupation', 0.5, ?, group_by := ['sex'], enforced := false)",
                        [domain]).fetchall()
    assert [r[:5] for r in plain] == [r[:5] for r in python]
    assert sum(r[5] for r in plain) < sum(r[5] for r in python)         # blocks move together: larger errors
    with pytest.raises(duckdb.Error, match="published with p = 0.5, not 0.4"):
        con.execute("SELECT * FROM rwn_estimates('rel.adult_randomized', 'occupation', 0.4, ?)", [domain]).fetchall()
    con.close()


def test_macro_sources_view_and_temp(tmp_path):
    """A (persistent) view is a source like a table: rwn_estimates over a view of the released
    rows equals rwn_sql.estimates over it, and so does the macro over a TEMP table or TEMP view
    (which the macros' planner, on a second connection, does not see)."""
    from rwn_sql.rp import api as rp
    con = duckdb.connect(str(tmp_path / "work.duckdb"))
    rwn_sql.install(con)
    con.execute(f"CREATE TABLE adult AS SELECT * FROM read_csv('{ADULT}') LIMIT 2000").fetchall()
    con.execute("CREATE VIEW adult_view AS SELECT sex, race, occupation FROM adult").fetchall()
    domain = [r[0] for r in con.execute("SELECT DISTINCT occupation FROM adult ORDER BY 1").fetchall()]
    python = rp.estimates(con, "adult_view", "occupation", 0.5, domain, group_by=["sex"], enforce=None).fetchall()
    macro = con.execute("SELECT * FROM rwn_estimates('adult_view', 'occupation', 0.5, ?, group_by := ['sex'], enforced := false)",
                        [domain]).fetchall()
    assert macro == python and len(python) == 2 * len(domain)
    con.execute("CREATE TEMP TABLE adult_temp AS SELECT sex, race, occupation FROM adult").fetchall()
    con.execute("CREATE TEMP VIEW adult_temp_view AS SELECT sex, race, occupation FROM adult").fetchall()
    for name in ("adult_temp", "adult_temp_view"):       # planned unseen (tests/macros/test_macros_temp.py)
        assert con.execute(f"SELECT * FROM rwn_estimates('{name}', 'occupation', 0.5, ?, group_by := ['sex'], enforced := false)",
                           [domain]).fetchall() == python
    con.close()
