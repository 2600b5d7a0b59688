"""The ball path (ball_sql.BallPieces): records whose neighbourhood is their eps-ball get their
donors by rank from per-cell counts, without the members listed. Checked against the brute force
(tests/helpers/bruteforce.py) on data where ball records and k-NN records mix, ties at exactly eps,
strata, categorical columns and q < 1; the draw is uniform over S_i; the release is the same for
a key whatever the thread count and on DuckDB and Spark."""
import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy import stats

import rwn_sql
from helpers.bruteforce import neighborhoods_of, scaled, squared_distances, tie_tolerance
from helpers.data import tied_data
from rwn_sql import limits, randomness
from rwn_sql.rwn import ball_sql, run as rwn, sqlgen
from rwn_sql.engines.backend import backend_for

KEY = "ball path key, long enough"


@pytest.fixture
def levels(monkeypatch, request):
    """Force the ball path with `request.param` halving levels (None: the path's own choice)."""
    if request.param is not None:
        monkeypatch.setattr(rwn, "ball_path", lambda be, src, spec, estimate=None: request.param if spec.eps > 0 else None)
    return request.param


def mixed(n=240, seed=3) -> dict:
    """A dense blob (ball records at eps = 0.12) and sparse points around it (k-NN records)."""
    rng = np.random.default_rng(seed)
    dense = 0.5 + 0.08 * rng.standard_normal((n * 3 // 4, 3))
    sparse = rng.random((n - len(dense), 3))
    x = np.vstack([dense, sparse])
    return {c: x[:, i] for i, c in enumerate("abc")}


def table(con, name, data):
    con.register("__arrow", pa.table(data))
    con.execute(f"CREATE TABLE {name} AS SELECT * FROM __arrow")
    con.unregister("__arrow")


def ball_records(data, columns, k, eps, categorical=(), strata=None) -> set:
    """Records with at least max(k, 1) others strictly within eps (brute force)."""
    within = neighborhoods_of(data, columns, 0, eps * (1 - 1e-12), categorical, strata)
    return {i for i, s in within.items() if len(s) >= max(k, 1)}


def check_against_brute_force(con, data, columns, k, eps, q=1.0, categorical=(), strata=(), key=KEY):
    want = neighborhoods_of(data, columns, k, eps, categorical, list(strata) or None)
    params = dict(k=k, eps=eps, categorical=list(categorical), strata=list(strata))
    hood = rwn_sql.neighborhoods(con, "t", columns, **params).fetchall()
    assert {r[0]: r[1] for r in hood} == {i: len(s) for i, s in want.items()}
    donors = rwn_sql.donors(con, "t", columns, q=q, key=key, **params).fetchall()
    threshold = q * 2 ** 52
    for record, column, donor, size in donors:
        assert size == len(want[record])
        keep_bits, _ = randomness.keyed_bits(key, sqlgen.PERTURB_PURPOSE, record, column)
        if keep_bits >= threshold:                     # q unchanged: the same bits keep the cell
            assert donor == record
        elif want[record]:
            assert donor in want[record], (record, column, donor)
        else:
            assert donor is None
    # perturb draws the same donors: each released cell is its donor's original value
    released = rwn_sql.perturb(con, "t", columns, q=q, key=key, order="input", **params).fetchall()
    names = list(data)
    by_record = {(r, c): d for r, c, d, _ in donors}
    for record, row in enumerate(released, 1):
        for column in columns:
            donor = by_record[(record, column)]
            value = row[names.index(column)]
            assert value == (None if donor is None else data[column][donor - 1])
    return want


@pytest.mark.parametrize("levels", [0, 2], indirect=True)
@pytest.mark.parametrize("k", [0, 5])
def test_mixed_ball_and_knn_records(con, levels, k):
    data = mixed()
    table(con, "t", data)
    balls = ball_records(data, list("abc"), k, 0.12)
    assert 0 < len(balls) < len(data["a"])           # both paths are exercised
    check_against_brute_force(con, data, list("abc"), k, 0.12)
    # dcr is the nearest other record's distance, on both paths
    want = neighborhoods_of(data, list("abc"), 1, 0.0)
    d2 = {}
    x = np.column_stack([data[c] for c in "abc"])
    scale = x.max(axis=0) - x.min(axis=0)
    for i in range(len(x)):
        j = next(iter(want[i + 1])) - 1
        d2[i + 1] = float(np.sum(((x[i] - x[j]) / scale) ** 2))
    for record, _, _, dcr in rwn_sql.neighborhoods(con, "t", list("abc"), k=k, eps=0.12).fetchall():
        assert dcr == pytest.approx(np.sqrt(d2[record]), rel=1e-12)


@pytest.mark.parametrize("levels", [1], indirect=True)
@pytest.mark.parametrize("eps", [0.2, 0.85])
def test_ties_at_exactly_eps(con, levels, eps):
    """Integer lattice data: many distances equal eps exactly. At eps = 0.85 (a difference of 3
    in b and 2 in c, whose ranges are 4 and 3) the computed squared distance 0.7225 exceeds the
    computed eps^2: only the tie tolerance keeps those pairs in the ball, as in the search."""
    data = tied_data(150, seed=4)
    table(con, "t", data)
    d2 = squared_distances([scaled(np.asarray(data[c]), "minmax") for c in "abc"], [])
    tied = (np.asarray(d2) > eps * eps) & (np.asarray(d2) <= eps * eps * (1 + tie_tolerance(3)))
    assert tied.any() or eps == 0.2
    check_against_brute_force(con, data, list("abc"), 2, eps)
    assert ball_records(data, list("abc"), 2, eps)


@pytest.mark.parametrize("levels", [0, 2], indirect=True)
def test_strata_categorical_and_q(con, levels):
    rng = np.random.default_rng(8)
    data = mixed(200, seed=9)
    data["kind"] = rng.choice(["x", "y"], 200)
    data["region"] = rng.integers(0, 2, 200)
    table(con, "t", data)
    check_against_brute_force(con, data, ["a", "b", "c", "kind"], 3, 0.15, q=0.6, categorical=["kind"],
                              strata=["region"])


@pytest.mark.parametrize("levels", [None], indirect=True)
def test_large_neighbourhoods_take_the_ball_path(con, levels, set_limits):
    """The path's own choice: dense data with a mean |S_i| of about 100 takes it, eps = 0 and a
    small eps do not (the pair threshold lowered to this small input)."""
    set_limits(BALL_MIN_PAIRS=10_000)
    rng = np.random.default_rng(1)
    data = {c: rng.random(1500) for c in "abc"}
    table(con, "t", data)
    be = backend_for(con)
    for eps, taken in [(0.25, True), (0.05, False), (0.0, False)]:
        spec = rwn.spec(list("abc"), k=5, eps=eps)
        assert (rwn.ball_path(be, rwn.check_source(be, "t", spec), spec) is not None) == taken
    assert "ball_records" in rwn_sql.perturb(con, "t", list("abc"), eps=0.25, sql=True)
    sizes = [r[1] for r in rwn_sql.neighborhoods(con, "t", list("abc"), eps=0.25).fetchall()]
    assert np.mean(sizes) > 64


def test_the_estimate_never_exceeds_the_other_records():
    """The estimate scales pairs per small cell by a volume ratio (about 1e6 for 11 columns): it is
    capped at the other records, so an input of 600 records, whose neighbourhoods hold at most
    600 * 599 pairs, never takes the ball path (BALL_MIN_PAIRS is above that)."""
    spec = rwn.spec([f"v{i}" for i in range(11)], k=4, eps=0.02)
    assert 600 * 599 < limits.current().BALL_MIN_PAIRS
    assert ball_sql.ball_levels(600, 600 * 599, spec) is None
    assert ball_sql.ball_levels(600, 600, spec) is None


@pytest.mark.parametrize("levels", [2], indirect=True)
def test_draw_is_uniform_over_the_ball(con, levels):
    """Many keyed releases (replicates, key#r) of one record: every member of S_i equally likely.
    Chi-square over the members; the threshold is the 1e-4 upper quantile, so a correct draw fails
    1 run in 10,000 per record and column."""
    data = mixed(160, seed=5)
    table(con, "t", data)
    k, eps, reps = 3, 0.12, 600
    want = neighborhoods_of(data, list("abc"), k, eps)
    balls = sorted(ball_records(data, list("abc"), k, eps), key=lambda i: -len(want[i]))
    be = backend_for(con)
    spec = rwn.spec(list("abc"), k=k, eps=eps)
    src = rwn.check_source(be, "t", spec)
    sql = rwn.prepare(be, src, spec, "perturb", be.key_sql(KEY), reps=reps).sql
    released = con.execute(sql).fetchall()           # (replicate, a, b, c) by replicate, then record
    n = len(data["a"])
    for record in balls[:2]:
        members = sorted(want[record])
        assert len(members) >= 8
        for c, column in enumerate("abc"):
            index = {data[column][j - 1]: j for j in members}
            counts = np.zeros(len(members))
            for rep in range(reps):
                counts[members.index(index[released[rep * n + record - 1][1 + c]])] += 1
            chi2 = float(np.sum((counts - reps / len(members)) ** 2 / (reps / len(members))))
            assert chi2 < stats.chi2.ppf(1 - 1e-4, len(members) - 1), (record, column, counts)


@pytest.mark.parametrize("levels", [2], indirect=True)
def test_same_release_whatever_the_thread_count(levels):
    data = mixed(300, seed=11)
    out = []
    for threads in (1, 4):
        con = duckdb.connect()
        con.execute(f"SET threads = {threads}")
        table(con, "t", data)
        out.append(rwn_sql.perturb(con, "t", list("abc"), k=4, eps=0.12, key=KEY).fetchall())
        con.close()
    assert out[0] == out[1]


@pytest.mark.spark
@pytest.mark.parametrize("levels", [2], indirect=True)
def test_duckdb_and_spark_give_the_same_release(levels, tmp_path, spark_if_installed):
    """The same SQL through the Spark dialect, staged step by step: the same donors."""
    spark = spark_if_installed
    rng = np.random.default_rng(2)
    n = 240
    data = {c: rng.random(n) for c in "abc"}
    data["region"] = rng.integers(0, 2, n)
    data["rid"] = rng.permutation(n) * 7 + 1
    path = str(tmp_path / "t.parquet")
    pq.write_table(pa.table(data), path)
    params = dict(k=5, eps=0.4, strata=["region"], id="rid", key=KEY)
    con = duckdb.connect()
    dd = sorted(rwn_sql.donors(con, path, list("abc"), **params).fetchall())
    ds = sorted(tuple(r) for r in rwn_sql.donors(spark, path, list("abc"), **params).collect())
    assert dd == ds
    assert len({size for *_, size in dd}) > 1          # neighbourhoods of many sizes


@pytest.mark.parametrize("levels", [None], indirect=True)
def test_memory_guard_counts_what_is_still_listed(con, levels, set_limits):
    """The guard refuses what the listed neighbourhoods would not fit; eps-balls that the ball path
    counts instead no longer count against it, equal values (still listed) do."""
    rng = np.random.default_rng(1)
    table(con, "t", {c: rng.random(1500) for c in "abc"})
    table(con, "tied", {c: np.repeat(rng.random(150), 10) for c in "abc"})
    set_limits(BYTES_PER_PAIR=10 ** 12)             # any pair beyond k is too many
    set_limits(BALL_MIN_PAIRS=10_000)               # the ball path on this small input
    rwn_sql.neighborhoods(con, "t", list("abc"), eps=0.25)           # the ball path: accepted
    with limits.use(BALL_MIN_MEMBERS=float("inf")), pytest.raises(rwn_sql.RWNError, match="values within eps"):
        rwn_sql.neighborhoods(con, "t", list("abc"), eps=0.25)       # the same listed: refused
    with pytest.raises(rwn_sql.RWNError, match="identical values"):      # the ball path's own threshold again
        rwn_sql.neighborhoods(con, "tied", list("abc"), k=2, eps=0.25)


@pytest.mark.parametrize("levels", [0, 2], indirect=True)
def test_ball_path_on_four_principal_axes(con, levels):
    """The pre-pass and the fetch run on the search's grid: on W3-shaped data (7 columns, clumps)
    that grid is 4 principal axes, and the ball path still equals the brute force."""
    from helpers.datasets import clumped
    data = clumped(320, 11)
    table(con, "t", data)
    columns = list(data)
    be = backend_for(con)
    spec = rwn.spec(columns, k=3, eps=0.3)
    axes = rwn.grid_axes(be, rwn.check_source(be, "t", spec), spec)
    assert axes is not None and len(axes) == 4
    assert ball_records(data, columns, 3, 0.3)          # some records take the ball path
    check_against_brute_force(con, data, columns, 3, 0.3, q=0.8)
