"""Bounded inputs and clear refusals (issue 22, F3): side files (key, domain) are read only when
they are regular files, and only up to a stated size; one key policy for Python, the SQL macros
and the CLI; --threads and --memory-limit within the machine's bounds; missing, NaN, nested and
binary values refused where they would be published; every parameter error an RWNError; CSV
cells that turn a numeric column into text explained. Every refusal names the file, parameter,
column or line, and writes nothing."""
import os
import resource
import subprocess
import sys
import time

import duckdb
import numpy as np
import pytest

import rwn_sql
from helpers.data import ADULT, BODYFAT, load_numpy
from rwn_sql import RWNError, randomness

KEY = "bounded-inputs-key-0123456789"


def cli(*args, cwd, timeout=60, memory=2 << 30):
    """The real command line in a subprocess, under an address-space cap so that a run that
    reads an endless file fails instead of taking the machine's memory."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    return subprocess.run([sys.executable, "-m", "rwn_sql", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, preexec_fn=cap)


def refused(res, *words):
    """Exit 2 with one line on stderr that holds every word (case-insensitive)."""
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert "Traceback" not in res.stderr, res.stderr
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("rwn-sql: error: "), res.stderr
    for w in words:
        assert w.lower() in last.lower(), (w, last)


@pytest.fixture
def people(con):
    rng = np.random.default_rng(3)
    n = 60
    load_numpy(con, "people", {"age": rng.integers(20, 70, n).astype(float), "income": rng.normal(5e4, 1e4, n),
                               "sex": rng.choice(["F", "M"], n), "job": rng.choice(["a", "b", "c"], n)})
    return con


# --- key and domain files ------------------------------------------------------------------
def test_key_file_must_be_a_small_regular_file(tmp_path):
    """/dev/zero (read for ever by the old reader: 23 GB), a FIFO (blocked the old reader until a
    writer came), a folder and a 50 MB file (accepted as a key before) are refused at once, naming
    the file and the limit; a good key file still works."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.key"
    big.write_text("k" * (50 << 20))
    (tmp_path / "folder").mkdir()
    cases = {"/dev/zero": "not a regular file", fifo: "not a regular file", tmp_path / "folder": "directory",
             big: "larger than 4096 bytes"}
    for path, words in cases.items():
        start = time.monotonic()
        res = cli("perturb", BODYFAT, "o.csv", "--columns", "Age", "--key-file", path, cwd=tmp_path, timeout=30)
        refused(res, words, str(path))
        assert time.monotonic() - start < 20
        assert not (tmp_path / "o.csv").exists()
    good = tmp_path / "good.key"
    good.write_text(KEY + "\n")
    res = cli("perturb", BODYFAT, "o.csv", "--columns", "Age", "--key-file", good, cwd=tmp_path)
    assert res.returncode == 0, res.stderr


def test_key_file_reader_reads_at_most_the_limit(tmp_path, monkeypatch):
    """read_key_file asks for at most the limit (+1 byte to see that it is exceeded), so a huge
    key file costs no more than a small one."""
    big = tmp_path / "big.key"
    big.write_text("k" * (50 << 20))
    asked = []
    real_fdopen = os.fdopen

    class Counting:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def read(self, n=-1):
            asked.append(n)
            return self.fh.read(n)

    monkeypatch.setattr(os, "fdopen", lambda fd, *a, **kw: Counting(real_fdopen(fd, *a, **kw)))
    with pytest.raises(RWNError, match="larger than 4096 bytes"):
        randomness.read_key_file(big)
    assert asked and all(0 <= n <= randomness.MAX_KEY_FILE_BYTES + 1 for n in asked)


def test_domain_file_must_be_a_small_regular_file(tmp_path):
    """--domain-file /dev/zero (read for ever before), a FIFO, a folder and a file over 4 MiB
    are refused at once, naming the file (and the limit); a NULL line is refused naming its line
    instead of being published as the value 'NULL'."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.txt"
    big.write_text("Sales\n" * (1 << 20))
    (tmp_path / "folder").mkdir()
    null = tmp_path / "null.txt"
    null.write_text("Sales\nNULL\nTech-support\n")
    cases = {"/dev/zero": "not a regular file", fifo: "not a regular file", tmp_path / "folder": "directory",
             big: "larger than 4194304 bytes", null: "line 2 reads NULL"}
    for path, words in cases.items():
        res = cli("randomize", ADULT, "o.csv", "--sensitive", "occupation", "--p", "0.5", "--seed", "1",
                  "--domain-file", path, cwd=tmp_path, timeout=30)
        refused(res, words, str(path))
        assert not (tmp_path / "o.csv").exists()


def test_byte_order_mark_is_not_part_of_a_key_or_a_value(tmp_path):
    """A key or domain file saved by an editor that writes a UTF-8 byte-order mark reads as the
    same key and the same first value as without it (before, the mark became part of the key,
    so the same key gave another release, and of the first domain value)."""
    from rwn_sql.rp.core import checks as rp_checks
    key = "0123456789abcdef" * 4
    plain, marked = tmp_path / "plain.key", tmp_path / "marked.key"
    plain.write_text(key + "\n", encoding="utf-8")
    marked.write_bytes(b"\xef\xbb\xbf" + key.encode() + b"\n")
    assert randomness.read_key_file(marked) == randomness.read_key_file(plain) == key
    domain = tmp_path / "domain.txt"
    domain.write_bytes(b"\xef\xbb\xbfSales\nTech-support\n")
    assert rp_checks.read_domain_file(domain) == ["Sales", "Tech-support"]


# --- one key policy -------------------------------------------------------------------------
@pytest.mark.parametrize("key, words", [
    ("short", "holds 5 characters; a key needs at least 16"),
    ("", "holds 0 characters"),
    ("0123456789abcdef\x00tail", "control character"),
    ("0123456789abcdef\ntail", "control character"),
    ("k" * 2000, "at most 1024"),
    (b"0123456789abcdef0123", "must be a string"),
])
def test_python_key_policy_is_the_clis(people, key, words):
    """Python took a 1-character key and keys with NUL, where the CLI required 16 characters:
    now every entry point refuses them with the same message (randomness.check_key)."""
    with pytest.raises(RWNError, match=words):
        rwn_sql.perturb(people, "people", ["age"], key=key, into="out")
    with pytest.raises(RWNError, match=words):
        rwn_sql.randomize(people, "people", "job", 0.5, public=["sex"], key=key)
    with pytest.raises(RWNError, match=words):
        rwn_sql.rank_swap(people, "people", ["age"], 10, key=key)
    assert people.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'out'").fetchone()[0] == 0


def test_sql_macros_follow_the_key_policy(people):
    """The SQL macros accepted key := 'k'; now they refuse it as Python and the CLI do."""
    rwn_sql.install(people)
    for call in ("rwn_perturb('people', ['age'], key := 'short')",
                 "rwn_randomize('people', 'job', 0.5, public := ['sex'], key := 'short')"):
        with pytest.raises(duckdb.Error, match="a key needs at least 16"):
            people.execute(f"SELECT * FROM {call}").fetchall()
    assert people.execute(f"SELECT count(*) FROM rwn_perturb('people', ['age'], key := '{KEY}')").fetchone()[0] == 60


def test_seed_keys_stay_allowed_only_as_seeds(people, tmp_path):
    """seed= (and the key it derives, seed:N, with replicate suffixes #r) stays allowed: it is the
    experiments' key. The same text given as a key (key=, a key file, key :=) is refused: it passed
    the 16-character minimum as a 6-character guessable key, and a key file holding `seed:1` was
    reported as a key from the file rather than as an experiment (issue 22, the attack pass)."""
    by_seed = rwn_sql.perturb(people, "people", ["age", "income"], seed=7).fetchall()
    assert by_seed == rwn_sql.perturb(people, "people", ["age", "income"],
                                      key=randomness.key_from_seed(7)).fetchall()
    assert randomness.check_key(randomness.key_from_seed(7).replicate(3)) == "seed:7#3"
    for text in ("seed:7", "seed:7#3", "seed:12345678901234567"):
        with pytest.raises(RWNError, match="experiment key that seed=.* derives"):
            rwn_sql.perturb(people, "people", ["age", "income"], key=text)
    with pytest.raises(RWNError, match="at least 16"):
        randomness.check_key("seed:x")
    rwn_sql.install(people)
    with pytest.raises(duckdb.Error, match="experiment key that seed=1 derives"):
        people.execute("SELECT count(*) FROM rwn_perturb('people', ['age'], key := 'seed:1')").fetchall()
    key_file = tmp_path / "seed.key"
    key_file.write_text("seed:1\n")
    with pytest.raises(RWNError, match="experiment key that seed=1 derives"):
        randomness.read_key_file(key_file)


# --- resources ----------------------------------------------------------------------------------
def test_threads_bounded_by_the_machine(tmp_path):
    """--threads 100000 ran past 120 s starting threads; it is refused at once naming the bound."""
    bound = max(64, 4 * os.cpu_count())
    for threads in ("100000", "0", str(bound + 1)):
        start = time.monotonic()
        res = cli("perturb", BODYFAT, "o.csv", "--columns", "Age", "--seed", "1", "--threads", threads,
                  cwd=tmp_path, timeout=60)
        refused(res, "--threads", f"between 1 and {bound}")
        assert time.monotonic() - start < 20
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize("limit, words", [
    ("1e9GB", "expected a size"), ("none", "expected a size"), ("-1", "expected a size"),
    ("0GB", "between 1 MiB"), ("10KB", "between 1 MiB"), ("100TB", "physical memory"), ("200%", "physical memory"),
])
def test_memory_limit_parsed_and_bounded(tmp_path, limit, words):
    """DuckDB takes 'none', '-1' or '1e9GB' as no limit (or fails late with an out-of-memory
    error at 0GB): each is refused before any work, naming the option."""
    res = cli("perturb", BODYFAT, "o.csv", "--columns", "Age", "--seed", "1", "--memory-limit", limit,
              cwd=tmp_path)
    refused(res, "--memory-limit", words)
    assert not (tmp_path / "o.csv").exists()


def test_memory_limit_accepts_sizes_and_shares():
    from rwn_sql.cli.session import check_memory_limit, physical_memory
    assert check_memory_limit("2MB") == 2_000_000
    assert check_memory_limit("1.5 GiB") == 3 << 29
    assert check_memory_limit("50%") == physical_memory() // 2


# --- domains, into=, integer parameters ------------------------------------------------------
@pytest.mark.parametrize("bad, position", [(None, 3), (float("nan"), 2), (["x", "y"], 1)])
def test_domain_missing_or_nested_values_refused(people, bad, position):
    """domain=[..., None] published the string 'None' as a domain value (m = 4); a missing (None,
    NaN) or nested value is refused naming its position, by randomize, estimates and the macro."""
    domain = ["a", "b", "c"]
    domain.insert(position - 1, bad)
    with pytest.raises(RWNError, match=f"domain value {position} is"):
        rwn_sql.randomize(people, "people", "job", 0.5, public=["sex"], domain=domain, key=KEY)
    with pytest.raises(RWNError, match=f"domain value {position} is"):
        rwn_sql.estimates(people, "people", "job", 0.5, domain, enforce=None)
    if bad is None:
        rwn_sql.install(people)
        with pytest.raises(duckdb.Error, match=f"domain value {position} is"):
            people.execute(f"SELECT * FROM rwn_randomize('people', 'job', 0.5, public := ['sex'], "
                           f"domain := ['a', 'b', NULL, 'c'], key := '{KEY}')").fetchall()


def tables(con):
    # TEMP objects aside: the connection's (emptied) key table lives there
    return sorted(con.execute("SELECT database_name, schema_name, table_name FROM duckdb_tables() "
                              "WHERE NOT temporary").fetchall())


def test_into_qualified_name_writes_there(people, tmp_path):
    """into='other.t' with `other` attached silently created memory.main."other.t" (lost when the
    connection closes); now it writes into `other`, an unknown database or schema is refused,
    and a name holding a dot is still possible when quoted."""
    people.execute(f"ATTACH '{tmp_path / 'other.duckdb'}' AS other").fetchall()
    rwn_sql.perturb(people, "people", ["age"], key=KEY, into="other.t")
    rwn_sql.randomize(people, "people", "job", 0.5, public=["sex"], key=KEY, into="other.main.r")
    rwn_sql.mdav(people, "people", ["age"], 3, into="other.m")
    assert tables(people) == [("memory", "main", "people"), ("other", "main", "m"), ("other", "main", "r"),
                              ("other", "main", "t")]
    for call in (lambda: rwn_sql.perturb(people, "people", ["age"], key=KEY, into="nowhere.t"),
                 lambda: rwn_sql.randomize(people, "people", "job", 0.5, key=KEY, into="nowhere.r")):
        with pytest.raises(RWNError, match="no attached database or schema 'nowhere'"):
            call()
    rwn_sql.perturb(people, "people", ["age"], key=KEY, into='"a.b"')
    assert ("memory", "main", "a.b") in tables(people)


@pytest.mark.parametrize("into", ["", "   ", 5])
def test_into_must_name_a_table(people, into):
    """into='' raised a bare ValueError from the identifier quoting; now an RWNError naming into=."""
    for call in (lambda: rwn_sql.perturb(people, "people", ["age"], key=KEY, into=into),
                 lambda: rwn_sql.randomize(people, "people", "job", 0.5, key=KEY, into=into)):
        with pytest.raises(RWNError, match="into= must name a table"):
            call()
    assert tables(people) == [("memory", "main", "people")]


@pytest.mark.parametrize("call, name", [
    (lambda c: rwn_sql.perturb(c, "people", ["age"], k=10**20, key=KEY), "k must be an integer"),
    (lambda c: rwn_sql.neighborhoods(c, "people", ["age"], k=2**31), "k must be an integer"),
    (lambda c: rwn_sql.rank_swap(c, "people", ["age"], 10, key=KEY, reps=10**20), "reps must be an integer"),
    (lambda c: rwn_sql.mdav(c, "people", ["age"], 10**20), "k must be >= 2"),
])
def test_huge_integer_parameters_named(people, call, name):
    """k=10**20 gave DuckDB's raw BinderException (array_extract); huge integers are refused as
    RWNError naming the parameter and its bound."""
    with pytest.raises(RWNError, match=f"{name}.*at most 2147483647"):
        call(people)


@pytest.mark.parametrize("call, name", [
    (lambda c: rwn_sql.perturb(c, "people", ["age"], eps=10**400, key=KEY), "eps must be a number"),
    (lambda c: rwn_sql.perturb(c, "people", ["age"], q=10**400, key=KEY), "q must be a number"),
    (lambda c: rwn_sql.rank_swap(c, "people", ["age"], 10**400, key=KEY), "p_percent must be a number"),
    (lambda c: rwn_sql.evaluate(c, "people", "people", ["age"], sdid_k=10**400), "sdid_k must be a number"),
])
def test_integers_beyond_a_float_named(people, call, name):
    """A number parameter given an int too large for a float raised a bare OverflowError."""
    with pytest.raises(RWNError, match=name):
        call(people)


def test_parameter_errors_are_rwn_errors(people):
    """Parameter checks in spec, privacy and the SQL builders raised bare ValueError; every one
    reaching the public API is an RWNError."""
    from rwn_sql.rp.core import privacy
    from rwn_sql.rwn import spec
    with pytest.raises(RWNError):
        spec.RWNSpec(columns=["a"], q=2)
    with pytest.raises(RWNError):
        privacy.PrivacyParams(p=0.5, m=1, eps=0.1, delta=0.1)
    with pytest.raises(RWNError, match="order must be one of"):
        rwn_sql.perturb(people, "people", ["age"], key=KEY, order="sideways")


# --- values that randomize and release publish -----------------------------------------------
@pytest.fixture
def mixed(con):
    con.execute("CREATE TABLE mixed AS SELECT i, (i % 3)::DOUBLE AS s, (i % 2)::VARCHAR AS g, i::DOUBLE AS x, "
                "[i % 2] AS l, {'a': i % 2} AS st, map([i % 2], [1]) AS m, (i % 2)::VARCHAR::BLOB AS b, "
                "[i % 2, 1]::INTEGER[2] AS arr, uuid() AS u FROM range(40) t(i)").fetchall()
    return con


@pytest.mark.parametrize("column", ["l", "st", "m", "b", "arr"])
def test_nested_and_binary_sensitive_columns_refused(mixed, tmp_path, column):
    """LIST, STRUCT, MAP, BLOB and ARRAY sensitive attributes were randomized (their text forms
    published as domain values); they are refused naming the column and its type. UUID is not."""
    with pytest.raises(RWNError, match=f"sensitive column '{column}' has type .*nested or binary"):
        rwn_sql.randomize(mixed, "mixed", column, 0.5, public=["g"], key=KEY)
    with pytest.raises(RWNError, match=f"sensitive column '{column}' has type"):
        rwn_sql.release(mixed, "mixed", str(tmp_path / "r.duckdb"), column, 0.5, public=["g"], key=KEY)
    assert not (tmp_path / "r.duckdb").exists()
    # UUID stays allowed: a scalar whose text form casts back exactly (see rp.core.checks.NESTED_TYPES)
    assert len(rwn_sql.randomize(mixed, "mixed", "u", 0.5, public=["g"], key=KEY).fetchall()) == 40


def test_nan_sensitive_values_refused(mixed, tmp_path):
    """A NaN sensitive value was released ('nan' a domain value); refused by randomize, release and
    the macro over a persistent table. A NaN makes the column floating point, which uniform
    perturbation refuses as a whole (rp.core.checks.check_sensitive_type): the refusal names the column."""
    mixed.execute("CREATE VIEW v AS SELECT * REPLACE (CASE WHEN i IN (5, 9) THEN 'nan'::DOUBLE ELSE s END AS s) "
                  "FROM mixed").fetchall()
    words = r"sensitive column 's' is floating point \(DOUBLE\)"
    with pytest.raises(RWNError, match=words):
        rwn_sql.randomize(mixed, "v", "s", 0.5, public=["g"], key=KEY)
    with pytest.raises(RWNError, match=words):
        rwn_sql.release(mixed, "v", str(tmp_path / "r.duckdb"), "s", 0.5, public=["g"], key=KEY)
    rwn_sql.install(mixed)
    with pytest.raises(duckdb.Error, match=words):
        mixed.execute(f"SELECT * FROM rwn_randomize('v', 's', 0.5, public := ['g'], key := '{KEY}')").fetchall()


@pytest.mark.parametrize("value, words", [
    ("'inf'::DOUBLE", r"public column 'x' has 2 NaN or infinite values \(the first at row 4\)"),
    ("'-inf'::DOUBLE", "public column 'x' has 2 NaN or infinite values"),
    ("'nan'::DOUBLE", "public column 'x' has 2 NaN or infinite values"),
    ("1e308", r"public column 'x' holds values up to 1e\+308.*overflow"),
])
def test_non_finite_public_measures_refused(mixed, tmp_path, value, words):
    """A public DOUBLE column holding +-inf or NaN (or values whose sums overflow, 1e308) made
    SUM/AVG estimates NaN or inf without a word; randomize and release refuse it naming the
    column and the rows. Finite ordinary values pass."""
    mixed.execute(f"CREATE VIEW v AS SELECT * REPLACE (CASE WHEN i IN (3, 30) THEN {value} ELSE x END AS x) "
                  "FROM mixed").fetchall()
    with pytest.raises(RWNError, match=words):
        rwn_sql.randomize(mixed, "v", "g", 0.5, public=["x"], key=KEY)
    with pytest.raises(RWNError, match=words):
        rwn_sql.release(mixed, "v", str(tmp_path / "r.duckdb"), "g", 0.5, public=["x"], key=KEY)
    assert not (tmp_path / "r.duckdb").exists()
    assert len(rwn_sql.randomize(mixed, "mixed", "g", 0.5, public=["x"], key=KEY).fetchall()) == 40


# --- CSV cells ------------------------------------------------------------------------------------
def test_unterminated_quote_refused(con, tmp_path):
    """A CSV with an unterminated quote was read with quoting off, so '"1.0' was released as a
    value; randomize, release and perturb now refuse it naming the file and the line."""
    path = tmp_path / "unterminated.csv"
    path.write_text("a,b,c\n1.0,2,x\n\"2.0\",3,y\n\"1.0,3,y\n2.5,4,z\n" + "".join(f"{i}.5,{i},x\n" for i in range(20)))
    words = r"unterminated.csv.*a quote opens a field on line 4 and never closes"
    with pytest.raises(RWNError, match=words):
        rwn_sql.randomize(con, str(path), "c", 0.5, public=["a", "b"], key=KEY)
    with pytest.raises(RWNError, match=words):
        rwn_sql.release(con, str(path), str(tmp_path / "r.duckdb"), "c", 0.5, public=["a"], key=KEY)
    with pytest.raises(RWNError, match=words):
        rwn_sql.perturb(con, str(path), ["b"], key=KEY)
    res = cli("randomize", path, "o.csv", "--sensitive", "c", "--p", "0.5", "--seed", "1", cwd=tmp_path)
    refused(res, "line 4 and never closes")
    assert not (tmp_path / "o.csv").exists() and not (tmp_path / "r.duckdb").exists()


@pytest.mark.parametrize("cell, words", [
    ("NA", r"line 5 holds 'NA', a missing-value marker \(R writes NA\).*nullstr"),
    ("+5", r"line 5 holds '\+5', a leading '\+' sign"),
    ('"1,5"', r"line 5 holds '1,5', a decimal comma.*decimal_separator"),
    ("0x10", r"line 5 holds '0x10', a hexadecimal number"),
    ("Alice Smith", r"line 5 holds text \(11 characters, not shown\)"),
])
def test_text_cell_in_numeric_column_explained(con, tmp_path, cell, words):
    """One NA, +5, 1,5 or 0x10 cell made a numeric column VARCHAR and the message said only 'has
    type VARCHAR ... list it in categorical'; now it names the column, the first such line and
    value and the likely cause with its fix (ordinary text is not echoed: it is data)."""
    path = tmp_path / "cells.csv"
    rows = [f"{i}.25,{i}" for i in range(40)]
    rows[3] = f"{cell},3"
    path.write_text("a,b\n" + "\n".join(rows) + "\n")
    with pytest.raises(RWNError, match=r"column 'a' of file .*cells.csv' is read as text \(VARCHAR\).*" + words):
        rwn_sql.perturb(con, str(path), ["a", "b"], key=KEY)
    res = cli("perturb", path, "o.csv", "--columns", "a,b", "--seed", "1", cwd=tmp_path)
    refused(res, "column 'a'", "line 5")
    assert "Alice" not in res.stderr


def test_text_column_keeps_the_categorical_hint(con, tmp_path):
    """A column of text (not mostly numbers) still gets the categorical hint, and the fix the NA
    message proposes reads the file."""
    path = tmp_path / "words.csv"
    path.write_text("a,b\n" + "".join(f"{'xyz'[i % 3]},{i}\n" for i in range(30)))
    with pytest.raises(RWNError, match="column 'a' has type VARCHAR, not a numeric type; list it in categorical"):
        rwn_sql.perturb(con, str(path), ["a", "b"], key=KEY)
    na = tmp_path / "na.csv"
    na.write_text("a,b\n" + "".join(f"{'NA' if i == 3 else i + 0.5},{i}\n" for i in range(30)))
    with pytest.raises(RWNError, match="nullstr") as info:
        rwn_sql.perturb(con, str(na), ["a", "b"], key=KEY)
    query = str(info.value).split('"')[1]
    assert len(rwn_sql.perturb(con, query, ["a", "b"], key=KEY, on_missing="drop").fetchall()) == 29


def test_macros_over_temp_tables_refuse_nested_and_nan_sensitive(mixed):
    """The SQL macros over a TEMP table (planned without seeing it) randomized a LIST or NaN
    sensitive attribute; the statement now fails naming the column (NaN: a floating-point column,
    refused as a whole). Text 'nan' is a value."""
    rwn_sql.install(mixed)
    mixed.execute("CREATE TEMP TABLE tmixed AS SELECT *, CASE WHEN i % 2 = 0 THEN 'nan' ELSE 'x' END AS txt "
                  "FROM mixed").fetchall()
    mixed.execute("CREATE TEMP VIEW tnan AS SELECT * REPLACE (CASE WHEN i = 5 THEN 'nan'::DOUBLE ELSE s END AS s) "
                  "FROM tmixed").fetchall()
    call = "SELECT * FROM rwn_randomize('{}', '{}', 0.5, public := ['g'], key := '" + KEY + "')"
    for table, column, words in (("tmixed", "l", "sensitive column 'l' has type BIGINT.*nested or binary"),
                                 ("tmixed", "b", "sensitive column 'b' has type BLOB"),
                                 ("tnan", "s", r"sensitive column 's' is floating point \(DOUBLE\)")):
        with pytest.raises(duckdb.Error, match=words):
            mixed.execute(call.format(table, column)).fetchall()
    assert len(mixed.execute(call.format("tmixed", "txt")).fetchall()) == 40      # a DOUBLE one: refused above
    assert len(mixed.execute(call.format("tmixed", "u")).fetchall()) == 40


def test_na_values_flag_reads_r_missing_values_as_null(tmp_path):
    """The fix the NA message names: --na-values NA reads R's NA cells as NULL (perturb then
    drops them with --on-missing drop; randomize releases the public NA as empty), where the
    column was text before and perturb refused it."""
    path = tmp_path / "r_export.csv"
    path.write_text("a,b,s\n" + "".join(f"{'NA' if i == 3 else i + 0.5},{i},{'xy'[i % 2]}\n" for i in range(30)))
    res = cli("perturb", path, "o.csv", "--columns", "a,b", "--seed", "1", cwd=tmp_path)
    refused(res, "line 5 holds 'NA'", "--na-values NA")
    res = cli("perturb", path, "o.csv", "--columns", "a,b", "--seed", "1", "--na-values", "NA", "--on-missing",
              "drop", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "dropped 1 of 30 rows" in res.stderr
    res = cli("randomize", path, "r.csv", "--sensitive", "s", "--p", "0.5", "--public", "a", "--seed", "1",
              "--na-values", "NA", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    released = duckdb.connect().execute(f"SELECT typeof(a), count(*) - count(a) FROM read_csv('{tmp_path / 'r.csv'}') "
                                        "GROUP BY 1").fetchall()
    assert released == [("DOUBLE", 1)]
