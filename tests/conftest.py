import sys
from pathlib import Path

import duckdb
import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))          # the brute-force reference lives beside the tests

BODYFAT = ROOT / "examples" / "data" / "bodyfat_clean.csv"
BODYFAT_COLUMNS = ["BodyFat", "Age", "Weight", "Height", "Neck", "Chest", "Abdomen", "Hip",
                   "Thigh", "Knee", "Ankle", "Biceps", "Forearm", "Wrist"]


def skip_without_spark() -> None:
    """Skip the calling test module when pyspark or Java is missing; .ci/run sets
    RWN_REQUIRE_SPARK=1, and there a missing one fails instead."""
    import importlib.util
    import os
    import shutil
    missing = ("pyspark is not installed (pip install '.[spark]')" if importlib.util.find_spec("pyspark") is None
               else "Java is not installed (Spark needs it)" if shutil.which("java") is None else None)
    if missing:
        if os.environ.get("RWN_REQUIRE_SPARK") == "1":
            raise RuntimeError(f"RWN_REQUIRE_SPARK=1 but {missing}")
        pytest.skip(missing, allow_module_level=True)


@pytest.fixture
def con():
    c = duckdb.connect()
    yield c
    c.close()


@pytest.fixture(scope="session")
def spark():
    """One local Spark session for every Spark test module (starting one takes seconds); the
    modules skip themselves first when pyspark or Java is missing."""
    from pyspark.sql import SparkSession
    session = (SparkSession.builder.master("local[2]").appName("rwn_sql-tests")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def bodyfat(con):
    con.execute(f"CREATE TABLE bodyfat AS SELECT * FROM read_csv('{BODYFAT}')").fetchall()
    return "bodyfat"


def load_numpy(con, name: str, arrays: dict) -> None:
    """Create table `name` from a dict of numpy arrays (column order kept)."""
    import pyarrow as pa
    tbl = pa.table(arrays)   # noqa: F841  (read by DuckDB's replacement scan)
    con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM tbl').fetchall()


def tied_data(n: int, seed: int) -> dict:
    """Integer-valued data on a small lattice: many exact distance ties and duplicate rows."""
    rng = np.random.default_rng(seed)
    data = {"a": rng.integers(0, 6, n), "b": rng.integers(0, 5, n), "c": rng.integers(0, 4, n)}
    dup = rng.integers(0, n, n // 5)                       # copy some rows over others: duplicates
    for v in data.values():
        v[: len(dup)] = v[dup]
    return data
