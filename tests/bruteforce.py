"""Brute-force O(n^2) reference for RWN neighbourhoods, written independently of the SQL.

Distances use the same floating-point operations in the same order as the SQL (scale each
column, then add squared differences column by column, then categorical mismatches), so
ties at the radius compare bit for bit.
"""
from __future__ import annotations

import numpy as np


def scaled(values: np.ndarray, scale: str) -> np.ndarray:
    v = values.astype(np.float64)
    if scale == "minmax":
        lo, hi = v.min(), v.max()
        return (v - lo) / (hi - lo)
    if scale == "zscore":
        sd = float(np.std(v, ddof=1))
        sd = round(sd, 9 - int(np.floor(np.log10(sd))))
        return (v - 0.0) / sd
    return (v - 0.0) / 1.0


def squared_distances(numeric: list[np.ndarray], categorical: list[np.ndarray], weight: float = 1.0):
    n = len(numeric[0]) if numeric else len(categorical[0])
    d2 = np.zeros((n, n))
    for x in numeric:
        diff = x[:, None] - x[None, :]
        d2 = d2 + diff * diff
    for c in categorical:
        d2 = d2 + np.where(c[:, None] == c[None, :], 0.0, weight * weight)
    return d2


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
        out[i + 1] = {int(j) + 1 for j in others if d2[i, j] <= r2}
        radius2[i + 1] = r2
        dcr2[i + 1] = dist[0] if len(dist) else None
    return out, radius2, dcr2
