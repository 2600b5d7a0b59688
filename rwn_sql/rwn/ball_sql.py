"""The search's fourth stage, the ball path: neighbourhoods that are eps-balls, drawn by rank
without listing them. Its choice (from a cheap estimate), the pre-pass that counts every ball
record's members, and the CTEs that fetch a drawn rank's donor."""
from __future__ import annotations

import math
from dataclasses import dataclass

from .. import limits
from ..engines.dialects import DUCKDB, Dialect
from ..identifiers import float_literal, quote_ident
from .geometry import BASE_GRID_DIMS, CELL_CLAMP, UNIT_BALL, grid_coordinates, tie_factor, unit_ball_volume
from .spec import RWNSpec

# --- the ball path: neighbourhoods that are eps-balls, drawn by rank without listing them ----------
# A record with at least max(k, 1) other records within eps has r_k <= eps, so S_i is its eps-ball
# (METHODS.md section 1). For such "ball records" a pre-pass on a grid of side just above eps counts
# the ball's members per neighbour cell (a join streamed into a GROUP BY, no pair kept); a donor is
# then drawn as a uniform rank over |S_i| in a fixed order of S_i (cell in offset order, then halves
# of it, then record), and only the drawn cell is read again to find it. Memory: O(n 3^G) counts
# and O(n D) draws instead of sum |S_i| listed members. Its thresholds: Limits.BALL_MIN_MEMBERS
# and Limits.BALL_MIN_PAIRS.
BALL_SIDE = 1.001          # pre-pass cell side / eps: any ball member is in the record's 3^G block
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


def estimated_members(records: int | None, pairs: int | None, spec: RWNSpec) -> float | None:
    """The mean |S_i| that ball_estimate_sql's figures suggest for eps > 0 (None for eps = 0 or no
    numeric column): the pairs per record in cells of side eps / sqrt(D), scaled by the ball's
    volume over the cell's."""
    D = len(spec.numeric)
    if spec.eps <= 0 or D == 0 or not records or pairs is None:
        return None
    # capped at the other records: on clumped data in many dimensions the volume ratio (about
    # 1e6 for D = 11) would otherwise send small inputs down the ball path
    return min(float(pairs) / float(records) * unit_ball_volume(D) * D ** (D / 2), float(records) - 1.0)


def ball_levels(records: int | None, pairs: int | None, spec: RWNSpec) -> int | None:
    """The ball path's number of halving levels from ball_estimate_sql's figures, or None when the
    estimated mean |S_i| is below Limits.BALL_MIN_MEMBERS or the estimated pairs below Limits.BALL_MIN_PAIRS
    (the listed neighbourhoods are then small).
    The estimate scales the pairs per record in cells of side eps / sqrt(D) by the ball's volume
    over the cell's; it chooses only the path and the speed, never the exactness."""
    mean = estimated_members(records, pairs, spec)
    tuned = limits.current()
    if mean is None or mean < tuned.BALL_MIN_MEMBERS or mean * records < tuned.BALL_MIN_PAIRS:
        return None
    G = min(len(spec.numeric), BASE_GRID_DIMS)
    per_cell = mean / UNIT_BALL[G]            # members in one cell of side eps
    return max(0, min(BALL_MAX_LEVELS, math.ceil(math.log2(max(per_cell / BALL_BOX, 1.0)) / G)))


class BallPieces:
    """The SQL of the ball path for one spec: the pre-pass CTEs (after `offsets`) and the fetch CTEs
    of the perturb tail. Record i is `a`, a candidate j is `b`, as in the search."""

    def __init__(self, spec: RWNSpec, dialect: Dialect, axes=None):
        self.spec, self.d = spec, dialect
        self.D, self.C, self.S = len(spec.numeric), len(spec.categorical), len(spec.strata)
        self.G = grid_coordinates(spec, axes)
        self.bits = limits.current().CELL_KEY_BITS // self.G
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


def no_members(dialect: Dialect) -> str:
    """An empty neighbour list, typed as the search's (d2, j) lists."""
    return dialect.null_struct_list([("d2", "DOUBLE"), ("j", "BIGINT")])


@dataclass(frozen=True)
class BallSQL:
    """The template values of the ball path ('' each without it): the pre-pass CTEs, the ball
    records' rows of `hood`, and `seed_filter`, what keeps the ball records out of the search."""
    ball_ctes: str
    hood_ball: str
    hood_ball_note: str
    seed_filter: str


def ball_sql(spec: RWNSpec, dialect: Dialect, axes, ball, grid_margin: str, grid_columns: str) -> BallSQL:
    """`ball`: the sub-levels of the ball path (see ball_levels), or None: no ball path."""
    if ball is None:
        return BallSQL("", "", "", "")
    eps2 = float_literal(spec.eps * spec.eps)
    return BallSQL(
        ball_ctes=BallPieces(spec, dialect, axes).prepass_ctes(grid_margin, grid_columns),
        # ball records skip the search: their neighbourhood is the eps-ball, counted by the pre-pass
        seed_filter="\n    LEFT JOIN ball_records br ON br.rid = points.rid\n    WHERE br.rid IS NULL",
        hood_ball=(f"\n    UNION ALL\n    SELECT rid, {no_members(dialect)} AS members, {eps2} AS radius2, dcr2, size\n"
                   f"    FROM ball_records"),
        hood_ball_note=("; records whose\n    -- neighbourhood is their eps-ball (ball_records) have only the number, "
                        "their donors are fetched by rank"),
    )
