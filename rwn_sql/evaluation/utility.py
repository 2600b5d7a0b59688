"""The utility measures of an evaluation (rwn_sql.evaluation.evaluate): how much of the
original's statistics a release keeps. Each measure's exact definition:

* ``corr_mad``: mean over the pairs i < j of numeric columns of |r_ij(original) - r_ij(released)|,
  r = Pearson correlation. Needs >= 2 numeric columns (else None); NaN (null in JSON) if a
  released column is constant.
* PCA: both data sets are standardized with the ORIGINAL column means and sample standard
  deviations (ddof=1); the principal components are the eigenvectors of each data set's sample
  covariance matrix (ddof=1, so each is centred on its own mean) of those standardized values.
  ``pca_loadings``: the unit eigenvectors of PC1 and PC2. The original's sign is fixed so that
  its largest-magnitude entry is positive; a released vector is negated when its dot product
  with the original's is negative. ``pca_loading_mad``: mean of |loading difference| over the
  2 x p entries. ``pca_variance_share``: eigenvalue / sum of all eigenvalues, for PC1 and PC2.
  Needs >= 2 numeric columns (else None).
* ``ols`` (only with `target`): least squares of `target` on an intercept and the OTHER numeric
  columns (categorical columns are not regressors), on each data set. Standard errors
  sqrt(diag(s^2 (X'X)^-1)) with s^2 = RSS / (n - p), p = number of coefficients; R^2 =
  1 - RSS / TSS; 95% confidence intervals beta +- t * se with t the 0.975 quantile of Student's
  t with n - p degrees of freedom (scipy.special.stdtrit, as scipy.stats.t.ppf). ``ci_overlap`` per
  coefficient is Karr et al.'s (2006) measure
  0.5 * (|I_o n I_r| / |I_o| + |I_o n I_r| / |I_r|), 0 when the intervals are disjoint;
  ``ci_overlap_mean`` averages it over the coefficients, intercept included.
* ``cooks_max``: the largest Cook's distance D_i = e_i^2 / (p s^2) * h_ii / (1 - h_ii)^2 of
  the OLS fit on the original and on the released data (only with `target`).
* ``ks``: per numeric column, the two-sample Kolmogorov-Smirnov statistic
  D = max_x |F_original(x) - F_released(x)| (empirical CDFs; as scipy's ks_2samp statistic).
* ``tv``: per categorical column, the total variation distance
  0.5 * sum_v |P_original(v) - P_released(v)|. Values are compared as text (CAST AS VARCHAR);
  NULL is a category of its own.
* ``multi_information``: over the categorical columns, sum of the marginal entropies minus the
  joint entropy (plug-in estimates, natural log, so in nats), for each data set. Needs >= 2
  categorical columns (else None).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from ..errors import RWNError
from .risk import category_combinations

__all__ = ["OLSComparison", "Pair", "Utility", "ci_overlap", "t_quantile"]

INTERCEPT = "(Intercept)"


@dataclass(frozen=True)
class Pair:
    """One statistic on the original and on the released data."""
    original: Any
    released: Any


@dataclass(frozen=True)
class OLSComparison:
    """OLS of `target` on an intercept and `terms[1:]`, fitted on both data sets."""
    target: str
    terms: tuple[str, ...]                 # "(Intercept)" first, then the regressors
    df: int                                # residual degrees of freedom n - p
    critical_value: float                  # Student t 0.975 quantile with df degrees of freedom
    coefficients: Pair                     # each {term: beta}
    std_errors: Pair                       # each {term: se}
    ci: Pair                               # each {term: [low, high]}
    r2: Pair
    coef_abs_diff: dict[str, float]        # |beta_original - beta_released| per term
    ci_overlap: dict[str, float]           # Karr et al. overlap per term
    ci_overlap_mean: float


@dataclass(frozen=True)
class Utility:
    corr_mad: float | None
    pca_loading_mad: float | None
    pca_variance_share: Pair | None        # each {"PC1": share, "PC2": share}
    pca_loadings: Pair | None              # each {"PC1": {column: loading}, "PC2": {...}}
    ols: OLSComparison | None
    cooks_max: Pair | None
    ks: dict[str, float]                   # numeric columns
    tv: dict[str, float]                   # categorical columns
    multi_information: Pair | None         # nats


# ----------------------------------------------------------------------------- measures

def _correlations(x):
    """Pearson correlation matrices of the columns of each x[r] (x: R x n x p), NaN where a
    column is constant."""
    centred = x - x.mean(axis=1, keepdims=True)
    c = np.matmul(centred.transpose(0, 2, 1), centred)
    d = np.sqrt(np.diagonal(c, axis1=1, axis2=2))
    with np.errstate(divide="ignore", invalid="ignore"):
        c = c / d[:, :, None] / d[:, None, :]
    return np.clip(c, -1.0, 1.0)


def corr_mad(xo, xr) -> list[float]:
    iu = np.triu_indices(xo.shape[1], 1)
    ro = _correlations(xo[None])[0][iu]
    rr = _correlations(xr)[:, iu[0], iu[1]]
    return [float(v) for v in np.mean(np.abs(ro - rr), axis=1)]


def _covariances(z):
    """Sample covariance matrices (ddof=1) of the columns of each z[r] (z: R x n x p)."""
    centred = z - z.mean(axis=1, keepdims=True)
    return np.matmul(centred.transpose(0, 2, 1), centred) / (z.shape[1] - 1)


def pca(xo, xr, numeric, sd) -> list[dict]:
    if len(numeric) < 2:
        return [dict(pca_loading_mad=None, pca_variance_share=None, pca_loadings=None)] * len(xr)
    mean = xo.mean(axis=0)

    def components(x):          # leading two of every x[r]: (shares R x 2, loadings R x p x 2)
        values, vectors = np.linalg.eigh(_covariances((x - mean) / sd))     # ascending
        values, vectors = np.clip(values[:, ::-1], 0.0, None), vectors[:, :, ::-1]
        return values[:, :2] / values.sum(axis=1, keepdims=True), vectors[:, :, :2]

    share_o, load_o = components(xo[None])
    share_o, load_o = share_o[0], load_o[0].copy()
    share_r, load_r = components(xr)
    for j in range(2):
        big = np.argmax(np.abs(load_o[:, j]))
        if load_o[big, j] < 0:
            load_o[:, j] = -load_o[:, j]
    load_r = load_r * np.where(np.einsum("pj,rpj->rj", load_o, load_r) < 0, -1.0, 1.0)[:, None, :]
    mad = np.mean(np.abs(load_o - load_r), axis=(1, 2))

    def as_dict(load):
        return {f"PC{j + 1}": dict(zip(numeric, load[:, j].tolist())) for j in range(2)}

    shares_o, loadings_o = {"PC1": float(share_o[0]), "PC2": float(share_o[1])}, as_dict(load_o)
    return [dict(pca_loading_mad=float(mad[r]),
                 pca_variance_share=Pair(shares_o, {"PC1": float(share_r[r, 0]), "PC2": float(share_r[r, 1])}),
                 pca_loadings=Pair(loadings_o, as_dict(load_r[r])))
            for r in range(len(xr))]


def _ols_fit(y, X, role: str) -> dict:
    """Least squares of each y[r] on X[r] (y: R x n, X: R x n x p)."""
    n, p = X.shape[1:]
    rank = np.linalg.matrix_rank(X)
    if np.any(rank < p):
        raise RWNError(f"OLS on the {role} data: the intercept and regressors are collinear (rank "
                       f"{int(rank.min())} < {p}); leave a column out or evaluate without target")
    q, r = np.linalg.qr(X)
    beta = np.linalg.solve(r, np.matmul(q.transpose(0, 2, 1), y[:, :, None]))[:, :, 0]
    resid = y - np.matmul(X, beta[:, :, None])[:, :, 0]
    rss = np.sum(resid * resid, axis=1)
    s2 = rss / (n - p)
    rinv = np.linalg.inv(r)
    se = np.sqrt(s2[:, None] * np.sum(rinv * rinv, axis=2))      # diag(R^-1 R^-T) = row sums of squares
    tss = np.sum((y - y.mean(axis=1, keepdims=True)) ** 2, axis=1)
    h = np.sum(q * q, axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = np.where(tss > 0, 1.0 - rss / tss, np.nan)
        cooks = resid ** 2 / (p * s2[:, None]) * h / (1.0 - h) ** 2
    return dict(beta=beta, se=se, r2=r2, cooks_max=np.max(cooks, axis=1))


def _overlaps(lo_a, hi_a, lo_b, hi_b):
    """ci_overlap elementwise over arrays of interval bounds (the same operations)."""
    inter = np.minimum(hi_a, hi_b) - np.maximum(lo_a, lo_b)
    la, lb = hi_a - lo_a, hi_b - lo_b
    with np.errstate(divide="ignore", invalid="ignore"):
        both = 0.5 * (inter / la + inter / lb)
    return np.where((la > 0) & (lb > 0), np.where(inter <= 0, 0.0, both), np.nan)


def ols_measures(xo, xr, numeric, target, n) -> list[dict]:
    if target is None:
        return [dict(ols=None, cooks_max=None)] * len(xr)
    t = numeric.index(target)
    others = [j for j in range(len(numeric)) if j != t]
    terms = (INTERCEPT,) + tuple(numeric[j] for j in others)
    p = len(terms)
    if n <= p:
        raise RWNError(f"OLS of {target!r}: {n} rows are too few for {p} coefficients (need more rows "
                       f"than coefficients)")
    df = n - p
    crit = t_quantile(0.975, df)

    def design(x):
        return np.concatenate([np.ones(x.shape[:2] + (1,)), x[:, :, others]], axis=2)

    fo = _ols_fit(xo[None, :, t], design(xo[None]), "original")
    fr = _ols_fit(xr[:, :, t], design(xr), "released")
    ci_o = (fo["beta"] - crit * fo["se"], fo["beta"] + crit * fo["se"])         # each 1 x p
    ci_r = (fr["beta"] - crit * fr["se"], fr["beta"] + crit * fr["se"])         # each R x p
    overlap = _overlaps(ci_o[0], ci_o[1], ci_r[0], ci_r[1])
    overlap_mean = np.mean(overlap, axis=1)
    diff = np.abs(fo["beta"] - fr["beta"])

    def per_term(values):           # tolist: Python floats in one call (tune evaluates thousands)
        return dict(zip(terms, values.tolist()))

    def intervals(low, high):
        return {term: [a, b] for term, a, b in zip(terms, low.tolist(), high.tolist())}

    out = []
    for r in range(len(xr)):
        ols = OLSComparison(
            target=target, terms=terms, df=df, critical_value=crit,
            coefficients=Pair(per_term(fo["beta"][0]), per_term(fr["beta"][r])),
            std_errors=Pair(per_term(fo["se"][0]), per_term(fr["se"][r])),
            ci=Pair(intervals(ci_o[0][0], ci_o[1][0]), intervals(ci_r[0][r], ci_r[1][r])),
            r2=Pair(float(fo["r2"][0]), float(fr["r2"][r])),
            coef_abs_diff=per_term(diff[r]),
            ci_overlap=per_term(overlap[r]),
            ci_overlap_mean=float(overlap_mean[r]),
        )
        out.append(dict(ols=ols, cooks_max=Pair(float(fo["cooks_max"][0]), float(fr["cooks_max"][r]))))
    return out


def ci_overlap(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Karr et al. (2006): 0.5 * (|a n b| / |a| + |a n b| / |b|); 0 if disjoint; NaN if an
    interval has zero length."""
    inter = min(a[1], b[1]) - max(a[0], b[0])
    la, lb = a[1] - a[0], b[1] - b[0]
    if not (la > 0 and lb > 0):
        return float("nan")
    if inter <= 0:
        return 0.0
    return 0.5 * (inter / la + inter / lb)


def ks(xo, xr) -> np.ndarray:
    """The two-sample Kolmogorov-Smirnov statistic of every column of xo (n x p) against the same
    column of each xr[r] (R x m x p): an R x p array, each as scipy.stats.ks_2samp's statistic
    (both empirical CDFs at every data point; ks_2samp itself is not called: it also computes a
    p-value, unused here and dearer than the statistic)."""
    reps, m, p = xr.shape
    out = np.empty((reps, p))
    merged = []
    for j in range(p):
        values = np.unique(xo[:, j])
        released = xr[:, :, j].reshape(-1)
        at = np.minimum(np.searchsorted(values, released), len(values) - 1)
        if np.array_equal(values[at], released):    # every released value is an original one (swaps, draws)
            out[:, j] = _ks_on_codes(np.concatenate([np.searchsorted(values, xo[:, j]), at]), len(values),
                                     len(xo), reps, m)
        else:
            merged.append(j)
    if merged:
        out[:, merged] = _ks_merged(xo[:, merged], xr[:, :, merged])
    return out


def _ks_on_codes(codes, levels: int, n: int, reps: int, m: int) -> np.ndarray:
    """ks of one column from the codes (0 .. levels - 1, in the order of the values) of the
    original's n values then each release's m: both samples' counts of values <= each level.
    At a level present in neither sample of a release the counts are those of the level
    below, so the maximum over all levels is the maximum over that release's data points, and
    the gaps are the same divisions of the same counts as _ks_merged's."""
    count_o = np.cumsum(np.bincount(codes[:n], minlength=levels))
    where = (np.repeat(np.arange(reps), m) * levels) + codes[n:]
    count_r = np.cumsum(np.bincount(where, minlength=reps * levels).reshape(reps, levels), axis=1)
    return np.max(np.abs(count_o / n - count_r / m), axis=1)


def _ks_merged(xo, xr) -> np.ndarray:
    """ks through one merged sort per column and release: both samples are merged and sorted;
    at the last of every run of equal values the counts so far are each sample's count of
    values <= it."""
    reps, m, p = xr.shape
    n = len(xo)
    # R x p x (n + m): each column's two samples sorted, side by side; a stable sort of two
    # sorted runs is a merge (the original is sorted once for all releases)
    merged = np.concatenate([np.broadcast_to(np.sort(xo, axis=0).T, (reps, p, n)),
                             np.sort(xr, axis=1).transpose(0, 2, 1)], axis=2)
    order = np.argsort(merged, axis=2, kind="stable")
    values = np.take_along_axis(merged, order, axis=2)
    count_o = np.cumsum(order < n, axis=2)
    count_r = np.arange(1, n + m + 1) - count_o
    last = np.ones(values.shape, dtype=bool)
    last[:, :, :-1] = values[:, :, 1:] != values[:, :, :-1]
    gap = np.abs(count_o / n - count_r / m)
    return np.max(np.where(last, gap, 0.0), axis=2)


def tv(a, b) -> float:
    m = int(max(a.max(), b.max())) + 1
    pa = np.bincount(a, minlength=m) / len(a)
    pb = np.bincount(b, minlength=m) / len(b)
    return float(0.5 * np.sum(np.abs(pa - pb)))


def _entropy(counts) -> float:
    """Plug-in entropy in nats. scipy.special.entr(p) = -p log p (0 at p = 0); the same sum as
    scipy.stats.entropy, whose argument handling costs more than the sum itself."""
    return float(np.sum(special.entr(counts / counts.sum())))


def multi_information(k) -> float:
    marginal = sum(_entropy(np.bincount(k[:, j])) for j in range(k.shape[1]))
    return max(marginal - _entropy(category_combinations(k)[1]), 0.0)        # >= 0 in exact arithmetic


# ----------------------------------------------------------------------------- Student t

def t_quantile(p: float, df: float) -> float:
    """The p quantile of Student's t with df degrees of freedom, for 0 < p < 1 and df > 0:
    scipy.special.stdtrit, the function behind scipy.stats.t.ppf (called directly: t.ppf's
    argument handling costs many times the quantile itself)."""
    if not 0.0 < p < 1.0 or not df > 0:
        raise ValueError(f"t_quantile needs 0 < p < 1 and df > 0, got p={p}, df={df}")
    return float(special.stdtrit(df, p))
