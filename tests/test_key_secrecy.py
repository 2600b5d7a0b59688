"""Issue 8 R11: the key never appears in SQL text, views, errors, profiles or release files, in
any of its forms (the key, its hex, the MD5 subkeys the hashes derive from it)."""
import hashlib

import duckdb
import pytest

import rwn_sql
from rwn_sql import RWNError, rp
from rwn_sql.rp_sql import BLOCK_PURPOSE, ORDER_PURPOSE, RANDOMIZE_PURPOSE
from rwn_sql.sqlgen import ORDER_PURPOSE as RWN_ORDER, PERTURB_PURPOSE

KEY = "Key-Secret-8f3a9c1d2e4b"
DATA = ("SELECT i AS id, ['F', 'M'][1 + i % 2] AS sex, ['a', 'b'][1 + i % 2] AS race, "
        "['x', 'y', 'z'][1 + i % 3] AS occ, CAST((i * 37) % 101 AS DOUBLE) AS u, "
        "CAST((i * 53) % 89 AS DOUBLE) AS v FROM range(60) r(i)")


def forms(key: str) -> list[str]:
    """The key and what would reveal it: hex, and the subkeys md5(key|purpose|column)."""
    out = [key, key.encode().hex()]
    for purpose, columns in ((RANDOMIZE_PURPOSE, ["occ"]), (BLOCK_PURPOSE, ["occ"]), (ORDER_PURPOSE, [""]),
                             (PERTURB_PURPOSE, ["u", "v"]), (RWN_ORDER, [""])):
        out += [hashlib.md5(f"{key}|{purpose}|{c}".encode()).hexdigest() for c in columns]
    return out


def assert_secret(text, where, subkeys=True):
    candidates = forms(KEY) if subkeys else forms(KEY)[:2]
    if isinstance(text, bytes):
        hits = [f for f in candidates if f.encode() in text or f.upper().encode() in text]
    else:
        hits = [f for f in candidates if f.lower() in text.lower()]
    assert not hits, f"the key shows in {where}"


@pytest.fixture
def con():
    c = duckdb.connect()
    c.execute(f"CREATE TABLE t AS {DATA}").fetchall()
    yield c
    c.close()


def test_relations_and_views_hold_no_key(con):
    rels = {"randomize": rp.randomize(con, "t", "occ", 0.5, public=["sex", "race"], key=KEY),
            "enforced": rp.randomize(con, "t", "occ", 0.5, public=["sex", "race"], key=KEY, enforce=(0.5, 0.05)),
            "perturb": rwn_sql.perturb(con, "t", ["u", "v"], k=3, key=KEY),
            "donors": rwn_sql.donors(con, "t", ["u", "v"], k=3, key=KEY)}
    for name, rel in rels.items():
        assert_secret(rel.sql_query(), f"{name}.sql_query()")
        rel.create_view(f"view_{name}")
        con.execute(f"CREATE VIEW sqlview_{name} AS {rel.sql_query()}").fetchall()
    stored = con.execute("SELECT string_agg(sql, '\n') FROM duckdb_views() WHERE NOT internal").fetchall()[0][0]
    assert_secret(stored, "stored views")
    # the views still run later on the connection, and give the release the relation gives
    assert con.execute("SELECT * FROM sqlview_randomize").fetchall() == rels["randomize"].fetchall()
    assert con.execute("SELECT * FROM view_perturb").fetchall() == rels["perturb"].fetchall()
    # on another connection the key is unknown: an error, not a release under a NULL key
    other = duckdb.connect()
    other.execute(f"CREATE TABLE t AS {DATA}").fetchall()
    with pytest.raises(duckdb.Error, match="__rwn_keys does not exist"):
        other.execute(rels["randomize"].sql_query()).fetchall()
    # once the keys are forgotten, the same connection fails them too
    rwn_sql.forget_keys(con)
    with pytest.raises(duckdb.Error, match="key of this statement is not set|__rwn_keys does not exist"):
        con.execute("SELECT * FROM sqlview_randomize").fetchall()


def test_macros_and_profiles_hold_no_key(con, tmp_path):
    rwn_sql.install(con)
    con.execute("SET VARIABLE rwn_key = ?", [KEY]).fetchall()
    profile = tmp_path / "profile.json"
    con.execute("PRAGMA enable_profiling = 'json'").fetchall()
    con.execute(f"PRAGMA profiling_output = '{profile}'").fetchall()
    via_macro = con.execute("SELECT * FROM rwn_randomize('t', 'occ', 0.5, public := ['sex', 'race'], "
                            "key := getvariable('rwn_key'))").fetchall()
    con.execute("SELECT * FROM rwn_perturb('t', ['u', 'v'], k := 3, key := getvariable('rwn_key'))").fetchall()
    con.execute("PRAGMA disable_profiling").fetchall()
    # DuckDB folds the subkeys md5(key|purpose|column) into constants before profiling shows
    # the plan, so a profile reveals them (the README says to keep profiling off for
    # releases); the key itself never shows
    assert_secret(profile.read_text(), "the profiling output", subkeys=False)
    assert via_macro == rp.randomize(con, "t", "occ", 0.5, public=["sex", "race"], key=KEY).fetchall()
    con.execute("CREATE VIEW mv AS SELECT * FROM rwn_randomize('t', 'occ', 0.5, public := ['sex', 'race'], "
                "key := getvariable('rwn_key'))").fetchall()
    assert_secret(con.execute("SELECT sql FROM duckdb_views() WHERE view_name = 'mv'").fetchall()[0][0],
                  "a view over a macro")


def test_errors_hold_no_key(con):
    con.execute("CREATE TABLE n AS SELECT * REPLACE (CASE WHEN id = 3 THEN NULL ELSE occ END AS occ) FROM t")
    calls = [lambda: rp.randomize(con, "n", "occ", 0.5, public=["sex"], key=KEY).fetchall(),
             lambda: rp.randomize(con, "t", "occ", 0.5, public=["sex"], key=KEY, domain=["x", "y"]).fetchall(),
             lambda: rp.randomize(con, "t", "nope", 0.5, key=KEY),
             lambda: rp.randomize(con, "t", "occ", 2.0, key=KEY),
             lambda: rwn_sql.perturb(con, "t", ["u", "sex"], key=KEY),
             lambda: rwn_sql.perturb(con, "SELECT * REPLACE (NULL AS u) FROM t", ["u"], key=KEY).fetchall()]
    for i, call in enumerate(calls):
        with pytest.raises((RWNError, duckdb.Error)) as err:
            call()
        assert_secret(str(err.value), f"error {i}")
    rwn_sql.install(con)
    con.execute("SET VARIABLE rwn_key = ?", [KEY]).fetchall()
    for source in ("n", "t"):    # a NULL in the data, and an error raised in the generated SQL
        with pytest.raises(duckdb.Error) as err:
            con.execute(f"SELECT * FROM rwn_randomize('{source}', 'occ', 0.5, domain := ['x', 'y'], "
                        "key := getvariable('rwn_key'))").fetchall()
        assert_secret(str(err.value), "a macro's error")


def test_release_files_hold_no_key(con, tmp_path):
    path = tmp_path / "release.duckdb"
    rp.release(con, "t", str(path), "occ", 0.5, public=["sex", "race"], key=KEY, enforce=(0.5, 0.05),
               rwn=dict(columns=["u", "v"], k=3))
    assert_secret(path.read_bytes(), "the release database")
    for fmt in ("csv", "parquet"):
        out = tmp_path / f"r.{fmt}"
        rel = rwn_sql.perturb(con, "t", ["u", "v"], k=3, key=KEY)
        rel.write_csv(str(out)) if fmt == "csv" else rel.write_parquet(str(out))
        assert_secret(out.read_bytes(), f"the {fmt} output")
