"""The checks of a uniform perturbation's inputs before any SQL is planned: the source's columns,
the sensitive column's type and values, the record ids, the published domain and the
attribute-disclosure parameters (docs/METHODS.md section 2)."""
from __future__ import annotations

import math
import os
import re

from ...engines import duckdb as engine, sources
from . import sqlgen as rp_sql
from ...errors import RWNError
from ...identifiers import quote_ident, quote_literal
from ...messages import Message
from ...small_files import read_small_file


def refused(exc: Exception) -> RWNError:
    """A value check's error (a ValueError or TypeError) as the RWNError callers see, its message kept."""
    return RWNError(str(exc))


def public_columns(src, sensitive: str, public, id_column: str | None = None) -> tuple[str, ...]:
    """The public columns: those given, else every column but the sensitive one and the id."""
    if public is None:
        return tuple(c for c in src.names if c not in (sensitive, id_column))
    if isinstance(public, str):
        public = [public]
    return tuple(public)


def check_names(src, sensitive, public) -> None:
    """No column name of the source is reserved; the sensitive and the public columns exist."""
    sources.refuse_reserved(src)
    sources.require_columns(src, [sensitive], "sensitive")
    sources.require_columns(src, public, "public")


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
        raise RWNError(NULL_SENSITIVE.text(sensitive=sensitive, nulls=f"{nnull} NULL values"))
    if records - (nnull if nulls == "drop" else 0) == 0:
        raise RWNError(f"{src.label} has no records" + (" with a sensitive value" if records else ""))
    if domain is None:
        values = sorted(v for v, _ in counts if v is not None)
        if len(values) > rp_sql.MAX_INFERRED_DOMAIN:
            raise RWNError(LARGE_DOMAIN.text(sensitive=sensitive, n=len(values)))
    else:
        values = listed_once(domain)
    if len(values) < 2:
        raise RWNError(SMALL_DOMAIN.text(sensitive=sensitive, m=len(values)))
    literal = typed_domain(be, values, type_sql, sensitive)
    if domain is not None:
        missing = be.rows(f"SELECT DISTINCT {be.dialect.as_text(s)} FROM {src.sql} WHERE {s} IS NOT NULL "
                          f"AND NOT {be.dialect.list_contains(literal, s)} ORDER BY 1 LIMIT 6")
        if missing:
            shown = ", ".join(repr(r[0]) for r in missing[:5]) + (", ..." if len(missing) > 5 else "")
            raise RWNError(MISSING_FROM_DOMAIN.text(values=shown))
    return values


def domain_size(con, source, sensitive: str, domain, nulls: str) -> int:
    """m of the domain a randomization of `source` would publish: the given domain's values, else
    the values present (checked as resolve_domain checks them)."""
    from ...engines.backend import backend_for
    be = backend_for(con)
    src = be.source(source)
    check_names(src, sensitive, ())
    return len(resolve_domain(be, src, sensitive, domain, nulls))


MAX_DOMAIN_FILE_BYTES = 4 << 20      # 4 MiB: far more than any domain a release can publish


def read_domain_file(path) -> list[str]:
    """A published domain from a regular file of at most MAX_DOMAIN_FILE_BYTES of UTF-8 text:
    one value per line; blank lines are ignored. Read by small_files.read_small_file, so a
    FIFO, a device such as /dev/zero or a folder is refused before anything is read, and a
    larger file after reading at most the limit. A NUL byte (a binary file) and a line reading
    NULL (the sensitive attribute has no NULL value to list) are refused, naming the line."""
    name = str(path)
    text = read_small_file(path, "domain file", MAX_DOMAIN_FILE_BYTES, limit_note=" (4 MiB)",
                           screen=_refuse_nul, line_in_errors=True)
    values = []
    for number, line in enumerate(text.split("\n"), 1):
        value = line.rstrip("\r")
        if value.strip() == "":
            continue
        if value.strip() == "NULL":
            raise RWNError(f"domain file {name!r} line {number} reads NULL: a domain lists values and NULL is "
                           f"none (NULL sensitive values are refused or dropped, see nulls=); remove the line")
        values.append(value)
    return values


def _refuse_nul(data: bytes, name: str) -> None:
    if b"\0" in data:
        line = data[:data.index(b"\0")].count(b"\n") + 1
        raise RWNError(f"domain file {name!r} holds a NUL byte on line {line} (a binary file?); give one value "
                       f"per line")


def domain_values(domain) -> list[str]:
    """A given domain (a domain file's path or a list of values) as text. A missing value (None,
    NaN) or a value that is not a scalar (a list, a dict, bytes) is refused naming its position:
    its text ('None', 'nan', '[1, 2]') would be published as a domain value."""
    if isinstance(domain, (str, os.PathLike)):
        return read_domain_file(domain)
    if isinstance(domain, (bytes, bytearray, dict)) or not hasattr(domain, "__iter__"):
        raise RWNError(f"domain must be a list of values or a domain file's path, got {type(domain).__name__}")
    values = []
    for position, v in enumerate(domain, 1):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            raise RWNError(f"domain value {position} is {v!r}, a missing value: a domain lists values (NULL "
                           f"sensitive values are refused or dropped, see nulls=); remove it")
        if isinstance(v, (list, tuple, set, frozenset, dict, bytes, bytearray)):
            raise RWNError(f"domain value {position} is {type(v).__name__} {v!r}, not a single value")
        values.append(str(v))
    return values


def listed_once(domain) -> list[str]:
    """A given domain's values as text, refused when one is listed twice."""
    values = domain_values(domain)
    seen: set[str] = set()
    repeated = {v for v in values if v in seen or seen.add(v)}
    if repeated:
        raise RWNError(f"the domain lists {sorted(repeated)[0]!r} more than once")
    return values


# The refusals a check makes; the parts in braces are what the data decides.
NULL_SENSITIVE = Message("the sensitive column {sensitive!r} has {nulls}; clean them or use nulls='drop' (--nulls "
                         "drop; those records are then left out of the release)")
SMALL_DOMAIN = Message("the domain of {sensitive!r} has {m} value(s); uniform perturbation needs at least 2")
LARGE_DOMAIN = Message(f"the sensitive column {{sensitive!r}} holds {{n}} distinct values, more than "
                       f"{rp_sql.MAX_INFERRED_DOMAIN} (the most a domain read from the data may have): a numeric "
                       f"attribute belongs to RWN (rwn_sql.perturb, rwn-sql perturb); a genuinely categorical one with "
                       f"this many values needs its published domain given explicitly (domain= / --domain-file)")
MISSING_FROM_DOMAIN = Message("the domain misses values present in the data: {values}")
SAME_AFTER_CAST = Message("the domain lists {values} the same value as {type_name} (column {sensitive!r}); list "
                          "each value once")
NESTED_SENSITIVE = Message("the sensitive column {sensitive!r} has type {type_name}, a nested or binary type; "
                           "uniform perturbation needs single values (text, numbers, dates, UUIDs): cast or extract one")
# Uniform perturbation replaces a value by one of m listed values: for a measurement that is no
# protection worth the name (and its domain is whatever values happen to occur).
FLOAT_SENSITIVE = Message("the sensitive column {sensitive!r} is floating point ({type_name}): uniform perturbation "
                          "draws replacements from a list of categories, not for a numeric measurement; perturb "
                          "numeric columns with RWN (rwn_sql.perturb, rwn-sql perturb), or bin the column into "
                          "categories first")
ID_NULLS = Message("id column {column!r} has {nulls} NULL values; every record needs an id")
ID_SHARED = Message("id column {column!r} has duplicate values ({shared} records share an id with another); every "
                    "record needs its own id")
L_ABOVE_DOMAIN = Message("l_diversity = {l} exceeds the domain's {m} values: no personal group can hold that many "
                         "distinct values")
OUTSIDE_DOMAIN = Message("the release holds values of {sensitive!r} outside the domain: {values}; give the published "
                         "domain of this release")


def typed_domain(be, values, type_sql: str, sensitive: str) -> str:
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
            raise RWNError(SAME_AFTER_CAST.text(values=f"{seen[cast]!r} and {str(given)!r},", type_name=type_sql,
                                                sensitive=sensitive))
        seen[cast] = str(given)
    return literal


def prepare(be, source, sensitive, p, public, domain, nulls, id_column=None, released=False):
    """The checked source, spec and domain; `released` (randomize, release): also the values
    that are published (check_released_values)."""
    src = be.source(source)
    pub = public_columns(src, sensitive, public, id_column)
    check_names(src, sensitive, pub)
    try:
        spec = rp_sql.RandomizeSpec(sensitive=sensitive, p=float(p), public=pub, nulls=nulls, id=id_column)
    except ValueError as exc:
        raise refused(exc) from None
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
        raise RWNError(NESTED_SENSITIVE.text(sensitive=sensitive, type_name=type_sql))
    if FLOAT_TYPES.match(type_sql.strip()):
        raise RWNError(FLOAT_SENSITIVE.text(sensitive=sensitive, type_name=type_sql))


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
    sources.require_record_id(src, id_column)
    column = quote_ident(id_column)
    where = f" WHERE {quote_ident(spec.sensitive)} IS NOT NULL" if spec.nulls == "drop" else ""
    rows, nulls, distinct = be.rows(f"SELECT count(*), count(*) - count({column}), count(DISTINCT {column}) "
                                    f"FROM {src.sql}{where}")[0]
    if nulls:
        raise RWNError(ID_NULLS.text(column=id_column, nulls=nulls))
    if distinct != rows - nulls:
        raise RWNError(ID_SHARED.text(column=id_column, shared=rows - distinct))


def check_l_diversity(l_diversity, m: int | None = None) -> int:
    """L of the distinct l-diversity rule: an integer >= 1 (1 turns the attribute-disclosure
    refusal off) and at most the domain's m values."""
    if isinstance(l_diversity, bool) or not isinstance(l_diversity, int) or l_diversity < 1:
        raise RWNError(f"l_diversity must be an integer >= 1 (1 turns the check off), got {l_diversity!r}")
    if m is not None and l_diversity > m:
        raise RWNError(L_ABOVE_DOMAIN.text(l=l_diversity, m=m))
    return l_diversity


def disclosure_rule(params, l_diversity, max_top_share, always: bool = False) -> int | None:
    """L of the attribute-disclosure rule a randomization applies: the given one, else
    DEFAULT_L_DIVERSITY with enforcement (or `always`: a release), else None (not checked);
    max_top_share is checked here too."""
    check_max_top_share(max_top_share)
    if l_diversity is None and (params.threshold is not None or always):
        return rp_sql.DEFAULT_L_DIVERSITY
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


def published_domain(domain) -> list[str]:
    """The domain an estimate needs (a list or a domain file), as text: at least 2 values."""
    domain = domain_values(domain) if domain is not None else None
    if domain is None or len(domain) < 2:
        raise RWNError("estimates need the published domain (at least 2 values)")
    return domain


def refuse_released_outside(be, src, sensitive: str, literal: str) -> None:
    """Refuse a release holding a value of `sensitive` (NULL included) outside the domain
    `literal` (a typed SQL list), naming the first few."""
    s = quote_ident(sensitive)
    outside = be.rows(f"SELECT DISTINCT {be.dialect.as_text(s)} FROM {src.sql} WHERE {s} IS NULL "
                      f"OR NOT {be.dialect.list_contains(literal, s)} ORDER BY 1 NULLS FIRST LIMIT 6")
    if outside:
        shown = ", ".join("NULL" if v is None else repr(v) for v, in outside[:5])
        shown += ", ..." if len(outside) > 5 else ""
        raise RWNError(OUTSIDE_DOMAIN.text(sensitive=sensitive, values=shown))


def check_audit_public(public) -> None:
    """No public column has the name of one of the audit's own columns."""
    clash = [c for c in public if c.lower() in rp_sql.AUDIT_COLUMNS]
    if clash:
        raise RWNError(f"public: column {clash[0]!r} has the name of a column of the audit; rename it")


def check_estimate_columns(sensitive: str, group_by, public) -> None:
    """The estimates' groups: public columns (`public` None: every column but the sensitive one),
    never the sensitive one, none named as an output column of the estimates."""
    if sensitive in group_by:
        raise RWNError(f"group_by: {sensitive!r} is the sensitive attribute; its values are the rows already")
    if public is not None:
        if sensitive in public:
            raise RWNError(f"column {sensitive!r} is both the sensitive attribute and public")
        outside = [c for c in group_by if c not in public]
        if outside:
            raise RWNError(f"group_by: column {outside[0]!r} is not a public column ({', '.join(public)})")
    clash = [c for c in group_by if c.lower() in rp_sql.ESTIMATE_COLUMNS]
    if clash:
        raise RWNError(f"group_by: column {clash[0]!r} has the name of an output column of the estimates; "
                       f"rename it in the release")


def estimated_values(values, domain) -> list[str] | None:
    """The values an estimate counts together, as text (a repeated value is one value), all in the domain."""
    if values is None:
        return None
    values = list(dict.fromkeys(str(v) for v in values))
    unknown = [v for v in values if v not in domain]
    if unknown:
        raise RWNError(f"values {unknown} are not in the domain")
    return values
