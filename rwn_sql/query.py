"""Analysts' count queries over a release database, rewritten into the reconstruction.

An analyst writes the count query they would run on the original data,

    SELECT sex, COUNT(*) FROM adult WHERE occupation = 'Sales' AND race = 'Black' GROUP BY sex

and gets the unbiased estimate computed from the perturbed release (docs/METHODS.md
section 2). The estimate is valid only when a predicate over the exact public columns
selects the records S and the sensitive attribute (SA) enters only as the value set V
counted among them, so the accepted grammar is deliberately small and everything else is
refused with a message saying what is supported. Queries are parsed with sqlglot and
checked on the syntax tree, never by pattern matching the text.
"""
from __future__ import annotations

from dataclasses import dataclass

import duckdb
import sqlglot
from sqlglot import exp

from . import rp_sql
from .errors import RWNError
from .identifiers import display_name, float_literal, quote_ident, quote_literal
from .release import ReleaseMeta, read_metadata

__all__ = ["Rewritten", "rewrite", "run_query"]

SUPPORTED = ("supported: SELECT [g1, g2, ...,] COUNT(*) FROM <release table> [WHERE <predicate>] "
             "[GROUP BY g1, g2, ...], where the g are public columns or the sensitive attribute and "
             "<predicate> combines with AND / OR / NOT comparisons (=, <>, <, <=, >, >=), IN lists, "
             "BETWEEN and IS [NOT] NULL over public columns and literals, plus at most one top-level "
             "AND condition <SA> = 'value' or <SA> IN ('v1', 'v2', ...)")
COMPARISONS = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)
ALLOWED_CLAUSES = {"expressions", "from_", "where", "group"}
CLAUSE_NAMES = {"distinct": "SELECT DISTINCT", "having": "HAVING clause", "order": "ORDER BY clause",
                "limit": "LIMIT clause", "offset": "OFFSET clause", "qualify": "QUALIFY clause",
                "windows": "WINDOW clause", "with_": "WITH clause (common table expressions)",
                "joins": "joins", "laterals": "LATERAL joins", "sample": "sampling", "pivots": "PIVOT"}
ESTIMATE_COLUMNS = ("released_count", "group_size", "estimate", "std_error", "ci_low", "ci_high",
                    "estimate_clipped")


@dataclass(frozen=True)
class Rewritten:
    """A rewritten count query. Its rows always have the same columns: the grouped public
    columns, `value` when grouped by the SA, then ESTIMATE_COLUMNS and micro_reconstruction."""
    sql: str
    micro: bool                      # every public attribute fixed per row: single personal groups
    exact: bool                      # no SA involved: the count is exact
    group_by: tuple[str, ...]        # the grouped columns as the release spells them (SA included)
    values: tuple[str, ...] | None   # the SA value set of the WHERE, None without an SA condition
    note: str


def refuse(problem: str) -> RWNError:
    return RWNError(f"unsupported query: {problem}; {SUPPORTED}")


class _Generator(sqlglot.Dialect.get_or_raise("duckdb").generator_class):
    """sqlglot's DuckDB printer, with identifiers and string literals quoted by
    rwn_sql.identifiers, the one place that turns names and values into SQL text."""

    def identifier_sql(self, expression: exp.Identifier) -> str:
        return quote_ident(expression.name)

    def literal_sql(self, expression: exp.Literal) -> str:
        return quote_literal(expression.name) if expression.is_string else super().literal_sql(expression)


def render(node: exp.Expression) -> str:
    """SQL text of a checked predicate; comments are dropped."""
    return _Generator(dialect="duckdb", comments=False).generate(node)


def parse(sql: str) -> exp.Select:
    """The single SELECT statement of `sql`, free of clauses and subqueries we cannot rewrite."""
    if not isinstance(sql, str):
        raise RWNError(f"the query must be a SQL string, got {type(sql).__name__}")
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError as exc:
        err = exc.errors[0] if exc.errors else {}
        where = f" (line {err['line']}, column {err['col']})" if "line" in err else ""
        raise RWNError(f"cannot parse the query{where}: {err.get('description', exc)}") from None
    except sqlglot.errors.SqlglotError as exc:
        raise RWNError(f"cannot parse the query: {exc}") from None
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
        raise refuse(f"FROM {from_.this.sql(dialect='duckdb')}; FROM must name the release table")
    extra = [k for k, v in table.args.items() if v and k not in ("this", "db", "alias")]
    if extra:
        raise refuse(f"FROM {table.sql(dialect='duckdb')}: {extra[0]} is not supported on the table, "
                     "name it as [database.]table")
    if table.args.get("alias") is not None and table.args["alias"].columns:
        raise refuse("column aliases on the table")
    return table


@dataclass(frozen=True)
class _Scope:
    """What column references may name: the release's columns and the table's qualifier."""
    meta: ReleaseMeta
    qualifier: str

    def column(self, node: exp.Column) -> str:
        """The release's spelling of a referenced column (DuckDB names are case-insensitive)."""
        if isinstance(node.this, exp.Star):
            raise refuse(f"{node.sql(dialect='duckdb')}; select the grouped columns and COUNT(*)")
        if node.args.get("db") is not None or node.args.get("catalog") is not None:
            raise refuse(f"column {node.sql(dialect='duckdb')}: qualify columns by the table name only")
        if node.table and node.table.lower() != self.qualifier.lower():
            raise refuse(f"column {node.sql(dialect='duckdb')} names table {node.table!r}, "
                         f"not {self.qualifier!r}")
        columns = self.meta.public + (self.meta.sensitive,)
        for c in columns:
            if c.lower() == node.name.lower():
                return c
        raise RWNError(f"unknown column {display_name(node.name)}: the release table "
                       f"{display_name(self.meta.table_name)} has columns "
                       f"{', '.join(display_name(c) for c in columns)}")


def is_count_star(node: exp.Expression) -> bool:
    return isinstance(node, exp.Count) and not node.expressions and (
        isinstance(node.this, exp.Star) or (isinstance(node.this, exp.Literal)
                                            and not node.this.is_string and node.this.name == "1"))


def selected(select: exp.Select, scope: _Scope) -> tuple[tuple[str, ...], str | None]:
    """The selected columns in order and the alias of the single COUNT(*) (or None)."""
    columns, counts = [], []
    for item in select.expressions:
        node = item.this if isinstance(item, exp.Alias) else item
        if is_count_star(node):
            counts.append(item.alias or None)
        elif isinstance(node, exp.Column):
            if isinstance(item, exp.Alias):
                raise refuse(f"the alias in {item.sql(dialect='duckdb')}; grouped columns keep their names")
            name = scope.column(node)
            if name in columns:
                raise refuse(f"column {display_name(name)} is selected twice")
            columns.append(name)
        elif isinstance(node, exp.Count):
            raise refuse(f"{node.sql(dialect='duckdb')}; only COUNT(*) (or COUNT(1)) is answered")
        elif isinstance(node, exp.Filter):
            raise refuse(f"{node.sql(dialect='duckdb')}; put the condition in the WHERE clause")
        elif isinstance(node, exp.AggFunc):
            raise refuse(f"the aggregate {node.sql(dialect='duckdb')}; only COUNT(*) is answered")
        elif isinstance(node, exp.Star):
            raise refuse("SELECT *; select the grouped columns and COUNT(*)")
        elif isinstance(node, exp.Func):
            raise refuse(f"the function {node.sql(dialect='duckdb')}; functions on columns are not answered")
        else:
            raise refuse(f"{node.sql(dialect='duckdb')} in the SELECT list")
    if len(counts) != 1:
        raise refuse(f"COUNT(*) appears {len(counts)} times in the SELECT list; it must appear exactly once")
    return tuple(columns), counts[0]


def grouped(select: exp.Select, scope: _Scope) -> set[str]:
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
            raise refuse(f"GROUP BY {node.sql(dialect='duckdb')}; group by column names only")
        names.add(scope.column(node))
    return names


def group_columns(select: exp.Select, scope: _Scope) -> tuple[tuple[str, ...], str | None]:
    """The grouped columns in SELECT order: they must be exactly the selected columns."""
    columns, alias = selected(select, scope)
    groups = grouped(select, scope)
    for c in columns:
        if c not in groups:
            raise refuse(f"column {display_name(c)} is selected but not in GROUP BY")
    unselected = sorted(groups - set(columns))
    if unselected:
        raise refuse(f"column {display_name(unselected[0])} is in GROUP BY but not selected; select it so "
                     "each output row names its group")
    return columns, alias


def conjuncts(node: exp.Expression) -> list[exp.Expression]:
    """The top-level AND conjuncts of a predicate, looking through parentheses."""
    node = node.unnest()
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    return [node]


def is_literal(node: exp.Expression) -> bool:
    """A constant: a string or number literal, NULL, TRUE/FALSE, -number or a typed literal."""
    if isinstance(node, exp.Neg):
        return isinstance(node.this, exp.Literal) and not node.this.is_string
    if isinstance(node, exp.Cast):
        return isinstance(node.this, exp.Literal)
    return isinstance(node, (exp.Literal, exp.Null, exp.Boolean))


def check_operand(node: exp.Expression, scope: _Scope) -> None:
    if isinstance(node, exp.Column):
        scope.column(node)
    elif isinstance(node, exp.Func):
        raise refuse(f"the function {node.sql(dialect='duckdb')} in the WHERE clause; "
                     "functions on columns are not answered")
    elif not is_literal(node):
        raise refuse(f"{node.sql(dialect='duckdb')} in the WHERE clause; compare columns with literals")


def check_public(node: exp.Expression, scope: _Scope) -> None:
    """Refuse anything outside the public predicate grammar (the caller has made sure the
    SA does not occur in `node`)."""
    if isinstance(node, (exp.And, exp.Or)):
        check_public(node.this, scope)
        check_public(node.expression, scope)
    elif isinstance(node, (exp.Not, exp.Paren)):
        check_public(node.this, scope)
    elif isinstance(node, COMPARISONS):
        check_operand(node.this, scope)
        check_operand(node.expression, scope)
    elif isinstance(node, exp.In) and not (node.args.get("query") or node.args.get("unnest")
                                          or node.args.get("field")):
        check_operand(node.this, scope)
        for item in node.expressions:
            if not is_literal(item):
                raise refuse(f"{item.sql(dialect='duckdb')} in an IN list; IN lists hold literals")
    elif isinstance(node, exp.Between):
        check_operand(node.this, scope)
        for bound in (node.args["low"], node.args["high"]):
            if not is_literal(bound):
                raise refuse(f"BETWEEN bound {bound.sql(dialect='duckdb')}; BETWEEN takes literals")
    elif isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        check_operand(node.this, scope)
    else:
        raise refuse(f"the condition {node.sql(dialect='duckdb')}")


def uses(node: exp.Expression, column: str, scope: _Scope) -> bool:
    return any(scope.column(c) == column for c in node.find_all(exp.Column))


def sensitive_values(node: exp.Expression, scope: _Scope) -> tuple[str, ...]:
    """The value set V of a top-level SA condition `SA = 'v'` or `SA IN ('v1', ...)`,
    without repeats (|V| enters the estimate), each checked against the published domain."""
    meta = scope.meta
    sa = display_name(meta.sensitive)
    if isinstance(node, (exp.Or, exp.Not, exp.Xor)):
        raise refuse(f"the condition {node.sql(dialect='duckdb')} puts the sensitive attribute {sa} inside "
                     f"{node.key.upper()}: the public part of the predicate must be separable from the "
                     f"SA condition, so {sa} may only appear as a top-level AND condition {sa} = 'value' "
                     f"or {sa} IN (...) (for NOT IN / <>, list the other values with IN)")
    literals = None
    if isinstance(node, exp.EQ):
        for col, lit in ((node.this, node.expression), (node.expression, node.this)):
            if isinstance(col, exp.Column) and scope.column(col) == meta.sensitive:
                literals = [lit]
    elif (isinstance(node, exp.In) and isinstance(node.this, exp.Column)
          and scope.column(node.this) == meta.sensitive and not node.args.get("query")
          and not node.args.get("unnest")):
        literals = node.expressions
    if literals is None or not all(isinstance(v, exp.Literal) for v in literals):
        raise refuse(f"the condition {node.sql(dialect='duckdb')} on the sensitive attribute {sa}; it may "
                     f"only appear as {sa} = 'value' or {sa} IN ('v1', 'v2', ...) with literal values")
    values = tuple(dict.fromkeys(v.name for v in literals))
    unknown = [v for v in values if v not in meta.domain]
    if unknown:
        raise RWNError(f"{', '.join(map(quote_literal, unknown))} not in the published domain of {sa} "
                       f"({', '.join(map(quote_literal, meta.domain))}); the SA condition must name domain values")
    return values


def pinned(parts: list[exp.Expression], scope: _Scope) -> set[str]:
    """Public columns fixed to a single value by a top-level AND conjunct:
    col = literal, col IN (one literal) or col IS NULL."""
    fixed = set()
    for node in parts:
        sides = []
        if isinstance(node, exp.EQ):
            sides = [(node.this, node.expression), (node.expression, node.this)]
        elif isinstance(node, exp.In) and len({v.sql() for v in node.expressions}) == 1:
            sides = [(node.this, node.expressions[0])]
        elif isinstance(node, exp.Is):
            sides = [(node.this, node.expression)]
        fixed |= {scope.column(c) for c, v in sides if isinstance(c, exp.Column) and is_literal(v)}
    return fixed


def canonical(node: exp.Expression, scope: _Scope) -> exp.Expression:
    """`node` with every column named as the release spells it, unqualified."""
    return node.transform(lambda n: exp.Column(this=exp.to_identifier(scope.column(n)))
                          if isinstance(n, exp.Column) else n)


def exact_sql(release_sql: str, groups: tuple[str, ...], where_sql: str | None) -> str:
    """A plain count with the reconstruction's columns: nothing is estimated, so the
    estimate, its interval and its clipped value are the count and the error is 0."""
    g = [quote_ident(c) for c in groups]
    n = "CAST(count(*) AS DOUBLE)"
    cols = g + ["count(*) AS released_count", "count(*) AS group_size", f"{n} AS estimate",
                f"{float_literal(0.0)} AS std_error", f"{n} AS ci_low", f"{n} AS ci_high",
                f"{n} AS estimate_clipped", "false AS micro_reconstruction"]
    where = f"\nWHERE {where_sql}" if where_sql else ""
    group = f"\nGROUP BY {', '.join(g)}\nORDER BY {', '.join(g)}" if g else ""
    return "SELECT " + ",\n    ".join(cols) + f"\nFROM {release_sql}{where}{group}"


def reconstruction_sql(meta: ReleaseMeta, release_sql: str, groups: tuple[str, ...], where_sql: str | None,
                       values: tuple[str, ...] | None, by_value: bool, micro: bool) -> str:
    """rp_sql.estimates_sql, plus the micro_reconstruction flag and, when grouped by the SA
    under an SA condition, only the rows of the asked values."""
    typed = [f"CAST({quote_literal(v)} AS {meta.sensitive_type})" for v in values] if values else None
    design = (meta.trials_sql, meta.public) if meta.enforced and meta.trials_sql else None
    inner = rp_sql.estimates_sql(release_sql, meta.sensitive, meta.p_sql(), meta.domain_sql(), group_by=groups,
                                 where_sql=where_sql, values=None if by_value else typed, design=design)
    keep = f"\nWHERE value IN ({', '.join(typed)})" if by_value and typed else ""
    order = [quote_ident(c) for c in groups] + (["value"] if by_value else [])
    return (f"SELECT *, {str(micro).lower()} AS micro_reconstruction\n"
            f"FROM (\n{inner.rstrip()}\n) AS estimates{keep}"
            + (f"\nORDER BY {', '.join(order)}" if order else ""))


def describe(meta: ReleaseMeta, exact: bool, micro: bool, by_value: bool, alias: str | None) -> str:
    """What the rows mean, in words; the micro-reconstruction warning first."""
    sa = display_name(meta.sensitive)
    if exact:
        text = ("exact count: the query involves no sensitive attribute and public columns are "
                "released unperturbed")
    else:
        text = (f"reconstructed count: unbiased estimate from the perturbed {sa} (p = {meta.p}, "
                f"m = {meta.m} values) with its std_error and 95% interval [ci_low, ci_high]")
        if by_value:
            text += f"; one row per value of {sa} (column value)"
    if micro:
        public = ", ".join(display_name(c) for c in meta.public) or "(none)"
        text = ("WARNING micro reconstruction: every public attribute (" + public + ") is fixed in each "
                "output row, so each row reconstructs the sensitive values of a single personal group, "
                "the case reconstruction privacy protects: such estimates are meant to be unreliable. " + text)
    if alias:
        text += f"; the count (alias {display_name(alias)}) is in column estimate"
    return text


def rewrite(sql: str, meta: ReleaseMeta, release_sql: str | None = None) -> Rewritten:
    """Rewrite a count query over the release table into its reconstruction (pure: no
    connection). `release_sql` is the SQL naming the released table (default: the table as
    the query names it, e.g. "rel"."adult" for FROM rel.adult)."""
    select = parse(sql)
    table = source(select)
    if table.name.lower() != meta.table_name.lower():
        raise refuse(f"the query counts from {display_name(table.name)}, not from the release table "
                     f"{display_name(meta.table_name)}")
    scope = _Scope(meta, table.alias or table.name)
    columns, alias = group_columns(select, scope)
    by_value = meta.sensitive in columns
    groups = tuple(c for c in columns if c != meta.sensitive)

    where = select.args.get("where")
    parts = conjuncts(where.this) if where is not None else []
    sensitive = [p for p in parts if uses(p, meta.sensitive, scope)]
    if len(sensitive) > 1:
        raise refuse(f"{len(sensitive)} conditions on the sensitive attribute {display_name(meta.sensitive)}; "
                     "give at most one (combine values with IN)")
    values = sensitive_values(sensitive[0], scope) if sensitive else None
    public = [p for p in parts if not sensitive or p is not sensitive[0]]
    for p in public:
        check_public(p, scope)
    where_sql = render(exp.and_(*(canonical(p, scope) for p in public))) if public else None

    if release_sql is None:
        release_sql = ((quote_ident(table.text("db")) + ".") if table.text("db") else "") \
            + quote_ident(meta.table_name)
    exact = not by_value and values is None
    micro = not exact and set(meta.public) <= pinned(public, scope) | set(groups)
    text = (exact_sql(release_sql, groups, where_sql) if exact
            else reconstruction_sql(meta, release_sql, groups, where_sql, values, by_value, micro))
    return Rewritten(sql=text, micro=micro, exact=exact, group_by=columns, values=values,
                     note=describe(meta, exact, micro, by_value, alias))


def run_query(con: duckdb.DuckDBPyConnection, sql: str, meta: ReleaseMeta | None = None,
              schema: str | None = None) -> tuple[duckdb.DuckDBPyRelation, Rewritten]:
    """Answer a count query on a release database: the rows as a DuckDB relation and the
    rewrite. `schema` is the alias of an ATTACHed release (or FROM alias.table names it);
    without `meta` the published parameters are read from the release."""
    table = source(parse(sql))
    named = table.text("db") or None
    if named and schema and named.lower() != schema.lower():
        raise RWNError(f"the query reads from {display_name(named)} but schema {display_name(schema)} was given")
    schema = schema or named
    if meta is None:
        meta = read_metadata(con, table.name, schema)
    release_sql = (f"{quote_ident(schema)}." if schema else "") + quote_ident(meta.table_name)
    rewritten = rewrite(sql, meta, release_sql)
    try:
        return con.sql(rewritten.sql), rewritten
    except duckdb.Error as exc:
        raise RWNError(f"the rewritten query failed: {exc}") from None
