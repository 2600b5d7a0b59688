"""Attribute disclosure in the audit (issue 23, point 2): per-group l-diversity and top share,
the release-level l summary, the proxy check, the default refusal in randomize --enforce and
release, and the refusal of floating-point or large-domain sensitive columns. Each test was
run on the code before the change (it failed there) and passes with it."""
from __future__ import annotations

import math
import os
import subprocess
import sys
from collections import Counter, defaultdict

import duckdb
import numpy as np
import pytest

import rwn_sql
from rwn_sql.rp import api as rp
from rwn_sql.errors import RWNError
from helpers.data import ADULT, ROOT

CATEGORIES = list("ABCDEFGHIJ")


def gss_like(con, n=6000, codes=200, seed=1, noise=0.0, name="gss"):
    """A GSS-like file: a detailed occupation `code` determines the category `occ` (code mod
    10), except for a share `noise` of records given a random category; sex and region noise."""
    rng = np.random.default_rng(seed)
    code = rng.integers(0, codes, n)
    occ = code % 10
    flip = rng.random(n) < noise
    occ[flip] = rng.integers(0, 10, int(flip.sum()))
    sex = rng.choice(["M", "F"], n)
    region = rng.integers(1, 10, n)
    con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM (SELECT unnest(?) AS code, unnest(?) AS sex, "
                f"unnest(?) AS region, unnest(?) AS occ)",
                [code.tolist(), sex.tolist(), region.tolist(), [CATEGORIES[i] for i in occ]]).fetchall()
    return name


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "rwn_sql.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=dict(os.environ, PYTHONPATH=str(ROOT)))


def test_proxy_code_is_flagged_by_default_and_refused(tmp_path):
    """The issue's GSS-like case: a public detailed code determines the sensitive category. The
    audit after enforcement passed every group and exited 0 before the change; now it names
    the column 'code' as a proxy, counts the records in groups violating l, exits 1; randomize
    --enforce and release (not enforced) refuse it naming the column, and --l-diversity 1
    releases it, recorded in the metadata (NULL before: no such field)."""
    con = duckdb.connect()
    gss_like(con)
    path = tmp_path / "gss.csv"
    con.execute(f"COPY gss TO '{path}'").fetchall()
    out = cli("audit", path, "--sensitive", "occ", "--p", "0.5", "--epsilon", "0.5", "--delta", "0.05",
              "--after-enforcement")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "0 of" in out.stdout.splitlines()[1]                    # (eps, delta) alone would pass
    # the summary's last line says the audit failed and why, where "0 of ... fail" alone misleads
    assert out.stdout.rstrip().splitlines()[-1].startswith("verdict: FAILS: ") and "1 proxy" in out.stdout
    proxy_lines = [line for line in out.stdout.splitlines() if "public column 'code' determines 'occ'" in line]
    assert proxy_lines and "for 6000 of 6000 records" in proxy_lines[0] and "drop or coarsen" in proxy_lines[0]
    result = rp.audit(con, "gss", "occ", 0.5, 0.5, 0.05, enforce=True)
    assert result.failing_groups == 0 and not result.ok
    assert [x.columns for x in result.disclosure.proxies] == [("code",)]
    assert result.disclosure.l_failing_records > 0
    r = cli("randomize", path, tmp_path / "r.parquet", "--sensitive", "occ", "--p", "0.5", "--enforce", "0.5,0.05",
            "--seed", "1")
    assert r.returncode == 2 and "attribute disclosure" in r.stderr and "'code'" in r.stderr, r.stderr
    assert not (tmp_path / "r.parquet").exists()
    with pytest.raises(RWNError, match=r"public column 'code' determines 'occ'.*drop or coarsen public column 'code'"):
        rp.release(con, "gss", str(tmp_path / "g.duckdb"), "occ", 0.5, seed=1)
    rp.release(con, "gss", str(tmp_path / "off.duckdb"), "occ", 0.5, seed=1, l_diversity=1)
    rp.release(con, "gss", str(tmp_path / "fine.duckdb"), "occ", 0.5, public=["sex", "region"], seed=1)
    for name, expected in (("off", 1), ("fine", 2)):
        with duckdb.connect(str(tmp_path / f"{name}.duckdb"), read_only=True) as rel:
            assert rel.execute("SELECT l_diversity FROM rwn_release_metadata").fetchall() == [(expected,)]
    off = cli("audit", path, "--sensitive", "occ", "--p", "0.5", "--epsilon", "0.5", "--delta", "0.05",
              "--after-enforcement", "--l-diversity", "1")
    assert off.returncode == 0 and "check turned off" in off.stdout and "'code' determines" in off.stdout
    assert off.stdout.rstrip().splitlines()[-1] == "verdict: passes"


def test_near_proxy_and_pair_proxy_are_flagged():
    """A code that gives the category for 98 % of its records (public alone: every group holds
    2+ values, so distinct l-diversity passes) and a pair (a, b) whose sum mod 5 is the value
    while neither alone says anything: both are flagged, a plain noise column is not. Before
    the change no proxy check existed. The rule's 95 % share and half-of-the-records
    thresholds are what the mutants of rp_sql.proxy_sql / rp.core.disclosure.attribute_disclosure break."""
    con = duckdb.connect()
    # 40 codes of 200 records; every 50th record of a code moved to the next category (2 %)
    con.execute("CREATE TABLE gss AS SELECT i % 40 AS code, chr(65 + CAST((i % 40 + CASE WHEN i // 40 % 50 = 0 "
                "THEN 1 ELSE 0 END) % 10 AS INTEGER)) AS occ FROM range(8000) t(i)").fetchall()
    # the top-share part off (max_top_share=1), so that the proxy alone must fail the audit
    result = rp.audit(con, "gss", "occ", 0.5, 0.5, 0.05, public=["code"], l_diversity=2, max_top_share=1)
    assert result.disclosure.l_failing_records == 0                 # l-diverse: 40 groups of ~200 records
    assert result.disclosure.share_failing_records == 0 and result.disclosure.failing_records == 0
    (proxy,) = result.disclosure.proxies
    assert proxy.columns == ("code",) and proxy.exposed == 7840 and proxy.records == 8000
    assert not result.disclosure.ok and not result.ok
    # one record in ten moved (90 %): below the 95 % share, not a proxy; a majority vote still
    # recovers 90 %, above the top-share limit max(0.5 + 0.5 / 10, 0.1) = 0.55: every group fails it
    con.execute("CREATE TABLE gss90 AS SELECT i % 40 AS code, chr(65 + CAST((i % 40 + CASE WHEN i // 40 % 10 = 0 "
                "THEN 1 ELSE 0 END) % 10 AS INTEGER)) AS occ FROM range(8000) t(i)").fetchall()
    result = rp.audit(con, "gss90", "occ", 0.5, 0.5, 0.05, public=["code"])
    assert result.disclosure.proxies == () and not result.disclosure.ok
    assert (result.disclosure.max_top_share, result.disclosure.share_failing_records) == (0.55, 8000)
    assert {r[0] for r in result.groups_detail.select("top_share").fetchall()} == {0.9}
    assert rp.audit(con, "gss90", "occ", 0.5, 0.5, 0.05, public=["code"], max_top_share=1).disclosure.ok
    rng = np.random.default_rng(7)
    a, b, c = rng.integers(0, 10, 5000), rng.integers(0, 10, 5000), rng.integers(0, 3, 5000)
    con.execute("CREATE TABLE pairs AS SELECT * FROM (SELECT unnest(?) a, unnest(?) b, unnest(?) c, unnest(?) s)",
                [a.tolist(), b.tolist(), c.tolist(), [f"v{(x + y) % 5}" for x, y in zip(a, b)]]).fetchall()
    result = rp.audit(con, "pairs", "s", 0.5, 0.5, 0.05, public=["a", "b", "c"])
    assert [x.columns for x in result.disclosure.proxies] == [("a", "b")]
    assert result.disclosure.proxies[0].exposed == 5000 and result.disclosure.pairs_checked == 3
    assert result.disclosure.proxies[0].cond_entropy == pytest.approx(0.0, abs=1e-9)
    # a noise-only pair is not flagged, and a proxy is not reported when the sensitive value is
    # that concentrated anyway (then no column is to blame; l-diversity speaks)
    con.execute("CREATE TABLE flat AS SELECT a, c, CASE WHEN b = 0 AND c = 0 THEN 'y' ELSE 'x' END AS s FROM pairs")
    flat = rp.audit(con, "flat", "s", 0.5, 0.5, 0.05, public=["a", "c"])
    assert flat.disclosure.proxies == ()


def brute_force(rows, L):
    """Per personal group (public tuple): distinct l, entropy l, top share; and the records and
    groups of >= 2 records with fewer than L distinct values."""
    groups = defaultdict(Counter)
    for *pub, s in rows:
        groups[tuple(pub)][s] += 1
    stats = {}
    for g, counts in groups.items():
        n = sum(counts.values())
        h = -sum(c / n * math.log(c / n) for c in counts.values())
        stats[g] = (n, len(counts), math.exp(h), max(counts.values()) / n)
    bad = [g for g, (n, l, _, _) in stats.items() if n >= 2 and l < L]
    return stats, len(bad), sum(stats[g][0] for g in bad)


def brute_force_share(rows, p):
    """The default top-share limit max(p + (1-p)/m, the most frequent value's share of all
    records), m the values present, and the groups and records of >= 2 records above it."""
    stats, _, _ = brute_force(rows, 1)
    overall = Counter(r[-1] for r in rows)
    limit = max(p + (1 - p) / len(overall), max(overall.values()) / len(rows))
    bad = [g for g, (n, _, _, top) in stats.items() if n >= 2 and top > limit]
    return limit, len(bad), sum(stats[g][0] for g in bad)


@pytest.mark.parametrize("L", [2, 3])
def test_l_diversity_matches_brute_force(L):
    """groups_detail's l_distinct, l_entropy and top_share and the summary's groups and records
    violating l and the top-share limit equal a count in Python over random groups (NULL public
    values included; the singletons are never counted). Before the change those columns did
    not exist."""
    rng = np.random.default_rng(11 + L)
    n = 3000
    g1 = [None if x == 0 else int(x) for x in rng.integers(0, 12, n)]
    g2 = rng.choice(["u", "v", "w"], n).tolist()
    skew = rng.integers(0, 4, n)          # groups of very different diversity
    s = [CATEGORIES[int(rng.integers(0, 1 + k * 2))] for k in skew]
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT * FROM (SELECT unnest(?) g1, unnest(?) g2, unnest(?) s)", [g1, g2, s])
    con.execute("INSERT INTO t VALUES (99, 'u', 'A'), (98, 'v', 'B'), (98, 'v', 'B'), (98, 'v', 'B'), "
                "(97, 'w', 'A'), (97, 'w', 'B'), (96, 'w', 'A'), (96, 'w', 'B'), (96, 'w', 'C'), "
                "(95, 'u', 'A'), (95, 'u', 'A'), (95, 'u', 'A'), (95, 'u', 'B')").fetchall()
    rows = con.execute("SELECT g1, g2, s FROM t").fetchall()
    stats, bad_groups, bad_records = brute_force(rows, L)
    result = rp.audit(con, "t", "s", 0.5, 0.5, 0.05, public=["g1", "g2"], l_diversity=L)
    detail = result.groups_detail
    got = {(r["g1"], r["g2"]): r for r in (dict(zip(detail.columns, row)) for row in detail.fetchall())}
    assert set(got) == set(stats)
    for g, (size, l, le, top) in stats.items():
        assert got[g]["group_size"] == size and got[g]["l_distinct"] == l
        assert got[g]["l_entropy"] == pytest.approx(le, rel=1e-9) and got[g]["top_share"] == pytest.approx(top)
    assert bad_groups > 0
    assert (result.disclosure.l_failing_groups, result.disclosure.l_failing_records) == (bad_groups, bad_records)
    assert not result.ok and (99, "u") in got and stats[(99, "u")][0] == 1
    limit, share_groups, share_records = brute_force_share(rows, 0.5)
    d = result.disclosure
    assert d.max_top_share == pytest.approx(limit, rel=1e-12) and stats[(95, "u")][3] > limit  # l-diverse, 3 of 4
    assert (d.share_failing_groups, d.share_failing_records) == (share_groups, share_records)


def majority_vote_recovery(con, original: str, released: str, public, sensitive: str) -> float:
    """Share of records whose true value is the most frequent released value of their personal
    group (ties: the smallest value). Needs no record pairing: the vote is per group."""
    on = " AND ".join(f"o.{c} IS NOT DISTINCT FROM v.{c}" for c in public) or "true"
    keys = ", ".join(public)
    by = f"PARTITION BY {keys}" if public else ""
    sql = f"""WITH votes AS (SELECT {keys + ',' if public else ''} value FROM (
                  SELECT {keys + ',' if public else ''} {sensitive} AS value, row_number() OVER ({by} ORDER BY count(*) DESC,
                         {sensitive}) AS rank FROM {released} GROUP BY {keys + ',' if public else ''} {sensitive}) WHERE rank = 1)
              SELECT avg(CASE WHEN o.{sensitive} = v.value THEN 1.0 ELSE 0.0 END) FROM {original} o JOIN votes v ON {on}"""
    return con.execute(sql).fetchall()[0][0]


@pytest.mark.heavy     # an attack over many releases; the default path's rules are checked above
def test_majority_vote_gains_nothing_on_what_the_default_path_releases():
    """The majority-vote attack (guess for every record the most frequent released value of its
    personal group) on every release the default path lets through: randomize --enforce (0.5,
    0.05) and release (not enforced) of five files, keys 1..K. A release is let through or
    refused as a whole. Refused: the proxy file (code public; before the proxy check the vote
    recovered 0.616 of the enforced release's categories against a bound of 0.564) and groups of
    40 records split 30/10 with the dominant value varying by group (l-diverse, no proxy; before
    the top-share rule the vote recovered 0.66 enforced and 0.75 not, against 0.625). On each
    release let through, the mean recovery over K keys must stay below the better of what an
    attacker gets without the group, the one-record baseline p + (1-p)/m (a record's own
    released value is right that often) and the most frequent value's share of all records
    (guessing it for everyone), plus 4 standard errors of that mean, estimated from the K
    recoveries (a false alarm about 3e-5 one-sided under normality). Where the most frequent
    value's share is below the baseline (all files but the skewed one) that is the baseline."""
    p, K = 0.5, 12
    con = duckdb.connect()
    gss_like(con, n=5000, codes=200, seed=2)
    con.execute(f"CREATE TABLE adult AS SELECT sex, race, marital_status, occupation FROM read_csv('{ADULT}')")
    con.execute("CREATE TABLE split AS SELECT i // 40 AS g, chr(65 + CAST((i // 40 + CASE WHEN i % 40 < 30 THEN 0 "
                "ELSE 1 END) % 4 AS INTEGER)) AS s FROM range(2000) t(i)").fetchall()
    # every group of 50 is 80 % 'A', as the whole file is: the vote gets 0.8, what guessing 'A' gets
    con.execute("CREATE TABLE skewed AS SELECT i // 50 AS g, CASE WHEN i % 50 < 40 THEN 'A' ELSE chr(66 + "
                "CAST(i % 3 AS INTEGER)) END AS s FROM range(2000) t(i)").fetchall()
    cases = [("gss", "occ", ["code", "sex", "region"]), ("gss", "occ", ["sex", "region"]),
             ("adult", "occupation", ["sex", "race", "marital_status"]), ("adult", "occupation", ["sex", "race"]),
             ("skewed", "s", ["g"]), ("split", "s", ["g"])]
    let_through, refused = [], []
    for table, sensitive, public in cases:
        m, mode = con.execute(f"SELECT count(DISTINCT {sensitive}), max(c) / sum(c) FROM (SELECT {sensitive}, "
                              f"count(*) AS c FROM {table} GROUP BY {sensitive})").fetchall()[0]
        bound = max(p + (1 - p) / m, mode)
        for path in ("randomize", "release"):
            recoveries = []
            for key in range(1, K + 1):
                try:
                    if path == "randomize":
                        rp.randomize(con, table, sensitive, p, public=public, enforce=(0.5, 0.05), seed=key,
                                     into="released", replace=True)
                    else:
                        rp.randomize(con, table, sensitive, p, public=public, seed=key, into="released",
                                     replace=True, l_diversity=2)       # release()'s rule, without the file
                except RWNError as exc:     # or no enforcement design (a binary value at eps = 0.5)
                    assert "attribute disclosure" in str(exc) or "cannot be achieved" in str(exc)
                    if "attribute disclosure" in str(exc):
                        refused.append((table, tuple(public), path))
                    break
                recoveries.append(majority_vote_recovery(con, table, "released", public, sensitive))
            if recoveries:
                mean, se = np.mean(recoveries), np.std(recoveries, ddof=1) / math.sqrt(K)
                let_through.append((table, tuple(public), path, mode <= p + (1 - p) / m))
                assert mean <= bound + 4 * se, (table, public, path, mean, bound, se)
    assert {("gss", ("code", "sex", "region")), ("split", ("g",))} <= {(t, pub) for t, pub, _ in refused}
    assert sum(at_baseline for *_, at_baseline in let_through) >= 4, let_through
    assert any(not at_baseline for *_, at_baseline in let_through), let_through


def test_release_applies_the_rule_and_randomize_only_when_enforced_or_asked(tmp_path):
    """release() refuses homogeneous groups by default (not enforced), as the Python and CLI
    `randomize` do with --enforce; plain randomize without enforce or l_diversity does not
    check (it promises nothing); an explicit l_diversity applies it; l_diversity is validated."""
    con = duckdb.connect()
    con.execute("CREATE TABLE h AS SELECT i % 20 AS g, CASE WHEN i % 20 < 3 THEN 'a' ELSE "
                "CASE WHEN i // 20 % 2 = 0 THEN 'a' ELSE 'b' END END AS s FROM range(400) t(i)").fetchall()
    with pytest.raises(RWNError, match="60 records sit in 3 personal groups"):
        rp.release(con, "h", str(tmp_path / "h.duckdb"), "s", 0.5, seed=1)
    assert rp.randomize(con, "h", "s", 0.5, seed=1).fetchall()       # no enforcement, no promise, no check
    with pytest.raises(RWNError, match="attribute disclosure"):
        rp.randomize(con, "h", "s", 0.5, seed=1, l_diversity=2)
    for bad in (0, True, 2.5, "2"):
        with pytest.raises(RWNError, match="l_diversity must be an integer"):
            rp.audit(con, "h", "s", 0.5, 0.5, 0.05, l_diversity=bad)
    with pytest.raises(RWNError, match="exceeds the domain's 2 values"):
        rp.release(con, "h", str(tmp_path / "h.duckdb"), "s", 0.5, seed=1, l_diversity=3)


def test_float_or_large_domain_sensitive_is_refused(tmp_path):
    """A DOUBLE sensitive column (an income) is refused by randomize, audit and release with a
    pointer to RWN; an integer one with 601 distinct values and no domain is refused pointing to
    an explicit domain; with the domain given (a genuinely large categorical domain) the audit
    runs. Before the change all of these were randomized without a word."""
    con = duckdb.connect()
    con.execute("CREATE TABLE inc AS SELECT i % 7 AS g, CAST((i * 37 % 601) * 100.5 AS DOUBLE) AS income, "
                "CAST(i * 37 % 601 AS INTEGER) AS code FROM range(3000) t(i)").fetchall()
    calls = [lambda: rp.randomize(con, "inc", "income", 0.5, public=["g"], seed=1),
             lambda: rp.audit(con, "inc", "income", 0.5, 0.5, 0.05, public=["g"]),
             lambda: rp.release(con, "inc", str(tmp_path / "i.duckdb"), "income", 0.5, public=["g"], seed=1)]
    for call in calls:
        with pytest.raises(RWNError, match=r"floating point \(DOUBLE\).*RWN \(rwn_sql.perturb"):
            call()
    with pytest.raises(RWNError, match=r"601 distinct values, more than 256.*domain= / --domain-file"):
        rp.audit(con, "inc", "code", 0.5, 0.5, 0.05, public=["g"])
    with pytest.raises(RWNError, match=r"601 distinct values"):
        rp.randomize(con, "inc", "code", 0.5, public=["g"], seed=1)
    domain = [str(v) for v in range(601)]
    result = rp.audit(con, "inc", "code", 0.5, 0.5, 0.05, public=["g"], domain=domain)
    assert result.groups == 7
    out = cli("randomize", "dummy.csv", "o.parquet", "--sensitive", "x", "--p", "0.5", "--help")
    assert "--l-diversity" in out.stdout


def test_refusal_counts_what_dropping_a_column_leaves():
    """The refusal's "dropping public column X leaves N records in groups that violate l" is the
    count of a brute-force l check over the other column. It regroups the per-(group, value)
    counts by fewer columns: counting those rows as distinct values (one value in three finer
    groups counted three times) said 0 where every record with a = 1 (or b = 1) still holds
    one value."""
    import re
    rng = np.random.default_rng(5)
    n = 400
    a, b = rng.integers(0, 3, n).tolist(), rng.integers(0, 3, n).tolist()
    s = ["A" if x == 1 or y == 1 else CATEGORIES[int(rng.integers(0, 4))] for x, y in zip(a, b)]
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT * FROM (SELECT unnest(?) a, unnest(?) b, unnest(?) s)", [a, b, s])
    with pytest.raises(RWNError) as refused:
        rp.randomize(con, "t", "s", 0.5, public=["a", "b"], seed=1, l_diversity=2)
    named, left = re.search(r"dropping public column '(\w)' leaves (\d+) records in groups", str(refused.value)).groups()
    other = "b" if named == "a" else "a"
    _, _, truth = brute_force(con.execute(f"SELECT {other}, s FROM t").fetchall(), 2)
    assert truth > 0 and int(left) == truth


def test_top_share_rule_everywhere_and_recorded(tmp_path):
    """Groups of 40 split 30/10, the dominant value varying by group (l-diverse, no proxy), are
    refused by release, by randomize --enforce in the CLI and by the rwn_randomize macro over a
    TEMP table, naming the limit max(0.5 + 0.5 / 4, 0.25) = 0.625; max_top_share=1 lets them
    through and the release's metadata records the limit it applied; bad limits are refused."""
    import rwn_sql
    con = duckdb.connect()
    split = ("SELECT i // 40 AS g, chr(65 + CAST((i // 40 + CASE WHEN i % 40 < 30 THEN 0 ELSE 1 END) % 4 AS "
             "INTEGER)) AS s FROM range(2000) t(i)")
    con.execute(f"CREATE TABLE split AS {split}").fetchall()
    with pytest.raises(RWNError, match=r"2000 records sit in 50 personal groups .* more than 0\.625 of the group"):
        rp.release(con, "split", str(tmp_path / "r.duckdb"), "s", 0.5, seed=1)
    rp.release(con, "split", str(tmp_path / "r.duckdb"), "s", 0.5, seed=1, max_top_share=1)
    rp.release(con, "split", str(tmp_path / "r2.duckdb"), "s", 0.8, seed=1)   # 0.8 + 0.2 / 4 = 0.85 >= 0.75
    for path, limit in (("r.duckdb", 1.0), ("r2.duckdb", 0.8 + 0.2 / 4)):
        check = duckdb.connect(str(tmp_path / path), read_only=True)
        assert check.execute("SELECT l_diversity, max_top_share FROM rwn_release_metadata").fetchall() == [(2, limit)]
        check.close()
    con.execute(f"COPY ({split}) TO '{tmp_path / 'split.csv'}'").fetchall()
    out = cli("randomize", str(tmp_path / "split.csv"), str(tmp_path / "o.parquet"), "--sensitive", "s", "--p", "0.5",
              "--enforce", "0.5,0.05", "--seed", "1")
    assert out.returncode == 2 and "top-share limit" in out.stderr and "--max-top-share 1" in out.stderr
    out = cli("audit", str(tmp_path / "split.csv"), "--sensitive", "s", "--p", "0.5", "--epsilon", "0.5", "--delta",
              "0.05")
    assert out.returncode == 1 and "top share (limit 0.625): 50 personal groups" in out.stdout
    assert "2000 records in groups above the top-share limit 0.625" in out.stdout
    rwn_sql.install(con)
    con.execute(f"CREATE TEMP TABLE tsplit AS {split}").fetchall()
    with pytest.raises(duckdb.Error, match=r"2000 records sit in 50 personal groups .* more than 0\.625 of the group"):
        con.execute("SELECT * FROM rwn_randomize('tsplit', 's', 0.5, seed := 1, l_diversity := 2)").fetchall()
    assert len(con.execute("SELECT * FROM rwn_randomize('tsplit', 's', 0.5, seed := 1, l_diversity := 2, "
                           "max_top_share := 1)").fetchall()) == 2000
    for bad in (0, 1.5, True, "0.5"):
        with pytest.raises(RWNError, match=r"max_top_share must be a number in \(0, 1\]"):
            rp.audit(con, "split", "s", 0.5, 0.5, 0.05, max_top_share=bad)
