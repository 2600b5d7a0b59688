"""Attack-based risk (rwn_sql.evaluation.attacks) against the anonymeter package (1.1.0, a
test-only dependency) and on constructed releases whose risk is known."""
import json
import math
import subprocess
import sys
import warnings

import duckdb
import numpy as np
import pandas as pd
import pytest

from rwn_sql import RWNError, attack_risk, evaluate
from rwn_sql.evaluation.attacks import residual_risk, wilson

COLS = ["a", "b", "c", "s"]


def frame(n, seed, ids=0):
    """Three continuous columns (c positive, the numeric secret) and a 3-level category."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"id": np.arange(ids, ids + n), "a": rng.normal(size=n), "b": rng.normal(size=n),
                         "c": rng.gamma(2.0, size=n) + 1.0, "s": rng.choice(["x", "y", "z"], n)})


def noisy(df, seed, scale=0.15):
    """A release of df's records: every numeric value moved by noise of `scale` standard deviations."""
    rng = np.random.default_rng(seed)
    out = df.copy()
    for c in ("a", "b", "c"):
        out[c] = out[c] + scale * out[c].std() * rng.normal(size=len(df))
    out["c"] = out["c"].abs() + 0.01
    return out


def connect(**tables):
    con = duckdb.connect()
    for name, df in tables.items():
        con.register(name, df)
    return con


# ----------------------------------------------------------------------------- the statistics

def test_wilson_and_residual_risk_are_anonymeters():
    pytest.importorskip("anonymeter")
    from anonymeter.stats.confidence import EvaluationResults
    for n, k, kc in ((500, 300, 120), (200, 200, 3), (1000, 10, 40), (50, 0, 0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = EvaluationResults(n_attacks=n, n_success=k, n_baseline=0, n_control=kc).risk()
        ours = residual_risk(wilson(n, k, 0.95), wilson(n, kc, 0.95))
        assert ours[0] == pytest.approx(theirs.value, abs=1e-12)
        assert ours[1] == pytest.approx(theirs.ci, abs=1e-12)


# ----------------------------------------------------------------------------- against anonymeter

N = 300


@pytest.fixture(scope="module")
def small():
    ori, ctl = frame(N, 1), frame(N, 2, ids=N)
    return ori, noisy(ori, 3), ctl


def test_inference_and_linkability_agree_with_anonymeter_exactly(small):
    """All N records are targets (n_attacks = N), so neither side draws anything that matters:
    the nearest released record of every target is a function of the data, on continuous data
    without ties. The counts must then be equal, not merely close."""
    pytest.importorskip("anonymeter")
    from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator
    ori, syn, ctl = small
    ar = attack_risk(connect(o=ori, r=syn, c=ctl), "o", "r", "c", COLS, secret="c", categorical=["s"],
                     n_attacks=N, link_columns=(["a", "s"], ["b", "c"]), n_neighbors=3, seed=5)
    data = [d[COLS] for d in small]
    inf = InferenceEvaluator(ori=data[0], syn=data[1], control=data[2], aux_cols=["a", "b", "s"], secret="c",
                             regression=True, n_attacks=N).evaluate(n_jobs=1)
    assert (ar.inference.successes, ar.inference.control_successes) == (inf._n_success, inf._n_control)
    assert 0.1 < ar.inference.successes / N < 0.9                 # neither trivially 0 nor all
    assert ar.inference.risk == pytest.approx(inf.risk().value, abs=1e-12)
    link = LinkabilityEvaluator(ori=data[0], syn=data[1], control=data[2], aux_cols=(["a", "s"], ["b", "c"]),
                                n_attacks=N, n_neighbors=3).evaluate(n_jobs=1)
    res = link.results()
    assert (ar.linkability.successes, ar.linkability.control_successes) == (res.n_success, res.n_control)
    assert 0.05 < ar.linkability.successes / N < 0.95
    assert ar.linkability.ci == pytest.approx(link.risk().ci, abs=1e-12)


def test_categorical_secret_inference_agrees_with_anonymeter(small):
    pytest.importorskip("anonymeter")
    from anonymeter.evaluators import InferenceEvaluator
    ori, syn, ctl = small
    ar = attack_risk(connect(o=ori, r=syn, c=ctl), "o", "r", "c", COLS, secret="s", categorical=["s"],
                     n_attacks=N, seed=5)
    data = [d[COLS] for d in small]
    inf = InferenceEvaluator(ori=data[0], syn=data[1], control=data[2], aux_cols=["a", "b", "c"], secret="s",
                             regression=False, n_attacks=N).evaluate(n_jobs=1)
    assert (ar.inference.successes, ar.inference.control_successes) == (inf._n_success, inf._n_control)


def test_singling_out_agrees_with_anonymeter(small):
    """Exhaustively (n_attacks above the number of multivariate predicates that single out in
    the release: both find every one of them) the counts agree exactly. Below it both draw a
    random subset of those predicates, so the success counts are compared as two binomial
    samples: each side's k of n = 100 estimates the same rate p, the difference of the two
    estimates has standard error at most sqrt(p (1 - p) * 2 / n) (drawing without replacement
    from the finite pool only lowers it), averaged over 3 seeds a factor sqrt(3) less, and 4 of
    them is the tolerance (a false alarm once in about 16,000 runs)."""
    pytest.importorskip("anonymeter")
    from anonymeter.evaluators import SinglingOutEvaluator
    ori, syn, ctl = small
    con = connect(o=ori, r=syn, c=ctl)

    def anonymeter(n, seed):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ev = SinglingOutEvaluator(ori=ori[COLS], syn=syn[COLS], control=ctl[COLS], n_attacks=n, n_cols=3,
                                      seed=seed, max_attempts=20_000).evaluate(mode="multivariate")
        res = ev.results()
        return res.n_success, res.n_control

    everything = attack_risk(con, "o", "r", "c", COLS, categorical=["s"], n_attacks=5000, seed=1).singling_out
    assert 100 < everything.n_queries < 5000
    assert (everything.successes, everything.control_successes) == anonymeter(5000, 1)
    n, ours, theirs = 100, [], []
    for seed in range(3):
        ar = attack_risk(con, "o", "r", "c", COLS, categorical=["s"], n_attacks=n, seed=seed)
        ours.append((ar.singling_out.successes / n, ar.singling_out.control_successes / n))
        theirs.append(tuple(k / n for k in anonymeter(n, seed)))
    ours, theirs = np.mean(ours, axis=0), np.mean(theirs, axis=0)
    for p_ours, p_theirs in zip(ours, theirs):
        p = (p_ours + p_theirs) / 2
        tolerance = 4 * math.sqrt(max(p * (1 - p), 0.01) * 2 / (3 * n))
        assert abs(p_ours - p_theirs) <= tolerance, (ours, theirs)
    assert ours[0] > 0.1                                          # the noisy release does single out


def test_univariate_singling_out_matches_anonymeters_queries(small):
    """Univariate predicates are deterministic but for their order and cap: with a cap above
    their number both find all of them, so the counts agree exactly."""
    pytest.importorskip("anonymeter")
    from anonymeter.evaluators import SinglingOutEvaluator
    ori, syn, ctl = small
    tab = {"o": ori.assign(a=ori.a.round(1)), "r": syn.assign(a=syn.a.round(1)), "c": ctl.assign(a=ctl.a.round(1))}
    ar = attack_risk(connect(**tab), "o", "r", "c", COLS, categorical=["s"], n_attacks=5000, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = SinglingOutEvaluator(ori=tab["o"][COLS], syn=tab["r"][COLS], control=tab["c"][COLS], n_attacks=5000,
                                  seed=1).evaluate(mode="univariate")
    res = ev.results()
    u = ar.singling_out_univariate
    assert u.n_queries >= u.successes > 0
    assert (u.successes, u.control_successes) == (res.n_success, res.n_control)


# ----------------------------------------------------------------------------- constructed cases

def test_release_equal_to_original_gives_high_risk():
    """Release = original: every target's nearest released record is itself (distance 0, no ties
    on continuous data), so linkability and inference succeed on all n targets, and every
    predicate singling out in the release singles out in the original (the same records): k = n
    attacks. The Wilson rate of n of n is (n + z^2/2) / (n + z^2) = 0.9962 for n = 500, so with
    a control rate c <= 0.5 the risk is at least 1 - 0.0038 / 0.5 > 0.99. Singling out: every
    predicate found singles out in the original too."""
    ori, ctl = frame(1000, 11), frame(1000, 12)
    ar = attack_risk(connect(o=ori, c=ctl), "o", "o", "c", COLS, secret="c", categorical=["s"], n_attacks=500,
                     seed=3)
    for res in (ar.linkability, ar.inference):
        assert res.successes == res.n_attacks == 500
        assert res.control_rate <= 0.5 and res.risk > 0.99
    assert ar.singling_out.successes == ar.singling_out.n_queries > 0     # each one singles out
    # 1,000 records hold a few hundred multivariate predicates that single out; with 100 sought
    # all are found, Wilson's 100 of 100 is 0.9815, and with c <= 0.5 the risk > 1 - 0.0185 / 0.5.
    so = attack_risk(connect(o=ori, c=ctl), "o", "o", "c", COLS, categorical=["s"], n_attacks=100,
                     seed=3).singling_out
    assert so.n_queries == so.successes == 100 and so.control_rate <= 0.5 and so.risk > 0.96


def test_independent_release_gives_risk_near_zero():
    """A release drawn from the same distribution, independent of the records: the original and
    the control records are exchangeable for every attack, so each risk is 0 up to sampling
    error: its confidence interval reaches 0 or the risk is below 0.1."""
    ori, ctl, ind = frame(1000, 21), frame(1000, 22), frame(1000, 23)
    ar = attack_risk(connect(o=ori, r=ind, c=ctl), "o", "r", "c", COLS, secret="c", categorical=["s"], seed=4)
    for res in (ar.singling_out, ar.singling_out_univariate, ar.linkability, ar.inference):
        assert res.ci[0] == 0.0 or res.risk < 0.1, res


def test_noisy_release_risk_lies_between():
    ori, ctl = frame(1000, 31), frame(1000, 32)
    ar = attack_risk(connect(o=ori, r=noisy(ori, 33, 0.3), c=ctl), "o", "r", "c", COLS, secret="c",
                     categorical=["s"], seed=4)
    assert 0.05 < ar.inference.risk < 0.9


def test_same_key_same_result_other_key_other_draws():
    ori, ctl = frame(500, 41), frame(400, 42)
    con = connect(o=ori, r=noisy(ori, 43), c=ctl)
    run = lambda **kw: attack_risk(con, "o", "r", "c", COLS, categorical=["s"], n_attacks=100, **kw)  # noqa: E731
    key = "0123456789abcdef0123456789abcdef"
    assert run(key=key).to_dict() == run(key=key).to_dict()
    assert run(seed=1).to_dict() == run(seed=1).to_dict()
    con.execute("SET threads = 1")
    one_thread = run(seed=1).to_dict()
    con.execute("SET threads = 2")
    assert one_thread == run(seed=1).to_dict()
    a, b = run(seed=1), run(seed=2)
    assert (a.singling_out, a.linkability, a.inference) != (b.singling_out, b.linkability, b.inference)


def test_control_of_another_size_is_corrected():
    """A control half the original's size singles out more often (fewer records to share a
    predicate with); the size correction must bring its count down."""
    ori, ctl = frame(1000, 51), frame(300, 52)
    con = connect(o=ori, r=noisy(ori, 53), c=ctl)
    ar = attack_risk(con, "o", "r", "c", COLS, categorical=["s"], n_attacks=200, seed=1)
    from rwn_sql.evaluation import singling_out as so
    assert so.size_correction(np.array([1, 1, 2, 3, 5, 8]), 300, 1000) < 1
    assert ar.singling_out.control_successes != int(ar.singling_out.control_successes) or \
        ar.singling_out.control_successes == 0


# ----------------------------------------------------------------------------- evaluate and the CLI

def test_evaluate_attacks_and_json_shape():
    ori, ctl = frame(400, 61), frame(300, 62, ids=400)
    con = connect(o=ori, r=noisy(ori, 63).sample(frac=1.0, random_state=1), c=ctl)
    ev = evaluate(con, "o", "r", ["a", "b", "c", "s"], categorical=["s"], id="id", attacks=True, control="c",
                  secret="c", attack_seed=7)
    direct = attack_risk(con, "o", "r", "c", ["a", "b", "c", "s"], secret="c", categorical=["s"], seed=7)
    assert ev.attacks == direct
    out = json.loads(ev.to_json())["attacks"]
    for name in ("singling_out", "linkability", "inference"):
        assert set(out[name]) >= {"risk", "ci", "attack_rate", "control_rate", "baseline_rate", "n_attacks"}
        assert isinstance(out[name]["risk"], float) and len(out[name]["ci"]) == 2
    assert evaluate(con, "o", "r", ["a", "b"], id="id").attacks is None
    with pytest.raises(RWNError, match="needs control="):
        evaluate(con, "o", "r", ["a", "b"], id="id", attacks=True)
    with pytest.raises(RWNError, match="give attacks=True"):
        evaluate(con, "o", "r", ["a", "b"], id="id", control="c")


def test_cli_evaluate_attacks(tmp_path):
    ori, ctl = frame(300, 71), frame(300, 72, ids=300)
    paths = {}
    for name, df in (("o", ori), ("r", noisy(ori, 73)), ("c", ctl)):
        paths[name] = tmp_path / f"{name}.csv"
        df.to_csv(paths[name], index=False)
    out = tmp_path / "m.json"
    res = subprocess.run([sys.executable, "-m", "rwn_sql.cli", "evaluate", str(paths["o"]), str(paths["r"]),
                          "--columns", "a,b,c,s", "--categorical", "s", "--id", "id", "--attacks", "--control",
                          str(paths["c"]), "--secret", "c", "--attack-seed", "3", "--json", str(out)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "singling out (multivariate)" in res.stdout and "inference of c" in res.stdout
    attacks = json.loads(out.read_text())["attacks"]
    direct = attack_risk(duckdb.connect(), str(paths["o"]), str(paths["r"]), str(paths["c"]), COLS, secret="c",
                         categorical=["s"], seed=3).to_dict()
    assert attacks == direct
    res = subprocess.run([sys.executable, "-m", "rwn_sql.cli", "evaluate", str(paths["o"]), str(paths["r"]),
                          "--columns", "a,b", "--id", "id", "--attacks"], capture_output=True, text=True)
    assert res.returncode != 0 and "needs control=" in res.stderr


# ----------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("change, message", [
    (dict(control="SELECT a, b, s FROM c"), "column 'c' is not in the control data"),
    (dict(control="SELECT * FROM c WHERE false"), "control data .* has no rows"),
    (dict(secret="nope"), "secret 'nope' is not among columns"),
    (dict(n_attacks=0), "n_attacks must be an integer from 1"),
    (dict(n_attacks=2.5), "n_attacks must be an integer"),
    (dict(control="SELECT id, a, b, CASE WHEN id = 305 THEN 'nan'::DOUBLE ELSE c END AS c, s FROM c"),
     "column 'c' of the control data .* NaN or infinite in 1 rows"),
    (dict(control="SELECT id, a, b, NULL::DOUBLE AS c, s FROM c"), "column 'c' of the control data .* NULL"),
    (dict(link_columns=(["a", "b"], ["b", "c"])), "two non-empty, disjoint"),
    (dict(confidence_level=1.0), "confidence_level must be a number strictly between 0 and 1"),
    (dict(categorical=["q"]), "categorical: 'q' is not among columns"),
    (dict(released="SELECT id, a, b, CAST(c AS VARCHAR) AS c, s FROM r"), "column 'c' has type VARCHAR"),
])
def test_bad_input_is_named(change, message):
    ori, ctl = frame(50, 81), frame(50, 82, ids=300)
    con = connect(o=ori, r=noisy(ori, 83), c=ctl)
    args = dict(original="o", released="r", control="c", columns=COLS, categorical=["s"], seed=1)
    args.update(change)
    with pytest.raises(RWNError, match=message):
        attack_risk(con, **args)


def test_evaluate_key_risk_reads_the_resolved_release(monkeypatch):
    """evaluate(keys=) hands the key-variable risk the release it resolved, not its name again."""
    from rwn_sql.engines.sources import Source
    from rwn_sql.evaluation import evaluate as module
    seen = []
    real = module.key_variable_risk
    monkeypatch.setattr(module, "key_variable_risk",
                        lambda con, src, *a, **k: seen.append(src) or real(con, src, *a, **k))
    ori = frame(60, 91)
    con = connect(o=ori, r=noisy(ori, 92))
    ev = evaluate(con, "o", "r", ["a", "b"], id="id", keys=["s"])
    assert len(seen) == 1 and isinstance(seen[0], Source) and ev.key_risk.rows == 60


def test_many_categories_search_directly_with_the_same_neighbours(monkeypatch):
    """Over MAX_TREE_DIMENSIONS one-hot coordinates the distances are computed directly; on data
    without ties both searches must find the same records."""
    from rwn_sql.evaluation import attacks
    ori, ctl = frame(300, 95), frame(300, 96)
    for df in (ori, ctl):
        df["s"] = (df["a"] * 1000).round().astype(int).astype(str)      # ~300 categories
    con = connect(o=ori, r=noisy(ori, 97), c=ctl)
    run = lambda: attack_risk(con, "o", "r", "c", COLS, secret="c", categorical=["s"], seed=2).to_dict()  # noqa: E731
    direct = run()
    monkeypatch.setattr(attacks, "MAX_TREE_DIMENSIONS", 10 ** 6)
    assert run() == direct


def test_singles_table_is_what_counts_says():
    """The table the singling-out search looks pairs up in (after FLAGS_AFTER draws of a column
    subset, which the small data of the other tests never reach) against counting each predicate
    on the release: ties, integer columns, categories, duplicate rows."""
    import itertools
    from rwn_sql.evaluation import singling_out as so
    rng = np.random.default_rng(0)
    for trial in range(60):
        n, p = int(rng.integers(1, 300)), int(rng.integers(1, 6))
        is_cat = rng.random(p) < 0.4
        syn = np.column_stack([rng.integers(0, 4, n).astype(float) if is_cat[j] or trial % 2
                               else rng.normal(size=n) for j in range(p)])
        median, scan = np.median(syn, axis=0), so.Sorted(syn)
        ranks = so._oriented_ranks(syn, is_cat, median)
        for m in range(1, p + 1):
            for sub in map(np.array, itertools.combinations(range(p), m)):
                if (~is_cat[sub]).sum() > 3:
                    continue
                cols = np.tile(sub, (n, 1))
                ops, vals = so._predicates(syn, is_cat, median, np.arange(n), cols)
                assert (so.singles_table(syn, is_cat, sub, median, ranks)
                        == (so.counts(scan, cols, ops, vals, cap=2) == 1)).all()
