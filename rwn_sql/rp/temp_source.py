"""A source the planner cannot see: a TEMP table or view of the SQL macros' caller, whose macro
plans on a cursor that does not see it. The statement hands the source to the one planner as
it runs: a named CTE, __rwn_plan, ships the source's schema and the columns the rules read to
the rwn_plan function (rwn_sql.install), which runs the same rules as for a table
(rp.plan.resolve_randomize, resolve_audit, rp.api.resolve_estimates) over a private copy and
answers what the statement needs (the domain's size, the blocks per group size, the sizes
whose design fails), or fails the statement with the same refusal. The rest of the statement
is the one the planner writes for a table, reading those answers from the CTE, computed once."""
from __future__ import annotations

import json

from .api import resolve_estimates
from .core import privacy, sqlgen as rp_sql
from .core.checks import check_estimate_columns, estimated_values, listed_once, published_domain, refused
from ..engines.dialects import DUCKDB, source_from_table
from ..errors import RWNError
from ..identifiers import float_literal, quote_ident, quote_literal
from .plan import resolve_audit, resolve_randomize
from .release.release_source import RECORDED

PLAN = "__rwn_plan"
PLANNER = "rwn_plan"          # the function the statement calls (registered by rwn_sql.install)
ANSWER_LISTS = ("sizes", "trials", "failing")     # the answers besides m, each a list of integers
GROUP_KEY = "__rwn_pg"        # every column but the sensitive one (and the id), as one value


def answer(be, src, request: dict) -> dict:
    """What the statement of `request` needs, from the rules run over `src` (a visible copy of the
    TEMP source): the domain's size m, the blocks per group size, and the sizes whose design
    fails at some count (audit, exact test). Refusals raise RWNError."""
    kind, r = request["kind"], request
    threshold = None if r["threshold"] is None else privacy.Threshold(*r["threshold"])
    if kind == "randomize":
        params = privacy.RPParams(r["p"], threshold, r["test"])
        got = resolve_randomize(be, src, r["sensitive"], params, public=r["public"], domain=r["domain"],
                                nulls=r["nulls"], id_column=r["id"], l_diversity=r["l_diversity"],
                                max_top_share=r["max_top_share"])
        m, blocks, failing = len(got.values), got.blocks, []
    elif kind == "audit":
        params = privacy.RPParams(r["p"], threshold, r["test"])
        got = resolve_audit(be, src, r["sensitive"], params, public=r["public"], domain=r["domain"],
                            nulls=r["nulls"], enforce=r["enforce"])
        m, blocks, failing = len(got.values), got.blocks, got.failing
    else:
        got = resolve_estimates(be, src, None, None, src.label, r["sensitive"], r["p"], r["domain"], r["group_by"],
                                r["where"], r["values"], r["public"], threshold, r["test"])
        m, blocks, failing = len(got.domain), got.blocks, []
    blocks = sorted((blocks or {}).items())
    return {"m": m, "sizes": [n for n, _ in blocks], "trials": [t for _, t in blocks], "failing": list(failing)}


def _with_plan(name: str, request: dict, shipped, statement: str, dialect, more: str = "", named=()) -> str:
    """`statement` behind the CTE that hands the source `name` to the planner: its schema and the
    `shipped` columns (None: all, binding the `named` ones first, so that a missing one is the
    engine's binding error naming it) as text, with the `request` (parameters only, never the key)."""
    table = source_from_table(name, dialect)
    columns = None if shipped is None else [quote_ident(c) for c in dict.fromkeys(shipped)]
    rows = table if shipped is not None else _named_table(name, named, dialect)
    request = dict(request, name=name, shipped=None if shipped is None else list(dict.fromkeys(shipped)))
    cte = (f"{PLAN} AS {dialect.materialized()}(\n"
           f"    -- the rules of the planner, run over the source as the statement reads it\n"
           f"    SELECT {PLANNER}({quote_literal(json.dumps(request, sort_keys=True))}, "
           f"{dialect.schema_list(table)},\n        {dialect.rows_as_text(rows, columns)}) AS plan\n){more}")
    if statement.startswith("WITH\n"):
        return f"WITH\n{cte},\n{statement[len('WITH' + chr(10)):]}"
    return f"WITH\n{cte}\n{statement}"


def _named_table(name: str, named, dialect) -> str:
    """The table or view `name`, binding the `named` columns first (a missing one is the engine's
    binding error naming it, before any other part of the statement names it otherwise)."""
    table = source_from_table(name, dialect)
    if not named:
        return table
    return f"(SELECT * FROM {table} WHERE {' AND '.join(f'({quote_ident(c)} IS NULL OR true)' for c in named)})"


def _answer(field: str) -> str:
    return f"(SELECT plan.{field} FROM {PLAN})"


def _checked_source(name: str, dialect, keep=None, group_key_of=None, named=()) -> str:
    """The source as the statement reads it, once the planner has passed it: `keep` the columns
    to keep (default all, in the source's order); `group_key_of` (quoted names): add GROUP_KEY,
    every column but those as one value; `named`: columns bound first (_named_table)."""
    columns = "*" if keep is None else dialect.columns_among(keep)
    if group_key_of is not None:
        columns += f", {dialect.row_of_all_but(group_key_of)} AS {GROUP_KEY}"
    return (f"(SELECT {columns} FROM {_named_table(name, named, dialect)} WHERE {_answer('m')} IS NOT NULL)"
            f" AS __rwn_source")


def _trials(dialect) -> str:
    """The planner's blocks per group size as the relation __rwn_tr(size, t)."""
    return (f"(SELECT {dialect.unnest('plan.sizes')} AS size, {dialect.unnest('plan.trials')} AS t FROM {PLAN})"
            f" AS __rwn_tr(size, t)")


def _typed_domain(name: str, sensitive: str, values, dialect) -> str:
    """A given domain as a list of the sensitive column's type, which only the statement knows."""
    probe = f"(SELECT {quote_ident(sensitive)} FROM {source_from_table(name, dialect)} LIMIT 0)"
    return dialect.same_type_list(probe, [quote_literal(v) for v in values])


def _tuple(names):
    return None if names is None else (names,) if isinstance(names, str) else tuple(names)


def randomize(name: str, sensitive: str, params: privacy.RPParams, *, public, domain, key_sql: str, nulls: str,
              id_column: str | None = None, l_diversity: int | None = None, max_top_share: float | None = None,
              dialect=DUCKDB) -> str:
    """randomize's SQL for the TEMP table or view `name`: the same rows as rp.plan.plan_randomize
    makes for a table, with the same refusals (the planner's, as the statement runs)."""
    public = _tuple(public)
    try:
        spec = rp_sql.RandomizeSpec(sensitive=sensitive, p=params.p, nulls=nulls, id=id_column, public=public or ())
    except ValueError as exc:
        raise refused(exc) from None
    domain = None if domain is None else sorted(listed_once(domain))
    eps_delta = params.threshold
    request = dict(kind="randomize", sensitive=sensitive, p=params.p, test=params.test, public=public,
                   domain=domain, nulls=nulls, id=id_column, l_diversity=l_diversity, max_top_share=max_top_share,
                   threshold=None if eps_delta is None else list(eps_delta))
    s = quote_ident(sensitive)
    internal = [s] + ([quote_ident(id_column)] if id_column else [])
    keep = None if public is None else [*public, sensitive] + ([id_column] if id_column else [])
    enforced = eps_delta is not None
    named = [sensitive] + ([id_column] if id_column else [])
    source = _checked_source(name, dialect, keep, internal if enforced and public is None else None, named)
    more = ""
    if domain is None:     # the values present, sorted as their text (as resolve_domain sorts them)
        more = (f",\n__rwn_domain AS {dialect.materialized()}(\n    SELECT "
                f"{dialect.sorted_list_agg('__rwn_v', dialect.as_text('__rwn_v'))} AS domain FROM (SELECT DISTINCT "
                f"{s} AS __rwn_v FROM {source} WHERE {s} IS NOT NULL) AS __rwn_d\n)")
        domain_sql = "(SELECT domain FROM __rwn_domain)"
    else:
        domain_sql = _typed_domain(name, sensitive, domain, dialect)
    statement = rp_sql.randomize_sql(source, spec, None, None, None, key_sql, check_domain=domain is not None,
                                     dialect=dialect, domain_sql=domain_sql,
                                     trials_relation=_trials(dialect) if enforced else None,
                                     group_key=GROUP_KEY if enforced and public is None else None)
    return _with_plan(name, request, None if public is None else keep, statement, dialect, more, named)


def audit(name: str, sensitive: str, p: float, epsilon: float, delta: float, public=None, domain=None,
          test: str = "exact", enforce: bool = False, nulls: str = "error", dialect=DUCKDB) -> str:
    """audit(..., sql=True)'s SQL for the TEMP table or view `name`: the same rows as for a table
    (the default public columns form each personal group as one value, unpacked into its
    columns in the output), with the same refusals (the planner's, as the statement runs)."""
    params = privacy.RPParams(p, (epsilon, delta), test)
    pub = _tuple(public)
    try:
        spec = rp_sql.RandomizeSpec(sensitive=sensitive, p=float(params.p), nulls=nulls,
                                    public=(GROUP_KEY,) if pub is None else pub)
    except ValueError as exc:
        raise refused(exc) from None
    request = dict(kind="audit", sensitive=sensitive, p=params.p, test=test, public=pub,
                   domain=None if domain is None else listed_once(domain), nulls=nulls, enforce=bool(enforce),
                   threshold=[epsilon, delta])
    source = _checked_source(name, dialect, group_key_of=[quote_ident(sensitive)] if pub is None else None,
                             named=[sensitive] if pub is None else ())
    failing = f"SELECT {dialect.unnest('plan.failing')} FROM {PLAN}" if enforce and test == "exact" else ()
    sql = rp_sql.audit_sql(source, spec, _answer("m"), epsilon, delta, test, None, ordered=pub is not None,
                           dialect=dialect, trials_relation=_trials(dialect) if enforce else None,
                           failing_designs=failing)
    if pub is None:
        sql = (f"SELECT {dialect.unnest(GROUP_KEY)}, {dialect.star('', [GROUP_KEY])} FROM (\n{sql}\n) AS __rwn_audit "
               f"{dialect.order_by_all()}")
    return _with_plan(name, request, None if pub is None else [*pub, sensitive], sql, dialect, named=[sensitive])


def estimates(release: str, sensitive: str, p: float, domain, group_by=(), where: str | None = None,
              values=None, public=None, enforce=RECORDED, test: str | None = None, dialect=DUCKDB) -> str:
    """estimates(..., sql=True)'s SQL for the TEMP release table or view `release`, whose recorded
    design a macro cannot read (p, the domain and the enforcement are given): the same rows as
    for a table, with the same refusals (the planner's, as the statement runs)."""
    if p is None or domain is None or (isinstance(enforce, str) and enforce == RECORDED):
        raise RWNError(f"{release!r} is a TEMP table or view, whose recorded design the macro cannot read: give p, "
                       f"the domain and epsilon and delta (with test) as the release was made, or enforced := false "
                       f"for a release made without enforcement")
    test = test or "exact"
    params = privacy.RPParams(p, enforce, test)
    group_by, pub = _tuple(group_by), _tuple(public)
    check_estimate_columns(sensitive, group_by, pub)
    domain = listed_once(published_domain(domain))
    where_sql = None
    if where is not None:        # rendered now; the planner checks it against the public columns
        from .release.analyst import check_predicate, predicate_columns
        where_sql = check_predicate(where, pub if pub is not None else
                                    [c for c in predicate_columns(where) if c.lower() != sensitive.lower()],
                                    sensitive, f"table {release!r}")
    vals = estimated_values(values, domain)
    vals = None if vals is None else [quote_literal(v) for v in vals]      # compared with the column: its type
    request = dict(kind="estimates", sensitive=sensitive, p=params.p, test=test, public=pub, domain=domain,
                   group_by=list(group_by), where=where, values=None if values is None else [str(v) for v in values],
                   threshold=None if params.threshold is None else list(params.threshold))
    design = None if params.threshold is None else (_trials(dialect), pub)
    sql = rp_sql.estimates_sql(_checked_source(release, dialect, named=() if pub else [sensitive, *group_by]), sensitive, float_literal(params.p),
                               _typed_domain(release, sensitive, domain, dialect), group_by, where_sql, vals, design,
                               dialect=dialect)
    return _with_plan(release, request, None if pub is None else [*pub, sensitive], sql, dialect,
                      named=[sensitive, *group_by])
