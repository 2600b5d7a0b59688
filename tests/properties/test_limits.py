"""rwn_sql.limits: the tuning limits as one frozen value, read where they are used, changed for a
block by limits.use (docs/design/layout.md, "Tuning limits")."""
import ast
import dataclasses

import pytest

from helpers.data import BODYFAT
from rwn_sql import limits
from helpers.package import modules


def test_use_changes_a_copy_for_the_block_only():
    default = limits.current()
    assert default == limits.Limits()
    with limits.use(LEVEL_SHARE=0.5) as inner:
        assert inner is limits.current() and inner.LEVEL_SHARE == 0.5
        with limits.use(BALL_MIN_PAIRS=10):
            assert (limits.current().LEVEL_SHARE, limits.current().BALL_MIN_PAIRS) == (0.5, 10)
        assert limits.current().BALL_MIN_PAIRS == default.BALL_MIN_PAIRS
    assert limits.current() is default
    with pytest.raises(dataclasses.FrozenInstanceError):
        default.LEVEL_SHARE = 0.5
    with pytest.raises(TypeError, match="NO_SUCH_LIMIT"):
        with limits.use(NO_SUCH_LIMIT=1):
            pass
    assert limits.current() is default


def test_no_module_keeps_a_copy_of_a_limit():
    """A limit defined or imported at module level elsewhere would be read at import, out of
    use()'s reach."""
    names = {f.name for f in dataclasses.fields(limits.Limits)}
    found = []
    for name, path in modules().items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign):
                bound = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                bound = [node.target.id]
            elif isinstance(node, ast.ImportFrom):
                bound = [a.asname or a.name for a in node.names]
            else:
                continue
            found += [f"{name}.{b}" for b in bound if b in names]
    assert found == []


def test_the_cli_runs_its_work_under_the_callers_limits(tmp_path):
    """The CLI works in a thread of its own, which starts in a copy of the caller's context."""
    from rwn_sql.cli import main as cli
    out = tmp_path / "released.csv"
    args = ["perturb", str(BODYFAT), str(out), "--columns", "Age,Weight,Height", "--eps", "0.3", "--seed", "1",
            "--memory-limit", "1GB"]
    with limits.use(BYTES_PER_PAIR=10 ** 12):       # any pair beyond k is too many: refused
        assert cli.main(args) == 2
    assert not out.exists()
    assert cli.main(args) == 0 and out.exists()
