"""Principal axes as grid coordinates (rwn.grid_axes, geometry.check_axes): on correlated data the
grid runs along the data's leading directions. Only the speed may change: neighbourhoods equal
the brute force and releases equal those of the column grid, bit for bit."""
import duckdb
import numpy as np
import pytest

from helpers import bruteforce as bf
import rwn_sql
from helpers.data import load_numpy
from rwn_sql import limits
from rwn_sql.rwn import geometry, run as rwn, sqlgen
from rwn_sql.engines.backend import backend_for
from helpers.datasets import clumped, correlated, nonempty, sql_sets

KEY = "axes test key, long enough to use"


def axes_of(con, table, cols, **kw):
    be = backend_for(con)
    spec = rwn_sql.RWNSpec(columns=tuple(cols), **kw)
    return rwn.grid_axes(be, rwn.check_source(be, table, spec, guard=False), spec)


def brute(data, cols, k, eps, categorical=(), strata=None, weight=1.0, scale="minmax"):
    return nonempty(bf.neighborhoods_of(data, cols, k, eps, categorical, strata, weight, scale))


def without_axes():
    """The grid on the columns: no variance gain is enough for principal axes."""
    return limits.use(PCA_GAIN=float("inf"))


@pytest.mark.parametrize("integer", [False, True])
def test_correlated_data_gets_axes_and_equals_brute_force(con, integer):
    data = correlated(500, 3, integer)
    load_numpy(con, "corr", data)
    cols = list(data)
    axes = axes_of(con, "corr", cols)
    assert axes is not None and geometry.BASE_GRID_DIMS <= len(axes) <= 5
    for u in axes:
        assert sum(c * c for c in u) <= 1 + geometry.AXIS_NORM_SLACK
    for k, eps, scale in [(5, 0.0, "minmax"), (1, 0.0, "minmax"), (3, 0.1, "minmax"),
                          (4, 0.0, "zscore"), (2, 0.0, "none")]:
        got = sql_sets(con, "corr", cols, k=k, eps=eps, scale=scale)
        assert got == brute(data, cols, k, eps, scale=scale)
    with_axes = rwn_sql.perturb(con, "corr", cols, k=4, eps=0.05, key=KEY, order="input").fetchall()
    with without_axes():
        assert axes_of(con, "corr", cols) is None
        assert rwn_sql.perturb(con, "corr", cols, k=4, eps=0.05, key=KEY, order="input").fetchall() == with_axes


def test_strata_and_categorical_columns_with_axes(con):
    n = 500
    rng = np.random.default_rng(8)
    data = {**correlated(n, 8, integer=True), "colour": rng.choice(["red", "green"], n),
            "sex": rng.choice(["F", "M"], n)}
    load_numpy(con, "mixed", data)
    cols = [f"v{i}" for i in range(6)] + ["colour"]
    kw = dict(categorical=("colour",), strata=("sex",))
    assert axes_of(con, "mixed", cols, **kw) is not None
    for k, eps, weight in [(4, 0.0, 0.2), (2, 0.1, 1.0)]:
        got = sql_sets(con, "mixed", cols, k=k, eps=eps, weight=weight, **{c: list(v) for c, v in kw.items()})
        assert got == brute(data, cols, k, eps, categorical=["colour"], strata=["sex"], weight=weight)
    release = lambda: rwn_sql.perturb(con, "mixed", cols, k=3, key=KEY, **kw).fetchall()  # noqa: E731
    with_axes = release()
    with without_axes():
        assert axes_of(con, "mixed", cols, **kw) is None
        assert release() == with_axes


def test_isotropic_data_keeps_the_column_grid(con):
    rng = np.random.default_rng(1)
    data = {f"v{i}": rng.normal(size=400) for i in range(5)}
    load_numpy(con, "iso", data)
    assert axes_of(con, "iso", list(data)) is None
    data3 = correlated(300, 2)
    load_numpy(con, "three", {c: data3[c] for c in ("v0", "v1", "v2")})
    assert axes_of(con, "three", ["v0", "v1", "v2"]) is None        # D <= 3: never


def test_any_unit_directions_stay_exact(con):
    """Random unit directions (not the data's): exactness does not depend on the eigenvectors."""
    data = correlated(400, 5, integer=True)
    load_numpy(con, "rand", data)
    cols = list(data)
    rng = np.random.default_rng(0)
    u = rng.normal(size=(5, 6))
    axes = tuple(tuple(r * (1 - 1e-15)) for r in u / np.linalg.norm(u, axis=1, keepdims=True))
    spec = rwn_sql.RWNSpec(columns=tuple(cols), k=3)
    rows = con.execute(sqlgen.neighborhoods_sql('"rand"', spec, pairs=True, axes=axes)).fetchall()
    got = {}
    for record, neighbor, _ in rows:
        got.setdefault(record, set()).add(neighbor)
    assert got == brute(data, cols, 3, 0.0)


def test_directions_longer_than_one_are_refused():
    spec = rwn_sql.RWNSpec(columns=tuple(f"v{i}" for i in range(4)))
    unit = [tuple(1.0 if j == i else 0.0 for j in range(4)) for i in range(4)]
    geometry.check_axes(unit, spec)
    with pytest.raises(ValueError, match="norm at most 1"):
        geometry.check_axes([(1.0, 0.01, 0.0, 0.0)] + unit[1:], spec)
    geometry.check_axes(unit[:3], spec)                      # a 3-d grid on 4 columns
    with pytest.raises(ValueError, match="3 to 4 directions of 4"):
        geometry.check_axes(unit[:2], spec)
    with pytest.raises(ValueError):
        geometry.check_axes(unit[:3], rwn_sql.RWNSpec(columns=("a", "b", "c")))


def test_the_statement_is_a_function_of_spec_and_axes():
    """Deterministic axes (signs fixed) give the same SQL text on every call."""
    con = duckdb.connect()
    data = correlated(300, 4)
    load_numpy(con, "d", data)
    assert axes_of(con, "d", list(data)) == axes_of(con, "d", list(data))
    for u in axes_of(con, "d", list(data)):
        assert u[int(np.argmax(np.abs(u)))] > 0


def start_levels(con, table, cols, **kw):
    """(records, records whose start level the second density round made finer, grid dims)."""
    be = backend_for(con)
    spec = rwn_sql.RWNSpec(columns=tuple(cols), **kw)
    axes = rwn.grid_axes(be, rwn.check_source(be, table, spec, guard=False), spec)
    ctes = sqlgen.neighborhood_ctes(f'"{table}"', spec, axes=axes)
    return con.execute(f"WITH RECURSIVE {ctes} SELECT count(*), count(*) FILTER (WHERE start_lvl < first_lvl), "
                       f"any_value(grid_dims) FROM points JOIN first_level USING (rid), settings").fetchone()


@pytest.mark.parametrize("integer", [False, True])
def test_a_fourth_axis_and_finer_start_levels_equal_brute_force(con, integer):
    """Where 3 axes leave out more than AXES_LEFT_OUT of the variance the grid takes a 4th; in
    clumps the second density round starts records on a finer grid. Both only change the speed."""
    data = clumped(600, 11, integer)
    load_numpy(con, "clumps", data)
    cols = list(data)
    axes = axes_of(con, "clumps", cols)
    assert axes is not None and len(axes) == 4
    records, finer, dims = start_levels(con, "clumps", cols, k=5)
    assert dims == 4 and records == 600 and finer > 0        # the second round is exercised
    for k, eps, scale in [(5, 0.0, "minmax"), (1, 0.0, "minmax"), (3, 0.05, "minmax"), (4, 0.0, "zscore")]:
        assert sql_sets(con, "clumps", cols, k=k, eps=eps, scale=scale) == brute(data, cols, k, eps, scale=scale)
    release = lambda: rwn_sql.perturb(con, "clumps", cols, k=4, eps=0.02, key=KEY, order="input").fetchall()  # noqa: E731
    with_axes = release()
    with without_axes():
        assert axes_of(con, "clumps", cols) is None
        assert release() == with_axes


def test_a_fourth_axis_with_strata_and_categories(con):
    n = 600
    rng = np.random.default_rng(12)
    data = {**clumped(n, 12, integer=True), "colour": rng.choice(["red", "green"], n), "sex": rng.choice(["F", "M"], n)}
    load_numpy(con, "clumps_mixed", data)
    cols = [f"v{i}" for i in range(7)] + ["colour"]
    kw = dict(categorical=("colour",), strata=("sex",))
    assert len(axes_of(con, "clumps_mixed", cols, **kw)) == 4
    assert start_levels(con, "clumps_mixed", cols, k=1, **kw)[1] > 0
    for k, eps, weight in [(1, 0.0, 0.2), (4, 0.0, 0.2), (2, 0.1, 1.0)]:
        got = sql_sets(con, "clumps_mixed", cols, k=k, eps=eps, weight=weight, **{c: list(v) for c, v in kw.items()})
        assert got == brute(data, cols, k, eps, categorical=["colour"], strata=["sex"], weight=weight)
