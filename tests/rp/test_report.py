"""The release report (issue 12, point 6): `rwn-sql report` / rwn_sql.report write one
self-contained HTML page from a release database alone. Its numbers are the release's, its
names and values are escaped, and it renders in headless Chromium without console errors,
network loads or scripts, with one interval mark per table row in its plots."""
import hashlib
import html
import json
import os
import shutil
import subprocess
from html.parser import HTMLParser

import duckdb
import pytest

import rwn_sql
from helpers.data import ADULT
from rwn_sql.cli.main import main

KIND = "kind <&\"'> ü"                                   # a public column name that needs escaping
HOSTILE = "<img src=x onerror=\"window.__pwned=1\">"     # run as markup, it would set window.__pwned
UNICODE = "Ünïcødé & \"quotes\" 'single' ✓"
SA_VALUE = "<b>none</b> & co"                            # replaces occupation '?'
CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)


def q(name):
    return '"' + name.replace('"', '""') + '"'


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """Adult with a public column whose name and values need escaping (and a NULL value), age
    (73 values: a one-way view) and fnlwgt (thousands: none)."""
    folder = tmp_path_factory.mktemp("report")
    path = str(folder / "adult.duckdb")
    with duckdb.connect() as con:
        con.execute(f"""CREATE TABLE adult AS SELECT sex,
            CASE race WHEN 'White' THEN '{HOSTILE}' WHEN 'Black' THEN '{UNICODE.replace("'", "''")}'
                      WHEN 'Other' THEN NULL ELSE race END AS {q(KIND)},
            age, fnlwgt, CASE occupation WHEN '?' THEN '{SA_VALUE}' ELSE occupation END AS occupation
            FROM read_csv('{ADULT}') LIMIT 8000""").fetchall()
        # the page is the subject: fnlwgt makes near-unique groups, many of one occupation
        rwn_sql.release(con, "adult", path, "occupation", 0.5, public=["sex", KIND, "age", "fnlwgt"], seed=11,
                        l_diversity=1)
    return path


@pytest.fixture(scope="module")
def page(release, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("page") / "report.html")
    assert rwn_sql.report(release, out) == out
    with open(out, encoding="utf-8") as fh:
        return out, fh.read()


class Tables(HTMLParser):
    """The tables of a page: id -> rows of cells (data-value when given, else text)."""
    def __init__(self, text):
        super().__init__()
        self.tables, self.current, self.cell = {}, None, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table" and attrs.get("id"):
            self.current = self.tables.setdefault(attrs["id"], [])
        elif tag == "tr" and self.current is not None:
            self.current.append([])
        elif tag == "td" and self.current is not None:
            self.cell = attrs.get("data-value")
            self.current[-1].append("" if self.cell is None else self.cell)

    def handle_endtag(self, tag):
        if tag == "table":
            self.current = None
        elif tag == "td":
            self.cell = None

    def handle_data(self, data):
        if self.current is not None and self.cell is None and self.current and self.current[-1]:
            self.current[-1][-1] += data


def estimate_tables(text):
    return {k: [r for r in rows if r] for k, rows in Tables(text).tables.items() if k.startswith("table-")}


def query_rows(release, group):
    """rwn_sql.query's answer per (group value, SA value): group size, estimate, std. error, interval."""
    cols = f"{q(group)}, occupation, " if group else "occupation, "
    with duckdb.connect() as con:
        rel, _ = rwn_sql.query(con, f"SELECT {cols}COUNT(*) FROM adult GROUP BY {cols.rstrip(', ')}",
                               release=release)
        names = [d[0] for d in rel.description]
        rows = rel.fetchall()
    fields = [names.index(c) for c in ("group_size", "estimate", "std_error", "ci_low", "ci_high")]
    width = 2 if group else 1
    return {tuple("NULL" if v is None else str(v) for v in r[:width]): [r[i] for i in fields] for r in rows}


def test_tables_hold_the_release_estimates(release, page):
    """Every table row equals rwn_sql.query's answer for its slice (the same reconstruction, so
    equal up to summation order: 1e-12 relative), and its estimate equals SUM(estimate) of the
    release's cells view over that slice (the estimator is linear)."""
    _, text = page
    tables = estimate_tables(text)
    assert list(tables) == ["table-0", "table-1", "table-2", "table-3"]   # all, sex, KIND, age; fnlwgt none
    with duckdb.connect(release, read_only=True) as con:
        cells = {(str(k), s): e for k, s, e in con.execute(
            f"SELECT {q(KIND)}, occupation, sum(estimate) FROM adult_cells GROUP BY ALL").fetchall()}
        domain = con.execute("SELECT domain FROM rwn_release_metadata").fetchall()[0][0]
        distinct = {c: n for c, n in zip(("sex", KIND, "age"), con.execute(
            f"SELECT count(DISTINCT sex), count(DISTINCT {q(KIND)}) + 1, count(DISTINCT age) "   # + 1: NULL
            "FROM randomized_rows_not_counts.adult_randomized").fetchall()[0])}
    for table, group in (("table-0", None), ("table-1", "sex"), ("table-2", KIND), ("table-3", "age")):
        expected = query_rows(release, group)
        rows = tables[table]
        assert len(rows) == len(expected) == len(domain) * (distinct[group] if group else 1)
        width = 2 if group else 1
        for row in rows:
            key = tuple(row[:width])
            assert [float(v) for v in row[width:]] == pytest.approx(expected[key], rel=1e-12, abs=1e-9), key
            if group == KIND:
                assert float(row[3]) == pytest.approx(cells[("None" if key[0] == "NULL" else key[0], key[1])],
                                                      rel=1e-12, abs=1e-9)
    assert {r[0] for r in tables["table-2"]} == {HOSTILE, UNICODE, "NULL", "Asian-Pac-Islander",
                                                  "Amer-Indian-Eskimo"}
    assert SA_VALUE in {r[0] for r in tables["table-0"]}


def test_names_and_values_are_escaped(page):
    _, text = page
    assert "<script" not in text.lower() and HOSTILE not in text and SA_VALUE not in text
    assert html.escape(HOSTILE) in text and html.escape(KIND) in text
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "") and "https://" not in text


def test_audit_of_an_enforced_release_matches_the_stewards_audit(tmp_path):
    """The report rechecks each block design from the published parameters: its worst exact tail
    per group size is the one rwn_sql.audit(enforce=True) reports on the original data."""
    path, out = str(tmp_path / "enforced.duckdb"), str(tmp_path / "enforced.html")
    public = ["sex", "race"]
    with duckdb.connect() as con:
        con.execute(f"CREATE TABLE adult AS SELECT sex, race, occupation FROM read_csv('{ADULT}')").fetchall()
        rwn_sql.release(con, "adult", path, "occupation", 0.5, public=public, enforce=(0.5, 0.05), seed=2)
        with rwn_sql.audit(con, "adult", "occupation", 0.5, 0.5, 0.05, public=public, enforce=True) as audit:
            steward = {n: w for n, w in audit.groups_detail.select("group_size, worst_design_tail").fetchall()}
    rwn_sql.report(path, out)
    with open(out, encoding="utf-8") as fh:
        text = fh.read()
    designs = {int(float(size)): float(worst) for size, _, _, worst in filter(None, Tables(text).tables["designs"])}
    assert designs.keys() == steward.keys()
    assert all(designs[n] == pytest.approx(steward[n], rel=1e-12) for n in designs)
    assert "every personal group&#x27;s design keeps both exact tails at or above delta = 0.05" in text


def test_refusals_and_atomic_output(release, tmp_path):
    out = tmp_path / "r.html"
    digest = hashlib.sha256(open(release, "rb").read()).hexdigest()
    assert main(["report", release, "-o", str(out)]) == 0
    assert main(["report", release, "-o", str(out)]) == 2               # exists
    with pytest.raises(rwn_sql.RWNError, match="already exists"):
        rwn_sql.report(release, out)
    assert rwn_sql.report(release, out, overwrite=True) == str(out)
    with pytest.raises(rwn_sql.RWNError, match="is the release database"):
        rwn_sql.report(release, release, overwrite=True)
    with pytest.raises(rwn_sql.RWNError, match="is not a release database"):
        rwn_sql.report(ADULT, tmp_path / "x.html")
    plain = str(tmp_path / "plain.duckdb")
    with duckdb.connect(plain) as con:
        con.execute("CREATE TABLE t AS SELECT 1 AS x").fetchall()
    with pytest.raises(rwn_sql.RWNError, match="not a release database: it has no rwn_release_metadata"):
        rwn_sql.report(plain, tmp_path / "x.html")
    with pytest.raises(rwn_sql.RWNError, match="does not exist"):
        rwn_sql.report(tmp_path / "missing.duckdb", tmp_path / "x.html")
    assert sorted(os.listdir(tmp_path)) == ["plain.duckdb", "r.html"]   # no temporary file left
    assert hashlib.sha256(open(release, "rb").read()).hexdigest() == digest


# Installed before the page, so it sees every error, console message and load; it writes what it
# found into the DOM after the load event, which --dump-dom prints.
PROBE = """<script>
window.__problems = [];
addEventListener('error', e => __problems.push(e.message || 'failed to load ' + (e.target.src || e.target.href)), true);
for (const level of ['error', 'warn']) {
  const original = console[level];
  console[level] = (...args) => { __problems.push(level + ': ' + args.join(' ')); original.apply(console, args); };
}
addEventListener('load', () => {
  const figures = [...document.querySelectorAll('svg.plot')].map(svg => {
    const box = svg.getBoundingClientRect(), [w, h] = [svg.viewBox.baseVal.width, svg.viewBox.baseVal.height];
    const inside = el => { const b = el.getBBox(); return b.x >= 0 && b.y >= 0 && b.x + b.width <= w && b.y + b.height <= h; };
    const dots = [...svg.querySelectorAll('circle.estimate')];
    return {id: svg.id, width: box.width, height: box.height, intervals: svg.querySelectorAll('line.interval').length,
            dots: dots.length, inside: dots.every(d => d.getBBox().width > 0 && inside(d))};
  });
  const tables = Object.fromEntries([...document.querySelectorAll('table.estimates')].map(t => [t.id,
    [...t.tBodies[0].rows].map(r => [...r.cells].map(c => c.dataset.value !== undefined ? c.dataset.value : c.textContent))]));
  const out = document.createElement('pre');
  out.id = 'rwn-probe';
  out.textContent = JSON.stringify({problems: __problems, pwned: window.__pwned === 1, figures, tables,
                                    resources: performance.getEntriesByType('resource').map(r => r.name)});
  document.body.appendChild(out);
});
</script>"""


@pytest.fixture
def chromium():
    if CHROMIUM is None:
        reason = "no chromium found (Debian: apt-get install chromium)"
        if os.environ.get("RWN_REQUIRE_CHROMIUM") == "1":
            pytest.fail(f"RWN_REQUIRE_CHROMIUM=1 but {reason}")
        pytest.skip(reason)
    return CHROMIUM


def browse(chromium, profile, *args):
    """Headless Chromium with console logging on stderr and every host name unresolvable, so a
    network load fails (and is seen) instead of reaching out."""
    return subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           f"--user-data-dir={profile}", "--host-resolver-rules=MAP * ~NOTFOUND",
                           "--enable-logging=stderr", "--v=0", *args],
                          capture_output=True, text=True, timeout=120, check=True)


@pytest.mark.heavy     # Chromium; the page's numbers and escaping are checked above without a browser
def test_renders_in_chromium(chromium, release, page, tmp_path):
    path, text = page
    probed = tmp_path / "probed.html"
    probed.write_text(text.replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    run = browse(chromium, tmp_path / "profile", "--virtual-time-budget=5000", "--dump-dom", probed.as_uri())
    console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []                          # the page runs no script and logs nothing
    found = json.loads(html.unescape(run.stdout.split("<pre id=\"rwn-probe\">")[1].split("</pre>")[0]))
    assert found["problems"] == [] and found["resources"] == [] and not found["pwned"]
    assert found["tables"] == estimate_tables(text)          # rendered as written: the values read back whole
    assert [f["id"] for f in found["figures"]] == ["plot-0", "plot-1", "plot-2", "plot-3"]
    for figure, rows in zip(found["figures"], found["tables"].values()):
        assert figure["intervals"] == figure["dots"] == len(rows)   # one interval mark per table row
        assert figure["width"] > 200 and figure["height"] > 150 and figure["inside"], figure

    shot = tmp_path / "report.png"
    browse(chromium, tmp_path / "profile", "--window-size=1280,2400", f"--screenshot={shot}", f"file://{path}")
    from PIL import Image                      # pillow comes with matplotlib (test extra)
    assert shot.stat().st_size > 20_000
    with Image.open(shot) as image:
        assert image.size == (1280, 2400)
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
        assert colours is None or len(colours) > 50          # text and plots, not a blank page
