"""The package's tuning limits: the sizes and thresholds at which it changes its plan (one
recursive statement or the search in steps, the ball path, a brute force or k-d trees) or
refuses a run for memory. They change the speed, the memory and the SQL, never what a
result means.

One frozen value, `Limits`, read at call time through `current()` (never at import or in a
default argument), so that a block can run under other limits:

    with limits.use(LEVEL_SHARE=0.5, HASHED_BYTES_PER_POINT=0):
        ...

Tests reach a code path that way, benchmarks compare two. The value lives in a context
variable: a thread started with threading.Thread begins with the defaults, so code that runs
the work in a thread starts it in contextvars.copy_context() (rwn_sql.cli.main).

Only the standard library: every layer may read it."""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from dataclasses import dataclass

__all__ = ["Limits", "current", "use"]


@dataclass(frozen=True)
class Limits:
    """Every tuning limit, with its default (see the module's docstring)."""
    # --- the neighbourhood search (rwn.run, rwn.ball_sql, rwn.search_sql, rwn.geometry) ----------
    # Peak memory per neighbour pair while the neighbourhoods are built: the candidate pair rows,
    # the grouped lists and their sorted and filtered copies. Measured about 120 bytes
    # (benchmarks/bench_guards.py: tied data, 50k to 200k rows); 128 keeps a margin.
    BYTES_PER_PAIR: int = 128                 # a listed pair's bytes: guards refuse (or search in steps) beyond the limit
    # Peak memory per record of the one recursive statement on DuckDB: its working rows and the
    # grouped member lists of a level are held in memory that does not spill (10M x 5 Gaussian
    # records ran out of memory under 2 GB and under 4 GB; 200k x 3 uniform records need 100-120 MB,
    # tests/rwn/test_spill.py). The level-by-level search writes every level to a staged table, which
    # spills: it is taken beyond this many bytes per record of the memory limit (search_in_steps).
    RECURSIVE_BYTES_PER_RECORD: float = 1000  # records times this beyond the memory limit: the search in steps
    # A level of the search in steps keeps its searching records' candidates in memory DuckDB does
    # not spill (rwn.run.SEARCHING_BYTES_PER_RECORD) and hashes the grid points it may pair them
    # with (about 110 bytes each). Where a level would need more than LEVEL_SHARE of the memory
    # limit, it runs in chunks of searching records along the first grid coordinate, each hashing
    # only the points near it (rwn.run.level_chunks). The whole limit as the budget: fewer chunks,
    # each of which hashes the points again, at the same peak memory (W5 and tests/rwn/test_spill.py,
    # docs/design/neighbourhoods.md).
    HASHED_BYTES_PER_POINT: int = 110         # a hashed grid point's bytes, in a level's memory estimate
    LEVEL_SHARE: float = 1.0                  # the memory limit's share a level may need before it runs in chunks
    # Principal axes replace the columns as grid coordinates when their leading G capture at least
    # this much more of the scaled variance than the G columns of largest variance (correlated data,
    # whose blocks are otherwise elongated along the data); isotropic data keeps the columns.
    PCA_GAIN: float = 1.1                     # the variance gain principal axes need (rwn.run.grid_axes)
    # The ball path (rwn.ball_sql) counts eps-balls instead of listing them: small inputs keep
    # their lists.
    BALL_MIN_MEMBERS: float = 64              # the ball path from this estimated mean |S_i| on
    BALL_MIN_PAIRS: int = 1_000_000           # and from this many listed pairs on (about 128 MB)
    # The cell join skips the neighbour cells beyond a record's margin (rwn.search_sql.cell_keys)
    # on grids of at least this many coordinates (None: never, for tests and A/B timing).
    SKIP_FAR_CELLS: int | None = 4            # where the skip saves more than it costs
    CELL_KEY_BITS: int = 62                   # the packed cell key: G fields of 62 // G bits, a non-negative BIGINT

    # --- the disclosure-risk searches (evaluation.risk) ------------------------------------------
    SMALL_SEARCH: int = 250_000               # at most this many pairs: blocked brute force, no trees
    SMALL_REFERENCE: int = 512                # nor against at most this many reference rows (tune's many queries)
    CACHED_ELEMENTS: int = 65_536             # the brute force's blocks on a small reference: they stay in cache
    FEW_GROUPS: int = 64                      # at most this many category combinations: one k-d tree each
    GROUP_QUERY_COST: int = 1500              # a bounded k-d tree query's cost in brute-force distance elements
    CHUNK_ELEMENTS: int = 4_000_000           # distances held at once by the blocked brute force
    ONEHOT_LEVELS: int = 64                   # in the brute force, columns with more levels are compared directly

    # --- evaluation and tuning (evaluation.evaluate, evaluation.tune) ----------------------------
    BATCH_ELEMENTS: int = 4_000_000           # evaluate_replicates: values of the releases evaluated together
    # The one-statement sweep reads its donor and value lists beside every chunk of release rows,
    # and DuckDB copies a constant list into each chunk (STANDARD_VECTOR_SIZE = 2048 rows): above
    # this many bytes copied, the sweep runs one statement per eps instead (larger data, larger
    # neighbourhoods: the statements' fixed cost no longer matters there).
    ONE_STATEMENT_COPY_BYTES: int = 256 << 20  # the lists' bytes one sweep statement may copy (tune.rwn_releases)


# a module-level ContextVar (one per process), as contextvars asks
_CURRENT: contextvars.ContextVar[Limits] = contextvars.ContextVar("rwn_sql_limits", default=Limits())


def current() -> Limits:
    """The limits in force here: the defaults, or those of the innermost use() block."""
    return _CURRENT.get()


@contextlib.contextmanager
def use(**changes):
    """The current limits with `changes` (field names of Limits; another name is a TypeError)
    for the block; yields them."""
    token = _CURRENT.set(dataclasses.replace(current(), **changes))
    try:
        yield _CURRENT.get()
    finally:
        _CURRENT.reset(token)
