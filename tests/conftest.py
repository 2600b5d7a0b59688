import contextlib
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


@pytest.fixture
def set_limits():
    """set_limits(NAME=value, ...): rwn_sql.limits.use for the rest of the test, for a limit
    that a whole test (or a fixture's parameter) runs under; a later call builds on an earlier."""
    from rwn_sql import limits
    with contextlib.ExitStack() as stack:
        yield lambda **changes: stack.enter_context(limits.use(**changes))


def _new_spark_session():
    """The local session the Spark tests share."""
    from pyspark.sql import SparkSession
    session = (SparkSession.builder.master("local[2]").appName("rwn_sql-tests")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    return session


def _spark_alive(session) -> bool:
    """Whether the session can still run a statement: a call into its JVM that raises when the JVM
    is gone, and the context not stopped."""
    try:
        return not session.sparkContext._jsc.sc().isStopped()
    except Exception:
        return False


def _forget_dead_jvm() -> None:
    """After a failed start, let the next start launch a new JVM: pyspark keeps its gateway for
    the process, even one whose JVM has exited."""
    try:
        from pyspark import SparkContext
    except ImportError:
        return
    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    if proc is not None and proc.poll() is not None:
        SparkContext._gateway = SparkContext._jvm = None


class _SharedSpark:
    """The one Spark session of the run and what became of it. A session that cannot start, or
    dies, is one error (in the first test that needs it after that), and every later Spark test
    is skipped naming that error, rather than each test repeating the same failure."""
    START_ATTEMPTS = 2      # a JVM that cannot start its threads on a loaded machine may the next time

    def __init__(self):
        self.session = None
        self.broken = None          # why Spark is unusable, once it is
        self.reported_in = None     # the test whose error said so
        self.last_test = None       # the last test that got a live session

    def get(self, nodeid: str):
        if self.broken is not None:
            pytest.skip(f"Spark is unusable in this run: see the error of {self.reported_in}")
        if self.session is None:
            errors = []
            for _ in range(self.START_ATTEMPTS):
                try:
                    self.session = _new_spark_session()
                    break
                except Exception as exc:
                    errors.append(f"{type(exc).__name__}: {str(exc).strip() or '(no message)'}")
                    _forget_dead_jvm()
            else:
                self._break(nodeid, f"the Spark session failed to start ({len(errors)} attempts; the JVM's own "
                                    f"output, if any, is in the captured stderr): " + " / ".join(dict.fromkeys(errors)))
        elif not _spark_alive(self.session):
            self._break(nodeid, f"the Spark session was alive when {self.last_test} started and is not now "
                                "(its JVM died or the session was stopped)")
        self.last_test = nodeid
        return self.session

    def _break(self, nodeid: str, why: str):
        self.broken, self.reported_in = why, nodeid
        pytest.fail(why + " (the later Spark tests are skipped)", pytrace=False)

    def stop(self):
        if self.session is not None and _spark_alive(self.session):
            self.session.stop()


@pytest.fixture(scope="session")
def _shared_spark():
    shared = _SharedSpark()
    yield shared
    shared.stop()


@pytest.fixture
def spark(_shared_spark, request):
    """One local Spark session for every Spark test module (starting one takes seconds); the
    modules skip themselves first when pyspark or Java is missing. Each test checks the session
    is alive before it runs: see _SharedSpark."""
    return _shared_spark.get(request.node.nodeid)


def pytest_collection_modifyitems(items):
    # -m spark selects every test that takes the spark fixture, not only the ones marked by hand
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


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
