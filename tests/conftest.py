import contextlib
import re
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


def pytest_addoption(parser):
    parser.addoption("--all-tiers", action="store_true", default=False,
                     help="run the heavy tier too (a run without -m and without this leaves out the tests marked "
                          "heavy, except in the test files named on the command line; .ci/run runs both tiers)")


def _engine_of(item):
    """The engine a test runs on: its `engine` parameter (duckdb, spark), else None."""
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("engine") if callspec is not None else None


def _mark_notimpl(item) -> None:
    """@pytest.mark.notimpl(["spark"], raises=UnsupportedByEngine, match=..., reason=...) on a test
    parametrized by `engine`: on a listed engine the test is a strict xfail that must fail with
    exactly `raises` (not a subclass, not another error; its message matching `match` if given).
    It passing there fails the run (the engine implements it now: drop the marker), and so does
    any other exception (a crash is not a refusal)."""
    for mark in item.iter_markers("notimpl"):
        engines, raises = (mark.args[0] if mark.args else mark.kwargs.get("engines")), mark.kwargs.get("raises")
        if not engines or not (isinstance(raises, type) and issubclass(raises, BaseException)):
            raise pytest.UsageError(f"{item.nodeid}: notimpl needs the engines and raises=<exception class> "
                                    "(how the engine fails)")
        if _engine_of(item) is None:
            raise pytest.UsageError(f"{item.nodeid}: notimpl on a test not parametrized by engine")
        if _engine_of(item) in engines:
            reason = mark.kwargs.get("reason", "not implemented")
            item.add_marker(pytest.mark.xfail(raises=raises, strict=True,
                                              reason=f"{_engine_of(item)}: {reason}"))
            item.stash[_NOTIMPL] = (raises, mark.kwargs.get("match"))


_NOTIMPL = pytest.StashKey()


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Run a notimpl test on its listed engine: what it raises must be exactly `raises` (see
    _mark_notimpl); anything else is turned into an AssertionError, which the xfail does not
    accept."""
    expected = pyfuncitem.stash.get(_NOTIMPL, None)
    if expected is None:
        return None
    raises, match = expected
    args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    try:
        pyfuncitem.obj(**args)
    except raises as exc:
        if type(exc) is not raises:
            raise AssertionError(f"notimpl expected exactly {raises.__name__}, got {type(exc).__name__}: {exc}") from exc
        if match is not None and not re.search(match, str(exc)):
            raise AssertionError(f"notimpl expected {raises.__name__} matching {match!r}, got: {exc}") from exc
        raise
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    heavy, named = [], _named_files(config)
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            # -m spark selects every test that takes the spark fixture, not only the ones marked by hand
            item.add_marker(pytest.mark.spark)
        if item.get_closest_marker("spark") is not None:
            item.add_marker(pytest.mark.heavy)              # every Spark test is in the heavy tier
            item.add_marker(pytest.mark.xdist_group("spark"))   # one JVM: --dist loadgroup sends them to one worker
        if item.get_closest_marker("scan") is not None:
            item.add_marker(pytest.mark.heavy)              # and every certification scan
        _mark_notimpl(item)
        if item.get_closest_marker("heavy") is not None and Path(item.path).resolve() not in named:
            heavy.append(item)
    # The default tier: without -m and --all-tiers the heavy tests are deselected, except in the
    # test files named on the command line (pytest tests/cli/test_faults.py runs all of it).
    if heavy and not config.getoption("markexpr", "") and not config.getoption("all_tiers", False):
        config.hook.pytest_deselected(items=heavy)
        left = set(map(id, heavy))
        items[:] = [item for item in items if id(item) not in left]
        config.stash[_HEAVY_LEFT_OUT] = len(heavy)


_HEAVY_LEFT_OUT = pytest.StashKey()


def _named_files(config) -> set:
    """The test files named on the command line (a file, or a test of it), resolved."""
    named = set()
    for arg in config.args:
        path = Path(config.invocation_params.dir, arg.split("::")[0]).resolve()
        if path.is_file():
            named.add(path)
    return named


def pytest_terminal_summary(terminalreporter, config):
    # Under xdist the workers collect, so the count is known only in a run without workers.
    every_arg_a_file = len(_named_files(config)) == len(set(a.split("::")[0] for a in config.args))
    if not config.getoption("markexpr", "") and not config.getoption("all_tiers", False) and not every_arg_a_file:
        left_out = config.stash.get(_HEAVY_LEFT_OUT, None)
        terminalreporter.write_line(f"the default tier: {'the' if left_out is None else left_out} tests of the "
                                    "heavy tier deselected (pytest -m heavy runs them, pytest --all-tiers both tiers)")


@pytest.fixture
def bodyfat(con):
    con.execute(f"CREATE TABLE bodyfat AS SELECT * FROM read_csv('{BODYFAT}')").fetchall()
    return "bodyfat"
