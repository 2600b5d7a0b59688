"""The checks of rp.checks and rp.disclosure written into the statement, for a source the planner
cannot see (a TEMP table or view of the SQL macros' caller, planned on a cursor that does not
see it): randomize, audit and estimates planned from the parameters, checked by the same
parameter checks, and the checks that read the data made by the statement as it runs, with
the same messages (messages.Message.sql). The same rows as rp.plan and rp.api."""
from __future__ import annotations


from ..engines import sources
from . import privacy, sqlgen as rp_sql
from .sqlgen import domain_values
from ..errors import RWNError
from ..identifiers import float_literal, quote_ident, quote_literal
from ..messages import SQL, concat
from .checks import (FLOAT_SENSITIVE, ID_NULLS, ID_SHARED, L_ABOVE_DOMAIN, LARGE_DOMAIN, MISSING_FROM_DOMAIN,
                     NESTED_SENSITIVE, NESTED_TYPE_NAMES, NULL_SENSITIVE, OUTSIDE_DOMAIN, SAME_AFTER_CAST,
                     SMALL_DOMAIN, check_audit_public, check_estimate_columns, check_l_diversity,
                     disclosure_rule, estimated_values, listed_once, published_domain, refused)
from .disclosure import L_DIVERSITY_PROBLEM, TOP_SHARE_PROBLEM
from .release_source import RECORDED


def _deferred_domain(d, name: str, sensitive: str, domain) -> str:
    """A given domain (checked as text) as a SQL list of the sensitive column's type, which only
    the statement knows: values equal after the cast fail it."""
    domain = listed_once(domain)
    if len(domain) < 2:
        raise RWNError(SMALL_DOMAIN.text(sensitive=sensitive, m=len(domain)))
    probe = f"(SELECT {quote_ident(sensitive)} FROM {d.table_by_name(quote_literal(name))} LIMIT 0)"  # typed NULL
    typed = d.same_type_list(probe, [quote_literal(v) for v in domain])
    return sources.raise_unless(
        d, f"{d.distinct_count(typed)} = {len(domain)}",
        SAME_AFTER_CAST.sql(values="two values that are", type_name=SQL(d.type_name(probe)), sensitive=sensitive),
        typed)


def _deferred_domain_size(d, sensitive: str, n_sql: str, value_sql: str) -> str:
    """`value_sql`, failing the statement when the `n_sql` values present are more than
    MAX_INFERRED_DOMAIN (as resolve_domain refuses them)."""
    return sources.raise_unless(d, f"{n_sql} <= {rp_sql.MAX_INFERRED_DOMAIN}",
                                LARGE_DOMAIN.sql(sensitive=sensitive, n=SQL(n_sql)), value_sql)


def _deferred_disclosure(d, source: str, spec, public, exclude, l_diversity: int, value_sql: str,
                       m_sql: str | None, m_given: int | None = None, max_top_share=None) -> str:
    """`value_sql` (the domain), failing the statement as refuse_attribute_disclosure refuses:
    l larger than the domain's `m_sql` values (None: a given domain of `m_given` values, checked
    by the planner), groups that violate l or the top-share limit, single public columns that
    are proxies."""
    if l_diversity <= 1:
        return value_sql
    checks = rp_sql.unseen_disclosure_sql(source, spec.sensitive, public, exclude, l_diversity, spec.nulls,
                                          p=spec.p, m_sql=str(m_given) if m_sql is None else m_sql,
                                          max_top_share=max_top_share)
    off = "; or l_diversity := 1 to release anyway (rwn_sql.release records it in the release metadata)"
    suppress = "suppression: leave those records out of the input (rwn_audit / rwn_sql.audit groups_detail: "
    # nested: the outermost check fails first (l, then proxies, then the top share)
    value_sql = sources.raise_unless(
        d, f"{checks['share_records']} = 0",
        concat(["attribute disclosure: ",
                *TOP_SHARE_PROBLEM.pieces(records=SQL(checks['share_records']), groups=SQL(checks['share_groups']),
                                          sensitive=spec.sensitive, limit=SQL(f"round({checks['max_share']}, 4)")),
                f". What would work: drop or coarsen a public column; {suppress}top_share); or max_top_share := 1 "
                f"to keep only l-diversity{off}"]), value_sql)
    value_sql = sources.raise_unless(
        d, f"{checks['proxies']} IS NULL",
        quote_literal("attribute disclosure: public column(s) ") + f" || {checks['proxies']} || " + quote_literal(
            f" determine {spec.sensitive!r} (in classes of at least 2 records, one value holds at least 95 % of at "
            f"least half of their records): drop or coarsen them{off}"), value_sql)
    value_sql = sources.raise_unless(
        d, f"{checks['l_records']} = 0",
        concat(["attribute disclosure: ",
                *L_DIVERSITY_PROBLEM.pieces(records=SQL(checks['l_records']), groups=SQL(checks['l_groups']),
                                            l=l_diversity, sensitive=spec.sensitive),
                f". What would work: drop or coarsen a public column; {suppress}l_distinct < {l_diversity}){off}"]),
        value_sql)
    if m_sql is None:
        return value_sql
    return sources.raise_unless(d, f"{l_diversity} <= {m_sql}", L_ABOVE_DOMAIN.sql(l=l_diversity, m=SQL(m_sql)),
                                value_sql)


def randomize(name: str, sensitive: str, params: privacy.RPParams, *, public, domain, key_sql: str,
              nulls: str, id_column: str | None = None, dialect=None,
              l_diversity: int | None = None, max_top_share: float | None = None) -> str:
    """randomize's SQL for a table or view the planner cannot see (a TEMP one of the SQL macros'
    caller), planned from the parameters alone; what plan_randomize reads from the source is computed by
    the statement: the output columns (`public`, default every other column but the id, in
    the source's order), the domain (given: cast to the column's type there; None: the values
    present, sorted as text), the id (its type, no NULL, no duplicate), and with a threshold (eps, delta) the blocks per personal-group size
    (rp_sql.designed_trials), and the rules of plan_randomize: a floating-point sensitive column or (no
    domain given) more than MAX_INFERRED_DOMAIN values refused; enforced (default L = 2) or with a
    given l_diversity > 1, the groups that violate l and the public columns that determine the
    sensitive attribute refused (rp_sql.unseen_disclosure_sql: single columns, no pairs). The
    same rows as randomize() for the same key."""
    from ..engines.dialects import DUCKDB
    d = dialect or DUCKDB
    try:
        spec = rp_sql.RandomizeSpec(sensitive=sensitive, p=params.p, nulls=nulls, id=id_column,
                                    public=() if public is None else (public,) if isinstance(public, str)
                                    else tuple(public))
    except ValueError as exc:
        raise refused(exc) from None
    s = quote_ident(sensitive)
    typed = [sources.id_type_check(id_column)] if id_column else []
    keep = None if public is None else [*spec.public, sensitive] + ([id_column] if id_column else [])
    # check_sensitive_type and the NaN part of check_released_values, decided as the statement runs
    values_ok = [sources.raise_unless(d, f"NOT {d.type_matches(s, NESTED_TYPE_NAMES)}",
                                      NESTED_SENSITIVE.sql(sensitive=sensitive, type_name=SQL(d.type_name(s)))),
                 _not_float(d, sensitive)]
    src = sources.unseen_source(name, d, typed, conditions=values_ok, named=[sensitive], keep=keep)
    present = f"SELECT * FROM {src.sql} WHERE {s} IS NOT NULL"
    if domain is None:       # the values present, sorted as their text (as resolve_domain sorts them)
        values = f"(SELECT {d.sorted_list_agg('__rwn_v', d.as_text('__rwn_v'))} FROM (SELECT DISTINCT {s} AS __rwn_v FROM ({present}) AS __rwn_p) AS __rwn_d)"
        m_present = f"coalesce({d.list_length(values)}, 0)"
        domain_sql = sources.raise_unless(d, f"{m_present} >= 2", SMALL_DOMAIN.sql(sensitive=sensitive, m=SQL(m_present)),
                                          _deferred_domain_size(d, sensitive, m_present, values))
    else:
        domain_sql = _deferred_domain(d, name, sensitive, domain)
        m_present = None
    l_diversity = disclosure_rule(params, l_diversity, max_top_share)
    if l_diversity is not None:
        m_given = len(domain_values(domain)) if domain is not None else None
        domain_sql = _deferred_disclosure(d, src.sql, spec, None if public is None else spec.public,
                                        [s] + ([quote_ident(id_column)] if id_column else []),
                                        check_l_diversity(l_diversity, m_given), domain_sql, m_present,
                                        m_given=m_given, max_top_share=max_top_share)
    if id_column:        # as check_record_ids: no NULL, no duplicate (its type: unseen_source)
        domain_sql = _deferred_ids(d, id_column, present if nulls == 'drop' else 'SELECT * FROM ' + src.sql, domain_sql)
    trials, group_key = None, None
    if params.threshold is not None:
        # the domain's size when given, else the statement's (then eps's bound for it is checked there)
        m = len(domain_values(domain)) if domain is not None else d.list_length(domain_sql)
        pp = params.privacy(m if isinstance(m, int) else 2)
        src, trials, group_key = _deferred_trials(d, src, spec, public is None, m, pp)
    return rp_sql.randomize_sql(src.sql, spec, None, None, None, key_sql, check_domain=domain is not None,
                                dialect=d, domain_sql=domain_sql, trials_relation=trials, group_key=group_key)


def _not_float(d, sensitive: str) -> str:
    """A row condition failing the statement as check_sensitive_type refuses a floating-point column."""
    s = quote_ident(sensitive)
    return sources.raise_unless(d, f"NOT {d.type_matches(s, 'DOUBLE|FLOAT')}",
                                FLOAT_SENSITIVE.sql(sensitive=sensitive, type_name=SQL(d.type_name(s))))


def _deferred_ids(d, id_column: str, records_sql: str, value_sql: str) -> str:
    """`value_sql`, failing the statement as check_record_ids refuses: an id NULL or shared by two
    of the records of `records_sql`."""
    i = quote_ident(id_column)
    ids = f"(SELECT count(*) - count({i}) AS nulls, count({i}) - count(DISTINCT {i}) AS shared FROM ({records_sql}) AS __rwn_all)"
    nulls, shared = f"(SELECT nulls FROM {ids} AS __rwn_ids)", f"(SELECT shared FROM {ids} AS __rwn_ids)"
    return sources.raise_unless(
        d, f"{nulls} = 0", ID_NULLS.sql(column=id_column, nulls=SQL(nulls)),
        sources.raise_unless(d, f"{shared} = 0", ID_SHARED.sql(column=id_column, shared=SQL(shared)), value_sql))


def _deferred_trials(d, src, spec, every_other_column: bool, m, pp):
    """(source, relation of the blocks per personal-group size, group key column or None) of an
    enforced randomization: the personal group is the `spec.public` columns, or with
    `every_other_column` every column but the sensitive one and the id, keyed as one value;
    `m` the domain's size (a number, or SQL the statement computes)."""
    s = quote_ident(spec.sensitive)
    group_key = None
    nonnull = ' WHERE ' + s + ' IS NOT NULL' if spec.nulls == 'drop' else ''
    if every_other_column:
        group_key = sources.RESERVED_PREFIX + "pg"
        exclude = [s] + ([quote_ident(spec.id)] if spec.id else [])
        src = sources.Source(f"(SELECT *, {d.row_of_all_but(exclude)} AS {group_key} FROM {src.sql}) AS __rwn_keyed",
                            (), src.label)
        groups = f"SELECT count(*) AS n FROM {src.sql}{nonnull} GROUP BY {group_key}"
    else:
        pub = ", ".join(quote_ident(c) for c in spec.public)
        groups = f"SELECT count(*) AS n FROM {src.sql}{nonnull}" + (f" GROUP BY {pub}" if pub else "")
    return src, rp_sql.designed_trials(groups, pp.p, m, pp.eps, pp.delta, pp.test, d), group_key


def audit(name: str, sensitive: str, p: float, epsilon: float, delta: float, public=None, domain=None,
          test: str = "exact", enforce: bool = False, nulls: str = "error", dialect=None) -> str:
    """audit(..., sql=True) for a table or view the planner cannot see (a TEMP one of the SQL
    macros' caller), planned from the parameters: the statement checks the columns, NULL
    sensitive values (nulls='error'), a given domain against the data and counts the domain
    when none is given; the default public columns form each personal group as one struct
    value, unpacked into its columns in the output (same rows, same order as audit()). With
    enforce, the blocks per group size (rp_sql.designed_trials) and each design's worst tail
    over every count (privacy.design_worst_tail) are computed by the statement too."""
    from ..engines.dialects import DUCKDB
    d = dialect or DUCKDB
    params = privacy.RPParams(p, (epsilon, delta), test)
    p = params.p
    try:
        group_key = sources.RESERVED_PREFIX + "pg"
        pub = None if public is None else (public,) if isinstance(public, str) else tuple(public)
        spec = rp_sql.RandomizeSpec(sensitive=sensitive, p=float(p), public=pub or (group_key,) if pub is None
                                    else pub, nulls=nulls)
    except ValueError as exc:
        raise refused(exc) from None
    if pub is not None:
        check_audit_public(pub)
    s = quote_ident(sensitive)
    conditions = [_not_float(d, sensitive)]
    if nulls == "error":
        conditions.append(sources.raise_unless(d, f"{s} IS NOT NULL",
                                               NULL_SENSITIVE.sql(sensitive=sensitive, nulls="NULL values")))
    if domain is not None:
        literal = _deferred_domain(d, name, sensitive, domain)
        m = len(domain_values(domain))
        params.privacy(m)
        conditions.append(sources.raise_unless(d, f"{s} IS NULL OR {d.list_contains(literal, s)}",
                                               MISSING_FROM_DOMAIN.sql(values=SQL(d.as_text(s)))))
    src = sources.unseen_source(name, d, conditions=conditions, named=[sensitive, *(pub or ())])
    if domain is None:       # the values present; the parameters are checked once it is known
        params.privacy(2)
        present = f"(SELECT count(DISTINCT {s}) FROM {src.sql})"
        m = (f"rwn_privacy_m({float_literal(p)}, {_deferred_domain_size(d, sensitive, present, present)}, "
             f"{float_literal(epsilon)}, {float_literal(delta)}, {quote_literal(test)})")
    if pub is None:
        src = sources.Source(f"(SELECT *, {d.row_of_all_but([s])} AS {group_key} FROM {src.sql}) AS __rwn_keyed",
                            (), src.label)
    trials = failing = None
    if enforce:      # the blocks enforcement would use, and (exact test) the sizes whose design fails a count
        key = quote_ident(group_key) if pub is None else ", ".join(map(quote_ident, pub))
        groups = (f"SELECT count(*) AS n FROM {src.sql}{' WHERE ' + s + ' IS NOT NULL' if nulls == 'drop' else ''}"
                  + (f" GROUP BY {key}" if key else ""))
        trials = rp_sql.designed_trials(groups, float(p), m, epsilon, delta, test, d)
        if test == "exact":
            failing = (f"SELECT size FROM {trials} WHERE rwn_design_worst_tail(size, t, {float_literal(p)}, {m}, "
                       f"{float_literal(epsilon)}, {float_literal(delta)}, {quote_literal(test)}) < "
                       f"{float_literal(delta)}")
    sql = rp_sql.audit_sql(src.sql, spec, m, epsilon, delta, test, None, ordered=pub is not None, dialect=d,
                           trials_relation=trials, failing_designs=failing or ())
    if pub is None:
        sql = (f"SELECT {d.unnest(group_key)}, {d.star('', [group_key])} FROM (\n{sql}\n) AS __rwn_audit "
               f"{d.order_by_all()}")
    return sql


def estimates(release: str, sensitive: str, p: float, domain, group_by=(), where: str | None = None,
              values=None, public=None, enforce=RECORDED, test: str | None = None, dialect=None) -> str:
    """estimates(..., sql=True) for a release table or view the planner cannot see (a TEMP one of
    the SQL macros' caller): planned from the parameters alone, the checks that read the release
    made by the statement (sources.unseen_source): the columns exist (binding), the domain is
    cast to the sensitive column's type and lists no value twice after the cast, every released
    value is in it, and for an enforced release the blocks per group size come from
    privacy.trials_for_sizes at execution (rp_sql.designed_trials). The same rows as estimates()."""
    from ..engines.dialects import DUCKDB
    d = dialect or DUCKDB
    if p is None or domain is None or (isinstance(enforce, str) and enforce == RECORDED):
        raise RWNError(f"{release!r} is a TEMP table or view, whose recorded design the macro cannot read: give p, "
                       f"the domain and epsilon and delta (with test) as the release was made, or enforced := false "
                       f"for a release made without enforcement")
    test = test or "exact"
    params = privacy.RPParams(p, enforce, test)
    p = params.p
    group_by = (group_by,) if isinstance(group_by, str) else tuple(group_by)
    pub = None if public is None else (public,) if isinstance(public, str) else tuple(public)
    check_estimate_columns(sensitive, group_by, pub)
    domain = listed_once(published_domain(domain))
    label = f"table {release!r}"
    where_sql = None
    if where is not None:
        from .analyst import check_predicate, predicate_columns
        where_sql = check_predicate(where, pub if pub is not None else
                                    [c for c in predicate_columns(where) if c.lower() != sensitive.lower()],
                                    sensitive, label)
    values = estimated_values(values, domain)
    vals = None if values is None else [quote_literal(v) for v in values]   # compared with the column: its type
    pp = None
    if params.threshold is not None:
        pp = params.privacy(len(domain))
    s = quote_ident(sensitive)
    # the domain as the sensitive column's type, which only the statement knows
    literal = _deferred_domain(d, release, sensitive, domain)
    typed = d.same_type_list(f"(SELECT {s} FROM {d.table_by_name(quote_literal(release))} LIMIT 0)",
                             [quote_literal(v) for v in domain])
    shown = SQL(f"coalesce({quote_literal(chr(39))} || {d.as_text(s)} || {quote_literal(chr(39))}, 'NULL')")
    inside = sources.raise_unless(d, f"{s} IS NOT NULL AND {d.list_contains(typed, s)}",
                                  OUTSIDE_DOMAIN.sql(sensitive=sensitive, values=shown))
    named = [sensitive, *group_by, *(pub or ())]
    src = sources.unseen_source(release, d, conditions=[inside], named=named)
    design = None
    if pp is not None:
        groups = (d.count_by_all_but(src.sql, [s], "n") if pub is None else
                  f"SELECT count(*) AS n FROM {src.sql}" + (f" GROUP BY {', '.join(map(quote_ident, pub))}" if pub else ""))
        design = (rp_sql.designed_trials(groups, pp.p, pp.m, pp.eps, pp.delta, pp.test, d), pub)
    return rp_sql.estimates_sql(src.sql, sensitive, float_literal(p), literal, group_by, where_sql, vals, design,
                                dialect=d)
