"""The DuckDB connection itself: its types and errors under names the rest of the package uses
(only the engines import duckdb), running a statement with rwn_sql's in-SQL checks turned
into RWNError, and one line for any DuckDB or OS error."""
from __future__ import annotations

import errno
import re

import duckdb

from .dialects import DUCKDB
from ..errors import RWNError


# DuckDB's connection, relation and error types, for the modules that take a connection or
# catch its errors without importing duckdb (only the engines import it).
Connection = duckdb.DuckDBPyConnection
Relation = duckdb.DuckDBPyRelation
Error = duckdb.Error
IOException = duckdb.IOException
CatalogException = duckdb.CatalogException
InterruptException = duckdb.InterruptException
OutOfMemoryException = duckdb.OutOfMemoryException
connect = duckdb.connect

NUMERIC_TYPES = DUCKDB.NUMERIC
MEMORY_UNITS = {"bytes": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
                "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def run(con: duckdb.DuckDBPyConnection, sql: str, params=None) -> list[tuple]:
    """Run a statement to completion and return its rows, turning rwn_sql's in-SQL checks
    into RWNError."""
    try:
        return con.execute(sql, params).fetchall() if params else con.execute(sql).fetchall()
    except duckdb.Error as exc:
        raise translate(exc) from None


def translate(exc: duckdb.Error) -> Exception:
    text = str(exc)
    m = re.search(r"rwn_sql: (.*)", text, re.DOTALL)
    if m:
        return RWNError(m.group(1).strip())
    return exc


def preserves_insertion_order(con: duckdb.DuckDBPyConnection) -> bool:
    """DuckDB's preserve_insertion_order setting (default true): whether a statement without
    ORDER BY keeps its input order. Row identities (row_number() OVER ()) are input positions
    either way; only the order of output rows depends on it."""
    return bool(con.execute("SELECT current_setting('preserve_insertion_order')").fetchall()[0][0])


# --- Errors -------------------------------------------------------------------------------
def describe_error(exc: BaseException) -> str:
    """One line for a DuckDB or OS error: what went wrong, never the raw data DuckDB quotes
    (its CSV errors echo the offending line)."""
    if isinstance(exc, OSError) and not isinstance(exc, duckdb.Error):
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        return _explain_errno(exc.errno, exc.strerror or str(exc)) + where
    text = str(exc)
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    if isinstance(exc, duckdb.OutOfMemoryException) or "Out of Memory" in text:
        return ("out of memory: DuckDB could not stay within its memory limit (raise --memory-limit, "
                "use fewer --threads, or free memory)")
    for marker, code in (("No space left on device", errno.ENOSPC), ("File too large", errno.EFBIG),
                         ("Read-only file system", errno.EROFS), ("Permission denied", errno.EACCES),
                         ("Disk quota exceeded", errno.EDQUOT)):
        if marker in text:
            return _explain_errno(code, marker)     # DuckDB's line names internal temporary files
    csv_line = re.search(r"CSV Error on Line: (\d+)", text)
    if csv_line:
        detail = next((ln for ln in lines[1:] if not ln.startswith("Original Line")), "")
        detail = re.sub(r'(string|value) "[^"]*"', r"a \1", detail)     # the value is raw data
        return f"CSV line {csv_line[1]}: {detail}".rstrip(": ")
    head = lines[0] if lines else type(exc).__name__
    return head if len(head) <= 400 else head[:400] + "..."


def _explain_errno(code: int | None, detail: str) -> str:
    if code in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        return f"disk full (or file size limit reached) while writing: {detail}"
    if code in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"cannot write there (read-only or no permission): {detail}"
    return detail
