"""The DuckDB Python functions that generated SQL calls: exact tail probabilities of the
reconstruction-privacy audit (rwn_exact_tails, rwn_block_tails, rwn_audit_tails) as vectorised
Arrow UDFs over rwn_sql.rp.core.privacy. Registered on a connection by ensure_functions (by the
methods that need them) and by rwn_sql.install."""
from __future__ import annotations

import duckdb
try:                                   # duckdb >= 1.4
    from duckdb.sqltypes import BIGINT, BOOLEAN, DOUBLE, VARCHAR
except ImportError:                    # older duckdb
    from duckdb.typing import BIGINT, BOOLEAN, DOUBLE, VARCHAR

from . import privacy

VARCHAR_LIST = duckdb.list_type(VARCHAR)
TAILS = duckdb.struct_type({"upper": DOUBLE, "lower": DOUBLE})


def _vectorised(tails):
    """An Arrow UDF applying a (cached) tails function to a whole vector of rows at once,
    so the per-row cost is the computation, not a Python call through DuckDB."""
    def udf(n, k, p, m, eps):
        import pyarrow as pa
        cols = [c.to_pylist() for c in (n, k, p, m, eps)]
        upper, lower = [], []
        for row in zip(*cols):
            if None in row:
                upper.append(None), lower.append(None)
                continue
            u, low = tails(int(row[0]), int(row[1]), float(row[2]), int(row[3]), float(row[4]))
            upper.append(u), lower.append(low)
        return pa.StructArray.from_arrays([pa.array(upper, pa.float64()), pa.array(lower, pa.float64())],
                                          names=["upper", "lower"])
    return udf


def _exact_tails_udf(n, k, p, m, eps):
    """Arrow UDF for rwn_exact_tails: a whole vector of (n, count) pairs per call, computed
    together by privacy.exact_tails_many (one call per distinct (p, m, eps) in the vector)."""
    import numpy as np
    import pyarrow as pa
    cols = [np.asarray(c.to_numpy(zero_copy_only=False), dtype=float) for c in (n, k, p, m, eps)]
    upper, lower = np.full(len(n), np.nan), np.full(len(n), np.nan)
    ok = ~np.any([np.isnan(c) for c in cols], axis=0)
    params = np.stack([c[ok] for c in cols[2:]], axis=1) if ok.any() else np.empty((0, 3))
    idx = np.flatnonzero(ok)
    for pp, mm, ee in {tuple(r) for r in params.tolist()}:
        rows = idx[(params[:, 0] == pp) & (params[:, 1] == mm) & (params[:, 2] == ee)]
        upper[rows], lower[rows] = privacy.exact_tails_many(cols[0][rows].astype(np.int64),
                                                            cols[1][rows].astype(np.int64), pp, int(mm), ee)
    return pa.StructArray.from_arrays([pa.array(upper, mask=~ok), pa.array(lower, mask=~ok)],
                                      names=["upper", "lower"])


def _audit_tails_udf(enforced, n, k, p, m, eps):
    """Arrow UDF for rwn_audit_tails: per row, lists of (enforced, n, key) cases in, the list
    of their exact tails out. The audit passes every distinct case of a run in one row, so
    the independent-trial tails are computed in one exact_tails_many call (the per-call cost
    of 2048-row vectors was as large as the arithmetic); block designs (enforced) use the
    cached block_tails per case."""
    import numpy as np
    import pyarrow as pa
    out = []
    for i in range(len(n)):
        if not (n[i].is_valid and k[i].is_valid and enforced[i].is_valid and p[i].is_valid and m[i].is_valid
                and eps[i].is_valid):
            out.append(None)
            continue
        blocks = np.asarray(enforced[i].values.to_numpy(zero_copy_only=False), dtype=bool)
        sizes = np.asarray(n[i].values.to_numpy(zero_copy_only=False), dtype=np.int64)
        keys = np.asarray(k[i].values.to_numpy(zero_copy_only=False), dtype=np.int64)
        pp, mm, ee = p[i].as_py(), int(m[i].as_py()), eps[i].as_py()
        upper, lower = np.empty(len(sizes)), np.empty(len(sizes))
        trials = np.flatnonzero(~blocks)
        upper[trials], lower[trials] = privacy.exact_tails_many(sizes[trials], keys[trials], pp, mm, ee)
        for j in np.flatnonzero(blocks):
            upper[j], lower[j] = privacy.block_tails(int(sizes[j]), int(keys[j]), pp, mm, ee)
        out.append(pa.StructArray.from_arrays([pa.array(upper), pa.array(lower)], names=["upper", "lower"]))
    offsets = np.zeros(len(out) + 1, dtype=np.int32)
    offsets[1:] = np.cumsum([0 if o is None else len(o) for o in out])
    values = pa.concat_arrays([o for o in out if o is not None]) if any(o is not None for o in out) else \
        pa.array([], pa.struct([("upper", pa.float64()), ("lower", pa.float64())]))
    mask = pa.array([o is None for o in out])
    return pa.ListArray.from_arrays(pa.array(offsets), values, mask=mask)


def register_function(con, name, fn, params, returns, kind: str = "native", side_effects: bool = False) -> None:
    try:
        con.remove_function(name)
    except duckdb.Error:
        pass
    con.create_function(name, fn, params, returns, type=kind, null_handling="special",
                        exception_handling="default", side_effects=side_effects)


def ensure_functions(con: duckdb.DuckDBPyConnection) -> None:
    """Register the scalar functions that generated SQL calls (rwn_audit_tails and the per-case
    rwn_exact_tails, rwn_block_tails)."""
    try:
        con.execute("SELECT rwn_exact_tails(1, 1, 0.5, 2, 0.5), rwn_block_tails(2, 1, 0.5, 2, 0.5), "
                    "rwn_audit_tails([false], [1], [1], 0.5, 2, 0.5)").fetchall()
    except duckdb.Error:
        register_tails(con)


def register_tails(con) -> None:
    params = [BIGINT, BIGINT, DOUBLE, BIGINT, DOUBLE]
    register_function(con, "rwn_exact_tails", _exact_tails_udf, params, TAILS, "arrow")
    register_function(con, "rwn_block_tails", _vectorised(privacy.block_tails), params, TAILS, "arrow")
    register_function(con, "rwn_audit_tails", _audit_tails_udf,
              [duckdb.list_type(BOOLEAN), duckdb.list_type(BIGINT), duckdb.list_type(BIGINT), DOUBLE, BIGINT,
               DOUBLE], duckdb.list_type(TAILS), "arrow")
