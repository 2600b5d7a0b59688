"""The reports' values as plain JSON: what every evaluation report's to_dict returns."""
from __future__ import annotations

import math

import numpy as np

__all__ = ["plain"]


def plain(value):
    """`value` with dicts (keys as text), lists and tuples (as lists), numpy and Python bools,
    integers and floats turned into plain dict, list, bool, int and float, recursively; a NaN or
    infinite float becomes None. Anything else is returned as it is."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    return value
