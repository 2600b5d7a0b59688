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
