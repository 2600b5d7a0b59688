"""An implementation of the block design's tails independent of rwn_sql.privacy, for the
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
