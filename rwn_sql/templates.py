"""The SQL templates of the sql/ folder (shipped as `rwn_sql.sql`), filled with string.Template."""
from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from string import Template


def sql_text(name: str) -> str:
    """A file of the sql/ folder: installed as `rwn_sql.sql`, or read from a source checkout."""
    try:
        folder = resources.files("rwn_sql.sql")
    except ModuleNotFoundError:
        folder = Path(__file__).resolve().parent.parent / "sql"
    return folder.joinpath(name).read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def template(name: str) -> Template:
    return Template(sql_text(name))


def render(name: str, **values) -> str:
    return template(name).substitute(**values)


def joined(pieces, sep: str = ",\n        ", lead: str = ",\n        ") -> str:
    """SQL pieces joined by `sep`, after `lead` (a list's continuation), or '' when there are none."""
    pieces = list(pieces)
    return (lead + sep.join(pieces)) if pieces else ""
