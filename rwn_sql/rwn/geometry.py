"""The geometry of the neighbourhood search, shared by its SQL stages: the grid's dimension and
directions, the scaled coordinates, cell keys, and the tolerance under which distances tie.
Pure Python: parameters in, SQL fragments out."""
from __future__ import annotations

import math
from dataclasses import dataclass

from .. import limits
from ..engines.dialects import Dialect
from ..errors import RWNError
from ..identifiers import float_literal, quote_ident
from .spec import RWNSpec

# Grid dimensions: min(D, 3), or up to MAX_GRID_DIMS when the data looks that high-dimensional
# (participation ratio of the scaled covariance, see grid_sql). On data of lower intrinsic
# dimension than the grid, most of the 3^G neighbour cells are empty and cost probes only.
BASE_GRID_DIMS = 3
MAX_GRID_DIMS = 5          # 3^5 = 243 neighbour cells per record
UNIT_BALL = {g: math.pi ** (g / 2) / math.gamma(g / 2 + 1) for g in range(1, MAX_GRID_DIMS + 1)}
CELL_CLAMP = "1e12"        # cell coordinates beyond this (in cells) are clamped; such records have no margin
AXIS_NORM_SLACK = 1e-12    # a grid direction's norm may exceed 1 by this (well inside the search's SLACK)
UNIT_ROUNDOFF = 2.0 ** -53


def tie_tolerance(terms: int) -> float:
    """Relative tolerance tau under which computed squared distances count as equal.

    A squared distance over `terms` columns is computed with at most terms + 4 roundings on
    every path (METHODS.md, "Exact ties"), so it is within a factor (1 +- gamma) of the exact
    value, gamma = (terms + 4) u / (1 - (terms + 4) u). Exactly tied distances then differ by a
    factor below 1 / (1 - 2 (terms + 4) u) and the product radius2 * (1 + tau) rounds once
    more; tau = 4 (terms + 4) u covers both with room to spare."""
    return 4.0 * (terms + 4) * UNIT_ROUNDOFF


def tie_factor(spec: RWNSpec) -> str:
    """1 + tie_tolerance over the spec's distance terms, as an SQL literal: a squared distance
    d2 counts as within the squared radius r2 when d2 <= r2 * tie_factor (search, members, ball
    path)."""
    return float_literal(1.0 + tie_tolerance(len(spec.numeric) + len(spec.categorical)))


def check_axes(axes, spec: RWNSpec):
    """The grid's directions as a tuple of G tuples of D floats (D > 3 numeric columns, G
    between 3 and min(D, 5): the grid's dimension), or None (the grid uses the columns
    themselves, G chosen in SQL). Any direction u with |u| <= 1 keeps the search exact,
    |u.(x_i - x_j)| <= |x_i - x_j|; only D > 3 columns can use directions."""
    if axes is None:
        return None
    D = len(spec.numeric)
    G = min(D, MAX_GRID_DIMS)
    axes = tuple(tuple(float(c) for c in u) for u in axes)
    if D <= BASE_GRID_DIMS or not BASE_GRID_DIMS <= len(axes) <= G or any(len(u) != D for u in axes):
        raise RWNError(f"axes: need {BASE_GRID_DIMS} to {G} directions of {D} coefficients for more "
                         f"than {BASE_GRID_DIMS} numeric columns, got {len(axes)}")
    for u in axes:
        if not all(math.isfinite(c) for c in u) or math.fsum(c * c for c in u) > 1 + AXIS_NORM_SLACK:
            raise RWNError(f"axes: a direction must be finite with norm at most 1, got {u}")
    return axes


def grid_coordinates(spec: RWNSpec, axes=None) -> int:
    """G, the grid coordinates g_1..g_G the points carry: one per principal axis, else up to
    MAX_GRID_DIMS columns (the first grid_dims of them are used, chosen in SQL)."""
    return len(axes) if axes is not None else min(len(spec.numeric), MAX_GRID_DIMS)


def gram_bound(axes) -> float:
    """An upper bound of the largest eigenvalue of the grid directions' Gram matrix, so that
    |U^T v|^2 <= gram_bound |v|^2 for every v: 1 on the columns (axes None), else Gershgorin's
    bound (the largest absolute row sum), at least 1 and rounded up."""
    if axes is None:
        return 1.0
    rows = [math.fsum(abs(math.fsum(a * b for a, b in zip(u, w))) for w in axes) for u in axes]
    return max(1.0, max(rows)) * (1 + 1e-9)


def unit_ball_volume(d: int) -> float:
    return math.pi ** (d / 2) / math.gamma(d / 2 + 1)


@dataclass(frozen=True)
class Grid:
    """The grid one spec's search runs on. Column k of the numeric columns is x_k (v_k
    unscaled), categorical column k is c_k, stratum column k is k_k. G grid coordinates
    g_1..g_G; `dims` the grid dimensions the SQL may choose at run time (one when `axes`, the
    grid's directions in the scaled space, are given)."""
    spec: RWNSpec
    dialect: Dialect
    axes: tuple | None
    G: int
    dims: range

    @classmethod
    def of(cls, spec: RWNSpec, dialect: Dialect, axes=None) -> "Grid":
        axes = check_axes(axes, spec)
        D = len(spec.numeric)
        if axes is not None:
            return cls(spec, dialect, axes, len(axes), range(len(axes), len(axes) + 1))
        G = min(D, MAX_GRID_DIMS)
        return cls(spec, dialect, None, G, range(min(D, BASE_GRID_DIMS), G + 1))

    @property
    def D(self) -> int:
        return len(self.spec.numeric)

    @property
    def C(self) -> int:
        return len(self.spec.categorical)

    @property
    def col(self) -> dict:
        """The source's column names, quoted."""
        return {name: quote_ident(name) for name in self.spec.columns + self.spec.strata}

    def scaled(self, value: str = "CAST(s.{column} AS DOUBLE)", offset: str = "p.off_{i}",
               scale: str = "p.sc_{i}") -> dict:
        """x_i for every numeric column i: (value - offset) / scale, from the given patterns."""
        return {i: f"({value.format(column=self.col[c], i=i)} - {offset.format(i=i)}) / {scale.format(i=i)}"
                for i, c in enumerate(self.spec.numeric, 1)}

    def by_dims(self, values, grid_dims: str = "st.grid_dims") -> str:
        """A value that depends on the grid dimension chosen at run time (one value if the
        same for every dimension the SQL may choose)."""
        values = {g: values(g) for g in self.dims}
        if len(set(values.values())) == 1:
            return str(next(iter(values.values())))
        return f"CASE {grid_dims} " + " ".join(f"WHEN {g} THEN {v}" for g, v in values.items()) + " END"

    def coordinate(self, d: int, x: dict) -> str:
        """g_d from the scaled values x[i] (settings as st)."""
        if self.axes is not None:
            g = " + ".join(f"{float_literal(c)} * {x[i]}" for i, c in enumerate(self.axes[d - 1], 1)
                           if c != 0.0) or "0.0"
        elif self.D == self.G:
            g = x[d]
        else:
            cases = " ".join(f"WHEN {i} THEN {x[i]}" for i in x)
            g = f"CASE {self.dialect.list_element('st.grid_order', str(d))} {cases} END"
        if d > self.dims[0]:     # an unused grid dimension: one cell, offset 0 only
            g = f"CASE WHEN st.grid_dims >= {d} THEN {g} ELSE 0.0 END"
        return g

    def cell(self, g: str, s: str) -> str:
        """The integer cell of coordinate `g` on cells of side `s`, clamped: a record that far out
        in cell units has no margin left (see the search's grid margin)."""
        return f"CAST({self.dialect.floor(f'least(greatest({g} / {s}, -{CELL_CLAMP}), {CELL_CLAMP})')} AS BIGINT)"

    def pack(self, cells) -> str:
        """The join key: the cells, each modulo 2^bits, packed into one BIGINT. Cells that wrap
        onto the same key only add candidates outside the margin, which the margin filters."""
        bits = limits.current().CELL_KEY_BITS // self.G if self.G else 0
        return " + ".join(f"(({c}) % {1 << bits} + {1 << bits}) % {1 << bits}" + (f" * {1 << (bits * d)}" if d else "")
                          for d, c in enumerate(cells))
