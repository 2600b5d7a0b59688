"""The disclosure-risk measures of an evaluation (rwn_sql.evaluation.evaluate): how closely a
release's records lead back to the original's. Numeric columns are min-max scaled with the
ORIGINAL minimum and maximum; a categorical column adds 1 to the squared distance when its
values differ, as RWN's default weight w = 1. Each measure's exact definition:

* ``dcr_mean``: mean over ORIGINAL records of the Euclidean distance to the closest RELEASED
  record (any record, its own release included).
* ``linkage_rate``: share of RELEASED records whose nearest ORIGINAL record is their own source
  (row i of the original for released row i). Tie rule: a released record counts as linked when
  its source is AMONG the nearest originals (distance equal to the minimum), i.e. an attacker
  who guesses among tied candidates is credited with the right one: an upper bound on the
  success of nearest-neighbour linkage. ``linkage_rate_expected`` instead credits a linked
  record with 1 / (number of originals at the minimum distance): the expected rate of an
  attacker who breaks ties at random (equal to linkage_rate when there are no ties).
* ``sdid``: share of records i whose original values ALL lie within
  [released_ic - k * sd_c, released_ic + k * sd_c] for every numeric column c, with sd_c the
  ORIGINAL column's sample standard deviation (ddof=1) and k = `sdid_k` (default 1), following
  sdcMicro's ``dRisk`` (method SDID of Mateo-Sanz, Sebe and Domingo-Ferrer, PSD 2004).
  sdcMicro's own ``dRiskWORK`` takes the sd from the PERTURBED data (default k = 0.05), and
  its counting rule changed: up to sdcMicro 5.5.1 a record counted when AT MOST ONE of its
  columns lay outside its interval (``%in% 0:1``), reported with the same k as
  ``sdid_sdcmicro``; since 5.6.0 (commit c2022f6, 2020-09-30, "wrong calculation in numrisk
  fixed"; unchanged through 5.7.6 and today's code) it counts when ALL lie inside:
* ``sdid_rwn_paper``: the RWN paper's SDID, sdcMicro 5.7.6's ``dRisk(obj = original, xm =
  release, k = sdid_k)`` (the paper: k = 1): share of records i whose original values x_ic all
  satisfy NOT (x_ic < r_ic - k sd_c OR x_ic > r_ic + k sd_c) for every numeric column c, with
  sd_c the RELEASED column's sample standard deviation (ddof = 1) and r_ic the released value.
* ``rmdid``: the RWN paper's robust-Mahalanobis interval risk, sdcMicro 5.7.6's
  ``dRiskRMD(obj = original, xm = release)$risk1`` at its defaults (k = 0.01) over the numeric
  columns; defined, with the robust covariance it needs (robustbase's ``covMcd``), in
  rwn_sql.evaluation.paper_risk. None without numeric columns or when that covariance is
  singular (or n <= p + 1).
* ``dcr_mean_raw``: the RWN paper's DCR, its ``calc_DCR(original, release, dist_metric = "L2",
  foreach_data = "orig", uselog = FALSE)``: mean over ORIGINAL records of the Euclidean
  distance in the columns' RAW units (no scaling) to the closest RELEASED record. None when
  there is a categorical column (raw units give a mismatch no natural cost; the paper's data
  are numeric) or no numeric column.
* ``unique_survival``: among original records unique on the chosen columns (their exact
  combination of values occurs once in the original), the share whose exact combination
  appears in at least one released record. None when the original has no unique records;
  ``unique_records`` is their number. Numeric values are compared as DOUBLE (integers beyond
  2^53 lose precision), categorical ones as text.

Cost: the two nearest-neighbour searches (dcr, linkage) run over the distinct records
(duplicates searched once, counted with their multiplicity) with scipy's cKDTree on the numeric
columns, searched within one combination of categorical values at a time (within one, every
distance has the same mismatch count): one tree per combination when there are at most 64,
else one tree in which the combinations lie apart along an extra coordinate. Trees only
propose candidates: the distances that decide a minimum are recomputed exactly, column by
column, and every record within a 1e-9 relative allowance of the minimum is rechecked, so zero
distances and ties are exact (a tie is exact floating-point equality of distances computed in
the same order). Records whose nearest neighbour is a mismatch away are searched in the
combinations 1, 2, ... mismatches away while the best distance so far still reaches them (a
blocked brute force takes those records instead when that would be cheaper); searches of at
most SMALL_SEARCH pairs, or against at most SMALL_REFERENCE records, are a blocked brute force
(these thresholds and the block sizes are fields of rwn_sql.limits.Limits).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from .. import limits
from . import paper_risk

__all__ = ["Risk"]

MISMATCH_COST = 1.0                # squared distance added by a categorical mismatch (RWN's w = 1)
TREE_SLACK = 1e-9                  # relative allowance for the tree's rounding (actual: ~1e-15)
TREE_FLOOR = 1e-300                # absolute allowance, for squared distances that underflow
TREE_BATCH = 128                   # queries per bounded second-neighbour search (similar radii)


@dataclass(frozen=True)
class Risk:
    dcr_mean: float
    linkage_rate: float                    # ties count as linked
    linkage_rate_expected: float           # a random pick among tied nearest: 1 / (number tied)
    sdid: float | None                     # None without numeric columns
    sdid_sdcmicro: float | None            # sdcMicro <= 5.5.1's rule: at most one column outside
    unique_survival: float | None          # None when no original record is unique
    unique_records: int
    sdid_rwn_paper: float | None = None    # sdcMicro 5.6.0 .. 5.7.6 (.. today) dRisk: the paper's SDID
    rmdid: float | None = None             # sdcMicro dRiskRMD(...)$risk1: the paper's RMDID
    dcr_mean_raw: float | None = None      # the paper's calc_DCR: raw units, None with categories


# ----------------------------------------------------------------------------- measures

def _sqdist(a_num, a_cat, b_num, b_cat):
    """Row-wise exact squared distances (same operations, same order, everywhere)."""
    d = np.zeros(len(a_num))
    for j in range(a_num.shape[1]):
        diff = a_num[:, j] - b_num[:, j]
        d = d + diff * diff
    if a_cat.shape[1]:
        d = d + MISMATCH_COST * np.sum(a_cat != b_cat, axis=1)
    return d


def _row_ids(num, cat):
    """(ids, first): ids[i] numbers row i's distinct value combination, `first` holds one row
    index per id. Identical records have identical distances to everything, so the searches
    below handle each combination once and weigh it by its count."""
    rows = np.ascontiguousarray(np.column_stack([num, cat.astype(np.float64)]))
    if rows.shape[1] == 0:
        return np.zeros(len(rows), np.int64), np.zeros(min(len(rows), 1), np.int64)
    # bytes compared instead of np.unique(axis=0) (which sorts row by row): values are never NaN, and
    # -0.0 became 0.0 when read, so equal bytes <=> equal values
    keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).reshape(-1)
    _, first, ids = np.unique(keys, return_index=True, return_inverse=True)
    return ids.reshape(-1), first


def _distinct(ids, rows):
    """The distinct combinations among `rows` (indices into ids): (local ids of those rows,
    one row index per combination, its count)."""
    _, first, local, counts = np.unique(ids[rows], return_index=True, return_inverse=True, return_counts=True)
    return local.reshape(-1), rows[first], counts


def _numeric_points(num):
    """The points of a k-d tree over the numeric columns (one zero column when there are none)."""
    return np.ascontiguousarray(num) if num.shape[1] else np.zeros((len(num), 1))


def _augmented(q_num, q_cat, r_num, r_cat):
    """The blocked brute force's operands (see _blocked_nearest): (q_aug, r_aug, direct, slack)
    with q_aug . r_aug^T = |q - r|^2 - |q|^2 + the mismatches of the one-hot columns, `direct`
    the categorical columns with more than ONEHOT_LEVELS levels (compared directly), and
    `slack` per query the allowance within which a candidate is recomputed exactly."""
    nq = len(q_num)
    q_sq = np.sum(q_num * q_num, axis=1)
    r_sq = np.sum(r_num * r_num, axis=1)
    slack = TREE_SLACK * (1.0 + q_sq + float(r_sq.max(initial=0.0)) + q_cat.shape[1])
    onehot_levels = limits.current().ONEHOT_LEVELS
    q_parts, r_parts, direct = [-2.0 * q_num, np.ones((nq, 1))], [r_num, r_sq[:, None].copy()], []
    for j in range(q_cat.shape[1]):
        levels = int(max(q_cat[:, j].max(initial=0), r_cat[:, j].max(initial=0))) + 1
        if levels <= onehot_levels:
            q_parts.append(-(q_cat[:, j, None] == np.arange(levels)).astype(np.float64))
            r_parts.append((r_cat[:, j, None] == np.arange(levels)).astype(np.float64))
            r_parts[1] += 1.0
        else:
            direct.append(j)
    return np.hstack(q_parts), np.hstack(r_parts), direct, slack


def _where(mask):
    """np.nonzero of a 3-d mask with few True values, through its flat positions (a third of
    the time on small blocks)."""
    at = np.flatnonzero(mask)
    _, b, c = mask.shape
    return at // (b * c), at // c % b, at % c


def _searches_both_ways(o_num, o_cat, o_counts, r_num, r_cat):
    """Both risk searches of R small releases at once (tune's sweeps of tiny data), from one
    matrix of approximate distances per release (_blocked_nearest's product): for distinct
    original rows o_num, o_cat (o_counts: how many records each stands for) and releases
    r_num[r], r_cat[r] (R x n x p, R x n x c), returns (dcr2, nearest, ties): dcr2 (R, no)
    the squared distance of every original row to its nearest row of release r; nearest and
    ties (R, n) every release row's squared distance to its nearest original rows and how
    many records share it. Every candidate within the allowance (one, the largest of either
    direction's) is recomputed by _sqdist, which is symmetric to the last bit, so the answers
    are a brute force's."""
    reps, n = r_num.shape[:2]
    no = len(o_num)
    flat_num, flat_cat = r_num.reshape(reps * n, r_num.shape[2]), r_cat.reshape(reps * n, r_cat.shape[2])
    o_aug, r_aug, direct, slack = _augmented(o_num, o_cat, flat_num, flat_cat)
    o_sq = np.sum(o_num * o_num, axis=1)
    slack = float(slack.max(initial=0.0))                 # covers every row's and column's allowance
    r_aug_t = np.ascontiguousarray(r_aug.reshape(reps, n, r_aug.shape[1]).transpose(0, 2, 1))
    per = max(1, limits.current().CACHED_ELEMENTS // max(no * n, 1))      # releases per block (that stay in cache)
    to_release, to_original = [], []           # candidate pairs (release r, original row, release row)
    for s in range(0, reps, per):
        e = min(reps, s + per)
        approx = np.matmul(o_aug, r_aug_t[s:e])                 # (e - s, no, n): |o - x|^2 - |o|^2
        approx += o_sq[:, None]                                 # |o - x|^2 (+ mismatches)
        for j in direct:
            approx += o_cat[None, :, j, None] != r_cat[s:e, None, :, j]
        rel, rows, cols = _where(approx <= (approx.min(axis=2) + slack)[:, :, None])   # dcr: by original row
        to_release.append((s + rel, rows, cols))
        rel, rows, cols = _where(approx <= (approx.min(axis=1) + slack)[:, None, :])   # linkage: by release row
        to_original.append((s + rel, rows, cols))
    rel, rows, cols = (np.concatenate(v) for v in zip(*to_release))       # in (rel, rows) order
    exact = _sqdist(o_num[rows], o_cat[rows], flat_num[rel * n + cols], flat_cat[rel * n + cols])
    dcr2 = np.minimum.reduceat(exact, np.searchsorted(rel * no + rows, np.arange(reps * no))).reshape(reps, no)
    rel, rows, cols = (np.concatenate(v) for v in zip(*to_original))
    at = rel * n + cols
    exact = _sqdist(flat_num[at], flat_cat[at], o_num[rows], o_cat[rows])
    nearest = np.full(reps * n, np.inf)
    np.minimum.at(nearest, at, exact)
    ties = np.bincount(at, weights=np.where(exact == nearest[at], o_counts[rows], 0), minlength=reps * n)
    return dcr2, nearest.reshape(reps, n), ties.astype(np.int64).reshape(reps, n)


def _blocked_nearest(q_num, q_cat, r_num, r_cat, r_counts):
    """_nearest's answer by a blocked brute force (the method before the k-d trees), for the
    queries whose nearest record is a mismatch away when there are too many category
    combinations to visit one by one: O(nq nr (p + levels)) time, O(CHUNK_ELEMENTS + (nq + nr) (p + levels)) memory. Candidate minima
    come from one matrix product, [-2q, 1, -onehot(q)] . [r, |r|^2 + m, onehot(r)] = |q - r|^2
    - |q|^2 + mismatches (as [a != b] = 1 - onehot(a).onehot(b)), and every candidate within a
    1e-9 relative allowance is recomputed exactly by _sqdist."""
    nq, nr = len(q_num), len(r_num)
    tuned = limits.current()
    chunk = max(1, min(tuned.CHUNK_ELEMENTS // max(nr, 1), max(256, tuned.CACHED_ELEMENTS // max(nr, 1))))
    q_aug, r_aug, direct, slack = _augmented(q_num, q_cat, r_num, r_cat)
    r_aug_t = np.ascontiguousarray(r_aug.T)
    best, ties = np.empty(nq), np.empty(nq, np.int64)
    for s in range(0, nq, chunk):
        e = min(nq, s + chunk)
        approx = q_aug[s:e] @ r_aug_t
        for j in direct:
            approx += q_cat[s:e, j, None] != r_cat[None, :, j]
        limit = approx.min(axis=1) + slack[s:e]
        rows, cols = np.nonzero(approx <= limit[:, None])
        exact = _sqdist(q_num[s + rows], q_cat[s + rows], r_num[cols], r_cat[cols])
        starts = np.searchsorted(rows, np.arange(e - s))
        low = np.minimum.reduceat(exact, starts)
        best[s:e] = low
        ties[s:e] = np.add.reduceat(np.where(exact == low[rows], r_counts[cols], 0), starts)
    return best, ties


def _workers(queries: int) -> int:
    """cKDTree's threads pay off for large batches only (starting them costs what a small batch
    would save)."""
    return -1 if queries >= 2000 else 1


def _nearest(q_num, q_cat, r_num, r_cat, r_counts):
    """For distinct query rows against distinct reference rows (r_counts: how many records
    each stands for): the exact nearest squared distance and how many records share it.

    k-d trees (scipy's cKDTree) over the NUMERIC columns propose candidates: one over all
    reference rows, and _GroupTrees, searched within one combination of categorical values
    (a "group", in which the categorical part of every distance is the same number of
    mismatches m) per query. Every distance that decides the answer is computed exactly by
    _sqdist, so the minimum and the ties are a brute force's (a tie is exact floating-point
    equality). Why exact: an upper bound U of the minimum comes from the exact distances of
    two candidates (the nearest in numeric space overall and within the query's own group).
    A row of a group with m mismatches is within U only if its numeric squared distance is
    within U - m, so every such row lies in that group's ball of squared radius (U - m) (1 +
    TREE_SLACK) + U TREE_SLACK (rounding of the trees and of the sums is ~1e-15 relative);
    all rows of those balls are checked exactly (a ball search where a second row of the
    group may lie inside, else its nearest row). When U < MISMATCH_COST only the own group
    (m = 0) can hold such rows; otherwise _wide_search visits the groups within reach."""
    nq, nr = len(q_num), len(r_num)
    tuned = limits.current()
    # tiny data (bodyfat: 241 x 241): blocks beat the trees
    if nq * nr <= tuned.SMALL_SEARCH or nr <= tuned.SMALL_REFERENCE:
        return _blocked_nearest(q_num, q_cat, r_num, r_cat, r_counts)
    comb, _ = category_combinations(np.vstack([q_cat, r_cat]))
    q_comb, r_comb = comb[:nq], comb[nq:]
    q_points, r_points = _numeric_points(q_num), _numeric_points(r_num)
    trees = _GroupTrees(q_points, r_points, r_comb, MISMATCH_COST * q_cat.shape[1])
    if trees.spacing is not None and not math.isfinite(trees.spacing * (comb.max() + 1.0)):
        return _blocked_nearest(q_num, q_cat, r_num, r_cat, r_counts)           # values beyond 1e150
    has_own = np.bincount(r_comb, minlength=comb.max() + 1)[q_comb] > 0
    _, own = trees.query(q_points, q_comb)                                     # nearest of the own group
    own = np.where(has_own, own[:, 0], 0)
    upper = np.where(has_own, _sqdist(q_num, q_cat, r_num[own], r_cat[own]), np.inf)
    # no own group, or its nearest is a mismatch away: the nearest in numeric space overall
    far = np.flatnonzero(~(upper + upper * TREE_SLACK + TREE_FLOOR < MISMATCH_COST))
    if len(far):
        _, cand = cKDTree(r_points).query(q_points[far], k=1, workers=_workers(len(far)))
        upper[far] = np.minimum(upper[far], _sqdist(q_num[far], q_cat[far], r_num[cand], r_cat[cand]))

    pairs_q, pairs_r = [], []

    def collect(qs, groups, radius2):
        """Every row of group groups[i] within squared radius radius2[i] of query qs[i]."""
        found_q, found_r = trees.ball(q_points[qs], groups, np.sqrt(radius2))
        pairs_q.append(qs[found_q])
        pairs_r.append(found_r)

    slack = upper * TREE_SLACK + TREE_FLOOR
    narrow = upper + slack < MISMATCH_COST        # then `own` is a row at distance upper
    # is a second row of the own group as near? (a row of another group lies beyond `spacing`)
    second = np.full(nq, np.inf)
    mine = np.flatnonzero(has_own)
    second[mine] = trees.query(q_points[mine], q_comb[mine], k=2,
                               radius=np.sqrt(upper[mine] * (1.0 + TREE_SLACK) + slack[mine]))[0][:, 1]
    best, ties = upper.copy(), r_counts[own].astype(np.int64)
    crowded = np.flatnonzero(narrow & (second <= np.sqrt(upper + slack)))     # another own row may be as near
    if len(crowded):
        collect(crowded, q_comb[crowded], upper[crowded] + slack[crowded])
    wide = np.flatnonzero(~narrow)
    blocked = wide[:0]
    if len(wide):
        r_groups = np.unique(r_comb)
        order = np.argsort(r_comb, kind="stable")
        r_tuples = r_cat[order[np.searchsorted(r_comb, r_groups, sorter=order)]]      # each group's categories
        blocked = _wide_search(wide, own, second, q_num, q_cat, q_comb, r_num, r_cat, r_groups, r_tuples,
                               q_points, trees, upper, collect, pairs_q, pairs_r)
    if pairs_q:
        rows, cols = np.concatenate(pairs_q), np.concatenate(pairs_r)
        exact = _sqdist(q_num[rows], q_cat[rows], r_num[cols], r_cat[cols])
        checked = np.unique(rows)
        low = np.full(nq, np.inf)
        np.minimum.at(low, rows, exact)
        counted = np.bincount(rows, weights=np.where(exact == low[rows], r_counts[cols], 0), minlength=nq)
        best[checked], ties[checked] = low[checked], counted[checked].astype(np.int64)
    if len(blocked):
        best[blocked], ties[blocked] = _blocked_nearest(q_num[blocked], q_cat[blocked], r_num, r_cat, r_counts)
    return best, ties


class _GroupTrees:
    """k-d trees over the numeric columns of the reference rows, searched within one group
    (combination of categorical values) per query. At most FEW_GROUPS groups: one tree each.
    More: one tree in which each group is moved along an extra coordinate, `spacing` apart,
    so that a search within a radius below the spacing stays in its group: one call for all
    groups instead of a Python loop over thousands (adult-like data), but more CPU than one
    tree per group when the groups are few (12 Gaussian columns with 5 groups), hence FEW_GROUPS."""

    def __init__(self, q_points, r_points, r_comb, most_mismatch):
        self.groups = np.unique(r_comb)
        self.spacing = None
        if len(self.groups) <= limits.current().FEW_GROUPS:
            order = np.argsort(r_comb, kind="stable")
            cuts = np.searchsorted(r_comb[order], np.r_[self.groups, self.groups[-1] + 1])
            self.trees = {int(g): (cKDTree(r_points[order[a:b]]), order[a:b])
                          for g, a, b in zip(self.groups, cuts[:-1], cuts[1:])}
            return
        # every numeric squared distance, and so every search radius, is at most the squared
        # extent of all points plus the mismatches; the groups lie further apart than that
        extent = np.maximum(q_points.max(axis=0), r_points.max(axis=0)) - np.minimum(q_points.min(axis=0),
                                                                                     r_points.min(axis=0))
        with np.errstate(over="ignore"):
            self.spacing = 2.0 * math.sqrt(float(np.sum(extent * extent)) + most_mismatch) + 1.0
        if math.isfinite(self.spacing * (self.groups[-1] + 1.0)):
            self.tree = cKDTree(self._placed(r_points, r_comb))

    def _placed(self, points, groups):
        return np.column_stack([points, groups * self.spacing])

    def _by_group(self, groups):
        """(group, positions of its queries) for every group among `groups` that has rows."""
        order = np.argsort(groups, kind="stable")
        cuts = np.flatnonzero(np.r_[True, groups[order][1:] != groups[order][:-1], True])
        for a, b in zip(cuts[:-1], cuts[1:]):
            g = int(groups[order[a]])
            if g in self.trees:
                yield g, order[a:b]

    def query(self, points, groups, k=1, radius=None):
        """(d, j), each (len(points), k): the k nearest rows of group groups[i] to points[i] (j
        indexes the reference rows), or with `radius` only those within radius[i]; missing
        neighbours have d = inf. A bound is one number per call, so bounded queries go in
        batches of TREE_BATCH similar radii: a bounded search costs little more than k = 1, an
        unbounded second neighbour in 12 dimensions far more."""
        d, j = np.full((len(points), k), np.inf), np.zeros((len(points), k), np.int64)
        if self.spacing is None:
            for g, at in self._by_group(groups):
                tree, members = self.trees[g]
                d[at], found = self._search(tree, points[at], k, None if radius is None else radius[at])
                j[at] = members[np.minimum(found, len(members) - 1)]
        else:
            d[:], j[:] = self._search(self.tree, self._placed(points, groups), k, radius)
        return d, j

    @staticmethod
    def _search(tree, points, k, radius):
        ks = list(range(1, k + 1))              # a list: 2-d results even for k = 1
        if radius is None:
            return tree.query(points, k=ks, workers=_workers(len(points)))
        d, j = np.full((len(points), k), np.inf), np.zeros((len(points), k), np.int64)
        by_radius = np.argsort(radius, kind="stable")
        for batch in np.array_split(by_radius, max(1, len(by_radius) // TREE_BATCH)):
            if len(batch):
                d[batch], j[batch] = tree.query(points[batch], k=ks, workers=_workers(len(batch)),
                                                distance_upper_bound=np.nextafter(radius[batch[-1]], np.inf))
        return d, j

    def ball(self, points, groups, radius):
        """(i, row) for every reference row of group groups[i] within radius[i] of points[i]."""
        parts_i, parts_r = [], []
        if self.spacing is None:
            for g, at in self._by_group(groups):
                tree, members = self.trees[g]
                found = tree.query_ball_point(points[at], radius[at], workers=_workers(len(at)))
                lengths = np.fromiter((len(f) for f in found), np.int64, len(found))
                parts_i.append(np.repeat(at, lengths))
                parts_r.append(members[np.fromiter(itertools.chain.from_iterable(found), np.int64, int(lengths.sum()))])
        else:
            found = self.tree.query_ball_point(self._placed(points, groups), radius, workers=_workers(len(points)))
            lengths = np.fromiter((len(f) for f in found), np.int64, len(found))
            parts_i.append(np.repeat(np.arange(len(points)), lengths))
            parts_r.append(np.fromiter(itertools.chain.from_iterable(found), np.int64, int(lengths.sum())))
        if not parts_i:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(parts_i), np.concatenate(parts_r)


def category_combinations(k):
    """(ids, counts): np.unique(k, axis=0, return_inverse=True, return_counts=True) for
    non-negative integer codes, through one int64 key per row (a mixed-radix number,
    renumbered densely before it could overflow): the same order, one integer sort instead
    of sorting rows."""
    key = np.zeros(len(k), np.int64)
    for j in range(k.shape[1]):
        levels = int(k[:, j].max(initial=0)) + 1
        if int(key.max(initial=0)) + 1 > np.iinfo(np.int64).max // levels:
            _, key = np.unique(key, return_inverse=True)
            key = key.reshape(-1).astype(np.int64)
        key = key * levels + k[:, j]
    _, ids, counts = np.unique(key, return_inverse=True, return_counts=True)
    return ids.reshape(-1), counts


def _wide_search(wide, own, second, q_num, q_cat, q_comb, r_num, r_cat, r_groups, r_tuples, q_points, trees,
                 upper, collect, pairs_q, pairs_r):
    """The candidates of the queries `wide`, whose nearest row may be a mismatch away, appended
    to pairs_q / pairs_r: every reference row within each query's final upper bound. Returns
    the queries left to _blocked_nearest instead (when the (query, group) pairs of a count,
    at GROUP_QUERY_COST each, would cost more than a brute force of the queries in reach).

    Groups are visited by mismatch count m = 0, 1, 2, ...: at count m only the groups exactly
    m mismatches from a query's combination, and only while the query's upper bound U (an
    exact distance) still reaches m. For all those (query, group) pairs at once a k = 2
    search within the query's U - m gives the group's nearest row (its exact distance lowers
    U) and whether a second row might be as near; m = 0, the own group, was searched by
    _nearest. Once U is final, every
    row within it lies in a visited group (U only decreases, so a group out of reach at its
    turn stays out) and is either that nearest row or found by a ball search of the groups
    with a second candidate. Rounding allowance as in _nearest. Updates `upper`."""
    def allowance(u):
        return u * TREE_SLACK + TREE_FLOOR

    wide = wide[np.argsort(q_comb[wide], kind="stable")]
    starts = np.flatnonzero(np.r_[True, q_comb[wide][1:] != q_comb[wide][:-1]])
    sizes = np.diff(np.r_[starts, len(wide)])
    tuple_of = np.repeat(np.arange(len(starts)), sizes)                   # combination of each wide query
    q_tuples = q_cat[wide[starts]]                                        # T x c
    count_type = np.uint8 if q_cat.shape[1] < 256 else np.int64
    tuned = limits.current()
    rows_per_chunk = max(1, tuned.CHUNK_ELEMENTS // len(r_groups))
    mine = np.isin(q_comb[wide], r_groups)                                # m = 0: from _nearest's search
    found = [(wide[mine], q_comb[wide[mine]], own[wide[mine]], second[wide[mine]], np.zeros(mine.sum()))]
    blocked = wide[:0]
    for m in range(1, q_cat.shape[1] + 1):
        cost = MISMATCH_COST * m
        reach = upper[wide] + allowance(upper[wide]) >= cost
        active = np.unique(tuple_of[reach])
        if not len(active):
            break
        at_t, at_g = [], []                      # (combination, group) pairs exactly m mismatches apart
        for s in range(0, len(active), rows_per_chunk):
            chunk = active[s:s + rows_per_chunk]
            mismatches = np.zeros((len(chunk), len(r_groups)), count_type)
            for j in range(q_cat.shape[1]):
                mismatches += q_tuples[chunk, j, None] != r_tuples[None, :, j]
            t, g = np.nonzero(mismatches == m)
            at_t.append(chunk[t])
            at_g.append(r_groups[g])
        at_t, at_g = np.concatenate(at_t), np.concatenate(at_g)
        # every query of each pair's combination still within reach
        lengths = sizes[at_t]
        pos = np.repeat(starts[at_t] - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
        keep = reach[pos]
        qs, gs = wide[pos[keep]], np.repeat(at_g, lengths)[keep]
        if len(qs) * tuned.GROUP_QUERY_COST > reach.sum() * len(r_num) * (q_num.shape[1] + 1 + q_cat.shape[1]):
            blocked = np.concatenate([blocked, wide[reach]])     # cheaper by brute force
            wide, tuple_of = wide[~reach], tuple_of[~reach]
            continue
        radius = np.sqrt(np.maximum(upper[qs] - cost, 0.0) * (1.0 + TREE_SLACK) + allowance(upper[qs]))
        d, j = trees.query(q_points[qs], gs, k=2, radius=radius)
        hit = np.isfinite(d[:, 0])
        qs, gs, rows, d = qs[hit], gs[hit], j[hit, 0], d[hit]
        np.minimum.at(upper, qs, _sqdist(q_num[qs], q_cat[qs], r_num[rows], r_cat[rows]))
        found.append((qs, gs, rows, d[:, 1], np.full(len(qs), cost)))
    qs, gs, rows, second, cost = (np.concatenate(v) for v in zip(*found))
    room = upper[qs] - cost                   # (the blocked queries' answers replace theirs)
    keep = room + allowance(upper[qs]) >= 0
    qs, gs, rows, second, room = qs[keep], gs[keep], rows[keep], second[keep], room[keep]
    radius2 = np.maximum(room, 0.0) * (1.0 + TREE_SLACK) + allowance(upper[qs])
    crowded = second <= np.sqrt(radius2)                  # a second row may be as near: a ball search
    pairs_q.append(qs[~crowded])
    pairs_r.append(rows[~crowded])
    if crowded.any():
        collect(qs[crowded], gs[crowded], radius2[crowded])
    return blocked


def nearest_sqdist(q_num, q_cat, r_num, r_cat, count_ties: bool = False):
    """For every query row, the exact squared distance to its nearest reference row (and, with
    count_ties, how many reference rows share that distance). Numeric columns are compared by
    squared difference, categorical codes (integers) add MISMATCH_COST per mismatch. k-d
    tree searches with an exact recheck (see _nearest)."""
    q_ids, q_first = _row_ids(q_num, q_cat)
    r_ids, r_first = _row_ids(r_num, r_cat)
    r_counts = np.bincount(r_ids, minlength=len(r_first))
    best, ties = _nearest(q_num[q_first], q_cat[q_first], r_num[r_first], r_cat[r_first], r_counts)
    return (best[q_ids], ties[q_ids]) if count_ties else best[q_ids]


def measures(xo, xr, ko, kr, lo, hi, sd, k, has_numeric) -> list[Risk]:
    """The Risk of each release xr[r], kr[r] (R x n x p, R x n x m) against xo, ko."""
    n, reps = len(xo), len(xr)
    so = (xo - lo) / (hi - lo)
    sr = (xr - lo) / (hi - lo)
    # the distinct original records, once: the reference of every release's linkage search
    o_ids, o_rows = _row_ids(xo, ko)
    o_counts = np.bincount(o_ids, minlength=len(o_rows))
    # one numbering of the distinct records of the original and every release (any subset's
    # numbers keep the order of that subset numbered alone): unique survival, distinct queries
    ids, _ = _row_ids(np.vstack([xo, xr.reshape(reps * n, xr.shape[2])]),
                      np.vstack([ko, kr.reshape(reps * n, kr.shape[2])]))
    combinations = int(ids.max()) + 1
    unique = np.bincount(ids[:n], minlength=combinations)[ids[:n]] == 1
    unique_id = np.zeros(combinations, bool)
    unique_id[ids[:n][unique]] = True
    released = ids[n:].reshape(reps, n)
    kept = (np.arange(reps)[:, None] * combinations + released)[unique_id[released]]    # (release, id)
    survival = np.bincount(np.unique(kept) // combinations, minlength=reps)      # unique records kept
    tuned = limits.current()
    if n * n <= tuned.SMALL_SEARCH or n <= tuned.SMALL_REFERENCE:    # tiny data: every release at once, both ways
        dcr2, nearest, ties = _searches_both_ways(so[o_rows], ko[o_rows], o_counts, sr, kr)
        dcr = np.sqrt(dcr2[:, o_ids])
    else:
        queries, dcr = [], np.empty((reps, n))
        for r in range(reps):
            r_local, r_rows, r_counts = _distinct(ids, np.arange(n * (r + 1), n * (r + 2)))
            r_rows = r_rows - n * (r + 1)
            dcr2, _ = _nearest(so[o_rows], ko[o_rows], sr[r][r_rows], kr[r][r_rows], r_counts)
            dcr[r] = np.sqrt(dcr2[o_ids])
            queries.append((r_local, r_rows))
        # every release's distinct records searched against the original's in one search
        near_u, ties_u = _nearest(np.concatenate([sr[r][rows] for r, (_, rows) in enumerate(queries)]),
                                  np.concatenate([kr[r][rows] for r, (_, rows) in enumerate(queries)]),
                                  so[o_rows], ko[o_rows], o_counts)
        local = np.stack([q[0] for q in queries]) + np.cumsum([0] + [len(rows) for _, rows in queries])[:-1, None]
        nearest, ties = near_u[local], ties_u[local]
    intervals = _interval_risks(xo, xr, sd, k, has_numeric, numeric_only=ko.shape[1] == 0)
    own = _sqdist(sr.reshape(reps * n, sr.shape[2]), kr.reshape(reps * n, kr.shape[2]),
                  np.tile(so, (reps, 1)), np.tile(ko, (reps, 1))).reshape(reps, n)
    linked = own <= nearest                  # own source among the nearest (own >= nearest always)
    n_unique = int(unique.sum())
    out = []
    for r in range(reps):
        survived = int(survival[r])
        out.append(Risk(
            dcr_mean=float(dcr[r].mean()),
            linkage_rate=float(np.mean(linked[r])),
            linkage_rate_expected=float(np.mean(np.where(linked[r], 1.0 / ties[r], 0.0))),
            unique_survival=survived / n_unique if n_unique else None,
            unique_records=n_unique,
            **{name: None if values is None else float(values[r]) for name, values in intervals.items()},
        ))
    return out


def _interval_risks(xo, xr, sd, k, has_numeric, numeric_only) -> dict:
    """The measures of the numeric columns alone, each an array over the R releases (None when
    undefined): sdid, sdid_sdcmicro, sdid_rwn_paper, rmdid, dcr_mean_raw (see the module
    docstring; rmdid from rwn_sql.evaluation.paper_risk)."""
    names = ("sdid", "sdid_sdcmicro", "sdid_rwn_paper", "rmdid", "dcr_mean_raw")
    if not has_numeric:
        return dict.fromkeys(names)
    inside = np.abs(xo - xr) <= k * sd
    sd_r = xr.std(axis=1, ddof=1)[:, None, :]
    # sdcMicro's comparisons, as written: x < xm - k sd | x > xm + k sd counts as outside
    outside = np.sum((xo < xr - k * sd_r) | (xo > xr + k * sd_r), axis=2)
    return dict(zip(names, (np.mean(np.all(inside, axis=2), axis=1), np.mean(outside <= 1, axis=1),
                            np.mean(outside == 0, axis=1), paper_risk.rmdid(xo, xr),
                            [d.mean() for d in dcr_raw(xo, xr)] if numeric_only else None)))


def dcr_raw(xo, xr):
    """(R, n): the Euclidean distance in raw units (numeric columns, no scaling) from each
    original record to the closest record of release r (xr: R x n x p), exact (the distances
    that decide a minimum are recomputed column by column, as in _searches_both_ways)."""
    reps, n, p = xr.shape
    no_cat = np.zeros((n, 0), np.int64)
    o_ids, o_rows = _row_ids(xo, no_cat)
    tuned = limits.current()
    if not (n * n <= tuned.SMALL_SEARCH or n <= tuned.SMALL_REFERENCE):
        out = np.empty((reps, n))
        for r in range(reps):
            r_ids, r_rows = _row_ids(xr[r], no_cat)
            counts = np.bincount(r_ids, minlength=len(r_rows))
            best, _ = _nearest(xo[o_rows], no_cat[o_rows], xr[r][r_rows], no_cat[r_rows], counts)
            out[r] = np.sqrt(best[o_ids])
        return out
    o_num, flat = xo[o_rows], xr.reshape(reps * n, p)
    o_aug, r_aug, _, slack = _augmented(o_num, no_cat[o_rows], flat, np.zeros((reps * n, 0), np.int64))
    o_sq, no = np.sum(o_num * o_num, axis=1), len(o_rows)
    slack = float(slack.max(initial=0.0))
    r_aug_t = np.ascontiguousarray(r_aug.reshape(reps, n, r_aug.shape[1]).transpose(0, 2, 1))
    per = max(1, tuned.CACHED_ELEMENTS // max(no * n, 1))
    found = []
    for s in range(0, reps, per):
        approx = np.matmul(o_aug, r_aug_t[s:s + per]) + o_sq[:, None]      # (releases, no, n)
        rel, rows, cols = _where(approx <= (approx.min(axis=2) + slack)[:, :, None])
        found.append((s + rel, rows, cols))
    rel, rows, cols = (np.concatenate(v) for v in zip(*found))            # in (rel, rows) order
    exact = _sqdist(o_num[rows], no_cat[rows], flat[rel * n + cols], no_cat[rows])
    best = np.minimum.reduceat(exact, np.searchsorted(rel * no + rows, np.arange(reps * no))).reshape(reps, no)
    return np.sqrt(best[:, o_ids])
