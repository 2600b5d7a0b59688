"""The RWN paper's risk measures as its authors computed them (issue #27): sdid_rwn_paper
(sdcMicro 5.7.6's dRisk), rmdid (dRiskRMD's risk1, with robustbase's covMcd) and dcr_mean_raw
(the notebook's calc_DCR in raw units), each against a computation in plain loops."""
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import special, stats

import rwn_sql
from helpers.data import BODYFAT, BODYFAT_COLUMNS, load_numpy
from rwn_sql.evaluation import paper_risk, risk, tune
from rwn_sql.evaluation.evaluate import evaluate, evaluate_replicates

NEW = ("sdid_rwn_paper", "rmdid", "dcr_mean_raw")


def measures(xo, xr, ko=None, kr=None, k=1.0):
    """risk.measures of releases xr (R x n x p) against xo, numeric columns unless ko/kr given."""
    n = len(xo)
    ko = np.zeros((n, 0), np.int64) if ko is None else ko
    kr = np.zeros((len(xr), n, 0), np.int64) if kr is None else kr
    return risk.measures(xo, xr, ko, kr, xo.min(axis=0), xo.max(axis=0), xo.std(axis=0, ddof=1), k, True)


def rwn_like(rng, xo, reps, keep=0.5):
    """Releases whose cells keep their value with probability `keep`, else take another
    record's value of the column (RWN's draw with every record a neighbour)."""
    n, p = xo.shape
    donors = rng.integers(0, n, (reps, n, p))
    take = rng.random((reps, n, p)) >= keep
    return np.where(take, xo[donors, np.arange(p)], xo[None])


# ----------------------------------------------------------------------------- SDID

def test_sdid_rules_on_a_hand_checked_example():
    """Three records, two columns, k = 1. Column 1: original (0, 1, 2), sd 1; release (0, 0.5,
    0.5), sd sqrt(1/12) = 0.289. Column 2 released unchanged. |x - r| in column 1 is (0, 0.5,
    1.5): within the ORIGINAL's sd (sdid) for records 1 and 2 -> 2/3; within the RELEASE's sd,
    every column (sdid_rwn_paper, sdcMicro >= 5.6.0) for record 1 only -> 1/3; at most one
    column outside (sdid_sdcmicro, sdcMicro <= 5.5.1) for all -> 1."""
    xo = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    xr = np.array([[[0.0, 0.0], [0.5, 1.0], [0.5, 2.0]]])
    assert xr[0, :, 0].std(ddof=1) == pytest.approx(math.sqrt(1 / 12))
    r = measures(xo, xr)[0]
    assert (r.sdid, r.sdid_rwn_paper, r.sdid_sdcmicro) == (pytest.approx(2 / 3), pytest.approx(1 / 3), 1.0)
    # a released column with sd 0: the interval is the released value itself, ends included
    r = measures(xo, np.array([[[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]]]))[0]
    assert r.sdid_rwn_paper == pytest.approx(1 / 3)


def test_sdid_rwn_paper_equals_a_brute_force():
    rng = np.random.default_rng(3)
    xo = rng.normal(size=(40, 3)) * [1, 10, 100]
    xr = rwn_like(rng, xo, 5) + rng.normal(0, 0.3, (5, 40, 3)) * [1, 10, 100]
    for k in (0.5, 1.0, 2.0):
        got = [r.sdid_rwn_paper for r in measures(xo, xr, k=k)]
        for r in range(len(xr)):
            sds = [stats.tstd(xr[r, :, j]) for j in range(3)]
            count = 0
            for i in range(40):
                count += all(not (xo[i, j] < xr[r, i, j] - k * sds[j] or xo[i, j] > xr[r, i, j] + k * sds[j])
                             for j in range(3))
            assert got[r] == pytest.approx(count / 40)


# ----------------------------------------------------------------------------- RMDID

def test_rmdid_on_a_hand_checked_example(monkeypatch):
    """Original columns (-1, 0, 1) and (0, 1, -1): mean 0, sd 1, so the standardised data are
    the data. With covMcd replaced by the identity the squared distances are (1, 1, 2), rmd =
    0.05 sqrt(.) and the half-widths k rmd. The release, 10 + 3 z, standardises to z = columns
    (-1, 1, 0) and (1, 0, -1): record 1 equals its original in column 1, record 3 in column 2,
    record 2 differs by 1 in both. So 2/3 at k = 0.01 (and up to k = 20, where record 2's
    half-width is exactly 1 and the strict inequalities still leave it out); 1 at k = 20.5."""
    monkeypatch.setattr(paper_risk, "covmcd", lambda z: np.eye(z.shape[1]))
    paper_risk._cache.clear()
    xo = np.array([[-1.0, 0.0], [0.0, 1.0], [1.0, -1.0]])
    xr = 10 + 3 * np.array([[[-1.0, 1.0], [1.0, 0.0], [0.0, -1.0]]])
    z, half = paper_risk.rmd_intervals(xo, 0.01)
    np.testing.assert_allclose(z, xo)
    np.testing.assert_allclose(half, 0.01 * 0.05 * np.sqrt([1, 1, 2]))
    assert paper_risk.rmdid(xo, xr, 0.01)[0] == pytest.approx(2 / 3)
    assert paper_risk.rmdid(xo, xr, 20.0)[0] == pytest.approx(2 / 3)
    assert paper_risk.rmdid(xo, xr, 20.5)[0] == 1.0
    paper_risk._cache.clear()


def brute_rmdid(xo, xr, cov, k):
    """dRiskRMDWORK's risk1 in loops, given the robust covariance `cov` of the standardised original."""
    n, p = xo.shape

    def standardised(x):
        means = [sum(x[i][j] for i in range(n)) / n for j in range(p)]
        sds = [math.sqrt(sum((x[i][j] - means[j]) ** 2 for i in range(n)) / (n - 1)) for j in range(p)]
        return [[(x[i][j] - means[j]) / sds[j] for j in range(p)] for i in range(n)]

    z, zr = standardised(xo.tolist()), standardised(xr.tolist())
    centre = [sum(z[i][j] for i in range(n)) / n for j in range(p)]
    inv = np.linalg.inv(cov).tolist()
    at_risk = 0
    for i in range(n):
        d = [z[i][j] - centre[j] for j in range(p)]
        md = sum(d[a] * inv[a][b] * d[b] for a in range(p) for b in range(p))
        half = k * math.sqrt(md) * 0.05
        at_risk += any(z[i][j] - half < zr[i][j] < z[i][j] + half for j in range(p))
    return at_risk / n


def test_rmdid_equals_a_brute_force():
    rng = np.random.default_rng(8)
    xo = rng.multivariate_normal([0, 5, -3], [[1, 0.6, 0.2], [0.6, 2, 0.3], [0.2, 0.3, 0.5]], 60)
    xo[:4] += 8                                                   # outliers
    xr = rwn_like(rng, xo, 4, keep=0.3)
    cov = paper_risk.covmcd(paper_risk.scale(xo))
    for k in (0.01, 1.0, 5.0):
        got = paper_risk.rmdid(xo, xr, k)
        want = [brute_rmdid(xo, xr[r], cov, k) for r in range(len(xr))]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert 0 < paper_risk.rmdid(xo, xr, 5.0).min()
    got = [r.rmdid for r in measures(xo, xr)]
    np.testing.assert_allclose(got, [brute_rmdid(xo, xr[r], cov, 0.01) for r in range(len(xr))], atol=1e-12)


def test_covmcd_correction_factors():
    """MCDcons(p, a) = a / P(chi2_{p+2} <= qchisq(a, p)) (robustbase: 1 / (pgamma(q / 2, p / 2 + 1)
    / a)); the finite-sample factors exceed 1 and tend to 1 as n grows."""
    for p, a in ((1, 0.5), (3, 0.6), (14, 128 / 241), (14, 0.975)):
        q = stats.chi2.ppf(a, p)
        assert paper_risk.mcd_cons(p, a) == pytest.approx(1 / (special.gammainc(p / 2 + 1, q / 2) / a), rel=1e-12)
    for p in (1, 2, 3, 14):
        for rew in (False, True):
            f = [paper_risk.mcd_cnp2(p, n, rew) for n in (50, 241, 10 ** 6)]
            assert f[0] > f[1] > f[2] > 1 and f[2] == pytest.approx(1, abs=1e-3)
    assert paper_risk.mcd_cnp2(2, 100) == pytest.approx(1 / (1 - math.exp(0.673292623522027) / 100 ** 0.691365864961895))


def test_covmcd_is_robustbase_reweighted_mcd():
    """covMcd's chain, from the raw MCD subset (here the one scikit-learn's MinCovDet finds:
    the same h records): raw covariance (divisor h - 1) times MCDcons(p, h / n) and
    MCDcnp2(p, n, 1/2); weight 1 for squared distances below qchisq(0.975, p); $cov the
    covariance of those records (divisor n_w - 1) times MCDcons(p, 0.975) and
    MCDcnp2.rew(p, n, 1/2). (MinCovDet's own covariance_ differs: other corrections.)"""
    rng = np.random.default_rng(5)
    n, p = 200, 3
    x = rng.normal(size=(n, p))
    x[:20] = rng.normal(12, 1, (20, p))
    cov = paper_risk.covmcd(x)
    assert cov is not None
    d = np.einsum("ij,jk,ik->i", x - x.mean(axis=0), np.linalg.inv(cov), x - x.mean(axis=0))
    assert np.all(d[:20] > 50)
    sklearn_covariance = pytest.importorskip("sklearn.covariance")
    mcd = sklearn_covariance.MinCovDet(random_state=0).fit(x)
    h = (n + p + 1) // 2
    subset = x[mcd.raw_support_]
    assert len(subset) == h
    raw = np.cov(subset.T) * paper_risk.mcd_cons(p, h / n) * paper_risk.mcd_cnp2(p, n)
    diff = x - subset.mean(axis=0)
    kept = x[np.einsum("ij,jk,ik->i", diff, np.linalg.inv(raw), diff) < stats.chi2.ppf(0.975, p)]
    assert 150 < len(kept) < n
    want = np.cov(kept.T) * paper_risk.mcd_cons(p, 0.975) * paper_risk.mcd_cnp2(p, n, reweighted=True)
    np.testing.assert_allclose(cov, want, rtol=1e-10)
    assert not np.allclose(cov, mcd.covariance_, rtol=1e-3)


def test_covmcd_undefined_cases():
    rng = np.random.default_rng(2)
    assert paper_risk.covmcd(rng.normal(size=(4, 3))) is None                  # n <= p + 1
    x = rng.normal(size=(60, 2))
    x[:45, 1] = 2 * x[:45, 0] + 1                                             # more than h on a line
    assert paper_risk.covmcd(x) is None
    r = measures(x, x[None] + 0.01)[0]
    assert r.rmdid is None and r.sdid_rwn_paper is not None


def test_covmcd_is_affine_equivariant():
    """Standardising first (as dRiskRMD does) changes nothing but the units: the same subsets
    are found from the same seed."""
    rng = np.random.default_rng(4)
    x = rng.standard_t(3, size=(120, 4)) * [1, 5, 20, 0.1] + [0, 3, -7, 100]
    s = x.std(axis=0, ddof=1)
    np.testing.assert_allclose(paper_risk.covmcd(x) / np.outer(s, s), paper_risk.covmcd(x / s), rtol=1e-9)


# ----------------------------------------------------------------------------- raw DCR

@pytest.mark.parametrize("small_search", [0, 10 ** 9])     # k-d trees / blocked brute force
def test_dcr_mean_raw_equals_a_brute_force(set_limits, small_search):
    set_limits(SMALL_SEARCH=small_search, SMALL_REFERENCE=min(small_search, 512))
    rng = np.random.default_rng(11)
    xo = np.round(rng.normal(size=(50, 3)) * [1, 30, 200] + [0, 100, 1000], 1)
    xo[:6] = xo[6:12]                                              # duplicate records
    xr = rwn_like(rng, xo, 3) + np.round(rng.normal(0, 1, (3, 50, 3)), 1) * (rng.random((3, 50, 1)) < 0.5)
    got = [r.dcr_mean_raw for r in measures(xo, xr)]
    for r in range(3):
        total = 0.0
        for i in range(50):
            total += min(math.dist(xo[i], xr[r, j]) for j in range(50))
        assert got[r] == pytest.approx(total / 50, rel=1e-12)


def test_dcr_mean_raw_is_none_with_a_categorical_column():
    rng = np.random.default_rng(1)
    xo = rng.normal(size=(30, 2))
    ko = rng.integers(0, 3, (30, 1))
    r = measures(xo, xo[None] + 0.1, ko, ko[None])[0]
    assert r.dcr_mean_raw is None and r.dcr_mean is not None and r.sdid_rwn_paper is not None


# ----------------------------------------------------------------------------- reporting

def test_evaluate_and_replicates_report_the_paper_measures(con, bodyfat):
    rwn_sql.perturb(con, bodyfat, BODYFAT_COLUMNS, k=5, eps=0.45, seed=7, into="release", order="input")
    ev = evaluate(con, bodyfat, "release", BODYFAT_COLUMNS)
    d = json.loads(ev.to_json())
    assert set(NEW) <= set(d["risk"])
    data = [con.execute(f"SELECT {', '.join(BODYFAT_COLUMNS)} FROM {t}").fetchnumpy() for t in (bodyfat, "release")]
    xo, xr = (np.column_stack([np.asarray(v[c], float) for c in BODYFAT_COLUMNS]) for v in data)
    sd_r = xr.std(axis=0, ddof=1)
    assert d["risk"]["sdid_rwn_paper"] == pytest.approx(np.mean(np.all(np.abs(xo - xr) <= sd_r, axis=1)))
    assert d["risk"]["rmdid"] == pytest.approx(float(paper_risk.rmdid(xo, xr[None])[0]))
    dist = np.sqrt(((xo[:, None, :] - xr[None]) ** 2).sum(axis=2))
    assert d["risk"]["dcr_mean_raw"] == pytest.approx(dist.min(axis=1).mean(), rel=1e-12)
    load_numpy(con, "rels", {"replicate": np.repeat([0, 1], len(xo)), **{c: np.tile(xr[:, j], 2)
                                                                          for j, c in enumerate(BODYFAT_COLUMNS)}})
    batch = list(evaluate_replicates(con, bodyfat, "SELECT * FROM rels ORDER BY rowid", 2, BODYFAT_COLUMNS))
    for got in batch:
        assert {m: got.to_dict()["risk"][m] for m in NEW} == {m: d["risk"][m] for m in NEW}
    assert set(NEW) <= set(tune.MEASURES)
    assert {name: tune.MEASURES[name][1](ev) for name in NEW} == {m: d["risk"][m] for m in NEW}


@pytest.mark.heavy     # in a subprocess; the measures themselves are checked above
def test_cli_evaluate_prints_the_paper_measures(tmp_path):
    cols = ",".join(BODYFAT_COLUMNS)
    rel = tmp_path / "r.csv"
    run = lambda *a: subprocess.run([sys.executable, "-m", "rwn_sql.cli", *map(str, a)],  # noqa: E731
                                    capture_output=True, text=True)
    assert run("perturb", BODYFAT, rel, "--columns", cols, "--eps", "0.3", "--seed", "4").returncode == 0
    res = run("evaluate", BODYFAT, rel, "--columns", cols, "--seed", "4")
    assert res.returncode == 0, res.stderr
    for label in ("SDID, RWN paper / sdcMicro dRisk (k = 1)", "RMDID, RWN paper / sdcMicro dRiskRMD risk1",
                  "mean distance to closest record (raw units)"):
        line = next(x for x in res.stdout.splitlines() if label in x)
        assert float(line.split()[-1]) >= 0
