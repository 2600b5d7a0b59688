"""rwn_sql.install(con): the SQL surface (Python UDFs that build SQL, and table macros)."""
from __future__ import annotations

import secrets

import duckdb

from .engines import duckdb_backend, outputs
from .rp import api as rp, plan as rp_plan, temp_source
from .rp.core.privacy import RPParams, Threshold
from .rp.release.release_source import RECORDED
from .rwn import run as rwn
from . import templates
from .errors import NoSuchSource, OutputExists, RWNError
from .identifiers import name_parts, quote_ident, quote_literal
from .randomness import MACRO_KEYS, KeySQL, resolve_key
from .rp.core.duckdb_udfs import BIGINT, BOOLEAN, DOUBLE, VARCHAR, VARCHAR_LIST, register_function, register_tails


def _spec(columns, k, eps, q, scale, strata, categorical, weight, on_missing, drop=(), id_column=None):
    return rwn.spec(tuple(columns or ()), categorical=tuple(categorical or ()), k=int(k), eps=eps, q=q,
                    scale=scale, strata=tuple(strata or ()), weight=weight, on_missing=on_missing,
                    drop=tuple(drop or ()), id=id_column)


def _plan(con, name, spec, what: str, key_sql=None, pairs: bool = False) -> str:
    """A macro's statement: the RWN plan of the table or view `name`, as rwn_sql.perturb /
    neighborhoods make it (rwn_sql.rwn.run), on a cursor of `con`; for a source the cursor does not
    see (a TEMP table or view) the same plan with its schema checks in the statement
    (rwn.unseen_source): the same rows, since only the speed depends on what the pre-passes read."""
    if not isinstance(name, str):
        raise RWNError("the first argument must be a table or view name (a string)")
    be = duckdb_backend.DuckDBBackend(con.cursor())
    try:
        src = rwn.check_source(be, name, spec)
    except NoSuchSource:
        src = rwn.unseen_source(be, name, spec)
    return rwn.prepare(be, src, spec, what, key_sql, pairs=pairs).sql


def _threshold(epsilon, delta) -> Threshold | None:
    """The enforcement a macro's epsilon and delta name (None: neither given)."""
    return None if epsilon is None and delta is None else Threshold(epsilon, delta)


def _query_sql(con, sql, database) -> str:
    """rwn_query's planner: the analyst's count query rewritten into its reconstruction (as
    rwn_sql.query rewrites it), over the release in the database named in FROM (FROM rel.adult),
    else the caller's current database. The text that runs is rendered from the checked parts."""
    from .rp.release.analyst import TOO_DEEP, parse, refuse, rewrite, source
    from .rp.release.query_run import release_column_types
    from .rp.release.release_db import NoReleaseMetadata, read_metadata
    if not isinstance(sql, str):
        raise RWNError("rwn_query: the query must be a string")
    try:
        table = source(parse(sql))
    except RecursionError:
        raise refuse(TOO_DEEP) from None
    where = table.text("db") or database
    try:
        meta = read_metadata(con.cursor(), table.name, where)
    except NoReleaseMetadata:
        raise RWNError(f"rwn_query: database {where!r} holds no release (no rwn_release_metadata table); ATTACH "
                       f"the release file and name it in FROM (FROM rel.{table.name}), or open the release "
                       f"file itself") from None
    release = meta.rows_sql
    return rewrite(sql, meta, release, column_types=release_column_types(con.cursor(), release)).sql


def _randomize_into(con, target, database, schema, source, sensitive, p, **options) -> str:
    """rwn_randomize_into: rwn_sql.randomize(into=target) on a cursor of `con` placed in the
    caller's current database and schema, so the table holds its design in its COMMENT (what
    rwn_estimates reads). The cursor is a connection of its own: it does not see the caller's
    TEMP tables and views, cannot write a TEMP table for it, and commits on its own."""
    for name, value in (("target", target), ("source", source)):
        if not isinstance(value, str) or not value.strip():
            raise RWNError(f"rwn_randomize_into: {name} must name a table, got {value!r}")
    parts = name_parts(target) if "." in target else [target]
    if parts and len(parts) > 1 and parts[0].lower() == "temp":
        raise RWNError(f"rwn_randomize_into: target {target!r} is a TEMP table, which holds no COMMENT another "
                       f"connection reads: name a table of a database")
    cursor = con.cursor()
    cursor.execute(f"USE {quote_ident(database)}.{quote_ident(schema)}").fetchall()
    try:
        rp.randomize(cursor, source, sensitive, p, into=target, **options)
    except NoSuchSource as exc:
        raise RWNError(f"rwn_randomize_into: {exc}; it reads source on a connection of its own, which does not "
                       f"see this connection's TEMP tables and views: make source a table or view of the database "
                       f"(or use rwn_randomize, whose rows record no design)") from None
    except OutputExists:        # the only output of into=: the target
        raise RWNError(f"rwn_randomize_into: table {target!r} already exists (pass \"replace\" := true to "
                       f"replace it)") from None
    rows = cursor.execute(f"SELECT count(*) FROM {outputs.table_target(cursor, target)}").fetchall()[0][0]
    return f"{target}: {rows} randomized rows; the design is recorded in its COMMENT"


def _key_ref(keys: dict):
    """The macros' key_ref: the KeySQL of a key, read through rwn_key_of(token) from a VALUES
    scan (see install), one token per distinct key in `keys` (token -> key)."""
    def key_ref(_con, key: str) -> str:
        token = next((t for t, k in keys.items() if k == key), None) or secrets.token_hex(8)
        keys[token] = key
        return KeySQL("rwn_key_of(__rwn_token)", f"(VALUES ({quote_literal(token)})) AS __rwn_key(__rwn_token)")
    return key_ref


def _estimates_enforce(epsilon, delta, enforced):
    """rwn_estimates' enforce argument of rwn_sql.estimates, from its epsilon, delta and enforced."""
    if (epsilon is None) != (delta is None):
        raise RWNError("rwn_estimates: give both epsilon and delta (the release's enforcement) or neither")
    if enforced is False and epsilon is not None:
        raise RWNError("rwn_estimates: enforced := false contradicts epsilon and delta")
    enforce = (epsilon, delta) if epsilon is not None else None if enforced is False else RECORDED
    if enforced is True and epsilon is None:
        raise RWNError("rwn_estimates: enforced := true needs the release's epsilon and delta")
    return enforce


def _rp_functions(con, key_ref) -> dict:
    """The randomized-response planners and runners: name -> (function, parameter types)."""
    def randomize_sql(source, sensitive, p, public, domain, key, seed, epsilon, delta, test, nulls, id_column,
                      l_diversity, max_top_share):
        params = RPParams(p, _threshold(epsilon, delta), test)
        try:
            return rp_plan.randomize_statement(con.cursor(), source, sensitive, params, public=public, domain=domain,
                                               key=key, seed=seed, nulls=nulls, key_ref=key_ref,
                                               id_column=id_column, l_diversity=l_diversity,
                                               max_top_share=max_top_share)
        except NoSuchSource:
            pass        # a TEMP table or view of the caller: its statement hands it to the planner
        return temp_source.randomize(source, sensitive, params, public=public, domain=domain,
                                     key_sql=key_ref(con, resolve_key(key, seed)), nulls=nulls,
                                     id_column=id_column, l_diversity=l_diversity, max_top_share=max_top_share)

    def randomize_into(target, database, schema, source, sensitive, p, public, domain, key, seed, epsilon, delta,
                       test, nulls, id_column, l_diversity, max_top_share, replace):
        return _randomize_into(con, target, database, schema, source, sensitive, p, public=public, domain=domain,
                               key=key, seed=seed, enforce=_threshold(epsilon, delta), test=test, nulls=nulls, id=id_column,
                               l_diversity=l_diversity, max_top_share=max_top_share, replace=bool(replace))

    def audit_sql(source, sensitive, p, epsilon, delta, public, domain, test, enforce, nulls):
        try:
            return rp.audit(con.cursor(), source, sensitive, p, epsilon, delta, public=public, domain=domain,
                            test=test, enforce=bool(enforce), nulls=nulls, sql=True)
        except NoSuchSource:
            pass        # a TEMP table or view of the caller: its statement hands it to the planner
        return temp_source.audit(source, sensitive, p, epsilon, delta, public=public, domain=domain, test=test,
                                 enforce=bool(enforce), nulls=nulls)

    def estimates_sql(release, sensitive, p, domain, group_by, where, values, public, epsilon, delta, test,
                      enforced):
        enforce = _estimates_enforce(epsilon, delta, enforced)
        try:
            return rp.estimates(con.cursor(), release, sensitive, p, domain, group_by=group_by or (),
                                where=where, values=values, public=public, enforce=enforce, test=test, sql=True)
        except NoSuchSource:
            pass        # a TEMP table or view of the caller: its statement hands it to the planner
        return temp_source.estimates(release, sensitive, p, domain, group_by=group_by or (), where=where,
                                     values=values, public=public, enforce=enforce, test=test)

    return {
        "rwn_randomize_sql": (randomize_sql, [VARCHAR, VARCHAR, DOUBLE, VARCHAR_LIST, VARCHAR_LIST, VARCHAR,
                                              BIGINT, DOUBLE, DOUBLE, VARCHAR, VARCHAR, VARCHAR, BIGINT, DOUBLE]),
        "rwn_randomize_into_run": (randomize_into, [VARCHAR, VARCHAR, VARCHAR, VARCHAR, VARCHAR, DOUBLE, VARCHAR_LIST,
                                                    VARCHAR_LIST, VARCHAR, BIGINT, DOUBLE, DOUBLE, VARCHAR, VARCHAR,
                                                    VARCHAR, BIGINT, DOUBLE, BOOLEAN]),
        "rwn_audit_sql": (audit_sql, [VARCHAR, VARCHAR, DOUBLE, DOUBLE, DOUBLE, VARCHAR_LIST, VARCHAR_LIST,
                                      VARCHAR, BOOLEAN, VARCHAR]),
        "rwn_estimates_sql": (estimates_sql, [VARCHAR, VARCHAR, DOUBLE, VARCHAR_LIST, VARCHAR_LIST, VARCHAR,
                                              VARCHAR_LIST, VARCHAR_LIST, DOUBLE, DOUBLE, VARCHAR, BOOLEAN]),
        "rwn_query_sql": (lambda sql, database: _query_sql(con, sql, database), [VARCHAR, VARCHAR]),
    }


def _rwn_functions(con, key_ref) -> dict:
    """The RWN planners (perturb, neighborhoods): name -> (function, parameter types)."""
    def perturb_sql(source, columns, k, eps, q, scale, strata, categorical, weight, on_missing,
                    drop, key, seed, id_column):
        spec = _spec(columns, k, eps, q, scale, strata, categorical, weight, on_missing, drop, id_column)
        return _plan(con, source, spec, "perturb", key_ref(con, resolve_key(key, seed)))

    def neighborhoods_sql(source, columns, k, eps, scale, strata, categorical, weight, on_missing,
                          pairs):
        spec = _spec(columns, k, eps, 1.0, scale, strata, categorical, weight, on_missing)
        return _plan(con, source, spec, "neighborhoods", pairs=bool(pairs))

    return {
        "rwn_perturb_sql": (perturb_sql, [VARCHAR, VARCHAR_LIST, BIGINT, DOUBLE, DOUBLE, VARCHAR,
                                          VARCHAR_LIST, VARCHAR_LIST, DOUBLE, VARCHAR, VARCHAR_LIST,
                                          VARCHAR, BIGINT, VARCHAR]),
        "rwn_neighborhoods_sql": (neighborhoods_sql, [VARCHAR, VARCHAR_LIST, BIGINT, DOUBLE, VARCHAR,
                                                      VARCHAR_LIST, VARCHAR_LIST, DOUBLE, VARCHAR,
                                                      BOOLEAN]),
    }


def _plan_in_statement(requests, schemas, rows):
    """rwn_plan (Arrow): per row, the planner's answers for a TEMP source that a statement hands
    it (rp.temp_source): the source rebuilt from its schema and shipped rows in a private
    database, the rules run over it; a refusal fails the statement with the planner's message."""
    import json

    import pyarrow as pa
    out = []
    for i in range(len(requests)):
        request, schema = json.loads(requests[i].as_py()), [tuple(c) for c in schemas[i].as_py()]
        shipped = request["shipped"] or [name for name, _ in schema]
        be, src = duckdb_backend.scratch_backend(schema, shipped, rows.slice(i, 1), f"table {request['name']!r}")
        try:
            out.append(temp_source.answer(be, src, request))
        finally:
            be.con.close()
    return pa.array(out, type=pa.struct([("m", pa.int64()), *((f, pa.list_(pa.int64()))
                                                                for f in temp_source.ANSWER_LISTS)]))


def _create_macros(con) -> None:
    """The table macros of sql/macros.sql, one statement at a time (comment-only chunks skipped)."""
    for statement in templates.sql_text("macros.sql").split(";\n"):
        if statement.strip() and not all(line.startswith("--") for line in statement.strip().splitlines()):
            con.execute(statement).fetchall()


def install(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Register rwn_sql's SQL functions and table macros on `con`. Safe to call again."""
    from .engines.dialects import require_duckdb
    require_duckdb(con, "install (the SQL macros)")
    # The macros' generated SQL reads the key through rwn_key_of(token), a function of this
    # connection, so neither the SQL text run by query() nor its echo in errors holds the key.
    # The functions run on a cursor and cannot set the caller's variables or TEMP tables. The
    # token is read from a VALUES scan: over a literal, DuckDB would fold rwn_key_of and the
    # subkeys into constants that plans and profiles show (randomness.KeySQL). One token per
    # distinct key, kept until the connection closes or rwn_sql.forget_keys(con).
    keys = MACRO_KEYS.setdefault(con, {})
    key_ref = _key_ref(keys)
    for name, (fn, params) in {**_rp_functions(con, key_ref), **_rwn_functions(con, key_ref)}.items():
        # rwn_randomize_into_run writes a table: run where the statement runs, never folded at planning
        register_function(con, name, fn, params, VARCHAR, side_effects=name == "rwn_randomize_into_run")
    register_function(con, "rwn_key_of", lambda token: keys.get(token), [VARCHAR], VARCHAR)
    text_rows = duckdb.list_type(VARCHAR_LIST)
    register_function(con, temp_source.PLANNER, _plan_in_statement, [VARCHAR, text_rows, text_rows],
                      duckdb.struct_type({"m": BIGINT, **{f: duckdb.list_type(BIGINT) for f in temp_source.ANSWER_LISTS}}),
                      "arrow")
    register_tails(con)
    _create_macros(con)
    return con
