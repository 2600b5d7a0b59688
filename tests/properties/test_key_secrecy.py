"""Issue 8 R11: the key never appears in SQL text, views, errors, profiles or release files, in
any of its forms (the key, its hex, the MD5 subkeys the hashes derive from it)."""
import hashlib

import duckdb
import pytest

import rwn_sql
from rwn_sql import RWNError
from rwn_sql.rp import api as rp
from rwn_sql.rp.core.sqlgen import BLOCK_PURPOSE, ORDER_PURPOSE, RANDOMIZE_PURPOSE
from rwn_sql.evaluation.baselines import RANK_SWAP_PURPOSE
from rwn_sql.rwn.sqlgen import ORDER_PURPOSE as RWN_ORDER, PERTURB_PURPOSE

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


# --- Issue 22 F2: no plan form shows the key or a subkey; keys do not outlive their call ------

PURPOSES = (RANDOMIZE_PURPOSE, BLOCK_PURPOSE, ORDER_PURPOSE, PERTURB_PURPOSE, RWN_ORDER, RANK_SWAP_PURPOSE)
COLUMNS = ("", "id", "sex", "race", "occ", "u", "v")


def every_form(key: str, replicates: int = 3) -> list[str]:
    """The key, its hex, and every value derived from the key alone that the code could compute:
    md5(key|purpose|column) for every purpose and column, and the same for the replicates' keys
    key#r (tune's sweep, rank swapping with reps=)."""
    keys = [key] + [f"{key}#{r}" for r in range(replicates)]
    out = [key, key.encode().hex()]
    for k in keys:
        out += [hashlib.md5(f"{k}|{p}|{c}".encode()).hexdigest() for p in PURPOSES for c in COLUMNS]
    return out


def leaks(text) -> list[str]:
    text = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
    return [f for f in every_form(KEY) if f.lower() in text.lower()]


def plans(con, sql: str, tmp_path) -> dict[str, str]:
    """Every text DuckDB shows of the plan of `sql`: EXPLAIN, EXPLAIN ANALYZE and the profiling
    output in both formats (json and query_tree), written while the statement runs."""
    out = {"EXPLAIN": "\n".join(r[1] for r in con.execute("EXPLAIN " + sql).fetchall()),
           "EXPLAIN ANALYZE": "\n".join(r[1] for r in con.execute("EXPLAIN ANALYZE " + sql).fetchall())}
    for fmt in ("json", "query_tree"):
        out[f"profile {fmt}"] = profiled(con, lambda: con.execute(sql).fetchall(), tmp_path, fmt)
    return out


def profiled(con, call, tmp_path, fmt: str = "json") -> str:
    """The profiling output (`fmt`) of every statement `call` runs on `con`."""
    import uuid
    path = tmp_path / f"profile-{uuid.uuid4().hex}.{'json' if fmt == 'json' else 'txt'}"
    con.execute(f"PRAGMA enable_profiling = '{fmt}'").fetchall()
    con.execute(f"PRAGMA profiling_output = '{path}'").fetchall()
    try:
        call()
    finally:
        con.execute("PRAGMA disable_profiling").fetchall()
        con.execute("RESET profiling_output").fetchall()
    return path.read_text() if path.exists() else ""


def stored_keys(con) -> list[str]:
    """Where the key is still held in the session: a variable, or a row of any TEMP table."""
    where = [f"variable {n}" for n, v in con.execute("SELECT name, CAST(value AS VARCHAR) FROM duckdb_variables()")
             .fetchall() if v is not None and KEY in v and n != "rwn_key"]
    for (table,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall():
        rows = con.execute(f'SELECT CAST(t AS VARCHAR) FROM temp.main."{table}" AS t').fetchall()
        if any(KEY in r[0] for r in rows):
            where.append(f"TEMP table {table}")
    return where


def lazy_releases(con):
    return {"perturb": rwn_sql.perturb(con, "t", ["u", "v"], k=3, key=KEY),
            "perturb id=": rwn_sql.perturb(con, "t", ["u", "v"], k=3, key=KEY, id="id"),
            "perturb strata": rwn_sql.perturb(con, "t", ["u", "v"], k=3, key=KEY, strata=["sex"], eps=0.1, q=0.8),
            "donors": rwn_sql.donors(con, "t", ["u", "v"], k=3, key=KEY),
            "randomize": rp.randomize(con, "t", "occ", 0.5, public=["sex", "race"], key=KEY),
            "randomize id=": rp.randomize(con, "t", "occ", 0.5, public=["sex", "race"], key=KEY, id="id"),
            "enforced": rp.randomize(con, "t", "occ", 0.5, public=["sex", "race"], key=KEY, enforce=(0.5, 0.05))}


def test_no_plan_of_a_release_shows_the_key_or_a_subkey(con, tmp_path):
    """Catches DuckDB folding the key (getvariable) and md5(key|purpose|column) into literals
    that EXPLAIN, EXPLAIN ANALYZE, the profiling output, rel.explain() and views show: with
    a subkey anyone computes the keyed row order and maps released rows to input positions."""
    found = {}
    for name, rel in lazy_releases(con).items():
        sql = rel.sql_query()
        texts = dict(plans(con, sql, tmp_path), **{"sql_query()": sql, "rel.explain()": rel.explain(),
                                                    "rel.explain('analyze')": rel.explain("analyze")})
        rel.create_view("v_" + name.replace(" ", "_").replace("=", ""))
        found.update({f"{name}: {where}": leaks(text) for where, text in texts.items() if leaks(text)})
    views = con.execute("SELECT string_agg(sql, '\n') FROM duckdb_views() WHERE NOT internal").fetchall()[0][0]
    if leaks(views):
        found["views"] = leaks(views)
    assert not found, f"the key or a subkey shows in {sorted(found)}"


def test_no_profile_of_an_eager_call_shows_the_key_or_a_subkey(con, tmp_path):
    """Catches subkeys folded into the plans of the calls that run at once (into=, release,
    rank swapping, tune's sweep): their profiling output is the plan form a user sees."""
    from rwn_sql.evaluation import baselines, tune
    calls = {"perturb into=": lambda: rwn_sql.perturb(con, "t", ["u", "v"], k=3, key=KEY, into="p_into", replace=True),
             "randomize into=": lambda: rp.randomize(con, "t", "occ", 0.5, public=["sex"], key=KEY, into="r_into", replace=True),
             "enforced into=": lambda: rp.randomize(con, "t", "occ", 0.5, public=["sex", "race"], key=KEY,
                                                    enforce=(0.5, 0.05), into="e_into", replace=True),
             "release": lambda: rp.release(con, "t", str(tmp_path / "rel.duckdb"), "occ", 0.5,
                                           public=["sex", "race", "u", "v"], key=KEY, enforce=(0.5, 0.05),
                                           rwn=dict(columns=["u", "v"], k=3), overwrite=True),
             "rank swap": lambda: baselines.rank_swap(con, "t", ["u", "v"], 10, key=KEY).fetchall(),
             "rank swap reps": lambda: con.execute(baselines.rank_swap_statement(con, "t", ["u", "v"], 10, key=KEY,
                                                                                 reps=2)).fetchall(),
             "tune": lambda: tune.sweep(con, "t", ["u", "v"], [0.0, 0.1], k=3, reps=2, key=KEY, rank_swap=[5])}
    found = {}
    for name, call in calls.items():
        for fmt in ("json", "query_tree"):
            hits = leaks(profiled(con, call, tmp_path, fmt))
            if hits:
                found[f"{name} ({fmt})"] = hits
    assert not found, f"the key or a subkey shows in the profile of {sorted(found)}"


def test_no_plan_of_a_macro_shows_the_key_or_a_subkey(con, tmp_path):
    """Catches the macros' key function rwn_key_of('token') being folded into a constant, and
    with it every subkey, in EXPLAIN, EXPLAIN ANALYZE and the profiling output of a macro call
    (the key itself comes from the caller's variable)."""
    rwn_sql.install(con)
    con.execute("SET VARIABLE rwn_key = ?", [KEY]).fetchall()
    calls = {"rwn_perturb": "SELECT * FROM rwn_perturb('t', ['u', 'v'], k := 3, key := getvariable('rwn_key'))",
             "rwn_randomize": "SELECT * FROM rwn_randomize('t', 'occ', 0.5, public := ['sex', 'race'], "
                              "key := getvariable('rwn_key'))",
             "rwn_randomize enforced": "SELECT * FROM rwn_randomize('t', 'occ', 0.5, public := ['sex', 'race'], "
                                       "key := getvariable('rwn_key'), epsilon := 0.5, delta := 0.05)"}
    found = {}
    for name, sql in calls.items():
        for where, text in plans(con, sql, tmp_path).items():
            if leaks(text):
                found[f"{name}: {where}"] = leaks(text)
    assert not found, f"the key or a subkey shows in {sorted(found)}"
    assert con.execute(calls["rwn_randomize"]).fetchall() == \
        rp.randomize(con, "t", "occ", 0.5, public=["sex", "race"], key=KEY).fetchall()


def test_keys_are_gone_after_eager_calls(con, tmp_path):
    """Catches keys left in the session (a __rwn_key_* variable per call before) once a call
    that writes at once returns: into=, release, rank swapping, tune's sweep."""
    from rwn_sql.evaluation import baselines, tune
    rwn_sql.perturb(con, "t", ["u", "v"], k=3, key=KEY, into="p_into")
    rp.randomize(con, "t", "occ", 0.5, public=["sex"], key=KEY, into="r_into")
    rp.randomize(con, "t", "occ", 0.5, public=["sex", "race"], key=KEY, enforce=(0.5, 0.05), into="e_into")
    rp.release(con, "t", str(tmp_path / "rel.duckdb"), "occ", 0.5, public=["sex", "race", "u", "v"], key=KEY,
               rwn=dict(columns=["u", "v"], k=3))
    baselines.rank_swap(con, "t", ["u", "v"], 10, key=KEY).fetchall()
    tune.sweep(con, "t", ["u", "v"], [0.0, 0.1], k=3, reps=2, key=KEY, rank_swap=[5])
    assert stored_keys(con) == []


def test_keys_are_gone_after_an_interrupt(con, monkeypatch):
    """Catches a key left behind when a call is interrupted: by conn.interrupt() while the
    statement runs, and by a KeyboardInterrupt (Ctrl-C) while it writes, a lazy call's too."""
    import threading
    from rwn_sql.engines import outputs
    con.execute("CREATE TABLE big AS SELECT i AS id, CAST(hash(i) % 100003 AS DOUBLE) AS u, "
                "CAST(hash(i + 7) % 100019 AS DOUBLE) AS v FROM range(300000) r(i)").fetchall()
    timer = threading.Timer(0.5, con.interrupt)
    timer.start()
    try:
        with pytest.raises((duckdb.InterruptException, RWNError, KeyboardInterrupt)):
            rwn_sql.perturb(con, "big", ["u", "v"], k=3, eps=0.2, key=KEY, into="never")
    finally:
        timer.cancel()
    assert stored_keys(con) == []

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(outputs, "write_table", ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        rp.randomize(con, "t", "occ", 0.5, public=["sex"], key=KEY, into="never")
    assert stored_keys(con) == []
    monkeypatch.setattr(outputs, "deliver", ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        rp.randomize(con, "t", "occ", 0.5, public=["sex"], key=KEY)      # lazy, interrupted before it returns
    assert stored_keys(con) == []


def test_lazy_relations_share_one_key_until_forget_keys(con):
    """Catches keys piling up (one per call) and a key that cannot be removed: relations share
    one stored copy per distinct key; rwn_sql.forget_keys(con) removes it and the macros' keys,
    after which the relations fail instead of releasing under a missing key."""
    rels = [rwn_sql.perturb(con, "t", ["u", "v"], k=3, key=KEY) for _ in range(3)]
    rels += [rp.randomize(con, "t", "occ", 0.5, public=["sex"], key=KEY) for _ in range(3)]
    assert len(stored_keys(con)) == 1
    table = con.execute("SELECT count(*) FROM temp.main.__rwn_keys").fetchall()[0][0]
    assert table == 1
    rwn_sql.install(con)
    con.execute("SET VARIABLE rwn_key = ?", [KEY]).fetchall()
    con.execute("SELECT * FROM rwn_perturb('t', ['u', 'v'], k := 3, key := getvariable('rwn_key'))").fetchall()
    from rwn_sql.randomness import MACRO_KEYS
    assert list(MACRO_KEYS[con].values()) == [KEY]
    rwn_sql.forget_keys(con)
    assert stored_keys(con) == [] and MACRO_KEYS[con] == {}
    with pytest.raises(duckdb.Error, match="__rwn_keys does not exist"):
        rels[0].fetchall()
    # a new call stores the key again, and a relation made then runs
    assert len(rwn_sql.perturb(con, "t", ["u", "v"], k=3, key=KEY).fetchall()) == 60
