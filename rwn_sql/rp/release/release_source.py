"""What estimates read: the release a name or query designates (refusing views of attached
database files and of release databases, whose SQL would run on the caller's connection) and
its recorded design, reconciled with the arguments given."""
from __future__ import annotations

import os

from ...engines import sources
from ...engines.dialects import same_type_name
from ..core.checks import domain_values
from ...errors import RWNError
from ...identifiers import name_parts, quote_ident


RECORDED = "recorded"      # estimates(enforce=): take the design recorded with the release


def recorded_elsewhere(con, release: str):
    """The design recorded with a table (its COMMENT) or a Parquet file (its metadata)."""
    from .design_record import parquet_record, table_record
    if sources.file_format(release.rstrip("/")) == "parquet" and os.path.exists(release):
        return parquet_record(con, release.rstrip("/"))
    db = sources.split_db_target(release)
    if db is not None:           # 'file.duckdb:table': the COMMENT of that table
        if not os.path.isfile(db[0]):
            return None
        alias = sources.attach_read_only(con, db[0])
        return table_record(con, f"{quote_ident(alias)}.{quote_ident(db[1])}")
    if sources.file_format(release):
        return None
    return table_record(con, release)


def reconcile(recorded, label: str, sensitive: str, p, domain, public, enforce, test):
    """(p, domain, public, enforce, test) for the estimates: the recorded design, checked
    against the arguments given, or (no record) the arguments, which must then name the
    enforcement (a privacy.Threshold, or None for none; RECORDED: the record's)."""
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
            eps, delta = enforce
            if not recorded.enforced or abs(float(eps) - recorded.epsilon) > 1e-12 or \
                    abs(float(delta) - recorded.delta) > 1e-12:
                now = (f"enforced with ({recorded.epsilon}, {recorded.delta})" if recorded.enforced
                       else "made without enforcement")
                raise RWNError(f"{what} a release {now}, not enforce={tuple(enforce)}: leave enforce out")
    if test is not None and recorded.enforced and test != recorded.test:
        raise RWNError(f"{what} a release certified with the {recorded.test} test, not {test!r}")
    return recorded.p, list(recorded.domain), recorded.public, recorded.enforce, recorded.test


def check_recorded_columns(src, sensitive: str, pub, recorded, label: str) -> None:
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


def _release_name(con, release: str) -> tuple[str | None, str] | None:
    """(schema or database alias, table) that `release` names when it is [schema.]table or
    'file.duckdb:table' (attached read-only, as resolve_source attaches it); None otherwise."""
    db = sources.split_db_target(release)
    if db is not None:
        return sources.attach_read_only(con, db[0]), db[1]
    from .release_db import ROWS_SCHEMA
    if sources.QUERY_START.match(release) or sources.file_format(release) or "\x00" in release:
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
    pending, seen = [(release, sources.QUERY_START.match(release) is not None, current_db, current_schema)], set()
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
    if sources.split_db_target(release) is None and not (sources.file_format(release) and os.path.isfile(release)):
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


def recorded_design(be, release):
    """(what to read, its recorded design_record.Design or None, SQL of its recorded blocks or
    None) for the `release` estimates read: a release database's table is read as its released
    table with the design of its metadata; a table (its COMMENT) or a Parquet file (its
    metadata) records a design too."""
    recorded = trials_sql = None
    if be.records_design_in_catalog and isinstance(release, str):
        meta = check_release_source(be.con, release)
        if meta is not None:          # a release database's table: its published metadata
            from .design_record import Design
            release = meta.rows_sql
            recorded = Design(sensitive=meta.sensitive, sensitive_type=meta.sensitive_type, public=meta.public,
                              p=meta.p, domain=meta.domain, enforced=meta.enforced, epsilon=meta.epsilon,
                              delta=meta.delta, test=meta.test)
            trials_sql = meta.trials_sql
        elif not sources.QUERY_START.match(release):
            recorded = recorded_elsewhere(be.con, release)
    elif isinstance(release, str) and sources.file_format(release.rstrip("/")) == "parquet" \
            and os.path.exists(release):        # a local Parquet file or folder: its metadata, read by DuckDB
        from .design_record import local_parquet_record
        recorded = local_parquet_record(release.rstrip("/"))
    return release, recorded, trials_sql
