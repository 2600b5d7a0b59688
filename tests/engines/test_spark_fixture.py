"""The shared Spark session of tests/conftest.py: a session that cannot start, or dies during the
run, is one error naming the cause, and the later Spark tests are skipped naming that error,
rather than one repeated traceback per Spark test. Each case runs a small test file in a pytest
subprocess whose conftest is this suite's, with the session builder (and the liveness check)
replaced by fakes, so no JVM is started. Checked to fail with one start attempt instead of two,
with the later tests not skipped after the error, and without the liveness check."""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from helpers.data import TESTS

CONFTEST = f'''
import importlib.util
import os

spec = importlib.util.spec_from_file_location("rwn_tests_conftest", {str(TESTS / "conftest.py")!r})
real = importlib.util.module_from_spec(spec)
spec.loader.exec_module(real)
spark, _shared_spark = real.spark, real._shared_spark
pytest_collection_modifyitems = real.pytest_collection_modifyitems


class FakeSession:
    alive = True
    def stop(self):
        with open(os.environ["LOG"], "a") as f:
            f.write("stop\\n")


def fake_start():
    with open(os.environ["LOG"], "a") as f:
        f.write("start\\n")
    with open(os.environ["LOG"]) as f:
        attempts = f.read().count("start")
    if attempts <= int(os.environ["FAILED_STARTS"]):
        raise RuntimeError(f"unable to create native thread (attempt {{attempts}})")
    return FakeSession()


def pytest_configure(config):
    config.addinivalue_line("markers", "spark: runs on Apache Spark")


real._new_spark_session = fake_start
real._spark_alive = lambda session: session.alive
'''

TESTS = '''
def test_a(spark):
    pass

def test_b(spark):
    if __import__("os").environ.get("DIE_IN_B"):
        spark.alive = False        # the JVM goes away while test_b runs

def test_c(spark):
    pass

def test_d(spark):
    pass

def test_without_spark():
    pass
'''


def run(tmp_path, failed_starts: int, die_in_b: bool = False, require: bool = False):
    """Each test's outcome (passed, failed, error, skipped) and message, the lines the fakes
    logged, and pytest's exit code."""
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_uses_spark.py").write_text(TESTS)
    log, report = tmp_path / "log", tmp_path / "report.xml"
    env = {k: v for k, v in os.environ.items() if k not in ("RWN_REQUIRE_SPARK", "DIE_IN_B")}
    env.update(LOG=str(log), FAILED_STARTS=str(failed_starts))
    if die_in_b:
        env["DIE_IN_B"] = "1"
    if require:
        env["RWN_REQUIRE_SPARK"] = "1"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--rootdir", str(tmp_path),
                           f"--junitxml={report}", str(tmp_path / "test_uses_spark.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    outcomes = {}
    for case in ET.parse(report).iter("testcase"):
        found = [(child.tag, child.get("message", "")) for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[case.get("name")] = found[0] if found else ("passed", "")
    logged = log.read_text().split() if log.exists() else []
    return outcomes, logged, proc.returncode, proc.stdout + proc.stderr


@pytest.mark.parametrize("require", [False, True])
def test_a_session_that_cannot_start_is_one_error(tmp_path, require):
    outcomes, logged, code, output = run(tmp_path, failed_starts=99, require=require)
    assert logged == ["start", "start"], output               # tried twice, then never again
    kind, message = outcomes["test_a"]
    assert kind == "error", output
    assert "failed to start (2 attempts" in message and "unable to create native thread (attempt 2)" in message
    for name in ("test_b", "test_c", "test_d"):
        kind, message = outcomes[name]
        assert kind == "skipped", (name, output)
        assert message == "Spark is unusable in this run: see the error of test_uses_spark.py::test_a"
    assert outcomes["test_without_spark"] == ("passed", "")
    assert code == 1, output                                   # the run fails, with or without RWN_REQUIRE_SPARK
    assert output.count("ERROR at setup") == 1, output          # one error, not one per Spark test


def test_a_session_that_starts_on_the_second_attempt_serves_every_test(tmp_path):
    outcomes, logged, code, output = run(tmp_path, failed_starts=1)
    assert logged == ["start", "start", "stop"], output        # one retry, one session for all, stopped at the end
    assert set(outcomes.values()) == {("passed", "")}, output
    assert code == 0, output


def test_a_session_that_dies_during_the_run_is_one_error(tmp_path):
    outcomes, logged, code, output = run(tmp_path, failed_starts=0, die_in_b=True)
    assert logged == ["start"], output                          # not restarted, and a dead session not stopped
    assert outcomes["test_a"] == outcomes["test_b"] == ("passed", "")
    kind, message = outcomes["test_c"]
    assert kind == "error" and "alive when test_uses_spark.py::test_b started and is not now" in message, output
    kind, message = outcomes["test_d"]
    assert (kind, message) == ("skipped", "Spark is unusable in this run: see the error of test_uses_spark.py::test_c")
    assert outcomes["test_without_spark"] == ("passed", "")
    assert code == 1, output
