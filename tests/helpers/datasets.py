"""Data sets of a given shape that tests in several folders use."""
import numpy as np
import pyarrow as pa

import rwn_sql


def correlated(n, seed, integer=False):
    """6 columns from 3 latent factors plus small noise; integer data has many exact ties."""
    rng = np.random.default_rng(seed)
    if integer:
        pts = rng.integers(0, 5, (n, 3)) @ rng.integers(-2, 3, (3, 6)) + rng.integers(0, 2, (n, 6))
    else:
        pts = rng.normal(size=(n, 3)) @ rng.normal(size=(3, 6)) + 0.02 * rng.normal(size=(n, 6))
    return {f"v{i}": pts[:, i].astype(float) for i in range(6)}


def clumped(n, seed, integer=False):
    """7 columns: 3 strong latent factors and a 4th holding about 8 % of the variance, resampled
    (about 4 copies of each row) with small jitter: W3's shape, tight clumps of near-duplicates
    that the 3 leading axes alone would not separate. Integer data: exact copies, many ties."""
    rng = np.random.default_rng(seed)
    rows = n // 4
    latent = rng.normal(size=(rows, 4)) * np.array([1.0, 0.9, 0.8, 0.45])
    mix = np.linalg.qr(rng.normal(size=(7, 4)))[0].T          # orthonormal: the shares stay as set
    base = latent @ mix + 0.01 * rng.normal(size=(rows, 7))
    pts = base[rng.integers(0, rows, n)]
    pts = np.round(pts * 4) if integer else pts + 0.002 * rng.normal(size=pts.shape)
    return {f"v{i}": pts[:, i].astype(float) for i in range(7)}


def tied_table(con, rows, name="tied"):
    """The issue's blow-up: 3 integer columns with 10, 8 and 5 distinct values."""
    con.execute(f"CREATE TABLE {name} AS SELECT (range % 10)::INTEGER AS a, (range // 10 % 8)::INTEGER AS b, "
                f"(range // 80 % 5)::INTEGER AS c, (range % 2)::VARCHAR AS s FROM range({rows})").fetchall()


def sql_sets(con, source, columns, **kw):
    rows = rwn_sql.neighborhoods(con, source, columns, pairs=True, **kw).fetchall()
    out = {}
    for record, neighbor, _ in rows:
        out.setdefault(record, set()).add(neighbor)
    return out


def nonempty(ref):
    return {r: s for r, s in ref.items() if s}


# The shop data of the SUM / AVG queries (rp/test_query_measures.py, engines/test_spark.py)
SHOP_DOMAIN = ("u", "v", "w", "z")
SHOP_SIZES = (8, 12, 16, 24)
SHOP_PUBLIC = ["g", "x", "spend", "one"]


def shop_data() -> pa.Table:
    """Personal groups (g, x): 4 x 10 groups of 8 to 24 records, each holding every sensitive
    value on exactly a quarter of its records, so a value set's share is the same in every group
    (the standard errors' plug-in share is then exact at the truth). spend = 1.5 x, NULL for x = 10."""
    rows = []
    for i, g in enumerate("abcd"):
        for x in range(1, 11):
            n = SHOP_SIZES[(i + x) % len(SHOP_SIZES)]
            rows += [(g, x, None if x == 10 else 1.5 * x, 1, SHOP_DOMAIN[j % 4]) for j in range(n)]
    g, x, spend, one, s = zip(*rows)
    rid = np.random.default_rng(0).permutation(len(rows)) + 1      # the record ids, in no particular order
    return pa.table({"rid": pa.array(rid, pa.int64()), "g": g, "x": pa.array(x, pa.int32()),
                     "spend": pa.array(spend, pa.float64()), "one": pa.array(one, pa.int32()), "s": s})
