"""Two more ways around "a release file is untrusted input" (issue 22, F1):

B1: `rwn_sql.estimates` / the `rwn_estimates` macro ran a view of an attached release file on the
caller's connection whenever the source was spelled other than [schema.]name (three parts, quoted,
SQL text) or the file had no metadata table. B2: every CLI command reading a `file.duckdb:table`
input ran the file's view. Each crafted file here holds a view whose rows carry (or whose error
text holds) a canary file's content; every reader must refuse naming the object, and the canary
must appear in no output. Genuine tables still work.
"""
from __future__ import annotations

import shutil

import duckdb
import pytest

import rwn_sql
from rwn_sql import RWNError
from rwn_sql.cli.main import main

CANARY = "CANARY-LOCAL-7731"
JOBS = ["Clerk", "Nurse", "Smith", "Pilot", "Baker"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """people.csv, a genuine release base.duckdb, and crafted copies: ev1 (view people_randomized
    whose job is the canary), ev1_nometa (ev1 without its metadata table), ev3 (view whose Age
    casts the canary to INTEGER, so reading it fails with the canary in the error)."""
    d = tmp_path_factory.mktemp("inputs")
    (d / "canary.txt").write_text(CANARY + "\n")
    lines = ["Age,town,income,job"] + [f"{20 + (i * 7) % 50},{'ABC'[i % 3]},{1000 + 37 * i},{JOBS[(i * 3) % 5]}"
                                       for i in range(60)]
    (d / "people.csv").write_text("\n".join(lines) + "\n")
    base = d / "base.duckdb"
    # --l-diversity 1: the subject is crafted inputs, not attribute disclosure (the 60 rows'
    # public columns make small one-value groups)
    assert main(["release", str(d / "people.csv"), str(base), "--sensitive", "job", "--p", "0.6",
                 "--public", "Age,town,income", "--seed", "3", "--table", "people", "--l-diversity", "1"]) == 0
    read = f"(SELECT content FROM read_text('{d / 'canary.txt'}'))"
    for name, column, expr in [("ev1", "job", read), ("ev3", "Age", f"CAST({read} AS INTEGER)")]:
        shutil.copy(base, d / f"{name}.duckdb")
        with duckdb.connect(str(d / f"{name}.duckdb")) as con:
            # the released table moves aside; a view takes its name in the default schema
            cols = [r[0] for r in con.execute("DESCRIBE randomized_rows_not_counts.people_randomized").fetchall()]
            con.execute("ALTER TABLE randomized_rows_not_counts.people_randomized RENAME TO r0")
            con.execute("CREATE VIEW people_randomized AS SELECT " + ", ".join(
                f'{expr} AS "{n}"' if n == column else f'"{n}"' for n in cols) + " FROM randomized_rows_not_counts.r0")
    with duckdb.connect(str(d / "plain.duckdb")) as con:   # the released rows as a file's main table
        con.execute(f"ATTACH '{base}' AS b (READ_ONLY)")
        con.execute("CREATE TABLE people_randomized AS SELECT * FROM b.randomized_rows_not_counts.people_randomized")
    shutil.copy(d / "ev1.duckdb", d / "ev1_nometa.duckdb")
    with duckdb.connect(str(d / "ev1_nometa.duckdb")) as con:
        con.execute("DROP TABLE rwn_release_metadata")
    return d


SPELLINGS = ["rel.main.people_randomized", '"rel"."people_randomized"', '"rel".main."people_randomized"',
             "rel.people_randomized", "SELECT * FROM rel.people_randomized",
             "WITH x AS (SELECT * FROM rel.main.people_randomized) SELECT * FROM x",
             "SELECT * FROM query_table('rel.people_randomized')"]


def _estimates(files, evil, source, macro):
    con = duckdb.connect()
    con.execute(f"ATTACH '{files / evil}' AS rel (READ_ONLY)").fetchall()
    if macro:
        rwn_sql.install(con)
        return repr(con.execute("SELECT * FROM rwn_estimates(?, 'job', 0.6, ?)", [source, JOBS]).fetchall())
    return repr(rwn_sql.estimates(con, source, "job", 0.6, JOBS).fetchall())


@pytest.mark.parametrize("macro", [False, True], ids=["estimates", "macro"])
@pytest.mark.parametrize("evil", ["ev1.duckdb", "ev1_nometa.duckdb"])
@pytest.mark.parametrize("source", SPELLINGS)
def test_estimates_refuse_a_view_of_an_attached_file_in_any_spelling(files, evil, source, macro):
    """B1: every spelling of the file's view (three parts, quoted, SQL text, a CTE, query_table),
    with and without the file's metadata table, through estimates and the rwn_estimates macro, is
    refused naming the view (or the query_table call) before a row is read; the canary appears in
    no message. Before the fix these ran the view and the error listed the canary as a job."""
    with pytest.raises((RWNError, duckdb.Error)) as info:
        _estimates(files, evil, source, macro)
    text = str(info.value)
    assert CANARY not in text
    assert "people_randomized" in text and ("is a view of the attached database file 'rel'" in text or "query_table" in text.lower())


def test_estimates_refuse_an_own_view_over_the_files_view(files):
    """B1: a view of the caller's (a TEMP view) whose body reads the file's view is refused too:
    the check follows the caller's views into the objects they read."""
    con = duckdb.connect()
    con.execute(f"ATTACH '{files / 'ev1.duckdb'}' AS rel (READ_ONLY)").fetchall()
    con.execute("CREATE TEMP VIEW mine AS SELECT * FROM rel.people_randomized").fetchall()
    with pytest.raises(RWNError, match="'people_randomized' is a view of the attached database file 'rel'") as info:
        rwn_sql.estimates(con, "mine", "job", 0.6, JOBS)
    assert CANARY not in str(info.value)


@pytest.mark.parametrize("source", ["rel.randomized_rows_not_counts.people_randomized", '"rel"."people_randomized"',
                                    "rel.people", "SELECT * FROM rel.randomized_rows_not_counts.people_randomized",
                                    "mine"])
def test_estimates_still_read_genuine_tables_and_own_views(files, source):
    """The rule refuses only views of attached files: the genuine release's table in every
    spelling, and a caller's own view over it, still answer (5 domain values)."""
    con = duckdb.connect()
    con.execute(f"ATTACH '{files / 'base.duckdb'}' AS rel (READ_ONLY)").fetchall()
    con.execute("CREATE TEMP VIEW mine AS SELECT * FROM rel.randomized_rows_not_counts.people_randomized").fetchall()
    assert len(rwn_sql.estimates(con, source, "job", 0.6, JOBS, enforce=None).fetchall()) == 5


def _cli(command, files, tmp_path, release):
    inp = f"{files / release}:people_randomized"
    out = tmp_path / "out.csv"
    return {"evaluate": ["evaluate", str(files / "people.csv"), inp, "--columns", "Age,job", "--categorical", "job",
                         "--input-order"],
            "audit": ["audit", inp, "--sensitive", "job", "--p", "0.6", "--public", "Age", "--epsilon", "0.5",
                      "--delta", "0.1"],
            "perturb": ["perturb", inp, str(out), "--columns", "Age,income", "--k", "3", "--seed", "1"],
            "randomize": ["randomize", inp, str(out), "--sensitive", "job", "--p", "0.6", "--public", "Age,town",
                          "--seed", "1"]}[command], out


@pytest.mark.parametrize("command", ["evaluate", "audit", "perturb", "randomize"])
def test_cli_refuses_a_view_given_as_file_duckdb_table(files, tmp_path, capsys, command):
    """B2: `file.duckdb:table` naming a view of the file is refused with exit 2 and one error
    line naming the view; no output is written; the canary is in no output. Before the fix the view
    ran and the cast error carried the canary."""
    args, out = _cli(command, files, tmp_path, "ev3.duckdb")
    code = main(args)
    captured = capsys.readouterr()
    assert code == 2
    errors = [line for line in captured.err.splitlines() if line.startswith("rwn-sql: error:")]
    assert len(errors) == 1
    assert "'people_randomized' in" in errors[0] and "is a view, not a table" in errors[0]
    assert CANARY not in captured.out + captured.err
    assert not out.exists()


@pytest.mark.parametrize("command", ["evaluate", "audit", "perturb", "randomize"])
def test_cli_still_reads_a_base_table_of_a_file(files, tmp_path, capsys, command):
    """A genuine base table given as file.duckdb:table still works (exit 0 or audit's 1)."""
    args, out = _cli(command, files, tmp_path, "plain.duckdb")
    assert main(args) in (0, 1)
    assert "is a view" not in capsys.readouterr().err
    if command in ("perturb", "randomize"):
        assert out.exists()


def test_input_file_macros_do_not_shadow_our_functions(files, tmp_path, capsys):
    """An input file's macros named like functions our SQL calls (sqrt, hash, greatest, least,
    abs, round, random) are not reached: an attached database is not on the search path, so the
    perturbed output is byte-identical to that of the same table without macros. (A check of
    DuckDB's resolution that the B2 rule relies on; it held before the fix as well.)"""
    plain, shadowed = tmp_path / "plain.duckdb", tmp_path / "shadowed.duckdb"
    with duckdb.connect(str(plain)) as con:
        con.execute(f"CREATE TABLE t AS SELECT * FROM read_csv('{files / 'people.csv'}')")
    shutil.copy(plain, shadowed)
    with duckdb.connect(str(shadowed)) as con:
        for name in ("sqrt", "hash", "greatest", "least", "abs", "round", "random", "md5", "sha256"):
            con.execute(f"CREATE MACRO {name}(a, b := 0) AS 42")
    outs = []
    for db in (plain, shadowed):
        out = tmp_path / f"{db.stem}.csv"
        assert main(["perturb", f"{db}:t", str(out), "--columns", "Age,income", "--k", "3", "--seed", "1"]) == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
