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
FLAGS_AFTER = 1024              # draws of a column subset before its singles_table is computed
SAMPLE_DOMINATORS = 4           # records per group tested first as dominators (singles_table)


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
    if cols.shape[1] == 1:              # one term: its slice is what it matches
        return (hi - lo)[:, 0] if cap is None else np.minimum((hi - lo)[:, 0], cap)
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


def univariate(syn, is_cat, n_queries: int, rng, index: Sorted | None = None):
    """Anonymeter's univariate queries: per column `== v` for each value v held by one released
    record (NULL included: its code), and for a numeric column `<= min` and `>= max`; shuffled,
    the first n_queries that single out in the release (match exactly one record) kept.
    `index`: Sorted(syn), if made already."""
    index = Sorted(syn) if index is None else index
    cols, ops, vals = [], [], []
    for j in range(syn.shape[1]):
        v = index.values[j]
        first = np.flatnonzero(np.r_[True, v[1:] != v[:-1]])        # the distinct values, ascending
        values, count = v[first], np.diff(np.append(first, len(v)))
        rare = values[count == 1]
        if not is_cat[j]:
            cols.append(np.full(2, j))
            ops.append(np.array([LE, GE]))
            vals.append(values[[0, -1]])
        cols.append(np.full(len(rare), j))
        ops.append(np.full(len(rare), EQ))
        vals.append(rare)
    cols = np.concatenate(cols).astype(np.int64).reshape(-1, 1)
    ops = np.concatenate(ops).astype(np.int8).reshape(-1, 1)
    vals = np.concatenate(vals).astype(np.float64).reshape(-1, 1)
    order = rng.permutation(len(cols))
    cols, ops, vals = cols[order], ops[order], vals[order]
    # (column, operator, value) triples are distinct: Anonymeter's dropping of repeats drops none
    keep = np.flatnonzero(counts(index, cols, ops, vals, cap=2) == 1)[:n_queries]
    return cols[keep], ops[keep], vals[keep], len(cols)


def _candidates(space: int, rng):
    """Batches of pair ids (released row * subsets + subset), each pair at most once, in a
    uniformly random order: what Anonymeter's draws with replacement give once repeats are
    dropped (the first appearances of i.i.d. uniform draws are a uniformly random order of the
    pairs), without spending attempts on repeats, and ending when every pair was drawn."""
    if space <= PERMUTED_SPACE:
        order = rng.permutation(space)
        for first in range(0, space, 1000):
            yield order[first:first + 1000]
        return
    tried: set = set()
    while len(tried) < space:
        ids = [i for i in rng.integers(0, space, 1000).tolist() if not (i in tried or tried.add(i))]
        yield np.array(ids, np.int64)


def _predicates(syn, is_cat, median, rows, cols):
    """(ops, vals) of the multivariate predicates of released `rows` on columns `cols` (Q, m)."""
    vals = syn[rows[:, None], cols]
    ops = np.where(is_cat[cols], EQ, np.where(vals > median[cols], GE, LE)).astype(np.int8)
    return ops, vals


def multivariate(syn, is_cat, n_queries: int, n_cols: int, max_attempts: int, rng, index: Sorted | None = None):
    """Anonymeter's multivariate queries: a released record drawn at random and n_cols of its
    columns drawn without replacement; per column `== value` if categorical, else `>= value`
    if the value exceeds the column's median in the release, `<= value` otherwise (the extreme
    side, to raise the chance of singling out). Kept when it singles out in the release, until
    n_queries are kept, max_attempts distinct (record, columns) pairs were tried or all were.
    (Anonymeter also drops a predicate kept before: one that singles out comes from one pair
    only, since another record with the same values would match it too.) Whether a pair
    singles out: counts() on the release for its first FLAGS_AFTER draws of a column subset,
    then a lookup in the subset's table of all records (singles_table), computed once.
    `index`: Sorted(syn), if made already. Returns (cols, ops, vals, attempts)."""
    n, p = syn.shape
    median = np.median(syn, axis=0)
    subsets = np.array(list(itertools.combinations(range(p), n_cols)), np.int64).reshape(-1, n_cols)
    n_sub = len(subsets)
    tables, built = np.zeros((n_sub, n), bool), np.zeros(n_sub, bool)      # pages touched when built
    drawn = np.zeros(n_sub, np.int64)
    supported = (~is_cat[subsets]).sum(axis=1) <= 3
    ranks = None
    scan, found, n_found, attempts = index, [], 0, 0
    for ids in _candidates(n * n_sub, rng):
        if n_found >= n_queries or attempts >= max_attempts:
            break
        ids = ids[:max_attempts - attempts]
        sub = ids % n_sub
        drawn += np.bincount(sub, minlength=n_sub)
        for s in np.flatnonzero(~built & supported & (drawn >= FLAGS_AFTER)):
            ranks = _oriented_ranks(syn, is_cat, median) if ranks is None else ranks
            tables[s], built[s] = singles_table(syn, is_cat, subsets[s], median, ranks), True
        on_table = built[sub]
        single = np.zeros(len(ids), bool)
        single[on_table] = tables[sub[on_table], ids[on_table] // n_sub]
        rest = np.flatnonzero(~on_table)
        if len(rest):
            scan = Sorted(syn) if scan is None else scan
            cols = subsets[sub[rest]]
            single[rest] = counts(scan, cols, *_predicates(syn, is_cat, median, ids[rest] // n_sub, cols), cap=2) == 1
        hit = ids[single][:n_queries - n_found]
        found.append(hit)
        n_found += len(hit)
        attempts += len(ids)
    ids = np.concatenate(found) if found else np.zeros(0, np.int64)
    cols = subsets[ids % n_sub]
    return (cols, *_predicates(syn, is_cat, median, ids // n_sub, cols), attempts)


def _oriented_ranks(syn, is_cat, median):
    """(n, p) int64: per numeric column the rank of each value among the column's distinct
    values, counted from the top above the median and from the bottom at or below it."""
    ranks = np.zeros(syn.shape, np.int64)
    for j in np.flatnonzero(~is_cat):
        values, rank = np.unique(syn[:, j], return_inverse=True)
        rank = rank.reshape(-1)
        ranks[:, j] = np.where(syn[:, j] > median[j], rank, len(values) - 1 - rank)
    return ranks


def singles_table(syn, is_cat, subset, median, ranks):
    """bool (n,): whether each released record's multivariate predicate on the columns `subset`
    singles out in the release (matches that record only), for at most 3 numeric columns in it.
    The records a predicate matches are those of its record's group (the same categories, the
    same side of each numeric column's median) whose oriented ranks (_oriented_ranks) are each
    at least the record's: it singles out unless another record weakly dominates it. In the
    group's order by decreasing oriented ranks (lexicographic), a record dominating another
    comes first or is equal to it (`dup`), so with the first numeric column settled by the
    order, the second and the third remain (_dominated). Exactly what counts() says of each
    record's predicate, in O(n log^2 n) for the subset rather than O(n) per predicate."""
    n = len(syn)
    nums = [j for j in subset if not is_cat[j]]
    above = [syn[:, j] > median[j] for j in nums]
    ranks = [ranks[:, j] for j in nums]
    groups = [syn[:, j] for j in subset if is_cat[j]] + above
    order = np.lexsort([-r for r in reversed(ranks)] + list(reversed(groups)))
    new_group = np.ones(n, bool)
    if groups:
        g = np.column_stack([k[order] for k in groups])
        new_group[1:] = (g[1:] != g[:-1]).any(axis=1)
    r = np.column_stack([k[order] for k in ranks]) if ranks else np.zeros((n, 0), np.int64)
    same = ~new_group[1:] & (r[1:] == r[:-1]).all(axis=1)        # equal to the record before it
    dup = np.zeros(n, bool)
    dup[1:] |= same
    dup[:-1] |= same
    gid = np.cumsum(new_group) - 1
    dominated = ~new_group if len(ranks) <= 1 else _dominated(gid, r)
    out = np.empty(n, bool)
    out[order] = ~dominated & ~dup
    return out


def _prefix_max_reaches(segment, y, include):
    """Whether, before each position (in the same segment; segments ascending), a position in
    `include` has y at least its y (y >= 0)."""
    scale = int(y.max(initial=0)) + 2
    enc = segment * scale + np.where(include, y + 1, 0)
    acc = np.maximum.accumulate(enc)
    before = np.empty_like(acc)
    before[0], before[1:] = -1, acc[:-1]
    return before >= segment * scale + y + 1


def _dominated(gid, r):
    """Whether an earlier record of the same group (gid ascending; earlier: r[:, 0] at least)
    has r[:, 1:] at least its own. Two columns: a running maximum. Three: records dominated by
    one of their group's SAMPLE_DOMINATORS records of largest rank sum are set aside (what they
    dominate, those records dominate too), the rest by divide and conquer on the position: at
    each level each block's first half against its second half, ordered by the second column."""
    if r.shape[1] == 2:
        return _prefix_max_reaches(gid, r[:, 1], np.ones(len(gid), bool))
    n = len(gid)
    total = r.sum(axis=1)
    by_total = np.lexsort((-total, gid))
    start = np.searchsorted(gid, np.arange(gid[-1] + 1))
    place = np.arange(n) - start[gid[by_total]]
    sample = np.full((gid[-1] + 1, SAMPLE_DOMINATORS), -1, np.int64)
    top = place < SAMPLE_DOMINATORS
    sample[gid[by_total[top]], place[top]] = by_total[top]
    dominated = np.zeros(n, bool)
    for k in range(SAMPLE_DOMINATORS):
        t = sample[gid, k]
        dominated |= (t >= 0) & (t != np.arange(n)) & (r[t] >= r).all(axis=1)
    rest = np.flatnonzero(~dominated)
    g, y, z = gid[rest], r[rest, 1], r[rest, 2]
    pos, top_y = np.arange(len(rest)), int(y.max(initial=0))
    found = np.zeros(len(rest), bool)
    level = 0
    while (1 << level) < len(rest):
        block = pos >> (level + 1)
        right = ((pos >> level) & 1).astype(bool)
        change = np.ones(len(rest), bool)
        change[1:] = (g[1:] != g[:-1]) | (block[1:] != block[:-1])
        segment = np.cumsum(change)
        by_y = np.argsort((segment * (top_y + 1) + (top_y - y)) * 2 + right)   # y descending, left first
        reach = _prefix_max_reaches(segment[by_y], z[by_y], ~right[by_y])
        found[by_y] |= reach & right[by_y]
        level += 1
    dominated[rest] = found
    return dominated


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
    distinct, back = np.unique(np.asarray(matched), return_inverse=True)    # few distinct counts
    sizes = np.linspace(max(1, min(1000, n_control // 2)), n_control, 10).astype(int)
    expected = np.array([hypergeom.pmf(1, n_control, distinct, s)[back.reshape(-1)].sum() for s in sizes])
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
