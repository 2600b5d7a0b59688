"""The design of a randomized table, recorded with it and read back by every estimate.

A table written by `randomize(into=)` (and `rwn-sql randomize ... file.duckdb:table`) carries
its design in its table COMMENT: a sentence for people, then one line

    rwn_sql design v1: {"sensitive": ..., "p": ..., "domain": [...], "enforced": ..., "blocks": [[n, t], ...]}

(JSON; never the key or raw data: p, the published domain, the public columns, the enforcement
parameters and the public blocks per personal-group size, what a release database publishes in
its metadata). A comment lives and dies with its table: CREATE OR REPLACE and CREATE TABLE AS
SELECT drop it, so a table derived from the release has no record and its estimates must be
given the design. A Parquet file written by `rwn-sql randomize` carries the same line as the
key-value metadata entry RECORD_KEY.

The record is read as untrusted text: bounded in bytes before it is fetched, parsed as JSON
with exactly the expected keys, every value checked as a release's metadata are
(release_db.metadata_values) and the blocks as integers; its values reach SQL only as checked
literals. A record also has to agree with its table (its columns and the blocks of the group
sizes present, rp.recorded_design), so an edited comment cannot pair a table with a design
it was not made with unnoticed; a table's owner who rewrites both can of course still lie.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass

from ...engines import duckdb as engine
from ...errors import RWNError
from ...identifiers import name_parts, quote_literal

MARKER = "rwn_sql design v1: "
RECORD_KEY = "rwn_sql_design"           # Parquet key-value metadata key
MAX_RECORD_BYTES = 4 << 20              # a domain of 100,000 values and 1,000,000 block sizes fit
MAX_BLOCK_SIZES = 1_000_000
KEYS = ("method", "sensitive", "sensitive_type", "public", "p", "m", "domain", "enforced", "epsilon", "delta",
        "test", "blocks")


@dataclass(frozen=True)
class Design:
    """A randomized table's design: what its estimates need."""
    sensitive: str
    sensitive_type: str
    public: tuple[str, ...]
    p: float
    domain: tuple[str, ...]
    enforced: bool = False
    epsilon: float | None = None
    delta: float | None = None
    test: str | None = None
    blocks: tuple[tuple[int, int], ...] | None = None    # enforced: (group size, blocks t)
    method: str = "uniform_perturbation"

    @property
    def m(self) -> int:
        return len(self.domain)

    @property
    def enforce(self):
        return (self.epsilon, self.delta) if self.enforced else None

    def comment(self) -> str:
        """Its table COMMENT (comment_text)."""
        return comment_text(self)

    def metadata(self) -> dict[str, str]:
        """Its Parquet key-value metadata (RECORD_KEY: the record line)."""
        return {RECORD_KEY: record_line(self)}


def record_line(design: Design) -> str:
    """The machine-readable line: MARKER and the design as JSON."""
    return MARKER + json.dumps(dict(
        method=design.method, sensitive=design.sensitive, sensitive_type=design.sensitive_type,
        public=list(design.public), p=float(design.p), m=design.m, domain=list(design.domain),
        enforced=design.enforced, epsilon=None if design.epsilon is None else float(design.epsilon),
        delta=None if design.delta is None else float(design.delta), test=design.test,
        blocks=None if design.blocks is None else [[int(n), int(t)] for n, t in design.blocks]),
        ensure_ascii=True, separators=(", ", ": "))


def comment_text(design: Design) -> str:
    """The table COMMENT of a randomized table: what it is, then the record line."""
    enforced = (f", ({design.epsilon}, {design.delta})-reconstruction privacy enforced by blocks ({design.test} "
                f"test)" if design.enforced else "")
    return (f"Randomized rows, NOT counts: {design.sensitive} kept with probability p = {design.p}, else a uniform "
            f"draw from its {design.m} values{enforced}. Counts of it by {design.sensitive} are BIASED: use "
            f"rwn_sql.estimates or rwn_estimates, which read the design recorded on the next line.\n"
            + record_line(design))


def parse(text: str | None, where: str) -> Design | None:
    """The design recorded in `text` (a comment or a Parquet metadata value); None when it holds
    no record line; RWNError naming `where` when the line is there but malformed."""
    if not text:
        return None
    lines = [line for line in text.split("\n") if line.startswith(MARKER)]
    if not lines:
        return None
    if len(lines) > 1:
        raise RWNError(f"{where} records more than one design: refused")
    try:
        record = json.loads(lines[0][len(MARKER):], parse_constant=lambda c: None)
    except ValueError:
        raise RWNError(f"{where} records a design that is not valid JSON: refused") from None
    if not isinstance(record, dict) or sorted(record) != sorted(KEYS):
        raise RWNError(f"{where} records a design without exactly the keys {', '.join(KEYS)}: refused")
    from .release_db import MAX_DOMAIN_VALUES, MAX_PUBLIC_COLUMNS, metadata_values
    if not isinstance(record["domain"], list) or not isinstance(record["public"], list) or \
            len(record["domain"]) > MAX_DOMAIN_VALUES or len(record["public"]) > MAX_PUBLIC_COLUMNS:
        raise RWNError(f"{where} records a domain or public columns that are not bounded lists: refused")
    if record["method"] != "uniform_perturbation":
        raise RWNError(f"{where} records the method {record['method']!r}, not uniform_perturbation: refused")
    meta = metadata_values(("t", record["sensitive"], record["sensitive_type"], record["public"], record["p"],
                            record["domain"], record["method"], record["enforced"], record["epsilon"],
                            record["delta"], record["test"], None))
    if record["m"] != meta.m or isinstance(record["m"], bool):
        raise RWNError(f"{where} records m = {record['m']!r} for a domain of {meta.m} values: refused")
    blocks = record["blocks"]
    if meta.enforced:
        if not isinstance(blocks, list) or not blocks or len(blocks) > MAX_BLOCK_SIZES or any(
                not isinstance(b, list) or len(b) != 2 or any(isinstance(v, bool) or not isinstance(v, int)
                                                              for v in b) or b[0] < 1 or b[1] < 0 for b in blocks) \
                or len({b[0] for b in blocks}) != len(blocks):
            raise RWNError(f"{where} records blocks that are not distinct (size >= 1, blocks >= 0) integer pairs: "
                           f"refused")
        blocks = tuple((n, t) for n, t in blocks)
    elif blocks is not None or meta.epsilon is not None or meta.delta is not None or meta.test is not None:
        raise RWNError(f"{where} records blocks or enforcement parameters for a design without enforcement: "
                       f"refused")
    if not (isinstance(meta.p, float) and math.isfinite(meta.p)):
        raise RWNError(f"{where} records p = {meta.p!r}: refused")
    return Design(sensitive=meta.sensitive, sensitive_type=meta.sensitive_type, public=meta.public, p=meta.p,
                  domain=meta.domain, enforced=meta.enforced, epsilon=meta.epsilon, delta=meta.delta,
                  test=meta.test, blocks=blocks)


def _resolve(con, name: str) -> tuple[str, str, str, str] | None:
    """(kind, database, schema, table) of the table or view a plain name resolves to, as DuckDB
    resolves it (temp first, then the current schema; a.b: database a or schema a; a.b.c), or
    None."""
    parts = name_parts(name) if "." in name or '"' in name else [name]
    if not parts:
        return None
    db, schema = con.execute("SELECT current_database(), current_schema()").fetchall()[0]
    if len(parts) == 1:
        places = [("temp", "main"), (db, schema)]
    elif len(parts) == 2:
        places = [(parts[0], "main"), (db, parts[0])]
    else:
        places = [(parts[0], parts[1])]
    for catalog, sch in places:
        found = con.execute(
            "SELECT 'table', database_name, schema_name, table_name FROM duckdb_tables() WHERE lower(database_name) "
            "= lower(?) AND lower(schema_name) = lower(?) AND lower(table_name) = lower(?) UNION ALL "
            "SELECT 'view', database_name, schema_name, view_name FROM duckdb_views() WHERE lower(database_name) = "
            "lower(?) AND lower(schema_name) = lower(?) AND lower(view_name) = lower(?)",
            [catalog, sch, parts[-1]] * 2).fetchall()
        if found:
            return found[0]
    return None


def table_record(con, name: str) -> Design | None:
    """The design recorded in the COMMENT of the base table `name` resolves to; None for a view,
    an unknown name or a table without a record. The comment's length is measured by SQL
    before it is fetched."""
    found = _resolve(con, name)
    if found is None or found[0] != "table":
        return None
    _, db, schema, table = found
    where = ("database_name = ? AND schema_name = ? AND table_name = ?", [db, schema, table])
    size = con.execute(f"SELECT strlen(comment) FROM duckdb_tables() WHERE {where[0]}", where[1]).fetchall()
    if not size or size[0][0] is None:
        return None
    if size[0][0] > MAX_RECORD_BYTES:
        raise RWNError(f"the comment of table {table!r} is longer than {MAX_RECORD_BYTES:,} bytes: refused")
    text = con.execute(f"SELECT comment FROM duckdb_tables() WHERE {where[0]}", where[1]).fetchall()[0][0]
    return parse(text, f"the comment of table {table!r}")


def local_parquet_record(path: str) -> Design | None:
    """parquet_record of a local Parquet file or folder, read on a DuckDB connection of its own
    (for an engine whose session does not read Parquet key-value metadata)."""
    with engine.connect() as local:
        return parquet_record(local, path)


def parquet_record(con, path: str) -> Design | None:
    """The design in the key-value metadata of the Parquet file `path` (RECORD_KEY), None when
    it has none; its length measured by SQL before it is fetched. A folder of parts (as Spark
    writes it, the parts named *.parquet) records a design when every part records the same
    one; parts that disagree, or some without it, are refused."""
    import os
    pattern = os.path.join(path, "*.parquet") if os.path.isdir(path) else path
    src = f"parquet_kv_metadata({quote_literal(pattern)})"
    key = f"key = CAST({quote_literal(RECORD_KEY)} AS BLOB)"     # compared as bytes: a key need not be UTF-8
    sizes = con.execute(f"SELECT file_name, octet_length(value) FROM {src} WHERE {key}").fetchall()
    if not sizes:
        return None
    parts = con.execute(f"SELECT count(*) FROM glob({quote_literal(pattern)})").fetchall()[0][0]
    if len({name for name, _ in sizes}) != len(sizes) or any((n or 0) > MAX_RECORD_BYTES for _, n in sizes):
        raise RWNError(f"the Parquet metadata of {path!r} hold more than one design or one longer than "
                       f"{MAX_RECORD_BYTES:,} bytes: refused")
    try:
        texts = {t for t, in con.execute(f"SELECT DISTINCT decode(value) FROM {src} WHERE {key}").fetchall()}
    except engine.Error:
        raise RWNError(f"the Parquet metadata of {path!r} record a design that is not UTF-8 text: refused") from None
    if len(texts) > 1 or len(sizes) != parts:
        raise RWNError(f"the parts of {path!r} do not all record the same design: refused")
    return parse(texts.pop(), f"the Parquet metadata of {path!r}")
