"""RWN on Apache Spark (issue 11): the neighbourhood search driven one statement per level
(rwn_sql.rwn.steps), the same plan as DuckDB's recursive CTE. Exact neighbourhoods against the
brute force, and the same release and donors as DuckDB for the same data, parameters, id and
key, row for row. Skipped with the reason when pyspark or Java is missing (RWN_REQUIRE_SPARK=1
turns that into a failure)."""
import subprocess
import sys

import duckdb
import numpy as np
import pytest

import rwn_sql
from helpers.bruteforce import neighborhoods as brute_neighborhoods
from helpers.bruteforce import scaled, squared_distances
from helpers.data import BODYFAT, skip_without_spark, tied_data
from rwn_sql.engines import spark as spark_engine

skip_without_spark()
pytestmark = pytest.mark.spark     # every test here runs Spark, some through the CLI: the heavy tier, one xdist worker

KEY = "a steward's key: k" * 2


def write_parquet(path, arrays: dict, order) -> str:
    """`arrays` as a Parquet file whose rows are in `order` (so the input order differs from
    the id order)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    pq.write_table(pa.table({c: np.asarray(v)[order] for c, v in arrays.items()}), str(path))
    return str(path)


def test_neighbourhoods_on_spark_equal_brute_force(spark, tmp_path):
    """Integer data with many exact ties and duplicate rows, rows shuffled: record r is the
    record with the r-th smallest id, and S_r is exactly the brute force's, ties included."""
    n = 160
    data = tied_data(n, seed=11)
    ids = 5 * np.arange(n) + 1000            # id order = the order the brute force numbers records in
    path = write_parquet(tmp_path / "tied.parquet", {"rid": ids, **data}, np.random.default_rng(3).permutation(n))
    d2 = squared_distances([scaled(data[c], "minmax") for c in "abc"], [])
    want, _, _ = brute_neighborhoods(d2, 4, 0.0)
    rows = rwn_sql.neighborhoods(spark, path, ["a", "b", "c"], k=4, pairs=True, id="rid").collect()
    got = {r: set() for r in range(1, n + 1)}
    for r in rows:
        got[r["record"]].add(r["neighbor"])
    assert got == want
    # eps = 0.2 is exactly the scaled step of column a (ties at eps) and k = 7 reaches past it:
    # the per-record summary, |S_i| and the radius max(eps, r_k) (sqrt is correctly rounded on
    # both sides, so it compares exactly)
    want, radius2, _ = brute_neighborhoods(d2, 7, 0.2)
    frame = rwn_sql.neighborhoods(spark, path, ["a", "b", "c"], k=7, eps=0.2, id="rid")
    sizes = {r["record"]: (r["size"], r["radius"]) for r in frame.collect()}
    assert sizes == {i: (len(want[i]), float(np.sqrt(radius2[i]))) for i in want}
    # DuckDB numbers the records by the same id: the same rows
    on_duckdb = rwn_sql.neighborhoods(duckdb.connect(), path, ["a", "b", "c"], k=7, eps=0.2, id="rid")
    assert sorted(tuple(r) for r in frame.collect()) == sorted(on_duckdb.fetchall())


def _bodyfat(tmp_path) -> str:
    """bodyfat with an id column, rows in an order unrelated to the ids."""
    path = tmp_path / "bodyfat.parquet"
    duckdb.execute(f"""COPY (SELECT (row_number() OVER () * 7919) % 1009 AS rid, * FROM read_csv('{BODYFAT}')
                       ORDER BY hash(Age, Weight)) TO '{path}' (FORMAT parquet)""").fetchall()
    return str(path)


def test_bodyfat_release_and_donors_equal_duckdb(spark, tmp_path):
    """Four distance columns (the grid then uses the three of widest spread), eps > 0, q < 1
    and a dropped column: the Spark release equals DuckDB's row for row, in the keyed order,
    and so do the donors."""
    path = _bodyfat(tmp_path)
    con = duckdb.connect()
    kw = dict(columns=["Age", "Weight", "Height", "Neck"], k=5, eps=0.05, q=0.7, key=KEY, id="rid")
    frame = rwn_sql.perturb(spark, path, drop=["Wrist"], **kw)
    on_spark = [tuple(r) for r in frame.collect()]
    on_duckdb = rwn_sql.perturb(con, path, drop=["Wrist"], **kw).fetchall()
    assert frame.columns == [d[0] for d in rwn_sql.perturb(con, path, drop=["Wrist"], **kw).description]
    assert on_spark == on_duckdb and len(on_spark) == 241
    original = con.execute(f"SELECT rid, Age FROM '{path}'").fetchall()
    assert sum(a != b for a, b in zip(sorted(original), sorted((r[0], r[1]) for r in on_spark))) > 100
    donors_spark = sorted(tuple(r) for r in rwn_sql.donors(spark, path, **kw).collect())
    assert donors_spark == sorted(rwn_sql.donors(con, path, **kw).fetchall())


def test_ties_clusters_strata_and_categories_equal_duckdb(spark, tmp_path):
    """Clusters of identical records of sizes 1 to 8 (k = 5 is at least most of them, so
    neighbourhoods reach into other clusters and tie there), a categorical column and strata:
    the same release and donors on both engines, with text ids."""
    sizes = [1, 2, 3, 4, 5, 6, 7, 8] * 3
    x = np.repeat(np.arange(len(sizes)) % 9, sizes).astype(np.int64)
    n = len(x)
    data = {"rid": np.array([f"p{i:04d}" for i in range(n)]), "x": x, "y": (x * 3) % 5,
            "colour": np.array(["red", "green", "blue"])[np.arange(n) % 3], "region": np.arange(n) % 2}
    path = write_parquet(tmp_path / "clusters.parquet", data, np.random.default_rng(8).permutation(n))
    con = duckdb.connect()
    kw = dict(columns=["x", "y", "colour"], categorical=["colour"], strata=["region"], k=5, weight=0.5,
              key=KEY, id="rid")
    assert [tuple(r) for r in rwn_sql.perturb(spark, path, **kw).collect()] == rwn_sql.perturb(con, path, **kw).fetchall()
    assert sorted(tuple(r) for r in rwn_sql.donors(spark, path, **kw).collect()) == \
        sorted(rwn_sql.donors(con, path, **kw).fetchall())


def test_spark_refuses_what_it_cannot_do(spark, tmp_path):
    path = write_parquet(tmp_path / "dup.parquet", {"rid": np.array([1, 2, 2, 3, 4, 5, 6, 7]),
                                                     "x": np.arange(8.0)}, np.arange(8))
    with pytest.raises(rwn_sql.RWNError, match=r"id= \(--id\) is required"):
        rwn_sql.perturb(spark, path, ["x"], k=2, key=KEY)
    with pytest.raises(rwn_sql.RWNError, match="duplicate values"):
        rwn_sql.perturb(spark, path, ["x"], k=2, key=KEY, id="rid")
    with pytest.raises(rwn_sql.RWNError, match="on Spark, into= takes a .parquet path"):
        rwn_sql.perturb(spark, path, ["x"], k=2, key=KEY, id="rid", into="t")
    # scale='zscore' and the DuckDB-only calls (evaluate, rank_swap, install) name themselves instead
    # of failing inside pyspark: engines/test_engines.py, marked notimpl on spark


def test_perturb_into_parquet_and_its_steps(spark, tmp_path):
    """into= a .parquet path writes the release (the rows of the DataFrame it would return);
    sql=True gives every step Spark runs, each parsed by sqlglot as Spark SQL."""
    import sqlglot
    path = write_parquet(tmp_path / "in.parquet", {"rid": np.arange(40), "x": np.arange(40.0) % 7,
                                                    "y": np.arange(40.0) % 5}, np.arange(40))
    kw = dict(columns=["x", "y"], k=3, eps=0.1, key=KEY, id="rid")
    out = str(tmp_path / "out.parquet")
    assert rwn_sql.perturb(spark, path, into=out, **kw) is None
    assert sorted(tuple(r) for r in spark.read.parquet(out).collect()) == \
        sorted(tuple(r) for r in rwn_sql.perturb(spark, path, **kw).collect())
    text = rwn_sql.perturb(spark, path, sql=True, **kw)
    steps = [s for s in text.split(";\n") if s.strip()]
    assert len(steps) == 8 and "repeated" in text and KEY not in text
    for step in steps:
        sqlglot.parse_one(step.replace("<L>", "L").replace("<L+1>", "L1"), read="spark")


def test_cli_perturb_and_neighborhoods_on_both_engines(tmp_path):
    """rwn-sql perturb IN.parquet OUT.parquet --columns ... --id rid --seed 7 --engine spark writes the
    same rows as --engine duckdb (compared as multisets); rwn-sql neighborhoods prints the same
    distributions and writes the same per-record rows."""
    data = _bodyfat(tmp_path)
    outs, hoods, printed = {}, {}, {}
    spark_options = ["--spark-master", "local[2]", "--spark-conf", "spark.sql.shuffle.partitions=2"]

    def read(out) -> list[tuple]:
        return duckdb.execute(f"SELECT * FROM read_parquet('{f'{out}/*.parquet' if out.is_dir() else out}')").fetchall()

    for engine in ("duckdb", "spark"):
        out = tmp_path / f"{engine}.parquet"
        run = subprocess.run([sys.executable, "-m", "rwn_sql", "perturb", data, str(out), "--columns",
                              "Age,Weight,Height", "--id", "rid", "--seed", "7", "--engine", engine, *spark_options],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-2000:]
        outs[engine] = read(out)
        out = tmp_path / f"{engine}_hoods.parquet"
        run = subprocess.run([sys.executable, "-m", "rwn_sql", "neighborhoods", data, "--columns", "Age,Weight",
                              "--eps", "0.05", "--id", "rid", "--engine", engine, "--output", str(out),
                              *spark_options], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-2000:]
        hoods[engine] = read(out)
        printed[engine] = run.stdout.splitlines()[1:]       # the first line names the engine and the time
    assert sorted(outs["duckdb"]) == sorted(outs["spark"]) and len(outs["spark"]) == 241
    assert sorted(hoods["duckdb"]) == sorted(hoods["spark"]) and len(hoods["spark"]) == 241
    assert printed["duckdb"][:5] == printed["spark"][:5] and "share of records" in printed["spark"][4]


def test_cli_refuses_duckdb_settings_on_spark(tmp_path):
    """DuckDB's --threads/--memory-limit would be silently meaningless on Spark: refused, naming the option."""
    run = subprocess.run([sys.executable, "-m", "rwn_sql", "perturb", str(tmp_path / "in.parquet"),
                          str(tmp_path / "out.parquet"), "--columns", "a", "--id", "rid", "--engine", "spark",
                          "--memory-limit", "2GB"], capture_output=True, text=True)
    assert run.returncode == 2 and "--memory-limit sets DuckDB" in run.stderr, run.stderr


@pytest.mark.parametrize("kind", ["integer", "text"])
def test_record_numbers_are_the_id_rank_over_many_partitions(spark, tmp_path, kind):
    """The records are numbered in parallel (a range-partitioned sort, then per-partition
    offsets): with the input in 7 partitions and the sort in 7, every record's number equals
    DuckDB's rank of its id, the columns come through unchanged, and no step of the numbering
    gathers the table into one partition (the one-statement window does: the check can fail)."""
    from rwn_sql.rwn.steps import RWNPlan
    from rwn_sql.rwn.spec import RWNSpec
    rng = np.random.default_rng(5)
    n = 500
    if kind == "integer":
        ids = rng.choice(np.arange(-10**12, 10**12, 7919), size=n, replace=False)
    else:           # prefixes, digits sorting as text, non-ASCII letters
        ids = np.array([f"{rng.choice(['a', 'A', 'é', 'ab', 'z'])}{i}" for i in rng.permutation(n)])
    path = write_parquet(tmp_path / f"{kind}.parquet", {"rid": ids, "x": rng.normal(size=n)}, rng.permutation(n))
    expected = dict(duckdb.execute(f"SELECT rid, row_number() OVER (ORDER BY rid) FROM '{path}'").fetchall())
    backend = spark_engine.SparkBackend(spark)
    saved = {k: spark.conf.get(k) for k in ("spark.sql.shuffle.partitions",
                                            "spark.sql.adaptive.coalescePartitions.enabled")}
    spark.conf.set("spark.sql.shuffle.partitions", "7")
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")
    staged = []
    try:
        src = backend.source(spark.read.parquet(path).repartition(7))
        plan = RWNPlan(src.sql, RWNSpec(columns=("x",), k=2, id="rid"))
        previous, plans = None, []
        for _, make in plan.numbering():
            sql = make(previous)
            plans.append(backend.relation(sql)._jdf.queryExecution().executedPlan().toString())
            staged.append(backend.stage(sql))
            previous = staged[-1]
        parts = backend.rows(f"SELECT count(DISTINCT __rwn_pos div {2 ** 33}) FROM {staged[0]}")[0][0]
        frame = spark.table(previous)
        numbered = {r["rid"]: r["__rwn_rid"] for r in frame.collect()}
        single = backend.relation(plan.staged())._jdf.queryExecution().executedPlan().toString()
    finally:
        for name in staged:
            backend.drop(name)
        for k, v in saved.items():
            spark.conf.set(k, v)
    assert parts >= 5                       # the offsets between partitions were exercised
    assert frame.columns == ["__rwn_rid", "rid", "x"]
    assert numbered == expected
    assert "SinglePartition" in single and "Window" in single
    for text in plans:
        assert "SinglePartition" not in text and "Window" not in text, text


def test_five_dimensional_grid_on_spark_equals_brute_force(spark, tmp_path):
    """5 isotropic columns: the search chooses a 5-d grid (tests/rwn/test_grid_dims.py) and its
    packed cell keys; Spark's neighbourhoods equal the brute force, ties included."""
    n = 200
    rng = np.random.default_rng(5)
    data = {c: rng.integers(0, 4, n).astype(float) for c in "abcde"}
    path = write_parquet(tmp_path / "five.parquet", {"rid": np.arange(n) + 1, **data}, np.arange(n))
    d2 = squared_distances([scaled(data[c], "minmax") for c in "abcde"], [])
    want, _, _ = brute_neighborhoods(d2, 3, 0.0)
    rows = rwn_sql.neighborhoods(spark, path, list("abcde"), k=3, pairs=True, id="rid").collect()
    got = {r: set() for r in range(1, n + 1)}
    for r in rows:
        got[r["record"]].add(r["neighbor"])
    assert got == want


def spark_pairs(spark, path, data, n) -> dict:
    """Spark's neighbourhoods (k = 3, eps = 0, by the id rid) as record -> set of neighbours."""
    rows = rwn_sql.neighborhoods(spark, path, list(data), k=3, pairs=True, id="rid").collect()
    got = {r: set() for r in range(1, n + 1)}
    for r in rows:
        got[r["record"]].add(r["neighbor"])
    return got


def brute_pairs(data) -> dict:
    d2 = squared_distances([scaled(data[c], "minmax") for c in data], [])
    return brute_neighborhoods(d2, 3, 0.0)[0]


def test_principal_axes_on_spark_equal_brute_force(spark, tmp_path):
    """6 integer columns from 3 latent factors: Spark grids on principal axes
    (tests/rwn/test_grid_axes.py) and its neighbourhoods equal the brute force, ties included."""
    from rwn_sql.rwn import run as rwn
    from rwn_sql.engines.backend import backend_for
    n = 200
    rng = np.random.default_rng(6)
    pts = rng.integers(0, 5, (n, 3)) @ rng.integers(-2, 3, (3, 6)) + rng.integers(0, 2, (n, 6))
    data = {f"v{i}": pts[:, i].astype(float) for i in range(6)}
    path = write_parquet(tmp_path / "corr.parquet", {"rid": np.arange(n) + 1, **data}, np.arange(n))
    spec = rwn_sql.RWNSpec(columns=tuple(data), k=3, id="rid")
    be = backend_for(spark)
    assert rwn.grid_axes(be, rwn.check_source(be, path, spec, guard=False), spec) is not None
    assert spark_pairs(spark, path, data, n) == brute_pairs(data)


def test_four_axes_and_finer_start_levels_on_spark_equal_brute_force(spark, tmp_path):
    """Clumped integer data with a 4th factor (tests/rwn/test_grid_axes.py `clumped`): Spark grids on
    4 principal axes, its second density round starts records finer (the `first_level` step),
    and its neighbourhoods equal the brute force, ties included."""
    from helpers.datasets import clumped
    from rwn_sql.rwn import run as rwn
    from rwn_sql.engines.backend import backend_for
    n = 300
    data = clumped(n, 11, integer=True)
    path = write_parquet(tmp_path / "clumps.parquet", {"rid": np.arange(n) + 1, **data}, np.arange(n))
    spec = rwn_sql.RWNSpec(columns=tuple(data), k=3, id="rid")
    be = backend_for(spark)
    assert len(rwn.grid_axes(be, rwn.check_source(be, path, spec, guard=False), spec)) == 4
    assert spark_pairs(spark, path, data, n) == brute_pairs(data)
