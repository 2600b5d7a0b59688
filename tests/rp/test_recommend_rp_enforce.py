"""recommend(method="rp", enforce=True): enforced and plain candidates compared by the standard
error of one-way counts; the search's pruning checked against every candidate."""
import json

import numpy as np
import pytest

import rwn_sql
from rwn_sql import RWNError
from rwn_sql.rp.core import privacy
from rwn_sql.recommendation import rp as rec
from helpers.data import ADULT


def _table(con, name, groups):
    """groups: {public value: (records holding 'a', records holding 'b')}."""
    rows = [(g, v) for g, (na, nb) in groups.items() for v in ["a"] * na + ["b"] * nb]
    con.execute(f"CREATE TABLE {name} (g VARCHAR, s VARCHAR)")
    con.executemany(f"INSERT INTO {name} VALUES (?, ?)", rows)


def test_design_errors_match_the_plain_formula_without_blocks():
    n = np.array([7, 30, 1])
    d = rec._Design(n, n.copy())
    shares = np.array([0.2, 0.5, 0.8])
    for p in (0.1, 0.5, 0.9):
        got = d.std_errors(shares, p, 4)
        want = [rec.one_way_std_error(f * n.sum(), int(n.sum()), p, 4) for f in shares]
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_lower_bound_is_below_every_design_it_covers():
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = rng.integers(1, 60, size=4)
        t_up = np.array([rng.integers(1, x + 1) for x in n])
        shares = rng.random(3)
        p, m = float(rng.uniform(0.05, 0.95)), int(rng.integers(2, 12))
        bound = rec._Design(n, t_up).lower_bound(shares, p, m)
        t = np.array([rng.integers(1, x + 1) for x in t_up])        # any 1 <= t <= t_up
        assert bound <= rec._Design(n, t).std_errors(shares, p, m).max() * (1 + 1e-12)


def test_trials_upper_bounds_bound_the_certified_trials():
    for p in (0.2, 0.5, 0.7):
        pp = privacy.PrivacyParams(p=p, m=3, eps=0.3, delta=0.2, test="exact")
        sizes = [1, 2, 5, 17, 40, 90]
        upper, exact = privacy.trials_upper_bounds(sizes, pp), privacy.trials_for_sizes(sizes, pp)
        assert all(exact[n] <= upper[n] for n in sizes)


def _brute_best(sizes, shares, m, eps, delta, step=rec.ENFORCED_STEP):
    """Every enforced candidate certified and measured, no pruning."""
    best = (np.inf, None)
    for k in range(1, step):
        p = k / step
        if eps > privacy.max_eps(p, m):
            continue
        trials = privacy.trials_for_sizes(sizes, privacy.PrivacyParams(p=p, m=m, eps=eps, delta=delta, test="exact"))
        if min(trials.values()) == 0:
            continue
        se = rec._Design(sizes, np.array([trials[int(x)] for x in sizes])).std_errors(shares, p, m).max()
        best = min(best, (se, p))
    return best


@pytest.mark.parametrize("sizes, eps, delta", [([30], 0.5, 0.2), ([12, 30], 0.8, 0.2), ([1, 40], 0.5, 0.2),
                                                ([30, 60], 0.3, 0.3)])
def test_enforced_search_finds_what_every_candidate_gives(sizes, eps, delta):
    """The pruned search against every candidate (multiples of 0.05: the design searches at p
    below 0.05 cost seconds each)."""
    sizes, shares = np.array(sizes), np.array([0.3, 0.7])
    want = _brute_best(sizes, shares, 2, eps, delta, step=20)
    got = rec._enforced_search(sizes, shares, 2, eps, delta, None, np.inf, step=20)
    if want[1] is None:
        assert got.p is None
    else:
        assert (got.se_max, got.p) == pytest.approx(want)


def test_enforcement_recommended_where_it_beats_the_plain_p(con):
    """One group of 60 records, 4 holding 'a', at (0.8, 0.2): the largest plain p is 0.067;
    split into blocks, a larger p gives a smaller one-way standard error."""
    _table(con, "t", {"x": (4, 56)})
    plain = rwn_sql.recommend(con, "t", "s", 0.8, 0.2, method="rp", public=["g"], max_top_share=1)
    r = rwn_sql.recommend(con, "t", "s", 0.8, 0.2, method="rp", public=["g"], max_top_share=1, enforce=True)
    assert r.enforced and r.binding == "enforcement" and r.p > plain.p
    assert r.alternative == {"p": plain.p, "enforced": False, "std_error_max": plain.std_error_max}
    assert r.std_error_max < plain.std_error_max
    assert r.design["largest_group"] == 60 and 1 <= r.design["largest_group_blocks"] < 60
    assert "--enforce 0.8,0.2" in r.command and f"--p {r.p!r}" in r.command
    # the audit after enforcement at that p passes every group; the plain audit does not
    with rwn_sql.audit(con, "t", "s", r.p, 0.8, 0.2, public=["g"], enforce=True, max_top_share=1) as a:
        assert a.failing_groups == 0
    with rwn_sql.audit(con, "t", "s", r.p, 0.8, 0.2, public=["g"], max_top_share=1) as a:
        assert a.failing_groups == 1
    assert "reconstruction privacy, enforced: p = " in r.summary()
    assert "the best without enforcement: p = " in r.summary()


def test_refusal_says_enforcement_was_searched(con, monkeypatch):
    """Neither a plain nor an enforced p (the searches stubbed: such data are rare and slow to
    build): the refusal offers suppression with enforcement, not enforcement again."""
    _table(con, "t", {"x": (4, 56)})
    monkeypatch.setattr(rec, "_search", lambda *a: (None, None))
    with pytest.raises(RWNError, match="recommend --enforce searches it"):
        rwn_sql.recommend(con, "t", "s", 0.8, 0.2, method="rp", public=["g"], max_top_share=1)
    monkeypatch.setattr(rec, "_enforced_search", lambda *a, **k: rec._Enforced(None, None, np.inf, 0, 0, 99))
    with pytest.raises(RWNError, match="enforcement was searched too: .* --suppress-small"):
        rwn_sql.recommend(con, "t", "s", 0.8, 0.2, method="rp", public=["g"], max_top_share=1, enforce=True)


def test_plain_kept_when_enforcement_costs_more(con):
    """Adult by sex at (0.5, 0.1): the two groups (10,771 and 21,790 records) would move in blocks
    of thousands, so the small plain p wins."""
    con.execute(f"CREATE TABLE t AS SELECT sex AS g, occupation AS s FROM read_csv('{ADULT}')")
    plain = rwn_sql.recommend(con, "t", "s", 0.5, 0.1, method="rp", public=["g"], max_top_share=1)
    r = rwn_sql.recommend(con, "t", "s", 0.5, 0.1, method="rp", public=["g"], max_top_share=1, enforce=True)
    assert not r.enforced and r.p == plain.p and r.std_error_max == plain.std_error_max
    assert "--enforce" not in r.command
    assert any(x.startswith("enforcement considered: no enforced p") for x in r.notes)


def test_enforce_must_be_a_bool(con):
    _table(con, "t", {"x": (3, 3)})
    with pytest.raises(RWNError, match="enforce must be True or False"):
        rwn_sql.recommend(con, "t", "s", 0.5, 0.1, method="rp", public=["g"], enforce=(0.5, 0.1))


def test_cli_enforce_flag(tmp_path, capsys):
    from rwn_sql.cli.main import main
    path = tmp_path / "t.csv"
    path.write_text("g,s\n" + "".join(f"x,{'a' if i < 4 else 'b'}\n" for i in range(60)))
    assert main(["recommend", str(path), "--sensitive", "s", "--epsilon", "0.8", "--delta", "0.2", "--public", "g",
                 "--max-top-share", "1", "--enforce", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["enforced"] is True and "--enforce 0.8,0.2" in out["command"]
    assert main(["recommend", str(path), "--columns", "g", "--enforce", "--max-linkage", "0.1"]) == 2
    assert "--enforce is an option of the reconstruction-privacy recommendation" in capsys.readouterr().err
