"""Hostile analyst queries (issue 8, R1): each is refused with RWNError or answered with a
count-estimate result, and nothing but the rewritten count runs. Canaries prove it: a
private file whose secret never shows, no file created anywhere in tmp_path (COPY, ATTACH,
EXPORT), and a raw table in the caller's connection that is never read or changed."""
import random

import duckdb
import pytest

import rwn_sql
from rwn_sql import RWNError
from rwn_sql.rp.release.analyst import ESTIMATE_COLUMNS
from rwn_sql.cli.main import main

SECRET = "TOP-SECRET-7c1e9b3a5d"
MARKER = "CANARY-RAW-4f2d8e"              # in a raw column the release leaves out
SEXES, RACES, JOBS = ("Female", "Male"), ("Black", "White", "Other"), ("Sales", "Tech", "Exec")


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A caller's connection holding the raw table `adult` (with a marker column), a release
    of it in tmp_path, and the private file; the working directory is tmp_path, so relative
    paths in payloads point at the canaries."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "private.txt").write_text(SECRET + "\n")
    con = duckdb.connect()
    con.execute(f"""CREATE TABLE adult AS SELECT
        ['Female', 'Male'][1 + i % 2] AS sex, ['Black', 'White', 'Other'][1 + i % 3] AS race,
        ['Sales', 'Tech', 'Exec'][1 + (i * 7) % 3] AS occupation, '{MARKER}-' || i AS ssn
        FROM range(60) r(i)""").fetchall()
    release = tmp_path / "adult_rel.duckdb"
    # race determines occupation here (a proxy); the subject is the query interface, not the audit
    rwn_sql.release(con, "adult", str(release), "occupation", 0.5, public=["sex", "race"], seed=5, l_diversity=1)
    raw = con.execute("SELECT * FROM adult ORDER BY ssn").fetchall()
    tables = con.execute("SELECT database_name, schema_name, table_name FROM duckdb_tables() "
                         "ORDER BY ALL").fetchall()
    files = sorted(p for p in tmp_path.rglob("*"))
    yield con, release, tmp_path
    # the caller's connection: raw table unchanged, nothing created or dropped
    assert con.execute("SELECT * FROM adult ORDER BY ssn").fetchall() == raw
    assert con.execute("SELECT database_name, schema_name, table_name FROM duckdb_tables() "
                       "ORDER BY ALL").fetchall() == tables
    assert sorted(p for p in tmp_path.rglob("*")) == files, "a file was created"
    assert (tmp_path / "private.txt").read_text() == SECRET + "\n"
    con.close()


R1 = ('SELECT COUNT(*) FROM adult WHERE sex IN (CAST(1 AS "main.varchar)); '
      'SELECT content FROM read_text($$private.txt$$) --"))')

# ---- the grammar of injection shapes --------------------------------------------------
# a statement smuggled after the query, and where it reads or writes
STATEMENTS = [
    "SELECT content FROM read_text('{d}/private.txt')", "SELECT * FROM read_csv('{d}/private.txt')",
    "SELECT * FROM glob('{d}/*')", "SELECT ssn FROM adult", "SELECT * FROM main.adult",
    "COPY (SELECT 1) TO '{d}/copied.csv'", "COPY adult TO '{d}/raw.csv'", "EXPORT DATABASE '{d}/dump'",
    "ATTACH '{d}/new.duckdb' AS x", "INSTALL httpfs", "LOAD httpfs", "PRAGMA database_list",
    "SET enable_external_access = true", "CALL pragma_version()", "DROP TABLE adult",
    "CREATE TABLE pwn AS SELECT * FROM adult", "UPDATE adult SET ssn = 'x'", "DELETE FROM adult",
    "SELECT * FROM query_table('adult')", "SELECT * FROM query('SELECT ssn FROM adult')",
    "SELECT * FROM read_blob('{d}/private.txt')", "DETACH rwn_release", "USE memory",
]
# ways to hide the smuggled statement from a naive check
WRAPPERS = [
    "{q}; {s}", "{q};{s};", "{q} ;\n{s} --", "{q}; {s} /* tail */", "{q} /* c */; {s}",
    "{q}; /* /* nested */ */ {s}", '{q}; {s} --"', "{s}; {q}", "{q}\n;\n{s}\n",
]
# payloads inside the query: where the text leaves the grammar
INSIDE = [
    'sex IN (CAST(1 AS "main.varchar)); {s} --"))',
    'sex IN (1::"varchar); {s} --")',
    'sex = CAST(\'Male\' AS "VARCHAR); {s}; --")',
    "sex = TRY_CAST('Male' AS VARCHAR)",
    "sex IN (SELECT content FROM read_text('{d}/private.txt'))",
    "sex = (SELECT ssn FROM adult LIMIT 1)",
    "EXISTS (SELECT * FROM read_text('{d}/private.txt'))",
    "sex = $${s}$$", "sex = $tag${s}$tag$", "sex = E'\\'; {s}; --'", "sex = 'x\\'; {s}; --'",
    "sex = \u2019x\u2019; {s}", "sex = \u201cx\u201d OR 1=1; {s}", "sex = 'Male'\uff1b {s}",
    "sex = 'Male' -- '; {s}", "sex = 'Male' /* '; {s} */", "sex = 'Male' /* /* */ '; {s} */",
    "sex = lower('MALE')", "sex = getenv('HOME')", "sex = current_setting('home_directory')",
    "\"sex\"\"; {s}; --\" = 'Male'", "sex = 'Male' AND race = ANY(SELECT ssn FROM adult)",
    "sex IN (SELECT * FROM glob('{d}/*'))", "sex::\"varchar); {s}; --\" = 'Male'",
    "sex = 'Male' AND occupation = CAST('Sales' AS VARCHAR)", "sex = 'Male' OR ssn = 'x'",
    "sex = chr(77) || 'ale'", "sex = 'Ma' || 'le'", "sex = (SELECT 'Male')", "sex = 'Male' AND {s}",
    "sex IN ('Male', '{s}')", "sex = 'Male' AND race = '{s}'",
]
FROMS = ["adult", "read_text('{d}/private.txt')", "(SELECT * FROM adult)", "adult, read_text('{d}/private.txt')",
         "memory.adult", "query_table('adult')", "glob('{d}/*')", "adult JOIN adult b USING (sex)",
         '"adult; {s}; --"']
BASES = ["SELECT COUNT(*) FROM {f} WHERE {w}", "SELECT sex, COUNT(*) FROM {f} WHERE {w} GROUP BY sex",
         "SELECT COUNT(*) FROM {f} WHERE occupation = 'Sales' AND {w}"]


def hostile_queries(n: int, seed: int):
    rng = random.Random(seed)
    out = set()
    while len(out) < n:
        s = rng.choice(STATEMENTS)
        shape = rng.random()
        if shape < 0.35:
            q = rng.choice(BASES).format(f="adult", w="sex = 'Male'")
            text = rng.choice(WRAPPERS).format(q=q, s=s)
        elif shape < 0.8:
            text = rng.choice(BASES).format(f="adult", w=rng.choice(INSIDE).replace("{s}", s))
        else:
            text = rng.choice(BASES).format(f=rng.choice(FROMS).replace("{s}", s), w="sex = 'Male'")
        out.add(text)
    return sorted(out)


def check_answer(rel, rewritten):
    """A count-estimate result: the documented columns, counts within the release's size."""
    cols = rel.columns
    assert cols[-len(ESTIMATE_COLUMNS) - 1:] == [*ESTIMATE_COLUMNS, "micro_reconstruction"]
    assert set(cols[:-len(ESTIMATE_COLUMNS) - 1]) <= {"sex", "value"}
    rows = rel.fetchall()
    assert all(0 <= r[cols.index("released_count")] <= r[cols.index("group_size")] <= 60 for r in rows)
    return rows


@pytest.mark.heavy     # 241 generated queries; the injection cases one by one stay in the default tier (the tests below)
def test_hostile_queries_refused_or_answered(world):
    con, release, d = world
    queries = [q.replace("{d}", str(d)) for q in hostile_queries(240, seed=8)] + [R1]
    outcomes = {"refused": 0, "answered": 0}
    with duckdb.connect(str(release), read_only=True) as rcon:
        released = rcon.execute("SELECT sex, race, occupation FROM randomized_rows_not_counts.adult_randomized").fetchall()
    seen = []
    for q in queries:
        try:
            rel, rewritten = rwn_sql.query(con, q, release=str(release))
        except RWNError as exc:
            outcomes["refused"] += 1
            seen.append(str(exc))
            continue
        outcomes["answered"] += 1
        rows = check_answer(rel, rewritten)
        seen.extend([repr(rows), rewritten.sql, rewritten.note])
        # answered only when the payload stayed data (a comment, or a string matching no value):
        # the released count is then that of sex = 'Male' [AND occupation = 'Sales'], or 0 when
        # the payload string is compared with race, counted here in Python on the released rows
        want = sum(r[0] == "Male" and ("occupation = 'Sales'" not in q or r[2] == "Sales") for r in released)
        assert sum(r[rel.columns.index("released_count")] for r in rows) == (0 if "race = '" in q else want), q
    text = "\n".join(seen)
    assert SECRET not in text and MARKER not in text
    assert outcomes["refused"] >= 200 and len(queries) >= 241


def test_string_payloads_are_data(world):
    """A payload inside a string literal is compared as a value: an exact count of 0."""
    con, release, d = world
    for s in STATEMENTS:
        payload = s.replace("{d}", str(d)).replace("'", "''")
        rel, rewritten = rwn_sql.query(con, f"SELECT COUNT(*) FROM adult WHERE sex = '{payload}'",
                                       release=str(release))
        assert rewritten.exact and rel.fetchall()[0][0] == 0


def test_r1_reproducer_through_query(world):
    """Issue 8's R1 verbatim: the ';' hides in a quoted type name, so the text is one statement
    to the tokenizer; the cast is refused, nothing is printed from sqlglot's tree."""
    con, release, _ = world
    with pytest.raises(RWNError, match="casts are not answered") as info:
        rwn_sql.query(con, R1, release=str(release))
    assert SECRET not in str(info.value)


def test_r1_reproducer_without_stacking_is_refused(world):
    """Without the stacked statement the cast is still refused, by name."""
    con, release, _ = world
    with pytest.raises(RWNError, match="casts are not answered"):
        rwn_sql.query(con, 'SELECT COUNT(*) FROM adult WHERE sex IN (CAST(1 AS "main.varchar"))',
                      release=str(release))


def test_r1_reproducer_through_cli(world, capsys):
    _, release, _ = world
    code = main(["query", str(release), R1])
    out = capsys.readouterr()
    assert code == 2 and "casts are not answered" in out.err
    assert SECRET not in out.out + out.err


def test_release_in_callers_connection_is_copied_not_queried(world):
    """Without release=, the release's tables are read from the caller's connection by fixed
    SQL; the analyst's text runs only on the isolated copy."""
    con, release, d = world
    con.execute(f"ATTACH '{release}' AS rel (READ_ONLY)").fetchall()
    try:
        rel, _ = rwn_sql.query(con, "SELECT sex, COUNT(*) FROM rel.adult WHERE occupation = 'Sales' GROUP BY sex")
        direct, _ = rwn_sql.query(con, "SELECT sex, COUNT(*) FROM adult WHERE occupation = 'Sales' GROUP BY sex",
                                  release=str(release))
        assert rel.fetchall() == direct.fetchall()
        for q in ["SELECT COUNT(*) FROM main.adult", "SELECT COUNT(*) FROM adult",
                  "SELECT COUNT(*) FROM rel.adult WHERE sex = (SELECT ssn FROM main.adult LIMIT 1)"]:
            with pytest.raises(RWNError) as info:
                rwn_sql.query(con, q)
            assert MARKER not in str(info.value)
    finally:
        con.execute("DETACH rel").fetchall()


def test_r6_where_cannot_stack_statements(world):
    con, release, _ = world
    con.execute("CREATE TABLE victim AS SELECT 42 AS x").fetchall()
    con.execute(f"ATTACH '{release}' AS rel (READ_ONLY)").fetchall()
    try:
        for where in ["true) SELECT 1; DROP TABLE victim; SELECT 1 FROM (SELECT 1",
                      "sex = 'Male'; DROP TABLE victim", "sex IN (SELECT ssn FROM adult)",
                      "sex = CAST('Male' AS \"VARCHAR); DROP TABLE victim; --\")",
                      "read_text('private.txt') IS NOT NULL"]:
            with pytest.raises(RWNError):
                rwn_sql.estimates(con, "rel.adult", "occupation", 0.5, list(JOBS), where=where)
        assert con.execute("SELECT * FROM victim").fetchall() == [(42,)]
    finally:
        con.execute("DROP TABLE victim").fetchall()
        con.execute("DETACH rel").fetchall()


@pytest.mark.parametrize("query,message", [
    ("SELECT COUNT(*) FROM adult WHERE " + "(" * 3000 + "sex = 'Male'" + ")" * 3000, "nested too deeply"),
    ("SELECT COUNT(*) FROM adult WHERE " + " AND ".join(["sex = 'Male'"] * 3000), "nested too deeply"),
    ("SELECT COUNT(*) FROM adult WHERE sex = 'a\x00b'", "NUL character"),
    ('SELECT COUNT(*) FROM adult WHERE "se\x00x" = 1', r'unknown column "se\\0x"'),
])
def test_degenerate_text_is_refused_cleanly(world, query, message):
    con, release, _ = world
    with pytest.raises(RWNError, match=message):
        rwn_sql.query(con, query, release=str(release))


# ---- bounded analyst queries (issue 22, F5) -------------------------------------------------
HUGE_IN = "SELECT COUNT(*) FROM adult WHERE race IN (" + ", ".join(map(str, range(600_000))) + ")"   # 4.6 MB


def through(interface, con, release, sql):
    """Run `sql` through rwn_sql.query, the rwn_query macro or the CLI query: (answered rows or
    None, the refusal's text)."""
    if interface == "python":
        try:
            return rwn_sql.query(con, sql, release=str(release))[0].fetchall(), ""
        except RWNError as exc:
            return None, str(exc)
    if interface == "macro":
        with duckdb.connect(str(release), read_only=True) as rcon:
            rwn_sql.install(rcon)
            try:
                return rcon.execute("SELECT * FROM rwn_query(?)", [sql]).fetchall(), ""
            except duckdb.Error as exc:
                return None, str(exc)
    import contextlib
    import io
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["query", str(release), sql])
    return (out.getvalue() if code == 0 else None), err.getvalue()


@pytest.mark.parametrize("interface", ["python", "macro", "cli"])
def test_huge_in_list_is_refused_fast(world, interface):
    """F5's 4.6 MB IN list (600,000 values) is refused in well under a second, naming the length
    limit, by rwn_sql.query, the rwn_query macro and the CLI query: the length is checked before
    the text is tokenized or parsed. Catches an unbounded query (30 s and 2.4 GB before)."""
    import time
    con, release, _ = world
    start = time.perf_counter()
    rows, message = through(interface, con, release, HUGE_IN)
    elapsed = time.perf_counter() - start
    assert rows is None and "more than the limit of 65,536" in message
    assert elapsed < 1.0, f"{elapsed:.2f} s to refuse"


def limit_cases():
    """(name, query just under the limit, query just over it, what the refusal names)."""
    MAX_QUERY_CHARS, MAX_IN_LIST, MAX_NESTING = 65_536, 5_000, 32      # as the README states them
    base = "SELECT COUNT(*) FROM adult WHERE sex = 'Male' /* "
    pad = MAX_QUERY_CHARS - len(base) - len(" */")
    text = (base + "x" * pad + " */", base + "x" * (pad + 1) + " */", "more than the limit of 65,536")
    values = ", ".join(["'Black'"] * MAX_IN_LIST)
    in_list = (f"SELECT COUNT(*) FROM adult WHERE race IN ({values})",
               f"SELECT COUNT(*) FROM adult WHERE race IN ({values}, 'Other')", "more than 5,000 values")
    paren = ("SELECT COUNT(*) FROM adult WHERE " + "(" * MAX_NESTING + "sex = 'Male'" + ")" * MAX_NESTING,
             "SELECT COUNT(*) FROM adult WHERE " + "(" * (MAX_NESTING + 1) + "sex = 'Male'" + ")" * (MAX_NESTING + 1),
             "deeper than 32 levels")
    nots = ("SELECT COUNT(*) FROM adult WHERE " + "NOT " * MAX_NESTING + "sex = 'Male'",
            "SELECT COUNT(*) FROM adult WHERE " + "NOT " * (MAX_NESTING + 2) + "sex = 'Male'", "deeper than 32 levels")
    return [("text", *text), ("in_list", *in_list), ("parentheses", *paren), ("not_chain", *nots)]


@pytest.mark.parametrize("interface", ["python", "macro", "cli"])
@pytest.mark.parametrize("case", limit_cases(), ids=[c[0] for c in limit_cases()])
def test_query_limits_just_under_and_just_over(world, interface, case):
    """Each stated limit (README, analyst queries): a query at the limit is answered with the
    same count as the plain query (every case keeps sex = 'Male' or race = 'Black' only), one
    step over is refused naming the limit, through every interface. Catches a limit off by one,
    one interface without the bound, and a bound that refuses what it promises to answer."""
    name, under, over, names = case
    con, release, _ = world
    rows, message = through(interface, con, release, under)
    assert rows is not None, message
    plain = "SELECT COUNT(*) FROM adult WHERE " + ("race = 'Black'" if name == "in_list" else "sex = 'Male'")
    assert rows == through(interface, con, release, plain)[0]
    rows, message = through(interface, con, release, over)
    assert rows is None and names in message and "limits: at most 65,536 characters" in message
