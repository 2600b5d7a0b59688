"""The package's modules (properties/test_layout.py's layers, properties/test_limits.py's reads)."""
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "rwn_sql"


def modules() -> dict[str, Path]:
    """Dotted module names under rwn_sql ('rwn.sqlgen'; a package by its folder name)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found
