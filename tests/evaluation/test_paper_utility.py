"""The RWN paper notebook's utility measures (issue #27): pcaloadMeanAbsDif (PC loading MAD) and
reg_utilityMetrics (regression coefficient MAD, R^2), each against an independent computation:
a per-release loop with prcomp's SVD and an explicit sign loop, and numpy.linalg.lstsq."""
import numpy as np
import pytest

from helpers.data import BODYFAT
from rwn_sql.evaluation import paper_utility as pu

TARGET, WEIGHT, HEIGHT = 0, 2, 3         # BodyFat, Weight, Height in bodyfat_clean.csv


@pytest.fixture(scope="module")
def bodyfat():
    return np.loadtxt(BODYFAT, delimiter=",", skiprows=1)


def releases(rng, xo, reps, keep):
    """Releases whose cells keep their value with probability `keep`, else take another record's
    value of the column (an RWN-like draw with every record a neighbour)."""
    n, p = xo.shape
    donors = rng.integers(0, n, (reps, n, p))
    take = rng.random((reps, n, p)) >= keep
    return np.where(take, xo[donors, np.arange(p)], xo[None])


# ----------------------------------------------------------------------------- PCA loadings

def prcomp_loadings(x, component):
    """prcomp(x, center = TRUE, scale. = TRUE)$rotation[, component], up to sign: the SVD of
    the standardised data, as R computes it."""
    z = (x - x.mean(axis=0)) / x.std(axis=0, ddof=1)
    _, _, vt = np.linalg.svd(z, full_matrices=False)
    return vt[component - 1]


def pcaload_mean_abs_dif(xo, xr, component):
    """The notebook's pcaloadMeanAbsDif, line by line (pc_vec of length 1)."""
    o, p = prcomp_loadings(xo, component), prcomp_loadings(xr, component)
    colsum1 = sum(abs(o[j] - p[j]) for j in range(len(o)))
    colsum2 = sum(abs(o[j] - (-1 * p[j])) for j in range(len(o)))
    return min(colsum1, colsum2) / len(o)


def test_sign_rule_on_hand_checked_loadings():
    # o = (0.6, 0.8), r = -(0.8, 0.6): as given |0.6+0.8| + |0.8+0.6| = 2.8; flipped 0.2 + 0.2 = 0.4
    assert pu.loading_mad([0.6, 0.8], [-0.8, -0.6]) == pytest.approx(0.2)
    assert pu.loading_mad([0.6, 0.8], [0.8, 0.6]) == pytest.approx(0.2)
    assert pu.loading_mad([0.6, 0.8], [[-0.6, -0.8], [0.6, 0.8]]) == pytest.approx([0.0, 0.0])


def test_two_columns_by_hand():
    """Two columns: the correlation matrix [[1, r], [r, 1]] has PC1 (1, sign r) / sqrt 2 and PC2
    (1, -sign r) / sqrt 2 whatever the variances, so a release of the same sign of correlation
    loses nothing and one of the opposite sign loses 1 / sqrt 2 on either component."""
    rng = np.random.default_rng(3)
    a = rng.normal(size=50)
    xo = np.column_stack([a, 3 * a + rng.normal(size=50)])                # r > 0
    same = np.column_stack([a * 10, a + 2 * rng.normal(size=50)])          # r > 0, other scales
    opposite = np.column_stack([a, -a + rng.normal(size=50)])              # r < 0
    for component in (1, 2):
        assert pu.pc_loading_mad(xo, same, component) == pytest.approx(0.0, abs=1e-12)
        assert pu.pc_loading_mad(xo, -xo, component) == pytest.approx(0.0, abs=1e-12)     # same correlation
        assert pu.pc_loading_mad(xo, opposite, component) == pytest.approx(1 / np.sqrt(2), abs=1e-12)


@pytest.mark.parametrize("component", [1, 2, 3])
def test_pc_loading_mad_equals_prcomp_per_release(bodyfat, component):
    xr = releases(np.random.default_rng(component), bodyfat, 12, keep=0.6)
    expected = [pcaload_mean_abs_dif(bodyfat, x, component) for x in xr]
    got = pu.pc_loading_mad(bodyfat, xr, component)
    assert got.shape == (12,)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    assert pu.pc_loading_mad(bodyfat, xr[4], component) == pytest.approx(expected[4], rel=1e-9, abs=1e-12)


def test_pc_loading_mad_constant_column_is_nan(bodyfat):
    xr = np.stack([bodyfat, bodyfat.copy()])
    xr[1][:, 5] = 1.0
    got = pu.pc_loading_mad(bodyfat, xr, 1)
    assert got[0] == pytest.approx(0.0, abs=1e-12) and np.isnan(got[1])
    with pytest.raises(ValueError):
        pu.pc_loading_mad(bodyfat, xr, 15)


# ----------------------------------------------------------------------------- regression

def reg_utility_metrics(xo, xr):
    """The notebook's reg_utilityMetrics(..., regvars = "all"): (coefMeanAbsDif, rsquared), with
    numpy.linalg.lstsq per data set."""
    def fit(x):
        d = np.column_stack([x, 703 * x[:, WEIGHT] / x[:, HEIGHT] ** 2])
        z = (d - d.mean(axis=0)) / d.std(axis=0, ddof=1)
        y, X = z[:, TARGET], np.delete(z, TARGET, axis=1)
        beta = np.linalg.lstsq(X, y, rcond=None)[0]
        return beta, 1 - np.sum((y - X @ beta) ** 2) / np.sum(y ** 2)

    beta_o, _ = fit(xo)
    beta_r, r2 = fit(xr)
    assert len(beta_o) == xo.shape[1]             # the p - 1 other columns and bmi
    return np.mean(np.abs(beta_o - beta_r)), r2


def test_regression_measures_equal_lstsq_per_release(bodyfat):
    xr = releases(np.random.default_rng(7), bodyfat, 15, keep=0.5)
    expected = np.array([reg_utility_metrics(bodyfat, x) for x in xr])
    mad, r2 = pu.regression_measures(bodyfat, xr, TARGET, WEIGHT, HEIGHT)
    np.testing.assert_allclose(mad, expected[:, 0], rtol=1e-9)
    np.testing.assert_allclose(r2, expected[:, 1], rtol=1e-9)
    one = pu.regression_measures(bodyfat, xr[3], TARGET, WEIGHT, HEIGHT)
    assert one == pytest.approx(tuple(expected[3]), rel=1e-9)


def test_regression_of_the_original_itself(bodyfat):
    mad, r2 = pu.regression_measures(bodyfat, bodyfat, TARGET, WEIGHT, HEIGHT)
    assert mad == pytest.approx(0.0, abs=1e-12)
    assert r2 == pytest.approx(reg_utility_metrics(bodyfat, bodyfat)[1], rel=1e-12)
    assert 0.7 < r2 < 0.8            # the notebook's "Original Data" line in the R^2 plot (about 0.74)


def test_regression_undefined_cases(bodyfat):
    xr = np.stack([bodyfat, bodyfat.copy(), bodyfat.copy()])
    xr[1][:, 6] = 2.0                            # a constant column: scale() gives NaN
    xr[2][:, 7] = xr[2][:, 8]                    # two equal columns: aliased, lm gives an NA coefficient
    mad, r2 = pu.regression_measures(bodyfat, xr, TARGET, WEIGHT, HEIGHT)
    assert mad[0] == pytest.approx(0.0, abs=1e-12)
    assert np.isnan(mad[1:]).all() and np.isnan(r2[1:]).all()
    with pytest.raises(ValueError):
        pu.regression_measures(bodyfat, xr, 14, WEIGHT, HEIGHT)
    with pytest.raises(ValueError):
        pu.regression_measures(bodyfat, bodyfat[:, :5], TARGET, WEIGHT, HEIGHT)
