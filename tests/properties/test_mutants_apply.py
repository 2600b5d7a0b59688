"""benchmarks/mutants.py stays applicable: every curated mutant's original text occurs exactly
once in its file, so a change of the code (a move, a reworded line) cannot silently retire a
mutant the suite must kill. Which tests kill them is benchmarks/mutants.py's own run."""
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_mutant_applies_to_todays_code():
    spec = importlib.util.spec_from_file_location("rwn_mutants", ROOT / "benchmarks" / "mutants.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    stale = [f"{m.name} ({m.path}: {(ROOT / m.path).read_text(encoding='utf-8').count(m.original)} matches)"
             for m in module.MUTANTS if (ROOT / m.path).read_text(encoding="utf-8").count(m.original) != 1]
    assert len(module.MUTANTS) > 50 and not stale, stale
