"""The reconstruction-privacy recommendation (rwn_sql.recommendation.rp.recommend_retention): the
recommended p passes rwn_sql.audit for every personal group, every larger p on the grid fails
(or a budget or the grid's top binds), the rho/ldp cap is calibrate_p's p, the one-way standard
error agrees with a Monte Carlo of the mechanism, a refusal names the failing groups and targets
that do work, and the release command is the CLI's own."""
import json
import re
import shlex

import duckdb
import numpy as np
import pytest

import rwn_sql
from rwn_sql import RWNError
from rwn_sql.cli.main import main
from rwn_sql.cli.parser import parse_arguments
from rwn_sql.rp.core import privacy
from rwn_sql.recommendation.rp import GRID, one_way_std_error, recommend_retention

from helpers.data import ADULT

PUBLIC = ["sex", "race", "relationship"]
M = 15                                  # occupation's values in the first 3000 records


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """The first 3000 Adult records (public sex, race, relationship; sensitive occupation), as a
    table and as a CSV file (what the CLI reads)."""
    c = duckdb.connect()
    c.execute(f"CREATE TABLE a3 AS SELECT sex, race, relationship, occupation FROM read_csv('{ADULT}') "
              f"LIMIT 3000").fetchall()
    path = tmp_path_factory.mktemp("rec") / "a3.csv"
    c.execute(f"COPY a3 TO '{path}' (HEADER)").fetchall()
    assert c.execute("SELECT count(DISTINCT occupation) FROM a3").fetchone()[0] == M
    yield c, str(path)
    c.close()


def failing(con, p, eps, delta, **kw) -> int:
    with rwn_sql.audit(con, "a3", "occupation", p, eps, delta, public=PUBLIC, **kw) as result:
        return result.failing_groups


def cases(con):
    """The distinct (group size, value count) pairs, computed here independently."""
    rows = con.execute(f"""SELECT DISTINCT sum(k) OVER (PARTITION BY {', '.join(PUBLIC)}), k FROM (
        SELECT {', '.join(PUBLIC)}, occupation, count(*) AS k FROM a3 GROUP BY ALL)""").fetchall()
    return np.array([r[0] for r in rows], dtype=np.int64), np.array([r[1] for r in rows], dtype=np.int64)


@pytest.mark.parametrize("eps, delta", [(0.5, 0.05), (0.3, 0.1), (0.2, 0.2)])
def test_largest_grid_p_passes_the_audit_and_no_larger_one_does(db, eps, delta):
    con, _ = db
    r = recommend_retention(con, "a3", "occupation", eps, delta, public=PUBLIC)
    assert r.binding == "reconstruction" and r.m == M and r.test == "exact"
    assert round(r.p * GRID) == r.p * GRID and r.next_p == pytest.approx(r.p + 1 / GRID)
    assert failing(con, r.p, eps, delta) == 0
    assert failing(con, r.next_p, eps, delta) == r.next_failing_groups > 0
    assert delta <= r.min_tail
    # every larger grid p fails (exact tails over the cases, independently of the search)
    n, c = cases(con)
    for k in range(round(r.p * GRID) + 1, GRID):
        upper, lower = privacy.exact_tails_many(n, c, k / GRID, M, eps)
        assert (np.minimum(upper, lower) < delta).any(), k / GRID
    assert r.hardest["group_size"] >= r.hardest["value_count"] and r.hardest["tail"] < delta
    assert (r.groups, r.records) == (47, 3000) and r.smallest_group == 1


def test_passing_is_not_monotone_in_p(db):
    """(0.2, 0.2): a record alone in its group keeps its value in the release with probability
    p + (1-p)/m only, below delta at small p: p = 0.1 fails, the recommended (larger) p passes."""
    con, _ = db
    r = recommend_retention(con, "a3", "occupation", 0.2, 0.2, public=PUBLIC)
    assert r.p > 0.15 and failing(con, r.p, 0.2, 0.2) == 0
    assert failing(con, 0.1, 0.2, 0.2) > 0


def test_ldp_cap_binds_with_calibrate_p(db):
    con, path = db
    cap = rwn_sql.calibrate_p(M, ldp=0.3)
    r = recommend_retention(con, path, "occupation", 0.5, 0.05, public=PUBLIC, ldp=0.3)
    assert r.binding == "ldp" and r.p == r.cap == cap.p and r.next_p is None
    assert r.calibration == cap.describe()
    assert failing(con, r.p, 0.5, 0.05) == 0
    args = parse_arguments(shlex.split(r.command)[1:])
    assert args.p is None and args.p_from == {"ldp": 0.3}
    assert rwn_sql.calibrate_p(M, **args.p_from).p == r.p


def test_rho_cap_above_the_answer(db):
    con, _ = db
    plain = recommend_retention(con, "a3", "occupation", 0.5, 0.05, public=PUBLIC)
    r = recommend_retention(con, "a3", "occupation", 0.5, 0.05, public=PUBLIC, rho=(0.05, 0.2), ldp=5.0)
    assert r.cap == rwn_sql.calibrate_p(M, rho=(0.05, 0.2)).p > r.p == plain.p       # the tighter budget
    assert r.binding == "reconstruction" and "--p 0.15 " in r.command + " "


def test_grid_top(db):
    con, _ = db
    r = recommend_retention(con, "a3", "occupation", 1e-4, 1e-4, public=PUBLIC)
    assert r.p == 0.999 and r.binding == "grid" and r.next_p is None
    assert failing(con, 0.999, 1e-4, 1e-4) == 0


def test_std_error_against_a_monte_carlo_of_the_mechanism(db):
    """The reconstructed count (O* - n b)/p of each value over R releases drawn record by record
    (keep with p, else a uniform draw of the m values). The sample SD of R draws of a near-normal
    estimate has relative SD 1/sqrt(2(R-1)) (0.79 % at R = 8000): 4.5 of those, 3.6 %, over the
    15 values."""
    con, _ = db
    r = recommend_retention(con, "a3", "occupation", 0.5, 0.05, public=PUBLIC)
    values = sorted(r.std_error)
    codes = {v: i for i, v in enumerate(values)}
    data = np.array([codes[v] for v, in con.execute("SELECT occupation FROM a3").fetchall()])
    n, p, reps = len(data), r.p, 8000
    b = (1 - p) / M
    rng = np.random.default_rng(20261204)
    est = []
    for _ in range(reps // 1000):
        keep = rng.random((1000, n)) < p
        released = np.where(keep, data[None, :], rng.integers(0, M, (1000, n)))
        counts = np.stack([np.bincount(row, minlength=M) for row in released])
        est.append((counts - n * b) / p)
    sd = np.concatenate(est).std(axis=0, ddof=1)
    expected = np.array([r.std_error[v] for v in values])
    assert np.abs(sd / expected - 1).max() < 4.5 / np.sqrt(2 * (reps - 1))
    assert r.std_error_max == max(r.std_error.values()) <= r.std_error_bound
    # the binomial form n P(1-P)/p^2 adds the sampling variance n pi (1 - pi)
    k = int((data == 0).sum())
    pi, big_p = k / n, p * k / n + b
    assert one_way_std_error(k, n, p, M) ** 2 == pytest.approx(n * big_p * (1 - big_p) / p ** 2 - n * pi * (1 - pi))


def test_refusal_names_the_smallest_failing_groups_and_targets_that_work(db):
    con, _ = db
    with pytest.raises(RWNError) as err:
        recommend_retention(con, "a3", "occupation", 0.2, 0.3, public=PUBLIC)
    text = str(err.value)
    at, fails, groups = re.search(r"at p = ([0-9.]+), (\d+) of (\d+) groups fail", text).groups()
    assert int(fails) == failing(con, float(at), 0.2, 0.3) > 0 and int(groups) == 47
    with rwn_sql.audit(con, "a3", "occupation", float(at), 0.2, 0.3, public=PUBLIC) as a:
        smallest = con.execute(f"SELECT {', '.join(PUBLIC)}, group_size FROM ({a.groups_detail.sql_query()}) "
                               f"WHERE NOT passes ORDER BY group_size, {', '.join(PUBLIC)} LIMIT 1").fetchone()
    named = ", ".join(f"{c}={v!r}" for c, v in zip(PUBLIC, smallest))
    assert f"the smallest: the group ({named}) of {smallest[-1]} record" in text
    suggested = re.findall(r"at p = ([0-9.]+): delta = ([0-9.e-]+) with eps = 0.2", text)
    assert suggested
    for p, delta in suggested:
        assert failing(con, float(p), 0.2, float(delta)) == 0
    for p, eps in re.findall(r"eps = ([0-9.e-]+) with delta = 0.3", text):
        assert failing(con, float(p), float(eps), 0.3) == 0
    assert "--enforce" in text and "suppression" in text


def test_command_is_the_clis_and_runs(db, tmp_path):
    con, path = db
    key = tmp_path / "secret.key"
    key.write_text("a key of at least sixteen characters\n")
    out = tmp_path / "rel.duckdb"
    r = recommend_retention(con, path, "occupation", 0.5, 0.05, public=PUBLIC, max_top_share=1.0,
                            output=str(out), key_file=str(key))
    assert r.disclosure["ok"] and r.disclosure["max_top_share"] == 1.0
    args = parse_arguments(shlex.split(r.command)[1:])
    assert (args.command, args.input, args.output, args.sensitive, args.p, args.public, args.key_file,
            args.max_top_share) == ("release", path, str(out), "occupation", r.p, PUBLIC, str(key), 1.0)
    assert "sixteen" not in r.command + r.summary() + json.dumps(r.to_dict())
    assert main(shlex.split(r.command)[1:]) == 0
    with duckdb.connect(str(out), read_only=True) as rel:
        assert rel.execute("SELECT p FROM rwn_release_metadata").fetchone()[0] == r.p


def test_command_for_a_table_and_a_domain_list(db):
    con, _ = db
    domain = [v for v, in con.execute("SELECT DISTINCT occupation FROM a3 ORDER BY 1").fetchall()]
    r = recommend_retention(con, "a3", "occupation", 0.5, 0.05, public=PUBLIC, domain=domain, l_diversity=3)
    args = parse_arguments(shlex.split(r.command)[1:])
    assert args.input == "INPUT" and args.domain_file == "domain.txt" and args.l_diversity == 3
    assert any(x.startswith("INPUT") for x in r.notes) and any(x.startswith("domain.txt") for x in r.notes)
    assert r.disclosure["l_diversity"] == 3


def test_dict_and_summary(db):
    con, _ = db
    r = recommend_retention(con, "a3", "occupation", 0.5, 0.05, public=PUBLIC)
    d = json.loads(json.dumps(r.to_dict()))
    assert d["p"] == r.p and d["binding"] == "reconstruction" and d["command"] == r.command
    lines = r.summary().splitlines()
    assert lines[0].startswith(f"reconstruction privacy: p = {r.p:g}") and lines[-1].startswith("note:")
    assert not r.disclosure["ok"] and any("refuses" in x for x in r.notes)     # the default top-share limit


@pytest.mark.parametrize("kw, match", [(dict(epsilon=0, delta=0.1), "epsilon"), (dict(epsilon=0.5, delta=1), "delta"),
                                       (dict(epsilon=0.5, delta=0.1, ldp=-1), "ldp"),
                                       (dict(epsilon=0.5, delta=0.1, rho=(0.5, 0.2)), "rho1"),
                                       (dict(epsilon=0.5, delta=0.1, l_diversity=16), "l_diversity")])
def test_bad_input(db, kw, match):
    con, _ = db
    with pytest.raises(RWNError, match=match):
        recommend_retention(con, "a3", "occupation", public=PUBLIC, **kw)


def test_no_public_column(db):
    """public=[]: one personal group of every record; the CLI names no empty --public, so the
    command leaves it out (its default: every other column) and a note says so."""
    con, _ = db
    con.execute("CREATE OR REPLACE TABLE first300 AS SELECT occupation FROM a3 LIMIT 300").fetchall()
    r = recommend_retention(con, "first300", "occupation", 0.5, 0.05, public=[])
    assert (r.groups, r.smallest_group, r.binding) == (1, 300, "reconstruction")
    with rwn_sql.audit(con, "first300", "occupation", r.p, 0.5, 0.05, public=[]) as a:
        assert a.failing_groups == 0
    with rwn_sql.audit(con, "first300", "occupation", r.next_p, 0.5, 0.05, public=[]) as a:
        assert a.failing_groups == 1
    assert "--public" not in r.command and any(x.startswith("no public column") for x in r.notes)
