"""rwn_sql.recommend and rwn-sql recommend (RWN): the setting recommended meets its targets when
re-run with the same key, it is the best utility among the settings meeting them (brute force
over the frontier table), a refusal names the nearest achievable targets, and the printed
command writes a release that meets them."""
import json
import math
import shlex
import sys
import types

import duckdb
import numpy as np
import pytest

import rwn_sql
from helpers.data import BODYFAT
from rwn_sql import RWNError
from rwn_sql.cli.main import main
from rwn_sql.recommendation import rwn as rec_mod
from rwn_sql.evaluation import tune

COLS = ["Age", "Weight", "Height"]
KEY = "recommend-test-key-0123456789"
TARGETS = {"linkage_rate": 0.1, "sdid": 0.9}
GRIDS = dict(k=(3, 10), eps=(0.0, 0.2, 0.3), q=(0.5, 1.0), reps=6)


@pytest.fixture(scope="module")
def recommended():
    con = duckdb.connect()
    rec = rwn_sql.recommend(con, str(BODYFAT), COLS, TARGETS, key=KEY, key_file="secret.key", **GRIDS)
    yield con, rec
    con.close()


def measured(con, source, columns, k, eps, q, key, categorical=(), released=None):
    """The risks of perturb(key=key) at (k, eps, q), evaluated paired by the key."""
    if released is None:
        rwn_sql.perturb(con, source, columns, k=k, eps=eps, q=q, key=key, categorical=categorical,
                        into="rerun", replace=True)
        released = "rerun"
    ev = rwn_sql.evaluate(con, source, released, columns, key=key, categorical=categorical)
    return {name: get(ev) for name, (_, get) in tune.MEASURES.items()}


def meets(values, targets):
    return all(values[n] >= v if rec_mod.TARGETS[n][0] == "min" else values[n] <= v for n, v in targets.items())


def test_the_recommended_setting_rerun_meets_its_targets(recommended):
    """Acceptance: perturb + evaluate with the same key, at the recommended setting, meet the targets."""
    con, rec = recommended
    values = measured(con, str(BODYFAT), COLS, rec.k, rec.eps, rec.q, KEY)
    assert meets(values, TARGETS)
    assert values == pytest.approx(rec.checked, nan_ok=True)        # the release checked is that one
    assert (rec.k, rec.eps, rec.q) in {(k, e, q) for k in GRIDS["k"] for e in GRIDS["eps"] for q in GRIDS["q"]}


def test_best_utility_among_the_settings_meeting_the_targets(recommended):
    _, rec = recommended
    assert len(rec.settings) == 2 * 3 * 2
    for s in rec.settings:       # the rule, recomputed: mean + 2 sd of one release within the target
        expected = all(s.measures[n][0] + 2 * s.measures[n][1] <= v for n, v in TARGETS.items())
        assert s.meets == expected
        for n in TARGETS:
            assert s.bounds[n] == pytest.approx(s.measures[n][0] + 2 * s.measures[n][1])
    meeting = [s for s in rec.settings if s.meets]
    assert meeting and not rec.notes      # the best one's own release met them (else notes say so)
    best = min(meeting, key=lambda s: s.measures["corr_mad"][0])
    assert (rec.k, rec.eps, rec.q) == (best.k, best.eps, best.q)
    assert rec.measures == best.measures


def test_the_frontier_is_the_pareto_frontier(recommended):
    _, rec = recommended
    points = [np.array([s.measures["corr_mad"][0]] + [s.measures[n][0] for n in TARGETS]) for s in rec.settings]
    for i, s in enumerate(rec.settings):
        dominated = any(np.all(p <= points[i]) and np.any(p < points[i]) for j, p in enumerate(points) if j != i)
        assert s.frontier == (not dominated)
    chosen = next(s for s in rec.settings if (s.k, s.eps, s.q) == (rec.k, rec.eps, rec.q))
    assert chosen.frontier and chosen in rec.frontier()


def test_the_sweep_numbers_are_tunes(recommended):
    con, rec = recommended
    result = tune.sweep(con, str(BODYFAT), COLS, [0.0, 0.2, 0.3], k=10, q=0.5, reps=6, key=KEY)
    for s in result.settings:
        row = next(r for r in rec.settings if (r.k, r.eps, r.q) == (10, s.value, 0.5))
        assert row.measures == s.measures


def test_json_shape(recommended):
    _, rec = recommended
    d = json.loads(rec.to_json())
    assert d["method"] == "rwn" and d["setting"] == {"k": rec.k, "eps": rec.eps, "q": rec.q}
    assert d["utility"]["measure"] == "corr_mad" and d["utility"]["higher_is_better"] is False
    assert set(d["targets"]) == set(TARGETS)
    for name, t in d["targets"].items():
        assert t["limit"] == "max" and t["value"] == TARGETS[name] and t["bound"] <= t["value"]
        assert t["release"] == rec.checked[name]
    assert d["rule"] == {"margin": 2.0, "reps": 6, "release_checked": True}
    assert len(d["settings"]) == 12 and {"k", "eps", "q", "meets", "frontier", "measures", "bounds"} <= set(
        d["settings"][0])
    assert d["command"] == rec.command and "--key-file secret.key" in rec.command
    assert KEY not in rec.to_json() and KEY not in rec.summary()
    assert rec.command in rec.summary() and "Pareto frontier" in rec.summary()


def test_refusal_names_the_nearest_achievable_targets():
    con = duckdb.connect()
    with pytest.raises(rec_mod.NoSettingMeetsTargets, match="nearest achievable targets") as info:
        rwn_sql.recommend(con, str(BODYFAT), COLS, {"linkage_rate": 0.001, "sdid": 0.95}, seed=4, k=(3, 5),
                          eps=(0.1, 0.3), q=(1.0,), reps=4)
    err = info.value
    assert isinstance(err, RWNError)
    rows = err.settings
    best = min(rows, key=lambda r: r.bounds["linkage_rate"])          # brute force
    near = err.nearest["linkage_rate"]
    assert near["bound"] == best.bounds["linkage_rate"] and (near["k"], near["eps"], near["q"]) == (
        best.k, best.eps, best.q)
    text = str(err)
    assert f"linkage_rate <= {best.bounds['linkage_rate']:.4g}" in text and best.label() in text
    assert "asked 0.001" in text and "larger k or eps" in text
    assert "sdid" in text        # every target is named, the one that some setting meets too
    con.close()


def test_a_setting_whose_own_release_misses_is_passed_over(monkeypatch):
    """With a key the command's release is checked; one that misses a target sends the
    recommendation to the next best setting, and the notes say so."""
    con = duckdb.connect()
    real = rec_mod.release_measures
    calls = []

    def first_misses(plan, row):
        values = real(plan, row)
        calls.append(row)
        return dict(values, linkage_rate=1.0) if len(calls) == 1 else values
    monkeypatch.setattr(rec_mod, "release_measures", first_misses)
    rec = rwn_sql.recommend(con, str(BODYFAT), COLS, {"linkage_rate": 0.2}, key=KEY, k=(5,), eps=(0.2, 0.3),
                            q=(1.0,), reps=3)
    assert len(calls) == 2 and (rec.k, rec.eps, rec.q) == (calls[1].k, calls[1].eps, calls[1].q)
    assert "the next best setting was taken" in rec.notes[0]
    # nothing is left in the connection: no release table, no key
    assert con.execute("SELECT table_name FROM duckdb_tables()").fetchall() in ([], [("__rwn_keys",)])
    assert con.execute("SELECT count(*) FROM __rwn_keys").fetchall() == [(0,)]
    con.close()


def test_without_a_key_the_command_names_a_key_file_placeholder():
    con = duckdb.connect()
    rec = rwn_sql.recommend(con, str(BODYFAT), COLS, {"dcr_mean": 0.03}, k=(5,), eps=(0.2,), q=(1.0,), reps=2,
                            utility="ks_max", margin=0)
    assert rec.checked is None and rec.command.endswith("--key-file KEY_FILE")
    assert "not checked" in rec.notes[0]
    s = rec.settings[0]
    assert s.bounds["dcr_mean"] == s.measures["dcr_mean"][0] and s.meets       # margin 0: the mean
    con.close()


@pytest.mark.parametrize("targets, message", [
    ({}, "at least one risk target"),
    ({"linkage": 0.1}, "unknown target 'linkage'; known targets: linkage_rate"),
    ({"singling_out": 1.1}, "target singling_out is a share: give a limit in \\[0, 1\\]"),
    ({"linkability": 0.1}, "attack targets need a key"),
    ({"linkage_rate": 1.5}, "give a limit in \\[0, 1\\]"),
    ({"dcr_mean": -0.1}, "limit >= 0"),
    ({"sdid": float("nan")}, "must be finite"),
    ({"sdid": "x"}, "must be a number"),
])
def test_bad_targets_are_refused(targets, message):
    with pytest.raises(RWNError, match=message):
        rwn_sql.recommend(duckdb.connect(), str(BODYFAT), COLS, targets)


@pytest.mark.parametrize("options, message", [
    (dict(k=()), "the k grid is empty"),
    (dict(eps=[]), "the eps grid is empty"),
    (dict(k=(2.5,)), "whole number"),
    (dict(q=(1.5,)), "q must be in \\[0, 1\\]"),
    (dict(k=(0,), eps=(0.0,)), "k = 0 and eps = 0"),
    (dict(reps=1), "reps must be an integer >= 2"),
    (dict(margin=-1), "margin must be >= 0"),
    (dict(utility="ols_r2"), "choose among corr_mad"),
    (dict(utility="ols_ci_overlap"), "needs target="),
    (dict(method="swap"), "method must be one of rwn, rp"),
    (dict(categorical=["Weight", "Height"]), "needs two numeric columns"),
    (dict(key="short"), "at least 16"),
])
def test_bad_input_is_refused_before_any_work(options, message):
    with pytest.raises(RWNError, match=message):
        rwn_sql.recommend(duckdb.connect(), str(BODYFAT), COLS, {"linkage_rate": 0.1}, **options)


def test_method_rp_goes_to_recommend_retention(monkeypatch):
    seen = {}
    fake = types.ModuleType("rwn_sql.recommendation.rp")
    fake.recommend_retention = lambda con, source, *args, **kw: seen.update(args=args, kw=kw) or "p"
    monkeypatch.setitem(sys.modules, "rwn_sql.recommendation.rp", fake)
    assert rwn_sql.recommend(None, "t", "s", 0.5, 0.1, method="rp", public=["a"], rho=(0.2, 0.8)) == "p"
    assert seen == {"args": ("s", 0.5, 0.1), "kw": {"public": ["a"], "rho": (0.2, 0.8)}}


def test_cli_prints_the_command_and_the_command_meets_the_targets(tmp_path, capsys, monkeypatch):
    key = tmp_path / "secret.key"
    key.write_text(KEY + "\n")
    monkeypatch.chdir(tmp_path)
    assert main(["recommend", str(BODYFAT), "--columns", ",".join(COLS), "--k", "3,10", "--eps", "0:0.3:0.1",
                 "--q", "1", "--reps", "4", "--max-linkage", "0.1", "--max-sdid", "0.9", "--key-file",
                 "secret.key", "--output", "out.parquet"]) == 0
    text = capsys.readouterr().out
    command = text.splitlines()[-1].strip()
    assert command.startswith("rwn-sql perturb ") and "--key-file secret.key" in command and KEY not in text
    argv = shlex.split(command)
    assert main(argv[1:]) == 0
    value = lambda option: argv[argv.index(option) + 1]  # noqa: E731
    k, eps, q = int(value("--k")), float(value("--eps")), float(value("--q"))
    assert f"recommended: k = {k}, eps = {eps:g}, q = {q:g}" in text
    con = duckdb.connect()
    values = measured(con, str(BODYFAT), COLS, k, eps, q, KEY, released=str(tmp_path / "out.parquet"))
    assert meets(values, {"linkage_rate": 0.1, "sdid": 0.9})
    con.close()


def test_cli_json_and_refusals(tmp_path, capsys):
    assert main(["recommend", str(BODYFAT), "--columns", ",".join(COLS), "--k", "5", "--eps", "0.2,0.3",
                 "--q", "1", "--reps", "3", "--min-dcr", "0.04", "--seed", "2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["targets"]["dcr_mean"]["limit"] == "min" and d["command"].endswith("--seed 2")
    for argv, message in [
        (["--columns", "Age,Weight", "--seed", "1"], "give at least one risk target"),
        (["--columns", "Age,Weight", "--max-linkage", "0.0001", "--k", "5", "--eps", "0.1", "--q", "1",
          "--reps", "2", "--seed", "1"], "nearest achievable targets"),
        (["--max-linkage", "0.1"], "give --columns"),
        (["--columns", "Age", "--sensitive", "s", "--max-linkage", "0.1"], "--columns is an option of the RWN"),
        (["--columns", "Age", "--epsilon", "0.5", "--max-linkage", "0.1"], "--epsilon is an option of the rec"),
        (["--sensitive", "s", "--epsilon", "0.5"], "--delta is required"),
        (["--columns", "Age", "--k", "", "--max-linkage", "0.1"], "grid '' is empty"),
    ]:
        assert main(["recommend", str(BODYFAT), *argv]) == 2
        assert message in capsys.readouterr().err


def test_cli_rp_passes_its_options(monkeypatch, capsys, tmp_path):
    seen = {}

    class Fake:
        def to_dict(self):
            return {"method": "rp", "p": 0.5}

        def summary(self):
            return "p = 0.5"
    fake = types.ModuleType("rwn_sql.recommendation.rp")
    fake.recommend_retention = lambda con, source, *args, **kw: seen.update(args=args, kw=kw) or Fake()
    monkeypatch.setitem(sys.modules, "rwn_sql.recommendation.rp", fake)
    assert main(["recommend", str(BODYFAT), "--sensitive", "s", "--epsilon", "0.5", "--delta", "0.1",
                 "--public", "a,b", "--p-from", "ldp:1.0"]) == 0
    assert capsys.readouterr().out.strip() == "p = 0.5"
    assert seen == {"args": ("s", 0.5, 0.1), "kw": {"public": ["a", "b"], "domain": None, "l_diversity": None,
                                                     "max_top_share": None, "enforce": False, "ldp": 1.0}}
    assert main(["recommend", str(BODYFAT), "--sensitive", "s", "--epsilon", "0.5", "--delta", "0.1",
                 "--l-diversity", "1", "--key-file", "k.key", "--output", "r.duckdb", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"method": "rp", "p": 0.5}
    assert seen["kw"] == {"public": None, "domain": None, "l_diversity": 1, "max_top_share": None,
                          "enforce": False, "output": "r.duckdb", "key_file": "k.key"}
    assert main(["recommend", str(BODYFAT), "--sensitive", "s", "--epsilon", "0.5", "--delta", "0.1",
                 "--seed", "1"]) == 2
    assert "give --key-file" in capsys.readouterr().err


def test_method_rp_reaches_the_retention_recommendation(tmp_path):
    """The real reconstruction-privacy half, through the one entry point."""
    con = duckdb.connect()
    data = tmp_path / "small.csv"
    con.execute(f"COPY (SELECT ['F', 'M'][1 + i % 2] AS sex, ['a', 'b', 'c'][1 + (i * 7) % 3] AS job "
                f"FROM range(600) r(i)) TO '{data}' (HEADER)").fetchall()
    rec = rwn_sql.recommend(con, str(data), method="rp", sensitive="job", epsilon=0.5, delta=0.1, public=["sex"])
    assert rec.command.startswith("rwn-sql release ") and "--p " in rec.command
    assert rec.to_dict() and rec.summary()
    con.close()


def test_the_help_examples_parse():
    from rwn_sql.cli.parser import COMMAND_TABLE, build_parser
    examples = next(c.examples for c in COMMAND_TABLE if c.name == "recommend")
    for example in examples:
        args = build_parser().parse_args(shlex.split(example)[1:])
        assert args.command == "recommend"


def test_a_new_steward_on_data_the_project_does_not_ship(tmp_path, capsys, monkeypatch):
    """Correlated numbers and a category made up here: the recommended release, written by the
    printed command, has measured risks within the asked targets."""
    rng = np.random.default_rng(7)
    n = 300
    age = rng.normal(45, 12, n).round()
    income = (800 * age + rng.normal(0, 9000, n)).round(2)
    spend = (0.3 * income + rng.normal(0, 2000, n)).round(2)
    region = rng.choice(["north", "south", "east"], n)
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT * FROM (SELECT unnest(?) AS age, unnest(?) AS income, unnest(?) AS spend, "
                "unnest(?) AS region)", [age.tolist(), income.tolist(), spend.tolist(), region.tolist()]).fetchall()
    data = tmp_path / "survey.csv"
    con.execute(f"COPY t TO '{data}' (HEADER)").fetchall()
    (tmp_path / "k.txt").write_text("a-steward's-own-secret-key\n")
    monkeypatch.chdir(tmp_path)
    assert main(["recommend", "survey.csv", "--columns", "age,income,spend,region", "--categorical", "region",
                 "--max-linkage", "0.05", "--max-sdid", "0.7", "--k", "3,5,10", "--eps", "0.1,0.2,0.3",
                 "--q", "0.75,1", "--reps", "5", "--key-file", "k.txt", "--output", "survey_release.parquet"]) == 0
    command = capsys.readouterr().out.splitlines()[-1].strip()
    assert "--categorical region" in command
    assert main(shlex.split(command)[1:]) == 0
    values = measured(con, str(data), ["age", "income", "spend", "region"], None, None, None,
                      "a-steward's-own-secret-key", categorical=["region"],
                      released=str(tmp_path / "survey_release.parquet"))
    assert values["linkage_rate"] <= 0.05 and values["sdid"] <= 0.7 and not math.isnan(values["corr_mad"])
    con.close()


# ----------------------------------------------------------------------------- attack-risk targets

ATTACK_TARGETS = {"linkage_rate": 0.1, "linkability": 0.1, "singling_out": 0.2}
ATTACK_GRIDS = dict(k=(3, 10), eps=(0.0, 0.2, 0.3), q=(0.5, 1.0), reps=3)


def held_out(con, source, key, fraction):
    """The holdout recomputed here: input positions first in randomness.keyed_order."""
    from rwn_sql.randomness import keyed_order
    n = con.execute(f"SELECT count(*) FROM '{source}'").fetchall()[0][0]
    return set(keyed_order(key, "recommend/holdout", n)[:int(math.floor(fraction * n + 0.5))])


def split(con, source, positions):
    numbered = f"(SELECT row_number() OVER () AS pos, * FROM '{source}')"
    listed = ", ".join(map(str, sorted(positions)))
    con.execute(f"CREATE OR REPLACE TABLE kept AS SELECT * EXCLUDE (pos) FROM {numbered} WHERE pos NOT IN ({listed}) "
                f"ORDER BY pos").fetchall()
    con.execute(f"CREATE OR REPLACE TABLE held AS SELECT * EXCLUDE (pos) FROM {numbered} WHERE pos IN ({listed}) "
                f"ORDER BY pos").fetchall()


@pytest.fixture(scope="module")
def attack_recommended():
    con = duckdb.connect()
    rec = rwn_sql.recommend(con, str(BODYFAT), COLS, ATTACK_TARGETS, key=KEY, key_file="secret.key", **ATTACK_GRIDS)
    yield con, rec
    con.close()


def test_attack_targets_rerun_independently_are_met(attack_recommended):
    """Acceptance: the records not held out (recomputed from the keyed hash), perturbed at the
    recommended setting with the key and attacked with the key against the held-out records,
    meet the attack targets (upper end of the CI), with the very numbers the recommendation gives."""
    con, rec = attack_recommended
    assert rec.attack_targets == {"linkability": 0.1, "singling_out": 0.2} and rec.targets == {"linkage_rate": 0.1}
    held = held_out(con, BODYFAT, KEY, 0.2)
    split(con, BODYFAT, held)
    rwn_sql.perturb(con, "kept", COLS, k=rec.k, eps=rec.eps, q=rec.q, key=KEY, into="kept_release", replace=True)
    ar = rwn_sql.attack_risk(con, "kept", "kept_release", "held", COLS, key=KEY)
    for name, limit in rec.attack_targets.items():
        mine, theirs = getattr(ar, name), getattr(rec.attacks, name)
        assert mine.ci[1] <= limit
        assert (mine.risk, *mine.ci) == pytest.approx((theirs.risk, *theirs.ci))
    assert rec.control == {"source": None, "holdout": 0.2, "rows": len(held), "released_rows": 241 - len(held)}
    assert meets(measured(con, str(BODYFAT), COLS, rec.k, rec.eps, rec.q, KEY), {"linkage_rate": 0.1})
    # the candidates attacked before it missed an attack target (notes), the others are not better
    meeting = sorted((s for s in rec.settings if s.meets), key=lambda s: s.measures["corr_mad"][0])
    passed_over = [n for n in rec.notes if "attacks' upper confidence bounds" in n]
    assert (rec.k, rec.eps, rec.q) == (meeting[len(passed_over)].k, meeting[len(passed_over)].eps,
                                       meeting[len(passed_over)].q)
    assert any("the command releases all 241 records" in n for n in rec.notes)


def test_attack_targets_in_json_and_summary(attack_recommended):
    _, rec = attack_recommended
    d = json.loads(rec.to_json())
    for name, limit in rec.attack_targets.items():
        entry = d["attack_targets"][name]
        res = getattr(rec.attacks, name)
        assert entry == {"limit": "max", "value": limit, "risk": res.risk, "ci": list(res.ci),
                         "confidence_level": 0.95, "met": True}
        assert f"{name:<16} risk " in rec.summary()
    assert d["attacks"]["linkability"]["ci"] == list(rec.attacks.linkability.ci)
    assert d["control"]["holdout"] == 0.2 and set(d["targets"]) == {"linkage_rate"}
    assert "attack targets: linkability <= 0.1, singling_out <= 0.2" in rec.summary()
    assert KEY not in rec.to_json()
    # every setting's attacks in the JSON and the frontier table: the CI tops of those attacked
    # (the chosen one and those passed over), "not run" for the rest
    chosen = next(x for x in d["settings"] if (x["k"], x["eps"], x["q"]) == (rec.k, rec.eps, rec.q))
    assert chosen["attacks"] == {n: getattr(rec.attacks, n).ci[1] for n in rec.attack_targets}
    attacked = [x for x in d["settings"] if x["attacks"] is not None]
    assert len(attacked) == len(rec.attacked) == 1 + sum("attacks' upper confidence bounds" in n for n in rec.notes)
    table = rec.summary().split("the Pareto frontier of")[1]
    assert "linkability (CI top)" in table and "singling_out (CI top)" in table
    row = next(line for line in table.splitlines() if line.startswith("   > "))
    assert f"{rec.attacks.linkability.ci[1]:.4g}" in row and f"{rec.attacks.singling_out.ci[1]:.4g}" in row
    if len(attacked) < sum(x["meets"] or x["frontier"] for x in d["settings"]):
        assert "not run" in table


def test_attack_targets_alone_and_a_control_source():
    """No other target: every setting is a candidate. control=: the whole source is released
    (the command's release) and attacked against it."""
    con = duckdb.connect()
    split(con, BODYFAT, range(1, 61))            # held: the first 60 records, kept: the others
    rec = rwn_sql.recommend(con, "kept", COLS, {"singling_out": 0.3}, control="held", seed=5, k=(5,),
                            eps=(0.2, 0.3), q=(1.0,), reps=2, n_attacks=200)
    rwn_sql.perturb(con, "kept", COLS, k=rec.k, eps=rec.eps, q=rec.q, seed=5, into="full", replace=True)
    ar = rwn_sql.attack_risk(con, "kept", "full", "held", COLS, seed=5, n_attacks=200)
    assert ar.singling_out.ci == pytest.approx(rec.attacks.singling_out.ci) and ar.singling_out.ci[1] <= 0.3
    assert rec.control == {"source": "table 'held'", "holdout": None, "rows": 60, "released_rows": 181}
    assert rec.checked is not None and rec.targets == {}
    assert rec.command.startswith("rwn-sql perturb kept release.parquet")
    assert set(t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()) <= {
        "kept", "held", "full", "__rwn_keys"}
    con.close()


def test_an_impossible_attack_target_is_refused_naming_the_nearest():
    con = duckdb.connect()
    with pytest.raises(rec_mod.NoSettingMeetsTargets, match="nearest achievable attack targets") as info:
        rwn_sql.recommend(con, str(BODYFAT), COLS, {"linkability": 0.0}, key=KEY, k=(3, 10), eps=(0.0, 0.2),
                          q=(1.0,), reps=2)
    near = info.value.nearest["linkability"]
    assert near["target"] == 0.0 and near["ci_upper"] > 0
    text = str(info.value)
    assert f"linkability <= {near['ci_upper']:.4g}" in text and "asked 0)" in text
    assert f"k={near['k']}, eps={near['eps']:g}, q={near['q']:g}" in text
    assert "(4 settings attacked)" in text
    # nothing left behind: no holdout, release or key table rows
    assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name <> '__rwn_keys'").fetchall() == [(0,)]
    con.close()


def test_the_holdout_is_reproducible_for_the_same_key():
    con = duckdb.connect()
    a = rec_mod.holdout_positions(con, str(BODYFAT), KEY, 0.2)
    assert a == rec_mod.holdout_positions(con, str(BODYFAT), KEY, 0.2) and len(a) == 48
    assert a != rec_mod.holdout_positions(con, str(BODYFAT), KEY + "x", 0.2)
    assert set(a) == held_out(con, BODYFAT, KEY, 0.2)
    # the SQL holdout (the tables recommend attacks) is the Python one
    plan = rec_mod._Plan(con, str(BODYFAT), COLS, {"singling_out": 0.5}, (3,), (0.2,), (1.0,), "corr_mad", 2, 2.0,
                         "minmax", (), (), None, KEY, None, None, "r.parquet", holdout=0.3)
    rec_mod._prepare_control(plan)
    split(con, BODYFAT, rec_mod.holdout_positions(con, str(BODYFAT), KEY, 0.3))
    for mine, theirs in (("kept", rec_mod.KEPT_TABLE), ("held", rec_mod.HELD_TABLE)):
        assert con.execute(f"SELECT * FROM {mine}").fetchall() == con.execute(f"SELECT * FROM {theirs}").fetchall()
    con.close()


@pytest.mark.parametrize("options, message", [
    (dict(holdout=0.0), "holdout must be a fraction strictly between 0 and 1"),
    (dict(holdout=1.0), "holdout must be a fraction strictly between 0 and 1"),
    (dict(holdout=float("nan")), "must be finite"),
    (dict(control="ctl_short"), "column 'Height' is not in the control data"),
    (dict(control="ctl_short", holdout=0.2), "not both"),
    (dict(secret="Neck"), "secret 'Neck' is not among columns"),
    (dict(key=None), "attack targets need a key"),
    (dict(n_attacks=0), "n_attacks must be an integer"),
])
def test_bad_attack_options_are_refused_before_any_work(options, message):
    con = duckdb.connect()
    con.execute(f"CREATE TABLE ctl_short AS SELECT Age, Weight FROM '{BODYFAT}'").fetchall()
    options = dict(dict(key=KEY), **options)
    with pytest.raises(RWNError, match=message):
        rwn_sql.recommend(con, str(BODYFAT), COLS, {"linkage_rate": 0.1, "inference": 0.2}, **options)
    con.close()


def test_attack_options_without_an_attack_target_are_refused():
    with pytest.raises(RWNError, match="is for the attack targets"):
        rwn_sql.recommend(duckdb.connect(), str(BODYFAT), COLS, {"linkage_rate": 0.1}, holdout=0.2, key=KEY)
    with pytest.raises(RWNError, match="the linkability attack needs two columns"):
        rwn_sql.recommend(duckdb.connect(), str(BODYFAT), ["Age"], {"linkability": 0.1}, key=KEY, utility="ks_max")


def test_cli_attack_targets(tmp_path, capsys):
    assert main(["recommend", str(BODYFAT), "--columns", ",".join(COLS), "--k", "3,10", "--eps", "0.2,0.3",
                 "--q", "1", "--reps", "2", "--max-linkability", "0.1", "--max-singling-out", "0.2",
                 "--holdout", "0.25", "--seed", "3", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert set(d["attack_targets"]) == {"linkability", "singling_out"} and d["control"]["holdout"] == 0.25
    assert all(t["ci"][1] <= t["value"] for t in d["attack_targets"].values())
    # --n-attacks reaches the attacks: fewer attacks, a wider confidence interval
    assert main(["recommend", str(BODYFAT), "--columns", ",".join(COLS), "--k", "3,10", "--eps", "0.2,0.3",
                 "--q", "1", "--reps", "2", "--max-linkability", "0.5", "--holdout", "0.25", "--seed", "3",
                 "--n-attacks", "20", "--json"]) == 0
    few = json.loads(capsys.readouterr().out)
    assert few["attacks"]["linkability"]["n_attacks"] == 20
    assert main(["recommend", str(BODYFAT), "--columns", ",".join(COLS), "--max-linkability", "0.5", "--seed", "1",
                 "--n-attacks", "0"]) == 2
    assert "n_attacks" in capsys.readouterr().err
    for argv, message in [
        (["--max-inference", "0.2"], "attack targets need a key"),
        (["--max-inference", "0.2", "--seed", "1", "--holdout", "1.5"], "strictly between 0 and 1"),
        (["--max-linkage", "0.1", "--seed", "1", "--control", "x.csv"], "is for the attack targets"),
    ]:
        assert main(["recommend", str(BODYFAT), "--columns", ",".join(COLS), *argv]) == 2
        assert message in capsys.readouterr().err
