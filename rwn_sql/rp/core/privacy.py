"""(eps, delta)-reconstruction-privacy: the tests and the block counts (docs/METHODS.md, section 2).

Uniform perturbation keeps a sensitive value with probability p, else draws one of the m
domain values uniformly. For a personal group of n records where value x has frequency f,
the released count O* of x is a sum of independent trials: f*n of them succeed with
probability a = p + (1-p)/m, the other (1-f)*n with b = (1-p)/m. With mu = n (f p + b) and
theta = eps f p / (f p + b), the reconstruction error events are O* > (1+theta) mu and
O* < (1-theta) mu. A group passes for x when both tail probabilities are at least delta:
  chernoff: delta <= min(U, L), the full Chernoff bounds (they only prove violations);
  exact:    both tails computed from the exact distribution of O* (certifies privacy).
Pure Python/numpy; no connection.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from scipy.special import gammaln

from ...errors import RWNError
from .calibration import Calibration

TESTS = ("chernoff", "exact")
REL_TOL = 1e-9      # O* is an integer; thresholds equal to an integer are decided exactly


@dataclass(frozen=True)
class PrivacyParams:
    p: float
    m: int
    eps: float
    delta: float
    test: str = "exact"

    def __post_init__(self):
        check_p(self.p)
        if isinstance(self.m, bool) or not isinstance(self.m, (int, np.integer)) or self.m < 2:
            raise RWNError(f"the domain of the sensitive attribute needs at least 2 values, got m = {self.m}")
        if not (isinstance(self.delta, (int, float)) and 0 < self.delta < 1):
            raise RWNError(f"delta must be in (0, 1), got {self.delta!r}")
        limit = max_eps(self.p, self.m)
        if not (isinstance(self.eps, (int, float)) and 0 < self.eps <= limit):
            raise RWNError(f"eps must be in (0, {limit:.6g}] for p = {self.p}, m = {self.m} "
                             f"(0 < eps <= 1 + (1-p)/(m p), where the bounds hold for every frequency); "
                             f"got {self.eps!r}")
        check_test(self.test)

    @property
    def a(self) -> float:
        return self.p + (1 - self.p) / self.m

    @property
    def b(self) -> float:
        return (1 - self.p) / self.m


def check_p(p) -> None:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p < 1:
        raise RWNError(f"p (retention probability) must be in (0, 1), got {p!r}")


def check_test(test) -> None:
    if test not in TESTS:
        raise RWNError(f"test must be one of {', '.join(TESTS)}; got {test!r}")


@dataclass(frozen=True)
class Threshold:
    """The (eps, delta) a release is enforced with. Its values are checked by PrivacyParams,
    once the domain's size m (which bounds eps) is known."""
    eps: float
    delta: float

    @classmethod
    def of(cls, enforce) -> "Threshold | None":
        """None (no enforcement), a Threshold, or a pair (eps, delta)."""
        if enforce is None or isinstance(enforce, cls):
            return enforce
        try:
            eps, delta = enforce
        except (TypeError, ValueError):
            raise RWNError(f"enforce must be a pair (eps, delta), got {enforce!r}") from None
        return cls(eps, delta)

    def __iter__(self):
        """eps, delta: a Threshold reads as the pair it was given as."""
        return iter((self.eps, self.delta))


@dataclass(frozen=True)
class RPParams:
    """The parameters of a uniform perturbation a caller gives: the retention probability p,
    the enforcement threshold (None: not enforced; a pair is taken as a Threshold) and the test
    that certifies it. Built once where a public function receives them, which checks p, the
    test and the pair's shape; `privacy` adds the domain's size once it is known (eps's bound
    depends on it). p may be a calibration.Calibration (rwn_sql.calibrate_p): its p, and
    `calibration` kept, which `check_domain` holds to the domain's size."""
    p: float
    threshold: Threshold | None = None
    test: str = "exact"
    calibration: Calibration | None = None

    def __post_init__(self):
        if isinstance(self.p, Calibration):
            object.__setattr__(self, "calibration", self.p)
            object.__setattr__(self, "p", self.p.p)
        check_p(self.p)
        check_test(self.test)
        object.__setattr__(self, "p", float(self.p))
        object.__setattr__(self, "threshold", Threshold.of(self.threshold))

    def check_domain(self, m: int) -> None:
        """A calibrated p holds its budget only for the m it was calibrated for."""
        if self.calibration is not None and self.calibration.m != m:
            raise RWNError(f"p = {self.p} was calibrated for m = {self.calibration.m} domain values, but the domain "
                           f"has {m}: calibrate for m = {m} (the budget's bound on p falls as m grows)")

    def privacy(self, m: int) -> PrivacyParams:
        """The enforcement's PrivacyParams for a domain of m values (checks eps and delta)."""
        return PrivacyParams(p=self.p, m=m, eps=self.threshold.eps, delta=self.threshold.delta, test=self.test)


def max_eps(p: float, m: int) -> float:
    """Largest eps for which theta <= 1 at every frequency f <= 1: 1 + (1-p)/(m p)."""
    return 1 + (1 - p) / (m * p)


def mu_theta(n, f, pp: PrivacyParams):
    fp_b = f * pp.p + pp.b
    return n * fp_b, pp.eps * f * pp.p / fp_b


def chernoff_bounds(mu, theta):
    """Full Chernoff bounds (U, L) on Pr[O* > (1+theta) mu] and Pr[O* < (1-theta) mu]."""
    mu, theta = np.asarray(mu, float), np.asarray(theta, float)
    log_u = theta - (1 + theta) * np.log1p(theta)
    one_minus = 1 - theta
    log_l = -theta - np.where(one_minus > 0, one_minus * np.log(np.where(one_minus > 0, one_minus, 1.0)), 0.0)
    return np.exp(mu * log_u), np.exp(mu * log_l)


_LOG_FACT = np.zeros(1)


def _log_fact(n: int) -> np.ndarray:
    """log(k!) for k = 0 .. at least n (a table grown on demand; scipy's gammaln is accurate
    to a few units in the last place, where a running sum of logs would drift)."""
    global _LOG_FACT
    if len(_LOG_FACT) <= n:
        _LOG_FACT = gammaln(np.arange(2 * n + 2, dtype=float) + 1.0)
    return _LOG_FACT


def _binom_pmf(n: int, prob: float) -> np.ndarray:
    if prob <= 0 or prob >= 1:
        out = np.zeros(n + 1)
        out[0 if prob <= 0 else n] = 1.0
        return out
    lf, k = _log_fact(n), np.arange(n + 1)
    return np.exp(lf[n] - lf[k] - lf[n - k] + k * math.log(prob) + (n - k) * math.log1p(-prob))


def _above(threshold):
    """Smallest integer o with o > threshold (ties decided exactly despite rounding); for a
    number or an array of them."""
    t = np.asarray(threshold, dtype=float)
    out = np.floor(t + REL_TOL * np.maximum(1.0, np.abs(t))).astype(np.int64) + 1
    return int(out) if out.ndim == 0 else out


def _below(threshold):
    """Largest integer o with o < threshold; for a number or an array of them."""
    t = np.asarray(threshold, dtype=float)
    out = np.ceil(t - REL_TOL * np.maximum(1.0, np.abs(t))).astype(np.int64) - 1
    return int(out) if out.ndim == 0 else out


def exact_tails_many(n, count, p: float, m: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact Pr[O* > (1+theta) mu] and Pr[O* < (1-theta) mu] for many groups at once: group i
    has n[i] records of which count[i] hold the value, so O* = X + Y with X ~ Binomial(count, a)
    and Y ~ Binomial(n - count, b). Each tail is sum_x P(X = x) P(Y beyond threshold - x).

    For x = 0..count the thresholds of Y form a window of consecutive integers, so Y's
    cumulative probabilities over the window are one value from the regularized incomplete
    beta function (scipy's bdtrc/bdtr, at the window's far end) plus a running sum of Y's
    probabilities along the window, added from the far tail inwards (small terms first).
    Groups are processed in buckets of similar count, as 2-d arrays whose log-factorial
    terms are contiguous slices of one table (impossible counts read log k! = inf, so their
    probability is exactly 0): about sum(count + 1) array operations in all. Agrees with
    term-by-term summation to a relative 1e-11, down to tails of 1e-300."""
    from scipy.special import bdtr, bdtrc     # imported here: only audits need it

    n = np.asarray(n, dtype=np.int64)
    c = np.asarray(count, dtype=np.int64)
    if n.shape != c.shape or n.ndim != 1:
        raise ValueError("n and count must be 1-d arrays of the same length")
    if len(n) == 0:
        return np.empty(0), np.empty(0)
    if (c < 0).any() or (c > n).any() or (n < 1).any():
        raise ValueError("need 0 <= count <= n and n >= 1")
    b = (1 - p) / m
    a = p + b
    big = n - c                                                   # trials of Y
    f = c / n
    mu, theta = n * (f * p + b), eps * f * p / (f * p + b)
    hi, lo = _above((1 + theta) * mu), _below((1 - theta) * mu)   # O* >= hi, O* <= lo
    # bucket widths: count + 1 rounded up to a power of 2^(1/4) (at most 19% padding)
    width = np.maximum(np.ceil(2.0 ** (np.ceil(4 * np.log2(c + 1)) / 4)).astype(np.int64), c + 1)
    # one table of log k! over every k the windows touch; +inf outside 0..max(n)
    n_max, w_max = int(n.max()), int(width.max())
    k_min = int(min((np.minimum(np.minimum(c, hi), lo) - width + 1).min(), (big - hi).min(), (big - lo).min(), 0))
    k_max = int(max(np.maximum(np.maximum(c, hi), lo).max(), (big - hi + width - 1).max(),
                    (big - lo + width - 1).max(), w_max - 1, n_max))
    log_fact = _log_fact(n_max)[: n_max + 1]
    table = np.full(k_max - k_min + 1, np.inf)
    off = -k_min                                                  # table[off + k] = log k!
    table[off: off + n_max + 1] = log_fact
    rev = table[::-1].copy()                                      # rev[off_r - k] = log k!
    off_r = len(table) - 1 - off
    # the windows' far ends: P(Y >= hi + 1) and P(Y <= lo - width)
    with np.errstate(invalid="ignore"):
        beyond_hi = np.where(hi >= big, 0.0, np.where(hi < 0, 1.0, bdtrc(np.clip(hi, 0, None), big, b)))
        first = lo - width
        below_lo = np.where(first < 0, 0.0, np.where(first >= big, 1.0, bdtr(np.clip(first, 0, None), big, b)))
    la, l1a, lb, l1b = math.log(a), math.log1p(-a), math.log(b), math.log1p(-b)
    upper, lower = np.empty(len(n)), np.empty(len(n))

    def chunk(rows, w, fwd_w, rev_w):    # the groups `rows` of the bucket of padded width w
        j = np.arange(w, dtype=float)
        cc, nn, h, lo_r = c[rows], big[rows], hi[rows], lo[rows]
        # P(X = j) = exp(log c! + c log(1-a) + j log(a/(1-a)) - log j! - log (c-j)!)
        px = np.exp((log_fact[cc] + cc * l1a)[:, None] + (j * (la - l1a) - table[off: off + w])[None, :]
                    - rev_w[off_r - cc])
        base = (log_fact[nn] + nn * l1b)[:, None]

        def pmf_y(k0):   # P(Y = k0 - j) for j = 0..w-1
            return np.exp(base + (k0[:, None] - j[None, :]) * (lb - l1b) - rev_w[off_r - k0] - fwd_w[off + nn - k0])

        sf = np.minimum(beyond_hi[rows, None] + np.cumsum(pmf_y(h), axis=1), 1.0)      # P(Y >= hi - j)
        cdf = np.minimum(below_lo[rows, None] + np.cumsum(pmf_y(lo_r)[:, ::-1], axis=1)[:, ::-1], 1.0)  # P(Y <= lo - j)
        upper[rows] = np.einsum("ij,ij->i", px, sf)
        lower[rows] = np.einsum("ij,ij->i", px, cdf)

    for w in np.unique(width).tolist():
        fwd_w, rev_w = sliding_window_view(table, w), sliding_window_view(rev, w)
        in_bucket = np.flatnonzero(width == w)
        step = max(1, _CELLS_PER_CHUNK // w)            # bounded memory: ~32 MB per 2-d array
        for start in range(0, len(in_bucket), step):
            chunk(in_bucket[start: start + step], w, fwd_w, rev_w)
    return np.minimum(upper, 1.0), np.minimum(lower, 1.0)


_CELLS_PER_CHUNK = 1 << 22


@lru_cache(maxsize=65536)
def exact_tails(n: int, count: int, p: float, m: int, eps: float) -> tuple[float, float]:
    """Exact Pr[O* > (1+theta) mu] and Pr[O* < (1-theta) mu] for one group (see exact_tails_many)."""
    upper, lower = exact_tails_many([n], [count], p, m, eps)
    return float(upper[0]), float(lower[0])


def passes(n: int, count: int, pp: PrivacyParams) -> bool:
    """Does a group of n trials where `count` hold the value pass the chosen test?"""
    if pp.test == "exact":
        up, lo = exact_tails(n, count, pp.p, pp.m, pp.eps)
    else:
        mu, theta = mu_theta(n, count / n, pp)
        up, lo = chernoff_bounds(mu, theta)
    return bool(up >= pp.delta and lo >= pp.delta)


def chernoff_max_group(pp: PrivacyParams) -> int:
    """Largest n passing the Chernoff test at f = 1 (the bounds fall with n, so all smaller
    n pass too). 0 when even one record fails."""
    mu1, theta = mu_theta(1, 1.0, pp)
    u1, l1 = chernoff_bounds(mu1, theta)           # bounds for n = 1; for n they are u1^n, l1^n
    worst = min(float(u1), float(l1))
    if worst >= 1.0:
        raise ValueError("the Chernoff bounds do not fall with the group size for these parameters")
    return int(math.floor(math.log(pp.delta) / math.log(worst) + 1e-12))


@lru_cache(maxsize=65536)
def block_tails(n: int, t: int, p: float, m: int, eps: float) -> tuple[float, float]:
    """Exact tails at f = 1 for a group of n records split into t blocks of sizes
    ceil(n/t) and floor(n/t), each block one trial: O* = (q+1) X + q Y with
    X ~ Binomial(n mod t, a), Y ~ Binomial(t - n mod t, a), q = n // t."""
    pp = PrivacyParams.__new__(PrivacyParams)
    object.__setattr__(pp, "p", p), object.__setattr__(pp, "m", m), object.__setattr__(pp, "eps", eps)
    q, r = divmod(n, t)
    mu, theta = mu_theta(n, 1.0, pp)
    px, py = _binom_pmf(r, pp.a), _binom_pmf(t - r, pp.a)
    o = (q + 1) * np.arange(r + 1)[:, None] + q * np.arange(t - r + 1)[None, :]
    prob = px[:, None] * py[None, :]
    upper = float(prob[o >= _above((1 + theta) * mu)].sum())
    lower = float(prob[o <= _below((1 - theta) * mu)].sum())
    return min(upper, 1.0), min(lower, 1.0)


def block_tails_over_t(n: int, ts, p: float, m: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """block_tails(n, t) for several t < n at once (arrays in the order of `ts`): for each t
    and count x of retained-or-hit blocks of size q+1, the count of blocks of size q that
    crosses the threshold, read off cumulative sums."""
    ts = np.asarray(ts, dtype=np.int64)
    if len(ts) == 0:
        return np.empty(0), np.empty(0)
    b = (1 - p) / m
    a = p + b
    q, r = n // ts, n % ts
    width = int(ts.max()) + 1
    i = np.arange(width)
    log_fact = _log_fact(width)

    def pmf(trials):      # P(Binomial(trials, a) = i), rows per t, 0 beyond the support
        inside = i[None, :] <= trials[:, None]
        kk = np.minimum(i[None, :], trials[:, None])
        logp = (log_fact[trials][:, None] - log_fact[kk] - log_fact[trials[:, None] - kk]
                + kk * math.log(a) + (trials[:, None] - kk) * math.log1p(-a))
        return np.where(inside, np.exp(logp), 0.0)

    px, py = pmf(r), pmf(ts - r)                                 # X: blocks of q+1, Y: blocks of q
    sf_y = np.concatenate([np.cumsum(py[:, ::-1], axis=1)[:, ::-1], np.zeros((len(ts), 1))], axis=1)
    cdf_y = np.cumsum(py, axis=1)
    mu, theta = n * (p + b), eps * p / (p + b)
    hi, lo = _above((1 + theta) * mu), _below((1 - theta) * mu)   # O* >= hi, O* <= lo
    rest_hi = hi - (q + 1)[:, None] * i[None, :]                 # (q+1) x + q y >= hi  <=>  y >= ceil(rest / q)
    need = np.clip(-((-rest_hi) // q[:, None]), 0, width)
    upper = (px * np.take_along_axis(sf_y, need, axis=1)).sum(axis=1)
    most = (lo - (q + 1)[:, None] * i[None, :]) // q[:, None]     # (q+1) x + q y <= lo  <=>  y <= floor(rest / q)
    lower = (px * np.where(most >= 0, np.take_along_axis(cdf_y, np.clip(most, 0, width - 1), axis=1), 0.0)).sum(axis=1)
    return np.minimum(upper, 1.0), np.minimum(lower, 1.0)


@lru_cache(maxsize=65536)
def block_tails_single(n: int, t: int, p: float, m: int, eps: float) -> tuple[float, float]:
    """Exact tails for a value held by ONE record (f = 1/n) of a group of n records split at
    random into t blocks: its block (size q+1 with probability r(q+1)/n, else q) adds 1 if
    retained, its size if replaced by the value; every other block adds its size with
    probability b."""
    pp = PrivacyParams.__new__(PrivacyParams)
    object.__setattr__(pp, "p", p), object.__setattr__(pp, "m", m), object.__setattr__(pp, "eps", eps)
    q, r = divmod(n, t)
    mu, theta = mu_theta(n, 1.0 / n, pp)
    up_from, low_to = _above((1 + theta) * mu), _below((1 - theta) * mu)
    upper = lower = 0.0
    for size, weight in ((q + 1, r * (q + 1) / n), (q, (t - r) * q / n)):
        if weight == 0 or size == 0:
            continue
        big = r - (size == q + 1)          # the other blocks: of size q+1, and of size q
        small = (t - 1) - big
        pb, ps = _binom_pmf(big, pp.b), _binom_pmf(small, pp.b)
        others = np.zeros(n + 1)
        total = (q + 1) * np.arange(big + 1)[:, None] + q * np.arange(small + 1)[None, :]
        np.add.at(others, total.ravel(), np.outer(pb, ps).ravel())
        own = {1: pp.a, 0: 1 - pp.a} if size == 1 else \
            {1: pp.p, size: (1 - pp.p) / pp.m, 0: (1 - pp.p) * (1 - 1 / pp.m)}
        o = np.arange(n + 1)
        for add, w in own.items():
            upper += weight * w * float(others[o + add >= up_from].sum())
            lower += weight * w * float(others[o + add <= low_to].sum())
    return min(upper, 1.0), min(lower, 1.0)


CERT_MARGIN = 1e-9      # a design is certified when its computed tails reach delta + cert_margin(n)


def cert_margin(n: int) -> float:
    """Room for rounding in computed tails of a group of n: each probability term is the exp
    of a sum of nine log factorials of size up to log n!, whose absolute rounding error is
    below 1e-15 log n! (table and sum), a relative error of the term; the tails add terms of
    total mass at most a few, so 1e-14 log n! bounds the error with room (measured against
    tests/helpers/independent_tails.py: 5e-12 at n = 20,000, where the margin is 2.8e-9)."""
    return CERT_MARGIN + 1e-14 * float(_log_fact(n)[n])
_DROP_MASS = 1e-12      # block configurations of at most this total probability are left out
_DESIGN_WORK = 6e7      # (configurations) x (counts) beyond which a design is not used (fewer blocks are)


def _trinomial(k: int, p: float, b: float, drop: float):
    """Of k independent blocks: (retained, hit) counts with their probabilities, the least
    likely cells (summing to at most drop / 4) left out."""
    i, j = np.meshgrid(np.arange(k + 1), np.arange(k + 1), indexing="ij")
    ok = i + j <= k
    i, j = i[ok], j[ok]
    lf = _log_fact(k)
    prob = np.exp(lf[k] - lf[i] - lf[j] - lf[k - i - j] + i * math.log(p) + j * math.log(b)
                  + (k - i - j) * math.log1p(-p - b))
    keep = _significant(prob, drop / 4)
    return i[keep], j[keep], prob[keep]


def _significant(prob: np.ndarray, mass: float) -> np.ndarray:
    """Indices of prob without its smallest entries of total at most `mass`."""
    order = np.argsort(prob)
    return np.sort(order[np.cumsum(prob[order]) > mass])


@lru_cache(maxsize=1024)
def design_configurations(n: int, t: int, p: float, m: int, drop: float = _DROP_MASS):
    """The block design of n records in t blocks (r = n mod t of size q + 1, the others of
    size q = n // t) reduced to what the released count depends on: the total size s of the
    retained blocks and the total size v of the blocks replaced by the value, with the
    probability of each distinct (s, v). Configurations of total probability at most
    `drop` are left out, so tails summed over them are lower bounds, low by at most `drop`."""
    b = (1 - p) / m
    q, r = divmod(n, t)
    i1, j1, p1 = _trinomial(r, p, b, drop)               # blocks of size q + 1
    i0, j0, p0 = _trinomial(t - r, p, b, drop)           # blocks of size q
    s = ((q + 1) * i1[:, None] + q * i0[None, :]).ravel()
    v = ((q + 1) * j1[:, None] + q * j0[None, :]).ravel()
    s_sv, v_sv, prob = _sum_by_pair(s, v, np.outer(p1, p0).ravel())
    keep = _significant(prob, drop / 2)
    return s_sv[keep], v_sv[keep], prob[keep]


def _sum_by_pair(s: np.ndarray, v: np.ndarray, weights: np.ndarray):
    """The distinct (s, v) pairs in ascending order with the sum of their weights (as
    np.unique and np.bincount would give). The pairs of a design lie in a small window of
    the (s, v) plane, so they are counted over that window directly when it is not much
    larger than the input: no sort."""
    s0, v0 = int(s.min()), int(v.min())
    width = int(v.max()) - v0 + 1
    cells = (int(s.max()) - s0 + 1) * width
    if cells <= max(4 * len(s), 1 << 16):
        key = (s - s0) * width + (v - v0)
        present = np.flatnonzero(np.bincount(key, minlength=cells))
        prob = np.bincount(key, weights=weights, minlength=cells)[present]
        return present // width + s0, present % width + v0, prob
    key, inverse = np.unique(s * (int(v.max()) + 1) + v, return_inverse=True)
    return key // (int(v.max()) + 1), key % (int(v.max()) + 1), np.bincount(inverse.ravel(), weights=weights)


def _hypergeometric_pmf(n: int, c, s, h):
    """P(H = h) for H the number of c marked records among s drawn without replacement from
    n (c, s, h broadcast to h's shape; 0 outside the support). Far from the mean c s / n it
    is set to 0: by Hoeffding's bound, applied to H and to its three mirror forms (s and c
    swapped, complements), P(H = h) <= exp(-2 d^2 / M) with d = |h - c s / n| and
    M = min(s, c, n - s, n - c); terms with 2 d^2 > 41.5 M are below 1e-18 (M = 0: H is
    fixed and only d = 0 has mass). Only the terms near the mean (a few percent of them
    for large n) are computed, from log factorials."""
    c, s, h = np.asarray(c), np.asarray(s), np.asarray(h)
    d = h - c * s / n
    near = (2 * d * d <= 41.5 * np.minimum(np.minimum(s, c), np.minimum(n - s, n - c)) + 1e-9) \
        & (h >= 0) & (h <= c) & (h <= s) & (h >= c + s - n)
    at = np.nonzero(near)
    cc, ss = np.broadcast_to(c, near.shape)[at], np.broadcast_to(s, near.shape)[at]
    hh = h[at]
    lf = _log_fact(n)
    out = np.zeros(near.shape)
    out[at] = np.exp(lf[cc] + lf[n - cc] + lf[ss] + lf[n - ss] - lf[n]
                     - lf[hh] - lf[cc - hh] - lf[ss - hh] - lf[n - cc - ss + hh])
    return out


def _weighted_tail_along(n: int, s: np.ndarray, v: np.ndarray, w: np.ndarray, edge: np.ndarray,
                         slope: float, base: float) -> np.ndarray:
    """sum_i w[i] P(H_c >= edge[c] - v[i]) for c = 0..n, H_c hypergeometric (c marked of n,
    s[i] drawn), in O(n) per configuration i at most: walking c upwards, one more marked
    record is drawn with probability (s - h) / (n - c) given H_c = h, so
        P(H_{c+1} >= k) = P(H_c >= k) + P(H_c = k - 1) (s - k + 1) / (n - c),
    and moving the threshold from k to k' at the same c adds or removes P(H_c = j) for the
    j in between; the increments are summed cumulatively from P(H_0 >= k) = [k <= 0].

    Only increments near the mean count (see _hypergeometric_pmf: the terms left out are
    below 1e-18 each, at most 5 n of them per configuration, far inside cert_margin), so
    each configuration walks only the band of c where its threshold is within Hoeffding's
    distance of the mean c s / n: edge[c] is within `dev` of the line slope c + base, so
    the band is an interval of c found from that line, widened by dev and by 2 for the
    terms taken at c + 1. Weighted increments are summed per c, so no configurations x n
    array is built."""
    c_all = np.arange(n + 1)
    dev = float(np.abs(edge - (slope * c_all + base)).max())
    move = np.diff(edge)
    moves = int(np.abs(move).max(initial=0))
    reach = np.sqrt(41.5 / 2 * np.minimum(s, n - s)) + moves + dev + 3.0
    rate, offset = slope - s / n, base - v              # the threshold's distance to the mean: rate c + offset
    flat = np.abs(rate) < 1e-12
    with np.errstate(divide="ignore", invalid="ignore"):
        ends = np.sort(np.stack([(-reach - offset) / rate, (reach - offset) / rate]), axis=0)
    first = np.where(flat, np.where(np.abs(offset) <= reach, 0, n), np.floor(ends[0]))
    last = np.where(flat, n - 1, np.ceil(ends[1]))
    first, last = np.clip(first, 0, n).astype(np.int64), np.clip(last, -1, n - 1).astype(np.int64)
    length = np.maximum(last - first + 1, 0)
    total = np.zeros(n)
    rows_per_chunk = max(1, int(4e6 // max(1, int(length.max(initial=1)))))   # bounded memory
    for a in range(0, len(s), rows_per_chunk):
        ln = length[a: a + rows_per_chunk]
        if ln.sum() == 0:
            continue
        row = np.repeat(np.arange(a, a + len(ln)), ln)
        c = np.repeat(first[a: a + len(ln)] - np.cumsum(ln) + ln, ln) + np.arange(int(ln.sum()))
        size, k0 = s[row], edge[c] - v[row]
        step = _hypergeometric_pmf(n, c, size, k0 - 1) * np.maximum(size - k0 + 1, 0) / (n - c)
        mv = move[c]
        for j in range(moves):
            # raised past k0 + j: P(H = k0 + j) leaves the tail; lowered past k0 - 1 - j: it joins
            passed = _hypergeometric_pmf(n, c + 1, size, np.where(mv > 0, k0 + j, k0 - 1 - j))
            step -= np.where(mv > j, passed, 0.0) - np.where(-mv > j, passed, 0.0)
        total += np.bincount(c, weights=w[row] * step, minlength=n)
    start = float(w[edge[0] - v <= 0].sum())
    return np.clip(np.concatenate([[start], start + np.cumsum(total)]), 0.0, 1.0)


def design_cost(n: int, t: int, p: float, m: int) -> float:
    """The work of block_tails_every_count: configurations times counts."""
    return len(design_configurations(n, t, p, m)[0]) * (n + 1.0)


@lru_cache(maxsize=4096)
def block_tails_every_count(n: int, t: int, p: float, m: int, eps: float,
                            drop: float = _DROP_MASS) -> tuple[np.ndarray, np.ndarray]:
    """Exact tails Pr[O* > (1+theta) mu], Pr[O* < (1-theta) mu] of the block design (n records
    at random into t blocks, sizes differing by at most one; each block retained with
    probability p, else replaced by one value) for a value held by c records, for every
    c = 0..n at once (arrays indexed by c; docs/METHODS.md, "Certified enforcement").

    Given the configuration (s, v) (sizes of the retained blocks and of the blocks replaced
    by the value), O* = H + v where H, the holders among the s retained records, is
    hypergeometric because the blocks are a uniformly random partition. Configurations
    summing to at most `drop` are left out: the tails are lower bounds, low by at most
    that. t = n is n independent records."""
    s, v, w = design_configurations(n, t, p, m, drop)
    b = (1 - p) / m
    c = np.arange(n + 1)
    hi = _above(c * p * (1 + eps) + n * b)          # (1 + theta) mu = c p (1 + eps) + n b
    lo = _below(c * p * (1 - eps) + n * b)          # (1 - theta) mu = c p (1 - eps) + n b
    upper = _weighted_tail_along(n, s, v, w, hi, p * (1 + eps), n * b)             # H >= hi - v
    lower = w.sum() - _weighted_tail_along(n, s, v, w, lo + 1, p * (1 - eps), n * b)   # H <= lo - v
    return np.clip(upper, 0.0, 1.0), np.clip(lower, 0.0, 1.0)


def design_worst_tail(n: int, t: int, pp: "PrivacyParams") -> float:
    """The smallest of the two exact tails of the design (n, t) over every count c = 1..n
    (for t < n low by at most _DROP_MASS)."""
    return _design_worst(n, t, pp)[0]


def _design_worst(n: int, t: int, pp: "PrivacyParams") -> tuple[float, int]:
    """design_worst_tail and the count c at which it is reached."""
    if t == n:
        c = np.arange(1, n + 1)
        upper, lower = exact_tails_many(np.full(n, n), c, pp.p, pp.m, pp.eps)
    else:
        upper, lower = block_tails_every_count(n, t, pp.p, pp.m, pp.eps)
        upper, lower = upper[1:], lower[1:]
    tails = np.minimum(upper, lower)
    at = int(np.argmin(tails))
    return float(tails[at]), at + 1


SCREEN_SLACK = 1e-7     # a design screened out at a few counts is below delta by more than this
_HINTS = 6              # failing counts remembered for screening
_SCREEN_COST = 1e5      # design_cost above which a design is screened first (cheaper ones: the full check is as fast)


def design_tails_at(n: int, t: int, pp: "PrivacyParams", counts) -> np.ndarray:
    """The smaller of the two tails of the design (n, t < n) for a value held by each of
    `counts` records: the tails block_tails_every_count gives at those counts, from the same
    configurations, through scipy's hypergeometric survival function instead of the walk over
    every count (its cost is configurations x len(counts), not configurations x n). The two
    agree to far below SCREEN_SLACK (each leaves out terms below 1e-18 or rounds at 1e-14)."""
    from scipy.stats import hypergeom      # imported here: only enforcement needs it
    s, v, w = design_configurations(n, t, pp.p, pp.m)
    b = (1 - pp.p) / pp.m
    out = []
    for c in counts:
        hi = _above(c * pp.p * (1 + pp.eps) + n * b)
        lo = _below(c * pp.p * (1 - pp.eps) + n * b)
        upper = float(w @ hypergeom.sf(hi - v - 1, n, c, s))            # H >= hi - v
        lower = float(w @ hypergeom.cdf(lo - v, n, c, s))               # H <= lo - v
        out.append(min(upper, lower))
    return np.array(out)


def _design_passes(n: int, t: int, pp: PrivacyParams, hints: list | None = None) -> bool:
    """Does a group of n records in t blocks pass? Chernoff (the paper's screening test): t
    independent trials at f = 1; it certifies nothing. Exact: the exact tails of the block
    design at EVERY count c = 1..n reach delta (cheap necessary checks first: f = 1 and a
    value held by one record). A design whose exact check would cost more than _DESIGN_WORK
    is not used (the search goes on to fewer blocks, which is never less private a choice
    to certify: it is certified in the same way).

    `hints`: shares c / n of the counts at which earlier designs failed (added to as designs
    fail). The design is first screened at those counts (design_tails_at); one screened out
    is below delta there by more than SCREEN_SLACK, so the full check would fail it too: the
    answer is the same with or without hints, found sooner."""
    if pp.test == "chernoff":
        return passes(t, t, pp)
    need = pp.delta + cert_margin(n)
    if t < n:
        if min(block_tails(n, t, pp.p, pp.m, pp.eps)) < need:          # cheapest check first
            return False
        if min(block_tails_single(n, t, pp.p, pp.m, pp.eps)) < need:
            return False
        if design_cost(n, t, pp.p, pp.m) > _DESIGN_WORK:
            return False
        if hints is not None and design_cost(n, t, pp.p, pp.m) > _SCREEN_COST:
            # counts where larger designs failed: usually this one fails there too (a screen
            # costs a few scipy calls per count, worth it only before a costly full check)
            counts = sorted({min(n, max(1, round(share * n) + d)) for share in hints for d in (-1, 0, 1)})
            if counts and design_tails_at(n, t, pp, counts).min() < need - SCREEN_SLACK:
                return False
    worst, at = _design_worst(n, t, pp)
    if hints is not None and worst < need:
        share = round(at / n, 3)
        if share in hints:
            hints.remove(share)
        hints.append(share)
        del hints[:-_HINTS]        # the most recent few: where the designs of nearby sizes fail
    return worst >= need


def trials_for_sizes(sizes, pp: PrivacyParams) -> dict[int, int]:
    """Number of randomization units t(n) for personal groups of each size n. It depends
    only on public quantities (n, p, m, eps, delta), never on a group's own frequencies.

    Exact test: the design is certified exactly at this very n and at every count c = 1..n
    (t = n: independent records; t < n: the group split at random into t blocks, sizes
    differing by at most one, each sharing one coin and one replacement value). Candidates
    are the t passing the exact test at f = 1 (a necessary condition, cheap for all t at
    once), taken from t = 1 upwards until _STOP_AFTER in a row fail it after one passed;
    t(n) is the LARGEST candidate whose design is certified at every count, found from the
    top down, so usually a single design is certified in full.
    Chernoff test (the paper's screening bound, certifies nothing): the most trials
    t <= n that pass the Chernoff bounds at f = 1.

    0 means no design passes (the caller refuses such data or suppresses those groups)."""
    n_max = chernoff_max_group(pp)        # the exact tails are at most the Chernoff bounds
    at_one = [t for t in range(1, n_max + 1) if passes(t, t, pp)]
    out, hints = {}, []
    for n in sorted({int(x) for x in sizes}):
        if pp.test == "chernoff":
            out[n] = next((t for t in reversed(at_one) if t <= n), 0)
            continue
        candidates = _f1_candidates(n, pp, n_max)
        out[n] = next((t for t in reversed(candidates) if _design_passes(n, t, pp, hints)), 0)
    return out


def trials_upper_bounds(sizes, pp: PrivacyParams, stop_at_zero: bool = False) -> dict[int, int]:
    """For each size n, an upper bound of trials_for_sizes' t(n) under the exact test: the
    largest candidate (the t passing at f = 1), before any design is certified at every count.
    Cheap (one vectorised tail computation per size); 0 when no t passes at f = 1. With
    stop_at_zero, the sizes from the smallest up to the first with 0 (whoever needs every size
    to have a design learns it from the cheap small sizes)."""
    if pp.test != "exact":
        raise ValueError("trials_upper_bounds serves the exact test")
    n_max = chernoff_max_group(pp)
    out = {}
    for n in sorted({int(x) for x in sizes}):
        out[n] = max(_f1_candidates(n, pp, n_max), default=0)
        if stop_at_zero and out[n] == 0:
            break
    return out


def _f1_candidates(n: int, pp: PrivacyParams, n_max: int) -> list[int]:
    """The block counts t of a group of n that pass the exact test at f = 1, from t = 1 upwards
    until _STOP_AFTER in a row fail after one passed (t = n, independent records, included when
    n <= n_max)."""
    ts = np.arange(1, min(n - 1, n_max) + 1)
    upper, lower = block_tails_over_t(n, ts, pp.p, pp.m, pp.eps)    # the cheapest check, for all t
    at_f1 = dict(zip(ts.tolist(), (np.minimum(upper, lower) >= pp.delta + cert_margin(n)).tolist()))
    if n <= n_max:
        at_f1[n] = True
    candidates, failed = [], 0
    for t in sorted(at_f1):
        if at_f1[t]:
            candidates.append(t)
            failed = 0
        else:
            failed += 1
            if candidates and failed == _STOP_AFTER:
                break
    return candidates


_STOP_AFTER = 3
