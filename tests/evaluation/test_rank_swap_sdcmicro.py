"""Rank swapping's variant "sdcmicro" (issue 27): sdcMicro's rankSwap rule (its C++ RankSwap) with
our keyed draws. A worked example checked by hand, the release against a straightforward
pure-Python implementation of the rule driven by the same keyed draws (randomness.keyed_bits
mirrors the SQL hash), its properties, bad input, the command line and tune."""
import subprocess
import sys
from fractions import Fraction

import duckdb
import numpy as np
import pytest

import rwn_sql
from helpers.data import BODYFAT, load_numpy, tied_data
from rwn_sql import RWNError
from rwn_sql.evaluation import baselines, rank_swapping, tune
from rwn_sql.randomness import keyed_bits

KEY = "sdcmicro-variant-key-0123456789"
COLS = ["Age", "Weight", "Height"]


def reference(values, key: str, column: str, p, top=5, bottom=5) -> list[float]:
    """sdcMicro's RankSwap on one column, written out plainly: sort from the highest value (ties:
    the keyed tie-break, then position, both descending), replace the t = floor(n top / 100)
    highest by their mean and the b = floor(n bottom / 100) lowest by theirs, then walk the m
    others from the highest: a free position j swaps with a free k, j < k < min(m, j + floor(m P
    / 100)), the (floor(u c / 2^52) + 1)-th of the c free ones (u: the keyed pick of j's record)."""
    n = len(values)
    draws = [keyed_bits(key, "rwn.rank_swap", rid, column) for rid in range(1, n + 1)]
    order = sorted(range(n), key=lambda i: (values[i], draws[i][0], i), reverse=True)
    t, b = int(n * Fraction(str(top)) / 100), int(n * Fraction(str(bottom)) / 100)
    out = [float(v) for v in values]
    for group in (order[:t], order[n - b:]):
        total = 0.0
        for g in group:                 # one by one from the highest, as sdcMicro sums
            total += float(values[g])
        for i in group:
            out[i] = total / len(group)
    middle = order[t:n - b]
    m = len(middle)
    swapped = [False] * m
    for j in range(m):
        if swapped[j]:
            continue
        r = min(m, j + int(Fraction(m * p, 100)))
        free = [k for k in range(j + 1, r) if not swapped[k]]
        if free:
            k = free[(draws[middle[j]][1] * len(free)) >> 52]
            a, c = middle[j], middle[k]
            out[a], out[c] = float(values[c]), float(values[a])
            swapped[j] = swapped[k] = True
    return out


def column_of(rel, name):
    return [row[0] for row in rel.project(f'"{name}"').fetchall()]


def test_worked_example_by_hand(con):
    """20 records holding 1..20 (distinct, so rank distance = value distance), top 10 %, bottom
    15 %, P = 40: t = 2 (20 and 19 become 19.5), b = 3 (1, 2 and 3 become 2), m = 15 swapped
    values 4..18 with partners k of j in j < k < j + floor(15 * 0.4) = j + 6: at most 5 apart."""
    values = [(7 * i) % 20 + 1 for i in range(20)]           # a permutation of 1..20
    load_numpy(con, "t", {"x": np.array(values, dtype=np.int64), "other": np.arange(20)})
    rel = rwn_sql.rank_swap(con, "t", ["x"], 40, key=KEY, variant="sdcmicro", top_percent=10, bottom_percent=15)
    assert [d[1] for d in rel.description] == ["DOUBLE", "BIGINT"]     # x released as DOUBLE; other kept
    assert column_of(rel, "other") == list(range(20))
    out = column_of(rel, "x")
    for v, o in zip(values, out):
        if v >= 19:
            assert o == 19.5
        elif v <= 3:
            assert o == 2.0
        else:
            assert 4 <= o <= 18 and abs(o - v) <= 5
    middle = sorted(o for v, o in zip(values, out) if 4 <= v <= 18)
    assert middle == list(range(4, 19))                        # a permutation of the middle values
    assert out == reference(values, KEY, "x", 40, top=10, bottom=15)
    assert sum(o != v for v, o in zip(values, out) if 4 <= v <= 18) >= 10      # most of them swapped
    donors = rwn_sql.evaluation.baselines.rank_swap_donors(con, "t", ["x"], 40, key=KEY, variant="sdcmicro",
                                                           top_percent=10, bottom_percent=15)["x"]
    assert [int(d) for d, v in zip(donors, values) if v >= 19] == [0, 0]
    assert [int(d) for d, v in zip(donors, values) if v <= 3] == [-1, -1, -1]
    assert all(out[i] == values[d - 1] for i, d in enumerate(donors) if d > 0)


@pytest.mark.parametrize("p, top, bottom", [(12, 5, 5), (30, 5, 5), (54, 5, 5), (100, 0, 0), (1, 5, 5),
                                            (25, 0, 20), (25, 12.5, 0)])
def test_release_equals_the_reference(con, p, top, bottom):
    """Bodyfat (ties in Age and Height) against the plain implementation, every column."""
    con.execute(f"CREATE TABLE bf AS SELECT * FROM read_csv('{BODYFAT}')").fetchall()
    cols = ["Age", "Height", "Abdomen", "BodyFat"]
    rel = rwn_sql.rank_swap(con, "bf", cols, p, key=KEY, variant="sdcmicro", top_percent=top, bottom_percent=bottom)
    for c in cols:
        values = column_of(con.table("bf"), c)
        assert column_of(rel, c) == reference(values, KEY, c, p, top, bottom), c


def test_properties_on_tied_data(con):
    """Lattice data with many ties, 3 replicates: outside the top and bottom groups the released
    values are a permutation of the middle values, every donor lies in the window, and replicate
    r equals the release with the key key#r."""
    n, p = 300, 20
    data = tied_data(n, 4)
    load_numpy(con, "t", data)
    cols = list(data)
    rel = rwn_sql.rank_swap(con, "t", cols, p, key=KEY, reps=3, variant="sdcmicro")
    rows = rel.fetchall()
    assert [r[0] for r in rows] == [r for r in range(3) for _ in range(n)]
    donors = baselines.rank_swap_donors(con, "t", cols, p, key=KEY, reps=3, variant="sdcmicro")
    t = b = n * 5 // 100
    m = n - t - b
    reach = m * p // 100 - 1
    for r in range(3):
        single = rwn_sql.rank_swap(con, "t", cols, p, key=f"{KEY}#{r}", variant="sdcmicro").fetchall()
        assert [row[1:] for row in rows[r * n:(r + 1) * n]] == single
        for ci, c in enumerate(cols):
            values = data[c]
            draws = [keyed_bits(f"{KEY}#{r}", "rwn.rank_swap", rid, c) for rid in range(1, n + 1)]
            order = sorted(range(n), key=lambda i: (values[i], draws[i][0], i), reverse=True)
            rank = {rec: pos for pos, rec in enumerate(order)}
            d = donors[c][r]
            assert sorted(rank[i] for i in range(n) if d[i] == 0) == list(range(t))
            assert sorted(rank[i] for i in range(n) if d[i] == -1) == list(range(n - b, n))
            mid = [i for i in range(n) if d[i] > 0]
            assert sorted(single[i][ci] for i in mid) == sorted(float(values[i]) for i in order[t:n - b])
            assert sorted(d[i] - 1 for i in mid) == sorted(mid)            # the donors: a permutation
            assert all(abs(rank[d[i] - 1] - rank[i]) <= reach for i in mid)
            assert all(d[d[i] - 1] == i + 1 for i in mid)                   # swaps: pairs


def test_deterministic_and_thread_count_independent():
    rows = []
    for threads in (1, 2, 2):
        con = duckdb.connect()
        con.execute(f"SET threads = {threads}").fetchall()
        con.execute(f"CREATE TABLE bf AS SELECT * FROM read_csv('{BODYFAT}')").fetchall()
        rows.append(rwn_sql.rank_swap(con, "bf", COLS, 30, key=KEY, reps=2, variant="sdcmicro").fetchall())
        con.close()
    assert rows[0] == rows[1] == rows[2]
    other = duckdb.connect()
    other.execute(f"CREATE TABLE bf AS SELECT * FROM read_csv('{BODYFAT}')").fetchall()
    assert rwn_sql.rank_swap(other, "bf", COLS, 30, key=KEY + "x", reps=2, variant="sdcmicro").fetchall() != rows[0]


def test_statements_per_p_equal_the_single_releases(con, bodyfat):
    statements = baselines.rank_swap_statements(con, bodyfat, COLS, [12, 54], key=KEY, variant="sdcmicro")
    for p, text in zip((12, 54), statements):
        assert con.execute(text).fetchall() == \
            rwn_sql.rank_swap(con, bodyfat, COLS, p, key=KEY, variant="sdcmicro").fetchall()
    assert KEY not in baselines.rank_swap_statement(con, bodyfat, COLS, 12, key=KEY, variant="sdcmicro")


def test_the_guard_catches_changed_rows(con, bodyfat):
    text = baselines.rank_swap_statement(con, bodyfat, COLS, 30, key=KEY, variant="sdcmicro")
    con.execute("UPDATE bodyfat SET Age = Age + 1 WHERE Age = 50").fetchall()
    with pytest.raises(duckdb.Error, match="rows of .* changed between reads"):
        con.execute(text).fetchall()


@pytest.mark.parametrize("kwargs, message", [
    (dict(variant="sdcMicro"), "variant must be 'simple' or 'sdcmicro', got 'sdcMicro'"),
    (dict(variant=None), "variant must be 'simple' or 'sdcmicro', got None"),
    (dict(top_percent=5), "top_percent: only variant 'sdcmicro' replaces top and bottom values"),
    (dict(top_percent=5, bottom_percent=5), "top_percent and bottom_percent: only variant 'sdcmicro'"),
    (dict(variant="sdcmicro", top_percent=100), r"top_percent must be in \[0, 100\) \(percent of the records\), got 100"),
    (dict(variant="sdcmicro", bottom_percent=-1), r"bottom_percent must be in \[0, 100\)"),
    (dict(variant="sdcmicro", top_percent=float("nan")), "top_percent must be finite"),
    (dict(variant="sdcmicro", top_percent="lots"), "top_percent must be a number"),
    (dict(variant="sdcmicro", top_percent=60, bottom_percent=40),
     r"top_percent \+ bottom_percent must be below 100 .* got 60 \+ 40"),
])
def test_bad_input(con, bodyfat, kwargs, message):
    with pytest.raises(RWNError, match=message):
        rwn_sql.rank_swap(con, bodyfat, COLS, 10, key=KEY, **kwargs)
    with pytest.raises(RWNError, match=message):
        baselines.check_rank_swap_inputs(con, bodyfat, COLS, [10], **kwargs)


def test_bad_columns(con):
    con.execute("CREATE TABLE t AS SELECT DATE '2020-01-01' + i::INT AS d, i::DOUBLE AS x, "
                "CASE WHEN i = 3 THEN 'inf'::DOUBLE ELSE i END AS y FROM range(30) r(i)").fetchall()
    with pytest.raises(RWNError, match="column 'd' has type DATE; rank swapping \\(variant 'sdcmicro'.*numeric"):
        rwn_sql.rank_swap(con, "t", ["d", "x"], 10, key=KEY, variant="sdcmicro")
    with pytest.raises(RWNError, match="column 'y' has 1 NULL, NaN or infinite values"):
        rwn_sql.rank_swap(con, "t", ["x", "y"], 10, key=KEY, variant="sdcmicro")
    # the simple variant takes both
    assert len(rwn_sql.rank_swap(con, "t", ["d", "y"], 10, key=KEY).fetchall()) == 30


def test_small_and_degenerate(con):
    """Fewer than 20 records: no value coded (floor(n 5 / 100) = 0); a window of floor(m P / 100)
    below 2 swaps nothing; one record."""
    load_numpy(con, "t", {"x": np.arange(19, dtype=np.float64)})
    assert column_of(rwn_sql.rank_swap(con, "t", ["x"], 100, key=KEY, variant="sdcmicro"), "x") == \
        reference(list(range(19)), KEY, "x", 100)
    assert column_of(rwn_sql.rank_swap(con, "t", ["x"], 10, key=KEY, variant="sdcmicro"), "x") == \
        [float(i) for i in range(19)]                          # floor(19 * 0.1) = 1: partners j < k < j + 1
    load_numpy(con, "one", {"x": np.array([4.0])})
    assert rwn_sql.rank_swap(con, "one", ["x"], 50, key=KEY, variant="sdcmicro").fetchall() == [(4.0,)]


def test_cli_variant(tmp_path):
    con = duckdb.connect()
    out = tmp_path / "swap.parquet"
    cmd = [sys.executable, "-m", "rwn_sql.cli", "rank-swap", str(BODYFAT), str(out), "--columns", ",".join(COLS),
           "--p", "12", "--seed", "5", "--variant", "sdcmicro", "--top-percent", "4", "--bottom-percent", "6",
           "--reps", "2"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert con.execute(f"SELECT * FROM '{out}'").fetchall() == rwn_sql.rank_swap(
        con, str(BODYFAT), COLS, 12, seed=5, reps=2, variant="sdcmicro", top_percent=4, bottom_percent=6).fetchall()
    bad = tmp_path / "bad.csv"
    res = subprocess.run(cmd[:5] + [str(bad)] + cmd[6:12] + ["--top-percent", "5"], capture_output=True, text=True)
    assert res.returncode == 2 and "only variant 'sdcmicro'" in res.stderr and not bad.exists()
    res = subprocess.run(cmd[:5] + [str(bad)] + cmd[6:12] + ["--variant", "sdc"], capture_output=True, text=True)
    assert res.returncode == 2 and "invalid choice: 'sdc'" in res.stderr


def test_parser_knows_the_variants():
    from rwn_sql.cli import parser
    assert parser.RANK_SWAP_VARIANTS == rank_swapping.RANK_SWAP_VARIANTS == baselines.RANK_SWAP_VARIANTS


def test_tune_sweeps_the_variant(con, bodyfat, tmp_path):
    result = tune.sweep(con, bodyfat, COLS, [], reps=2, key=KEY, rank_swap=[30.0], rank_swap_variant="sdcmicro")
    [setting] = result.settings
    assert (setting.method, setting.value, setting.reps) == ("rank_swap_sdcmicro", 30.0, 2)
    evs = []
    for r in range(2):
        rwn_sql.rank_swap(con, bodyfat, COLS, 30.0, key=f"{KEY}#{r}", variant="sdcmicro", into="one", replace=True)
        evs.append(rwn_sql.evaluate(con, bodyfat, "one", COLS).utility.corr_mad)
    assert setting.measures["corr_mad"][0] == pytest.approx(np.mean(evs), rel=1e-12)
    with pytest.raises(RWNError, match="rank_swap_variant must be 'simple' or 'sdcmicro', got 'x'"):
        tune.sweep(con, bodyfat, COLS, [], reps=2, key=KEY, rank_swap=[30.0], rank_swap_variant="x")
    res = subprocess.run([sys.executable, "-m", "rwn_sql.cli", "tune", str(BODYFAT), "--columns", ",".join(COLS),
                          "--eps", "0.3", "--reps", "2", "--rank-swap", "12", "--rank-swap-variant", "sdcmicro",
                          "--seed", "1", "--no-report", "--output-dir", str(tmp_path / "t")],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "rank_swap_sdcmicro,P,12.0" in (tmp_path / "t" / "tune.csv").read_text()
