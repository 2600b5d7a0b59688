"""The search's second stage: the grid. Its dimension (chosen in SQL from the data's spread
when there are more than three numeric columns), the starting cell side, the points with
their grid coordinates, and the 3^G neighbour offsets."""
from __future__ import annotations

from dataclasses import dataclass

from ..identifiers import float_literal
from ..templates import joined
from .geometry import BASE_GRID_DIMS, UNIT_BALL, Grid


@dataclass(frozen=True)
class GridSQL:
    """The template values of `settings`, `scaled`, `points` and `offsets`, and `grid_columns`:
    the grid coordinates g_* recomputed from a row of `points` (as p, settings as st) where
    `points` does not keep them ('' when it does)."""
    eps: str
    s_estimate: str
    diameter2: str
    grid_dims: str
    grid_order: str
    scales: str
    point_columns: str
    point_names: str
    offset_columns: str
    first_grid_coordinate: str
    grid_columns: str


def grid_dimension(grid: Grid) -> str:
    """The SQL of the grid's dimension. Over more than three columns (no axes given): the
    participation ratio (sum of eigenvalues)^2 / (sum of their squares) of the scaled
    covariance, from its entries, about the number of directions the data spreads in. It only
    chooses the grid (the speed): neighbourhoods are exact on any grid."""
    D, G, dialect = grid.D, grid.G, grid.dialect
    if grid.axes is not None or D <= BASE_GRID_DIMS:
        return str(G)
    var = [f"var_{i} / (sc_{i} * sc_{i})" for i in range(1, D + 1)]
    cov = [f"cov_{i}_{j} / (sc_{i} * sc_{j})" for i in range(1, D + 1) for j in range(i + 1, D + 1)]
    ratio = (f"pow({' + '.join(var)}, 2) / ({' + '.join(f'pow({v}, 2)' for v in var)}"
             f" + 2 * ({' + '.join(f'pow({c}, 2)' for c in cov)}))")
    return (f"CASE WHEN {dialect.is_finite(ratio)} THEN greatest({grid.dims[0]}, least({G}, "
            f"CAST(round({ratio}) AS INTEGER))) ELSE {grid.dims[0]} END")


def starting_side(grid: Grid) -> str:
    """The SQL of the estimated cell side: the expected count within s of a record is about
    n V_G s^G / volume; aim for 2 (k + 1)."""
    D, spec = grid.D, grid.spec
    if not grid.G:
        return f"0.5 * {float_literal(spec.weight)}"
    k_search = max(spec.k, 1)
    ranges = " * ".join(f"((hi_{i} - lo_{i}) / sc_{i})" for i in range(1, D + 1))
    return grid.by_dims(lambda g: f"coalesce(pow({2 * (k_search + 1)} * pow({ranges}, {g}.0 / {D}) "
                                  f"/ (n * {UNIT_BALL[g]!r}), 1.0 / {g}), 0.0)", "grid_dims")


def point_columns(grid: Grid) -> list:
    """The columns of `scaled`: strata k_*, the unscaled values v_*, categorical values c_*,
    g_mag along given directions, and the grid coordinates g_*."""
    spec, col, G = grid.spec, grid.col, grid.G
    x = grid.scaled()
    columns = [f"s.{col[s]} AS k_{i}" for i, s in enumerate(spec.strata, 1)]
    # distances use the unscaled values v_*: a difference of two values is exact or rounded
    # once, a difference of two scaled values is not (METHODS.md, "Exact ties")
    columns += [f"CAST(s.{col[c]} AS DOUBLE) AS v_{i}" for i, c in enumerate(spec.numeric, 1)]
    columns += [f"s.{col[c]} AS c_{i}" for i, c in enumerate(spec.categorical, 1)]
    if grid.axes is not None:
        # Grid coordinates along the given directions; g_mag = sum |x_k| bounds the rounding
        # of a coordinate (see the search's grid margin).
        columns.append(" + ".join(f"abs({x[i]})" for i in x) + " AS g_mag")
    return columns + [f"{grid.coordinate(d, x)} AS g_{d}" for d in range(1, G + 1)]


def point_names(grid: Grid) -> list:
    """The columns `points` keeps. The grid coordinates only along given directions: on a
    column grid they are recomputed, bit for bit, from v_* by the steps that read them
    (grid_columns), which keeps `points` half as wide (10M x 5: 400 MB less)."""
    spec, G = grid.spec, grid.G
    kept_grid = [f"g_{d}" for d in range(1, G + 1)] if grid.axes is not None else []
    return (["rid"] + [f"k_{i}" for i in range(1, len(spec.strata) + 1)]
            + [f"v_{i}" for i in range(1, grid.D + 1)] + [f"c_{i}" for i in range(1, grid.C + 1)]
            + (["g_mag"] if grid.axes is not None else []) + kept_grid)


def neighbour_offsets(grid: Grid) -> str:
    """The select list and FROM of `offsets`: the 3^G offsets o_* of a cell's neighbours, one
    (0) along a grid dimension the run does not use."""
    G, first = grid.G, grid.dims[0]
    if not G:
        return "0 AS o_0"
    offsets = ", ".join(f"t{d}.o AS o_{d}" for d in range(1, G + 1)) + "\n    FROM " + \
        ", ".join(f"range(-1, 2) t{d}(o)" for d in range(1, G + 1))
    if G > first:
        offsets += ", settings st\n    WHERE " + " AND ".join(
            f"(t{d}.o = 0 OR st.grid_dims >= {d})" for d in range(first + 1, G + 1))
    return offsets


def grid_sql(grid: Grid) -> GridSQL:
    spec, D, C, G, dialect = grid.spec, grid.D, grid.C, grid.G, grid.dialect
    w2 = float_literal(spec.weight * spec.weight)
    grid_order = ""
    if D > G and grid.axes is None:
        entries = [dialect.struct_pack([("v", f"var_{i} / pow(sc_{i}, 2)"), ("i", str(i))]) for i in range(1, D + 1)]
        grid_order = f",\n        {dialect.descending_field(entries, 'i')} AS grid_order"
    on_points = grid.scaled("p.v_{i}", "st.off_{i}", "st.sc_{i}")
    return GridSQL(
        eps=float_literal(spec.eps),
        s_estimate=starting_side(grid),
        diameter2=" + ".join([f"pow((hi_{i} - lo_{i}) / sc_{i}, 2)" for i in range(1, D + 1)]
                             + ([f"{C} * {w2}"] if C else [])) or "0.0",
        grid_dims=grid_dimension(grid),
        grid_order=grid_order,
        scales="".join(f", off_{i}, sc_{i}" for i in range(1, D + 1)),
        point_columns=joined(point_columns(grid)),
        point_names=", ".join(point_names(grid)),
        offset_columns=neighbour_offsets(grid),
        # g_1 of a row of `points` (as p, with settings as st): where a level runs in chunks
        first_grid_coordinate=("p.g_1" if grid.axes is not None else grid.coordinate(1, on_points)) if G else "",
        grid_columns="" if grid.axes is not None else "".join(
            f", {grid.coordinate(d, on_points)} AS g_{d}" for d in range(1, G + 1)),
    )
