"""Is a SQL text one statement? Judged on sqlglot's tokens: nothing is parsed or executed.
Used wherever user text becomes part of SQL (sources, analysts' queries, where= predicates)."""
from __future__ import annotations

import sqlglot
from sqlglot.tokens import TokenType

from .errors import RWNError


class SeveralStatements(RWNError):
    """The text holds more than one statement."""


def tokens_of(sql: str, what: str) -> list:
    """sqlglot's tokens of `sql` (DuckDB), a tokenizer error as RWNError."""
    if not isinstance(sql, str):
        raise RWNError(f"{what} must be a SQL string, got {type(sql).__name__}")
    try:
        return sqlglot.tokenize(sql, read="duckdb")
    except sqlglot.errors.SqlglotError as exc:
        raise RWNError(f"cannot parse {what}: {exc}") from None


def single_statement(sql: str, what: str, trailing: bool = True, tokens: list | None = None) -> None:
    """Refuse text holding more than one statement: a ';' outside strings, identifiers and
    comments is allowed only at the end (and not at all with trailing=False). `tokens`: those
    of `sql` when the caller has them."""
    tokens = tokens_of(sql, what) if tokens is None else tokens
    ends = [i for i, t in enumerate(tokens) if t.token_type == TokenType.SEMICOLON]
    if ends and (not trailing or len(ends) > 1 or ends[0] != len(tokens) - 1):
        raise SeveralStatements(f"several statements in {what} (a ';' before its end)")
