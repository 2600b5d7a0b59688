"""The search's third stage: one level of it. Records are bucketed into cells of side s; a
record's candidates are the records of its 3^G neighbour cells (the cell join), and it is
done once k of them and eps lie within its margin. The level's cell keys, margins, distance,
the records' starting levels and the level step itself."""
from __future__ import annotations

from dataclasses import dataclass

from .. import limits
from ..engines.dialects import Dialect
from ..identifiers import float_literal
from ..templates import joined, render
from .geometry import UNIT_BALL, Grid, gram_bound, tie_factor
from .spec import RWNSpec

# Levels per doubling of the cell side, by grid dimension: the block of a record that needs a
# side just above a level's holds up to growth^G times the candidates it needs; finer steps in
# more dimensions keep that factor small at the cost of more levels. (2 steps on a 3-d grid were
# faster but raised perturb's memory floor above tests/rwn/test_spill.py's: docs/design/neighbourhoods.md.)
LEVEL_STEPS = {0: 1, 1: 1, 2: 1, 3: 1, 4: 2, 5: 3}
SLACK = "1e-9"             # relative safety margin against floating-point rounding at cell edges
PRUNE_SLACK = "1e-6"       # the same, where the cell join skips neighbour cells beyond the margin
PAIR_FIELDS = [("d2", "d2"), ("j", "j")]      # a neighbour in a list: sorted by (distance, record)
# The second density round moves a record a level finer only where its estimate says at least
# 7/8 of a level (rounds log-levels - 0.375): plain rounding made W2 (bench_rwn.py) compare
# slightly more candidates, records starting too fine and paying for one more level.
SECOND_ROUND_BIAS = 0.375
# With eps > 0 a record starts no finer than the level whose side s holds eps within 1.2 s: its
# margin (s plus its distance to its cell's nearest face, at most 1.5 s) reaches eps there once it
# lies 0.2 s inside every face. One level finer, few records finish (on 5 grid coordinates about
# 1 in 250 at the level's average side) and all pay for its join (measured against 1.0-1.5 in
# docs/design/neighbourhoods.md, "What did pay").
EPS_FLOOR_MARGIN = "1.2"
# A record starts at the level where its cell is expected to hold CELL_COUNT (k + 1) / V_G
# records, so that the ball of radius s, within its margin, holds about CELL_COUNT (k + 1): 1
# for the k nearest on a grid over every numeric column, where fewer candidates for the records
# that finish there more than pay for those that try one more level. Else 2: with categorical
# columns or on principal axes a cell's count includes records far apart in what the grid does
# not cover, and with eps > 0 the eps floor sets most start levels; 1 measured slower in both
# cases (docs/design/neighbourhoods.md, "What did pay").
CELL_COUNT = 1.0
CELL_COUNT_CAUTIOUS = 2.0
# False: no margin filter after the cell join (the aggregates' FILTERs alone), for comparisons
MARGIN_FILTER = True


def members_within(found: str, eps2: str, spec: RWNSpec, dialect: Dialect) -> tuple[str, str]:
    """(members, radius2): the neighbourhood S_i from the list `found` of (d2, j), sorted by
    (d2, j) and holding at least the k nearest and every record within the bound. radius2 =
    greatest(eps^2, d2 of the k-th nearest) (eps^2 when k = 0), `eps2` its SQL; the members are
    the entries with d2 <= radius2 times the tie factor, a prefix of `found` (the search, and
    tune's narrowing of the widest lists to a smaller eps)."""
    radius2 = eps2 if spec.k == 0 else f"greatest({eps2}, {dialect.list_element(found, str(spec.k))}.d2)"
    return dialect.list_filter(found, "e", f"e.d2 <= ({radius2}) * {tie_factor(spec)}"), radius2


def margin_filter(dialect: Dialect) -> str:
    """The level step's WHERE on the cell join's pairs: those within the margin (every row the
    aggregates of `found` read; i itself, at distance 0, always among them), where the dialect
    can keep the filter out of the join (Dialect.join_opaque), else nothing."""
    bound = dialect.join_opaque("margin2") if MARGIN_FILTER else None
    return f"\n    WHERE d2 <= {bound}" if bound else ""


@dataclass(frozen=True)
class CellKeys:
    """The cell join's keys: `probe` the columns of a record's side (its cells, fractions and
    pruning bound), `build` those of a candidate's side (its packed cell key), `grid_margin`
    the distance within which the record's block of 3^G cells holds every record, and
    `neighbour_key` the packed key of neighbour cell o (NULL for a cell skipped as too far)."""
    probe: tuple
    build: tuple
    grid_margin: str
    neighbour_key: str


def cell_keys(grid: Grid) -> CellKeys:
    G, C, dims, dialect = grid.G, grid.C, grid.dims, grid.dialect
    w = float_literal(grid.spec.weight)
    probe = [f"{grid.cell(f'g_{d}', 's')} AS cell_{d}" for d in range(1, G + 1)]
    build = ([f"{grid.pack([grid.cell(f'g_{d}', 'l.s') for d in range(1, G + 1)])} AS cell_key"] if G else [])
    probe += [f"CASE WHEN s < {w} THEN c_{i} END AS ck_{i}" for i in range(1, C + 1)]
    build += [f"CASE WHEN l.s < {w} THEN c_{i} END AS ck_{i}" for i in range(1, C + 1)]
    if not G:
        return CellKeys(tuple(probe), tuple(build), "'Infinity'::DOUBLE", "")
    fracs = [f"g_{d} / s - {dialect.floor(f'g_{d} / s')}" for d in range(1, G + 1)]
    edges = ", ".join(f"{f}, 1 - ({f})" if d <= dims[0] else
                      f"CASE WHEN grid_dims >= {d} THEN least({f}, 1 - ({f})) ELSE 1.0 END"
                      for d, f in enumerate(fracs, 1))
    far = ", ".join([f"abs(g_{d} / s)" for d in range(1, G + 1)] + (["g_mag / s"] if grid.axes is not None else []))

    def block_reach(sign: str, allowance: str) -> str:
        """s plus the distance to the cell's nearest face, narrowed (sign '-') or widened
        ('+') by `allowance` times the rounding scale s (1 + the largest |g / s|)."""
        return f"s * (1 + least({edges}) {sign} {allowance} * (1 + greatest({far})))"
    neighbour_key = grid.pack([f"p.cell_{d} + o.o_{d}" for d in range(1, G + 1)])
    # A neighbour cell whose box lies farther from the record than its margin holds no
    # candidate within it: the cell join skips that offset. Exact: a record j in cell c + o
    # lies beyond that cell's face, gap_d away from i, along every d with o_d != 0, and
    # sum gap_d^2 <= |U^T (x_i - x_j)|^2 <= lambda d(i, j)^2 (lambda the
    # largest eigenvalue of the directions' Gram matrix, 1 for orthonormal axes or
    # columns). The bound takes PRUNE_SLACK, 1000 times the margin's rounding allowance.
    # On 3 / 4 / 5 grid dimensions about 15 / 28 / 42 % of the 3^G cells are skipped; on 3 the
    # test costs what it saves, on 4 and 5 it saves more (the timings: docs/design/neighbourhoods.md,
    # step 2): hence Limits.SKIP_FAR_CELLS = 4.
    skip_from = limits.current().SKIP_FAR_CELLS
    if skip_from is not None and G >= skip_from:
        probe += [f"{fracs[d - 1]} AS f_{d}" for d in range(1, G + 1)]
        probe.append(f"CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE ELSE "
                     f"{float_literal(gram_bound(grid.axes))} * pow({block_reach('+', PRUNE_SLACK)}, 2) END AS prune2")
        # as a NULL key, not a WHERE: DuckDB made a filter there a nested-loop join condition
        # and then hashed the records' side of the cell join, a slower plan (docs/design/neighbourhoods.md)
        far_cell = ("s * s * (" + " + ".join(
            f"CASE o.o_{d} WHEN 1 THEN (1 - p.f_{d}) * (1 - p.f_{d}) WHEN -1 THEN p.f_{d} * p.f_{d} ELSE 0.0 END"
            for d in range(1, G + 1)) + ") > p.prune2")
        neighbour_key = f"CASE WHEN {far_cell} THEN NULL ELSE {neighbour_key} END"
    return CellKeys(tuple(probe), tuple(build), block_reach("-", SLACK), neighbour_key)


def join_condition(grid: Grid) -> str:
    """The cell join's condition: same cell key, stratum and (on cells narrower than the
    categorical weight) categorical values."""
    exact_keys = [f"k_{i}" for i in range(1, len(grid.spec.strata) + 1)] + [f"ck_{i}" for i in range(1, grid.C + 1)]
    joins = ["b.cell_key = a.nb_key"] if grid.G else []
    if grid.G and exact_keys:
        # Strata and categorical keys ride in one struct with the first cell key (struct
        # equality matches NULL fields, like IS NOT DISTINCT FROM): a separate condition
        # between a and b alone let the optimizer join a stratum with itself before applying
        # the offsets, which is quadratic within a stratum.
        sp = grid.dialect.struct_pack
        joins[0] = (f"{sp([('c', 'b.cell_key')] + [(e, f'b.{e}') for e in exact_keys])} = "
                    f"{sp([('c', 'a.nb_key')] + [(e, f'a.{e}') for e in exact_keys])}")
    else:
        joins += [f"b.{e} IS NOT DISTINCT FROM a.{e}" for e in exact_keys]
    return " AND ".join(joins) if joins else "true"


def distance2(grid: Grid) -> str:
    """The squared distance of record a and candidate b, on the unscaled values over a's scales."""
    w2 = float_literal(grid.spec.weight * grid.spec.weight)
    terms = [f"((a.v_{i} - b.v_{i}) / a.sc_{i}) * ((a.v_{i} - b.v_{i}) / a.sc_{i})" for i in range(1, grid.D + 1)]
    terms += [f"CASE WHEN a.c_{i} = b.c_{i} THEN 0.0 ELSE {w2} END" for i in range(1, grid.C + 1)]
    return "\n                + ".join(terms)


def _count_is_density(grid: Grid, g: int) -> bool:
    """Whether a cell's count on a g-dimensional grid measures the density the k nearest are
    found in (CELL_COUNT): eps = 0, no categorical column, every numeric column a grid
    coordinate. Else records in one cell may lie far apart in what the grid does not cover."""
    return grid.spec.eps == 0 and not grid.C and grid.axes is None and g == grid.D


def start_levels(grid: Grid) -> tuple[str, str]:
    """(first_level, start_level): the level a record starts the search at. A cell of side s is
    to hold e = CELL_COUNT (k + 1) / V_G records (CELL_COUNT_CAUTIOUS unless _count_is_density);
    a record whose cell at side s0 holds c starts log2(c / e) / G doublings finer.
    Twice: from its cell at side s0, then from its cell at that level; with eps > 0, not finer
    than the level whose cells hold eps within EPS_FLOOR_MARGIN of a side."""
    spec, G, dialect = grid.spec, grid.G, grid.dialect
    if not G:
        return "0", "0"
    k_search = max(spec.k, 1)
    steps = grid.by_dims(lambda g: f"{LEVEL_STEPS[g]}.0 / {g}")
    unit_ball = grid.by_dims(lambda g: repr(UNIT_BALL[g]))
    growth = grid.by_dims(lambda g: float_literal(2.0 ** (1.0 / LEVEL_STEPS[g])))
    strata_cells = [f"k_{i}" for i in range(1, len(spec.strata) + 1)]
    expected = grid.by_dims(
        lambda g: f"{(CELL_COUNT if _count_is_density(grid, g) else CELL_COUNT_CAUTIOUS) * (k_search + 1):g}")

    def finer(side, level=None):
        """Levels finer than `side` for the record's cell count at that side."""
        cells = ", ".join(strata_cells + ([level] if level else [])
                          + [dialect.floor(f"g_{d} / ({side})") for d in range(1, G + 1)])
        bias = f" - {SECOND_ROUND_BIAS}" if level else ""
        return (f"CAST(round(log2(greatest(count(*) OVER (PARTITION BY {cells}) * "
                f"{unit_ball} / {expected}, 1)) * {steps}{bias}) AS INTEGER)")
    start_level = f"first_lvl - {finer(f'st.s0 * pow({growth}, first_lvl)', 'first_lvl')}"
    if spec.eps > 0:
        # not below the level whose side s holds eps within EPS_FLOOR_MARGIN s (both rounds)
        per_doubling = grid.by_dims(lambda g: f"{LEVEL_STEPS[g]}.0")
        lowest = (f"CAST(ceil({per_doubling} * log2({float_literal(spec.eps)} / "
                  f"({EPS_FLOOR_MARGIN} * st.s0))) AS INTEGER)")
        start_level = f"greatest({start_level}, {lowest})"
    return f"-{finer('st.s0')}", start_level


def level_step_sql(grid: Grid, grid_columns: str, keys: CellKeys) -> str:
    """One level of the search (rwn_level.sql): CTEs then a SELECT, reading the previous
    level's rows from `search`."""
    spec, dialect, G = grid.spec, grid.dialect, grid.G
    margin = keys.grid_margin
    if grid.C:
        w = float_literal(spec.weight)
        margin = f"least({margin}, CASE WHEN s < {w} THEN {w} * (1 - {SLACK}) ELSE 'Infinity'::DOUBLE END)"
    eps2 = float_literal(spec.eps * spec.eps)
    members, radius2 = members_within("found", eps2, spec, dialect)
    return render(
        "rwn_level.sql",
        settings_columns="".join(f", sc_{i}" for i in range(1, grid.D + 1)) + ", grid_dims",
        grid_columns=grid_columns,
        growth=grid.by_dims(lambda g: float_literal(2.0 ** (1.0 / LEVEL_STEPS[g]))) if G else "2.0",
        probe_keys=joined(keys.probe, sep=",\n            ", lead=",\n            "),
        build_keys=joined(keys.build, sep=",\n            ", lead=",\n            "),
        margin=margin,
        distance2=distance2(grid),
        join_condition=join_condition(grid),
        neighbour_cells=(f", {keys.neighbour_key} AS nb_key" if G else ""),
        k_search=max(spec.k, 1),
        eps2=eps2,
        tie_factor=tie_factor(spec),
        margin_filter=margin_filter(dialect),
        found_list=dialect.sorted_struct_list_agg(PAIR_FIELDS, "j <> i AND d2 <= margin2"),
        members=members,
        radius2=radius2,
        closest=f"{dialect.list_element('found', '1')}.d2",
    )


@dataclass(frozen=True)
class LevelSQL:
    """The template values of the search: the starting levels, the level step, and
    `grid_margin` (the ball path's pre-pass reuses it)."""
    first_level: str
    start_level: str
    level_step: str
    members_size: str
    tie_factor: str
    grid_margin: str


def level_sql(grid: Grid, grid_columns: str) -> LevelSQL:
    keys = cell_keys(grid)
    first_level, start_level = start_levels(grid)
    return LevelSQL(first_level=first_level, start_level=start_level,
                    level_step=level_step_sql(grid, grid_columns, keys),
                    members_size=grid.dialect.list_length("members"),
                    tie_factor=tie_factor(grid.spec), grid_margin=keys.grid_margin)
