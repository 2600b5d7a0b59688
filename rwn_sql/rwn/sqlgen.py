"""Pure SQL builders: parameters in, SQL text out. Nothing here touches a connection.

The statements are assembled from the templates in sql/ (shipped as `rwn_sql.sql`); the
per-column pieces are generated here. Column k of the spec's numeric columns is x_k in
the SQL, categorical column k is c_k and stratum column k is k_k, so the SQL stays
readable whatever the user's column names are.
"""
from __future__ import annotations

import math
import re

from ..engines.dialects import DUCKDB, Dialect
from ..errors import RWNError
from ..identifiers import float_literal, quote_ident, quote_literal
from ..randomness import KEY_PLACEHOLDER, TWO_52, bits_sql, hash_sql, order_key_sql
from .spec import RWNSpec
from ..templates import render

# Grid dimensions: min(D, 3), or up to MAX_GRID_DIMS when the data looks that high-dimensional
# (participation ratio of the scaled covariance, see grid_dims). On data of lower intrinsic
# dimension than the grid, most of the 3^G neighbour cells are empty and cost probes only.
BASE_GRID_DIMS = 3
MAX_GRID_DIMS = 5          # 3^5 = 243 neighbour cells per record
UNIT_BALL = {g: math.pi ** (g / 2) / math.gamma(g / 2 + 1) for g in range(1, MAX_GRID_DIMS + 1)}
# Levels per doubling of the cell side, by grid dimension: the block of a record that needs a
# side just above a level's holds up to growth^G times the candidates it needs; finer steps in
# more dimensions keep that factor small at the cost of more levels. (2 steps on a 3-d grid were
# about 20% faster on 200k uniform rows but raised perturb's memory floor above tests/test_spill.py's.)
LEVEL_STEPS = {0: 1, 1: 1, 2: 1, 3: 1, 4: 2, 5: 3}
CELL_KEY_BITS = 62         # the packed cell key: G fields of 62 // G bits, a non-negative BIGINT
CELL_CLAMP = "1e12"        # cell coordinates beyond this (in cells) are clamped; such records have no margin
SLACK = "1e-9"             # relative safety margin against floating-point rounding at cell edges
PRUNE_SLACK = "1e-6"       # the same, where the cell join skips neighbour cells beyond the margin
SKIP_FAR_CELLS = 4         # on grids of at least this many coordinates (None: never, for tests and A/B timing)
AXIS_NORM_SLACK = 1e-12    # a grid direction's norm may exceed 1 by this (well inside SLACK)
UNIT_ROUNDOFF = 2.0 ** -53
PAIR_FIELDS = [("d2", "d2"), ("j", "j")]      # a neighbour in a list: sorted by (distance, record)
PERTURB_PURPOSE = "rwn.perturb"
ORDER_PURPOSE = "rwn.order"
# The second density round moves a record a level finer only where its estimate says at least
# 7/8 of a level (rounds log-levels - 0.375): plain rounding made W2 (bench_rwn.py) compare
# slightly more candidates, records starting too fine and paying for one more level.
SECOND_ROUND_BIAS = 0.375


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


def members_within(found: str, eps2: str, spec: RWNSpec, dialect: Dialect) -> tuple[str, str]:
    """(members, radius2): the neighbourhood S_i from the list `found` of (d2, j), sorted by
    (d2, j) and holding at least the k nearest and every record within the bound. radius2 =
    greatest(eps^2, d2 of the k-th nearest) (eps^2 when k = 0), `eps2` its SQL; the members are
    the entries with d2 <= radius2 times the tie factor, a prefix of `found` (the search, and
    tune's narrowing of the widest lists to a smaller eps)."""
    radius2 = eps2 if spec.k == 0 else f"greatest({eps2}, {dialect.list_element(found, str(spec.k))}.d2)"
    return dialect.list_filter(found, "e", f"e.d2 <= ({radius2}) * {tie_factor(spec)}"), radius2


def cell_draw(keep_bits: str, pick_bits: str, size: str, spec: RWNSpec, dialect: Dialect) -> tuple[str, str]:
    """(replaced, index): one cell's draw from the two halves of its keyed hash (perturb's
    picks and tune's sweeps). The cell takes a member's value when `replaced` holds, its keep
    bits below q 2^52 (probability q), and then that of member `index` (1-based) of S_i in
    (d2, j) order: 1 + floor(u |S_i|) with u the pick bits over 2^52, at most |S_i| (`size`)."""
    threshold = float_literal(spec.q * TWO_52)   # exact: q * 2^52 is a power-of-two scaling
    index = f"least({size}, 1 + CAST(floor({dialect.unit_fraction(pick_bits)} * {size}) AS BIGINT))"
    return f"{keep_bits} < {threshold}", index


def replicate_key_sql(key_sql: str, rep: str, dialect: Dialect) -> str:
    """SQL of replicate_key: the key of the replicate numbered by the expression `rep`."""
    return f"({key_sql} || '#' || {dialect.as_text(rep)})"


def _join(pieces, sep=",\n        ", lead=",\n        ") -> str:
    pieces = list(pieces)
    return (lead + sep.join(pieces)) if pieces else ""


def neighborhood_ctes(source: str, spec: RWNSpec, dialect: Dialect = DUCKDB, axes=None, ball=None) -> str:
    """The CTEs (without WITH) that end in `hood(rid, members, radius2, dcr2, size)`. `axes`: the
    grid's directions in the scaled space (see check_axes), or None for the columns. `ball`: the
    sub-levels of the ball path (see ball_levels), or None: every record's members listed."""
    return render("rwn_neighborhoods.sql", **_neighborhood_values(source, spec, dialect, axes, ball))


CTE_HEAD = re.compile(r"^(\w+)(?:\([^)]*\))? AS ", re.M)


def neighborhood_steps(source: str, spec: RWNSpec, dialect: Dialect = DUCKDB, axes=None, ball=None) -> dict[str, str]:
    """The steps of neighborhood_ctes for an engine that drives the search levels itself: every
    CTE by name ("name AS (...)", in order), "seed": the SELECT of the search's level -1, and
    "level": the recursive member, one level of the search (CTEs then a SELECT) reading the
    previous level's rows from `search`; "rows": the SELECT of the rows `staged` numbers.""" 
    values = _neighborhood_values(source, spec, dialect, axes, ball)
    text = render("rwn_neighborhoods.sql", **values)
    heads = list(CTE_HEAD.finditer(text))
    steps = {m.group(1): text[m.start():(heads[i + 1].start() if i + 1 < len(heads) else len(text))].rstrip().rstrip(",")
             for i, m in enumerate(heads)}
    steps["seed"], steps["level"] = values["search_seed"], values["level_step"]
    steps["rows"] = "SELECT * FROM src" + values["missing_filter"]     # what `staged` numbers
    steps["first_grid_coordinate"] = values["first_grid_coordinate"]
    return steps


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


def missing_filter_sql(spec: RWNSpec, dialect: Dialect = DUCKDB) -> str:
    """The WHERE clause (with its leading newline) that keeps the records on_missing='drop'
    keeps: a value in every column (numeric ones also finite); '' for on_missing='error'."""
    if spec.on_missing != "drop":
        return ""
    conds = [f"{quote_ident(c)} IS NOT NULL AND {dialect.is_finite(f'CAST({quote_ident(c)} AS DOUBLE)')}"
             for c in spec.numeric]
    conds += [f"{quote_ident(c)} IS NOT NULL" for c in spec.categorical]
    return "\n    WHERE " + "\n      AND ".join(conds)


def _neighborhood_values(source: str, spec: RWNSpec, dialect: Dialect, axes=None, ball=None) -> dict:
    num, cat, strata = spec.numeric, spec.categorical, spec.strata
    D, C = len(num), len(cat)
    G = min(D, MAX_GRID_DIMS)            # grid coordinates g_1..g_G; the first grid_dims are used
    axes = check_axes(axes, spec)
    dims = range(min(D, BASE_GRID_DIMS), G + 1)
    if axes is not None:                 # one grid coordinate per direction
        G = len(axes)
        dims = range(G, G + 1)

    def by_dims(values, grid_dims="st.grid_dims"):
        """A value that depends on the grid dimension chosen at run time."""
        values = {g: values(g) for g in dims}
        if len(values) == 1:
            return str(next(iter(values.values())))
        return f"CASE {grid_dims} " + " ".join(f"WHEN {g} THEN {v}" for g, v in values.items()) + " END"
    col = {name: quote_ident(name) for name in spec.columns + strata}

    # --- validation, scaling -------------------------------------------------------
    missing_filter = missing_filter_sql(spec, dialect)
    stats = []
    for i, c in enumerate(num, 1):
        v = f"CAST({col[c]} AS DOUBLE)"
        # Over finite values only: before DuckDB 2.0 an infinite value makes these raise instead
        # of reaching the check below that names the column.
        finite = f"FILTER (WHERE {dialect.is_finite(v)})"
        stats += [f"min({v}) AS lo_{i}", f"max({v}) AS hi_{i}", f"stddev_samp({v}) {finite} AS sd_{i}",
                  f"var_pop({v}) {finite} AS var_{i}",
                  f"count(*) FILTER (WHERE {col[c]} IS NULL OR NOT {dialect.is_finite(v)}) AS bad_{i}"]
    for i, c in enumerate(cat, 1):
        stats.append(f"count(*) FILTER (WHERE {col[c]} IS NULL) AS badc_{i}")
    if D > BASE_GRID_DIMS and axes is None:      # for the participation ratio (grid_dims below)
        for i in range(1, D + 1):
            for j in range(i + 1, D + 1):
                vi, vj = (f"CAST({col[num[m - 1]]} AS DOUBLE)" for m in (i, j))
                stats.append(f"covar_pop({vi}, {vj}) FILTER (WHERE {dialect.is_finite(vi)} AND "
                             f"{dialect.is_finite(vj)}) AS cov_{i}_{j}")

    scaling, checks = [], []
    for i, c in enumerate(num, 1):
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
    for i, c in enumerate(cat, 1):
        name = quote_literal(f"column {quote_ident(c)}")
        checks.append(f"WHEN badc_{i} > 0 THEN {name} || ' has ' || badc_{i} || "
                      f"' NULL values; clean them or use on_missing=''drop'' (--on-missing drop)'")
    if spec.k > 0:
        where = "stratum ' || smallest_label || ' has" if strata else "the input has"
        checks.append(f"WHEN smallest <= {spec.k} THEN '{where} ' || smallest || ' records; "
                      f"k = {spec.k} needs at least {spec.k + 1} (k must be below the number of "
                      f"records in every stratum)'")
    if spec.id:
        ident = quote_ident(spec.id)
        stats += [f"count({ident}) AS id_count", f"count(DISTINCT {ident}) AS id_distinct"]
        name = quote_literal(f"the id column {ident}")
        checks.append(f"WHEN id_count < n THEN {name} || ' has ' || (n - id_count) || ' NULL values; "
                      f"every record needs an id'")
        checks.append(f"WHEN id_distinct < id_count THEN {name} || ' has duplicate values ('  || "
                      f"(id_count - id_distinct) || ' records share an id with another); every record "
                      f"needs its own id'")
    checks_sql = "".join("\n            " + c for c in checks)

    if strata:
        label = dialect.as_text(dialect.struct_pack([(col[s], col[s]) for s in strata]))
        group = ", ".join(col[s] for s in strata)
    else:
        label, group = "'all records'", ""

    # --- grid ------------------------------------------------------------------------
    w = float_literal(spec.weight)
    w2 = float_literal(spec.weight * spec.weight)
    diameter2 = " + ".join([f"pow((hi_{i} - lo_{i}) / sc_{i}, 2)" for i in range(1, D + 1)]
                           + ([f"{C} * {w2}"] if C else [])) or "0.0"
    k_search = max(spec.k, 1)
    if axes is not None:
        grid_dims = str(G)
    elif D > BASE_GRID_DIMS:
        # Participation ratio (sum of eigenvalues)^2 / (sum of their squares) of the scaled
        # covariance, from its entries: about the number of directions the data spreads in.
        # It only chooses the grid (the speed): neighbourhoods are exact on any grid.
        var = [f"var_{i} / (sc_{i} * sc_{i})" for i in range(1, D + 1)]
        cov = [f"cov_{i}_{j} / (sc_{i} * sc_{j})" for i in range(1, D + 1) for j in range(i + 1, D + 1)]
        ratio = (f"pow({' + '.join(var)}, 2) / ({' + '.join(f'pow({v}, 2)' for v in var)}"
                 f" + 2 * ({' + '.join(f'pow({c}, 2)' for c in cov)}))")
        grid_dims = (f"CASE WHEN {dialect.is_finite(ratio)} THEN greatest({dims[0]}, least({G}, "
                     f"CAST(round({ratio}) AS INTEGER))) ELSE {dims[0]} END")
    else:
        grid_dims = str(G)
    if G:
        # Expected count within s of a record ~ n * V_G * s^G / volume: aim for 2 (k + 1).
        ranges = " * ".join(f"((hi_{i} - lo_{i}) / sc_{i})" for i in range(1, D + 1))
        s_estimate = by_dims(lambda g: f"coalesce(pow({2 * (k_search + 1)} * pow({ranges}, {g}.0 / {D}) "
                                       f"/ (n * {UNIT_BALL[g]!r}), 1.0 / {g}), 0.0)", "grid_dims")
    else:
        s_estimate = f"0.5 * {w}"
    grid_order = ""
    if D > G and axes is None:
        entries = [dialect.struct_pack([("v", f"var_{i} / pow(sc_{i}, 2)"), ("i", str(i))]) for i in range(1, D + 1)]
        grid_order = f",\n        {dialect.descending_field(entries, 'i')} AS grid_order"

    point_columns = [f"s.{col[s]} AS k_{i}" for i, s in enumerate(strata, 1)]
    x = {i: f"(CAST(s.{col[c]} AS DOUBLE) - p.off_{i}) / p.sc_{i}" for i, c in enumerate(num, 1)}

    def grid_coordinate(d, x):
        """g_d from the scaled values x[i] (settings as st)."""
        if axes is not None:
            g = " + ".join(f"{float_literal(c)} * {x[i]}" for i, c in enumerate(axes[d - 1], 1) if c != 0.0) or "0.0"
        elif D == G:
            g = x[d]
        else:
            cases = " ".join(f"WHEN {i} THEN {x[i]}" for i in x)
            g = f"CASE {dialect.list_element('st.grid_order', str(d))} {cases} END"
        if d > dims[0]:     # an unused grid dimension: one cell, offset 0 only
            g = f"CASE WHEN st.grid_dims >= {d} THEN {g} ELSE 0.0 END"
        return g
    # distances use the unscaled values v_*: a difference of two values is exact or rounded
    # once, a difference of two scaled values is not (METHODS.md, "Exact ties")
    point_columns += [f"CAST(s.{col[c]} AS DOUBLE) AS v_{i}" for i, c in enumerate(num, 1)]
    point_columns += [f"s.{col[c]} AS c_{i}" for i, c in enumerate(cat, 1)]
    if axes is not None:
        # Grid coordinates along the given directions; g_mag = sum |x_k| bounds the rounding
        # of a coordinate (see grid_margin).
        point_columns.append(" + ".join(f"abs({x[i]})" for i in x) + " AS g_mag")
    point_columns += [f"{grid_coordinate(d, x)} AS g_{d}" for d in range(1, G + 1)]
    # `points` keeps the grid coordinates along principal axes only: on a column grid they are
    # recomputed, bit for bit, from v_* by the steps that read them (grid_columns), which keeps
    # `points` half as wide (10M x 5: 400 MB less).
    kept_grid = [f"g_{d}" for d in range(1, G + 1)] if axes is not None else []
    grid_columns = "" if axes is not None else "".join(
        f", {grid_coordinate(d, {i: f'(p.v_{i} - st.off_{i}) / st.sc_{i}' for i in x})} AS g_{d}"
        for d in range(1, G + 1))

    if G:
        offset_columns = ", ".join(f"t{d}.o AS o_{d}" for d in range(1, G + 1)) + "\n    FROM " + \
            ", ".join(f"range(-1, 2) t{d}(o)" for d in range(1, G + 1))
        if G > dims[0]:
            offset_columns += ", settings st\n    WHERE " + " AND ".join(
                f"(t{d}.o = 0 OR st.grid_dims >= {d})" for d in range(dims[0] + 1, G + 1))
    else:
        offset_columns = "0 AS o_0"
    # Cells as integers, clamped (a record that far out in cell units has no margin left, see
    # grid_margin); the join key packs them, each modulo 2^bits, into one BIGINT. Cells that
    # wrap onto the same key only add candidates outside the margin, which the margin filters.
    bits = CELL_KEY_BITS // G if G else 0

    def cell(g, s):
        return f"CAST({dialect.floor(f'least(greatest({g} / {s}, -{CELL_CLAMP}), {CELL_CLAMP})')} AS BIGINT)"

    def pack(cells):
        return " + ".join(f"(({c}) % {1 << bits} + {1 << bits}) % {1 << bits}" + (f" * {1 << (bits * d)}" if d else "")
                          for d, c in enumerate(cells))

    probe_keys = [f"{cell(f'g_{d}', 's')} AS cell_{d}" for d in range(1, G + 1)]
    build_keys = ([f"{pack([cell(f'g_{d}', 'l.s') for d in range(1, G + 1)])} AS cell_key"] if G else [])
    probe_keys += [f"CASE WHEN s < {w} THEN c_{i} END AS ck_{i}" for i in range(1, C + 1)]
    build_keys += [f"CASE WHEN l.s < {w} THEN c_{i} END AS ck_{i}" for i in range(1, C + 1)]
    if G:
        fracs = [f"g_{d} / s - {dialect.floor(f'g_{d} / s')}" for d in range(1, G + 1)]
        edges = ", ".join(f"{f}, 1 - ({f})" if d <= dims[0] else
                          f"CASE WHEN grid_dims >= {d} THEN least({f}, 1 - ({f})) ELSE 1.0 END"
                          for d, f in enumerate(fracs, 1))
        far = ", ".join([f"abs(g_{d} / s)" for d in range(1, G + 1)] + (["g_mag / s"] if axes is not None else []))

        def block_reach(sign: str, allowance: str) -> str:
            """s plus the distance to the cell's nearest face, narrowed (sign '-') or widened
            ('+') by `allowance` times the rounding scale s (1 + the largest |g / s|)."""
            return f"s * (1 + least({edges}) {sign} {allowance} * (1 + greatest({far})))"
        grid_margin = block_reach("-", SLACK)
    else:
        grid_margin = "'Infinity'::DOUBLE"
    # A neighbour cell whose box lies farther from the record than its margin holds no
    # candidate within it: the cell join skips that offset. Exact: a record j in cell c + o
    # lies beyond that cell's face, gap_d away from i, along every d with o_d != 0, and
    # sum gap_d^2 <= |U^T (x_i - x_j)|^2 <= lambda d(i, j)^2 (lambda the
    # largest eigenvalue of the directions' Gram matrix, 1 for orthonormal axes or
    # columns). The bound takes PRUNE_SLACK, 1000 times the margin's rounding allowance.
    # On 3 / 4 / 5 grid dimensions about 15 / 28 / 42 % of the 3^G cells are skipped; on 3 the
    # test costs what it saves (W1 200k: 1.17 against 1.11 s), on 5 it saves 20 % (W1g 100k).
    if G and SKIP_FAR_CELLS is not None and G >= SKIP_FAR_CELLS:
        probe_keys += [f"{fracs[d - 1]} AS f_{d}" for d in range(1, G + 1)]
        probe_keys.append(f"CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE ELSE "
                          f"{float_literal(gram_bound(axes))} * pow({block_reach('+', PRUNE_SLACK)}, 2) END AS prune2")
        # as a NULL key, not a WHERE: DuckDB made a filter there a nested-loop join condition
        # and then hashed the records' side of the cell join (W1 100k: 1.4x slower)
        far_cell = ("s * s * (" + " + ".join(
            f"CASE o.o_{d} WHEN 1 THEN (1 - p.f_{d}) * (1 - p.f_{d}) WHEN -1 THEN p.f_{d} * p.f_{d} ELSE 0.0 END"
            for d in range(1, G + 1)) + ") > p.prune2")
    else:
        far_cell = None
    category_margin = (f", CASE WHEN s < {w} THEN {w} * (1 - {SLACK}) ELSE 'Infinity'::DOUBLE END"
                       if C else "")
    exact_keys = [f"k_{i}" for i in range(1, len(strata) + 1)] + [f"ck_{i}" for i in range(1, C + 1)]
    joins = ["b.cell_key = a.nb_key"] if G else []
    if G and exact_keys:
        # Strata and categorical keys ride in one struct with the first cell key (struct
        # equality matches NULL fields, like IS NOT DISTINCT FROM): a separate condition
        # between a and b alone let the optimizer join a stratum with itself before applying
        # the offsets, which is quadratic within a stratum.
        joins[0] = (f"{dialect.struct_pack([('c', 'b.cell_key')] + [(e, f'b.{e}') for e in exact_keys])} = "
                    f"{dialect.struct_pack([('c', 'a.nb_key')] + [(e, f'a.{e}') for e in exact_keys])}")
    else:
        joins += [f"b.{e} IS NOT DISTINCT FROM a.{e}" for e in exact_keys]
    terms = [f"((a.v_{i} - b.v_{i}) / a.sc_{i}) * ((a.v_{i} - b.v_{i}) / a.sc_{i})" for i in range(1, D + 1)]
    terms += [f"CASE WHEN a.c_{i} = b.c_{i} THEN 0.0 ELSE {w2} END" for i in range(1, C + 1)]
    eps2 = float_literal(spec.eps * spec.eps)
    members, radius2 = members_within("found", eps2, spec, dialect)

    if G:
        # The expected count per cell of side s for evenly spread data is 2 (k + 1) / V_G (see
        # s_estimate); a record whose cell holds c records starts log2(c V_G / (2 (k + 1))) / G
        # doublings finer. Twice: from its cell at side s0, then from its cell at that level.
        steps = by_dims(lambda g: f"{LEVEL_STEPS[g]}.0 / {g}")
        unit_ball = by_dims(lambda g: repr(UNIT_BALL[g]))
        growth = by_dims(lambda g: float_literal(2.0 ** (1.0 / LEVEL_STEPS[g])))
        strata_cells = [f"k_{i}" for i in range(1, len(strata) + 1)]

        def finer(side, level=None):
            """Levels finer than `side` for the record's cell count at that side."""
            cells = ", ".join(strata_cells + ([level] if level else [])
                              + [dialect.floor(f"g_{d} / ({side})") for d in range(1, G + 1)])
            bias = f" - {SECOND_ROUND_BIAS}" if level else ""
            return (f"CAST(round(log2(greatest(count(*) OVER (PARTITION BY {cells}) * "
                    f"{unit_ball} / {2 * (k_search + 1)}, 1)) * {steps}{bias}) AS INTEGER)")
        first_level = f"-{finer('st.s0')}"
        start_level = f"first_lvl - {finer(f'st.s0 * pow({growth}, first_lvl)', 'first_lvl')}"
        if spec.eps > 0:
            # not below the level whose side s can hold eps in a margin (at most 1.5 s)
            per_doubling = by_dims(lambda g: f"{LEVEL_STEPS[g]}.0")
            lowest = f"CAST(ceil({per_doubling} * log2({float_literal(spec.eps)} / (1.5 * st.s0))) AS INTEGER)"
            start_level = f"greatest({start_level}, least(first_lvl, {lowest}))"
    else:
        first_level = start_level = "0"
    neighbour_key = pack([f"p.cell_{d} + o.o_{d}" for d in range(1, G + 1)]) if G else ""
    if far_cell:
        neighbour_key = f"CASE WHEN {far_cell} THEN NULL ELSE {neighbour_key} END"
    neighbour_key += " AS nb_key"
    level_step = render(
        "rwn_level.sql",
        settings_columns="".join(f", sc_{i}" for i in range(1, D + 1)) + ", grid_dims",
        grid_columns=grid_columns,
        growth=growth if G else "2.0",
        probe_keys=_join(probe_keys, sep=",\n            ", lead=",\n            "),
        build_keys=_join(build_keys, sep=",\n            ", lead=",\n            "),
        margin=f"least({grid_margin}{category_margin})" if C else grid_margin,
        distance2="\n                + ".join(terms),
        join_condition=" AND ".join(joins) if joins else "true",
        neighbour_cells=(f", {neighbour_key}" if G else ""),
        k_search=k_search,
        eps2=eps2,
        tie_factor=tie_factor(spec),
        margin_filter=margin_filter(dialect),
        found_list=dialect.sorted_struct_list_agg(PAIR_FIELDS, "j <> i AND d2 <= margin2"),
        members=members,
        radius2=radius2,
        closest=f"{dialect.list_element('found', '1')}.d2",
    )
    no_members = dialect.null_struct_list([("d2", "DOUBLE"), ("j", "BIGINT")])
    search_seed = (f"SELECT (SELECT min(start_lvl) FROM points) - 1 AS lvl, points.rid, start_lvl, false AS done,\n"
                   f"        {no_members} AS members, NULL::DOUBLE AS radius2, NULL::DOUBLE AS dcr2\n"
                   f"    FROM points")
    ball_ctes = hood_ball = hood_ball_note = ""
    if ball is not None:
        bp = BallPieces(spec, dialect, axes)
        ball_ctes = bp.prepass_ctes(grid_margin, grid_columns)
        # ball records skip the search: their neighbourhood is the eps-ball, counted by the pre-pass
        search_seed += "\n    LEFT JOIN ball_records br ON br.rid = points.rid\n    WHERE br.rid IS NULL"
        hood_ball = (f"\n    UNION ALL\n    SELECT rid, {no_members} AS members, {eps2} AS radius2, dcr2, size\n"
                     f"    FROM ball_records")
        hood_ball_note = ("; records whose\n    -- neighbourhood is their eps-ball (ball_records) have only the number, "
                          "their donors are fetched by rank")
    point_names = (["rid"] + [f"k_{i}" for i in range(1, len(strata) + 1)] + [f"v_{i}" for i in range(1, D + 1)]
                   + [f"c_{i}" for i in range(1, C + 1)] + (["g_mag"] if axes is not None else []) + kept_grid)
    return dict(
        ball_ctes=ball_ctes,
        hood_ball=hood_ball,
        hood_ball_note=hood_ball_note,
        members_size=dialect.list_length("members"),
        first_level=first_level,
        start_level=start_level,
        point_names=", ".join(point_names),
        source=source,
        materialized=dialect.materialized(),
        missing_filter=missing_filter,
        rid_order=f"ORDER BY {quote_ident(spec.id)}" if spec.id else "",
        stats=_join(stats, lead=",\n        "),
        stratum_label=label,
        stratum_group_by=dialect.group_by(group),
        smallest_label=dialect.arg_min("label", "size"),
        scaling=_join(scaling),
        checks=checks_sql,
        raise_problem=dialect.raise_error("'rwn_sql: ' || problem"),
        eps=float_literal(spec.eps),
        s_estimate=s_estimate,
        diameter2=diameter2,
        grid_order=grid_order,
        grid_dims=grid_dims,
        point_columns=_join(point_columns),
        offset_columns=offset_columns,
        scales="".join(f", off_{i}, sc_{i}" for i in range(1, D + 1)),
        search_seed=search_seed,
        tie_factor=tie_factor(spec),
        level_step=level_step,
        # g_1 of a row of `points` (as p, with settings as st): where a level runs in chunks
        first_grid_coordinate=("p.g_1" if axes is not None else
                               grid_coordinate(1, {i: f"(p.v_{i} - st.off_{i}) / st.sc_{i}" for i in x})) if G else "",
    )


# False: no margin filter after the cell join (the aggregates' FILTERs alone), for comparisons
MARGIN_FILTER = True


def margin_filter(dialect: Dialect) -> str:
    """The level step's WHERE on the cell join's pairs: those within the margin (every row the
    aggregates of `found` read; i itself, at distance 0, always among them), where the dialect
    can keep the filter out of the join (Dialect.join_opaque), else nothing."""
    bound = dialect.join_opaque("margin2") if MARGIN_FILTER else None
    return f"\n    WHERE d2 <= {bound}" if bound else ""


def pair_estimate_sql(source: str, spec: RWNSpec) -> str:
    """A cheap pre-pass: (lower bound on sum |S_i|, records, largest group, its stratum label).

    Records sharing a cell of side eps / sqrt(D) (scaled units; the exact values when eps = 0)
    and their strata and categorical values are within eps of each other, so each has at
    least max(group size - 1, k) neighbours: the sum over groups bounds the pairs the
    neighbourhoods hold from below."""
    num, cat = spec.numeric, spec.categorical
    col = {name: quote_ident(name) for name in spec.columns + spec.strata}
    keys = [col[s] for s in spec.strata] + [col[c] for c in cat]
    stats, where = [], ""
    if spec.on_missing == "drop":
        where = "\n    WHERE " + " AND ".join(
            [f"{col[c]} IS NOT NULL AND isfinite(CAST({col[c]} AS DOUBLE))" for c in num]
            + [f"{col[c]} IS NOT NULL" for c in cat])
    for i, c in enumerate(num, 1):
        v = f"CAST({col[c]} AS DOUBLE)"
        if spec.eps == 0:
            keys.append(v)
            continue
        off, sc = {"minmax": (f"min({v})", f"max({v}) - min({v})"),
                   "zscore": ("0.0", f"stddev_samp({v})"),
                   "none": ("0.0", "1.0")}[spec.scale]
        stats += [f"{off} AS off_{i}", f"{sc} AS sc_{i}"]
        side = float_literal(spec.eps / math.sqrt(len(num)) * (1 - 1e-9))
        cell = f"floor(({v} - off_{i}) / sc_{i} / {side})"
        keys.append(f"CASE WHEN isfinite({cell}) THEN {cell} ELSE {v} END")   # bad scale: exact values
    label = ("CAST(struct_pack(" + ", ".join(f"{col[s]} := any_value({col[s]})" for s in spec.strata)
             + ") AS VARCHAR)" if spec.strata else "'all records'")
    stats_cte = f",\nstats AS (SELECT {', '.join(stats)} FROM src)" if stats else ""
    return (f"WITH src AS (\n    SELECT * FROM {source}{where}\n){stats_cte},\n"
            f"cells AS (\n    SELECT count(*) AS c, {label} AS label\n    FROM src{', stats' if stats else ''}\n"
            f"    GROUP BY {', '.join(keys)}\n)\n"
            f"SELECT coalesce(sum(c * greatest(c - 1, {spec.k})), 0)::HUGEINT, coalesce(sum(c), 0),\n"
            f"    coalesce(max(c), 0), arg_max(label, c)\nFROM cells")


def listed_pairs_sample_sql(source: str, spec: RWNSpec, sample: int) -> str:
    """An estimate of the pairs that listing every neighbourhood holds (sum |S_i|, as tune's
    staged lists do): (records, records sampled, estimated pairs). A reservoir sample of
    `sample` records (all of them when fewer) counts, for each, the other sampled records
    within eps (the search's distance: scaled columns, categorical mismatch weight, same
    stratum, its tie factor); scaled by (n - 1) / (m - 1) and at least k, averaged and times n.
    Unbiased for the pairs within eps, not a bound; its cost is that of sample^2 distances and
    one pass over the source, whatever its size."""
    num, cat = spec.numeric, spec.categorical
    col = {name: quote_ident(name) for name in spec.columns + spec.strata}
    where = ""
    if spec.on_missing == "drop":
        where = "\n    WHERE " + " AND ".join(
            [f"{col[c]} IS NOT NULL AND isfinite(CAST({col[c]} AS DOUBLE))" for c in num]
            + [f"{col[c]} IS NOT NULL" for c in cat])
    stats = ["count(*) AS n"]
    picked = []
    for i, c in enumerate(num, 1):
        v = f"CAST({col[c]} AS DOUBLE)"
        sc = {"minmax": f"max({v}) - min({v})", "zscore": f"stddev_samp({v})", "none": "1.0"}[spec.scale]
        stats.append(f"coalesce(nullif({sc}, 0), 1.0) AS sc_{i}")     # a constant column adds 0
        picked.append(f"{v} AS v_{i}")
    picked += [f"{col[c]} AS c_{i}" for i, c in enumerate(cat, 1)]
    picked += [f"{col[c]} AS k_{i}" for i, c in enumerate(spec.strata, 1)]
    w2 = float_literal(spec.weight * spec.weight)
    terms = [f"((a.v_{i} - b.v_{i}) / t.sc_{i}) * ((a.v_{i} - b.v_{i}) / t.sc_{i})" for i in range(1, len(num) + 1)]
    terms += [f"CASE WHEN a.c_{i} = b.c_{i} THEN 0.0 ELSE {w2} END" for i in range(1, len(cat) + 1)]
    same = "".join(f" AND a.k_{i} = b.k_{i}" for i in range(1, len(spec.strata) + 1))
    bound = f"{float_literal(spec.eps * spec.eps)} * {tie_factor(spec)}"
    return (f"WITH src AS (\n    SELECT * FROM {source}{where}\n),\n"
            f"stats AS (SELECT {', '.join(stats)} FROM src),\n"
            f"s AS (\n    SELECT row_number() OVER () AS sid, {', '.join(picked)}\n"
            f"    FROM (SELECT * FROM src USING SAMPLE reservoir({int(sample)} ROWS) REPEATABLE (22))\n),\n"
            f"close AS (\n    SELECT a.sid, count(b.sid) AS c\n    FROM s a CROSS JOIN stats t\n"
            f"    LEFT JOIN s b ON a.sid <> b.sid{same} AND {' + '.join(terms) or '0.0'} <= {bound}\n"
            f"    GROUP BY a.sid\n)\n"
            f"SELECT any_value(t.n), count(*),\n"
            f"    coalesce(avg(greatest(c * (t.n - 1) / greatest(m.m - 1, 1), {int(spec.k)})) * any_value(t.n), 0)\n"
            f"FROM close, stats t, (SELECT count(*) AS m FROM s) m")


def neighborhoods_sql(source: str, spec: RWNSpec, pairs: bool = False,
                      dialect: Dialect = DUCKDB, axes=None, ball=None) -> str:
    """Per record: `record` (1-based input position), neighbourhood `size`, `radius`
    = max(eps, r_k) and `dcr` (distance to the closest other record). With pairs=True:
    one row per (record, neighbor, distance) instead."""
    if pairs and ball is not None:
        raise ValueError("the pairs need every member listed: no ball path")
    return ("WITH RECURSIVE\n" + neighborhood_ctes(source, spec, dialect, axes, ball) + "\n"
            + neighborhoods_final(pairs, dialect))


def neighborhoods_final(pairs: bool, dialect: Dialect = DUCKDB) -> str:
    """The SELECT of neighborhoods_sql, over `hood`."""
    if pairs:
        return ("SELECT record, neighbor, sqrt(d2) AS distance\n"
                f"FROM {dialect.unnest_struct_list('hood', 'rid AS record', 'members', ['record', 'd2', 'neighbor'])}\n"
                "ORDER BY record, distance, neighbor")
    return ("SELECT rid AS record, size, sqrt(radius2) AS radius, "
            "sqrt(dcr2) AS dcr\nFROM hood\nORDER BY record")


def replicate_key(key: str, rep: int) -> str:
    """The key of replicate `rep` of a multi-release run: release r equals perturb(key=key#r)."""
    return f"{key}#{rep}"


def perturb_ctes(source: str, spec: RWNSpec, key_sql: str, dialect: Dialect = DUCKDB,
                 reps: int | None = None, axes=None, ball=None) -> str:
    """Neighbourhood CTEs plus `draws`, `picks(rid, donor_1, ...)`: the donor record of
    every perturbed cell (the record itself when the cell is kept, NULL when S_i is empty), and
    `lookup`: the staged rows, to read the donors' values from once every draw is made.
    With `reps`, `reps` independent releases over the same neighbourhoods, replicate r drawn
    with the key `key#r` (see replicate_key), and a `rep` column."""
    return (neighborhood_ctes(source, spec, dialect, axes, ball) + ",\n"
            + perturb_tail_ctes(spec, key_sql, dialect, reps, ball, axes))


def perturb_tail_ctes(spec: RWNSpec, key_sql: str, dialect: Dialect = DUCKDB, reps: int | None = None,
                      ball=None, axes=None) -> str:
    """The CTEs of perturb_ctes after the neighbourhoods: they read only `hood` and `staged`, and
    with the ball path `settings`, `ball_points` and `ball_cells` (on the grid of `axes`, as the
    neighbourhoods were)."""
    if reps is not None:
        key_sql = replicate_key_sql(key_sql, "rep", dialect)
    hashes, donors = [], []
    record, record_ids = "rid", ""
    if spec.id:      # draws keyed by the id's value, read beside each record number
        record = "__rwn_ids.__rwn_record"
        record_ids = (f"\n    JOIN (SELECT __rwn_rid, {dialect.as_text(quote_ident(spec.id))} AS __rwn_record "
                      f"FROM staged) AS __rwn_ids ON __rwn_ids.__rwn_rid = hood.rid")
    size = "size"
    for i, c in enumerate(spec.columns, 1):
        hashes.append(f"{hash_sql(key_sql, PERTURB_PURPOSE, record, c, dialect)} AS h_{i}")
        replaced, index = cell_draw(bits_sql(f"h_{i}", 0, dialect), bits_sql(f"h_{i}", 1, dialect), size, spec,
                                    dialect)
        donors.append(f"CASE WHEN {replaced} THEN {dialect.list_element('members', index)}.j "
                      f"ELSE rid END AS donor_{i}")
        if ball is not None:     # a ball record's replaced cell: the rank to fetch (ball_draws)
            donors.append(f"CASE WHEN members IS NULL AND {replaced} THEN {index} END AS rank_{i}")
    ball_ctes = "" if ball is None else BallPieces(spec, dialect, axes).fetch_ctes(ball, reps is not None)
    return render("rwn_perturb.sql", hashes=_join(hashes), donors=_join(donors),
                   picks="picks" if ball is None else "picks0", ball_ctes=ball_ctes,
                   materialized=dialect.materialized(),
                   rep=", rep" if reps is not None else "",
                   record_ids=record_ids,
                   replicates=f", range({int(reps)}) AS r(rep)" if reps is not None else "")


ORDERS = ("keyed", "input")


def perturb_sql(source: str, spec: RWNSpec, key_sql: str = KEY_PLACEHOLDER,
                dialect: Dialect = DUCKDB, reps: int | None = None, order: str = "keyed", axes=None,
                ball=None) -> str:
    """The release: every input row once, the spec's columns perturbed, other columns unchanged
    (minus `spec.drop`), column types preserved. order='keyed' writes the rows in an order drawn
    by the keyed hash, so row order carries nothing about the input order; order='input' keeps
    the input order (experiments). With `reps`: that many releases, in a leading column
    `replicate` (0-based), each in input order."""
    final = perturb_final(spec, key_sql, dialect, reps, order)
    return "WITH RECURSIVE\n" + perturb_ctes(source, spec, key_sql, dialect, reps, axes, ball) + "\n" + final


def perturb_final(spec: RWNSpec, key_sql: str, dialect: Dialect = DUCKDB, reps: int | None = None,
                  order: str = "keyed", columns=None, fetched: bool = False) -> str:
    """The SELECT of perturb_sql, over `picks` and `lookup`. `columns`: the source's column
    names, for an engine without SELECT * EXCLUDE/REPLACE (then listed one by one). `fetched`:
    `picks` already holds the donors' values (donor_value_sql's __rwn_v_*), the rows are `staged`."""
    if order not in ORDERS:
        raise RWNError(f"order must be one of {', '.join(ORDERS)}; got {order!r}")
    value = {c: f"p.__rwn_v_{i}" if fetched else f"d_{i}.{quote_ident(c)}" for i, c in enumerate(spec.columns, 1)}
    exclude = ["__rwn_rid"] + [quote_ident(c) for c in spec.drop]
    if columns is None:
        select = dialect.star("s", exclude, [(value[c], quote_ident(c)) for c in spec.columns])
    else:
        select = ", ".join(f"{value[c]} AS {quote_ident(c)}" if c in value else f"s.{quote_ident(c)}"
                           for c in columns if c not in spec.drop)
    if fetched:         # the narrower side last: the side DuckDB hashes when it keeps the order
        joined = ("staged s\nJOIN picks p ON p.rid = s.__rwn_rid" if reps is None
                  else "picks p\nJOIN staged s ON s.__rwn_rid = p.rid")
    else:
        joined = "picks p\nJOIN lookup s ON s.__rwn_rid = p.rid\n" + "\n".join(
            f"LEFT JOIN lookup d_{i} ON d_{i}.__rwn_rid = p.donor_{i}" for i in range(1, len(spec.columns) + 1))
    lead, by = ("p.rep AS replicate, ", "p.rep, ") if reps is not None else ("", "")
    if order == "keyed" and reps is None:
        record = f"s.{quote_ident(spec.id)}" if spec.id else "s.__rwn_rid"
        by = release_sort_key(key_sql, record, dialect)
    return f"SELECT {lead}{select}\nFROM {joined}\nORDER BY {by}s.__rwn_rid"


def release_sort_key(key_sql: str, record_sql: str, dialect: Dialect = DUCKDB) -> str:
    """The leading ORDER BY term of a keyed-order release (the record number breaks its ties):
    the one definition of the keyed order, for perturb and for keyed_positions_sql."""
    return order_key_sql(key_sql, ORDER_PURPOSE, record_sql, dialect) + ", "


def keyed_positions_sql(source: str, spec: RWNSpec, key_sql: str, dialect: Dialect = DUCKDB) -> str:
    """The 1-based input positions of the records of `source` in the order
    perturb(order='keyed') without id= writes their releases: the records numbered as
    `staged` numbers them (input position among those missing_filter_sql keeps), sorted as
    perturb_final sorts them. One column `position`, one row per released record."""
    return (f"SELECT s.__rwn_position AS position\n"
            f"FROM (SELECT __rwn_position, row_number() OVER (ORDER BY __rwn_position) AS __rwn_rid\n"
            f"      FROM (SELECT row_number() OVER () AS __rwn_position, * FROM {source}) AS src"
            f"{missing_filter_sql(spec, dialect)}) AS s\n"
            f"ORDER BY {release_sort_key(key_sql, 's.__rwn_rid', dialect)}s.__rwn_rid")


def kept_positions_sql(source: str, spec: RWNSpec, dialect: Dialect = DUCKDB) -> str:
    """The 1-based input positions of the records of `source` that perturb releases (those
    missing_filter_sql keeps), in input order: perturb(order='input') writes their releases
    in this order. One column `position`."""
    return (f"SELECT __rwn_position AS position\n"
            f"FROM (SELECT row_number() OVER () AS __rwn_position, * FROM {source}) AS src"
            f"{missing_filter_sql(spec, dialect)}\n"
            f"ORDER BY __rwn_position")


def donor_value_sql(spec: RWNSpec, i: int, reps: int | None = None) -> str:
    """Step i (1-based) of fetching the drawn donors' values one column at a time, for a
    memory-bound engine: perturb_final's one statement hashes the rows once per column, all at
    once. `picks` holds rid, [rep,] donor_i, ... donor_D and the values __rwn_v_1 ...
    __rwn_v_(i-1); the step reads column i of donor_i's row of `staged` (NULL: S_i empty) and
    keeps what the later steps read."""
    carried = (["p.rid"] + (["p.rep"] if reps is not None else [])
               + [f"p.donor_{j}" for j in range(i + 1, len(spec.columns) + 1)]
               + [f"p.__rwn_v_{j}" for j in range(1, i)])
    return (f"SELECT {', '.join(carried)}, d.{quote_ident(spec.columns[i - 1])} AS __rwn_v_{i}\n"
            f"FROM picks p\nLEFT JOIN staged d ON d.__rwn_rid = p.donor_{i}")


def donors_sql(source: str, spec: RWNSpec, key_sql: str = KEY_PLACEHOLDER,
               dialect: Dialect = DUCKDB, axes=None, ball=None) -> str:
    """Diagnostics (never publish): per record and perturbed column, the donor record and
    the neighbourhood size. `donor` equals `record` when the cell was kept."""
    return ("WITH RECURSIVE\n" + perturb_ctes(source, spec, key_sql, dialect, axes=axes, ball=ball) + "\n"
            + donors_final(spec, dialect))


def donors_final(spec: RWNSpec, dialect: Dialect = DUCKDB) -> str:
    """The SELECT of donors_sql, over `picks` and `hood`."""
    names = [quote_literal(c) for c in spec.columns]
    donors = [f"p.donor_{i}" for i in range(1, len(spec.columns) + 1)]
    return (f"SELECT p.rid AS record, u.column_name, u.donor, h.size\n"
            f"FROM picks p JOIN hood h ON h.rid = p.rid{dialect.unnest_columns(names, donors, ['column_name', 'donor'])}\n"
            "ORDER BY record, column_name")


# --- the ball path: neighbourhoods that are eps-balls, drawn by rank without listing them ----------
# A record with at least max(k, 1) other records within eps has r_k <= eps, so S_i is its eps-ball
# (METHODS.md section 1). For such "ball records" a pre-pass on a grid of side just above eps counts
# the ball's members per neighbour cell (a join streamed into a GROUP BY, no pair kept); a donor is
# then drawn as a uniform rank over |S_i| in a fixed order of S_i (cell in offset order, then halves
# of it, then record), and only the drawn cell is read again to find it. Memory: O(n 3^G) counts
# and O(n D) draws instead of sum |S_i| listed members.
BALL_SIDE = 1.001          # pre-pass cell side / eps: any ball member is in the record's 3^G block
BALL_MIN_MEMBERS = 64      # use the ball path when the estimated mean |S_i| reaches this
BALL_MIN_PAIRS = 1_000_000  # and the listed pairs would reach this (about 128 MB): small inputs keep their lists
BALL_BOX = 8               # halve the drawn cell until about this many ball members remain in it
BALL_MAX_LEVELS = 5


def ball_estimate_sql(source: str, spec: RWNSpec, dialect: Dialect = DUCKDB) -> str:
    """A cheap pre-pass for choosing the ball path: (records, sum over cells of c (c - 1)) for cells
    of side eps / sqrt(D) on the scaled numeric columns (plus strata and categorical values): the
    pairs of records sharing a cell are within eps of each other."""
    num = spec.numeric
    col = {name: quote_ident(name) for name in spec.columns + spec.strata}
    v = {i: f"CAST({col[c]} AS DOUBLE)" for i, c in enumerate(num, 1)}
    stats = []
    for i in v:
        off, sc = {"minmax": (f"min({v[i]})", f"max({v[i]}) - min({v[i]})"),
                   "zscore": ("0.0", f"stddev_samp({v[i]})"), "none": ("0.0", "1.0")}[spec.scale]
        stats += [f"{off} AS off_{i}", f"{sc} AS sc_{i}"]
    side = float_literal(spec.eps / math.sqrt(len(num)))
    keys = [f"s.{col[c]}" for c in spec.strata + spec.categorical]
    keys += [dialect.floor(f"(CAST(s.{col[c]} AS DOUBLE) - t.off_{i}) / t.sc_{i} / {side}")
             for i, c in enumerate(num, 1)]
    finite = " AND ".join(f"{dialect.is_finite(v[i])}" for i in v)
    return (f"WITH src AS (SELECT * FROM {source} WHERE {finite}),\n"
            f"stats AS (SELECT {', '.join(stats)} FROM src),\n"
            f"cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY {', '.join(keys)})\n"
            f"SELECT sum(c), sum(c * (c - 1)) FROM cells")


def ball_levels(records: int | None, pairs: int | None, spec: RWNSpec) -> int | None:
    """The ball path's number of halving levels from ball_estimate_sql's figures, or None when the
    estimated mean |S_i| is below BALL_MIN_MEMBERS or the estimated pairs below BALL_MIN_PAIRS
    (the listed neighbourhoods are then small).
    The estimate scales the pairs per record in cells of side eps / sqrt(D) by the ball's volume
    over the cell's; it chooses only the path and the speed, never the exactness."""
    D = len(spec.numeric)
    if spec.eps <= 0 or D == 0 or not records or pairs is None:
        return None
    # capped at the other records: on clumped data in many dimensions the volume ratio (about
    # 1e6 for D = 11) would otherwise send small inputs down the ball path
    mean = min(float(pairs) / float(records) * unit_ball_volume(D) * D ** (D / 2), float(records) - 1.0)
    if mean < BALL_MIN_MEMBERS or mean * records < BALL_MIN_PAIRS:
        return None
    G = min(D, BASE_GRID_DIMS)
    per_cell = mean / UNIT_BALL[G]            # members in one cell of side eps
    return max(0, min(BALL_MAX_LEVELS, math.ceil(math.log2(max(per_cell / BALL_BOX, 1.0)) / G)))


def unit_ball_volume(d: int) -> float:
    return math.pi ** (d / 2) / math.gamma(d / 2 + 1)


class BallPieces:
    """The SQL of the ball path for one spec: the pre-pass CTEs (after `offsets`) and the fetch CTEs
    of the perturb tail. Record i is `a`, a candidate j is `b`, as in the search."""

    def __init__(self, spec: RWNSpec, dialect: Dialect, axes=None):
        self.spec, self.d = spec, dialect
        self.D, self.C, self.S = len(spec.numeric), len(spec.categorical), len(spec.strata)
        self.G = grid_coordinates(spec, axes)
        self.bits = CELL_KEY_BITS // self.G
        self.side = float_literal(spec.eps * BALL_SIDE)
        self.eps2 = float_literal(spec.eps * spec.eps)
        # the members' bound, as the search computes it: radius2 * tie_factor with radius2 = eps2
        self.bound = f"{self.eps2} * {tie_factor(spec)}"
        self.kmin = max(spec.k, 1)

    def pack(self, cells) -> str:
        m = 1 << self.bits
        return " + ".join(f"((({c}) % {m} + {m}) % {m})" + (f" * {1 << (self.bits * d)}" if d else "")
                          for d, c in enumerate(cells))

    def distance2(self, a: str, b: str, st: str) -> str:
        w2 = float_literal(self.spec.weight * self.spec.weight)
        terms = [f"(({a}.v_{i} - {b}.v_{i}) / {st}.sc_{i}) * (({a}.v_{i} - {b}.v_{i}) / {st}.sc_{i})"
                 for i in range(1, self.D + 1)]
        terms += [f"CASE WHEN {a}.c_{i} = {b}.c_{i} THEN 0.0 ELSE {w2} END" for i in range(1, self.C + 1)]
        return "\n            + ".join(terms)

    def join(self, b_key: str, a_key: str, a: str = "a", b: str = "b") -> str:
        """Same cell key and stratum (strata ride in one struct with the key, as in the search)."""
        if not self.S:
            return f"{b_key} = {a_key}"
        sp = self.d.struct_pack
        return (f"{sp([('c', b_key)] + [(f'k_{i}', f'{b}.k_{i}') for i in range(1, self.S + 1)])} = "
                f"{sp([('c', a_key)] + [(f'k_{i}', f'{a}.k_{i}') for i in range(1, self.S + 1)])}")

    def cell(self, relation: str, d: int, level: int = 0) -> str:
        t = f"{relation}.t_{d}" + (f" * {float(1 << level)!r}" if level else "")
        return f"CAST({self.d.floor(t)} AS BIGINT)"

    def prepass_ctes(self, grid_margin: str, grid_columns: str) -> str:
        """`grid_columns`: the grid coordinates g_* where `points` does not keep them (p, st)."""
        G, d, mat = self.G, self.d, self.d.materialized()
        carried = ([f"k_{i}" for i in range(1, self.S + 1)] + [f"v_{i}" for i in range(1, self.D + 1)]
                   + [f"c_{i}" for i in range(1, self.C + 1)])
        t_cols = [f"least(greatest(g_{g} / s, -{CELL_CLAMP}), {CELL_CLAMP}) AS t_{g}" for g in range(1, G + 1)]
        cells = [f"CAST({d.floor(f'least(greatest(g_{g} / s, -{CELL_CLAMP}), {CELL_CLAMP})')} AS BIGINT)"
                 for g in range(1, G + 1)]
        o_index = " + ".join(f"(f.o_{g} + 1) * {3 ** (g - 1)}" for g in range(1, G + 1))
        nb_key = self.pack([f"{self.cell('p', g)} + f.o_{g}" for g in range(1, G + 1)])
        scales = "".join(f", st.sc_{i}" for i in range(1, self.D + 1))
        return f"""
ball_points AS {mat}(
    -- the ball pre-pass grid: cells of side {self.side} (just above eps), t_* = grid coordinate / side;
    -- margin2: every record within this distance of i is in i's block of 3^G cells (as in the search)
    SELECT rid, {', '.join(carried + t_cols)},
        {self.pack(cells)} AS cell_key,
        pow(greatest({grid_margin}, 0.0), 2) AS margin2
    FROM (SELECT p.*{grid_columns}, st.grid_dims, {self.side} AS s FROM points p, settings st) AS p
),
ball_pairs AS (
    -- every record with the members of its eps-ball in its neighbour cells (ties at eps included,
    -- as in the search), streamed into ball_counts (never stored). Filtered before the
    -- aggregate, so that it sees the members only (about a fifth of the candidates in 3-d)
    SELECT a.rid AS i, a.o, b.rid AS j,
        {self.distance2('a', 'b', 'a')} AS d2
    FROM (SELECT p.*, {o_index} AS o, {nb_key} AS nb_key{scales}
          FROM ball_points p CROSS JOIN offsets f, settings st) a
    JOIN ball_points b ON {self.join('b.cell_key', 'a.nb_key')}
),
ball_counts AS {mat}(
    -- per record and neighbour cell: members of its eps-ball there, those strictly within eps,
    -- and the nearest (a ball record's nearest other record is within eps)
    SELECT i, o, count(*) AS size, count(*) FILTER (WHERE d2 <= {self.eps2}) AS within, min(d2) AS near2
    FROM ball_pairs
    WHERE j <> i AND d2 <= {self.bound}
    GROUP BY i, o
),
ball_records AS {mat}(
    -- records whose neighbourhood is their eps-ball: at least max(k, 1) others within eps (so the
    -- search's radius would be eps), and the ball inside the block (margin); dcr: the nearest
    -- other record is within eps, hence in the block
    SELECT c.i AS rid, CAST(sum(c.size) AS BIGINT) AS size, min(c.near2) AS dcr2
    FROM ball_counts c JOIN ball_points p ON p.rid = c.i
    GROUP BY c.i
    HAVING sum(c.within) >= {self.kmin} AND min(p.margin2) >= {self.bound}
),
ball_cells AS {mat}(
    -- per ball record, its members cell by cell in offset order: `before` of them in earlier cells
    SELECT c.i AS rid, c.o, c.size,
        CAST(sum(c.size) OVER (PARTITION BY c.i ORDER BY c.o) AS BIGINT) - c.size AS before
    FROM ball_counts c JOIN ball_records r ON r.rid = c.i
    WHERE c.size > 0
),"""

    def fetch_ctes(self, levels: int, reps: bool) -> str:
        """The CTEs from `picks0` (rank_* set for the ball records' replaced cells) to `picks`."""
        G, d, mat = self.G, self.d, self.d.materialized()
        cols = len(self.spec.columns)
        rep = lambda r: f", {r}.rep" if reps else ""          # noqa: E731
        rep_bare = ", rep" if reps else ""
        tc = lambda r: "".join(f", {r}.tc_{g}" for g in range(1, G + 1))      # noqa: E731
        out = [f"""
ball_draws AS (
    -- the drawn ranks of the ball records' replaced cells, one row per (record, column)
    SELECT p.rid{rep('p')}, u.col, u.r
    FROM picks0 p{d.unnest_columns([str(c) for c in range(1, cols + 1)], [f'p.rank_{c}' for c in range(1, cols + 1)], ['col', 'r'])}
    WHERE u.r IS NOT NULL
),
ball_at_0 AS (
    -- the cell holding the rank, and the rank within it
    SELECT x.rid{rep('x')}, x.col, x.r - c.before AS r,
        {', '.join(f"{self.cell('p', g)} + ({d.int_div('c.o', str(3 ** (g - 1)))}) % 3 - 1 AS tc_{g}" for g in range(1, G + 1))}
    FROM ball_draws x
    JOIN ball_cells c ON c.rid = x.rid AND x.r > c.before AND x.r <= c.before + c.size
    JOIN ball_points p ON p.rid = x.rid
),"""]
        for level in range(1, levels + 1):
            key_b = self.pack([self.cell("b", g, level - 1) for g in range(1, G + 1)])
            key_x = self.pack([f"x.tc_{g}" for g in range(1, G + 1)])
            child = " + ".join(f"({self.cell('b', g, level)} - 2 * x.tc_{g}) * {1 << (g - 1)}" for g in range(1, G + 1))
            out.append(f"""
ball_split_{level} AS (
    -- the drawn cell's members in each of its 2^G halves
    SELECT x.rid{rep('x')}, x.col, x.r{tc('x')}, {child} AS child, count(*) AS size
    FROM ball_at_{level - 1} x
    JOIN ball_points a ON a.rid = x.rid
    JOIN ball_points b ON {self.join(key_b, key_x)}
    CROSS JOIN settings st
    WHERE b.rid <> a.rid AND {self.distance2('a', 'b', 'st')} <= {self.bound}
    GROUP BY x.rid{rep('x')}, x.col, x.r{tc('x')}, {child}
),
ball_at_{level} AS (
    SELECT rid{rep_bare}, col, r - before AS r,
        {', '.join(f"2 * tc_{g} + ({d.int_div('child', str(1 << (g - 1)))}) % 2 AS tc_{g}" for g in range(1, G + 1))}
    FROM (SELECT s.*, CAST(sum(size) OVER (PARTITION BY rid{rep_bare}, col ORDER BY child) AS BIGINT) - size AS before
          FROM ball_split_{level} s) AS s
    WHERE r > before AND r <= before + size
),""")
        key_b = self.pack([self.cell("b", g, levels) for g in range(1, G + 1)])
        key_x = self.pack([f"x.tc_{g}" for g in range(1, G + 1)])
        members = d.sorted_struct_list_agg([("j", "b.rid")], "true")
        on = " AND b.rep = p.rep" if reps else ""
        out.append(f"""
ball_donors AS (
    -- the member of that rank among the drawn cell's members, by record number
    SELECT x.rid{rep('x')}, x.col, {d.list_element(members, 'x.r')}.j AS donor
    FROM ball_at_{levels} x
    JOIN ball_points a ON a.rid = x.rid
    JOIN ball_points b ON {self.join(key_b, key_x)}
    CROSS JOIN settings st
    WHERE b.rid <> a.rid AND {self.distance2('a', 'b', 'st')} <= {self.bound}
    GROUP BY x.rid{rep('x')}, x.col, x.r
),
ball_picks AS (
    SELECT rid{rep_bare}, {', '.join(f'max(CASE WHEN col = {c} THEN donor END) AS donor_{c}' for c in range(1, cols + 1))}
    FROM ball_donors
    GROUP BY rid{rep_bare}
),
picks AS {mat}(
    SELECT p.rid{rep('p')}, {', '.join(f'coalesce(p.donor_{c}, b.donor_{c}) AS donor_{c}' for c in range(1, cols + 1))}
    FROM picks0 p LEFT JOIN ball_picks b ON b.rid = p.rid{on}
),""")
        return "".join(out)
