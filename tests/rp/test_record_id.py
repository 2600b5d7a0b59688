"""Record identity by an id column (issue 11, point 2) for the randomization: every keyed
draw and the release order use the id's value, so the release does not depend on the input
order; the id is never released; bad ids are refused."""
import subprocess
import sys

import pytest

import rwn_sql
from rwn_sql import RWNError


@pytest.fixture
def people(con):
    """300 records with an id, two public columns and a sensitive one; `shuffled` is the same
    records in another order."""
    con.execute("""CREATE TABLE people AS SELECT 1000 + i * 7 AS rid, ['F', 'M'][1 + i % 2] AS sex,
                   ['a', 'b', 'c'][1 + (i * 5) % 3] AS region, ['x', 'y', 'z', 'w'][1 + (i * 11) % 4] AS job
                   FROM range(300) r(i)""").fetchall()
    con.execute("CREATE TABLE shuffled AS SELECT * FROM people ORDER BY md5(CAST(rid AS VARCHAR))").fetchall()
    assert con.execute("SELECT list(rid) FROM people").fetchall() != con.execute("SELECT list(rid) FROM shuffled").fetchall()
    return con


@pytest.mark.parametrize("enforce", [None, (0.5, 0.05)])
def test_release_does_not_depend_on_input_order(people, enforce):
    kw = dict(public=["sex", "region"], key="k" * 20, enforce=enforce, id="rid")
    a = rwn_sql.randomize(people, "people", "job", 0.5, **kw).fetchall()
    b = rwn_sql.randomize(people, "shuffled", "job", 0.5, **kw).fetchall()
    assert a == b                                        # row for row: the order is keyed by the id too
    by_position = [rwn_sql.randomize(people, t, "job", 0.5, public=["sex", "region"], key="k" * 20,
                                     enforce=enforce).fetchall() for t in ("people", "shuffled")]
    assert by_position[0] != by_position[1]               # without id= the input position is the identity


def test_id_is_never_released(people):
    rel = rwn_sql.randomize(people, "people", "job", 0.5, key="k" * 20, id="rid")
    assert rel.columns == ["sex", "region", "job"]       # default public: every column but the SA and the id
    with pytest.raises(RWNError, match="cannot be public: it names every record"):
        rwn_sql.randomize(people, "people", "job", 0.5, public=["sex", "rid"], key="k" * 20, id="rid")
    with pytest.raises(RWNError, match="both the record id and the sensitive attribute"):
        rwn_sql.randomize(people, "people", "job", 0.5, key="k" * 20, id="job")


@pytest.mark.parametrize("make,message", [
    ("SELECT * REPLACE (CASE WHEN rid = 1007 THEN 1000 ELSE rid END AS rid) FROM people", "duplicate values"),
    ("SELECT * REPLACE (CASE WHEN rid = 1007 THEN NULL ELSE rid END AS rid) FROM people", "1 NULL values"),
    ("SELECT * REPLACE (rid / 2 AS rid) FROM people", "has type DOUBLE"),
])
def test_bad_ids_are_refused(people, make, message):
    people.execute(f"CREATE TABLE bad AS {make}").fetchall()
    with pytest.raises(RWNError, match=message):
        rwn_sql.randomize(people, "bad", "job", 0.5, key="k" * 20, id="rid")
    with pytest.raises(RWNError, match="id: column .nope. is not in table"):
        rwn_sql.randomize(people, "people", "job", 0.5, key="k" * 20, id="nope")


def test_macro_and_cli_take_the_id(people, tmp_path):
    rwn_sql.install(people)
    macro = people.execute("SELECT * FROM rwn_randomize('shuffled', 'job', 0.5, public := ['sex', 'region'], "
                           "seed := 4, id := 'rid')").fetchall()
    assert macro == rwn_sql.randomize(people, "people", "job", 0.5, public=["sex", "region"], seed=4,
                                      id="rid").fetchall()
    outputs = []
    for table in ("people", "shuffled"):
        src, out = tmp_path / f"{table}.csv", tmp_path / f"{table}_released.csv"
        people.execute(f"COPY {table} TO '{src}'").fetchall()
        run = subprocess.run([sys.executable, "-m", "rwn_sql", "randomize", str(src), str(out), "--sensitive", "job",
                              "--p", "0.5", "--public", "sex,region", "--seed", "4", "--id", "rid"],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1] and outputs[0].splitlines()[0] == "sex,region,job"


@pytest.fixture
def points(con):
    """400 records on a coarse lattice (many exact distance ties) with an id, and the same
    records shuffled."""
    con.execute("""CREATE TABLE points AS SELECT 'r' || (i * 37 % 1009) AS rid, (i % 7) * 1.0 AS x,
                   (i // 7 % 5) * 2 AS y, i % 3 AS g FROM range(400) r(i)""").fetchall()
    con.execute("CREATE TABLE points_shuffled AS SELECT * FROM points ORDER BY md5(rid)").fetchall()
    return con


@pytest.mark.parametrize("eps", [0.0, 0.3])
def test_perturb_release_does_not_depend_on_input_order(points, eps):
    """With id=, the same key gives the same release row for row from any input order, ties in
    distance included (they are broken by the id's rank); without it, by position, it differs."""
    kw = dict(k=3, eps=eps, key="k" * 20, id="rid")
    a = rwn_sql.perturb(points, "points", ["x", "y"], **kw).fetchall()
    b = rwn_sql.perturb(points, "points_shuffled", ["x", "y"], **kw).fetchall()
    assert a == b and [r[0] for r in a] != sorted(r[0] for r in a)
    plain = [rwn_sql.perturb(points, t, ["x", "y"], k=3, eps=eps, key="k" * 20).fetchall()
             for t in ("points", "points_shuffled")]
    assert plain[0] != plain[1]
    assert rwn_sql.perturb(points, "points", ["x", "y"], **kw).columns == ["rid", "x", "y", "g"]


def test_perturb_refuses_bad_ids(points):
    points.execute("CREATE TABLE dup AS SELECT * REPLACE (CASE WHEN rid = 'r37' THEN 'r0' ELSE rid END AS rid) "
                   "FROM points").fetchall()
    with pytest.raises(RWNError, match='the id column "rid" has duplicate values'):
        rwn_sql.perturb(points, "dup", ["x", "y"], k=3, key="k" * 20, id="rid", into="out")
    with pytest.raises(RWNError, match="cannot be perturbed or a stratum"):
        rwn_sql.perturb(points, "points", ["x", "rid"], k=3, key="k" * 20, id="rid", categorical=["rid"])
    with pytest.raises(RWNError, match=r"id column 'x' has type DECIMAL\(21,1\); a record id must be an integer"):
        rwn_sql.perturb(points, "points", ["y"], k=3, key="k" * 20, id="x")


def test_perturb_cli_takes_the_id(points, tmp_path):
    outputs = []
    for table in ("points", "points_shuffled"):
        src, out = tmp_path / f"{table}.csv", tmp_path / f"{table}_released.csv"
        points.execute(f"COPY {table} TO '{src}'").fetchall()
        run = subprocess.run([sys.executable, "-m", "rwn_sql", "perturb", str(src), str(out), "--columns", "x,y",
                              "--k", "3", "--seed", "2", "--id", "rid"], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1] and outputs[0].splitlines()[0] == "rid,x,y,g"


def test_perturb_macro_takes_the_id(points):
    rwn_sql.install(points)
    macro = points.execute("SELECT * FROM rwn_perturb('points_shuffled', ['x', 'y'], k := 3, seed := 5, "
                           "id := 'rid')").fetchall()
    assert macro == rwn_sql.perturb(points, "points", ["x", "y"], k=3, seed=5, id="rid").fetchall()
