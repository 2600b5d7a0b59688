"""The SQL macros over TEMP tables and TEMP views (issues 12 and 54). The macros plan on a cursor,
which does not see the caller's TEMP objects; the statement query() runs is bound where the caller
is, so it hands the TEMP source to the planner as it runs (reconstruction privacy: rp.temp_source)
or checks it itself (RWN: rwn.run.unseen_source). The same data as a
persistent table, a TEMP table and a TEMP view give the same rows for a fixed key, and bad input
over a TEMP source still gets an error naming the column."""
import duckdb
import numpy as np
import pytest

import rwn_sql
from helpers.datasets import correlated

KEY = "temp macro test key, long enough"


@pytest.fixture
def mcon(tmp_path):
    """A file database (so that the planner's cursor is a second client of the same data) with
    one table `base` and its TEMP copies."""
    con = duckdb.connect(str(tmp_path / "work.duckdb"))
    rwn_sql.install(con)
    yield con
    con.close()


def with_temp_copies(con, table: str) -> list[str]:
    """`table` (persistent), a TEMP table and a TEMP view holding the same rows in the same order."""
    con.execute(f"CREATE TEMP TABLE {table}_tt AS SELECT * FROM {table}").fetchall()
    con.execute(f"CREATE TEMP VIEW {table}_tv AS SELECT * FROM {table}").fetchall()
    return [table, f"{table}_tt", f"{table}_tv"]


def rows(con, call: str, name: str, params=None) -> list[tuple]:
    return con.execute(f"SELECT * FROM {call.format(src=name)}", params or []).fetchall()


def people(con, n=600, seed=1):
    """Ages (many ties), incomes, a city, and a record id 1..n listed in a shuffled order."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    income = np.round(rng.normal(40, 12, n), 1)
    city = rng.choice(["a", "b", "c"], n)
    rid = rng.permutation(n) + 1
    con.execute("CREATE TABLE people AS SELECT unnest(?) AS age, CAST(unnest(?) AS DECIMAL(6,1)) AS income, "
                "unnest(?) AS city, unnest(?) AS rid",
                [age.tolist(), income.tolist(), city.tolist(), rid.tolist()]).fetchall()


RWN_CALLS = [
    "rwn_perturb('{src}', ['age', 'income'], k := 4, key := '" + KEY + "')",
    "rwn_perturb('{src}', ['age', 'income', 'city'], categorical := ['city'], k := 3, eps := 0.05, q := 0.7, "
    "scale := 'zscore', key := '" + KEY + "', id := 'rid', \"drop\" := ['rid'])",
    "rwn_perturb('{src}', ['income'], strata := ['city'], k := 2, on_missing := 'drop', key := '" + KEY + "')",
    "rwn_neighborhoods('{src}', ['age', 'income'], k := 5, eps := 0.1)",
    "rwn_neighbor_pairs('{src}', ['age', 'city'], categorical := ['city'], k := 2, weight := 0.5)",
]


@pytest.mark.parametrize("call", RWN_CALLS)
def test_rwn_macros_same_rows_over_temp_table_and_view(mcon, call):
    people(mcon)
    persistent, *temps = with_temp_copies(mcon, "people")
    expected = rows(mcon, call, persistent)
    assert len(expected) >= 600
    for name in temps:
        assert rows(mcon, call, name) == expected, name


def test_rwn_macro_over_temp_skips_principal_axes_with_the_same_release(mcon):
    """6 correlated columns: the persistent table's plan grids on principal axes, the TEMP one's
    (no pre-pass) on the columns; the release is the same."""
    from rwn_sql.rwn import run as rwn
    from rwn_sql.engines.backend import backend_for
    data = correlated(400, 5)
    mcon.execute("CREATE TABLE corr AS SELECT " + ", ".join(f"unnest(?) AS {c}" for c in data),
                 [v.tolist() for v in data.values()]).fetchall()
    be = backend_for(mcon)
    spec = rwn_sql.RWNSpec(columns=tuple(data))
    assert rwn.grid_axes(be, rwn.check_source(be, "corr", spec), spec) is not None
    call = "rwn_perturb('{src}', " + str(list(data)) + ", k := 4, eps := 0.05, key := '" + KEY + "')"
    persistent, *temps = with_temp_copies(mcon, "corr")
    expected = rows(mcon, call, persistent)
    for name in temps:
        assert rows(mcon, call, name) == expected


@pytest.mark.parametrize("call, message", [
    ("rwn_perturb('{src}', ['age', 'incme'], key := 'a-key-0123456789abcdef')", 'incme'),
    ("rwn_perturb('{src}', ['age', 'city'], key := 'a-key-0123456789abcdef')", "column 'city' has type VARCHAR, not a numeric type"),
    ("rwn_neighborhoods('{src}', ['age', 'city'])", "column 'city' has type VARCHAR, not a numeric type"),
    ("rwn_perturb('{src}', ['age', 'gap'], key := 'a-key-0123456789abcdef')", 'column "gap" has 1 NULL, NaN or infinite values'),
    ("rwn_perturb('{src}', ['age'], id := 'score', key := 'a-key-0123456789abcdef')", "id column 'score' has type DOUBLE"),
    ("rwn_perturb('{src}', ['age'], \"drop\" := ['nothere'], key := 'a-key-0123456789abcdef')", "nothere"),
    ("rwn_perturb('{src}', ['age'], k := 50, key := 'a-key-0123456789abcdef')", "k = 50 needs at least 51"),
])
def test_rwn_macros_refuse_bad_input_over_temp(mcon, call, message):
    mcon.execute("CREATE TABLE bad AS SELECT i AS age, (i % 3)::VARCHAR AS city, i / 2 AS score, "
                 "CASE WHEN i = 7 THEN NULL ELSE i END AS gap FROM range(20) t(i)").fetchall()
    persistent, *temps = with_temp_copies(mcon, "bad")
    for name in [persistent] + temps:
        with pytest.raises(duckdb.Error, match=message):
            rows(mcon, call, name)


def test_rwn_macros_refuse_reserved_names_and_missing_temp_tables(mcon):
    mcon.execute("CREATE TEMP TABLE reserved AS SELECT i AS age, i AS __rwn_rid FROM range(20) t(i)").fetchall()
    with pytest.raises(duckdb.Error, match="has a column named '__rwn_rid'; names starting with '__rwn_' are reserved"):
        rows(mcon, "rwn_perturb('{src}', ['age'], key := 'a-key-0123456789abcdef')", "reserved")
    with pytest.raises(duckdb.Error, match="nowhere"):
        rows(mcon, "rwn_perturb('{src}', ['age'], key := 'a-key-0123456789abcdef')", "nowhere")


def releases(con, n=900, seed=2):
    """A randomized-looking release: public columns (personal groups of 50 to 100 records), an
    INTEGER sensitive column with 5 values."""
    rng = np.random.default_rng(seed)
    con.execute("CREATE TABLE rel AS SELECT unnest(?) AS sex, unnest(?) AS region, unnest(?) AS grade",
                [rng.choice(["f", "m"], n).tolist(), rng.integers(0, 6, n).tolist(),
                 rng.integers(1, 6, n).tolist()]).fetchall()
    return ["1", "2", "3", "4", "5"]


ESTIMATE_CALLS = [
    "rwn_estimates('{src}', 'grade', 0.6, ?, enforced := false)",
    "rwn_estimates('{src}', 'grade', 0.6, ?, enforced := false, group_by := ['sex'], \"where\" := 'region IN (1, 2) OR sex = ''f''')",
    "rwn_estimates('{src}', 'grade', 0.6, ?, enforced := false, group_by := ['region'], \"values\" := ['2', '4'])",
    "rwn_estimates('{src}', 'grade', 0.6, ?, group_by := ['sex'], epsilon := 0.5, delta := 0.05)",
    "rwn_estimates('{src}', 'grade', 0.6, ?, group_by := ['sex'], public := ['sex'], epsilon := 0.5, delta := 0.05)",
]


@pytest.mark.parametrize("call", ESTIMATE_CALLS)
def test_estimates_same_rows_over_temp_table_and_view(mcon, call):
    domain = releases(mcon)
    persistent, *temps = with_temp_copies(mcon, "rel")
    expected = rows(mcon, call, persistent, [domain])
    assert expected
    for name in temps:
        assert rows(mcon, call, name, [domain]) == expected, name


def test_estimates_over_temp_use_the_blocks_of_an_enforced_release(mcon):
    """epsilon/delta change the standard errors (blocks move together), not the estimates: the
    design is computed where the statement runs, from the TEMP release's group sizes."""
    domain = releases(mcon)
    with_temp_copies(mcon, "rel")
    plain = rows(mcon, ESTIMATE_CALLS[0].replace("?, enforced := false)", "?, enforced := false, group_by := ['sex'])"), "rel_tt", [domain])
    enforced = rows(mcon, ESTIMATE_CALLS[3], "rel_tt", [domain])
    assert [r[:4] for r in plain] == [r[:4] for r in enforced]
    assert all(e[5] >= p[5] for p, e in zip(plain, enforced)) and sum(e[5] for e in enforced) > sum(p[5] for p in plain)


@pytest.mark.parametrize("call, domain, message", [
    ("rwn_estimates('{src}', 'grad', 0.6, ?, enforced := false)", None, '"grad" not found|column \'grad\' is not in'),
    ("rwn_estimates('{src}', 'grade', 0.6, ?, enforced := false, group_by := ['sx'])", None, '"sx" not found|column \'sx\' is not in'),
    ("rwn_estimates('{src}', 'grade', 0.6, ?, enforced := false)", ["1", "2", "3", "4"], "holds values of 'grade' outside the domain: '5'"),
    ("rwn_estimates('{src}', 'grade', 0.6, ?, enforced := false)", ["1", "2", "3", "4", "5", "5.0"], "the same value as INTEGER"),
    ("rwn_estimates('{src}', 'grade', 0.6, ?, enforced := false, \"where\" := 'grade = 1')", None, "names the sensitive attribute"),
    ("rwn_estimates('{src}', 'grade', 0.6, ?, group_by := ['sex'], epsilon := 0.5, delta := 0.4)", None,
     "personal groups? of [0-9, .]+ records"),
])
def test_estimates_refuse_bad_input_over_temp(mcon, call, domain, message):
    published = releases(mcon)
    mcon.execute("ALTER TABLE rel ALTER grade TYPE INTEGER").fetchall()
    persistent, *temps = with_temp_copies(mcon, "rel")
    for name in [persistent] + temps:
        with pytest.raises(duckdb.Error, match=message):
            rows(mcon, call, name, [domain or published])


def test_estimates_over_temp_refuse_null_sensitive_values(mcon):
    mcon.execute("CREATE TEMP TABLE nulls AS SELECT i % 3 AS g, CASE WHEN i = 4 THEN NULL ELSE i % 2 END AS s "
                 "FROM range(40) t(i)").fetchall()
    with pytest.raises(duckdb.Error, match="holds values of 's' outside the domain: NULL"):
        rows(mcon, "rwn_estimates('{src}', 's', 0.6, ['0', '1'], enforced := false)", "nulls")


def survey(con, n=800, seed=3):
    """Original data: public sex and region, a text sensitive column, a shuffled unique id."""
    rng = np.random.default_rng(seed)
    con.execute("CREATE TABLE survey AS SELECT unnest(?) AS sex, unnest(?) AS region, unnest(?) AS job, "
                "unnest(?) AS rid",
                [rng.choice(["f", "m"], n).tolist(), rng.integers(0, 4, n).tolist(),
                 rng.choice(["a", "b", "c", "d"], n).tolist(), (rng.permutation(n) + 1).tolist()]).fetchall()
    return ["a", "b", "c", "d", "e"]


RANDOMIZE_CALLS = [
    "rwn_randomize('{src}', 'job', 0.6, key := '" + KEY + "')",
    "rwn_randomize('{src}', 'job', 0.6, public := ['region'], domain := ?, key := '" + KEY + "', id := 'rid')",
    "rwn_randomize('{src}', 'job', 0.7, public := ['region', 'sex'], nulls := 'drop', key := '" + KEY + "')",
    "rwn_randomize('{src}', 'job', 0.6, domain := ?, epsilon := 0.5, delta := 0.05, key := '" + KEY + "')",
    "rwn_randomize('{src}', 'job', 0.6, public := ['sex'], epsilon := 0.4, delta := 0.05, key := '" + KEY
    + "', id := 'rid')",
]


@pytest.mark.parametrize("call", RANDOMIZE_CALLS)
def test_randomize_same_release_over_temp_table_and_view(mcon, call):
    domain = survey(mcon)
    params = [domain] if "?" in call else []
    persistent, *temps = with_temp_copies(mcon, "survey")
    expected = rows(mcon, call, persistent, params)
    assert len(expected) == 800
    for name in temps:
        assert rows(mcon, call, name, params) == expected, name


def test_randomize_over_temp_enforces_blocks(mcon):
    """With epsilon/delta the blocks come from the TEMP data's group sizes: records of a block share
    their draw, so the release differs from the unenforced one (the same key) and equals the table's."""
    survey(mcon)
    with_temp_copies(mcon, "survey")
    call = "rwn_randomize('{src}', 'job', 0.6, public := ['sex'], key := '" + KEY + "', id := 'rid'{extra})"
    plain = rows(mcon, call.replace("{extra}", ""), "survey_tt")
    enforced = rows(mcon, call.replace("{extra}", ", epsilon := 0.4, delta := 0.05"), "survey_tt")
    assert enforced != plain and sorted(r[0] for r in enforced) == sorted(r[0] for r in plain)


@pytest.mark.parametrize("call, message", [
    ("rwn_randomize('{src}', 'jb', 0.6, seed := 1)", '"jb" not found|column \'jb\' is not in'),
    ("rwn_randomize('{src}', 'job', 0.6, public := ['sx'], seed := 1)", '"sx" not found|column \'sx\' is not in'),
    ("rwn_randomize('{src}', 'gap', 0.6, public := ['sex'], seed := 1)", "sensitive column .*gap.* has .*NULL values"),
    ("rwn_randomize('{src}', 'job', 0.6, domain := ['a', 'b'], seed := 1)", "the domain misses values present in the data"),
    ("rwn_randomize('{src}', 'job', 0.6, public := ['sex'], id := 'dup', seed := 1)", "id column 'dup' has duplicate values"),
    ("rwn_randomize('{src}', 'job', 0.6, public := ['sex'], id := 'score', seed := 1)", "id column 'score' has type DOUBLE"),
    ("rwn_randomize('{src}', 'job', 0.6, public := ['sex'], epsilon := 0.5, delta := 0.4, seed := 1)",
     "personal groups? of [0-9, .]+ records"),
])
def test_randomize_refuses_bad_input_over_temp(mcon, call, message):
    mcon.execute("CREATE TABLE bad AS SELECT (i % 2)::VARCHAR AS sex, chr(CAST(97 + i % 4 AS INTEGER)) AS job, i % 7 AS dup, "
                 "i / 2 AS score, CASE WHEN i = 9 THEN NULL ELSE i % 3 END AS gap FROM range(60) t(i)").fetchall()
    persistent, *temps = with_temp_copies(mcon, "bad")
    for name in [persistent] + temps:
        with pytest.raises(duckdb.Error, match=message):
            rows(mcon, call, name)


AUDIT_CALLS = [
    "rwn_audit('{src}', 'job', 0.6, 0.5, 0.05)",
    "rwn_audit('{src}', 'job', 0.6, 0.5, 0.05, public := ['region'], test := 'chernoff')",
    "rwn_audit('{src}', 'job', 0.6, 0.5, 0.05, public := ['region', 'sex'], domain := ['a', 'b', 'c', 'd', 'e'])",
    "rwn_audit('{src}', 'job', 0.6, 0.5, 0.05, domain := ['a', 'b', 'c', 'd', 'e'], nulls := 'drop')",
    "rwn_audit('{src}', 'job', 0.6, 0.4, 0.05, public := ['sex'], enforce := true)",
    "rwn_audit('{src}', 'job', 0.6, 0.5, 0.05, domain := ['a', 'b', 'c', 'd', 'e'], enforce := true)",
    "rwn_audit('{src}', 'job', 0.6, 0.5, 0.05, public := ['region'], test := 'chernoff', enforce := true)",
]


@pytest.mark.parametrize("call", AUDIT_CALLS)
def test_audit_same_rows_over_temp_table_and_view(mcon, call):
    survey(mcon)
    mcon.execute("UPDATE survey SET sex = NULL WHERE rid % 9 = 0").fetchall()    # a NULL public value is a group
    mcon.execute("ALTER TABLE survey DROP COLUMN rid").fetchall()                 # else every group is one record
    persistent, *temps = with_temp_copies(mcon, "survey")
    expected = mcon.execute(f"SELECT * FROM {call.format(src=persistent)}")
    names, expected = [c[0] for c in expected.description], expected.fetchall()
    assert len(expected) >= 8
    if "enforce" in call:       # the design is what the rows judge: trials below the group sizes
        assert any(r[names.index("trials")] < r[names.index("group_size")] for r in expected)
    for name in temps:
        got = mcon.execute(f"SELECT * FROM {call.format(src=name)}")
        assert [c[0] for c in got.description] == names and got.fetchall() == expected, name


@pytest.mark.parametrize("call, message", [
    ("rwn_audit('{src}', 'jb', 0.6, 0.5, 0.05)", '"jb" not found|column \'jb\' is not in'),
    ("rwn_audit('{src}', 'job', 0.6, 0.5, 0.05, public := ['sx'])", '"sx" not found|column \'sx\' is not in'),
    ("rwn_audit('{src}', 'gap', 0.6, 0.5, 0.05, public := ['sex'])", "sensitive column 'gap' has .*NULL values"),
    ("rwn_audit('{src}', 'job', 0.6, 0.5, 0.05, domain := ['a', 'b'])", "the domain misses values present in the data"),
    ("rwn_audit('{src}', 'job', 0.6, 1.5, 0.05, public := ['sex'])", "eps must be in"),
    ("rwn_audit('{src}', 'job', 0.6, 0.5, 0.4, public := ['sex'], enforce := true)",
     "personal groups? of [0-9, .]+ records"),
])
def test_audit_refuses_bad_input_over_temp(mcon, call, message):
    mcon.execute("CREATE TABLE bad AS SELECT (i % 2)::VARCHAR AS sex, chr(CAST(97 + i % 4 AS INTEGER)) AS job, "
                 "CASE WHEN i = 9 THEN NULL ELSE i % 3 END AS gap FROM range(60) t(i)").fetchall()
    persistent, *temps = with_temp_copies(mcon, "bad")
    for name in [persistent] + temps:
        with pytest.raises(duckdb.Error, match=message):
            rows(mcon, call, name)


def test_rwn_macros_over_temp_keep_the_pair_budget(mcon):
    """The neighbour-pair pre-check (rwn.check_pair_budget) is made by the statement over a TEMP
    source: tied data beyond the memory limit is refused before the search, with the estimate;
    within it the neighbourhoods are those of the table."""
    from helpers.datasets import tied_table
    tied_table(mcon, 20_000)          # 400 groups of 50 tied records: 980,000 pairs, about 125 MB
    persistent, *temps = with_temp_copies(mcon, "tied")
    mcon.execute("SET memory_limit = '100MB'").fetchall()
    for name in [persistent] + temps:
        with pytest.raises(duckdb.Error, match="980,?000 neighbour pairs.*: 50 records share.*jitter"):
            rows(mcon, "rwn_neighborhoods('{src}', ['a', 'b', 'c'], k := 1)", name)
        with pytest.raises(duckdb.Error, match="neighbour pairs.*stratum"):
            rows(mcon, "rwn_perturb('{src}', ['a', 'b', 'c'], k := 1, strata := ['s'], key := 'a-key-0123456789abcdef')", name)
    mcon.execute("SET memory_limit = '2GB'").fetchall()
    call = "rwn_neighborhoods('{src}', ['a', 'b', 'c'], k := 1)"
    assert {r[1] for r in rows(mcon, call, temps[0])} == {49}
    assert rows(mcon, call, temps[1]) == rows(mcon, call, persistent)


def disclosure_tables(con):
    """`hom`: region 0 holds only job 'a' (its personal group violates distinct 2-diversity);
    `prox`: code determines job in 7 of 10 codes (one record of each (sex, code) group differs,
    so every group holds 2 values but a class of code holds 97.5 % one value); `flt` a DOUBLE and
    `wide` a 300-value sensitive column."""
    con.execute("CREATE TABLE hom AS SELECT CAST(i % 2 AS VARCHAR) AS sex, i % 4 AS region, CASE WHEN i % 4 = 0 "
                "THEN 'a' ELSE chr(CAST(98 + i % 3 AS INTEGER)) END AS job, i AS rid FROM range(800) t(i)").fetchall()
    con.execute("CREATE TABLE prox AS SELECT CAST(i % 2 AS VARCHAR) AS sex, i % 10 AS code, CASE WHEN i % 10 >= 7 "
                "THEN chr(CAST(97 + (i / 10) % 4 AS INTEGER)) WHEN i < 20 THEN 'z' ELSE chr(CAST(97 + i % 10 AS "
                "INTEGER)) END AS job, i AS rid FROM range(800) t(i)").fetchall()
    con.execute("CREATE TABLE flt AS SELECT CAST(i % 2 AS VARCHAR) AS sex, i / 4.0 AS score FROM range(100) t(i)").fetchall()
    con.execute("CREATE TABLE wide AS SELECT CAST(i % 2 AS VARCHAR) AS sex, i AS code FROM range(600) t(i)").fetchall()


@pytest.mark.parametrize("table, call, message", [
    ("hom", "rwn_randomize('{src}', 'job', 0.6, public := ['sex', 'region'], seed := 1, l_diversity := 2)",
     "attribute disclosure: 200 records sit in 1 personal groups of at least 2 records holding fewer than 2"),
    ("hom", "rwn_randomize('{src}', 'job', 0.6, public := ['sex', 'region'], seed := 1, epsilon := 0.4, delta := 0.05)",
     "attribute disclosure: 200 records sit in 1 personal groups"),          # enforcement: L = 2 by default
    ("prox", "rwn_randomize('{src}', 'job', 0.6, public := ['sex', 'code'], seed := 1, l_diversity := 2)",
     "attribute disclosure: public column.* 'code' determines? 'job'"),
    ("prox", "rwn_randomize('{src}', 'job', 0.6, id := 'rid', seed := 1, l_diversity := 2)",
     "attribute disclosure: public column.* 'code' determines? 'job'"),      # default public: every other column
    ("prox", "rwn_randomize('{src}', 'job', 0.6, public := ['sex'], seed := 1, l_diversity := 9)",
     "l_diversity = 9 exceeds the domain's 8 values"),
    ("flt", "rwn_randomize('{src}', 'score', 0.6, seed := 1)", r"'score' is floating point \(DOUBLE\)"),
    ("flt", "rwn_audit('{src}', 'score', 0.6, 0.5, 0.05)", r"'score' is floating point \(DOUBLE\)"),
    ("wide", "rwn_randomize('{src}', 'code', 0.6, seed := 1)", "'code' holds 600 distinct values, more than 256"),
    ("wide", "rwn_audit('{src}', 'code', 0.6, 0.5, 0.05)", "'code' holds 600 distinct values, more than 256"),
])
def test_attribute_disclosure_rules_over_temp(mcon, table, call, message):
    """The rules of randomize (rp.plan.resolve_randomize) hold in the macros over a table and, run by the
    statement (rp.temp_source.randomize / audit), over a TEMP table and view: groups violating
    l and single-column proxies refused (with epsilon/delta by default), l above the domain's
    size, a floating-point or 600-value sensitive column refused; same message text."""
    disclosure_tables(mcon)
    for name in with_temp_copies(mcon, table):
        with pytest.raises(duckdb.Error, match=message):
            rows(mcon, call, name)


@pytest.mark.parametrize("table, call", [
    ("hom", "rwn_randomize('{src}', 'job', 0.6, public := ['sex', 'region'], key := '" + KEY + "', l_diversity := 1)"),
    ("prox", "rwn_randomize('{src}', 'job', 0.6, public := ['sex', 'code'], key := '" + KEY + "', id := 'rid', "
             "l_diversity := 1)"),
    ("prox", "rwn_randomize('{src}', 'job', 0.6, public := ['sex'], key := '" + KEY + "', id := 'rid', l_diversity := 2)"),
])
def test_l_diversity_one_or_passing_data_same_rows_over_temp(mcon, table, call):
    """l_diversity := 1 releases what the checks refuse, and data that passes them (sex alone
    neither violates l nor determines job) is released: the same rows over a TEMP table and view."""
    disclosure_tables(mcon)
    persistent, *temps = with_temp_copies(mcon, table)
    expected = rows(mcon, call, persistent)
    assert len(expected) == 800
    for name in temps:
        assert rows(mcon, call, name) == expected, name


PLANNED = [  # (planning function, its arguments with {src}) over `survey`, as the macros call them
    ("rwn_randomize_sql", "'{src}', 'job', 0.6, NULL, NULL, 'k-0123456789abcdef', NULL, NULL, NULL, 'exact', 'error', "
                          "NULL, NULL, NULL"),
    ("rwn_randomize_sql", "'{src}', 'job', 0.6, ['sex', 'region'], ['a', 'b', 'c', 'd', 'e'], 'k-0123456789abcdef', "
                          "NULL, 0.4, 0.05, 'exact', 'error', 'rid', 1, NULL"),
    ("rwn_audit_sql", "'{src}', 'job', 0.6, 0.5, 0.05, NULL, NULL, 'exact', false, 'error'"),
    ("rwn_audit_sql", "'{src}', 'job', 0.6, 0.4, 0.05, ['sex'], NULL, 'exact', true, 'drop'"),
    ("rwn_estimates_sql", "'{src}', 'job', 0.6, ['a', 'b', 'c', 'd'], ['sex'], 'region IN (1, 2)', NULL, NULL, "
                          "0.4, 0.05, 'exact', NULL"),
]


@pytest.mark.parametrize("function, arguments", PLANNED)
def test_temp_statement_is_the_table_statement_with_the_planner_in_front(mcon, function, arguments):
    """Over a TEMP source the statement hands the source to the one planner (rp.temp_source) and
    reads its answers from one CTE: at most twice the size of the statement over the table (the
    checks written into the statement made it 50 to 100 times larger), no check pasted as text
    (no error() of its own beyond the table statement's), the same rows. Fails with the
    planner written into the statement as text (rp.deferred)."""
    survey(mcon)
    persistent, table, view = with_temp_copies(mcon, "survey")
    seen = mcon.execute(f"SELECT {function}({arguments.format(src=persistent)})").fetchone()[0]
    for name in (table, view):
        unseen = mcon.execute(f"SELECT {function}({arguments.format(src=name)})").fetchone()[0]
        assert len(unseen) <= 2 * len(seen), (name, len(unseen), len(seen))
        assert unseen.count("error(") <= seen.count("error("), name
        assert "rwn_plan(" in unseen and "rwn_plan(" not in seen
        assert mcon.execute(unseen).fetchall() == mcon.execute(seen).fetchall(), name


def test_temp_source_refusals_are_the_planners_word_for_word(mcon):
    """A refusal over a TEMP table is the planner's own message, with what only a planner computes
    (the way forward of an impossible design: the nearest p, delta and eps that work, the public
    column whose removal helps most; proxy pairs), the same text as over the table. Fails with
    the checks written into the statement, whose messages stop at the size that fails."""
    survey(mcon)
    persistent, *temps = with_temp_copies(mcon, "survey")
    call = "rwn_randomize('{src}', 'job', 0.6, public := ['sex', 'region'], epsilon := 0.5, delta := 0.4, seed := 1)"
    with pytest.raises(duckdb.Error) as seen:
        rows(mcon, call, persistent)
    message = str(seen.value).split("RWNError: ", 1)[1].splitlines()[0]
    assert "What would work: p = " in message and "coarsening: dropping public column" in message
    for name in temps:
        with pytest.raises(duckdb.Error) as unseen:
            rows(mcon, call, name)
        assert str(unseen.value).split("RWNError: ", 1)[1].splitlines()[0] == message, name


def test_temp_source_planner_reads_no_file_and_refuses_forged_types(mcon):
    """rwn_plan can be called with any arguments by whoever holds the connection: its private
    database reads no file (even where the caller's may), and a type that is not one is refused
    before it reaches SQL. Fails with a scratch database of default settings, or types pasted
    as given."""
    rows_arg = "[['1', '1']]"
    forged = ("{\"kind\": \"audit\", \"name\": \"x\", \"shipped\": [\"a\"]}", "[['a', 'INTEGER); COPY (SELECT 1) "
              "TO ''/tmp/rwn_forged.csv''; --']]")
    with pytest.raises(duckdb.Error, match="is not a column type"):
        mcon.execute(f"SELECT rwn_plan(?, {forged[1]}, {rows_arg})", [forged[0]]).fetchall()
    from rwn_sql.engines import duckdb_backend
    import pyarrow as pa
    be, _ = duckdb_backend.scratch_backend([("a", "INTEGER")], ["a"], pa.array([[["1", "1"]]]), "table 'x'")
    try:
        with pytest.raises(duckdb.Error, match="(?i)permission|external access|disabled"):
            be.con.execute("SELECT * FROM read_csv('/etc/hostname')").fetchall()
    finally:
        be.con.close()
