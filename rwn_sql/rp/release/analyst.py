"""Analysts' count queries over a release database, rewritten into the reconstruction.

An analyst writes the count query they would run on the original data,

    SELECT sex, COUNT(*) FROM adult WHERE occupation = 'Sales' AND race = 'Black' GROUP BY sex

and gets the unbiased estimate computed from the perturbed release (docs/METHODS.md
section 2); SUM(x) and AVG(x) of a public numeric column x likewise (rp_sql.measure_estimates_sql).
The estimate is valid only when a predicate over the exact public columns selects the
records S and the sensitive attribute (SA) enters only as the value set V counted among
them, so the accepted grammar (release_db.QUERY_GRAMMAR) is deliberately small and
everything else is refused with a short message naming the construct. Queries are parsed with sqlglot and
checked on the syntax tree, never by pattern matching the text.

Security: the text is refused if it holds more than one statement (checked on sqlglot's
tokens before parsing), every node of the tree must be of a whitelisted type (NODES), and the
SQL that runs is rendered here from the validated parts only: names through quote_ident,
strings through quote_literal, numbers as checked digits. It runs on a separate connection
that sees only the release, read-only, with external access disabled and the configuration
locked (rwn_sql.rp.release.query_run).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.tokens import TokenType

from ..core import sqlgen as rp_sql
from ... import statements
from ...engines.dialects import DUCKDB, SPARK, Dialect
from ...errors import RWNError
from ...identifiers import display_name, float_literal, quote_ident, quote_literal
from .release_db import MAX_IN_LIST, MAX_NESTING, MAX_QUERY_CHARS, QUERY_GRAMMAR, QUERY_LIMITS, ReleaseMeta

__all__ = ["Rewritten", "rewrite", "check_predicate"]

SUPPORTED = QUERY_GRAMMAR
COMPARISONS = {exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
PATTERNS = {exp.Like: "LIKE", exp.ILike: "ILIKE"}
ALLOWED_CLAUSES = {"expressions", "from_", "where", "group", "having", "order", "limit"}
CLAUSE_NAMES = {"distinct": "SELECT DISTINCT", "having": "HAVING clause", "order": "ORDER BY clause",
                "limit": "LIMIT clause", "offset": "OFFSET clause", "qualify": "QUALIFY clause",
                "windows": "WINDOW clause", "with_": "WITH clause (common table expressions)",
                "joins": "joins", "laterals": "LATERAL joins", "sample": "sampling", "pivots": "PIVOT"}
ESTIMATE_COLUMNS = ("released_count", "group_size", "estimate", "std_error", "ci_low", "ci_high",
                    "estimate_clipped")
MEASURE_FUNCTIONS = {exp.Sum: "sum", exp.Avg: "avg"}      # SUM(x), AVG(x) of a public numeric column
OUTPUT_COLUMNS = {"count": ESTIMATE_COLUMNS, **rp_sql.MEASURE_COLUMNS}
# The node types a predicate may contain, each with the arguments it may carry. A positive
# list: casts, functions, subqueries and anything sqlglot adds later are refused.
PREDICATE_NODES = {
    exp.And: {"this", "expression"}, exp.Or: {"this", "expression"}, exp.Not: {"this"}, exp.Paren: {"this"},
    **{kind: {"this", "expression"} for kind in COMPARISONS},
    exp.In: {"this", "expressions"}, exp.Between: {"this", "low", "high"}, exp.Is: {"this", "expression"},
    **{kind: {"this", "expression", "negate"} for kind in PATTERNS},     # negate: x NOT LIKE 'p' 
    exp.Column: {"this", "table"}, exp.Identifier: {"this", "quoted"}, exp.Literal: {"this", "is_string"},
    exp.Neg: {"this"}, exp.Null: set(), exp.Boolean: {"this"},
}
QUERY_NODES = {
    **PREDICATE_NODES,
    exp.Select: ALLOWED_CLAUSES, exp.From: {"this"}, exp.Table: {"this", "db", "alias"},
    exp.TableAlias: {"this"}, exp.Where: {"this"}, exp.Group: {"expressions"}, exp.Alias: {"this", "alias"},
    exp.Count: {"this", "big_int"}, exp.Star: set(), exp.Sum: {"this"}, exp.Avg: {"this"},
    exp.Having: {"this"}, exp.Order: {"expressions"}, exp.Ordered: {"this", "desc", "nulls_first"},
    exp.Limit: {"expression"},
}
NUMBER = re.compile(r"(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
NUL = "\x00"
TOO_DEEP = ("the query is nested too deeply to check (a chain of several hundred OR / AND terms is that deep); "
            "write column IN (...) for a list of values, or simplify it")


@dataclass(frozen=True)
class Rewritten:
    """A rewritten count query. Its rows always have the same columns: the grouped public
    columns, the SA's values under the SA's name when grouped by it, then ESTIMATE_COLUMNS and micro_reconstruction
    (per row: its records form a single personal group)."""
    sql: str
    micro: bool | None               # some output row is a single personal group; None until run
    exact: bool                      # no SA involved: the count is exact
    group_by: tuple[str, ...]        # the grouped columns as the release spells them (SA included)
    values: tuple[str, ...] | None   # the SA value set of the WHERE, None without an SA condition
    note: str
    aggregate: str = "count"         # count, sum or avg
    column: str | None = None        # the column of SUM / AVG


@dataclass(frozen=True)
class Measure:
    """The query's aggregate: COUNT(*), or SUM / AVG of a public numeric column."""
    kind: str                        # count, sum or avg
    column: str | None               # the column of SUM / AVG
    alias: str | None                # its alias in the SELECT list

    @property
    def label(self) -> str:
        return "COUNT(*)" if self.kind == "count" else f"{self.kind.upper()}({display_name(self.column)})"


MAX_LIMIT = 2 ** 63 - 1          # the largest LIMIT both engines take (BIGINT)


def refuse(problem: str) -> RWNError:
    return RWNError(f"unsupported query: {problem} (supported forms: rwn-sql query --help)")


def snippet(node: exp.Expression) -> str:
    """A node as the message shows it (sqlglot's printer, for messages only, never executed)."""
    try:
        text = node.sql(dialect="duckdb")
    except Exception:            # a node the printer cannot print: its type names it
        text = type(node).__name__
    return text if len(text) <= 80 else text[:77] + "..."


# a NOT that starts an operand (not x NOT IN / IS NOT NULL) nests the operand under it
PREFIX_NOT_AFTER = {TokenType.L_PAREN, TokenType.AND, TokenType.OR, TokenType.NOT, TokenType.WHERE,
                    TokenType.HAVING, TokenType.SELECT, TokenType.COMMA}


def bounded(sql, what: str = "the query") -> list:
    """Refuse a text longer than MAX_QUERY_CHARS before anything reads it, then IN lists longer
    than MAX_IN_LIST and nesting deeper than MAX_NESTING on the tokens, before any syntax tree
    is built. Returns the tokens."""
    if isinstance(sql, str) and len(sql) > MAX_QUERY_CHARS:
        raise RWNError(f"{what} has {len(sql):,} characters, more than the limit of {MAX_QUERY_CHARS:,}; "
                       f"shorten it ({QUERY_LIMITS})")
    tokens = statements.tokens_of(sql, what)
    frames = [[False, 0, 0]]          # per open parenthesis: an IN list?, its values, NOT chain
    previous = None
    for token in tokens:
        kind = token.token_type
        frame = frames[-1]
        if kind == TokenType.L_PAREN:
            frames.append([previous == TokenType.IN, 1, 0])
        elif kind == TokenType.R_PAREN and len(frames) > 1:
            frames.pop()
        elif kind == TokenType.COMMA and frame[0]:
            frame[1] += 1
            if frame[1] > MAX_IN_LIST:
                raise RWNError(f"{what} has an IN list of more than {MAX_IN_LIST:,} values, the limit; "
                               f"split the query or group by the column ({QUERY_LIMITS})")
        elif kind in (TokenType.AND, TokenType.OR, TokenType.COMMA):
            frame[2] = 0
        elif kind == TokenType.NOT and (previous is None or previous in PREFIX_NOT_AFTER):
            frame[2] += 1
        if len(frames) - 1 + sum(f[2] for f in frames) > MAX_NESTING:
            raise RWNError(f"{what} is nested too deeply: deeper than {MAX_NESTING} levels (parentheses and NOT), "
                           f"the limit; simplify it ({QUERY_LIMITS})")
        previous = kind
    return tokens


def single_statement(sql: str, what: str = "the query", trailing: bool = True, tokens: list | None = None) -> None:
    """statements.single_statement, with a query's refusal saying what is supported."""
    try:
        statements.single_statement(sql, what, trailing, tokens)
    except statements.SeveralStatements as exc:
        if what == "the query":
            raise refuse(f"{exc}; give one query") from None
        raise


def check_nodes(tree: exp.Expression, allowed: dict) -> None:
    """Every node of `tree` is of an allowed type and carries only allowed arguments."""
    for node in tree.walk():
        kind = type(node)
        if kind not in allowed:
            raise refuse(f"{kind.__name__} ({snippet(node)}) is not allowed")
        extra = [k for k, v in node.args.items() if k not in allowed[kind] and v not in (None, False, [])]
        if extra:
            raise refuse(f"{kind.__name__} with {extra[0]} ({snippet(node)}) is not allowed")


def parse(sql: str) -> exp.Select:
    """The single SELECT statement of `sql`, free of clauses and subqueries we cannot rewrite."""
    single_statement(sql, tokens=bounded(sql))
    try:
        trees = [t for t in sqlglot.parse(sql, read="duckdb") if t is not None]
    except RecursionError:
        raise refuse(TOO_DEEP) from None
    except sqlglot.errors.ParseError as exc:
        err = exc.errors[0] if exc.errors else {}
        where = f" (line {err['line']}, column {err['col']})" if "line" in err else ""
        raise RWNError(f"cannot parse the query{where}: {err.get('description', exc)}") from None
    except sqlglot.errors.SqlglotError as exc:
        raise RWNError(f"cannot parse the query: {exc}") from None
    if len(trees) != 1:
        raise refuse(f"{len(trees)} statements; give one query")
    tree = trees[0]
    if isinstance(tree, exp.Block):
        raise refuse("several statements; give one query")
    if isinstance(tree, exp.SetOperation):
        raise refuse("set operations (UNION, INTERSECT, EXCEPT)")
    if not isinstance(tree, exp.Select):
        raise refuse(f"a {tree.key.upper()} statement; only SELECT count queries are answered")
    for clause, value in tree.args.items():
        if value and clause not in ALLOWED_CLAUSES:
            raise refuse(CLAUSE_NAMES.get(clause, f"{clause.upper()} clause"))
    if any(node is not tree for node in tree.find_all(exp.Select)):
        raise refuse("subqueries")
    if tree.find(exp.Window):
        raise refuse("window functions (OVER)")
    return tree


def source(select: exp.Select) -> exp.Table:
    """The table of the FROM clause, which must be a plain [schema.]table name."""
    from_ = select.args.get("from_")
    if from_ is None:
        raise refuse("no FROM clause; count from the release table")
    table = from_.this
    if not isinstance(table, exp.Table) or not isinstance(table.this, exp.Identifier):
        raise refuse(f"FROM {snippet(from_.this)}; FROM must name the release table")
    extra = [k for k, v in table.args.items() if v and k not in ("this", "db", "alias")]
    if extra:
        raise refuse(f"FROM {snippet(table)}: {extra[0]} is not supported on the table, "
                     "name it as [database.]table")
    if table.args.get("alias") is not None and table.args["alias"].columns:
        raise refuse("column aliases on the table")
    return table


@dataclass(frozen=True)
class Scope:
    """What column references may name: the release's columns and the table's qualifier."""
    columns: tuple[str, ...]
    qualifier: str | None
    label: str                       # how messages name the release, e.g. table "adult"

    def column(self, node: exp.Column) -> str:
        """The release's spelling of a referenced column (DuckDB names are case-insensitive)."""
        if isinstance(node.this, exp.Star):
            raise refuse(f"{snippet(node)}; select the grouped columns and COUNT(*)")
        if node.args.get("db") is not None or node.args.get("catalog") is not None:
            raise refuse(f"column {snippet(node)}: qualify columns by the table name only")
        if node.table and (self.qualifier is None or node.table.lower() != self.qualifier.lower()):
            raise refuse(f"column {snippet(node)} names table {node.table!r}, not {self.qualifier!r}")
        for c in self.columns:
            if c.lower() == node.name.lower():
                return c
        shown = display_name(node.name.replace(NUL, "\\0"))
        raise RWNError(f"unknown column {shown}: the release {self.label} has columns "
                       f"{', '.join(display_name(c) for c in self.columns)}")


def is_count_star(node: exp.Expression) -> bool:
    return isinstance(node, exp.Count) and not node.expressions and (
        isinstance(node.this, exp.Star) or (isinstance(node.this, exp.Literal)
                                            and not node.this.is_string and node.this.name == "1"))


def measured_column(node: exp.Expression, scope: Scope) -> str:
    """The column of SUM(x) / AVG(x): one plain column, not DISTINCT, not an expression."""
    inner = node.this
    if isinstance(inner, exp.Distinct):
        raise refuse(f"{snippet(node)}: DISTINCT inside an aggregate")
    if not isinstance(inner, exp.Column) or [k for k, v in node.args.items() if v and k != "this"]:
        raise refuse(f"{snippet(node)}; {node.key.upper()} takes one public numeric column")
    return scope.column(inner)


def selected(select: exp.Select, scope: Scope) -> tuple[tuple[str, ...], Measure]:
    """The selected columns in order and the single aggregate: COUNT(*), SUM(x) or AVG(x)."""
    columns, counts = [], []
    for item in select.expressions:
        node = item.this if isinstance(item, exp.Alias) else item
        if is_count_star(node):
            counts.append(Measure("count", None, item.alias or None))
        elif type(node) in MEASURE_FUNCTIONS:
            counts.append(Measure(MEASURE_FUNCTIONS[type(node)], measured_column(node, scope), item.alias or None))
        elif isinstance(node, exp.Column):
            if isinstance(item, exp.Alias):
                raise refuse(f"the alias in {snippet(item)}; grouped columns keep their names")
            name = scope.column(node)
            if name in columns:
                raise refuse(f"column {display_name(name)} is selected twice")
            columns.append(name)
        elif isinstance(node, exp.Count):
            raise refuse(f"{snippet(node)}; only COUNT(*) (or COUNT(1)) is answered")
        elif isinstance(node, exp.Filter):
            raise refuse(f"{snippet(node)}; put the condition in the WHERE clause")
        elif isinstance(node, exp.AggFunc):
            raise refuse(f"the aggregate {snippet(node)}; only COUNT(*), SUM(x) and AVG(x) are answered")
        elif isinstance(node, exp.Star):
            raise refuse("SELECT *; select the grouped columns and COUNT(*)")
        elif isinstance(node, exp.Func):
            raise refuse(f"the function {snippet(node)}; functions on columns are not answered")
        else:
            raise refuse(f"{snippet(node)} in the SELECT list")
    if len(counts) != 1:
        raise refuse(f"{len(counts)} aggregates in the SELECT list (COUNT(*) appears "
                     f"{sum(c.kind == 'count' for c in counts)} times); give exactly one")
    return tuple(columns), counts[0]


def grouped(select: exp.Select, scope: Scope) -> set[str]:
    """The GROUP BY columns; only plain column names, so each output row names its group."""
    group = select.args.get("group")
    if group is None:
        return set()
    for kind in ("all", "rollup", "cube", "grouping_sets", "totals"):
        if group.args.get(kind):
            raise refuse(f"GROUP BY {kind.upper().replace('_', ' ')}; name the grouped columns")
    names = set()
    for node in group.expressions:
        if not isinstance(node, exp.Column):
            raise refuse(f"GROUP BY {snippet(node)}; group by column names only")
        names.add(scope.column(node))
    return names


def group_columns(select: exp.Select, scope: Scope) -> tuple[tuple[str, ...], Measure]:
    """The grouped columns in SELECT order: they must be exactly the selected columns."""
    columns, measure = selected(select, scope)
    groups = grouped(select, scope)
    for c in columns:
        if c not in groups:
            raise refuse(f"column {display_name(c)} is selected but not in GROUP BY")
    unselected = sorted(groups - set(columns))
    if unselected:
        raise refuse(f"column {display_name(unselected[0])} is in GROUP BY but not selected; select it so "
                     "each output row names its group")
    return columns, measure


def conjuncts(node: exp.Expression) -> list[exp.Expression]:
    """The top-level AND conjuncts of a predicate, looking through parentheses."""
    node = node.unnest()
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    return [node]


def literal_sql(node: exp.Expression) -> str | None:
    """SQL of a constant (string, number, -number, NULL, TRUE/FALSE) rendered from its value,
    or None when `node` is not one. Casts and typed literals are not constants here."""
    if isinstance(node, exp.Literal):
        if node.is_string:
            return quote_literal(node.this)
        return node.this if NUMBER.fullmatch(node.this) else None
    if isinstance(node, exp.Neg):
        inner = literal_sql(node.this) if isinstance(node.this, exp.Literal) and not node.this.is_string else None
        return None if inner is None else "-" + inner
    if isinstance(node, exp.Null):
        return "NULL"
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    return None


def operand_sql(node: exp.Expression, scope: Scope) -> str:
    if isinstance(node, exp.Column):
        return quote_ident(scope.column(node))
    refuse_cast(node)
    if isinstance(node, exp.Func):
        raise refuse(f"the function {snippet(node)} in the WHERE clause; functions on columns are not answered")
    text = literal_sql(node)
    if text is None:
        raise refuse(f"{snippet(node)} in the WHERE clause; compare columns with literals")
    return text


def refuse_cast(node: exp.Expression) -> None:
    if isinstance(node, exp.Cast):          # TryCast and typed literals (DATE '...') are casts too
        raise refuse(f"the cast {snippet(node)}: casts are not answered; write the value as a plain string "
                     "or number literal (DuckDB compares it with the column's type)")


def constant_sql(node: exp.Expression, where: str) -> str:
    refuse_cast(node)
    text = literal_sql(node)
    if text is None:
        raise refuse(f"{snippet(node)} in {where}")
    return text


def predicate_sql(node: exp.Expression, scope: Scope) -> str:
    """The SQL of a public predicate, rendered from its checked parts only (the caller has
    made sure the SA does not occur in `node`). Anything outside the grammar is refused."""
    if isinstance(node, (exp.And, exp.Or)):
        op = "AND" if isinstance(node, exp.And) else "OR"
        return f"({predicate_sql(node.this, scope)} {op} {predicate_sql(node.expression, scope)})"
    if isinstance(node, exp.Not):
        return f"(NOT {predicate_sql(node.this, scope)})"
    if isinstance(node, exp.Paren):
        return predicate_sql(node.this, scope)
    if type(node) in COMPARISONS:
        return f"{operand_sql(node.this, scope)} {COMPARISONS[type(node)]} {operand_sql(node.expression, scope)}"
    if isinstance(node, exp.In) and not any(v for k, v in node.args.items() if k not in ("this", "expressions")):
        items = ", ".join(constant_sql(v, "an IN list; IN lists hold literals") for v in node.expressions)
        return f"{operand_sql(node.this, scope)} IN ({items})"
    if isinstance(node, exp.Between) and not node.args.get("symmetric"):
        low, high = (constant_sql(node.args[bound], "a BETWEEN bound; BETWEEN takes literals")
                     for bound in ("low", "high"))
        return f"{operand_sql(node.this, scope)} BETWEEN {low} AND {high}"
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        return f"{operand_sql(node.this, scope)} IS NULL"
    if type(node) in PATTERNS and isinstance(node.this, exp.Column):
        if not (isinstance(node.expression, exp.Literal) and node.expression.is_string):
            raise refuse(f"the pattern of {snippet(node)}; LIKE and ILIKE take a string literal")
        test = f"{operand_sql(node.this, scope)} {PATTERNS[type(node)]} {constant_sql(node.expression, 'a pattern')}"
        return f"(NOT {test})" if node.args.get("negate") else test
    raise refuse(f"the condition {snippet(node)}")


def render_public(parts: list[exp.Expression], scope: Scope) -> str | None:
    """The WHERE text of the public conjuncts, whitelisted node by node, then rendered."""
    try:
        text = " AND ".join(predicate_sql(p, scope) for p in parts) or None
    except RWNError:
        raise
    except (TypeError, ValueError) as exc:        # a NUL character in a name or string
        raise RWNError(f"unsupported query: {exc}") from None
    for p in parts:              # the net under predicate_sql's own checks: nothing unlisted
        check_nodes(p, PREDICATE_NODES)
    return text


def check_predicate(where: str, columns, sensitive: str, label: str) -> str:
    """A user's `where=` text over `columns` (public columns) as SQL rendered from its checked
    parts: one predicate of the same grammar as a query's public WHERE, never the SA."""
    single_statement(where, "the where= predicate", trailing=False, tokens=bounded(where, "the where= predicate"))
    try:
        tree = sqlglot.parse_one(where, read="duckdb", into=exp.Condition)
    except RecursionError:
        raise RWNError("the where= predicate is nested too deeply to check; simplify it") from None
    except sqlglot.errors.SqlglotError as exc:
        raise RWNError(f"cannot parse the where= predicate: {str(exc).splitlines()[0]}") from None
    scope = Scope(tuple(columns) + (sensitive,), None, label)
    if any(scope.column(c) == sensitive for c in tree.find_all(exp.Column)):
        raise RWNError(f"where=: the predicate names the sensitive attribute {display_name(sensitive)}; "
                       "select records by public columns only (for a set of sensitive values use values=)")
    try:
        return render_public(conjuncts(tree), scope)
    except RecursionError:
        raise RWNError("the where= predicate is nested too deeply to check; simplify it") from None


def predicate_columns(where: str) -> list[str]:
    """The column names a where= predicate mentions (none when it does not parse: check_predicate
    then says why)."""
    try:
        tree = sqlglot.parse_one(where, read="duckdb", into=exp.Condition)
    except (RecursionError, sqlglot.errors.SqlglotError):
        return []
    return list(dict.fromkeys(c.name for c in tree.find_all(exp.Column)))


def uses(node: exp.Expression, column: str, scope: Scope) -> bool:
    return any(scope.column(c) == column for c in node.find_all(exp.Column))


def sensitive_values(node: exp.Expression, scope: Scope, meta: ReleaseMeta) -> tuple[str, ...]:
    """The value set V of a top-level SA condition `SA = 'v'` or `SA IN ('v1', ...)`,
    without repeats (|V| enters the estimate), each checked against the published domain."""
    sa = display_name(meta.sensitive)
    if isinstance(node, (exp.Or, exp.Not, exp.Xor)):
        raise refuse(f"the condition {snippet(node)} puts the sensitive attribute {sa} inside "
                     f"{node.key.upper()}: the public part of the predicate must be separable from the "
                     f"SA condition, so {sa} may only appear as a top-level AND condition {sa} = 'value' "
                     f"or {sa} IN (...) (for NOT IN / <>, list the other values with IN)")
    literals = None
    if isinstance(node, exp.EQ):
        for col, lit in ((node.this, node.expression), (node.expression, node.this)):
            if isinstance(col, exp.Column) and scope.column(col) == meta.sensitive:
                literals = [lit]
    elif (isinstance(node, exp.In) and isinstance(node.this, exp.Column)
          and scope.column(node.this) == meta.sensitive
          and not any(v for k, v in node.args.items() if k not in ("this", "expressions"))):
        literals = node.expressions
    if literals is None or not all(isinstance(v, exp.Literal) and literal_sql(v) for v in literals):
        raise refuse(f"the condition {snippet(node)} on the sensitive attribute {sa}; it may "
                     f"only appear as {sa} = 'value' or {sa} IN ('v1', 'v2', ...) with literal values")
    check_nodes(node, PREDICATE_NODES)
    values = tuple(dict.fromkeys(v.name for v in literals))
    unknown = [v for v in values if v not in meta.domain]
    if unknown:
        raise RWNError(f"{', '.join(map(quote_literal, unknown))} not in the published domain of {sa} "
                       f"({', '.join(map(quote_literal, meta.domain))}); the SA condition must name domain values")
    return values


def exact_sql(release_sql: str, groups: tuple[str, ...], where_sql: str | None, measure: Measure | None = None) -> str:
    """A plain count (or SUM / AVG) with the reconstruction's columns: nothing is estimated,
    so the estimate, its interval (and clipped value) are the plain aggregate and the error is 0."""
    g = [quote_ident(c) for c in groups]
    zero = f"{float_literal(0.0)} AS std_error"
    if measure is None or measure.kind == "count":
        n = "CAST(count(*) AS DOUBLE)"
        cols = g + ["count(*) AS released_count", "count(*) AS group_size", f"{n} AS estimate", zero,
                    f"{n} AS ci_low", f"{n} AS ci_high", f"{n} AS estimate_clipped", "false AS micro_reconstruction"]
    else:
        x = f"CAST({quote_ident(measure.column)} AS DOUBLE)"
        v = f"{measure.kind}({x})"
        cols = g + [f"{v} AS released_{measure.kind}", "count(*) AS group_size"] \
            + (["CAST(count(*) AS DOUBLE) AS count_estimate"] if measure.kind == "avg" else []) \
            + [f"{v} AS estimate", zero, f"{v} AS ci_low", f"{v} AS ci_high", "false AS micro_reconstruction"]
        where_sql = " AND ".join(([f"({where_sql})"] if where_sql else []) + [f"{quote_ident(measure.column)} IS NOT NULL"])
    where = f"\nWHERE {where_sql}" if where_sql else ""
    group = f"\nGROUP BY {', '.join(g)}\nORDER BY {', '.join(g)}" if g else ""
    return "SELECT " + ",\n    ".join(cols) + f"\nFROM {release_sql}{where}{group}"


def answer_clauses(select: exp.Select, text: str, scope: Scope, columns, measure: Measure,
                   meta: ReleaseMeta) -> str:
    """HAVING, ORDER BY and LIMIT over the answer's rows: the aggregate (COUNT(*), SUM(x) or
    AVG(x), or its alias) means the estimate, a grouped column its output column; rendered
    from the checked parts only. The group columns break ties, so LIMIT picks the same rows
    every time."""
    alias = measure.alias
    having, order, limit = (select.args.get(k) for k in ("having", "order", "limit"))
    if not (having or order or limit):
        return text
    outputs = {c: quote_ident(value_column(meta) if c == meta.sensitive else c) for c in columns}

    def target(node, clause):
        if measure.kind == "count" and is_count_star(node):
            return "estimate"
        if type(node) in MEASURE_FUNCTIONS and MEASURE_FUNCTIONS[type(node)] == measure.kind \
                and measured_column(node, scope) == measure.column:
            return "estimate"
        if isinstance(node, exp.AggFunc):
            raise refuse(f"{snippet(node)} in the {clause}; it may name the selected {measure.label} only")
        if isinstance(node, exp.Column) and alias and not node.table and node.name.lower() == alias.lower():
            return "estimate"
        if isinstance(node, exp.Column):
            column = scope.column(node)
            if column in outputs:
                return outputs[column]
            raise refuse(f"{clause} names {display_name(column)}, which is not selected")
        raise refuse(f"{snippet(node)} in the {clause}; it takes {measure.label} (the estimate) or selected columns")

    def condition(node):
        node = node.unnest()
        if isinstance(node, (exp.And, exp.Or)):
            return f"({condition(node.this)} {'AND' if isinstance(node, exp.And) else 'OR'} {condition(node.expression)})"
        if isinstance(node, exp.Not):
            return f"(NOT {condition(node.this)})"
        if type(node) in COMPARISONS:
            number = literal_sql(node.expression)
            if number is None or number in ("NULL", "true", "false") or number.startswith("'"):
                raise refuse(f"the HAVING condition {snippet(node)}; compare {measure.label} with a number")
            return f"{target(node.this, 'HAVING clause')} {COMPARISONS[type(node)]} {number}"
        raise refuse(f"the HAVING condition {snippet(node)}; compare {measure.label} with a number")

    out = f"SELECT * FROM (\n{text}\n) AS __rwn_answer"
    if having:
        out += f"\nWHERE {condition(having.this)}"
    ordered = [(target(item.this, "ORDER BY clause"), "DESC" if item.args.get("desc") else "ASC")
               for item in (order.expressions if order else [])]
    named = {name for name, _ in ordered}
    keys = [f"{name} {way}" for name, way in ordered] + [outputs[c] for c in columns if outputs[c] not in named]
    if keys:
        out += f"\nORDER BY {', '.join(keys)}"
    if limit:
        count = limit.expression
        if not (isinstance(count, exp.Literal) and not count.is_string and count.this.isdigit()):
            raise refuse(f"LIMIT {snippet(count)}; LIMIT takes a whole number")
        # beyond BIGINT the engines refuse the literal; no release has that many rows to keep
        out += f"\nLIMIT {min(int(count.this), MAX_LIMIT)}"
    return out


def micro_sql(meta: ReleaseMeta, release_sql: str, groups: tuple[str, ...], where_sql: str | None):
    """Per output row, whether its records form a single personal group: the flag and the join
    that computes it. Decided on the release's data, not the predicate's syntax, so every
    spelling that pins the public attributes (BETWEEN 'a' AND 'a', NOT (x <> 'a'), ...) is
    caught. The public predicate depends on public columns only, so the selected records are
    whole personal groups and "one distinct public combination" means exactly one group."""
    if not meta.public:
        return "true", ""          # no public column: the whole release is one personal group
    g = [quote_ident(c) for c in groups]
    where = f" WHERE {where_sql}" if where_sql else ""
    personal = (f"(SELECT {''.join(x + ', ' for x in g)}count(*) AS personal_groups FROM "
                f"(SELECT DISTINCT {', '.join(quote_ident(c) for c in meta.public)} FROM {release_sql}{where}) "
                f"AS pg{' GROUP BY ' + ', '.join(g) if g else ''}) AS personal")
    on = " AND ".join(f"estimates.{x} IS NOT DISTINCT FROM personal.{x}" for x in g)
    join = f"\nLEFT JOIN {personal} ON {on}" if g else f"\nCROSS JOIN {personal}"
    return "coalesce(personal.personal_groups = 1, false)", join


def reconstruction_sql(meta: ReleaseMeta, release_sql: str, groups: tuple[str, ...], where_sql: str | None,
                       values: tuple[str, ...] | None, by_value: bool, dialect: Dialect = DUCKDB,
                       measure: Measure | None = None) -> str:
    """rp_sql.estimates_sql (for SUM / AVG rp_sql.measure_estimates_sql), plus the per-row
    micro_reconstruction flag and, when grouped by the SA under an SA condition, only the
    rows of the asked values."""
    typed = [f"CAST({quote_literal(v)} AS {meta.sensitive_type})" for v in values] if values else None
    design = (meta.trials_sql, meta.public) if meta.enforced and meta.trials_sql else None
    kind = measure.kind if measure is not None else "count"
    value = "value"
    if kind == "count":
        inner = rp_sql.estimates_sql(release_sql, meta.sensitive, meta.p_sql(), meta.domain_sql(dialect),
                                     group_by=groups, where_sql=where_sql, values=None if by_value else typed,
                                     design=design, dialect=dialect)
    else:
        inner = rp_sql.measure_estimates_sql(release_sql, meta.sensitive, measure.column, kind, meta.public,
                                             meta.p_sql(), meta.domain_sql(dialect), group_by=groups,
                                             where_sql=where_sql, values=None if by_value else typed,
                                             design=design, dialect=dialect)
        where_sql = " AND ".join(([f"({where_sql})"] if where_sql else [])
                                 + [f"{quote_ident(measure.column)} IS NOT NULL"])
        value = "__rwn_value"
    flag, join = micro_sql(meta, release_sql, groups, where_sql)
    keep = f"\nWHERE estimates.{value} IN ({', '.join(typed)})" if by_value and typed else ""
    order = [f"estimates.{quote_ident(c)}" for c in groups] + ([f"estimates.{value}"] if by_value else [])
    columns = "estimates.*"
    if by_value:        # the SA's values under its own name (unless that name is an output column's)
        name = quote_ident(value_column(meta))
        columns = ", ".join([f"estimates.{quote_ident(c)}" for c in groups] + [f"estimates.{value} AS {name}"]
                            + [f"estimates.{c}" for c in OUTPUT_COLUMNS[kind]])
    return (f"SELECT {columns}, {flag} AS micro_reconstruction\n"
            f"FROM (\n{inner.rstrip()}\n) AS estimates{join}{keep}"
            + (f"\nORDER BY {', '.join(order)}" if order else ""))


def value_column(meta: ReleaseMeta) -> str:
    """The output column of the SA's values: the SA's own name, or `value` where that name
    is taken by an output column."""
    taken = {c.lower() for c in ESTIMATE_COLUMNS + ("micro_reconstruction", "released_sum", "released_avg",
                                                    "count_estimate") + meta.public}
    return "value" if meta.sensitive.lower() in taken else meta.sensitive


def describe(meta: ReleaseMeta, exact: bool, micro: bool | None, by_value: bool, measure: Measure) -> str:
    """What the rows mean, in words; the micro-reconstruction warning first."""
    sa = display_name(meta.sensitive)
    what = "count" if measure.kind == "count" else measure.label
    if exact:
        text = (f"exact {what}: the query involves no sensitive attribute and public columns are "
                "released unperturbed")
    elif measure.kind == "count":
        text = (f"reconstructed count: unbiased estimate from the perturbed {sa} (p = {meta.p}, "
                f"m = {meta.m} values) with its std_error and 95% interval [ci_low, ci_high]")
    elif measure.kind == "sum":
        text = (f"reconstructed {what}: unbiased estimate sum of x (1[released {sa} in V] - b) / p from the "
                f"perturbed {sa} (p = {meta.p}, m = {meta.m} values, b = (1 - p) |V| / m), over the records "
                f"where {display_name(measure.column)} is not NULL, with its std_error and 95% interval "
                "[ci_low, ci_high]; released_sum is the plain sum over the released values (biased)")
    else:
        text = (f"reconstructed {what}: the ratio of the unbiased SUM and COUNT estimates (count_estimate) from "
                f"the perturbed {sa} (p = {meta.p}, m = {meta.m} values) over the records where "
                f"{display_name(measure.column)} is not NULL; a ratio is not exactly unbiased, and its std_error "
                "(delta method) and 95% interval are APPROXIMATE, poor when count_estimate is small; "
                "released_avg is the plain average over the released values (biased)")
    if not exact and by_value:
        text += f"; one row per value of {sa} (column {display_name(value_column(meta))})"
    if micro:
        public = ", ".join(display_name(c) for c in meta.public) or "(none)"
        text = ("WARNING micro reconstruction: in the rows flagged micro_reconstruction every public attribute ("
                + public + ") is fixed, so each reconstructs the sensitive values of a single personal group, "
                "the case reconstruction privacy protects: such estimates are meant to be unreliable. " + text)
    if measure.alias:
        text += f"; the {what} (alias {display_name(measure.alias)}) is in column estimate"
    return text


def rewrite(sql: str, meta: ReleaseMeta, release_sql: str | None = None, dialect: Dialect = DUCKDB,
            column_types: dict | None = None) -> Rewritten:
    """Rewrite a count (or SUM / AVG) query over the release table into its reconstruction
    (pure: no connection). `release_sql` is the SQL naming the released table (default: the
    table as the query names it, e.g. "rel"."adult" for FROM rel.adult). Whether rows are
    micro reconstructions depends on the data: `micro` is None until query_run.run_query runs it.
    `dialect`: the engine the SQL is for. `column_types` (column -> the engine's type name):
    when given, SUM / AVG of a non-numeric column is refused here rather than by the engine."""
    try:
        return _rewrite(sql, meta, release_sql, dialect, column_types)
    except RecursionError:
        raise refuse(TOO_DEEP) from None


def check_measure(measure: Measure, meta: ReleaseMeta, column_types: dict | None) -> None:
    """SUM / AVG take a public numeric column (its values are released exactly)."""
    if measure.kind == "count":
        return
    if measure.column == meta.sensitive:
        raise refuse(f"{measure.label} of the sensitive attribute; SUM and AVG take a public numeric column "
                     f"(count its values with COUNT(*) and {display_name(meta.sensitive)} = 'value')")
    kind = (column_types or {}).get(measure.column)
    if kind is not None and not (DUCKDB.numeric_type(kind) or SPARK.numeric_type(kind)):   # either engine's names
        raise refuse(f"{measure.label}: column {display_name(measure.column)} has type {kind}, not a number")


def _rewrite(sql: str, meta: ReleaseMeta, release_sql: str | None, dialect: Dialect,
             column_types: dict | None = None) -> Rewritten:
    select = parse(sql)
    table = source(select)
    if table.name.lower() not in (meta.table_name.lower(), meta.name.lower()):
        raise refuse(f"the query counts from {display_name(table.name)}, not from the release table "
                     f"{display_name(meta.table_name)}" + (f" (or {display_name(meta.name)})"
                                                           if meta.name != meta.table_name else ""))
    scope = Scope(meta.public + (meta.sensitive,), table.alias or table.name,
                   f"table {display_name(meta.table_name)}")
    columns, measure = group_columns(select, scope)
    check_measure(measure, meta, column_types)
    by_value = meta.sensitive in columns
    groups = tuple(c for c in columns if c != meta.sensitive)

    where = select.args.get("where")
    parts = conjuncts(where.this) if where is not None else []
    sensitive = [p for p in parts if uses(p, meta.sensitive, scope)]
    if len(sensitive) > 1:
        raise refuse(f"{len(sensitive)} conditions on the sensitive attribute {display_name(meta.sensitive)}; "
                     "give at most one (combine values with IN)")
    values = sensitive_values(sensitive[0], scope, meta) if sensitive else None
    where_sql = render_public([p for p in parts if not sensitive or p is not sensitive[0]], scope)
    check_nodes(select, QUERY_NODES)          # the net under the checks above: nothing unlisted

    if release_sql is None:
        release_sql = meta.rows_sql or ((quote_ident(table.text("db")) + ".") if table.text("db") else "") \
            + quote_ident(meta.table_name)
    exact = not by_value and values is None
    text = (exact_sql(release_sql, groups, where_sql, measure) if exact
            else reconstruction_sql(meta, release_sql, groups, where_sql, values, by_value, dialect, measure))
    text = answer_clauses(select, text, scope, columns, measure, meta)
    micro = False if exact else None
    return Rewritten(sql=text, micro=micro, exact=exact, group_by=columns, values=values,
                     note=describe(meta, exact, micro, by_value, measure), aggregate=measure.kind,
                     column=measure.column)
