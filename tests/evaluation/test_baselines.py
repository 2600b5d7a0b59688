"""Baselines: rank swapping and MDAV microaggregation follow their stated definitions, keep
every row in input order, and reject bad input with an error naming the problem."""
import math
from collections import Counter

import duckdb
import numpy as np
import pytest
from helpers.data import BODYFAT, BODYFAT_COLUMNS, load_numpy, tied_data
from scipy import stats

from rwn_sql import RWNError
from rwn_sql.engines import outputs
from rwn_sql.evaluation.baselines import (mdav, mdav_groups, mdav_labels, mdav_statement, rank_swap, rank_swap_donors,
                                          rank_swap_pairs, rank_swap_statement)
from rwn_sql.randomness import keyed_bits

TWO_52 = 2 ** 52


# --------------------------------------------------------------------------------------
# plain reference implementations (written for clarity, not speed)
# --------------------------------------------------------------------------------------

def naive_pairs(draws, window):
    """Rank-swap pairing, literally: the free ranks in the window as a list, the m-th taken."""
    n = len(draws)
    partner = list(range(n))
    swapped = [False] * n
    for i in range(n):
        if swapped[i]:
            continue
        free = [j for j in range(i + 1, min(i + window, n - 1) + 1) if not swapped[j]]
        if not free:
            continue
        j = free[draws[i] * len(free) // TWO_52]
        partner[i], partner[j] = j, i
        swapped[i] = swapped[j] = True
    return partner


def naive_rank_swap_donors(values, column, key, window):
    """Donor (1-based) of every record for one column, from the definition and keyed_bits."""
    n = len(values)
    bits = [keyed_bits(key, "rwn.rank_swap", rid, column) for rid in range(1, n + 1)]
    order = sorted(range(n), key=lambda i: (values[i], bits[i][0], i))   # record index at each rank
    partner = naive_pairs([bits[i][1] for i in order], window)
    donors = [0] * n
    for rank, i in enumerate(order):
        donors[i] = order[partner[rank]] + 1
    return donors


def naive_mdav(X, k):
    """MDAV as stated in rwn_sql.evaluation.baselines.mdav, with Python lists and sorted()."""
    X = [list(map(float, row)) for row in X]
    n, p = len(X), len(X[0])

    def d2(i, point):
        total = 0.0
        for j in range(p):
            diff = X[i][j] - point[j]
            total += diff * diff
        return total

    def centroid(rest):
        # the same summation as the implementation, so that exact ties behave the same
        return list(np.array([[X[i][j] for i in rest] for j in range(p)]).mean(axis=1))

    def farthest(cands, point):
        best = cands[0]
        for i in cands:                          # ascending position; strict > keeps the first
            if d2(i, point) > d2(best, point):
                best = i
        return best

    def around(c, cands):
        others = sorted((d2(i, X[c]), i) for i in cands if i != c)
        return [c] + [i for _, i in others[: k - 1]]

    labels, rest, g = [-1] * n, list(range(n)), 0

    def assign(group):
        nonlocal rest, g
        for i in group:
            labels[i] = g
        g += 1
        rest = [i for i in rest if i not in group]

    while len(rest) >= 3 * k:
        r = farthest(rest, centroid(rest))
        g_r = around(r, rest)
        s = farthest([i for i in rest if i not in g_r], X[r])
        assign(g_r)
        assign(around(s, rest))
    if len(rest) >= 2 * k:
        r = farthest(rest, centroid(rest))
        assign(around(r, rest))
    if rest:
        assign(list(rest))
    return np.array(labels)


def scaled(X, scale):
    X = np.asarray(X, dtype=float)
    if scale == "minmax":
        span = X.max(axis=0) - X.min(axis=0)
        return np.where(span > 0, (X - X.min(axis=0)) / np.where(span > 0, span, 1), 0.0)
    if scale == "zscore":
        sd = X.std(axis=0, ddof=1)
        return np.where(sd > 0, (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1), 0.0)
    return X


def fetch(con, sql_or_rel):
    rel = con.sql(sql_or_rel) if isinstance(sql_or_rel, str) else sql_or_rel
    return rel.fetchnumpy()


def describe(con, source):
    return [(r[0], r[1]) for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()]


@pytest.fixture
def uniform(con):
    rng = np.random.default_rng(5)
    n = 400
    load_numpy(con, "uni", {"id": np.arange(n), "a": rng.uniform(size=n), "b": rng.normal(size=n),
                            "c": rng.uniform(size=n), "label": rng.choice(["x", "y", "z"], n)})
    return "uni"


@pytest.fixture
def typed(con):
    con.execute("""
        CREATE TABLE typed AS
        SELECT i AS id, (i * 37) % 101 AS small, CAST((i * 13) % 17 AS DECIMAL(6, 2)) / 4 AS dec,
               DATE '2020-01-01' + CAST((i * 7) % 50 AS INTEGER) AS day,
               CAST(((i * 11) % 23) AS FLOAT) / 3 AS f,
               CAST(CASE i % 3 WHEN 0 THEN 'lo' WHEN 1 THEN 'mid' ELSE 'hi' END AS ENUM ('lo', 'mid', 'hi')) AS level,
               'name ' || i AS name, [i, i + 1] AS lst
        FROM range(60) t(i)
    """).fetchall()
    return "typed"


# --------------------------------------------------------------------------------------
# rank swapping
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("n,window", [(1, 3), (2, 1), (10, 0), (10, 1), (37, 3), (200, 25), (200, 199),
                                      (200, 400), (513, 60)])
def test_pairing_matches_the_literal_algorithm(n, window):
    rng = np.random.default_rng(n * 1000 + window)
    for _ in range(3):
        draws = [int(x) for x in rng.integers(0, TWO_52, n, dtype=np.int64)]
        got = rank_swap_pairs(draws, window)
        assert got.tolist() == naive_pairs(draws, window)
        assert np.array_equal(got[got], np.arange(n))            # an involution
        assert np.all(np.abs(got - np.arange(n)) <= window)


def test_pairing_extreme_draws():
    n, window = 50, 7
    for draws in ([0] * n, [TWO_52 - 1] * n):
        assert rank_swap_pairs(draws, window).tolist() == naive_pairs(draws, window)


@pytest.mark.parametrize("rows", [3, 40])          # the Python walk per row, and the numpy walk over all rows
@pytest.mark.parametrize("n,window", [(1, 3), (2, 1), (10, 0), (37, 3), (200, 25), (200, 199), (241, 130)])
def test_pairing_of_many_rows_equals_one_row_at_a_time(rows, n, window):
    rng = np.random.default_rng(rows * 7 + n * 1000 + window)
    draws = rng.integers(0, TWO_52, (rows, n), dtype=np.int64)
    draws[0], draws[-1] = 0, TWO_52 - 1                   # the extreme draws too
    got = rank_swap_pairs(draws, window)
    assert got.shape == (rows, n)
    for row, partner in zip(draws, got):
        assert partner.tolist() == naive_pairs(row.tolist(), window)


@pytest.mark.parametrize("n,window", [(2, 1), (10, 0), (37, 3), (200, 25), (200, 199), (241, 130), (60, 500)])
def test_both_numpy_walks_give_the_literal_pairing(n, window):
    """The Fenwick walk and the window walk (rank_swap_pairs picks one by the window's width)
    each give the literal algorithm's pairing, whatever the window."""
    from rwn_sql.evaluation.baselines import _pairs_batched, _pairs_batched_window
    rng = np.random.default_rng(n * 31 + window)
    draws = rng.integers(0, TWO_52, (12, n), dtype=np.int64)
    draws[0], draws[-1] = 0, TWO_52 - 1
    expected = [naive_pairs(row.tolist(), window) for row in draws]
    assert _pairs_batched(draws, window).tolist() == expected
    assert _pairs_batched_window(draws, window).tolist() == expected


def test_replicates_equal_the_releases_of_their_keys(con, bodyfat):
    """rank_swap(reps=R): replicate r, in input order, is the release with the key key#r."""
    cols, key, reps = ["Age", "Weight", "Knee", "BodyFat"], "replicate-key-0123456789", 5
    batch = rank_swap(con, bodyfat, cols, 30, key=key, reps=reps).fetchall()
    names = [d[0] for d in rank_swap(con, bodyfat, cols, 30, key=key, reps=2).description]
    assert names[0] == "replicate" and names[1:] == [d[0] for d in con.sql("SELECT * FROM bodyfat").description]
    assert [row[0] for row in batch] == [r for r in range(reps) for _ in range(241)]
    for r in range(reps):
        single = rank_swap(con, bodyfat, cols, 30, key=f"{key}#{r}").fetchall()
        assert [row[1:] for row in batch if row[0] == r] == single
    # seed= gives the seed's key, then #r; the same call gives the same releases
    from rwn_sql.randomness import key_from_seed
    seeded = rank_swap(con, bodyfat, cols, 12, seed=3, reps=3).fetchall()
    assert seeded == rank_swap(con, bodyfat, cols, 12, seed=3, reps=3).fetchall()
    assert [row[1:] for row in seeded if row[0] == 2] == \
        rank_swap(con, bodyfat, cols, 12, key=key_from_seed(3).replicate(2)).fetchall()
    assert rank_swap(con, bodyfat, cols, 30, key=key, reps=1).fetchall() != \
        [(0,) + row for row in rank_swap(con, bodyfat, cols, 30, key=key).fetchall()]      # key#0, not key


def test_statements_for_several_p_equal_one_p_at_a_time(con, bodyfat):
    """rank_swap_statements: one query of the draws for every P, the same releases as one call per P."""
    from rwn_sql.evaluation.baselines import rank_swap_statements
    cols, key = ["Age", "Weight", "Knee"], "several-p-key-0123456789"
    for reps in (None, 3):
        statements = rank_swap_statements(con, bodyfat, cols, [0.4, 12, 54], key=key, reps=reps)
        for p, text in zip([0.4, 12, 54], statements):
            assert con.sql(text).fetchall() == rank_swap(con, bodyfat, cols, p, key=key, reps=reps).fetchall()


def test_replicates_bad_input(con, people):
    for reps in (0, -1, 1.5, True, "2"):
        with pytest.raises(RWNError, match="reps must be an integer >= 1"):
            rank_swap(con, people, ["age"], 10, seed=1, reps=reps, into="out")
        assert no_table(con, "out")
    con.execute("CREATE TABLE has_rep AS SELECT 1 AS Replicate, age FROM people").fetchall()
    with pytest.raises(RWNError, match="column named 'replicate'"):
        rank_swap(con, "has_rep", ["age"], 10, seed=1, reps=2)
    assert len(rank_swap(con, "has_rep", ["age"], 10, seed=1).fetchall()) == 20     # without reps: fine


def test_release_matches_python_mirror_of_the_definition(con, bodyfat):
    """Ranks with keyed tie-breaks, keyed partner draws and the literal pairing, in Python."""
    cols, p, key = ["Age", "Weight", "Knee"], 20, "a-test-key-0123456789"
    original = fetch(con, "SELECT * FROM bodyfat")
    released = fetch(con, rank_swap(con, bodyfat, cols, p, key=key))
    donors = rank_swap_donors(con, bodyfat, cols, p, key=key)
    n = len(original["Age"])
    window = math.floor(p * n / 100)
    for c in cols:
        expected = naive_rank_swap_donors(original[c].tolist(), c, key, window)
        assert donors[c].tolist() == expected
        assert np.array_equal(released[c], original[c][np.array(expected) - 1])
        assert np.any(donors[c] != np.arange(1, n + 1))


@pytest.mark.parametrize("p", [1, 12, 30.5, 54, 100])
def test_columns_are_permutations_within_the_window(con, uniform, p):
    cols = ["a", "b", "c"]
    original = fetch(con, "SELECT * FROM uni")
    released = fetch(con, rank_swap(con, uniform, cols, p, seed=int(p * 10)))
    n = len(original["id"])
    window = math.floor(p * n / 100)
    assert np.array_equal(released["id"], original["id"])         # every row once, input order
    assert released["label"].tolist() == original["label"].tolist()
    for c in cols:
        assert np.array_equal(np.sort(released[c]), np.sort(original[c]))
        shift = np.abs(stats.rankdata(original[c]) - stats.rankdata(released[c]))
        assert shift.max() <= window
        if window >= 2:
            assert np.mean(released[c] != original[c]) > 0.5


@pytest.mark.parametrize("p", [5, 15, 40])
def test_bodyfat_all_columns_with_ties(con, bodyfat, p):
    """bodyfat has tied values: a record's released value must be within the window of its
    own rank for SOME placement of the ties (rank intervals [min rank, max rank])."""
    original = fetch(con, "SELECT * FROM bodyfat")
    released = fetch(con, rank_swap(con, bodyfat, BODYFAT_COLUMNS, p, seed=2))
    n = len(original["Age"])
    window = math.floor(p * n / 100)
    for c in BODYFAT_COLUMNS:
        o, r = original[c], released[c]
        assert np.array_equal(np.sort(o), np.sort(r))
        lo_o, hi_o = stats.rankdata(o, "min"), stats.rankdata(o, "max")
        lo_r, hi_r = stats.rankdata(r, "min"), stats.rankdata(r, "max")
        gap = np.maximum(0, np.maximum(lo_r - hi_o, lo_o - hi_r))
        assert gap.max() <= window
    donors = rank_swap_donors(con, bodyfat, BODYFAT_COLUMNS, p, seed=2)
    for c in BODYFAT_COLUMNS:
        d = donors[c] - 1
        assert np.array_equal(d[d], np.arange(n))
        assert np.array_equal(released[c], original[c][d])


def test_tiny_p_changes_nothing_or_little(con, bodyfat):
    original = con.execute("SELECT * FROM bodyfat").fetchall()
    assert rank_swap(con, bodyfat, BODYFAT_COLUMNS, 0.4, seed=1).fetchall() == original   # window 0
    # window 1: only neighbours in rank order trade values
    donors = rank_swap_donors(con, bodyfat, BODYFAT_COLUMNS, 0.5, seed=1)
    data = fetch(con, "SELECT * FROM bodyfat")
    for c in BODYFAT_COLUMNS:
        r = stats.rankdata(data[c], "ordinal")
        moved = donors[c] != np.arange(1, len(r) + 1)
        assert moved.any()
        lo, hi = stats.rankdata(data[c], "min"), stats.rankdata(data[c], "max")
        d = donors[c] - 1
        assert np.all(np.maximum(0, np.maximum(lo[d] - hi, lo - hi[d])) <= 1)


def test_determinism_and_keys(con, bodyfat):
    cols = ["Age", "Weight", "Height"]
    a = rank_swap(con, bodyfat, cols, 20, key="secret-one-0123456789").fetchall()
    assert rank_swap(con, bodyfat, cols, 20, key="secret-one-0123456789").fetchall() == a
    assert rank_swap(con, bodyfat, cols, 20, key="secret-two-0123456789").fetchall() != a
    assert rank_swap(con, bodyfat, cols, 20, seed=4).fetchall() == rank_swap(con, bodyfat, cols, 20, seed=4).fetchall()
    assert rank_swap(con, bodyfat, cols, 20, seed=4).fetchall() != rank_swap(con, bodyfat, cols, 20, seed=5).fetchall()
    # fresh keys: almost surely different
    assert rank_swap(con, bodyfat, cols, 20).fetchall() != rank_swap(con, bodyfat, cols, 20).fetchall()
    # a column's swaps do not depend on which other columns are swapped
    alone = fetch(con, rank_swap(con, bodyfat, ["Weight"], 20, key="secret-one-0123456789"))
    together = fetch(con, rank_swap(con, bodyfat, cols, 20, key="secret-one-0123456789"))
    assert np.array_equal(alone["Weight"], together["Weight"])


def test_thread_count_does_not_matter(con, uniform):
    con.execute("SET threads = 1").fetchall()
    one = rank_swap(con, uniform, ["a", "b"], 25, seed=9).fetchall()
    con.execute("SET threads = 4").fetchall()
    assert rank_swap(con, uniform, ["a", "b"], 25, seed=9).fetchall() == one


def test_types_and_other_columns_preserved(con, typed):
    cols = ["small", "dec", "day", "f", "level"]
    rel = rank_swap(con, typed, cols, 30, seed=3)
    assert [(n, str(t)) for n, t in zip(rel.columns, rel.types)] == describe(con, "typed")
    original = con.execute("SELECT * FROM typed").fetchall()
    released = rel.fetchall()
    assert len(released) == len(original)
    for j, name in enumerate(rel.columns):
        before, after = [row[j] for row in original], [row[j] for row in released]
        if name in cols:
            assert Counter(after) == Counter(before)
        else:
            assert after == before


def test_sources_and_into(con, bodyfat, tmp_path):
    expected = rank_swap(con, bodyfat, ["Age"], 10, seed=1).fetchall()
    assert rank_swap(con, str(BODYFAT), ["Age"], 10, seed=1).fetchall() == expected
    assert rank_swap(con, "SELECT * FROM bodyfat", ["Age"], 10, seed=1).fetchall() == expected
    assert rank_swap(con, bodyfat, "Age", 10, seed=1).fetchall() == expected
    assert rank_swap(con, bodyfat, ["Age"], 10, seed=1, into="swapped") is None
    assert con.execute("SELECT * FROM swapped").fetchall() == expected
    with pytest.raises(RWNError, match="already exists"):
        rank_swap(con, bodyfat, ["Age"], 10, seed=2, into="swapped")
    rank_swap(con, bodyfat, ["Age"], 10, seed=2, into="swapped", replace=True)
    assert con.execute("SELECT * FROM swapped").fetchall() == rank_swap(con, bodyfat, ["Age"], 10, seed=2).fetchall()


def test_statements_write_files(con, bodyfat, tmp_path):
    """The *_statement builders give the same release, e.g. for outputs.write_output."""
    key = "file-key-0123456789"
    text = rank_swap_statement(con, bodyfat, ["Age", "Weight"], 15, key=key)
    assert key not in text
    out = tmp_path / "swapped.parquet"
    assert outputs.write_output(con, text, str(out)) == 241
    assert (con.execute(f"SELECT * FROM read_parquet('{out}')").fetchall()
            == rank_swap(con, bodyfat, ["Age", "Weight"], 15, key=key).fetchall())
    out = tmp_path / "mdav.csv"
    outputs.write_output(con, mdav_statement(con, bodyfat, ["Age", "Weight"], 4), str(out))
    got = con.execute(f"SELECT Age, Weight FROM read_csv('{out}')").fetchall()
    want = mdav(con, bodyfat, ["Age", "Weight"], 4).project("Age, Weight").fetchall()
    assert np.allclose(np.array(got), np.array(want), rtol=1e-15, atol=0)


def test_infinities_are_ordinary_values_for_rank_swap(con):
    con.execute("CREATE TABLE inf AS SELECT i, CASE WHEN i = 3 THEN 'inf'::DOUBLE WHEN i = 4 THEN "
                "'-inf'::DOUBLE ELSE i / 7 END AS x FROM range(40) t(i)").fetchall()
    out = fetch(con, rank_swap(con, "inf", ["x"], 10, seed=1))
    assert sorted(out["x"].tolist()) == sorted(fetch(con, "SELECT x FROM inf")["x"].tolist())


def test_odd_column_names(con):
    load_numpy(con, "odd", {'we"ird col': np.arange(30.0)[::-1], "x'y": np.arange(30)})
    out = fetch(con, rank_swap(con, "odd", ['we"ird col', "x'y"], 20, seed=1))
    assert sorted(out['we"ird col'].tolist()) == list(np.arange(30.0))
    out = fetch(con, mdav(con, "odd", ['we"ird col', "x'y"], 3))
    assert out["x'y"].mean() == pytest.approx(14.5)


def test_changed_source_is_detected(con, uniform):
    rel = rank_swap(con, uniform, ["a"], 10, seed=1)
    con.execute("UPDATE uni SET a = a + 1 WHERE id = 3").fetchall()
    with pytest.raises(duckdb.Error, match="rwn_sql: the rows of table 'uni' changed"):
        rel.fetchall()
    rel = mdav(con, uniform, ["a", "b"], 3)
    con.execute("DELETE FROM uni WHERE id = 5").fetchall()
    with pytest.raises(duckdb.Error, match="changed between reads"):
        rel.fetchall()


# --------------------------------------------------------------------------------------
# MDAV
# --------------------------------------------------------------------------------------

def check_sizes(labels, k):
    n = len(labels)
    sizes = np.bincount(labels)
    assert sizes.sum() == n and sizes.min() >= 1
    assert sorted(set(labels.tolist())) == list(range(len(sizes)))
    if n < 2 * k:
        assert sizes.tolist() == [n]
    else:
        assert np.all(sizes[:-1] == k)
        assert k <= sizes[-1] <= 2 * k - 1


@pytest.mark.parametrize("n,p,k", [(2, 1, 2), (5, 2, 3), (7, 2, 3), (8, 2, 3), (9, 2, 3), (30, 3, 2),
                                   (31, 3, 4), (60, 1, 5), (97, 4, 3), (150, 3, 7), (64, 2, 64)])
def test_mdav_matches_the_reference_implementation(n, p, k):
    rng = np.random.default_rng(n * 31 + p * 7 + k)
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 3, p)
    ours = mdav_labels(X, k)
    assert ours.tolist() == naive_mdav(X, k).tolist()
    check_sizes(ours, k)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mdav_with_ties_matches_the_reference_implementation(seed):
    data = tied_data(90, seed)
    X = scaled(np.column_stack([data["a"], data["b"], data["c"]]), "minmax")
    for k in (2, 3, 5):
        ours = mdav_labels(X, k)
        assert ours.tolist() == naive_mdav(X, k).tolist()
        check_sizes(ours, k)


def check_release(con, source, cols, k, scale="minmax"):
    picked = ", ".join(f'"{c}"' for c in cols)
    original = fetch(con, f"SELECT {picked} FROM {source}")
    labels = mdav_groups(con, source, cols, k, scale=scale)
    rel = mdav(con, source, cols, k, scale=scale)
    released = fetch(con, rel.project(picked))
    check_sizes(labels, k)
    n = len(labels)
    for c in cols:
        o, r = original[c].astype(float), released[c]
        for g in range(labels.max() + 1):
            members = labels == g
            assert np.all(r[members] == r[members][0])              # one value per group
            assert r[members][0] == pytest.approx(o[members].mean(), rel=1e-12, abs=1e-12)
        assert r.mean() == pytest.approx(o.mean(), rel=1e-12)
    # groups as the analyst sees them: records sharing the released tuple
    tuples = Counter(zip(*(released[c].tolist() for c in cols)))
    assert min(tuples.values()) >= k
    distinct_means = len(tuples) == labels.max() + 1
    if distinct_means and n >= 2 * k:
        assert max(tuples.values()) <= 2 * k - 1
    # other columns untouched, input order, types
    before = con.execute(f"SELECT * FROM {source}").fetchall()
    after = rel.fetchall()
    assert len(after) == len(before)
    for j, name in enumerate(rel.columns):
        if name not in cols:
            assert [row[j] for row in after] == [row[j] for row in before]
    types = dict(zip(rel.columns, map(str, rel.types)))
    for name, t in describe(con, source):
        assert types[name] == ("DOUBLE" if name in cols else t)
    return labels


def test_bodyfat_k_2_to_16(con, bodyfat):
    data = fetch(con, "SELECT * FROM bodyfat")
    X = scaled(np.column_stack([data[c] for c in BODYFAT_COLUMNS]), "minmax")
    for k in range(2, 17):
        labels = check_release(con, bodyfat, BODYFAT_COLUMNS, k)
        assert labels.tolist() == naive_mdav(X, k).tolist()


@pytest.mark.parametrize("scale", ["minmax", "zscore", "none"])
def test_scales(con, uniform, scale):
    cols = ["a", "b", "c"]
    labels = check_release(con, uniform, cols, 4, scale=scale)
    data = fetch(con, "SELECT * FROM uni")
    X = scaled(np.column_stack([data[c] for c in cols]), scale)
    assert labels.tolist() == naive_mdav(X, 4).tolist()


def test_mdav_integer_decimal_and_constant_columns(con, typed):
    check_release(con, typed, ["small", "dec", "f"], 3)
    con.execute("CREATE TABLE withconst AS SELECT *, 5 AS five FROM typed").fetchall()
    labels = check_release(con, "withconst", ["small", "five"], 4)
    assert labels.tolist() == mdav_groups(con, typed, ["small"], 4).tolist()


def test_mdav_is_deterministic_and_into(con, uniform):
    con.execute("SET threads = 1").fetchall()
    one = mdav(con, uniform, ["a", "b"], 3).fetchall()
    con.execute("SET threads = 4").fetchall()
    assert mdav(con, uniform, ["a", "b"], 3).fetchall() == one
    assert mdav(con, uniform, ["a", "b"], 3, into="agg") is None
    assert con.execute("SELECT * FROM agg").fetchall() == one
    with pytest.raises(RWNError, match="already exists"):
        mdav(con, uniform, ["a", "b"], 3, into="agg")


def test_mdav_scale_changes_groups(con, bodyfat):
    a = mdav_groups(con, bodyfat, ["Age", "Weight"], 5, scale="minmax")
    b = mdav_groups(con, bodyfat, ["Age", "Weight"], 5, scale="none")
    assert a.tolist() != b.tolist()


# --------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------

@pytest.fixture
def people(con):
    rng = np.random.default_rng(0)
    n = 20
    load_numpy(con, "people", {"id": np.arange(n), "age": rng.integers(20, 70, n),
                               "income": rng.normal(5e4, 1e4, n), "sex": rng.choice(["F", "M"], n)})
    return "people"


def no_table(con, name):
    return con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [name]).fetchall()[0][0] == 0


@pytest.mark.parametrize("source,columns,kwargs,message", [
    ("people", ["age", "agee"], {}, "column 'agee' is not in table 'people'.*did you mean 'age'"),
    ("people", ["age", "age"], {}, "column 'age' is listed twice"),
    ("people", [], {}, "at least one column"),
    ("people", ["sex"], {}, "column 'sex' has type VARCHAR; rank swapping needs an ordered column"),
    ("people", ["__rwn_x"], {}, "reserved"),
    ("people", ["age"], {"p_percent": 0}, r"p_percent must be in \(0, 100\], got 0"),
    ("people", ["age"], {"p_percent": -5}, r"p_percent must be in \(0, 100\]"),
    ("people", ["age"], {"p_percent": 100.5}, r"p_percent must be in \(0, 100\]"),
    ("people", ["age"], {"p_percent": float("nan")}, "p_percent must be finite"),
    ("people", ["age"], {"p_percent": "ten"}, "p_percent must be a number"),
    ("people", ["age"], {"p_percent": True}, "p_percent must be a number"),
    ("people", ["age"], {"key": "k", "seed": 1}, "either key= or seed="),
    ("people", ["age"], {"sql": True}, "sql=True is not supported"),
    ("SELECT * FROM people WHERE false", ["age"], {}, "the query has no records"),
    ("SELECT * REPLACE (CASE WHEN id IN (3, 4) THEN NULL ELSE age END AS age) FROM people", ["age"], {},
     "column 'age' has 2 NULL or NaN values"),
    ("SELECT * REPLACE (CASE WHEN id = 3 THEN 'NaN'::DOUBLE ELSE income END AS income) FROM people",
     ["income"], {}, "column 'income' has 1 NULL or NaN values"),
    ("SELECT 1 AS __rwn_rid, * FROM people", ["age"], {}, "reserved"),
    ("nosuchtable", ["age"], {}, "no table or view named 'nosuchtable'"),
])
def test_rank_swap_bad_input(con, people, source, columns, kwargs, message):
    kwargs = {"p_percent": 10, **kwargs}
    if "key" not in kwargs:
        kwargs.setdefault("seed", 1)
    with pytest.raises(RWNError, match=message):
        rank_swap(con, source, columns, into="out", **kwargs)
    assert no_table(con, "out")


@pytest.mark.parametrize("source,columns,kwargs,message", [
    ("people", ["age", "agee"], {}, "column 'agee' is not in table 'people'.*did you mean 'age'"),
    ("people", ["age", "sex"], {}, "column 'sex' has type VARCHAR; MDAV needs a numeric column"),
    ("people", ["age"], {"k": 1}, "k must be >= 2"),
    ("people", ["age"], {"k": 0}, "k must be >= 2"),
    ("people", ["age"], {"k": 21}, r"k = 21 is larger than the number of records \(20\)"),
    ("people", ["age"], {"k": 2.5}, "k must be an integer"),
    ("people", ["age"], {"k": True}, "k must be an integer"),
    ("people", ["age"], {"scale": "log"}, "scale must be one of minmax, zscore, none"),
    ("people", ["age"], {"sql": True}, "sql=True is not supported"),
    ("people", "", {}, "non-empty strings"),
    ("SELECT * FROM people WHERE false", ["age"], {}, "the query has no records"),
    ("SELECT * REPLACE (CASE WHEN id IN (3, 4) THEN NULL ELSE age END AS age) FROM people", ["age"], {},
     "column 'age' has 2 NULL, NaN or infinite values"),
    ("SELECT * REPLACE (CASE WHEN id = 3 THEN 'NaN'::DOUBLE ELSE income END AS income) FROM people",
     ["income"], {}, "column 'income' has 1 NULL, NaN or infinite values"),
    ("SELECT * REPLACE (CASE WHEN id = 3 THEN 'inf'::DOUBLE ELSE income END AS income) FROM people",
     ["income"], {}, "column 'income' has 1 NULL, NaN or infinite values"),
])
def test_mdav_bad_input(con, people, source, columns, kwargs, message):
    kwargs = {"k": 3, **kwargs}
    with pytest.raises(RWNError, match=message):
        mdav(con, source, columns, into="out", **kwargs)
    assert no_table(con, "out")
    if "sql" not in kwargs:
        with pytest.raises(RWNError, match=message):
            mdav_groups(con, source, columns, **{k: v for k, v in kwargs.items()})


def test_donors_need_a_key(con, people):
    with pytest.raises(RWNError, match="needs the key or seed"):
        rank_swap_donors(con, people, ["age"], 10)


def test_mdav_labels_rejects_bad_k():
    with pytest.raises(RWNError, match="k must be an integer between 1 and the number of records"):
        mdav_labels(np.zeros((3, 2)), 4)
