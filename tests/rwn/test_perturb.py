"""Perturbation: cells come from S_i, rates and donor choice follow the definition, the
release is a pure function of (data, parameters, key)."""
import math

import duckdb
import numpy as np
import pytest
from scipy import stats

from helpers import bruteforce as bf
import rwn_sql
from helpers.data import BODYFAT_COLUMNS, load_numpy
from rwn_sql.randomness import TWO_52, keyed_bits, keyed_order

# Statistical checks use 4-sigma (or p < 1e-4) limits: a correct implementation fails one
# with probability below 1e-4, and each test is deterministic for its fixed key.
Z = 4.0
P_MIN = 1e-4


@pytest.fixture
def uniform3(con):
    rng = np.random.default_rng(7)
    n = 3000
    load_numpy(con, "u3", {"id": np.arange(n), "a": rng.uniform(size=n), "b": rng.uniform(size=n),
                           "c": rng.uniform(size=n)})
    return "u3"


def hood_sets(con, source, columns, **kw):
    out = {}
    for record, neighbor, _ in rwn_sql.neighborhoods(con, source, columns, pairs=True, **kw).fetchall():
        out.setdefault(record, set()).add(neighbor)
    return out


def test_donors_match_python_mirror_of_the_definition(con, bodyfat):
    """Recompute every donor in Python from the brute-force neighbourhoods and the keyed hash
    (coin from bits 0-51, index from bits 52-103, members sorted by (distance, record))."""
    cols, k, eps, q, key = ["Age", "Weight", "Height", "Abdomen"], 5, 0.3, 0.6, "test-key-0123456789"
    data = con.execute(f"SELECT {', '.join(cols)} FROM bodyfat").fetchnumpy()
    d2 = bf.squared_distances([bf.scaled(data[c], "minmax") for c in cols], [])
    ref, _, _ = bf.neighborhoods(d2, k, eps)
    got = {(r, c): d for r, c, d, _ in rwn_sql.donors(con, bodyfat, cols, k=k, eps=eps, q=q, key=key).fetchall()}
    for record, members in ref.items():
        ordered = sorted(members, key=lambda j: (d2[record - 1, j - 1], j))
        for c in cols:
            keep_bits, pick_bits = keyed_bits(key, "rwn.perturb", record, c)
            if keep_bits < q * TWO_52:
                expected = ordered[min(len(ordered), 1 + math.floor(pick_bits / TWO_52 * len(ordered))) - 1]
            else:
                expected = record
            assert got[(record, c)] == expected


def test_every_cell_is_original_or_from_a_neighbour(con, bodyfat):
    cols = BODYFAT_COLUMNS
    hoods = hood_sets(con, bodyfat, cols, k=5, eps=0.4)
    original = con.execute("SELECT * FROM bodyfat").fetchall()
    released = rwn_sql.perturb(con, bodyfat, cols, k=5, eps=0.4, q=0.7, seed=3, order="input").fetchall()
    assert len(released) == len(original)
    for i, row in enumerate(released, start=1):
        for c, value in enumerate(row):
            allowed = {original[i - 1][c]} | {original[j - 1][c] for j in hoods[i]}
            assert value in allowed


def test_replacement_rate_matches_q(con, uniform3):
    for q in (0.3, 0.85):
        rows = rwn_sql.donors(con, uniform3, ["a", "b", "c"], k=5, q=q, seed=11).fetchall()
        n = len(rows)
        replaced = sum(1 for record, _, donor, _ in rows if donor != record)
        assert abs(replaced / n - q) <= Z * math.sqrt(q * (1 - q) / n)


def test_donor_is_uniform_over_the_neighbourhood(con, uniform3):
    """Randomised probability-integral transform of the donor's rank within S_i is U(0, 1)."""
    hoods = hood_sets(con, uniform3, ["a", "b", "c"], k=4, eps=0.05)
    rng = np.random.default_rng(0)
    u = []
    for record, _, donor, size in rwn_sql.donors(con, uniform3, ["a", "b", "c"], k=4, eps=0.05, q=1.0,
                                                  seed=5).fetchall():
        members = sorted(hoods[record])
        assert size == len(members) and donor in hoods[record]
        u.append((members.index(donor) + rng.uniform()) / len(members))
    assert stats.kstest(u, "uniform").pvalue > P_MIN


def test_columns_draw_independent_donors(con, uniform3):
    """With |S_i| = 5 (pure kNN on continuous data) the donor ranks of two columns form a
    5 x 5 table that must pass a chi-square independence test; P(same donor) = 1/5."""
    hoods = hood_sets(con, uniform3, ["a", "b", "c"], k=5)
    rank = {}
    for record, column, donor, size in rwn_sql.donors(con, uniform3, ["a", "b", "c"], k=5, seed=9).fetchall():
        assert size == 5
        rank[(record, column)] = sorted(hoods[record]).index(donor)
    records = sorted({r for r, _ in rank})
    for c1, c2 in [("a", "b"), ("a", "c"), ("b", "c")]:
        table = np.zeros((5, 5))
        for r in records:
            table[rank[(r, c1)], rank[(r, c2)]] += 1
        assert stats.chi2_contingency(table).pvalue > P_MIN
        same = np.trace(table) / len(records)
        assert abs(same - 0.2) <= Z * math.sqrt(0.2 * 0.8 / len(records))


def test_same_result_with_one_thread_and_many(tmp_path):
    rng = np.random.default_rng(1)
    n = 250_000       # three DuckDB row groups, so 4 threads really run in parallel
    results = []
    for threads in (1, 4):
        con = duckdb.connect()
        con.execute(f"SET threads = {threads}").fetchall()
        rng = np.random.default_rng(1)
        load_numpy(con, "big", {"x": rng.uniform(size=n), "y": rng.normal(size=n)})
        rwn_sql.perturb(con, "big", ["x", "y"], k=3, q=0.9, key="determinism-key-1234", into="released")
        results.append(con.execute("SELECT x, y FROM released").fetchnumpy())
        con.close()
    assert np.array_equal(results[0]["x"], results[1]["x"])
    assert np.array_equal(results[0]["y"], results[1]["y"])


def test_key_sensitivity(con, uniform3):
    def release(**kw):
        return np.array(rwn_sql.perturb(con, uniform3, ["a", "b", "c"], k=5, **kw, order="input").fetchall())
    a1, a2, b = release(key="key-A-0123456789"), release(key="key-A-0123456789"), release(key="key-B-0123456789")
    assert np.array_equal(a1, a2)
    changed = np.mean(a1[:, 1:] != b[:, 1:])
    # each cell keeps the same donor with probability 1/5 under an unrelated key
    assert abs(changed - 0.8) <= Z * math.sqrt(0.16 / a1[:, 1:].size)
    fresh1, fresh2 = release(), release()       # no key: a fresh random key each time
    assert not np.array_equal(fresh1, fresh2)


def test_sql_macro_equals_python(con, bodyfat):
    rwn_sql.install(con)
    py = rwn_sql.perturb(con, bodyfat, ["Age", "Weight"], k=5, eps=0.3, q=0.8, seed=42).fetchall()
    sq = con.execute("SELECT * FROM rwn_perturb('bodyfat', ['Age', 'Weight'], k := 5, eps := 0.3, "
                     "q := 0.8, seed := 42)").fetchall()
    assert py == sq
    nb = con.execute("SELECT * FROM rwn_neighborhoods('bodyfat', ['Age', 'Weight'], eps := 0.3)").fetchall()
    assert nb == rwn_sql.neighborhoods(con, bodyfat, ["Age", "Weight"], eps=0.3).fetchall()
    rwn_sql.install(con)      # idempotent
    assert con.execute("SELECT count(*) FROM rwn_neighbor_pairs('bodyfat', ['Age'], k := 2)").fetchone()[0] >= 482


def test_types_passthrough_and_order_preserved(con):
    con.execute("""CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')""").fetchall()
    con.execute("""CREATE TABLE typed AS SELECT
            i AS id,
            CAST(i % 17 AS INTEGER) AS small_int,
            CAST(i * 3 AS BIGINT) AS big_int,
            CAST(i / 7 AS DECIMAL(10, 2)) AS money,
            CAST(sin(i) AS FLOAT) AS f,
            ['a', 'b', 'c'][1 + i % 3] AS letter,
            CAST(['sad', 'ok', 'happy'][1 + i % 3] AS mood) AS feeling,
            DATE '2020-01-01' + CAST(i AS INTEGER) AS day,
            i % 2 = 0 AS flag
        FROM range(200) t(i)""").fetchall()
    cols = ["small_int", "big_int", "money", "f", "letter", "feeling"]
    rel = rwn_sql.perturb(con, "typed", cols, categorical=["letter", "feeling"], k=3, seed=1, order="input")  # noqa: F841 (read by SQL)
    before = con.execute("DESCRIBE typed").fetchall()
    con.execute("CREATE TABLE rel AS SELECT * FROM rel").fetchall()
    after = con.execute("DESCRIBE rel").fetchall()
    assert [(r[0], r[1]) for r in after] == [(r[0], r[1]) for r in before]
    orig = con.execute("SELECT * FROM typed").fetchall()
    out = con.execute("SELECT * FROM rel").fetchall()
    assert [r[0] for r in out] == [r[0] for r in orig]                       # input order, ids intact
    assert [r[7:] for r in out] == [r[7:] for r in orig]                     # passthrough untouched
    assert {r[5] for r in out} <= {"a", "b", "c"} and {r[6] for r in out} <= {"sad", "ok", "happy"}
    assert any(o[1:7] != r[1:7] for o, r in zip(out, orig))                  # something was perturbed


def test_drop_columns_and_strata_pass_through(con):
    rng = np.random.default_rng(2)
    n = 300
    load_numpy(con, "p", {"name": np.array([f"person {i}" for i in range(n)]), "sex": rng.choice(["F", "M"], n),
                          "age": rng.integers(18, 90, n), "income": rng.lognormal(10, 1, n)})
    out = rwn_sql.perturb(con, "p", ["age", "income"], strata=["sex"], drop=["name"], k=4, seed=8, order="input").fetchall()
    orig = con.execute("SELECT sex, age, income FROM p").fetchall()
    assert [r[0] for r in out] == [r[0] for r in orig]
    assert len(out[0]) == 3
    by_sex = {}
    for sex, age, income in orig:
        by_sex.setdefault(sex, set()).add((age, income))
    ages = {s: {a for a, _ in v} for s, v in by_sex.items()}
    assert all(age in ages[sex] for sex, age, _ in out)                    # donors from the same stratum


def test_k0_empty_neighbourhood_gives_null_cells(con):
    load_numpy(con, "line", {"x": np.array([0.0, 0.01, 0.02, 0.5, 1.0]), "y": np.arange(5.0)})
    out = rwn_sql.perturb(con, "line", ["x"], k=0, eps=0.05, seed=1, order="input").fetchall()
    assert [r[1] for r in out] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert out[3][0] is None and out[4][0] is None
    assert all(r[0] in (0.0, 0.01, 0.02) for r in out[:3])
    kept = rwn_sql.perturb(con, "line", ["x"], k=0, eps=0.05, q=0.0, seed=1, order="input").fetchall()
    assert [r[0] for r in kept] == [0.0, 0.01, 0.02, 0.5, 1.0]               # q = 0 keeps everything


def test_into_creates_table_and_input_is_unchanged(con, bodyfat):
    before = con.execute("SELECT * FROM bodyfat").fetchall()
    assert rwn_sql.perturb(con, bodyfat, ["Age"], seed=1, into="release") is None
    assert con.execute("SELECT count(*) FROM release").fetchone()[0] == len(before)
    assert con.execute("SELECT * FROM bodyfat").fetchall() == before
    with pytest.raises(rwn_sql.RWNError, match="already exists"):
        rwn_sql.perturb(con, bodyfat, ["Age"], seed=1, into="release")
    rwn_sql.perturb(con, bodyfat, ["Age"], seed=2, into="release", replace=True)


def test_show_sql_hides_the_key_and_runs_by_hand(con, bodyfat):
    text = rwn_sql.perturb(con, bodyfat, ["Age", "Weight"], key="very-secret-key-123", sql=True)
    assert "very-secret-key-123" not in text and "getvariable('rwn_key')" in text
    con.execute("SET VARIABLE rwn_key = 'very-secret-key-123'").fetchall()
    assert con.execute(text).fetchall() == rwn_sql.perturb(con, bodyfat, ["Age", "Weight"],
                                                           key="very-secret-key-123").fetchall()


def test_sources_query_csv_parquet(con, tmp_path, bodyfat):
    from helpers.data import BODYFAT
    pq = tmp_path / "bf.parquet"
    con.execute(f"COPY bodyfat TO '{pq}' (FORMAT parquet)").fetchall()
    expected = rwn_sql.perturb(con, bodyfat, ["Age", "Weight"], seed=4).fetchall()
    assert rwn_sql.perturb(con, str(BODYFAT), ["Age", "Weight"], seed=4).fetchall() == expected
    assert rwn_sql.perturb(con, str(pq), ["Age", "Weight"], seed=4).fetchall() == expected
    assert rwn_sql.perturb(con, "SELECT * FROM bodyfat", ["Age", "Weight"], seed=4).fetchall() == expected


def test_row_counts_tell_how_many_rows_were_dropped(con):
    """on_missing='drop' (and randomize's nulls='drop') leave records out; row_counts tells the
    caller how many, for a table written with into= and for a returned relation alike."""
    con.execute("CREATE TABLE gaps AS SELECT range AS id, CASE WHEN range % 10 = 3 THEN NULL "
                "WHEN range = 5 THEN 'NaN'::DOUBLE WHEN range = 8 THEN 'inf'::DOUBLE ELSE range * 1.5 END AS x, "
                "CASE WHEN range % 7 = 0 THEN NULL ELSE ['a', 'b'][1 + range % 2] END AS s FROM range(100)").fetchall()
    bad_x = con.execute("SELECT count(*) FROM gaps WHERE x IS NULL OR NOT isfinite(x)").fetchall()[0][0]
    assert bad_x == 12                               # 10 NULLs (3, 13, ..., 93), one NaN, one inf
    rel = rwn_sql.perturb(con, "gaps", ["x"], k=2, seed=1, on_missing="drop")
    counts = rwn_sql.row_counts(con, "gaps", rel)
    assert (counts.rows_in, counts.rows_out, counts.dropped) == (100, 88, bad_x)
    assert rwn_sql.perturb(con, "gaps", ["x"], k=2, seed=1, on_missing="drop", into="released") is None
    assert rwn_sql.row_counts(con, "gaps", "released") == counts
    assert rwn_sql.row_counts(con, "gaps", "released").dropped == bad_x
    rwn_sql.randomize(con, "gaps", "s", 0.5, public=["id"], seed=1, nulls="drop", into="randomized")
    assert rwn_sql.row_counts(con, "gaps", "randomized").dropped == 15     # range % 7 = 0: 0, 7, ..., 98
    kept = rwn_sql.perturb(con, "gaps", ["id"], k=2, seed=1)                # no gaps in id: nothing dropped
    assert rwn_sql.row_counts(con, "gaps", kept) == rwn_sql.RowCounts(100, 100)


def test_release_is_written_in_the_keyed_order(con):
    """The default release order is the keyed permutation whose Python mirror is
    randomness.keyed_order(key, "rwn.order", n): an untouched column numbering the input rows
    reads, in the release, exactly that permutation (so the order attacks' ground truth is the
    real order, not assumed). Catches a release written in input order (`if order == "keyed"
    and reps is None:` turned into `if False:` in sqlgen.perturb_final), which before this
    test only test_record_id noticed; verified on that mutant (fails) and on the code."""
    n, key = 300, "keyed-order-key-0123456789"
    con.execute(f"CREATE TABLE t AS SELECT i AS pos, (i * 37) % 11 AS x, (i * 13) % 7 AS y "
                f"FROM range(1, {n + 1}) r(i)").fetchall()
    for kw in ({}, {"eps": 0.2, "q": 0.5}):
        rows = rwn_sql.perturb(con, "t", ["x", "y"], k=3, key=key, **kw).fetchall()
        assert [r[0] for r in rows] == keyed_order(key, "rwn.order", n)
    into = rwn_sql.perturb(con, "t", ["x", "y"], k=3, key=key, into="released")
    assert into is None
    assert [r[0] for r in con.execute("SELECT pos FROM released").fetchall()] == keyed_order(key, "rwn.order", n)
