"""Pure SQL builders: parameters in, SQL text out. Nothing here touches a connection.

The neighbourhood search's statement, composed from its stages (stats_sql, grid_sql,
search_sql, ball_sql over geometry's Grid), the pre-passes that choose how to run it, and the
release: the keyed cell draws, the donors' values and the keyed row order. The statements are
assembled from the templates in sql/ (shipped as `rwn_sql.sql`). Column k of the spec's
numeric columns is x_k in the SQL, categorical column k is c_k and stratum column k is k_k, so
the SQL stays readable whatever the user's column names are.
"""
from __future__ import annotations

import math
import re

from dataclasses import asdict

from ..engines.dialects import DUCKDB, Dialect
from ..errors import RWNError
from ..identifiers import float_literal, quote_ident, quote_literal
from ..randomness import KEY_PLACEHOLDER, TWO_52, bits_sql, hash_sql, order_key_sql
from ..templates import joined, render
from .ball_sql import BallPieces, ball_sql, no_members
from .geometry import Grid, tie_factor
from .grid_sql import grid_sql
from .search_sql import level_sql
from .spec import RWNSpec
from .stats_sql import missing_filter_sql, statistics_sql

PERTURB_PURPOSE = "rwn.perturb"
ORDER_PURPOSE = "rwn.order"


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


def _neighborhood_values(source: str, spec: RWNSpec, dialect: Dialect, axes=None, ball=None) -> dict:
    """The values of rwn_neighborhoods.sql, stage by stage: statistics, grid, level, ball path."""
    grid = Grid.of(spec, dialect, axes)
    points = grid_sql(grid)
    level = level_sql(grid, points.grid_columns)
    balls = ball_sql(spec, dialect, grid.axes, ball, level.grid_margin, points.grid_columns)
    search_seed = (f"SELECT (SELECT min(start_lvl) FROM points) - 1 AS lvl, points.rid, start_lvl, false AS done,\n"
                   f"        {no_members(dialect)} AS members, NULL::DOUBLE AS radius2, NULL::DOUBLE AS dcr2\n"
                   f"    FROM points" + balls.seed_filter)
    return dict(**asdict(statistics_sql(grid)), **asdict(points), **asdict(level), **asdict(balls),
                source=source, materialized=dialect.materialized(), search_seed=search_seed)


def pair_estimate_sql(source: str, spec: RWNSpec, dialect: Dialect = DUCKDB) -> str:
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
        keys.append(f"CASE WHEN {dialect.is_finite(cell)} THEN {cell} ELSE {v} END")   # bad scale: exact values
    label = (dialect.as_text(dialect.struct_pack([(col[s], f"any_value({col[s]})") for s in spec.strata]))
             if spec.strata else "'all records'")
    stats_cte = f",\nstats AS (SELECT {', '.join(stats)} FROM src)" if stats else ""
    return (f"WITH src AS (\n    SELECT * FROM {source}{where}\n){stats_cte},\n"
            f"cells AS (\n    SELECT count(*) AS c, {label} AS label\n    FROM src{', stats' if stats else ''}\n"
            f"    GROUP BY {', '.join(keys)}\n)\n"
            f"SELECT {dialect.wide_integer(f'coalesce(sum(c * greatest(c - 1, {spec.k})), 0)')}, coalesce(sum(c), 0),\n"
            f"    coalesce(max(c), 0), {dialect.arg_max('label', 'c')}\nFROM cells")


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
    return render("rwn_perturb.sql", hashes=joined(hashes), donors=joined(donors),
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
