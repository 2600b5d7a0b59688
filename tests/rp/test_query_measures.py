"""SUM(x) and AVG(x) of a public numeric column in analysts' queries (issue 12, point 3):
each form against a direct numpy computation on the released table, for independent records
and for an enforced release (blocks); SUM of a column of ones is the COUNT; and, by Monte Carlo
over keys, the estimates are unbiased and the reported standard errors are right."""
import math

import duckdb
import numpy as np
import pytest
from scipy import stats

import rwn_sql
from rwn_sql.rp.release.analyst import rewrite
from rwn_sql.rp.release.release_db import read_metadata
from helpers.datasets import SHOP_DOMAIN as DOMAIN, SHOP_PUBLIC as PUBLIC, SHOP_SIZES as SIZES, shop_data

P = 0.5
ENFORCE = (0.5, 0.1)            # with p = 0.5, m = 4: 4 blocks in every personal group of this data


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """The data, and release databases of it: independent records and enforced."""
    folder = tmp_path_factory.mktemp("measures")
    con = duckdb.connect()
    data = shop_data()   # noqa: F841 (read by DuckDB's replacement scan)
    con.execute("CREATE TABLE shop AS SELECT * FROM data").fetchall()
    paths = {}
    for name, enforce in (("plain", None), ("enforced", ENFORCE)):
        paths[name] = str(folder / f"{name}.duckdb")
        rwn_sql.release(con, "shop", paths[name], "s", P, public=PUBLIC, domain=list(DOMAIN), enforce=enforce,
                        seed=11, id="rid")
    yield con, paths
    con.close()


def released(path):
    """The released table as numpy arrays, and the published trials per group size (or None)."""
    with duckdb.connect(path, read_only=True) as con:
        meta = read_metadata(con)
        table = con.sql(f"SELECT g, x, spend, one, s FROM {meta.rows_sql}").to_arrow_table()
        trials = dict(con.execute("SELECT size, t FROM rwn_release_trials").fetchall()) if meta.enforced else None
    cols = {c: table.column(c).to_numpy(zero_copy_only=False) for c in table.column_names}
    cols["spend"] = np.array([np.nan if v is None else v for v in cols["spend"]], dtype=float)
    return cols, trials


def reference(cols, trials, column, values, keep, measure):
    """The estimator computed in numpy from the released rows: records kept by `keep` with the
    column not NULL; per record (1[released in V] - b)/p; the variance per personal group
    (g, x) from its randomization units, weighted by w^2 (w = x, or x - AVG for AVG)."""
    x = cols[column].astype(float)
    sel = keep & ~np.isnan(x)
    k, m = len(values), len(DOMAIN)
    b, v = (1 - P) * k / m, k / m
    hit = np.isin(cols["s"], values).astype(float)
    contrib = (hit - b) / P
    total, count = np.sum(x[sel] * contrib[sel]), np.sum(contrib[sel])
    keys = np.array([f"{g}|{xx}" for g, xx in zip(cols["g"], cols["x"])])[sel]
    groups = {}
    for key, xi, hi in zip(keys, x[sel], hit[sel]):
        n, o, xv = groups.get(key, (0, 0.0, xi))
        groups[key] = (n + 1, o + hi, xv)
    estimate = total if measure == "sum" else total / count
    wss = wsh = wn = wo = 0.0
    for n, o, xv in groups.values():
        if trials is None:
            ss = sh = n
        else:
            t = trials[n]
            q, r = n // t, n % t
            ss = r * (q + 1) ** 2 + (t - r) * q * q
            sh = (r * (q + 1) * (n - q - 1) + (t - r) * q * (n - q)) / (n - 1) if n > 1 else 0
        w = xv if measure == "sum" else xv - estimate
        wss, wsh, wn, wo = wss + w * w * ss, wsh + w * w * sh, wn + w * w * n, wo + w * w * o
    phi = min(max((wo / wn - b) / P, 0.0), 1.0) if wn > 0 else 0.0
    var = (b * (1 - b) * wss + P * (1 - P) * (wsh - 2 * v * wss) * phi + P * (1 - P) * (wss - wsh) * phi ** 2) / P ** 2
    se = math.sqrt(max(var, 0.0)) / (1 if measure == "sum" else abs(count))
    return estimate, se, int(sel.sum()), count


def answer(path, sql):
    with duckdb.connect() as con:
        rel, info = rwn_sql.query(con, sql, release=path)
        return [d[0] for d in rel.description], rel.fetchall(), info


@pytest.mark.parametrize("kind", ["plain", "enforced"])
@pytest.mark.parametrize("sql,column,values,where,by", [
    ("SELECT g, SUM(x) FROM shop WHERE s IN ('u', 'w') GROUP BY g", "x", ("u", "w"), None, "g"),
    ("SELECT AVG(spend) FROM shop WHERE s = 'u' AND g <> 'd'", "spend", ("u",), lambda c: c["g"] != "d", None),
    ("SELECT s, SUM(spend) FROM shop WHERE x > 2 GROUP BY s", "spend", None, lambda c: c["x"] > 2, "s"),
    ("SELECT g, AVG(x) AS a FROM shop WHERE s IN ('v', 'z', 'u') AND g LIKE '_' GROUP BY g", "x",
     ("v", "z", "u"), None, "g"),
])
def test_against_numpy(shop, kind, sql, column, values, where, by):
    """Every row: estimate and std_error equal the numpy computation (float rounding only), the
    released value is the plain aggregate of the released rows, group_size the records counted."""
    _, paths = shop
    cols, trials = released(paths[kind])
    names, rows, info = answer(paths[kind], sql)
    measure = "sum" if "SUM(" in sql else "avg"
    first = f"released_{measure}"
    assert names[names.index(first):] == [first, "group_size"] + (["count_estimate"] if measure == "avg" else []) \
        + ["estimate", "std_error", "ci_low", "ci_high", "micro_reconstruction"]
    assert ("APPROXIMATE" in info.note) == (measure == "avg") and not info.exact
    labels = sorted(set(cols[by])) if by == "g" else list(DOMAIN) if by == "s" else [None]
    assert [r[0] for r in rows] == labels if by else len(rows) == 1
    for label, row in zip(labels, rows):
        keep = np.ones(len(cols["s"]), dtype=bool) if where is None else where(cols)
        if by == "g":
            keep &= cols["g"] == label
        vals = (label,) if by == "s" else values
        estimate, se, size, count = reference(cols, trials, column, vals, keep, measure)
        got = dict(zip(names, row))
        x = cols[column].astype(float)
        shown = keep & ~np.isnan(x) & np.isin(cols["s"], vals)
        plain = x[shown].sum() if measure == "sum" else x[shown].mean()
        assert got[first] == pytest.approx(plain, rel=1e-12) and got["group_size"] == size
        assert got["estimate"] == pytest.approx(estimate, rel=1e-9, abs=1e-9)
        assert got["std_error"] == pytest.approx(se, rel=1e-9) and se > 0
        assert got["ci_high"] - got["ci_low"] == pytest.approx(2 * 1.959963984540054 * se, rel=1e-9)
        if measure == "avg":
            assert got["count_estimate"] == pytest.approx(count, rel=1e-9)


@pytest.mark.parametrize("kind", ["plain", "enforced"])
def test_sum_of_ones_is_the_count(shop, kind):
    """SUM of a column of ones is COUNT(*): the same estimate and standard error (block-aware),
    and AVG's count_estimate is the COUNT over the records where its column is not NULL."""
    _, paths = shop
    path = paths[kind]
    where = "WHERE s IN ('u', 'w') AND x BETWEEN 2 AND 9"
    _, counts, _ = answer(path, f"SELECT g, COUNT(*) FROM shop {where} GROUP BY g")
    _, sums, _ = answer(path, f"SELECT g, SUM(one) FROM shop {where} GROUP BY g")
    _, avgs, _ = answer(path, f"SELECT g, AVG(spend) FROM shop {where} GROUP BY g")
    for c, s, a in zip(counts, sums, avgs):
        assert c[0] == s[0] == a[0]
        assert s[3] == pytest.approx(c[3], rel=1e-12) and s[4] == pytest.approx(c[4], rel=1e-12)
        assert a[3] == pytest.approx(c[3], rel=1e-12)           # spend is NULL only for x = 10
    assert len(counts) == 4


def test_exact_sum_and_avg_and_clauses(shop):
    """Without the sensitive attribute SUM and AVG are exact; HAVING / ORDER BY / LIMIT name
    the aggregate or its alias."""
    con, paths = shop
    _, rows, info = answer(paths["plain"], "SELECT g, AVG(spend) FROM shop GROUP BY g")
    want = con.execute("SELECT g, avg(spend), count(spend) FROM shop GROUP BY g ORDER BY g").fetchall()
    assert info.exact and "exact AVG" in info.note
    assert [(r[0], r[1], r[2], r[4], r[5]) for r in rows] == [(g, a, n, a, 0.0) for g, a, n in want]
    base = "SELECT g, SUM(x) AS total FROM shop WHERE s = 'u' GROUP BY g"
    _, every, _ = answer(paths["plain"], base)
    _, top, _ = answer(paths["plain"], base + " HAVING SUM(x) > 0 ORDER BY total DESC LIMIT 2")
    want = sorted([r for r in every if r[3] > 0], key=lambda r: -r[3])[:2]
    assert top == want and len(top) == 2


def test_empty_selection_answers_as_sql_does(shop):
    """An ungrouped SUM or AVG whose selection matches nothing gives one row, as SQL's SUM and
    AVG over no rows do: no released value and no estimate (NULL, with no standard error or
    interval), group_size 0, AVG's count_estimate 0. Grouped, no row (as GROUP BY gives). Before,
    the reconstructed ones returned no row at all."""
    con, paths = shop
    assert con.execute("SELECT sum(x), avg(x) FROM shop WHERE g = 'nobody'").fetchall() == [(None, None)]
    for kind in ("plain", "enforced"):
        for where in ("s = 'u' AND g = 'nobody'", "s IN ('u', 'w') AND g = 'nobody'"):
            names, rows, _ = answer(paths[kind], f"SELECT SUM(x) FROM shop WHERE {where}")
            assert rows == [(None, 0, None, None, None, None, False)], (kind, where)
            names, rows, _ = answer(paths[kind], f"SELECT AVG(spend) FROM shop WHERE {where}")
            assert dict(zip(names, rows[0])) == dict(released_avg=None, group_size=0, count_estimate=0.0,
                                                     estimate=None, std_error=None, ci_low=None, ci_high=None,
                                                     micro_reconstruction=False) and len(rows) == 1
        assert answer(paths[kind], "SELECT g, SUM(x) FROM shop WHERE s = 'u' AND g = 'nobody' GROUP BY g")[1] == []
        assert answer(paths[kind], "SELECT s, AVG(x) FROM shop WHERE g = 'nobody' GROUP BY s")[1] == []


def test_refusals(shop):
    _, paths = shop
    for sql, message in [
        ("SELECT SUM(s) FROM shop", r'SUM\("s"\) of the sensitive attribute'),
        ("SELECT SUM(g) FROM shop WHERE s = 'u'", r'SUM\("g"\): column "g" has type VARCHAR, not a number'),
        ("SELECT SUM(x * 2) FROM shop", r"SUM\(x \* 2\); SUM takes one public numeric column"),
        ("SELECT g, SUM(x) FROM shop GROUP BY g HAVING AVG(x) > 1", r"AVG\(x\) in the HAVING clause"),
    ]:
        with pytest.raises(rwn_sql.RWNError, match=message):
            answer(paths["plain"], sql)


def test_macro_answers_as_python(shop):
    """The rwn_query macro gives rwn_sql.query's rows for SUM and AVG."""
    _, paths = shop
    con = duckdb.connect()
    rwn_sql.install(con)
    con.execute(f"ATTACH '{paths['enforced']}' AS rel (READ_ONLY)").fetchall()
    for sql in ["SELECT g, SUM(x) FROM shop WHERE s IN ('u', 'w') GROUP BY g",
                "SELECT s, AVG(spend) AS a FROM shop GROUP BY s ORDER BY a"]:
        names, rows, _ = answer(paths["enforced"], sql)
        cursor = con.execute("SELECT * FROM rwn_query(?)", [sql.replace("FROM shop", "FROM rel.shop")])
        assert [d[0] for d in cursor.description] == names
        got = cursor.fetchall()
        assert len(got) == len(rows) > 0
        for a, b in zip(got, rows):
            assert list(a) == [pytest.approx(v, rel=1e-12) if isinstance(v, float) else v for v in b]
    with pytest.raises(duckdb.Error, match="not a number"):
        con.execute("SELECT * FROM rwn_query('SELECT SUM(g) FROM rel.shop WHERE s = ''u''')").fetchall()
    con.close()


# ---- Monte Carlo over keys ------------------------------------------------------------------

def monte_carlo(con, enforce, queries, keys):
    """Per query, the (estimate, std_error) rows of each of `keys` releases of the shop data."""
    text = rwn_sql.randomize(con, "shop", "s", P, public=PUBLIC, domain=list(DOMAIN), enforce=enforce,
                             id="rid", sql=True)                 # the key read from getvariable('rwn_key')
    meta = read_metadata_like(enforce)
    rewritten = [rewrite(q, meta).sql for q in queries]
    out = [[] for _ in queries]
    for i in range(keys):
        con.execute(f"SET VARIABLE rwn_key = 'monte-carlo key {i:05d} of the measures test'").fetchall()
        con.execute(f"CREATE OR REPLACE TEMP TABLE shop_randomized AS {text}").fetchall()
        for j, sql in enumerate(rewritten):
            out[j].append([(r[-5], r[-4]) for r in con.execute(sql).fetchall()])
    return [np.array(o) for o in out]         # [key, row, (estimate, std_error)]


def read_metadata_like(enforce):
    from rwn_sql.rp.release.release_db import ReleaseMeta
    return ReleaseMeta(table_name="shop_randomized", release_name="shop", sensitive="s", sensitive_type="VARCHAR",
                       public=tuple(PUBLIC), p=P, domain=DOMAIN, enforced=enforce is not None,
                       trials_sql="mc_trials AS __rwn_tr" if enforce else None)


def truth(con, enforce, values, where, column, measure, by_g=True):
    """Per group g (or over all: one group None): the true SUM (or AVG) over records with s in V, and the true variance of
    the estimator (for AVG the delta method's, and the first-order bias of the ratio), from the
    original data: per personal group Var(count_g) at its own share, weighted by w_g^2."""
    rows = con.execute(f"SELECT g, x, {column} AS c, count(*) AS n, count(*) FILTER (WHERE s IN "
                       f"({', '.join(repr(v) for v in values)})) AS h FROM shop WHERE {where} AND {column} IS NOT NULL "
                       "GROUP BY ALL ORDER BY ALL").fetchall()
    if not by_g:
        rows = [(None,) + r[1:] for r in rows]
    k, m = len(values), len(DOMAIN)
    b, v = (1 - P) * k / m, k / m
    trials = {n: 4 for n in SIZES} if enforce else None
    out = {}
    for g in sorted({r[0] for r in rows}, key=str):
        mine = [r for r in rows if r[0] == g]
        var_count = []
        for _, _, _, n, h in mine:
            if trials:
                t = trials[n]
                q, r = n // t, n % t
                ss = r * (q + 1) ** 2 + (t - r) * q * q
                sh = (r * (q + 1) * (n - q - 1) + (t - r) * q * (n - q)) / (n - 1)
            else:
                ss = sh = n
            f = h / n
            var_count.append((b * (1 - b) * ss + P * (1 - P) * (sh - 2 * v * ss) * f
                              + P * (1 - P) * (ss - sh) * f * f) / P ** 2)
        c = np.array([r[2] for r in mine], float)
        h = np.array([r[4] for r in mine], float)
        var_count = np.array(var_count)
        total, hits = float(c @ h), float(h.sum())
        if measure == "sum":
            out[g] = (total, float(c * c @ var_count), 0.0)
        else:
            ratio = total / hits
            # first-order bias of A/B: (R Var(B) - Cov(A, B)) / B^2, groups independent
            bias = (ratio * var_count.sum() - float(c @ var_count)) / hits ** 2
            out[g] = (ratio, float((c - ratio) ** 2 @ var_count) / hits ** 2, bias)
    return out


@pytest.mark.parametrize("enforce", [None, ENFORCE])
def test_monte_carlo_unbiased_with_right_standard_errors(shop, enforce):
    """Over R keys, for SUM per group g and AVG over all groups (5 rows; Bonferroni over them):
    the mean estimate lies within 4 standard errors of the mean (sd / sqrt(R)) of the truth (for
    AVG, truth + its first-order ratio bias); the empirical variance over the true variance, and
    the mean reported variance over the empirical one, lie in the two-sided chi-square band
    (R - 1 degrees of freedom, total level 1e-3). AVG is checked over all groups: its delta-method
    error is a first-order approximation, good when the COUNT estimate varies little (coefficient
    of variation 8% without blocks, 14% with them here; at 28%, per group with blocks, the
    empirical variance was 1.6 times the delta method's)."""
    con, _ = shop
    if enforce:
        con.execute("CREATE OR REPLACE TEMP TABLE mc_trials AS SELECT * FROM (VALUES "
                    + ", ".join(f"({n}, 4)" for n in SIZES) + ") AS t(size, t)").fetchall()
    keys = 160
    values, where = ("u", "w"), "x >= 2"
    queries = [f"SELECT g, SUM(x) FROM shop WHERE s IN ('u', 'w') AND {where} GROUP BY g",
               f"SELECT AVG(spend) FROM shop WHERE s IN ('u', 'w') AND {where}"]
    results = monte_carlo(con, enforce, queries, keys)
    alpha = 1e-3 / 5
    low, high = (stats.chi2.ppf(q, keys - 1) / (keys - 1) for q in (alpha / 2, 1 - alpha / 2))
    assert stats.norm.ppf(1 - alpha / 2) < 4.0          # 4 standard errors: within the level
    for (measure, column, by_g), result in zip([("sum", "x", True), ("avg", "spend", False)], results):
        want = truth(con, enforce, values, where, column, measure, by_g)
        assert result.shape == (keys, len(want), 2)
        for i, g in enumerate(sorted(want)):
            target, variance, bias = want[g]
            estimates, reported = result[:, i, 0], result[:, i, 1]
            assert abs(estimates.mean() - target - bias) <= 4.0 * math.sqrt(variance / keys), (measure, g)
            empirical = estimates.var(ddof=1)
            assert low <= empirical / variance <= high, (measure, g, empirical, variance)
            assert low <= np.mean(reported ** 2) / empirical <= high, (measure, g)
