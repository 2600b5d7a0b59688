"""Uniform perturbation, reconstruction and (eps, delta)-reconstruction-privacy."""
import itertools
import math
from fractions import Fraction

import duckdb
import numpy as np
import pytest

import rwn_sql
from helpers.data import ADULT, load_numpy
from helpers.independent_tails import block_dp_tails
from rwn_sql import RWNError
from rwn_sql.engines import sources
from rwn_sql.rp.core import privacy
from rwn_sql.rp import api as rp
from rwn_sql.randomness import keyed_order

PUBLIC = ["sex", "race", "relationship", "education", "marital_status"]
Z = 4.0        # 4-sigma limits: a correct implementation fails one with probability < 1e-4


# --- the privacy mathematics, against exhaustive enumeration ------------------------------

def enumerate_release(values, t, p, m, blocks_random=True):
    """Exact distribution of the released count of value 0, by enumerating every random
    partition into t blocks (round robin over a random order), coin and replacement."""
    n = len(values)
    dist = {}
    orders = list(itertools.permutations(range(n)))
    for order in orders:
        block = [0] * n
        for pos, rec in enumerate(order):
            block[rec] = pos % t
        for coins in itertools.product([True, False], repeat=t):
            for repl in itertools.product(range(m), repeat=t):
                prob = Fraction(1, len(orders))
                for b in range(t):      # coin and replacement drawn independently per block
                    prob *= (Fraction(p) if coins[b] else 1 - Fraction(p)) / m
                released = [values[i] if coins[block[i]] else repl[block[i]] for i in range(n)]
                o = sum(1 for v in released if v == 0)
                dist[o] = dist.get(o, 0) + prob
    return dist


def tails_from(dist, n, c, p, m, eps):
    f = Fraction(c, n)
    b = (1 - Fraction(p)) / m
    mu = n * (f * Fraction(p) + b)
    theta = Fraction(eps) * f * Fraction(p) / (f * Fraction(p) + b)
    upper = sum(w for o, w in dist.items() if o > (1 + theta) * mu)
    lower = sum(w for o, w in dist.items() if o < (1 - theta) * mu)
    return float(upper), float(lower)


@pytest.mark.parametrize("n,t,c", [(4, 4, 2), (4, 2, 4), (4, 2, 1), (5, 2, 3), (5, 3, 2), (4, 3, 4)])
def test_tail_functions_equal_enumeration(n, t, c):
    p, m, eps = 0.5, 3, 0.5
    values = [0] * c + [1] * (n - c)
    exact = tails_from(enumerate_release(values, t, Fraction(1, 2), m), n, c, p, m, eps)
    if t == n:
        assert privacy.exact_tails(n, c, p, m, eps) == pytest.approx(exact, abs=1e-12)
    if c == n:
        assert privacy.block_tails(n, t, p, m, eps) == pytest.approx(exact, abs=1e-12)
    if c == 1:
        assert privacy.block_tails_single(n, t, p, m, eps) == pytest.approx(exact, abs=1e-12)
    upper, lower = privacy.block_tails_every_count(n, t, p, m, eps)
    assert (upper[c], lower[c]) == pytest.approx(exact, abs=1e-12)


def convolution_tails(n, c, p, m, eps):
    """Reference for exact_tails: the whole distribution of O* = X + Y by convolving the two
    binomial pmfs (scipy), thresholds decided in exact rational arithmetic on the decimal
    parameters as written (so p = 0.2, eps = 1.2 give theta = 1 exactly, as intended)."""
    from scipy.stats import binom
    p, eps = Fraction(str(p)), Fraction(str(eps))
    b = (1 - p) / m
    a = p + b
    dist = np.convolve(binom.pmf(np.arange(c + 1), c, float(a)), binom.pmf(np.arange(n - c + 1), n - c, float(b)))
    f = Fraction(c, n)
    mu = n * (f * p + b)
    theta = eps * f * p / (f * p + b)
    o = np.arange(n + 1)
    above = np.array([Fraction(int(k)) > (1 + theta) * mu for k in o])
    below = np.array([Fraction(int(k)) < (1 - theta) * mu for k in o])
    return dist[above].sum(), dist[below].sum()


@pytest.mark.parametrize("p,m,eps", [(0.5, 15, 0.5), (0.7, 3, 0.9), (0.2, 40, 1.2), (0.9, 2, 1.05)])
def test_exact_tails_many_equal_the_convolution(p, m, eps):
    rng = np.random.default_rng(int(p * 100) + m)
    n = np.concatenate([rng.integers(1, 60, 40), rng.integers(60, 3000, 20), [1, 2, 7, 2500]])
    c = np.concatenate([rng.integers(0, n[:-4] + 1), [0, 2, 7, 1]])
    upper, lower = privacy.exact_tails_many(n, c, p, m, eps)
    for i in range(len(n)):
        ref = convolution_tails(int(n[i]), int(c[i]), p, m, eps)
        # relative 1e-9 (both sides sum positive terms; scipy's pmf is good to ~1e-14)
        assert upper[i] == pytest.approx(ref[0], rel=1e-9, abs=1e-280), (n[i], c[i])
        assert lower[i] == pytest.approx(ref[1], rel=1e-9, abs=1e-280), (n[i], c[i])
    assert privacy.exact_tails(int(n[0]), int(c[0]), p, m, eps) == (upper[0], lower[0])


@pytest.mark.parametrize("p,m,eps", [(0.5, 3, 0.5), (0.5, 15, 0.5), (0.7, 4, 0.9)])
def test_batched_block_tails_equal_the_single_ones(p, m, eps):
    """The batched forms used to choose block designs (all counts at once, all t at once)
    give the same numbers as the per-block dynamic programme (tests/helpers/independent_tails.py)
    and the per-case functions tested against enumeration."""
    for n, t in [(4, 2), (5, 3), (10, 3), (17, 5), (30, 7), (7, 1), (6, 6)]:
        upper, lower = privacy.block_tails_every_count(n, t, p, m, eps)
        ref_upper, ref_lower = block_dp_tails(n, t, p, m, eps)
        assert upper[1:] == pytest.approx(ref_upper[1:], abs=1e-12)
        assert lower[1:] == pytest.approx(ref_lower[1:], abs=1e-12)
    for n in (2, 17, 64, 1000, 7688):
        ts = list(range(1, min(n, 50)))
        upper, lower = privacy.block_tails_over_t(n, ts, p, m, eps)
        for i, t in enumerate(ts):
            assert (upper[i], lower[i]) == pytest.approx(privacy.block_tails(n, t, p, m, eps), abs=1e-12)


def test_methods_example_group_limits():
    """docs/METHODS.md: f = 1, p = 0.5, m = 10, eps = 0.5, delta = 0.1: the full Chernoff bounds
    pass groups of up to 33 records, the exact test only groups of 1, 2 or 7."""
    pp = privacy.PrivacyParams(0.5, 10, 0.5, 0.1, "chernoff")
    assert privacy.chernoff_max_group(pp) == 33
    exact = privacy.PrivacyParams(0.5, 10, 0.5, 0.1, "exact")
    assert [n for n in range(1, 60) if privacy.passes(n, n, exact)] == [1, 2, 7]


def test_chernoff_bounds_equal_the_closed_form():
    """privacy.chernoff_bounds (the Chernoff test's verdicts, and the group-size limit that
    bounds the exact test's search) equals the closed forms U = (e^theta / (1+theta)^(1+theta))^mu
    and L = (e^-theta / (1-theta)^(1-theta))^mu (L = e^-mu at theta = 1). Catches the upper
    exponent written theta - theta ln(1 + theta) (`(1 + theta) * np.log1p(theta)` turned into
    `theta * np.log1p(theta)`), which the audit's SQL bounds do not share; verified on that
    mutant (fails) and on the code (passes)."""
    for mu, theta in [(3.0, 0.2), (10.0, 0.5), (0.7, 0.9), (5.0, 1.0), (40.0, 0.05)]:
        u, low = privacy.chernoff_bounds(mu, theta)
        assert u == pytest.approx((math.exp(theta) / (1 + theta) ** (1 + theta)) ** mu, rel=1e-12)
        want = math.exp(-mu) if theta == 1 else (math.exp(-theta) / (1 - theta) ** (1 - theta)) ** mu
        assert low == pytest.approx(want, rel=1e-12)


def test_audit_equals_hand_computation(con):
    """A group of 4 records with values x, x, x, y and another of 2 records y, z; p = 0.5,
    domain {x, y, z}; eps = 0.5, delta = 0.1. Every number recomputed here from the formulas."""
    con.execute("CREATE TABLE t AS SELECT * FROM (VALUES ('a', 'x'), ('a', 'x'), ('a', 'x'), ('a', 'y'), "
                "('b', 'y'), ('b', 'z')) v(g, s)").fetchall()
    p, m, eps, delta = 0.5, 3, 0.5, 0.1
    res = rp.audit(con, "t", "s", p, eps, delta, public=["g"], test="exact")
    rows = {(r[0], r[4]): r for r in res.rows.fetchall()}
    a, b = p + (1 - p) / m, (1 - p) / m
    for (g, v), n, c in [(("a", "x"), 4, 3), (("a", "y"), 4, 1), (("b", "y"), 2, 1), (("b", "z"), 2, 1)]:
        r = rows[(g, v)]
        f = c / n
        mu, theta = n * (f * p + b), eps * f * p / (f * p + b)
        u = (math.exp(theta) / (1 + theta) ** (1 + theta)) ** mu
        low = (math.exp(-theta) / (1 - theta) ** (1 - theta)) ** mu
        # exact: O* = Binomial(c, a) + Binomial(n - c, b), enumerated
        pmf = {}
        for i in range(c + 1):
            for j in range(n - c + 1):
                w = math.comb(c, i) * a ** i * (1 - a) ** (c - i) * math.comb(n - c, j) * b ** j * (1 - b) ** (n - c - j)
                pmf[i + j] = pmf.get(i + j, 0) + w
        eu = sum(w for o, w in pmf.items() if o > (1 + theta) * mu)
        el = sum(w for o, w in pmf.items() if o < (1 - theta) * mu)
        assert r[1] == n and r[2] == n and r[5] == c and r[6] == pytest.approx(f)
        assert r[7] == pytest.approx(mu) and r[8] == pytest.approx(theta)
        assert r[9] == pytest.approx(u) and r[10] == pytest.approx(low)
        assert r[11] == pytest.approx(eu) and r[12] == pytest.approx(el)
        assert r[13] == (u >= delta and low >= delta) and r[14] == (eu >= delta and el >= delta)
    assert res.groups == 2 and res.records == 6
    # the per-group table agrees with the rows: verdict = every value passes, worst tails
    groups = {r[0]: r for r in res.groups_detail.fetchall()}
    assert list(groups) == ["a", "b"]
    for g in ("a", "b"):
        mine = [r for (gg, _), r in rows.items() if gg == g]
        gr = groups[g]
        assert gr[1:5] == (mine[0][1], mine[0][2], False, len(mine))
        assert gr[5] == pytest.approx(min(min(r[9], r[10]) for r in mine))
        assert gr[6] == pytest.approx(min(min(r[11], r[12]) for r in mine))
        assert gr[7] == all(r[14] for r in mine) == mine[0][15]
    assert res.failing_groups == sum(1 for g in groups.values() if not g[7])
    temporary = "SELECT count(*) FROM duckdb_tables() WHERE temporary"
    before = con.execute(temporary).fetchone()[0]
    with rp.audit(con, "t", "s", p, eps, delta, public=["g"]) as again:
        assert con.execute(temporary).fetchone()[0] == before + 2 and again.groups == 2
    assert con.execute(temporary).fetchone()[0] == before


# --- the estimator --------------------------------------------------------------------------

@pytest.fixture
def replicated(con):
    """R copies of a 400-record data set, the copy number a public column: one randomize run
    gives R independent releases (the draws hash the record, which differs per copy)."""
    R = 1500
    rng = np.random.default_rng(4)
    g = np.array(["A"] * 300 + ["B"] * 100)
    s = np.where(g == "A", rng.choice(["x", "y", "z", "w"], 400, p=[0.6, 0.2, 0.1, 0.1]),
                 rng.choice(["x", "y", "z", "w"], 400, p=[0.1, 0.1, 0.2, 0.6]))
    load_numpy(con, "base", {"g": g, "s": s})
    con.execute(f"CREATE TABLE rep AS SELECT r AS rep, base.* FROM base, range({R}) t(r)").fetchall()
    return R


def plug_in_se2_moments(size, n, p, m):
    """Exact mean and variance of the reported std_error^2 of one value's count in a group of
    `size` records, n of which hold it, without blocks: O* = X + Y, X ~ Bin(n, a), Y ~ Bin(size - n, b),
    and std_error^2 = size (b(1-b) + p(1-p)(1 - 2/m) F) / p^2 with F = (O*/size - b)/p clipped to
    [0, 1] (rp_estimates.sql with SS = SH = size)."""
    from scipy import stats
    a, b = p + (1 - p) / m, (1 - p) / m
    pmf = np.convolve(stats.binom.pmf(np.arange(n + 1), n, a), stats.binom.pmf(np.arange(size - n + 1), size - n, b))
    f_hat = np.clip((np.arange(size + 1) / size - b) / p, 0.0, 1.0)
    se2 = size * (b * (1 - b) + p * (1 - p) * (1 - 2 / m) * f_hat) / p ** 2
    mean = float(pmf @ se2)
    return mean, float(pmf @ (se2 - mean) ** 2)


def test_estimator_unbiased_with_the_stated_variance(con, replicated):
    """Over R = 1500 independent releases of the same groups: the mean estimate is the truth,
    the sample variance is METHODS.md's variance (chi2 band), and the mean reported
    std_error^2 is its exact expectation within 4 sd (plug_in_se2_moments; the band is about
    0.6 % of the variance, where it was a fixed 10 %). Catches standard errors 3 % too large
    (`/ __rwn_p AS std_error` turned into `/ __rwn_p * 1.03 AS std_error` in rp_estimates.sql),
    which the 10 % tolerance let pass; verified on that mutant (fails) and on the code."""
    R, p, m = replicated, 0.6, 4
    rp.randomize(con, "rep", "s", p, public=["rep", "g"], key="unbiasedness-key-01", into="released")
    est = rp.estimates(con, "released", "s", p, ["w", "x", "y", "z"], group_by=["rep", "g"])  # noqa: F841 (read by SQL)
    summary = con.execute("""
        SELECT e.g, e.value, count(*), avg(estimate), var_samp(estimate), avg(std_error * std_error),
               any_value(t.n), any_value(t.size)
        FROM est e JOIN (SELECT g, s AS value, count(*) AS n, sum(count(*)) OVER (PARTITION BY g) AS size
                         FROM base GROUP BY g, s) t USING (g, value)
        GROUP BY e.g, e.value""").fetchall()
    assert len(summary) == 8
    a, b = p + (1 - p) / m, (1 - p) / m
    for g, value, reps, mean, sample_var, mean_se2, n, size in summary:
        assert reps == R
        f = n / size
        var = size * (f * a * (1 - a) + (1 - f) * b * (1 - b)) / p ** 2     # METHODS.md, count scale
        assert abs(mean - n) <= Z * math.sqrt(var / R), (g, value)
        # sample variance / true variance ~ chi2(R-1)/(R-1), whose sd is sqrt(2/(R-1))
        assert abs(sample_var / var - 1) <= Z * math.sqrt(2 / (R - 1)), (g, value)
        # the reported squared standard error is a function of O* (the plug-in f clipped to
        # [0, 1]); its exact mean and variance over O*'s distribution give the band
        exp_se2, var_se2 = plug_in_se2_moments(size, n, p, m)
        assert abs(mean_se2 - exp_se2) <= Z * math.sqrt(var_se2 / R), (g, value, mean_se2, exp_se2)


@pytest.mark.heavy     # Monte Carlo over many keys; unbiasedness in small form: test_estimator_unbiased_with_the_stated_variance, test_multi_value_in_estimate_is_unbiased
def test_estimator_unbiased_over_many_keys(con):
    rng = np.random.default_rng(8)
    load_numpy(con, "small", {"g": rng.choice(["u", "v"], 200), "s": rng.choice(list("abc"), 200, p=[.7, .2, .1])})
    truth = con.execute("SELECT count(*) FROM small WHERE g = 'u' AND s = 'a'").fetchone()[0]
    size = con.execute("SELECT count(*) FROM small WHERE g = 'u'").fetchone()[0]
    p, m, keys = 0.5, 3, 200
    a, b = p + (1 - p) / m, (1 - p) / m
    f = truth / size
    estimates = []
    for i in range(keys):
        rp.randomize(con, "small", "s", p, public=["g"], key=f"many-keys-{i:04d}-xxxxxxxx", into="r", replace=True)
        estimates.append(rp.estimates(con, "r", "s", p, list("abc"), where="g = 'u'", values=["a"]).fetchall()[0][2])
    var = size * (f * a * (1 - a) + (1 - f) * b * (1 - b)) / p ** 2
    assert abs(np.mean(estimates) - truth) <= Z * math.sqrt(var / keys)


def test_multi_value_in_estimate_is_unbiased(con):
    """The estimate is affine in the released count O*, so it is unbiased exactly when, for a
    release whose O* equals its expectation n_V a_V + (N - n_V) b_V, it returns n_V. For a value
    set V, b_V = (1-p)|V|/m and a_V = p + b_V (METHODS.md): here p = 0.5, m = 4, groups of
    N = 8, 12, 16 and V = {x, y} (b_V = 0.25) and {w, x, y} (b_V = 0.375), with released
    counts chosen so that n_V is an integer. Catches b (and a, v) of an IN list computed with
    one value's b (`{len(values)} AS set_size` turned into `1 AS set_size` in rp_sql.py):
    the estimates are then off by p^-1 (|V| - 1)(1-p) N / m; verified on that mutant (fails)
    and on the code (passes). The SQL query path (SA IN (...)) is checked in test_query.py."""
    p, domain = 0.5, ["w", "x", "y", "z"]
    groups = {"A": (8, 4, 5), "B": (12, 4, 6), "C": (16, 9, 12)}     # N, O* of {x, y}, O* of {w, x, y}
    rows = []
    for g, (size, in_two, in_three) in groups.items():
        values = (["x", "y"] * size)[:in_two] + ["w"] * (in_three - in_two) + ["z"] * (size - in_three)
        rows += [(g, v) for v in values]
    load_numpy(con, "rel", {"g": np.array([r[0] for r in rows]), "s": np.array([r[1] for r in rows])})
    for values, column in ((["x", "y"], 1), (["w", "x", "y"], 2)):
        b = (1 - p) * len(values) / len(domain)
        got = {r[0]: r[3] for r in rp.estimates(con, "rel", "s", p, domain, values=values, group_by=["g"], enforce=None).fetchall()}
        for g, counts in groups.items():
            size, released = counts[0], counts[column]
            holders = (released - b * size) / p              # the truth whose E[O*] is this release
            assert holders == int(holders) and 0 <= holders <= size
            assert released == pytest.approx(holders * (p + b) + (size - holders) * b)
            assert got[g] == pytest.approx(holders, abs=1e-9), (values, g)


def test_randomize_release_shape_and_rates(con):
    con.execute(f"CREATE TABLE adult AS SELECT * FROM read_csv('{ADULT}')").fetchall()
    out = rp.randomize(con, "adult", "occupation", 0.7, public=["sex", "race"], seed=5)
    assert [c for c in out.columns] == ["occupation", "race", "sex"]          # source order; others left out
    rows = out.fetchall()
    orig = con.execute("SELECT occupation, race, sex FROM adult").fetchall()
    orig = [orig[r - 1] for r in keyed_order("seed:5", "rp.order", len(orig))]   # the release's order
    assert [r[1:] for r in rows] == [o[1:] for o in orig]
    domain = {o[0] for o in orig}
    assert {r[0] for r in rows} <= domain
    same = np.mean([r[0] == o[0] for r, o in zip(rows, orig)])
    expect = 0.7 + 0.3 / len(domain)
    assert abs(same - expect) <= Z * math.sqrt(expect * (1 - expect) / len(rows))
    assert rp.randomize(con, "adult", "occupation", 0.7, public=["sex", "race"], seed=5).fetchall() == rows
    other = rp.randomize(con, "adult", "occupation", 0.7, public=["sex", "race"], seed=6).fetchall()
    assert np.mean([r[0] != o[0] for r, o in zip(rows, other)]) > 0.3


# --- enforcement ------------------------------------------------------------------------------

@pytest.mark.heavy     # Monte Carlo attack on adult; enforcement's guarantee against the independent tails: rp/test_enforcement.py
def test_enforcement_monte_carlo_attack(con):
    """Real data: the first 3000 adult records. Every personal group that enforcement splits
    into blocks is replicated R times (the copy number public, so each copy is its own group of
    the same size, hence the same number of blocks) and released once; over the copies, both
    tail probabilities of the micro reconstruction of every value are at least delta within
    Monte Carlo error, and the reconstruction stays unbiased."""
    p, eps, delta, R = 0.5, 0.5, 0.05, 1500
    con.execute(f"CREATE TABLE a3 AS SELECT {', '.join(PUBLIC)}, occupation FROM read_csv('{ADULT}') LIMIT 3000").fetchall()
    audit = rp.audit(con, "a3", "occupation", p, eps, delta, public=PUBLIC, test="exact", enforce=True)
    assert audit.failing_groups == 0
    pub = ", ".join(PUBLIC)
    con.execute(f"CREATE TABLE enforced AS SELECT DISTINCT {pub}, group_size, trials FROM ({audit.rows.sql_query()}) "
                "WHERE enforced").fetchall()
    assert con.execute("SELECT count(*) FROM enforced").fetchone()[0] >= 10
    domain = [r[0] for r in con.execute("SELECT DISTINCT occupation FROM a3 ORDER BY 1").fetchall()]
    con.execute(f"CREATE TABLE reps AS SELECT r AS rep, a3.* FROM a3 JOIN enforced USING ({pub}), range({R}) t(r)").fetchall()
    rp.randomize(con, "reps", "occupation", p, public=["rep"] + PUBLIC, domain=domain, enforce=(eps, delta),
                 test="exact", key="monte-carlo-attack-key", into="released", max_top_share=1)   # the tails are the subject
    b = (1 - p) / len(domain)
    tails = con.execute(f"""
        WITH truth AS (SELECT {pub}, occupation AS value, count(*) / any_value(e.group_size) AS f, any_value(e.group_size) AS n
                       FROM a3 JOIN enforced e USING ({pub}) GROUP BY ALL),
             released_counts AS (SELECT rep, {pub}, occupation AS value, count(*) AS o FROM released GROUP BY ALL),
             per_rep AS (SELECT t.*, r.rep, (coalesce(c.o, 0) / t.n - {b}) / {p} AS f_rec
                         FROM truth t CROSS JOIN range({R}) r(rep)
                         LEFT JOIN released_counts c ON c.rep = r.rep AND c.value = t.value
                              AND {' AND '.join(f'c.{c} = t.{c}' for c in PUBLIC)})
        SELECT {pub}, value, any_value(n), any_value(f),
               avg(((f_rec - f) / f > {eps})::INT) AS upper, avg(((f_rec - f) / f < -{eps})::INT) AS lower,
               avg(f_rec) AS mean_rec, stddev_samp(f_rec) AS sd_rec
        FROM per_rep GROUP BY ALL""").fetchall()
    mc_error = math.sqrt(delta * (1 - delta) / R)
    for row in tails:
        *_, n, f, upper, lower, mean_rec, sd_rec = row
        assert upper >= delta - Z * mc_error and lower >= delta - Z * mc_error, row
        assert abs(mean_rec - f) <= Z * sd_rec / math.sqrt(R) + 1e-12, row
    assert len(tails) >= 30


def test_standard_errors_account_for_blocks(con):
    """After enforcement the records of a block move together. Over R replicated releases of the
    enforced groups of 3000 adult records, the spread of an aggregate estimate matches the
    exact block-aware variance computed from the true data (chi2 band), the mean reported
    std_error^2 matches its exact expectation (4 sd of the mean; where the band was the chi2
    one plus a fixed 0.05), and both are far above what independent trials would give.
    Catches the q + 1 blocks swapped with the q ones in SS (in rp_sql.py's design CTE,
    `sum(r * (q + 1) * (q + 1) + (t - r) * q * q) AS ss` turned into
    `sum(r * q * q + (t - r) * (q + 1) * (q + 1)) AS ss`: mean std_error^2 203
    above its expectation, against a band of 18; the old tolerance, 0.28 on var_est / se2,
    let it pass at 1.007); verified on that mutant (fails) and on the code (passes)."""
    p, eps, delta, R = 0.5, 0.5, 0.05, 600
    con.execute(f"CREATE TABLE a3 AS SELECT {', '.join(PUBLIC)}, occupation FROM read_csv('{ADULT}') LIMIT 3000").fetchall()
    domain = [r[0] for r in con.execute("SELECT DISTINCT occupation FROM a3 ORDER BY 1").fetchall()]
    con.execute(f"CREATE TABLE reps AS SELECT r AS rep, a3.* FROM a3, range({R}) t(r)").fetchall()
    # l_diversity=1: 184 of these groups hold one occupation (attribute disclosure, refused by
    # default); this test is about the variance of the blocks, not about that rule
    rp.randomize(con, "reps", "occupation", p, public=["rep"] + PUBLIC, domain=domain, enforce=(eps, delta),
                 test="exact", key="block-variance-key", into="released", l_diversity=1)
    common = dict(group_by=["rep"], values=["Prof-specialty"], where="sex = 'Male'")
    aware = rp.estimates(con, "released", "occupation", p, domain, public=["rep"] + PUBLIC, enforce=(eps, delta),
                         test="exact", **common).sql_query()
    # what independent-trial errors would say: the same rows without their recorded design
    con.execute("CREATE TABLE released_unrecorded AS SELECT * FROM released").fetchall()
    naive = rp.estimates(con, "released_unrecorded", "occupation", p, domain, enforce=None, **common).sql_query()
    (mean_est, var_est, se2_aware), = con.execute(
        f"SELECT avg(estimate), var_samp(estimate), avg(std_error ^ 2) FROM ({aware})").fetchall()
    (se2_naive,), = con.execute(f"SELECT avg(std_error ^ 2) FROM ({naive})").fetchall()
    truth = con.execute("SELECT count(*) FROM a3 WHERE sex = 'Male' AND occupation = 'Prof-specialty'").fetchone()[0]
    assert abs(mean_est - truth) <= Z * math.sqrt(var_est / R)            # still unbiased
    # The exact variance from the true data: per personal group g of n records in t blocks
    # (r = n mod t of size q + 1, the rest of size q), c of them holding the value, f = c / n:
    # Var(O*_g) = A + B f + C f^2 with A = b(1-b) SS, B = p(1-p)(SH - 2 v SS), C = p(1-p)(SS - SH)
    # (the blocks a uniformly random partition; METHODS.md, rp_estimates.sql).
    m = len(domain)
    b, v = (1 - p) / m, 1 / m
    groups = con.execute(f"SELECT count(*), count(*) FILTER (WHERE occupation = 'Prof-specialty') FROM a3 "
                         f"WHERE sex = 'Male' GROUP BY {', '.join(PUBLIC)}").fetchall()
    trials = privacy.trials_for_sizes([n for n, _ in groups], privacy.PrivacyParams(p, m, eps, delta, "exact"))
    var_true, ss_all, sh_all, size = 0.0, 0.0, 0.0, 0
    for n, c in groups:
        q, r = divmod(n, trials[n])
        ss = r * (q + 1) ** 2 + (trials[n] - r) * q * q
        sh = (r * (q + 1) * (n - q - 1) + (trials[n] - r) * q * (n - q)) / (n - 1) if n > 1 else 0.0
        f = c / n
        var_true += (b * (1 - b) * ss + p * (1 - p) * (sh - 2 * v * ss) * f + p * (1 - p) * (ss - sh) * f * f) / p ** 2
        ss_all, sh_all, size = ss_all + ss, sh_all + sh, size + n
    # the estimate is a sum over hundreds of groups, close to normal: var_est / var_true ~
    # chi2(R-1)/(R-1), sd sqrt(2/(R-1))
    assert abs(var_est / var_true - 1) <= Z * math.sqrt(2 / (R - 1)), (var_est, var_true)
    # The reported std_error^2 applies the same formula to the slice as a whole, with the
    # slice's F = (O*/|S| - b)/p for f (clipped at 0 with probability about 1e-5: F's sd is
    # 0.028 around f = 0.12); its exact mean is that of a quadratic in F, E F = f,
    # Var F = var_true / |S|^2.
    f_all, var_f = truth / size, var_true / size ** 2
    lin, quad = p * (1 - p) * (sh_all - 2 * v * ss_all), p * (1 - p) * (ss_all - sh_all)
    exp_se2 = (b * (1 - b) * ss_all + lin * f_all + quad * (f_all ** 2 + var_f)) / p ** 2
    sd_se2 = abs(lin + 2 * quad * f_all) / p ** 2 * math.sqrt(var_f) * 1.01   # delta method, +1 % for the F^2 term
    assert abs(se2_aware - exp_se2) <= Z * sd_se2 / math.sqrt(R), (se2_aware, exp_se2)
    assert var_est / se2_naive > 2                                        # independent trials understate it


def block_design_variance(n, t, c, p, m):
    """Var(O*) of one value held by c of n records split at random into t blocks (record i of
    a uniformly random order goes to block i mod t), each block kept with probability p, else
    replaced by the value with probability (1-p)/m, by enumeration: every placement of the
    holders (equally likely) and every block outcome. Independent of rp_estimates.sql's SS/SH."""
    b = (1 - p) / m
    sizes = [n // t + (u < n % t) for u in range(t)]
    first = np.cumsum([0] + sizes)
    mean = second = 0.0
    placements = list(itertools.combinations(range(n), c))
    for holders in placements:
        h = [sum(first[u] <= i < first[u + 1] for i in holders) for u in range(t)]
        dist = np.zeros(n + 1)
        dist[0] = 1.0
        for u in range(t):                  # add block u: h_u kept, s_u replaced by the value, else 0
            step = np.zeros(n + 1)
            step[h[u]] += p
            step[sizes[u]] += b
            step[0] += 1 - p - b
            dist = np.convolve(dist, step)[: n + 1]
        o = np.arange(n + 1)
        mean += dist @ o / len(placements)
        second += dist @ (o * o) / len(placements)
    return mean, second - mean * mean


def test_block_aware_standard_error_equals_the_exact_variance(con):
    """For a single personal group the reported variance formula is exact: with the released
    count at its expectation (so the plug-in F equals the true f), std_error^2 must equal the
    exact Var(O*) / p^2 of the block design, enumerated independently (block_design_variance).
    Groups of 8 and 12 records at p = 0.5, m = 4, (eps, delta) = (0.5, 0.05): 6 and 9 blocks,
    of unequal sizes. Catches h = (n - s)/(n - 1) taken as (n - s)/n (0.4 % on the
    Monte Carlo test's slice, inside its band: `/ (n - 1)` turned into `/ n` in rp_sql's
    design CTE) and the q + 1 blocks swapped with the q ones; verified on both mutants (fails)
    and on the code (passes)."""
    p, m, eps, delta = 0.5, 4, 0.5, 0.05
    domain = ["w", "x", "y", "z"]
    trials = privacy.trials_for_sizes([8, 12], privacy.PrivacyParams(p, m, eps, delta, "exact"))
    assert trials == {8: 6, 12: 9}
    groups = {"A": (8, 4), "B": (12, 5)}                  # size, holders of x
    rows = []
    for g, (n, c) in groups.items():
        released = c * p + n * (1 - p) / m               # E[O*], an integer here
        assert released == int(released)
        rows += [(g, "x")] * int(released) + [(g, "w")] * (n - int(released))
    load_numpy(con, "rel", {"g": np.array([r[0] for r in rows]), "s": np.array([r[1] for r in rows])})
    got = {r[0]: r for r in rp.estimates(con, "rel", "s", p, domain, values=["x"], group_by=["g"], public=["g"],
                                         enforce=(eps, delta), test="exact").fetchall()}
    for g, (n, c) in groups.items():
        mean, var = block_design_variance(n, trials[n], c, p, m)
        assert mean == pytest.approx(c * p + n * (1 - p) / m, rel=1e-12)
        assert got[g][3] == pytest.approx(c, abs=1e-9)                       # the estimate
        assert got[g][4] ** 2 == pytest.approx(var / p ** 2, rel=1e-9), (g, got[g][4] ** 2, var / p ** 2)


def test_trials_depend_only_on_public_quantities():
    pp = privacy.PrivacyParams(0.5, 15, 0.5, 0.05, "exact")
    a = privacy.trials_for_sizes([3, 9, 40, 500], pp)
    b = privacy.trials_for_sizes([500, 40, 9, 3, 3], pp)
    assert a == b and all(1 <= t <= n for n, t in a.items())
    assert a[500] < 500           # large groups are split into blocks


# --- release databases -----------------------------------------------------------------------

def test_release_database_is_standalone_and_safe(con, tmp_path):
    import subprocess
    import sys
    key = "release-secret-key-0123456789"
    path = tmp_path / "adult_release.duckdb"
    # l_diversity=1: 115 records of Adult sit in groups holding one occupation (refused by
    # default, test_attribute_disclosure.py); the metadata record that choice
    rows = rp.release(con, str(ADULT), str(path), "occupation", 0.5, public=PUBLIC, key=key, enforce=(0.5, 0.05),
                      test="exact", l_diversity=1)
    assert rows == 32561
    assert key.encode() not in path.read_bytes()
    script = f"""
import sys
sys.modules['rwn_sql'] = None           # a plain duckdb: rwn_sql cannot be imported
import duckdb
con = duckdb.connect({str(path)!r}, read_only=True)
tables = con.execute("SELECT table_name, table_type FROM information_schema.tables ORDER BY 1").fetchall()
print(tables)
for name, kind in tables:
    if kind == 'VIEW':
        assert con.execute(f'SELECT count(*) FROM "{{name}}"').fetchone()[0] > 0
print(con.execute("SELECT * FROM rwn_release_metadata").fetchall())
# every table, view and column explains itself to a BI tool
print(con.execute("SELECT table_name FROM duckdb_tables() WHERE comment IS NULL UNION ALL "
                  "SELECT view_name FROM duckdb_views() WHERE NOT internal AND comment IS NULL UNION ALL "
                  "SELECT table_name || '.' || column_name FROM duckdb_columns() "
                  "WHERE NOT internal AND database_name = current_database() AND comment IS NULL").fetchall())
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    tables = eval(out.stdout.splitlines()[0])
    base = [t for t, kind in tables if kind == "BASE TABLE"]
    assert sorted(base) == ["adult_randomized", "rwn_release_metadata", "rwn_release_trials"]
    views = [t for t, kind in tables if kind == "VIEW"]
    assert sorted(views) == sorted(["adult_cells", "adult_estimates"] + [f"adult_estimates_by_{c}" for c in PUBLIC])
    assert eval(out.stdout.splitlines()[2]) == []                                  # no object without a comment
    rel = duckdb.connect(str(path), read_only=True)
    assert [c[0] for c in rel.execute("DESCRIBE randomized_rows_not_counts.adult_randomized").fetchall()] == \
        ["education", "marital_status", "occupation", "relationship", "race", "sex"]
    orig = con.execute(f"SELECT occupation FROM read_csv('{ADULT}')").fetchall()
    released = rel.execute("SELECT occupation FROM randomized_rows_not_counts.adult_randomized").fetchall()
    assert np.mean([a == b for a, b in zip(orig, released)]) < 0.75               # randomized, not raw
    meta = rel.execute("SELECT method, p, m, enforced, epsilon, delta, test FROM rwn_release_metadata").fetchone()
    assert meta == ("uniform_perturbation", 0.5, 15, True, 0.5, 0.05, "exact")
    by_sex = rel.execute("SELECT * FROM adult_estimates_by_sex ORDER BY sex, occupation").fetchall()
    direct = rp.estimates(con, f"{path}:adult_randomized", "occupation", 0.5,
                          [r[0] for r in rel.execute("SELECT unnest(domain) FROM rwn_release_metadata").fetchall()],
                          group_by=["sex"], public=PUBLIC, enforce=(0.5, 0.05), test="exact").fetchall()
    # (block-aware standard errors sum doubles in parallel: equal up to rounding)
    assert [r[:5] for r in by_sex] == [r[:5] for r in direct]
    assert np.allclose(np.array([r[5:8] for r in by_sex], float), np.array([r[5:8] for r in direct], float),
                       rtol=1e-12, atol=0)


# --- SQL surface and bad input ---------------------------------------------------------------

def test_sql_macros_equal_python(con):
    rwn_sql.install(con)
    con.execute(f"CREATE TABLE adult AS SELECT * FROM read_csv('{ADULT}')").fetchall()
    sql = con.execute("SELECT * FROM rwn_randomize('adult', 'occupation', 0.5, public := ['sex', 'race'], "
                      "seed := 3, epsilon := 0.5, delta := 0.05, test := 'exact')").fetchall()
    py = rp.randomize(con, "adult", "occupation", 0.5, public=["sex", "race"], seed=3, enforce=(0.5, 0.05),
                      test="exact").fetchall()
    assert sql == py
    a_sql = con.execute("SELECT * FROM rwn_audit('adult', 'occupation', 0.5, 0.5, 0.05, public := ['sex', 'race'])").fetchall()
    assert a_sql == rp.audit(con, "adult", "occupation", 0.5, 0.5, 0.05, public=["sex", "race"]).rows.fetchall()


@pytest.mark.parametrize("kwargs,message", [
    (dict(sensitive="occupatio"), "sensitive: column 'occupatio' is not in"),
    (dict(public=["sex", "rac"]), "public: column 'rac' is not in"),
    (dict(public=["sex", "occupation"]), "both the sensitive attribute and public"),
    (dict(p=1.0), r"p \(retention probability\) must be in \(0, 1\)"),
    (dict(p=0), r"must be in \(0, 1\)"),
    (dict(enforce=(0.5, 1.5)), r"delta must be in \(0, 1\)"),
    (dict(enforce=(0.5, 0.0)), r"delta must be in \(0, 1\)"),
    (dict(enforce=(2.0, 0.1)), r"eps must be in \(0, 1.0\d*\]"),
    (dict(enforce=(0.0, 0.1)), r"eps must be in"),
    (dict(enforce=0.5), "enforce must be a pair"),
    (dict(enforce=(0.5, 0.1), test="exact"), "cannot be achieved for personal groups of"),
    (dict(domain=["Sales", "Tech-support"]), "the domain misses values present in the data: '\\?'"),
    (dict(domain=["Sales"]), "at least 2"),
    (dict(nulls="keep"), "nulls must be one of error, drop"),
    (dict(test="exakt"), "test must be one of chernoff, exact; got 'exakt'"),    # also without enforcement
])
def test_randomize_bad_input(con, kwargs, message):
    con.execute(f"CREATE TABLE adult AS SELECT * FROM read_csv('{ADULT}')").fetchall()
    args = dict(sensitive="occupation", p=0.5, public=PUBLIC, seed=1)
    args.update(kwargs)
    with pytest.raises(RWNError, match=message):
        rp.randomize(con, "adult", args.pop("sensitive"), args.pop("p"), into="out", **args)
    assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'out'").fetchone()[0] == 0


def test_domain_file_and_nulls(con, tmp_path):
    con.execute("CREATE TABLE t AS SELECT * FROM (VALUES ('a', 'x'), ('a', NULL), ('b', 'y'), ('b', 'x')) v(g, s)").fetchall()
    with pytest.raises(RWNError, match="has 1 NULL values"):
        rp.randomize(con, "t", "s", 0.5, seed=1)
    out = rp.randomize(con, "t", "s", 0.5, seed=1, nulls="drop").fetchall()
    assert len(out) == 3 and all(r[1] is not None for r in out)
    dom = tmp_path / "domain.txt"
    dom.write_text("x\ny\nz\n")
    out = rp.randomize(con, "t", "s", 0.5, seed=1, nulls="drop", domain=str(dom)).fetchall()
    assert {r[1] for r in out} <= {"x", "y", "z"}
    dom.write_text("x\nz\n")
    with pytest.raises(RWNError, match="the domain misses values present in the data: 'y'"):
        rp.randomize(con, "t", "s", 0.5, seed=1, nulls="drop", domain=str(dom))


def test_audit_and_estimates_bad_input(con):
    con.execute(f"CREATE TABLE adult AS SELECT * FROM read_csv('{ADULT}')").fetchall()
    with pytest.raises(RWNError, match=r"eps must be in \(0, 1.0\d+\] for p = 0.5, m = 15"):
        rp.audit(con, "adult", "occupation", 0.5, 3.0, 0.1, public=PUBLIC)
    with pytest.raises(RWNError, match=r"delta must be in \(0, 1\)"):
        rp.audit(con, "adult", "occupation", 0.5, 0.5, 1.0, public=PUBLIC)
    with pytest.raises(RWNError, match="group_by: column 'nope' is not in|public: column 'nope' is not in"):
        rp.estimates(con, "adult", "occupation", 0.5, ["a", "b"], group_by=["nope"], enforce=None)
    with pytest.raises(RWNError, match="values \\['Nope'\\] are not in the domain"):
        rp.estimates(con, "adult", "occupation", 0.5, ["Sales", "Tech-support"], values=["Nope"], enforce=None)
    with pytest.raises(RWNError, match="column 'occupation' is both the sensitive attribute and public"):
        rp.estimates(con, "adult", "occupation", 0.5, ["Sales", "Tech-support"], public=["sex", "occupation"],
                     enforce=None)


def test_randomize_order_is_the_keyed_permutation(con):
    """The release is written in the keyed order (records numbered by input position) for a
    table, a qualified name, a view and a query, whatever the threads and with DuckDB's
    preserve_insertion_order off."""
    con.execute("SET threads = 4").fetchall()
    con.execute("CREATE TABLE big AS SELECT i, CAST(i % 97 AS VARCHAR) AS g, "
                "CAST(hash(i) % 5 AS VARCHAR) AS s FROM range(300000) t(i)").fetchall()
    con.execute("CREATE VIEW big_view AS SELECT * FROM big WHERE i % 3 <> 0").fetchall()
    for source, n in [("big", 300000), ("main.big", 300000), ("big_view", 200000),
                      ("SELECT * FROM big WHERE i % 3 <> 0", 200000)]:
        text = rp.randomize(con, source, "s", 0.5, public=["i", "g"], seed=1, sql=True)
        assert "query_table" not in text
        out = rp.randomize(con, source, "s", 0.5, public=["i", "g"], seed=1).fetchall()
        inputs = [r[0] for r in con.execute(f"SELECT i FROM {sources.resolve_source(con, source).sql}").fetchall()]
        assert [r[0] for r in out] == [inputs[r - 1] for r in keyed_order("seed:1", "rp.order", n)]
    assert sources.resolve_source(con, "main.big").sql == '"main"."big"'
    ordered = rp.randomize(con, "big", "s", 0.5, public=["i", "g"], seed=1).fetchall()
    con.execute("SET preserve_insertion_order = false").fetchall()
    con.execute("SET threads = 1").fetchall()
    assert rp.randomize(con, "big", "s", 0.5, public=["i", "g"], seed=1).fetchall() == ordered


def test_randomize_draws_equal_the_python_mirror(con):
    """Every released value follows from the keyed hash of (key, 'rp.randomize', record,
    column) as documented in rwn_sql.randomness: keep when bits 0 < p 2^52, else the domain
    value (sorted) at floor(bits 1 / 2^52 * m)."""
    from rwn_sql.randomness import TWO_52, keyed_bits
    con.execute("CREATE TABLE t AS SELECT i, ['b', 'a', 'c', 'd'][1 + i % 4] AS s FROM range(2000) r(i)").fetchall()
    out = rp.randomize(con, "t", "s", 0.3, public=["i"], key="mirror-key-0123456789").fetchall()
    domain = ["a", "b", "c", "d"]
    for i, s_out in out:
        keep, pick = keyed_bits("mirror-key-0123456789", "rp.randomize", i + 1, "s")
        s_in = "bacd"[i % 4]
        assert s_out == (s_in if keep < math.ceil(0.3 * TWO_52) else domain[pick * 4 // TWO_52])


def test_randomize_refuses_empty_input(con):
    con.execute("CREATE TABLE t AS SELECT * FROM (VALUES ('a', 'x')) v(g, s) WHERE false").fetchall()
    with pytest.raises(RWNError, match="has no records"):
        rp.randomize(con, "t", "s", 0.5, seed=1)
    con.execute("INSERT INTO t VALUES ('a', NULL)").fetchall()
    with pytest.raises(RWNError, match="has no records with a sensitive value"):
        rp.randomize(con, "t", "s", 0.5, seed=1, nulls="drop")


def test_randomize_same_with_one_thread_and_many():
    results = []
    for threads in (1, 4):
        con = duckdb.connect()
        con.execute(f"SET threads = {threads}").fetchall()
        con.execute(f"CREATE TABLE big AS SELECT r AS copy, a.* FROM read_csv('{ADULT}') a, range(4) t(r)").fetchall()
        rp.randomize(con, "big", "occupation", 0.5, public=["copy"] + PUBLIC, enforce=(0.5, 0.05), test="exact",
                     key="thread-determinism-key", into="released", l_diversity=1)   # not about l-diversity
        rp.randomize(con, "big", "occupation", 0.5, public=["copy"] + PUBLIC, key="thread-determinism-key",
                     into="plain")
        results.append((con.execute("SELECT * FROM released").fetchall(), con.execute("SELECT * FROM plain").fetchall()))
        con.close()
    assert len(results[0][0]) == len(results[0][1]) == 4 * 32561 and results[0] == results[1]


def test_public_columns_named_like_estimation_terms(tmp_path):
    """Public columns called p, a, b, v or m (names the reconstruction formulas use) give the
    same estimates as the same data under other names, in Python and in the release views."""
    import duckdb
    import rwn_sql
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT (range % 3)::VARCHAR AS x1, (range % 2)::VARCHAR AS x2, "
                "(range % 4)::VARCHAR AS s FROM range(400)").fetchall()
    rwn_sql.randomize(con, "t", "s", 0.5, public=["x1", "x2"], seed=3, into="r1")
    con.execute("CREATE TABLE r2 AS SELECT x1 AS a, x2 AS b, s FROM r1").fetchall()
    domain = ["0", "1", "2", "3"]
    one = rwn_sql.estimates(con, "r1", "s", 0.5, domain, group_by=["x1", "x2"]).fetchall()
    two = rwn_sql.estimates(con, "r2", "s", 0.5, domain, group_by=["a", "b"], enforce=None).fetchall()
    assert one == two and len(one) == 6 * 4
    path = tmp_path / "r.duckdb"
    con.execute("CREATE TABLE t2 AS SELECT x1 AS a, x2 AS b, s FROM t").fetchall()
    rwn_sql.release(con, "t2", str(path), "s", 0.5, public=["a", "b"], seed=3)
    with duckdb.connect(str(path), read_only=True) as rel:
        for (view,) in rel.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall():
            rel.execute(f'SELECT * FROM "{view}"').fetchall()      # every view binds and runs
