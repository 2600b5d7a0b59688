"""The search's first stage: the records kept, the column statistics, the scaling, and the
checks that name a bad input before any distance is computed."""
from __future__ import annotations

from dataclasses import dataclass

from ..engines.dialects import DUCKDB, Dialect
from ..identifiers import quote_ident, quote_literal
from ..templates import joined
from .geometry import BASE_GRID_DIMS, Grid
from .spec import RWNSpec


def missing_filter_sql(spec: RWNSpec, dialect: Dialect = DUCKDB) -> str:
    """The WHERE clause (with its leading newline) that keeps the records on_missing='drop'
    keeps: a value in every column (numeric ones also finite); '' for on_missing='error'."""
    if spec.on_missing != "drop":
        return ""
    conds = [f"{quote_ident(c)} IS NOT NULL AND {dialect.is_finite(f'CAST({quote_ident(c)} AS DOUBLE)')}"
             for c in spec.numeric]
    conds += [f"{quote_ident(c)} IS NOT NULL" for c in spec.categorical]
    return "\n    WHERE " + "\n      AND ".join(conds)


@dataclass(frozen=True)
class StatisticsSQL:
    """The template values of `staged`, `stats`, `strata_sizes` and `params`: lists come joined,
    each with its leading separator."""
    missing_filter: str
    rid_order: str
    stats: str
    stratum_label: str
    stratum_group_by: str
    smallest_label: str
    scaling: str
    checks: str
    raise_problem: str


def column_statistics(grid: Grid) -> list:
    """Per numeric column its range, sd, variance and bad values; per categorical one its NULLs;
    the covariances the grid's dimension is chosen from; the id's counts."""
    spec, dialect, col, num = grid.spec, grid.dialect, grid.col, grid.spec.numeric
    stats = []
    for i, c in enumerate(num, 1):
        v = f"CAST({col[c]} AS DOUBLE)"
        # Over finite values only: before DuckDB 2.0 an infinite value makes these raise instead
        # of reaching the check below that names the column.
        finite = f"FILTER (WHERE {dialect.is_finite(v)})"
        stats += [f"min({v}) AS lo_{i}", f"max({v}) AS hi_{i}", f"stddev_samp({v}) {finite} AS sd_{i}",
                  f"var_pop({v}) {finite} AS var_{i}",
                  f"count(*) FILTER (WHERE {col[c]} IS NULL OR NOT {dialect.is_finite(v)}) AS bad_{i}"]
    for i, c in enumerate(spec.categorical, 1):
        stats.append(f"count(*) FILTER (WHERE {col[c]} IS NULL) AS badc_{i}")
    if grid.D > BASE_GRID_DIMS and grid.axes is None:      # for the participation ratio (grid_sql)
        for i in range(1, grid.D + 1):
            for j in range(i + 1, grid.D + 1):
                vi, vj = (f"CAST({col[num[m - 1]]} AS DOUBLE)" for m in (i, j))
                stats.append(f"covar_pop({vi}, {vj}) FILTER (WHERE {dialect.is_finite(vi)} AND "
                             f"{dialect.is_finite(vj)}) AS cov_{i}_{j}")
    if spec.id:
        ident = quote_ident(spec.id)
        stats += [f"count({ident}) AS id_count", f"count(DISTINCT {ident}) AS id_distinct"]
    return stats


def scaling_and_checks(grid: Grid) -> tuple[list, list]:
    """(scaling, checks): each numeric column's offset and scale, and the CASE branches that
    name the first problem of the input (bad values, a constant or too wide column)."""
    spec, dialect, D, C = grid.spec, grid.dialect, grid.D, grid.C
    scaling, checks = [], []
    for i, c in enumerate(spec.numeric, 1):
        name = quote_literal(f"column {quote_ident(c)}")
        if spec.scale == "minmax":
            off, sc = f"lo_{i}", f"hi_{i} - lo_{i}"
        elif spec.scale == "zscore":
            # Distances ignore the centre; the sd is rounded to 10 significant digits so that
            # parallel summation order cannot change the scaled values.
            off, sc = "0.0", (f"CASE WHEN {dialect.is_finite(f'sd_{i}')} AND sd_{i} > 0 THEN "
                             f"round(sd_{i}, 9 - CAST(floor(log10(sd_{i})) AS INTEGER)) END")
        else:
            off, sc = "0.0", "1.0"
        scaling += [f"{off} AS off_{i}", f"{sc} AS sc_{i}"]
        checks.append(f"WHEN bad_{i} > 0 THEN {name} || ' has ' || bad_{i} || "
                      f"' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'")
        if spec.scale == "minmax":
            checks.append(f"WHEN hi_{i} = lo_{i} THEN {name} || ' is constant (every value is ' "
                          f"|| lo_{i} || '); remove it from the distance columns'")
        elif spec.scale == "zscore":
            checks.append(f"WHEN coalesce(sd_{i}, 0) = 0 OR hi_{i} = lo_{i} THEN {name} || ' is constant; "
                          f"remove it from the distance columns'")
        # A range or scale beyond the double range would turn distances into inf or NaN, and
        # records would silently fail every comparison.
        spread = f"(hi_{i} - lo_{i}) / ({sc})"
        checks.append(f"WHEN NOT coalesce({dialect.is_finite(f'hi_{i} - lo_{i}')} AND {dialect.is_finite(sc)} "
                      f"AND {dialect.is_finite(f'{spread} * {spread} * {D + C}')}, false) "
                      f"THEN {name} || ' spans ' || lo_{i} || ' to ' || hi_{i} || ', too wide for "
                      f"double-precision distances; rescale it "
                      f"(e.g. divide it by a power of ten)'")
    return scaling, checks + record_checks(spec)


def record_checks(spec: RWNSpec) -> list:
    """The CASE branches on the records rather than the numeric columns: categorical NULLs,
    strata too small for k, the id's NULLs and duplicates."""
    checks = []
    for i, c in enumerate(spec.categorical, 1):
        name = quote_literal(f"column {quote_ident(c)}")
        checks.append(f"WHEN badc_{i} > 0 THEN {name} || ' has ' || badc_{i} || "
                      f"' NULL values; clean them or use on_missing=''drop'' (--on-missing drop)'")
    if spec.k > 0:
        where = "stratum ' || smallest_label || ' has" if spec.strata else "the input has"
        checks.append(f"WHEN smallest <= {spec.k} THEN '{where} ' || smallest || ' records; "
                      f"k = {spec.k} needs at least {spec.k + 1} (k must be below the number of "
                      f"records in every stratum)'")
    if spec.id:
        name = quote_literal(f"the id column {quote_ident(spec.id)}")
        checks.append(f"WHEN id_count < n THEN {name} || ' has ' || (n - id_count) || ' NULL values; "
                      f"every record needs an id'")
        checks.append(f"WHEN id_distinct < id_count THEN {name} || ' has duplicate values ('  || "
                      f"(id_count - id_distinct) || ' records share an id with another); every record "
                      f"needs its own id'")
    return checks


def statistics_sql(grid: Grid) -> StatisticsSQL:
    spec, dialect, col = grid.spec, grid.dialect, grid.col
    scaling, checks = scaling_and_checks(grid)
    if spec.strata:
        label = dialect.as_text(dialect.struct_pack([(col[s], col[s]) for s in spec.strata]))
        group = ", ".join(col[s] for s in spec.strata)
    else:
        label, group = "'all records'", ""
    return StatisticsSQL(
        missing_filter=missing_filter_sql(spec, dialect),
        rid_order=f"ORDER BY {quote_ident(spec.id)}" if spec.id else "",
        stats=joined(column_statistics(grid), lead=",\n        "),
        stratum_label=label,
        stratum_group_by=dialect.group_by(group),
        smallest_label=dialect.arg_min("label", "size"),
        scaling=joined(scaling),
        checks="".join("\n            " + c for c in checks),
        raise_problem=dialect.raise_error("'rwn_sql: ' || problem"),
    )
