"""Apache Spark (issue 11, first step): the keyed hash is portable. Spark SQL computes, through
rwn_sql.engines.dialects.SparkDialect, the same 52-bit draws and 62-bit order keys as DuckDB (whose
draws equal the Python mirror in rwn_sql.randomness, tests/rwn/test_perturb.py and
tests/rp/test_order_attack.py). Skipped with the reason when pyspark or Java is missing."""
import pytest

from helpers.data import skip_without_spark
from rwn_sql.engines.dialects import SPARK
from rwn_sql.identifiers import quote_literal
from rwn_sql.randomness import bits_sql, hash_sql, keyed_bits, keyed_hash, order_key_sql
from rwn_sql.rp.release.release_db import ROWS_SCHEMA

skip_without_spark()
pytestmark = pytest.mark.spark     # every test here runs Spark, some through the CLI: the heavy tier, one xdist worker


@pytest.mark.parametrize("record_type", ["BIGINT", "STRING"])
def test_keyed_draws_equal_the_python_mirror(spark, record_type):
    key, purpose, column = "a secret key of the steward", "rwn.perturb", "age"
    h = hash_sql(quote_literal(key), purpose, "rid", column, SPARK)
    rows = spark.sql(f"SELECT rid, {bits_sql(h, 0, SPARK)} AS u0, {bits_sql(h, 1, SPARK)} AS u1, "
                     f"{order_key_sql(quote_literal(key), 'rp.order', 'rid', SPARK)} AS o "
                     f"FROM (SELECT CAST(id AS {record_type}) AS rid FROM range(1, 2001))").collect()
    assert len(rows) == 2000
    for r in rows:
        record = r["rid"]
        assert (r["u0"], r["u1"]) == keyed_bits(key, purpose, record, column), record
        assert r["o"] == keyed_hash(key, "rp.order", record, "") & ((1 << 62) - 1), record


def test_randomize_on_spark_equals_duckdb(spark, tmp_path):
    """The same data, parameters, id and key give the same release on Spark as on DuckDB, row
    for row (the order is keyed by the id too); the id is not released. Values with quotes and
    backslashes survive both engines' quoting."""
    import duckdb

    import rwn_sql
    from helpers.data import ROOT
    data = tmp_path / "people.parquet"
    con = duckdb.connect()
    con.execute(f"""COPY (SELECT 7 * row_number() OVER () + 3 AS rid, sex, race,
                         CASE WHEN occupation = 'Sales' THEN 'it''s \\ sales' ELSE occupation END AS occupation
                         FROM read_csv('{ROOT / "examples" / "data" / "adult.csv"}') LIMIT 3000)
                    TO '{data}' (FORMAT parquet)""").fetchall()
    kw = dict(public=["sex", "race"], key="k" * 24, id="rid")
    on_duckdb = rwn_sql.randomize(con, str(data), "occupation", 0.6, **kw).fetchall()
    frame = rwn_sql.randomize(spark, str(data), "occupation", 0.6, **kw)
    assert frame.columns == ["sex", "race", "occupation"]
    on_spark = [tuple(r) for r in frame.collect()]
    assert on_spark == on_duckdb and len(on_spark) == 3000
    assert any(r[2] == "it's \\ sales" for r in on_spark)
    changed = sum(a[2] != b for a, b in zip(on_spark, con.execute(
        f"SELECT occupation FROM '{data}'").fetchall()))
    assert changed > 0
    with pytest.raises(rwn_sql.RWNError, match=r"id= \(--id\) is required"):
        rwn_sql.randomize(spark, str(data), "occupation", 0.6, public=["sex"], key="k" * 24)
    # with enforcement: the blocks (keyed order within each personal group) are the same too
    enforced = dict(kw, enforce=(0.5, 0.1))
    on_duckdb = rwn_sql.randomize(con, str(data), "occupation", 0.45, **enforced).fetchall()
    on_spark = [tuple(r) for r in rwn_sql.randomize(spark, str(data), "occupation", 0.45, **enforced).collect()]
    assert on_spark == on_duckdb and len(on_spark) == 3000


@pytest.fixture(scope="module")
def people(tmp_path_factory):
    """3,000 adult records with an id, and a DuckDB release of them (p = 0.45, key fixed)."""
    import duckdb

    import rwn_sql
    from helpers.data import ROOT
    folder = tmp_path_factory.mktemp("people")
    data, release = folder / "people.parquet", folder / "release.parquet"
    con = duckdb.connect()
    con.execute(f"""COPY (SELECT 7 * row_number() OVER () + 3 AS rid, sex, race, occupation
                         FROM read_csv('{ROOT / "examples" / "data" / "adult.csv"}') LIMIT 3000)
                    TO '{data}' (FORMAT parquet)""").fetchall()
    rwn_sql.randomize(con, str(data), "occupation", 0.45, public=["sex", "race"], key="k" * 24, id="rid",
                      into="released")
    con.execute(f"COPY released TO '{release}' (FORMAT parquet)").fetchall()
    domain = sorted(r[0] for r in con.execute(f"SELECT DISTINCT occupation FROM '{data}'").fetchall())
    return con, data, release, domain


def _same_rows(a, b, rel=1e-12):
    """Rows equal, floats to within `rel` relative error: exp/ln may differ in the last bit
    between the engines' math libraries (the Chernoff bounds); everything else is exact."""
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert len(x) == len(y)
        for u, v in zip(x, y):
            if isinstance(u, float) and isinstance(v, float):
                assert u == pytest.approx(v, rel=rel, abs=1e-300), (x, y)
            else:
                assert u == v, (x, y)


@pytest.mark.parametrize("enforce", [False, True])
def test_audit_on_spark_equals_duckdb(spark, people, enforce):
    """The audit's rows, per-group verdicts and summary are the same on both engines, before
    and after enforcement (the exact tails come from the same rwn_sql.rp.core.privacy functions:
    a UDF on DuckDB, a small table of the distinct cases on Spark)."""
    import rwn_sql
    con, data, _, _ = people
    args = (str(data), "occupation", 0.45, 0.5, 0.1)
    with rwn_sql.audit(con, *args, public=["sex", "race"], enforce=enforce) as a, \
            rwn_sql.audit(spark, *args, public=["sex", "race"], enforce=enforce) as b:
        assert a.summary() == b.summary()
        assert (a.failing_groups > 0) != enforce
        _same_rows(a.rows.fetchall(), [tuple(r) for r in b.rows.collect()])
        _same_rows(a.groups_detail.fetchall(), [tuple(r) for r in b.groups_detail.collect()])
        assert [d["value"] for d in a.worst_failing()] == [d["value"] for d in b.worst_failing()]


def test_audit_on_spark_counts_the_data_once(spark, people, monkeypatch):
    """Spark's audit runs two statements over the data (the cases whose exact tails it needs,
    then the rows): the per-(group, value) counts are staged once and both read them, so one
    audit statement scans the source; the staged counts are dropped, the rows' tables on close."""
    import rwn_sql
    from rwn_sql.engines import spark as spark_engine
    con, data, _, domain = people
    executed = []
    for method in ("rows", "stage"):
        def record(self, sql, _original=getattr(spark_engine.SparkBackend, method)):
            executed.append((sql, self.relation(sql)._jdf.queryExecution().optimizedPlan().toString()))
            return _original(self, sql)
        monkeypatch.setattr(spark_engine.SparkBackend, method, record)

    def staged():
        return {t.name for t in spark.catalog.listTables() if t.name.startswith("__rwn_stage_")}
    with rwn_sql.audit(spark, str(data), "occupation", 0.45, 0.5, 0.1, public=["sex", "race"],
                       domain=domain) as result:
        assert result.groups > 1 and staged() == set(result._tables)
    audit_reads = [sql for sql, plan in executed if "value_count" in sql and "parquet" in plan]
    assert len(audit_reads) == 1, audit_reads
    assert len([sql for sql, _ in executed if "value_count" in sql]) >= 3    # counts, cases, rows
    assert not staged()


@pytest.mark.parametrize("options", [dict(group_by=["sex"]),
                                     dict(group_by=["race"], values=["Sales", "Tech-support"],
                                          where="sex = 'Female' AND race LIKE '%a%'"),
                                     dict(public=["sex", "race"], enforce=(0.5, 0.1))])
def test_estimates_on_spark_equal_duckdb(spark, people, options):
    """Estimates, standard errors and intervals of a release are the same on both engines."""
    import rwn_sql
    con, _, release, domain = people
    options = dict(dict(enforce=None), **options)   # the fixture's COPY of the table records no design
    a = rwn_sql.estimates(con, str(release), "occupation", 0.45, domain, **options).fetchall()
    b = [tuple(r) for r in rwn_sql.estimates(spark, str(release), "occupation", 0.45, domain, **options).collect()]
    assert a
    _same_rows(a, b, rel=1e-13)


def test_cli_randomize_on_both_engines(spark, tmp_path):
    """rwn-sql randomize IN.parquet OUT.parquet --id rid --engine spark writes the same rows as
    --engine duckdb (compared as multisets), without the rid column, here with --enforce (the
    same command path as without; the API tests cover both), and `rwn-sql audit --engine spark`
    gives the same report and exit code as on DuckDB. Both outputs record the same design
    (p, domain, enforcement, blocks) in their Parquet key-value metadata (every part of Spark's
    folder, whose type names are Spark's), which estimates read on either engine, DuckDB also
    over Spark's folder and one part of it: without design arguments they equal the
    estimates given the design (before, both outputs recorded none and estimates refused).
    (Each Spark command starts a JVM: one case keeps the suite fast.)"""
    enforce = ["--enforce", "0.5,0.1"]
    import dataclasses
    import subprocess
    import sys

    import duckdb

    import rwn_sql
    from rwn_sql.rp.release.design_record import parquet_record
    data = tmp_path / "in.parquet"
    duckdb.execute(f"""COPY (SELECT 1000 + i AS rid, ['F', 'M'][1 + i % 2] AS sex, ['a', 'b', 'c', 'd'][1 + (i * 7) % 4]
                     AS job FROM range(500) r(i)) TO '{data}' (FORMAT parquet)""").fetchall()
    outs, audits = {}, {}
    for engine in ("duckdb", "spark"):
        out = tmp_path / f"{engine}.parquet"
        run = subprocess.run([sys.executable, "-m", "rwn_sql", "randomize", str(data), str(out), "--sensitive", "job",
                              "--p", "0.5", "--public", "sex", "--seed", "7", "--id", "rid", "--engine", engine]
                             + enforce, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-2000:]
        audit = subprocess.run([sys.executable, "-m", "rwn_sql", "audit", str(data), "--sensitive", "job", "--p", "0.5",
                                "--public", "sex", "--epsilon", "0.5", "--delta", "0.1", "--engine", engine]
                               + (["--after-enforcement"] if enforce else []), capture_output=True, text=True)
        audits[engine] = (audit.returncode, audit.stdout)
        assert audit.returncode in (0, 1), audit.stderr[-2000:]
        pattern = f"{out}/*.parquet" if out.is_dir() else str(out)
        outs[engine] = duckdb.execute(f"SELECT * FROM read_parquet('{pattern}')").fetchall()
        names = [d[0] for d in duckdb.execute(f"SELECT * FROM read_parquet('{pattern}') LIMIT 0").description]
        assert names == ["sex", "job"]
    assert sorted(outs["duckdb"]) == sorted(outs["spark"]) and len(outs["spark"]) == 500
    assert audits["duckdb"] == audits["spark"]
    designs = {engine: parquet_record(duckdb.connect(), str(tmp_path / f"{engine}.parquet"))
               for engine in ("duckdb", "spark")}
    assert designs["duckdb"] is not None and designs["duckdb"].enforce == (0.5, 0.1)
    assert dict(designs["duckdb"].blocks) == {250: 4}       # two personal groups (sex) of 250 records
    assert designs["spark"].sensitive_type == "string"          # each engine records its own type name
    assert dataclasses.replace(designs["spark"], sensitive_type="VARCHAR") == designs["duckdb"]
    given = dict(p=0.5, domain=["a", "b", "c", "d"], public=["sex"], enforce=(0.5, 0.1), test="exact")
    on_duckdb = rwn_sql.estimates(duckdb.connect(), str(tmp_path / "duckdb.parquet"), "job", group_by=["sex"])
    assert on_duckdb.fetchall() == rwn_sql.estimates(duckdb.connect(), str(tmp_path / "duckdb.parquet"), "job",
                                                     group_by=["sex"], **given).fetchall()
    on_spark = rwn_sql.estimates(spark, str(tmp_path / "spark.parquet"), "job", group_by=["sex"]).collect()
    assert on_spark == rwn_sql.estimates(spark, str(tmp_path / "spark.parquet"), "job", group_by=["sex"],
                                         **given).collect()
    # DuckDB reads Spark's folder, and one part of it, by its recorded design (string is VARCHAR)
    part = sorted((tmp_path / "spark.parquet").glob("*.parquet"))[0]
    for path in (tmp_path / "spark.parquet", part):
        recorded = rwn_sql.estimates(duckdb.connect(), str(path), "job", group_by=["sex"]).fetchall()
        assert recorded == rwn_sql.estimates(duckdb.connect(), str(path), "job", group_by=["sex"], **given).fetchall()
    assert len(recorded) == 8
    # rwn-sql release --engine spark: a release folder whose table holds the DuckDB release's rows
    released = {}
    for engine, out in (("duckdb", tmp_path / "rel.duckdb"), ("spark", tmp_path / "rel")):
        run = subprocess.run([sys.executable, "-m", "rwn_sql", "release", str(data), str(out), "--sensitive", "job",
                              "--p", "0.5", "--public", "sex", "--seed", "7", "--id", "rid", "--table", "people",
                              "--engine", engine] + enforce, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-2000:]
        released[engine] = duckdb.execute(
            f"SELECT * FROM read_parquet('{out}/people_randomized.parquet/*.parquet')" if engine == "spark" else
            f"ATTACH '{out}' AS r (READ_ONLY); SELECT * FROM r.{ROWS_SCHEMA}.people_randomized").fetchall()
    assert sorted(released["duckdb"]) == sorted(released["spark"]) == sorted(outs["spark"])
    # rwn-sql query --engine spark over the folder prints what rwn-sql query prints over the database
    query = "SELECT sex, COUNT(*) FROM people WHERE job IN ('a', 'b') GROUP BY sex"
    answers = [subprocess.run([sys.executable, "-m", "rwn_sql", "query", str(release), query] + extra,
                              capture_output=True, text=True)
               for release, extra in ((tmp_path / "rel.duckdb", []), (tmp_path / "rel", ["--engine", "spark"]))]
    assert [a.returncode for a in answers] == [0, 0], answers[1].stderr[-2000:]
    assert answers[0].stdout == answers[1].stdout and "estimate" in answers[0].stdout
    assert audits["spark"][0] == (0 if enforce else 1), audits["spark"][1]


def test_sum_and_avg_queries_on_spark_equal_duckdb(spark, tmp_path):
    """SUM(x) and AVG(x) of a public numeric column over an enforced release folder on Spark
    (the block-aware errors read the trials table): the same rows as over the DuckDB release
    database of the same data, key and id (sums of doubles may differ in the last bits)."""
    import duckdb

    import rwn_sql
    from helpers.datasets import SHOP_DOMAIN as DOMAIN, SHOP_PUBLIC as PUBLIC, shop_data
    data = tmp_path / "shop.parquet"
    con = duckdb.connect()
    shop = shop_data()   # noqa: F841 (read by DuckDB's replacement scan)
    con.execute(f"COPY (SELECT * FROM shop) TO '{data}' (FORMAT parquet)").fetchall()
    kw = dict(public=PUBLIC, domain=list(DOMAIN), key="k" * 24, id="rid", enforce=(0.5, 0.1), table="shop")
    rwn_sql.release(spark, str(data), str(tmp_path / "rel"), "s", 0.5, **kw)
    rwn_sql.release(con, str(data), str(tmp_path / "rel.duckdb"), "s", 0.5, **kw)
    for sql in ["SELECT g, SUM(x) FROM shop WHERE s IN ('u', 'w') AND x > 2 GROUP BY g",
                "SELECT s, AVG(spend) AS a FROM shop WHERE g LIKE 'a%' OR g = 'c' GROUP BY s ORDER BY a DESC",
                "SELECT g, AVG(spend) FROM shop GROUP BY g"]:
        a, note_a = rwn_sql.query(con, sql, release=str(tmp_path / "rel.duckdb"))
        b, note_b = rwn_sql.query(spark, sql, release=str(tmp_path / "rel"))
        rows_a, rows_b = a.fetchall(), [tuple(r) for r in b.collect()]
        assert len(rows_a) == len(rows_b) > 0, sql
        for x, y in zip(rows_a, rows_b):
            assert list(y) == [pytest.approx(v, rel=1e-9) if isinstance(v, float) else v for v in x], sql
        assert (note_a.note, note_a.micro, note_a.exact) == (note_b.note, note_b.micro, note_b.exact)
    with pytest.raises(rwn_sql.RWNError, match="not a number"):
        rwn_sql.query(spark, "SELECT SUM(g) FROM shop WHERE s = 'u'", release=str(tmp_path / "rel"))


def test_builtins_the_plans_need_exist(spark):
    """The functions tests/engines/test_portability.py lets through exist in this Spark."""
    from helpers.spark_builtins import SPARK_BUILTINS_SQLGLOT_LACKS, SPARK_RWN_BUILTINS, SPARK_TABLE_FUNCTIONS
    assert all(spark.catalog.functionExists(name) for name in SPARK_BUILTINS_SQLGLOT_LACKS | SPARK_RWN_BUILTINS)
    for name in SPARK_TABLE_FUNCTIONS:
        assert spark.sql(f"SELECT count(*) FROM {name}(-1, 2)").collect()[0][0] == 3


@pytest.mark.parametrize("enforce", [None, (0.5, 0.1)])
def test_release_folder_and_queries_on_spark_equal_duckdb(spark, people, tmp_path, enforce):
    """rwn_sql.release on Spark writes a release folder (the table as Parquet parts, the
    metadata and trials as Parquet files) holding the same rows as the DuckDB release
    database; rwn_sql.query over it answers every query form exactly as on DuckDB, with the
    same note (micro-reconstruction warnings included)."""
    import duckdb

    import rwn_sql
    con, data, _, _ = people
    kw = dict(public=["sex", "race"], key="k" * 24, id="rid", enforce=enforce, table="people")
    rwn_sql.release(spark, str(data), str(tmp_path / "rel"), "occupation", 0.45, **kw)
    rwn_sql.release(con, str(data), str(tmp_path / "rel.duckdb"), "occupation", 0.45, **kw)
    assert sorted(p.name for p in (tmp_path / "rel").iterdir()) == sorted(
        ["people_randomized.parquet", "rwn_release_metadata.parquet"]
        + (["rwn_release_trials.parquet"] if enforce else []))
    check = duckdb.connect()
    released = check.execute(f"SELECT * FROM read_parquet('{tmp_path}/rel/people_randomized.parquet/*.parquet')"
                             ).fetchall()
    check.execute(f"ATTACH '{tmp_path / 'rel.duckdb'}' AS r (READ_ONLY)").fetchall()
    assert sorted(released) == sorted(check.execute(f"SELECT * FROM r.{ROWS_SCHEMA}.people_randomized").fetchall())
    assert len(released) == 3000
    for sql in ["SELECT sex, COUNT(*) FROM people WHERE occupation = 'Sales' AND race IN ('Black', 'Other') "
                "GROUP BY sex",
                "SELECT occupation, COUNT(*) AS n FROM people WHERE sex = 'Female' GROUP BY occupation "
                "ORDER BY n DESC LIMIT 3",
                "SELECT race, COUNT(*) FROM people WHERE race NOT LIKE 'W%' GROUP BY race",
                "SELECT sex, race, COUNT(*) FROM people WHERE occupation IN ('Sales', 'Tech-support') "
                "GROUP BY sex, race HAVING COUNT(*) > 10"]:
        a, note_a = rwn_sql.query(con, sql, release=str(tmp_path / "rel.duckdb"))
        b, note_b = rwn_sql.query(spark, sql, release=str(tmp_path / "rel"))
        assert a.fetchall() == [tuple(r) for r in b.collect()], sql
        assert (note_a.note, note_a.micro, note_a.exact) == (note_b.note, note_b.micro, note_b.exact)
    with pytest.raises(rwn_sql.RWNError, match="release folder"):
        rwn_sql.query(spark, "SELECT COUNT(*) FROM people", release=str(tmp_path / "rel.duckdb"))


def test_release_with_rwn_step_on_spark_equals_duckdb(spark, tmp_path):
    """release(rwn=...) perturbs the named public columns by RWN first, keyed by the id, then
    randomizes: the same released rows on both engines, and the RWN step did change ages."""
    import duckdb

    import rwn_sql
    from helpers.data import ROOT
    data = tmp_path / "adult.parquet"
    con = duckdb.connect()
    con.execute(f"""COPY (SELECT 11 * row_number() OVER () + 5 AS rid, age, hours_per_week, sex, occupation
                         FROM read_csv('{ROOT / "examples" / "data" / "adult.csv"}') LIMIT 600)
                    TO '{data}' (FORMAT parquet)""").fetchall()
    # l_diversity=1: the subject is the engines' agreement, and (sex, age, hours) groups are small
    kw = dict(public=["sex", "age", "hours_per_week"], key="r" * 24, id="rid", table="adult", l_diversity=1,
              rwn=dict(columns=["age", "hours_per_week"], k=3, eps=0.02, q=0.8))
    rwn_sql.release(spark, str(data), str(tmp_path / "rel"), "occupation", 0.5, **kw)
    rwn_sql.release(con, str(data), str(tmp_path / "rel.duckdb"), "occupation", 0.5, **kw)
    check = duckdb.connect()
    on_spark = check.execute(f"SELECT * FROM read_parquet('{tmp_path}/rel/adult_randomized.parquet/*.parquet')"
                             ).fetchall()
    check.execute(f"ATTACH '{tmp_path / 'rel.duckdb'}' AS r (READ_ONLY)").fetchall()
    assert sorted(on_spark) == sorted(check.execute(f"SELECT * FROM r.{ROWS_SCHEMA}.adult_randomized").fetchall())
    # rows are (sex, age, hours_per_week, occupation): the RWN step drew new (age, hours) pairs
    original = con.execute(f"SELECT sex, age, hours_per_week, occupation FROM '{data}'").fetchall()
    assert len(on_spark) == 600
    assert sorted(r[1:3] for r in on_spark) != sorted(r[1:3] for r in original)


def test_spark_plans_hold_no_key_and_key_views_do_not_pile_up(spark, tmp_path):
    """Issue 22 F2 on Spark: no explain mode (simple, extended, codegen, cost, formatted), before
    or after the DataFrame runs, shows the key or a subkey md5(key|purpose|column) (computed
    here); the key views do not pile up (one per distinct key for DataFrames, before: one per
    call), an eager call (perturb into=, release) leaves none of its own, and
    rwn_sql.forget_keys(spark) removes them all."""
    import contextlib
    import hashlib
    import io

    import duckdb

    import rwn_sql
    key = "Key-Secret-8f3a9c1d2e4b-spark"
    purposes = ("rp.randomize", "rp.block", "rp.order", "rwn.perturb", "rwn.order")
    forms = [key] + [hashlib.md5(f"{key}|{p}|{c}".encode()).hexdigest()
                     for p in purposes for c in ("", "id", "sex", "race", "occ", "u", "v")]
    data = tmp_path / "d.parquet"
    duckdb.connect().execute(
        "COPY (SELECT i AS id, ['F', 'M'][1 + i % 2] AS sex, ['a', 'b'][1 + i % 2] AS race, "
        "['x', 'y', 'z'][1 + i % 3] AS occ, CAST((i * 37) % 101 AS DOUBLE) AS u, "
        f"CAST((i * 53) % 89 AS DOUBLE) AS v FROM range(60) r(i)) TO '{data}' (FORMAT parquet)").fetchall()

    def key_views():
        return sorted(t.name for t in spark.catalog.listTables() if t.name.startswith("__rwn_key"))

    rwn_sql.forget_keys(spark)
    frames = {"randomize": rwn_sql.randomize(spark, str(data), "occ", 0.5, public=["sex", "race"], key=key, id="id"),
              "enforced": rwn_sql.randomize(spark, str(data), "occ", 0.5, public=["sex", "race"], key=key, id="id",
                                            enforce=(0.5, 0.05)),
              "perturb": rwn_sql.perturb(spark, str(data), ["u", "v"], k=3, key=key, id="id")}
    found = []
    for name, frame in frames.items():
        for when in ("before", "after"):
            if when == "after":
                frame.collect()
            for mode in ("simple", "extended", "codegen", "cost", "formatted"):
                text = io.StringIO()
                with contextlib.redirect_stdout(text):
                    frame.explain(mode=mode)
                found += [f"{name} {when} {mode}" for f in forms if f in text.getvalue()]
    assert not found, f"the key or a subkey shows in {found}"
    assert len(key_views()) == 1
    lasting = key_views()
    rwn_sql.perturb(spark, str(data), ["u", "v"], k=3, key=key, id="id", into=str(tmp_path / "p.parquet"))
    rwn_sql.release(spark, str(data), str(tmp_path / "rel"), "occ", 0.5, public=["sex", "race", "u", "v"], key=key,
                    id="id", rwn=dict(columns=["u", "v"], k=3),
                    l_diversity=1)     # the subject is the key in plans; (u, v) make one-value groups

    rwn_sql.perturb(spark, str(data), ["u", "v"], k=3, key="another-key-0123456789", id="id",
                    into=str(tmp_path / "q.parquet"))
    assert key_views() == lasting
    before = sorted(frames["randomize"].collect())
    rwn_sql.forget_keys(spark)
    assert key_views() == []
    # a DataFrame resolved its key view when it was made: it still runs, with the same rows
    assert sorted(frames["randomize"].collect()) == before
