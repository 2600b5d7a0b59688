"""rwn_sql: statistical disclosure control inside DuckDB.

    import duckdb, rwn_sql
    con = duckdb.connect()
    rwn_sql.install(con)                      # SQL surface: rwn_perturb(...), rwn_neighborhoods(...)
    rel = rwn_sql.perturb(con, "people", ["age", "income"], k=5, eps=0.3, key=my_secret)
"""
from .api import donors, neighborhoods, perturb
from .errors import RWNError
from .randomness import new_key
from .spec import RWNSpec
from .surface import install

__all__ = ["install", "neighborhoods", "perturb", "donors", "RWNSpec", "RWNError", "new_key"]
__version__ = "0.1.0"
