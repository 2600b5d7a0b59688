"""Issue 8 R4: the generated SQL's internal names cannot collide with input columns.

Every identifier the generated SQL of a method uses (columns, aliases, CTEs, table aliases,
function names: every identifier token, extracted with sqlglot's tokenizer, which also reads
DuckDB syntax the parser lacks) is added to the input as an extra column; the release must be
the same as without it, or the name is refused for its reserved '__rwn_' prefix."""
import duckdb
import pytest
import sqlglot
from sqlglot.tokens import TokenType

import rwn_sql
from rwn_sql import RWNError
from rwn_sql.evaluation import baselines, rank_swapping
from rwn_sql.rp import api as rp

KEY = "collision-key-0123456789abcdef"
BASE = ("SELECT i AS id, ['F', 'M'][1 + i % 2] AS sex, ['a', 'b', 'c'][1 + i % 3] AS race, "
        "['x', 'y', 'z', 'w'][1 + (i * 7) % 4] AS occ, CAST((i * 37) % 101 AS DOUBLE) AS u, "
        "CAST((i * 53) % 89 AS DOUBLE) AS v FROM range(48) r(i)")
COLUMNS = ["id", "sex", "race", "occ", "u", "v"]


def _release(con, method, table):
    """The release of `method` over `table`, as rows of the base columns only."""
    cols = ", ".join(f'"{c}"' for c in COLUMNS)
    if method == "perturb":
        rel = rwn_sql.perturb(con, table, ["u", "v"], k=3, key=KEY)
    elif method == "randomize":
        rel = rp.randomize(con, table, "occ", 0.5, public=["sex", "race"], key=KEY)
        cols = "occ, sex, race"
    elif method == "randomize_enforced":
        rel = rp.randomize(con, table, "occ", 0.5, public=["sex", "race"], key=KEY, enforce=(0.5, 0.05))
        cols = "occ, sex, race"
    elif method == "audit":
        with rp.audit(con, table, "occ", 0.5, 0.5, 0.05, public=["sex", "race"], enforce=True) as a:
            return a.rows.fetchall()
    elif method == "estimates":
        rel = rp.estimates(con, table, "occ", 0.5, ["w", "x", "y", "z"], group_by=["sex"],
                           public=["sex", "race"], enforce=(0.5, 0.05))
        return rel.fetchall()
    elif method == "rank_swap":
        rel = baselines.rank_swap(con, table, ["u", "v"], 20.0, key=KEY)
    else:
        rel = baselines.mdav(con, table, ["u", "v"], k=3)
    con.execute("CREATE OR REPLACE TEMP TABLE __out AS SELECT * FROM rel").fetchall()
    return con.execute(f"SELECT {cols} FROM __out").fetchall()


def _sql(con, method, monkeypatch):
    """The statement of a method, plus, for the baselines, the planning queries they run."""
    if method in ("rank_swap", "mdav"):
        seen = []
        fetch = baselines.fetch
        for module in (baselines, rank_swapping):      # each calls the fetch it imported
            monkeypatch.setattr(module, "fetch", lambda c, text: (seen.append(text), fetch(c, text))[1])
        statement = (baselines.rank_swap_statement(con, "t", ["u", "v"], 20.0, key=KEY) if method == "rank_swap"
                     else baselines.mdav_statement(con, "t", ["u", "v"], k=3))
        monkeypatch.undo()
        return "\n".join(seen + [statement])
    if method == "perturb":
        return rwn_sql.perturb(con, "t", ["u", "v"], k=3, sql=True)
    if method == "randomize":
        return rp.randomize(con, "t", "occ", 0.5, public=["sex", "race"], sql=True)
    if method == "randomize_enforced":
        return rp.randomize(con, "t", "occ", 0.5, public=["sex", "race"], enforce=(0.5, 0.05), sql=True)
    if method == "audit":
        return rp.audit(con, "t", "occ", 0.5, 0.5, 0.05, public=["sex", "race"], enforce=True, sql=True)
    if method == "estimates":
        return rp.estimates(con, "t", "occ", 0.5, ["w", "x", "y", "z"], group_by=["sex"],
                            public=["sex", "race"], enforce=(0.5, 0.05), sql=True)
    raise AssertionError(method)


def identifiers(sql: str) -> set[str]:
    tokens = sqlglot.Dialect.get_or_raise("duckdb").tokenize(sql)
    return {t.text for t in tokens if t.token_type in (TokenType.VAR, TokenType.IDENTIFIER)}


METHODS = ["perturb", "randomize", "randomize_enforced", "audit", "estimates", "rank_swap", "mdav"]


@pytest.mark.parametrize("method", METHODS)
def test_every_internal_name_as_an_input_column(method, monkeypatch):
    con = duckdb.connect()
    con.execute(f"CREATE TABLE t AS {BASE}").fetchall()
    expected = _release(con, method, "t")
    names = identifiers(_sql(con, method, monkeypatch))
    names = sorted(n for n in names if n.lower() not in {c.lower() for c in COLUMNS + ["t", "__out", "rel"]})
    assert len(names) > 10
    for name in names:
        quoted = '"' + name.replace('"', '""') + '"'
        # a per-row value, so an extra column that leaked into grouping or hashing would show
        con.execute(f"CREATE OR REPLACE TABLE t2 AS SELECT *, CAST(id % 5 AS INTEGER) AS {quoted} "
                    f"FROM t").fetchall()
        if name.lower().startswith("__rwn_"):
            with pytest.raises(RWNError, match="reserved"):
                _release(con, method, "t2")
            continue
        assert _release(con, method, "t2") == expected, f"{method}: input column {name!r} changed the release"


def test_r4_reproducers(con):
    con.execute(f"CREATE TABLE t AS {BASE}").fetchall()
    with pytest.raises(RWNError, match="'__rwn_h'.*reserved"):
        rp.randomize(con, "SELECT *, 1 AS __rwn_h FROM t", "occ", 0.5, public=["sex", "race"], key=KEY)
    with pytest.raises(RWNError, match="reserved"):
        rp.randomize(con, "SELECT *, 1 AS __RWN_X FROM t", "occ", 0.5, public=["sex", "race"], key=KEY)
    base = rp.randomize(con, "t", "occ", 0.5, public=["sex", "race"], key=KEY, enforce=(0.5, 0.05)).fetchall()
    for name in ("gid", "pos", "gsize", "trials", "g", "tr", "staged", "units", "draws"):
        rel = rp.randomize(con, f"SELECT *, id % 3 AS {name} FROM t", "occ", 0.5, public=["sex", "race"],
                           key=KEY, enforce=(0.5, 0.05))
        assert rel.fetchall() == base, name


@pytest.mark.parametrize("table", ["points", "stats", "params", "settings", "scaled", "staged", "src", "hood",
                                   "draws", "picks", "lookup"])
def test_tables_named_like_internal_steps(con, table):
    """A source table named like a step of the generated SQL (a WITH item) is still the table:
    DuckDB 1.4 let such a WITH item shadow an unqualified table name."""
    con.execute(f'CREATE TABLE "{table}" AS SELECT i * 1.0 AS x, (i % 5) * 1.0 AS y FROM range(40) r(i)').fetchall()
    out = rwn_sql.perturb(con, table, ["x", "y"], k=3, seed=1).fetchall()
    assert len(out) == 40 and sorted(r[0] for r in out) != list(range(40))
