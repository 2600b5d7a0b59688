"""Sweeps and the tuning report: the numbers equal what the evaluation API returns."""
import base64
import json
from html.parser import HTMLParser

import duckdb
import numpy as np
import pytest

import rwn_sql
from conftest import BODYFAT_COLUMNS
from rwn_sql import RWNError
from rwn_sql.evaluation import tune

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


def _batched_against_perturb(con, source, columns, eps_values, k, q, reps, categorical=()):
    """Every release of rwn_releases (all eps from one neighbourhood search) equals perturb's
    with the same eps and key#r, row for row; the sizes and closest distances equal the
    neighbourhoods API's."""
    from rwn_sql.engines import duckdb_backend
    be = duckdb_backend.DuckDBBackend(con)
    key = "batched-key-0123456789"
    sizes = []
    releases = tune.rwn_releases(be, be.source(source), columns, eps_values, k=k, q=q, reps=reps, scale="minmax",
                                 categorical=categorical, key=key, into="batched")
    names = ", ".join(f'"{r[0]}"' for r in con.execute(f"DESCRIBE {source}").fetchall())
    try:
        for setting, where, size, dcr in releases:
            eps = eps_values[setting]
            hoods = rwn_sql.neighborhoods(con, source, columns, k=k, eps=eps, categorical=categorical).fetchnumpy()
            assert np.array_equal(size, np.asarray(hoods["size"], float))
            assert np.array_equal(dcr, np.asarray(hoods["dcr"], float))
            for r in range(reps):
                rwn_sql.perturb(con, source, columns, k=k, eps=eps, q=q, categorical=categorical, key=f"{key}#{r}",
                                into="one", replace=True, order="input")
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


def test_batched_releases_do_not_depend_on_threads(release_path):
    from conftest import BODYFAT
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
        self.images, self.data, self.cells, self._script = {}, {}, [], None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.images[a["id"]] = a["src"]
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
    tune.report_html(result, path)
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
    assert calls[0][:2] == (0, total) and calls[0][2].startswith("rwn eps=0.3")
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
    lines = log.getvalue().splitlines()
    assert lines[0].startswith("[----------] 0/4 releases  rwn eps=0.3") and lines[1].startswith("[##########] 4/4")
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
    from conftest import BODYFAT
    base = [sys.executable, "-m", "rwn_sql.cli", "tune", str(BODYFAT), "--columns", ",".join(COLS), "--eps", "0.3",
            "--reps", "2", "--no-report", "--seed", "1", "--output-dir", str(tmp_path)]
    quiet = subprocess.run(base, capture_output=True, text=True)
    loud = subprocess.run(base + ["--progress"], capture_output=True, text=True)
    assert quiet.returncode == loud.returncode == 0, quiet.stderr + loud.stderr
    assert quiet.stdout == loud.stdout == f"wrote {tmp_path / 'tune.csv'}\n"     # stdout stays machine-readable
    assert "releases" not in quiet.stderr
    assert "0/2 releases" in loud.stderr and "2/2 releases" in loud.stderr
