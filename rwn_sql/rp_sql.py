"""Pure SQL builders for uniform perturbation, reconstruction and the privacy audit
(docs/METHODS.md section 2). Nothing here touches a connection."""
from __future__ import annotations

import math
from dataclasses import dataclass

from .dialect import DUCKDB, DuckDBDialect
from .identifiers import float_literal, quote_ident, quote_literal
from .randomness import TWO_52, bits_sql, hash_sql
from .sqlgen import _render

RANDOMIZE_PURPOSE = "rp.randomize"
BLOCK_PURPOSE = "rp.block"
NULLS = ("error", "drop")
AUDIT_COLUMNS = ("group_size", "trials", "enforced", "value", "value_count", "frequency", "mu", "theta",
                 "chernoff_upper", "chernoff_lower", "exact_upper", "exact_lower", "passes_chernoff",
                 "passes_exact", "group_passes", "counts", "cells", "stats", "tails", "tails_key", "f_eval")
ESTIMATE_COLUMNS = ("value", "released_count", "group_size", "estimate", "std_error", "ci_low", "ci_high",
                    "estimate_clipped", "set_size", "micro_reconstruction")


@dataclass(frozen=True)
class RandomizeSpec:
    sensitive: str
    p: float
    public: tuple[str, ...]
    nulls: str = "error"

    def __post_init__(self):
        if self.sensitive in self.public:
            raise ValueError(f"column {self.sensitive!r} is both the sensitive attribute and public")
        if len(set(self.public)) != len(self.public):
            dup = next(c for c in self.public if self.public.count(c) > 1)
            raise ValueError(f"public: column {dup!r} is listed twice")
        if self.nulls not in NULLS:
            raise ValueError(f"nulls must be one of {', '.join(NULLS)}; got {self.nulls!r}")


def domain_literal(values, type_sql: str) -> str:
    """The domain as a typed SQL list: CAST(['a', 'b'] AS VARCHAR[])."""
    return f"CAST([{', '.join(quote_literal(str(v)) for v in values)}] AS {type_sql}[])"


def keep_test(hash_sql_expr: str, p: float) -> str:
    """SQL for "the first 52 bits of the hash are below p * 2^52", comparing the 13 hex digits as
    text: fixed-width lower-case hex orders like the numbers, so nothing is parsed."""
    if p >= 1:
        return "true"
    if p <= 0:
        return "false"
    threshold = math.ceil(p * TWO_52)          # bits < p 2^52  <=>  bits < ceil(p 2^52)
    return f"substr({hash_sql_expr}, 1, 13) < {quote_literal(format(threshold, '013x'))}"


def trials_values(trials: dict[int, int]) -> str:
    """The public table of trial counts per group size as a VALUES list: (size, trials)."""
    return "(VALUES " + ", ".join(f"({int(n)}, {int(t)})" for n, t in sorted(trials.items())) + ") AS tr(size, t)"


def _trials_check(dialect: DuckDBDialect) -> str:
    """t for a group size, refusing sizes without a design (t = 0) or missing from the table."""
    missing = quote_literal("rwn_sql: a personal group size is missing from the trials table; "
                            "rebuild the SQL for this data")
    impossible = (quote_literal("rwn_sql: a personal group of ") + " || tr.size || "
                  + quote_literal(" records cannot pass the test with any number of blocks"))
    return (f"CASE WHEN tr.t IS NULL THEN {dialect.raise_error(missing)}"
            f" WHEN tr.t = 0 THEN {dialect.raise_error(impossible)} ELSE tr.t END")


def randomize_ctes(source: str, spec: RandomizeSpec, domain_sql: str, key_sql: str,
                   blocks=None, check_domain: bool = True, dialect: DuckDBDialect = DUCKDB) -> str:
    s = quote_ident(spec.sensitive)
    pub = ", ".join(quote_ident(c) for c in spec.public)
    null_filter = f"\n    WHERE {s} IS NOT NULL" if spec.nulls == "drop" else ""
    if blocks is None:
        units = "SELECT CAST(__rwn_rid AS VARCHAR) AS unit, * FROM staged"
    else:
        part = f"PARTITION BY {pub}" if pub else ""
        order = hash_sql(key_sql, BLOCK_PURPOSE, "__rwn_rid", spec.sensitive, dialect)
        units = (
            "-- enforcement: a personal group of n records is split at random into t(n) blocks;\n"
            "    -- each block shares one coin and one replacement value (t depends on n only)\n"
            "    SELECT 'g' || gid || 'b' || ((pos - 1) % trials) AS unit, * EXCLUDE (gid, pos, gsize, trials)\n"
            f"    FROM (SELECT g.*, {_trials_check(dialect)} AS trials\n"
            "        FROM (\n"
            f"            SELECT *, min(__rwn_rid) OVER ({part}) AS gid,\n"
            f"                row_number() OVER ({part} ORDER BY {order}) AS pos,\n"
            f"                count(*) OVER ({part}) AS gsize\n"
            "            FROM staged) g\n"
            f"        LEFT JOIN {trials_values(blocks)} ON tr.size = g.gsize)")
    missing = "'rwn_sql: the domain misses values present in the data: ' || missing"
    return _render(
        "rp_randomize.sql",
        source=source,
        materialized=dialect.materialized(),
        null_filter=null_filter,
        null_keep=f" AND {s} IS NOT NULL" if spec.nulls == "drop" else "",
        domain_values=f"SELECT unnest({domain_sql})",
        sens=s,
        raise_empty=dialect.raise_error("'rwn_sql: the input has no records'"),
        raise_nulls=dialect.raise_error(quote_literal(
            f"rwn_sql: the sensitive column {quote_ident(spec.sensitive)} has ") + " || nulls || "
            + quote_literal(" NULL values; clean them or use nulls='drop' (those records are then left out)")),
        missing_check=(f"        WHEN missing IS NOT NULL THEN {dialect.raise_error(missing)}\n" if check_domain else ""),
        missing_from=("\n         (SELECT string_agg(DISTINCT CAST(" + s + " AS VARCHAR), ', ') AS missing\n"
                      "          FROM src, domain WHERE " + s + " IS NOT NULL AND NOT list_contains(domain.vals, "
                      + s + "))," if check_domain else ""),
        raise_small_domain=dialect.raise_error(quote_literal(
            "rwn_sql: the domain of the sensitive attribute needs at least 2 values")),
        units=units,
        hash=hash_sql(key_sql, RANDOMIZE_PURPOSE, "unit", spec.sensitive, dialect),
    )


def randomize_sql(source: str, spec: RandomizeSpec, output_columns, domain_sql: str, key_sql: str,
                  blocks=None, check_domain: bool = True, dialect: DuckDBDialect = DUCKDB) -> str:
    """The release: the public columns and the randomized sensitive column, in source order,
    one row per input record (minus NULL-sensitive records with nulls='drop'), input order.
    check_domain=False skips the check that the data's values are all in the domain (for a
    domain read from the data itself)."""
    s = quote_ident(spec.sensitive)
    pick = bits_sql("h", 1, dialect)
    randomized = (f"CASE WHEN {keep_test('h', spec.p)} THEN {s} "
                  f"ELSE d.vals[least(d.m, 1 + CAST(floor({pick} / {float(TWO_52)!r} * d.m) AS BIGINT))] END")
    cols = [f"{randomized} AS {s}" if c == spec.sensitive else quote_ident(c) for c in output_columns]
    final = ("SELECT " + ",\n    ".join(cols) + "\nFROM draws, domain d, checks\n"
             "WHERE checks.ok\nORDER BY __rwn_rid")
    return "WITH\n" + randomize_ctes(source, spec, domain_sql, key_sql, blocks, check_domain, dialect) + "\n" + final


def audit_sql(source: str, spec: RandomizeSpec, domain_sql: str, eps: float, delta: float, test: str,
              blocks=None, dialect: DuckDBDialect = DUCKDB) -> str:
    """Per personal group and value present in it: the reconstruction-privacy statistics and
    verdicts. The exact tails come from the rwn_exact_tails() function of rwn_sql.install."""
    pub_cols = ", ".join(quote_ident(c) for c in spec.public) or "NULL::VARCHAR AS __rwn_all"
    p, b = float_literal(spec.p), f"((1 - {float_literal(spec.p)}) / (SELECT m FROM domain))"
    body = _render(
        "rp_audit.sql",
        source=source,
        null_filter=f"\n    WHERE {quote_ident(spec.sensitive)} IS NOT NULL" if spec.nulls == "drop" else "",
        domain_values=f"SELECT unnest({domain_sql})",
        public_cols=pub_cols if spec.public else "__rwn_all",
        sens=quote_ident(spec.sensitive),
        trials=_trials_check(dialect) if blocks else "group_size",
        trials_join=f"\n    LEFT JOIN {trials_values(blocks)} ON tr.size = c.group_size" if blocks else "",
        materialized=dialect.materialized(),
        p=p, b=b, eps=float_literal(eps),
        exact=(f"CASE WHEN enforced THEN rwn_block_tails(CAST(group_size AS BIGINT), CAST(tails_key AS BIGINT), "
               f"{p}, (SELECT m FROM domain), {float_literal(eps)})\n"
               f"        ELSE rwn_exact_tails(CAST(group_size AS BIGINT), CAST(tails_key AS BIGINT), {p}, "
               f"(SELECT m FROM domain), {float_literal(eps)}) END"),
    )
    if not spec.public:   # one personal group holding everyone
        body = body.replace("SELECT * FROM src", "SELECT *, NULL::VARCHAR AS __rwn_all FROM src", 1)
    d = float_literal(delta)
    verdict = {"chernoff": f"chernoff_upper >= {d} AND chernoff_lower >= {d}",
               "exact": f"exact.upper >= {d} AND exact.lower >= {d}"}
    pub_out = "".join(quote_ident(c) + ", " for c in spec.public)
    partition = ", ".join(quote_ident(c) for c in spec.public) or "__rwn_all"
    final = (f"SELECT {pub_out}group_size, trials, enforced, value, value_count, frequency, mu, theta,\n"
             "    chernoff_upper, chernoff_lower, exact.upper AS exact_upper, exact.lower AS exact_lower,\n"
             f"    {verdict['chernoff']} AS passes_chernoff,\n"
             f"    {verdict['exact']} AS passes_exact,\n"
             f"    bool_and({verdict[test]}) OVER (PARTITION BY {partition}) AS group_passes\n"
             f"FROM bounds\nORDER BY {pub_out}value")
    return "WITH\n" + body + "\n" + final


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
    standard errors then account for the records of a block moving together."""
    s = quote_ident(sensitive)
    groups = [quote_ident(c) for c in group_by]
    if design is None:
        design_cte, design_join = "", ""
        units = "group_size AS ss, group_size AS sh"
    else:
        trials, public = design
        personal = ", ".join(dict.fromkeys(groups + [quote_ident(c) for c in public]))
        on = " AND ".join([f"d.{g} IS NOT DISTINCT FROM c.{g}" for g in groups]) or "true"
        design_cte = (
            "\nblocks AS (\n"
            "    -- every personal group in S, its t blocks: n mod t of size q+1, the rest of size q\n"
            f"    SELECT {''.join(g + ', ' for g in groups)}n, tr.t, n // tr.t AS q, n % tr.t AS r\n"
            f"    FROM (SELECT {''.join(g + ', ' for g in groups)}count(*) AS n FROM released GROUP BY {personal}) pg\n"
            f"    JOIN {trials} ON tr.size = pg.n\n"
            "),\n"
            "design AS (\n"
            f"    SELECT {''.join(g + ', ' for g in groups)}\n"
            "        sum(r * (q + 1) * (q + 1) + (t - r) * q * q) AS ss,\n"
            "        sum(CASE WHEN n > 1 THEN (r * (q + 1) * (n - q - 1) + (t - r) * q * (n - q)) / (n - 1)\n"
            "                 ELSE 0 END) AS sh\n"
            f"    FROM blocks GROUP BY {', '.join(groups) if groups else '()'}\n"
            "),")
        design_join = f"\n    JOIN design d ON {on}"
        units = None
    gsel = "".join(g + ", " for g in groups)
    gby = ", ".join(groups) if groups else "()"
    if values is None:
        join = " AND ".join([f"c.{g} IS NOT DISTINCT FROM g.{g}" for g in groups] + ["c.value = d.value"])
        counts = (f"SELECT {''.join('g.' + x + ', ' for x in groups)}d.value, 1 AS set_size, g.group_size,{_units(units)}\n"
                  f"        CAST(coalesce(c.n, 0) AS BIGINT) AS released_count\n"
                  f"    FROM (SELECT {gsel}count(*) AS group_size FROM released GROUP BY {gby}\n"
                  f"          HAVING count(*) > 0) g\n"
                  f"    CROSS JOIN (SELECT unnest(domain) AS value FROM params) d\n"
                  f"    LEFT JOIN (SELECT {gsel}{s} AS value, count(*) AS n FROM released GROUP BY ALL) c\n"
                  f"        ON {join}")
        output = f"{gsel}value,"
        order = ", ".join(groups + ["value"])
    else:
        in_list = ", ".join(values)
        counts = (f"SELECT {gsel}{len(values)} AS set_size, count(*) AS group_size,{_units(units, 'count(*)')}\n"
                  f"        count(*) FILTER (WHERE {s} IN ({in_list})) AS released_count\n"
                  f"    FROM released GROUP BY {gby} HAVING count(*) > 0")
        output = gsel.rstrip()
        order = ", ".join(groups) if groups else "group_size"
    return "WITH\n" + _render(
        "rp_estimates.sql",
        release=release,
        where=f"\n    WHERE {where_sql}" if where_sql else "",
        p=p_sql,
        domain=domain_sql,
        counts=counts,
        design=design_cte,
        design_join=design_join,
        design_cols=", d.ss, d.sh" if design is not None else "",
        output_cols=output,
        order=order,
    )
