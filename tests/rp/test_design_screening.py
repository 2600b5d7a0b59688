"""The block-design search's speed-ups (rwn_sql/rp/core/privacy.py) change no answer:

- _sum_by_pair (design_configurations' grouping of (s, v) pairs) equals np.unique +
  np.bincount, in the windowed branch and in the np.unique fallback;
- design_tails_at (scipy's hypergeometric sf/cdf at a few counts, used to screen designs)
  agrees with block_tails_every_count at those counts to 1e-9, far inside SCREEN_SLACK;
- trials_for_sizes with hints (designs screened at the counts where earlier ones failed)
  equals the search without hints (_design_passes called with hints=None).

The last is checked on a trimmed grid to keep the file fast (~15 s on 2 cores). The full
grid, p in {0.3, 0.5, 0.7} x m in {2, 5, 15} x (eps, delta) in {(0.5, 0.1), (0.3, 0.05),
(0.2, 0.3)} x sizes 1..200, 500, 1000, takes ~9 minutes (the p = 0.3, eps = 0.3 cases
have up to 88 blocks at n <= 200) and was run once with no difference. Here: every
(p, m, eps, delta) of that grid, with sizes 1..200, 500, 1000 for p = 0.7 and for p = 0.5
with (eps, delta) != (0.3, 0.05); sizes 1..50 for p = 0.5 at (0.3, 0.05); sizes 1..50 for
p = 0.3 (plus 500, 1000 where (eps, delta) != (0.3, 0.05)).
"""
import itertools

import numpy as np
import pytest

from rwn_sql.rp.core import privacy

pytestmark = pytest.mark.scan


def _reference_sum_by_pair(s, v, w):
    base = int(v.max()) + 1
    key, inverse = np.unique(s * base + v, return_inverse=True)
    return key // base, key % base, np.bincount(inverse.ravel(), weights=w)


def _windowed(s, v):
    cells = (int(s.max()) - int(s.min()) + 1) * (int(v.max()) - int(v.min()) + 1)
    return cells <= max(4 * len(s), 1 << 16)


@pytest.mark.parametrize("case", range(40))
def test_sum_by_pair_matches_unique_and_bincount(case):
    rng = np.random.default_rng(case)
    size = int(rng.integers(1, 3000))
    if case % 2:        # a wide window: the np.unique fallback
        s = rng.integers(0, 10 ** 6, size) + int(rng.integers(0, 1000))
        v = rng.integers(0, 10 ** 4, size)
    else:               # a small window with many repeated pairs, away from 0
        s = rng.integers(0, int(rng.integers(1, 60)), size) + int(rng.integers(0, 500))
        v = rng.integers(0, int(rng.integers(1, 60)), size) + int(rng.integers(0, 500))
    assert _windowed(s, v) == (case % 2 == 0)
    w = rng.random(size) * (rng.random(size) < 0.9)          # some zero weights
    got = privacy._sum_by_pair(s, v, w)
    want = _reference_sum_by_pair(s, v, w)
    for g, x in zip(got, want):
        assert np.array_equal(g, x)


@pytest.mark.parametrize("n,t,p,m", [(9, 4, 0.5, 5), (13, 13, 0.7, 2), (40, 12, 0.3, 15)])
def test_sum_by_pair_on_design_pairs(n, t, p, m):
    """On the pairs design_configurations groups (both branches forced)."""
    b = (1 - p) / m
    q, r = divmod(n, t)
    i1, j1, p1 = privacy._trinomial(r, p, b, privacy._DROP_MASS)
    i0, j0, p0 = privacy._trinomial(t - r, p, b, privacy._DROP_MASS)
    s = ((q + 1) * i1[:, None] + q * i0[None, :]).ravel()
    v = ((q + 1) * j1[:, None] + q * j0[None, :]).ravel()
    w = np.outer(p1, p0).ravel()
    want = _reference_sum_by_pair(s, v, w)
    for g, x in zip(privacy._sum_by_pair(s, v, w), want):
        assert np.array_equal(g, x)
    far = s + 10 ** 7 * (np.arange(len(s)) == 0)              # one outlier: the fallback branch
    assert not _windowed(far, v)
    for g, x in zip(privacy._sum_by_pair(far, v, w), _reference_sum_by_pair(far, v, w)):
        assert np.array_equal(g, x)


@pytest.mark.parametrize("p,m,eps", list(itertools.product([0.3, 0.5, 0.7], [2, 5, 15], [0.2, 0.5])))
def test_design_tails_at_matches_every_count(p, m, eps):
    pp = privacy.PrivacyParams(p=p, m=m, eps=eps, delta=0.1, test="exact")
    for n, t in [(2, 1), (7, 3), (20, 6), (45, 44), (61, 9), (120, 17)]:
        upper, lower = privacy.block_tails_every_count(n, t, p, m, eps)
        counts = list(range(1, n + 1))
        want = np.minimum(upper, lower)[1:]
        got = privacy.design_tails_at(n, t, pp, counts)
        assert np.abs(got - want).max() <= 1e-9, (n, t, float(np.abs(got - want).max()))


def _grid():
    full = list(range(1, 201)) + [500, 1000]
    short = list(range(1, 51))
    for p, m, (eps, delta) in itertools.product([0.3, 0.5, 0.7], [2, 5, 15], [(0.5, 0.1), (0.3, 0.05), (0.2, 0.3)]):
        hard = (eps, delta) == (0.3, 0.05)
        if p == 0.7 or (p == 0.5 and not hard):
            sizes = full
        elif p == 0.5:
            sizes = short
        else:
            sizes = short if hard else short + [500, 1000]
        yield p, m, eps, delta, sizes


def test_hints_change_no_answer(monkeypatch):
    """Over the grid: the search without hints first (it certifies in full every design the
    hinted search certifies, so that search reuses them from the cache), then with hints;
    the answers are the same and screening did reject designs (the check is not vacuous)."""
    hinted = privacy._design_passes
    screened = []
    tails_at = privacy.design_tails_at

    def counting_tails_at(n, t, pp, counts):
        out = tails_at(n, t, pp, counts)
        if out.min() < pp.delta + privacy.cert_margin(n) - privacy.SCREEN_SLACK:
            screened.append((n, t))
        return out

    monkeypatch.setattr(privacy, "design_tails_at", counting_tails_at)
    monkeypatch.setattr(privacy, "_SCREEN_COST", 0)     # screen every design (by default only costly ones)
    differences = []
    for p, m, eps, delta, sizes in _grid():
        pp = privacy.PrivacyParams(p=p, m=m, eps=eps, delta=delta, test="exact")
        monkeypatch.setattr(privacy, "_design_passes", lambda n, t, pp, hints=None: hinted(n, t, pp))
        without = privacy.trials_for_sizes(sizes, pp)
        monkeypatch.setattr(privacy, "_design_passes", hinted)
        with_hints = privacy.trials_for_sizes(sizes, pp)
        differences += [((p, m, eps, delta, n), with_hints[n], without[n])
                        for n in sizes if with_hints[n] != without[n]]
    assert not differences
    assert len(screened) > 50
