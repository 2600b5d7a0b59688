"""The docs site holds together: every relative link of the README and of docs/ names a file of
the repository (and a heading of it, for '#anchor'), every page is in mkdocs.yml's navigation,
and the README stays a front door (under 300 lines)."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def prose(text: str) -> str:
    """The text outside fenced code blocks."""
    return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)


def anchors(path: Path) -> set:
    """Heading anchors as mkdocs (and GitHub) make them: lower case, punctuation dropped, spaces to '-'."""
    found = set()
    for m in re.finditer(r"^#+ (.*)$", prose(path.read_text(encoding="utf-8")), re.M):
        found.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return found


@pytest.mark.parametrize("page", [ROOT / "README.md", *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor}")
    assert not broken, broken


def test_every_page_is_in_the_navigation():
    nav = set(re.findall(r":\s*(\S+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M))
    pages = {p.relative_to(DOCS).as_posix() for p in PAGES}
    assert pages == nav, (sorted(pages - nav), sorted(nav - pages))


def test_the_readme_is_a_front_door():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.count("\n") <= 300
    commands = re.search(r"```bash\n(.*?)```", text, re.S).group(1).splitlines()
    assert commands[0].startswith("python3 -m venv .venv") and "pip install \".[test]\"" in commands[0]
    assert commands[1].endswith("pytest -q")


def test_the_python_reference_documents_every_public_name_at_its_home():
    """docs/reference/python.md renders each public name from its docstring (mkdocstrings):
    every name of rwn_sql.__all__ must be there, at the module it loads from, or the page
    silently misses it (or the strict build fails on a moved one)."""
    import rwn_sql
    page = (ROOT / "docs" / "reference" / "python.md").read_text(encoding="utf-8")
    documented = re.findall(r"^::: rwn_sql\.([\w.]+)\.(\w+)$", page, re.M)
    assert sorted(name for _, name in documented) == sorted(rwn_sql.__all__)
    for home, name in documented:
        assert rwn_sql._HOMES[name] == home, name
