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


def _binom_pmf(n: int, prob: float) -> np.ndarray:
    k = np.arange(n + 1)
    if prob <= 0 or prob >= 1:
        out = np.zeros(n + 1)
        out[0 if prob <= 0 else n] = 1.0
        return out
    logc = np.array([math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in k])
    return np.exp(logc + k * math.log(prob) + (n - k) * math.log1p(-prob))


@lru_cache(maxsize=65536)
def exact_tails(n: int, count: int, p: float, m: int, eps: float) -> tuple[float, float]:
    """Exact Pr[O* > (1+theta) mu] and Pr[O* < (1-theta) mu] for a group of n records of
    which `count` hold the value: O* ~ Binomial(count, a) + Binomial(n - count, b)."""
    pp = PrivacyParams.__new__(PrivacyParams)
    object.__setattr__(pp, "p", p), object.__setattr__(pp, "m", m), object.__setattr__(pp, "eps", eps)
    mu, theta = mu_theta(n, count / n, pp)
    pmf = np.convolve(_binom_pmf(count, pp.a), _binom_pmf(n - count, pp.b))
    o = np.arange(len(pmf))
    hi, lo = (1 + theta) * mu, (1 - theta) * mu
    upper = float(pmf[o > hi + REL_TOL * max(1.0, hi)].sum())
    lower = float(pmf[o < lo - REL_TOL * max(1.0, abs(lo))].sum())
    return min(upper, 1.0), min(lower, 1.0)


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


def block_table(pp: PrivacyParams) -> list[int]:
    """t[n-1] = number of independent trials (blocks) for a personal group of n records, for
    n = 1 .. len(t); groups larger than len(t) get t[-1]. t(n) is the largest trial count
    not above n that passes the chosen test at f = 1 (docs/METHODS.md: the worst case for the
    Chernoff bounds, which grow as f falls), so it depends only on public quantities
    (n, p, m, eps, delta). Raises if not even one trial passes.

    The exact tails are not monotone in f: a group kept at t = n trials can still fail the
    exact test for a value with f < 1, and the audit after enforcement shows such groups."""
    n_max = chernoff_max_group(pp)
    # the exact tails are at most the Chernoff bounds: nothing above n_max can pass
    passing = [t for t in range(1, n_max + 1) if passes(t, t, pp)]
    if not passing:
        raise ValueError(f"(eps, delta) = ({pp.eps}, {pp.delta}) cannot be achieved with p = {pp.p}, "
                         f"m = {pp.m} and the {pp.test} test: even a single trial fails at f = 1")
    table, best = [], 0
    for n in range(1, passing[-1] + 1):
        if n in passing:
            best = n
        table.append(best if best else 1)
    return table
