"""Issue 23 point 3: a release database that cannot be misread, and a randomized table that
carries its design. Layout (the randomized rows in their own schema, the estimate views in
main), the sensitive column's name in every view, the non-negative estimate against an
independent numpy projection, and the recorded design of randomize(into=) read by estimates."""
import duckdb
import numpy as np
import pytest

import rwn_sql
from rwn_sql import RWNError

JOBS = ["Exec", "Sales", "Tech", "Care"]


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """An enforced release database and the original table (groups of 12 to 48 records)."""
    d = tmp_path_factory.mktemp("layout")
    con = duckdb.connect()
    con.execute("""CREATE TABLE people AS SELECT ['f', 'm'][1 + i % 2] AS sex, ['a', 'b', 'c'][1 + (i // 2) % 3] AS town,
        ['Exec', 'Sales', 'Tech', 'Care'][1 + (i * 7 + i // 5) % 4] AS job FROM range(240) r(i)""").fetchall()
    path = d / "rel.duckdb"
    rwn_sql.release(con, "people", str(path), "job", 0.4, public=["sex", "town"], seed=11, enforce=(0.9, 0.3),
                    test="chernoff")
    return con, path


def test_bi_listing_shows_estimate_views_first(made):
    """The default schema holds the estimate views and the metadata only; the randomized rows sit
    in schema randomized_rows_not_counts with a comment saying so. Before: adult_randomized was
    the one ordinary table of main."""
    _, path = made
    with duckdb.connect(str(path), read_only=True) as rel:
        main_tables = {t for t, in rel.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'")
                       .fetchall()}
        views = {v for v, in rel.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal AND "
                                         "schema_name = 'main'").fetchall()}
        rows = rel.execute("SELECT schema_name, table_name, comment FROM duckdb_tables() WHERE "
                           "schema_name <> 'main'").fetchall()
    assert main_tables == {"rwn_release_metadata", "rwn_release_trials"}
    assert views == {"people_cells", "people_estimates", "people_estimates_by_sex", "people_estimates_by_town"}
    assert [r[:2] for r in rows] == [("randomized_rows_not_counts", "people_randomized")]
    assert "NOT counts" in rows[0][2] and "BIASED" in rows[0][2]


def test_sensitive_column_keeps_its_name_in_every_view(made):
    """WHERE job = ... works on every view (before: the estimates views called it value)."""
    _, path = made
    with duckdb.connect(str(path), read_only=True) as rel:
        for view in ("people_cells", "people_estimates", "people_estimates_by_sex", "people_estimates_by_town"):
            columns = [c for c, *_ in rel.execute(f"DESCRIBE {view}").fetchall()]
            assert "job" in columns and "value" not in columns, view
            assert "nonnegative_estimate" in columns, view
            assert rel.execute(f"SELECT count(*) FROM {view} WHERE job = 'Sales'").fetchall()[0][0] > 0


def project(e, n):
    """Euclidean projection of e onto {x >= 0, sum x = n} by bisection on the shift tau
    (sum max(e - tau, 0) is decreasing in tau): another algorithm than the view's sort."""
    lo, hi = e.min() - n, e.max()
    for _ in range(200):
        tau = (lo + hi) / 2
        if np.maximum(e - tau, 0).sum() > n:
            lo = tau
        else:
            hi = tau
    return np.maximum(e - (lo + hi) / 2, 0)


@pytest.mark.parametrize("view, keys", [("people_cells", ["sex", "town"]), ("people_estimates_by_town", ["town"]),
                                        ("people_estimates", [])])
def test_nonnegative_estimate_is_the_projection(made, view, keys):
    """Per group the non-negative estimate is the projection of the unbiased estimates onto the
    scaled simplex (numpy reference, to 1e-9 of the group size), never negative, sums to
    group_size, and equals the unbiased estimate in groups without a negative one. The fixture's
    small groups and p = 0.4 give negative estimates, so the clamp is exercised."""
    _, path = made
    with duckdb.connect(str(path), read_only=True) as rel:
        rows = rel.execute(f"SELECT {''.join(k + ', ' for k in keys)}group_size, estimate, nonnegative_estimate "
                           f"FROM {view}").fetchall()
    groups = {}
    for r in rows:
        groups.setdefault(tuple(r[:len(keys)]), []).append(r[len(keys):])
    negative = 0
    for group in groups.values():
        n = group[0][0]
        e = np.array([g[1] for g in group])
        x = np.array([g[2] for g in group])
        negative += int((e < 0).any())
        assert len(group) == len(JOBS)
        assert np.allclose(x, project(e, n), atol=1e-9 * n, rtol=0)
        assert (x >= 0).all() and x.sum() == pytest.approx(n, abs=1e-9 * n)
        if (e >= 0).all():
            assert np.allclose(x, e, atol=1e-9 * n, rtol=0)
    if view == "people_cells":
        assert negative > 0, "no group with a negative estimate: the clamp is untested"


def test_column_comments_state_the_caveat(made):
    _, path = made
    with duckdb.connect(str(path), read_only=True) as rel:
        comments = [c for c, in rel.execute("SELECT comment FROM duckdb_columns() WHERE column_name = "
                                            "'nonnegative_estimate'").fetchall()]
    assert len(comments) == 4 and all("BIASED but never negative" in c for c in comments)


def test_old_layout_release_still_opens(made, tmp_path):
    """A release written before the rows' own schema (the table beside the metadata) is read by
    the analysts' query as before."""
    _, path = made
    old = tmp_path / "old.duckdb"
    import shutil
    shutil.copy(path, old)
    with duckdb.connect(str(old)) as con:
        con.execute("CREATE TABLE people_randomized AS FROM randomized_rows_not_counts.people_randomized")
        con.execute("DROP SCHEMA randomized_rows_not_counts CASCADE")
    query = "SELECT town, COUNT(*) FROM people WHERE job = 'Sales' GROUP BY town"
    new_rows = rwn_sql.query(duckdb.connect(), query, release=str(path))[0].fetchall()
    assert rwn_sql.query(duckdb.connect(), query, release=str(old))[0].fetchall() == new_rows


@pytest.fixture
def enforced_table(made):
    con, _ = made
    rwn_sql.randomize(con, "people", "job", 0.4, public=["sex", "town"], seed=5, enforce=(0.9, 0.3),
                      test="chernoff", into="released", replace=True)
    return con


def test_estimates_read_the_recorded_design(enforced_table):
    """Over a table written by randomize(into=, enforce=), estimates without design arguments
    equal those with them, and differ from the independent-trial errors (before: they were the
    independent-trial ones, silently)."""
    con = enforced_table
    design = dict(public=["sex", "town"], enforce=(0.9, 0.3), test="chernoff")
    bare = rwn_sql.estimates(con, "released", "job", group_by=["sex"]).fetchall()
    given = rwn_sql.estimates(con, "released", "job", 0.4, JOBS, group_by=["sex"], **design).fetchall()
    assert bare == given
    con.execute("CREATE OR REPLACE TABLE unrecorded AS FROM released").fetchall()
    independent = rwn_sql.estimates(con, "unrecorded", "job", 0.4, JOBS, group_by=["sex"], enforce=None).fetchall()
    assert [r[:5] for r in independent] == [r[:5] for r in bare]          # the same estimates
    assert sum(r[5] for r in bare) > sum(r[5] for r in independent)      # blocks of >1 record: larger errors
    rwn_sql.install(con)
    macro = con.execute("SELECT * FROM rwn_estimates('released', 'job', NULL, NULL, group_by := ['sex'])").fetchall()
    assert macro == bare


def test_the_macro_writes_a_table_recording_its_design(enforced_table):
    """SELECT rwn_randomize_into(...) writes the rows randomize(into=) writes for the same key and
    parameters, with the same design in the table's COMMENT, so rwn_estimates and estimates need
    no design arguments (before, the macros could only return rows, which record nothing). EXPLAIN
    writes nothing; an existing table needs "replace" := true; a TEMP source, which the macro's
    own connection cannot see, and a TEMP target are refused naming that."""
    con = enforced_table
    rwn_sql.install(con)
    call = ("rwn_randomize_into('by_macro', 'people', 'job', 0.4, public := ['sex', 'town'], seed := 5, "
            "epsilon := 0.9, delta := 0.3, test := 'chernoff'{})")
    con.execute("EXPLAIN SELECT " + call.format("")).fetchall()
    tables = "SELECT table_name, comment FROM duckdb_tables() WHERE table_name IN ('by_macro', 'released') ORDER BY 1"
    assert [t for t, _ in con.execute(tables).fetchall()] == ["released"]
    (line,), = con.execute("SELECT " + call.format("")).fetchall()
    assert line == "by_macro: 240 randomized rows; the design is recorded in its COMMENT"
    (_, by_macro), (_, by_python) = con.execute(tables).fetchall()
    assert by_macro == by_python and "rwn_sql design v1:" in by_macro
    rows = "SELECT * FROM {} ORDER BY ALL"
    assert con.execute(rows.format("by_macro")).fetchall() == con.execute(rows.format("released")).fetchall()
    given = rwn_sql.estimates(con, "released", "job", 0.4, JOBS, group_by=["sex"], public=["sex", "town"],
                              enforce=(0.9, 0.3), test="chernoff").fetchall()
    assert con.execute("SELECT * FROM rwn_estimates('by_macro', 'job', NULL, NULL, group_by := ['sex'])"
                       ).fetchall() == given == rwn_sql.estimates(con, "by_macro", "job", group_by=["sex"]).fetchall()
    with pytest.raises(duckdb.Error, match='already exists \\(pass "replace" := true'):
        con.execute("SELECT " + call.format("")).fetchall()
    con.execute("SELECT " + call.format(', "replace" := true')).fetchall()
    from rwn_sql.errors import OutputExists  # what the macro tells apart from other refusals
    with pytest.raises(OutputExists, match="table 'by_macro' already exists"):
        rwn_sql.randomize(con, "people", "job", 0.4, public=["sex", "town"], seed=5, into="by_macro")
    con.execute("CREATE TEMP TABLE people_temp AS FROM people").fetchall()
    with pytest.raises(duckdb.Error, match="does not see this connection's TEMP tables"):
        con.execute("SELECT " + call.format("").replace("'people'", "'people_temp'").replace("by_macro", "t2")
                    ).fetchall()
    with pytest.raises(duckdb.Error, match="is a TEMP table"):
        con.execute("SELECT " + call.format("").replace("'by_macro'", "'temp.t2'")).fetchall()
    con.execute("DROP TABLE by_macro").fetchall()


def test_estimates_refuse_without_a_design(enforced_table):
    """A table with no recorded design (a copy of the release) needs the design; leaving it out
    is refused, in Python and in the macro."""
    con = enforced_table
    con.execute("CREATE OR REPLACE TABLE unrecorded AS FROM released").fetchall()
    with pytest.raises(RWNError, match="records no design"):
        rwn_sql.estimates(con, "unrecorded", "job", 0.4, JOBS)
    rwn_sql.install(con)
    with pytest.raises(duckdb.Error, match="records no design"):
        con.execute("SELECT * FROM rwn_estimates('unrecorded', 'job', 0.4, ?)", [JOBS]).fetchall()


@pytest.mark.parametrize("given, message", [
    (dict(p=0.5), "published with p = 0.4"),
    (dict(enforce=None), "not enforce=None"),
    (dict(enforce=(0.5, 0.3)), r"enforced with \(0.9, 0.3\)"),
    (dict(test="exact"), "chernoff test"),
    (dict(domain=["Exec", "Sales", "Tech", "Other"]), "the domain"),
    (dict(public=["sex"]), "public columns"),
])
def test_recorded_and_passed_design_conflict(enforced_table, given, message):
    """An argument that contradicts the recorded design is an error naming it."""
    with pytest.raises(RWNError, match=message):
        rwn_sql.estimates(enforced_table, "released", "job", **given)


@pytest.mark.parametrize("comment, message", [
    ("rwn_sql design v1: {not json", "not valid JSON"),
    ("x\nrwn_sql design v1: {\"p\": 0.4}", "exactly the keys"),
    ("ALTER_BLOCKS", "records 1 blocks"),
    ("ALTER_P", "p = 7"),
])
def test_forged_or_altered_record_is_refused(enforced_table, comment, message):
    """A record that is malformed, or whose blocks do not match the table's group sizes, or whose
    values are out of range, is refused (its values reach SQL only as checked literals)."""
    con = enforced_table
    text = con.execute("SELECT comment FROM duckdb_tables() WHERE table_name = 'released'").fetchall()[0][0]
    if comment == "ALTER_BLOCKS":
        import re
        comment = re.sub(r'"blocks": \[\[.*\]\]', '"blocks": [[40, 1], [80, 1]]', text)
    elif comment == "ALTER_P":
        comment = text.replace('"p": 0.4', '"p": 7')
    con.execute(
        f"COMMENT ON TABLE released IS '{comment.replace(chr(39), chr(39) * 2)}'").fetchall()
    with pytest.raises(RWNError, match=message):
        rwn_sql.estimates(con, "released", "job")


def test_a_release_s_rows_are_an_input_by_schema_and_name(made, tmp_path):
    """'file.duckdb:schema.table' reaches a table outside the main schema (a release's randomized
    rows in randomized_rows_not_counts), so the CLI can read what a release holds; a view there
    is still refused, and a table of main whose name holds a dot is still found by its name.
    Before: "database file ... has no table 'randomized_rows_not_counts.people_randomized'"."""
    con, path = made
    from rwn_sql.engines import sources
    from rwn_sql.rp.release import release_db
    with duckdb.connect() as c:
        src = sources.resolve_source(c, f"{path}:{release_db.ROWS_SCHEMA}.people_randomized")
        assert c.execute(f"SELECT count(*) FROM {src.sql}").fetchall() == [(240,)]
    copy = tmp_path / "copy.duckdb"
    with duckdb.connect(str(copy)) as c:
        c.execute('CREATE SCHEMA s').fetchall()
        c.execute('CREATE VIEW s.v AS SELECT 1 AS x').fetchall()
        c.execute('CREATE TABLE "s.t" AS SELECT 2 AS x').fetchall()
    with duckdb.connect() as c:
        with pytest.raises(RWNError, match="is a view, not a table"):
            sources.resolve_source(c, f"{copy}:s.v")
        src = sources.resolve_source(c, f"{copy}:s.t")
        assert c.execute(f"SELECT x FROM {src.sql}").fetchall() == [(2,)]
        with pytest.raises(RWNError, match="has no table 'w' in schema 's'"):
            sources.resolve_source(c, f"{copy}:s.w")
