"""Parameters of an RWN run, validated before any SQL is built."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..errors import RWNError

SCALES = ("minmax", "zscore", "none")
ON_MISSING = ("error", "drop")
RESERVED_PREFIX = "__rwn_"
# The largest integer parameter (k, reps, ...): DuckDB's INTEGER, which generated SQL compares
# them with; larger ones fail binding with an error that names no parameter.
MAX_COUNT = 2**31 - 1


def check_scale(scale) -> None:
    """The scaling of the distance (RWN and the baselines): one of SCALES."""
    if scale not in SCALES:
        raise RWNError(f"scale must be one of {', '.join(SCALES)}; got {scale!r}")


def _names(value, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    names = tuple(value)
    for name in names:
        if not isinstance(name, str) or name == "":
            raise RWNError(f"{what}: column names must be non-empty strings, got {name!r}")
    seen = set()
    for name in names:
        if name in seen:
            raise RWNError(f"{what}: column {name!r} is listed twice")
        seen.add(name)
    return names


@dataclass(frozen=True)
class RWNSpec:
    """What to perturb and how. `columns` are both the distance and the perturbed columns;
    those also named in `categorical` use mismatch distance (weight w), the rest must be
    numeric. `strata` columns must match exactly between neighbours and pass through."""

    columns: tuple[str, ...]
    categorical: tuple[str, ...] = ()
    k: int = 5
    eps: float = 0.0
    q: float = 1.0
    scale: str = "minmax"
    strata: tuple[str, ...] = ()
    weight: float = 1.0
    on_missing: str = "error"
    drop: tuple[str, ...] = field(default=())
    id: str | None = None          # record identity of every draw and tie-break (else the input position)

    def __post_init__(self):
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731
        set_("columns", _names(self.columns, "columns"))
        set_("categorical", _names(self.categorical, "categorical"))
        set_("strata", _names(self.strata, "strata"))
        set_("drop", _names(self.drop, "drop"))
        if not self.columns:
            raise RWNError("columns: give at least one column to perturb")
        for name in self.categorical:
            if name not in self.columns:
                raise RWNError(f"categorical: {name!r} is not among columns {list(self.columns)}")
        for name in self.strata:
            if name in self.columns:
                raise RWNError(f"column {name!r} is both a stratum and a perturbed column")
        for name in self.drop:
            if name in self.columns:
                raise RWNError(f"column {name!r} is both perturbed and dropped")
            if name in self.strata:
                raise RWNError(f"column {name!r} is both a stratum and dropped")
        if self.id is not None:
            if not isinstance(self.id, str) or not self.id:
                raise RWNError(f"id must be a column name, got {self.id!r}")
            if self.id in self.columns or self.id in self.strata:
                raise RWNError(f"the id column {self.id!r} cannot be perturbed or a stratum; it passes through")
        for name in self.columns + self.strata + self.drop + ((self.id,) if self.id else ()):
            if name.lower().startswith(RESERVED_PREFIX):
                raise RWNError(f"column {name!r}: names starting with {RESERVED_PREFIX!r} are reserved")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or not 0 <= self.k <= MAX_COUNT:
            raise RWNError(f"k must be an integer >= 0 (at most {MAX_COUNT}), got {self.k!r}")
        set_("eps", finite_number(self.eps, "eps"))
        if self.eps < 0:
            raise RWNError(f"eps must be >= 0, got {self.eps!r}")
        set_("q", finite_number(self.q, "q"))
        if not 0.0 <= self.q <= 1.0:
            raise RWNError(f"q must be in [0, 1], got {self.q!r}")
        set_("weight", finite_number(self.weight, "weight"))
        if self.weight <= 0:
            raise RWNError(f"weight (categorical mismatch distance) must be > 0, got {self.weight!r}")
        check_scale(self.scale)
        if self.on_missing not in ON_MISSING:
            raise RWNError(f"on_missing must be one of {', '.join(ON_MISSING)}; got {self.on_missing!r}")
        if self.k == 0 and self.eps == 0:
            raise RWNError("k = 0 and eps = 0 give every record an empty neighbourhood; raise k or eps")

    @property
    def numeric(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if c not in self.categorical)


def finite_number(value, name: str) -> float:
    """`value` as a finite float, else an error naming the parameter `name`."""
    if isinstance(value, bool):
        raise RWNError(f"{name} must be a number, got {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError, OverflowError):    # OverflowError: an int beyond a float
        raise RWNError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(out):
        raise RWNError(f"{name} must be finite, got {value!r}")
    return out
