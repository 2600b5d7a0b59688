"""RWN's one orchestration path, for every engine and every caller (the Python API, the CLI,
the SQL macros, tune and the RWN step of a release).

`check_source` resolves and checks the input through the backend; `prepare` turns a spec
into the statement that gives the result:
  * an engine with recursive CTEs (DuckDB) runs the whole plan as one statement
    (sqlgen.perturb_sql / donors_sql / neighborhoods_sql), so nothing is staged, unless the
    statement would not fit the memory limit (search_in_steps);
  * otherwise (Spark, or DuckDB on data too large for its memory limit) the backend stages the
    plan's steps (rwn_sql.rwn.steps.RWNPlan): the source with its record numbers, the
    settings, the grid points, then the neighbourhood search one statement per level until
    no record is left searching; the final statement reads those staged relations.
Both give the same result for the same key: only the speed and the memory differ.
`deliver`, `write` and `stage` then run the final statement and forget the staged steps.
Nothing here talks to an engine except through the backend."""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from .. import limits
from ..engines import sources
from . import ball_sql, geometry, sqlgen
from ..engines.backend import backend_for
from ..errors import RWNError
from ..identifiers import float_literal, quote_ident, quote_literal
from ..messages import Message
from ..randomness import KEY_PLACEHOLDER
from .spec import RWNSpec
from .steps import BALL_STEPS, RWNPlan, bind

WHATS = ("perturb", "donors", "neighborhoods")
MAX_LEVELS = 400        # the search ends by level log2(2 diameter / s0) + a few; this only guards a bug

FROM_DATA = "from data"      # an argument the function reads from the data (axes=, estimate=)

# The memory figures that choose the plan (bytes per pair, per record of the recursive
# statement, per hashed point; a level's share) are fields of rwn_sql.limits.Limits.


def spec(columns, **params) -> RWNSpec:
    """An RWNSpec, its problems as RWNError."""
    try:
        return RWNSpec(columns=columns, **params)
    except (TypeError, ValueError) as exc:
        raise RWNError(str(exc)) from None


def check_columns(spec: RWNSpec, src: sources.Source, dialect) -> None:
    """Every named column exists, and numeric roles have numeric types (the types of the
    dialect's engine)."""
    for role, cols in (("columns", spec.columns), ("strata", spec.strata), ("drop", spec.drop)):
        sources.require_columns(src, cols, role)
    if spec.id:
        sources.require_record_id(src, spec.id)
    for c in spec.numeric:
        if not dialect.numeric_type(src.type_of(c)):
            why = sources.explain_text_column(src.csv, c, src.csv_nulls) if src.csv else None
            if why:
                raise RWNError(f"column {c!r} of {src.label} is read as text ({src.type_of(c)}), not as numbers: "
                               f"{why}")
            raise RWNError(NOT_NUMERIC.text(column=c, type_name=src.type_of(c)))
    sources.refuse_reserved(src)


def check_source(be, source, spec: RWNSpec, guard: bool = True) -> sources.Source:
    """The source, resolved by the backend and checked: the named columns exist with the
    right types, the record id is given where the engine needs it, no numeric range overflows
    a double and (with `guard`, where the engine has a memory limit) the neighbourhoods fit."""
    if spec.id is None and not be.has_input_order:
        raise RWNError(f"on {be.name}, id= (--id) is required: the engine has no input order to number records "
                       f"by, so the draws need a unique id column")
    be.dialect.check_scale(spec.scale)
    src = be.source(source)
    check_columns(spec, src, be.dialect)
    _check_spans(be, src, spec)
    if guard:
        check_pair_budget(be, src, spec)
    return src


NOT_NUMERIC = Message("column {column!r} has type {type_name}, not a numeric type; list it in categorical= "
                      "(--categorical) to use mismatch distance for it")


def unseen_source(be, name: str, spec: RWNSpec, guard: bool = True) -> sources.Source:
    """The table or view `name` as the statement's reader resolves it, for a planner that cannot
    see it (the SQL macros plan on a cursor, which does not see the caller's TEMP tables and
    views): no data or schema is read here. What check_source checks from the schema is checked
    by the statement as it is bound, with the same messages: the types of the numeric columns
    and of the id, and no reserved column name (a missing column is the engine's own binding
    error, which names it); the data checks (NULLs, spans, sizes, ids) are the statement's as
    on every path; with `guard`, the pair budget (check_pair_budget) is a pass of the statement
    over the data before the search (pair_budget_condition)."""
    be.dialect.check_scale(spec.scale)
    typed = [(c, be.dialect.NUMERIC.pattern, NOT_NUMERIC, {"column": c})
             for c in spec.numeric]
    if spec.id:
        typed.append(sources.id_type_check(spec.id))
    src = sources.unseen_source(name, be.dialect, typed)
    budget = pair_budget_condition(be, src.sql, spec) if guard else None
    if budget is None:
        return src
    # a filter true on every row (or failing first): the rows keep their order
    return sources.Source(f"(SELECT * FROM {src.sql} WHERE {budget}) AS __rwn_budgeted", (), src.label,
                          visible=False)


def _check_spans(be, src, spec) -> None:
    """Refuse a distance column whose range overflows a double before the statement runs: the
    statement checks it too, but DuckDB 1.4 raises its own overflow error from the column
    statistics first."""
    if not spec.numeric:
        return
    finite = be.dialect.is_finite
    cols = [quote_ident(c) for c in spec.numeric]
    row = be.rows("SELECT " + ", ".join(f"min({c}) FILTER (WHERE {finite(f'CAST({c} AS DOUBLE)')}), "
                                        f"max({c}) FILTER (WHERE {finite(f'CAST({c} AS DOUBLE)')})" for c in cols)
                  + f" FROM {src.sql}")[0]
    for i, c in enumerate(spec.numeric):
        lo, hi = row[2 * i], row[2 * i + 1]
        if lo is not None and not math.isfinite(float(hi) - float(lo)):
            raise RWNError(f"column {quote_ident(c)} spans {float(lo)!r} to {float(hi)!r}, too wide for "
                           f"double-precision distances; rescale it (e.g. divide it by a power of ten)")


def check_pair_budget(be, src, spec: RWNSpec) -> None:
    """Refuse, before any neighbourhood is built, data whose neighbourhoods cannot fit in the
    engine's memory limit: a grouped pre-pass (sqlgen.pair_estimate_sql) bounds the number of
    neighbour pairs from below; every pair beyond the k per record that any run needs (that
    part spills to disk; tests/rwn/test_guards.py) costs about Limits.BYTES_PER_PAIR bytes. Engines
    without one memory limit (a cluster) skip it."""
    be = backend_for(be)
    limit = be.memory_limit()
    if limit is None:
        return
    probe = spec
    if ball_path(be, src, spec) is not None:
        # eps-balls are counted, not listed: what is still listed beyond k per record is the
        # records of equal values (the ball path's last cell cannot split them)
        probe = replace(spec, eps=0.0, k=max(spec.k, 1))
    estimate = be.try_rows(sqlgen.pair_estimate_sql(src.sql, probe, be.dialect))
    if estimate is None:
        return      # bad data: the neighbourhood statement itself reports it, with its message
    pairs, records, largest, label = estimate[0]
    per_pair = limits.current().BYTES_PER_PAIR
    if (pairs - records * spec.k) * per_pair <= limit:
        return
    where = f" (stratum {label})" if spec.strata else ""
    raise RWNError(
        f"the neighbourhoods would hold at least {pairs:,} neighbour pairs (about "
        f"{pairs * per_pair / 1e9:,.1f} GB), more than the memory limit of {limit / 1e9:,.2f} GB "
        f"allows (about {limit // per_pair:,} pairs beyond the {spec.k} nearest per record): "
        f"{largest:,} records{where} {_pairs_remedies(probe)}")


# Records the listed-pairs estimate samples (listed_pairs_budget): 2000^2 distances, well
# under a second; every record when there are fewer.
LISTED_SAMPLE = 2000


def listed_pairs_budget(be, src, spec: RWNSpec, bytes_per_pair: int, what: str) -> None:
    """Refuse, before the work, a run that lists every neighbourhood (`what`, e.g. tune's
    staged lists at its largest eps) when the estimated pairs (sqlgen.listed_pairs_sample_sql,
    from a sample) at `bytes_per_pair` exceed the engine's memory limit, naming the estimate
    and a limit that would do. check_pair_budget's bound counts only records in one small
    cell, which for listed eps-balls is a small part of the pairs. Engines without one memory
    limit skip it."""
    be = backend_for(be)
    limit = be.memory_limit()
    if limit is None:
        return
    row = be.try_rows(sqlgen.listed_pairs_sample_sql(src.sql, spec, LISTED_SAMPLE))
    if not row or row[0][2] is None:
        return      # bad data: the statement itself reports it, with its message
    records, sampled, pairs = row[0]
    need = float(pairs) * bytes_per_pair
    if need <= limit:
        return
    how = "counted" if sampled >= records else f"estimated from a sample of {sampled:,} records"
    raise RWNError(
        f"{what} lists every neighbourhood at eps = {spec.eps:g}: about {float(pairs):,.0f} neighbour pairs "
        f"({how}, {bytes_per_pair} bytes a pair: about {need / 1e9:,.2f} GB), more than the memory limit of "
        f"{limit / 1e9:,.2f} GB; a memory limit of about {math.ceil(need * 1.25 / 1e8) / 10:g} GB would do "
        f"(--memory-limit, SET memory_limit), or a smaller eps, or fewer records")


def _pairs_remedies(spec: RWNSpec) -> str:
    within = (f"identical values of {', '.join(spec.columns)}" if spec.eps == 0
              else f"values within eps = {spec.eps:g} of each other")
    return (f"share {within}, so each has all the others in its neighbourhood. Remedies: eps = 0 with a "
            f"larger k if eps makes neighbourhoods large; more distance columns, or a little random "
            f"jitter on the values, to break exact ties; strata that split the largest groups; or a "
            f"higher memory limit (SET memory_limit / --memory-limit)")


def pair_budget_condition(be, relation: str, spec: RWNSpec) -> str | None:
    """check_pair_budget made by the statement, for a source the planner cannot read (an
    unseen source): a condition that is true, or fails the statement with its message; None
    without a memory limit."""
    limit = backend_for(be).memory_limit()
    if limit is None:
        return None
    per_pair = limits.current().BYTES_PER_PAIR
    estimate = f"(SELECT * FROM ({sqlgen.pair_estimate_sql(relation, spec, backend_for(be).dialect)}) AS __rwn_e(pairs, records, largest, label))"
    beyond = f"(pairs - records * {int(spec.k)}) * {per_pair}"
    records = (quote_literal(" records (stratum ") + " || label || " + quote_literal(") ") if spec.strata
               else quote_literal(" records "))
    message = (quote_literal("the neighbourhoods would hold at least ") + " || pairs || "
               + quote_literal(f" neighbour pairs, more than the memory limit of {limit / 1e9:,.2f} GB allows (about "
                               f"{limit // per_pair:,} pairs beyond the {spec.k} nearest per record): ")
               + " || largest || " + records + " || " + quote_literal(_pairs_remedies(spec)))
    return (f"(SELECT {sources.raise_unless(be.dialect, f'{beyond} <= {limit}', message)} "
            f"FROM {estimate} AS __rwn_budget)")


# The variance the axes left out of the grid may hold: beyond it, a 3-d projection puts records
# that are far apart in the other directions into the same cells (California housing: 3 axes
# hold 91 % and leave residuals 9x the distance to the 5th neighbour; 4 axes halve the candidates).
AXES_LEFT_OUT = 0.05


def grid_axes(be, src: sources.Source, spec: RWNSpec):
    """The grid's directions for more than 3 numeric columns: the leading eigenvectors of the
    scaled covariance (one aggregate pass through the backend, numpy's eigh on the driver), as
    many as the grid has dimensions (3 to 5: see AXES_LEFT_OUT), or None to grid on the columns. Only the speed depends on them (geometry.check_axes): any unit
    directions keep the neighbourhoods exact, so the covariance is taken over all records,
    finite values only, with the scale approximated here; a pass that fails leaves the columns
    (the statement then reports the data's problem)."""
    import numpy as np
    D = len(spec.numeric)
    if D <= geometry.BASE_GRID_DIMS:
        return None
    finite = be.dialect.is_finite
    x = [f"CAST({quote_ident(c)} AS DOUBLE)" for c in spec.numeric]
    ok = [f"FILTER (WHERE {finite(v)})" for v in x]
    aggs = [f"max({v}) {ok[i]} - min({v}) {ok[i]}, stddev_samp({v}) {ok[i]}" for i, v in enumerate(x)]
    aggs += [f"covar_pop({x[i]}, {x[j]}) FILTER (WHERE {finite(x[i])} AND {finite(x[j])})"
             for i in range(D) for j in range(i, D)]
    row = be.try_rows("SELECT " + ", ".join(aggs) + f" FROM {src.sql}")
    if not row:
        return None
    row = [float("nan") if v is None else float(v) for v in row[0]]
    scale = np.array([{"minmax": row[2 * i], "zscore": row[2 * i + 1]}.get(spec.scale, 1.0) for i in range(D)])
    cov = np.empty((D, D))
    entries = iter(row[2 * D:])
    for i in range(D):
        for j in range(i, D):
            cov[i, j] = cov[j, i] = next(entries)
    with np.errstate(all="ignore"):
        cov = cov / np.outer(scale, scale)
    if not np.all(np.isfinite(cov)) or np.trace(cov) <= 0:
        return None
    values, vectors = np.linalg.eigh(cov)
    values, vectors = values[::-1], vectors[:, ::-1]
    # the grid dimension the statement would choose on the columns (rotation does not change it)
    ratio = np.trace(cov) ** 2 / np.sum(cov * cov)
    top = min(D, geometry.MAX_GRID_DIMS)
    g = int(min(max(round(ratio), geometry.BASE_GRID_DIMS), top))
    if values[:g].sum() < limits.current().PCA_GAIN * np.sort(np.diag(cov))[::-1][:g].sum():
        return None
    # one more axis while those left out hold more than AXES_LEFT_OUT of the variance
    while g < top and values[g:].sum() > AXES_LEFT_OUT * values.sum():
        g += 1
    axes = []
    for u in vectors[:, :g].T:
        u = u / np.linalg.norm(u)
        u = u * (1.0 if u[np.argmax(np.abs(u))] > 0 else -1.0)     # deterministic signs
        # 9 decimals, toward zero: short literals, the same text whatever the summation order
        # of the covariance (thread count) in all but rare cases, and the norm stays <= 1
        axes.append(tuple(float(c) for c in np.trunc(u * 1e9) / 1e9))
    return tuple(axes)


@dataclass
class Prepared:
    """The statement that gives an RWN result, and the relations the backend staged for it.
    `row_order`: a release's row order, "keyed" or "input" (recorded with what a writer writes,
    so that evaluate never pairs a keyed release by position); None for other results."""
    sql: str
    staged: list = field(default_factory=list)
    row_order: str | None = None


def prepare(be, src: sources.Source, spec: RWNSpec, what: str, key_sql: str | None = None,
            order: str = "keyed", pairs: bool = False, reps: int | None = None, trace=None,
            pre: PrePasses | None = None) -> Prepared:
    """The final statement of `what` (perturb, donors or neighborhoods) over the checked source.
    `key_sql` reads the key (backend.key_sql, or KEY_PLACEHOLDER for SQL that is only shown).
    `trace`: a list that gets one dict per search level where the levels run one by one.
    `pre`: pre_passes(be, src, spec, what, pairs) when the caller already read them (it also
    shows the SQL)."""
    if what not in WHATS:
        raise ValueError(f"what must be one of {WHATS}")
    if order not in sqlgen.ORDERS:
        raise RWNError(f"order must be one of {', '.join(sqlgen.ORDERS)}; got {order!r}")
    prepared = _prepare(be, src, spec, what, key_sql, order, pairs, reps, trace,
                        pre_passes(be, src, spec, what, pairs) if pre is None else pre)
    if what == "perturb":       # replicates (reps) are each in input order
        prepared.row_order = order if reps is None else "input"
    return prepared


@dataclass(frozen=True)
class PrePasses:
    """What the planner reads from the data before it writes the statement: whether the search
    runs level by level (search_in_steps), the ball path's levels (ball_path) and the grid's
    directions (grid_axes). Read once per call, so that showing the SQL and running it read
    the data once."""
    in_steps: bool
    ball: int | None
    axes: tuple | None


def pre_passes(be, src: sources.Source, spec: RWNSpec, what: str, pairs: bool = False) -> PrePasses:
    # an unseen source (a TEMP one of the SQL macros' caller) cannot be read for the decision:
    # it keeps the listed path (docs/reference/sql.md)
    estimate = ball_estimate(be, src, spec)
    ball = None if (what == "neighborhoods" and pairs) else ball_path(be, src, spec, estimate)
    in_steps = search_in_steps(be, src, spec, None if ball is not None else estimate)
    return PrePasses(in_steps, ball, grid_axes(be, src, spec) if src.visible else None)


def _prepare(be, src, spec, what, key_sql, order, pairs, reps, trace, pre: PrePasses) -> Prepared:
    if what != "neighborhoods" and key_sql is None:
        raise ValueError("perturb and donors need key_sql")
    d = be.dialect
    ball, axes = pre.ball, pre.axes
    if not pre.in_steps:
        if what == "perturb":
            return Prepared(sqlgen.perturb_sql(src.sql, spec, key_sql, d, reps=reps, order=order, axes=axes, ball=ball))
        if what == "donors":
            return Prepared(sqlgen.donors_sql(src.sql, spec, key_sql, d, axes=axes, ball=ball))
        return Prepared(sqlgen.neighborhoods_sql(src.sql, spec, pairs=pairs, dialect=d, axes=axes, ball=ball))
    if reps is not None and not d.recursive_cte:
        raise RWNError(f"engine {be.name} does not support replicate releases in one statement (tune runs on DuckDB)")
    hoods = stage_neighborhoods(be, src, spec, trace, axes=axes, ball=ball, in_steps=True)
    try:
        return Prepared(hoods.final(what, key_sql, order=order, pairs=pairs, reps=reps), hoods.staged)
    except BaseException:
        forget(be, hoods.staged)
        raise


def search_in_steps(be, src: sources.Source, spec: RWNSpec | None = None, estimate=FROM_DATA) -> bool:
    """Whether the neighbourhood search runs one statement per level, each staged by the
    backend, rather than inside one recursive statement: always on an engine without recursive
    CTEs (Spark); on DuckDB when the records times Limits.RECURSIVE_BYTES_PER_RECORD, plus the
    eps-ball pairs a listed search holds (listed_pairs of `spec` from ball_estimate's figures,
    read from the data unless given; None: nothing listed) times Limits.BYTES_PER_PAIR, exceed
    the memory limit. The choice changes the memory and the speed, never the result. An unseen
    source (the SQL macros over a TEMP table) stays one statement: a table macro cannot stage,
    and the planner cannot count its records."""
    if not be.dialect.recursive_cte:
        return True
    if not src.visible:
        return False
    if estimate is FROM_DATA:
        estimate = None if spec is None else ball_estimate(be, src, spec)
    listed = 0.0 if spec is None else listed_pairs(estimate, spec)
    limit = be.memory_limit()
    if limit is None:
        return False
    records = be.try_rows(f"SELECT count(*) FROM {src.sql}")
    tuned = limits.current()
    return bool(records) and (records[0][0] * tuned.RECURSIVE_BYTES_PER_RECORD
                              + listed * tuned.BYTES_PER_PAIR > limit)


def ball_estimate(be, src: sources.Source, spec: RWNSpec) -> tuple | None:
    """ball_sql.ball_estimate_sql's (records, pairs in shared cells) for eps > 0 on a source the
    planner can read, else None (also for data the statement itself will refuse)."""
    if spec.eps <= 0 or not spec.numeric or not src.visible:
        return None
    row = be.try_rows(ball_sql.ball_estimate_sql(src.sql, spec, be.dialect))
    return tuple(row[0]) if row else None


def listed_pairs(estimate: tuple | None, spec: RWNSpec) -> float:
    """The neighbour pairs a search that lists every eps-ball holds, from ball_estimate's figures
    (0 for eps = 0, whose k nearest per record RECURSIVE_BYTES_PER_RECORD covers)."""
    mean = None if estimate is None else ball_sql.estimated_members(*estimate, spec)
    return 0.0 if mean is None else mean * estimate[0]


def ball_path(be, src: sources.Source, spec: RWNSpec, estimate=FROM_DATA) -> int | None:
    """Whether the ball path draws the donors (ball_sql.BallPieces): None (every neighbourhood is
    listed), or its number of halving levels. It is taken for eps > 0 when a cheap pre-pass
    (ball_estimate, unless given) estimates the mean |S_i| at Limits.BALL_MIN_MEMBERS or more and
    the listed pairs at Limits.BALL_MIN_PAIRS or more. The choice is a function of the data and
    the parameters only (not of the memory limit), so a key gives one release on every machine
    and engine; the neighbourhoods are exact either way."""
    if estimate is FROM_DATA:
        estimate = ball_estimate(be, src, spec)
    return None if estimate is None else ball_sql.ball_levels(*estimate, spec)


@dataclass
class Neighborhoods:
    """Neighbourhoods staged by the backend, for one or more results over them: `rows` (the
    source with its record numbers __rwn_rid) and `hood` (rid, members, radius2, dcr2) are
    relations; `staged` lists every relation to forget afterwards."""
    be: object
    src: sources.Source
    spec: RWNSpec
    rows: str
    hood: str
    staged: list
    ball: int | None = None
    ball_steps: dict = field(default_factory=dict)     # settings, ball_points, ball_cells
    axes: tuple | None = None                          # the grid's directions (grid_axes)
    values_in_steps: bool = False                      # see values_in_steps()

    def final(self, what: str, key_sql: str | None = None, order: str = "keyed", pairs: bool = False,
              reps: int | None = None) -> str:
        """The statement of `what` over the staged neighbourhoods (no search runs again). With
        values_in_steps, a release first stages its donors' values one column at a time (their
        tables join `staged`, to be forgotten with it)."""
        d, spec, bound = self.be.dialect, self.spec, {"staged": self.rows, "hood": self.hood, **self.ball_steps}
        if what == "neighborhoods":
            if pairs and self.ball is not None:
                raise ValueError("the pairs need every member listed: stage without the ball path")
            return bind({"hood": self.hood}, [], sqlgen.neighborhoods_final(pairs, d))
        if what == "perturb" and self.values_in_steps:
            plan = RWNPlan(self.src.sql, spec, d, self.axes, self.ball)
            tables = dict(bound)
            for step in plan.value_steps(key_sql, reps):
                tables[step.name] = self._step(step.sql(tables), step.joins_as_written)
                if step.replaces:
                    self.staged.remove(tables[step.replaces])
                    self.be.drop(tables.pop(step.replaces))
            return plan.release(self.rows, tables[step.name], key_sql, self.src.names, order, reps)
        tail = [sqlgen.perturb_tail_ctes(spec, key_sql, d, reps, self.ball, self.axes)]
        if what == "donors":
            return bind(bound, tail, sqlgen.donors_final(spec, d))
        return bind(bound, tail, sqlgen.perturb_final(spec, key_sql, d, reps, order, columns=self.src.names))

    def _step(self, sql: str, joins_as_written: bool = False) -> str:
        self.staged.append(self.be.stage(sql, joins_as_written))
        return self.staged[-1]


def values_in_steps(be) -> bool:
    """Whether a release after a search in steps fetches its donors' values in one statement per
    column (staged) rather than in its final statement: on an engine with a memory limit
    (DuckDB beyond Limits.RECURSIVE_BYTES_PER_RECORD), whose final statement would otherwise hash the
    rows once per column at the same time (10M x 5 under 2 GB ran out of memory there)."""
    return be.memory_limit() is not None


def stage_neighborhoods(be, src: sources.Source, spec: RWNSpec, trace=None, axes=FROM_DATA,
                        ball=None, in_steps: bool | None = None) -> Neighborhoods:
    """Compute the neighbourhoods once into relations of the backend: with recursive CTEs in
    two statements (the numbered rows, then the whole search; both number the records the same
    way, by input position or id rank), else, or `in_steps` (default: search_in_steps), step
    by step (rwn_sql.rwn.steps.RWNPlan), the search one statement per level. `trace`: a list that gets one dict per search level
    where the levels run one by one. `axes`: grid_axes(be, src, spec) when already known (they
    depend on the columns and the scale, not on eps: a sweep computes them once). `ball`: see
    ball_path (on DuckDB, this path lists every neighbourhood: tune stages them once for many
    replicates)."""
    if axes is FROM_DATA:
        axes = grid_axes(be, src, spec)
    if in_steps is None:
        # one statement lists every neighbourhood (below), so the listed pairs count either way
        in_steps = search_in_steps(be, src, spec)
    if not in_steps:
        ball = None
    plan, staged = RWNPlan(src.sql, spec, be.dialect, axes, ball), []

    def step(sql: str, joins_as_written: bool = False) -> str:
        staged.append(be.stage(sql, joins_as_written))
        return staged[-1]

    def drop(name: str) -> None:
        staged.remove(name)
        be.drop(name)

    try:
        if not in_steps:
            rows_of = step(plan.staged())
            hood = step("WITH RECURSIVE\n" + sqlgen.neighborhood_ctes(src.sql, spec, be.dialect, axes) + "\nSELECT * FROM hood")
            return Neighborhoods(be, src, spec, rows_of, hood, staged)
        tables = {}
        for s in plan.staging_steps():
            tables[s.name] = step(s.sql(tables), s.joins_as_written)
            if s.replaces:          # a copy of the table the search does not read
                drop(tables.pop(s.replaces))
        ball_records = tables.get("ball_records")
        hood = step(plan.hood(tables["settings"], _search(be, plan, tables["points"], tables["settings"], step, drop,
                                                          trace, ball_records), ball_records))
    except BaseException:
        forget(be, staged)
        raise
    ball_steps = {} if ball is None else {n: tables[n] for n in BALL_STEPS}
    return Neighborhoods(be, src, spec, tables["staged"], hood, staged, ball, ball_steps, axes, values_in_steps(be))


# A level of the search in steps keeps, per searching record, its candidates within the margin
# in memory DuckDB does not spill (about 1 KB on 5 columns at 300k records: 110 MB for 109k
# searching records), and hashes the grid points it may pair them with (Limits.HASHED_BYTES_PER_POINT
# each). Where a level would need more than Limits.LEVEL_SHARE of the memory limit, it runs in
# chunks of searching records along the first grid coordinate, each hashing only the points near it.
SEARCHING_BYTES_PER_RECORD = 1000
# a chunk hashes the points within this many cell sides of its records' first grid
# coordinate: every candidate within a record's margin (at most 1.5 sides) is among them
CHUNK_REACH = 3
MAX_CHUNKS = 256


def _search(be, plan, points: str, settings: str, step, drop, trace, ball_records=None) -> str:
    """The neighbourhood search one level at a time; the done rows of every level, as a
    subquery for plan.hood. A level too large for the memory limit runs in chunks (level_chunks);
    the next level reads the union of its chunks."""
    previous = step(plan.seed(points, ball_records))
    levels, limit = [], be.memory_limit()
    records = be.rows(f"SELECT count(*) FROM {points}")[0][0] if limit else 0
    for _ in range(MAX_LEVELS):
        lvl, done, left, searching = be.rows(
            f"SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), "
            f"count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM {previous}")[0]
        if levels and trace is not None:
            trace[-1]["done"] = done
        if levels and not left:
            return "(" + " UNION ALL ".join(f"SELECT * FROM {v} WHERE done" for v in levels) + ") AS done_rows"
        if trace is not None:
            figures = be.rows(plan.level_candidates(points, settings, previous))[0]
            trace.append(dict(level=lvl + 1, searching=figures[0], candidates=figures[1]))
        scratch = []                   # the level's searching records split into chunks

        def scratch_step(sql: str) -> str:
            scratch.append(step(sql))
            return scratch[-1]
        chunks = level_chunks(be, plan, points, settings, previous, searching, records, limit, scratch_step)
        made = [step(plan.level(near, settings, rows), joins_as_written=True) for rows, near in chunks]
        for name in scratch:
            drop(name)
        levels += made
        previous = made[0] if len(made) == 1 else \
            "(" + " UNION ALL ".join(f"SELECT * FROM {m}" for m in made) + ") AS __rwn_level"
    raise RWNError(f"the neighbourhood search did not end within {MAX_LEVELS} levels (a bug: please report it)")


def level_chunks(be, plan, points: str, settings: str, previous: str, searching: int, records: int,
                 limit: int | None, step) -> list[tuple[str, str]]:
    """(search rows, points) relations for each chunk of the next level: the whole level when
    it fits Limits.LEVEL_SHARE of the memory limit, else chunks of the records still searching split at
    quantiles of the first grid coordinate g_1 (kept by `points` on principal axes, else
    recomputed from the values as the level does), each with the points within CHUNK_REACH cell
    sides of it. Every candidate pair within a record's margin is kept, so the rows are those
    of the whole level (tests/rwn/test_search_in_steps.py). The searching records are staged once
    with their chunk number (`step`), so that a chunk reads its rows without joining the level
    with the points again."""
    whole = [(previous, points)]
    if not limit or not plan.grid_dims or not searching:
        return whole
    tuned = limits.current()
    budget = tuned.LEVEL_SHARE * limit
    count = min(MAX_CHUNKS, math.ceil(max(searching * SEARCHING_BYTES_PER_RECORD,
                                          records * tuned.HASHED_BYTES_PER_POINT) / budget))
    if count <= 1:
        return whole
    q, g1 = be.dialect.quantile, plan.steps["first_grid_coordinate"]
    side = be.rows(plan.level_side(points, settings, previous))[0][0]
    if side is None:
        return whole
    searching_rows = (f"FROM (SELECT * FROM {previous}) w JOIN {points} p ON p.rid = w.rid, {settings} st "
                      f"WHERE NOT w.done")
    cuts = be.rows("SELECT " + ", ".join(q(g1, i / count) for i in range(1, count))
                   + f" {searching_rows} AND w.start_lvl <= w.lvl + 1")[0]
    cuts = sorted(set(c for c in cuts if c is not None))
    if not cuts:
        return whole
    # chunk i holds cuts[i - 1] <= g_1 < cuts[i]: the number of cuts at or below g_1
    chunk_of = " + ".join(f"CASE WHEN {g1} >= {float_literal(c)} THEN 1 ELSE 0 END" for c in cuts)
    chunked = step(f"SELECT w.*, {chunk_of} AS __rwn_chunk {searching_rows}")
    bounds = [None, *cuts, None]
    reach = f"{CHUNK_REACH} * {float_literal(side)}"

    def within(lo, hi):
        """lo - reach <= g_1 < hi + reach; None: unbounded."""
        terms = ([] if lo is None else [f"{g1} >= {float_literal(lo)} - {reach}"]) + \
                ([] if hi is None else [f"{g1} < {float_literal(hi)} + {reach}"])
        return " AND ".join(terms) or "1 = 1"
    return [(f"(SELECT * FROM {chunked} WHERE __rwn_chunk = {i}) AS __rwn_chunk",
             f"(SELECT p.* FROM {points} p, {settings} st WHERE {within(lo, hi)}) AS __rwn_near")
            for i, (lo, hi) in enumerate(zip(bounds, bounds[1:]))]


def script(be, src: sources.Source, spec: RWNSpec, what: str, order: str = "keyed", pairs: bool = False,
           pre: PrePasses | None = None) -> str:
    """The SQL of `what` as the engine runs it, the key shown as a placeholder: one statement,
    or (without recursive CTEs) every step, the level step marked as repeated. `pre`: as for
    prepare."""
    d = be.dialect
    pre = pre_passes(be, src, spec, what, pairs) if pre is None else pre
    if not pre.in_steps:
        return be.engine_sql(prepare(be, src, spec, what, KEY_PLACEHOLDER, order=order, pairs=pairs, pre=pre).sql)
    ball = pre.ball
    plan = RWNPlan(src.sql, spec, d, pre.axes, ball)
    key = "(SELECT k FROM rwn_key)"
    names = {}
    steps = []
    for step in plan.staging_steps():
        names[step.name] = f"rwn_{step.name}"
        steps.append((names[step.name], step.sql(names)))
    ball_records = names.get("ball_records")
    balls = {n: names[n] for n in BALL_STEPS} if ball is not None else {}
    steps += [("rwn_level_0", plan.seed("rwn_points", ball_records)),
              ("rwn_level_<L+1>  -- repeated, L = 0, 1, ..., until no row of the level has done = false",
               plan.level("rwn_points", "rwn_settings", "rwn_level_<L>")),
              ("rwn_hood  -- rwn_done_rows: the rows of every level with done = true, UNION ALL",
               plan.hood("rwn_settings", "rwn_done_rows", ball_records))]
    fetched = what == "perturb" and values_in_steps(be)
    if fetched:
        names["hood"] = "rwn_hood"
        for step in plan.value_steps(key):
            names[step.name] = f"rwn_{step.name}"
            steps.append((names[step.name], step.sql(names)))
    final = {"perturb": lambda: (plan.release("rwn_staged", f"rwn_values_{len(spec.columns)}", key, src.names, order)
                                 if fetched
                                 else plan.perturb("rwn_staged", "rwn_hood", key, src.names, order, balls)),
             "donors": lambda: plan.donors("rwn_staged", "rwn_hood", key, balls),
             "neighborhoods": lambda: plan.neighborhoods("rwn_hood", pairs)}[what]()
    text = [f"-- step {name} (staged by the engine)\n{be.engine_sql(sql)};" for name, sql in steps]
    text.append(f"-- the result (rwn_key: a one-row view holding the key)\n{be.engine_sql(final)};")
    return "\n\n".join(text)


def forget(be, staged) -> None:
    for name in reversed(staged):
        be.drop(name)
    staged.clear()


def deliver(be, prepared: Prepared, into=None, replace: bool = False):
    """The result as the engine's lazy result (into=None), or written to `into` atomically
    (a table on DuckDB, a .parquet path on Spark; returns None). The staged steps are
    forgotten once the result's plan holds them."""
    try:
        return be.deliver(prepared.sql, into, replace, reads_staged=bool(prepared.staged), row_order=prepared.row_order)
    finally:
        forget(be, prepared.staged)


def write(be, prepared: Prepared, target: str, overwrite: bool = False) -> int:
    """Write the result to an output (file, db:table) atomically; the number of rows."""
    try:
        return be.write(prepared.sql, target, overwrite=overwrite, row_order=prepared.row_order)
    finally:
        forget(be, prepared.staged)


def stage(be, prepared: Prepared) -> str:
    """Compute the result once into a relation of the backend (for a method that reads it)."""
    try:
        return be.stage(prepared.sql)
    finally:
        forget(be, prepared.staged)


def summary(be, hoods: str, k: int) -> dict:
    """Distributions of a neighbourhoods relation (rwn-sql neighborhoods): per column size,
    radius and dcr its (min, q25, median, mean, q75, max); the records, and the shares of
    records with exactly k members and with none."""
    q = be.dialect.quantile
    out = {"records": be.rows(f"SELECT count(*) FROM {hoods}")[0][0]}
    for c in ("size", "radius", "dcr"):
        out[c] = be.rows(f"SELECT min({c}), {q(c, 0.25)}, {q(c, 0.5)}, avg({c}), {q(c, 0.75)}, max({c}) "
                         f"FROM {hoods}")[0]
    out["share_at_k"], out["share_empty"] = be.rows(
        f"SELECT avg(CASE WHEN size = {int(k)} THEN 1.0 ELSE 0.0 END), avg(CASE WHEN size = 0 THEN 1.0 ELSE 0.0 END) "
        f"FROM {hoods}")[0]
    return out
