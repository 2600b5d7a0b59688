"""A refusal's words, written once for both places a check runs: now, by the planner over data
it can read (`Message.text`), or later, by the statement itself over a source the planner
cannot see (`Message.sql`: the same words as a SQL string expression, the parts only the
statement knows computed there)."""
from __future__ import annotations

import string
from dataclasses import dataclass

from .identifiers import quote_literal


class SQL(str):
    """A part of a message the statement computes: a SQL expression of type text."""


def concat(pieces) -> str:
    """The SQL string expression of `pieces` (plain text, SQL expressions), adjacent texts merged."""
    merged: list[str] = []
    literal = False
    for piece in pieces:
        if isinstance(piece, SQL):
            merged.append(piece)
            literal = False
        elif piece:
            if literal:
                merged[-1] += piece
            else:
                merged.append(piece)
            literal = True
    return " || ".join(p if isinstance(p, SQL) else quote_literal(p) for p in merged)


@dataclass(frozen=True)
class Message:
    """A message with named parts ({name}, {name!r}, {name:.4g}, as str.format): `text(...)`
    fills them with values; `sql(...)` takes a part as a value, an SQL expression (computed by
    the statement), or a list of both."""
    template: str

    def text(self, **parts) -> str:
        return self.template.format(**parts)

    def pieces(self, **parts) -> list[str]:
        out: list[str] = []
        for text, name, spec, conversion in string.Formatter().parse(self.template):
            out.append(text)
            if name is None:
                continue
            value = parts[name]
            if isinstance(value, SQL):
                out.append(value)
            elif isinstance(value, list):
                out.extend(value)
            else:
                value = repr(value) if conversion == "r" else str(value) if conversion == "s" else value
                out.append(format(value, spec))
        return out

    def sql(self, **parts) -> str:
        return concat(self.pieces(**parts))
