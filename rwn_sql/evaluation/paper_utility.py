"""The RWN paper's utility measures that rwn_sql.evaluation.utility does not have, exactly as the
authors' notebook computes them (repository noah-perry/RWN-privacy, `Experiments/Utility Analysis
Functions.R`, used by `Experiments/SDC Comparison (bodyfat).ipynb`):

* pc_loading_mad: `pcaloadMeanAbsDif(orig, pert, pc_vec = c)`: `prcomp(center = TRUE,
  scale. = TRUE)` of EACH data set (the eigenvectors of its own correlation matrix), the loadings
  of principal component c, the sign of the release's loadings chosen to minimise
  sum_j |o_j - p_j| (a principal component's sign is arbitrary), then the mean over the p loadings;
* regression_measures: `reg_utilityMetrics(orig, pert, metric, regvars = "all")` for bodyfat:
  a column bmi = 703 * weight / height^2 added to each data set (the release's from its own
  weight and height), each data set standardised by its OWN column means and sample standard
  deviations (R's scale(), ddof = 1), `lm(target ~ . - 1)` (every other column and bmi, no
  intercept) fitted on each; "coefMeanAbsDif" is the mean |beta_orig - beta_release| over the
  coefficients, "rsquared" the release's summary.lm r.squared, which without an intercept is
  sum(fitted^2) / (sum(fitted^2) + RSS) = 1 - RSS / sum(y^2).

The correlation MAD (corMeanAbsDif) is rwn_sql.evaluation.utility.corr_mad. Every function takes
the original `xo` (n x p) and the releases `xr` (R x n x p, or one n x p release) as float arrays
whose rows are records and whose columns are in the same order, and returns one value per release
(an array of R). Vectorised over releases: R eigen-decompositions and R QR factorisations in one
numpy call each. A release with a constant column has no correlation matrix (R's prcomp stops)
and gives NaN, as does a regression whose design is rank-deficient.
"""
from __future__ import annotations

import numpy as np

__all__ = ["BMI_FACTOR", "loading_mad", "loadings", "pc_loading_mad", "regression_measures", "standardise", "with_bmi"]

BMI_FACTOR = 703.0      # the notebook's bmi <- (703 * weight) / (height^2): pounds and inches
RANK_TOLERANCE = 1e-7   # lm's tol: a design column this close to the span of the others is aliased


def _releases(xo, xr):
    """(xo as n x p float64, xr as R x n x p float64, whether xr was one n x p release)."""
    xo = np.asarray(xo, dtype=np.float64)
    xr = np.asarray(xr, dtype=np.float64)
    single = xr.ndim == 2
    if single:
        xr = xr[None]
    if xo.ndim != 2 or xr.ndim != 3 or xr.shape[1:] != xo.shape:
        raise ValueError(f"xo must be n x p and xr R x n x p (or n x p) of the same n and p, got {xo.shape} "
                         f"and {xr.shape}")
    if xo.shape[0] < 3:
        raise ValueError("the measures need at least 3 records")
    return xo, xr, single


def standardise(x):
    """R's scale(x, center = TRUE, scale = TRUE) of each data set (..., n, p): columns centred by
    their means and divided by their sample standard deviations (ddof = 1); a constant column
    gives NaN (0 / 0), where R gives NaN too."""
    centred = x - x.mean(axis=-2, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return centred / np.sqrt(np.sum(centred * centred, axis=-2, keepdims=True) / (x.shape[-2] - 1))


def loadings(x, component: int):
    """The loadings (..., p) of principal component `component` (1 = the largest variance) of
    prcomp(x, center = TRUE, scale. = TRUE) for each data set x (..., n, p), up to sign: the
    unit eigenvector of the data set's correlation matrix with the component-th largest
    eigenvalue (prcomp takes the SVD of the standardised data, whose right singular vectors are
    those eigenvectors). NaN for a data set with a constant column."""
    z = standardise(x)
    p = x.shape[-1]
    if not 1 <= component <= p:
        raise ValueError(f"component must be between 1 and the number of columns ({p}), got {component!r}")
    corr = np.swapaxes(z, -1, -2) @ z / (x.shape[-2] - 1)
    bad = ~np.all(np.isfinite(corr), axis=(-2, -1))
    corr = np.where(bad[..., None, None], np.eye(p), corr)
    _, vectors = np.linalg.eigh(corr)                  # ascending eigenvalues
    out = vectors[..., :, p - component]
    return np.where(bad[..., None], np.nan, out)


def pc_loading_mad(xo, xr, component: int = 1):
    """The notebook's pcaloadMeanAbsDif(orig, pert, pc_vec = component) for each release: the
    loadings of principal component `component` of each data set (prcomp with centring and
    scaling: its own correlation matrix), the release's sign chosen to make
    sum_j |o_j - p_j| smallest, divided by p. An array of R values (one float for an n x p
    release); NaN for a release with a constant column."""
    xo, xr, single = _releases(xo, xr)
    out = loading_mad(loadings(xo, component), loadings(xr, component))
    return float(out[0]) if single else out


def loading_mad(o, r):
    """The notebook's comparison of one component's loadings o (p) and r (..., p): the smaller of
    sum_j |o_j - r_j| and sum_j |o_j + r_j| (the sign of r that fits o best), divided by p."""
    o, r = np.asarray(o, dtype=np.float64), np.asarray(r, dtype=np.float64)
    return np.minimum(np.abs(o - r).sum(axis=-1), np.abs(o + r).sum(axis=-1)) / o.shape[-1]


def with_bmi(x, weight: int, height: int):
    """x (..., n, p) with a last column bmi = 703 * x[..., weight] / x[..., height]^2 (the
    notebook's bmi, from each data set's own weight and height columns, given by position)."""
    bmi = BMI_FACTOR * x[..., weight] / (x[..., height] * x[..., height])
    return np.concatenate([x, bmi[..., None]], axis=-1)


def _fit(z, target: int):
    """(coefficients (..., p - 1), R^2 (...)) of lm(z[target] ~ (the other columns) - 1) on each
    standardised data set z (..., n, p): least squares by QR; R^2 as summary.lm without an
    intercept, mss / (mss + rss) with mss = sum(fitted^2). NaN where the design is not of
    full column rank or has NaN values (a constant column)."""
    others = [j for j in range(z.shape[-1]) if j != target]
    X, y = z[..., others], z[..., target]
    ok = np.all(np.isfinite(X), axis=(-2, -1)) & np.all(np.isfinite(y), axis=-1)
    X = np.where(ok[..., None, None], X, 0.0)
    y = np.where(ok[..., None], y, 0.0)
    q, r = np.linalg.qr(X)
    diag = np.abs(np.diagonal(r, axis1=-2, axis2=-1))
    norm = np.sqrt(np.max(np.sum(X * X, axis=-2), axis=-1, initial=0.0))      # the largest column's
    ok &= np.all(diag > RANK_TOLERANCE * norm[..., None], axis=-1)
    r = np.where(ok[..., None, None], r, np.eye(r.shape[-1]))
    qty = np.einsum("...nk,...n->...k", q, y)
    beta = np.linalg.solve(r, qty[..., None])[..., 0]
    fitted = np.einsum("...nk,...k->...n", X, beta)
    mss = np.sum(fitted * fitted, axis=-1)
    rss = np.sum((y - fitted) ** 2, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r2 = mss / (mss + rss)
    return np.where(ok[..., None], beta, np.nan), np.where(ok, r2, np.nan)


def regression_measures(xo, xr, target: int, weight: int, height: int):
    """The notebook's reg_utilityMetrics(orig, pert, metric, regvars = "all") for each release:
    (coefMeanAbsDif, rsquared), each an array of R values (floats for an n x p release).
    `target`, `weight`, `height`: the positions of the response (bodyfat percentage) and of the
    weight (pounds) and height (inches) columns that make bmi. Each data set gets its bmi, is
    standardised by its own means and sample standard deviations, and lm(target ~ . - 1) is
    fitted on it: coefMeanAbsDif = mean |beta_orig - beta_release| over the p coefficients (the
    p - 1 other columns and bmi), rsquared = the release's R^2 (1 - RSS / sum(y^2), no intercept)."""
    xo, xr, single = _releases(xo, xr)
    p = xo.shape[1]
    for name, j in (("target", target), ("weight", weight), ("height", height)):
        if isinstance(j, bool) or not isinstance(j, (int, np.integer)) or not 0 <= j < p:
            raise ValueError(f"{name} must be a column position in 0..{p - 1}, got {j!r}")
    beta_o, _ = _fit(standardise(with_bmi(xo, weight, height)), target)
    beta_r, r2 = _fit(standardise(with_bmi(xr, weight, height)), target)
    mad = np.mean(np.abs(beta_o - beta_r), axis=-1)
    if single:
        return float(mad[0]), float(r2[0])
    return mad, r2
