"""The baselines' input checks are written once (baselines.check_rank_swap_inputs and
check_mdav_inputs): rank_swap, mdav and tune.sweep refuse the same inputs with the same words,
the sweep before any release is drawn; and files.published names an output once, however often
it is published (tune.csv after every setting)."""
import pytest

import rwn_sql
from helpers.data import BODYFAT
from rwn_sql import RWNError
from rwn_sql.engines import files
from rwn_sql.evaluation import baselines, tune

KEY = "baseline-checks-key-0123456789"


@pytest.fixture
def body(con):
    con.execute(f"CREATE TABLE body AS SELECT *, 'x' AS label, 1 AS replicate FROM read_csv('{BODYFAT}') "
                f"LIMIT 60").fetchall()
    return con


def _no_release_drawn(monkeypatch):
    def drawn(*args, **kwargs):
        raise AssertionError("a release was drawn before the checks")
    for module, name in ((tune, "rwn_releases"), (baselines, "rank_swap_statements"), (baselines, "mdav_statement")):
        monkeypatch.setattr(module, name, drawn)


@pytest.mark.parametrize("api, sweep, message", [
    (dict(rank_swap=dict(p_percent=0)), dict(rank_swap=[0.0]), r"p_percent must be in \(0, 100\], got 0"),
    (dict(rank_swap=dict(p_percent=10, columns=["Age", "label"])), dict(rank_swap=[10.0], columns=["Age", "label"]),
     "column 'label' has type VARCHAR; rank swapping needs an ordered column"),
    (dict(mdav=dict(k=61)), dict(mdav=[61]), r"k = 61 is larger than the number of records \(60\)"),
    (dict(mdav=dict(k=1)), dict(mdav=[1.0]), r"k must be >= 2 \(groups of at least k records"),
    (dict(mdav=dict(k=2.5)), dict(mdav=[2.5]), "k must be an integer >= 2, got 2.5"),
    (dict(mdav=dict(k=3, columns=["Age", "label"])), dict(mdav=[3], columns=["Age", "label"]),
     "column 'label' has type VARCHAR; MDAV needs a numeric column"),
])
def test_the_api_and_the_sweep_refuse_alike(body, monkeypatch, api, sweep, message):
    (method, kwargs), = api.items()
    kwargs = {"columns": ["Age", "Weight"], **kwargs}
    with pytest.raises(RWNError, match=message):
        if method == "rank_swap":
            rwn_sql.rank_swap(body, "body", kwargs.pop("columns"), kwargs.pop("p_percent"), key=KEY)
        else:
            rwn_sql.mdav(body, "body", kwargs.pop("columns"), **kwargs)
    _no_release_drawn(monkeypatch)
    columns = sweep.pop("columns", ["Age", "Weight"])
    with pytest.raises(RWNError, match=message):
        tune.sweep(body, "body", columns, [0.2], reps=2, key=KEY, **sweep)


def test_the_sweep_checks_the_replicate_column_before_any_work(body, monkeypatch):
    """rank swapping's reps number the replicates in a column named 'replicate': the sweep refuses
    such a source up front, as rank_swap_statements(reps=) does."""
    _no_release_drawn(monkeypatch)
    with pytest.raises(RWNError, match="has a column named 'replicate'"):
        tune.sweep(body, "body", ["Age", "Weight"], [0.2], reps=2, key=KEY, rank_swap=[10.0])


def test_a_grid_whole_number_is_a_group_size(body):
    result = tune.sweep(body, "SELECT Age, Weight FROM body", ["Age", "Weight"], [], reps=1, key=KEY, mdav=[3.0])
    assert [(s.method, s.value) for s in result.settings] == [("mdav", 3.0)]


def test_published_names_an_output_once(tmp_path):
    before = list(files.published)
    target = str(tmp_path / "out.csv")
    try:
        for text in ("one", "two"):
            tmp = tmp_path / f"tmp-{text}"
            tmp.write_text(text)
            files.publish(str(tmp), target, overwrite=True)
        assert files.published.count(target) == 1 and open(target).read() == "two"
    finally:
        files.published[:] = before
