"""Exactly tied neighbours belong to the neighbourhood: the SQL's sets equal a brute force in
exact rational arithmetic (fractions.Fraction) on integer, half-integer, multi-column and
categorical data, where many distances tie exactly. bruteforce.py repeats the SQL's float
operations instead, so it cannot see ties that rounding breaks.

On these data two different exact squared distances differ by at least 1 / (product of the
squared ranges) relative to a value of at most (columns + categorical weights), far above the
tie tolerance (METHODS.md, "Exact ties"), so the sets must be equal, not just close."""
from fractions import Fraction

import numpy as np
import pytest

import rwn_sql
from helpers.data import load_numpy


def exact_neighborhoods(numeric, categorical=(), k=5, eps=0.0, weight=1.0, strata=None, scale="minmax"):
    """{record: set of neighbours} from exact squared distances: sum over numeric columns of
    ((v_i - v_j) / range)^2 plus weight^2 per categorical mismatch, ties at the radius included."""
    cols = [[Fraction(float(v)) for v in c] for c in numeric]
    scales = [(max(c) - min(c)) if scale == "minmax" else Fraction(1) for c in cols]
    w2 = Fraction(weight) ** 2
    n = len(cols[0]) if cols else len(categorical[0])
    out = {}
    for i in range(n):
        d2 = {}
        for j in range(n):
            if j == i or (strata is not None and strata[j] != strata[i]):
                continue
            d2[j] = sum(((c[i] - c[j]) / s) ** 2 for c, s in zip(cols, scales)) + \
                sum(w2 for c in categorical if c[i] != c[j])
        ranked = sorted(d2.values())
        radius2 = Fraction(eps) ** 2 if k == 0 else max(Fraction(eps) ** 2, ranked[k - 1])
        members = {j + 1 for j, d in d2.items() if d <= radius2}
        if members:
            out[i + 1] = members
    return out


def sql_sets(con, table, columns, **kw):
    out = {}
    for record, neighbor, _ in rwn_sql.neighborhoods(con, table, columns, pairs=True, **kw).fetchall():
        out.setdefault(record, set()).add(neighbor)
    return out


def test_issue_reproducer_every_interior_point_has_both_neighbours(con):
    con.execute("CREATE TABLE t AS SELECT range::INTEGER AS x FROM range(11)").fetchall()
    sizes = [size for _, size, _, _ in rwn_sql.neighborhoods(con, "t", ["x"], k=1).fetchall()]
    assert sizes == [1] + [2] * 9 + [1]
    assert sql_sets(con, "t", ["x"], k=1) == exact_neighborhoods([list(range(11))], k=1)


@pytest.mark.parametrize("k,eps", [(1, 0.0), (3, 0.0), (5, 0.0), (0, 0.25), (2, 0.1)])
def test_integer_column_equals_exact(con, k, eps):
    x = np.random.default_rng(k).integers(0, 40, 150)
    load_numpy(con, "ints", {"x": x})
    assert sql_sets(con, "ints", ["x"], k=k, eps=eps) == exact_neighborhoods([x], k=k, eps=eps)


@pytest.mark.parametrize("k,eps,scale", [(1, 0.0, "minmax"), (4, 0.0, "minmax"), (2, 0.3, "minmax"),
                                         (3, 0.0, "none"), (0, 1.5, "none")])
def test_half_integers_in_three_columns_equal_exact(con, k, eps, scale):
    rng = np.random.default_rng(10 + k)
    data = {"a": rng.integers(0, 13, 160) / 2, "b": rng.integers(-3, 4, 160) / 2, "c": rng.integers(0, 6, 160) * 1.5}
    load_numpy(con, "halves", data)
    got = sql_sets(con, "halves", list(data), k=k, eps=eps, scale=scale)
    assert got == exact_neighborhoods(list(data.values()), k=k, eps=eps, scale=scale)


@pytest.mark.parametrize("k,eps,weight", [(2, 0.0, 1.0), (5, 0.0, 0.5), (1, 0.4, 0.25)])
def test_numeric_and_categorical_distance_equal_exact(con, k, eps, weight):
    rng = np.random.default_rng(20 + k)
    data = {"x": rng.integers(0, 9, 140), "y": rng.integers(0, 5, 140),
            "colour": rng.choice(["red", "green"], 140), "size": rng.choice(["S", "M", "L"], 140)}
    load_numpy(con, "mixed", data)
    got = sql_sets(con, "mixed", list(data), k=k, eps=eps, weight=weight, categorical=["colour", "size"])
    want = exact_neighborhoods([data["x"], data["y"]], [data["colour"], data["size"]], k=k, eps=eps, weight=weight)
    assert got == want


def test_strata_with_ties_equal_exact(con):
    rng = np.random.default_rng(5)
    data = {"x": rng.integers(0, 7, 150), "y": rng.integers(0, 4, 150), "sex": rng.choice(["F", "M"], 150)}
    load_numpy(con, "people", data)
    got = sql_sets(con, "people", ["x", "y"], k=3, strata=["sex"])
    assert got == exact_neighborhoods([data["x"], data["y"]], k=3, strata=data["sex"])


def test_pythagorean_ties_that_rounding_breaks_are_kept(con):
    """Two columns with the same non-power-of-two range (12): scaled by 1/12, the squared
    distances from the centre (6, 6) to (9, 10), (10, 9), (11, 6), (6, 11) are all exactly
    25/144, but computed in floating point they differ in the last bits (3/12 and 4/12 are not
    exact). With k = 1 the centre's S must hold all four; the corners fix the range. Catches a
    tie tolerance of 0 (`return 0.0 * (terms + 4) * UNIT_ROUNDOFF` in geometry.tie_tolerance),
    under which the SQL keeps two of them; verified on that mutant (fails) and on the code."""
    x = [6, 9, 10, 11, 6, 0, 12, 0, 12]
    y = [6, 10, 9, 6, 11, 0, 12, 12, 0]
    load_numpy(con, "pyth", {"x": np.array(x, dtype=float), "y": np.array(y, dtype=float)})
    got = sql_sets(con, "pyth", ["x", "y"], k=1)
    assert got[1] == {2, 3, 4, 5}
    assert got == exact_neighborhoods([x, y], k=1)
