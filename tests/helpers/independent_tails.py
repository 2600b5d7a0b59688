"""An implementation of the block design's tails independent of rwn_sql.rp.core.privacy, for the
tests: a dynamic programme over the blocks one after the other (no hypergeometric
decomposition of the retained records), holder placements from scipy's hypergeometric pmf,
thresholds decided in exact rational arithmetic on the decimal parameters as written.

A group of n records is split at random into t blocks (n mod t of size n//t + 1 first,
then size n//t); c records hold the value x. Each block is retained with probability p
(its holders of x count), else replaced by one value drawn from the m domain values (all
its records count if that is x)."""
from fractions import Fraction

import numpy as np
from scipy.stats import hypergeom


def thresholds(n, c, p, m, eps):
    """(hi, lo): the released count O* is an upper error when O* >= hi, a lower one when O* <= lo."""
    p, eps = Fraction(str(p)), Fraction(str(eps))
    b = (1 - p) / m
    f = Fraction(c, n)
    mu = n * (f * p + b)
    theta = eps * f * p / (f * p + b)
    upper_edge, lower_edge = (1 + theta) * mu, (1 - theta) * mu
    hi = upper_edge.numerator // upper_edge.denominator + 1                  # smallest integer > edge
    lo = -((-lower_edge.numerator) // lower_edge.denominator) - 1            # largest integer < edge
    return hi, lo


def block_dp_tails(n, t, p, m, eps):
    """(upper, lower): arrays over c = 0..n of Pr[O* > (1+theta) mu] and Pr[O* < (1-theta) mu]."""
    q, r = divmod(n, t)
    sizes = [q + 1] * r + [q] * (t - r)
    keep, hit, miss = p, (1 - p) / m, (1 - p) * (1 - 1 / m)
    upper, lower = np.zeros(n + 1), np.zeros(n + 1)
    for c in range(n + 1):
        # dist[h, o]: h holders not yet placed, o = released count of the blocks so far
        dist = np.zeros((c + 1, n + 1))
        dist[c, 0] = 1.0
        left = n
        held = np.arange(c + 1)
        for size in sizes:
            new = np.zeros_like(dist)
            for j in range(0, min(c, size) + 1):
                w = np.nan_to_num(hypergeom.pmf(j, left, held, size))[:, None]   # j of h holders fall in
                moved = (w * dist)[j:]                                          # rows h = j..c
                new[: c + 1 - j, j:] += keep * moved[:, : n + 1 - j]
                new[: c + 1 - j, size:] += hit * moved[:, : n + 1 - size]
                new[: c + 1 - j] += miss * moved
            dist, left = new, left - size
        pmf = dist[0]
        hi, lo = thresholds(n, c, p, m, eps)
        upper[c] = pmf[max(hi, 0):].sum() if hi <= n else 0.0
        lower[c] = pmf[: lo + 1].sum() if lo >= 0 else 0.0
    return upper, lower


def configuration_tails(n, t, p, m, eps, counts):
    """The same tails at the given counts by enumerating every (retained, replaced-by-x)
    number of blocks of each size and scipy's hypergeometric survival function for the
    holders among the retained records: for large n, where the dynamic programme is slow."""
    from math import comb
    q, r = divmod(n, t)
    b = (1 - p) / m
    other = 1 - p - b
    configs = []
    for kept_big in range(r + 1):
        for hit_big in range(r - kept_big + 1):
            w_big = comb(r, kept_big) * comb(r - kept_big, hit_big) * p ** kept_big * b ** hit_big \
                * other ** (r - kept_big - hit_big)
            for kept in range(t - r + 1):
                for hits in range(t - r - kept + 1):
                    w = w_big * comb(t - r, kept) * comb(t - r - kept, hits) * p ** kept * b ** hits \
                        * other ** (t - r - kept - hits)
                    configs.append(((q + 1) * kept_big + q * kept, (q + 1) * hit_big + q * hits, w))
    s, v, w = (np.array(x) for x in zip(*configs))
    upper, lower = [], []
    for c in counts:
        hi, lo = thresholds(n, c, p, m, eps)
        # O* = H + v >= hi  <=>  H >= hi - v;  O* <= lo  <=>  H <= lo - v
        upper.append(float(w @ hypergeom.sf(hi - v - 1, n, c, s)))
        lower.append(float(w @ hypergeom.cdf(lo - v, n, c, s)))
    return np.array(upper), np.array(lower)


def _edges(n, p, m, eps):
    """Integer thresholds for every c = 0..n, in exact integer arithmetic on the decimal
    parameters: O* is an upper error when O* >= hi[c] (the smallest integer above
    c p (1 + eps) + n b), a lower one when O* <= lo[c] (the largest integer below
    c p (1 - eps) + n b). Both edges are (c x + n y) / z with integers x, y, z."""
    p, eps = Fraction(str(p)), Fraction(str(eps))
    base = (1 - p) / m
    out = []
    for factor in (1 + eps, 1 - eps):
        slope = p * factor
        z = slope.denominator * base.denominator
        x, y = slope.numerator * base.denominator, base.numerator * slope.denominator
        assert abs(x) * n + abs(y) * n < 2 ** 62, "parameters with too many digits for int64"
        out.append((np.arange(n + 1, dtype=np.int64) * x + n * y, z))
    (up, z_up), (down, z_down) = out
    return up // z_up + 1, -((-down) // z_down) - 1


def _configurations(n, t, p, m):
    """{(s, v): probability}: s the records in retained blocks, v those in blocks replaced
    by x, enumerated over the (retained, replaced-by-x) block counts of each block size
    with exact binomial coefficients; nothing left out."""
    from math import comb
    q, r = divmod(n, t)
    b = (1 - p) / m
    other = 1 - p - b

    def classes(k):
        return [(kept, hit, comb(k, kept) * comb(k - kept, hit) * p ** kept * b ** hit
                 * other ** (k - kept - hit)) for kept in range(k + 1) for hit in range(k - kept + 1)]
    out = {}
    for kept1, hit1, w1 in classes(r):
        for kept0, hit0, w0 in classes(t - r):
            key = ((q + 1) * kept1 + q * kept0, (q + 1) * hit1 + q * hit0)
            out[key] = out.get(key, 0.0) + w1 * w0
    return out


def _pmf(n, c, s, h):
    """P(H = h), H hypergeometric (c marked of n, s drawn), via scipy's gammaln, for 1-d
    arrays; 0 outside the support and where Hoeffding's inequality, applied to H and its
    mirror forms, bounds it below exp(-25) < 1.4e-11 times exp(-(2 d^2 / M - 50))
    (d = h - c s / n, M = min(c, s, n - c, n - s)): we keep 2 d^2 <= 60 M + 4, so every
    left-out term is below exp(-30) ~ 1e-13 (a looser cut than rwn_sql's)."""
    from scipy.special import gammaln
    d = h - c * s / n
    keep = (h >= 0) & (h <= c) & (h <= s) & (n - c - s + h >= 0) \
        & (2 * d * d <= 60 * np.minimum(np.minimum(c, s), np.minimum(n - c, n - s)) + 4)
    out = np.zeros(len(h))
    c, s, h = c[keep], s[keep], h[keep]
    out[keep] = np.exp(gammaln(c + 1.0) - gammaln(h + 1.0) - gammaln(c - h + 1.0)
                       + gammaln(n - c + 1.0) - gammaln(s - h + 1.0) - gammaln(n - c - s + h + 1.0)
                       - gammaln(n + 1.0) + gammaln(s + 1.0) + gammaln(n - s + 1.0))
    return out


def _sf_along_counts(n, s, w, k):
    """sum_i w[i] P(H_c(s[i]) >= k[i, c]) for every c = 0..n. The holders are the first c
    records of a random order, so going from c to c + 1 draws one more holder, inside the s
    retained records with probability (s - H_c)/(n - c):
    P(H_{c+1} >= k) - P(H_c >= k) = P(H_c = k - 1) (s - k + 1)/(n - c). A threshold that
    moves between c and c + 1 adds or removes the pmf terms it passes at c + 1."""
    rows, cols = len(s), n
    s = np.repeat(s, cols)
    c = np.tile(np.arange(cols, dtype=np.int64), rows)
    before, after = k[:, :-1].ravel(), k[:, 1:].ravel()
    inc = _pmf(n, c, s, before - 1) * np.clip(s - before + 1, 0, None) / (n - c)
    for j in range(int(np.abs(after - before).max(initial=0))):
        up = _pmf(n, c + 1, s, before + j)             # threshold raised past before + j
        down = _pmf(n, c + 1, s, before - 1 - j)       # threshold lowered past before - 1 - j
        inc = inc - np.where(after - before > j, up, 0.0) + np.where(before - after > j, down, 0.0)
    first = float(w @ (k[:, 0] <= 0))
    return first + np.concatenate([[0.0], np.cumsum(w @ inc.reshape(rows, cols))])


def walk_tails(n, t, p, m, eps):
    """(upper, lower) over c = 0..n like block_dp_tails, in O(configurations x n): every
    configuration (s, v) kept (no mass left out), O* = H + v with H hypergeometric
    (docs/METHODS.md), H's tails walked along c (pmf terms below 1e-13 skipped). Fast enough to scan every n up to
    thousands; checked against block_dp_tails and configuration_tails in the tests."""
    configs = _configurations(n, t, p, m)
    s = np.array([key[0] for key in configs], dtype=np.int64)
    v = np.array([key[1] for key in configs], dtype=np.int64)
    w = np.array(list(configs.values()))
    hi, lo = _edges(n, p, m, eps)
    upper = _sf_along_counts(n, s, w, hi[None, :] - v[:, None])                    # H >= hi - v
    lower = w.sum() - _sf_along_counts(n, s, w, lo[None, :] - v[:, None] + 1)      # H <= lo - v
    return np.clip(upper, 0.0, 1.0), np.clip(lower, 0.0, 1.0)
