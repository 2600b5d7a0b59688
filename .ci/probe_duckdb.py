"""Probe the DuckDB features rwn_sql relies on; prints one line per feature: ok, or the error.

Run it with each venv's python (e.g. .venv-floor/bin/python .ci/probe_duckdb.py) to compare the
floor version with the current one. Needs only duckdb.
"""
import os
import tempfile

import warnings

import duckdb


def sql(con, text, params=None):
    return con.execute(text, params).fetchall() if params else con.execute(text).fetchall()


def set_variable_param(con):
    sql(con, "SET VARIABLE rwn_probe = ?", ["secret"])
    assert sql(con, "SELECT getvariable('rwn_probe')") == [("secret",)]


def lock_configuration(con):
    sql(con, "SET enable_external_access = false")
    sql(con, "SET lock_configuration = true")
    try:
        sql(con, "SET enable_external_access = true")
    except duckdb.Error:
        pass
    else:
        raise AssertionError("the locked setting changed")
    try:
        sql(con, f"SELECT * FROM read_csv('{CSV}')")
    except duckdb.Error:
        return
    raise AssertionError("a file was read with external access off")


def attach_read_only(con):
    sql(con, f"ATTACH '{DB}' AS ro (READ_ONLY)")
    assert sql(con, "SELECT count(*) FROM ro.t") == [(3,)]
    try:
        sql(con, "INSERT INTO ro.t VALUES (4)")
    except duckdb.Error:
        return
    raise AssertionError("wrote to a read-only attachment")


def attach_twice(con):
    # what rwn_sql does when a release file the user attached is named again
    sql(con, f"ATTACH '{DB}' AS first (READ_ONLY)")
    sql(con, f"ATTACH '{DB}' AS second (READ_ONLY)")


def copy_tsv_gzip(con):
    path = os.path.join(TMP, "out.tsv.gz")
    sql(con, f"COPY (SELECT 1 AS a, 'x' AS b) TO '{path}' (FORMAT csv, DELIMITER '\t', COMPRESSION gzip)")
    assert sql(con, f"SELECT * FROM read_csv('{path}')") == [(1, "x")]


def comment_on(con):
    sql(con, "CREATE TABLE c(a INTEGER)")
    sql(con, "COMMENT ON TABLE c IS 'table note'")
    sql(con, "COMMENT ON COLUMN c.a IS 'column note'")
    assert sql(con, "SELECT comment FROM duckdb_tables() WHERE table_name = 'c'") == [("table note",)]
    assert sql(con, "SELECT comment FROM duckdb_columns() WHERE table_name = 'c'") == [("column note",)]


def md5_number(con):
    import hashlib
    want = int.from_bytes(hashlib.md5(b"abc").digest(), "little")
    assert sql(con, "SELECT md5_number('abc')") == [(want,)]


def star_exclude(con):
    assert sql(con, "SELECT * EXCLUDE (b) FROM (SELECT 1 AS a, 2 AS b)") == [(1,)]


def recursive_cte_nested(con):
    # the shape of sql/rwn_neighborhoods.sql: a recursive term with its own WITH, an aggregate,
    # list_filter with a `lambda x:` and two UNION ALL branches
    rows = sql(con, """WITH RECURSIVE pts AS (SELECT range AS rid FROM range(5)),
        search(lvl, rid, done, members) AS (
            SELECT 0, rid, false, NULL::BIGINT[] FROM pts
            UNION ALL
            (WITH active AS (SELECT w.lvl + 1 AS lvl, w.rid FROM search w WHERE NOT w.done AND w.rid < 3),
                  found AS (SELECT a.lvl, a.rid, list(p.rid) AS got FROM active a, pts p GROUP BY ALL)
             SELECT lvl, rid, true, list_filter(got, lambda e: e <> rid) FROM found
             UNION ALL
             SELECT w.lvl + 1, w.rid, true, [] FROM search w WHERE NOT w.done AND w.rid >= 3))
        SELECT rid, len(members) FROM search WHERE done ORDER BY rid""")
    assert rows == [(0, 4), (1, 4), (2, 4), (3, 0), (4, 0)], rows


def order_by_join_key(con):
    # audit's rows: the select list has r.sex, ORDER BY names sex bare
    sql(con, "CREATE TABLE r AS SELECT 'F' AS sex, 1 AS value")
    sql(con, "CREATE TABLE g AS SELECT 'F' AS sex, true AS passes")
    sql(con, "SELECT r.sex, r.value, g.passes FROM r JOIN g ON r.sex = g.sex ORDER BY sex, r.value")


def stddev_of_infinity(con):
    sql(con, "SELECT stddev_samp(x), var_pop(x) FROM (VALUES (1.0), ('inf'::DOUBLE)) t(x)")


def query_table_doubled_quote(con):
    sql(con, 'CREATE TABLE "we""ird" AS SELECT 1 AS a')
    assert sql(con, """SELECT * FROM query_table('"we""ird"')""") == [(1,)]


def macro_empty_list_default(con):
    con.create_function("probe_len", lambda xs: len(xs), [duckdb.list_type("VARCHAR")], "BIGINT")
    sql(con, "CREATE MACRO probe_m(xs := []) AS TABLE SELECT probe_len(xs) AS n")
    assert sql(con, "SELECT * FROM probe_m()") == [(0,)]


def macro_typed_empty_list_default(con):
    con.create_function("probe_len", lambda xs: len(xs), [duckdb.list_type("VARCHAR")], "BIGINT")
    sql(con, "CREATE MACRO probe_m(xs := []::VARCHAR[]) AS TABLE SELECT probe_len(xs) AS n")
    assert sql(con, "SELECT * FROM probe_m()") == [(0,)]


def query_function(con):
    assert sql(con, "SELECT * FROM query('SELECT 42')") == [(42,)]


def sqltypes_module(con):
    from duckdb.sqltypes import VARCHAR  # noqa: F401 (rwn_sql.surface falls back to duckdb.typing)


def typing_module(con):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from duckdb.typing import VARCHAR  # noqa: F401


def unfetched_result_then_next(con):
    # rwn_sql's engine.run fetches every result because an unfetched one does not survive this
    first = con.execute("SELECT 1")
    con.execute("SELECT 2").fetchall()
    assert first.fetchall() == [(1,)]


def relation_fetchone(con):
    assert con.sql("SELECT 1").fetchone() == (1,)


PROBES = [set_variable_param, lock_configuration, attach_read_only, attach_twice, copy_tsv_gzip, comment_on,
          md5_number, star_exclude, recursive_cte_nested, order_by_join_key, stddev_of_infinity,
          query_table_doubled_quote, macro_empty_list_default, macro_typed_empty_list_default, query_function,
          sqltypes_module, typing_module, unfetched_result_then_next, relation_fetchone]

if __name__ == "__main__":
    TMP = tempfile.mkdtemp()
    CSV, DB = os.path.join(TMP, "in.csv"), os.path.join(TMP, "ro.duckdb")
    with open(CSV, "w") as f:
        f.write("a\n1\n")
    with duckdb.connect(DB) as setup:
        setup.execute("CREATE TABLE t AS SELECT range AS a FROM range(3)").fetchall()
    print(f"duckdb {duckdb.__version__}")
    for probe in PROBES:
        try:
            probe(duckdb.connect())
            verdict = "ok"
        except Exception as exc:  # the verdict is the error, whatever its kind
            verdict = f"FAILS: {type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:90]}"
        print(f"  {probe.__name__:32s} {verdict}")
