"""The retention probability p from a privacy budget other than (eps, delta): rho1-to-rho2
privacy (Evfimievski, Gehrke, Srikant, PODS 2003) or lambda-local differential privacy
(docs/METHODS.md, section 2: p from rho1-to-rho2 privacy or local DP). Pure Python; no connection.

The perturbation is rwn_sql's: keep the value with probability p, else draw one of the m domain
values uniformly, the kept value included. Then P[y | x] is p + (1-p)/m for y = x and (1-p)/m
otherwise, so the perturbation is gamma-amplifying with gamma = 1 + p m / (1 - p), and
  rho1-to-rho2 privacy holds when gamma < rho2 (1 - rho1) / (rho1 (1 - rho2)), that is
      p < (rho2 - rho1) / (rho2 - rho1 + m rho1 (1 - rho2))   (strict: at equality the worst
      posterior equals rho2);
  lambda-LDP holds when gamma <= e^lambda, that is p <= (e^lambda - 1) / (e^lambda - 1 + m).
Under the other convention ("keep, else replace by one of the OTHER m - 1 values") the same
amplification is reached at another p; these formulas are not for it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction

from ...errors import RWNError

DIGITS = 6          # the p used: the bound rounded down to this many decimals (strictly below a strict bound)


@dataclass(frozen=True)
class Calibration:
    """The largest retention probability a budget allows for a domain of m values: `bound` (the
    supremum; `strict`: p must stay below it), its exact value as text where the inputs allow
    (`exact`: a fraction, for rho), `p` the probability used (the bound rounded down to DIGITS
    decimals, strictly below it when strict), and `gamma` = 1 + p m / (1 - p) at that p."""
    m: int
    budget: str              # "rho" or "ldp"
    rho: tuple[float, float] | None
    ldp: float | None
    bound: float
    exact: str | None
    strict: bool
    p: float
    gamma: float

    def describe(self) -> str:
        what = (f"rho1-to-rho2 privacy with (rho1, rho2) = ({self.rho[0]:g}, {self.rho[1]:g})" if self.budget == "rho"
                else f"{self.ldp:g}-local differential privacy")
        exact = f" = {self.exact}" if self.exact else ""
        return (f"{what}, m = {self.m}: p {'<' if self.strict else '<='} {self.bound:.10g}{exact}; p used = "
                f"{self.p:.{DIGITS}f} (gamma = {self.gamma:.8g}; keep with p, else a uniform draw from all m values)")

    def as_dict(self) -> dict:
        return {"m": self.m, "budget": self.budget, "rho": list(self.rho) if self.rho else None, "ldp": self.ldp,
                "bound": self.bound, "exact": self.exact, "strict": self.strict, "p": self.p, "gamma": self.gamma}


def gamma(p: float, m: int) -> float:
    """The amplification of uniform perturbation with retention p over m values."""
    return 1.0 + p * m / (1.0 - p)


def _probability(value, name: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 < value < 1:
        raise RWNError(f"{name} must be a number in (0, 1), got {value!r}")
    return Fraction(str(value)) if isinstance(value, float) else Fraction(value)


def _check_m(m) -> int:
    if isinstance(m, bool) or not isinstance(m, int) or m < 2:
        raise RWNError(f"m (the number of domain values) must be an integer >= 2, got {m!r}")
    return m


def calibrate_p(m: int, rho=None, ldp=None) -> Calibration:
    """The largest p for a domain of m values under rho1-to-rho2 privacy (`rho=(rho1, rho2)`,
    0 < rho1 < rho2 < 1) or lambda-local differential privacy (`ldp=lambda` > 0): exactly one.
    The rho bound is computed in exact rational arithmetic from the decimal values given; the
    LDP bound from e^lambda to 40 digits. Returns a Calibration (see its fields)."""
    m = _check_m(m)
    if (rho is None) == (ldp is None):
        raise RWNError("calibrate_p: give exactly one budget, rho=(rho1, rho2) or ldp=lambda")
    if rho is not None:
        if isinstance(rho, str) or not hasattr(rho, "__len__") or len(rho) != 2:
            raise RWNError(f"rho must be a pair (rho1, rho2), got {rho!r}")
        r1, r2 = _probability(rho[0], "rho1"), _probability(rho[1], "rho2")
        if not r1 < r2:
            raise RWNError(f"rho1 must be smaller than rho2 (a prior of rho1 may rise at most to rho2), got {rho!r}")
        exact = (r2 - r1) / (r2 - r1 + m * r1 * (1 - r2))
        p = Fraction(math.floor(exact * 10**DIGITS), 10**DIGITS)
        if p >= exact:
            p -= Fraction(1, 10**DIGITS)
        return Calibration(m, "rho", (float(rho[0]), float(rho[1])), None, float(exact),
                           f"{exact.numerator}/{exact.denominator}", True, float(p), gamma(float(p), m))
    if isinstance(ldp, bool) or not isinstance(ldp, (int, float)) or not math.isfinite(ldp) or ldp <= 0:
        raise RWNError(f"ldp (lambda) must be a finite number > 0, got {ldp!r}")
    if ldp > 700:
        raise RWNError(f"ldp (lambda) = {ldp!r} allows any p < 1 (e^lambda overflows); give a smaller lambda")
    with localcontext() as ctx:
        ctx.prec = 40
        grow = Decimal(repr(float(ldp))).exp() - 1
        bound = grow / (grow + m)
        p = (bound * 10**DIGITS).to_integral_value(rounding=ROUND_FLOOR) / Decimal(10**DIGITS)
    if p <= 0:
        raise RWNError(f"ldp = {ldp!r} with m = {m} allows only p < {float(bound):.3g}: no p of {DIGITS} decimals "
                       f"works; give a larger lambda")
    return Calibration(m, "ldp", None, float(ldp), float(bound), None, False, float(p), gamma(float(p), m))
