"""The singling-out attack of Anonymeter (Giomi et al., PoPETs 2023), vectorised with numpy:
predicates generated from the release, counted on the original and the control records.
rwn_sql.evaluation.attacks runs it; its docstring states the whole design.

Data are (n, p) float64 matrices: a numeric column holds its values, a categorical column its
integer codes (shared by the release, the original and the control; NULL a code of its own), so
that every predicate is `column OP value` with OP one of ==, !=, >, <, >=, <=. A batch of Q
predicates of m terms each is three (Q, m) arrays: columns, operators (the codes EQ .. LE) and values.
"""
from __future__ import annotations

import itertools

import numpy as np
from scipy.optimize import curve_fit
from scipy.stats import hypergeom

EQ, NE, GT, LT, GE, LE = range(6)
BLOCK_ELEMENTS = 2_000_000      # predicates x rows compared at once
PERMUTED_SPACE = 5_000_000     # (record, columns) pairs drawn by one permutation, else by rejection
FIRST_ROWS = 16                 # rows of the first block; the blocks then double


class Sorted:
    """A data matrix with each column's row order (`orders`, (p, n)) and sorted values (`values`,
    (p, n)): the rows a term `==`, `>=`, `>`, `<=` or `<` matches are one slice of that order."""

    def __init__(self, data):
        self.data = data
        self.orders = np.argsort(data, axis=0, kind="stable").T.copy()
        self.values = np.take_along_axis(data, self.orders.T, axis=0).T.copy()
        self.flat = data.T.ravel()                  # column j's values at j * n ...
        self.flat_orders = self.orders.ravel()      # column j's order at j * n ...

    def __len__(self):
        return len(self.data)

    def slices(self, cols, ops, vals):
        """(lo, hi) arrays (Q, m): the positions in column cols[q, t]'s order that term t matches
        (all rows for `!=`)."""
        n = len(self.data)
        lo, hi = np.zeros(cols.shape, np.int64), np.full(cols.shape, n, np.int64)
        for j in np.unique(cols):
            at = cols == j
            v, op = vals[at], ops[at]
            left = np.searchsorted(self.values[j], v, "left")
            right = np.searchsorted(self.values[j], v, "right")
            lo[at] = np.select([op == EQ, op == GE, op == GT], [left, left, right], 0)
            hi[at] = np.select([op == EQ, op == LE, op == LT], [right, right, left], n)
        return lo, hi


def _intervals(ops, vals):
    """Each term as an interval test: `lo <= x <= hi`, negated where `neg` (the `!=` terms)."""
    lo = np.where((ops == EQ) | (ops == NE) | (ops == GE), vals,
                  np.where(ops == GT, np.nextafter(vals, np.inf), -np.inf))
    hi = np.where((ops == EQ) | (ops == NE) | (ops == LE), vals,
                  np.where(ops == LT, np.nextafter(vals, -np.inf), np.inf))
    return lo, hi, ops == NE


def counts(index: Sorted, cols, ops, vals, cap: int | None = None):
    """How many rows of the data each predicate matches; with `cap`, min(count, cap). Each
    predicate scans only the rows its narrowest term matches (a slice of that column's order),
    in blocks, and with `cap` leaves the scan once it reached the cap (singling out only asks
    for 0, 1 or more)."""
    lo, hi = index.slices(cols, ops, vals)
    narrow = np.argmin(hi - lo, axis=1)
    q = np.arange(len(cols))
    pos, end, by = lo[q, narrow], hi[q, narrow], cols[q, narrow] * len(index)
    # the narrowest term holds on its slice: the other terms are tested, moved to the front
    first = np.argsort(np.arange(cols.shape[1])[None, :] == narrow[:, None], axis=1, kind="stable")[:, :-1]
    low, high, neg = (np.take_along_axis(a, first, axis=1) for a in _intervals(ops, vals))
    at_col = np.take_along_axis(cols, first, axis=1) * len(index)
    out = np.zeros(len(cols), np.int64)
    alive = q[pos < end]
    size = FIRST_ROWS
    n = len(index)
    while len(alive):
        at = pos[alive, None] + np.arange(size)
        hit = at < end[alive, None]
        rows = index.flat_orders[by[alive, None] + np.minimum(at, n - 1)]
        for t in range(cols.shape[1] - 1):
            x = index.flat[at_col[alive, t, None] + rows]
            hit &= ((x >= low[alive, t, None]) & (x <= high[alive, t, None])) != neg[alive, t, None]
        out[alive] += hit.sum(axis=1)
        pos[alive] += size
        alive = alive[(pos[alive] < end[alive]) & (True if cap is None else out[alive] < cap)]
        size = max(FIRST_ROWS, min(2 * size, BLOCK_ELEMENTS // max(len(alive), 1)))
    return out if cap is None else np.minimum(out, cap)


def _unique_new(cols, ops, vals, seen: set, keep):
    """Indices of the predicates in `keep` (in order) not seen before; records them in `seen`."""
    fresh = []
    for q in keep:
        sig = (cols[q].tobytes(), ops[q].tobytes(), vals[q].tobytes())
        if sig not in seen:
            seen.add(sig)
            fresh.append(q)
    return np.array(fresh, np.int64)


def univariate(syn, is_cat, n_queries: int, rng):
    """Anonymeter's univariate queries: per column `== v` for each value v held by one released
    record (NULL included: its code), and for a numeric column `<= min` and `>= max`; shuffled,
    the first n_queries that single out in the release (match exactly one record) kept."""
    cols, ops, vals = [], [], []
    for j in range(syn.shape[1]):
        values, count = np.unique(syn[:, j], return_counts=True)
        if not is_cat[j]:
            cols += [j, j]
            ops += [LE, GE]
            vals += [values[0], values[-1]]
        rare = values[count == 1]
        cols += [j] * len(rare)
        ops += [EQ] * len(rare)
        vals += rare.tolist()
    cols = np.array(cols, np.int64).reshape(-1, 1)
    ops = np.array(ops, np.int8).reshape(-1, 1)
    vals = np.array(vals, np.float64).reshape(-1, 1)
    order = rng.permutation(len(cols))
    cols, ops, vals = cols[order], ops[order], vals[order]
    single = np.flatnonzero(counts(Sorted(syn), cols, ops, vals, cap=2) == 1)
    keep = _unique_new(cols, ops, vals, set(), single)[:n_queries]
    return cols[keep], ops[keep], vals[keep], len(cols)


def _candidates(n: int, p: int, n_cols: int, rng):
    """Batches of (released row, column subset) pairs, each pair at most once, in a uniformly
    random order: what Anonymeter's draws with replacement give once repeats are dropped (the
    first appearances of i.i.d. uniform draws are a uniformly random order of the pairs), without
    spending attempts on repeats, and ending when every pair was drawn."""
    subsets = np.array(list(itertools.combinations(range(p), n_cols)), np.int64).reshape(-1, n_cols)
    space = n * len(subsets)
    if space <= PERMUTED_SPACE:
        order = rng.permutation(space)
        for first in range(0, space, 1000):
            ids = order[first:first + 1000]
            yield ids // len(subsets), subsets[ids % len(subsets)]
        return
    tried: set = set()
    while len(tried) < space:
        ids = [i for i in rng.integers(0, space, 1000).tolist() if not (i in tried or tried.add(i))]
        ids = np.array(ids, np.int64)
        yield ids // len(subsets), subsets[ids % len(subsets)]


def multivariate(syn, is_cat, n_queries: int, n_cols: int, max_attempts: int, rng):
    """Anonymeter's multivariate queries: a released record drawn at random and n_cols of its
    columns drawn without replacement; per column `== value` if categorical, else `>= value`
    if the value exceeds the column's median in the release, `<= value` otherwise (the extreme
    side, to raise the chance of singling out). Kept when it singles out in the release and
    was not kept before, until n_queries are kept, max_attempts distinct (record, columns)
    pairs were tried or all were. Returns (cols, ops, vals, attempts)."""
    n, p = syn.shape
    median = np.median(syn, axis=0)
    seen: set = set()
    got = [np.zeros((0, n_cols), np.int64), np.zeros((0, n_cols), np.int8), np.zeros((0, n_cols))]
    scan = Sorted(syn)
    attempts = 0
    for rows, cols in _candidates(n, p, n_cols, rng):
        if len(got[0]) >= n_queries or attempts >= max_attempts:
            break
        rows, cols = rows[:max_attempts - attempts], cols[:max_attempts - attempts]
        vals = syn[rows[:, None], cols]
        ops = np.where(is_cat[cols], EQ, np.where(vals > median[cols], GE, LE)).astype(np.int8)
        # a predicate tried before (from another record with the same values) is not counted
        # again: it was kept then, or does not single out; either way it is not kept now
        fresh = _unique_new(cols, ops, vals, seen, range(len(cols)))
        single = fresh[counts(scan, cols[fresh], ops[fresh], vals[fresh], cap=2) == 1][:n_queries - len(got[0])]
        got = [np.concatenate([g, a[single]]) for g, a in zip(got, (cols, ops, vals))]
        attempts += len(rows)
    return got[0], got[1], got[2], attempts


def random_queries(syn, is_cat, n_queries: int, n_cols: int, rng):
    """Anonymeter's baseline (random-guess) queries: n_cols columns drawn without replacement,
    per column a value drawn from the release's distinct values and an operator drawn from
    ==, != (categorical) or ==, !=, >, <, >=, <= (numeric)."""
    p = syn.shape[1]
    cols = np.sort(np.argsort(rng.random((n_queries, p)), axis=1)[:, :n_cols], axis=1)
    vals = np.empty(cols.shape)
    for j in range(p):
        distinct = np.unique(syn[:, j])
        at = cols == j
        vals[at] = distinct[rng.integers(0, len(distinct), int(at.sum()))]
    ops = np.where(is_cat[cols], rng.integers(0, 2, cols.shape), rng.integers(0, 6, cols.shape)).astype(np.int8)
    return cols, ops, vals


def singling_out_integral(n, w_min: float, w_max: float):
    """Integral over the query weight w in [w_min, w_max] of n w (1 - w)^(n - 1), the chance that
    a query of weight w singles out in n records (Cohen and Nissim 2020; Anonymeter's model)."""
    return ((n * w_min + 1) * (1 - w_min) ** n - (n * w_max + 1) * (1 - w_max) ** n) / (n + 1)


def size_correction(matched, n_control: int, n_original: int) -> float:
    """The factor Anonymeter multiplies the control's success count by when the control (of
    n_control distinct records) and the original (n_original) differ in size: the model
    norm * singling_out_integral(s, 0, w_eff), fitted to the successes at 10 subsample sizes s
    from min(1000, n_control // 2) to n_control, evaluated at n_original over at n_control.
    `matched`: each query's number of matching control records. Anonymeter counts the
    successes on 5 random subsamples per size; here each is its exact expectation, the sum of
    the hypergeometric P(exactly one of a query's matches is in a random subsample of size s),
    so the factor is deterministic. (Anonymeter's lowest size is min(1000, n_control), a
    single size for n_control <= 1000; half the control gives the fit a range.)"""
    matched = np.asarray(matched)
    sizes = np.linspace(max(1, min(1000, n_control // 2)), n_control, 10).astype(int)
    expected = np.array([hypergeom.pmf(1, n_control, matched, s).sum() for s in sizes])
    if not expected.any():
        return 1.0

    def model(x, w_eff, norm):
        return norm * singling_out_integral(x, 0.0, w_eff)

    w0 = 1 / sizes.max()
    p0 = (w0, expected.max() / singling_out_integral(sizes.max(), 0.0, w0))
    try:
        (w_eff, norm), _ = curve_fit(model, sizes.astype(float), expected, p0=p0, bounds=(0, (1, np.inf)))
    except (RuntimeError, ValueError):
        return 1.0
    at_control = model(float(n_control), w_eff, norm)
    return float(model(float(n_original), w_eff, norm) / at_control) if at_control > 0 else 1.0
