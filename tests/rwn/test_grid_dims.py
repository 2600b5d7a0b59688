"""Grids of more than 3 dimensions, the grid dimension chosen at run time, and the packed cell
key: neighbourhoods equal the brute force, as sets, on every code path."""
import numpy as np
import pytest

from helpers import bruteforce as bf
import rwn_sql
from helpers.data import load_numpy
from rwn_sql import limits
from rwn_sql.rwn import geometry, run as rwn, sqlgen
from rwn_sql.engines.backend import backend_for
from helpers.datasets import nonempty, sql_sets


def grid_dims(con, table, columns, **kw) -> int:
    """The grid dimension the search chose for this data (the `settings` step)."""
    spec = rwn_sql.RWNSpec(columns=tuple(columns), **kw)
    steps = sqlgen.neighborhood_steps(f'"{table}"', spec)
    names = ["src", "staged", "stats", "strata_sizes", "params", "settings"]
    return con.execute("WITH " + ",\n".join(steps[n] for n in names)
                       + "\nSELECT grid_dims FROM settings").fetchone()[0]


def check(con, table, data, cols, k, eps, categorical=(), strata=None, weight=1.0, scale="minmax"):
    ref = bf.neighborhoods_of(data, cols, k, eps, categorical, strata, weight, scale)
    got = sql_sets(con, table, cols, k=k, eps=eps, categorical=list(categorical),
                   strata=list(strata or []), weight=weight, scale=scale)
    assert got == nonempty(ref)


@pytest.mark.parametrize("dims", [4, 5])
def test_isotropic_data_gets_a_grid_of_its_dimension(con, dims):
    rng = np.random.default_rng(dims)
    pts = rng.normal(size=(500, dims))
    pts[:3] *= 2                                              # a few far records
    data = {f"v{i}": pts[:, i] for i in range(dims)}
    load_numpy(con, "iso", data)
    assert grid_dims(con, "iso", list(data)) == dims
    for k, eps in [(5, 0.0), (1, 0.0), (3, 0.15), (0, 0.2)]:
        check(con, "iso", data, list(data), k, eps)


def test_more_columns_than_grid_dimensions(con):
    """7 isotropic columns: a 5-d grid on the columns of largest spread, distances over all 7."""
    rng = np.random.default_rng(7)
    data = {f"v{i}": rng.uniform(size=400) * (1 + i) for i in range(7)}
    load_numpy(con, "wide", data)
    assert grid_dims(con, "wide", list(data)) == 5
    for k, eps in [(5, 0.0), (2, 0.3)]:
        check(con, "wide", data, list(data), k, eps)


def test_correlated_data_keeps_a_3d_grid_and_stays_exact(con):
    """Five columns driven by two latent factors: the unused grid dimensions are one cell."""
    rng = np.random.default_rng(2)
    latent = rng.normal(size=(500, 2))
    pts = latent @ rng.normal(size=(2, 5)) + 0.01 * rng.normal(size=(500, 5))
    data = {f"v{i}": pts[:, i] for i in range(5)}
    load_numpy(con, "corr", data)
    assert grid_dims(con, "corr", list(data)) == 3
    for k, eps in [(5, 0.0), (2, 0.05)]:
        check(con, "corr", data, list(data), k, eps)


@pytest.mark.parametrize("k,eps", [(1, 0.0), (4, 0.0), (3, 0.25)])
def test_ties_on_a_5d_lattice(con, k, eps):
    """Integer values: exact ties at the radius and duplicate records, on a 5-d grid."""
    rng = np.random.default_rng(k)
    data = {c: rng.integers(0, 4, 400).astype(float) for c in "abcde"}
    load_numpy(con, "lattice", data)
    assert grid_dims(con, "lattice", list(data)) == 5
    check(con, "lattice", data, list(data), k, eps)


def test_strata_and_categorical_columns_on_a_5d_grid(con):
    rng = np.random.default_rng(9)
    n = 500
    data = {**{f"v{i}": rng.normal(size=n) for i in range(5)},
            "colour": rng.choice(["red", "green", "blue"], n), "sex": rng.choice(["F", "M"], n)}
    load_numpy(con, "mixed", data)
    cols = [f"v{i}" for i in range(5)] + ["colour"]
    assert grid_dims(con, "mixed", cols, categorical=("colour",), strata=("sex",)) == 5
    for k, eps, weight in [(4, 0.0, 0.2), (2, 0.1, 1.0)]:
        check(con, "mixed", data, cols, k, eps, categorical=["colour"], strata=["sex"], weight=weight)


@pytest.mark.parametrize("dims", [3, 5])
def test_cell_keys_that_wrap_stay_exact(con, dims):
    """With 2 bits per grid dimension, far cells share a packed key: they only add candidates,
    which the margin filters."""
    rng = np.random.default_rng(dims + 20)
    pts = rng.normal(size=(400, dims)) * np.where(rng.random((400, 1)) < 0.5, 0.01, 1.0)  # dense core
    data = {f"v{i}": pts[:, i] for i in range(dims)}
    load_numpy(con, "wrap", data)
    with limits.use(CELL_KEY_BITS=2 * dims):
        for k, eps in [(5, 0.0), (2, 0.05)]:
            check(con, "wrap", data, list(data), k, eps)


def finer_starts(con, table, columns, **kw) -> int:
    """Records whose start level the second density round (`points`) made finer than the first."""
    spec = rwn_sql.RWNSpec(columns=tuple(columns), **kw)
    ctes = sqlgen.neighborhood_ctes(f'"{table}"', spec)
    return con.execute(f"WITH RECURSIVE {ctes} SELECT count(*) FROM points JOIN first_level USING (rid) "
                       f"WHERE start_lvl < first_lvl").fetchone()[0]


@pytest.mark.parametrize("integer", [False, True])
def test_clumps_start_finer_and_stay_exact(con, integer):
    """Tight clumps (rows copied about 5 times, jittered or exact) inside a wide spread: the
    second density round starts their records on a finer grid; ties, strata and categories too."""
    rng = np.random.default_rng(21)
    base = rng.standard_exponential(size=(120, 3)) ** 2             # heavy tails, as min-max scaled
    pts = base[rng.integers(0, 120, 600)]
    pts = np.round(pts * 8) / 8 if integer else pts + 1e-3 * rng.normal(size=pts.shape)
    data = {**{f"v{i}": pts[:, i] for i in range(3)}, "colour": rng.choice(["red", "green"], 600),
            "sex": rng.choice(["F", "M"], 600)}
    load_numpy(con, "clumps", data)
    cols = ["v0", "v1", "v2"]
    assert finer_starts(con, "clumps", cols, k=3) > 0
    for k, eps in [(3, 0.0), (1, 0.0), (2, 0.01)]:
        check(con, "clumps", data, cols, k, eps)
    assert finer_starts(con, "clumps", cols + ["colour"], k=1, categorical=("colour",), strata=("sex",)) > 0
    for k, eps, weight in [(1, 0.0, 0.05), (3, 0.02, 1.0)]:
        check(con, "clumps", data, cols + ["colour"], k, eps, categorical=["colour"], strata=["sex"], weight=weight)


def candidate_pairs(con, table, columns, **kw) -> int:
    """Candidate pairs the cell join emits, over every level of the search (run level by level)."""
    be, spec, trace = backend_for(con), rwn.spec(columns, **kw), []
    hoods = rwn.stage_neighborhoods(be, rwn.check_source(be, table, spec), spec, trace=trace, in_steps=True)
    rwn.forget(be, hoods.staged)
    return sum(t["candidates"] for t in trace)


# Cells skipped for records spread evenly within their cells (the margin as the search computes
# it; a Monte Carlo estimate): about 28 % on a 4-d grid, 42 % on a 5-d grid. The test asks for
# half of that.
SKIPPED_AT_LEAST = {4: 0.14, 5: 0.2}


@pytest.mark.parametrize("dims", [4, pytest.param(5, marks=pytest.mark.heavy)])     # 5-d: the heavy tier
def test_far_cells_are_skipped_and_neighbourhoods_stay_exact(con, dims):
    """The cell join skips the neighbour cells whose box lies beyond the record's margin: fewer
    candidate pairs, the same neighbourhoods as the brute force."""
    rng = np.random.default_rng(dims + 40)
    data = {f"v{i}": rng.normal(size=1500) for i in range(dims)}
    load_numpy(con, "spread", data)
    assert grid_dims(con, "spread", list(data)) == dims
    for k, eps in [(5, 0.0), (2, 0.1)]:
        check(con, "spread", data, list(data), k, eps)
    skipping = candidate_pairs(con, "spread", list(data), k=5)
    with limits.use(SKIP_FAR_CELLS=None):
        joining_all = candidate_pairs(con, "spread", list(data), k=5)
    assert skipping <= (1 - SKIPPED_AT_LEAST[dims]) * joining_all


def test_gram_bound_bounds_the_projection():
    """|U^T v|^2 <= gram_bound(U) |v|^2 for directions that are not orthogonal; 1 on the columns."""
    assert geometry.gram_bound(None) == 1.0
    rng = np.random.default_rng(3)
    u = rng.normal(size=(4, 6))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    bound = geometry.gram_bound(tuple(map(tuple, u)))
    assert bound >= np.linalg.eigvalsh(u @ u.T).max() > 1.0
    v = rng.normal(size=(6, 10000))
    assert np.all(((u @ v) ** 2).sum(0) <= bound * (v ** 2).sum(0))
    eye = tuple(tuple(1.0 if j == i else 0.0 for j in range(6)) for i in range(4))
    assert geometry.gram_bound(eye) == pytest.approx(1.0, abs=1e-8)
