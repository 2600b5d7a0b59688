"""rwn_sql: statistical disclosure control inside DuckDB.

    import duckdb, rwn_sql
    con = duckdb.connect()
    rwn_sql.install(con)                      # SQL surface: rwn_perturb(...), rwn_neighborhoods(...)
    rel = rwn_sql.perturb(con, "people", ["age", "income"], k=5, eps=0.3, key=my_secret)
    rwn_sql.release(con, "people", "release.duckdb", "diagnosis", p=0.5, public=["sex", "age_band"],
                    enforce=(0.5, 0.05), test="exact", key=my_secret)
    rel, info = rwn_sql.query(con, "SELECT sex, COUNT(*) FROM people WHERE diagnosis = 'flu' GROUP BY sex",
                              release="release.duckdb")
"""
from .api import donors, neighborhoods, perturb
from .rp import audit, estimates, query, randomize, release
from .baselines import mdav, rank_swap
from .errors import RWNError
from .evaluate import Evaluation, evaluate
from .randomness import new_key
from .spec import RWNSpec
from .surface import install

__all__ = ["install", "neighborhoods", "perturb", "donors", "randomize", "audit", "estimates", "release",
           "query", "evaluate", "Evaluation", "rank_swap", "mdav", "RWNSpec", "RWNError", "new_key"]
__version__ = "0.1.0"
