"""The package's structure: no import cycles among rwn_sql's modules (imports inside
functions count too), so every module can be read, imported and tested on its own."""
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "rwn_sql"


def imports_of(path: Path, modules: set) -> set:
    deps = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            deps |= {node.module.split(".")[0]} if node.module else {a.name for a in node.names}
    return deps & modules


def test_no_import_cycles():
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    graph = {m: imports_of(PACKAGE / f"{m}.py", modules) for m in modules}
    state = {}

    def visit(m, path):
        state[m] = "open"
        for d in sorted(graph[m]):
            assert state.get(d) != "open", "import cycle: " + " -> ".join(path + [d])
            if d not in state:
                visit(d, path + [d])
        state[m] = "done"

    for m in sorted(modules):
        if m not in state:
            visit(m, [m])


def test_engines_say_what_they_lack():
    """Every engine-specific fragment goes through rwn_sql.dialect; an engine without one says
    so by name instead of emitting SQL it cannot run."""
    import pytest

    from rwn_sql.dialect import DUCKDB, SPARK, UnsupportedByEngine
    assert DUCKDB.star("s", ["__rwn_rid"], [("d.x", '"x"')]) == 's.* EXCLUDE (__rwn_rid) REPLACE (d.x AS "x")'
    assert SPARK.raise_error("'m'") == "raise_error('m')" and SPARK.md5_hex("t") == "md5(t)"
    with pytest.raises(UnsupportedByEngine, match="engine spark does not support SELECT \\* with EXCLUDE"):
        SPARK.star("s", ["a"])
    with pytest.raises(UnsupportedByEngine, match="engine spark does not support session variables"):
        SPARK.session_variable("'k'")


def test_methods_hold_no_duckdb_only_sql():
    """The fragments issue 11 lists appear in the methods' code only through the dialect."""
    import re
    banned = re.compile(r"md5_number\(|query_table\(|getvariable\(|\bQUALIFY\b|\bEXCLUDE\b|(?<![_\w])error\(")
    for name in ("sqlgen.py", "rp_sql.py", "baselines.py", "rp.py", "api.py", "randomness.py"):
        text = (PACKAGE / name).read_text(encoding="utf-8")
        docs = set()                    # docstring lines: prose about the fragments is fine
        for node in ast.walk(ast.parse(text)):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                    and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                docs |= set(range(body[0].lineno, body[0].end_lineno + 1))
        hits = [line for i, line in enumerate(text.splitlines(), 1)
                if i not in docs and banned.search(line.split("#")[0])]
        assert not hits, (name, hits[:3])
    for path in (PACKAGE.parent / "sql").glob("*.sql"):
        hits = [line for line in path.read_text(encoding="utf-8").splitlines()
                if not line.lstrip().startswith("--") and banned.search(line)]
        assert not hits, (path.name, hits[:3])
