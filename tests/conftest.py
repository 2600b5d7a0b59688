import contextlib
import sys
from pathlib import Path

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))     # tests/helpers: what the test modules share

from helpers.data import BODYFAT, skip_without_spark  # noqa: E402


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


@pytest.fixture
def spark_if_installed(request):
    """The shared session for a Spark test in a module that also runs without Spark: the test is
    skipped naming what is missing (pyspark, Java), or fails with RWN_REQUIRE_SPARK=1. Whole Spark
    modules call skip_without_spark() at import instead and take `spark`."""
    skip_without_spark()
    return request.getfixturevalue("spark")


def pytest_collection_modifyitems(items):
    # -m spark selects every test that takes the spark fixture, not only the ones marked by hand
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


@pytest.fixture
def bodyfat(con):
    con.execute(f"CREATE TABLE bodyfat AS SELECT * FROM read_csv('{BODYFAT}')").fetchall()
    return "bodyfat"
