"""The RWN paper's robust-Mahalanobis interval risk (``rmdid``), as its authors computed it: with
sdcMicro 5.7.6's ``dRiskRMD(obj = original, xm = release)$risk1`` (notebook "SDC Comparison
(bodyfat)" of the RWN-privacy repository), and the robust covariance it rests on, robustbase's
``covMcd`` (the reweighted Minimum Covariance Determinant estimator), reimplemented here.

dRiskRMD (sdcMicro's R/dRiskRMD.R, ``dRiskRMDWORK(x, xm, k = 0.01, k2 = 0.05)``, unchanged in
its computation from 5.7.3 (2022-09) to this day):

1. x = scale(original), xm = scale(release): EACH data set standardised by its OWN column means
   and sample standard deviations (ddof = 1);
2. C = covMcd(x)$cov: the robust covariance of the standardised ORIGINAL (so it does not depend
   on the release: computed once per original here, and cached);
3. rmd_i = 0.05 * sqrt((x_i - colMeans(x))' C^-1 (x_i - colMeans(x))): the robust Mahalanobis
   distance, centred at the (classical) column means, not at the MCD centre;
4. record i is at risk when for AT LEAST ONE column j, x_ij - k rmd_i < xm_ij < x_ij + k rmd_i
   (strict inequalities; k = 0.01, so the half-width is 0.0005 rmd_i standard deviations);
5. risk1 = share of records at risk (this module's ``rmdid``). risk2 (RMDID2, not reported
   here) keeps only those at-risk records whose released record has no other released record
   within Euclidean distance k2 = 0.05 in the standardised release.

covMcd (robustbase 0.99-x, defaults: alpha = 1/2, nsamp = 500, use.correction = TRUE, weights
"01.original"): h = (n + p + 1) %/% 2; the raw MCD is the mean and covariance (divisor h - 1) of
the h records whose covariance has the smallest determinant, found by FastMCD (random
(p + 1)-subsets, C-steps); the raw covariance is multiplied by the consistency factor
MCDcons(p, h / n) and the finite-sample factor MCDcnp2(p, n, 1/2); records with raw squared
distance < qchisq(0.975, p) get weight 1, the others 0; ``$cov`` is the covariance of the
weight-1 records (divisor n_w - 1) times MCDcons(p, 0.975) (robustbase >= 0.99-0, June 2023;
before: MCDcons(p, n_w / n)) and MCDcnp2.rew(p, n, 1/2) (both factors 1 when every record has
weight 1). MCDcons(p, a) = a / P(chi2_{p+2} <= qchisq(a, p)).

Differences from R, all documented choices:
* the FastMCD search is this module's (fixed seed, 500 starts, 2 C-steps each, the 10 best
  iterated to convergence), not robustbase's Fortran with R's random numbers: both are
  approximations of the exact MCD (C(n, h) subsets, about 10^71 for bodyfat) that agree when
  they find the same best subset; on bodyfat different seeds (here, and R's) settle on
  different subsets of almost the same determinant, and the risk did not move with the seed
  on this project's RWN releases. On more than FAST_MCD_POOL records the starts are refined
  on a random subsample of that size (R splits records beyond 600 into 5 groups of 300), the
  10 best get 2 C-steps on all records and the best of them is iterated to convergence;
* robustbase's simulated finite-sample factors (MCDcnp2s, used only for p <= 9 and n <= 20)
  are not applied: the closed formulas are used for every n;
* when the h-subset's covariance is singular (more than h records on a hyperplane: R's
  "exact fit", with a warning), or n <= p + 1 (where covMcd stops), ``rmdid`` is None.
scikit-learn's MinCovDet finds the same raw subset but corrects differently (raw covariance
MLE times median(d^2) / chi2_p median, reweighted covariance the MLE of the kept records with
no consistency factor): its covariance is a few per cent smaller than R's, which narrows every
interval; hence this implementation, which needs no extra dependency.

Cost: covmcd once per original (cached by its values), most of it; then per release one
standardisation and one comparison, O(n p). The paper reproduction's timings:
docs/benchmarks.md.
"""
from __future__ import annotations

import hashlib
import threading

import numpy as np
from scipy.stats import chi2

__all__ = ["covmcd", "rmd_intervals", "rmdid"]

RMD_K = 0.01                 # dRiskRMD's default k (interval weight)
RMD_SCALE = 0.05             # dRiskRMD's fixed factor: rmd <- sqrt(rmd) * 0.05
FAST_MCD_STARTS = 500        # covMcd's nsamp
FAST_MCD_KEEP = 10           # starts iterated to convergence (FastMCD keeps 10)
FAST_MCD_POOL = 1500         # records the starts are refined on (R: kmini * nmini = 5 * 300)
FAST_MCD_STEPS = 200         # covMcd's maxcsteps
FAST_MCD_SEED = 20230919     # the starts are drawn from a fixed seed: reproducible results
CHUNK = 2_000_000            # values per batch of start distances
SINGULAR = 50.0              # covMcd: singular when -log(det) / p > 50

_cache: dict = {}
_cache_lock = threading.Lock()
CACHE_SIZE = 8


# ----------------------------------------------------------------------------- covMcd factors

def mcd_cons(p: int, alpha: float) -> float:
    """robustbase's .MCDcons(p, alpha): the consistency factor of a covariance of the share
    alpha of normal records nearest the centre."""
    return float(alpha / chi2.cdf(chi2.ppf(alpha, p), p + 2))


def _fp_500(p: int, n: int, reweighted: bool) -> float:
    """robustbase's fp.500.n of .MCDcnp2 (raw) or .MCDcnp2.rew (reweighted), alpha = 1/2."""
    if p > 2:
        # (alfaq, betaq, qwaarden) for q = 2 and 3
        coeff = ((-1.02842572724793, 1.67659883081926, 2), (-0.26800273450853, 1.35968562893582, 3)) \
            if reweighted else ((-1.42764571687802, 1.26263336932151, 2), (-1.06141115981725, 1.28907991440387, 3))
        y = np.array([np.log(-a / p ** b) for a, b, _ in coeff])
        a = np.array([[1.0, -np.log(q * p ** 2)] for _, _, q in coeff])
        c0, c1 = np.linalg.solve(a, y)
        return float(1.0 - np.exp(c0) / n ** c1)
    c0, c1 = {(2, False): (0.673292623522027, 0.691365864961895), (1, False): (0.262024211897096, 0.604756680630497),
              (2, True): (3.11101712909049, 1.91401056721863), (1, True): (1.11098143415027, 1.5182890270453)}[
        (p, reweighted)]
    return float(1.0 - np.exp(c0) / n ** c1)


def mcd_cnp2(p: int, n: int, reweighted: bool = False) -> float:
    """robustbase's .MCDcnp2(p, n, 1/2) (raw) or .MCDcnp2.rew(p, n, 1/2): the finite-sample
    correction factor of Pison, Van Aelst and Willems (2002), closed formula."""
    return 1.0 / _fp_500(p, n, reweighted)


# ----------------------------------------------------------------------------- FastMCD

def _mean_cov(x, rows):
    """Means (S, p), covariances (S, p, p, divisor m - 1) and log-determinants (S) of the rows
    x[rows[s]] (rows: S x m)."""
    sub = x[rows]
    mean = sub.mean(axis=1)
    centred = sub - mean[:, None, :]
    cov = np.matmul(centred.transpose(0, 2, 1), centred) / (rows.shape[1] - 1)
    sign, logdet = np.linalg.slogdet(cov)
    return mean, cov, np.where(sign > 0, logdet, -np.inf)


def _sqmahal(x, mean, cov):
    """(S, n) squared Mahalanobis distances of every row of x to each (mean[s], cov[s])."""
    out = np.empty((len(mean), len(x)))
    per = max(1, CHUNK // max(x.size, 1))
    for s in range(0, len(mean), per):
        diff = x[None, :, :] - mean[s:s + per, None, :]
        out[s:s + per] = np.sum(np.matmul(diff, np.linalg.inv(cov[s:s + per])) * diff, axis=2)
    return out


def _csteps(x, mean, cov, h, steps):
    """Up to `steps` C-steps from each (mean, cov) on x: the h records nearest in Mahalanobis
    distance become the next subset, until no determinant decreases (a C-step never increases
    it). Returns (mean, cov, logdet); raises _ExactFit when a subset's covariance is singular
    (then it is the MCD: determinant 0)."""
    logdet = np.full(len(mean), np.inf)
    for _ in range(steps):
        d = _sqmahal(x, mean, cov)
        rows = np.argpartition(d, h - 1, axis=1)[:, :h]
        new_mean, new_cov, new_logdet = _mean_cov(x, rows)
        if not np.all(np.isfinite(new_logdet)):
            raise _ExactFit
        if np.all(np.isfinite(logdet)) and np.all(new_logdet >= logdet - 1e-12 * np.abs(logdet)):
            break
        mean, cov, logdet = new_mean, new_cov, new_logdet
    return mean, cov, logdet


class _ExactFit(Exception):
    """More than h records lie on a hyperplane: the MCD covariance is singular."""


def _starts(x, rng, count):
    """(mean, cov) of `count` random subsets of p + 1 rows, each grown by further random rows
    while its covariance is singular (as FastMCD does); raises _ExactFit when one stays singular
    with every row."""
    m, p = x.shape
    perm = np.argsort(rng.random((count, m)), axis=1)
    size = np.full(count, p + 1)
    mean, cov, ok = np.empty((count, p)), np.empty((count, p, p)), np.zeros(count, bool)
    todo = np.arange(count)
    while len(todo):
        for s in np.unique(size[todo]):
            at = todo[size[todo] == s]
            mean[at], cov[at], logdet = _mean_cov(x, perm[at, :s])
            ok[at] = np.isfinite(logdet)
        todo = todo[~ok[todo]]
        size[todo] += 1
        if np.any(size[todo] > m):
            raise _ExactFit
    return mean, cov


def covmcd(x, seed: int = FAST_MCD_SEED):
    """robustbase::covMcd(x)$cov at its defaults (see the module docstring), or None when the
    MCD covariance is singular or n <= p + 1."""
    x = np.asarray(x, dtype=np.float64)
    n, p = x.shape
    if n <= p + 1 or p == 0:
        return None
    h = (n + p + 1) // 2
    rng = np.random.default_rng(seed)
    pool = x if n <= FAST_MCD_POOL else x[np.sort(rng.choice(n, FAST_MCD_POOL, replace=False))]
    h_pool = h if pool is x else max(p + 1, int(np.ceil(h * len(pool) / n)))
    try:
        mean, cov = _starts(pool, rng, FAST_MCD_STARTS)
        mean, cov, logdet = _csteps(pool, mean, cov, h_pool, 2)
        best = np.argsort(logdet, kind="stable")[:FAST_MCD_KEEP]
        if pool is not x:          # the 10 best two steps on all records, then the best to the end
            mean, cov, logdet = _csteps(x, mean[best], cov[best], h, 2)
            best = [int(np.argmin(logdet))]
        mean, cov, logdet = _csteps(x, mean[best], cov[best], h, FAST_MCD_STEPS)
    except _ExactFit:
        return None
    b = int(np.argmin(logdet))
    if -logdet[b] / p > SINGULAR:
        return None
    raw = cov[b] * mcd_cons(p, h / n) * mcd_cnp2(p, n)
    weight = _sqmahal(x, mean[b][None], raw[None])[0] < chi2.ppf(0.975, p)
    kept = x[weight]
    if len(kept) < 2:
        return None
    centred = kept - kept.mean(axis=0)
    out = centred.T @ centred / (len(kept) - 1)
    if len(kept) != n:
        out = out * mcd_cons(p, 0.975) * mcd_cnp2(p, n, reweighted=True)
    sign, logdet_rew = np.linalg.slogdet(out)
    if sign <= 0 or -logdet_rew / p > SINGULAR:
        return None
    return out


# ----------------------------------------------------------------------------- dRiskRMD

def scale(x):
    """R's scale(): columns centred by their means and divided by their sample standard
    deviations (ddof = 1); (..., n, p) arrays, along the records' axis. A constant column
    gives NaN (0 / 0), as in R, and such a column never puts a record at risk."""
    centred = x - x.mean(axis=-2, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return centred / np.sqrt(np.sum(centred * centred, axis=-2, keepdims=True) / (x.shape[-2] - 1))


def rmd_intervals(xo, k: float = RMD_K):
    """(z, half): the standardised original and each record's interval half-width k * 0.05 *
    its robust Mahalanobis distance (dRiskRMD's steps 1 to 3), or None when covMcd fails.
    Cached by the original's values (tune evaluates thousands of releases of one original)."""
    xo = np.ascontiguousarray(xo, dtype=np.float64)
    key = (xo.shape, float(k), hashlib.blake2b(xo.tobytes(), digest_size=16).digest())
    with _cache_lock:
        if key in _cache:
            return _cache[key]
    z = scale(xo)
    cov = covmcd(z)
    if cov is None:
        result = None
    else:
        diff = z - z.mean(axis=0)
        md = np.einsum("np,pn->n", diff, np.linalg.solve(cov, diff.T))
        result = (z, k * (np.sqrt(md) * RMD_SCALE))
    with _cache_lock:
        if len(_cache) >= CACHE_SIZE:
            _cache.pop(next(iter(_cache)))
        _cache[key] = result
    return result


def rmdid(xo, xr, k: float = RMD_K):
    """dRiskRMD(obj = xo, xm = xr[r])$risk1 for each release r (xr: R x n x p), or None when
    the robust covariance of the original is undefined (see covmcd)."""
    intervals = rmd_intervals(xo, k)
    if intervals is None:
        return None
    z, half = intervals
    zr = scale(xr)
    lo, hi = z - half[:, None], z + half[:, None]
    inside = (zr > lo) & (zr < hi)                  # NaN (a constant released column): False
    return np.mean(np.any(inside, axis=2), axis=1)
