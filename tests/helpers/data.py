"""Paths of the repository and the shipped data sets, and small data loaders."""
import importlib.util
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

TESTS = Path(__file__).resolve().parents[1]          # tests/
ROOT = TESTS.parent                                  # the repository
GOLDEN = TESTS / "golden"

BODYFAT = ROOT / "examples" / "data" / "bodyfat_clean.csv"
BODYFAT_COLUMNS = ["BodyFat", "Age", "Weight", "Height", "Neck", "Chest", "Abdomen", "Hip",
                   "Thigh", "Knee", "Ankle", "Biceps", "Forearm", "Wrist"]
ADULT = ROOT / "examples" / "data" / "adult.csv"


def skip_without_spark() -> None:
    """Skip the calling test module when pyspark or Java is missing; .ci/run sets
    RWN_REQUIRE_SPARK=1, and there a missing one fails instead."""
    missing = ("pyspark is not installed (pip install '.[spark]')" if importlib.util.find_spec("pyspark") is None
               else "Java is not installed (Spark needs it)" if shutil.which("java") is None else None)
    if missing:
        if os.environ.get("RWN_REQUIRE_SPARK") == "1":
            raise RuntimeError(f"RWN_REQUIRE_SPARK=1 but {missing}")
        pytest.skip(missing, allow_module_level=True)


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
