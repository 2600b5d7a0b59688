"""Pure SQL builders for uniform perturbation, reconstruction and the privacy audit
(docs/METHODS.md section 2). Nothing here touches a connection."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...engines.dialects import DUCKDB, DuckDBDialect
from ...errors import RWNError
from ...identifiers import float_literal, quote_ident, quote_literal
from ...randomness import TWO_52, bits_sql, hash_sql, order_key_sql
from ...templates import render
from .privacy import check_p

RANDOMIZE_PURPOSE = "rp.randomize"
BLOCK_PURPOSE = "rp.block"
ORDER_PURPOSE = "rp.order"
NULLS = ("error", "drop")
AUDIT_COLUMNS = ("group_size", "trials", "enforced", "value", "value_count", "frequency", "mu", "theta",
                 "chernoff_upper", "chernoff_lower", "exact_upper", "exact_lower", "passes_chernoff",
                 "passes_exact", "group_passes", "counts", "cells", "stats", "tails", "tails_key", "f_eval",
                 "values_present", "worst_chernoff", "worst_exact", "worst_design_tail", "passes",
                 "l_distinct", "l_entropy", "top_share")
ESTIMATE_COLUMNS = ("value", "released_count", "group_size", "estimate", "std_error", "ci_low", "ci_high",
                    "estimate_clipped", "set_size", "micro_reconstruction")


@dataclass(frozen=True)
class RandomizeSpec:
    sensitive: str
    p: float
    public: tuple[str, ...]
    nulls: str = "error"
    id: str | None = None          # the record identity of every draw (else the input position)

    def __post_init__(self):
        if self.sensitive in self.public:
            raise RWNError(f"column {self.sensitive!r} is both the sensitive attribute and public")
        if self.id is not None and self.id == self.sensitive:
            raise RWNError(f"column {self.id!r} cannot be both the record id and the sensitive attribute")
        if self.id is not None and self.id in self.public:
            raise RWNError(f"the id column {self.id!r} cannot be public: it names every record, so each "
                             f"personal group would be one record and every value could be reconstructed")
        if len(set(self.public)) != len(self.public):
            dup = next(c for c in self.public if self.public.count(c) > 1)
            raise RWNError(f"public: column {dup!r} is listed twice")
        if self.nulls not in NULLS:
            raise RWNError(f"nulls must be one of {', '.join(NULLS)}; got {self.nulls!r}")


def domain_literal(values, type_sql: str, dialect: DuckDBDialect = DUCKDB) -> str:
    """The domain as a typed SQL list: CAST(['a', 'b'] AS VARCHAR[]) in DuckDB."""
    return dialect.typed_list([quote_literal(str(v)) for v in values], type_sql)


def keep_test(hash_sql_expr: str, p: float, dialect: DuckDBDialect = DUCKDB) -> str:
    """SQL for "the first 52 bits of the hash are below p * 2^52": keep with probability p
    (to within 2^-52). p is in (0, 1) (RPParams checked it); any other p is refused, never
    turned into a constant."""
    check_p(p)
    threshold = math.ceil(p * TWO_52)          # bits < p 2^52  <=>  bits < ceil(p 2^52)
    return f"{bits_sql(hash_sql_expr, 0, dialect)} < {threshold}"


def trials_values(trials: dict[int, int]) -> str:
    """The public table of trial counts per group size as a VALUES list: (size, trials)."""
    return "(VALUES " + ", ".join(f"({int(n)}, {int(t)})" for n, t in sorted(trials.items())) + ") AS __rwn_tr(size, t)"


def _trials_check(dialect: DuckDBDialect) -> str:
    """t for a group size, refusing sizes without a design (t = 0) or missing from the table."""
    missing = quote_literal("rwn_sql: a personal group size is missing from the trials table; "
                            "rebuild the SQL for this data")
    impossible = (quote_literal("rwn_sql: a personal group of ") + " || __rwn_tr.size || "
                  + quote_literal(" records cannot pass the test with any number of blocks"))
    return (f"CASE WHEN __rwn_tr.t IS NULL THEN {dialect.raise_error(missing)}"
            f" WHEN __rwn_tr.t = 0 THEN {dialect.raise_error(impossible)} ELSE __rwn_tr.t END")


def randomize_sql(source: str, spec: RandomizeSpec, output_columns, domain_values, type_sql: str,
                  key_sql: str, blocks=None, check_domain: bool = True,
                  dialect: DuckDBDialect = DUCKDB, leave_out=(), domain_sql: str | None = None,
                  trials_relation: str | None = None, group_key: str | None = None) -> str:
    """The release: the public columns and the randomized sensitive column, one row per input
    record (minus NULL-sensitive records with nulls='drop'), in an order drawn by the keyed
    hash (randomness.order_key_sql), so row order carries nothing about the input order.

    The domain (at least 2 values, sorted here) is a constant list in the SQL. Every row is
    checked: a NULL sensitive value (with nulls='error') and, with check_domain, a value
    outside the domain raise an error. Every internal name starts with '__rwn_', which input
    columns may not (sources.refuse_reserved).
    leave_out: personal-group sizes (with blocks) whose records are suppressed.
    For a source the planner cannot see (rp.temp_source.randomize): output_columns None: every
    column of `source` but the id (in their order); domain_sql: the domain as a SQL list
    (instead of domain_values and type_sql); trials_relation: the relation __rwn_tr(size, t)
    (instead of blocks); group_key: one column of `source` naming each record's personal group
    (instead of PARTITION BY the public columns), left out of the output."""
    values = sorted(str(v) for v in domain_values or ())
    if len(values) < 2 and domain_sql is None:
        raise RWNError("the domain of the sensitive attribute needs at least 2 values")
    s = quote_ident(spec.sensitive)
    pub = ", ".join(quote_ident(c) for c in spec.public)
    rid = dialect.as_text(quote_ident(spec.id)) if spec.id else "row_number() OVER ()"
    staged = (f"SELECT {rid} AS __rwn_rid, * FROM {source}"
              + (f" WHERE {s} IS NOT NULL" if spec.nulls == "drop" else ""))
    internal = ["__rwn_rid", "__rwn_h", "__rwn_o"] + ([quote_ident(spec.id)] if spec.id else [])
    if group_key is not None:
        internal.append(group_key)
    if blocks is None and trials_relation is None:
        units, unit = staged, "__rwn_rid"
    else:
        internal.append("__rwn_unit")
        keys = group_key or pub
        part = f"PARTITION BY {keys}" if keys else ""
        carried = (", ".join(quote_ident(c) for c in output_columns) if output_columns is not None
                   else dialect.star("", ["__rwn_rid", "__rwn_gid", "__rwn_pos", "__rwn_gsize", "__rwn_trials"]))
        # 62 bits of a keyed hash, then the record: the same order on every engine (the
        # 128-bit hash itself is a number on DuckDB but hex text on Spark, which sort differently)
        order = (dialect.uint128_bits(hash_sql(key_sql, BLOCK_PURPOSE, "__rwn_rid", spec.sensitive, dialect), 0, 62)
                 + ", __rwn_rid")
        unit = "__rwn_unit"
        units = (
            "-- enforcement: a personal group of n records is split at random into t(n) blocks;\n"
            "        -- each block shares one coin and one replacement value (t depends on n only)\n"
            "        SELECT 'g' || __rwn_gid || 'b' || ((__rwn_pos - 1) % __rwn_trials) AS __rwn_unit,\n"
            f"            __rwn_rid, {carried}\n"
            f"        FROM (SELECT __rwn_g.*, {_trials_check(dialect)} AS __rwn_trials\n"
            "            FROM (\n"
            f"                SELECT *, min(__rwn_rid) OVER ({part}) AS __rwn_gid,\n"
            f"                    row_number() OVER ({part} ORDER BY {order}) AS __rwn_pos,\n"
            f"                    count(*) OVER ({part}) AS __rwn_gsize\n"
            f"                FROM ({staged}) AS __rwn_staged) __rwn_g\n"
            f"            LEFT JOIN {trials_relation or trials_values(blocks)} ON __rwn_tr.size = __rwn_g.__rwn_gsize"
            + (f" WHERE __rwn_g.__rwn_gsize NOT IN ({', '.join(str(int(n)) for n in leave_out)})"
               if leave_out else "") + ")")
    domain = domain_sql or domain_literal(values, type_sql, dialect)
    m = dialect.list_length(domain) if domain_sql else len(values)
    pick = bits_sql("__rwn_h", 1, dialect)
    null_check = (f"WHEN {s} IS NULL THEN " + dialect.raise_error(quote_literal(
        f"rwn_sql: the sensitive column {s} has NULL values; clean them or use nulls='drop' (--nulls drop; "
        "those records are then left out)")) + "\n        ")
    domain_check = (f"WHEN NOT {dialect.list_contains(domain, s)} THEN " + dialect.raise_error(
        quote_literal("rwn_sql: the domain misses values present in the data: ") + f" || {dialect.as_text(s)}")
        + "\n        ") if check_domain else ""
    # pick / 2^52 < 1 exactly, and (1 - 2^-52) m rounds below m: the index stays in 1..m
    randomized = (f"CASE {null_check}{domain_check}WHEN {keep_test('__rwn_h', spec.p, dialect)} THEN {s}\n"
                  f"        ELSE {dialect.list_element(domain, f'1 + CAST(floor({dialect.unit_fraction(pick)} * {m}) AS BIGINT)')} END")
    if output_columns is None:
        columns = dialect.star("", internal, [(randomized, s)])
    else:
        columns = ",\n    ".join(f"{randomized} AS {s}" if c == spec.sensitive else quote_ident(c)
                                  for c in output_columns)
    return render(
        "rp_randomize.sql",
        columns=columns,
        hash=hash_sql(key_sql, RANDOMIZE_PURPOSE, unit, spec.sensitive, dialect),
        order_key=order_key_sql(key_sql, ORDER_PURPOSE, "__rwn_rid", dialect),
        units=units,
    )


AUDIT_ROW_STATS = ("group_size", "trials", "enforced", "value", "value_count", "frequency", "mu", "theta",
                   "chernoff_upper", "chernoff_lower", "exact_upper", "exact_lower", "passes_chernoff",
                   "passes_exact")


def audit_sql(source: str, spec: RandomizeSpec, m: int, eps: float, delta: float, test: str,
              blocks=None, ordered: bool = True, group_verdicts: bool = True,
              dialect: DuckDBDialect = DUCKDB, failing_designs=(), tails_relation: str | None = None,
              cases_only: bool = False, counts_relation: str | None = None, counts_only: bool = False,
              trials_relation: str | None = None) -> str:
    """Per personal group and value present in it: the reconstruction-privacy statistics and
    verdicts (AUDIT_ROW_STATS after the public columns, then group_passes: the chosen `test`
    over all values of the group), ordered by group and value. `m` is the size of the
    published domain (or SQL computing it). The exact tails come from rwn_audit_tails() (rwn_sql.install).
    ordered=False leaves the rows unsorted; group_verdicts=False leaves out group_passes (and
    the join that computes it), for callers that aggregate the verdicts themselves.
    failing_designs: group sizes whose design fails at some count (rp.audit evaluates every
    count); their groups fail whatever the counts present (or a SELECT of those sizes).
    trials_relation: the relation __rwn_tr(size, t) in place of blocks (rp.temp_source).
    tails_relation: a relation of the exact tails (enforced, group_size, tails_key, exact)
    computed beforehand, for engines without the UDF; cases_only: the SQL listing the distinct
    cases (enforced, group_size, tails_key) whose tails the audit needs.
    counts_only: the SQL of the per-(group, value) counts alone; counts_relation: a relation of
    those counts computed beforehand, read instead of the source (an engine that stages them
    counts the data once for both the cases and the audit)."""
    groups = [quote_ident(c) for c in spec.public] or ["__rwn_all"]   # no public column: one group
    p = float_literal(spec.p)
    if isinstance(m, str):        # SQL computing m (the same double arithmetic as below)
        b, m_sql = f"((1 - {p}) / {m})", m
    else:
        b, m_sql = float_literal((1 - spec.p) / m), str(int(m))
    exact = f"rwn_audit_tails(e, CAST(n AS BIGINT[]), CAST(k AS BIGINT[]), {p}, {m_sql}, {float_literal(eps)})"
    if tails_relation is None:    # all cases in one call of the UDF (lists in, a list of tails out, zipped back)
        tails = ("SELECT unnest(e) AS enforced, unnest(n) AS group_size, unnest(k) AS tails_key,\n"
                 f"        unnest({exact}) AS exact\n"
                 "    FROM (SELECT list(enforced) AS e, list(group_size) AS n, list(tails_key) AS k\n"
                 "          FROM (SELECT DISTINCT enforced, group_size, tails_key FROM stats))")
    else:
        tails = f"SELECT enforced, group_size, tails_key, exact FROM {tails_relation}" if tails_relation else \
            "SELECT enforced, group_size, tails_key, NULL AS exact FROM stats WHERE false"
    public_cols, sens = ", ".join(groups), quote_ident(spec.sensitive)
    counts = (f"SELECT * FROM {counts_relation}" if counts_relation else
              f"SELECT {public_cols}, {sens} AS value, count(*) AS value_count\n"
              f"    FROM staged\n    GROUP BY {public_cols}, {sens}")
    body = render(
        "rp_audit.sql",
        counts=counts,
        source=source,
        all_column="" if spec.public else f", {dialect.as_text('NULL')} AS __rwn_all",
        null_filter=f"\n    WHERE {quote_ident(spec.sensitive)} IS NOT NULL" if spec.nulls == "drop" else "",
        public_cols=public_cols,
        trials=_trials_check(dialect) if blocks or trials_relation else "g.group_size",
        trials_join=(f"\n    LEFT JOIN {trials_relation or trials_values(blocks)} ON __rwn_tr.size = g.group_size"
                     if blocks or trials_relation else ""),
        same_group_cg=same_group("c", "g", groups),
        materialized=dialect.materialized(),
        bounds_materialized=dialect.materialized() if group_verdicts else "",
        p=p, b=b, eps=float_literal(eps),
        tails=tails,
    )
    if counts_only:
        return "WITH\n" + body + "\nSELECT * FROM counts"
    if cases_only:
        return "WITH\n" + body + "\nSELECT DISTINCT enforced, group_size, tails_key FROM stats"
    verdict = verdict_sql(delta)
    if isinstance(failing_designs, str):      # a SELECT of the failing sizes
        design_ok = f" AND any_value(group_size) NOT IN ({failing_designs})"
    else:
        design_ok = (f" AND any_value(group_size) NOT IN ({', '.join(str(int(n)) for n in failing_designs)})"
                     if failing_designs else "")
    pub_out = "".join(f"b.{quote_ident(c)}, " for c in spec.public)
    select = (f"SELECT {pub_out}group_size, trials, enforced, value, value_count, frequency, mu, theta,\n"
              "    chernoff_upper, chernoff_lower, exact.upper AS exact_upper, exact.lower AS exact_lower,\n"
              f"    {verdict['chernoff']} AS passes_chernoff,\n"
              f"    {verdict['exact']} AS passes_exact")
    if group_verdicts:
        body += (",\nverdicts AS (\n"
                 f"    SELECT {', '.join(groups)}, bool_and({verdict[test]}){design_ok} AS group_passes\n"
                 f"    FROM bounds GROUP BY {', '.join(groups)}\n)")
        select += f",\n    v.group_passes\nFROM bounds b JOIN verdicts v ON {same_group('b', 'v', groups)}"
    else:
        select += "\nFROM bounds b"
    return "WITH\n" + body + "\n" + select + (f"\nORDER BY {pub_out}value" if ordered else "")


# Attribute disclosure: what (eps, delta)-reconstruction-privacy does not bound. A personal
# group whose records hold one sensitive value gives it away to a majority vote of the released
# values, however unsure the reconstruction of its frequency stays; so does a public column
# (or pair) whose values determine the sensitive attribute.
DEFAULT_L_DIVERSITY = 2        # distinct values a personal group of >= 2 records must hold
MAX_INFERRED_DOMAIN = 256      # distinct values of a domain read from the data; beyond: RWN or a domain file
PROXY_SHARE = (19, 20)         # a class of a public column is determined when one value holds >= 19/20 of it
PROXY_PAIR_VALUES = 100        # pairs are checked only among public columns with at most this many values
PROXY_MAX_PAIRS = 45           # and at most this many pairs (those with the fewest value combinations)


def l_violation(l_diversity: int, size: str = "group_size", distinct: str = "l_distinct") -> str:
    """SQL: a personal group violates distinct l-diversity (at least 2 records, fewer than L
    distinct sensitive values; a single record is the (eps, delta) audit's alone)."""
    return f"({size} >= 2 AND {distinct} < {int(l_diversity)})"


def share_violation(max_share_sql: str, size: str = "group_size", top: str = "top_share") -> str:
    """SQL: a personal group of at least 2 records whose most frequent sensitive value holds more
    than `max_share_sql` of it (what a majority vote within the group recovers, at most)."""
    return f"({size} >= 2 AND {top} > {max_share_sql})"


def top_share_limit_sql(p: float, m_sql: str, mode_share_sql: str) -> str:
    """SQL of the default top-share limit: the better of what an attacker gets without the group,
    reading a record's own released value (p + (1-p)/m) or guessing the most frequent value
    (its share of all records, `mode_share_sql`)."""
    return (f"greatest({float_literal(p)} + {float_literal(1.0 - p)} / CAST({m_sql} AS DOUBLE), "
            f"{mode_share_sql})")


def diversity_columns(value_count: str = "value_count") -> str:
    """The per-group aggregates over one row per (group, value present): distinct
    l-diversity (values present), entropy l-diversity exp(H), H the entropy (nats) of the
    group's sensitive values, and the share of its most frequent value."""
    c = f"CAST({value_count} AS DOUBLE)"
    return (f"count(*) AS l_distinct, "
            f"exp(ln(sum({c})) - sum({c} * ln({c})) / sum({c})) AS l_entropy, "
            f"max({c}) / sum({c}) AS top_share")


def l_summary_sql(counts: str, keys, l_diversity: int, leave_out=(), max_share_sql: str = "1.0") -> str:
    """Over `counts` (keys..., value, value_count), personal groups formed by `keys`, groups of
    the sizes `leave_out` (suppressed) not counted: (groups, records) violating l_violation,
    (groups, records) violating share_violation at `max_share_sql`, and the records violating either."""
    by = f" GROUP BY {', '.join(keys)}" if keys else ""
    skip = f" WHERE group_size NOT IN ({', '.join(str(int(n)) for n in leave_out)})" if leave_out else ""
    # one row per (group, value) of these keys: `counts` may be finer (a subset of its columns)
    pub = "".join(k + ", " for k in keys)
    per_value = (f"(SELECT {pub}value, sum(value_count) AS value_count FROM {counts} GROUP BY {pub}value) "
                 f"AS __rwn_gv")
    lv, sv = l_violation(l_diversity), share_violation(max_share_sql)
    return (f"SELECT count(*) FILTER (WHERE {lv}), coalesce(sum(group_size) FILTER (WHERE {lv}), 0), "
            f"count(*) FILTER (WHERE {sv}), coalesce(sum(group_size) FILTER (WHERE {sv}), 0), "
            f"coalesce(sum(group_size) FILTER (WHERE {lv} OR {sv}), 0) FROM (SELECT sum(value_count) AS group_size, "
            f"{diversity_columns()} FROM {per_value}{by}) AS __rwn_div{skip}")


def mode_share_sql(counts: str) -> str:
    """SQL: the share of all records held by the most frequent sensitive value, over `counts`."""
    return (f"(SELECT max(s) / sum(s) FROM (SELECT CAST(sum(value_count) AS DOUBLE) AS s FROM {counts} "
            f"GROUP BY value) AS __rwn_mode)")


def proxy_sql(counts: str, column_sets) -> str:
    """Per set of public columns (quoted names; row set_index), over `counts` (public...,
    value, value_count): `records`, those in classes (values of the set) of at least 2 records;
    `exposed`, in such classes whose most frequent sensitive value holds at least PROXY_SHARE
    of the class, the records holding that value (what a majority vote within the class gives
    away); `cond_entropy`, H(SA | set) in bits over every record. Grid-free: group-bys only."""
    share, whole = PROXY_SHARE
    parts = []
    for i, cols in enumerate(column_sets):
        keys = ", ".join(cols)
        parts.append(
            f"SELECT {i} AS set_index, coalesce(sum(n) FILTER (WHERE n >= 2), 0) AS records,\n"
            f"    coalesce(sum(top) FILTER (WHERE n >= 2 AND {whole} * top >= {share} * n), 0) AS exposed,\n"
            f"    sum(n * ln(n) - slc) / sum(n) / ln(2) AS cond_entropy\n"
            f"FROM (SELECT {keys}, sum(c) AS n, max(c) AS top, sum(c * ln(c)) AS slc\n"
            f"      FROM (SELECT {keys}, value, CAST(sum(value_count) AS DOUBLE) AS c FROM {counts}\n"
            f"            GROUP BY {keys}, value) AS __rwn_cv GROUP BY {keys}) AS __rwn_cls")
    return "\nUNION ALL\n".join(parts)


def verdict_sql(delta: float) -> dict[str, str]:
    """Per test, the SQL of "both tails are at least delta" over the audit's `bounds`."""
    d = float_literal(delta)
    return {"chernoff": f"chernoff_upper >= {d} AND chernoff_lower >= {d}",
            "exact": f"exact.upper >= {d} AND exact.lower >= {d}"}


def same_group(a: str, b: str, columns) -> str:
    """Join condition of two relations on the personal group (NULL matches NULL)."""
    return " AND ".join(f"{a}.{g} IS NOT DISTINCT FROM {b}.{g}" for g in columns)


def _units(units, size_sql: str = "g.group_size") -> str:
    """ss and sh of independent records (one per unit): both the group size."""
    return f" {size_sql} AS ss, {size_sql} AS sh," if units else ""


def estimates_sql(release: str, sensitive: str, p_sql: str, domain_sql: str, group_by=(),
                  where_sql: str | None = None, values=None, design=None,
                  dialect: DuckDBDialect = DUCKDB) -> str:
    """Reconstructed counts over a release. Per group of `group_by` (public columns): with
    values=None, one row per domain value; else one row for the value set `values` (a list
    of SQL literals of the sensitive type), whose estimate is the sum over the set.
    design=(trials_relation, public_columns) for a release enforced with blocks: the relation
    has columns (size, t), the number of blocks of a personal group of each size; the
    standard errors then account for the records of a block moving together. public_columns
    None: every column but the sensitive one. Ungrouped over a value set, an empty selection
    gives one row of zeros (as SQL's COUNT does); grouped, no row (as GROUP BY does)."""
    s = quote_ident(sensitive)
    groups = [quote_ident(c) for c in group_by]
    if design is None:
        design_cte, design_join = "", ""
        units = "group_size AS ss, group_size AS sh"
    else:
        trials, public = design
        if public is None:       # every column but the sensitive one
            personal_groups = dialect.count_by_all_but("released", [s], "n")
        else:
            personal = ", ".join(dict.fromkeys(groups + [quote_ident(c) for c in public]))
            personal_groups = f"SELECT {''.join(g + ', ' for g in groups)}count(*) AS n FROM released GROUP BY {personal}"
        on = " AND ".join([f"d.{g} IS NOT DISTINCT FROM c.{g}" for g in groups]) or "true"
        design_cte = (
            "\nblocks AS (\n"
            "    -- every personal group in S, its t blocks: n mod t of size q+1, the rest of size q\n"
            f"    SELECT {''.join(g + ', ' for g in groups)}n, __rwn_tr.t, {dialect.int_div('n', '__rwn_tr.t')} AS q, "
            "n % __rwn_tr.t AS r\n"
            f"    FROM ({personal_groups}) pg\n"
            f"    JOIN {trials} ON __rwn_tr.size = pg.n\n"
            "),\n"
            "design AS (\n"
            f"    SELECT {''.join(g + ', ' for g in groups)}\n"
            "        coalesce(sum(r * (q + 1) * (q + 1) + (t - r) * q * q), 0) AS ss,\n"
            "        coalesce(sum(CASE WHEN n > 1 THEN (r * (q + 1) * (n - q - 1) + (t - r) * q * (n - q)) / (n - 1)\n"
            "                 ELSE 0 END), 0) AS sh\n"
            f"    FROM blocks{' GROUP BY ' + ', '.join(groups) if groups else ''}\n"
            "),")
        design_join = f"\n    JOIN design d ON {on}"
        units = None
    gsel = "".join(g + ", " for g in groups)
    gby = f" GROUP BY {', '.join(groups)}" if groups else ""
    if values is None:
        join = " AND ".join([f"c.{g} IS NOT DISTINCT FROM g.{g}" for g in groups] + ["c.value = d.value"])
        counts = (f"SELECT {''.join('g.' + x + ', ' for x in groups)}d.value, 1 AS set_size, g.group_size,{_units(units)}\n"
                  f"        CAST(coalesce(c.n, 0) AS BIGINT) AS released_count\n"
                  f"    FROM (SELECT {gsel}count(*) AS group_size FROM released{gby}\n"
                  f"          HAVING count(*) > 0) g\n"
                  f"    CROSS JOIN (SELECT {dialect.unnest('__rwn_domain')} AS value FROM params) d\n"
                  f"    LEFT JOIN (SELECT {gsel}{s} AS value, count(*) AS n FROM released GROUP BY {gsel}{s}) c\n"
                  f"        ON {join}")
        output = f"{gsel}value,"
        order = ", ".join(groups + ["value"])
    else:
        in_list = ", ".join(values)
        counts = (f"SELECT {gsel}{len(values)} AS set_size, count(*) AS group_size,{_units(units, 'count(*)')}\n"
                  f"        count(*) FILTER (WHERE {s} IN ({in_list})) AS released_count\n"
                  f"    FROM released{gby}" + (" HAVING count(*) > 0" if groups else ""))
        output = gsel.rstrip()
        order = ", ".join(groups) if groups else "group_size"
    return "WITH\n" + render(
        "rp_estimates.sql",
        release=release,
        where=f"\n    WHERE {where_sql}" if where_sql else "",
        p=p_sql,
        domain=domain_sql,
        domain_size=dialect.list_length(domain_sql),
        counts=counts,
        design=design_cte,
        design_join=design_join,
        design_cols=", d.ss, d.sh" if design is not None else "",
        output_cols=output,
        order=order,
    )


def nonnegative_sql(estimates: str, group_by=()) -> str:
    """`estimates` (per group of `group_by` and domain value: estimate, group_size, ...) plus
    nonnegative_estimate: per group, the Euclidean projection of the unbiased estimates onto
    {x >= 0, sum x = group_size} (the scaled simplex), in closed form: with the estimates sorted
    in decreasing order and their running sums cs_j, rho = the largest j with
    e_(j) - (cs_j - n)/j > 0, tau = (cs_rho - n)/rho and x = max(e - tau, 0) (Held, Wolfe and
    Crowder 1974; Duchi et al. 2008). The unbiased estimates of a group sum to n exactly, so
    tau = 0 and x = e when none is negative. Biased (towards the interior), never negative,
    the group's total kept. DuckDB SQL (the release database's views)."""
    part = f"PARTITION BY {', '.join(quote_ident(c) for c in group_by)}" if group_by else ""
    return (
        f"SELECT {DUCKDB.star('', ['__rwn_j', '__rwn_cs', '__rwn_rho', '__rwn_tau'])},\n"
        "    greatest(estimate - __rwn_tau, 0.0) AS nonnegative_estimate\n"
        "FROM (SELECT *, max(CASE WHEN __rwn_j = __rwn_rho THEN (__rwn_cs - group_size) / __rwn_j END)\n"
        f"                     OVER ({part}) AS __rwn_tau\n"
        "      FROM (SELECT *, max(CASE WHEN estimate - (__rwn_cs - group_size) / __rwn_j > 0 THEN __rwn_j END)\n"
        f"                           OVER ({part}) AS __rwn_rho\n"
        f"            FROM (SELECT *, row_number() OVER __rwn_w AS __rwn_j, sum(estimate) OVER __rwn_w AS __rwn_cs\n"
        f"                  FROM (\n{estimates}\n) AS __rwn_e\n"
        f"                  WINDOW __rwn_w AS ({part} ORDER BY estimate DESC, value\n"
        "                                    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) AS __rwn_s\n"
        "           ) AS __rwn_k\n"
        "     ) AS __rwn_t")


MEASURES = ("sum", "avg")
MEASURE_COLUMNS = {"sum": ("released_sum", "group_size", "estimate", "std_error", "ci_low", "ci_high"),
                   "avg": ("released_avg", "group_size", "count_estimate", "estimate", "std_error", "ci_low",
                           "ci_high")}


def measure_estimates_sql(release: str, sensitive: str, column: str, measure: str, public, p_sql: str,
                          domain_sql: str, group_by=(), where_sql: str | None = None, values=None,
                          design=None, dialect: DuckDBDialect = DUCKDB) -> str:
    """SUM (measure='sum') or AVG ('avg') of the public numeric `column` over the released
    records satisfying `where_sql` (and `column` IS NOT NULL) whose sensitive value is in the
    set `values` (SQL literals of the sensitive type), per group of `group_by`; with
    values=None, per group and domain value (column __rwn_value). `public`: the public
    columns (the personal groups, which hold `column`); design=(trials_relation, public) as
    in estimates_sql. Output: the group columns [, __rwn_value], then MEASURE_COLUMNS[measure]
    (sql/rp_sums.sql has the formulas)."""
    if measure not in MEASURES:
        raise RWNError(f"measure must be one of {', '.join(MEASURES)}; got {measure!r}")
    if column not in public:
        raise RWNError(f"column {column!r} is not a public column")
    s, x = quote_ident(sensitive), quote_ident(column)
    pub = [quote_ident(c) for c in public]
    keys = [quote_ident(c) for c in group_by] + (["__rwn_value"] if values is None else [])
    if design is None:
        units, design_join = "pg.__rwn_n AS __rwn_ss, pg.__rwn_n AS __rwn_sh", ""
    else:
        # t blocks of a group of n: n mod t of size q+1, the rest of size q (q = n div t);
        # SS = sum of squared block sizes, SH = sum s (n - s) / (n - 1) (rp_estimates.sql)
        n, t = "pg.__rwn_n", "__rwn_tr.t"
        q, r = dialect.int_div(n, t), f"({n} % {t})"
        units = (f"{r} * ({q} + 1) * ({q} + 1) + ({t} - {r}) * {q} * {q} AS __rwn_ss,\n"
                 f"        CASE WHEN {n} > 1 THEN ({r} * ({q} + 1) * ({n} - {q} - 1) + ({t} - {r}) * {q} * ({n} - {q}))"
                 f" / ({n} - 1) ELSE 0 END AS __rwn_sh")
        design_join = f"\n    LEFT JOIN {design[0]} ON __rwn_tr.size = pg.__rwn_n"
    if values is None:
        hits = ""
        on = " AND ".join(f"p.{c} IS NOT DISTINCT FROM h.{c}" for c in pub)
        cells = ("SELECT p.*, d.__rwn_value, coalesce(h.__rwn_o, 0) AS __rwn_o\n"
                 "    FROM personal p\n"
                 f"    CROSS JOIN (SELECT {dialect.unnest('__rwn_domain')} AS __rwn_value FROM params) d\n"
                 f"    LEFT JOIN (SELECT {', '.join(pub)}, {s} AS __rwn_value, count(*) AS __rwn_o\n"
                 f"               FROM released GROUP BY {', '.join(pub)}, {s}) h\n"
                 f"        ON {on} AND h.__rwn_value = d.__rwn_value")
        set_size = 1
    else:
        hits = f", count(*) FILTER (WHERE {s} IN ({', '.join(values)})) AS __rwn_o"
        cells = "SELECT * FROM personal"
        set_size = len(values)
    weight = "c.__rwn_x" if measure == "sum" else \
        "c.__rwn_x - f.sum_estimate / NULLIF(f.count_estimate, 0)"
    count = "NULLIF(count_estimate, 0)"
    if measure == "sum":
        body = ["released_sum", "group_size", "sum_estimate AS estimate", "__rwn_sd AS std_error"]
        ci = "sum_estimate", "__rwn_sd"
    else:
        body = ["released_sum / NULLIF(released_hits, 0) AS released_avg", "group_size", "count_estimate",
                f"sum_estimate / {count} AS estimate", f"__rwn_sd / abs({count}) AS std_error"]
        ci = f"sum_estimate / {count}", f"__rwn_sd / abs({count})"
    body += [f"{ci[0]} - 1.959963984540054 * {ci[1]} AS ci_low", f"{ci[0]} + 1.959963984540054 * {ci[1]} AS ci_high"]
    return "WITH\n" + render(
        "rp_sums.sql",
        release=release,
        where=" AND ".join(([f"({where_sql})"] if where_sql else []) + [f"{x} IS NOT NULL"]),
        p=p_sql, domain=domain_sql, domain_size=dialect.list_length(domain_sql), set_size=set_size,
        units=units, public=", ".join(pub), x=x, hits=hits, design_join=design_join, cells=cells,
        keys="".join(k + ", " for k in keys),
        firsts_from="cells CROSS JOIN params" if keys else "params LEFT JOIN cells ON true",
        weight=weight,
        cells_firsts=" AND ".join(f"c.{k} IS NOT DISTINCT FROM f.{k}" for k in keys) or "true",
        group_weighted=f"\n    GROUP BY {', '.join(keys)}" if keys else "",
        firsts_weighted=" AND ".join(f"f.{k} IS NOT DISTINCT FROM w.{k}" for k in keys) or "true",
        output=",\n    ".join(keys + body),
        order=", ".join(keys) if keys else "group_size",
    )
