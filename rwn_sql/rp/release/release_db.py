"""Standalone release databases for analysts and BI tools.

A release database is a DuckDB file holding only:
  * in the schema `randomized_rows_not_counts` (ROWS_SCHEMA), the released microdata
    `<name>_randomized`: a BI tool lists it under a schema whose name says its rows are not
    counts, so a dashboard author picks it deliberately (its counts are biased);
  * `rwn_release_metadata`: one row per released table with the published parameters
    (method, p, the domain, eps, delta, test, RWN parameters) and never the key or raw data;
  * for an enforced release, `rwn_release_trials(size, t)`: the number of blocks of a personal
    group of each size (public: it follows from the group sizes and the parameters);
  * in the default schema `main`, what a BI tool lists first: `<name>_cells`, the fact view,
    one row per personal group and sensitive value with the unbiased `estimate`, its
    `variance` and `nonnegative_estimate`; the estimator is linear, so SUM(estimate) over any
    slice of public columns is that slice's estimate;
  * ready-made reconstruction views `<name>_estimates` (per sensitive value) and
    `<name>_estimates_by_<column>` (per public column with at most ONE_WAY_MAX distinct
    values, and sensitive value), the sensitive column under its own name in every view;
  * a COMMENT on every table, view and column saying what it is and how to aggregate it.
All plain SQL that a DuckDB without rwn_sql can run.
"""
from __future__ import annotations

import datetime as _dt
import math
import os
import re
import secrets
from dataclasses import dataclass, field, replace

from ...version import __version__
from ...engines import duckdb as engine, files, sources
from ..core import privacy, sqlgen as rp_sql
from ...engines.dialects import DUCKDB, Dialect, same_type_name
from ...errors import OutputExists, RWNError
from ...identifiers import float_literal, quote_ident, quote_literal
from .release_limits import (MAX_IN_LIST, MAX_METADATA_BYTES, MAX_NESTING, MAX_QUERY_CHARS, MAX_TEXT_BYTES,
                             MAX_TRIALS_ROWS, METADATA_LIMITS, METADATA_MEMORY_LIMIT, QUERY_GRAMMAR, QUERY_LIMITS)

METADATA_TABLE = "rwn_release_metadata"
TRIALS_TABLE = "rwn_release_trials"       # enforced releases: blocks per personal-group size (public)
# The randomized microdata's own schema: BI tools list `main` (the estimate views) first, and
# this name tells a dashboard author that its rows are not counts. A release without it (written
# before this layout) keeps the table beside its metadata and is read there.
ROWS_SCHEMA = "randomized_rows_not_counts"
ONE_WAY_MAX = 100                         # one-way views only for public columns with this many values at most
TYPE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_ ]*(\(\d+(,\s*\d+)?\))?|ENUM\('(''|[^'])*'(, '(''|[^'])*')*\)")
METADATA_COLUMNS = """
    table_name VARCHAR, method VARCHAR, sensitive VARCHAR, sensitive_type VARCHAR, public VARCHAR[],
    p DOUBLE, domain VARCHAR[], m INTEGER, enforced BOOLEAN, epsilon DOUBLE, delta DOUBLE, test VARCHAR,
    rwn_columns VARCHAR[], rwn_k INTEGER, rwn_eps DOUBLE, rwn_q DOUBLE, rwn_scale VARCHAR,
    rows BIGINT, created_at TIMESTAMP, rwn_sql_version VARCHAR, suppressed_records BIGINT, release_name VARCHAR,
    l_diversity INTEGER, max_top_share DOUBLE, p_calibration VARCHAR"""
# metadata written before the top-share rule or the calibration lack their last columns; they are read as they are
OLDER_METADATA_COLUMNS = 2
METADATA_COMMENTS = {
    "table_name": "the randomized microdata table this row describes",
    "method": "uniform_perturbation, or rwn+uniform_perturbation when numeric public columns were first perturbed by RWN",
    "sensitive": "the randomized (sensitive) column",
    "sensitive_type": "its SQL type",
    "public": "the public columns; together they define the personal groups",
    "p": "retention probability: each sensitive value was kept with probability p, else replaced by a uniform draw from the domain",
    "domain": "the m possible sensitive values, as published (the estimates use exactly these)",
    "m": "number of domain values",
    "enforced": "true when (epsilon, delta)-reconstruction privacy was enforced by blocks (see rwn_release_trials)",
    "epsilon": "enforced epsilon (NULL when not enforced)",
    "delta": "enforced delta (NULL when not enforced)",
    "test": "test the enforcement was certified with: exact (every count) or chernoff (screening only)",
    "rwn_columns": "numeric public columns perturbed by RWN before the randomization (NULL: none)",
    "rwn_k": "RWN neighbourhood size k", "rwn_eps": "RWN neighbourhood radius eps",
    "rwn_q": "RWN replacement probability q", "rwn_scale": "RWN scaling of the distance columns",
    "rows": "records released", "created_at": "when the release was written (UTC)",
    "rwn_sql_version": "version of rwn_sql that wrote it",
    "suppressed_records": "records of personal groups left out because no enforcement design passes (suppress_small)",
    "release_name": "the release's name: the prefix of its tables and views",
    "l_diversity": "distinct l-diversity required of personal groups of at least 2 records, with no public proxy of "
                   "the sensitive attribute; 1: the steward turned the check off",
    "max_top_share": "the largest share of a personal group (of at least 2 records) one sensitive value could hold: "
                     "a majority vote within a group recovers no more; 1: that part turned off; NULL: not checked",
    "p_calibration": "the budget p was calibrated from (rho1-to-rho2 privacy or local differential privacy, with its "
                     "bound on p for this domain's m values); NULL: p was given",
}
NONNEGATIVE_NOTE = ("BIASED but never negative: the group's unbiased estimates projected (Euclidean distance) onto "
                    "the non-negative counts that sum to group_size, so it equals estimate when none of the group's "
                    "estimates is negative; rare values come out too high and common ones too low, it has no "
                    "standard error, and a SUM of it over many groups inflates rare values: for display and "
                    "shares; SUM estimate for totals")
ESTIMATE_COMMENTS = {
    "released_count": "released records with this value: BIASED by the randomization, never report it as a count",
    "group_size": "released records in the group (exact)",
    "estimate": "unbiased estimate of the number of records holding the value",
    "std_error": "standard error of estimate (block-aware for enforced releases)",
    "ci_low": "estimate - 1.96 std_error (95% interval)",
    "ci_high": "estimate + 1.96 std_error (95% interval)",
    "nonnegative_estimate": "non-negative estimate consistent with group_size: " + NONNEGATIVE_NOTE,
}
# The columns every estimates view gives after the sensitive column (and the by-column)
VIEW_OUTPUT = tuple(ESTIMATE_COMMENTS)
CELLS_OUTPUT = ("group_size", "released_count", "estimate", "nonnegative_estimate", "variance")


@dataclass(frozen=True)
class ReleaseMeta:
    """The published parameters of one released table."""
    table_name: str
    sensitive: str
    sensitive_type: str
    public: tuple[str, ...]
    p: float
    domain: tuple[str, ...]
    method: str = "uniform_perturbation"
    enforced: bool = False
    epsilon: float | None = None
    delta: float | None = None
    test: str | None = None
    rwn: dict = field(default_factory=dict)
    trials_sql: str | None = None     # enforced releases: relation "<table> AS __rwn_tr" of (size, t)
    suppressed_records: int = 0       # records of groups without a design left out (suppress_small)
    release_name: str | None = None   # prefix of the release's views; table_name is "<it>_randomized"
    rows_sql: str | None = None       # SQL naming the released table where it was read (read_metadata)
    l_diversity: int | None = None    # the attribute-disclosure rule the release passed (1: turned off)
    max_top_share: float | None = None    # its top-share limit (1: turned off; None: not checked)
    p_calibration: str | None = None      # the budget p was calibrated from (calibration.Calibration.describe)

    @property
    def name(self) -> str:
        return self.release_name or self.table_name

    @property
    def m(self) -> int:
        return len(self.domain)

    def domain_sql(self, dialect: Dialect = DUCKDB) -> str:
        return rp_sql.domain_literal(self.domain, self.sensitive_type, dialect)

    def p_sql(self) -> str:
        return float_literal(self.p)


def view_name(name: str, by: str | None = None) -> str:
    """`<name>_estimates` or `<name>_estimates_by_<column>` (non-word characters -> _)."""
    base = f"{name}_estimates" + (f"_by_{by}" if by else "")
    return re.sub(r"\W", "_", base)


def check_release_name(name: str) -> None:
    """The release's name (its tables' and views' prefix) is not one of the release's own tables."""
    if {randomized_table_name(name).lower(), name.lower()} & {METADATA_TABLE, TRIALS_TABLE}:
        raise RWNError(f"table name {name!r} (--table) is reserved for the release's metadata; choose another")


def randomized_table_name(name: str) -> str:
    return f"{name}_randomized"


def cells_view_name(name: str) -> str:
    return re.sub(r"\W", "_", f"{name}_cells")


def _rows_in_release(meta: ReleaseMeta) -> str:
    """The released table as the release's own views name it (bound in the release database)."""
    return f"{quote_ident(ROWS_SCHEMA)}.{quote_ident(meta.table_name)}"


def estimates_view_sql(meta: ReleaseMeta, by: str | None) -> str:
    """A view over the released table that reads p and the domain from the metadata table: per
    sensitive value (under its own name) and `by` value, the estimates and the non-negative
    estimate of each group (rp_sql.nonnegative_sql)."""
    groups = (by,) if by else ()
    inner = rp_sql.nonnegative_sql(rp_sql.estimates_sql(_rows_in_release(meta), meta.sensitive, *_published(meta),
                                                        groups, design=_design(meta)), groups)
    keys = "".join(f"{quote_ident(c)}, " for c in groups)
    return (f"SELECT {keys}value AS {quote_ident(meta.sensitive)}, {', '.join(VIEW_OUTPUT)}\n"
            f"FROM (\n{inner}\n) ORDER BY {keys}{quote_ident(meta.sensitive)}")


def cells_view_sql(meta: ReleaseMeta) -> str:
    """The fact view: estimates per personal group (every public column) and domain value,
    the sensitive value under its own name, variance = std_error^2, and the group's
    non-negative estimate."""
    inner = rp_sql.nonnegative_sql(rp_sql.estimates_sql(_rows_in_release(meta), meta.sensitive, *_published(meta),
                                                        meta.public, design=_design(meta)), meta.public)
    public = "".join(f"{quote_ident(c)}, " for c in meta.public)
    return (f"SELECT {public}value AS {quote_ident(meta.sensitive)}, group_size, released_count, estimate,\n"
            f"    nonnegative_estimate, std_error * std_error AS variance\nFROM (\n{inner}\n)\n"
            f"ORDER BY {public}{quote_ident(meta.sensitive)}")


def _published(meta: ReleaseMeta) -> tuple[str, str]:
    """SQL reading p and the domain from the metadata table, so the views use what is published."""
    md = (f"(SELECT {{}} FROM {METADATA_TABLE} WHERE table_name = {quote_literal(meta.table_name)})")
    return md.format("p"), f"CAST({md.format('domain')} AS {meta.sensitive_type}[])"


def _design(meta: ReleaseMeta):
    return (f"{TRIALS_TABLE} AS __rwn_tr", meta.public) if meta.enforced else None


class NotARelease(RWNError):
    """The name is no table of a release: no rwn_release_metadata there, or it lists no such
    table (estimates() then treats the name as an ordinary table)."""


class NoReleaseMetadata(NotARelease):
    """Not a release database at all: no rwn_release_metadata table where it was looked for
    (check_catalog). Its readers say so in their own words."""


# What a release database may hold, checked on the catalog before anything of it is read: a
# release file travels between people, so it is untrusted input (issue 22, F1). A view in
# place of a table, or a generated column, would run the file author's SQL in the reader's
# connection; a macro would shadow a function our SQL calls where the file is the default
# database. A release holds base tables and views only, so anything else is refused.
TRIALS_COLUMNS = (("size", "INTEGER"), ("t", "INTEGER"))
INTEGER_TYPES = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT"}
MAX_METADATA_ROWS = 100           # a release has one row per released table (one, as written)
MAX_DOMAIN_VALUES = 100_000       # published domain values read from a release
MAX_PUBLIC_COLUMNS = 1_000
FOREIGN_OBJECTS = (               # (what, catalog SQL listing its names in database ?)
    ("macro", "SELECT function_name FROM duckdb_functions() WHERE database_name = ? AND NOT internal"),
    ("sequence", "SELECT sequence_name FROM duckdb_sequences() WHERE database_name = ?"),
    ("type", "SELECT type_name FROM duckdb_types() WHERE database_name = ? AND NOT internal"),
    ("index", "SELECT index_name FROM duckdb_indexes() WHERE database_name = ?"),
)


def metadata_columns() -> tuple[tuple[str, str], ...]:
    """METADATA_COLUMNS as (name, DuckDB type) pairs."""
    return tuple(tuple(c.split()) for c in METADATA_COLUMNS.replace("\n", " ").split(","))


def _location(con, schema: str | None) -> tuple[str, str]:
    """(database, schema) where `[schema.]rwn_release_metadata` resolves: `schema` names an
    attached database (its default schema) or a schema of the current database."""
    db, current = con.execute("SELECT current_database(), current_schema()").fetchall()[0]
    if schema is None:
        return db, current
    attached = [r[0] for r in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()
                if r[0].lower() == schema.lower()]
    return (attached[0], "main") if attached else (db, schema)


def catalog_object(con, where: tuple[str, str], name: str) -> tuple[str, str] | None:
    """(kind, spelling) of the table or view `name` in `where`, None when there is none."""
    rows = con.execute("SELECT 'table', table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = ? "
                       "AND lower(table_name) = lower(?) UNION ALL SELECT 'view', view_name FROM duckdb_views() "
                       "WHERE database_name = ? AND schema_name = ? AND lower(view_name) = lower(?)",
                       [*where, name, *where, name]).fetchall()
    return rows[0] if rows else None


def _columns(con, where: tuple[str, str], table: str) -> list[tuple[str, str, str | None]]:
    return con.execute("SELECT column_name, data_type, column_default FROM duckdb_columns() WHERE database_name = ? "
                       "AND schema_name = ? AND table_name = ? ORDER BY column_index", [*where, table]).fetchall()


def _base_table(con, where, name: str, expected=None, what: str = "table", older: int = 0) -> list[tuple[str, str]]:
    """The (column, type) list of the base table `name`, refused with a message naming it when
    it is a view, is missing, carries a computed column, or (with `expected`, (column, type)
    pairs in order, of which the last `older` may be missing) has other columns or types."""
    found = catalog_object(con, where, name)
    if found is None:
        raise RWNError(f"the release has no {what} {name!r}")
    if found[0] != "table":
        raise RWNError(f"the release's {what} {name!r} is a view, not a table: a release file holds it as a "
                       f"base table, so this file was altered (refused)")
    columns = _columns(con, where, found[1])
    computed = [c for c, _, default in columns if default is not None]
    if computed:
        raise RWNError(f"the release's {what} {name!r} has a computed or default column {computed[0]!r}: a "
                       f"release's tables hold stored values only (refused)")
    got = [(c, t) for c, t, _ in columns]
    if expected is not None and [(c.lower(), t) for c, t in got] in [
            [(c.lower(), t) for c, t in expected[:len(expected) - k]] for k in range(older + 1)]:
        expected = None
    if expected is not None:
        missing = [c for c, _ in expected if c.lower() not in {g.lower() for g, _ in got}]
        extra = [c for c, _ in got if c.lower() not in {e.lower() for e, _ in expected}]
        retyped = [f"{c} {t} (expected {dict(expected)[c]})" for c, t in got
                   if c in dict(expected) and dict(expected)[c] != t]
        problem = "; ".join(filter(None, [missing and f"missing {', '.join(missing)}",
                                          extra and f"extra {', '.join(extra)}",
                                          retyped and f"retyped {', '.join(retyped)}"])) or "columns out of order"
        raise RWNError(f"the release's {what} {name!r} does not have the expected columns ({problem}): refused")
    return got


def check_catalog(con, schema: str | None = None) -> tuple[str, str]:
    """Refuse a release whose catalog holds anything a release does not: macros, sequences,
    types or indexes anywhere in its database, or rwn_release_metadata (and rwn_release_trials,
    when present) other than base tables of the written columns. Reads the catalog only.
    Returns (database, schema) of the release."""
    where = _location(con, schema)
    if catalog_object(con, where, METADATA_TABLE) is None:
        raise NoReleaseMetadata(f"not a release database: it has no {METADATA_TABLE} table")
    for what, sql in FOREIGN_OBJECTS:
        names = [r[0] for r in con.execute(sql, [where[0]]).fetchall()]
        if names:
            raise RWNError(f"the release database holds the {what} {names[0]!r}; a release file holds tables "
                           f"and views only, so this file was altered (refused)")
    _base_table(con, where, METADATA_TABLE, metadata_columns(), "metadata table", older=OLDER_METADATA_COLUMNS)
    if catalog_object(con, where, TRIALS_TABLE) is not None:
        trials = _base_table(con, where, TRIALS_TABLE, what="trials table")
        if [c.lower() for c, _ in trials] != [c for c, _ in TRIALS_COLUMNS] or \
                any(t not in INTEGER_TYPES for _, t in trials):
            raise RWNError(f"the release's trials table {TRIALS_TABLE!r} has columns "
                           f"{', '.join(f'{c} {t}' for c, t in trials)}, not size and t of integer types: refused")
    return where


def _text(value, what: str) -> str:
    if not isinstance(value, str) or value == "" or "\x00" in value:
        raise RWNError(f"the release's metadata gives {what} {value!r}, not a non-empty name without NUL characters")
    return value


def rows_location(con, where: tuple[str, str]) -> tuple[str, str]:
    """(database, schema) of the released table of the release whose metadata are in `where`:
    ROWS_SCHEMA of its database, or (a release written before that layout, without the
    schema) beside the metadata."""
    found = con.execute("SELECT count(*) FROM duckdb_schemas() WHERE database_name = ? AND schema_name = ?",
                        [where[0], ROWS_SCHEMA]).fetchall()[0][0]
    return (where[0], ROWS_SCHEMA) if found else where


def check_released_table(con, where: tuple[str, str], meta: "ReleaseMeta") -> None:
    """The released table is a base table holding exactly the public columns and the
    sensitive one (of the published type), as the metadata says, in rows_location."""
    got = _base_table(con, rows_location(con, where), meta.table_name, what="released table")
    names = [c for c, _ in got]
    expected = set(meta.public) | {meta.sensitive}
    if len(names) != len(set(names)) or set(names) != expected:
        missing, extra = sorted(expected - set(names)), sorted(set(names) - expected)
        problem = "; ".join(filter(None, [missing and "missing " + ", ".join(missing),
                                          extra and "extra " + ", ".join(extra)])) or "a repeated column"
        raise RWNError(f"the release's released table {meta.table_name!r} has columns {', '.join(names)}, not the "
                       f"published ones ({problem}): refused")
    if meta.enforced and catalog_object(con, where, TRIALS_TABLE) is None:
        raise RWNError(f"the release is enforced but has no {TRIALS_TABLE} table: refused")
    kind = dict(got)[meta.sensitive]
    if not same_type_name(kind, meta.sensitive_type):
        raise RWNError(f"the release's released table {meta.table_name!r} has {meta.sensitive!r} of type {kind}, "
                       f"not the published {meta.sensitive_type}: refused")


def metadata_size_sql(source: str, columns) -> str:
    """SQL giving, over at most MAX_METADATA_ROWS + 1 rows of `source`: the row count, then for
    each (name, type) of `columns` that is text or a text list, its longest value's bytes and
    its total bytes, then the longest length of each list column."""
    parts, lists = [], []
    for name, kind in columns:
        q = quote_ident(name)
        if kind == "VARCHAR":
            parts += [f"max(strlen({q}))", f"sum(strlen({q}))"]
        elif kind == "VARCHAR[]":
            lengths = f"list_transform({q}, lambda v: strlen(v))"
            parts += [f"max(list_max({lengths}))", f"sum(list_sum({lengths}))"]
            lists.append(f"max(len({q}))")
    return (f"SELECT count(*), {', '.join(parts + lists)} FROM (SELECT * FROM {source} "
            f"LIMIT {MAX_METADATA_ROWS + 1})")


def stored_text_size_sql(table: str) -> str:
    """SQL giving, for each text column of the DuckDB table `table` (text list columns by their
    values), its longest value's bytes and its total bytes, from the segment statistics DuckDB
    keeps in the file: no value is read or decompressed."""
    return (f"SELECT column_name, max(stats.max_string_length::BIGINT), sum(stats.total_string_length::BIGINT) "
            f"FROM pragma_storage_info({quote_literal(table)}) WHERE segment_type = 'VARCHAR' "
            f"GROUP BY column_name ORDER BY column_name")


def _refuse_text_bytes(what: str, name: str, longest, total) -> None:
    if (longest or 0) > MAX_TEXT_BYTES:
        raise RWNError(f"the release's {what} holds a value of {longest:,} bytes in {name!r} (at most "
                       f"{MAX_TEXT_BYTES:,} bytes per name or domain value are read): refused")
    if (total or 0) > MAX_METADATA_BYTES:
        raise RWNError(f"the release's {what} holds {total:,} bytes of text (at most {MAX_METADATA_BYTES:,} are "
                       f"read): refused")


def check_stored_text_size(con, table: str, what: str) -> None:
    """check_metadata_size's byte limits on the statistics of a DuckDB table's stored segments,
    before any scan: a scan decompresses the values and takes up to the memory limit and a little
    more (30 MiB of compressed metadata text: 66 MiB over the scan's start under a 64 MiB limit),
    reading the statistics takes a few MiB. A crafted file's statistics can lie, so the limited scan of
    check_metadata_size follows as the net (and alone measures anything but a base table, which
    has no statistics; check_catalog refuses those first)."""
    try:
        rows = con.execute(stored_text_size_sql(table)).fetchall()
    except engine.CatalogException:
        return
    for name, longest, _ in rows:
        _refuse_text_bytes(what, name, longest, 0)
    _refuse_text_bytes(what, "", 0, sum(total or 0 for _, _, total in rows))


def check_metadata_size(con, source: str, columns, what: str) -> None:
    """Refuse metadata whose text exceeds MAX_TEXT_BYTES per value or MAX_METADATA_BYTES in
    all, or with more than MAX_METADATA_ROWS rows, MAX_DOMAIN_VALUES domain values or
    MAX_PUBLIC_COLUMNS public (or RWN) columns, computed by SQL before any value is fetched;
    SQL that does not fit the connection's memory limit is refused naming the limit."""
    columns = [(n, k) for n, k in columns if k in ("VARCHAR", "VARCHAR[]")]
    try:
        row = con.execute(metadata_size_sql(source, columns)).fetchall()[0]
    except engine.OutOfMemoryException:
        limit = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
        raise RWNError(f"the release's {what} does not fit the memory limit of {limit} for reading a release's "
                       f"metadata (limits: {METADATA_LIMITS}): refused") from None
    if row[0] > MAX_METADATA_ROWS:
        raise RWNError(f"the release's {what} has more than {MAX_METADATA_ROWS} rows (one per released table): "
                       f"refused")
    sizes = row[1:1 + 2 * len(columns)]
    for (name, _), longest in zip(columns, sizes[0::2]):
        _refuse_text_bytes(what, name, longest, 0)
    _refuse_text_bytes(what, "", 0, sum(t or 0 for t in sizes[1::2]))
    lengths = dict(zip([n for n, k in columns if k == "VARCHAR[]"], row[1 + 2 * len(columns):]))
    if (lengths.get("domain") or 0) > MAX_DOMAIN_VALUES or \
            max(lengths.get("public") or 0, lengths.get("rwn_columns") or 0) > MAX_PUBLIC_COLUMNS:
        raise RWNError(f"the release's {what} lists {lengths.get('domain')} domain values and "
                       f"{lengths.get('public')} public columns (at most {MAX_DOMAIN_VALUES:,} and "
                       f"{MAX_PUBLIC_COLUMNS:,} are read): refused")


def check_trials_size(con, source: str) -> None:
    """Refuse a trials table of more than MAX_TRIALS_ROWS rows (its integers compress to nothing,
    and readers fetch all of them)."""
    n = con.execute(f"SELECT count(*) FROM (SELECT 1 FROM {source} LIMIT {MAX_TRIALS_ROWS + 1})").fetchall()[0][0]
    if n > MAX_TRIALS_ROWS:
        raise RWNError(f"the release's trials table {TRIALS_TABLE!r} has more than {MAX_TRIALS_ROWS:,} rows (one "
                       f"per personal-group size): refused")


def read_metadata(con: engine.Connection, table: str | None = None, schema: str | None = None) -> ReleaseMeta:
    """The metadata of `table` (or of the only released table) in a release database, after
    check_catalog and before check_released_table: nothing but base tables of the expected
    columns is read, and the values are checked before any reaches SQL."""
    where = check_catalog(con, schema)
    prefix = f"{quote_ident(schema)}." if schema else ""
    md = f"{prefix}{METADATA_TABLE}"
    check_stored_text_size(con, md, f"metadata table {METADATA_TABLE!r}")
    check_metadata_size(con, md, metadata_columns(), f"metadata table {METADATA_TABLE!r}")
    if catalog_object(con, where, TRIALS_TABLE) is not None:
        check_trials_size(con, f"{prefix}{TRIALS_TABLE}")
    rows = con.execute(f"SELECT table_name, sensitive, sensitive_type, public, p, domain, method, enforced, "
                       f"epsilon, delta, test, release_name FROM {md}").fetchall()
    if table is not None:
        rows = [r for r in rows if isinstance(r[0], str)
                and table.lower() in (r[0].lower(), r[11].lower() if isinstance(r[11], str) else "")]
        if not rows:
            raise NotARelease(f"the release has no table {table!r}")
    if not rows:
        raise RWNError(f"the release database lists no table in {METADATA_TABLE}")
    if len(rows) > 1:
        raise RWNError(f"the release holds several tables ({', '.join(map(str, (r[0] for r in rows)))}); name one")
    meta = metadata_values(rows[0], prefix)
    check_released_table(con, where, meta)
    located = rows_location(con, where)
    return replace(meta, rows_sql=(prefix if located == where else f"{prefix}{quote_ident(ROWS_SCHEMA)}.")
                   + quote_ident(meta.table_name))


def metadata_values(r, prefix: str = "") -> ReleaseMeta:
    """A metadata row (table_name, sensitive, sensitive_type, public, p, domain, method,
    enforced, epsilon, delta, test, release_name) checked value by value: names without NUL,
    p in (0, 1), a domain of distinct non-NULL strings, the enforcement's parameters."""
    table_name, sensitive = _text(r[0], "the table name"), _text(r[1], "the sensitive attribute")
    if not isinstance(r[2], str) or not TYPE_NAME.fullmatch(r[2]):   # it is printed into SQL as a type
        raise RWNError(f"the release's metadata gives the sensitive type {r[2]!r}, not a DuckDB type name")
    public = tuple(_text(c, "a public column") for c in (r[3] or ()))
    if len(set(public)) != len(public) or sensitive in public:
        raise RWNError(f"the release's metadata lists public columns {list(public)} with a repeat or the "
                       f"sensitive attribute: refused")
    p = r[4]
    try:
        privacy.check_p(p)
    except RWNError:
        raise RWNError(f"the release's metadata gives p = {p!r}, not a retention probability in (0, 1): refused") from None
    domain = r[5]
    if not domain or any(not isinstance(v, str) or "\x00" in v for v in domain) or len(set(domain)) != len(domain):
        bad = "empty" if not domain else "with NULL, NUL characters or repeats"
        raise RWNError(f"the release's metadata gives a domain {bad}: the published domain is distinct "
                       f"non-NULL values (refused)")
    enforced = r[7]
    if not isinstance(enforced, bool):
        raise RWNError(f"the release's metadata gives enforced = {enforced!r}, not true or false: refused")
    if enforced and not (isinstance(r[8], float) and 0 < r[8] < math.inf and isinstance(r[9], float)
                         and 0 < r[9] < 1 and r[10] in ("exact", "chernoff")):
        raise RWNError(f"the release's metadata gives an enforcement of epsilon = {r[8]!r}, delta = {r[9]!r}, "
                       f"test = {r[10]!r}: refused")
    release_name = _text(r[11], "the release name") if r[11] is not None else None
    return ReleaseMeta(table_name=table_name, sensitive=sensitive, sensitive_type=r[2], public=public, p=p,
                       domain=tuple(domain), method=r[6], enforced=enforced, epsilon=r[8], delta=r[9], test=r[10],
                       release_name=release_name,
                       trials_sql=f"{prefix}{TRIALS_TABLE} AS __rwn_tr" if enforced else None)


def write_release(con: engine.Connection, release_sql: str, path: str, meta: ReleaseMeta,
                  overwrite: bool = False, trials: dict[int, int] | None = None) -> int:
    """Write a standalone release database at `path`, atomically: built under a temporary
    name beside it and renamed when complete. Returns the number of released rows."""
    if sources.attached_database(con, path) is not None:
        raise RWNError(f"release database {path!r} is a database the input is read from; rwn_sql never "
                       f"overwrites its input (write a new release file)")
    check_release_name(meta.name)
    taken = [c for c in (*meta.public, meta.sensitive) if c.lower() in set(VIEW_OUTPUT) | set(CELLS_OUTPUT)]
    if taken:
        raise RWNError(f"column {taken[0]!r} has the name of a column of the release's estimate views; rename it "
                       f"in the input")
    if os.path.exists(path) and not overwrite:
        raise OutputExists(f"release database {path!r} already exists (use --overwrite to replace it)")
    with files.scratch_dir(files.output_folder(path)) as scratch:
        return _write_release(con, release_sql, path, meta, overwrite, trials,
                              os.path.join(scratch, f"release-{secrets.token_hex(4)}.duckdb"))


def _write_release(con, release_sql, path, meta, overwrite, trials, tmp) -> int:
    alias = "__rwn_release_" + secrets.token_hex(4)
    con.execute(f"ATTACH {quote_literal(tmp)} AS {quote_ident(alias)}").fetchall()
    try:
        con.execute(f"CREATE SCHEMA {quote_ident(alias)}.{quote_ident(ROWS_SCHEMA)}").fetchall()
        target = f"{quote_ident(alias)}.{_rows_in_release(meta)}"
        rows = engine.run(con, f"CREATE TABLE {target} AS\n{release_sql}")[0][0]
        con.execute(f"CREATE TABLE {quote_ident(alias)}.{METADATA_TABLE} ({METADATA_COLUMNS})").fetchall()
        rwn = meta.rwn or {}
        con.execute(f"INSERT INTO {quote_ident(alias)}.{METADATA_TABLE} VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [meta.table_name, meta.method, meta.sensitive, meta.sensitive_type, list(meta.public),
                     meta.p, list(meta.domain), meta.m, meta.enforced, meta.epsilon, meta.delta, meta.test,
                     rwn.get("columns"), rwn.get("k"), rwn.get("eps"), rwn.get("q"), rwn.get("scale"),
                     rows, _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None), __version__,
                     meta.suppressed_records, meta.name, meta.l_diversity, meta.max_top_share,
                     meta.p_calibration]).fetchall()
        if meta.enforced:
            con.execute(f"CREATE TABLE {quote_ident(alias)}.{TRIALS_TABLE} AS SELECT * FROM "
                        f"{rp_sql.trials_values(trials or {})}").fetchall()
        distinct = (con.execute("SELECT " + ", ".join(f"count(DISTINCT {quote_ident(c)})" for c in meta.public)
                                + f" FROM {target}").fetchall()[0] if meta.public else ())
        one_way = [c for c, values in zip(meta.public, distinct) if values <= ONE_WAY_MAX]
        previous = con.execute("SELECT current_database(), current_schema()").fetchall()[0]
        con.execute(f"USE {quote_ident(alias)}").fetchall()
        try:   # views are bound in the release database itself, so they name its tables only
            for by in (None, *one_way):
                con.execute(f"CREATE VIEW {quote_ident(view_name(meta.name, by))} AS\n"
                            f"{estimates_view_sql(meta, by)}").fetchall()
            con.execute(f"CREATE VIEW {quote_ident(cells_view_name(meta.name))} AS\n{cells_view_sql(meta)}").fetchall()
            for statement in comment_statements(meta, one_way, rwn):
                con.execute(statement).fetchall()
        finally:
            con.execute(f"USE {quote_ident(previous[0])}.{quote_ident(previous[1])}").fetchall()
        con.execute(f"DETACH {quote_ident(alias)}").fetchall()
        files.publish(tmp, path, overwrite)
        return rows
    except BaseException:
        try:
            con.execute(f"DETACH {quote_ident(alias)}").fetchall()
        except engine.Error:
            pass
        raise
    finally:
        for leftover in (tmp, tmp + ".wal"):
            if os.path.exists(leftover):
                os.remove(leftover)


def comment_statements(meta: ReleaseMeta, one_way, rwn: dict) -> list[str]:
    """COMMENT ON every table, view and column of a release: what it is, how to aggregate it."""
    name = meta.name
    cells = cells_view_name(name)
    enforced = (f" Enforced ({meta.epsilon}, {meta.delta})-reconstruction privacy ({meta.test} test): records of a "
                f"personal group move in blocks (see {TRIALS_TABLE})." if meta.enforced else "")
    perturbed = set((rwn or {}).get("columns") or ())
    out = []

    def comment(kind, obj, text, column=None):
        target = (obj if obj == rows else quote_ident(obj)) + (f".{quote_ident(column)}" if column else "")
        out.append(f"COMMENT ON {'COLUMN' if column else kind} {target} IS {quote_literal(text)}")

    rows = _rows_in_release(meta)
    comment("TABLE", rows,
            f"Randomized rows, NOT counts: {meta.sensitive} was kept with probability p = {meta.p}, else replaced by "
            f"a uniform draw from its {meta.m} published values.{enforced} Counts of this table by {meta.sensitive} "
            f"are BIASED: use {cells}.estimate (SUM it over any slice of public columns) or the "
            f"{name}_estimates views in the main schema. Rows are in a random order.")
    for c in meta.public:
        comment("TABLE", rows, "public column: released " + (
            "after RWN perturbation (values swapped within neighbourhoods)" if c in perturbed else "unchanged")
            + "; it defines the personal groups", c)
    comment("TABLE", rows, f"randomized sensitive column: each value kept with probability {meta.p}, "
            f"else a uniform draw from the domain. Do not count it directly: use {cells}.estimate", meta.sensitive)
    comment("TABLE", METADATA_TABLE, "Published parameters of each released table (never the key or raw data): "
            "everything needed to re-derive every estimate")
    for column, text in METADATA_COMMENTS.items():
        comment("TABLE", METADATA_TABLE, text, column)
    if meta.enforced:
        comment("TABLE", TRIALS_TABLE, "Enforced release: the number of blocks t of a personal group of each "
                "size (public: it follows from the group sizes and the published parameters); the standard "
                "errors use it")
        comment("TABLE", TRIALS_TABLE, "personal-group size (records)", "size")
        comment("TABLE", TRIALS_TABLE, "blocks the group was split into; each block shared one coin and one "
                "replacement value", "t")
    comment("VIEW", cells,
            f"Fact view for BI tools: one row per personal group (every public column) and {meta.sensitive} value. "
            f"SUM(estimate) over any slice of public columns is the unbiased estimate of that slice's count; "
            f"SUM(variance) is its variance (groups are independent) when the slice holds one {meta.sensitive} "
            f"value, and conservative (too large) when it sums several values, whose estimates are negatively "
            f"correlated. nonnegative_estimate: never negative, sums to group_size, biased (see its comment). "
            f"Never COUNT(*) this view or the randomized table ({ROWS_SCHEMA}.{meta.table_name}).")
    for c in meta.public:
        comment("VIEW", cells, "public column (a personal group is one combination of them)", c)
    comment("VIEW", cells, f"{meta.sensitive} value (every published value appears in every group)", meta.sensitive)
    comment("VIEW", cells, "released records in the personal group (exact; the same on every row of the group)",
            "group_size")
    comment("VIEW", cells, ESTIMATE_COMMENTS["released_count"], "released_count")
    comment("VIEW", cells, "unbiased estimate of the group's records holding this value: SUM it over any slice "
            "(it can be negative or exceed group_size; sums over large slices are accurate)", "estimate")
    comment("VIEW", cells, "the group's non-negative estimate consistent with group_size: " + NONNEGATIVE_NOTE,
            "nonnegative_estimate")
    comment("VIEW", cells, "variance of estimate" + (" (block-aware)" if meta.enforced else "")
            + ": SUM it over a slice of one value for the slice's variance (conservative across several values)",
            "variance")
    for by in (None, *one_way):
        view = view_name(name, by)
        comment("VIEW", view, f"Unbiased reconstruction of the counts of {meta.sensitive} values"
                + (f" per {by}" if by else "") + f", with standard errors and 95% intervals (p = {meta.p}, "
                f"domain and test as published in {METADATA_TABLE})")
        if by:
            comment("VIEW", view, "public column", by)
        comment("VIEW", view, f"{meta.sensitive} value (every published value appears" + (f" for every {by}" if by else "")
                + ")", meta.sensitive)
        for column, text in ESTIMATE_COMMENTS.items():
            comment("VIEW", view, text, column)
    return out


# --- Release folders (engines without DuckDB files, e.g. Spark) ---------------------------
# A folder holding <table>.parquet (the released microdata, a directory of parts on Spark),
# rwn_release_metadata.parquet (one row, the columns of METADATA_COLUMNS) and, for an
# enforced release, rwn_release_trials.parquet. The metadata are written with pyarrow, so
# any engine (and DuckDB: read_parquet) reads them.

def _metadata_schema():
    import pyarrow as pa
    text, real, whole = pa.string(), pa.float64(), pa.int64()
    return pa.schema([("table_name", text), ("method", text), ("sensitive", text), ("sensitive_type", text),
                      ("public", pa.list_(text)), ("p", real), ("domain", pa.list_(text)), ("m", whole),
                      ("enforced", pa.bool_()), ("epsilon", real), ("delta", real), ("test", text),
                      ("rwn_columns", pa.list_(text)), ("rwn_k", whole), ("rwn_eps", real), ("rwn_q", real),
                      ("rwn_scale", text), ("rows", whole), ("created_at", pa.timestamp("us")),
                      ("rwn_sql_version", text), ("suppressed_records", whole), ("release_name", text),
                      ("l_diversity", whole), ("max_top_share", real), ("p_calibration", text)])


def write_release_folder(be, release_sql: str, path: str, meta: ReleaseMeta, overwrite: bool = False,
                         trials: dict[int, int] | None = None) -> int:
    """Write a release folder at `path` atomically (built in the run's private folder beside
    it, then renamed). Returns the number of released rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    if os.path.exists(path) and not overwrite:
        raise OutputExists(f"release folder {path!r} already exists (use --overwrite to replace it)")
    if os.path.splitext(path)[1].lower() in sources.DB_SUFFIXES:
        raise RWNError(f"on {be.name} a release is a folder of Parquet files, not a DuckDB database: "
                       f"give a folder path, not {path!r}")
    with files.scratch_dir(files.output_folder(path)) as scratch:
        tmp = os.path.join(scratch, "release")
        os.mkdir(tmp)
        rows = be.write(release_sql, os.path.join(tmp, f"{meta.table_name}.parquet"))
        rwn = meta.rwn or {}
        record = dict(table_name=meta.table_name, method=meta.method, sensitive=meta.sensitive,
                      sensitive_type=meta.sensitive_type, public=list(meta.public), p=meta.p,
                      domain=list(meta.domain), m=meta.m, enforced=meta.enforced, epsilon=meta.epsilon,
                      delta=meta.delta, test=meta.test, rwn_columns=rwn.get("columns"), rwn_k=rwn.get("k"),
                      rwn_eps=rwn.get("eps"), rwn_q=rwn.get("q"), rwn_scale=rwn.get("scale"), rows=rows,
                      created_at=_dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None),
                      rwn_sql_version=__version__, suppressed_records=meta.suppressed_records,
                      release_name=meta.name, l_diversity=meta.l_diversity, max_top_share=meta.max_top_share,
                      p_calibration=meta.p_calibration)
        pq.write_table(pa.Table.from_pylist([record], schema=_metadata_schema()),
                       os.path.join(tmp, f"{METADATA_TABLE}.parquet"))
        if meta.enforced:
            sizes = sorted((trials or {}).items())
            pq.write_table(pa.table({"size": pa.array([n for n, _ in sizes], pa.int64()),
                                     "t": pa.array([t for _, t in sizes], pa.int64())}),
                           os.path.join(tmp, f"{TRIALS_TABLE}.parquet"))
        files.publish_folder(tmp, path, scratch)
    return rows


FOLDER_FIELDS = ("table_name", "sensitive", "sensitive_type", "public", "p", "domain", "method", "enforced",
                 "epsilon", "delta", "test", "release_name")


def check_folder_metadata_size(meta_path: str) -> None:
    """check_metadata_size on a release folder's metadata Parquet file, on a connection that may
    read only that file, limited to METADATA_MEMORY_LIMIT, before pyarrow reads a value of it
    (a dictionary-encoded Parquet file compresses repeated text as DuckDB does)."""
    con = engine.connect(config={"memory_limit": METADATA_MEMORY_LIMIT, "threads": "1",
                                 "autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        con.execute(f"SET allowed_paths = [{quote_literal(meta_path)}]").fetchall()
        con.execute("SET enable_external_access = false").fetchall()
        con.execute("SET lock_configuration = true").fetchall()
        source = f"read_parquet({quote_literal(meta_path)})"
        columns = [(r[0], r[1]) for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()]
        # Only text and text lists are measured below, so no other column may hold bytes.
        unmeasured = [f"{n} {k}" for n, k in columns if k != "VARCHAR[]" and
                      (k == "BLOB" or any(c in k for c in "[(") or k.split()[0] in ("STRUCT", "MAP", "UNION"))]
        if unmeasured:
            raise RWNError(f"the release's {METADATA_TABLE}.parquet has the column {unmeasured[0]}, not a "
                           f"metadata column's type: refused")
        check_metadata_size(con, source, columns, f"{METADATA_TABLE}.parquet")
    except engine.Error as exc:
        raise RWNError(f"cannot read {meta_path!r}: {exc}") from None
    finally:
        con.close()


def read_release_folder(path: str, table: str | None = None) -> tuple[ReleaseMeta, str, str | None]:
    """The metadata of a release folder, and the paths of its table and trials (or None). The
    folder is untrusted input as a release file is: at most MAX_METADATA_ROWS rows, values
    checked as read_metadata checks them, and a table name that is a plain file name (it
    becomes a path inside the folder)."""
    import pyarrow.parquet as pq
    meta_path = os.path.join(path, f"{METADATA_TABLE}.parquet")
    if not os.path.isfile(meta_path):
        raise RWNError(f"{path!r} is not a release folder: it has no {METADATA_TABLE}.parquet")
    check_folder_metadata_size(os.path.realpath(meta_path))
    try:
        parquet = pq.ParquetFile(meta_path)
        if parquet.metadata.num_rows > MAX_METADATA_ROWS:
            raise RWNError(f"the release's {METADATA_TABLE}.parquet has more than {MAX_METADATA_ROWS} rows: refused")
        rows = parquet.read().to_pylist()
    except (OSError, ValueError) as exc:
        if isinstance(exc, RWNError):
            raise
        raise RWNError(f"cannot read {meta_path!r}: {exc}") from None
    if table is not None:
        rows = [r for r in rows if isinstance(r.get("table_name"), str) and table.lower() in
                (r["table_name"].lower(), r["release_name"].lower() if isinstance(r.get("release_name"), str) else "")]
        if not rows:
            raise RWNError(f"the release has no table {table!r}")
    if len(rows) != 1:
        raise RWNError(f"the release folder lists {len(rows)} tables in {METADATA_TABLE}; expected one")
    r = rows[0]
    if len(r.get("domain") or ()) > MAX_DOMAIN_VALUES or len(r.get("public") or ()) > MAX_PUBLIC_COLUMNS:
        raise RWNError(f"the release's metadata lists more than {MAX_DOMAIN_VALUES:,} domain values or "
                       f"{MAX_PUBLIC_COLUMNS:,} public columns: refused")
    meta = metadata_values(tuple(r.get(k) for k in FOLDER_FIELDS))
    name = meta.table_name
    if name in (".", "..") or name.startswith(".") or any(c in name for c in "/\\:"):
        raise RWNError(f"the release's metadata gives the table name {name!r}, not a plain file name: refused")
    meta = replace(meta, trials_sql=None, suppressed_records=r.get("suppressed_records") or 0)
    trials = os.path.join(path, f"{TRIALS_TABLE}.parquet") if meta.enforced else None
    return meta, os.path.join(path, f"{meta.table_name}.parquet"), trials
