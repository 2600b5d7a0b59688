"""Issue 8 R2: the row order of a release carries nothing about the input order.

The attack: the input is sorted by the sensitive column (occupation in adult, public sex and
race). (a) Guess each released row's occupation by a majority vote over the 100 surrounding
released rows; (b) guess it by a row-wise majority over 5 releases under different keys.
Each attack must do no better on the sorted input than on a shuffled copy of it.

Ground truth: the record at released row i is known from the keyed order's Python mirror.

Tolerances (Monte Carlo error of an accuracy over n = 32561 rows):
(a) each row's guess depends on its 101 neighbours only, so the indicators are 101-dependent;
    the variance of their mean is at most (2 * 100 + 1) * 1/4 / n, sd <= 0.039. The difference of
    two such accuracies has sd <= 0.056; allowed: 4 sd = 0.22 (the leak it guards against: 0.997
    against about 0.3). With enforcement blocks add dependence this bound ignores; the same 0.22
    is used there as a screen for the leak, not as a 4-sd bound.
(b) row i of release k holds a uniformly placed record; two rows' indicators can depend only if,
    in some release, their records share a randomization unit (a record, or an enforcement block).
    The number of such ordered row pairs is at most sum over the 5 releases of sum over units of
    size^2 = 5 S, so the variance of the mean is at most 5 S / (4 n^2) and the difference of two
    accuracies has sd <= sqrt(2 * 5 S / (4 n^2)) (without blocks S = n: sd = 0.0088); allowed: 4 sd
    (the leak: 0.836 against 0.536 for one release).
"""
import math

import numpy as np
import pytest

from helpers.data import ADULT
from rwn_sql.rp import api as rp
from rwn_sql.randomness import keyed_order

KEYS = [f"order-attack-key-{i:02d}-0123456789" for i in range(5)]


def neighbour_vote_accuracy(released, truth, m, half=50):
    """Share of rows whose true value is the majority of the released values of the 2 half + 1
    rows around it (clipped at the ends)."""
    n = len(released)
    counts = np.zeros((n + 1, m), np.int64)
    counts[1:] = np.cumsum(np.eye(m, dtype=np.int64)[released], axis=0)
    lo = np.clip(np.arange(n) - half, 0, n)
    hi = np.clip(np.arange(n) + half + 1, 0, n)
    guess = np.argmax(counts[hi] - counts[lo], axis=1)
    return float(np.mean(guess == truth))


def rowwise_vote_accuracy(releases, truth, m):
    votes = np.zeros((len(truth), m), np.int64)
    for r in releases:
        votes[np.arange(len(truth)), r] += 1
    return float(np.mean(np.argmax(votes, axis=1) == truth))


@pytest.mark.parametrize("enforce", [None, pytest.param((0.5, 0.05), marks=pytest.mark.heavy)])   # enforced: heavy tier
def test_order_gives_nothing_away(con, enforce):
    con.execute(f"CREATE TABLE adult AS SELECT * FROM read_csv('{ADULT}')").fetchall()
    con.execute("CREATE TABLE sorted AS SELECT * FROM adult ORDER BY occupation, md5(CAST(fnlwgt AS VARCHAR))").fetchall()
    con.execute("CREATE TABLE shuffled AS SELECT * FROM adult ORDER BY md5(CAST(fnlwgt * 7 + age AS VARCHAR))").fetchall()
    results = {}
    for table in ("sorted", "shuffled"):
        occupations = [r[0] for r in con.execute(f"SELECT occupation FROM {table}").fetchall()]
        names = sorted(set(occupations))
        m = len(names)
        truth_in = np.array([names.index(v) for v in occupations])
        releases, truths = [], []
        for key in KEYS:
            rows = rp.randomize(con, table, "occupation", 0.5, public=["sex", "race"], key=key,
                                enforce=enforce).fetchall()
            releases.append(np.array([names.index(r[0]) for r in rows]))
            order = np.array(keyed_order(key, "rp.order", len(rows))) - 1
            truths.append(truth_in[order])
        results[table] = (neighbour_vote_accuracy(releases[0], truths[0], m),
                          rowwise_vote_accuracy(releases, truths[0], m))
    n = len(truths[0])
    S = n
    if enforce is not None:      # the blocks: per personal group of n_g records, t of sizes q or q + 1
        with rp.audit(con, "adult", "occupation", 0.5, *enforce, public=["sex", "race"], enforce=True) as a:
            groups = con.execute(f"SELECT DISTINCT sex, race, group_size, trials FROM ({a.rows.sql_query()})").fetchall()
        S = sum((ng % t) * (ng // t + 1) ** 2 + (t - ng % t) * (ng // t) ** 2 for _, _, ng, t in groups)
    tol_a = 4 * math.sqrt(2 * 201 * 0.25 / n)
    tol_b = 4 * math.sqrt(2 * 5 * S / (4 * n * n))
    assert results["sorted"][0] <= results["shuffled"][0] + tol_a, results
    assert results["sorted"][1] <= results["shuffled"][1] + tol_b, results
    # and neither comes near the leak: the row-wise vote is no better than a single release
    assert results["sorted"][1] < 0.5, results
