"""rwn_sql: statistical disclosure control inside DuckDB.

    import duckdb, rwn_sql
    con = duckdb.connect()
    rwn_sql.install(con)                      # SQL surface: rwn_perturb(...), rwn_neighborhoods(...)
    rel = rwn_sql.perturb(con, "people", ["age", "income"], k=5, eps=0.3, key=my_secret)
    rwn_sql.release(con, "people", "release.duckdb", "diagnosis", p=0.5, public=["sex", "age_band"],
                    enforce=(0.5, 0.05), test="exact", key=my_secret)
    rel, info = rwn_sql.query(con, "SELECT sex, COUNT(*) FROM people WHERE diagnosis = 'flu' GROUP BY sex",
                              release="release.duckdb")
    rwn_sql.report("release.duckdb", "report.html")   # HTML: parameters, audit summary, estimates, plots
"""
from importlib import import_module

# The public names load on first use (PEP 562), so that importing the package stays cheap: the
# command line installs its signal handlers before DuckDB, numpy and sqlglot are imported.
_HOMES = {"neighborhoods": "rwn.api", "perturb": "rwn.api", "donors": "rwn.api", "row_counts": "rwn.api",
          "RowCounts": "rwn.api", "forget_keys": "rwn.api", "RWNSpec": "rwn.spec",
          "audit": "rp.api", "estimates": "rp.api", "query": "rp.api", "randomize": "rp.api",
          "release": "rp.api", "report": "rp.release.report", "calibrate_p": "rp.core.calibration",
          "mdav": "evaluation.baselines", "rank_swap": "evaluation.baselines",
          "Evaluation": "evaluation.evaluate", "evaluate": "evaluation.evaluate",
          "key_variable_risk": "evaluation.key_risk",
          "attack_risk": "evaluation.attacks",
          "recommend": "recommendation.rwn",
          "RWNError": "errors", "new_key": "randomness", "install": "macros"}

__all__ = ["install", "neighborhoods", "perturb", "donors", "row_counts", "RowCounts", "randomize",
           "audit", "estimates", "release", "query", "calibrate_p", "evaluate", "Evaluation", "key_variable_risk",
           "attack_risk",
           "rank_swap", "mdav", "RWNSpec", "recommend",
           "RWNError", "new_key", "report", "forget_keys"]
from .version import __version__


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'rwn_sql' has no attribute {name!r}")
    value = getattr(import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
