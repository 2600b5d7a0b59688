"""Fault injection through the real command line (`python -m rwn_sql` in a subprocess):
signals at random moments, a full disk, a read-only folder, a memory limit, concurrent
writers, hostile key files and odd inputs. Every case checks what a user relies on: the
documented exit code and a one-line message (never a traceback), the input untouched, the
output absent or whole, and no temporary file left (in the output folder or as ./.tmp)."""
import csv
import gzip
import hashlib
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import duckdb
import pytest

from helpers.data import ADULT, BODYFAT

pytestmark = pytest.mark.heavy      # fault injection through subprocesses: the heavy tier

BIG_ROWS = 300_000        # large enough that a perturb runs a few seconds on 2 threads
PERTURB = ("--columns", "a,b", "--seed", "1", "--threads", "2")


def cli(*args, cwd, wait=True, **kw):
    cmd = [sys.executable, "-m", "rwn_sql", *map(str, args)]
    if not wait:
        return subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120, **kw)


def digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def leftovers(*folders) -> list[str]:
    """Temporary files a run could leave: its private folder, DuckDB's ./.tmp spill folder,
    temporary outputs and WAL files."""
    found = []
    for folder in folders:
        for name in os.listdir(folder):
            if name.startswith(".rwn-sql-") or name in (".tmp",) or name.endswith((".tmp", ".wal")):
                found.append(os.path.join(folder, name))
    return found


def one_line_error(stderr: str, code: int, rc: int, *words) -> None:
    assert rc == code, stderr
    assert "Traceback" not in stderr, stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("rwn-sql: error: "), stderr
    for w in words:
        assert w.lower() in last.lower(), (w, last)


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    folder = tmp_path_factory.mktemp("big")
    path = folder / "big.parquet"
    duckdb.connect().execute(
        f"COPY (SELECT range AS id, (hash(range) % 1000)::DOUBLE AS a, (hash(range * 7) % 997)::DOUBLE AS b, "
        f"CASE WHEN range % 2 = 0 THEN 'yes' ELSE 'no' END AS flag FROM range({BIG_ROWS})) TO '{path}'").fetchall()
    return path


@pytest.fixture(scope="module")
def medium(tmp_path_factory):
    """30k rows with an incompressible text column: over 512 kB as CSV and as a database."""
    path = tmp_path_factory.mktemp("medium") / "medium.parquet"
    duckdb.connect().execute(
        f"COPY (SELECT range AS id, (hash(range) % 1000)::DOUBLE AS a, (hash(range * 7) % 997)::DOUBLE AS b, "
        f"md5(range::VARCHAR) AS tag FROM range(30000)) TO '{path}'").fetchall()
    return path


def rows_of(target) -> int:
    con = duckdb.connect()
    if ".duckdb:" in str(target):
        db, table = str(target).rsplit(":", 1)
        con.execute(f"ATTACH '{db}' AS o (READ_ONLY)").fetchall()
        return con.execute(f'SELECT count(*) FROM o."{table}"').fetchall()[0][0]
    return con.execute(f"SELECT count(*) FROM '{target}'").fetchall()[0][0]


def started(proc_err_path, timeout=30.0) -> None:
    """Wait until the run has logged its start (Python start-up and imports are over)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.path.exists(proc_err_path) and "rwn-sql perturb:" in open(proc_err_path).read():
            return
        time.sleep(0.02)
    raise AssertionError("the run never started")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_signal_at_random_moment(big, tmp_path, sig):
    rng = random.Random(1000 + int(sig))            # seeded: the moments are reproducible
    before = digest(big)
    landed = 0
    for target in ("out.parquet", "out.duckdb:release"):
        err = tmp_path / "stderr.txt"
        with open(err, "w") as fh:
            proc = subprocess.Popen([sys.executable, "-m", "rwn_sql", "perturb", str(big), target, *PERTURB],
                                    cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=fh)
            started(err)
            time.sleep(rng.uniform(0.0, 2.0))
            sent = time.monotonic()
            proc.send_signal(sig)
            rc = proc.wait(timeout=30)
            took = time.monotonic() - sent
        text = err.read_text()
        assert "Traceback" not in text, text
        out = tmp_path / target.split(":")[0]
        if rc == 0:                                 # the run finished before the signal: whole output
            assert rows_of(tmp_path / target) == BIG_ROWS
        else:
            assert rc == (-signal.SIGKILL if sig == signal.SIGKILL else 128 + sig), text
            assert took < 2.0, took                 # documented: within 2 s of SIGINT/SIGTERM
            if sig != signal.SIGKILL:
                assert ("interrupted" if sig == signal.SIGINT else "terminated") in text
            # After SIGINT/SIGTERM an output exists only when the run exits 0 (a run that had
            # finished keeps its code). SIGKILL after the atomic publish and before the exit
            # leaves rc = -9 and a whole output: either none, not even an empty database, or
            # the whole one, never a part.
            if out.exists():
                assert sig == signal.SIGKILL, f"exit {rc} with an output: {text}"
                assert rows_of(tmp_path / target) == BIG_ROWS
            else:
                landed += 1
                if sig != signal.SIGKILL:
                    assert "nothing was written" in text, text
        if sig == signal.SIGKILL:                   # nothing runs at SIGKILL: the next run cleans up
            res = cli("perturb", BODYFAT, "small.csv", "--columns", "Age", "--seed", "1", cwd=tmp_path)
            assert res.returncode == 0, res.stderr
            os.remove(tmp_path / "small.csv")
        assert leftovers(tmp_path) == []
        for name in ("out.parquet", "out.duckdb", "stderr.txt"):
            if (tmp_path / name).exists():
                os.remove(tmp_path / name)
    assert digest(big) == before
    assert landed, "every signal came after the output was published: nothing was tested"


def _handlers_installed(pid: int) -> bool:
    """Whether the process catches SIGTERM (SigCgt in /proc): rwn_sql installs its SIGINT and
    SIGTERM handlers in one step as its first action; Python itself leaves SIGTERM alone."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
    except FileNotFoundError:
        pass
    return False


def _duckdb_loaded(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/maps") as fh:
            return "duckdb" in fh.read()
    except (FileNotFoundError, ProcessLookupError):     # the process has ended
        return True


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc to see when the run's own code starts")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_start_up(tmp_path, sig):
    """A signal in the first moments, while DuckDB, numpy and sqlglot are imported, ends the run
    with the documented message and code too. Moments: as soon as the handlers exist (before
    the imports; only the interpreter's own start-up precedes them) and random ones over the
    start-up and the small run that follows."""
    rng = random.Random(2000 + int(sig))
    early = 0          # trials whose handlers were seen before DuckDB was loaded
    # a delay after the handlers appear, or None: as soon as the output appears (the moment a
    # message once said "nothing was written" about a published output)
    for delay in (0.0, 0.002, 0.02) + tuple(rng.uniform(0.0, 1.0) for _ in range(3)) + (None, None):
        err = tmp_path / "stderr.txt"
        with open(err, "w") as fh:
            proc = subprocess.Popen([sys.executable, "-m", "rwn_sql", "perturb", str(BODYFAT), "out.csv",
                                     "--columns", "Age,Weight", "--seed", "1"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                                    stderr=fh)
            end = time.monotonic() + 30
            while not _handlers_installed(proc.pid) and proc.poll() is None and time.monotonic() < end:
                time.sleep(0.0005)
            early += not _duckdb_loaded(proc.pid)
            if delay is None:
                while not (tmp_path / "out.csv").exists() and proc.poll() is None and time.monotonic() < end:
                    time.sleep(0.0002)
            else:
                time.sleep(delay)
            proc.send_signal(sig)
            rc = proc.wait(timeout=30)
        text = err.read_text()
        assert "Traceback" not in text, text
        if rc == 0:                                 # finished before the signal: whole output
            assert delay is None or delay > 0.02, "the imports alone take longer than 20 ms"
            assert rows_of(tmp_path / "out.csv") == 241
            os.remove(tmp_path / "out.csv")
        else:
            assert rc == 128 + sig, text
            said = text.strip().splitlines()[-1]
            word = "interrupted" if sig == signal.SIGINT else "terminated"
            # an output exists after a signal only when the run exits with its own code (0)
            assert not (tmp_path / "out.csv").exists(), text
            assert said == f"rwn-sql: {word}; nothing was written", text
        assert leftovers(tmp_path) == []
        os.remove(err)
    assert early, "the handlers came only after the heavy imports"


SIGNAL_ROWS = 20_000       # one perturb on 1 thread runs about 1-2 s, start-up included
# How late after os.kill the output's ctime may be when the run says it was published before
# the signal: the kernel delivers the signal to the main thread, whose handler needs the GIL
# (another thread may hold it for one switch interval, 5 ms, more on a loaded machine) before
# it stops publishing. A publish the signal did not stop comes hundreds of ms later.
SIGNAL_SLACK = 0.1


@pytest.fixture(scope="module")
def signal_input(tmp_path_factory):
    path = tmp_path_factory.mktemp("signal_input") / "in.parquet"
    duckdb.connect().execute(
        f"COPY (SELECT range AS id, (hash(range) % 1000)::DOUBLE AS a, (hash(range * 7) % 997)::DOUBLE AS b "
        f"FROM range({SIGNAL_ROWS})) TO '{path}'").fetchall()
    return path


def _table_rows(db, table="t") -> int | None:
    if not os.path.exists(db):
        return None
    con = duckdb.connect()
    con.execute(f"ATTACH '{db}' AS o (READ_ONLY)").fetchall()
    found = con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = 'o' AND table_name = ?",
                        [table]).fetchall()[0][0]
    return con.execute(f"SELECT count(*) FROM o.{table}").fetchall()[0][0] if found else None


def _signal_trial(source, folder, target, sig, delay, from_run) -> dict:
    """One run of `rwn-sql perturb source target` in `folder`, sent `sig` `delay` seconds after
    the process was started (`from_run` False: interpreter start-up, imports, parsing) or after
    it logged the start of its work (True: reading, connecting, the statements, publishing, exit);
    no signal when `sig` is 0."""
    folder.mkdir()
    if target.startswith("have.duckdb"):       # an existing database: the table is one transaction
        duckdb.connect(str(folder / "have.duckdb")).execute("CREATE TABLE other AS SELECT 1 AS x").fetchall()
    proc = subprocess.Popen([sys.executable, "-m", "rwn_sql", "perturb", str(source), target, "--columns", "a,b",
                             "--seed", "1", "--threads", "1"], cwd=folder, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    head = ""
    while from_run and "rwn-sql perturb:" not in head:
        line = proc.stderr.readline()
        assert line, "the run ended before it started its work"
        head += line
    time.sleep(delay)
    sent = time.time()
    if sig:
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    return dict(folder=folder, target=target, sig=sig, delay=delay, from_run=from_run, sent=sent,
                ended=time.time(), rc=proc.returncode, err=head + err)


def test_no_output_is_published_after_a_signal(signal_input, tmp_path):
    """SIGINT and SIGTERM at 50 random moments through the whole life of a run: 20 in its first
    second (interpreter start-up, imports), 30 from the start of its work to past its end, to a
    file, a new database and a table in an existing database. The rule (README, Exit codes):
    the output exists only if the run exited 0 (a run whose work had ended when the signal came
    keeps its exit code, and says so; otherwise exit 128 + signal and nothing was written). Once a
    signal has arrived nothing is published: the output's ctime (set by the publishing link) is
    not after the signal. Catches
    a worker thread that goes on and publishes while the signal path waits for it (issue 22 F4:
    exit 130 with the whole output, published up to 1.2 s after the signal; the code before did
    it for 6 of 12 signals in the first 0.5 s of the work on a quiet machine, fewer on a loaded
    one, where the work outlasts that wait: test_a_signal_between_statements_stops_the_publish
    catches it deterministically)."""
    with ThreadPoolExecutor(max_workers=3) as pool:         # as the trials run: three at once
        references = list(pool.map(lambda i: _signal_trial(signal_input, tmp_path / f"reference{i}", "out.parquet",
                                                           0, 0.0, True), range(3)))
    for r in references:
        assert r["rc"] == 0, r["err"]
    took = sorted(r["ended"] - r["sent"] for r in references)[1]     # from the start of the work to the exit
    whole = digest(tmp_path / "reference0" / "out.parquet")
    before = digest(signal_input)
    rng = random.Random(22)
    targets = ("out.parquet", "out.duckdb:t", "have.duckdb:t")
    # 20 moments in the first second of the process; 15 in the first 30 % of the work (where the
    # code before published after half of the signals); 15 over the whole work and past its end
    spans = [(1.0, False)] * 20 + [(0.3 * took, True)] * 15 + [(1.2 * took, True)] * 15
    trials = [(tmp_path / f"trial{i}", targets[i % 3], (signal.SIGINT, signal.SIGTERM)[i % 2],
               rng.uniform(0.0, span), from_run) for i, (span, from_run) in enumerate(spans)]
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(lambda t: _signal_trial(signal_input, *t), trials))
    outcomes = {"finished": 0, "nothing written": 0, "python default": 0}
    for r in results:
        folder, target, sig, rc, err = r["folder"], r["target"], r["sig"], r["rc"], r["err"]
        word = "interrupted" if sig == signal.SIGINT else "terminated"
        case = (f"{target} {signal.Signals(sig).name} {r['delay']:.3f} s after the "
                f"{'work' if r['from_run'] else 'process'} started: rc {rc}: {err}")
        file = folder / target.split(":")[0]
        if target == "out.parquet":
            exists = file.exists()
            if exists:
                assert digest(file) == whole, case
        else:
            rows = _table_rows(file)
            exists = rows is not None
            if exists:
                assert rows == SIGNAL_ROWS, case
        if rc == 0:
            assert exists, case
            if target != "have.duckdb:t":          # its checkpoint at detach writes the file later
                assert os.stat(file).st_ctime <= r["sent"] + SIGNAL_SLACK, case
            outcomes["finished"] += 1
        elif rc == -sig or (sig == signal.SIGINT and rc == 1 and err.rstrip().endswith("KeyboardInterrupt")):
            # before rwn_sql's handlers, Python's defaults: the interpreter's own start-up (a
            # KeyboardInterrupt while site imports is "Fatal Python error", exit 1) or the first
            # imports of rwn_sql/__main__.py, which install the handlers once they have the
            # signal module: our frames, if any, are module-level imports, never a function's
            ours = [line for line in err.splitlines() if "/rwn_sql/" in line]
            assert all(line.rstrip().endswith("in <module>") for line in ours), case
            assert not r["from_run"] and not exists and not leftovers(folder), case
            outcomes["python default"] += 1
            continue
        else:
            assert rc == 128 + sig and "Traceback" not in err, case
            said = err.strip().splitlines()[-1]
            assert not exists, case                 # an output exists only after exit 0
            assert said == f"rwn-sql: {word}; nothing was written", case
            outcomes["nothing written"] += 1
        assert leftovers(folder) == [], case
    assert digest(signal_input) == before
    # most moments fall within start-up and the work; some after the publish
    assert outcomes["nothing written"] >= 15 and outcomes["finished"], outcomes


@pytest.mark.parametrize("target", ["out.csv", "out.duckdb:t", "have.duckdb:t"])
def test_a_signal_between_statements_stops_the_publish(tmp_path, target):
    """A signal that DuckDB cannot cancel, because it comes between two statements (or as the
    table's statement returns), must still stop the publish. Simulated by a pause of 0.3 s,
    announced on stderr, before the output's statement (a file or new database) or after the
    CREATE TABLE in an existing database returned. The code before interrupted the (idle)
    connection, waited 1.2 s for the work, and the work published meanwhile: exit 130 with the
    whole output, or a committed table, after the signal (issue 22 F4)."""
    if target.startswith("have"):
        duckdb.connect(str(tmp_path / "have.duckdb")).execute("CREATE TABLE other AS SELECT 1 AS x").fetchall()
    code = ("import sys, time\n"
            "from rwn_sql.cli import main as cli\n"
            "from rwn_sql.engines import outputs\n"
            "def pause():\n"
            "    print('paused', file=sys.stderr, flush=True)\n"
            "    time.sleep(0.3)\n"
            "real_write, real_run = outputs.write_output, outputs.run\n"
            "def write_output(*args, **kwargs):\n"
            "    pause()\n"
            "    return real_write(*args, **kwargs)\n"
            "def run(con, sql, *args):\n"
            "    rows = real_run(con, sql, *args)\n"
            "    if sql.startswith('CREATE TABLE '):\n"
            "        pause()\n"
            "    return rows\n"
            f"outputs.{'run = run' if target.startswith('have') else 'write_output = write_output'}\n"
            f"sys.exit(cli.main(['perturb', {str(BODYFAT)!r}, {target!r}, '--columns', 'Age', '--seed', '1']))\n")
    for sig in (signal.SIGINT, signal.SIGTERM):
        err = tmp_path / "stderr.txt"
        with open(err, "w") as fh:
            proc = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, stderr=fh, stdout=subprocess.DEVNULL)
            end = time.monotonic() + 30
            while "paused" not in err.read_text() and proc.poll() is None and time.monotonic() < end:
                time.sleep(0.005)
            proc.send_signal(sig)
            rc = proc.wait(timeout=10)
        text = err.read_text()
        assert rc == 128 + sig and text.strip().splitlines()[-1].endswith("; nothing was written"), text
        if target.startswith("have"):
            assert _table_rows(tmp_path / "have.duckdb") is None, "the table was committed after the signal"
        else:
            assert not (tmp_path / target.split(":")[0]).exists(), "published after the signal"
        assert leftovers(tmp_path) == []
        os.remove(err)


@pytest.mark.parametrize("target", ["out.csv", "have.duckdb:t"])
def test_a_signal_after_the_publish_lets_the_run_close_up(tmp_path, target):
    """A signal that comes once the output is out, while the run closes up (drops its staged
    tables and keys, detaches a database: DuckDB statements, simulated by one that takes a
    while), must leave the run to end on its own: exit 0, the output whole, the last line saying
    it came after the run had finished. The code before interrupted that closing statement and
    exited 130 with the output in place, breaking the rule that an output exists after a signal
    only when the run exits 0."""
    if target.startswith("have"):
        duckdb.connect(str(tmp_path / "have.duckdb")).execute("CREATE TABLE other AS SELECT 1 AS x").fetchall()
    code = ("import sys\n"
            "from rwn_sql.cli import main as cli\n"
            "from rwn_sql.engines import outputs\n"
            "real_write = outputs.write_output\n"
            "def write_output(con, *args, **kwargs):\n"
            "    rows = real_write(con, *args, **kwargs)\n"
            "    print('published', file=sys.stderr, flush=True)\n"
            "    con.execute('SELECT sum(i) FROM range(300000000) t(i)').fetchall()\n"
            "    return rows\n"
            "outputs.write_output = write_output\n"
            f"sys.exit(cli.main(['perturb', {str(BODYFAT)!r}, {target!r}, '--columns', 'Age', '--seed', '1']))\n")
    for sig in (signal.SIGINT, signal.SIGTERM):
        err = tmp_path / "stderr.txt"
        with open(err, "w") as fh:
            proc = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, stderr=fh, stdout=subprocess.DEVNULL)
            end = time.monotonic() + 30
            while "published" not in err.read_text() and proc.poll() is None and time.monotonic() < end:
                time.sleep(0.005)
            proc.send_signal(sig)
            rc = proc.wait(timeout=15)
        text = err.read_text()
        word = "interrupted" if sig == signal.SIGINT else "terminated"
        assert rc == 0, text
        assert text.strip().splitlines()[-1] == f"rwn-sql: {word} after the run had finished; written whole: {target}"
        if target.startswith("have"):
            assert _table_rows(tmp_path / "have.duckdb") == 241
            duckdb.connect(str(tmp_path / "have.duckdb")).execute("DROP TABLE t").fetchall()
        else:
            assert len((tmp_path / target).read_text().splitlines()) == 242
            os.remove(tmp_path / target)
        assert leftovers(tmp_path) == []
        os.remove(err)


def _small_tmpfs(path, options) -> bool:
    """Mount a tmpfs at `path` when permitted (root in a container that allows it)."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    path.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True)
    return res.returncode == 0


def _umount(path) -> None:
    subprocess.run(["umount", str(path)], capture_output=True)


def _file_size_limit():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)       # so write() fails with EFBIG instead of killing
    resource.setrlimit(resource.RLIMIT_FSIZE, (512 << 10, 512 << 10))


def test_disk_full(medium, tmp_path):
    """A full disk: a 512 kB file-size limit (ulimit -f), and a real 512 kB tmpfs as well where
    mounting is permitted."""
    cases = [("ulimit", tmp_path / "limited", False)]
    tmpfs = tmp_path / "tmpfs"
    if _small_tmpfs(tmpfs, "size=512k"):
        cases.append(("tmpfs", tmpfs, True))
    try:
        before = digest(medium)
        for how, folder, mounted in cases:
            folder.mkdir(exist_ok=True)
            kw = {} if mounted else {"preexec_fn": _file_size_limit}
            for target in ("out.csv", "out.duckdb:t"):
                res = cli("perturb", medium, folder / target, *PERTURB, cwd=tmp_path, **kw)
                one_line_error(res.stderr, 2, res.returncode, "disk full")
                assert os.listdir(folder) == [] and leftovers(tmp_path) == [], how
        assert digest(medium) == before
    finally:
        if len(cases) > 1:
            _umount(tmpfs)


def test_read_only_folder(tmp_path):
    """chmod does not stop root, so as root a read-only tmpfs is mounted, else (a root that
    may not mount) the output goes to /proc, where no file can be created."""
    folder = tmp_path / "ro"
    mounted = False
    if os.geteuid() != 0:
        folder.mkdir()
        folder.chmod(0o555)
    else:
        mounted = _small_tmpfs(folder, "ro,size=1m")
        if not mounted:
            folder = "/proc"
    try:
        for target in ("out.csv", "out.duckdb:t"):
            res = cli("perturb", BODYFAT, os.path.join(folder, target), "--columns", "Age", "--seed", "1",
                      cwd=tmp_path)
            one_line_error(res.stderr, 2, res.returncode, "cannot write")
            assert not os.path.exists(os.path.join(folder, target.split(":")[0]))
        res = cli("release", ADULT, os.path.join(folder, "r.duckdb"), "--sensitive", "occupation", "--p", "0.5",
                  "--public", "sex", "--seed", "1", cwd=tmp_path)
        one_line_error(res.stderr, 2, res.returncode, "cannot write")
    finally:
        if mounted:
            _umount(folder)
        elif os.geteuid() != 0:
            folder.chmod(0o755)
    assert leftovers(tmp_path) == []


def test_memory_limit_ends_cleanly(big, tmp_path):
    """A tight memory limit either completes (DuckDB spills into the run's private folder) or
    ends with the documented out-of-memory message; either way nothing is left behind."""
    res = cli("perturb", big, "out.parquet", *PERTURB, "--memory-limit", "20MB", cwd=tmp_path)
    assert "Traceback" not in res.stderr
    if res.returncode == 0:
        assert rows_of(tmp_path / "out.parquet") == BIG_ROWS
    else:
        one_line_error(res.stderr, 2, res.returncode, "out of memory")
        assert not (tmp_path / "out.parquet").exists()
    assert leftovers(tmp_path) == []
    res = cli("perturb", BODYFAT, "o.csv", "--columns", "Age", "--memory-limit", "lots", cwd=tmp_path)
    one_line_error(res.stderr, 2, res.returncode, "--memory-limit")


@pytest.mark.parametrize("target", ["out.parquet", "out.duckdb:release"])
def test_concurrent_writers_one_wins_whole(medium, tmp_path, target):
    if target.startswith("out.duckdb"):               # an existing database: DuckDB's file lock decides
        duckdb.connect(str(tmp_path / "out.duckdb")).close()
    procs = [cli("perturb", medium, target, "--columns", "a,b", "--seed", str(s), "--threads", "1", cwd=tmp_path,
                 wait=False) for s in (1, 2)]
    results = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
    codes = sorted(rc for rc, _ in results)
    assert codes == [0, 2], results
    loser = next(err for rc, err in results if rc == 2)
    one_line_error(loser, 2, 2)
    assert any(w in loser for w in ("already exists", "appeared while", "in use by another process")), loser
    assert rows_of(tmp_path / target) == 30000
    assert leftovers(tmp_path) == []


def test_new_database_output_appears_whole_from_two_writers(tmp_path):
    procs = [cli("perturb", BODYFAT, "new.duckdb:t", "--columns", "Age", "--seed", str(s), cwd=tmp_path, wait=False)
             for s in (1, 2)]
    results = [(p.wait(timeout=60), p.stderr.read()) for p in procs]
    assert sorted(rc for rc, _ in results) == [0, 2], results
    assert rows_of(tmp_path / "new.duckdb:t") == 241 and leftovers(tmp_path) == []


def test_hostile_key_files(tmp_path):
    (tmp_path / "short").write_text("tooshort")
    (tmp_path / "empty").write_text("")
    (tmp_path / "folder").mkdir()
    (tmp_path / "binary").write_bytes(bytes(range(256)))
    (tmp_path / "nul").write_bytes(b"0123456789abcdef\x00tail")
    cases = {"missing": "does not exist", "short": "at least 16", "empty": "at least 16", "folder": "directory",
             "binary": "key file", "nul": "key file"}
    for name, words in cases.items():
        res = cli("perturb", BODYFAT, "o.csv", "--columns", "Age", "--key-file", tmp_path / name, cwd=tmp_path)
        one_line_error(res.stderr, 2, res.returncode, words if name != "missing" else "No such file")
        assert not (tmp_path / "o.csv").exists()
    assert leftovers(tmp_path) == []


def test_bad_inputs_get_one_line_errors(tmp_path):
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a,b,c\n1,2,3\n4,5\n6,7,8\n")
    late = tmp_path / "late.csv"                       # fails to parse after 40k rows, past DuckDB's sniff sample
    late.write_text("a,b\n" + "".join(f"{i},{i % 7}\n" for i in range(40_000)) + "oops,3\n")
    nul_domain = tmp_path / "domain.txt"
    nul_domain.write_bytes(b"Sales\nTech\x00support\n")
    unterminated = tmp_path / "quote.csv"
    unterminated.write_text('a,b\n1,2\n"3,4\n5,6\n')
    cases = [
        (("perturb", ragged, "o.csv", "--columns", "a"), "line 3 has 2 fields"),
        (("perturb", late, "o.csv", "--columns", "a,b"), "line 40002"),
        (("query", BODYFAT, "SELECT COUNT(*) FROM t"), "not a release database"),
        (("release", ADULT, "r.duckdb", "--sensitive", "occupation", "--p", "0.5", "--table", "rwn_release_metadata"),
         "reserved"),
        (("release", ADULT, "r.duckdb", "--sensitive", "occupation", "--p", "0.5", "--public", "sex,race",
          "--rwn-columns", "age"), "--public"),
        (("randomize", ADULT, "o.csv", "--sensitive", "occupation", "--p", "0.5", "--domain-file", nul_domain), "NUL"),
        (("perturb", BODYFAT, "o.xlsx", "--columns", "Age"), "unknown extension"),
        (("perturb", BODYFAT, "o.parquet.gz", "--columns", "Age"), "unknown extension"),
        (("perturb", tmp_path / "nope.csv", "o.csv", "--columns", "Age"), "does not exist"),
        (("tune", BODYFAT, "--columns", "Age", "--eps", "0:1:nan", "--no-report"), "not a finite number"),
        (("tune", BODYFAT, "--columns", "Age", "--eps", "0:inf:1", "--no-report"), "not a finite number"),
        (("perturb", BODYFAT, "o.csv", "--columns", "Age", "--threads", "100000"), "--threads"),
        (("perturb", BODYFAT, "o.csv", "--columns", "Age", "--memory-limit", "none"), "--memory-limit"),
        (("perturb", BODYFAT, "o.csv", "--columns", "Age", "--key-file", "/dev/zero"), "not a regular file"),
        (("randomize", ADULT, "o.csv", "--sensitive", "occupation", "--p", "0.5", "--domain-file", "/dev/zero"),
         "not a regular file"),
        (("perturb", unterminated, "o.csv", "--columns", "a"), "never closes"),
    ]
    def capped():      # a reader of /dev/zero fails here instead of taking the machine's memory
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    for args, words in cases:
        res = cli(*args, cwd=tmp_path, preexec_fn=capped)
        one_line_error(res.stderr, 2, res.returncode, words)
        assert "Original Line" not in res.stderr and "oops" not in res.stderr     # raw data is not echoed
    assert sorted(os.listdir(tmp_path)) == ["domain.txt", "late.csv", "quote.csv", "ragged.csv"]


def test_nothing_overwrites_its_input(tmp_path):
    db = tmp_path / "people.duckdb"
    con = duckdb.connect(str(db))
    con.execute(f"CREATE TABLE people AS SELECT * FROM read_csv('{BODYFAT}')").fetchall()
    con.execute("CREATE TABLE unrelated AS SELECT 42 AS answer").fetchall()
    con.close()
    csv_copy = tmp_path / "in.csv"
    shutil.copy(BODYFAT, csv_copy)
    os.symlink(csv_copy, tmp_path / "link.csv")
    before = digest(csv_copy)
    refused = [
        ("perturb", f"{db}:people", f"{db}:people", "--columns", "Age", "--overwrite"),
        ("perturb", "link.csv", csv_copy, "--columns", "Age", "--overwrite"),            # through a symlink
        ("perturb", csv_copy, "link.csv", "--columns", "Age", "--overwrite"),
        ("release", f"{db}:people", db, "--sensitive", "Age", "--p", "0.5", "--overwrite"),
        ("perturb", csv_copy, f"{db}", "--columns", "Age", "--overwrite"),
    ]
    for args in refused:
        res = cli(*args, "--seed", "1", cwd=tmp_path)
        assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert digest(csv_copy) == before
    # a new table in the input's database is allowed (the input attached once, read-write)
    res = cli("perturb", f"{db}:people", f"{db}:release", "--columns", "Age", "--seed", "1", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM release").fetchall() == [(241,)]
    assert con.execute("SELECT * FROM unrelated").fetchall() == [(42,)]
    assert con.execute("SELECT count(*) FROM people").fetchall() == [(241,)]
    con.close()
    assert leftovers(tmp_path) == []


def test_into_the_source_table_is_refused():
    import rwn_sql
    con = duckdb.connect()
    con.execute(f"CREATE TABLE people AS SELECT * FROM read_csv('{BODYFAT}')").fetchall()
    con.execute("CREATE VIEW adults AS SELECT * FROM people WHERE Age >= 18").fetchall()
    for source in ("people", "adults", "SELECT * FROM people"):
        with pytest.raises(rwn_sql.RWNError, match="never overwrites its input"):
            rwn_sql.perturb(con, source, ["Age"], seed=1, into="people", replace=True)
    assert con.execute("SELECT count(*) FROM people").fetchall() == [(241,)]
    rwn_sql.perturb(con, "people", ["Age"], seed=1, into="released", replace=True)
    assert con.execute("SELECT count(*) FROM released").fetchall() == [(241,)]


def test_release_never_replaces_the_database_it_reads(tmp_path):
    import rwn_sql
    from rwn_sql import release
    db = tmp_path / "data.duckdb"
    con = duckdb.connect(str(db))
    con.execute(f"CREATE TABLE adult AS SELECT * FROM read_csv('{ADULT}') LIMIT 500").fetchall()
    with pytest.raises(rwn_sql.RWNError, match="never overwrites its input"):
        release(con, "adult", str(db), "occupation", 0.5, public=["sex"], seed=1, overwrite=True)
    with pytest.raises(rwn_sql.RWNError, match="reserved"):
        release(con, "adult", str(tmp_path / "r.duckdb"), "occupation", 0.5, public=["sex"], seed=1,
                        table="rwn_release_metadata")
    assert con.execute("SELECT count(*) FROM adult").fetchall() == [(500,)]
    con.close()
    assert sorted(os.listdir(tmp_path)) == ["data.duckdb"]


def test_output_formats_follow_the_extension(tmp_path):
    src = tmp_path / "in.csv"
    rows = [("x", "flag", "day", "code", "note")] + [
        (str(i % 17 + 0.5), "yes" if i % 3 else "no", f"2020-01-{i % 28 + 1:02d}", f"{i:05d}", f"{i % 9}.50")
        for i in range(60)]
    with open(src, "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    for target in ("o.csv", "o.tsv", "o.csv.gz", "o.tsv.gz", "o.parquet", "o.duckdb:t"):
        res = cli("perturb", src, target, "--columns", "x", "--seed", "1", "--keep-order", cwd=tmp_path)
        assert res.returncode == 0, res.stderr
    assert open(tmp_path / "o.tsv").readline().rstrip("\n").split("\t") == list(rows[0])
    with gzip.open(tmp_path / "o.csv.gz", "rt") as fh:             # really gzip: opens with gzip
        gz_csv = list(csv.reader(fh))
    with gzip.open(tmp_path / "o.tsv.gz", "rt") as fh:
        gz_tsv = list(csv.reader(fh, delimiter="\t"))
    with open(tmp_path / "o.csv", newline="") as fh:
        plain = list(csv.reader(fh))
    assert plain == gz_csv == gz_tsv
    assert open(tmp_path / "o.parquet", "rb").read(4) == b"PAR1"
    # pass-through columns come out as they went in: yes/no, dates, leading zeros, 1.50
    assert [tuple(r[1:]) for r in plain] == [r[1:] for r in rows]
    assert rows_of(tmp_path / "o.duckdb:t") == 60


def test_on_missing_drop_reports_the_count(tmp_path):
    src = tmp_path / "gaps.csv"
    src.write_text("x,y\n" + "".join(f"{'' if i % 10 == 0 else i},{i % 5}\n" for i in range(100)))
    res = cli("perturb", src, "o.csv", "--columns", "x,y", "--on-missing", "drop", "--seed", "1", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "dropped 10 of 100 rows" in res.stderr and "wrote 90 rows" in res.stderr


def test_audit_exit_codes(tmp_path):
    small = tmp_path / "small_groups.csv"       # 1000 groups of 4: too small to reconstruct, all pass
    small.write_text("g,s\n" + "".join(f"{i // 4},{'xyz'[i % 3]}\n" for i in range(4000)))
    tail = ("--sensitive", "s", "--p", "0.5", "--epsilon", "0.5", "--delta", "0.05", "--test", "exact")
    assert cli("audit", small, "--public", "g", *tail, cwd=tmp_path).returncode == 0
    assert cli("audit", small, "--public", "g", *tail[:-2], cwd=tmp_path).returncode == 0
    big_groups = ("audit", ADULT, "--sensitive", "occupation", "--p", "0.5", "--epsilon", "0.5", "--delta", "0.05",
                  "--test", "exact")
    assert cli(*big_groups, "--public", "sex", cwd=tmp_path).returncode == 1   # groups of 10k+ are reconstructed
    res = cli(*big_groups, "--public", "nope", cwd=tmp_path)
    one_line_error(res.stderr, 2, res.returncode, "nope")
    assert "1 " in cli("audit", "--help", cwd=tmp_path).stdout.split("exit codes:")[1]


def test_python_m_and_a_closed_stdout(tmp_path):
    res = cli("--version", cwd=tmp_path)
    assert res.returncode == 0 and res.stdout.startswith("rwn-sql ")
    assert "exit codes" in cli("--help", cwd=tmp_path).stdout
    proc = cli("neighborhoods", BODYFAT, "--columns", "Age,Weight", cwd=tmp_path, wait=False)
    proc.stdout.readline()
    proc.stdout.close()                                  # like `| head -1`
    rc = proc.wait(timeout=60)
    err = proc.stderr.read()
    assert rc in (0, 141) and "Traceback" not in err and "BrokenPipe" not in err, err


def test_exit_within_2s_even_if_duckdb_never_returns(tmp_path):
    """DuckDB can hang on a cancel (a recursive CTE waiting for its tasks). Simulated by a
    write that never returns and ignores the cancel: the run must still leave in time."""
    code = ("import sys, time\n"
            "from rwn_sql.cli import main as cli\n"
            "from rwn_sql.engines import outputs\n"
            "def stuck(*args, **kwargs):\n"
            "    print('stuck', file=sys.stderr, flush=True)\n"
            "    while True:\n"
            "        time.sleep(1)\n"
            "outputs.write_output = stuck\n"
            f"sys.exit(cli.main(['perturb', {str(BODYFAT)!r}, 'out.csv', '--columns', 'Age', '--seed', '1']))\n")
    for sig in (signal.SIGINT, signal.SIGTERM):
        err = tmp_path / "stderr.txt"
        with open(err, "w") as fh:
            proc = subprocess.Popen([sys.executable, "-c", code], cwd=tmp_path, stderr=fh)
            end = time.monotonic() + 30
            while "stuck" not in err.read_text() and time.monotonic() < end:
                time.sleep(0.02)
            sent = time.monotonic()
            proc.send_signal(sig)
            rc = proc.wait(timeout=10)
        assert time.monotonic() - sent < 2.0
        assert rc == 128 + sig and "nothing was written" in err.read_text()
        os.remove(err)
        assert os.listdir(tmp_path) == []


def test_stale_private_folders_are_cleaned_live_ones_kept(tmp_path):
    import fcntl
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f".rwn-sql-{dead.stdout.strip()}-deadbeef"     # a finished process's pid, unlocked
    stale.mkdir()
    (stale / "lock").write_text("")
    (stale / "spill.tmp").write_text("raw-derived data")
    live = tmp_path / f".rwn-sql-{os.getpid()}-0badcafe"                # locked, as a running run holds it
    live.mkdir()
    lock = open(live / "lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    try:
        res = cli("perturb", BODYFAT, "o.csv", "--columns", "Age", "--seed", "1", cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        assert sorted(os.listdir(tmp_path)) == [live.name, "o.csv"]
    finally:
        lock.close()


class _SignalArrived(Exception):
    pass


def test_signal_at_every_step_of_making_the_private_dir(tmp_path, monkeypatch):
    """A signal handler may run between any two lines of private_dir (the CLI's handler removes
    the run's private directories and exits). Whatever line it interrupts, nothing is left
    behind: directories are registered before they exist. (CI once found a directory left by
    a SIGTERM that came between its rename and its registration.)"""
    from rwn_sql.engines import files

    import threading
    step = 0
    while True:
        step += 1
        seen = 0
        # the exception may leave the lock held (a real handler exits the process): a fresh one
        # per step, and the module's own lock back after the test
        monkeypatch.setattr(files, "_guard", threading.RLock())

        def tracer(frame, event, arg):
            nonlocal seen
            if frame.f_code not in (files.private_dir.__code__, files._make_private_dir.__code__):
                return None
            if event == "line":
                seen += 1
                if seen == step:
                    files.remove_private_dirs()       # what exit_on_signal does (but the run goes on)
                    raise _SignalArrived
            return tracer

        sys.settrace(tracer)
        try:
            files.private_dir(str(tmp_path))
            interrupted = False
        except _SignalArrived:
            interrupted = True
        finally:
            sys.settrace(None)
        files.remove_private_dirs()
        assert leftovers(tmp_path) == [], f"left behind when interrupted at line {step} of making it"
        if not interrupted:
            break
    assert step > 5


def test_nothing_is_made_or_published_once_a_signal_ends_the_run(tmp_path, monkeypatch):
    """The CLI works in a thread; once the main thread has taken a signal and removed the run's
    directories, that thread can neither make a new one nor publish an output (CI once found
    a directory made in that window)."""
    from rwn_sql.engines import files
    from rwn_sql.errors import RWNError

    tmp = os.path.join(files.private_dir(str(tmp_path)), "out.csv")
    open(tmp, "w").close()
    monkeypatch.setattr(files, "_ending", False)
    files.remove_private_dirs(ending=True)
    with pytest.raises(RWNError, match="ending"):
        files.private_dir(str(tmp_path))
    with pytest.raises(RWNError, match="not published"):
        files.publish(tmp, str(tmp_path / "out.csv"), overwrite=False)
    assert os.listdir(tmp_path) == []
