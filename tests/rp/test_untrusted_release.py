"""Release files are untrusted input (issue 22, F1 and deliverable 1). A release database travels
between people; a crafted one must not make any reader run the author's SQL in the reader's
connection. Each crafted file below is a genuine release altered one way (the F1 view, a view in
place of each table, macros shadowing the functions our SQL calls, extra / missing / retyped /
computed columns, sequences, types, indexes, a huge metadata table, odd domains, a file that is
no DuckDB database); every reader (rwn_sql.query on the file and on the release attached in the
caller's connection, the rwn_query macro over an attached and an opened release, the CLI query,
rwn_sql.estimates over the attached release and over 'file.duckdb:table', the report in Python
and on the CLI) refuses it with an RWNError naming the object, and the content of a local canary
file never appears in any output: error text, info.note, info.sql, rows, the report's HTML, CLI
stdout and stderr."""
import shutil

import duckdb
import pytest

import rwn_sql
from rwn_sql import RWNError
from rwn_sql.cli.main import main

SECRET = "LOCAL-SECRET-9-e41f"
QUERY = "SELECT race, COUNT(*) FROM adult WHERE occupation = 'Sales' GROUP BY race"
JOBS = ("Exec", "Sales", "Tech")


@pytest.fixture(scope="module")
def genuine(tmp_path_factory):
    """An enforced release (so it has the trials table) of 90 synthetic rows, and the canary."""
    d = tmp_path_factory.mktemp("untrusted")
    (d / "secret.txt").write_text(SECRET + "\n")
    path = d / "genuine.duckdb"
    with duckdb.connect() as con:
        con.execute("""CREATE TABLE adult AS SELECT ['Female', 'Male'][1 + i % 2] AS sex,
            ['Black', 'White', 'Other'][1 + i % 3] AS race, ['Sales', 'Tech', 'Exec'][1 + (i * 7) % 3] AS occupation
            FROM range(90) r(i)""").fetchall()
        rwn_sql.release(con, "adult", str(path), "occupation", 0.5, public=["sex", "race"], seed=5,
                        enforce=(0.9, 0.3), test="chernoff",
                        l_diversity=1)   # the subject is crafted releases; here race determines occupation
    return d, path


def read(content: str) -> str:
    return f"(SELECT content FROM read_text({content!r}))"


def variants(secret_path: str):
    """name -> statements turning a genuine release into a crafted one."""
    s = read(secret_path)
    meta_cols = ("table_name, method, sensitive, sensitive_type, public, p, domain, m, enforced, epsilon, delta, "
                 "test, rwn_columns, rwn_k, rwn_eps, rwn_q, rwn_scale, rows, created_at, rwn_sql_version, "
                 "suppressed_records, release_name")

    def meta_view(column, expression):
        return ["ALTER TABLE rwn_release_metadata RENAME TO m0",
                "CREATE VIEW rwn_release_metadata AS SELECT " + ", ".join(
                    f"{expression} AS {c}" if c == column else c for c in meta_cols.split(", ")) + " FROM m0"]

    return {
        # F1 verbatim: the domain list gets the file's content appended
        "metadata_view_f1": meta_view("domain", f"list_append(domain, {s})"),
        "metadata_view_method": meta_view("method", s),
        "released_view": ["ALTER TABLE randomized_rows_not_counts.adult_randomized RENAME TO r0",
                          f"CREATE VIEW randomized_rows_not_counts.adult_randomized AS SELECT occupation, {s} AS race, sex FROM randomized_rows_not_counts.r0"],
        "released_view_erring": ["ALTER TABLE randomized_rows_not_counts.adult_randomized RENAME TO r0",
                                 f"CREATE VIEW randomized_rows_not_counts.adult_randomized AS SELECT CAST(CAST({s} AS INTEGER) AS VARCHAR) "
                                 f"AS occupation, race, sex FROM randomized_rows_not_counts.r0"],
        "trials_view": ["ALTER TABLE rwn_release_trials RENAME TO t0",
                        f"CREATE VIEW rwn_release_trials AS SELECT size, t + 0 * CAST({s} AS INTEGER) AS t FROM t0"],
        "macro_sqrt": [f"CREATE MACRO sqrt(x) AS CAST({s} AS DOUBLE)"],
        "macro_greatest": [f"CREATE MACRO greatest(a, b) AS CAST({s} AS DOUBLE)"],
        "table_macro": [f"CREATE MACRO leak() AS TABLE SELECT {s} AS x"],
        "metadata_extra_column": ["ALTER TABLE rwn_release_metadata ADD COLUMN note VARCHAR"],
        "metadata_missing_column": ["ALTER TABLE rwn_release_metadata DROP COLUMN rwn_scale"],
        "metadata_retyped_column": ["ALTER TABLE rwn_release_metadata ALTER p SET DATA TYPE VARCHAR"],
        "metadata_default_column": ["ALTER TABLE rwn_release_metadata ALTER test SET DEFAULT 'exact'"],
        "released_extra_column": ["ALTER TABLE randomized_rows_not_counts.adult_randomized ADD COLUMN ssn VARCHAR"],
        "released_retyped_sensitive": ["ALTER TABLE randomized_rows_not_counts.adult_randomized ALTER occupation SET DATA TYPE BLOB"],
        "released_generated_column": [  # a computed column runs SQL of the file when read
            "ALTER TABLE randomized_rows_not_counts.adult_randomized RENAME TO r0",
            "CREATE TABLE randomized_rows_not_counts.adult_randomized (occupation VARCHAR, sex VARCHAR, race VARCHAR AS (upper(sex)))",
            "INSERT INTO randomized_rows_not_counts.adult_randomized (occupation, sex) SELECT occupation, sex FROM randomized_rows_not_counts.r0", "DROP TABLE randomized_rows_not_counts.r0"],
        "trials_extra_column": ["ALTER TABLE rwn_release_trials ADD COLUMN x INTEGER"],
        "sequence": ["CREATE SEQUENCE s1"],
        "type": ["CREATE TYPE mood AS ENUM ('a', 'b')"],
        "index": ["CREATE INDEX ix ON randomized_rows_not_counts.adult_randomized (sex)"],
        # the layout before the rows' own schema (read for old files), with a view as the table
        "released_view_old_place": ["CREATE TABLE r0 AS FROM randomized_rows_not_counts.adult_randomized",
                                    "DROP SCHEMA randomized_rows_not_counts CASCADE",
                                    f"CREATE VIEW adult_randomized AS SELECT occupation, {s} AS race, sex FROM r0"],
        "huge_metadata": ["INSERT INTO rwn_release_metadata SELECT m.* REPLACE ('x' || i AS table_name, 'x' || i AS "
                          "release_name) FROM rwn_release_metadata m, range(200) r(i)"],
        "domain_null": ["UPDATE rwn_release_metadata SET domain = list_append(domain, NULL)"],
        "domain_repeat": ["UPDATE rwn_release_metadata SET domain = list_append(domain, 'Sales')"],
        "domain_nul_character": ["UPDATE rwn_release_metadata SET domain = list_append(domain, 'a' || chr(0))"],
        "p_out_of_range": ["UPDATE rwn_release_metadata SET p = 7"],
        "not_duckdb": None,
    }


VARIANTS = list(variants("x"))
# what the message names, per variant
NAMES = {"metadata_view_f1": "rwn_release_metadata' is a view", "metadata_view_method": "is a view",
         "released_view": "adult_randomized' is a view", "released_view_erring": "is a view",
         "trials_view": "rwn_release_trials' is a view",
         "macro_sqrt": "macro 'sqrt'", "macro_greatest": "macro 'greatest'", "table_macro": "macro 'leak'",
         "metadata_extra_column": "extra note", "metadata_missing_column": "missing rwn_scale",
         "metadata_retyped_column": "retyped p VARCHAR", "metadata_default_column": "default column 'test'",
         "released_extra_column": "extra ssn", "released_retyped_sensitive": "of type BLOB",
         "released_generated_column": "computed or default column 'race'", "trials_extra_column": "trials table",
         "released_view_old_place": "adult_randomized' is a view", "sequence": "sequence 's1'", "type": "type 'mood'", "index": "index 'ix'",
         "huge_metadata": "more than 100 rows", "domain_null": "domain with NULL",
         "domain_repeat": "repeats", "domain_nul_character": "NUL", "p_out_of_range": "p = 7",
         "not_duckdb": "is not a DuckDB database file"}


@pytest.fixture(params=VARIANTS)
def crafted(request, genuine, tmp_path, monkeypatch):
    d, path = genuine
    monkeypatch.chdir(tmp_path)
    name = request.param
    evil = tmp_path / f"{name}.duckdb"
    statements = variants(str(d / "secret.txt"))[name]
    if statements is None:
        evil.write_text("sex,race,occupation\nMale,White,Sales\n" + SECRET + "\n")
    else:
        shutil.copy(path, evil)
        with duckdb.connect(str(evil)) as con:
            for statement in statements:
                con.execute(statement).fetchall()
    return name, evil


def outputs_of(reader, evil, tmp_path, capsys):
    """Run one reader on the file: (refused, every text it produced)."""
    texts = []
    rel_query = QUERY.replace("FROM adult", "FROM rel.adult")
    try:
        if reader == "query_file":
            rel, info = rwn_sql.query(duckdb.connect(), QUERY, release=str(evil))
            texts += [repr(rel.fetchall()), info.sql, info.note]
        elif reader in ("query_attached", "macro_attached", "estimates_attached"):
            con = duckdb.connect()
            con.execute(f"ATTACH '{evil}' AS rel (READ_ONLY)").fetchall()
            if reader == "query_attached":
                rel, info = rwn_sql.query(con, rel_query)
                texts += [repr(rel.fetchall()), info.sql, info.note]
            elif reader == "macro_attached":
                rwn_sql.install(con)
                texts.append(repr(con.execute("SELECT * FROM rwn_query(?)", [rel_query]).fetchall()))
            else:
                rel = rwn_sql.estimates(con, "rel.adult_randomized", "occupation", 0.5, list(JOBS),
                                        group_by=["race"])
                texts.append(repr(rel.fetchall()))
        elif reader == "estimates_file":
            rel = rwn_sql.estimates(duckdb.connect(), f"{evil}:adult_randomized", "occupation", 0.5, list(JOBS),
                                    group_by=["race"])
            texts.append(repr(rel.fetchall()))
        elif reader == "macro_opened":
            con = duckdb.connect(str(evil), read_only=True)
            rwn_sql.install(con)
            texts.append(repr(con.execute("SELECT * FROM rwn_query(?)", [QUERY]).fetchall()))
        elif reader == "report":
            out = tmp_path / "report.html"
            rwn_sql.report(str(evil), str(out))
            texts.append(out.read_text())
        elif reader in ("cli_query", "cli_report"):
            args = (["query", str(evil), QUERY, "--show-sql"] if reader == "cli_query"
                    else ["report", str(evil), "-o", str(tmp_path / "cli.html")])
            code = main(args)
            out = capsys.readouterr()
            texts += [out.out, out.err]
            if (tmp_path / "cli.html").exists():
                texts.append((tmp_path / "cli.html").read_text())
            return code == 2 and len(out.err.strip().splitlines()) == 1, texts, out.err
    except (RWNError, duckdb.Error) as exc:
        texts.append(str(exc))
        return True, texts, str(exc)
    return False, texts, ""


READERS = ["query_file", "query_attached", "macro_attached", "macro_opened", "cli_query", "estimates_attached",
           "estimates_file", "report", "cli_report"]
FILE_READERS = {"query_file", "cli_query", "report", "cli_report", "estimates_file"}     # those that open a path themselves


@pytest.mark.parametrize("reader", READERS)
def test_crafted_release_is_refused_and_leaks_nothing(crafted, reader, tmp_path, capsys):
    """Every crafted variant through every reader: refused with a message naming the object,
    and the canary's content in no output. Catches a reader that reads an object of the file
    before checking it (the F1 ordering), a check that lets a view, macro, computed column or
    odd metadata through, and an altered file accepted as a release."""
    name, evil = crafted
    if name == "not_duckdb" and reader not in FILE_READERS:
        pytest.skip("the caller's own ATTACH / connect fails first")
    if name == "not_duckdb" and reader == "estimates_file":
        pytest.skip("not a release: estimates reads it as any DuckDB file (and fails to open it)")
    refused, texts, message = outputs_of(reader, evil, tmp_path, capsys)
    assert not any(SECRET in t for t in texts), f"{name} via {reader} leaked the canary"
    assert refused, f"{name} via {reader} was answered"
    assert NAMES[name] in message, message


@pytest.mark.parametrize("reader", READERS)
def test_genuine_release_still_answers(genuine, reader, tmp_path, capsys, monkeypatch):
    """The checks pass a release as rwn_sql writes it, through every reader."""
    monkeypatch.chdir(tmp_path)
    refused, texts, message = outputs_of(reader, genuine[1], tmp_path, capsys)
    assert not refused, message
    assert any("Black" in t for t in texts)


def test_release_through_a_symlink_still_answers(genuine, tmp_path):
    """With file access off only the release's own paths are allowed; DuckDB opens the WAL beside
    a symlink's target, so the allowed paths are the resolved ones. Catches allowing the link's
    path only (every release reached through a symlink refused)."""
    link = tmp_path / "link.duckdb"
    link.symlink_to(genuine[1])
    rel, info = rwn_sql.query(duckdb.connect(), QUERY, release=str(link))
    assert rel.fetchall() and not info.exact
    html = tmp_path / "r.html"
    rwn_sql.report(str(link), str(html))
    assert "Black" in html.read_text()


def test_access_is_off_before_the_file_is_read(genuine, tmp_path, monkeypatch):
    """Defence in depth under the catalog checks: with check_catalog disabled, the F1 file's
    metadata view still cannot read the canary, because rwn_sql.query attaches the file on a
    connection whose file access is already off and locked. Catches the F1 ordering (attach and
    read the metadata, then SET enable_external_access = false)."""
    from rwn_sql.rp.release import release_db
    d, path = genuine
    monkeypatch.chdir(tmp_path)
    evil = tmp_path / "f1.duckdb"
    shutil.copy(path, evil)
    with duckdb.connect(str(evil)) as con:
        for statement in variants(str(d / "secret.txt"))["metadata_view_f1"]:
            con.execute(statement).fetchall()
    monkeypatch.setattr(release_db, "check_catalog", lambda con, schema=None: release_db._location(con, schema),
                        raising=False)
    with pytest.raises(RWNError, match="disabled by configuration") as info:
        rwn_sql.query(duckdb.connect(), QUERY, release=str(evil))
    assert SECRET not in str(info.value)


FOLDER_RECORD = dict(table_name="adult_randomized", method="uniform_perturbation", sensitive="occupation",
                     sensitive_type="VARCHAR", public=["sex", "race"], p=0.5, domain=list(JOBS), m=3, enforced=False,
                     epsilon=None, delta=None, test=None, rwn_columns=None, rwn_k=None, rwn_eps=None, rwn_q=None,
                     rwn_scale=None, rows=1, created_at=None, rwn_sql_version="x", suppressed_records=0,
                     release_name="adult")


@pytest.mark.parametrize("change,names", [
    ({"table_name": "../outside"}, "not a plain file name"),
    ({"table_name": "/tmp/outside"}, "not a plain file name"),
    ({"p": 7.0}, "p = 7.0"),
    ({"domain": ["Sales", None]}, "domain with NULL"),
    ({"domain": ["Sales", "Sales"]}, "repeats"),
    ({"public": ["sex", "a\x00b"]}, "NUL"),
    ({"sensitive_type": "VARCHAR); SELECT 1; --"}, "not a DuckDB type name"),
    ({"enforced": None}, "enforced = None"),
    ("rows", "more than 100 rows"),
])
def test_crafted_release_folder_is_refused(tmp_path, change, names):
    """A release folder (the Spark engine's release) is untrusted input too: its metadata row is
    checked as a release file's is, and the table name, which becomes a path inside the folder,
    must be a plain file name. Catches a folder whose table_name points at a Parquet file
    elsewhere (read as the release) and metadata values that reach SQL unchecked."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from rwn_sql.rp.release.release_db import METADATA_TABLE, _metadata_schema, read_release_folder
    folder = tmp_path / "release"
    folder.mkdir()
    records = [dict(FOLDER_RECORD)]
    if change == "rows":
        records = [dict(FOLDER_RECORD, table_name=f"t{i}", release_name=f"t{i}") for i in range(200)] + records
    else:
        records[0].update(change)
    pq.write_table(pa.Table.from_pylist(records, schema=_metadata_schema()), folder / f"{METADATA_TABLE}.parquet")
    with pytest.raises(RWNError, match=names.replace("(", r"\(").replace(")", r"\)")):
        read_release_folder(str(folder), "adult")
    records = [dict(FOLDER_RECORD)]                    # the genuine row is read
    pq.write_table(pa.Table.from_pylist(records, schema=_metadata_schema()), folder / f"{METADATA_TABLE}.parquet")
    meta, data, trials = read_release_folder(str(folder), "adult")
    assert data == str(folder / "adult_randomized.parquet") and trials is None and meta.domain == JOBS


# A release file as a memory bomb (issue 22): DuckDB compresses repeated text, so a small file can
# hold metadata of hundreds of MB. "wide": 30 domain values of 256 KiB (7.5 MiB of text, over the
# per-value cap); "near": 100 of them (25 MiB, the most the 64 MiB metadata connection scans to the
# end, its highest peak); "huge": 300 of them (75 MiB, more than that connection's memory limit).
BOMB_SIZES = {"wide": 30, "near": 100, "huge": 300}
# Refusing a bomb is read from the segment statistics (release_db.check_stored_text_size), so it
# takes no more than opening a genuine release (open_peak; measured: 2-13 MiB less), and the
# margin covers the spread of one process's peak between runs (open_peak varied by 2-3 MiB).
# Scanning the values instead peaked 15 (wide) and 51 (near) MiB over open_peak.
BOMB_MARGIN = 16 << 20
BOMB_AS = 3 << 30             # address-space cap for the child, so the unfixed code fails, not the machine


@pytest.fixture(scope="module")
def bombs(genuine):
    d, path = genuine
    made = {}
    for name, n in BOMB_SIZES.items():
        bomb = d / f"bomb_{name}.duckdb"
        shutil.copy(path, bomb)
        with duckdb.connect(str(bomb)) as con:
            con.execute("UPDATE rwn_release_metadata SET domain = list_concat(domain, (SELECT "
                        f"list(repeat(md5(i::varchar), 8192) || i) FROM range({n}) t(i)))").fetchall()
            con.execute("CHECKPOINT").fetchall()
        assert bomb.stat().st_size < 4 << 20
        made[name] = bomb
    return made


# The peak is the child's VmHWM, not getrusage's ru_maxrss: Linux carries the parent's resident
# set into the child's ru_maxrss across fork and exec, so under a large pytest process ru_maxrss
# gave the parent's 480-860 MiB for a child that peaked at 150.
BOMB_CHILD = r"""
import sys
import duckdb, rwn_sql
from rwn_sql.rp.release import analyst, query_run
from rwn_sql.cli.main import main
reader, path, out = sys.argv[1:4]
try:
    if reader == "open":     # the baseline: parse a query and open a release as the readers do
        con = duckdb.connect()
        con.execute("SET memory_limit = '50MB'")
        rwn_sql.query          # loads what the readers load (the package's names load on first use)
        analyst.source(analyst.parse("SELECT COUNT(*) FROM adult WHERE occupation = 'Sales'"))
        iso, meta, _ = query_run.isolated_connection(con, path, "adult", None)
        iso.close()
        print("OPENED", meta.m)
    elif reader == "python":
        con = duckdb.connect()
        con.execute("SET memory_limit = '50MB'")
        rows = rwn_sql.query(con, "SELECT COUNT(*) FROM adult WHERE occupation = 'Sales'", release=path)[0].fetchall()
        print("ANSWERED", rows)
    elif reader == "cli_query":
        print("EXIT", main(["query", path, "SELECT COUNT(*) FROM adult WHERE occupation = 'Sales'",
                            "--memory-limit", "50MB", "--threads", "1"]))
    else:
        print("EXIT", main(["report", path, "-o", out]))
except rwn_sql.RWNError as exc:
    print("REFUSED", str(exc)[:300])
except BaseException as exc:
    print("FAILED", type(exc).__name__, str(exc)[:300])
sys.stdout.flush()
print("PEAK", [int(x.split()[1]) * 1024 for x in open("/proc/self/status") if x.startswith("VmHWM:")][0])
"""


def run_bomb_child(reader, path, out):
    import resource
    import subprocess
    import sys
    import time

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (BOMB_AS, BOMB_AS))
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", BOMB_CHILD, reader, str(path), str(out)], capture_output=True,
                          text=True, timeout=120, preexec_fn=cap)
    lines = (done.stdout + done.stderr).splitlines()
    rss = [int(x.split()[1]) for x in lines if x.startswith("PEAK")]
    return "\n".join(lines), (rss[0] if rss else None), time.monotonic() - start


@pytest.fixture(scope="module")
def open_peak(genuine, tmp_path_factory):
    """Peak RSS of a process that loads rwn_sql.query and the CLI, parses a query and opens the
    genuine release as the readers do (the metadata connection, then the isolated one), bytes."""
    text, rss, _ = run_bomb_child("open", genuine[1], tmp_path_factory.mktemp("open") / "x")
    assert "OPENED 3" in text and rss is not None, text[-2000:]
    return rss


@pytest.mark.parametrize("reader", ["python", pytest.param("cli_query", marks=pytest.mark.heavy),    # the CLI readers:
                                    pytest.param("cli_report", marks=pytest.mark.heavy)])  # the heavy tier
def test_metadata_bomb_is_refused_with_bounded_memory(genuine, bombs, open_peak, reader, tmp_path):
    """A release whose metadata domain holds 30, 100 or 300 values of 256 KiB (a file under 4 MiB)
    is refused quickly by rwn_sql.query(release=), rwn-sql query (--memory-limit 50MB) and rwn-sql
    report, naming the metadata table and the per-value cap, and the reader's peak RSS stays
    within what opening a genuine release takes plus BOMB_MARGIN; the same child answers on the
    genuine release. Catches the bytes of metadata values being unbounded (the unfixed code
    accepted the 30 bomb values as domain values, m = 33, and on 300 grew by gigabytes until the
    child's address-space cap) and metadata values read before their statistics are checked
    (the near bomb then peaks 51 MiB over open_peak, the wide one 15)."""
    bound = open_peak + BOMB_MARGIN
    for size in BOMB_SIZES:
        out = tmp_path / f"{size}.html"
        text, rss, took = run_bomb_child(reader, bombs[size], out)
        assert rss is not None and rss < bound, (size, rss >> 20, open_peak >> 20, text[-2000:])
        assert "REFUSED" in text or "rwn-sql: error:" in text, (size, text[-2000:])
        assert "EXIT 2" in text or reader == "python", (size, text[-2000:])
        assert "rwn_release_metadata" in text and "4,096 bytes" in text, (size, text[-2000:])
        assert "ANSWERED" not in text and not out.exists()
        assert took < 60
    out = tmp_path / "genuine.html"
    text, rss, _ = run_bomb_child(reader, genuine[1], out)
    assert ("ANSWERED" in text if reader == "python" else "EXIT 0" in text), text[-2000:]
    assert reader != "cli_report" or out.exists()


def test_metadata_scan_is_limited_when_statistics_lie(bombs, monkeypatch):
    """A crafted file can carry segment statistics that understate its text, so the scan that
    measures the values is the net: with the statistics check made to pass, the huge bomb (75
    MiB of text) is still refused by rwn_sql.query(release=), naming the 64 MiB metadata limit.
    Catches the metadata connection without that limit (the scan then reads the whole row and
    the refusal comes later, from the values, after the reader has held them)."""
    from rwn_sql.rp.release import release_db
    monkeypatch.setattr(release_db, "check_stored_text_size", lambda con, table, what: None)
    with pytest.raises(RWNError, match=r"rwn_release_metadata.*memory limit of 64\.0 MiB"):
        rwn_sql.query(duckdb.connect(), "SELECT COUNT(*) FROM adult WHERE occupation = 'Sales'",
                      release=str(bombs["huge"]))


def test_released_table_runs_within_the_callers_memory_limit(genuine, tmp_path):
    """A released table holding one public text cell of 64 MiB (a file of a few KiB) cannot
    defeat the caller's memory limit: the analyst query runs on the isolated connection under
    the memory_limit of `con` (here 20MB), so it is refused with an RWNError naming the memory,
    while the same query under a larger limit answers. Catches an isolated connection that
    ignores the caller's limit (the unfixed code ran it under DuckDB's default, 80 % of RAM)."""
    bomb = tmp_path / "cell_bomb.duckdb"
    shutil.copy(genuine[1], bomb)
    with duckdb.connect(str(bomb)) as con:
        con.execute("UPDATE randomized_rows_not_counts.adult_randomized SET race = repeat('x', 64 << 20) WHERE rowid = 0").fetchall()
        con.execute("CHECKPOINT").fetchall()
    assert bomb.stat().st_size < 8 << 20
    query = "SELECT race, COUNT(*) FROM adult GROUP BY race"
    with duckdb.connect() as con:
        con.execute("SET memory_limit = '20MB'").fetchall()
        with pytest.raises(RWNError, match="(?i)memory"):
            rwn_sql.query(con, query, release=str(bomb))[0].fetchall()
        con.execute("SET memory_limit = '1GB'").fetchall()
        rows = rwn_sql.query(con, query, release=str(bomb))[0].fetchall()
        assert len(rows) == 4


@pytest.mark.parametrize("n,names", [(30, "4,096 bytes"), (300, "memory limit of 64")])
def test_metadata_bomb_in_a_release_folder_is_refused(tmp_path, n, names):
    """A release folder's metadata Parquet file with 30 / 300 dictionary-encoded domain values
    of 256 KiB is refused before pyarrow reads it, naming the file and the limit. Catches the
    folder reader (the Spark engine's releases) materialising the whole row."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from rwn_sql.rp.release.release_db import METADATA_TABLE, _metadata_schema, read_release_folder
    folder = tmp_path / "release"
    folder.mkdir()
    big = [f"{'ab' * (128 << 10)}{i}" for i in range(n)]
    record = dict(FOLDER_RECORD, domain=list(JOBS) + big)
    pq.write_table(pa.Table.from_pylist([record], schema=_metadata_schema()), folder / f"{METADATA_TABLE}.parquet")
    with pytest.raises(RWNError, match=f"{METADATA_TABLE}.parquet.*{names}"):
        read_release_folder(str(folder), "adult")


@pytest.mark.parametrize("reader", READERS)
def test_metadata_bomb_is_refused_by_every_reader(bombs, reader, tmp_path, capsys):
    """The 30-value metadata bomb (values of 256 KiB) is refused by every reader, in process,
    with the message naming the metadata table and the 4,096-byte cap on a value: the release
    attached in the caller's connection and the rwn_query macro check the bytes by SQL before
    fetching too. Catches a reader that fetches metadata values of unbounded size (the unfixed
    code answered with m = 33)."""
    refused, texts, message = outputs_of(reader, bombs["wide"], tmp_path, capsys)
    assert refused, texts[-1][:500]
    assert "rwn_release_metadata" in message and "4,096 bytes" in message, message[:500]


def test_metadata_total_text_and_trials_rows_are_bounded(genuine, tmp_path):
    """Values each under the 4,096-byte cap but 2.4 MB of domain text in all (600 values of
    4 KB), and a trials table of 1,000,001 rows (integers compress to almost nothing), are
    refused through rwn_sql.query on the file and on the release attached in the caller's
    connection, naming the total and the row limit. Catches a cap on each value only (the
    domain is printed into every rewritten query: 16 MB of it took 530 MB under a 50MB limit)
    and trials fetched whole by the readers."""
    query = "SELECT COUNT(*) FROM adult WHERE occupation = 'Sales'"
    made = {}
    for name, statement in [
            ("total", "UPDATE rwn_release_metadata SET domain = list_concat(domain, (SELECT "
                      "list(repeat(md5(i::varchar), 125) || i) FROM range(600) t(i)))"),
            ("trials", "INSERT INTO rwn_release_trials SELECT 1000 + i, 1 FROM range(1000001) t(i)")]:
        made[name] = tmp_path / f"{name}.duckdb"
        shutil.copy(genuine[1], made[name])
        with duckdb.connect(str(made[name])) as con:
            con.execute(statement).fetchall()
            con.execute("CHECKPOINT").fetchall()
    for name, message in [("total", r"holds 2,4\d\d,\d\d\d bytes of text \(at most 2,097,152"),
                          ("trials", "rwn_release_trials' has more than 1,000,000 rows")]:
        with pytest.raises(RWNError, match=message):
            rwn_sql.query(duckdb.connect(), query, release=str(made[name]))
        con = duckdb.connect()
        con.execute(f"ATTACH '{made[name]}' AS rel (READ_ONLY)").fetchall()
        with pytest.raises(RWNError, match=message):
            rwn_sql.query(con, query.replace("FROM adult", "FROM rel.adult"))


@pytest.mark.parametrize("kind", ["blob", "nested_list", "struct"])
def test_release_folder_metadata_with_unmeasured_types_is_refused(tmp_path, kind):
    """A release folder's metadata Parquet file with an extra column of a type whose bytes the
    size check does not measure (BLOB, a list of lists, a struct of text), holding 4 MB, is
    refused naming the column before pyarrow reads it. Catches a bomb hidden in a column the
    text-only measurement skips."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from rwn_sql.rp.release.release_db import METADATA_TABLE, _metadata_schema, read_release_folder
    folder = tmp_path / "release"
    folder.mkdir()
    big = "ab" * (1 << 20)
    value, kind_type = {"blob": (big.encode() * 2, pa.binary()),
                        "nested_list": ([[big], [big]], pa.list_(pa.list_(pa.string()))),
                        "struct": ({"a": big, "b": big}, pa.struct([("a", pa.string()), ("b", pa.string())]))}[kind]
    schema = _metadata_schema().append(pa.field("extra", kind_type))
    pq.write_table(pa.Table.from_pylist([dict(FOLDER_RECORD, extra=value)], schema=schema),
                   folder / f"{METADATA_TABLE}.parquet")
    with pytest.raises(RWNError, match=f"{METADATA_TABLE}.parquet has the column extra"):
        read_release_folder(str(folder), "adult")
