"""Per-engine SQL fragments, kept in one small place.

The builders emit engine-neutral SQL except for the fragments below. `Dialect` names every
fragment; an engine's subclass implements what it has, and anything it lacks raises
UnsupportedByEngine, a clear "engine X does not support Y" error, rather than producing wrong
SQL (the model is Splink's dialects.py). DuckDBDialect implements everything; SparkDialect
(issue 11, in progress) implements the fragments Spark SQL has and says which it lacks.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import RWNError


class UnsupportedByEngine(RWNError):
    """The engine has no SQL for something a plan needs."""


@dataclass(frozen=True)
class Dialect:
    name: str = "generic"

    def _lacks(self, what: str):
        raise UnsupportedByEngine(f"engine {self.name} does not support {what}")

    def md5_hex(self, text_sql: str) -> str:
        """Lower-case hex MD5 of a VARCHAR expression (same bytes as Python's hashlib)."""
        return self._lacks("md5() in SQL")

    def as_text(self, value_sql: str) -> str:
        """A value as text (integers in decimal digits, the same on every engine)."""
        return self._lacks("casts to text")

    def md5_uint128(self, text_sql: str) -> str:
        """MD5 of a VARCHAR expression as the 16 digest bytes read as a little-endian unsigned
        128-bit integer (Python: int.from_bytes(md5(text).digest(), 'little'))."""
        return self._lacks("128-bit integers from md5")

    def uint128_bits(self, value_sql: str, shift: int, width: int) -> str:
        """Bits shift .. shift+width-1 (width <= 62) of a 128-bit unsigned integer, as BIGINT."""
        return self._lacks("128-bit integer bit operations")

    def lambda_(self, var: str, body: str) -> str:
        return self._lacks("lambda functions")

    def raise_error(self, message_sql: str) -> str:
        """An expression that fails the statement with the message (a VARCHAR expression)."""
        return self._lacks("raising errors from SQL")

    def materialized(self) -> str:
        """Keyword that forces a CTE to be computed once (its row numbers stay fixed)."""
        return self._lacks("materialized common table expressions")

    def table_by_name(self, name_literal_sql: str) -> str:
        """A table or view named by a string, resolved by the engine (injection-safe)."""
        return self._lacks("tables named by a string")

    def session_variable(self, name_literal_sql: str) -> str:
        """The value of a session variable (how generated SQL reads the key)."""
        return self._lacks("session variables")

    def star(self, relation: str, exclude=(), replace=()) -> str:
        """All columns of `relation` but the `exclude` ones (quoted names), with `replace`
        pairs (expression SQL, quoted name) in place of same-named columns."""
        return self._lacks("SELECT * with EXCLUDE / REPLACE")

    def typed_list(self, items_sql, type_sql: str) -> str:
        """A list (array) literal of the SQL constants `items_sql`, as type_sql values."""
        return self._lacks("list literals")

    def list_contains(self, list_sql: str, value_sql: str) -> str:
        return self._lacks("list membership")

    def list_element(self, list_sql: str, index_sql: str) -> str:
        """Element `index_sql` (1-based) of a list."""
        return self._lacks("list indexing")

    def unit_fraction(self, bits_sql: str) -> str:
        """A 52-bit integer divided by 2^52, in IEEE double arithmetic (exact)."""
        return self._lacks("double arithmetic")

    def unnest(self, list_sql: str) -> str:
        """One row per element of a list (in a SELECT list)."""
        return self._lacks("unnesting lists")

    def list_length(self, list_sql: str) -> str:
        return self._lacks("list length")

    def int_div(self, a_sql: str, b_sql: str) -> str:
        """Integer division of two non-negative integers."""
        return self._lacks("integer division")


@dataclass(frozen=True)
class DuckDBDialect(Dialect):
    name: str = "duckdb"

    def md5_hex(self, text_sql: str) -> str:
        return f"md5({text_sql})"

    def as_text(self, value_sql: str) -> str:
        return f"CAST({value_sql} AS VARCHAR)"

    def md5_uint128(self, text_sql: str) -> str:
        return f"md5_number({text_sql})"

    def uint128_bits(self, value_sql: str, shift: int, width: int) -> str:
        return f"CAST(({value_sql} >> {shift}) & {(1 << width) - 1} AS BIGINT)"

    def lambda_(self, var: str, body: str) -> str:
        return f"lambda {var}: {body}"

    def raise_error(self, message_sql: str) -> str:
        return f"error({message_sql})"

    def materialized(self) -> str:
        return "MATERIALIZED "

    def table_by_name(self, name_literal_sql: str) -> str:
        return f"query_table({name_literal_sql})"

    def session_variable(self, name_literal_sql: str) -> str:
        return f"getvariable({name_literal_sql})"

    def typed_list(self, items_sql, type_sql: str) -> str:
        return f"CAST([{', '.join(items_sql)}] AS {type_sql}[])"

    def list_contains(self, list_sql: str, value_sql: str) -> str:
        return f"list_contains({list_sql}, {value_sql})"

    def list_element(self, list_sql: str, index_sql: str) -> str:
        return f"{list_sql}[{index_sql}]"

    def unit_fraction(self, bits_sql: str) -> str:
        return f"{bits_sql} / 4503599627370496.0"           # BIGINT / literal: DOUBLE in DuckDB

    def unnest(self, list_sql: str) -> str:
        return f"unnest({list_sql})"

    def list_length(self, list_sql: str) -> str:
        return f"len({list_sql})"

    def int_div(self, a_sql: str, b_sql: str) -> str:
        return f"{a_sql} // {b_sql}"

    def star(self, relation: str, exclude=(), replace=()) -> str:
        out = f"{relation}.*" if relation else "*"
        if exclude:
            out += f" EXCLUDE ({', '.join(exclude)})"
        if replace:
            out += f" REPLACE ({', '.join(f'{expr} AS {name}' for expr, name in replace)})"
        return out


@dataclass(frozen=True)
class SparkDialect(Dialect):
    """Spark SQL's fragments. Not yet wired to a backend (issue 11). Spark has no 128-bit
    integers: the digest stays the hex string md5() gives, and its bits are read from the
    hex digits, so every keyed draw equals DuckDB's (tests/test_spark.py). SELECT *
    EXCLUDE/REPLACE needs an explicit column list there."""
    name: str = "spark"

    def md5_hex(self, text_sql: str) -> str:
        return f"md5({text_sql})"

    def as_text(self, value_sql: str) -> str:
        return f"CAST({value_sql} AS STRING)"

    def md5_uint128(self, text_sql: str) -> str:
        return f"md5({text_sql})"          # the digest as hex; uint128_bits reads it

    def uint128_bits(self, value_sql: str, shift: int, width: int) -> str:
        """Bits shift .. shift+width-1 of the little-endian integer of the digest whose hex is
        `value_sql`: its big-endian hex is the digest's bytes reversed, so hex digit i of it
        (0 = most significant) is character 2 (15 - i // 2) + i % 2 of the digest's hex.
        Nibble-aligned shifts only (the draws use 76, 24 and 0)."""
        if shift % 4:
            return self._lacks(f"bit fields starting at bit {shift} of a digest")
        first, last = 32 - -(-(shift + width) // 4), 32 - shift // 4      # big-endian hex digits [first, last)
        digits = ", ".join(f"substr({value_sql}, {2 * (15 - i // 2) + i % 2 + 1}, 1)" for i in range(first, last))
        return f"CAST(pmod(CAST(conv(concat({digits}), 16, 10) AS DECIMAL(20, 0)), {1 << width}) AS BIGINT)"

    def lambda_(self, var: str, body: str) -> str:
        return f"{var} -> {body}"

    def raise_error(self, message_sql: str) -> str:
        return f"raise_error({message_sql})"

    def materialized(self) -> str:
        return ""          # a Spark backend caches the step as a table instead

    def typed_list(self, items_sql, type_sql: str) -> str:
        return f"array({', '.join(f'CAST({v} AS {type_sql})' for v in items_sql)})"

    def list_contains(self, list_sql: str, value_sql: str) -> str:
        return f"array_contains({list_sql}, {value_sql})"

    def list_element(self, list_sql: str, index_sql: str) -> str:
        return f"element_at({list_sql}, CAST({index_sql} AS INT))"

    def unit_fraction(self, bits_sql: str) -> str:
        return f"CAST({bits_sql} AS DOUBLE) / 4503599627370496.0D"

    def unnest(self, list_sql: str) -> str:
        return f"explode({list_sql})"

    def list_length(self, list_sql: str) -> str:
        return f"size({list_sql})"

    def int_div(self, a_sql: str, b_sql: str) -> str:
        return f"{a_sql} div {b_sql}"


DUCKDB = DuckDBDialect()
SPARK = SparkDialect()
