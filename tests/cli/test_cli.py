"""The rwn-sql command line, end to end."""
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from helpers.data import ADULT, BODYFAT
from rwn_sql.cli.main import main
from rwn_sql.cli.parser import build_parser

COLS = "Age,Weight,Height"
ROOT = Path(__file__).resolve().parents[2]


def run(*args):
    return subprocess.run([sys.executable, "-m", "rwn_sql.cli", *map(str, args)], capture_output=True, text=True)


def test_perturb_csv_parquet_duckdb_same_release(tmp_path):
    key = tmp_path / "key.txt"
    key.write_text("0123456789abcdef0123456789abcdef\n")
    outs = [tmp_path / "r.csv", tmp_path / "r.parquet", f"{tmp_path / 'r.duckdb'}:release"]
    for out in outs:
        res = run("perturb", BODYFAT, out, "--columns", COLS, "--eps", "0.3", "--key-file", key, "--threads", "2",
                  "--keep-order")
        assert res.returncode == 0, res.stderr
        assert "wrote 241 rows" in res.stderr
    con = duckdb.connect()
    a = con.execute(f"SELECT * FROM read_csv('{outs[0]}')").fetchall()
    b = con.execute(f"SELECT * FROM read_parquet('{outs[1]}')").fetchall()
    con.execute(f"ATTACH '{tmp_path / 'r.duckdb'}' AS r (READ_ONLY)").fetchall()
    c = con.execute("SELECT * FROM r.release").fetchall()
    assert a == b == c and len(a) == 241
    orig = con.execute(f"SELECT * FROM read_csv('{BODYFAT}')").fetchall()
    assert a != orig and [r[0] for r in a] == [r[0] for r in orig]      # BodyFat passes through


def test_release_from_duckdb_input(tmp_path):
    db = tmp_path / "in.duckdb"
    con = duckdb.connect(str(db))
    con.execute(f"CREATE TABLE people AS SELECT * FROM read_csv('{BODYFAT}')").fetchall()
    con.close()
    res = run("perturb", f"{db}:people", tmp_path / "out.csv", "--columns", COLS, "--seed", "3", "--drop", "BodyFat")
    assert res.returncode == 0, res.stderr
    header = (tmp_path / "out.csv").read_text().splitlines()[0]
    assert not header.startswith("BodyFat") and header.startswith("Age")


def test_errors_leave_nothing_behind(tmp_path):
    before = BODYFAT.read_bytes()
    out = tmp_path / "out.csv"
    res = run("perturb", BODYFAT, out, "--columns", "Age,Wieght")
    assert res.returncode == 2 and "column 'Wieght' is not in" in res.stderr
    res = run("perturb", BODYFAT, out, "--columns", COLS, "--k", "500")
    assert res.returncode == 2 and "k = 500 needs at least 501" in res.stderr
    res = run("perturb", BODYFAT, out, "--columns", COLS, "--q", "3")
    assert res.returncode == 2 and "q must be in [0, 1]" in res.stderr
    assert os.listdir(tmp_path) == []                                   # no output, no temp file
    res = run("perturb", BODYFAT, BODYFAT, "--columns", COLS, "--overwrite")
    assert res.returncode == 2 and "never modifies its input" in res.stderr
    out.write_text("precious")
    res = run("perturb", BODYFAT, out, "--columns", COLS)
    assert res.returncode == 2 and "already exists" in res.stderr and out.read_text() == "precious"
    assert BODYFAT.read_bytes() == before                                 # the input is only read


def test_neighborhoods_summary(tmp_path, capsys):
    assert main(["neighborhoods", str(BODYFAT), "--columns", "BodyFat,Age,Weight,Height,Neck,Chest,Abdomen,"
                 "Hip,Thigh,Knee,Ankle,Biceps,Forearm,Wrist", "--eps", "0.4",
                 "--output", str(tmp_path / "n.csv")]) == 0
    text = capsys.readouterr().out
    assert "241 records" in text and "neighbourhood size" in text
    size_line = next(line for line in text.splitlines() if line.startswith("neighbourhood size"))
    assert size_line.split()[-1] == "68"                                  # the paper's largest size at eps 0.4
    rows = duckdb.connect().execute(f"SELECT count(*) FROM read_csv('{tmp_path / 'n.csv'}')").fetchone()[0]
    assert rows == 241


def test_show_sql_prints_runnable_sql_without_key(tmp_path):
    key = tmp_path / "key.txt"
    key.write_text("super-secret-key-42")
    res = run("perturb", BODYFAT, tmp_path / "o.csv", "--columns", "Age", "--key-file", key, "--show-sql")
    assert res.returncode == 0 and "WITH RECURSIVE" in res.stdout and "super-secret-key-42" not in res.stdout


def test_help_documents_every_option():
    parser = build_parser()
    choices = parser._subparsers._group_actions[0].choices
    assert set(choices) == {"perturb", "neighborhoods", "randomize", "audit", "query", "release", "report", "calibrate",
                            "evaluate", "tune", "recommend", "rank-swap", "mdav"}
    for name, sub in choices.items():
        for action in sub._actions:
            if action.option_strings and action.dest != "help":
                assert action.help and len(action.help) > 10, (name, action.dest)
    res = run("perturb", "--help")
    for option in ("--columns", "--k", "--eps", "--q", "--scale", "--strata", "--categorical", "--drop",
                   "--key-file", "--seed", "--threads", "--memory-limit"):
        assert option in res.stdout


PUB = "sex,race,relationship,education,marital_status"


def test_randomize_show_sql_prints_the_statement_that_ran(tmp_path):
    """--show-sql prints the randomize statement of the run itself (planned once), the key
    replaced by getvariable('rwn_key'): run by hand with that variable set, it gives the rows
    the command wrote."""
    key = tmp_path / "key.txt"
    key.write_text("randomize-show-sql-secret-key-0123456789")
    out = tmp_path / "r.parquet"
    res = run("randomize", ADULT, out, "--sensitive", "occupation", "--p", "0.5", "--public", "sex,race,relationship",
              "--enforce", "0.5,0.05", "--key-file", key, "--show-sql")
    assert res.returncode == 0, res.stderr
    assert "randomize-show-sql-secret-key" not in res.stdout and "getvariable('rwn_key')" in res.stdout
    con = duckdb.connect()
    con.execute("SET VARIABLE rwn_key = 'randomize-show-sql-secret-key-0123456789'").fetchall()
    by_hand = con.execute(res.stdout).fetchall()
    written = con.execute(f"SELECT * FROM '{out}'").fetchall()
    assert len(by_hand) == 32561 and sorted(by_hand, key=repr) == sorted(written, key=repr)


def test_randomize_show_sql_plans_once(tmp_path, monkeypatch, capsys):
    """The shown statement is not a second plan: the checks, the group design and the
    attribute-disclosure queries run once."""
    from rwn_sql.rp import plan as rp_plan
    calls = []
    planner = rp_plan.plan_randomize
    monkeypatch.setattr(rp_plan, "plan_randomize", lambda *a, **kw: calls.append(1) or planner(*a, **kw))
    code = main(["randomize", str(ADULT), str(tmp_path / "r.parquet"), "--sensitive", "occupation", "--p", "0.5",
                 "--public", "sex,race", "--seed", "3", "--show-sql"])
    assert code == 0 and "getvariable('rwn_key')" in capsys.readouterr().out
    assert len(calls) == 1


@pytest.mark.heavy     # the rp commands end to end in subprocesses; each command's API is checked in tests/rp
def test_randomize_audit_release_query_commands(tmp_path):
    out = tmp_path / "r.parquet"
    res = run("randomize", ADULT, out, "--sensitive", "occupation", "--p", "0.5", "--public", PUB,
              "--enforce", "0.5,0.05", "--test", "exact", "--seed", "1")
    assert res.returncode == 2 and "attribute disclosure: 115 records sit in 46 personal groups" in res.stderr
    res = run("randomize", ADULT, out, "--sensitive", "occupation", "--p", "0.5", "--public", PUB,
              "--enforce", "0.5,0.05", "--test", "exact", "--seed", "1", "--l-diversity", "1")
    assert res.returncode == 0, res.stderr
    assert "32561 rows" in res.stderr and "enforced" in res.stderr
    cols = [r[0] for r in duckdb.connect().execute(f"DESCRIBE SELECT * FROM '{out}'").fetchall()]
    assert sorted(cols) == sorted(PUB.split(",") + ["occupation"])

    res = run("audit", ADULT, "--sensitive", "occupation", "--p", "0.5", "--public", PUB, "--epsilon", "0.5",
              "--delta", "0.05", "--test", "exact", "--output", tmp_path / "audit.csv",
              "--groups-output", tmp_path / "groups.parquet")
    assert res.returncode == 1, res.stderr                                # groups fail: exit 1 (documented)
    assert "exact test, before enforcement: 120 of 1317 personal groups fail" in res.stdout
    assert "largest failing groups" in res.stdout and (tmp_path / "audit.csv").exists()
    groups = duckdb.connect().execute(f"SELECT count(*), count(*) FILTER (WHERE NOT passes), sum(group_size) "
                                      f"FROM '{tmp_path / 'groups.parquet'}'").fetchall()
    assert groups == [(1317, 120, 32561)]
    res = run("audit", ADULT, "--sensitive", "occupation", "--p", "0.5", "--public", PUB, "--epsilon", "0.5",
              "--delta", "0.05", "--test", "exact", "--after-enforcement")
    assert "after enforcement: 0 of 1317" in res.stdout and res.returncode == 1      # l-diversity fails
    assert "46 personal groups of at least 2 records hold fewer than 2 distinct values (115 of 32561" in res.stdout
    res = run("audit", ADULT, "--sensitive", "occupation", "--p", "0.5", "--public", PUB, "--epsilon", "0.5",
              "--delta", "0.05", "--test", "exact", "--after-enforcement", "--l-diversity", "1")
    assert "after enforcement: 0 of 1317" in res.stdout and res.returncode == 0

    db = tmp_path / "rel.duckdb"
    res = run("release", ADULT, db, "--sensitive", "occupation", "--p", "0.5", "--public", PUB, "--seed", "2",
              "--l-diversity", "1")
    assert res.returncode == 0, res.stderr
    res = run("query", db, "SELECT sex, COUNT(*) FROM adult WHERE occupation = 'Sales' AND race IN ('Black', 'Other') "
                           "GROUP BY sex")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].split()[:4] == ["sex", "released_count", "group_size", "estimate"]
    assert [line.split()[0] for line in lines[1:]] == ["Female", "Male"]
    res = run("query", db, "SELECT sex, MEDIAN(race) FROM adult GROUP BY sex")
    assert res.returncode == 2 and "unsupported query: the aggregate MEDIAN(race)" in res.stderr
    assert "rwn-sql query --help" in res.stderr
    res = run("query", db, "SELECT sex, COUNT(*) FROM adult WHERE occupation = 'Sales' AND race = 'White' AND "
                           "education = 'HS-grad' AND relationship = 'Husband' AND marital_status = 'Married-civ-spouse' "
                           "GROUP BY sex")
    assert res.returncode == 0 and "micro" in res.stderr.lower()


def test_rp_command_errors(tmp_path):
    res = run("randomize", ADULT, tmp_path / "o.csv", "--sensitive", "occupation", "--p", "1.5")
    assert res.returncode == 2 and "p (retention probability) must be in (0, 1)" in res.stderr
    res = run("audit", ADULT, "--sensitive", "occupation", "--p", "0.5", "--epsilon", "5", "--delta", "0.1")
    assert res.returncode == 2 and "eps must be in (0, 1.06667]" in res.stderr
    dom = tmp_path / "dom.txt"
    dom.write_text("Sales\nTech-support\n")
    res = run("randomize", ADULT, tmp_path / "o.csv", "--sensitive", "occupation", "--p", "0.5", "--domain-file", dom)
    assert res.returncode == 2 and "the domain misses values present in the data" in res.stderr
    assert not (tmp_path / "o.csv").exists()
    res = run("query", tmp_path / "missing.duckdb", "SELECT COUNT(*) FROM adult")
    assert res.returncode == 2 and "does not exist" in res.stderr


@pytest.mark.heavy     # evaluate in a subprocess; its figures against independent computations: tests/evaluation/test_evaluate.py
def test_evaluate_command(tmp_path):
    import json
    from rwn_sql import evaluate
    rel = tmp_path / "r.csv"
    assert run("perturb", BODYFAT, rel, "--columns", COLS, "--eps", "0.3", "--seed", "4").returncode == 0
    out = tmp_path / "m.json"
    res = run("evaluate", BODYFAT, rel, "--columns", COLS, "--target", "Weight", "--json", out, "--seed", "4")
    assert res.returncode == 0, res.stderr
    assert "record linkage rate" in res.stdout and "OLS of Weight" in res.stdout
    assert "paired by keyed order" in res.stdout
    measures = json.loads(out.read_text())
    direct = evaluate(duckdb.connect(), str(BODYFAT), str(rel), COLS.split(","), target="Weight", seed=4).to_dict()
    assert measures == direct
    res = run("evaluate", BODYFAT, rel, "--columns", COLS, "--json", out)
    assert res.returncode == 2 and "already exists" in res.stderr
    res = run("evaluate", BODYFAT, rel, "--columns", COLS, "--target", "Nope")
    assert res.returncode == 2 and "Nope" in res.stderr


def test_baseline_commands(tmp_path):
    import rwn_sql
    con = duckdb.connect()
    out = tmp_path / "swap.csv"
    res = run("rank-swap", BODYFAT, out, "--columns", COLS, "--p", "15", "--seed", "5")
    assert res.returncode == 0, res.stderr
    via_cli = con.execute(f"SELECT * FROM read_csv('{out}')").fetchall()
    assert via_cli == rwn_sql.rank_swap(con, str(BODYFAT), COLS.split(","), 15, seed=5).fetchall()
    out = tmp_path / "swaps.parquet"
    res = run("rank-swap", BODYFAT, out, "--columns", COLS, "--p", "15", "--seed", "5", "--reps", "3")
    assert res.returncode == 0, res.stderr
    assert con.execute(f"SELECT * FROM '{out}'").fetchall() == \
        rwn_sql.rank_swap(con, str(BODYFAT), COLS.split(","), 15, seed=5, reps=3).fetchall()
    res = run("rank-swap", BODYFAT, tmp_path / "y.csv", "--columns", COLS, "--p", "15", "--seed", "5", "--reps", "0")
    assert res.returncode == 2 and "reps must be" in res.stderr and not (tmp_path / "y.csv").exists()
    out = tmp_path / "agg.parquet"
    res = run("mdav", BODYFAT, out, "--columns", COLS, "--k", "4")
    assert res.returncode == 0, res.stderr
    assert con.execute(f"SELECT * FROM '{out}'").fetchall() == rwn_sql.mdav(con, str(BODYFAT), COLS.split(","), 4).fetchall()
    res = run("mdav", BODYFAT, tmp_path / "x.csv", "--columns", COLS, "--k", "1")
    assert res.returncode == 2 and "k" in res.stderr and not (tmp_path / "x.csv").exists()


def test_randomize_records_its_design_with_the_output(tmp_path, capsys):
    """rwn-sql randomize --enforce records the design (p, domain, enforcement, blocks) in the
    Parquet output's key-value metadata and in the COMMENT of a file.duckdb:table output:
    estimates over either, given no design, equal those given it (before, both recorded none
    and estimates refused). A CSV cannot carry it: the command says so, and estimates over it
    still refuse without the design."""
    import pytest

    import rwn_sql
    data = tmp_path / "in.parquet"
    duckdb.execute(f"""COPY (SELECT 1000 + i AS rid, ['F', 'M'][1 + i % 2] AS sex, ['a', 'b', 'c', 'd'][1 + (i * 7) % 4]
                     AS job FROM range(500) r(i)) TO '{data}' (FORMAT parquet)""").fetchall()
    given = dict(p=0.5, domain=["a", "b", "c", "d"], public=["sex"], enforce=(0.5, 0.1), test="exact")
    for out in (tmp_path / "out.parquet", f"{tmp_path / 'out.duckdb'}:t", tmp_path / "out.csv"):
        assert main(["randomize", str(data), str(out), "--sensitive", "job", "--p", "0.5", "--public", "sex",
                     "--seed", "7", "--id", "rid", "--enforce", "0.5,0.1"]) == 0
        con = duckdb.connect()
        if str(out).endswith(".csv"):
            assert "a CSV cannot record the design" in capsys.readouterr().err
            with pytest.raises(rwn_sql.RWNError, match="records no design"):
                rwn_sql.estimates(con, str(out), "job", 0.5, ["a", "b", "c", "d"])
            continue
        recorded = rwn_sql.estimates(con, str(out), "job", group_by=["sex"]).fetchall()
        assert recorded == rwn_sql.estimates(con, str(out), "job", group_by=["sex"], **given).fetchall()
        assert len(recorded) == 8


def test_a_parquet_folder_records_a_design_only_when_every_part_does(tmp_path):
    """A folder of Parquet parts (as Spark writes rwn-sql randomize's output) records the
    design only when every part holds the same record: a part without it, or with another,
    is refused. Catches a reader taking the first part's record for the whole folder (checked:
    fails with the agreement check removed)."""
    import pytest

    import rwn_sql
    from rwn_sql.rp.release.design_record import RECORD_KEY, parquet_record
    data = tmp_path / "in.parquet"
    duckdb.execute(f"COPY (SELECT i AS rid, ['F', 'M'][1 + i % 2] AS sex, ['a', 'b'][1 + (i * 7) % 2] AS job "
                   f"FROM range(40) r(i)) TO '{data}' (FORMAT parquet)").fetchall()
    assert main(["randomize", str(data), str(tmp_path / "p0.5.parquet"), "--sensitive", "job", "--p", "0.5",
                 "--public", "sex", "--seed", "7", "--id", "rid"]) == 0
    con = duckdb.connect()
    line = con.execute(f"SELECT decode(value) FROM parquet_kv_metadata('{tmp_path / 'p0.5.parquet'}') WHERE "
                       f"decode(key) = '{RECORD_KEY}'").fetchall()[0][0]
    folder = tmp_path / "parts.parquet"
    folder.mkdir()
    for i in range(2):
        con.execute(f"COPY (SELECT * FROM '{tmp_path / 'p0.5.parquet'}') TO '{folder / f'part-{i}.parquet'}' "
                    f"(FORMAT parquet, KV_METADATA {{'{RECORD_KEY}': '{line.replace(chr(39), chr(39) * 2)}'}})")
    assert parquet_record(con, str(folder)).p == 0.5
    quoted = line.replace("'", "''")
    for extra in ("", f", KV_METADATA {{'{RECORD_KEY}': '{quoted.replace('0.5', '0.6')}'}}"):
        con.execute(f"COPY (SELECT 1 AS x) TO '{folder / 'part-9.parquet'}' (FORMAT parquet{extra})")
        with pytest.raises(rwn_sql.RWNError, match="do not all record the same design"):
            parquet_record(con, str(folder))


def test_a_design_recorded_with_spark_type_names_reads_on_duckdb(tmp_path):
    """Spark records the sensitive column's type as Spark names it (string); DuckDB reads the
    Parquet column as VARCHAR. Estimates over such a file read its design and equal those given
    the design; a recorded type that differs (BIGINT) is still refused. Before, string was
    refused as not VARCHAR."""
    import pytest

    import rwn_sql
    from rwn_sql.rp.release.design_record import RECORD_KEY
    data = tmp_path / "in.parquet"
    duckdb.execute(f"COPY (SELECT i AS rid, ['F', 'M'][1 + i % 2] AS sex, ['a', 'b'][1 + (i * 7) % 2] AS job "
                   f"FROM range(40) r(i)) TO '{data}' (FORMAT parquet)").fetchall()
    out = tmp_path / "duck.parquet"
    assert main(["randomize", str(data), str(out), "--sensitive", "job", "--p", "0.5", "--public", "sex",
                 "--seed", "7", "--id", "rid"]) == 0
    con = duckdb.connect()
    line = con.execute(f"SELECT decode(value) FROM parquet_kv_metadata('{out}') WHERE decode(key) = '{RECORD_KEY}'"
                       ).fetchall()[0][0]
    assert '"sensitive_type": "VARCHAR"' in line
    given = dict(p=0.5, domain=["a", "b"], public=["sex"], enforce=None)
    want = rwn_sql.estimates(con, str(out), "job", group_by=["sex"], **given).fetchall()
    for kind, ok in (("string", True), ("STRING", True), ("BIGINT", False)):
        path = tmp_path / f"{kind}.parquet"
        record = line.replace('"VARCHAR"', f'"{kind}"').replace("'", "''")
        con.execute(f"COPY (SELECT * FROM '{out}') TO '{path}' (FORMAT parquet, KV_METADATA {{'{RECORD_KEY}': "
                    f"'{record}'}})").fetchall()
        if ok:
            assert rwn_sql.estimates(con, str(path), "job", group_by=["sex"]).fetchall() == want and len(want) == 4
        else:
            with pytest.raises(rwn_sql.RWNError, match="not the recorded BIGINT"):
                rwn_sql.estimates(con, str(path), "job", group_by=["sex"])


def test_every_command_shows_examples_that_parse():
    """Each command's --help has examples, and every example is a valid invocation of today's
    options (parsed by the same parser; the examples name bundled data sets)."""
    import shlex
    from rwn_sql.cli.parser import COMMAND_TABLE
    parser = build_parser()
    assert {c.name for c in COMMAND_TABLE} == set(parser._subparsers._group_actions[0].choices)
    for command in COMMAND_TABLE:
        assert command.examples
        for example in command.examples:
            words = shlex.split(example)
            assert words[:2] == ["rwn-sql", command.name]
            parser.parse_args(words[1:])
            assert (ROOT / words[2]).exists() or not words[2].startswith("examples/"), example
    res = run("audit", "--help")
    assert "examples:\n  rwn-sql audit examples/data/adult.csv" in res.stdout and "exit codes:" in res.stdout


def test_a_misspelled_option_is_named_by_its_command():
    """A misspelled option gets the command's usage and the closest option it has, not the top-level
    usage nor a complaint that a required option is missing."""
    res = run("perturb", BODYFAT, "out.csv", "--colums", "Age")
    assert res.returncode == 2 and "usage: rwn-sql perturb" in res.stderr
    assert "unrecognized option --colums (did you mean --columns?)" in res.stderr
    assert "required" not in res.stderr
    res = run("evaluate", BODYFAT, BODYFAT, "--columns", "Age", "--sdidk=2")
    assert res.returncode == 2 and "usage: rwn-sql evaluate" in res.stderr and "did you mean --sdid-k?" in res.stderr
    # a unique prefix stays an accepted abbreviation, as argparse has it
    assert build_parser().parse_args(["neighborhoods", str(BODYFAT), "--col", "Age"]).columns == ["Age"]
