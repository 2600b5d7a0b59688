"""The RWN plan for an engine without recursive CTEs (Spark): the statements of
sqlgen.perturb_sql / donors_sql / neighborhoods_sql cut into steps that a backend
materialises one by one, the neighbourhood search as one statement per level.

Every step is rendered by the same builders as on DuckDB (sqlgen.neighborhood_steps,
perturb_tail_ctes, perturb_final, ...) with the engine's dialect; a step reads the steps
before it through CTEs bound to the tables the backend made of them. Pure text: nothing here
touches a session (rwn_sql.engines.spark runs the plan).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from . import geometry, sqlgen
from ..engines.dialects import SPARK, Dialect
from ..identifiers import quote_ident
from .spec import RWNSpec

LEVEL_SELECT = "\nSELECT lvl, i AS rid,"        # where the level's CTEs end and its result begins


def bind(bound: dict, ctes, final: str) -> str:
    """WITH the `bound` steps (name -> table of the backend), then `ctes`, then `final`."""
    heads = [f"{name} AS (SELECT * FROM {table})" for name, table in bound.items()] + list(ctes)
    return "WITH\n" + ",\n".join(heads) + "\n" + final


@dataclass(frozen=True)
class Step:
    """One staged statement of a run: `name` (rwn_<name> in --show-sql), `sql` its text from
    the tables of the steps before it (a dict by step name), `replaces` an earlier step whose
    table the run no longer reads once this one is staged, `joins_as_written` (Backend.stage)."""
    name: str
    sql: Callable[[dict], str]
    replaces: str | None = None
    joins_as_written: bool = False


BALL_STEPS = ("settings", "ball_points", "ball_cells")      # the staged tables a ball path's release reads


@dataclass
class RWNPlan:
    """The steps of an RWN run over the source table `source` (an SQL name)."""
    source: str
    spec: RWNSpec
    dialect: Dialect = SPARK
    axes: tuple | None = None       # the grid's directions (rwn.grid_axes), None: the columns
    ball: int | None = None         # the ball path's levels (rwn.ball_path), None: members listed
    steps: dict = field(init=False)

    def __post_init__(self):
        self.steps = sqlgen.neighborhood_steps(self.source, self.spec, self.dialect, self.axes, self.ball)
        self.level_ctes = self.steps["level"][:self.steps["level"].index(LEVEL_SELECT)]

    def staged(self) -> str:
        """The source with its record numbers (__rwn_rid: the rank of the id), in one statement."""
        return bind({}, [self.steps["src"], self.steps["staged"]], "SELECT * FROM staged")

    def numbering(self) -> list:
        """The steps that make `staged`: (name, function of the previous step's table -> SQL).
        Where the dialect ranks in steps (Spark), two steps that run in parallel: the rows
        sorted by id with their places, then the ranks; else the one window of staged()."""
        if not (self.dialect.ranks_in_steps and self.spec.id):
            return [("staged", lambda _: self.staged())]
        rows = bind({}, [self.steps["src"]], self.steps["rows"])
        return [("positions", lambda _: self.dialect.sorted_positions(rows, quote_ident(self.spec.id))),
                ("staged", lambda positions: self.dialect.ranks_from_positions(positions, "__rwn_rid"))]

    def staging_steps(self) -> list[Step]:
        """The steps before the search, in order: the numbered rows (`staged`), `settings`,
        `points`, and the ball path's pre-pass. Staging (rwn.run.stage_neighborhoods) and
        --show-sql (rwn.run.script) both walk this list."""
        steps, previous = [], None
        for name, make in self.numbering():
            steps.append(Step(name, lambda t, make=make, previous=previous: make(t.get(previous)), previous))
            previous = name
        steps += [Step("settings", lambda t: self.settings(t["staged"])),
                  Step("points", lambda t: self.points(t["staged"], t["settings"]))]
        if self.ball is not None:
            steps += [Step("ball_points", lambda t: self.ball_points(t["points"], t["settings"])),
                      Step("ball_counts", lambda t: self.ball_counts(t["points"], t["settings"], t["ball_points"])),
                      Step("ball_records", lambda t: self.ball_records(t["ball_points"], t["ball_counts"])),
                      Step("ball_cells", lambda t: self.ball_cells(t["ball_counts"], t["ball_records"]))]
        return steps

    def value_steps(self, key_sql: str, reps: int | None = None) -> list[Step]:
        """The steps of a release that fetches its donors' values one column at a time (after
        `staged`, `hood` and the ball path's tables): the picks, then one step per column, each
        replacing the one before; the last is what `release` reads."""
        def balls(t):
            return {n: t[n] for n in BALL_STEPS} if self.ball is not None else {}
        steps = [Step("values_0", lambda t: self.picks(t["staged"], t["hood"], key_sql, balls(t), reps))]
        for i in range(1, len(self.spec.columns) + 1):
            # hash the one column of the rows (as written), not the picks
            steps.append(Step(f"values_{i}", lambda t, i=i: self.donor_values(t["staged"], t[f"values_{i - 1}"], i, reps),
                              f"values_{i - 1}", joins_as_written=True))
        return steps

    def settings(self, staged: str) -> str:
        """One row: `settings` (the starting cell side s0, the offsets and scales); fails the
        statement with the first problem found in the data."""
        return bind({"staged": staged}, [self.steps[n] for n in ("stats", "strata_sizes", "params", "settings")],
                     "SELECT * FROM settings")

    def points(self, staged: str, settings: str) -> str:
        """The records' grid coordinates and start levels (`settings` serves as `params` too)."""
        return bind({"staged": staged, "params": settings, "settings": settings},
                     [self.steps[n] for n in ("scaled", "first_level", "points")], "SELECT * FROM points")

    def seed(self, points: str, ball_records: str | None = None) -> str:
        """Level -1 of the search: every record (but the ball records), none done."""
        return bind({"points": points, **({"ball_records": ball_records} if ball_records else {})}, [],
                    self.steps["seed"])

    # the ball path's pre-pass (ball_sql.BallPieces), one staged step each
    def ball_points(self, points: str, settings: str) -> str:
        return bind({"points": points, "settings": settings}, [self.steps["ball_points"]], "SELECT * FROM ball_points")

    def ball_counts(self, points: str, settings: str, ball_points: str) -> str:
        return bind({"settings": settings, "ball_points": ball_points},
                    [self.steps[n] for n in ("offsets", "ball_pairs", "ball_counts")], "SELECT * FROM ball_counts")

    def ball_records(self, ball_points: str, ball_counts: str) -> str:
        return bind({"ball_points": ball_points, "ball_counts": ball_counts}, [self.steps["ball_records"]],
                    "SELECT * FROM ball_records")

    def ball_cells(self, ball_counts: str, ball_records: str) -> str:
        return bind({"ball_counts": ball_counts, "ball_records": ball_records}, [self.steps["ball_cells"]],
                    "SELECT * FROM ball_cells")

    def level(self, points: str, settings: str, previous: str) -> str:
        """The next level of the search: the records of `previous` not done try cells twice as wide."""
        return bind({"points": points, "settings": settings, "search": previous},
                     [self.steps["offsets"], self.steps["level"]], "")

    @property
    def grid_dims(self) -> int:
        """The grid coordinates g_1..g_G of `points` (0: no numeric column)."""
        return geometry.grid_coordinates(self.spec, self.axes)

    def level_side(self, points: str, settings: str, previous: str) -> str:
        """One row: the cell side s of the next level (NULL when no record searches at it)."""
        return bind({"points": points, "settings": settings, "search": previous},
                    [self.steps["offsets"], self.level_ctes.rstrip()], "SELECT max(s) AS s FROM level")

    def level_candidates(self, points: str, settings: str, previous: str) -> str:
        """Figures of the next level (for benchmarks): records searching, candidate pairs."""
        return bind({"points": points, "settings": settings, "search": previous},
                     [self.steps["offsets"], self.level_ctes.rstrip()],
                     "SELECT count(DISTINCT i) AS records, count(*) AS candidates FROM pairs")

    def hood(self, settings: str, done: str, ball_records: str | None = None) -> str:
        """The neighbourhoods from the rows of `done` (the done records of every level) and the
        ball records."""
        return bind({"settings": settings, "search": done, **({"ball_records": ball_records} if ball_records else {})},
                    [self.steps["hood"]], "SELECT * FROM hood")

    def perturb(self, staged: str, hood: str, key_sql: str, columns, order: str = "keyed", balls=None) -> str:
        return bind({"staged": staged, "hood": hood, **(balls or {})},
                    [sqlgen.perturb_tail_ctes(self.spec, key_sql, self.dialect, ball=self.ball, axes=self.axes)],
                    sqlgen.perturb_final(self.spec, key_sql, self.dialect, order=order, columns=columns))

    def picks(self, staged: str, hood: str, key_sql: str, balls=None, reps: int | None = None) -> str:
        """The drawn donors (rid, [rep,] donor_1, ...) alone: the first step of fetching their
        values one column at a time (see sqlgen.donor_value_sql)."""
        return bind({"staged": staged, "hood": hood, **(balls or {})},
                    [sqlgen.perturb_tail_ctes(self.spec, key_sql, self.dialect, reps, self.ball, self.axes)],
                    "SELECT * FROM picks")

    def donor_values(self, staged: str, picks: str, i: int, reps: int | None = None) -> str:
        """`picks` with the values of column i added (sqlgen.donor_value_sql)."""
        return bind({"staged": staged, "picks": picks}, [], sqlgen.donor_value_sql(self.spec, i, reps))

    def release(self, staged: str, fetched: str, key_sql: str, columns, order: str = "keyed",
                reps: int | None = None) -> str:
        """The release from the rows and the fetched donor values (the last donor_values step)."""
        return bind({"staged": staged, "picks": fetched}, [],
                    sqlgen.perturb_final(self.spec, key_sql, self.dialect, reps, order, columns, fetched=True))

    def donors(self, staged: str, hood: str, key_sql: str, balls=None) -> str:
        return bind({"staged": staged, "hood": hood, **(balls or {})},
                    [sqlgen.perturb_tail_ctes(self.spec, key_sql, self.dialect, ball=self.ball, axes=self.axes)],
                    sqlgen.donors_final(self.spec, self.dialect))

    def neighborhoods(self, hood: str, pairs: bool = False) -> str:
        return bind({"hood": hood}, [], sqlgen.neighborhoods_final(pairs, self.dialect))
