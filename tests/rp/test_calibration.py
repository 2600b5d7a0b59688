"""The retention p from a rho1-to-rho2 or local-DP budget (rwn_sql.calibrate_p, rwn-sql calibrate):
the published examples, exact rationals, and the privacy definitions themselves checked at the
p returned (it meets them) and one step of the last decimal above it (it does not)."""
import itertools
import json
import math
from fractions import Fraction

import duckdb
import numpy as np
import pytest

import rwn_sql
from rwn_sql import RWNError
from rwn_sql.cli.main import main
from rwn_sql.rp.core.calibration import DIGITS
from helpers.data import ADULT

STEP = Fraction(1, 10**DIGITS)


def channel(p: Fraction, m: int) -> tuple[Fraction, Fraction]:
    """P[y = x | x] and P[y = y' | x] for y' != x: keep with p, else a uniform draw of all m values."""
    return p + (1 - p) / m, (1 - p) / m


def worst_posterior(p: Fraction, m: int, rho1: Fraction) -> Fraction:
    """The largest posterior P[X in Q | Y = y] over priors with P[X in Q] = rho1 and properties Q,
    searched directly: Q a set of k values (k < m), the prior's mass on Q and off it put on one
    value or spread evenly (the posterior is linear in the prior within each part, so the
    extremes are at these corners), y any value."""
    a, b = channel(p, m)
    best = Fraction(0)
    for k in range(1, m):
        for inside in ("one", "even"):
            for outside in ("one", "even"):
                prior = [Fraction(0)] * m
                if inside == "one":
                    prior[0] = rho1
                else:
                    prior[:k] = [rho1 / k] * k
                if outside == "one":
                    prior[k] = 1 - rho1
                else:
                    prior[k:] = [(1 - rho1) / (m - k)] * (m - k)
                for y in range(m):
                    like = [a if x == y else b for x in range(m)]
                    joint = [pr * li for pr, li in zip(prior, like)]
                    best = max(best, sum(joint[:k]) / sum(joint))
    return best


def test_the_published_examples():
    c = rwn_sql.calibrate_p(10, rho=(0.05, 0.5))
    assert c.exact == "9/14" and c.strict and c.p == 0.642857 and c.bound == 9 / 14
    c = rwn_sql.calibrate_p(15, rho=(0.2, 0.8))        # the reconstruction paper's rho1-rho2 setting
    assert c.exact == "1/2" and c.p == 0.499999        # strict: p = 1/2 gives a worst posterior of exactly 0.8
    assert worst_posterior(Fraction(1, 2), 15, Fraction(1, 5)) == Fraction(4, 5)


@pytest.mark.parametrize("rho1,rho2,m", [(0.05, 0.5, 10), (0.2, 0.8, 15), (0.1, 0.3, 3), (0.01, 0.99, 2),
                                         (0.3, 0.4, 5)])
def test_rho_bound_is_the_definition(rho1, rho2, m):
    c = rwn_sql.calibrate_p(m, rho=(rho1, rho2))
    r1, r2 = Fraction(str(rho1)), Fraction(str(rho2))
    p = Fraction(str(c.p))
    assert worst_posterior(p, m, r1) < r2                    # the p returned meets rho1-to-rho2
    assert worst_posterior(p + STEP, m, r1) >= r2            # and is the largest at DIGITS decimals
    assert Fraction(c.exact) == (r2 - r1) / (r2 - r1 + m * r1 * (1 - r2))


@pytest.mark.parametrize("lam,m", [(0.1, 2), (1.0, 15), (math.log(3), 2), (2.5, 100), (8.0, 7)])
def test_ldp_bound_is_the_definition(lam, m):
    c = rwn_sql.calibrate_p(m, ldp=lam)
    limit = math.exp(lam)

    def ratio(p: float) -> float:        # the largest P[y | x] / P[y | x'] of the channel
        a, b = channel(Fraction(str(p)), m)
        return float(a / b)
    assert ratio(c.p) <= limit * (1 + 1e-12) and not c.strict
    assert ratio(c.p + 10.0**-DIGITS) > limit
    assert c.gamma == pytest.approx(ratio(c.p), rel=1e-12)


def test_ldp_log3_with_two_values_is_the_classic_randomized_response():
    # m = 2, e^lambda = 3: keep with p = 1/2, so the truth is reported with probability 3/4
    assert rwn_sql.calibrate_p(2, ldp=math.log(3)).bound == pytest.approx(0.5, abs=1e-15)


@pytest.mark.parametrize("kwargs,message", [
    (dict(m=1, rho=(0.1, 0.5)), r"m \(the number of domain values\) must be an integer >= 2, got 1"),
    (dict(m=True, ldp=1.0), "must be an integer >= 2, got True"),
    (dict(m=10.0, ldp=1.0), "must be an integer >= 2, got 10.0"),
    (dict(m=10), "give exactly one budget"),
    (dict(m=10, rho=(0.1, 0.5), ldp=1.0), "give exactly one budget"),
    (dict(m=10, rho=(0.5, 0.1)), "rho1 must be smaller than rho2"),
    (dict(m=10, rho=(0.0, 0.5)), r"rho1 must be a number in \(0, 1\), got 0.0"),
    (dict(m=10, rho=(0.1, float("nan"))), r"rho2 must be a number in \(0, 1\), got nan"),
    (dict(m=10, rho=0.5), r"rho must be a pair \(rho1, rho2\)"),
    (dict(m=10, rho="0.1,0.5"), "rho must be a pair"),
    (dict(m=10, ldp=0), r"ldp \(lambda\) must be a finite number > 0, got 0"),
    (dict(m=10, ldp=float("inf")), "must be a finite number > 0, got inf"),
    (dict(m=10**9, ldp=1e-9), "no p of 6 decimals works"),
])
def test_bad_budgets_are_named(kwargs, message):
    with pytest.raises(RWNError, match=message):
        rwn_sql.calibrate_p(**kwargs)


def test_the_command_line(capsys):
    assert main(["calibrate", "--m", "10", "--rho", "0.05,0.5"]) == 0
    text = capsys.readouterr().out
    assert "p < 0.6428571429 = 9/14" in text and "p used = 0.642857" in text
    assert main(["calibrate", "--m", "15", "--ldp", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["budget"] == "ldp" and out["p"] == rwn_sql.calibrate_p(15, ldp=1.0).p and out["strict"] is False
    assert main(["calibrate", "--m", "10", "--rho", "0.5,0.05"]) == 2
    assert "rho1 must be smaller than rho2" in capsys.readouterr().err


def test_the_bounds_fall_with_the_domain():
    ms = [2, 3, 5, 10, 50, 1000]
    for budget in (dict(rho=(0.05, 0.5)), dict(ldp=1.0)):
        ps = [rwn_sql.calibrate_p(m, **budget).p for m in ms]
        assert all(np.diff(ps) < 0)
    assert all(rwn_sql.calibrate_p(10, rho=(r1, r2)).p < rwn_sql.calibrate_p(10, rho=(r1, r3)).p
               for r1, r2, r3 in itertools.product([0.05, 0.1], [0.3], [0.6]))


def test_p_from_on_the_command_line_is_calibrated_for_the_domain_and_recorded(tmp_path, capsys):
    m = 15                                   # Adult's occupations (the values present)
    expected = rwn_sql.calibrate_p(m, rho=(0.2, 0.8))
    release = tmp_path / "r.duckdb"
    assert main(["release", str(ADULT), str(release), "--sensitive", "occupation", "--p-from", "rho:0.2,0.8",
                 "--public", "sex,race", "--seed", "3", "--l-diversity", "1"]) == 0
    assert f"--p-from {expected.describe()}" in capsys.readouterr().err
    with duckdb.connect(str(release), read_only=True) as con:
        p, recorded = con.execute("SELECT p, p_calibration FROM rwn_release_metadata").fetchone()
    assert p == expected.p == 0.499999 and recorded == expected.describe()
    assert rwn_sql.estimates(duckdb.connect(), f"{release}:adult", "occupation").fetchall()   # the release reads
    assert main(["audit", str(ADULT), "--sensitive", "occupation", "--p-from", "ldp:1.0", "--public", "sex,race",
                 "--epsilon", "0.5", "--delta", "0.1"]) in (0, 1)
    assert f"p = {rwn_sql.calibrate_p(m, ldp=1.0).p}," in capsys.readouterr().out
    domain = tmp_path / "domain.txt"         # a given domain of more values: calibrated for its m
    domain.write_text("\n".join(duckdb.connect().execute(
        f"SELECT DISTINCT occupation FROM read_csv('{ADULT}') ORDER BY 1").fetchnumpy()["occupation"].tolist()
                                + ["Astronaut"]) + "\n")
    out = tmp_path / "o.parquet"
    assert main(["randomize", str(ADULT), str(out), "--sensitive", "occupation", "--p-from", "rho:0.2,0.8",
                 "--public", "sex,race", "--seed", "3", "--domain-file", str(domain)]) == 0
    assert f"p = {rwn_sql.calibrate_p(16, rho=(0.2, 0.8)).p} in" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["randomize", str(ADULT), str(out), "--sensitive", "occupation", "--p-from", "rho:0.2", "--seed", "3"])
    assert exit_.value.code == 2
    assert "expected rho:RHO1,RHO2 or ldp:LAMBDA" in capsys.readouterr().err


def test_a_calibration_for_another_domain_size_is_refused():
    con = duckdb.connect()
    con.execute(f"CREATE TABLE adult AS SELECT sex, race, occupation FROM read_csv('{ADULT}')")
    with pytest.raises(RWNError, match="calibrated for m = 10 domain values, but the domain has 15"):
        rwn_sql.randomize(con, "adult", "occupation", rwn_sql.calibrate_p(10, ldp=1.0), seed=1)
    with pytest.raises(RWNError, match="calibrated for m = 10 domain values, but the domain has 15"):
        rwn_sql.audit(con, "adult", "occupation", rwn_sql.calibrate_p(10, ldp=1.0), 0.5, 0.1)
    rows = rwn_sql.randomize(con, "adult", "occupation", rwn_sql.calibrate_p(15, ldp=1.0), seed=1,
                             public=["sex"]).fetchall()
    assert rows == rwn_sql.randomize(con, "adult", "occupation", rwn_sql.calibrate_p(15, ldp=1.0).p, seed=1,
                                     public=["sex"]).fetchall()
