"""Per-engine SQL fragments, kept in one small place.

The builders emit engine-neutral SQL except for the handful of fragments below. A later
engine (Spark through sqlglot) adds a sibling class; anything an engine lacks raises a
clear error there rather than producing wrong SQL.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DuckDBDialect:
    name: str = "duckdb"

    def md5_hex(self, text_sql: str) -> str:
        """Lower-case hex MD5 of a VARCHAR expression (same bytes as Python's hashlib)."""
        return f"md5({text_sql})"

    def hex_to_bigint(self, hex_sql: str) -> str:
        """Parse a hex string of at most 15 digits into a non-negative BIGINT."""
        return f"('0x' || {hex_sql})::BIGINT"

    def lambda_(self, var: str, body: str) -> str:
        return f"lambda {var}: {body}"

    def raise_error(self, message_sql: str) -> str:
        return f"error({message_sql})"

    def materialized(self) -> str:
        """Keyword that forces a CTE to be computed once (its row numbers stay fixed)."""
        return "MATERIALIZED "

    def table_by_name(self, name_literal_sql: str) -> str:
        """A table or view named by a string, resolved by the engine (injection-safe)."""
        return f"query_table({name_literal_sql})"


DUCKDB = DuckDBDialect()
