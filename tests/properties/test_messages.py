"""A refusal is written once (rwn_sql.messages.Message) and says the same words whether the
planner raises it or the statement does (over a TEMP source the planner cannot see): for every
message of the package, the SQL rendering evaluated by DuckDB equals the text rendering, with
each part computed by the statement in turn, over names with quotes, spaces and unicode."""
import importlib
import string
from pathlib import Path

import duckdb
import pytest

from rwn_sql.identifiers import quote_literal
from rwn_sql.messages import SQL, Message, concat

PACKAGE = Path(__file__).resolve().parents[2] / "rwn_sql"
ODD = "it's a \"name\" with spaces, ü and {braces}"


def package_messages() -> dict[str, Message]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "Message(" not in path.read_text(encoding="utf-8"):
            continue
        name = ".".join(("rwn_sql", *path.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__")
        module = importlib.import_module(name)
        found.update({f"{name}.{k}": v for k, v in vars(module).items() if isinstance(v, Message)})
    return found


MESSAGES = package_messages()


def test_the_messages_are_found():
    assert {"rwn_sql.rp.core.checks.NULL_SENSITIVE", "rwn_sql.engines.sources.RESERVED_COLUMN",
            "rwn_sql.rp.core.disclosure.TOP_SHARE_PROBLEM", "rwn_sql.rwn.run.NOT_NUMERIC"} <= set(MESSAGES)


@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_the_statement_says_what_the_planner_says(name):
    message = MESSAGES[name]
    fields = {f: (spec, conversion) for _, f, spec, conversion in string.Formatter().parse(message.template)
              if f is not None}
    parts = {f: ODD for f in fields}
    expected = message.text(**parts)
    con = duckdb.connect()
    assert con.execute(f"SELECT {message.sql(**parts)}").fetchone()[0] == expected
    for f, (spec, conversion) in fields.items():     # a part the statement computes, as its text
        if spec or conversion:
            continue
        computed = {**parts, f: SQL(f"concat({quote_literal(ODD[:3])}, {quote_literal(ODD[3:])})")}
        assert con.execute(f"SELECT {message.sql(**computed)}").fetchone()[0] == expected, f


def test_adjacent_texts_merge_into_one_literal():
    assert concat(["a ", "b", SQL("x"), "", "c'd"]) == "'a b' || x || 'c''d'"
    assert concat([SQL("x")]) == "x"
    assert Message("{a} and {b!r}").sql(a=SQL("f(1)"), b="it's") == "f(1) || ' and \"it''s\"'"
