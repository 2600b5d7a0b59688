"""Standalone release databases for analysts and BI tools.

A release database is a DuckDB file holding only:
  * the released microdata `<name>_randomized` (its name says it is not the original: counts
    of it are biased);
  * `rwn_release_metadata`: one row per released table with the published parameters
    (method, p, the domain, eps, delta, test, RWN parameters) and never the key or raw data;
  * for an enforced release, `rwn_release_trials(size, t)`: the number of blocks of a personal
    group of each size (public: it follows from the group sizes and the parameters);
  * `<name>_cells`, the fact view for BI tools: one row per personal group and sensitive
    value with the unbiased `estimate` and its `variance`; the estimator is linear, so
    SUM(estimate) over any slice of public columns is that slice's estimate;
  * ready-made reconstruction views `<name>_estimates` (per sensitive value) and
    `<name>_estimates_by_<column>` (per public column with at most ONE_WAY_MAX distinct
    values, and sensitive value);
  * a COMMENT on every table, view and column saying what it is and how to aggregate it.
All plain SQL that a DuckDB without rwn_sql can run.
"""
from __future__ import annotations

import datetime as _dt
import os
import re
import secrets
from dataclasses import dataclass, field

import duckdb

from . import __version__, engine, rp_sql
from .dialect import DUCKDB, Dialect
from .errors import RWNError
from .identifiers import float_literal, quote_ident, quote_literal

# The analysts' queries rwn_sql.query / rwn-sql query / rwn_query answer (rwn_sql.analyst)
QUERY_GRAMMAR = ("supported: SELECT [g1, g2, ...,] A FROM <release table> [WHERE <predicate>] [GROUP BY g1, g2, ...] "
                 "[HAVING A > n ...] [ORDER BY g | A [DESC], ...] [LIMIT n], where the aggregate A is COUNT(*), "
                 "SUM(x) or AVG(x) of a public numeric column x (over the records where x is not NULL), the g are "
                 "public columns or the sensitive attribute <SA>, and <predicate> combines with AND / OR / NOT "
                 "comparisons (=, <>, <, <=, >, >=), IN lists, BETWEEN, [NOT] LIKE / ILIKE 'pattern' and "
                 "IS [NOT] NULL over public columns and literals, plus at most one top-level AND condition "
                 "<SA> = 'value' or <SA> IN ('v1', 'v2', ...)")
METADATA_TABLE = "rwn_release_metadata"
TRIALS_TABLE = "rwn_release_trials"       # enforced releases: blocks per personal-group size (public)
ONE_WAY_MAX = 100                         # one-way views only for public columns with this many values at most
TYPE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_ ]*(\(\d+(,\s*\d+)?\))?|ENUM\('(''|[^'])*'(, '(''|[^'])*')*\)")
METADATA_COLUMNS = """
    table_name VARCHAR, method VARCHAR, sensitive VARCHAR, sensitive_type VARCHAR, public VARCHAR[],
    p DOUBLE, domain VARCHAR[], m INTEGER, enforced BOOLEAN, epsilon DOUBLE, delta DOUBLE, test VARCHAR,
    rwn_columns VARCHAR[], rwn_k INTEGER, rwn_eps DOUBLE, rwn_q DOUBLE, rwn_scale VARCHAR,
    rows BIGINT, created_at TIMESTAMP, rwn_sql_version VARCHAR, suppressed_records BIGINT, release_name VARCHAR"""
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
}
ESTIMATE_COMMENTS = {
    "value": "sensitive value",
    "released_count": "released records with this value: BIASED by the randomization, never report it as a count",
    "group_size": "released records in the group (exact)",
    "estimate": "unbiased estimate of the number of records holding the value",
    "std_error": "standard error of estimate (block-aware for enforced releases)",
    "ci_low": "estimate - 1.96 std_error (95% interval)",
    "ci_high": "estimate + 1.96 std_error (95% interval)",
    "estimate_clipped": "estimate clipped to [0, group_size] (biased; for display only)",
}


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


def randomized_table_name(name: str) -> str:
    return f"{name}_randomized"


def cells_view_name(name: str) -> str:
    return re.sub(r"\W", "_", f"{name}_cells")


def estimates_view_sql(meta: ReleaseMeta, by: str | None) -> str:
    """A view over the released table that reads p and the domain from the metadata table."""
    return rp_sql.estimates_sql(quote_ident(meta.table_name), meta.sensitive, *_published(meta),
                                (by,) if by else (), design=_design(meta))


def cells_view_sql(meta: ReleaseMeta) -> str:
    """The fact view: estimates per personal group (every public column) and domain value,
    the sensitive value under its own name, and variance = std_error^2."""
    inner = rp_sql.estimates_sql(quote_ident(meta.table_name), meta.sensitive, *_published(meta),
                                 meta.public, design=_design(meta))
    public = "".join(f"{quote_ident(c)}, " for c in meta.public)
    return (f"SELECT {public}value AS {quote_ident(meta.sensitive)}, group_size, released_count, estimate,\n"
            f"    std_error * std_error AS variance\nFROM (\n{inner}\n)")


def _published(meta: ReleaseMeta) -> tuple[str, str]:
    """SQL reading p and the domain from the metadata table, so the views use what is published."""
    md = (f"(SELECT {{}} FROM {METADATA_TABLE} WHERE table_name = {quote_literal(meta.table_name)})")
    return md.format("p"), f"CAST({md.format('domain')} AS {meta.sensitive_type}[])"


def _design(meta: ReleaseMeta):
    return (f"{TRIALS_TABLE} AS __rwn_tr", meta.public) if meta.enforced else None


def read_metadata(con: duckdb.DuckDBPyConnection, table: str | None = None, schema: str | None = None) -> ReleaseMeta:
    """The metadata of `table` (or of the only released table) in a release database."""
    prefix = f"{quote_ident(schema)}." if schema else ""
    try:
        rows = con.execute(f"SELECT table_name, sensitive, sensitive_type, public, p, domain, method, enforced, "
                           f"epsilon, delta, test, release_name FROM {prefix}{METADATA_TABLE}").fetchall()
    except duckdb.Error:
        raise RWNError(f"not a release database: it has no {METADATA_TABLE} table") from None
    if table is not None:
        rows = [r for r in rows if table.lower() in (r[0].lower(), (r[11] or "").lower())]
        if not rows:
            raise RWNError(f"the release has no table {table!r}")
    if not rows:
        raise RWNError(f"the release database lists no table in {METADATA_TABLE}")
    if len(rows) > 1:
        raise RWNError(f"the release holds several tables ({', '.join(r[0] for r in rows)}); name one")
    r = rows[0]
    if not isinstance(r[2], str) or not TYPE_NAME.fullmatch(r[2]):   # it is printed into SQL as a type
        raise RWNError(f"the release's metadata gives the sensitive type {r[2]!r}, not a DuckDB type name")
    return ReleaseMeta(table_name=r[0], sensitive=r[1], sensitive_type=r[2], public=tuple(r[3]), p=r[4],
                       domain=tuple(r[5]), method=r[6], enforced=r[7], epsilon=r[8], delta=r[9], test=r[10],
                       release_name=r[11], trials_sql=f"{prefix}{TRIALS_TABLE} AS __rwn_tr" if r[7] else None)


def write_release(con: duckdb.DuckDBPyConnection, release_sql: str, path: str, meta: ReleaseMeta,
                  overwrite: bool = False, trials: dict[int, int] | None = None) -> int:
    """Write a standalone release database at `path`, atomically: built under a temporary
    name beside it and renamed when complete. Returns the number of released rows."""
    if engine.attached_database(con, path) is not None:
        raise RWNError(f"release database {path!r} is a database the input is read from; rwn_sql never "
                       f"overwrites its input (write a new release file)")
    if {meta.table_name.lower(), meta.name.lower()} & {METADATA_TABLE, TRIALS_TABLE}:
        raise RWNError(f"table name {meta.name!r} is reserved for the release's metadata; choose another")
    if os.path.exists(path) and not overwrite:
        raise RWNError(f"release database {path!r} already exists (use --overwrite to replace it)")
    with engine.scratch_dir(engine.output_folder(path)) as scratch:
        return _write_release(con, release_sql, path, meta, overwrite, trials,
                              os.path.join(scratch, f"release-{secrets.token_hex(4)}.duckdb"))


def _write_release(con, release_sql, path, meta, overwrite, trials, tmp) -> int:
    alias = "__rwn_release_" + secrets.token_hex(4)
    con.execute(f"ATTACH {quote_literal(tmp)} AS {quote_ident(alias)}").fetchall()
    try:
        target = f"{quote_ident(alias)}.{quote_ident(meta.table_name)}"
        rows = engine.run(con, f"CREATE TABLE {target} AS\n{release_sql}")[0][0]
        con.execute(f"CREATE TABLE {quote_ident(alias)}.{METADATA_TABLE} ({METADATA_COLUMNS})").fetchall()
        rwn = meta.rwn or {}
        con.execute(f"INSERT INTO {quote_ident(alias)}.{METADATA_TABLE} VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [meta.table_name, meta.method, meta.sensitive, meta.sensitive_type, list(meta.public),
                     meta.p, list(meta.domain), meta.m, meta.enforced, meta.epsilon, meta.delta, meta.test,
                     rwn.get("columns"), rwn.get("k"), rwn.get("eps"), rwn.get("q"), rwn.get("scale"),
                     rows, _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None), __version__,
                     meta.suppressed_records, meta.name]).fetchall()
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
        engine.publish(tmp, path, overwrite)
        return rows
    except BaseException:
        try:
            con.execute(f"DETACH {quote_ident(alias)}").fetchall()
        except duckdb.Error:
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
        target = quote_ident(obj) + (f".{quote_ident(column)}" if column else "")
        out.append(f"COMMENT ON {'COLUMN' if column else kind} {target} IS {quote_literal(text)}")

    comment("TABLE", meta.table_name,
            f"Randomized microdata: {meta.sensitive} was kept with probability p = {meta.p}, else replaced by a "
            f"uniform draw from its {meta.m} published values.{enforced} Counts of this table by {meta.sensitive} "
            f"are BIASED: use {cells}.estimate (SUM it over any slice of public columns) or the "
            f"{name}_estimates views. Rows are in a random order.")
    for c in meta.public:
        comment("TABLE", meta.table_name, "public column: released " + (
            "after RWN perturbation (values swapped within neighbourhoods)" if c in perturbed else "unchanged")
            + "; it defines the personal groups", c)
    comment("TABLE", meta.table_name, f"randomized sensitive column: each value kept with probability {meta.p}, "
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
            f"correlated. Never COUNT(*) this view or the randomized table.")
    for c in meta.public:
        comment("VIEW", cells, "public column (a personal group is one combination of them)", c)
    comment("VIEW", cells, f"{meta.sensitive} value (every published value appears in every group)", meta.sensitive)
    comment("VIEW", cells, "released records in the personal group (exact; the same on every row of the group)",
            "group_size")
    comment("VIEW", cells, ESTIMATE_COMMENTS["released_count"], "released_count")
    comment("VIEW", cells, "unbiased estimate of the group's records holding this value: SUM it over any slice "
            "(it can be negative or exceed group_size; sums over large slices are accurate)", "estimate")
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
                      ("rwn_sql_version", text), ("suppressed_records", whole), ("release_name", text)])


def write_release_folder(be, release_sql: str, path: str, meta: ReleaseMeta, overwrite: bool = False,
                         trials: dict[int, int] | None = None) -> int:
    """Write a release folder at `path` atomically (built in the run's private folder beside
    it, then renamed). Returns the number of released rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    if os.path.exists(path) and not overwrite:
        raise RWNError(f"release folder {path!r} already exists (use --overwrite to replace it)")
    if os.path.splitext(path)[1].lower() in engine.DB_SUFFIXES:
        raise RWNError(f"on {be.name} a release is a folder of Parquet files, not a DuckDB database: "
                       f"give a folder path, not {path!r}")
    with engine.scratch_dir(engine.output_folder(path)) as scratch:
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
                      release_name=meta.name)
        pq.write_table(pa.Table.from_pylist([record], schema=_metadata_schema()),
                       os.path.join(tmp, f"{METADATA_TABLE}.parquet"))
        if meta.enforced:
            sizes = sorted((trials or {}).items())
            pq.write_table(pa.table({"size": pa.array([n for n, _ in sizes], pa.int64()),
                                     "t": pa.array([t for _, t in sizes], pa.int64())}),
                           os.path.join(tmp, f"{TRIALS_TABLE}.parquet"))
        engine.publish_folder(tmp, path, scratch)
    return rows


def read_release_folder(path: str, table: str | None = None) -> tuple[ReleaseMeta, str, str | None]:
    """The metadata of a release folder, and the paths of its table and trials (or None)."""
    import pyarrow.parquet as pq
    meta_path = os.path.join(path, f"{METADATA_TABLE}.parquet")
    if not os.path.isfile(meta_path):
        raise RWNError(f"{path!r} is not a release folder: it has no {METADATA_TABLE}.parquet")
    rows = pq.read_table(meta_path).to_pylist()
    if table is not None:
        rows = [r for r in rows if table.lower() in (r["table_name"].lower(), (r["release_name"] or "").lower())]
        if not rows:
            raise RWNError(f"the release has no table {table!r}")
    if len(rows) != 1:
        raise RWNError(f"the release folder lists {len(rows)} tables in {METADATA_TABLE}; expected one")
    r = rows[0]
    if not isinstance(r["sensitive_type"], str) or not TYPE_NAME.fullmatch(r["sensitive_type"]):
        raise RWNError(f"the release's metadata gives the sensitive type {r['sensitive_type']!r}, not a type name")
    meta = ReleaseMeta(table_name=r["table_name"], sensitive=r["sensitive"], sensitive_type=r["sensitive_type"],
                       public=tuple(r["public"]), p=r["p"], domain=tuple(r["domain"]), method=r["method"],
                       enforced=r["enforced"], epsilon=r["epsilon"], delta=r["delta"], test=r["test"],
                       release_name=r["release_name"], suppressed_records=r["suppressed_records"] or 0)
    trials = os.path.join(path, f"{TRIALS_TABLE}.parquet") if meta.enforced else None
    return meta, os.path.join(path, f"{meta.table_name}.parquet"), trials
