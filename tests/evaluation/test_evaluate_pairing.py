"""evaluate pairs every record with its own release, or refuses: perturb's default keyed order
paired through the key gives exactly the risk figures of the input-order release of the same
key, on three shipped data sets; a release not known to be in input order is never paired by
position; releases with dropped records (on_missing='drop') evaluate with the drops counted.

Before this pairing rule, evaluate paired a keyed release by position without a word (bodyfat,
eps 0.4: linkage 0.004 instead of 0.100, SDID 0.20 instead of 0.95), and a release with dropped
records could not be evaluated against its original at all ("... is NULL in N rows")."""
import pytest

import rwn_sql
from helpers.data import BODYFAT, ROOT
from rwn_sql import RWNError

DATA = ROOT / "examples" / "data"
KEY = "pairing-key-0123456789abcdef"

# (table, SQL that loads it, columns, categorical); the two large files cut to their first rows
DATASETS = {
    "bodyfat": (f"SELECT * FROM read_csv('{BODYFAT}')", ["Age", "Weight", "Height", "Abdomen"], []),
    "adult": (f"SELECT * FROM read_csv('{DATA / 'adult.csv'}') LIMIT 800",
              ["age", "education_num", "hours_per_week", "sex", "race"], ["sex", "race"]),
    "california": (f"SELECT * FROM read_csv('{DATA / 'california_housing.csv'}') LIMIT 1000",
                   ["longitude", "latitude", "median_income", "ocean_proximity"], ["ocean_proximity"]),
}
REFUSAL = "id= / --id.*key= or seed= / --key-file or --seed.*order='input' / --keep-order"


def load(con, name):
    sql, columns, categorical = DATASETS[name]
    con.execute(f"CREATE TABLE {name} AS {sql}").fetchall()
    return columns, categorical


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_keyed_release_paired_by_its_key_has_the_risk_of_its_input_order_twin(con, name):
    """The default (keyed) release evaluated with key= gives EXACTLY the risk (and utility) of
    the order='input' release of the same key evaluated by position; paired by position it is
    refused, naming the three ways to pair. Fails without the key pairing (no key=; and the
    old code paired the keyed table by position, measuring a fraction of the risk)."""
    columns, categorical = load(con, name)
    common = dict(k=5, eps=0.1, categorical=categorical, key=KEY)
    rwn_sql.perturb(con, name, columns, into="keyed", **common)
    rwn_sql.perturb(con, name, columns, into="in_order", order="input", **common)
    assert con.execute("SELECT * FROM keyed").fetchall() != con.execute("SELECT * FROM in_order").fetchall()
    by_key = rwn_sql.evaluate(con, name, "keyed", columns, categorical=categorical, key=KEY)
    by_position = rwn_sql.evaluate(con, name, "in_order", columns, categorical=categorical)
    assert by_key.risk == by_position.risk
    assert by_key.utility == by_position.utility
    assert (by_key.paired_by, by_position.paired_by, by_key.dropped) == ("keyed order", "position", 0)
    with pytest.raises(RWNError, match="is in keyed order.*" + REFUSAL):
        rwn_sql.evaluate(con, name, "keyed", columns, categorical=categorical)
    # the wrong key pairs other records: never the true pairing's figures
    wrong = rwn_sql.evaluate(con, name, "keyed", columns, categorical=categorical, key=KEY + "x")
    assert wrong.risk.linkage_rate < by_key.risk.linkage_rate


def test_release_not_known_to_be_in_input_order_is_refused(con, tmp_path):
    """Position pairing needs a release recorded as in input order (a table or Parquet file
    perturb wrote with order='input') or order='input' said by the caller; a query, a CSV file,
    a plain table or Parquet file are refused, and so is a pairing that contradicts the recorded
    order. Fails on the old code, which paired each of them by position."""
    columns, _ = load(con, "bodyfat")
    rwn_sql.perturb(con, "bodyfat", columns, key=KEY, into="keyed")
    rwn_sql.perturb(con, "bodyfat", columns, key=KEY, into="in_order", order="input")
    csv, parquet = tmp_path / "in_order.csv", tmp_path / "keyed.parquet"
    con.execute(f"COPY in_order TO '{csv}' (HEADER)").fetchall()
    for released in ("SELECT * FROM in_order", str(csv), "CREATE_PLAIN"):
        if released == "CREATE_PLAIN":
            con.execute("CREATE TABLE plain AS SELECT * FROM in_order").fetchall()
            released = "plain"
        with pytest.raises(RWNError, match="is not known to be in input order.*" + REFUSAL):
            rwn_sql.evaluate(con, "bodyfat", released, columns)
        said = rwn_sql.evaluate(con, "bodyfat", released, columns, order="input")
        assert said.risk == rwn_sql.evaluate(con, "bodyfat", "in_order", columns).risk
    with pytest.raises(RWNError, match="records that it is in input order"):
        rwn_sql.evaluate(con, "bodyfat", "in_order", columns, key=KEY)
    with pytest.raises(RWNError, match="records that it is in keyed order"):
        rwn_sql.evaluate(con, "bodyfat", "keyed", columns, order="input")
    with pytest.raises(RWNError, match="one way to pair"):
        rwn_sql.evaluate(con, "bodyfat", "keyed", columns, key=KEY, order="input")
    with pytest.raises(RWNError, match="order must be 'input'"):
        rwn_sql.evaluate(con, "bodyfat", "keyed", columns, order="keyed")
    # a lazy relation records nothing: written elsewhere by the caller it is unknown
    con.execute(f"COPY ({rwn_sql.perturb(con, 'bodyfat', columns, key=KEY).sql_query()}) TO '{parquet}'").fetchall()
    with pytest.raises(RWNError, match="is not known to be in input order"):
        rwn_sql.evaluate(con, "bodyfat", str(parquet), columns)
    assert rwn_sql.evaluate(con, "bodyfat", str(parquet), columns, key=KEY).risk == \
        rwn_sql.evaluate(con, "bodyfat", "in_order", columns).risk


def test_release_with_dropped_records_evaluates_by_key_by_id_and_by_position(con):
    """on_missing='drop' (california: total_bedrooms NULL in 6 of the 1,000 rows): the keyed
    release paired by its key, and by an id carried through, leaves the 6 original records
    out, counts them in `dropped`, and gives exactly the risk of the input-order release
    against the original without them. Fails on the old code: 'column total_bedrooms of the
    original data is NULL in 6 rows' (id=), and no key= pairing."""
    load(con, "california")
    con.execute("CREATE TABLE cal AS SELECT row_number() OVER () AS rid, * FROM california").fetchall()
    columns = ["longitude", "latitude", "total_bedrooms", "median_income", "ocean_proximity"]
    categorical = ["ocean_proximity"]
    missing = con.execute("SELECT count(*) FROM cal WHERE total_bedrooms IS NULL").fetchall()[0][0]
    assert missing == 6
    common = dict(k=5, eps=0.2, categorical=categorical, key=KEY, on_missing="drop")
    rwn_sql.perturb(con, "cal", columns, into="keyed", **common)
    rwn_sql.perturb(con, "cal", columns, into="in_order", order="input", **common)
    kept = "SELECT * FROM cal WHERE total_bedrooms IS NOT NULL"
    truth = rwn_sql.evaluate(con, kept, "in_order", columns, categorical=categorical)
    assert truth.rows == 1000 - missing
    for how in (dict(key=KEY), dict(id="rid")):
        ev = rwn_sql.evaluate(con, "cal", "keyed", columns, categorical=categorical, **how)
        assert (ev.rows, ev.dropped) == (1000 - missing, missing)
        assert ev.risk == truth.risk and ev.utility == truth.utility
    # the input-order release by position against the whole original: the same drops left out
    # (failed before: 'column total_bedrooms of the original data is NULL in 6 rows')
    ev = rwn_sql.evaluate(con, "cal", "in_order", columns, categorical=categorical)
    assert (ev.paired_by, ev.rows, ev.dropped) == ("position", 1000 - missing, missing)
    assert ev.risk == truth.risk and ev.utility == truth.utility
    # evaluated on other columns than perturb's, the drop cannot be recomputed: refused
    with pytest.raises(RWNError, match="994 rows but the original .* 1000, 1000 of them with a value"):
        rwn_sql.evaluate(con, "cal", "keyed", ["longitude", "latitude"], key=KEY)
    with pytest.raises(RWNError, match="994 rows but the original .* 1000, 1000 of them with a value"):
        rwn_sql.evaluate(con, "cal", "in_order", ["longitude", "latitude"])
    # a NULL in a record the release keeps is still refused
    with pytest.raises(RWNError, match="column 'total_bedrooms' of the original data is NULL in 6 rows"):
        rwn_sql.evaluate(con, "cal", "SELECT * FROM keyed UNION ALL "
                                     "SELECT * REPLACE (0 AS total_bedrooms) FROM cal WHERE total_bedrooms IS NULL",
                         columns, categorical=categorical, id="rid")


def run_cli(capsys, *args):
    """rwn-sql in this process (as tests/rp/test_untrusted_inputs.py runs it): exit code, stdout, stderr."""
    from rwn_sql.cli.main import main
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_pairs_by_key_file_refuses_unknown_order_and_reads_recorded_order(tmp_path, capsys):
    """rwn-sql evaluate: a default (keyed) CSV release with --key-file prints the figures of the
    --keep-order CSV release with --input-order; without a pairing it exits 2 naming --id,
    --key-file and --keep-order; a --keep-order Parquet release (recorded order) needs no flag.
    Fails on the old CLI, which paired the keyed CSV by position."""
    key_file = tmp_path / "secret.key"
    key_file.write_text(KEY + "\n")
    cols = "Age,Weight,Height"
    outputs = {}
    for name, extra in (("keyed.csv", []), ("in_order.csv", ["--keep-order"]), ("in_order.parquet", ["--keep-order"])):
        code, _, err = run_cli(capsys, "perturb", BODYFAT, tmp_path / name, "--columns", cols, "--eps", "0.3",
                               "--key-file", key_file, *extra)
        assert code == 0, err
    for name, extra in (("keyed.csv", ["--key-file", key_file]), ("in_order.csv", ["--input-order"]),
                        ("in_order.parquet", [])):
        code, out, err = run_cli(capsys, "evaluate", BODYFAT, tmp_path / name, "--columns", cols, *extra)
        assert code == 0, err
        outputs[name] = out.split("\n", 2)[2]        # the measures, after the header lines
    assert outputs["keyed.csv"] == outputs["in_order.csv"] == outputs["in_order.parquet"]
    code, _, err = run_cli(capsys, "evaluate", BODYFAT, tmp_path / "keyed.csv", "--columns", cols)
    assert code == 2
    assert "not known to be in input order" in err
    assert all(flag in err for flag in ("--id", "--key-file", "--keep-order"))
    code, _, err = run_cli(capsys, "evaluate", BODYFAT, tmp_path / "in_order.parquet", "--columns", cols,
                           "--key-file", key_file)
    assert code == 2 and "records that it is in input order" in err
