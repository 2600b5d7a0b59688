"""Neighbourhoods equal the brute-force O(n^2) definition, as sets, in every mode."""
import numpy as np
import pytest

from helpers import bruteforce as bf
import rwn_sql
from helpers.data import BODYFAT_COLUMNS, load_numpy, tied_data
from helpers.datasets import nonempty, sql_sets


def fetch(con, table, columns):
    return con.execute(f'SELECT {", ".join(chr(34) + c + chr(34) for c in columns)} FROM "{table}"').fetchnumpy()


@pytest.mark.parametrize("k,eps", [(5, 0.0), (5, 0.2), (5, 0.4), (5, 0.6), (5, 0.8), (1, 0.0), (0, 0.35), (3, 1.2)])
def test_bodyfat_all_columns_equals_brute_force(con, bodyfat, k, eps):
    cols = BODYFAT_COLUMNS
    data = fetch(con, bodyfat, cols)
    d2 = bf.squared_distances([bf.scaled(data[c], "minmax") for c in cols], [])
    ref, radius2, dcr2 = bf.neighborhoods(d2, k, eps)
    assert sql_sets(con, bodyfat, cols, k=k, eps=eps) == nonempty(ref)
    summary = rwn_sql.neighborhoods(con, bodyfat, cols, k=k, eps=eps).fetchall()
    assert [r[1] for r in summary] == [len(ref[i]) for i in range(1, len(ref) + 1)]
    assert np.allclose([r[2] for r in summary], np.sqrt([radius2[i] for i in range(1, len(ref) + 1)]))
    assert np.allclose([r[3] for r in summary], np.sqrt([dcr2[i] for i in range(1, len(ref) + 1)]))


def test_bodyfat_paper_figures(con, bodyfat):
    """METHODS.md: largest neighbourhoods ~68 / 160 / 215 at eps 0.4 / 0.6 / 0.8 (k = 5), the
    363 lb outlier has DCR ~1.2 and exactly k neighbours."""
    largest = {}
    for eps in (0.4, 0.6, 0.8):
        largest[eps] = con.execute(
            f"SELECT max(size) FROM ({rwn_sql.neighborhoods(con, bodyfat, BODYFAT_COLUMNS, k=5, eps=eps, sql=True)})"
        ).fetchone()[0]
    # "about": the paper reads these off a plot; the exact sets are checked against brute force above
    assert all(abs(largest[e] - paper) <= 2 for e, paper in {0.4: 68, 0.6: 160, 0.8: 215}.items()), largest
    rel = rwn_sql.neighborhoods(con, bodyfat, BODYFAT_COLUMNS, k=5, eps=0.8)  # noqa: F841 (read by the SQL below)
    heavy = con.execute("SELECT h.size, h.dcr FROM rel h JOIN (SELECT row_number() OVER () AS record, Weight "
                        "FROM bodyfat) b USING (record) ORDER BY b.Weight DESC LIMIT 1").fetchone()
    assert heavy[0] == 5 and 1.1 < heavy[1] < 1.3


@pytest.mark.parametrize("k,eps,scale", [(5, 0.0, "minmax"), (4, 0.25, "minmax"), (0, 0.3, "minmax"),
                                         (3, 0.0, "none"), (2, 0.5, "zscore"), (7, 0.1, "minmax")])
def test_ties_and_duplicates_equal_brute_force(con, k, eps, scale):
    data = tied_data(400, seed=k + 10)
    load_numpy(con, "tied", data)
    cols = ["a", "b", "c"]
    d2 = bf.squared_distances([bf.scaled(data[c], scale) for c in cols], [])
    ref, _, _ = bf.neighborhoods(d2, k, eps)
    assert sql_sets(con, "tied", cols, k=k, eps=eps, scale=scale) == nonempty(ref)


def test_strata_equal_brute_force(con):
    rng = np.random.default_rng(3)
    n = 500
    data = {"x": rng.normal(size=n), "y": rng.normal(size=n), "sex": rng.choice(["F", "M"], n),
            "region": rng.choice(["n", "s", "e"], n)}
    load_numpy(con, "people", data)
    strata = np.array([f"{s}|{r}" for s, r in zip(data["sex"], data["region"])])
    d2 = bf.squared_distances([bf.scaled(data[c], "minmax") for c in ("x", "y")], [])
    for k, eps in [(3, 0.0), (2, 0.15)]:
        ref, _, _ = bf.neighborhoods(d2, k, eps, strata=strata)
        got = sql_sets(con, "people", ["x", "y"], k=k, eps=eps, strata=["sex", "region"])
        assert got == nonempty(ref)
        for record, members in got.items():
            assert all(strata[j - 1] == strata[record - 1] for j in members)


@pytest.mark.parametrize("weight", [1.0, 0.3, 0.05])
def test_categorical_distance_equals_brute_force(con, weight):
    rng = np.random.default_rng(int(weight * 100))
    n = 400
    data = {"x": rng.uniform(size=n), "y": rng.integers(0, 10, n).astype(float),
            "colour": rng.choice(["red", "green", "blue"], n), "size": rng.choice(["S", "L"], n)}
    load_numpy(con, "items", data)
    d2 = bf.squared_distances([bf.scaled(data[c], "minmax") for c in ("x", "y")],
                              [data["colour"], data["size"]], weight=weight)
    for k, eps in [(5, 0.0), (3, 0.2)]:
        ref, _, _ = bf.neighborhoods(d2, k, eps)
        got = sql_sets(con, "items", ["x", "y", "colour", "size"], k=k, eps=eps,
                       categorical=["colour", "size"], weight=weight)
        assert got == nonempty(ref)


def test_only_categorical_columns(con):
    rng = np.random.default_rng(5)
    n = 300
    data = {"a": rng.choice(list("pqr"), n), "b": rng.choice(list("xy"), n)}
    load_numpy(con, "cats", data)
    d2 = bf.squared_distances([], [data["a"], data["b"]])
    for k, eps in [(5, 0.0), (0, 1.0)]:
        ref, _, _ = bf.neighborhoods(d2, k, eps)
        assert sql_sets(con, "cats", ["a", "b"], k=k, eps=eps, categorical=["a", "b"]) == nonempty(ref)


def test_many_dimensions_and_clusters(con):
    """More numeric columns than grid dimensions, clustered data with far outliers."""
    rng = np.random.default_rng(11)
    n = 900
    centres = rng.uniform(0, 10, size=(4, 6))
    pts = centres[rng.integers(0, 4, n)] + rng.normal(scale=0.3, size=(n, 6))
    pts[:5] += 40                                           # a few far outliers
    data = {f"v{i}": pts[:, i] for i in range(6)}
    load_numpy(con, "clusters", data)
    cols = list(data)
    d2 = bf.squared_distances([bf.scaled(data[c], "minmax") for c in cols], [])
    for k, eps in [(5, 0.0), (2, 0.02)]:
        ref, _, _ = bf.neighborhoods(d2, k, eps)
        assert sql_sets(con, "clusters", cols, k=k, eps=eps) == nonempty(ref)


def clumps(n: int, d: int, seed: int) -> dict:
    """A Gaussian background with dense clumps on a 1e-3 lattice (exact copies, ties at the
    radius) and a stratum: with eps > 0 the records of a clump start at the level that holds
    eps, far coarser than their density alone would start them (search_sql.EPS_FLOOR_MARGIN)."""
    rng = np.random.default_rng(seed)
    background = rng.standard_normal((n, d))
    centres = background[rng.choice(n, 4, replace=False)]
    clump = centres[rng.integers(0, 4, n // 2)] + 0.01 * rng.integers(-2, 3, (n // 2, d))
    pts = np.round(np.vstack([background, clump]), 3)
    data = {f"x{i}": pts[:, i] for i in range(d)}
    data["site"] = rng.choice(["north", "south"], len(pts))
    return data


@pytest.mark.parametrize("d", [3, 5])
def test_dense_clumps_with_eps_equal_brute_force(con, d):
    data = clumps(500, d, seed=20 + d)
    load_numpy(con, "clumps", data)
    cols = [c for c in data if c != "site"]
    d2 = bf.squared_distances([bf.scaled(data[c], "minmax") for c in cols], [])
    for k, eps, strata in [(5, 0.02, None), (3, 0.08, "site"), (5, 0.3, "site")]:
        labels = None if strata is None else np.asarray(data[strata])
        ref, _, _ = bf.neighborhoods(d2, k, eps, strata=labels)
        got = sql_sets(con, "clumps", cols, k=k, eps=eps, strata=[strata] if strata else [])
        assert got == nonempty(ref), (k, eps, strata)


def test_k0_gives_empty_neighbourhoods_for_isolated_records(con):
    load_numpy(con, "line", {"x": np.array([0.0, 0.01, 0.02, 0.5, 1.0])})
    rows = rwn_sql.neighborhoods(con, "line", ["x"], k=0, eps=0.05).fetchall()
    assert [r[1] for r in rows] == [2, 2, 2, 0, 0]
    assert [round(r[3], 6) for r in rows] == [0.01, 0.01, 0.01, 0.48, 0.5]


def test_null_stratum_is_its_own_stratum(con):
    import pyarrow as pa
    rng = np.random.default_rng(1)
    x = rng.uniform(size=200)
    s = rng.choice(["a", "b", None], 200)
    tbl = pa.table({"x": x, "s": pa.array(list(s), pa.string())})  # noqa: F841 (read by SQL)
    con.execute("CREATE TABLE t AS SELECT * FROM tbl").fetchall()
    d2 = bf.squared_distances([bf.scaled(x, "minmax")], [])
    strata = np.array([v if v is not None else "<null>" for v in s])
    ref, _, _ = bf.neighborhoods(d2, 3, 0.05, strata=strata)
    assert sql_sets(con, "t", ["x"], k=3, eps=0.05, strata=["s"]) == nonempty(ref)


def test_zscore_scales_by_the_sample_standard_deviation(con):
    """scale='zscore' divides by the sample sd (ddof = 1), which matters only through eps: on
    x = 0, 1, 2, 4 (sample sd sqrt(35/12) = 1.708, population sd 1.479) with k = 0 and
    eps = 0.62, record 1's neighbour x = 1 lies at 1/1.708 = 0.585 (inside) in sample-sd units
    and at 0.676 (outside) in population-sd units. The brute-force tests use zscore with
    eps = 0 only, where a common factor on every column cannot change a set. Catches
    `stddev_samp` turned into `stddev_pop` in sqlgen's scaling statistics; verified on that
    mutant (fails) and on the code (passes)."""
    x = np.array([0.0, 1.0, 2.0, 4.0])
    load_numpy(con, "z", {"x": x})
    got = sql_sets(con, "z", ["x"], k=0, eps=0.62, scale="zscore")
    d2 = bf.squared_distances([bf.scaled(x, "zscore")], [])
    ref, _, _ = bf.neighborhoods(d2, 0, 0.62)
    assert got == nonempty(ref) and got[1] == {2}
