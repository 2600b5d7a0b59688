"""Uniform perturbation of a sensitive attribute, reconstruction and the
(eps, delta)-reconstruction-privacy audit: the public Python API (docs/METHODS.md section 2)."""
from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass

from ..engines import duckdb as engine
from . import privacy, sqlgen as rp_sql
from ..engines.backend import Session, backend_for
from ..engines.dialects import same_type_name
from .sqlgen import domain_values
from ..errors import RWNError
from ..identifiers import float_literal, name_parts, quote_ident, quote_literal
from ..randomness import KEY_PLACEHOLDER, key_scope, resolve_key
from .duckdb_udfs import ensure_functions

__all__ = ["randomize", "audit", "estimates", "release", "query", "AuditResult"]


def _fail(exc: Exception) -> RWNError:
    return RWNError(str(exc))


def _public(src, sensitive: str, public, id_column: str | None = None) -> tuple[str, ...]:
    if public is None:
        return tuple(c for c in src.names if c not in (sensitive, id_column))
    if isinstance(public, str):
        public = [public]
    return tuple(public)


def _check_names(src, sensitive, public) -> None:
    engine.refuse_reserved(src)
    engine.require_columns(src, [sensitive], "sensitive")
    engine.require_columns(src, public, "public")


def resolve_domain(be, src, sensitive: str, domain, nulls: str) -> list[str]:
    """The published domain as strings (checked to fit the column's type). Given domains must
    cover every value in the data."""
    type_sql = src.type_of(sensitive)
    s = quote_ident(sensitive)
    # one scan: every distinct value with its count (NULL included)
    counts = be.rows(f"SELECT {be.dialect.as_text('v')}, n FROM (SELECT {s} AS v, count(*) AS n "
                     f"FROM {src.sql} GROUP BY {s}) AS __rwn_counts")
    records = sum(n for _, n in counts)
    nnull = sum(n for v, n in counts if v is None)
    if nulls == "error" and nnull:
        raise RWNError(f"the sensitive column {sensitive!r} has {nnull} NULL values; clean them or use "
                       f"nulls='drop' (--nulls drop; those records are then left out of the release)")
    if records - (nnull if nulls == "drop" else 0) == 0:
        raise RWNError(f"{src.label} has no records" + (" with a sensitive value" if records else ""))
    if domain is None:
        values = sorted(v for v, _ in counts if v is not None)
        if len(values) > rp_sql.MAX_INFERRED_DOMAIN:
            raise RWNError(f"the sensitive column {sensitive!r} holds {len(values)}" + LARGE_DOMAIN_WHY)
    else:
        values = domain_values(domain)
        seen: set[str] = set()
        dup = {v for v in values if v in seen or seen.add(v)}
        if dup:
            raise RWNError(f"the domain lists {sorted(dup)[0]!r} more than once")
    if len(values) < 2:
        raise RWNError(f"the domain of {sensitive!r} has {len(values)} value(s); uniform perturbation needs at least 2")
    literal = _typed_domain(be, values, type_sql, sensitive)
    if domain is not None:
        missing = be.rows(f"SELECT DISTINCT {be.dialect.as_text(s)} FROM {src.sql} WHERE {s} IS NOT NULL "
                          f"AND NOT {be.dialect.list_contains(literal, s)} ORDER BY 1 LIMIT 6")
        if missing:
            shown = ", ".join(repr(r[0]) for r in missing[:5]) + (", ..." if len(missing) > 5 else "")
            raise RWNError(f"the domain misses values present in the data: {shown}")
    return values


def _typed_domain(be, values, type_sql: str, sensitive: str) -> str:
    """The domain as a typed SQL list, refused when a value does not fit the column's type or
    two values are equal after the cast ('4' and '4.0' for an INTEGER column): m counts
    distinct values."""
    literal = rp_sql.domain_literal(values, type_sql, be.dialect)
    try:
        typed = be.rows("SELECT " + ", ".join(be.dialect.as_text(f"CAST({quote_literal(str(v))} AS {type_sql})")
                                              for v in values))[0]
    except Exception as exc:     # the engine's cast errors (and rwn_sql's own, as RWNError)
        raise RWNError(f"the domain does not fit the type {type_sql} of column {sensitive!r}: "
                       f"{engine.first_line(str(exc))}") from None
    if any(cast is None for cast in typed):
        bad = next(v for v, cast in zip(values, typed) if cast is None)
        raise RWNError(f"the domain does not fit the type {type_sql} of column {sensitive!r}: {bad!r}")
    seen: dict[str, str] = {}
    for given, cast in zip(values, typed):
        if cast in seen:
            raise RWNError(f"the domain lists {seen[cast]!r} and {str(given)!r}, the same value as {type_sql} "
                           f"(column {sensitive!r}); list each value once")
        seen[cast] = str(given)
    return literal


def _prepare(be, source, sensitive, p, public, domain, nulls, id_column=None, released=False):
    """The checked source, spec and domain; `released` (randomize, release): also the values
    that are published (check_released_values)."""
    try:
        privacy.check_p(p)
    except ValueError as exc:
        raise _fail(exc) from None
    src = be.source(source)
    pub = _public(src, sensitive, public, id_column)
    _check_names(src, sensitive, pub)
    try:
        spec = rp_sql.RandomizeSpec(sensitive=sensitive, p=float(p), public=pub, nulls=nulls, id=id_column)
    except ValueError as exc:
        raise _fail(exc) from None
    if id_column is not None:
        check_record_ids(be, src, id_column, spec)
    check_sensitive_type(src, sensitive)
    if released:
        check_released_values(be, src, spec)
    return src, spec, resolve_domain(be, src, sensitive, domain, nulls)


# Sensitive types whose values are not single comparable values (their text form is not one
# domain value that casts back): lists, arrays, structs, maps, unions and binary strings. UUID
# stays allowed: a scalar with exact equality and a canonical text form that casts back.
NESTED_TYPES = re.compile(r"(?i)(\[\d*\]$|^(struct|map|union|array)\s*[(<]|^(blob|bytea|binary|varbinary|bit|bitstring)$)")
NESTED_TYPE_NAMES = r".*\[[0-9]*\]|(STRUCT|MAP|UNION)\(.*|BLOB|BIT"     # the same, as DuckDB's typeof() writes them
FLOAT_TYPES = re.compile(r"(?i)^(double|float|real|float4|float8)$")
# A public DOUBLE column is a measure (SUM, AVG estimates); their variance squares sums of it,
# so max |x| x records beyond this would overflow a DOUBLE to inf (1e154 squared is 1e308).
MEASURE_BOUND = 1e150


def check_sensitive_type(src, sensitive: str) -> None:
    type_sql = src.type_of(sensitive)
    if NESTED_TYPES.search(type_sql.strip()):
        raise RWNError(f"the sensitive column {sensitive!r} has type {type_sql}, a nested or binary type; "
                       f"uniform perturbation needs single values (text, numbers, dates, UUIDs): cast or "
                       f"extract one")
    if FLOAT_TYPES.match(type_sql.strip()):
        raise RWNError(FLOAT_SENSITIVE.format(sensitive=sensitive, type_sql=type_sql))


LARGE_DOMAIN_WHY = (f" distinct values, more than {rp_sql.MAX_INFERRED_DOMAIN} (the most a domain read from the data "
                    f"may have): a numeric attribute belongs to RWN (rwn_sql.perturb, rwn-sql perturb); a genuinely "
                    f"categorical one with this many values needs its published domain given explicitly (domain= / "
                    f"--domain-file)")


# Uniform perturbation replaces a value by one of m listed values: for a measurement that is no
# protection worth the name (and its domain is whatever values happen to occur).
FLOAT_SENSITIVE_WHY = ("): uniform perturbation draws replacements from a list of categories, not for a numeric "
                       "measurement; perturb numeric columns with RWN (rwn_sql.perturb, rwn-sql perturb), or bin the "
                       "column into categories first")
FLOAT_SENSITIVE = "the sensitive column {sensitive!r} is floating point ({type_sql}" + FLOAT_SENSITIVE_WHY


def check_released_values(be, src, spec) -> None:
    """What randomize and release publish is well defined (check_sensitive_type: the sensitive
    column holds single values, not nested or binary ones): the sensitive column holds no NaN (a NaN is no domain value: it equals itself in
    DuckDB, not in Spark), and every public FLOAT/DOUBLE column, which analysts may SUM or
    AVG, holds finite values small enough that those estimates and their errors stay finite.
    Refusals name the column, the number of rows and the first (input position, 1-based)."""
    sensitive = spec.sensitive
    type_sql = src.type_of(sensitive)
    floats = [c for c in spec.public if FLOAT_TYPES.match(src.type_of(c).strip())]
    checks = ([("nan", sensitive, f"isnan({quote_ident(sensitive)})")] if FLOAT_TYPES.match(type_sql.strip()) else [])
    checks += [("inf", c, f"NOT {be.dialect.is_finite(quote_ident(c))}") for c in floats]
    if not checks:
        return
    where = f" WHERE {quote_ident(sensitive)} IS NOT NULL" if spec.nulls == "drop" else ""
    position = "row_number() OVER ()" if be.has_input_order else "CAST(NULL AS BIGINT)"
    parts = []
    for _, c, bad in checks:
        parts += [f"count(*) FILTER (WHERE {bad})", f"min(__rwn_row) FILTER (WHERE {bad})"]
    parts += [f"max(abs({quote_ident(c)})) FILTER (WHERE {be.dialect.is_finite(quote_ident(c))})" for c in floats]
    row = be.rows(f"SELECT count(*), {', '.join(parts)} FROM (SELECT *, {position} AS __rwn_row FROM {src.sql}) "
                  f"AS __rwn_rows{where}")[0]
    records, found, largest = row[0], row[1:1 + 2 * len(checks)], row[1 + 2 * len(checks):]
    for (kind, c, _), count, first in zip(checks, found[::2], found[1::2]):
        if count:
            at = f" (the first at row {first})" if first is not None else ""
            if kind == "nan":
                raise RWNError(f"the sensitive column {c!r} has {count} NaN values{at}; NaN is no domain value: "
                               f"make them NULL (then nulls='drop' / --nulls drop leaves them out) or clean them")
            raise RWNError(f"public column {c!r} has {count} NaN or infinite values{at}; SUM and AVG estimates "
                           f"over the release would be NaN or inf: make them NULL or leave the column out of "
                           f"public")
    for c, top in zip(floats, largest):
        if top is not None and top * max(records, 1) > MEASURE_BOUND:
            raise RWNError(f"public column {c!r} holds values up to {top:.3g}: with {records} rows, SUM and AVG "
                           f"estimates and their errors (squares of sums) would overflow to inf; the bound is "
                           f"|x| x rows <= {MEASURE_BOUND:g}: rescale the column (other units)")


def check_record_ids(be, src, id_column: str, spec) -> None:
    """The id column names each record once: present, of an integer or text type (whose text
    form, hashed by every draw, is the same on every engine), no NULL, no duplicate."""
    engine.require_record_id(src, id_column)
    column = quote_ident(id_column)
    where = f" WHERE {quote_ident(spec.sensitive)} IS NOT NULL" if spec.nulls == "drop" else ""
    rows, nulls, distinct = be.rows(f"SELECT count(*), count(*) - count({column}), count(DISTINCT {column}) "
                                    f"FROM {src.sql}{where}")[0]
    if nulls:
        raise RWNError(f"id column {id_column!r} has {nulls} NULL values; every record needs an id")
    if distinct != rows - nulls:
        raise RWNError(f"id column {id_column!r} has duplicate values ({rows - distinct} records share an id "
                       f"with another); every record needs its own id")


def _privacy(p, m, epsilon, delta, test) -> privacy.PrivacyParams:
    try:
        return privacy.PrivacyParams(p=float(p), m=m, eps=epsilon, delta=delta, test=test)
    except ValueError as exc:
        raise _fail(exc) from None


def _size_counts(be, src, spec, public) -> dict[int, int]:
    """Personal-group size -> number of groups of that size, groups formed by `public`."""
    pub = ", ".join(quote_ident(c) for c in public)
    where = f" WHERE {quote_ident(spec.sensitive)} IS NOT NULL" if spec.nulls == "drop" else ""
    return dict(be.rows(f"SELECT n, count(*) FROM (SELECT count(*) AS n FROM {src.sql}{where}"
                        f"{' GROUP BY ' + pub if pub else ''}) AS __rwn_groups GROUP BY n"))


def _trials(sizes, pp: privacy.PrivacyParams) -> dict[int, int]:
    try:
        return privacy.trials_for_sizes(sizes, pp)
    except ValueError as exc:
        raise _fail(exc) from None


def _all_designed(sizes, pp: privacy.PrivacyParams | None, every_size=()) -> bool:
    """Do `sizes` (then also `every_size`, the other sizes present) all have a design?"""
    try:
        return pp is not None and all(all(t > 0 for t in privacy.trials_for_sizes(group, pp).values())
                                      for group in (sizes, every_size))
    except ValueError:
        return False


def _params_or_none(p, m, eps, delta, test):
    try:
        return privacy.PrivacyParams(p=p, m=m, eps=eps, delta=delta, test=test)
    except ValueError:
        return None


def _way_forward(be, src, spec, pp: privacy.PrivacyParams, impossible, counts) -> list[str]:
    """What would make enforcement possible: a smaller p, or a weaker guarantee with the same
    p (smaller delta or smaller eps), each the nearest on a grid that designs every size
    present, suppression, or removing one public column (the one leaving the fewest records
    in failing groups)."""
    ways = []

    def works(p, eps, delta):
        return _all_designed(impossible, _params_or_none(p, pp.m, eps, delta, pp.test), list(counts))

    coarse = next((x / 20 for x in range(int(pp.p * 20 - 1e-9), 0, -1) if works(x / 20, pp.eps, pp.delta)), None)
    if coarse is not None:     # refined to 0.01 between coarse and the next step of 0.05
        best_p = next(x / 100 for x in range(min(int(round(coarse * 100)) + 4, int(pp.p * 100 - 1e-9)),
                                             int(round(coarse * 100)) - 1, -1) if works(x / 100, pp.eps, pp.delta))
        ways.append(f"p = {best_p:g} (searched down in steps of 0.05, then 0.01)")
    deltas = sorted({round(pp.delta * f, 6) for f in (0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01)},
                    reverse=True)
    best_delta = next((d for d in deltas if d > 0 and works(pp.p, pp.eps, d)), None)
    if best_delta is not None:
        ways.append(f"delta = {best_delta:g} with the same p (the largest tried that works)")
    # a smaller eps is a weaker guarantee (the error it asks for is smaller)
    epss = sorted({round(pp.eps * f, 6) for f in (0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1)}, reverse=True)
    best_eps = next((e for e in epss if e > 0 and works(pp.p, e, pp.delta)), None)
    if best_eps is not None:
        ways.append(f"eps = {best_eps:g} with the same p (the largest tried that works)")
    failing = sum(n * counts[n] for n in impossible)
    ways.append(f"suppress_small=True (--suppress-small): leave those {failing} records out of the release")
    coarser = []
    for column in spec.public:
        rest = [c for c in spec.public if c != column]
        sizes = _size_counts(be, src, spec, rest)
        trials = _trials(sizes, pp)
        coarser.append((sum(n * k for n, k in sizes.items() if trials[n] == 0), column))
    if coarser:
        left, column = min(coarser)
        ways.append(f"coarsening: dropping public column {column!r} leaves {left} records in groups that fail")
    return ways


def _design(be, src, spec, pp: privacy.PrivacyParams, suppress_small: bool = False):
    """Trial counts for the personal-group sizes present in the data (public quantities), and
    (groups, records) left out: sizes without a design refuse the data, with a way forward
    in the message, unless suppress_small leaves their records out."""
    counts = _size_counts(be, src, spec, spec.public)
    trials = _trials(counts, pp)
    impossible = sorted(n for n, t in trials.items() if t == 0)
    groups = sum(counts[n] for n in impossible)
    records = sum(n * counts[n] for n in impossible)
    if impossible and not suppress_small:
        shown = ", ".join(map(str, impossible[:10])) + (", ..." if len(impossible) > 10 else "")
        ways = _way_forward(be, src, spec, pp, impossible, counts)
        raise RWNError(f"(eps, delta) = ({pp.eps}, {pp.delta}) cannot be achieved for personal groups of "
                       f"{shown} records ({groups} groups holding {records} of {sum(n * k for n, k in counts.items())}"
                       f" records) with p = {pp.p}, m = {pp.m} and the {pp.test} test, whatever the number of "
                       f"blocks. What would work: " + "; or ".join(ways))
    return trials, groups, records


@dataclass(frozen=True)
class Proxy:
    """Public columns whose values determine the sensitive attribute almost surely: `exposed`
    of the `records` in their classes of at least 2 records hold the most frequent value of a
    class where it has at least 95 % of the records (rp_sql.proxy_sql); H(SA | columns) in bits."""
    columns: tuple[str, ...]
    records: int
    exposed: int
    cond_entropy: float

    def describe(self, sensitive: str) -> str:
        named = " and ".join(repr(c) for c in self.columns)
        return (f"public column{'s' if len(self.columns) > 1 else ''} {named} determine{'' if len(self.columns) > 1 else 's'} "
                f"{sensitive!r} for {self.exposed} of {self.records} records (H({sensitive} | "
                f"{', '.join(self.columns)}) = {self.cond_entropy:.3f} bits): drop or coarsen "
                f"{'them' if len(self.columns) > 1 else 'it'}")


@dataclass(frozen=True)
class AttributeDisclosure:
    """The attribute-disclosure checks of one set of personal groups: `l_failing_groups` /
    `l_failing_records`, groups of at least 2 records holding fewer than `l_diversity`
    distinct sensitive values; `share_failing_groups` / `share_failing_records`, groups of at
    least 2 records whose most frequent value holds more than `max_top_share` of the group;
    `failing_records`, the records in groups failing either; `proxies`, the public columns (and
    pairs) that determine the sensitive attribute; `pairs_checked` of `pairs_possible` pairs
    (the budget: pairs among columns of at most rp_sql.PROXY_PAIR_VALUES values, at most
    rp_sql.PROXY_MAX_PAIRS)."""
    l_diversity: int
    l_failing_groups: int
    l_failing_records: int
    proxies: tuple[Proxy, ...]
    pairs_checked: int
    pairs_possible: int
    max_top_share: float = 1.0
    share_failing_groups: int = 0
    share_failing_records: int = 0
    failing_records: int = 0

    @property
    def ok(self) -> bool:
        """No group violates l or the top-share limit and no public column is a proxy; always
        true at l_diversity = 1."""
        return self.l_diversity <= 1 or (self.failing_records == 0 and not self.proxies)


def check_l_diversity(l_diversity, m: int | None = None) -> int:
    """L of the distinct l-diversity rule: an integer >= 1 (1 turns the attribute-disclosure
    refusal off) and at most the domain's m values."""
    if isinstance(l_diversity, bool) or not isinstance(l_diversity, int) or l_diversity < 1:
        raise RWNError(f"l_diversity must be an integer >= 1 (1 turns the check off), got {l_diversity!r}")
    if m is not None and l_diversity > m:
        raise RWNError(f"l_diversity = {l_diversity} exceeds the domain's {m} values: no personal group can "
                       f"hold that many distinct values")
    return l_diversity


def check_max_top_share(max_top_share) -> float | None:
    """The top-share limit: None (the default: the better of p + (1-p)/m and the most frequent
    value's share of all records) or a number in (0, 1] (1 turns the rule off)."""
    if max_top_share is None:
        return None
    if (isinstance(max_top_share, bool) or not isinstance(max_top_share, (int, float))
            or not 0.0 < float(max_top_share) <= 1.0):
        raise RWNError(f"max_top_share must be a number in (0, 1] (1 turns the top-share rule off), "
                       f"got {max_top_share!r}")
    return float(max_top_share)


def top_share_limit(be, counts: str, p: float, m: int, max_top_share) -> float:
    """The top-share limit over `counts`: max_top_share when given, else the better of what an
    attacker gets without the group (rp_sql.top_share_limit_sql), so that a majority vote within
    any group of at least 2 records recovers no more than either."""
    given = check_max_top_share(max_top_share)
    if given is not None:
        return given
    return float(be.rows(f"SELECT {rp_sql.top_share_limit_sql(float(p), str(int(m)), rp_sql.mode_share_sql(counts))}")[0][0])


def attribute_disclosure(be, counts: str, public, l_diversity: int, leave_out=(),
                         max_top_share: float = 1.0) -> AttributeDisclosure:
    """The attribute-disclosure checks over `counts` (a relation of the public columns, value,
    value_count: one row per personal group and sensitive value present), with the top-share
    limit `max_top_share` (a number; see top_share_limit). A set of public
    columns is a proxy when records > 0, its determined classes expose at least half of the
    records in its classes of at least 2 records, and the sensitive attribute is not that
    concentrated overall (its most frequent value holds less than 95 % of all records: then
    no column is to blame, and l-diversity says so). Singles: every public column; pairs:
    among the columns of at most PROXY_PAIR_VALUES distinct values (NULL one of them), neither
    a proxy alone, those with the fewest combinations first, at most PROXY_MAX_PAIRS."""
    keys = [quote_ident(c) for c in public]
    share_sql = float_literal(max_top_share)
    l_groups, l_records, s_groups, s_records, either = (
        int(x) for x in be.rows(rp_sql.l_summary_sql(counts, keys, l_diversity, leave_out, share_sql))[0])
    checks = dict(max_top_share=float(max_top_share), share_failing_groups=s_groups,
                  share_failing_records=s_records, failing_records=either)
    if not keys:
        return AttributeDisclosure(l_diversity, l_groups, l_records, (), 0, 0, **checks)
    share, whole = rp_sql.PROXY_SHARE
    distinct = ", ".join(f"count(DISTINCT {k}) + max(CASE WHEN {k} IS NULL THEN 1 ELSE 0 END)" for k in keys)
    row = be.rows(f"SELECT (SELECT {whole} * max(s) >= {share} * sum(s) FROM (SELECT sum(value_count) AS s "
                  f"FROM {counts} GROUP BY value) AS __rwn_v), {distinct} FROM {counts}")[0]
    concentrated, sizes = bool(row[0]), dict(zip(public, row[1:]))

    def flagged(sets):
        if not sets or concentrated:
            return []
        found = be.rows(rp_sql.proxy_sql(counts, [[quote_ident(c) for c in cs] for cs in sets]))
        return sorted((Proxy(tuple(sets[i]), int(n), int(e), float(h or 0.0)) for i, n, e, h in found
                       if n and 2 * e >= n), key=lambda x: (-x.exposed, x.columns))
    singles = flagged([(c,) for c in public])
    named = {x.columns[0] for x in singles}
    small = [c for c in public if sizes[c] <= rp_sql.PROXY_PAIR_VALUES and c not in named]
    pairs = sorted(((a, b) for i, a in enumerate(small) for b in small[i + 1:]),
                   key=lambda ab: (sizes[ab[0]] * sizes[ab[1]], public.index(ab[0]), public.index(ab[1])))
    checked = pairs[:rp_sql.PROXY_MAX_PAIRS]
    return AttributeDisclosure(l_diversity, l_groups, l_records, tuple(singles + flagged(checked)),
                               len(checked), len(pairs), **checks)


def share_problem(records, groups, limit: float, sensitive: str) -> str:
    """The refusal's words for groups above the top-share limit."""
    return (f"{records} records sit in {groups} personal groups of at least 2 records whose most frequent value of "
            f"{sensitive!r} holds more than {limit:.4g} of the group (the top-share limit: the better of a record's "
            f"own released value, p + (1-p)/m, and guessing the most frequent value): a majority vote within such a "
            f"group recovers more of the values than an attacker gets without it")


def _counts_sql(src, spec) -> str:
    """One row per personal group and sensitive value present: the public columns, value, value_count."""
    pub = "".join(quote_ident(c) + ", " for c in spec.public)
    where = f" WHERE {quote_ident(spec.sensitive)} IS NOT NULL" if spec.nulls == "drop" else ""
    return (f"SELECT {pub}{quote_ident(spec.sensitive)} AS value, count(*) AS value_count FROM {src.sql}{where} "
            f"GROUP BY {pub}{quote_ident(spec.sensitive)}")


def _refuse_attribute_disclosure(be, src, spec, l_diversity: int, leave_out=(), m: int = 2,
                                 max_top_share=None) -> float | None:
    """randomize (enforced) and release: refuse personal groups that violate l or the top-share
    limit and public proxies, saying what would work (the fallback of l_diversity=1 or
    max_top_share=1 is recorded in metadata). Returns the top-share limit applied (None: off)."""
    if l_diversity <= 1:
        return None
    counts = be.stage(_counts_sql(src, spec))
    try:
        limit = top_share_limit(be, counts, spec.p, m, max_top_share)
        found = attribute_disclosure(be, counts, spec.public, l_diversity, leave_out, limit)
        if found.ok:
            return limit
        problems, ways = [], []
        if found.l_failing_records:
            problems.append(f"{found.l_failing_records} records sit in {found.l_failing_groups} personal groups of "
                            f"at least 2 records holding fewer than {l_diversity} distinct values of "
                            f"{spec.sensitive!r} (distinct l-diversity): a majority vote of the released values "
                            f"within such a group recovers the value")
        problems += [x.describe(spec.sensitive) for x in found.proxies]
        if found.share_failing_records > found.l_failing_records:
            problems.append(share_problem(found.share_failing_records, found.share_failing_groups, limit,
                                          spec.sensitive))
        best = None
        share_sql = float_literal(limit)
        if found.failing_records and spec.public:     # the public column whose removal helps most
            left = []
            for column in spec.public:
                rest = [quote_ident(c) for c in spec.public if c != column]
                left.append((int(be.rows(rp_sql.l_summary_sql(counts, rest, l_diversity, leave_out,
                                                              share_sql))[0][4]), column))
            best = min(left)
        for x in found.proxies:
            gain = (f" (dropping it leaves {best[0]} records in groups that violate l or the top-share limit)"
                    if best and x.columns == (best[1],) else "")
            ways.append(f"drop or coarsen public column{'s' if len(x.columns) > 1 else ''} "
                        f"{' and '.join(repr(c) for c in x.columns)}{gain}")
        if best and not any(x.columns == (best[1],) for x in found.proxies):
            ways.append(f"coarsening: dropping public column {best[1]!r} leaves {best[0]} records in groups that "
                        f"violate l or the top-share limit")
        if found.failing_records:
            ways.append("suppression: leave those records out of the input (rwn-sql audit --groups-output lists "
                        f"the groups: l_distinct < {l_diversity} or top_share > {limit:.4g})")
        if found.share_failing_records > found.l_failing_records:
            ways.append("max_top_share=1 (--max-top-share 1) to keep only l-diversity, which the release metadata "
                        "records")
        ways.append("l_diversity=1 (--l-diversity 1) to release anyway, which the release metadata records")
        raise RWNError("attribute disclosure: " + "; ".join(problems) + ". What would work: " + "; or ".join(ways))
    finally:
        be.drop(counts)


def _blocks(be, src, spec, pp: privacy.PrivacyParams) -> dict[int, int]:
    """Trial counts for the personal-group sizes present (refusing sizes without a design)."""
    return _design(be, src, spec, pp)[0]


def randomize(con: Session, source, sensitive: str, p: float, public=None, domain=None,
              key: str | None = None, seed: int | None = None, enforce=None, test: str = "exact",
              nulls: str = "error", into: str | None = None, replace: bool = False, sql: bool = False,
              suppress_small: bool = False, id: str | None = None, l_diversity: int | None = None,
              max_top_share: float | None = None):
    """Uniform perturbation of `sensitive` with retention probability p.

    The release holds the `public` columns (default: every other column) exactly and the
    randomized sensitive column; any other column is left out, because every released
    column narrows the personal groups an attacker can form. `domain` is a list of values
    or a file with one value per line (default: the values in the data). NULL sensitive
    values: nulls='error' (default) refuses them, nulls='drop' leaves those records out.
    enforce=(eps, delta) splits each personal group whose records would not pass the chosen
    `test` at every count into t blocks that share one coin and one replacement value;
    each record keeps its own transition probabilities, so reconstruction stays unbiased.
    test='exact' (default) certifies every count of every group size; 'chernoff' is the
    paper's screening bound and certifies nothing. Sizes that no design passes refuse the
    data (the error says what would work), or with suppress_small=True their records are
    left out of the release (a warning gives the count).
    id: a column whose value is each record's identity in every keyed draw (integer or text;
    no NULL, no duplicate); the release is then the same whatever the input order. Without
    it the record identity is the input position. The id column is never released (it
    would make every personal group a single record), so it may not be public.
    l_diversity: with enforce (default 2), or when given, refuse personal groups of at least 2
    records holding fewer than l distinct sensitive values and public columns that determine
    the sensitive attribute (audit's attribute-disclosure checks); 1 turns that off.
    max_top_share: with that rule, also refuse groups of at least 2 records whose most frequent
    value holds more than this share (default: the better of p + (1-p)/m and the most frequent
    value's share of all records; 1 turns this part off).
    A floating-point sensitive column, or one with more than 256 distinct values and no
    given domain, is refused (RWN, or an explicit domain).
    Returns a DuckDB relation, or None with `into` (a table created in one statement).
    """
    be = backend_for(con)
    if not be.records_design_in_catalog and into is not None:
        raise RWNError(f"on {be.name}, randomize returns a DataFrame: write it with its own writer "
                       f"(the CLI writes Parquet)")
    with key_scope(be, lasting=into is None):     # with into=, the key is gone once the table is written
        plan = _plan(be, source, sensitive, p, public=public, domain=domain, key=key, seed=seed, enforce=enforce,
                     test=test, nulls=nulls, show=sql, suppress_small=suppress_small, id_column=id,
                     l_diversity=l_diversity, max_top_share=max_top_share)
        _warn_suppressed(plan)
        if sql:
            return be.engine_sql(plan.sql)
        out = be.deliver(plan.sql, into, replace)
        if into is not None:
            record_design(be.con, engine.table_target(be.con, into), plan, p, test)
        return out


def plan_design(plan, p, test):
    """The design_record.Design of a randomize plan (what its estimates need; never the key)."""
    from .design_record import Design
    eps, delta = plan.enforce or (None, None)
    return Design(sensitive=plan.spec.sensitive, sensitive_type=plan.src.type_of(plan.spec.sensitive),
                  public=plan.spec.public, p=float(p), domain=tuple(plan.values), enforced=plan.enforce is not None,
                  epsilon=None if eps is None else float(eps), delta=None if delta is None else float(delta),
                  test=test if plan.enforce is not None else None,
                  blocks=tuple(sorted(plan.blocks.items())) if plan.enforce is not None else None)


def record_design(con, target: str, plan, p, test) -> None:
    """COMMENT ON the table `target` (SQL name) just written: its design (design_record). A
    table left without it would be refused by estimates, so a failure drops the table."""
    from .design_record import comment_text
    try:
        con.execute(f"COMMENT ON TABLE {target} IS {quote_literal(comment_text(plan_design(plan, p, test)))}"
                    ).fetchall()
    except BaseException:
        con.execute(f"DROP TABLE IF EXISTS {target}").fetchall()
        raise


def _warn_suppressed(plan) -> None:
    if plan.suppressed_records:
        warnings.warn(f"suppress_small: {plan.suppressed_records} records in {plan.suppressed_groups} personal "
                      f"groups without a design are left out of the release", stacklevel=3)


@dataclass
class _Plan:
    """Everything a randomize call resolved: the source, the spec, the domain, the blocks per
    group size (enforcement) and the SQL."""
    src: engine.Source
    spec: rp_sql.RandomizeSpec
    values: list[str]
    blocks: dict[int, int] | None
    enforce: tuple[float, float] | None
    sql: str
    suppressed_groups: int = 0      # personal groups left out (suppress_small), and their records
    suppressed_records: int = 0
    l_diversity: int | None = None  # the attribute-disclosure rule applied (1: turned off; None: not checked)
    max_top_share: float | None = None  # the top-share limit applied (1: turned off; None: not checked)


def _plan(con, source, sensitive, p, *, public, domain, key, seed, enforce, test, nulls, show=False,
          key_ref=None, suppress_small=False, id_column=None, l_diversity=None, always_check=False,
          max_top_share=None) -> _Plan:
    """The one orchestration of a randomization, for every engine, the Python API, the CLI and
    the SQL macros: checks, domain, design (enforcement), the attribute-disclosure rule (with
    enforce or always_check, default L = 2; or whenever l_diversity is given) and the SQL in
    the engine's dialect. key_ref(con, key): SQL reading the key (default: the backend's)."""
    be = backend_for(con)
    if id_column is None and not be.has_input_order:
        raise RWNError(f"on {be.name}, id= (--id) is required: the engine has no input order to number records "
                       f"by, so the draws need a unique id column")
    src, spec, values = _prepare(be, source, sensitive, p, public, domain, nulls, id_column, released=True)
    blocks, left_out = None, (0, 0)
    if enforce is not None:
        try:
            eps, delta = enforce
        except (TypeError, ValueError):
            raise RWNError(f"enforce must be a pair (eps, delta), got {enforce!r}") from None
        enforce = (eps, delta)
        blocks, *left_out = _design(be, src, spec, _privacy(p, len(values), eps, delta, test), suppress_small)
    if l_diversity is None and (enforce is not None or always_check):
        l_diversity = rp_sql.DEFAULT_L_DIVERSITY
    check_max_top_share(max_top_share)
    limit = None
    if l_diversity is not None:
        check_l_diversity(l_diversity, len(values))
        limit = _refuse_attribute_disclosure(be, src, spec, l_diversity,
                                             leave_out=sorted(n for n, t in (blocks or {}).items() if t == 0),
                                             m=len(values), max_top_share=max_top_share)
    try:
        the_key = resolve_key(key, seed)
    except (TypeError, ValueError) as exc:
        raise _fail(exc) from None
    output = [c for c in src.names if c in spec.public or c == sensitive]
    key_sql = KEY_PLACEHOLDER if show else key_ref(be.con, the_key) if key_ref else be.key_sql(the_key)
    text = rp_sql.randomize_sql(src.sql, spec, output, values, src.type_of(sensitive), key_sql, blocks,
                                check_domain=domain is not None, dialect=be.dialect,
                                leave_out=sorted(n for n, t in (blocks or {}).items() if t == 0))
    return _Plan(src, spec, values, blocks, enforce, text, *left_out, l_diversity=l_diversity, max_top_share=limit)


def randomize_statement(con, source, sensitive, p, *, public, domain, key, seed, enforce, test, nulls,
                        show: bool = False, key_ref=None, suppress_small: bool = False,
                        id_column: str | None = None, l_diversity: int | None = None,
                        max_top_share: float | None = None) -> str:
    """The SQL of a randomize call. show=True puts getvariable('rwn_key') where the key goes;
    else key_ref(con, key) gives the SQL that reads the key (never the key as a literal)."""
    return _plan(con, source, sensitive, p, public=public, domain=domain, key=key, seed=seed, enforce=enforce,
                 test=test, nulls=nulls, show=show, key_ref=key_ref, suppress_small=suppress_small,
                 id_column=id_column, l_diversity=l_diversity, max_top_share=max_top_share).sql


def _unseen_domain(d, name: str, sensitive: str, domain) -> str:
    """A given domain (checked as text) as a SQL list of the sensitive column's type, which only
    the statement knows: values equal after the cast fail it."""
    domain = domain_values(domain)
    repeated = next((v for i, v in enumerate(domain) if v in domain[:i]), None)
    if repeated is not None:
        raise RWNError(f"the domain lists {repeated!r} more than once")
    if len(domain) < 2:
        raise RWNError(f"the domain of {sensitive!r} has {len(domain)} value(s); uniform perturbation needs at least 2")
    probe = f"(SELECT {quote_ident(sensitive)} FROM {d.table_by_name(quote_literal(name))} LIMIT 0)"  # typed NULL
    typed = d.same_type_list(probe, [quote_literal(v) for v in domain])
    return engine.raise_unless(
        d, f"{d.distinct_count(typed)} = {len(domain)}",
        quote_literal("the domain lists two values that are the same value as ") + f" || {d.type_name(probe)} || "
        + quote_literal(f" (column {sensitive!r}); list each value once"), typed)


def _published_domain(domain) -> list[str]:
    """The domain an estimate needs (a list or a domain file), as text: at least 2 values."""
    domain = domain_values(domain) if domain is not None else None
    if domain is None or len(domain) < 2:
        raise RWNError("estimates need the published domain (at least 2 values)")
    return domain


def _unseen_domain_size(d, sensitive: str, n_sql: str, value_sql: str) -> str:
    """`value_sql`, failing the statement when the `n_sql` values present are more than
    MAX_INFERRED_DOMAIN (as resolve_domain refuses them)."""
    return engine.raise_unless(
        d, f"{n_sql} <= {rp_sql.MAX_INFERRED_DOMAIN}", quote_literal(f"the sensitive column {sensitive!r} holds ")
        + f" || {n_sql} || " + quote_literal(LARGE_DOMAIN_WHY), value_sql)


def _unseen_disclosure(d, source: str, spec, public, exclude, l_diversity: int, value_sql: str,
                       m_sql: str | None, m_given: int | None = None, max_top_share=None) -> str:
    """`value_sql` (the domain), failing the statement as _refuse_attribute_disclosure refuses:
    l larger than the domain's `m_sql` values (None: a given domain of `m_given` values, checked
    by the planner), groups that violate l or the top-share limit, single public columns that
    are proxies."""
    if l_diversity <= 1:
        return value_sql
    checks = rp_sql.unseen_disclosure_sql(source, spec.sensitive, public, exclude, l_diversity, spec.nulls,
                                          p=spec.p, m_sql=str(m_given) if m_sql is None else m_sql,
                                          max_top_share=max_top_share)
    off = "; or l_diversity := 1 to release anyway (rwn_sql.release records it in the release metadata)"
    # nested: the outermost check fails first (l, then proxies, then the top share)
    value_sql = engine.raise_unless(
        d, f"{checks['share_records']} = 0",
        quote_literal("attribute disclosure: ") + f" || {checks['share_records']} || " + quote_literal(" records sit in ")
        + f" || {checks['share_groups']} || " + quote_literal(
            f" personal groups of at least 2 records whose most frequent value of {spec.sensitive!r} holds more than ")
        + f" || round({checks['max_share']}, 4) || " + quote_literal(
            " of the group (the top-share limit: the better of a record's own released value, p + (1-p)/m, and "
            "guessing the most frequent value): a majority vote within such a group recovers more of the values "
            "than an attacker gets without it. What would work: drop or coarsen a public column; suppression: leave "
            "those records out of the input (rwn_audit / rwn_sql.audit groups_detail: top_share); or max_top_share "
            f":= 1 to keep only l-diversity{off}"), value_sql)
    value_sql = engine.raise_unless(
        d, f"{checks['proxies']} IS NULL",
        quote_literal("attribute disclosure: public column(s) ") + f" || {checks['proxies']} || " + quote_literal(
            f" determine {spec.sensitive!r} (in classes of at least 2 records, one value holds at least 95 % of at "
            f"least half of their records): drop or coarsen them{off}"), value_sql)
    value_sql = engine.raise_unless(
        d, f"{checks['l_records']} = 0",
        quote_literal("attribute disclosure: ") + f" || {checks['l_records']} || " + quote_literal(" records sit in ")
        + f" || {checks['l_groups']} || " + quote_literal(
            f" personal groups of at least 2 records holding fewer than {l_diversity} distinct values of "
            f"{spec.sensitive!r} (distinct l-diversity): a majority vote of the released values within such a group "
            f"recovers the value. What would work: drop or coarsen a public column; suppression: leave those records "
            f"out of the input (rwn_audit / rwn_sql.audit groups_detail: l_distinct < {l_diversity}){off}"), value_sql)
    if m_sql is None:
        return value_sql
    return engine.raise_unless(
        d, f"{l_diversity} <= {m_sql}", quote_literal(f"l_diversity = {l_diversity} exceeds the domain's ")
        + f" || {m_sql} || " + quote_literal(" values: no personal group can hold that many distinct values"), value_sql)


def unseen_randomize(name: str, sensitive: str, p: float, *, public, domain, key_sql: str, enforce, test: str,
                     nulls: str, id_column: str | None = None, dialect=None, l_diversity: int | None = None,
                     max_top_share: float | None = None) -> str:
    """randomize's SQL for a table or view the planner cannot see (a TEMP one of the SQL macros'
    caller), planned from the parameters alone; what _plan reads from the source is computed by
    the statement: the output columns (`public`, default every other column but the id, in
    the source's order), the domain (given: cast to the column's type there; None: the values
    present, sorted as text), the id (its type, no NULL, no duplicate), and with enforce=(eps, delta) the blocks per personal-group size
    (rp_sql.designed_trials), and the rules of _plan: a floating-point sensitive column or (no
    domain given) more than MAX_INFERRED_DOMAIN values refused; with enforce (default L = 2) or a
    given l_diversity > 1, the groups that violate l and the public columns that determine the
    sensitive attribute refused (rp_sql.unseen_disclosure_sql: single columns, no pairs). The
    same rows as randomize() for the same key."""
    from ..engines.dialects import DUCKDB
    d = dialect or DUCKDB
    try:
        privacy.check_p(p)
        spec = rp_sql.RandomizeSpec(sensitive=sensitive, p=float(p), nulls=nulls, id=id_column,
                                    public=() if public is None else (public,) if isinstance(public, str)
                                    else tuple(public))
    except ValueError as exc:
        raise _fail(exc) from None
    s = quote_ident(sensitive)
    typed = ([(id_column, engine.ID_TYPES.pattern, f"id column {id_column!r} has type ",
               "; a record id must be an integer or text column")] if id_column else [])
    keep = None if public is None else [*spec.public, sensitive] + ([id_column] if id_column else [])
    # check_sensitive_type and the NaN part of check_released_values, decided as the statement runs
    values_ok = [engine.raise_unless(d, f"NOT {d.type_matches(s, NESTED_TYPE_NAMES)}", quote_literal(
                     f"the sensitive column {sensitive!r} has type ") + f" || {d.type_name(s)} || " + quote_literal(
                     ", a nested or binary type; uniform perturbation needs single values (text, numbers, dates, "
                     "UUIDs): cast or extract one")),
                 engine.raise_unless(d, f"NOT {d.type_matches(s, 'DOUBLE|FLOAT')}", quote_literal(
                     f"the sensitive column {sensitive!r} is floating point (") + f" || {d.type_name(s)} || "
                     + quote_literal(FLOAT_SENSITIVE_WHY))]
    src = engine.unseen_source(name, d, typed, conditions=values_ok, named=[sensitive], keep=keep)
    present = f"SELECT * FROM {src.sql} WHERE {s} IS NOT NULL"
    if domain is None:       # the values present, sorted as their text (as resolve_domain sorts them)
        values = f"(SELECT {d.sorted_list_agg('__rwn_v', d.as_text('__rwn_v'))} FROM (SELECT DISTINCT {s} AS __rwn_v FROM ({present}) AS __rwn_p) AS __rwn_d)"
        domain_sql = engine.raise_unless(
            d, f"coalesce({d.list_length(values)}, 0) >= 2",
            quote_literal(f"the domain of {sensitive!r} has ") + f" || coalesce({d.list_length(values)}, 0) || "
            + quote_literal(" value(s); uniform perturbation needs at least 2"),
            _unseen_domain_size(d, sensitive, f"coalesce({d.list_length(values)}, 0)", values))
        m_present = f"coalesce({d.list_length(values)}, 0)"
    else:
        domain_sql = _unseen_domain(d, name, sensitive, domain)
        m_present = None
    if l_diversity is None and enforce is not None:
        l_diversity = rp_sql.DEFAULT_L_DIVERSITY
    check_max_top_share(max_top_share)
    if l_diversity is not None:
        m_given = len(domain_values(domain)) if domain is not None else None
        domain_sql = _unseen_disclosure(d, src.sql, spec, None if public is None else spec.public,
                                        [s] + ([quote_ident(id_column)] if id_column else []),
                                        check_l_diversity(l_diversity, m_given), domain_sql, m_present,
                                        m_given=m_given, max_top_share=max_top_share)
    if id_column:        # as check_record_ids: no NULL, no duplicate (its type: unseen_source)
        i = quote_ident(id_column)
        ids = f"(SELECT count(*) - count({i}) AS nulls, count({i}) - count(DISTINCT {i}) AS shared FROM ({present if nulls == 'drop' else 'SELECT * FROM ' + src.sql}) AS __rwn_all)"
        domain_sql = engine.raise_unless(
            d, f"(SELECT nulls FROM {ids} AS __rwn_ids) = 0",
            quote_literal(f"id column {id_column!r} has ") + f" || (SELECT nulls FROM {ids} AS __rwn_ids) || "
            + quote_literal(" NULL values; every record needs an id"),
            engine.raise_unless(
                d, f"(SELECT shared FROM {ids} AS __rwn_ids) = 0",
                quote_literal(f"id column {id_column!r} has duplicate values (") + f" || (SELECT shared FROM {ids} AS __rwn_ids) || "
                + quote_literal(" records share an id with another); every record needs its own id"), domain_sql))
    trials, group_key = None, None
    if enforce is not None:
        try:
            eps, delta = enforce
        except (TypeError, ValueError):
            raise RWNError(f"enforce must be a pair (eps, delta), got {enforce!r}") from None
        # the domain's size when given, else the statement's (then eps's bound for it is checked there)
        m = len(domain_values(domain)) if domain is not None else d.list_length(domain_sql)
        pp = _privacy(p, m if isinstance(m, int) else 2, eps, delta, test)
        if public is None:        # the personal group: every column but the sensitive one and the id
            group_key = engine.RESERVED_PREFIX + "pg"
            exclude = [s] + ([quote_ident(id_column)] if id_column else [])
            src = engine.Source(f"(SELECT *, {d.row_of_all_but(exclude)} AS {group_key} FROM {src.sql}) AS __rwn_keyed",
                                (), src.label)
            groups = f"SELECT count(*) AS n FROM {src.sql}{' WHERE ' + s + ' IS NOT NULL' if nulls == 'drop' else ''} GROUP BY {group_key}"
        else:
            pub = ", ".join(quote_ident(c) for c in spec.public)
            groups = (f"SELECT count(*) AS n FROM {src.sql}{' WHERE ' + s + ' IS NOT NULL' if nulls == 'drop' else ''}"
                      + (f" GROUP BY {pub}" if pub else ""))
        trials = rp_sql.designed_trials(groups, pp.p, m, pp.eps, pp.delta, pp.test, d)
    return rp_sql.randomize_sql(src.sql, spec, None, None, None, key_sql, check_domain=domain is not None,
                                dialect=d, domain_sql=domain_sql, trials_relation=trials, group_key=group_key)


def release(con: Session, source, path: str, sensitive: str, p: float, public=None,
            domain=None, key: str | None = None, seed: int | None = None, enforce=None,
            test: str = "exact", nulls: str = "error", table: str | None = None,
            overwrite: bool = False, rwn: dict | None = None, suppress_small: bool = False,
            id: str | None = None, l_diversity: int | None = None, max_top_share: float | None = None) -> int:
    """Randomize like `randomize` and write a standalone release database at `path` (see
    rwn_sql.rp.release_db): the released table, its published parameters and reconstruction
    views, never the key or raw data. With rwn=dict(columns=[...], k=, eps=, q=, scale=) the
    named numeric columns are first perturbed by RWN (they stay public, now perturbed).
    suppress_small=True: as in `randomize`; the metadata records how many records were left out.
    id: as in `randomize`; an RWN step keys its draws by it too (on Spark it is required).
    l_diversity: the attribute-disclosure rule of `randomize` (default 2, enforced or not); a
    release made with l_diversity=1 records it in its metadata; max_top_share: as in
    `randomize` (the limit applied is recorded too).
    Returns the number of released rows."""
    from .release_db import ReleaseMeta, randomized_table_name, write_release, write_release_folder
    be = backend_for(con)
    name = table or release_table_name(source)
    staged = None
    with key_scope(be, lasting=False):     # the key is gone once the release is written
        try:
            if rwn:    # the RWN step runs once, into a relation the randomization reads
                from ..rwn import run as rwn_method
                key, seed = rwn_method.the_key(key, seed), None
                rwn = dict(dict(k=5, eps=0.0, q=1.0, scale="minmax"), **rwn)
                spec = rwn_method.spec(rwn["columns"], k=rwn["k"], eps=rwn["eps"], q=rwn["q"], scale=rwn["scale"], id=id)
                src = rwn_method.check_source(be, source, spec)
                staged = rwn_method.stage(be, rwn_method.prepare(be, src, spec, "perturb", be.key_sql(key)))
                source = staged
            plan = _plan(con, source, sensitive, p, public=public, domain=domain, key=key, seed=seed,
                         enforce=enforce, test=test, nulls=nulls, suppress_small=suppress_small, id_column=id,
                         l_diversity=l_diversity, always_check=True, max_top_share=max_top_share)
            _warn_suppressed(plan)
            eps, delta = plan.enforce or (None, None)
            meta = ReleaseMeta(table_name=randomized_table_name(name), release_name=name, sensitive=sensitive, sensitive_type=plan.src.type_of(sensitive),
                               public=plan.spec.public, p=float(p), domain=tuple(plan.values),
                               enforced=plan.enforce is not None, epsilon=eps, delta=delta,
                               test=test if plan.enforce is not None else None,
                               method="rwn+uniform_perturbation" if rwn else "uniform_perturbation", rwn=rwn or {},
                               suppressed_records=plan.suppressed_records, l_diversity=plan.l_diversity,
                               max_top_share=plan.max_top_share)
            if not be.releases_to_database_file:
                return write_release_folder(be, plan.sql, path, meta, overwrite=overwrite, trials=plan.blocks)
            return write_release(con, plan.sql, path, meta, overwrite=overwrite, trials=plan.blocks)
        finally:
            if staged:
                be.drop(staged)


def release_table_name(source) -> str:
    """A table name for a release: the file or table name of the source, else 'released'."""
    text = os.fspath(source) if isinstance(source, os.PathLike) else str(source)
    db = engine.split_db_target(text)
    if db:
        return db[1]
    base = os.path.basename(text).split(".")[0] if engine.file_format(text) else text
    return base if base.replace("_", "").isalnum() and not engine.QUERY_START.match(base) else "released"


@dataclass
class AuditResult:
    """The audit: `rows` (a DuckDB relation, a DataFrame on Spark: one row per personal group
    and sensitive value present in it, sorted), `groups_detail` (one row per personal group: its public values,
    size, trials, how many values are present, the smallest Chernoff bound and exact tail
    over its values, after enforcement `worst_design_tail`, the smallest exact tail of its
    design over EVERY count 1..n, and `passes` under the chosen test; `l_distinct`, the
    distinct sensitive values of the group, `l_entropy`, exp of their entropy, `top_share`, the
    share of the most frequent one) and the summary counts; `disclosure`, the attribute-disclosure
    checks (AttributeDisclosure); `ok`, the verdict. Both
    relations read temporary tables of the connection; `close()` (or a `with` block) drops
    them, else they go with the connection."""
    rows: object
    groups_detail: object
    groups: int
    failing_groups: int
    records: int
    failing_records: int
    test: str
    enforced: bool
    public: tuple[str, ...] = ()
    disclosure: AttributeDisclosure | None = None
    sensitive: str = ""
    _backend: object = None
    _tables: tuple[str, ...] = ()
    _rows_sql: str = ""
    _groups_sql: str = ""

    def worst_failing(self, limit: int = 5) -> list[dict]:
        """The largest failing groups (at most `limit`), each with its most exposed value: the
        row of the smallest tail under the test, as a dict of the audit's columns."""
        keys = [quote_ident(c) for c in self.public]
        tail = ("least(exact_upper, exact_lower)" if self.test == "exact"
                else "least(chernoff_upper, chernoff_lower)")
        cols = list(self.public) + list(rp_sql.AUDIT_ROW_STATS) + ["group_passes"]
        rows = self._backend.rows(
            f"SELECT {', '.join(quote_ident(c) for c in cols)} FROM (SELECT *, row_number() OVER (PARTITION BY "
            f"{', '.join(keys) or 'group_size'} ORDER BY {tail}) AS __rwn_rank FROM ({self._rows_sql}) AS r "
            f"WHERE NOT group_passes) AS w WHERE __rwn_rank = 1 ORDER BY group_size DESC LIMIT {int(limit)}")
        return [dict(zip(cols, row)) for row in rows]

    def write_rows(self, target: str, overwrite: bool = False) -> int:
        """Write `rows` to a file (on Spark a .parquet directory), atomically."""
        return self._backend.write(self._rows_sql, target, overwrite=overwrite)

    def write_groups(self, target: str, overwrite: bool = False) -> int:
        """Write `groups_detail` to a file (on Spark a .parquet directory), atomically."""
        return self._backend.write(self._groups_sql, target, overwrite=overwrite)

    def close(self) -> None:
        """Drop the temporary tables behind `rows` and `groups_detail` (they cannot be read after)."""
        if self._backend is not None:
            for table in self._tables:
                self._backend.drop(table)
            self._backend = None

    def __enter__(self) -> "AuditResult":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def ok(self) -> bool:
        """Every group passes the test and (unless l_diversity = 1) no group violates l and no
        public column is a proxy: the audit's exit code 0."""
        return self.failing_groups == 0 and (self.disclosure is None or self.disclosure.ok)

    def summary(self) -> str:
        state = "after enforcement" if self.enforced else "before enforcement"
        text = (f"{self.test} test, {state}: {self.failing_groups} of {self.groups} personal groups fail "
                f"({self.failing_records} of {self.records} records)")
        d = self.disclosure
        if d is None:
            return text + "\n" + self.verdict()
        off = " (check turned off: l_diversity = 1)" if d.l_diversity <= 1 else ""
        text += (f"\nl-diversity (distinct, l = {d.l_diversity}){off}: {d.l_failing_groups} personal groups of at "
                 f"least 2 records hold fewer than {d.l_diversity} distinct values ({d.l_failing_records} of "
                 f"{self.records} records)")
        text += (f"\ntop share (limit {d.max_top_share:.4g}){off}: {d.share_failing_groups} personal groups of at "
                 f"least 2 records have one value above the limit ({d.share_failing_records} of {self.records} "
                 f"records)")
        pairs = f"{len(self.public)} public columns and {d.pairs_checked} of {d.pairs_possible} pairs checked"
        if d.proxies:
            text += f"\nproxies ({pairs}):" + "".join(f"\n  {x.describe(self.sensitive)}" for x in d.proxies)
        else:
            text += f"\nproxies: none ({pairs})"
        return text + "\n" + self.verdict()

    def verdict(self) -> str:
        """One line: passes, or fails and why (what makes `ok` false)."""
        if self.ok:
            return "verdict: passes"
        why = []
        if self.failing_groups:
            why.append(f"{self.failing_records} records in groups failing (eps, delta)")
        d = self.disclosure
        if d is not None and d.l_diversity > 1:
            if d.l_failing_records:
                why.append(f"{d.l_failing_records} records in groups below l = {d.l_diversity}")
            if d.share_failing_records:
                why.append(f"{d.share_failing_records} records in groups above the top-share limit "
                           f"{d.max_top_share:.4g}")
            if d.proxies:
                why.append(f"{len(d.proxies)} proxy column set(s)")
        return "verdict: FAILS: " + "; ".join(why)


def audit(con: Session, source, sensitive: str, p: float, epsilon: float, delta: float,
          public=None, domain=None, test: str = "exact", enforce: bool = False,
          nulls: str = "error", sql: bool = False, l_diversity: int | None = None,
          max_top_share: float | None = None):
    """(eps, delta)-reconstruction-privacy audit of the ORIGINAL data (data steward side).

    The rows are computed once into a temporary table (`result.rows` reads it, sorted by
    group and value; it goes away with the connection). For every personal group and every
    sensitive value present in it: group size, trials
    (the group size, or its block count t when `enforce`), value count and frequency, mu,
    theta, the full Chernoff bounds and the exact tail probabilities, and whether it passes
    each test; `group_passes` applies the chosen `test` to all values of the group.
    Attribute disclosure (AttributeDisclosure, in the summary and `ok`): per group distinct
    and entropy l-diversity and the share of its most frequent value (`groups_detail`); the
    groups of at least 2 records with fewer than `l_diversity` (default 2) distinct values,
    the groups of at least 2 records whose most frequent value holds more than `max_top_share`
    (default: the better of p + (1-p)/m and the most frequent value's share of all records),
    and the public columns (and pairs) that determine the sensitive attribute. `ok` is false
    when a group fails the test, or (unless l_diversity=1) a group violates l or the top-share
    limit or a proxy is found.
    """
    be = backend_for(con)
    src, spec, values = _prepare(be, source, sensitive, p, public, domain, nulls)
    l_diversity = check_l_diversity(rp_sql.DEFAULT_L_DIVERSITY if l_diversity is None else l_diversity, len(values))
    check_max_top_share(max_top_share)
    clash = [c for c in spec.public if c.lower() in rp_sql.AUDIT_COLUMNS]
    if clash:
        raise RWNError(f"public: column {clash[0]!r} has the name of a column of the audit; rename it")
    pp = _privacy(p, len(values), epsilon, delta, test)
    blocks = _blocks(be, src, spec, pp) if enforce else None
    if be.has_python_udfs:
        ensure_functions(be.con)
    # after enforcement, every design's worst tail over every count 1..n (see _judged)
    worst = {(n, t): privacy.design_worst_tail(n, t, pp) for n, t in (blocks or {}).items() if t > 0}
    failing = sorted(n for (n, _), w in worst.items() if test == "exact" and w < pp.delta)
    if sql:
        return be.engine_sql(_audit_sql(be, src, spec, len(values), pp, blocks, failing_designs=failing))
    # Computed once into two temporary relations: the rows per (group, value), unsorted, and
    # per personal group its verdict under `test`; the summary reads the groups. `rows`
    # joins the verdicts back and sorts when read: sorting and joining ~1M rows cost more
    # than any step after the counting, so they are left to whoever reads the rows.
    # Without Python UDFs the cases and the rows are two statements: both read the counts staged once.
    counts = None if be.has_python_udfs else be.stage(
        rp_sql.audit_sql(src.sql, spec, len(values), pp.eps, pp.delta, pp.test, blocks, dialect=be.dialect,
                         tails_relation="", counts_only=True))
    try:
        rows_table = be.stage(_audit_sql(be, src, spec, len(values), pp, blocks, ordered=False, group_verdicts=False,
                                         counts_relation=counts))
    finally:
        if counts is not None:      # the staged rows no longer need it
            be.drop(counts)
    keys = [quote_ident(c) for c in spec.public]
    pub = "".join(k + ", " for k in keys)
    groups_sql = f"""SELECT {pub}any_value(group_size) AS group_size, any_value(trials) AS trials,
            any_value(enforced) AS enforced, count(*) AS values_present,
            least(min(chernoff_upper), min(chernoff_lower)) AS worst_chernoff,
            least(min(exact_upper), min(exact_lower)) AS worst_exact,
            bool_and(passes_{test}) AS passes, {rp_sql.diversity_columns()}
        FROM {rows_table}{' GROUP BY ' + ', '.join(keys) if keys else ''}"""
    if enforce:
        groups_sql = _judged(groups_sql, keys, worst, pp)
    groups_table = be.stage(groups_sql)
    on = rp_sql.same_group("r", "g", keys) if keys else "true"
    stats = ", ".join(f"r.{c}" for c in rp_sql.AUDIT_ROW_STATS)
    rows_sql = (f"SELECT {''.join('r.' + k + ', ' for k in keys)}{stats}, g.passes AS group_passes FROM "
                f"{rows_table} r JOIN {groups_table} g ON {on} ORDER BY {''.join('r.' + k + ', ' for k in keys)}r.value")
    groups_read = f"SELECT * FROM {groups_table}" + (f" ORDER BY {', '.join(keys)}" if keys else "")
    g, fg, r, fr = be.rows(f"""SELECT count(*), count(*) FILTER (WHERE NOT passes), sum(group_size),
        coalesce(sum(group_size) FILTER (WHERE NOT passes), 0) FROM {groups_table}""")[0]
    disclosure = attribute_disclosure(be, rows_table, spec.public, l_diversity,
                                      max_top_share=top_share_limit(be, rows_table, p, len(values), max_top_share))
    return AuditResult(rows=be.relation(rows_sql), groups_detail=be.relation(groups_read), groups=g,
                       failing_groups=fg, records=int(r or 0), failing_records=int(fr), test=test,
                       enforced=bool(enforce), public=spec.public, disclosure=disclosure, sensitive=sensitive,
                       _backend=be, _tables=(rows_table, groups_table), _rows_sql=rows_sql, _groups_sql=groups_read)


def unseen_audit(name: str, sensitive: str, p: float, epsilon: float, delta: float, public=None, domain=None,
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
    try:
        privacy.check_p(p)
        group_key = engine.RESERVED_PREFIX + "pg"
        pub = None if public is None else (public,) if isinstance(public, str) else tuple(public)
        spec = rp_sql.RandomizeSpec(sensitive=sensitive, p=float(p), public=pub or (group_key,) if pub is None
                                    else pub, nulls=nulls)
    except ValueError as exc:
        raise _fail(exc) from None
    if pub is not None:
        clash = [c for c in pub if c.lower() in rp_sql.AUDIT_COLUMNS]
        if clash:
            raise RWNError(f"public: column {clash[0]!r} has the name of a column of the audit; rename it")
    s = quote_ident(sensitive)
    conditions = [engine.raise_unless(d, f"NOT {d.type_matches(s, 'DOUBLE|FLOAT')}", quote_literal(
        f"the sensitive column {sensitive!r} is floating point (") + f" || {d.type_name(s)} || "
        + quote_literal(FLOAT_SENSITIVE_WHY))]
    if nulls == "error":
        conditions.append(engine.raise_unless(d, f"{s} IS NOT NULL", quote_literal(
            f"the sensitive column {sensitive!r} has NULL values; clean them or use nulls='drop' (--nulls drop; those "
            f"records are then left out of the release)")))
    if domain is not None:
        literal = _unseen_domain(d, name, sensitive, domain)
        m = len(domain_values(domain))
        _privacy(p, m, epsilon, delta, test)
        conditions.append(engine.raise_unless(
            d, f"{s} IS NULL OR {d.list_contains(literal, s)}",
            quote_literal("the domain misses values present in the data: ") + f" || {d.as_text(s)}"))
    src = engine.unseen_source(name, d, conditions=conditions, named=[sensitive, *(pub or ())])
    if domain is None:       # the values present; the parameters are checked once it is known
        _privacy(p, 2, epsilon, delta, test)
        present = f"(SELECT count(DISTINCT {s}) FROM {src.sql})"
        m = (f"rwn_privacy_m({float_literal(p)}, {_unseen_domain_size(d, sensitive, present, present)}, "
             f"{float_literal(epsilon)}, {float_literal(delta)}, {quote_literal(test)})")
    if pub is None:
        src = engine.Source(f"(SELECT *, {d.row_of_all_but([s])} AS {group_key} FROM {src.sql}) AS __rwn_keyed",
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


def _audit_sql(be, src, spec, m: int, pp: privacy.PrivacyParams, blocks, **options) -> str:
    """The audit's SQL on this backend. With Python UDFs the statement computes the exact tails
    (the rwn_audit_tails UDF); without, they come from a small table computed here: the
    distinct (enforced, n, count or blocks) cases are read first, their tails computed with
    rwn_sql.rp.privacy in one vectorised call, and the table joined in; no per-row Python.
    counts_relation: the per-(group, value) counts staged beforehand (without UDFs), which
    both statements then read instead of the source."""
    if be.has_python_udfs:
        return rp_sql.audit_sql(src.sql, spec, m, pp.eps, pp.delta, pp.test, blocks, **options)
    cases = be.rows(rp_sql.audit_sql(src.sql, spec, m, pp.eps, pp.delta, pp.test, blocks, dialect=be.dialect,
                                     tails_relation="", cases_only=True,
                                     counts_relation=options.get("counts_relation")))
    table = be.values([(e, n, k, (u, lo)) for (e, n, k), (u, lo) in zip(cases, _case_tails(cases, pp))],
                      "enforced boolean, group_size bigint, tails_key bigint, exact struct<upper:double,lower:double>")
    return rp_sql.audit_sql(src.sql, spec, m, pp.eps, pp.delta, pp.test, blocks, dialect=be.dialect,
                            tails_relation=table, **options)


def _case_tails(cases, pp: privacy.PrivacyParams) -> list[tuple[float, float]]:
    """Exact (upper, lower) tails of audit cases (enforced, n, key): independent trials at
    count `key`, or a block design with `key` blocks."""
    import numpy as np
    out: list[tuple[float, float]] = [(0.0, 0.0)] * len(cases)
    plain = [i for i, (e, _, _) in enumerate(cases) if not e]
    if plain:
        upper, lower = privacy.exact_tails_many(np.array([cases[i][1] for i in plain], dtype=np.int64),
                                                np.array([cases[i][2] for i in plain], dtype=np.int64),
                                                pp.p, pp.m, pp.eps)
        for i, u, lo in zip(plain, upper.tolist(), lower.tolist()):
            out[i] = (u, lo)
    for i, (e, n, k) in enumerate(cases):
        if e:
            out[i] = tuple(float(x) for x in privacy.block_tails(int(n), int(k), pp.p, pp.m, pp.eps))
    return out


def _judged(groups_sql: str, keys, worst: dict, pp: privacy.PrivacyParams) -> str:
    """After enforcement a group's release depends on its design (n, t), not on the counts
    present: every count c = 1..n is evaluated exactly (`worst`: the smallest tail of each
    design), and under the exact test a group passes only if that worst tail reaches delta.
    The groups' SQL with that column added (and the verdict updated)."""
    passes = f"g.passes AND d.w >= {float_literal(pp.delta)}" if pp.test == "exact" else "g.passes"
    designs = (f"(VALUES {', '.join(f'({n}, {t}, {float_literal(w)})' for (n, t), w in sorted(worst.items()))})"
               f" AS d(n, t, w)") if worst else "(SELECT 0 AS n, 0 AS t, 0.0 AS w) AS d"
    cols = "".join(f"g.{k}, " for k in keys)
    return (f"SELECT {cols}g.group_size, g.trials, g.enforced, g.values_present, g.worst_chernoff, g.worst_exact, "
            f"{passes} AS passes, g.l_distinct, g.l_entropy, g.top_share, d.w AS worst_design_tail\n"
            f"FROM ({groups_sql}) AS g LEFT JOIN {designs} ON g.group_size = d.n AND g.trials = d.t")


RECORDED = "recorded"      # estimates(enforce=): take the design recorded with the release


def estimates(con: Session, release, sensitive: str, p: float | None = None, domain=None,
              group_by=(), where: str | None = None, values=None, public=None, enforce=RECORDED,
              test: str | None = None, sql: bool = False):
    """Reconstructed counts from a release, needing only the release and its design.

    Per group of `group_by` (public columns) and per domain value (or, with `values`, for
    that set of values together): released_count, group_size, the unbiased `estimate`, its
    `std_error`, a 95% interval [ci_low, ci_high] and `estimate_clipped` to [0, group size].
    `where` is a predicate over public columns (comparisons, IN, BETWEEN, IS NULL, AND / OR /
    NOT with literals; checked and re-rendered, never pasted).

    The design (p, the domain, the public columns, the enforcement and its blocks) is read
    from where it was recorded: the metadata of a release database (its table named as
    `rel.adult`, `rel.adult_randomized`, 'release.duckdb:adult', ...), the COMMENT of a table
    written by randomize(into=), the metadata of a Parquet file written by rwn-sql randomize
    (design_record). Arguments given as well must agree with the record (else RWNError).
    Without a record they are required: p, domain, and enforce=(eps, delta) with `test` (and
    `public`, default every column but the sensitive one) for a release made with enforcement,
    whose standard errors then account for the blocks, or enforce=None for one made without;
    leaving enforce out is refused, since independent-trial errors of an enforced release are
    several times too small. Refused: a domain with a value twice (after the cast to the
    column's type), released values outside the domain, and a `where` naming the sensitive
    column.
    """
    if p is not None:
        try:
            privacy.check_p(p)
        except ValueError as exc:
            raise _fail(exc) from None
    if isinstance(release, str) and engine.QUERY_START.match(release):   # SQL text: one statement only
        from ..statements import single_statement
        single_statement(release, "the release query")
    if domain is not None:
        domain = _published_domain(domain)
    be = backend_for(con)
    recorded, trials_sql, label = None, None, release if isinstance(release, str) else "the release"
    if be.records_design_in_catalog and isinstance(release, str):
        meta = check_release_source(be.con, release)
        if meta is not None:          # a release database's table: its published metadata
            from .design_record import Design
            release = meta.rows_sql
            recorded = Design(sensitive=meta.sensitive, sensitive_type=meta.sensitive_type, public=meta.public,
                              p=meta.p, domain=meta.domain, enforced=meta.enforced, epsilon=meta.epsilon,
                              delta=meta.delta, test=meta.test)
            trials_sql = meta.trials_sql
        elif not engine.QUERY_START.match(release):
            recorded = _recorded_elsewhere(be.con, release)
    elif isinstance(release, str) and engine.file_format(release.rstrip("/")) == "parquet" \
            and os.path.exists(release):        # a local Parquet file or folder: its metadata, read by DuckDB
        from .design_record import local_parquet_record
        recorded = local_parquet_record(release.rstrip("/"))
    src = be.source(release)
    p, domain, public, enforce, test = _reconcile(recorded, label, sensitive, p, domain, public, enforce, test)
    group_by = (group_by,) if isinstance(group_by, str) else tuple(group_by)
    _check_names(src, sensitive, group_by)
    if sensitive in group_by:
        raise RWNError(f"group_by: {sensitive!r} is the sensitive attribute; its values are the rows already")
    pub = _public(src, sensitive, public)
    _check_names(src, sensitive, pub)
    if recorded is not None and trials_sql is None:
        _check_recorded_columns(src, sensitive, pub, recorded, label)
    outside = [c for c in group_by if c not in pub]
    if outside:
        raise RWNError(f"group_by: column {outside[0]!r} is not a public column ({', '.join(pub)})")
    domain = _published_domain(domain)
    type_sql = src.type_of(sensitive)
    literal = _typed_domain(be, domain, type_sql, sensitive)
    clash = [c for c in group_by if c.lower() in rp_sql.ESTIMATE_COLUMNS]
    if clash:
        raise RWNError(f"group_by: column {clash[0]!r} has the name of an output column of the estimates; "
                       f"rename it in the release")
    where_sql = None
    if where is not None:
        from .analyst import check_predicate
        where_sql = check_predicate(where, pub, sensitive, src.label)
    vals = None
    if values is not None:
        values = list(dict.fromkeys(str(v) for v in values))      # a repeated value is one value
        vals = [f"CAST({quote_literal(v)} AS {type_sql})" for v in values]
        unknown = [v for v in values if v not in domain]
        if unknown:
            raise RWNError(f"values {unknown} are not in the domain")
    s = quote_ident(sensitive)
    outside = be.rows(f"SELECT DISTINCT {be.dialect.as_text(s)} FROM {src.sql} WHERE {s} IS NULL "
                      f"OR NOT {be.dialect.list_contains(literal, s)} ORDER BY 1 NULLS FIRST LIMIT 6")
    if outside:
        shown = ", ".join("NULL" if v is None else repr(v) for v, in outside[:5])
        shown += ", ..." if len(outside) > 5 else ""
        raise RWNError(f"the release holds values of {sensitive!r} outside the domain: {shown}; give the "
                       f"published domain of this release")
    design = None
    if trials_sql is not None:
        design = (trials_sql, pub)
    elif enforce is not None:
        try:
            eps, delta = enforce
        except (TypeError, ValueError):
            raise RWNError(f"enforce must be a pair (eps, delta), got {enforce!r}") from None
        spec = rp_sql.RandomizeSpec(sensitive=sensitive, p=float(p), public=pub)
        trials = _blocks(be, src, spec, _privacy(p, len(domain), eps, delta, test))
        if recorded is not None and recorded.blocks is not None:
            kept = dict(recorded.blocks)
            wrong = sorted(n for n, t in trials.items() if kept.get(n) != t)
            if wrong:
                raise RWNError(f"{label} records {kept.get(wrong[0])} blocks for its personal groups of "
                               f"{wrong[0]} records, where its design gives {trials[wrong[0]]}: the table or its "
                               f"record was altered (refused)")
        design = (rp_sql.trials_values(trials), pub)
    text = rp_sql.estimates_sql(src.sql, sensitive, float_literal(p), literal, group_by, where_sql, vals, design,
                                dialect=be.dialect)
    return be.engine_sql(text) if sql else be.relation(text)


def _recorded_elsewhere(con, release: str):
    """The design recorded with a table (its COMMENT) or a Parquet file (its metadata)."""
    from .design_record import parquet_record, table_record
    if engine.file_format(release.rstrip("/")) == "parquet" and os.path.exists(release):
        return parquet_record(con, release.rstrip("/"))
    db = engine.split_db_target(release)
    if db is not None:           # 'file.duckdb:table': the COMMENT of that table
        if not os.path.isfile(db[0]):
            return None
        alias = engine.attach_read_only(con, db[0])
        return table_record(con, f"{quote_ident(alias)}.{quote_ident(db[1])}")
    if engine.file_format(release):
        return None
    return table_record(con, release)


def _reconcile(recorded, label: str, sensitive: str, p, domain, public, enforce, test):
    """(p, domain, public, enforce, test) for the estimates: the recorded design, checked
    against the arguments given, or (no record) the arguments, which must then name the
    enforcement (a pair, or None for none)."""
    if recorded is None:
        if p is None or domain is None:
            raise RWNError(f"{label} records no design: give p and the published domain")
        if isinstance(enforce, str) and enforce == RECORDED:
            raise RWNError(f"{label} records no design (a release database's table, a table written by "
                           f"randomize(into=) or rwn_randomize_into, and a Parquet file or file.duckdb:table written by rwn-sql randomize "
                           f"record it; a CSV cannot): give enforce=(eps, delta) and test= as the release was "
                           f"made, or enforce=None for a release made without enforcement (rwn_estimates: epsilon "
                           f"and delta, or enforced := false); independent-trial errors of an enforced release "
                           f"are several times too small")
        return p, domain, public, enforce, test or "exact"
    what = f"{label} records the design of"
    if sensitive != recorded.sensitive:
        raise RWNError(f"{what} sensitive column {recorded.sensitive!r}, not {sensitive!r}")
    if p is not None and abs(float(p) - recorded.p) > 1e-12:
        raise RWNError(f"{label} is a release published with p = {recorded.p}, not {p}: give the published p "
                       f"(or leave it out: it is recorded)")
    if domain is not None and sorted(domain_values(domain)) != sorted(recorded.domain):
        raise RWNError(f"{what} the domain {list(recorded.domain)}, not the domain given: leave it out (it is "
                       f"recorded) or give the published one")
    if public is not None:
        given = (public,) if isinstance(public, str) else tuple(public)
        if sorted(given) != sorted(recorded.public):
            raise RWNError(f"{what} the public columns {list(recorded.public)}, not {list(given)}")
    if not (isinstance(enforce, str) and enforce == RECORDED):
        if enforce is None and recorded.enforced:
            raise RWNError(f"{what} a release enforced with (eps, delta) = ({recorded.epsilon}, {recorded.delta}) "
                           f"({recorded.test} test), not enforce=None: its errors account for the blocks; leave "
                           f"enforce out")
        if enforce is not None:
            try:
                eps, delta = enforce
            except (TypeError, ValueError):
                raise RWNError(f"enforce must be a pair (eps, delta), got {enforce!r}") from None
            if not recorded.enforced or abs(float(eps) - recorded.epsilon) > 1e-12 or \
                    abs(float(delta) - recorded.delta) > 1e-12:
                now = (f"enforced with ({recorded.epsilon}, {recorded.delta})" if recorded.enforced
                       else "made without enforcement")
                raise RWNError(f"{what} a release {now}, not enforce={tuple(enforce)}: leave enforce out")
    if test is not None and recorded.enforced and test != recorded.test:
        raise RWNError(f"{what} a release certified with the {recorded.test} test, not {test!r}")
    return recorded.p, list(recorded.domain), recorded.public, recorded.enforce, recorded.test


def _check_recorded_columns(src, sensitive: str, pub, recorded, label: str) -> None:
    """A table's recorded design describes it: its columns are the recorded public ones and the
    sensitive one, of the recorded type."""
    if sorted(src.names) != sorted((*recorded.public, sensitive)):
        raise RWNError(f"{label} has the columns {', '.join(src.names)}, not those of its recorded design "
                       f"({', '.join((*recorded.public, sensitive))}): the table was altered or derived; give the "
                       f"design of the release it holds in a table of its own")
    kind = src.type_of(sensitive)
    if not same_type_name(kind, recorded.sensitive_type):
        raise RWNError(f"{label} has {sensitive!r} of type {kind}, not the recorded {recorded.sensitive_type}: "
                       f"refused")


def unseen_estimates(release: str, sensitive: str, p: float, domain, group_by=(), where: str | None = None,
                     values=None, public=None, enforce=RECORDED, test: str | None = None, dialect=None) -> str:
    """estimates(..., sql=True) for a release table or view the planner cannot see (a TEMP one of
    the SQL macros' caller): planned from the parameters alone, the checks that read the release
    made by the statement (engine.unseen_source): the columns exist (binding), the domain is
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
    try:
        privacy.check_p(p)
    except ValueError as exc:
        raise _fail(exc) from None
    group_by = (group_by,) if isinstance(group_by, str) else tuple(group_by)
    if sensitive in group_by:
        raise RWNError(f"group_by: {sensitive!r} is the sensitive attribute; its values are the rows already")
    pub = None if public is None else (public,) if isinstance(public, str) else tuple(public)
    if pub is not None:
        if sensitive in pub:
            raise RWNError(f"column {sensitive!r} is both the sensitive attribute and public")
        outside = [c for c in group_by if c not in pub]
        if outside:
            raise RWNError(f"group_by: column {outside[0]!r} is not a public column ({', '.join(pub)})")
    domain = _published_domain(domain)
    repeated = next((v for i, v in enumerate(domain) if v in domain[:i]), None)
    if repeated is not None:
        raise RWNError(f"the domain lists {repeated!r} more than once")
    clash = [c for c in group_by if c.lower() in rp_sql.ESTIMATE_COLUMNS]
    if clash:
        raise RWNError(f"group_by: column {clash[0]!r} has the name of an output column of the estimates; "
                       f"rename it in the release")
    label = f"table {release!r}"
    where_sql = None
    if where is not None:
        from .analyst import check_predicate, predicate_columns
        where_sql = check_predicate(where, pub if pub is not None else
                                    [c for c in predicate_columns(where) if c.lower() != sensitive.lower()],
                                    sensitive, label)
    vals = None
    if values is not None:
        values = list(dict.fromkeys(str(v) for v in values))
        unknown = [v for v in values if v not in domain]
        if unknown:
            raise RWNError(f"values {unknown} are not in the domain")
        vals = [quote_literal(v) for v in values]       # compared with the column: read as its type
    pp = None
    if enforce is not None:
        try:
            eps, delta = enforce
        except (TypeError, ValueError):
            raise RWNError(f"enforce must be a pair (eps, delta), got {enforce!r}") from None
        pp = _privacy(p, len(domain), eps, delta, test)
    s = quote_ident(sensitive)
    # the domain as the sensitive column's type, which only the statement knows
    literal = _unseen_domain(d, release, sensitive, domain)
    typed = d.same_type_list(f"(SELECT {s} FROM {d.table_by_name(quote_literal(release))} LIMIT 0)",
                             [quote_literal(v) for v in domain])
    inside = engine.raise_unless(
        d, f"{s} IS NOT NULL AND {d.list_contains(typed, s)}",
        quote_literal(f"the release holds values of {sensitive!r} outside the domain: ")
        + f" || coalesce({quote_literal(chr(39))} || {d.as_text(s)} || {quote_literal(chr(39))}, 'NULL') || "
        + quote_literal("; give the published domain of this release"))
    named = [sensitive, *group_by, *(pub or ())]
    src = engine.unseen_source(release, d, conditions=[inside], named=named)
    design = None
    if pp is not None:
        groups = (d.count_by_all_but(src.sql, [s], "n") if pub is None else
                  f"SELECT count(*) AS n FROM {src.sql}" + (f" GROUP BY {', '.join(map(quote_ident, pub))}" if pub else ""))
        design = (rp_sql.designed_trials(groups, pp.p, pp.m, pp.eps, pp.delta, pp.test, d), pub)
    return rp_sql.estimates_sql(src.sql, sensitive, float_literal(p), literal, group_by, where_sql, vals, design,
                                dialect=d)


def _release_name(con, release: str) -> tuple[str | None, str] | None:
    """(schema or database alias, table) that `release` names when it is [schema.]table or
    'file.duckdb:table' (attached read-only, as resolve_source attaches it); None otherwise."""
    db = engine.split_db_target(release)
    if db is not None:
        return engine.attach_read_only(con, db[0]), db[1]
    from .release_db import ROWS_SCHEMA
    if engine.QUERY_START.match(release) or engine.file_format(release) or "\x00" in release:
        return None
    parts = name_parts(release)
    if not parts or len(parts) > 3 or (len(parts) == 3 and parts[1].lower() != ROWS_SCHEMA):
        return None        # db.randomized_rows_not_counts.table: a release's table in its own schema
    return (parts[0] if len(parts) > 1 else None), parts[-1]


def _attached_files(con) -> set[str]:
    """The databases `con` reads from files it ATTACHed (lower-case names): any but the current one."""
    return {name.lower() for name, in con.execute(
        "SELECT database_name FROM duckdb_databases() WHERE NOT internal AND path IS NOT NULL "
        "AND database_name <> current_database()").fetchall()}


def _references(text: str, is_query: bool):
    """The catalog names (a list of 1-3 parts) a source reads: the name itself, or every table of
    a query (sqlglot) but its CTEs. RWNError for a query calling a qualified function (a macro of
    an attached file) or query() / query_table(), whose strings name objects no parser sees."""
    import sqlglot
    from sqlglot import exp
    try:
        tree = sqlglot.parse_one(text if is_query else f"SELECT * FROM {text}", read="duckdb")
    except sqlglot.errors.SqlglotError:
        raise RWNError(f"cannot check which objects {text!r} reads while database files are attached: "
                       f"give a table or view name") from None
    if isinstance(tree, exp.Create):            # a view's stored text: its query
        tree = tree.expression
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    for node in tree.find_all(exp.Func):
        name = (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
        if isinstance(node.parent, exp.Dot) or name in ("query", "query_table"):
            raise RWNError(f"{text!r} calls {node.sql(dialect='duckdb')!r}: a release query may not call a "
                           f"qualified function or the query or query_table function while database files are attached")
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            continue                               # a table function (read_csv, range): no catalog object
        parts = [part.name for part in table.parts]
        if len(parts) == 1 and parts[0].lower() in ctes:
            continue
        yield parts


def refuse_attached_views(con, release: str) -> None:
    """Refuse, before any row is read, a release source (a name in any spelling, or SQL text)
    that reads a view of a database file ATTACHed to `con` (any but its current database), also
    through views of the caller's own: such a view runs the SQL of a file the caller did not write
    on the caller's connection, with its file access. Views of the caller's own databases (its
    current one, temp, in-memory attachments) stay allowed, their bodies checked alike. A name
    resolves as DuckDB resolves it, over-approximated: a.b is schema a of the current database or
    database a's main schema; a bare name any schema of the current database, temp, or the search
    path."""
    foreign = _attached_files(con)
    if not foreign:
        return
    current_db, current_schema, path = con.execute(
        "SELECT current_database(), current_schema(), current_setting('search_path')").fetchone()
    searched = [tuple(p.strip().strip('"').lower().split(".", 1)) for p in (path or "").split(",") if p.strip()]
    views = con.execute("SELECT database_name, schema_name, view_name, sql FROM duckdb_views() "
                        "WHERE NOT internal").fetchall()
    pending, seen = [(release, engine.QUERY_START.match(release) is not None, current_db, current_schema)], set()
    while pending:
        text, is_query, db, schema = pending.pop()
        for parts in _references(text, is_query):
            parts = [p.lower() for p in parts]
            if len(parts) == 3:
                wanted = [(parts[0], parts[1])]
            elif len(parts) == 2:
                wanted = [(db.lower(), parts[0]), (parts[0], "main")]
            else:
                wanted = [(db.lower(), None), ("temp", None)] + [
                    (s[0], s[1]) if len(s) == 2 else (db.lower(), s[0]) for s in searched]
            for vdb, vschema, vname, vsql in views:
                if vname.lower() != parts[-1] or not any(
                        vdb.lower() == w_db and (w_schema is None or vschema.lower() == w_schema)
                        for w_db, w_schema in wanted):
                    continue
                if vdb.lower() in foreign:
                    raise RWNError(f"{release!r} reads {vname!r}: {vname!r} is a view of the attached database file "
                                   f"{vdb!r} ({vdb}.{vschema}.{vname}): estimates read only base tables of a file "
                                   f"(a view runs the file's own SQL on your connection); give its released table")
                if (vdb, vschema, vname) not in seen and len(seen) < 1000:
                    seen.add((vdb, vschema, vname))
                    pending.append((vsql, True, vdb, vschema))


def check_release_source(con, release: str):
    """Before estimates read `release`: when it names an object of a release database, that
    database passes release_db's checks and the object is a base table, since the caller's
    connection would run a view's SQL (a release file is untrusted input). Returns the
    release's metadata (ReleaseMeta, rows_sql naming its released table) when `release`
    names its released table or the release itself, else None."""
    from .release_db import NotARelease, catalog_object, check_catalog, read_metadata
    if engine.split_db_target(release) is None and not (engine.file_format(release) and os.path.isfile(release)):
        refuse_attached_views(con, release)
    found = _release_name(con, release)
    if found is None:
        return None
    schema, table = found
    try:
        where = check_catalog(con, schema)
    except NotARelease:
        return None
    kind = catalog_object(con, where, table)
    if kind is not None and kind[0] == "view":
        raise RWNError(f"{release!r} is a view of a release database; estimates read its released table (a "
                       f"view of a release file runs the file's own SQL)")
    try:
        return read_metadata(con, table, schema)
    except NotARelease:
        return None


def query(con: Session, sql: str, release: str | None = None):
    """Answer an analyst's count query (or SUM(x) / AVG(x) of a public numeric column) with the
    reconstruction (rwn_sql.analyst.rewrite): per output row released_count (released_sum,
    released_avg and count_estimate), group_size, estimate, std_error, 95% interval, and whether
    the row reconstructs a single personal group (micro_reconstruction). `release` is a
    release database file; without it the release tables and their metadata must be in
    `con`. Only the rewritten SQL runs, on a separate connection that sees nothing but the
    release (read-only, no file access). Returns (relation of `con` over the computed rows,
    Rewritten)."""
    from .query_run import run_query, run_query_on
    be = backend_for(con)
    if not be.releases_to_database_file:
        if release is None or not os.path.isdir(os.fspath(release)):
            raise RWNError(f"on {be.name}, release= names a release folder (written by rwn_sql.release on "
                           f"{be.name}); got {release!r}")
        return run_query_on(be, sql, os.fspath(release))
    if release is not None:
        if not os.path.isfile(os.fspath(release)):
            raise RWNError(f"release database {str(release)!r} does not exist")
        release = os.path.abspath(os.fspath(release))
    return run_query(con, sql, release=release)
