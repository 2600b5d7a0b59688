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

TESTS = ("chernoff", "exact")
REL_TOL = 1e-9      # O* is an integer; thresholds equal to an integer are decided exactly


@dataclass(frozen=True)
class PrivacyParams:
    p: float
    m: int
    eps: float
    delta: float
    test: str = "chernoff"

    def __post_init__(self):
        check_p(self.p)
        if isinstance(self.m, bool) or not isinstance(self.m, (int, np.integer)) or self.m < 2:
            raise ValueError(f"the domain of the sensitive attribute needs at least 2 values, got m = {self.m}")
        if not (isinstance(self.delta, (int, float)) and 0 < self.delta < 1):
            raise ValueError(f"delta must be in (0, 1), got {self.delta!r}")
        limit = max_eps(self.p, self.m)
        if not (isinstance(self.eps, (int, float)) and 0 < self.eps <= limit):
            raise ValueError(f"eps must be in (0, {limit:.6g}] for p = {self.p}, m = {self.m} "
                             f"(0 < eps <= 1 + (1-p)/(m p), where the bounds hold for every frequency); "
                             f"got {self.eps!r}")
        if self.test not in TESTS:
            raise ValueError(f"test must be one of {', '.join(TESTS)}; got {self.test!r}")

    @property
    def a(self) -> float:
        return self.p + (1 - self.p) / self.m

    @property
    def b(self) -> float:
        return (1 - self.p) / self.m


def check_p(p) -> None:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p < 1:
        raise ValueError(f"p (retention probability) must be in (0, 1), got {p!r}")


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
    """log(k!) for k = 0 .. at least n (a table grown on demand)."""
    global _LOG_FACT
    if len(_LOG_FACT) <= n:
        _LOG_FACT = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, 2 * n + 2, dtype=float)))])
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


ALL_COUNTS_MAX = 64    # block designs of groups up to this size are checked at every count


@lru_cache(maxsize=65536)
def block_tails_count(n: int, t: int, c: int, p: float, m: int, eps: float) -> tuple[float, float]:
    """Exact tails for a value held by c of n records split at random into t blocks (sizes
    ceil(n/t), floor(n/t)). Dynamic programme over the blocks: the number of holders that
    fall into a block is hypergeometric; a block adds its holders if retained (p), its size
    if replaced by the value ((1-p)/m), else nothing."""
    pp = PrivacyParams.__new__(PrivacyParams)
    object.__setattr__(pp, "p", p), object.__setattr__(pp, "m", m), object.__setattr__(pp, "eps", eps)
    q, r = divmod(n, t)
    sizes = [q + 1] * r + [q] * (t - r)
    state = np.zeros((c + 1, n + 1))          # state[holders left, O* so far]
    state[c, 0] = 1.0
    left = n
    held = np.arange(c + 1)
    log_fact = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n + 1)))])

    def log_comb(a, b):
        return log_fact[a] - log_fact[b] - log_fact[a - b]

    for size in sizes:
        new = np.zeros_like(state)
        for j in range(0, min(size, c) + 1):
            # probability that j of the `held` remaining holders fall into this block
            ok = (held >= j) & (held <= left) & (left - held >= size - j)
            k = held[ok]
            h = np.zeros(c + 1)
            h[ok] = np.exp(log_comb(k, j) + log_comb(left - k, size - j) - log_comb(left, size))
            src = state[j:] * h[j:, None]
            if not src.any():
                continue
            dst = new[: c + 1 - j]
            dst[:, j:] += p * src[:, : n + 1 - j]                       # retained: adds its j holders
            dst[:, size:] += (1 - p) / m * src[:, : n + 1 - size]       # replaced by the value
            dst += (1 - p) * (1 - 1 / m) * src                          # replaced by another value
        state, left = new, left - size
    pmf = state[0]
    mu, theta = mu_theta(n, c / n, pp)
    o = np.arange(n + 1)
    upper = float(pmf[o >= _above((1 + theta) * mu)].sum())
    lower = float(pmf[o <= _below((1 - theta) * mu)].sum())
    return min(upper, 1.0), min(lower, 1.0)


@lru_cache(maxsize=4096)
def block_tails_all_counts(n: int, t: int, p: float, m: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """block_tails_count for every count c = 0..n at once (arrays indexed by c).

    The same recursion run backwards: D_b(k, d) is the probability that blocks b..t-1 add d
    to O* when k holders are still unplaced; D_0(c, .) is then the distribution of O* for a
    value held by c records. One pass costs about what one count costs forwards."""
    q, r = divmod(n, t)
    sizes = [q + 1] * r + [q] * (t - r)
    lefts = np.cumsum([n] + [-s for s in sizes])[:-1]            # records not yet placed, per block
    log_fact = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n + 1)))])
    k = np.arange(n + 1)
    later = np.zeros((n + 1, n + 1))                             # D_t: nothing left to add
    later[0, 0] = 1.0
    keep, hit, miss = p, (1 - p) / m, (1 - p) * (1 - 1 / m)
    for size, left in zip(reversed(sizes), reversed(lefts.tolist())):
        placed = np.zeros_like(later)                            # sum over j of the holder moves
        now = np.zeros_like(later)
        for j in range(0, min(size, n) + 1):
            # P(j of k unplaced holders fall into this block of `size` of the `left` records)
            ok = (k >= j) & (k <= left) & (left - k >= size - j)
            if not ok.any():
                continue
            kk = k[ok]
            h = np.exp(log_fact[kk] - log_fact[j] - log_fact[kk - j]
                       + log_fact[left - kk] - log_fact[size - j] - log_fact[left - kk - size + j]
                       - (log_fact[left] - log_fact[size] - log_fact[left - size]))
            moved = later[kk - j] * h[:, None]                   # rows: k holders before the block
            placed[kk] += moved
            now[kk, j:] += keep * moved[:, : n + 1 - j]          # retained: adds its j holders
        now[:, size:] += hit * placed[:, : n + 1 - size]         # replaced by the value: adds size
        now += miss * placed                                     # replaced by another value
        later = now
    f = k / n
    mu, theta = n * (f * p + (1 - p) / m), eps * f * p / (f * p + (1 - p) / m)
    o = np.arange(n + 1)
    upper = np.where(o[None, :] >= _above((1 + theta) * mu)[:, None], later, 0.0).sum(axis=1)
    lower = np.where(o[None, :] <= _below((1 - theta) * mu)[:, None], later, 0.0).sum(axis=1)
    return np.minimum(upper, 1.0), np.minimum(lower, 1.0)


def _design_passes(n: int, t: int, pp: PrivacyParams) -> bool:
    """Does a group of n records in t blocks pass? Chernoff (the paper's test): t independent
    trials at f = 1. Exact: the exact tails of the block design at both extremes, f = 1 and a
    value held by a single record (intermediate frequencies are checked by Monte Carlo in
    the tests)."""
    if pp.test == "chernoff":
        return passes(t, t, pp)
    if min(block_tails(n, t, pp.p, pp.m, pp.eps)) < pp.delta:          # cheapest check first
        return False
    if min(block_tails_single(n, t, pp.p, pp.m, pp.eps)) < pp.delta:
        return False
    if n <= ALL_COUNTS_MAX:
        upper, lower = block_tails_all_counts(n, t, pp.p, pp.m, pp.eps)
        return bool(np.minimum(upper, lower)[2:n].min(initial=1.0) >= pp.delta)
    return True


def trials_for_sizes(sizes, pp: PrivacyParams) -> dict[int, int]:
    """Number of randomization units t(n) for personal groups of each size n. It depends
    only on public quantities (n, p, m, eps, delta), never on a group's own frequencies:

      * n independent trials when they pass the test for every possible count of a value
        (for the Chernoff test f = 1 is the worst case, its bounds grow as f falls; the
        exact tails are not monotone in f, so every count is checked);
      * otherwise the most blocks t < n that pass at f = 1 (docs/METHODS.md): the group is
        split into t blocks (sizes differ by at most one) sharing one coin and one
        replacement value each; for the exact test the tails of that very block design are
        computed exactly, at f = 1 and for a value held by one record.

    0 means no design passes (the caller refuses such data)."""
    n_max = chernoff_max_group(pp)        # the exact tails are at most the Chernoff bounds
    at_one = [t for t in range(1, n_max + 1) if passes(t, t, pp)]
    out = {}
    for n in sorted({int(x) for x in sizes}):
        if n in at_one and (pp.test == "chernoff" or all(passes(n, c, pp) for c in range(1, n))):
            out[n] = n
            continue
        # Chernoff: t independent trials; exact: any split, checked on the design itself
        if pp.test == "chernoff":
            out[n] = next((t for t in reversed(at_one) if t < n and _design_passes(n, t, pp)), 0)
            continue
        ts = np.arange(min(n - 1, n_max), 0, -1)
        upper, lower = block_tails_over_t(n, ts, pp.p, pp.m, pp.eps)    # the cheapest check, for all t
        out[n] = next((int(t) for t in ts[np.minimum(upper, lower) >= pp.delta]
                       if _design_passes(n, int(t), pp)), 0)
    return out
