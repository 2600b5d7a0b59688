"""The release database's published limits and the analysts' query grammar, as plain constants:
rwn_sql.rp.release.release_db and rwn_sql.rp.release.analyst enforce them, and the CLI's --help quotes them
without importing either (their imports, numpy and scipy among them, would slow every CLI
call)."""

# The analysts' queries rwn_sql.query / rwn-sql query / rwn_query answer (rwn_sql.rp.release.analyst)
QUERY_GRAMMAR = ("supported: SELECT [g1, g2, ...,] A FROM <release table> [WHERE <predicate>] [GROUP BY g1, g2, ...] "
                 "[HAVING A > n ...] [ORDER BY g | A [DESC], ...] [LIMIT n], where the aggregate A is COUNT(*), "
                 "SUM(x) or AVG(x) of a public numeric column x (over the records where x is not NULL), the g are "
                 "public columns or the sensitive attribute <SA>, and <predicate> combines with AND / OR / NOT "
                 "comparisons (=, <>, <, <=, >, >=), IN lists, BETWEEN, [NOT] LIKE / ILIKE 'pattern' and "
                 "IS [NOT] NULL over public columns and literals, plus at most one top-level AND condition "
                 "<SA> = 'value' or <SA> IN ('v1', 'v2', ...)")
# Bounds on an analyst's query, checked before its parse cost can grow with them (issue 22, F5):
# the length first, then IN lists and nesting on sqlglot's tokens. 64 KiB holds any hand-written
# or generated query (a 5,000-value IN list of 10-character codes fits), and sqlglot's parse
# time grows with the length. The parser recurses about 22 Python frames per parenthesis, so deeper
# than about 40 levels it fails on Python's recursion limit anyway.
MAX_QUERY_CHARS = 65_536
MAX_IN_LIST = 5_000
MAX_NESTING = 32
QUERY_LIMITS = (f"limits: at most {MAX_QUERY_CHARS:,} characters, {MAX_IN_LIST:,} values per IN list and "
                f"{MAX_NESTING} levels of nesting (parentheses and NOT)")

# Bytes, not only counts: DuckDB compresses repeated text, so a 1 MB file can hold a domain of
# 300 values of 1 MB each. The sizes are computed by SQL (metadata_size_sql) before any value
# is fetched; a release file is first read on a connection limited to METADATA_MEMORY_LIMIT,
# so SQL that must hold a whole crafted list fails there, not in the reader's memory.
MAX_TEXT_BYTES = 4_096            # each name, type and domain value
MAX_METADATA_BYTES = 2 << 20      # all text of the metadata rows together (100,000 values of 20 bytes)
MAX_TRIALS_ROWS = 1_000_000       # one row per personal-group size
METADATA_MEMORY_LIMIT = "64MiB"
METADATA_LIMITS = (f"at most {MAX_TEXT_BYTES:,} bytes per name or domain value, {MAX_METADATA_BYTES >> 20} MiB of "
                   f"metadata text and {MAX_TRIALS_ROWS:,} trials rows, read under a {METADATA_MEMORY_LIMIT} "
                   f"memory limit")
