"""Per-engine SQL fragments, kept in one small place.

The builders emit engine-neutral SQL except for the fragments below. `Dialect` names every
fragment; an engine's subclass implements what it has, and anything it lacks raises
UnsupportedByEngine, a clear "engine X does not support Y" error, rather than producing wrong
SQL (the model is Splink's dialects.py). DuckDBDialect implements everything; SparkDialect
implements the fragments Spark SQL has and says which it lacks.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import RWNError
from ..identifiers import quote_literal


class UnsupportedByEngine(RWNError):
    """The engine has no SQL for something a plan needs."""


@dataclass(frozen=True)
class Dialect:
    name: str = "generic"
    recursive_cte = False      # WITH RECURSIVE: the RWN search runs as one statement, else level by level
    ranks_in_steps = False     # number records by rank in two staged, parallel steps, else one window

    def sorted_positions(self, rows_sql: str, order_sql: str) -> str:
        """Step 1 of ranking records by a unique `order_sql` in parallel: the rows of `rows_sql`
        (a SELECT) sorted, each with its place in the sort (__rwn_pos) and its columns in one
        struct (__rwn_row). Stage it once: the places are not deterministic."""
        return self._lacks("ranking records in steps")

    def ranks_from_positions(self, positions: str, rank: str) -> str:
        """Step 2: the rows of the staged step 1 `positions`, their 1-based rank as `rank` before
        their own columns."""
        return self._lacks("ranking records in steps")

    def _lacks(self, what: str):
        raise UnsupportedByEngine(f"engine {self.name} does not support {what}")

    def numeric_type(self, type_name: str) -> bool:
        """Is a column of this (engine's) type a number?"""
        return self._lacks("type checks")

    def check_scale(self, scale: str) -> None:
        """Refuse an RWN scaling the engine cannot compute identically."""

    def quantile(self, value_sql: str, fraction: float) -> str:
        """The exact quantile, interpolated linearly between the two closest ranks."""
        return self._lacks("exact quantiles")

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
        """The value of a session variable (the key's placeholder in printed SQL)."""
        return self._lacks("session variables")

    def key_read(self, value_sql: str, relation_sql: str, missing_message: str) -> str:
        """A scalar subquery computing `value_sql` (a function of the key) over the one-row
        `relation_sql` that holds the key (randomness.KeySQL). By default a missing key (no
        row) is NULL; an engine that can fails the statement with `missing_message`."""
        return f"(SELECT {value_sql} FROM {relation_sql})"

    def star(self, relation: str, exclude=(), replace=()) -> str:
        """All columns of `relation` but the `exclude` ones (quoted names), with `replace`
        pairs (expression SQL, quoted name) in place of same-named columns."""
        return self._lacks("SELECT * with EXCLUDE / REPLACE")

    def type_matches(self, value_sql: str, pattern: str) -> str:
        """TRUE when the type name of the expression (as the engine writes types) fully matches
        the regular expression `pattern` (case-insensitive), decided when the statement is bound."""
        return self._lacks("type tests in SQL")

    def type_name(self, value_sql: str) -> str:
        """The type name of an expression, as text."""
        return self._lacks("type names in SQL")

    def columns_matching(self, pattern: str) -> str:
        """Every column whose name matches `pattern` (one expression that the engine expands per
        column; all such expressions in a clause expand in step)."""
        return self._lacks("column patterns")

    def column_name(self, column_sql: str) -> str:
        """The name of a column expression, as text."""
        return self._lacks("column names in SQL")

    def same_type_list(self, like_sql: str, items_sql) -> str:
        """A list of the SQL string constants `items_sql` cast to the type of the expression
        `like_sql` (whose own value is left out)."""
        return self._lacks("lists typed like an expression")

    def count_by_all_but(self, relation: str, exclude, count: str) -> str:
        """A SELECT: per distinct combination of every column of `relation` but `exclude` (quoted
        names), those columns and the number of rows as `count`."""
        return self._lacks("grouping by every column")

    def row_of_all_but(self, exclude) -> str:
        """One value (a struct, its fields named as the columns) of every column but `exclude`
        (quoted names), equal for two rows exactly when GROUP BY those columns puts them in one
        group."""
        return self._lacks("rows of every column")

    def order_by_all(self) -> str:
        """ORDER BY every output column, left to right."""
        return self._lacks("ORDER BY ALL")

    def columns_among(self, names) -> str:
        """In a SELECT list: the columns named in `names` (plain strings), in their own order."""
        return self._lacks("column selection by name lists")

    def schema_list(self, relation: str) -> str:
        """A scalar subquery: the relation's columns as a list of [name, type] pairs, in order."""
        return self._lacks("schemas read in SQL")

    def rows_as_text(self, relation: str, columns) -> str:
        """A scalar subquery: the relation's distinct rows of the `columns` (quoted names; None:
        every column, in order) as one list of lists of text, each followed by its count."""
        return self._lacks("rows gathered as lists")

    def sorted_list_agg(self, value_sql: str, order_sql: str) -> str:
        """Aggregate: the values as a list sorted by `order_sql` (NULL over no rows)."""
        return self._lacks("sorted list aggregates")

    def distinct_list(self, value_sql: str) -> str:
        """Aggregate: the distinct non-NULL values as a list (NULL over no rows)."""
        return self._lacks("list aggregates")

    def distinct_count(self, list_sql: str) -> str:
        """The number of distinct non-NULL elements of a list."""
        return self._lacks("list aggregates")

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

    def int_div(self, a_sql: str, b_sql: str) -> str:
        """Integer division of two non-negative integers."""
        return self._lacks("integer division")

    def is_finite(self, value_sql: str) -> str:
        """TRUE for a finite DOUBLE, FALSE for NaN or +-inf, NULL for NULL."""
        return self._lacks("finiteness tests")

    def wide_integer(self, value_sql: str) -> str:
        """An integer expression widened to (at least) 128 bits, so that sums of products do not overflow."""
        return self._lacks("128-bit integers")

    def arg_max(self, value_sql: str, by_sql: str) -> str:
        """Aggregate: `value_sql` of the row with the largest `by_sql`."""
        return self._lacks("arg_max aggregates")

    def floor(self, value_sql: str) -> str:
        """floor() of a DOUBLE as a DOUBLE (for every finite value, however large)."""
        return self._lacks("floor() of doubles")

    def arg_min(self, value_sql: str, by_sql: str) -> str:
        return self._lacks("arg_min()")

    def group_by(self, columns_sql: str) -> str:
        """A GROUP BY clause; empty `columns_sql`: one group of every row."""
        return self._lacks("GROUP BY")

    def struct_pack(self, fields) -> str:
        """A struct of (name, expression SQL) pairs (names are plain identifiers)."""
        return self._lacks("structs")

    def null_struct_list(self, fields) -> str:
        """A typed NULL list of structs of (name, SQL type) pairs."""
        return self._lacks("typed NULL lists of structs")

    def list_length(self, list_sql: str) -> str:
        return self._lacks("list lengths")

    def sorted_struct_list_agg(self, fields, where_sql: str) -> str:
        """Aggregate: the structs of (name, expression SQL) pairs of the rows where `where_sql`
        holds, as a list sorted by the fields in order (an empty list when no row qualifies)."""
        return self._lacks("sorted list aggregates")

    def join_opaque(self, value_sql: str) -> str | None:
        """The value of `value_sql`, in a form a filter on it is not pushed into a join below;
        None where no such form is needed (the RWN level step then filters its candidates
        within the aggregates only: sqlgen's margin_filter)."""
        return None

    def list_filter(self, list_sql: str, var: str, condition_sql: str) -> str:
        return self._lacks("list filters")

    def descending_field(self, structs_sql, field: str) -> str:
        """The `field` of the structs (a list of struct SQL), sorted in descending order."""
        return self._lacks("sorted lists")

    def unnest_struct_list(self, relation: str, key_sql: str, list_sql: str, names) -> str:
        """A subquery: (key, then the fields of each list element) per element, with the
        column names `names` (the key's first)."""
        return self._lacks("unnesting lists")

    def unnest_columns(self, names_sql, values_sql, aliases) -> str:
        """What follows a FROM clause to give each of its rows once per (name, value) pair,
        as the columns `aliases` (name, value) of a relation u."""
        return self._lacks("unnesting lists")


@dataclass(frozen=True)
class DuckDBDialect(Dialect):
    name: str = "duckdb"
    recursive_cte = True
    NUMERIC = re.compile(r"^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|"
                         r"FLOAT|DOUBLE|REAL|DECIMAL(\(\d+,\s*\d+\))?)$", re.IGNORECASE)

    def numeric_type(self, type_name: str) -> bool:
        return bool(self.NUMERIC.match(type_name))

    def quantile(self, value_sql: str, fraction: float) -> str:
        return f"quantile_cont({value_sql}, {float(fraction)!r})"

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

    def key_read(self, value_sql: str, relation_sql: str, missing_message: str) -> str:
        # NULL (no such key row, or the macros' function does not know the token) fails the
        # statement; raising an error would be volatile, which window ORDER BYs refuse, so a cast
        # fails instead. It casts the scanned value: a constant failing cast would be pulled out
        # of the coalesce by the optimizer and fail every statement.
        return (f"(SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN {quote_literal(missing_message)} END "
                f"AS INTEGER) AS VARCHAR)) FROM (SELECT any_value({value_sql}) AS v FROM {relation_sql}))")

    def typed_list(self, items_sql, type_sql: str) -> str:
        return f"CAST([{', '.join(items_sql)}] AS {type_sql}[])"

    def list_contains(self, list_sql: str, value_sql: str) -> str:
        return f"list_contains({list_sql}, {value_sql})"

    def type_matches(self, value_sql: str, pattern: str) -> str:
        return f"regexp_full_match(typeof({value_sql}), {_string_literal(pattern)}, 'i')"

    def type_name(self, value_sql: str) -> str:
        return f"typeof({value_sql})"

    def columns_matching(self, pattern: str) -> str:
        return f"COLUMNS({_string_literal(pattern)})"

    def column_name(self, column_sql: str) -> str:
        return f"alias({column_sql})"

    def count_by_all_but(self, relation: str, exclude, count: str) -> str:
        return f"SELECT {self.star('', exclude)}, count(*) AS {count} FROM {relation} GROUP BY ALL"

    def distinct_list(self, value_sql: str) -> str:
        return f"list(DISTINCT {value_sql})"

    def row_of_all_but(self, exclude) -> str:
        return f"struct_pack(*COLUMNS({self.star('', exclude)}))"

    def order_by_all(self) -> str:
        return "ORDER BY ALL"

    def columns_among(self, names) -> str:
        listed = ", ".join(_string_literal(n) for n in names)
        return f"COLUMNS({self.lambda_('c', f'list_contains([{listed}], c)')})"

    def schema_list(self, relation: str) -> str:
        return f"(SELECT list([column_name, column_type]) FROM (DESCRIBE SELECT * FROM {relation}))"

    def rows_as_text(self, relation: str, columns) -> str:
        counted = f"SELECT {'*' if columns is None else ', '.join(columns)}, count(*) FROM {relation} GROUP BY ALL"
        return (f"(SELECT list([*COLUMNS(*)]) FROM (SELECT COLUMNS(*)::VARCHAR FROM ({counted}) AS __rwn_counted) "
                f"AS __rwn_text)")

    def sorted_list_agg(self, value_sql: str, order_sql: str) -> str:
        return f"list({value_sql} ORDER BY {order_sql})"

    def distinct_count(self, list_sql: str) -> str:
        return f"len(list_distinct({list_sql}))"

    def same_type_list(self, like_sql: str, items_sql) -> str:
        # string constants take the type of the list's first element
        return f"list_value({like_sql}, {', '.join(items_sql)})[2:]"

    def list_element(self, list_sql: str, index_sql: str) -> str:
        return f"{list_sql}[{index_sql}]"

    def unit_fraction(self, bits_sql: str) -> str:
        return f"{bits_sql} / 4503599627370496.0"           # BIGINT / literal: DOUBLE in DuckDB

    def unnest(self, list_sql: str) -> str:
        return f"unnest({list_sql})"

    def is_finite(self, value_sql: str) -> str:
        return f"isfinite({value_sql})"

    def wide_integer(self, value_sql: str) -> str:
        return f"{value_sql}::HUGEINT"

    def arg_max(self, value_sql: str, by_sql: str) -> str:
        return f"arg_max({value_sql}, {by_sql})"

    def floor(self, value_sql: str) -> str:
        return f"floor({value_sql})"

    def arg_min(self, value_sql: str, by_sql: str) -> str:
        return f"arg_min({value_sql}, {by_sql})"

    def group_by(self, columns_sql: str) -> str:
        return f"GROUP BY {columns_sql or '()'}"

    def struct_pack(self, fields) -> str:
        return f"struct_pack({', '.join(f'{name} := {value}' for name, value in fields)})"

    def null_struct_list(self, fields) -> str:
        return f"NULL::STRUCT({', '.join(f'{name} {kind}' for name, kind in fields)})[]"

    def list_length(self, list_sql: str) -> str:
        return f"len({list_sql})"

    def int_div(self, a_sql: str, b_sql: str) -> str:
        return f"{a_sql} // {b_sql}"

    def sorted_struct_list_agg(self, fields, where_sql: str) -> str:
        return f"list_sort(coalesce(list({self.struct_pack(fields)}) FILTER (WHERE {where_sql}), []))"

    def join_opaque(self, value_sql: str) -> str | None:
        # DuckDB pushes a filter on a value computed from both sides of a join into the join,
        # as a residual condition evaluated pair by pair; it does not push one through a
        # volatile expression. 0.0 * random() is 0.0 (random() is in [0, 1)), so the value is
        # unchanged (+Infinity too), and no output depends on it.
        return f"({value_sql} + 0.0 * random())"

    def list_filter(self, list_sql: str, var: str, condition_sql: str) -> str:
        return f"list_filter({list_sql}, {self.lambda_(var, condition_sql)})"

    def descending_field(self, structs_sql, field: str) -> str:
        return f"list_transform(list_reverse_sort([{', '.join(structs_sql)}]), {self.lambda_('e', 'e.' + field)})"

    def unnest_struct_list(self, relation: str, key_sql: str, list_sql: str, names) -> str:
        return (f"(SELECT {key_sql}, unnest({list_sql}, recursive := true) FROM {relation})\n"
                f"    AS u({', '.join(names)})")

    def unnest_columns(self, names_sql, values_sql, aliases) -> str:
        return (f",\n    LATERAL (SELECT unnest([{', '.join(names_sql)}]) AS {aliases[0]}, "
                f"unnest([{', '.join(values_sql)}]) AS {aliases[1]}) u")

    def star(self, relation: str, exclude=(), replace=()) -> str:
        out = f"{relation}.*" if relation else "*"
        if exclude:
            out += f" EXCLUDE ({', '.join(exclude)})"
        if replace:
            out += f" REPLACE ({', '.join(f'{expr} AS {name}' for expr, name in replace)})"
        return out


@dataclass(frozen=True)
class SparkDialect(Dialect):
    """Spark SQL's fragments (rwn_sql.engines.spark runs them). Spark has no 128-bit
    integers: the digest stays the hex string md5() gives, and its bits are read from the
    hex digits, so every keyed draw equals DuckDB's (tests/engines/test_spark.py). SELECT *
    EXCLUDE/REPLACE needs an explicit column list there."""
    name: str = "spark"
    NUMERIC = re.compile(r"^(tinyint|smallint|int|bigint|float|double|decimal\(\d+,\d+\))$")

    def numeric_type(self, type_name: str) -> bool:
        return bool(self.NUMERIC.match(type_name))

    def quantile(self, value_sql: str, fraction: float) -> str:
        return f"percentile({value_sql}, {float(fraction)!r})"

    def check_scale(self, scale: str) -> None:
        if scale == "zscore":
            self._lacks("scale='zscore' in RWN yet: the standard deviation is rounded with a data-dependent "
                        "number of digits, which Spark's round() refuses; use scale='minmax' or 'none', or DuckDB")

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

    def is_finite(self, value_sql: str) -> str:
        return f"(NOT isnan({value_sql}) AND abs({value_sql}) < 'Infinity'::DOUBLE)"

    def wide_integer(self, value_sql: str) -> str:
        return f"CAST({value_sql} AS DECIMAL(38, 0))"

    def arg_max(self, value_sql: str, by_sql: str) -> str:
        return f"max_by({value_sql}, {by_sql})"

    def floor(self, value_sql: str) -> str:
        # Spark's floor() returns a BIGINT, which overflows beyond 2^63: x - x % 1 is the exact
        # integer part of x (a DOUBLE), one less for negative non-integers
        v = f"({value_sql})"
        return f"(CASE WHEN {v} % 1.0D < 0 THEN {v} - {v} % 1.0D - 1.0D ELSE {v} - {v} % 1.0D END)"

    def arg_min(self, value_sql: str, by_sql: str) -> str:
        return f"min_by({value_sql}, {by_sql})"

    def group_by(self, columns_sql: str) -> str:
        return f"GROUP BY {columns_sql}" if columns_sql else ""     # Spark has no GROUP BY ()

    def struct_pack(self, fields) -> str:
        return "named_struct(" + ", ".join(f"{_field_literal(name)}, {value}" for name, value in fields) + ")"

    def null_struct_list(self, fields) -> str:
        return f"CAST(NULL AS ARRAY<STRUCT<{', '.join(f'{name}: {kind}' for name, kind in fields)}>>)"

    def list_length(self, list_sql: str) -> str:
        return f"size({list_sql})"

    def int_div(self, a_sql: str, b_sql: str) -> str:
        return f"{a_sql} div {b_sql}"

    # row_number() OVER (ORDER BY id) runs in one task on Spark. Instead: a global sort (range
    # partitioned, so each partition holds a contiguous run of ids) numbered by
    # monotonically_increasing_id() = partition index * 2^33 + place in the partition; the rows
    # before a partition, summed from per-partition counts, turn that into the rank.
    ranks_in_steps = True
    PARTITION_SPAN = 2 ** 33

    def sorted_positions(self, rows_sql: str, order_sql: str) -> str:
        return (f"SELECT monotonically_increasing_id() AS __rwn_pos, struct(*) AS __rwn_row\n"
                f"FROM (SELECT * FROM ({rows_sql}) AS __rwn_rows ORDER BY {order_sql}) AS __rwn_sorted")

    def ranks_from_positions(self, positions: str, rank: str) -> str:
        span = str(self.PARTITION_SPAN)
        part = self.int_div("__rwn_pos", span)
        return (f"WITH __rwn_parts AS (\n"
                f"    SELECT {part} AS part, count(*) AS size FROM {positions} GROUP BY {part}\n"
                f"),\n"
                f"__rwn_offsets AS (\n"
                f"    SELECT a.part, coalesce(sum(b.size), 0) AS rows_before\n"
                f"    FROM __rwn_parts a LEFT JOIN __rwn_parts b ON b.part < a.part\n"
                f"    GROUP BY a.part\n"
                f")\n"
                f"SELECT o.rows_before + p.__rwn_pos % {span} + 1 AS {rank}, p.__rwn_row.*\n"
                f"FROM {positions} p JOIN __rwn_offsets o ON o.part = {self.int_div('p.__rwn_pos', span)}")

    def sorted_struct_list_agg(self, fields, where_sql: str) -> str:
        return f"array_sort(collect_list({self.struct_pack(fields)}) FILTER (WHERE {where_sql}))"

    def list_filter(self, list_sql: str, var: str, condition_sql: str) -> str:
        return f"filter({list_sql}, {self.lambda_(var, condition_sql)})"

    def descending_field(self, structs_sql, field: str) -> str:
        return f"transform(reverse(array_sort(array({', '.join(structs_sql)}))), {self.lambda_('e', 'e.' + field)})"

    def unnest_struct_list(self, relation: str, key_sql: str, list_sql: str, names) -> str:
        return f"(SELECT {key_sql}, inline({list_sql}) FROM {relation})\n    AS u({', '.join(names)})"

    def unnest_columns(self, names_sql, values_sql, aliases) -> str:
        pairs = ", ".join(f"named_struct('{aliases[0]}', {n}, '{aliases[1]}', {v})" for n, v in zip(names_sql, values_sql))
        return f"\n    LATERAL VIEW inline(array({pairs})) u AS {aliases[0]}, {aliases[1]}"


def _string_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _field_literal(name: str) -> str:
    """A struct field name (a plain or a double-quoted identifier) as a string literal."""
    if name.startswith('"'):
        name = name[1:-1].replace('""', '"')
    return "'" + name.replace("'", "''") + "'"


DUCKDB = DuckDBDialect()
SPARK = SparkDialect()


# Spark's names of the types a sensitive column can have, as DuckDB names them reading the
# Parquet Spark writes. Spark's timestamp is an instant, DuckDB's TIMESTAMP is not: left apart.
SPARK_TYPE_NAMES = {"STRING": "VARCHAR", "INT": "INTEGER", "LONG": "BIGINT", "SHORT": "SMALLINT", "BYTE": "TINYINT",
                    "BINARY": "BLOB", "TIMESTAMP_NTZ": "TIMESTAMP"}


def canonical_type_name(name: str) -> str:
    """A column type's name as DuckDB writes it, whichever engine wrote it (a design recorded by
    Spark says string where DuckDB says VARCHAR): upper case, single spaces, no space in
    DECIMAL(p,s)."""
    text = re.sub(r"\s*([(),])\s*", r"\1", " ".join(str(name).split()).upper())
    return SPARK_TYPE_NAMES.get(text, text)


def same_type_name(a: str, b: str) -> bool:
    """Do the type names `a` and `b` (DuckDB's or Spark's) name the same column type?"""
    return canonical_type_name(a) == canonical_type_name(b)


def is_spark(obj) -> bool:
    """Is `obj` a SparkSession? (By class name: pyspark is an optional extra.)"""
    return any(c.__name__ == "SparkSession" for c in type(obj).__mro__)


def require_duckdb(con, what: str) -> None:
    """Refuse a SparkSession where only DuckDB is supported, naming the call."""
    if is_spark(con):
        raise UnsupportedByEngine(
            f"engine spark does not support {what}: evaluation, tuning, the baselines (rank_swap, mdav), the SQL "
            f"macros (install) and reports run on DuckDB; pass a DuckDB connection (it reads the Parquet a "
            f"Spark run writes)")


def source_from_table(name: str, dialect: Dialect = DUCKDB) -> str:
    """A source fragment for a table or view named by `name` (resolved by the engine)."""
    return dialect.table_by_name(quote_literal(name))
