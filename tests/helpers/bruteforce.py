"""Brute-force O(n^2) reference for RWN neighbourhoods, written independently of the SQL.

Distances use the same floating-point operations in the same order as the SQL (per column the
difference of the unscaled values divided by the column's scale, squared, added column by
column, then categorical mismatches), and membership uses the same relative tie tolerance, so
the sets compare exactly. tests/rwn/test_ties.py checks the definition itself in exact arithmetic.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def tie_tolerance(terms: int) -> float:
    """METHODS.md "Exact ties": tau = 4 (terms + 4) u, u = 2^-53."""
    return 4.0 * (terms + 4) * 2.0 ** -53


@dataclass
class Scaled:
    """A numeric distance column: its values as doubles and its scale (distances divide the
    difference of two values by it)."""
    values: np.ndarray
    scale: float


def scaled(values: np.ndarray, scale: str) -> Scaled:
    v = values.astype(np.float64)
    if scale == "minmax":
        return Scaled(v, v.max() - v.min())
    if scale == "zscore":
        sd = float(np.std(v, ddof=1))
        return Scaled(v, round(sd, 9 - int(np.floor(np.log10(sd)))))
    return Scaled(v, 1.0)


def squared_distances(numeric: list[Scaled], categorical: list[np.ndarray], weight: float = 1.0):
    n = len(numeric[0].values) if numeric else len(categorical[0])
    d2 = np.zeros((n, n))
    for x in numeric:
        q = (x.values[:, None] - x.values[None, :]) / x.scale
        d2 = d2 + q * q
    for c in categorical:
        d2 = d2 + np.where(c[:, None] == c[None, :], 0.0, weight * weight)
    out = d2.view(Distances)
    out.terms = len(numeric) + len(categorical)
    return out


class Distances(np.ndarray):
    """Squared distances that know how many column terms they sum (for the tie tolerance)."""
    terms = 1


def neighborhoods(d2: np.ndarray, k: int, eps: float, strata: np.ndarray | None = None):
    """{record (1-based): set of neighbour records} plus radius^2 and dcr^2 per record."""
    n = d2.shape[0]
    if strata is None:
        strata = np.zeros(n, dtype=np.int64)
    out, radius2, dcr2 = {}, {}, {}
    for i in range(n):
        others = np.array([j for j in range(n) if j != i and strata[j] == strata[i]], dtype=np.int64)
        dist = np.sort(d2[i, others]) if len(others) else np.array([])
        r2 = eps * eps if k == 0 else max(eps * eps, dist[k - 1])
        bound = r2 * (1.0 + tie_tolerance(d2.terms))
        out[i + 1] = {int(j) + 1 for j in others if d2[i, j] <= bound}
        radius2[i + 1] = r2
        dcr2[i + 1] = dist[0] if len(dist) else None
    return out, radius2, dcr2


def neighborhoods_of(data: dict, columns, k: int, eps: float, categorical=(), strata=None, weight: float = 1.0,
                     scale: str = "minmax") -> dict:
    """S_i for a dict of column arrays, as rwn_sql's perturb parameters name them: the numeric
    columns scaled, categorical mismatch costing `weight`, strata matched exactly."""
    numeric = [c for c in columns if c not in categorical]
    d2 = squared_distances([scaled(np.asarray(data[c], dtype=float), scale) for c in numeric],
                           [np.asarray(data[c]) for c in categorical], weight=weight)
    labels = None
    if strata:
        labels = np.array(["|".join(str(data[s][i]) for s in strata) for i in range(len(d2))])
    return neighborhoods(d2, k, eps, strata=labels)[0]
