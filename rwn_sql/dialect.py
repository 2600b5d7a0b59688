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

    def md5_uint128(self, text_sql: str) -> str:
        """MD5 of a VARCHAR expression as the 16 digest bytes read as a little-endian unsigned
        128-bit integer (Python: int.from_bytes(md5(text).digest(), 'little')). An engine
        without it reverses the byte order of the hex digest and parses that."""
        return f"md5_number({text_sql})"

    def uint128_bits(self, value_sql: str, shift: int, width: int) -> str:
        """Bits shift .. shift+width-1 (width <= 62) of a 128-bit unsigned integer, as BIGINT."""
        return f"CAST(({value_sql} >> {shift}) & {(1 << width) - 1} AS BIGINT)"

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
