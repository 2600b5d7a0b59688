"""Guards before work: neighbourhoods too large for the memory limit are refused at once with
the estimate, overflowing ranges are refused, tuning grids are validated, file-sourced
strata give the same neighbourhoods as a table, and a run under a memory limit spills."""
import os
import time

import duckdb
import numpy as np
import pytest

import rwn_sql
from helpers.data import load_numpy
from helpers.datasets import tied_table
from rwn_sql.rwn import sqlgen
from rwn_sql.evaluation import tune
from rwn_sql.engines.sources import resolve_source
from rwn_sql.rwn.spec import RWNSpec


def test_estimate_is_a_lower_bound_of_the_pairs(con):
    """The pre-pass bounds sum |S_i| from below (each record has at least max(duplicates, k)
    neighbours, and records sharing an eps / sqrt(D) cell are within eps), so it can only
    under-estimate, never refuse a run that fits."""
    rng = np.random.default_rng(1)
    load_numpy(con, "d", {"x": rng.integers(0, 6, 600), "y": rng.integers(0, 4, 600), "g": rng.choice(["a", "b"], 600)})
    src = resolve_source(con, "d")
    for kw in (dict(k=1), dict(k=3, eps=0.2), dict(k=2, strata=("g",)), dict(k=1, eps=0.45, categorical=("g",))):
        cols = ("x", "y", "g") if "categorical" in kw else ("x", "y")
        spec = RWNSpec(columns=cols, **kw)
        estimate = con.execute(sqlgen.pair_estimate_sql(src.sql, spec)).fetchall()[0][0]
        actual = con.execute(f"SELECT sum(size) FROM ({rwn_sql.neighborhoods(con, 'd', list(cols), sql=True, **kw)})"
                             ).fetchall()[0][0]
        assert 600 * spec.k <= estimate <= actual, kw


def test_tied_blow_up_is_refused_quickly_with_the_estimate(con):
    # 2M rows as in the issue: every record has ~5,000 exact duplicates, 1e10 pairs
    tied_table(con, 2_000_000)
    start = time.perf_counter()
    with pytest.raises(rwn_sql.RWNError, match=r"at least 9,998,000,000 neighbour pairs.*memory limit.*jitter") as err:
        rwn_sql.perturb(con, "tied", ["a", "b", "c"], k=1, eps=1e-6, seed=1)
    # the pre-pass is one GROUP BY; 2 s is the bound for a refusal
    assert time.perf_counter() - start < 2.0
    # eps-balls this large are counted, not listed (the ball path): what is refused is the
    # records of equal values, which its cells cannot split
    assert "5,000 records share identical values of a, b, c" in str(err.value)
    with pytest.raises(rwn_sql.RWNError, match="stratum"):
        rwn_sql.neighborhoods(con, "tied", ["a", "b", "c"], k=1, strata=["s"])


def test_budget_follows_the_memory_limit(con):
    tied_table(con, 40_000)      # 400 groups of 100: 3,960,000 pairs, about 0.5 GB
    con.execute("SET memory_limit = '100MB'").fetchall()
    with pytest.raises(rwn_sql.RWNError, match="3,960,000 neighbour pairs"):
        rwn_sql.neighborhoods(con, "tied", ["a", "b", "c"], k=1)
    con.execute("SET memory_limit = '2GB'").fetchall()
    sizes = rwn_sql.neighborhoods(con, "tied", ["a", "b", "c"], k=1).fetchall()
    assert {size for _, size, _, _ in sizes} == {99}
    # the SQL text alone runs nothing, so it is never refused
    con.execute("SET memory_limit = '100MB'").fetchall()
    assert "WITH RECURSIVE" in rwn_sql.perturb(con, "tied", ["a", "b", "c"], k=1, sql=True)


def test_sweep_is_guarded_too(con):
    tied_table(con, 40_000)
    con.execute("SET memory_limit = '100MB'").fetchall()
    with pytest.raises(rwn_sql.RWNError, match="neighbour pairs"):
        tune.sweep(con, "tied", ["a", "b", "c"], [0.0], k=1, reps=1, seed=1)


def uniform_table(con, rows, name="uniform"):
    """Spread-out records, no ties: a small cell holds few of them, while the eps-balls that tune
    lists hold about 8 % of the records at eps = 0.3 on 3 columns."""
    con.execute(f"CREATE TABLE {name} AS SELECT (hash(range) % 100003) / 100003.0 AS x, "
                f"(hash(range + 7919) % 100019) / 100019.0 AS y, (hash(range * 31 + 1) % 99991) / 99991.0 AS z "
                f"FROM range({rows})").fetchall()


def listed_pairs(con, name, eps, k):
    """sum |S_i| of neighbourhoods listing every member within eps (others, at least k), by brute force."""
    x = np.array(con.execute(f"SELECT x, y, z FROM {name}").fetchall())
    x = (x - x.min(axis=0)) / (x.max(axis=0) - x.min(axis=0))
    d2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=2)
    return int(np.maximum((d2 <= eps * eps).sum(axis=1) - 1, k).sum())


def test_listed_pairs_estimate_matches_the_count(con):
    """The tune estimate (sqlgen.listed_pairs_sample_sql) counts every record when they are
    fewer than the sample, and estimates within a few percent from a sample otherwise."""
    for rows, tolerance in ((1500, 0.0), (3000, 0.05)):
        uniform_table(con, rows, f"u{rows}")
        spec = RWNSpec(columns=("x", "y", "z"), eps=0.3, k=5)
        n, sampled, estimate = con.execute(sqlgen.listed_pairs_sample_sql(f"u{rows}", spec, 2000)).fetchall()[0]
        actual = listed_pairs(con, f"u{rows}", 0.3, 5)
        assert (n, sampled) == (rows, min(rows, 2000))
        assert abs(estimate - actual) <= tolerance * actual + 1e-6 * actual, (rows, estimate, actual)


def test_tune_refuses_listed_pairs_beyond_the_limit_before_the_sweep(con):
    """Issue 22: tune lists every pair of its largest eps (20k x 3 at eps 0.3 took 10.5 GB, and
    under a 1 GB limit it failed only after 18 s). check_pair_budget's bound (records in one
    cell of side eps / sqrt(3)) let it through; now the listed pairs are estimated first and the
    sweep is refused at once, naming the estimate and a limit that would do, and that limit
    (also one just above the estimate) runs. Fails on the code before: the sweep ran (and
    spilled or ran out of memory) instead of raising."""
    uniform_table(con, 2500)
    actual = listed_pairs(con, "uniform", 0.3, 5)               # about 0.5M pairs, 0.17 GB at 320 B a pair
    con.execute("SET memory_limit = '60MB'").fetchall()
    start = time.perf_counter()
    with pytest.raises(rwn_sql.RWNError, match=r"tune lists every neighbourhood at eps = 0.3: about [0-9,]+ "
                                               r"neighbour pairs.*memory limit of 0.06 GB; a memory limit of about "
                                               r"[0-9.]+ GB would do") as err:
        tune.sweep(con, "uniform", ["x", "y", "z"], [0.1, 0.3], k=5, reps=1, seed=1)
    refused = time.perf_counter() - start
    message = str(err.value)
    estimate = int(message.split("about ")[1].split(" neighbour")[0].replace(",", ""))
    assert abs(estimate - actual) <= 0.05 * actual, (estimate, actual)
    would_do = float(message.split("a memory limit of about ")[1].split(" GB")[0])
    assert would_do * 1e9 >= estimate * tune.TUNE_BYTES_PER_PAIR
    con.execute(f"SET memory_limit = '{would_do}GB'").fetchall()
    start = time.perf_counter()
    result = tune.sweep(con, "uniform", ["x", "y", "z"], [0.1, 0.3], k=5, reps=1, seed=1)
    swept = time.perf_counter() - start
    assert [s.value for s in result.settings] == [0.1, 0.3]
    assert refused < swept / 3, (refused, swept)          # refused before the work, not during it
    just = estimate * tune.TUNE_BYTES_PER_PAIR * 1.02 / 1e6
    con.execute(f"SET memory_limit = '{just:.0f}MB'").fetchall()
    assert len(tune.sweep(con, "uniform", ["x", "y", "z"], [0.3], k=5, reps=1, seed=1).settings) == 1


def test_cli_tune_refuses_listed_pairs_with_exit_2(con, tmp_path, capsys):
    """rwn-sql tune under a --memory-limit its listed pairs exceed: exit 2 with one line naming
    the estimate and a limit that would do, and nothing written."""
    from rwn_sql.cli.main import main
    uniform_table(con, 2500)
    data = tmp_path / "u.parquet"
    con.execute(f"COPY uniform TO '{data}'").fetchall()
    out = tmp_path / "out"
    out.mkdir()
    assert main(["tune", str(data), "--columns", "x,y,z", "--eps", "0.1,0.3", "--reps", "1", "--seed", "1",
                 "--memory-limit", "60MB", "--output-dir", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rwn-sql: error: tune lists every neighbourhood at eps = 0.3: about ")
    assert "neighbour pairs" in err[0] and "a memory limit of about" in err[0] and "would do" in err[0]
    assert os.listdir(out) == []


def test_listed_neighbour_pairs_are_refused_before_the_listing(con):
    """neighborhoods(pairs=True) lists every member (no ball path): refused, with the estimate,
    when the pairs cannot fit (check_pair_budget's cell bound let 2500 spread records through);
    under the limit it names, the listing runs."""
    uniform_table(con, 2500)
    con.execute("SET memory_limit = '40MB'").fetchall()
    with pytest.raises(rwn_sql.RWNError, match=r"neighborhoods\(pairs=True\) lists every neighbourhood.*would do") \
            as err:
        rwn_sql.neighborhoods(con, "uniform", ["x", "y", "z"], eps=0.3, pairs=True)
    would_do = float(str(err.value).split("a memory limit of about ")[1].split(" GB")[0])
    con.execute(f"SET memory_limit = '{would_do}GB'").fetchall()
    listed = rwn_sql.neighborhoods(con, "uniform", ["x", "y", "z"], eps=0.3, pairs=True)
    assert con.execute(f"SELECT count(*) FROM ({listed.sql_query()})").fetchall()[0][0] > 400_000


@pytest.mark.filterwarnings("ignore:overflow encountered")   # evaluate's sd overflows before it refuses
@pytest.mark.parametrize("scale", ["minmax", "zscore", "none"])
def test_overflowing_range_is_refused(con, scale):
    con.execute("CREATE TABLE huge AS SELECT CASE range % 3 WHEN 0 THEN 1e308 WHEN 1 THEN -1e308 ELSE range END "
                "AS x, range AS y FROM range(241)").fetchall()
    with pytest.raises(rwn_sql.RWNError, match='column "x" spans -1e\\+308 to 1e\\+308, too wide'):
        rwn_sql.perturb(con, "huge", ["x", "y"], scale=scale, seed=1, into="out")
    with pytest.raises(rwn_sql.RWNError, match="'x' spans -1e\\+308 to 1e\\+308, too wide"):
        rwn_sql.evaluate(con, "huge", "huge", ["x", "y"], order="input")


def test_wide_but_finite_range_still_works(con):
    # 1e150-sized values: squared scaled differences stay finite, nothing is refused or dropped
    con.execute("CREATE TABLE wide AS SELECT range * 1e150 AS x, range % 7 AS y FROM range(200)").fetchall()
    for scale in ("minmax", "none"):
        assert len(rwn_sql.perturb(con, "wide", ["x", "y"], scale=scale, seed=1).fetchall()) == 200


@pytest.mark.parametrize("grid,message", [("0:1:1e-9", "at most 10000"), ("0:1:nan", "finite"),
                                          ("0:inf:1", "finite"), ("0.1,nan", "finite"), ("1:0:0.1", "empty"),
                                          ("0:1:0", "step must be > 0"), ("-1e308:1e308:1e-300", "at most")])
def test_bad_sweep_grids_are_refused(grid, message):
    with pytest.raises(rwn_sql.RWNError, match=message):
        tune.parse_grid(grid)


def test_sweep_values_are_validated(con):
    with pytest.raises(rwn_sql.RWNError, match="finite"):
        tune.sweep(con, "SELECT 1 AS x", ["x"], [float("inf")])
    with pytest.raises(rwn_sql.RWNError, match="at most 10000"):
        tune.sweep(con, "SELECT 1 AS x", ["x"], np.zeros(10_001))


def test_cli_tune_grid_error_exits_2(tmp_path, capsys):
    from rwn_sql.cli.main import main
    csv = tmp_path / "d.csv"
    csv.write_text("x,y\n1,2\n3,4\n")
    assert main(["tune", str(csv), "--columns", "x,y", "--eps", "0:inf:1", "--output-dir", str(tmp_path)]) == 2
    assert "finite" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_file_strata_equal_table_strata(con, tmp_path, fmt):
    rng = np.random.default_rng(4)
    load_numpy(con, "people", {"age": rng.integers(18, 90, 3000), "income": rng.normal(size=3000).round(3),
                               "sex": rng.choice(["F", "M"], 3000)})
    path = tmp_path / f"people.{fmt}"
    con.execute(f"COPY people TO '{path}' (FORMAT {fmt})").fetchall()
    kw = dict(k=3, eps=0.02, strata=["sex"])
    table = rwn_sql.neighborhoods(con, "people", ["age", "income"], pairs=True, **kw).fetchall()
    assert rwn_sql.neighborhoods(con, str(path), ["age", "income"], pairs=True, **kw).fetchall() == table


def test_strata_join_uses_the_cell_keys(con, tmp_path):
    """The plan of a file-sourced stratified run joins on the cell key, not on the stratum
    alone (which compared every pair of a stratum: quadratic)."""
    path = tmp_path / "p.parquet"
    con.execute(f"COPY (SELECT random() AS x, random() AS y, (range % 2)::VARCHAR AS s FROM range(1000)) "
                f"TO '{path}'").fetchall()
    text = rwn_sql.neighborhoods(con, str(path), ["x", "y"], k=2, strata=["s"], sql=True)
    con.execute("PRAGMA explain_output = 'physical_only'").fetchall()
    plan = con.execute("EXPLAIN " + text).fetchall()[0][1]
    assert "k_1 IS NOT DISTINCT FROM k_1" not in plan
    assert "struct_pack" in plan


@pytest.mark.skipif(tuple(int(x) for x in duckdb.__version__.split(".")[:2]) < (2, 0),
                    reason="the spilling floors are measured on DuckDB 2.0; DuckDB 1.4 runs out of memory "
                           "at 200 MB here (README: memory limits)")
def test_neighbourhoods_under_a_memory_limit_spill(con, tmp_path):
    """The spilling path at a scale the suite can afford: 200k rows under 200 MB, where the
    recursion's candidate pairs (about 30 per record and level, ~50 bytes each) exceed the
    limit; benchmarks/bench_guards.py runs 2M rows under 500 MB. The neighbourhoods are
    checked against an unlimited run."""
    con.execute(f"SET temp_directory = '{tmp_path}'").fetchall()
    con.execute("CREATE TABLE big AS SELECT (hash(range) % 1000003) / 1000003 AS a, "
                "(hash(range, 7) % 999983) / 999983 AS b, (hash(range, 11) % 1000033) / 1000033 AS c "
                "FROM range(200000)").fetchall()
    hoods = rwn_sql.neighborhoods(con, "big", ["a", "b", "c"], k=5, sql=True)
    query = f"SELECT count(*), sum(size), bit_xor(hash(record, size, radius)) FROM ({hoods})"
    unlimited = con.execute(query).fetchall()
    con.execute("SET memory_limit = '200MB'").fetchall()
    assert con.execute(query).fetchall() == unlimited


def test_sql_macros_are_guarded_too(con):
    import duckdb
    tied_table(con, 40_000)
    rwn_sql.install(con)
    con.execute("SET memory_limit = '100MB'").fetchall()
    with pytest.raises(duckdb.Error, match="3,960,000 neighbour pairs"):
        con.execute("SELECT count(*) FROM rwn_perturb('tied', ['a', 'b', 'c'], k := 1, seed := 1)").fetchall()
