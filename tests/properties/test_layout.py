"""The package's structure, as docs/design describes it: one folder per concern, each importing
only the folders below it, no import cycles (imports inside functions count too), DuckDB and
Spark reached only through the engines, and files and functions of a size one can read.

The last two rules list what still breaks them, exactly: a module leaving the list (fixed)
must leave it here too, and no new one may join."""
import ast
from pathlib import Path

from helpers.package import PACKAGE, modules

# Lower layers first; a module may import its own folder (without cycles) or a lower layer.
LAYERS = [
    {"errors", "identifiers", "limits", "messages", "small_files", "statements", "templates", "version"},
    {"engines.dialects"},
    {"randomness"},
    {"engines"},
    {"rwn"},
    {"rp.core"},          # the method: tests, calibration, input checks, disclosure, SQL builders
    {"rp.release"},       # the release product: database, recorded designs, analysts' queries, report
    {"rp"},               # orchestration: plan, api, temp_source
    {"evaluation"},
    {"recommendation"},   # recommendation for both methods
    {"cli"},
    {"macros", "__init__", "__main__"},
]
ENGINE_MODULES = {"engines", "macros", "rp.core.duckdb_udfs"}   # may import duckdb / pyspark
ENGINE_IMPORTS_TO_REMOVE = set()
MAX_FILE_LINES, MAX_FUNCTION_LINES = 800, 80
FILES_TO_SPLIT = set()
FUNCTIONS_TO_SPLIT = set()


def package_of(name: str, path: Path) -> list[str]:
    parts = name.split(".")
    return parts if path.name == "__init__.py" and name != "__init__" else parts[:-1]


def imports_of(name: str, path: Path, known: set) -> set:
    """The rwn_sql modules that `name` imports (relative imports, resolved)."""
    deps = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom) or node.level == 0:
            continue
        base = package_of(name, path)[: len(package_of(name, path)) - (node.level - 1)]
        target = base + (node.module.split(".") if node.module else [])
        for alias in node.names:
            full = ".".join(target + [alias.name])
            if full in known:
                deps.add(full)
            elif ".".join(target) in known:
                deps.add(".".join(target))
            elif not target:
                deps.add("__init__")
    return deps - {name}


def layer(name: str) -> int:
    """The layer of the longest member that is `name` or a package holding it."""
    if name.split(".")[-1] == "__main__":
        return len(LAYERS) - 1                   # entry points sit on top
    found = [(len(m), rank) for rank, members in enumerate(LAYERS) for m in members
             if name == m or name.startswith(m + ".")]
    if found:
        return max(found)[1]
    raise AssertionError(f"module rwn_sql.{name} belongs to no layer of tests/properties/test_layout.py")


def graph() -> dict[str, set]:
    found = modules()
    return {m: imports_of(m, p, set(found)) for m, p in found.items()}


def test_no_import_cycles():
    deps = graph()
    state = {}

    def visit(m, path):
        state[m] = "open"
        for d in sorted(deps[m]):
            assert state.get(d) != "open", "import cycle: " + " -> ".join(path + [d])
            if d not in state:
                visit(d, path + [d])
        state[m] = "done"

    for m in sorted(deps):
        if m not in state:
            visit(m, [m])


def test_each_folder_imports_only_the_layers_below():
    wrong = []
    for m, deps in graph().items():
        for d in deps:
            if layer(d) > layer(m):
                wrong.append(f"rwn_sql.{m} imports rwn_sql.{d}")
    assert not wrong, wrong


def test_only_the_engines_import_duckdb_or_spark():
    importers = set()
    for m, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            if any(n.split(".")[0] in ("duckdb", "pyspark") for n in names):
                importers.add(m)
    outside = {m for m in importers if m not in ENGINE_MODULES and m.split(".")[0] not in ENGINE_MODULES}
    assert outside == ENGINE_IMPORTS_TO_REMOVE


def test_files_and_functions_stay_readable():
    long_files, long_functions = set(), set()
    for m, path in modules().items():
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > MAX_FILE_LINES:
            long_files.add(m)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                long_functions.add(f"{m}.{node.name}")
    assert long_files == FILES_TO_SPLIT
    assert long_functions == FUNCTIONS_TO_SPLIT


def test_engines_say_what_they_lack():
    """Every engine-specific fragment goes through rwn_sql.engines.dialects; an engine without one says
    so by name instead of emitting SQL it cannot run."""
    import pytest

    from rwn_sql.engines.dialects import DUCKDB, SPARK, UnsupportedByEngine
    assert DUCKDB.star("s", ["__rwn_rid"], [("d.x", '"x"')]) == 's.* EXCLUDE (__rwn_rid) REPLACE (d.x AS "x")'
    assert SPARK.raise_error("'m'") == "raise_error('m')" and SPARK.md5_hex("t") == "md5(t)"
    with pytest.raises(UnsupportedByEngine, match="engine spark does not support SELECT \\* with EXCLUDE"):
        SPARK.star("s", ["a"])
    with pytest.raises(UnsupportedByEngine, match="engine spark does not support session variables"):
        SPARK.session_variable("'k'")


# Where a fragment is prose, not SQL: (module, fragment) -> why
NOT_SQL = {("rp/release/analyst.py", "QUALIFY"): "names the clause an analyst's query may not use"}


def test_methods_hold_no_duckdb_only_sql():
    """DuckDB-only fragments (issue 11's list, 128-bit casts, struct_pack) appear outside the engines
    only through the dialect: every module but engines/, macros.py (DuckDB's SQL surface) and the
    DuckDB functions of rp/core/duckdb_udfs.py is read."""
    import re
    banned = re.compile(r"md5_number\(|query_table\(|getvariable\(|\bQUALIFY\b|\bEXCLUDE\b|(?<![_\w.])error\(|"
                        r"::HUGEINT|(?<![\w.])struct_pack\(")
    exempt = {"macros", "rp.core.duckdb_udfs"}
    checked = [(m, p) for m, p in sorted(modules().items()) if m.split(".")[0] != "engines" and m not in exempt]
    assert len(checked) > 60, len(checked)
    for module, path in checked:
        name = path.relative_to(PACKAGE).as_posix()
        text = path.read_text(encoding="utf-8")
        docs = set()                    # docstring lines: prose about the fragments is fine
        for node in ast.walk(ast.parse(text)):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                    and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                docs |= set(range(body[0].lineno, body[0].end_lineno + 1))
        hits = [line for i, line in enumerate(text.splitlines(), 1)
                if i not in docs and (found := banned.search(line.split("#")[0]))
                and (name, found.group(0)) not in NOT_SQL]
        assert not hits, (name, hits[:3])
    for path in (PACKAGE.parent / "sql").glob("*.sql"):
        hits = [line for line in path.read_text(encoding="utf-8").splitlines()
                if not line.lstrip().startswith("--") and banned.search(line)]
        assert not hits, (path.name, hits[:3])
