"""evaluate(): every measure against an independent computation (scipy, explicit formulas,
hand-worked tiny examples), the identity and permuted releases, and bad input."""
import importlib
import itertools
import json
import math
from collections import Counter

import numpy as np
import pytest
from scipy import spatial, stats

import rwn_sql
from helpers.data import BODYFAT, BODYFAT_COLUMNS, load_numpy
from rwn_sql import RWNError
from rwn_sql.evaluation import risk, utility
evaluate_module = importlib.import_module("rwn_sql.evaluation.evaluate")   # rwn_sql.evaluate is also the function
from rwn_sql.evaluation.evaluate import Evaluation, evaluate
from rwn_sql.evaluation.risk import nearest_sqdist
from rwn_sql.evaluation.utility import ci_overlap, t_quantile

REGRESSORS = [c for c in BODYFAT_COLUMNS if c != "BodyFat"]


@pytest.fixture
def rwn_release(con, bodyfat):
    rwn_sql.perturb(con, bodyfat, BODYFAT_COLUMNS, k=5, eps=0.4, seed=1, into="release", order="input")
    return "release"


def arrays(con, table, cols):
    data = con.execute(f"SELECT {', '.join(cols)} FROM {table}").fetchnumpy()
    return np.column_stack([np.asarray(data[c], dtype=float) for c in cols])


# ----------------------------------------------------------------------------- realistic release

def test_rwn_release_matches_independent_computations(con, bodyfat, rwn_release):
    ev = evaluate(con, bodyfat, rwn_release, BODYFAT_COLUMNS, target="BodyFat")
    assert isinstance(ev, Evaluation)
    xo, xr = arrays(con, bodyfat, BODYFAT_COLUMNS), arrays(con, rwn_release, BODYFAT_COLUMNS)
    n, p = xo.shape
    assert ev.rows == n == 241 and ev.numeric == tuple(BODYFAT_COLUMNS) and ev.categorical == ()
    u, r = ev.utility, ev.risk

    # KS: scipy's two-sample statistic
    for j, c in enumerate(BODYFAT_COLUMNS):
        assert u.ks[c] == pytest.approx(stats.ks_2samp(xo[:, j], xr[:, j]).statistic, abs=1e-12)
    assert u.tv == {} and u.multi_information is None

    # correlations: scipy.stats.pearsonr pair by pair
    diffs = [abs(stats.pearsonr(xo[:, i], xo[:, j])[0] - stats.pearsonr(xr[:, i], xr[:, j])[0])
             for i, j in itertools.combinations(range(p), 2)]
    assert u.corr_mad == pytest.approx(np.mean(diffs), rel=1e-10)

    # PCA via SVD of the centred standardized data (not the covariance eigenproblem)
    mean, sd = xo.mean(axis=0), xo.std(axis=0, ddof=1)

    def svd_pca(x):
        z = (x - mean) / sd
        z = z - z.mean(axis=0)
        _, s, vt = np.linalg.svd(z, full_matrices=False)
        return s ** 2 / np.sum(s ** 2), vt[:2].T

    share_o, load_o = svd_pca(xo)
    share_r, load_r = svd_pca(xr)
    for j in range(2):
        load_r[:, j] *= np.sign(load_o[:, j] @ load_r[:, j])
        got_o = np.array([u.pca_loadings.original[f"PC{j + 1}"][c] for c in BODYFAT_COLUMNS])
        got_r = np.array([u.pca_loadings.released[f"PC{j + 1}"][c] for c in BODYFAT_COLUMNS])
        flip = np.sign(got_o @ load_o[:, j])              # reference sign convention is arbitrary
        np.testing.assert_allclose(got_o, flip * load_o[:, j], atol=1e-9)
        np.testing.assert_allclose(got_r, flip * load_r[:, j], atol=1e-9)
        assert np.abs(got_o).max() == pytest.approx(got_o.max())        # largest entry positive
        assert u.pca_variance_share.original[f"PC{j + 1}"] == pytest.approx(share_o[j], rel=1e-10)
        assert u.pca_variance_share.released[f"PC{j + 1}"] == pytest.approx(share_r[j], rel=1e-10)
    assert u.pca_loading_mad == pytest.approx(np.mean(np.abs(load_o - load_r)), rel=1e-9)

    # OLS: lstsq, (X'X)^-1, t quantile from scipy, Cook's distance from leave-one-out refits
    t_crit = stats.t.ppf(0.975, n - p)
    ols = u.ols
    assert ols.terms == ("(Intercept)",) + tuple(REGRESSORS) and ols.df == n - p
    assert ols.critical_value == pytest.approx(t_crit, rel=1e-9)
    ci = {}
    for role, x in (("original", xo), ("released", xr)):
        X, y = np.column_stack([np.ones(n), x[:, 1:]]), x[:, 0]
        beta, rss, _, _ = np.linalg.lstsq(X, y, rcond=None)
        s2 = rss[0] / (n - p)
        se = np.sqrt(np.diag(s2 * np.linalg.inv(X.T @ X)))
        r2 = 1 - rss[0] / np.sum((y - y.mean()) ** 2)
        cooks = []
        for i in range(n):
            keep = np.arange(n) != i
            b_i = np.linalg.lstsq(X[keep], y[keep], rcond=None)[0]
            cooks.append(np.sum((X @ beta - X @ b_i) ** 2) / (p * s2))
        np.testing.assert_allclose(list(getattr(ols.coefficients, role).values()), beta, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(list(getattr(ols.std_errors, role).values()), se, rtol=1e-8)
        assert getattr(ols.r2, role) == pytest.approx(r2, rel=1e-10)
        assert getattr(u.cooks_max, role) == pytest.approx(max(cooks), rel=1e-7)
        ci[role] = np.column_stack([beta - t_crit * se, beta + t_crit * se])
    for k, term in enumerate(ols.terms):
        (a0, a1), (b0, b1) = ci["original"][k], ci["released"][k]
        inter = max(0.0, min(a1, b1) - max(a0, b0))
        assert ols.ci_overlap[term] == pytest.approx(0.5 * (inter / (a1 - a0) + inter / (b1 - b0)), abs=1e-9)
        assert ols.coef_abs_diff[term] == pytest.approx(
            abs(ols.coefficients.original[term] - ols.coefficients.released[term]))
    assert ols.ci_overlap_mean == pytest.approx(np.mean(list(ols.ci_overlap.values())))

    # risk in min-max space (scaled with the original's range): scipy's cKDTree
    lo, hi = xo.min(axis=0), xo.max(axis=0)
    so, sr = (xo - lo) / (hi - lo), (xr - lo) / (hi - lo)
    dcr, _ = spatial.cKDTree(sr).query(so, k=1)
    assert r.dcr_mean == pytest.approx(dcr.mean(), rel=1e-9)
    d_near, _ = spatial.cKDTree(so).query(sr, k=1)
    d_own = np.sqrt(np.sum((sr - so) ** 2, axis=1))
    assert r.linkage_rate == pytest.approx(np.mean(d_own <= d_near * (1 + 1e-12)))

    # SDID: explicit loop over records and columns
    at_risk = sum(all(abs(xo[i, j] - xr[i, j]) <= sd[j] for j in range(p)) for i in range(n))
    assert r.sdid == pytest.approx(at_risk / n)
    # sdcMicro's dRiskWORK, literally: sd of xm, count records with at most one column outside
    sds = xr.std(axis=0, ddof=1)
    outside = ((xo < xr - 1.0 * sds) | (xo > xr + 1.0 * sds)).sum(axis=1)
    assert r.sdid_sdcmicro == pytest.approx(np.mean(np.isin(outside, [0, 1])))

    # unique survival: Python tuples and a Counter
    orig_rows = [tuple(row) for row in xo.tolist()]
    released_rows = {tuple(row) for row in xr.tolist()}
    counts = Counter(orig_rows)
    uniques = [row for row in orig_rows if counts[row] == 1]
    assert r.unique_records == len(uniques)
    assert r.unique_survival == pytest.approx(sum(row in released_rows for row in uniques) / len(uniques))

    # plausible ranges for RWN with k = 5, eps = 0.4, q = 1 on bodyfat
    assert 0 < u.corr_mad < 0.2 and 0 < u.pca_loading_mad < 0.2
    assert max(u.ks.values()) < 0.2
    assert 0 < ols.ci_overlap_mean < 1 and 0 < ols.r2.released < ols.r2.original
    assert 0.05 < r.dcr_mean < 1 and r.linkage_rate < 0.3 and r.sdid < 0.5


def test_identity_release(con, bodyfat):
    ev = evaluate(con, bodyfat, bodyfat, BODYFAT_COLUMNS, target="BodyFat", order="input")
    u, r = ev.utility, ev.risk
    assert r.linkage_rate == 1.0 and r.dcr_mean == 0.0 and r.sdid == 1.0 and r.unique_survival == 1.0
    assert u.corr_mad == 0.0 and u.pca_loading_mad == 0.0 and set(u.ks.values()) == {0.0}
    assert u.ols.ci_overlap_mean == pytest.approx(1.0) and set(u.ols.coef_abs_diff.values()) == {0.0}
    assert u.cooks_max.original == u.cooks_max.released
    assert u.pca_variance_share.original == u.pca_variance_share.released


def test_permuted_release_keeps_statistics_but_breaks_linkage(con, bodyfat):
    """Whole records shuffled: every statistic survives (corr_mad, ks 0 up to rounding; every
    combination still appears, so dcr 0 and unique_survival 1) but linkage only finds the
    permutation's fixed points."""
    n = 241
    perm = np.random.default_rng(5).permutation(n)
    load_numpy(con, "perm", {"slot": np.arange(n), "src": perm})      # released row slot = original perm[slot]
    con.execute("CREATE TABLE shuffled AS SELECT b.* FROM perm p JOIN (SELECT *, row_number() OVER () - 1 "
                "AS pos FROM bodyfat) b ON b.pos = p.src ORDER BY p.slot").fetchall()
    xo, xs = arrays(con, "bodyfat", BODYFAT_COLUMNS), arrays(con, "shuffled", BODYFAT_COLUMNS)
    assert np.array_equal(xs, xo[perm])
    ev = evaluate(con, "bodyfat", "shuffled", BODYFAT_COLUMNS, target="BodyFat", order="input")
    assert ev.utility.corr_mad < 1e-12 and max(ev.utility.ks.values()) == 0.0
    assert ev.risk.dcr_mean == 0.0 and ev.risk.unique_survival == 1.0
    fixed = np.mean(perm == np.arange(n))
    assert ev.risk.linkage_rate == pytest.approx(fixed) and ev.risk.linkage_rate < 0.05


# ----------------------------------------------------------------------------- hand-worked examples

def test_tiny_hand_example(con):
    """Four records, worked by hand."""
    load_numpy(con, "o", {"x": np.array([0.0, 1.0, 2.0, 4.0]), "y": np.array([0.0, 0.0, 1.0, 1.0]),
                          "g": np.array(["a", "a", "b", "b"]), "h": np.array(["u", "v", "u", "v"])})
    load_numpy(con, "r", {"x": np.array([0.0, 2.0, 2.0, 3.0]), "y": np.array([0.0, 1.0, 1.0, 1.0]),
                          "g": np.array(["a", "b", "b", "b"]), "h": np.array(["u", "u", "u", "v"])})
    ev = evaluate(con, "o", "r", ["x", "y", "g", "h"], categorical=["g", "h"], order="input")
    u, r = ev.utility, ev.risk
    # KS: x original {0,1,2,4} vs released {0,2,2,3}: at x=1 F = 2/4 vs 1/4 -> 0.25
    assert u.ks == {"x": 0.25, "y": 0.25}
    # TV: g (2a,2b) vs (1a,3b) -> 0.25; h (2u,2v) vs (3u,1v) -> 0.25
    assert u.tv == {"g": 0.25, "h": 0.25}
    # multi-information: original g, h independent -> 0; released pairs (a,u),(b,u),(b,u),(b,v)
    h_g = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))
    h_joint = -(2 * 0.25 * math.log(0.25) + 0.5 * math.log(0.5))
    assert u.multi_information.original == pytest.approx(0.0, abs=1e-15)
    assert u.multi_information.released == pytest.approx(2 * h_g - h_joint)
    # scaled x = x / 4, y as is; mismatches of g, h add 1 each.
    # DCR of original record 1 (0,0,a,u): released record 1 identical -> 0
    # record 2 (1/4, 0, a, v): to rel 1 (0,0,a,u): 1/16 + 1; to rel 4 (3/4,1,b,v): 1/4 + 1 + 1
    #   -> sqrt(17/16); record 3 (1/2, 1, b, u): rel 2 identical -> 0
    # record 4 (1, 1, b, v): rel 4 (3/4, 1, b, v): 1/4
    assert r.dcr_mean == pytest.approx((0 + math.sqrt(17 / 16) + 0 + 0.25) / 4)
    # linkage: rel 1 -> orig 1 (own, distance 0); rel 2 (1/2,1,b,u) -> orig 3 at 0 (own is orig 2);
    # rel 3 = rel 2 -> orig 3, its own: linked; rel 4 (3/4,1,b,v) -> orig 4 at 1/4 (own)
    assert r.linkage_rate == 0.75
    # SDID, sd(x) = sd(0,1,2,4) = sqrt(35/12) ~ 1.708, sd(y) = sqrt(1/3) ~ 0.577:
    # |dx| = 0,1,0,1 and |dy| = 0,1,0,0 -> records 1, 3, 4 lie inside; record 2 has |dy| = 1
    assert r.sdid == 0.75
    # unique survival: all four originals are unique; 1 and 3 appear in the release
    assert r.unique_records == 4 and r.unique_survival == 0.5


def test_ties_count_as_linked_and_duplicates_are_not_unique(con):
    """Original records 1 and 2 are identical: released record 1 (a copy) is equally near both,
    and counts as linked. Unique survival ignores the duplicated pair."""
    load_numpy(con, "o", {"a": np.array([1.0, 1.0, 5.0, 9.0]), "b": np.array([2.0, 2.0, 0.0, 3.0])})
    load_numpy(con, "r", {"a": np.array([1.0, 1.0, 9.0, 5.0]), "b": np.array([2.0, 2.0, 3.0, 0.0])})
    ev = evaluate(con, "o", "r", ["a", "b"], order="input")
    assert ev.risk.linkage_rate == 0.5 and ev.risk.linkage_rate_expected == 0.25
    assert ev.risk.unique_records == 2 and ev.risk.unique_survival == 1.0
    assert ev.risk.dcr_mean == 0.0


def test_ci_overlap_formula():
    assert ci_overlap((0.0, 2.0), (1.0, 3.0)) == pytest.approx(0.5)
    assert ci_overlap((0.0, 4.0), (1.0, 2.0)) == pytest.approx(0.5 * (1 / 4 + 1))
    assert ci_overlap((0.0, 1.0), (2.0, 3.0)) == 0.0
    assert ci_overlap((0.0, 1.0), (0.0, 1.0)) == 1.0


def test_simple_regression_matches_linregress(con):
    rng = np.random.default_rng(3)
    x = rng.normal(size=60)
    y = 2 + 0.5 * x + rng.normal(size=60)
    load_numpy(con, "o", {"x": x, "y": y})
    load_numpy(con, "r", {"x": x + rng.normal(0, 0.3, 60), "y": y})
    ev = evaluate(con, "o", "r", ["y", "x"], target="y", order="input")
    for role, xs in (("original", x), ("released", con.execute("SELECT x FROM r").fetchnumpy()["x"])):
        fit = stats.linregress(xs, y)
        coef, se = getattr(ev.utility.ols.coefficients, role), getattr(ev.utility.ols.std_errors, role)
        assert coef["x"] == pytest.approx(fit.slope) and coef["(Intercept)"] == pytest.approx(fit.intercept)
        assert se["x"] == pytest.approx(fit.stderr) and se["(Intercept)"] == pytest.approx(fit.intercept_stderr)
        assert getattr(ev.utility.ols.r2, role) == pytest.approx(fit.rvalue ** 2)


@pytest.mark.parametrize("df", [1, 2, 3, 5, 10, 30, 227, 1000, 123456, 1e9])
def test_t_quantile_matches_scipy(df):
    assert t_quantile(0.975, df) == pytest.approx(stats.t.ppf(0.975, df), rel=1e-10)
    assert t_quantile(0.9, df) == pytest.approx(stats.t.ppf(0.9, df), rel=1e-10)


@pytest.mark.parametrize("p", [0.6, 0.9, 0.975, 0.995])
def test_t_quantile_closed_forms(p):
    """Closed forms independent of scipy: df = 1 is the Cauchy quantile tan(pi (p - 1/2)),
    df = 2 is (2p - 1) / sqrt(2 p (1 - p)). Both are evaluated to ~1e-15 relative; the
    incomplete-beta inversion behind stdtrit is good to ~1e-13, hence rel=1e-12."""
    assert t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-12)
    assert t_quantile(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-12)
    assert t_quantile(0.975, 10) == pytest.approx(2.228, abs=5e-4)      # textbook table, 3 decimals


def brute_force(q, qc, ref, rc):
    """Every squared distance, numeric columns added in order then mismatches: the exact
    arithmetic of the implementation, so ties are exact floating-point equality."""
    full = np.zeros((len(q), len(ref)))
    for j in range(q.shape[1]):
        full = full + (q[:, None, j] - ref[None, :, j]) ** 2
    return full + (qc[:, None, :] != rc[None, :, :]).sum(axis=2)


@pytest.mark.parametrize("seed,small_search,few_groups,query_cost,onehot_levels",
                         [(11, 0, 0, 0, 64), (12, 0, 0, 0, 64), (16, 0, 64, 0, 64), (15, 0, 0, 10 ** 12, 64),
                          (13, 10 ** 12, 0, 0, 64), (14, 10 ** 12, 0, 0, 1)])
def test_nearest_search_is_exact(set_limits, seed, small_search, few_groups, query_cost, onehot_levels):
    """Lattice data full of exact ties and duplicate rows, categorical columns (groups of
    equal categories, minima both below and above one, two and three mismatches), numeric-only
    and categorical-only shapes: same squared distances and tie counts as a brute force, to
    the last bit. small_search=0 takes the k-d trees: one tree with the groups apart along an
    extra coordinate (few_groups=0) or one per group (64), the records whose nearest row is a
    mismatch away searched group by group, or (query_cost=10**12) handed to the blocked brute
    force once a mismatch is within reach; small_search=10**12 takes the blocked brute force
    for everything (in blocks of 3 query rows; onehot_levels=1 compares categories directly,
    not by product)."""
    set_limits(SMALL_SEARCH=small_search, GROUP_QUERY_COST=query_cost, FEW_GROUPS=few_groups, SMALL_REFERENCE=0,
               ONEHOT_LEVELS=onehot_levels, CHUNK_ELEMENTS=3 * 250)
    rng = np.random.default_rng(seed)
    shapes = [(3, 2), (3, 0), (0, 2), (1, 1), (5, 3)]
    zeros = most_ties = 0
    for trial in range(20):
        p, m = shapes[trial % len(shapes)]
        nq, nr = int(rng.integers(2, 300)), int(rng.integers(1, 250))
        q, ref = rng.integers(0, 4, size=(nq, p)) / 3.0, rng.integers(0, 4, size=(nr, p)) / 3.0
        qc, rc = rng.integers(0, 3, size=(nq, m)), rng.integers(0, 3, size=(nr, m))
        got, ties = nearest_sqdist(q, qc, ref, rc, count_ties=True)
        full = brute_force(q, qc, ref, rc)
        np.testing.assert_array_equal(got, full.min(axis=1))
        np.testing.assert_array_equal(ties, (full == full.min(axis=1)[:, None]).sum(axis=1))
        np.testing.assert_array_equal(nearest_sqdist(q, qc, ref, rc), got)
        zeros, most_ties = zeros + np.sum(got == 0), max(most_ties, ties.max())
    assert zeros > 0 and most_ties > 1               # the data really has duplicates and ties
    # far-apart corners, many records with no category in common with any reference row (the
    # nearest up to 3 mismatches away) and groups whose rows are as far apart as the data spans
    for trial in range(4):
        q, ref = rng.choice([0.0, 10.0], size=(120, 2)), rng.choice([0.0, 10.0], size=(90, 2))
        qc, rc = rng.integers(0, 3, size=(120, 3)), rng.integers(1, 4, size=(90, 3))
        got, ties = nearest_sqdist(q, qc, ref, rc, count_ties=True)
        full = brute_force(q, qc, ref, rc)
        np.testing.assert_array_equal(got, full.min(axis=1))
        np.testing.assert_array_equal(ties, (full == full.min(axis=1)[:, None]).sum(axis=1))
        assert got.max() >= 3 and ties.max() > 1
    # continuous data (unique nearest rows: the path without ball searches) against the brute force
    q, ref = rng.normal(size=(500, 4)), rng.normal(size=(400, 4))
    qc, rc = rng.integers(0, 2, size=(500, 1)), rng.integers(0, 2, size=(400, 1))
    got, ties = nearest_sqdist(q, qc, ref, rc, count_ties=True)
    full = brute_force(q, qc, ref, rc)
    np.testing.assert_array_equal(got, full.min(axis=1))
    assert set(ties) == {1}
    d, _ = spatial.cKDTree(ref).query(q, k=1)
    np.testing.assert_allclose(np.sqrt(nearest_sqdist(q, np.zeros((500, 0), int), ref, np.zeros((400, 0), int))),
                               d, rtol=1e-12)


@pytest.mark.parametrize("small_search", [0, 10 ** 9])     # k-d trees / one blocked brute force
def test_risk_measures_match_brute_force_with_categories_ties_and_duplicates(con, set_limits, small_search):
    """dcr_mean, linkage_rate and linkage_rate_expected from the full distance matrices, on
    integer data with duplicate records, exact ties and two categorical columns (one of them
    with NULLs), paired by position and by id with dropped records."""
    set_limits(SMALL_SEARCH=small_search, SMALL_REFERENCE=min(small_search, 512))
    rng = np.random.default_rng(7)
    n = 400
    a, b = rng.integers(0, 5, n).astype(float), rng.integers(0, 3, n).astype(float)
    g, h = rng.choice(["x", "y", "z"], n), rng.choice(["u", "v"], n)
    a[:80], b[:80], g[:80], h[:80] = a[80:160], b[80:160], g[80:160], h[80:160]      # duplicates
    ra, rb = a.copy(), b.copy()
    moved = rng.random(n) < 0.5
    ra[moved] = rng.integers(0, 5, moved.sum())
    rg = np.where(rng.random(n) < 0.2, rng.choice(["x", "y", "z"], n), g)
    load_numpy(con, "o", {"rid": np.arange(n), "a": a, "b": b, "g": g, "h": h})
    load_numpy(con, "r", {"rid": np.arange(n), "a": ra, "b": rb, "g": rg, "h": h})
    con.execute("UPDATE r SET h = NULL WHERE rid % 7 = 0").fetchall()
    cols = ["a", "b", "g", "h"]

    def expected(keep):
        xo, xr = np.column_stack([a, b])[keep], np.column_stack([ra, rb])[keep]
        hr = np.where(np.arange(n) % 7 == 0, None, h)
        co = np.column_stack([g, h])[keep]
        cr = np.column_stack([rg, hr])[keep]
        lo, hi = xo.min(axis=0), xo.max(axis=0)
        so, sr = (xo - lo) / (hi - lo), (xr - lo) / (hi - lo)
        d_or = brute_force(so, co, sr, cr)                  # original rows x released rows
        d_ro = brute_force(sr, cr, so, co)
        nearest = d_ro.min(axis=1)
        own = np.diag(d_ro)
        ties = (d_ro == nearest[:, None]).sum(axis=1)
        linked = own == nearest
        return np.sqrt(d_or.min(axis=1)).mean(), linked.mean(), np.where(linked, 1 / ties, 0).mean(), ties

    ev = evaluate(con, "o", "r", cols, categorical=["g", "h"], order="input")
    dcr, rate, rate_expected, ties = expected(np.arange(n))
    assert ties.max() > 5                        # the data really is full of ties
    assert ev.risk.dcr_mean == pytest.approx(dcr, rel=1e-12)
    assert ev.risk.linkage_rate == rate and ev.risk.linkage_rate_expected == pytest.approx(rate_expected, rel=1e-12)
    assert (ev.paired_by, ev.dropped) == ("position", 0)

    shuffled = "SELECT * FROM r WHERE rid % 5 <> 1 ORDER BY hash(rid)"
    ev = evaluate(con, "o", shuffled, cols, categorical=["g", "h"], id="rid")
    keep = np.flatnonzero(np.arange(n) % 5 != 1)
    dcr, rate, rate_expected, _ = expected(keep)
    assert (ev.paired_by, ev.dropped, ev.rows) == ("rid", n - len(keep), len(keep))
    assert ev.risk.dcr_mean == pytest.approx(dcr, rel=1e-12)
    assert ev.risk.linkage_rate == rate and ev.risk.linkage_rate_expected == pytest.approx(rate_expected, rel=1e-12)
    # entropies through scipy.special.entr against scipy.stats.entropy
    codes = {v: i for i, v in enumerate(sorted(set(g)))}
    gi, hi_ = np.array([codes[v] for v in g]), (h == "v").astype(int)
    joint = np.unique(np.column_stack([gi, hi_]), axis=0, return_counts=True)[1]
    mi = stats.entropy(np.bincount(gi)) + stats.entropy(np.bincount(hi_)) - stats.entropy(joint)
    assert evaluate(con, "o", "o", cols, categorical=["g", "h"], order="input").utility.multi_information.original == \
        pytest.approx(mi, abs=1e-12)


# ----------------------------------------------------------------------------- sources and JSON

def test_files_queries_and_json(con, bodyfat, rwn_release, tmp_path):
    out = tmp_path / "release.parquet"
    con.execute(f"COPY release TO '{out}' (FORMAT parquet)").fetchall()
    cols = ["Age", "Weight", "Height"]
    by_table = evaluate(con, bodyfat, rwn_release, cols, target="Weight")
    by_files = evaluate(con, str(BODYFAT), out, cols, target="Weight", order="input")
    by_query = evaluate(con, "SELECT * FROM bodyfat", "SELECT * FROM release", cols, target="Weight", order="input")
    assert by_table.utility == by_files.utility == by_query.utility
    assert by_table.risk == by_files.risk == by_query.risk
    path = tmp_path / "ev.json"
    text = by_files.to_json(path)
    assert json.loads(path.read_text()) == json.loads(text) == by_files.to_dict()
    d = by_files.to_dict()
    assert d["utility"]["ols"]["terms"] == ["(Intercept)", "Age", "Height"]
    assert set(d["risk"]) == {"dcr_mean", "linkage_rate", "linkage_rate_expected", "sdid", "sdid_sdcmicro", "unique_survival",
                              "unique_records", "sdid_rwn_paper", "rmdid", "dcr_mean_raw"}
    assert d["utility"]["cooks_max"]["released"] == by_files.utility.cooks_max.released


def test_nan_becomes_null_in_json(con):
    """A column that the release made constant: its correlations are undefined (NaN -> null)."""
    load_numpy(con, "o", {"a": np.arange(10.0), "b": np.arange(10.0) ** 2})
    load_numpy(con, "r", {"a": np.full(10, 3.0), "b": np.arange(10.0) ** 2})
    ev = evaluate(con, "o", "r", ["a", "b"], order="input")
    assert math.isnan(ev.utility.corr_mad)
    assert ev.to_dict()["utility"]["corr_mad"] is None
    json.loads(ev.to_json())                     # strict JSON, no NaN token


def test_categorical_only_and_null_category(con):
    load_numpy(con, "o", {"s": np.array(["x", "y", "x", "z"])})
    con.execute("CREATE TABLE r AS SELECT * FROM (VALUES ('x'), (NULL), ('x'), ('')) v(s)").fetchall()
    ev = evaluate(con, "o", "r", ["s"], categorical=["s"], order="input")
    # NULL and '' are two categories, both absent from the original: TV = 0.5 * (1/4 + 1/4 + 1/4 + 1/4)
    assert ev.utility.tv == {"s": 0.5}
    assert ev.utility.corr_mad is None and ev.utility.ks == {} and ev.risk.sdid is None
    assert ev.risk.unique_records == 2 and ev.risk.unique_survival == 0.0
    assert ev.risk.dcr_mean == 0.5
    # with one categorical column every record ties with many: released 1 and 3 ('x') tie with
    # originals 1 and 3; NULL and '' are at distance 1 from all four originals. Ties count as
    # linked, so all four are linked; a random pick among the tied finds 1/2, 1/4, 1/2, 1/4.
    assert ev.risk.linkage_rate == 1.0
    assert ev.risk.linkage_rate_expected == pytest.approx((0.5 + 0.25 + 0.5 + 0.25) / 4)


# ----------------------------------------------------------------------------- bad input

@pytest.fixture
def small(con):
    rng = np.random.default_rng(0)
    data = {"age": rng.integers(20, 70, 30).astype(float), "income": rng.normal(5e4, 1e4, 30),
            "sex": rng.choice(["F", "M"], 30)}
    load_numpy(con, "o", data)
    load_numpy(con, "r", data)
    return data


@pytest.mark.parametrize("released,kwargs,message", [
    ("SELECT * FROM r LIMIT 29", {}, "released data .* has 29 rows but the original .* has 30"),
    ("SELECT age, sex FROM r", {}, "column 'income' is not in the released data"),
    ("SELECT age, sex, CAST(income AS VARCHAR) AS income FROM r", {},
     "column 'income' has type VARCHAR in the released data, not a numeric type"),
    ("r", dict(columns=["age", "sex"]), "column 'sex' has type VARCHAR in the original data"),
    ("r", dict(target="sex", categorical=["sex"], columns=["age", "income", "sex"]), "target 'sex' is categorical"),
    ("r", dict(target="height"), "target 'height' is not among columns"),
    ("r", dict(columns=["age"], target="age"), "needs at least one other numeric column"),
    ("r", dict(columns=["age", "agee"]), "column 'agee' is not in the original data.*did you mean 'age'"),
    ("r", dict(columns=[]), "at least one column"),
    ("r", dict(columns=["age", "age"]), "listed twice"),
    ("r", dict(categorical=["nope"]), "categorical: 'nope' is not among columns"),
    ("r", dict(sdid_k=-1), "sdid_k must be a finite number >= 0"),
    ("r", dict(sdid_k="wide"), "sdid_k must be a number"),
    ("SELECT * REPLACE (CASE WHEN age > 60 THEN NULL ELSE age END AS age) FROM r", {},
     "column 'age' of the released data is NULL in"),
    ("SELECT * REPLACE (CASE WHEN age > 60 THEN 'NaN'::DOUBLE ELSE age END AS age) FROM r", {},
     "column 'age' of the released data is NaN or infinite"),
    ("no_such_table", {}, "no table or view named 'no_such_table'"),
])
def test_bad_input(con, small, released, kwargs, message):
    kwargs.setdefault("columns", ["age", "income"])
    kwargs.setdefault("order", "input")
    with pytest.raises(RWNError, match=message):
        evaluate(con, "o", released, **kwargs)


def test_bad_original(con, small):
    with pytest.raises(RWNError, match="original data .* has no rows"):
        evaluate(con, "SELECT * FROM o WHERE false", "SELECT * FROM r WHERE false", ["age"], order="input")
    with pytest.raises(RWNError, match="single row"):
        evaluate(con, "SELECT * FROM o LIMIT 1", "SELECT * FROM r LIMIT 1", ["age"], order="input")
    with pytest.raises(RWNError, match="column 'c' is constant in the original"):
        evaluate(con, "SELECT *, 1 AS c FROM o", "SELECT *, 1 AS c FROM r", ["age", "c"], order="input")
    with pytest.raises(RWNError, match="too few"):
        evaluate(con, "SELECT * FROM o LIMIT 2", "SELECT * FROM r LIMIT 2", ["age", "income"], target="age", order="input")
    with pytest.raises(RWNError, match="OLS on the released data: .* collinear"):
        evaluate(con, "SELECT *, income * 2 + age AS z FROM o", "SELECT *, income * 2 AS z FROM r",
                 ["age", "income", "z"], target="age", order="input")


def test_pairing_by_id_with_a_shuffled_release_and_dropped_rows(con, bodyfat):
    """A release in keyed order, carrying an id through unperturbed, evaluates by id exactly as
    its input-order twin evaluates by position; dropped rows are counted and left out."""
    con.execute("CREATE TABLE orig AS SELECT row_number() OVER () AS rid, * FROM bodyfat").fetchall()
    cols = ["Age", "Weight", "Height"]
    rwn_sql.perturb(con, "orig", cols, k=5, key="pairing-key-0123456789", into="shuffled")
    rwn_sql.perturb(con, "orig", cols, k=5, key="pairing-key-0123456789", order="input", into="in_order")
    assert con.execute("SELECT * FROM shuffled").fetchall() != con.execute("SELECT * FROM in_order").fetchall()
    by_id = rwn_sql.evaluate(con, "orig", "shuffled", cols, id="rid")
    by_position = rwn_sql.evaluate(con, "orig", "in_order", cols)
    assert (by_id.paired_by, by_id.dropped) == ("rid", 0)
    assert by_id.utility == by_position.utility and by_id.risk == by_position.risk
    partial = rwn_sql.evaluate(con, "orig", "SELECT * FROM shuffled WHERE rid % 10 <> 0", cols, id="rid")
    assert partial.dropped == 24 and partial.rows == 241 - 24
    with pytest.raises(rwn_sql.RWNError, match="repeats values"):
        rwn_sql.evaluate(con, "orig", "SELECT * FROM orig UNION ALL SELECT * FROM orig", cols, id="rid")


# ----------------------------------------------------------------------------- many releases at once

def _close(a, b, rel):
    """Equal structures, floats within `rel` (numpy's reductions may round the last bit
    differently for arrays of different shapes or alignments)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], rel) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_close(u, v, rel) for u, v in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= rel * max(abs(a), abs(b))
    return a == b


@pytest.mark.parametrize("small_search", [0, 10 ** 9])     # k-d trees / blocked brute force
def test_replicates_evaluate_as_single_releases(con, set_limits, small_search):
    """evaluate_replicates (all releases of a setting in one numpy pass) gives, release by
    release, what evaluate gives for that release alone: risk measures exactly (exact distances,
    ties and counts), utility to 1e-12; with categorical columns (one with NULLs), duplicate
    records, ties and an OLS target, and a batch size that splits the releases unevenly."""
    set_limits(SMALL_SEARCH=small_search, SMALL_REFERENCE=min(small_search, 512))
    set_limits(BATCH_ELEMENTS=300 * 5 * 3)         # 3 releases a batch
    rng = np.random.default_rng(21)
    n, reps = 300, 7
    a, b, y = rng.integers(0, 6, n).astype(float), rng.normal(size=n), rng.normal(size=n)
    g, h = rng.choice(["x", "y", "z"], n), rng.choice(["u", "v"], n)
    a[:40], b[:40], y[:40], g[:40], h[:40] = a[40:80], b[40:80], y[40:80], g[40:80], h[40:80]   # duplicates
    load_numpy(con, "orig", {"a": a, "b": b, "y": y, "g": g, "h": h})
    rep = np.repeat(np.arange(reps), n)
    noise = rng.random(reps * n) < 0.5
    rel = {"replicate": rep,
           "a": np.where(noise, rng.integers(0, 6, reps * n), np.tile(a, reps)).astype(float),
           "b": np.tile(b, reps) + noise * rng.normal(0, 0.1, reps * n),
           "y": np.tile(y, reps) + rng.normal(0, 0.2, reps * n) * (rep % 2),   # odd replicates only
           "g": np.where(rng.random(reps * n) < 0.2, rng.choice(["x", "y", "z", "w"], reps * n), np.tile(g, reps)),
           "h": np.tile(h, reps)}
    load_numpy(con, "rels", rel)
    con.execute("UPDATE rels SET h = NULL WHERE rowid % 11 = 0").fetchall()
    cols, cats = ["a", "b", "y", "g", "h"], ["g", "h"]
    batch = list(evaluate_module.evaluate_replicates(con, "orig", "SELECT * FROM rels ORDER BY rowid", reps, cols,
                                                     target="y", categorical=cats))
    assert len(batch) == reps
    for r, ev in enumerate(batch):
        alone = evaluate(con, "orig", f"SELECT * EXCLUDE (replicate) FROM rels WHERE replicate = {r} ORDER BY rowid",
                         cols, target="y", categorical=cats, order="input").to_dict()
        got = ev.to_dict()
        assert got.pop("released").endswith(f"replicate {r}")
        alone.pop("released")
        assert got["risk"] == alone["risk"]
        assert _close(got, alone, 1e-12)
    assert batch[0].risk.linkage_rate != batch[1].risk.linkage_rate       # the releases differ


def test_ks_statistic_with_ties_equals_scipy():
    """The KS statistic of many releases at once (merged sorts, or value codes when every
    released value is an original one) equals ks_2samp's, ties included."""
    rng = np.random.default_rng(3)
    xo = rng.integers(0, 9, size=(200, 3)).astype(float)
    xr = np.stack([rng.integers(0, 9, size=(200, 3)).astype(float), xo + 0.0, rng.normal(4, 3, size=(200, 3))])
    got = utility.ks(xo, xr)

    def at_every_point(a, b):        # both empirical CDFs at every data point, as ks_2samp evaluates them
        a, b = np.sort(a), np.sort(b)
        grid = np.concatenate([a, b])
        return np.max(np.abs(np.searchsorted(a, grid, side="right") / len(a)
                             - np.searchsorted(b, grid, side="right") / len(b)))
    for r in range(len(xr)):
        for j in range(3):
            assert got[r, j] == at_every_point(xo[:, j], xr[r, :, j])
            assert got[r, j] == pytest.approx(stats.ks_2samp(xo[:, j], xr[r, :, j]).statistic, abs=1e-15)
    assert np.all(got[1] == 0)
    # releases of the original's values only (draws, swaps; some values not drawn at all):
    # counted by value codes, the same numbers
    xr = np.stack([xo[rng.integers(0, 200, size=200)] for _ in range(4)] + [xo[::-1]])
    xr[:, :, 2] = np.where(xr[:, :, 2] == 4, 3, xr[:, :, 2])
    swapped = utility.ks(xo, xr)
    for r in range(len(xr)):
        for j in range(3):
            assert swapped[r, j] == at_every_point(xo[:, j], xr[r, :, j])
    assert np.all(swapped[4, :2] == 0) and swapped[4, 2] > 0 and np.all(swapped[:4] > 0)


def test_category_codes_number_texts_in_order_with_null_after_the_empty_string(con):
    """The categorical codes of two data sets (Arrow dictionaries merged): one dense numbering,
    texts in code-point order, NULL its own code right after '' (the order the utility sums run
    in), and after dropping rows only the values that still occur numbered."""
    texts = [["b", None, "", "é", "a", "b"], ["", "Z", None, "a", "zz", "b"]]
    for i, t in enumerate(texts):
        rows = ", ".join("(NULL)" if v is None else f"('{v}')" for v in t)
        con.execute(f"CREATE OR REPLACE TABLE u{i} AS SELECT * FROM (VALUES {rows}) v(s)").fetchall()
    read = [evaluate_module._read(con, evaluate_module.resolve_source(con, f"u{i}"), "r", (), ("s",))[1] for i in range(2)]

    def expected(rows):
        keys = sorted({(v or "", v is None) for t in rows for v in t})
        return [[keys.index((v or "", v is None)) for v in t] for t in rows]

    codes = evaluate_module._shared_codes(read, 6)
    assert [c[:, 0].tolist() for c in codes] == expected(texts)
    keep = np.array([0, 1, 2])                     # "a" (between others), "zz" and "é" no longer occur
    sub = [[(index[keep], values) for index, values in read[0]], [(index[keep], values) for index, values in read[1]]]
    codes = evaluate_module._shared_codes(sub, 3)
    assert [c[:, 0].tolist() for c in codes] == expected([[t[i] for i in keep] for t in texts])


def test_combination_counts_equal_unique_rows():
    """The joint counts of the multi-information: those of np.unique over rows, in its order,
    also when the mixed-radix key must be renumbered (levels whose product exceeds int64)."""
    rng = np.random.default_rng(5)
    for levels in ([3, 1, 4], [2 ** 20] * 4):
        k = np.column_stack([rng.integers(0, n, 500) for n in levels])
        k[:100] = k[100:200]                                  # repeated combinations
        k[0, :] = np.array(levels) - 1                        # the largest codes occur
        np.testing.assert_array_equal(risk.category_combinations(k)[1],
                                      np.unique(k, axis=0, return_counts=True)[1])


@pytest.mark.parametrize("onehot_levels,cached", [(64, 65_536), (1, 3 * 40 * 30)])
def test_both_way_searches_of_many_small_releases_match_brute_force(set_limits, onehot_levels, cached):
    """_searches_both_ways (tune's sweeps of tiny data: every release's dcr and linkage searches
    from one distance matrix each) against the full distance matrices, to the last bit: lattice
    data full of ties and duplicates, categorical columns (one-hot and, with onehot_levels=1,
    compared directly), the original's rows standing for several records, releases in blocks
    of 3 and of all."""
    set_limits(ONEHOT_LEVELS=onehot_levels, CACHED_ELEMENTS=cached)
    rng = np.random.default_rng(5)
    for p, m in [(3, 2), (2, 0), (0, 2)]:
        no, n, reps = 40, 30, 7
        o, oc = rng.integers(0, 4, size=(no, p)) / 3.0, rng.integers(0, 3, size=(no, m))
        counts = rng.integers(1, 4, no)
        r, rc = rng.integers(0, 4, size=(reps, n, p)) / 3.0, rng.integers(0, 3, size=(reps, n, m))
        dcr2, nearest, ties = risk._searches_both_ways(o, oc, counts, r, rc)
        for k in range(reps):
            full = brute_force(o, oc, r[k], rc[k])                         # original rows x release rows
            np.testing.assert_array_equal(dcr2[k], full.min(axis=1))
            np.testing.assert_array_equal(nearest[k], full.min(axis=0))
            np.testing.assert_array_equal(ties[k], ((full == full.min(axis=0)) * counts[:, None]).sum(axis=0))
        assert ties.max() > counts.max()                       # ties among several original rows


def test_sdid_uses_the_sample_standard_deviation(con):
    """SDID's interval is k sample standard deviations (ddof=1) of the original column. Original
    (x, y) = (0,0), (1,1), (2,0), (4,1); the release moves the first x to 1.6, between the
    population sd of x (sqrt(35/16) = 1.479) and the sample sd (sqrt(35/12) = 1.708), so every
    record is inside: SDID = 1.0. Catches the population sd (`xo.std(axis=0, ddof=0)` in
    _checked_original), under which SDID is 0.75; verified on that mutant (fails) and on the
    code (passes)."""
    load_numpy(con, "o", {"x": np.array([0.0, 1.0, 2.0, 4.0]), "y": np.array([0.0, 1.0, 0.0, 1.0])})
    load_numpy(con, "r", {"x": np.array([1.6, 1.0, 2.0, 4.0]), "y": np.array([0.0, 1.0, 0.0, 1.0])})
    assert math.sqrt(35 / 16) < 1.6 < math.sqrt(35 / 12)
    assert evaluate(con, "o", "r", ["x", "y"], order="input").risk.sdid == 1.0
