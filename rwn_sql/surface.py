"""rwn_sql.install(con): the SQL surface (Python UDFs that build SQL, and table macros)."""
from __future__ import annotations

import functools
import secrets

import duckdb
try:                                   # duckdb >= 1.4
    from duckdb.sqltypes import BIGINT, BOOLEAN, DOUBLE, VARCHAR
except ImportError:                    # older duckdb
    from duckdb.typing import BIGINT, BOOLEAN, DOUBLE, VARCHAR

from . import engine, privacy, sqlgen
from .api import check_pair_budget
from .errors import RWNError
from .identifiers import quote_literal
from .randomness import key_lookup, resolve_key
from .spec import RWNSpec

VARCHAR_LIST = duckdb.list_type(VARCHAR)
TAILS = duckdb.struct_type({"upper": DOUBLE, "lower": DOUBLE})


def _spec(columns, k, eps, q, scale, strata, categorical, weight, on_missing, drop=()):
    try:
        return RWNSpec(columns=tuple(columns or ()), categorical=tuple(categorical or ()), k=int(k),
                       eps=eps, q=q, scale=scale, strata=tuple(strata or ()), weight=weight,
                       on_missing=on_missing, drop=tuple(drop or ()))
    except (TypeError, ValueError) as exc:
        raise RWNError(str(exc)) from None


def _explain_unseen_sources(planner):
    """A macro's planner runs on a cursor (a query cannot run statements on its own connection),
    which does not see the caller's TEMP tables and views: say so where the source is missing."""
    @functools.wraps(planner)        # DuckDB reads the parameter count from the signature
    def plan(*args):
        try:
            return planner(*args)
        except RWNError as exc:
            if not str(exc).startswith("no table or view named"):
                raise
            raise RWNError(f"{exc}. The rwn_* SQL macros plan on a separate connection of the same database, "
                           "which does not see TEMP tables or views: use a regular table or view, or call "
                           "rwn_sql from Python with this connection") from None
    return plan


def _source(con, name, spec):
    if not isinstance(name, str):
        raise RWNError("the first argument must be a table or view name (a string)")
    cursor = con.cursor()
    src = engine.resolve_source(cursor, name)
    engine.check_columns(spec, src)
    check_pair_budget(cursor, src, spec)
    return src.sql


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


def _register(con, name, fn, params, returns, kind: str = "native") -> None:
    try:
        con.remove_function(name)
    except duckdb.Error:
        pass
    con.create_function(name, fn, params, returns, type=kind, null_handling="special",
                        exception_handling="default")


def ensure_functions(con: duckdb.DuckDBPyConnection) -> None:
    """Register the scalar functions that generated SQL calls (rwn_audit_tails and the per-case
    rwn_exact_tails, rwn_block_tails)."""
    try:
        con.execute("SELECT rwn_exact_tails(1, 1, 0.5, 2, 0.5), rwn_block_tails(2, 1, 0.5, 2, 0.5), "
                    "rwn_audit_tails([false], [1], [1], 0.5, 2, 0.5)").fetchall()
    except duckdb.Error:
        _register_tails(con)


def _register_tails(con) -> None:
    params = [BIGINT, BIGINT, DOUBLE, BIGINT, DOUBLE]
    _register(con, "rwn_exact_tails", _exact_tails_udf, params, TAILS, "arrow")
    _register(con, "rwn_block_tails", _vectorised(privacy.block_tails), params, TAILS, "arrow")
    _register(con, "rwn_audit_tails", _audit_tails_udf,
              [duckdb.list_type(BOOLEAN), duckdb.list_type(BIGINT), duckdb.list_type(BIGINT), DOUBLE, BIGINT,
               DOUBLE], duckdb.list_type(TAILS), "arrow")


def install(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Register rwn_sql's SQL functions and table macros on `con`. Safe to call again."""
    # The macros' generated SQL reads the key through rwn_key_of(token), a function of this
    # connection, so neither the SQL text run by query() nor its echo in errors or profiles
    # holds the key. The functions run on a cursor and cannot set the caller's variables.
    keys: dict[str, str] = {}
    tokens: dict[str, str] = {}

    def key_ref(_con, key: str) -> str:
        token = tokens.setdefault(key, secrets.token_hex(8))
        keys[token] = key
        return key_lookup(f"rwn_key_of({quote_literal(token)})")

    def perturb_sql(source, columns, k, eps, q, scale, strata, categorical, weight, on_missing,
                    drop, key, seed):
        spec = _spec(columns, k, eps, q, scale, strata, categorical, weight, on_missing, drop)
        the_key = resolve_key(key, seed)
        return sqlgen.perturb_sql(_source(con, source, spec), spec, key_ref(con, the_key))

    def neighborhoods_sql(source, columns, k, eps, scale, strata, categorical, weight, on_missing,
                          pairs):
        spec = _spec(columns, k, eps, 1.0, scale, strata, categorical, weight, on_missing)
        return sqlgen.neighborhoods_sql(_source(con, source, spec), spec, pairs=bool(pairs))

    def randomize_sql(source, sensitive, p, public, domain, key, seed, epsilon, delta, test, nulls, id_column):
        from . import rp
        enforce = None if epsilon is None and delta is None else (epsilon, delta)
        return rp.randomize_statement(con.cursor(), source, sensitive, p, public=public, domain=domain,
                                      key=key, seed=seed, enforce=enforce, test=test, nulls=nulls,
                                      key_ref=key_ref, id_column=id_column)

    def audit_sql(source, sensitive, p, epsilon, delta, public, domain, test, enforce, nulls):
        from . import rp
        return rp.audit(con.cursor(), source, sensitive, p, epsilon, delta, public=public, domain=domain,
                        test=test, enforce=bool(enforce), nulls=nulls, sql=True)

    def estimates_sql(release, sensitive, p, domain, group_by, where, values, public, epsilon, delta, test):
        from . import rp
        if (epsilon is None) != (delta is None):
            raise RWNError("rwn_estimates: give both epsilon and delta (the release's enforcement) or neither")
        enforce = None if epsilon is None else (epsilon, delta)
        return rp.estimates(con.cursor(), release, sensitive, p, domain, group_by=group_by or (),
                            where=where, values=values, public=public, enforce=enforce, test=test, sql=True)

    functions = {
        "rwn_randomize_sql": (randomize_sql, [VARCHAR, VARCHAR, DOUBLE, VARCHAR_LIST, VARCHAR_LIST, VARCHAR,
                                              BIGINT, DOUBLE, DOUBLE, VARCHAR, VARCHAR, VARCHAR]),
        "rwn_audit_sql": (audit_sql, [VARCHAR, VARCHAR, DOUBLE, DOUBLE, DOUBLE, VARCHAR_LIST, VARCHAR_LIST,
                                      VARCHAR, BOOLEAN, VARCHAR]),
        "rwn_estimates_sql": (estimates_sql, [VARCHAR, VARCHAR, DOUBLE, VARCHAR_LIST, VARCHAR_LIST, VARCHAR,
                                              VARCHAR_LIST, VARCHAR_LIST, DOUBLE, DOUBLE, VARCHAR]),
        "rwn_perturb_sql": (perturb_sql, [VARCHAR, VARCHAR_LIST, BIGINT, DOUBLE, DOUBLE, VARCHAR,
                                          VARCHAR_LIST, VARCHAR_LIST, DOUBLE, VARCHAR, VARCHAR_LIST,
                                          VARCHAR, BIGINT]),
        "rwn_neighborhoods_sql": (neighborhoods_sql, [VARCHAR, VARCHAR_LIST, BIGINT, DOUBLE, VARCHAR,
                                                      VARCHAR_LIST, VARCHAR_LIST, DOUBLE, VARCHAR,
                                                      BOOLEAN]),
    }
    for name, (fn, params) in functions.items():
        _register(con, name, _explain_unseen_sources(fn), params, VARCHAR)
    _register(con, "rwn_key_of", lambda token: keys.get(token), [VARCHAR], VARCHAR)
    _register_tails(con)
    for statement in sqlgen.sql_text("macros.sql").split(";\n"):
        if statement.strip() and not all(line.startswith("--") for line in statement.strip().splitlines()):
            con.execute(statement).fetchall()
    return con
