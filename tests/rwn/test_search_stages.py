"""The neighbourhood search's stages, each on its own: statistics (stats_sql), grid (grid_sql),
level (search_sql) and ball path (ball_sql) return small frozen values of SQL fragments, and
each value over a grid of specs equals the stored one in tests/golden/stages/ (regenerated
with RWN_UPDATE_GOLDEN=1). A change to one stage shows up as a diff of that stage's fragment,
named, before tests/properties/test_render_identity.py sees it as a diff of a whole statement."""
import dataclasses
import json
import os
from pathlib import Path

import pytest

from rwn_sql import RWNSpec
from rwn_sql.engines.dialects import DUCKDB, SPARK
from rwn_sql.errors import RWNError
from rwn_sql.rwn import sqlgen
from rwn_sql.rwn.ball_sql import ball_sql
from rwn_sql.rwn.geometry import Grid
from rwn_sql.rwn.grid_sql import grid_sql
from rwn_sql.rwn.search_sql import level_sql
from rwn_sql.rwn.stats_sql import statistics_sql

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "stages"
AXES = ((0.6, 0.8, 0.0, 0.0), (0.0, 0.0, 1.0, 0.0), (0.8, -0.6, 0.0, 0.0))

# name: (spec, dialect, axes, ball): every branch of a stage is taken by at least one case
CASES = {
    "two_columns": (RWNSpec(columns=("a", "b")), DUCKDB, None, None),
    "five_columns_eps": (RWNSpec(columns=("a", "b", "c", "d", "e"), k=3, eps=0.2), DUCKDB, None, None),
    "six_columns_zscore": (RWNSpec(columns=tuple("abcdef"), scale="zscore"), DUCKDB, None, None),
    "mixed_strata_id_drop": (RWNSpec(columns=("a", "b", "c", "d", "colour"), categorical=("colour",),
                                     strata=("region",), id="rid", on_missing="drop", weight=0.7),
                             DUCKDB, None, None),
    "categorical_only_k0": (RWNSpec(columns=("colour",), categorical=("colour",), k=0, eps=0.5), DUCKDB, None, None),
    "axes_no_scale": (RWNSpec(columns=("a", "b", "c", "d"), scale="none"), DUCKDB, AXES, None),
    "ball_path_strata": (RWNSpec(columns=("a", "b", "c"), eps=0.3, strata=("region",)), DUCKDB, None, 2),
    "spark_mixed_ball": (RWNSpec(columns=("a", "b", "c", "d", "colour"), categorical=("colour",), eps=0.25,
                                 strata=("region",)), SPARK, None, 1),
}


def stages(spec, dialect, axes, ball) -> dict:
    grid = Grid.of(spec, dialect, axes)
    points = grid_sql(grid)
    level = level_sql(grid, points.grid_columns)
    return {"statistics": statistics_sql(grid), "grid": points, "level": level,
            "ball": ball_sql(spec, dialect, grid.axes, ball, level.grid_margin, points.grid_columns)}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_stage_equals_its_golden_fragments(case):
    values = {name: dataclasses.asdict(value) for name, value in stages(*CASES[case]).items()}
    path = GOLDEN / f"{case}.json"
    text = json.dumps(values, indent=1, sort_keys=True) + "\n"
    if os.environ.get("RWN_UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    expected = json.loads(path.read_text(encoding="utf-8"))
    for stage, fragments in values.items():
        for field, sql in fragments.items():
            if isinstance(sql, list):      # a tuple of fragments, as JSON stores it
                sql = list(sql)
            assert sql == expected[stage][field], f"{case}: stage {stage!r}, fragment {field!r} changed"


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_statement_is_its_stages_composed(case):
    """The template's values are exactly the stages' fields (plus the source and the search's
    seed): no stage's fragment is dropped or overridden on the way into rwn_neighborhoods.sql."""
    spec, dialect, axes, ball = CASES[case]
    values = sqlgen._neighborhood_values("t", spec, dialect, axes, ball)
    for value in stages(spec, dialect, axes, ball).values():
        for field in dataclasses.fields(value):
            assert values[field.name] == getattr(value, field.name), field.name
    assert ("ball_records" in values["search_seed"]) == (ball is not None)


def test_stage_values_are_frozen():
    grid = Grid.of(*CASES["two_columns"][:3])
    for value in (grid, statistics_sql(grid), grid_sql(grid), level_sql(grid, "")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, dataclasses.fields(value)[0].name, "changed")


def test_the_grid_checks_its_axes():
    spec = RWNSpec(columns=("a", "b", "c", "d"))
    assert Grid.of(spec, DUCKDB, AXES).G == 3 and Grid.of(spec, DUCKDB).G == 4
    assert list(Grid.of(spec, DUCKDB).dims) == [3, 4]
    with pytest.raises(RWNError, match="norm at most 1"):
        Grid.of(spec, DUCKDB, ((2.0, 0, 0, 0),) + AXES[1:])
