"""A whole perturb under a memory limit spills to disk instead of running out of memory, and
releases exactly what an unlimited run releases (README: memory limit)."""
import duckdb
import pytest

import rwn_sql
from rwn_sql.rwn import run as rwn

from helpers.data import load_numpy

ROWS = 200_000
# The limit, measured on DuckDB 2.0.1 with 2 threads on these 200k uniform rows x 3 columns,
# k = 5 (benchmarks/bench_guards.py holds the 2M-row version, 500 MB): the neighbourhood search
# alone needs 100-120 MB; perturb now completes at 120 MB. Before the donor joins waited for the
# draws, their four hash tables of the input were built first and held through the search, and
# perturb ran out of memory at 150 MB (it needed 175 MB). 150 MB is 25% above the new floor and
# below the old one, so this test fails on the old plan and has room against noise. At this limit
# the package's own choice is the search level by level (200k records x 1 KB > 150 MB,
# rwn.search_in_steps), whose levels hash the grid points (with DuckDB's own choice of sides
# a level needed 500 MB of hash table here and ran out of memory); the one recursive statement
# is forced too.
LIMIT = "150MB"


@pytest.mark.skipif(tuple(int(x) for x in duckdb.__version__.split(".")[:2]) < (2, 0),
                    reason="the floor is measured on DuckDB 2.0; DuckDB 1.4 needs more (README: memory limit)")
@pytest.mark.parametrize("path", ["chosen (level by level)", "one statement"])
def test_perturb_under_a_memory_limit_spills_and_releases_the_same(tmp_path, set_limits, path):
    if path == "one statement":
        set_limits(RECURSIVE_BYTES_PER_RECORD=0)
    con = duckdb.connect(config={"temp_directory": str(tmp_path / "spill"), "threads": 2})
    con.execute(f"CREATE TABLE big AS SELECT (hash(range, 1) % 1000003) / 1000003 AS a, "
                f"(hash(range, 2) % 999983) / 999983 AS b, (hash(range, 3) % 1000033) / 1000033 AS c "
                f"FROM range({ROWS})").fetchall()
    rwn_sql.perturb(con, "big", ["a", "b", "c"], k=5, seed=1, into="unlimited")
    con.execute(f"SET memory_limit = '{LIMIT}'").fetchall()
    assert rwn.search_in_steps(rwn.backend_for(con), rwn.backend_for(con).source("big")) == (path != "one statement")
    rwn_sql.perturb(con, "big", ["a", "b", "c"], k=5, seed=1, into="limited")
    # rows, values and their order (rowid is the position in the written table)
    digest = "SELECT count(*), bit_xor(hash(rowid, a, b, c)) FROM {}"
    assert con.execute(digest.format("limited")).fetchall() == con.execute(digest.format("unlimited")).fetchall()
    assert con.execute(digest.format("limited")).fetchall()[0][0] == ROWS


@pytest.mark.heavy     # 2M rows; the default tier spills 200k rows (test_perturb_under_a_memory_limit_spills_and_releases_the_same)
@pytest.mark.skipif(tuple(int(x) for x in duckdb.__version__.split(".")[:2]) < (2, 0),
                    reason="the floor is measured on DuckDB 2.0; DuckDB 1.4 needs more (README: memory limit)")
def test_two_million_rows_at_500_mb(tmp_path):
    """Issue 10's case itself: 2M uniform rows x 3 columns, k = 5, memory_limit = 500MB (out of
    memory before; about 90 s here). Completes, one row per input row."""
    con = duckdb.connect(config={"temp_directory": str(tmp_path / "spill"), "threads": 2})
    con.execute("CREATE TABLE big AS SELECT (hash(range, 1) % 1000003) / 1000003 AS a, "
                "(hash(range, 2) % 999983) / 999983 AS b, (hash(range, 3) % 1000033) / 1000033 AS c "
                "FROM range(2000000)").fetchall()
    con.execute("SET memory_limit = '500MB'").fetchall()
    rwn_sql.perturb(con, "big", ["a", "b", "c"], k=5, seed=1, into="released")
    assert con.execute("SELECT count(*) FROM released").fetchall()[0][0] == 2_000_000


@pytest.mark.heavy     # a large input; in steps against one statement and the brute force: rwn/test_search_in_steps.py
@pytest.mark.skipif(tuple(int(x) for x in duckdb.__version__.split(".")[:2]) < (2, 0),
                    reason="the floor is measured on DuckDB 2.0; DuckDB 1.4 needs more (README: memory limit)")
def test_listed_eps_balls_beyond_the_limit_run_in_steps(tmp_path, set_limits):
    """eps-balls the search lists count against the memory limit (rwn.listed_pairs): 30k Gaussian
    records x 5 with about 86 members each (minmax scale), listed (the ball path kept off), hold
    about 2.6M pairs, over 300 MB at Limits.BYTES_PER_PAIR, while 30k records x 1 KB fit in 30 MB.
    Measured on DuckDB 2.0.1 with 2 threads: the one recursive statement that the record count
    alone chose runs out of memory at 256 MB (and fits at 320 MB), the search in steps completes
    at 80 MB; 144 MB sits about 1.8x from either. The steps release exactly what an unlimited run
    releases."""
    import numpy as np
    set_limits(BALL_MIN_MEMBERS=float("inf"))
    con = duckdb.connect(config={"temp_directory": str(tmp_path / "spill"), "threads": 2})
    x = np.random.default_rng(1).standard_normal((30_000, 5))
    columns, params = ["x0", "x1", "x2", "x3", "x4"], dict(k=5, eps=0.1, seed=1)
    load_numpy(con, "t", {c: x[:, i] for i, c in enumerate(columns)})
    rwn_sql.perturb(con, "t", columns, into="unlimited", **params)
    con.execute("SET memory_limit = '144MB'").fetchall()
    be = rwn.backend_for(con)
    spec = rwn.spec(columns, k=5, eps=0.1)
    pre = rwn.pre_passes(be, rwn.check_source(be, "t", spec), spec, "perturb")
    assert pre.ball is None and pre.in_steps
    rwn_sql.perturb(con, "t", columns, into="limited", **params)
    digest = "SELECT count(*), bit_xor(hash(rowid, x0, x1, x2, x3, x4)) FROM {}"
    assert con.execute(digest.format("limited")).fetchall() == con.execute(digest.format("unlimited")).fetchall()
