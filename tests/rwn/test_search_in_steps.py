"""On DuckDB, data too large for one recursive statement within the memory limit is searched
level by level, each level staged in a table that spills (rwn.search_in_steps, README "Memory
limit"). The path changes the memory and the speed, never the result: for a key, releases,
donors and neighbourhoods equal the one-statement path's, and both equal the brute force."""
import numpy as np
import pytest

import rwn_sql
from rwn_sql import limits
from rwn_sql.rwn import run as rwn
from rwn_sql.engines.backend import backend_for

from helpers.bruteforce import neighborhoods_of
from helpers.data import load_numpy, tied_data

KEY = "steps-test-key-0123456789"


@pytest.fixture
def steps(monkeypatch, con):
    """A function that runs its argument in one statement, then level by level, then level
    by level with every large level in chunks; it checks the three give the same and
    returns the first and the last."""
    def both(run):
        with limits.use(RECURSIVE_BYTES_PER_RECORD=0):                     # never over the limit
            one = run()
        with limits.use(RECURSIVE_BYTES_PER_RECORD=10 ** 15, LEVEL_SHARE=1.0):   # always over it
            whole = run()
        assert whole == one
        # a level of more than 20 searching records in chunks (20 KB a chunk)
        limit = backend_for(con).memory_limit()
        chunks = []
        real = rwn.level_chunks
        monkeypatch.setattr(rwn, "level_chunks", lambda *a: chunks.append(len(real(*a))) or real(*a))
        with limits.use(RECURSIVE_BYTES_PER_RECORD=10 ** 15, LEVEL_SHARE=20_000 / limit, HASHED_BYTES_PER_POINT=0):
            chunked = run()
        assert max(chunks) > 1
        return one, chunked
    return both


def gaussian(n, d, seed, correlated=False) -> dict:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    if correlated:                     # three latent factors: principal axes are the grid
        x = rng.standard_normal((n, 3)) @ rng.standard_normal((3, d)) + 0.05 * x
    return {f"x{i}": x[:, i] for i in range(d)}


CASES = {
    "3 columns": (lambda: gaussian(200, 3, 1), dict(k=5, eps=0.0)),
    "3 columns, eps": (lambda: gaussian(200, 3, 2), dict(k=3, eps=0.15)),
    "5 columns": (lambda: gaussian(200, 5, 3), dict(k=5, eps=0.0)),
    "7 columns (a 5-d grid on the columns of largest spread)": (lambda: gaussian(150, 7, 14), dict(k=3, eps=0.0)),
    "6 correlated columns (principal axes)": (lambda: gaussian(200, 6, 4, correlated=True), dict(k=4, eps=0.0)),
    "ties and duplicates": (lambda: tied_data(200, 5), dict(k=5, eps=0.0)),
    "ties, eps, q": (lambda: tied_data(200, 6), dict(k=2, eps=0.3, q=0.6)),
}


# In steps on the larger grids: the heavy tier (those grids against the brute force in one statement:
# rwn/test_grid_dims.py, rwn/test_grid_axes.py); the small cases keep the property in the default tier.
LARGER_GRIDS = {"5 columns", "7 columns (a 5-d grid on the columns of largest spread)", "6 correlated columns (principal axes)"}


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.heavy) if c in LARGER_GRIDS else c for c in CASES])
def test_in_steps_equals_one_statement_and_the_brute_force(con, steps, case):
    make, params = CASES[case]
    data = make()
    load_numpy(con, "t", data)
    columns = list(data)
    one, staged = steps(lambda: (
        rwn_sql.neighborhoods(con, "t", columns, k=params["k"], eps=params["eps"]).fetchall(),
        rwn_sql.donors(con, "t", columns, key=KEY, **params).fetchall(),
        rwn_sql.perturb(con, "t", columns, key=KEY, **params).fetchall()))
    assert staged == one
    want = neighborhoods_of(data, columns, params["k"], params["eps"])
    assert {r[0]: r[1] for r in staged[0]} == {i: len(s) for i, s in want.items()}


def test_strata_categorical_id_and_pairs(con, steps):
    rng = np.random.default_rng(8)
    n = 240
    data = {"id": rng.permutation(n) * 7 + 3, "a": rng.random(n), "b": rng.random(n),
            "colour": rng.choice(["red", "green", "blue"], n), "site": rng.choice(["north", "south"], n)}
    load_numpy(con, "t", data)
    params = dict(k=3, eps=0.1, categorical=["colour"], strata=["site"], id="id")
    columns = ["a", "b", "colour"]
    one, staged = steps(lambda: (
        rwn_sql.neighborhoods(con, "t", columns, pairs=True, **params).fetchall(),
        rwn_sql.perturb(con, "t", columns, key=KEY, q=0.7, **params).fetchall()))
    assert sorted(staged[0]) == sorted(one[0]) and staged[1] == one[1]


def test_ball_path_in_steps(con, steps, set_limits):
    """Large eps-balls counted, not listed (ball_sql.BallPieces): the same draws in steps."""
    set_limits(BALL_MIN_PAIRS=1_000, BALL_MIN_MEMBERS=8)
    data = gaussian(400, 3, 9)
    load_numpy(con, "t", data)
    be = backend_for(con)
    spec = rwn.spec(list(data), k=5, eps=0.15)
    assert rwn.ball_path(be, rwn.check_source(be, "t", spec), spec) is not None
    one, staged = steps(lambda: rwn_sql.perturb(con, "t", list(data), k=5, eps=0.15, key=KEY).fetchall())
    assert staged == one


def test_tune_replicates_in_steps(con, steps):
    """tune's replicate releases over neighbourhoods staged once (rwn.stage_neighborhoods)."""
    from rwn_sql.evaluation import tune
    data = gaussian(200, 3, 10)
    load_numpy(con, "t", data)
    one, staged = steps(lambda: tune.sweep(con, "t", list(data), [0.0, 0.2], reps=2, seed=3))
    assert staged.to_dict() == one.to_dict()


def test_the_choice_follows_the_memory_limit(con, set_limits):
    """Records x RECURSIVE_BYTES_PER_RECORD against the limit (a large per-record figure here,
    so that the limits stay ordinary: DuckDB 1.4 cannot read its catalog under 1 MB)."""
    load_numpy(con, "t", gaussian(1000, 3, 11))
    set_limits(RECURSIVE_BYTES_PER_RECORD=1_000_000)                      # 1,000 records: 1 GB
    be = backend_for(con)
    src = rwn.check_source(be, "t", rwn.spec(["x0", "x1", "x2"], k=5))
    con.execute("SET memory_limit = '2GB'")
    assert not rwn.search_in_steps(be, src)
    con.execute("SET memory_limit = '512MB'")
    assert rwn.search_in_steps(be, src)
    sql = rwn_sql.perturb(con, "t", ["x0", "x1", "x2"], k=5, sql=True)
    assert "rwn_level_<L+1>" in sql and "WITH RECURSIVE" not in sql     # the steps, as they run
    # the donors' values fetched one column per step, the release reading the last
    assert "-- step rwn_values_3" in sql and "picks AS (SELECT * FROM rwn_values_3)" in sql


def test_staged_levels_are_forgotten_and_settings_restored(con, steps):
    """No staged table is left behind, after a result or an error, and the connection's own
    optimizer setting comes back after each level (which runs with the join sides as written)."""
    load_numpy(con, "t", gaussian(200, 3, 12))
    con.execute("CREATE TABLE empty AS SELECT * FROM t LIMIT 0")
    con.execute("SET disabled_optimizers = 'top_n'")
    tables = "SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE 'rwn_stage_%'"

    def run():
        rwn_sql.perturb(con, "t", ["x0", "x1", "x2"], key=KEY, into="released", replace=True)
        with pytest.raises(rwn_sql.RWNError, match="no records"):
            rwn_sql.perturb(con, "empty", ["x0", "x1", "x2"], key=KEY, into="nothing")
        return (con.execute(tables).fetchall()[0][0], con.execute("SELECT current_setting('disabled_optimizers')").fetchall(),
                con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'nothing'").fetchall()[0][0])
    one, staged = steps(run)
    assert one == staged == (0, [("top_n",)], 0)


def test_a_level_hashes_the_grid_points(con, monkeypatch, set_limits, tmp_path):
    """The level statement builds its hash table on the grid points, not on the candidate side
    (searching records x neighbour cells, 27 times larger here), which DuckDB's estimates of
    the staged rows would choose (500 MB of hash table against 25 MB at 200k records)."""
    load_numpy(con, "t", gaussian(20_000, 3, 13))
    be = backend_for(con)
    plans = []
    real = be.__class__.stage

    def stage(self, sql, joins_as_written=False):
        if not joins_as_written:
            return real(self, sql, joins_as_written)
        profile = tmp_path / f"level{len(plans)}.json"
        self.con.execute("SET enable_profiling = 'json'")
        self.con.execute(f"SET profiling_output = '{profile}'")
        try:
            return real(self, sql, joins_as_written)
        finally:
            self.con.execute("SET enable_profiling = 'no_output'")
            plans.append(profile.read_text())
    monkeypatch.setattr(be.__class__, "stage", stage)
    set_limits(RECURSIVE_BYTES_PER_RECORD=10 ** 15)
    rwn_sql.perturb(con, "t", ["x0", "x1", "x2"], key=KEY, into="released")
    levels = [plan for plan in plans if "cell_key" in plan]
    values = [plan for plan in plans if "donor_" in plan]
    assert levels and len(values) == 3 and len(levels) + len(values) == len(plans)
    for plan in levels:
        # a hash join's condition names its probe side's key first
        assert "nb_key = cell_key" in plan and "cell_key = nb_key" not in plan
    for i, plan in enumerate(values, 1):
        # fetching a column's donor values hashes the rows (two columns), not the picks
        assert f"donor_{i} = __rwn_rid" in plan and f"__rwn_rid = donor_{i}" not in plan
