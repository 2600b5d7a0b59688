"""Sweeps and the tuning report: the numbers equal what the evaluation API returns."""
import base64
import json
import os
from html.parser import HTMLParser

import duckdb
import numpy as np
import pytest

import rwn_sql
from helpers.data import BODYFAT, BODYFAT_COLUMNS
from rwn_sql import RWNError
from rwn_sql.evaluation import tune, tune_report

COLS = ["Age", "Weight", "Height", "Abdomen", "Chest"]


def test_parse_grid():
    grid = tune.parse_grid("0.2:1.2:0.05")
    assert len(grid) == 21 and grid[0] == 0.2 and grid[-1] == 1.2 and grid[1] == 0.25
    assert tune.parse_grid("0.3,0.5") == [0.3, 0.5]
    for bad, message in [("1:0:0.1", "is empty"), ("0:1:0", "step must be > 0"), ("a:b", "START:STOP:STEP"), ("", "empty")]:
        with pytest.raises(RWNError, match=message):
            tune.parse_grid(bad)


def test_sweep_equals_the_evaluation_api(con, bodyfat):
    key, reps = "sweep-key-0123456789", 3
    result = tune.sweep(con, bodyfat, COLS, [0.3, 0.5], reps=reps, target="Weight", key=key)
    assert [s.value for s in result.settings] == [0.3, 0.5]
    for setting in result.settings:
        evs = []
        for r in range(reps):      # release r of the sweep is perturb(key=key#r)
            rwn_sql.perturb(con, bodyfat, COLS, k=5, eps=setting.value, key=f"{key}#{r}", into="one", replace=True,
                            order="input")   # evaluate pairs rows by position
            evs.append(rwn_sql.evaluate(con, bodyfat, "one", COLS, target="Weight"))
        for name, (_, get) in tune.MEASURES.items():
            values = [get(ev) for ev in evs]
            if values[0] is None:
                assert setting.measures[name] == (None, None)
                continue
            assert setting.measures[name][0] == pytest.approx(np.mean(values), rel=1e-12, abs=1e-15)
            assert setting.measures[name][1] == pytest.approx(np.std(values, ddof=1), rel=1e-9, abs=1e-15)
        sizes = [r[1] for r in rwn_sql.neighborhoods(con, bodyfat, COLS, k=5, eps=setting.value).fetchall()]
        assert setting.sizes["size_max"] == max(sizes) and setting.sizes["share_at_k"] == np.mean(np.array(sizes) == 5)


def test_sweep_risk_is_that_of_default_releases_paired_by_their_keys(con, bodyfat):
    """tune evaluates its own releases by position, which is right because each replicate is in
    input order: its risk means equal those of the DEFAULT (keyed-order) perturb releases with
    the key key#r, paired through that key. Fails if tune's releases were in keyed order, or
    (before key pairing) for want of evaluate(key=)."""
    key, reps = "sweep-key-0123456789", 2
    result = tune.sweep(con, bodyfat, COLS, [0.4], reps=reps, key=key)
    linkage, sdid = [], []
    for r in range(reps):
        rwn_sql.perturb(con, bodyfat, COLS, k=5, eps=0.4, key=f"{key}#{r}", into="one", replace=True)
        ev = rwn_sql.evaluate(con, bodyfat, "one", COLS, key=f"{key}#{r}")
        linkage.append(ev.risk.linkage_rate)
        sdid.append(ev.risk.sdid)
    assert result.settings[0].measures["linkage_rate"][0] == pytest.approx(np.mean(linkage), rel=1e-12)
    assert result.settings[0].measures["sdid"][0] == pytest.approx(np.mean(sdid), rel=1e-12)


def _batched_against_perturb(con, source, columns, eps_values, k, q, reps, categorical=(), strata=()):
    """Every release of rwn_releases (all eps from one neighbourhood search) equals perturb's
    with the same eps, strata and key#r, row for row; the sizes and closest distances equal the
    neighbourhoods API's."""
    from rwn_sql.engines import duckdb_backend
    be = duckdb_backend.DuckDBBackend(con)
    key = "batched-key-0123456789"
    sizes = []
    releases = tune.rwn_releases(be, be.source(source), columns, eps_values, k=k, q=q, reps=reps, scale="minmax",
                                 categorical=categorical, key=key, into="batched", strata=strata)
    names = ", ".join(f'"{r[0]}"' for r in con.execute(f"DESCRIBE {source}").fetchall())
    try:
        for setting, where, size, dcr in releases:
            eps = eps_values[setting]
            hoods = rwn_sql.neighborhoods(con, source, columns, k=k, eps=eps, categorical=categorical,
                                          strata=strata).fetchnumpy()
            assert np.array_equal(size, np.asarray(hoods["size"], float))
            assert np.array_equal(dcr, np.asarray(hoods["dcr"], float))
            for r in range(reps):
                rwn_sql.perturb(con, source, columns, k=k, eps=eps, q=q, categorical=categorical, strata=strata,
                                key=f"{key}#{r}", into="one", replace=True, order="input")
                one = con.execute("SELECT * FROM one").fetchall()
                batched = con.execute(f"SELECT {names} FROM batched WHERE {where} AND replicate = {r} "
                                      f"ORDER BY rowid").fetchall()
                assert batched == one, (eps, r)
            sizes.append((size, dcr))
    finally:
        releases.close()
    assert len(sizes) == len(eps_values)
    con.execute("DROP TABLE batched").fetchall()
    return sizes


@pytest.fixture(params=["one statement", "one per eps"])
def release_path(request, set_limits):
    """Both ways rwn_releases draws: the whole grid in one statement (small data) or one
    statement per eps (forced here by a zero copy budget)."""
    if request.param == "one per eps":
        set_limits(ONE_STATEMENT_COPY_BYTES=0)
    return request.param


def test_batched_releases_equal_perturb(con, bodyfat, release_path):
    # eps not in order: each setting still gets its own eps's neighbourhoods
    sizes = _batched_against_perturb(con, bodyfat, BODYFAT_COLUMNS, [0.6, 0.25, 0.95, 0.4], k=5, q=1.0, reps=3)
    assert sizes[1][0].max() < sizes[0][0].max() < sizes[2][0].max()     # the prefixes differ


def test_batched_releases_equal_perturb_with_ties_empty_and_categories(con, release_path):
    """Integer grid data (exact ties at the radius), k = 0 (empty neighbourhoods: NULL cells),
    q < 1 (kept cells) and a categorical distance column, against perturb."""
    rng = np.random.default_rng(7)
    n = 60
    con.execute("CREATE TABLE grid AS SELECT * FROM (VALUES " + ", ".join(
        f"({int(a)}, {int(b)}, '{c}', {i})" for i, (a, b, c) in
        enumerate(zip(rng.integers(0, 10, n), rng.integers(0, 5, n), rng.choice(list("xyz"), n)))) +
        ") AS t(a, b, c, other)").fetchall()
    # b's range is 4: eps 0.25 is exactly one step of b, a tie at the radius
    for k, eps_values in ((0, [0.1, 0.05, 0.25, 0.15]), (2, [0.1, 0.0, 0.25])):
        sizes = _batched_against_perturb(con, "grid", ["a", "b", "c"], eps_values, k=k, q=0.7, reps=2,
                                         categorical=["c"])
        if k == 0:
            assert (sizes[1][0] == 0).any() and sizes[2][0].sum() > sizes[0][0].sum()
    # decimal steps: the two neighbours at exactly 0.1 get different computed distances, and
    # only the tie factor keeps both (METHODS.md, "Exact ties")
    con.execute("CREATE TABLE steps AS SELECT i / 10 AS x, i AS y FROM range(11) AS t(i)").fetchall()
    sizes = _batched_against_perturb(con, "steps", ["x"], [0.05, 0.0], k=1, q=1.0, reps=2)
    assert (sizes[0][0][1:-1] == 2).all()


def _banded(con, name="banded"):
    """bodyfat with a stratum column `band` (age bands) and a second one `half`."""
    con.execute(f"CREATE TABLE {name} AS SELECT *, CASE WHEN Age < 40 THEN 'young' WHEN Age < 55 THEN 'mid' "
                f"ELSE 'old' END AS band, CAST(row_number() OVER () % 2 AS INTEGER) AS half "
                f"FROM read_csv('{BODYFAT}')").fetchall()
    return name


def test_batched_releases_with_strata_equal_perturb(con, release_path):
    """With strata, release r of every eps equals perturb(strata=..., key=key#r) row for row,
    by both paths (the one-statement SQL reads the within-stratum lists as it reads any)."""
    sizes = _batched_against_perturb(con, _banded(con), ["Weight", "Height", "Abdomen"], [0.1, 0.3, 0.2], k=3,
                                     q=0.9, reps=2, strata=["band", "half"])
    assert sizes[0][0].max() < sizes[2][0].max() < sizes[1][0].max()
    # ties, k = 0 (empty neighbourhoods) and a categorical column, within strata
    rng = np.random.default_rng(11)
    n = 50
    con.execute("CREATE TABLE sgrid AS SELECT * FROM (VALUES " + ", ".join(
        f"({int(a)}, {int(b)}, '{c}', '{g}')" for a, b, c, g in
        zip(rng.integers(0, 10, n), rng.integers(0, 5, n), rng.choice(list("xyz"), n), rng.choice(list("PQ"), n))) +
        ") AS t(a, b, c, g)").fetchall()
    sizes = _batched_against_perturb(con, "sgrid", ["a", "b", "c"], [0.1, 0.25], k=0, q=0.7, reps=2,
                                     categorical=["c"], strata=["g"])
    assert (sizes[0][0] == 0).any()


def test_sweep_with_strata_equals_perturb_with_strata(con):
    key, reps, cols = "strata-key-0123456789", 2, ["Weight", "Height", "Abdomen"]
    source = _banded(con)
    result = tune.sweep(con, source, cols, [0.3], reps=reps, k=3, key=key, strata=["band"])
    assert result.strata == ["band"] and result.to_dict()["strata"] == ["band"]
    sdid = []
    for r in range(reps):
        rwn_sql.perturb(con, source, cols, k=3, eps=0.3, strata=["band"], key=f"{key}#{r}", into="one", replace=True,
                        order="input")
        sdid.append(rwn_sql.evaluate(con, source, "one", cols).risk.sdid)
    assert result.settings[0].measures["sdid"][0] == pytest.approx(np.mean(sdid), rel=1e-12)
    sizes = [r[1] for r in rwn_sql.neighborhoods(con, source, cols, k=3, eps=0.3, strata=["band"]).fetchall()]
    assert result.figure1[0.3]["size"] == [float(v) for v in sizes]


def test_batched_releases_do_not_depend_on_threads(release_path):
    from helpers.data import BODYFAT
    from rwn_sql.engines import duckdb_backend
    tables = []
    for threads in (1, 2):
        c = duckdb.connect()
        c.execute(f"SET threads = {threads}").fetchall()
        c.execute(f"CREATE TABLE bodyfat AS SELECT * FROM read_csv('{BODYFAT}')").fetchall()
        be = duckdb_backend.DuckDBBackend(c)
        releases = tune.rwn_releases(be, be.source("bodyfat"), BODYFAT_COLUMNS, [0.3, 0.9, 0.6], k=5, q=0.8, reps=4,
                                     scale="minmax", categorical=(), key="threads-key-0123456789", into="batched")
        try:
            tables.append([c.execute(f"SELECT * FROM batched WHERE {where} ORDER BY rowid").fetchall()
                           for _, where, _, _ in releases])
        finally:
            releases.close()
            c.close()
    assert tables[0] == tables[1] and len(tables[0]) == 3


def test_sweep_baselines_equal_the_api(con, bodyfat):
    key = "baseline-key-0123456789"
    result = tune.sweep(con, bodyfat, COLS, [], reps=2, key=key, rank_swap=[12.0], mdav=[4])
    assert [(s.method, s.value, s.reps) for s in result.settings] == [("rank_swap", 12.0, 2), ("mdav", 4.0, 1)]
    swaps = []
    for r in range(2):
        rwn_sql.rank_swap(con, bodyfat, COLS, 12.0, key=f"{key}#{r}", into="one", replace=True)
        swaps.append(rwn_sql.evaluate(con, bodyfat, "one", COLS).risk.sdid)
    assert result.settings[0].measures["sdid"][0] == pytest.approx(np.mean(swaps), rel=1e-12)
    rwn_sql.mdav(con, bodyfat, COLS, 4, into="agg")
    assert result.settings[1].measures["corr_mad"][0] == rwn_sql.evaluate(con, bodyfat, "agg", COLS).utility.corr_mad


class _Report(HTMLParser):
    def __init__(self):
        super().__init__()
        self.images, self.data, self.cells, self._script, self.attrs = {}, {}, [], None, {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.images[a["id"]] = a["src"]
            self.attrs[a["id"]] = a
        elif tag == "script" and a.get("type") == "application/json":
            self._script = a["id"]
        elif tag == "td" and "data-value" in a:
            self.cells.append(a["data-value"])

    def handle_data(self, data):
        if self._script:
            self.data[self._script] = json.loads(data)
            self._script = None


def test_report_numbers_and_plots_equal_the_api(con, bodyfat, tmp_path):
    result = tune.sweep(con, bodyfat, BODYFAT_COLUMNS, [0.25, 0.4, 0.8], reps=2, target="BodyFat", seed=3)
    path = tmp_path / "report.html"
    tune_report.report_html(result, path)
    page = _Report()
    page.feed(path.read_text())
    for plot in ("plot-figure1", "plot-tradeoff"):
        png = base64.b64decode(page.images[plot].split(",", 1)[1])
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    # Figure 1: per record, neighbourhood size and distance to the closest record, as the API gives them
    for eps in (0.25, 0.4, 0.8):
        rows = rwn_sql.neighborhoods(con, bodyfat, BODYFAT_COLUMNS, k=5, eps=eps).fetchall()
        plotted = page.data["data-figure1"][repr(eps)]
        assert plotted["size"] == [float(r[1]) for r in rows] and plotted["dcr"] == [r[3] for r in rows]
    # risk against utility: one point per setting, the settings' means
    points = page.data["data-tradeoff"]
    assert [(p["utility_loss"], p["risk"]) for p in points] == \
        [(s.measures["corr_mad"][0], s.measures["sdid"][0]) for s in result.settings]
    # with their error bars (the standard deviations over the releases) and labels
    assert [(p["utility_sd"], p["risk_sd"], p["point"]) for p in points] == \
        [(s.measures["corr_mad"][1], s.measures["sdid"][1], f"eps={s.value:g}") for s in result.settings]
    assert page.attrs["plot-figure1"]["data-xscale"] == tune_report.figure1_xscale(result) == "log"    # sizes 5 to 200+
    # every number of the table
    expected = []
    for s in result.settings:
        expected += [s.value, s.sizes["size_max"], s.sizes["share_at_k"]]
        for m in tune.MEASURES:
            expected += list(s.measures[m])
    got = [float(v) if v else None for v in page.cells]
    assert got == [None if v is None else float(v) for v in expected]
    # the CSV holds the same numbers
    csv_path = tmp_path / "tune.csv"
    result.to_csv(csv_path)
    lines = csv_path.read_text().splitlines()
    assert len(lines) == 1 + len(result.settings)
    header = lines[0].split(",")
    first = dict(zip(header, lines[1].split(",")))
    assert float(first["corr_mad_mean"]) == result.settings[0].measures["corr_mad"][0]


def test_sweep_bad_input(con, bodyfat):
    with pytest.raises(RWNError, match="the sweep is empty"):
        tune.sweep(con, bodyfat, COLS, [], reps=2)
    with pytest.raises(RWNError, match="reps must be an integer >= 1"):
        tune.sweep(con, bodyfat, COLS, [0.3], reps=0)
    with pytest.raises(RWNError, match="column 'Nope' is not in"):
        tune.sweep(con, bodyfat, COLS + ["Nope"], [0.3], reps=1)
    with pytest.raises(RWNError, match="eps must be >= 0"):
        tune.sweep(con, bodyfat, COLS, [-0.1], reps=1)


def test_progress_counts_every_release(con, bodyfat):
    """progress(done, total, label): called when the sweep starts (done 0), then for every
    release evaluated, up to done = total = reps per eps and per P, plus one per MDAV k."""
    calls = []
    tune.sweep(con, bodyfat, COLS, [0.3, 0.5], reps=2, key="progress-key-0123456789", rank_swap=[12.0], mdav=[4],
               progress=lambda done, total, label: calls.append((done, total, label)))
    total = 2 * 2 + 2 + 1
    assert calls[0] == (0, total, "checking the source and the settings")      # at once, before any work
    assert calls[1][:2] == (0, total) and calls[1][2].startswith("rwn eps=0.3")
    assert calls[-1][:2] == (total, total)
    dones = [done for done, _, _ in calls]
    assert dones == sorted(dones) and set(dones) == set(range(total + 1))
    assert {t for _, t, _ in calls} == {total}


def test_progress_bar_lines_and_redraw():
    import io
    import time
    log = io.StringIO()
    with tune.ProgressBar(log, redraw=False, width=10) as bar:
        bar(0, 4, "rwn eps=0.3: neighbourhoods and 2 releases")
        bar(4, 4, "done")
        bar(1, 3, "attacks at k=5", unit="candidates attacked")
    lines = log.getvalue().splitlines()
    assert lines[0].startswith("[----------] 0/4 releases  rwn eps=0.3") and lines[1].startswith("[##########] 4/4")
    assert lines[2].startswith("[###-------] 1/3 candidates attacked  attacks at k=5")
    term = io.StringIO()
    with tune.ProgressBar(term, redraw=True, tick=0.01) as bar:
        bar(1, 2, "working")
        time.sleep(0.1)                  # the ticker redraws while nothing else reports
    text = term.getvalue()
    assert text.count("\r") > 3 and text.endswith("\n") and text.count("\n") == 1
    assert "1/2 releases  working" in text


def test_cli_progress_goes_to_stderr_only_when_asked(tmp_path):
    import subprocess
    import sys
    from helpers.data import BODYFAT
    base = [sys.executable, "-m", "rwn_sql.cli", "tune", str(BODYFAT), "--columns", ",".join(COLS), "--eps", "0.3",
            "--reps", "2", "--no-report", "--seed", "1", "--output-dir", str(tmp_path)]
    quiet = subprocess.run(base, capture_output=True, text=True)
    loud = subprocess.run(base + ["--progress"], capture_output=True, text=True)
    assert quiet.returncode == loud.returncode == 0, quiet.stderr + loud.stderr
    assert quiet.stdout == loud.stdout == f"wrote {tmp_path / 'tune.csv'}\n"     # stdout stays machine-readable
    assert "releases" not in quiet.stderr
    assert "0/2 releases" in loud.stderr and "2/2 releases" in loud.stderr


def _no_release_drawn(monkeypatch):
    """Any release drawn (RWN or a baseline) fails the test."""
    from rwn_sql.evaluation import baselines

    def drawn(*args, **kwargs):
        raise AssertionError("a release was drawn before the checks")
    for module, name in ((tune, "rwn_releases"), (baselines, "rank_swap_statements"), (baselines, "mdav_statement")):
        monkeypatch.setattr(module, name, drawn)


def test_baselines_are_checked_before_any_work(con, monkeypatch):
    """Strata with a baseline, a P or k out of range, a column a baseline cannot take: refused
    before any release is drawn; progress has only said it is checking, and no setting came."""
    import time
    source = _banded(con)
    _no_release_drawn(monkeypatch)
    cases = [(dict(strata=["band"], rank_swap=[10.0]), "rank swapping cannot honour strata \\(band\\)"),
             (dict(strata=["band"], mdav=[3]), "MDAV cannot honour strata"),
             (dict(rank_swap=[0.0]), "p_percent must be in \\(0, 100\\]"),
             (dict(mdav=[1]), "MDAV's k must be >= 2 \\(groups of at least k records"),
             (dict(mdav=[2.5]), "MDAV's k must be an integer >= 2, got 2.5"),
             (dict(mdav=[500]), "MDAV's k = 500 is larger than the number of records \\(241\\)"),
             (dict(categorical=["Weight", "Height"], mdav=[3]), "every column is categorical"),
             (dict(mdav=[3], columns=["Weight", "Height", "band"]), "column 'band' has type VARCHAR; MDAV needs")]
    for params, message in cases:
        calls, saved = [], []
        params = {"columns": ["Weight", "Height"], **params}
        start = time.perf_counter()
        with pytest.raises(RWNError, match=message):
            tune.sweep(con, source, params.pop("columns"), [0.2, 0.5], reps=3, key="check-key-0123456789",
                       progress=lambda *a: calls.append(a), on_setting=saved.append, **params)
        assert time.perf_counter() - start < 2
        assert [label for _, _, label in calls] == ["checking the source and the settings"] and saved == []


def test_baselines_leave_categorical_columns_and_say_so(con, tmp_path):
    """The baselines change the columns but the categorical ones, which they leave as they are
    (the result's notes say so); their measures are those of the API's releases of the other
    columns, evaluated with the categorical column."""
    source = _banded(con)
    cols, key = ["Weight", "Height", "band"], "categorical-key-0123456789"
    result = tune.sweep(con, source, cols, [], reps=2, key=key, categorical=["band"], rank_swap=[20.0], mdav=[4])
    assert result.notes == ["rank swapping and MDAV leave the categorical column band unchanged (RWN perturbs it): "
                            "their measures are those of releases with the original values there"]
    assert result.to_dict()["notes"] == result.notes
    rwn_sql.mdav(con, source, ["Weight", "Height"], 4, into="agg")
    ev = rwn_sql.evaluate(con, source, "agg", cols, categorical=["band"])
    assert result.settings[1].measures["sdid"][0] == ev.risk.sdid
    swaps = []
    for r in range(2):
        rwn_sql.rank_swap(con, source, ["Weight", "Height"], 20.0, key=f"{key}#{r}", into="one", replace=True)
        swaps.append(rwn_sql.evaluate(con, source, "one", cols, categorical=["band"]).utility.corr_mad)
    assert result.settings[0].measures["corr_mad"][0] == pytest.approx(np.mean(swaps), rel=1e-12)
    tune_report.report_html(result, tmp_path / "report.html")
    assert f"<p class='note'>Note: {result.notes[0]}.</p>" in (tmp_path / "report.html").read_text()


def _run_cli(argv, capsys):
    from rwn_sql.cli.main import main
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_keeps_the_settings_done_when_a_later_one_fails(tmp_path, monkeypatch, capsys):
    """tune.csv is written after every setting: MDAV failing after the RWN and rank-swapping
    settings leaves them in it (exit 2, one line says so). --output-dir is made, parents too."""
    from rwn_sql.evaluation import baselines

    def fails(*args, **kwargs):
        raise RWNError("MDAV broke")
    monkeypatch.setattr(baselines, "mdav_statement", fails)
    out = tmp_path / "new" / "folder"
    code, stdout, stderr = _run_cli(["tune", str(BODYFAT), "--columns", ",".join(COLS), "--eps", "0.3,0.5",
                                     "--reps", "2", "--rank-swap", "10", "--mdav", "3", "--seed", "1",
                                     "--output-dir", str(out)], capsys)
    assert code == 2 and stdout == ""
    assert stderr.splitlines() == [f"rwn-sql tune: stopped after 3 settings; {out / 'tune.csv'} holds them",
                                   "rwn-sql: error: MDAV broke"]
    rows = (out / "tune.csv").read_text().splitlines()
    assert [r.split(",")[:3] for r in rows[1:]] == [["rwn", "eps", "0.3"], ["rwn", "eps", "0.5"],
                                                     ["rank_swap", "P", "10.0"]]
    assert sorted(os.listdir(out)) == ["tune.csv"]


def test_cli_strata_and_key_file(tmp_path, capsys):
    """--strata and --key-file: the CSV holds what sweep(strata=..., key=...) gives."""
    con = duckdb.connect()
    data = tmp_path / "banded.csv"
    con.execute(f"COPY {_banded(con)} TO '{data}'").fetchall()
    key = tmp_path / "secret.key"
    key.write_text("tune-cli-strata-key-0123456789\n")
    code, stdout, stderr = _run_cli(["tune", str(data), "--columns", "Weight,Height,Abdomen", "--eps", "0.2,0.4",
                                     "--k", "3", "--reps", "2", "--strata", "band", "--key-file", str(key),
                                     "--no-report", "--output-dir", str(tmp_path)], capsys)
    assert code == 0 and stderr == "", stderr
    expected = tune.sweep(con, "banded", ["Weight", "Height", "Abdomen"], [0.2, 0.4], k=3, reps=2, strata=["band"],
                          key="tune-cli-strata-key-0123456789")
    expected.to_csv(tmp_path / "expected.csv")
    assert (tmp_path / "tune.csv").read_text() == (tmp_path / "expected.csv").read_text()
    # strata with a baseline: refused at once (exit 2), nothing written
    out = tmp_path / "refused"
    code, stdout, stderr = _run_cli(["tune", str(data), "--columns", "Weight,Height", "--eps", "0.2", "--reps", "2",
                                     "--strata", "band", "--mdav", "3", "--seed", "1", "--output-dir", str(out)],
                                    capsys)
    assert code == 2 and "MDAV cannot honour strata (band)" in stderr and os.listdir(out) == []


def test_cli_axes_are_checked_before_any_work(tmp_path, capsys):
    from rwn_sql.cli import parser
    assert parser.TUNE_RISK.replace(" or ", ", ").split(", ") == tune.measures_of("risk")
    assert parser.TUNE_UTILITY.replace(" or ", ", ").split(", ") == tune.measures_of("utility")
    base = ["tune", str(BODYFAT), "--columns", "Age,Weight", "--eps", "0.3", "--output-dir", str(tmp_path / "o")]
    for extra, message in ((["--risk", "corr_mad"], "'corr_mad' is not a risk measure the sweep keeps: choose the "
                            "risk axis among dcr_mean, linkage_rate, sdid, unique_survival, sdid_rwn_paper, rmdid, dcr_mean_raw"),
                           (["--utility", "nope"], "'nope' is not a utility measure the sweep keeps: choose the "
                            "utility axis among corr_mad, pca_loading_mad, ks_max, ols_ci_overlap, ols_r2"),
                           (["--utility", "ols_r2"], "the utility measure 'ols_r2' needs a target column for "
                            "the OLS fit (--target)")):
        code, _, stderr = _run_cli(base + extra, capsys)
        assert code == 2 and stderr.strip() == f"rwn-sql: error: {message}"
    assert not (tmp_path / "o").exists()


def test_the_help_examples_of_tune_run(tmp_path, capsys):
    """Every example of `rwn-sql tune --help` runs (here into a temporary folder)."""
    import shlex
    from rwn_sql.cli.parser import COMMAND_TABLE
    root = BODYFAT.parents[2]
    examples = next(c.examples for c in COMMAND_TABLE if c.name == "tune")
    assert any("--strata" in e or "--risk" in e for e in examples)
    for i, example in enumerate(examples):
        words = shlex.split(example)[1:]
        words[1] = str(root / words[1])
        code, stdout, stderr = _run_cli(words + ["--output-dir", str(tmp_path / str(i))], capsys)
        assert code == 0, stderr
        assert stdout.splitlines() == [f"wrote {tmp_path / str(i) / name}" for name in ("tune.csv", "report.html")]


def test_the_tradeoff_plot_labels_every_point_with_error_bars(con, bodyfat):
    """Every point labelled with its parameter, error bars of the replicates' standard
    deviations (none for MDAV's one release), the axes chosen among the measures."""
    from matplotlib.container import ErrorbarContainer
    result = tune.sweep(con, bodyfat, COLS, [0.2, 0.5], reps=3, seed=2, rank_swap=[10.0], mdav=[3, 8])
    fig = tune_report.tradeoff_figure(result, utility="ks_max", risk="linkage_rate")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.texts] == ["eps=0.2", "eps=0.5", "P=10", "k=3", "k=8"]
    assert [tuple(t.xy) for t in ax.texts] == [(s.measures["ks_max"][0], s.measures["linkage_rate"][0])
                                               for s in result.settings]
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert [c.get_label() for c in bars] == ["rwn", "rank_swap", "mdav"]
    rwn_bars = bars[0]
    (xbars, ybars) = rwn_bars.lines[2]
    half_widths = [(seg[1][0] - seg[0][0]) / 2 for seg in xbars.get_segments()]
    half_heights = [(seg[1][1] - seg[0][1]) / 2 for seg in ybars.get_segments()]
    assert half_widths == pytest.approx([s.measures["ks_max"][1] for s in result.settings[:2]], rel=1e-9)
    assert half_heights == pytest.approx([s.measures["linkage_rate"][1] for s in result.settings[:2]], rel=1e-9)
    assert ax.get_xlabel() == "utility loss: ks_max" and ax.get_ylabel() == "risk: linkage_rate"
    points = tune_report.tradeoff_data(result, "ks_max", "linkage_rate")
    assert points[0]["point"] == "eps=0.2" and points[0]["risk_sd"] == result.settings[0].measures["linkage_rate"][1]
    assert points[-1]["utility_sd"] is None                   # MDAV: one release
    with pytest.raises(RWNError, match="'sdid' is not a utility measure"):
        tune_report.tradeoff_figure(result, utility="sdid", risk="sdid")
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_figure1_is_on_a_log_axis_when_the_sizes_span_a_decade():
    def result(sizes):
        return tune.SweepResult("s", ["a"], 5, 1.0, [], {0.1: {"size": sizes, "dcr": [0.1] * len(sizes)}})
    assert tune_report.figure1_xscale(result([5, 6, 50])) == "linear"       # 50 = 10 x 5: not more than a decade
    assert tune_report.figure1_xscale(result([5, 6, 51])) == "log"
    assert tune_report.figure1_xscale(result([0, 3, 10])) == "linear"
    assert tune_report.figure1_xscale(result([0, 3, 11])) == "symlog"
    fig = tune_report.figure1_figure(result([5, 6, 51]))
    assert fig.axes[0].get_xscale() == "log"
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_the_summary_names_the_pareto_frontier_and_who_beats_the_rest():
    """summary_lines (the report's first section, printed by the CLI): every setting once, the
    frontier = the settings no other is at least as good as on both axes and better on one
    (checked by brute force over constructed settings, with a higher-is-safer risk too), and
    each other setting named with one of the frontier that beats it."""
    import itertools
    import re
    rng = np.random.default_rng(5)

    def setting(i, risk, loss):
        return tune.Setting("rwn", "eps", i / 10, 3, {"sdid": (risk, 0.01), "linkage_rate": (risk / 2, 0.0),
                                                    "dcr_mean": (1 - risk, 0.0), "corr_mad": (loss, 0.001)})
    for trial in range(20):
        vals = rng.integers(0, 4, size=(7, 2)) / 4          # ties on purpose
        settings = [setting(i, float(r), float(u)) for i, (r, u) in enumerate(vals)]
        result = tune.SweepResult(source="x", columns=["a"], k=5, q=1.0, settings=settings, figure1={})
        for risk, sign in (("sdid", 1), ("dcr_mean", -1)):
            lines = tune_report.summary_lines(result, utility="corr_mad", risk=risk)
            key = [(sign * s.measures[risk][0], s.measures["corr_mad"][0]) for s in settings]
            dominated = {i for i, j in itertools.permutations(range(7), 2)
                         if key[j][0] <= key[i][0] and key[j][1] <= key[i][1] and key[j] != key[i]}
            frontier_line = next(x for x in lines if x.startswith("no other setting"))
            named = frontier_line.split(" than: ")[1].removesuffix(" (the Pareto frontier)").split("; ")
            assert named == [settings[i].label() for i in range(7) if i not in dominated]
            beaten = [m.group(1) for m in map(re.compile(r"^  (.+?): (.+?) is (safer|as safe)").match, lines) if m]
            assert beaten == [settings[i].label() for i in range(7) if i in dominated]
            assert sum(x.startswith(f"  {s.label()}: {risk}") for s in settings for x in lines) == 7


def test_the_report_says_what_the_sweep_shows(tmp_path, capsys):
    from rwn_sql.cli.main import main
    code = main(["tune", str(BODYFAT), "--columns", ",".join(COLS), "--eps", "0,0.3", "--reps", "2", "--seed", "1",
                 "--rank-swap", "10", "--risk", "linkage_rate", "--output-dir", str(tmp_path / "t")])
    assert code == 0
    page = (tmp_path / "t" / "report.html").read_text()
    summary = page.split("<pre id='summary'>")[1].split("</pre>")[0]
    assert summary.startswith("3 settings; risk linkage_rate (lower is safer)") and "(the Pareto frontier)" in summary
    assert "safest linkage_rate: " in summary and "best corr_mad: " in summary and "rank_swap P=10: linkage_rate" in summary
