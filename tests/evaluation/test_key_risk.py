"""rwn_sql.key_variable_risk against a brute force in Python (collections.Counter over the rows),
and the individual-risk formula against values computed by hand from its definition."""
import math
import random
from collections import Counter, defaultdict

import duckdb
import pytest

import rwn_sql
from rwn_sql.evaluation.key_risk import key_risk_sql

ODD = 'a "b" c'            # a column named with a space and double quotes


def brute_force_risk(f, big_f):
    """The Benedetti-Franconi approximation (sdcMicro's indivRisk, method 'approx'), written
    independently of the SQL: p = f / F."""
    if big_f == f:
        return 1.0 / f
    p = f / big_f
    if f == 1:
        return p / (1 - p) * math.log(1 / p)
    if f == 2:
        return p / (1 - p) - (p / (1 - p)) ** 2 * math.log(1 / p)
    return p / (f - (1 - p))


def brute_force(rows, weights, ks):
    counts = Counter(rows)
    totals = defaultdict(float)
    for key, w in zip(rows, weights if weights is not None else [1.0] * len(rows)):
        totals[key] += w
    risks = [brute_force_risk(counts[key], totals[key]) for key in rows]
    return dict(
        rows=len(rows), cells=len(counts),
        k_anonymity=[{"k": k, "records": sum(c for c in counts.values() if c < k),
                      "cells": sum(1 for c in counts.values() if c < k)} for k in ks],
        sample_uniques=sum(1 for c in counts.values() if c == 1),
        expected_reidentifications=sum(risks), global_risk=sum(risks) / len(rows),
        max_individual_risk=max(risks))


def make_table(con, rng, n, weighted):
    data = []
    for _ in range(n):
        a = rng.choice([1, 2, 3, None])
        b = rng.choice(["x", "y", None, "it's"])
        c = rng.choice([0.5, 1.5, None])
        w = rng.choice([1.0, 1.0, 2.5, 7.0, 100.0, 1.25]) if weighted else None
        data.append((a, b, c, w))
    con.execute(f'CREATE OR REPLACE TABLE t (a INTEGER, "{ODD.replace(chr(34), chr(34) * 2)}" VARCHAR, '
                f'c DOUBLE, "the weight" DOUBLE)')
    if data:
        con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", data)
    return data


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_matches_a_brute_force(seed, weighted):
    rng = random.Random(seed * 2 + weighted)
    con = duckdb.connect()
    data = make_table(con, rng, rng.randint(1, 60), weighted)
    for keys, index in ((["a"], [0]), (["a", ODD], [0, 1]), ([ODD, "c", "a"], [1, 2, 0])):
        ks = (2, 3, 5) if seed % 2 else (4, 2)
        got = rwn_sql.key_variable_risk(con, "t", keys, weight="the weight" if weighted else None, ks=ks)
        rows = [tuple(r[i] for i in index) for r in data]         # None is a value of its own
        want = brute_force(rows, [r[3] for r in data] if weighted else None, ks)
        got = got.to_dict()
        assert got["keys"] == keys and got["weight"] == ("the weight" if weighted else None)
        for name in ("rows", "cells", "k_anonymity", "sample_uniques"):
            assert got[name] == want[name], name
        for name in ("expected_reidentifications", "global_risk", "max_individual_risk"):
            assert got[name] == pytest.approx(want[name], rel=1e-12), name
        if not weighted:
            assert got["expected_reidentifications"] == pytest.approx(got["cells"], rel=1e-12)   # sum of 1/f_k


def test_individual_risk_by_hand():
    """Cells (sex, age) with weights; p = f / F and the formula's cases, evaluated by hand:
    * ('F', 30): f = 1, F = 4, p = 1/4: r = (1/4)/(3/4) * ln 4 = ln(4) / 3 = 0.46209812...
    * ('M', 30): f = 2, F = 2 + 2 = 4, p = 1/2: r = 1 - 1 * ln 2 = 0.30685281...
    * ('M', 40): f = 4, F = 4 * 2.5 = 10, p = 2/5: r = 0.4 / (4 - 0.6) = 0.4 / 3.4 = 0.11764705...
    * ('F', 50): f = 3, weights 1: F = f, r = 1/3 (no sampling: 1 / f)
    Sum over the 10 records: ln(4)/3 + 2 (1 - ln 2) + 4 (2/17) + 3 (1/3)."""
    con = duckdb.connect()
    con.execute("CREATE TABLE p (sex VARCHAR, age INTEGER, w DECIMAL(6, 2))")
    con.executemany("INSERT INTO p VALUES (?, ?, ?)",
                    [("F", 30, 4), ("M", 30, 1), ("M", 30, 3)] + [("M", 40, 2.5)] * 4 + [("F", 50, 1)] * 3)
    kr = rwn_sql.key_variable_risk(con, "p", ["sex", "age"], weight="w")
    r1, r2, r4, r3 = math.log(4) / 3, 1 - math.log(2), 0.4 / 3.4, 1 / 3
    assert r1 == pytest.approx(0.46209812, abs=1e-8) and r2 == pytest.approx(0.30685282, abs=1e-8)
    assert kr.expected_reidentifications == pytest.approx(r1 + 2 * r2 + 4 * r4 + 3 * r3, rel=1e-12)
    assert kr.global_risk == pytest.approx((r1 + 2 * r2 + 4 * r4 + 3 * r3) / 10, rel=1e-12)
    assert kr.max_individual_risk == pytest.approx(r1, rel=1e-12)
    assert (kr.rows, kr.cells, kr.sample_uniques) == (10, 4, 1)
    assert [(v.k, v.records, v.cells) for v in kr.k_anonymity] == [(2, 1, 1), (3, 3, 2), (5, 10, 4)]
    # without weights F = f: r = 1/f, the expected re-identifications are the number of cells
    plain = rwn_sql.key_variable_risk(con, "p", ["sex", "age"])
    assert plain.expected_reidentifications == pytest.approx(4.0) and plain.max_individual_risk == 1.0


def test_nulls_are_a_value_of_their_own():
    con = duckdb.connect()
    con.execute("CREATE TABLE n AS SELECT * FROM (VALUES (NULL, 'x'), (NULL, 'x'), (1, NULL), (1, 'x')) v(a, b)")
    kr = rwn_sql.key_variable_risk(con, "n", ["a", "b"])
    assert (kr.cells, kr.sample_uniques, kr.k_anonymity[0].records) == (3, 2, 2)


def test_sources_and_the_pure_builder(tmp_path):
    con = duckdb.connect()
    path = tmp_path / "k.csv"
    path.write_text("sex,age\nF,1\nF,1\nM,2\n", encoding="utf-8")
    kr = rwn_sql.key_variable_risk(con, str(path), ["sex", "age"], ks=[2])
    assert (kr.rows, kr.cells, kr.sample_uniques, kr.k_anonymity[0].records) == (3, 2, 1, 1)
    sql = key_risk_sql("tbl", ['x"y'], weight="w w")
    assert '"x""y"' in sql and '"w w"' in sql


@pytest.mark.parametrize("keys, weight, ks, message", [
    (["nope"], None, (2,), "keys: column 'nope' is not in"),
    ([], None, (2,), "keys is empty"),
    ("sex", None, (2,), "keys must be a list"),
    (["sex", "sex"], None, (2,), "names a column twice"),
    (["sex"], "label", (2,), "weight: column 'label' has type VARCHAR"),
    (["sex"], "missing_w", (2,), "weight: column 'missing_w' is not in"),
    (["sex"], "sex", (2,), "weight must be the name of a column that is not a key"),
    (["sex"], None, (1,), "ks must be integers >= 2"),
    (["sex"], None, (), "ks must be a non-empty list"),
    (["sex"], None, (2, 2), "names a k twice"),
])
def test_bad_arguments(keys, weight, ks, message):
    con = duckdb.connect()
    con.execute("CREATE TABLE e AS SELECT 'F' AS sex, 'x' AS label, 1.0 AS w")
    with pytest.raises(rwn_sql.RWNError, match=message):
        rwn_sql.key_variable_risk(con, "e", keys, weight=weight, ks=ks)


@pytest.mark.parametrize("values, message", [
    ([1.0, None], "holds 1 NULL value"),
    ([1.0, float("nan")], "NaN or infinite"),
    ([1.0, float("inf")], "NaN or infinite"),
    ([2.0, 0.0], "must be >= 1"),
    ([2.0, -3.0], "must be >= 1"),
    ([2.0, 0.5], "must be >= 1"),
])
def test_bad_weights(values, message):
    con = duckdb.connect()
    con.execute("CREATE TABLE w (k INTEGER, w DOUBLE)")
    con.executemany("INSERT INTO w VALUES (?, ?)", [(i, v) for i, v in enumerate(values)])
    with pytest.raises(rwn_sql.RWNError, match=message):
        rwn_sql.key_variable_risk(con, "w", ["k"], weight="w")


def test_empty_table():
    con = duckdb.connect()
    con.execute("CREATE TABLE z (k INTEGER, w DOUBLE)")
    for weight in (None, "w"):
        with pytest.raises(rwn_sql.RWNError, match="has no rows"):
            rwn_sql.key_variable_risk(con, "z", ["k"], weight=weight)


def _original_and_release(con):
    rng = random.Random(3)
    rows = [(rng.choice("FM"), rng.randint(20, 30), rng.gauss(50, 10), rng.choice([1.0, 2.5, 4.0]))
            for _ in range(60)]
    con.execute("CREATE TABLE o (sex VARCHAR, age INTEGER, income DOUBLE, w DOUBLE)")
    con.executemany("INSERT INTO o VALUES (?, ?, ?, ?)", rows)
    con.execute("CREATE TABLE r AS SELECT sex, age + (rowid % 3 = 0)::INTEGER AS age, income + 1 AS income, w "
                "FROM o ORDER BY rowid")


def test_evaluate_with_keys_is_the_release_key_risk():
    con = duckdb.connect()
    _original_and_release(con)
    plain = rwn_sql.evaluate(con, "o", "r", ["income"], order="input")
    assert plain.key_risk is None and plain.to_dict()["key_risk"] is None
    for weight in (None, "w"):
        ev = rwn_sql.evaluate(con, "o", "r", ["income"], order="input", keys=["sex", "age"], weight=weight)
        assert ev.key_risk == rwn_sql.key_variable_risk(con, "r", ["sex", "age"], weight=weight)
        assert ev.key_risk != rwn_sql.key_variable_risk(con, "o", ["sex", "age"], weight=weight)
        assert ev.to_dict()["key_risk"] == ev.key_risk.to_dict()
        assert ev.risk == plain.risk and ev.utility == plain.utility
    with pytest.raises(rwn_sql.RWNError, match="keys: column 'nope' is not in"):
        rwn_sql.evaluate(con, "o", "r", ["income"], order="input", keys=["sex", "nope"])
    with pytest.raises(rwn_sql.RWNError, match="give keys="):
        rwn_sql.evaluate(con, "o", "r", ["income"], order="input", weight="w")


def test_evaluate_command_with_keys(tmp_path):
    import json
    import subprocess
    import sys
    con = duckdb.connect()
    _original_and_release(con)
    o, r, out = tmp_path / "o.csv", tmp_path / "r.csv", tmp_path / "m.json"
    con.execute(f"COPY o TO '{o}' (HEADER)")
    con.execute(f"COPY (SELECT * FROM r ORDER BY rowid) TO '{r}' (HEADER)")
    res = subprocess.run([sys.executable, "-m", "rwn_sql.cli", "evaluate", str(o), str(r), "--columns", "income",
                          "--input-order", "--keys", "sex,age", "--weight", "w", "--json", str(out)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "key-variable risk of the release (sex, age; weights w)" in res.stdout
    assert "sample uniques" in res.stdout
    measures = json.loads(out.read_text())
    direct = rwn_sql.key_variable_risk(duckdb.connect(), str(r), ["sex", "age"], weight="w").to_dict()
    assert measures["key_risk"] == direct
