"""The same properties on every engine (issue 11), in the style of Splink's `mark_tests_with`:
each test below runs once per engine through the public API, on a DuckDB connection and on
a SparkSession, with a record id (Spark requires one). The Spark runs skip with the reason
when pyspark or Java is missing (RWN_REQUIRE_SPARK=1 makes that a failure). What an engine
does not implement is marked on the test, with how it fails (tests/conftest.py's notimpl):
there the test must raise exactly that error, and passing fails the run."""
import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rwn_sql
from helpers.bruteforce import neighborhoods as brute_neighborhoods
from helpers.bruteforce import scaled, squared_distances
from helpers.data import tied_data
from rwn_sql.engines.dialects import UnsupportedByEngine

on_every_engine = pytest.mark.parametrize("engine", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)],
                                          indirect=True)
KEY = "the same key on every engine"


@pytest.fixture
def engine(request):
    if request.param == "spark":
        yield request.getfixturevalue("spark_if_installed")
        return
    con = duckdb.connect()
    yield con
    con.close()


def rows(result) -> list[tuple]:
    """The rows of an engine's lazy result (a DuckDB relation or a Spark DataFrame)."""
    return result.fetchall() if hasattr(result, "fetchall") else [tuple(r) for r in result.collect()]


@pytest.fixture(scope="module")
def tied(tmp_path_factory):
    """120 integer records with many exact ties and duplicates, a stratum and a category, rows
    stored in an order unrelated to their ids; the brute force numbers records by id rank."""
    n = 120
    data = tied_data(n, seed=21)
    data["rid"] = 3 * np.arange(n) + 100
    data["region"] = np.arange(n) % 2
    path = tmp_path_factory.mktemp("tied") / "tied.parquet"
    order = np.random.default_rng(5).permutation(n)
    pq.write_table(pa.table({c: np.asarray(v)[order] for c, v in data.items()}), str(path))
    return str(path), data


@on_every_engine
@pytest.mark.parametrize("k, eps", [(4, 0.0), (2, 0.25)])
def test_neighbourhoods_equal_brute_force(engine, tied, k, eps):
    """S_i as sets, ties at the radius included, record r = the r-th smallest id."""
    path, data = tied
    d2 = squared_distances([scaled(data[c], "minmax") for c in "abc"], [])
    want, _, _ = brute_neighborhoods(d2, k, eps)
    got = {r: set() for r in want}
    for record, neighbor, _ in rows(rwn_sql.neighborhoods(engine, path, ["a", "b", "c"], k=k, eps=eps,
                                                          pairs=True, id="rid")):
        got[record].add(neighbor)
    assert got == want


@on_every_engine
def test_every_released_cell_comes_from_its_neighbourhood(engine, tied):
    """perturb and donors agree: each released cell is the donor's original value, the donor
    is the record itself (kept) or a member of its stratum's neighbourhood, and the id passes
    through unchanged."""
    path, data = tied
    kw = dict(columns=["a", "b"], strata=["region"], k=3, eps=0.1, q=0.7, key=KEY, id="rid")
    names = ["a", "b", "c", "rid", "region"]       # the file's column order
    released_by_id = {row[names.index("rid")]: row for row in rows(rwn_sql.perturb(engine, path, **kw))}
    ids = np.sort(data["rid"])                     # record r has the r-th smallest id
    by_record = {r + 1: {c: data[c][np.searchsorted(data["rid"], ids[r])] for c in names}
                 for r in range(len(ids))}
    hoods = {r: set() for r in by_record}
    for record, neighbor, _ in rows(rwn_sql.neighborhoods(engine, path, ["a", "b"], strata=["region"], k=3,
                                                          eps=0.1, pairs=True, id="rid")):
        hoods[record].add(neighbor)
    donors = rows(rwn_sql.donors(engine, path, **kw))
    assert len(donors) == 2 * len(by_record)
    assert len(released_by_id) == len(by_record)
    moved = 0
    for record, column, donor, size in donors:
        assert size == len(hoods[record])
        assert donor == record or donor in hoods[record]
        moved += donor != record
        mine = by_record[record]
        assert released_by_id[mine["rid"]][names.index(column)] == by_record[donor][column]
        assert released_by_id[mine["rid"]][names.index("region")] == mine["region"]
    assert moved > len(donors) // 3             # q = 0.7: most cells moved (about 70 %)


@on_every_engine
def test_randomized_release_keeps_public_columns_and_drops_the_id(engine, tied):
    """Uniform perturbation: the public columns are released exactly (as a multiset), the
    sensitive values stay in the domain, and the id is never released."""
    path, data = tied
    release = rwn_sql.randomize(engine, path, "c", 0.5, public=["region", "a"], key=KEY, id="rid")
    got = rows(release)
    columns = list(release.columns)
    assert "rid" not in columns and len(got) == len(data["rid"])
    pub = [columns.index("region"), columns.index("a")]
    assert sorted(tuple(r[i] for i in pub) for r in got) == sorted(zip(data["region"], data["a"]))
    assert {r[columns.index("c")] for r in got} <= set(np.unique(data["c"]).tolist())


@on_every_engine
@pytest.mark.notimpl(["spark"], raises=UnsupportedByEngine, match="engine spark does not support scale='zscore'",
                     reason="the standard deviation is rounded by a DuckDB-only expression")
def test_zscore_scaled_neighbourhoods_equal_brute_force(engine, tied):
    path, data = tied
    d2 = squared_distances([scaled(data[c], "zscore") for c in "abc"], [])
    want, _, _ = brute_neighborhoods(d2, 3, 0.0)
    got = {r: set() for r in want}
    for record, neighbor, _ in rows(rwn_sql.neighborhoods(engine, path, ["a", "b", "c"], k=3, scale="zscore",
                                                          pairs=True, id="rid")):
        got[record].add(neighbor)
    assert got == want


@on_every_engine
@pytest.mark.notimpl(["spark"], raises=UnsupportedByEngine, match="engine spark does not support evaluate",
                     reason="evaluation runs on DuckDB (it reads the Parquet a Spark run writes)")
def test_evaluate_the_identity_release(engine, tied):
    path, _ = tied
    risk = rwn_sql.evaluate(engine, path, path, ["a", "b", "c"], id="rid").risk
    assert risk.linkage_rate == 1.0 and risk.dcr_mean == 0.0


@on_every_engine
@pytest.mark.notimpl(["spark"], raises=UnsupportedByEngine, match="engine spark does not support rank_swap",
                     reason="the baselines run on DuckDB")
def test_rank_swap_keeps_each_column_as_a_multiset(engine, tied):
    path, data = tied
    release = rwn_sql.rank_swap(engine, path, ["a", "b"], 10, key=KEY)
    got, columns = rows(release), list(release.columns)
    for c in ("a", "b", "c"):
        assert sorted(r[columns.index(c)] for r in got) == sorted(data[c].tolist())


@on_every_engine
@pytest.mark.notimpl(["spark"], raises=UnsupportedByEngine, match="engine spark does not support install",
                     reason="the SQL macros are DuckDB table macros")
def test_install_the_sql_macros(engine):
    rwn_sql.install(engine)
    assert engine.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = 'rwn_query'"
                          ).fetchall()[0][0] >= 1
