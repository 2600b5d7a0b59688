"""Attack-based disclosure risk in the design of Anonymeter (Giomi, Boenisch, Wehmeyer and
Tasnádi, "A Unified Framework for Quantifying Privacy Risk in Synthetic Data", PoPETs 2023):

    ar = attack_risk(con, "train", "release.parquet", "control", ["age", "sex", "income"],
                     secret="income", categorical=["sex"], seed=1)
    ar.singling_out.risk, ar.linkability.ci, ar.inference.attack_rate, ar.to_dict()

Three roles: the ORIGINAL records (those the release was made from), the RELEASE, and a
CONTROL set: records of the same population held out of the release. Each attack is run
against original records (its targets) and, the same way, against control records; what it
achieves on control records is what the release teaches about the population rather than
about its own records. No pairing of released with original records is needed, so a shuffled
release, an RWN release and a randomized release (reconstruction privacy) are all evaluated.

Attacks (anonymeter 1.1.0's evaluators, re-implemented with numpy and scipy's cKDTree):

* singling out (multivariate, reported as ``singling_out``; univariate as
  ``singling_out_univariate``): predicates built from the release (see
  rwn_sql.evaluation.singling_out: a random released record's values on n_cols random
  columns, `>=`/`<=` toward the extreme side of the median for numeric columns, `==` for
  categorical; univariate: rare values, minimum and maximum), kept when they match exactly one
  released record, at most n_attacks of them. Success: a predicate matches exactly one
  original record; control success: exactly one control record. As Anonymeter, the three sets
  are first reduced to their distinct records, every rate is over n_attacks (fewer predicates
  found count as failures: ``n_queries`` says how many were found), and when the control and
  the original differ in size the control's count is multiplied by Anonymeter's fitted size
  correction (singling_out.size_correction; here from exact expectations, not subsamples).
  Baseline: random predicates (random columns, values of the release, operators).
* linkability: the attacker holds two disjoint column sets (``link_columns``, by default the
  first and the second half of `columns`) of min(n_attacks, n) target records drawn from the
  original records; success when the n_neighbors nearest released records of the first half
  and those of the second half share a record. Control: the same with control targets.
  Baseline: n_neighbors released records drawn at random for each half.
* inference: the attacker knows every column but `secret` (the auxiliary columns) of
  min(n_attacks, n) original targets and guesses the secret as the secret of the nearest
  released record on the auxiliary columns. Success: equal (categorical secret) or, numeric,
  |guess - secret| <= tolerance * |guess| (+1e-12 in the denominator), tolerance 0.05 as
  Anonymeter (which divides by the signed guess, so any negative guess succeeds there; the
  absolute value here). For a randomized release: the public columns are the auxiliary
  columns, the sensitive column the secret. Baseline: the secret of a random released record.

Distance (Anonymeter's Gower-like one): the sum over the columns compared of |a - b| / range
for a numeric column (range: max - min over the release and the attacked targets together, 1
if 0) and 1 per categorical column whose values differ (NULL equal to NULL). Nearest records by
cKDTree in the L1 metric: a categorical column becomes one coordinate of 0.5 per value the
release holds, so two different values are 1 apart (a value the release lacks: all 0, the same
distance to every released record). Ties are broken by a keyed shuffle of the released rows.

Rates and risk, Anonymeter's rule exactly (stats.confidence): for k successes in N attacks,
the Wilson score estimate at confidence level c, z = Phi^-1((1 + c) / 2):
    rate = (k + z^2/2) / (N + z^2),   error = z / (N + z^2) * sqrt(k (N - k) / N + z^2 / 4);
risk = (rate_attack - rate_control) / (1 - rate_control), its error propagated to first order
    error = sqrt((e_attack / (1 - rate_control))^2 + (e_control (rate_attack - 1) / (1 - rate_control)^2)^2),
and ``risk`` = risk clipped to [0, 1], ``ci`` = [risk - error, risk + error] clipped to [0, 1].

Randomness (targets, predicates, baseline guesses, tie-breaking) comes from numpy Generators
seeded by the keyed hash of (key, "attacks/<attack>") (rwn_sql.randomness.keyed_hash): the same
key or seed gives the same result whatever the thread count; another key other draws.

Cost: measured by benchmarks/bench_attacks.py (the figures: docs/benchmarks.md, section
Attacks), most of it the singling out. The multivariate search tries (record, columns) pairs
until n_attacks single out in the release (about 1 in 1,000 does among 100,000 records); after
the first singling_out.FLAGS_AFTER pairs on a column subset, a pair is looked up in that
subset's table of every released record (singling_out.singles_table, a dominance count in
O(n log^2 n) per subset) instead of being counted on the release, so a pair tried costs next to
nothing. max_attempts bounds the search. Linkability and inference are cKDTree searches.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree
from scipy.stats import norm

from ..engines import duckdb as engine, sources
from ..engines.dialects import require_duckdb
from ..engines.duckdb import NUMERIC_TYPES
from ..engines.sources import resolve_source
from ..errors import RWNError
from ..identifiers import column_names, quote_ident
from ..randomness import keyed_hash, resolve_key
from . import singling_out as so
from .report_values import plain

__all__ = ["AttackResult", "AttackRisk", "attack_risk", "wilson", "residual_risk"]

MAX_ATTACKS = 10_000_000


@dataclass(frozen=True)
class AttackResult:
    """One attack: its successes on the original and the control targets, the rates (Wilson
    estimates) and the risk with its confidence interval (rwn_sql.evaluation.attacks)."""
    attack: str
    risk: float                            # clipped to [0, 1]
    ci: tuple[float, float]
    n_attacks: int                         # attacks on original records (the rate's denominator)
    n_control_attacks: int
    successes: int
    control_successes: float               # singling out: after the size correction
    baseline_successes: int
    attack_rate: float
    attack_error: float
    control_rate: float
    control_error: float
    baseline_rate: float
    confidence_level: float
    n_queries: int | None = None           # singling out: predicates found that single out in the release
    columns: tuple = ()                    # linkability: the two column sets; inference: the auxiliary columns


@dataclass(frozen=True)
class AttackRisk:
    """The three attacks of one release (rwn_sql.evaluation.attacks); None: not run (too few columns)."""
    original: str
    released: str
    control: str
    rows: int
    released_rows: int
    control_rows: int
    columns: tuple[str, ...]
    categorical: tuple[str, ...]
    secret: str | None
    singling_out: AttackResult | None
    singling_out_univariate: AttackResult | None
    linkability: AttackResult | None
    inference: AttackResult | None

    def to_dict(self) -> dict:
        """Plain dicts, lists, str, int, float and None (NaN and infinities become None)."""
        return plain(dataclasses.asdict(self))


# ----------------------------------------------------------------------------- statistics

def wilson(n_total: int, n_success: float, confidence_level: float) -> tuple[float, float]:
    """(rate, error): the Wilson score estimate of a success rate and its error bound."""
    z = float(norm.ppf(0.5 * (1.0 + confidence_level)))
    z2 = z * z
    denominator = n_total + z2
    rate = (n_success + 0.5 * z2) / denominator
    error = (z / denominator) * math.sqrt(n_success * (n_total - n_success) / n_total + 0.25 * z2)
    return rate, error


def residual_risk(attack: tuple[float, float], control: tuple[float, float]) -> tuple[float, tuple[float, float]]:
    """(risk, ci) from the (rate, error) of the attack and of the control, clipped to [0, 1]."""
    (a, ea), (c, ec) = attack, control
    value = (a - c) / (1.0 - c)
    error = math.sqrt((ea / abs(1.0 - c)) ** 2 + (ec * (a - 1.0) / (1.0 - c) ** 2) ** 2)
    clip = lambda v: min(max(v, 0.0), 1.0)  # noqa: E731
    return clip(value), (clip(value - error), clip(value + error))


def _result(attack: str, n: int, k: float, n_control: int, k_control: float, n_baseline: int, k_baseline: float,
            level: float, **extra) -> AttackResult:
    rate = wilson(n, k, level)
    control = wilson(n_control, k_control, level)
    risk, ci = residual_risk(rate, control)
    return AttackResult(attack=attack, risk=risk, ci=ci, n_attacks=n, n_control_attacks=n_control,
                        successes=int(k), control_successes=float(k_control), baseline_successes=int(k_baseline),
                        attack_rate=rate[0], attack_error=rate[1], control_rate=control[0],
                        control_error=control[1], baseline_rate=wilson(n_baseline, k_baseline, level)[0],
                        confidence_level=level, **extra)


def _rng(key: str, name: str) -> np.random.Generator:
    return np.random.default_rng(keyed_hash(key, f"attacks/{name}", 0, ""))


# ----------------------------------------------------------------------------- input

def _names(value, what):
    return () if value is None else column_names(value, what, show_list=True)


def _count(value, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise RWNError(f"{what} must be an integer from {low} to {high}, got {value!r}")
    return int(value)


def _check_options(columns, categorical, secret, link_columns, n_attacks, n_cols, n_neighbors, confidence_level,
                   tolerance, max_attempts):
    columns, categorical = _names(columns, "columns"), _names(categorical, "categorical")
    if not columns:
        raise RWNError("columns: give at least one column to attack")
    for c in categorical:
        if c not in columns:
            raise RWNError(f"categorical: {c!r} is not among columns {list(columns)}")
    if secret is not None and (not isinstance(secret, str) or secret not in columns):
        raise RWNError(f"secret {secret!r} is not among columns {list(columns)}: the inference attack guesses "
                       f"the secret column from the others")
    if link_columns is not None:
        if isinstance(link_columns, str) or len(link_columns) != 2:
            raise RWNError(f"link_columns must be two lists of columns (the attacker's two data sets), "
                           f"got {link_columns!r}")
        link_columns = tuple(_names(half, "link_columns") for half in link_columns)
        if not all(link_columns) or set(link_columns[0]) & set(link_columns[1]):
            raise RWNError(f"link_columns must be two non-empty, disjoint lists of columns, got {link_columns!r}")
        for c in link_columns[0] + link_columns[1]:
            if c not in columns:
                raise RWNError(f"link_columns: {c!r} is not among columns {list(columns)}")
    _count(n_attacks, "n_attacks", 1, MAX_ATTACKS)
    _count(n_cols, "n_cols", 1, 1000)
    _count(n_neighbors, "n_neighbors", 1, 1000)
    _count(max_attempts, "max_attempts", 1, 10 ** 9)
    for value, what in ((confidence_level, "confidence_level"), (tolerance, "tolerance")):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
            raise RWNError(f"{what} must be a number strictly between 0 and 1, got {value!r}")
    return columns, categorical, link_columns


def _read(con, src, role: str, numeric, categorical):
    """(numeric values (n, p) float64, [(index, dictionary) per categorical column], n)."""
    exprs = [f"CAST({quote_ident(c)} AS DOUBLE) AS n{j}" for j, c in enumerate(numeric)]
    exprs += [f"CAST({quote_ident(c)} AS VARCHAR) AS c{j}" for j, c in enumerate(categorical)]
    try:
        data = con.sql(f"SELECT {', '.join(exprs)} FROM {src.sql}").to_arrow_table()
    except engine.Error as exc:
        raise RWNError(f"cannot read the {role} data, {src.label}: {exc}") from None
    n = data.num_rows
    if n == 0:
        raise RWNError(f"the {role} data ({src.label}) has no rows: the attacks need records")
    cols = []
    for j, c in enumerate(numeric):
        v = data.column(f"n{j}")
        if v.null_count:
            raise RWNError(f"column {c!r} of the {role} data ({src.label}) is NULL in {v.null_count} rows; "
                           f"the numeric distances need a value in every row")
        v = v.to_numpy(zero_copy_only=False).astype(np.float64) + 0.0
        if not np.isfinite(v).all():
            raise RWNError(f"column {c!r} of the {role} data ({src.label}) is NaN or infinite in "
                           f"{int((~np.isfinite(v)).sum())} rows")
        cols.append(v)
    cats = []
    for j, _ in enumerate(categorical):
        encoded = data.column(f"c{j}").dictionary_encode().combine_chunks()
        cats.append((encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64),
                     np.array(encoded.dictionary.to_pylist(), dtype=object)))
    return (np.column_stack(cols) if cols else np.zeros((n, 0))), cats, n


def _matrices(parts, columns, numeric, categorical):
    """One (n, p) float64 matrix per data set in `columns` order: numeric values, categorical
    codes shared by all sets (the texts in sorted order, NULL the code after them)."""
    out = [np.empty((n, len(columns))) for _, _, n in parts]
    for j, c in enumerate(numeric):
        for m, (x, _, _) in zip(out, parts):
            m[:, columns.index(c)] = x[:, j]
    for j, c in enumerate(categorical):
        values = np.unique(np.concatenate([cats[j][1] for _, cats, _ in parts]).astype(str))
        for m, (_, cats, _) in zip(out, parts):
            index, own = cats[j]
            code = np.append(np.searchsorted(values, own.astype(str)), len(values))
            m[:, columns.index(c)] = code[index]
    return out


# ----------------------------------------------------------------------------- entry point

def attack_risk(con: engine.Connection, original, released, control, columns, secret: str | None = None,
                categorical=(), n_attacks: int = 500, link_columns=None, n_cols: int = 3, n_neighbors: int = 1,
                confidence_level: float = 0.95, tolerance: float = 0.05, max_attempts: int = 1_000_000,
                key: str | None = None, seed: int | None = None) -> AttackRisk:
    """Singling-out, linkability and inference risk of `released` (the release of the records
    `original`), measured against `control` (records of the same population held out of the
    release); each a table/view name, a SQL query, a CSV/Parquet path or 'file.duckdb:table'.
    `columns`: the columns attacked (numeric unless listed in `categorical`); `secret`: the
    column the inference attack guesses from the others (default: the last of `columns`);
    `link_columns`: the linkability attacker's two disjoint column sets (default: the first
    and second half of `columns`). `n_attacks` (at most 10^7): predicates sought (singling
    out) and targets drawn (the others; at most the records there are); `n_cols`: columns per
    multivariate predicate (at most len(columns)); `max_attempts`: multivariate predicates
    tried at most; `n_neighbors`: released records each half of a linkability target is linked
    to; `tolerance`: relative error of a successful numeric inference. `key` or `seed` (else a
    fresh key) draws every random choice. Definitions: rwn_sql.evaluation.attacks. Raises
    RWNError on bad input: a missing or mistyped column, an empty set, NULL, NaN or infinite
    numeric values, a parameter out of range."""
    require_duckdb(con, "attack_risk")
    columns, categorical, link_columns = _check_options(
        columns, categorical, secret, link_columns, n_attacks, n_cols, n_neighbors, confidence_level, tolerance,
        max_attempts)
    numeric = tuple(c for c in columns if c not in categorical)
    the_key = resolve_key(key, seed)
    parts, labels = [], []
    for role, source in (("original", original), ("released", released), ("control", control)):
        src = resolve_source(con, source)
        sources.require_columns(src, columns, "columns", where=f"the {role} data, {src.label}")
        for c in numeric:
            if not NUMERIC_TYPES.match(src.type_of(c)):
                raise RWNError(f"column {c!r} has type {src.type_of(c)} in the {role} data, not a numeric type; "
                               f"list it in categorical= (--categorical) to compare it as categories")
        parts.append(_read(con, src, role, numeric, categorical))
        labels.append(src.label)
    ori, syn, ctl = _matrices(parts, columns, numeric, categorical)
    is_cat = np.array([c in categorical for c in columns])
    if secret is None and len(columns) >= 2:
        secret = columns[-1]
    if link_columns is None and len(columns) >= 2:
        half = len(columns) // 2
        link_columns = (columns[:half], columns[half:])
    level = float(confidence_level)
    so_multi, so_uni = _singling_out(ori, syn, ctl, is_cat, n_attacks, min(n_cols, len(columns)), max_attempts,
                                     level, the_key)
    link = None if link_columns is None else _linkability(
        ori, syn, ctl, is_cat, [[columns.index(c) for c in half] for half in link_columns], n_attacks, n_neighbors,
        level, the_key, link_columns)
    infer = None if secret is None else _inference(
        ori, syn, ctl, is_cat, columns.index(secret), n_attacks, tolerance, level, the_key,
        tuple(c for c in columns if c != secret))
    return AttackRisk(original=labels[0], released=labels[1], control=labels[2], rows=len(ori),
                      released_rows=len(syn), control_rows=len(ctl), columns=columns, categorical=categorical,
                      secret=secret, singling_out=so_multi, singling_out_univariate=so_uni, linkability=link,
                      inference=infer)


# ----------------------------------------------------------------------------- the attacks

def _singling_out(ori, syn, ctl, is_cat, n_attacks, n_cols, max_attempts, level, key):
    """(multivariate, univariate) AttackResults, on the sets' distinct records."""
    ori, syn, ctl = (np.unique(m, axis=0) for m in (ori, syn, ctl))
    ori_index, syn_index, ctl_index = so.Sorted(ori), so.Sorted(syn), so.Sorted(ctl)
    out = []
    for mode in ("multivariate", "univariate"):
        rng = _rng(key, f"singling_out/{mode}")
        if mode == "multivariate":
            cols, ops, vals, _ = so.multivariate(syn, is_cat, n_attacks, n_cols, max_attempts, rng, syn_index)
        else:
            cols, ops, vals, _ = so.univariate(syn, is_cat, n_attacks, rng, syn_index)
        k = int((so.counts(ori_index, cols, ops, vals, cap=2) == 1).sum())
        matched = so.counts(ctl_index, cols, ops, vals)
        k_control = float((matched == 1).sum())
        if k_control and len(ctl) != len(ori):
            k_control *= so.size_correction(matched, len(ctl), len(ori))
        b = so.random_queries(syn, is_cat, n_attacks, n_cols if mode == "multivariate" else 1, rng)
        k_baseline = int((so.counts(ori_index, *b, cap=2) == 1).sum())
        out.append(_result(f"singling_out_{mode}" if mode == "univariate" else "singling_out", n_attacks, k,
                           n_attacks, min(k_control, n_attacks), n_attacks, k_baseline, level,
                           n_queries=len(cols)))
    return out[0], out[1]


def _features(target, syn, cols, is_cat):
    """(target, release) coordinates for cKDTree in the L1 metric on `cols` (see the module)."""
    t_parts, s_parts = [], []
    for j in cols:
        if is_cat[j]:
            levels = np.unique(syn[:, j])
            s_parts.append(0.5 * (syn[:, j, None] == levels))
            t_parts.append(0.5 * (target[:, j, None] == levels))
        else:
            both = np.concatenate([target[:, j], syn[:, j]])
            span = both.max() - both.min()
            span = span if span > 0 else 1.0
            s_parts.append(syn[:, j, None] / span)
            t_parts.append(target[:, j, None] / span)
    return np.hstack(t_parts), np.hstack(s_parts)


MAX_TREE_DIMENSIONS = 64    # more one-hot coordinates than this: the distances are computed directly
DIRECT_ELEMENTS = 4_000_000  # targets x released records per block of the direct computation


def _nearest(target, syn, cols, is_cat, k: int, shuffle):
    """(len(target), k) indices of the k nearest released records of each target on `cols`;
    `shuffle`: a permutation of the released rows (ties go by it, not by the release's order)."""
    k = min(k, len(syn))
    dims = sum(len(np.unique(syn[:, j])) if is_cat[j] else 1 for j in cols)
    if dims > MAX_TREE_DIMENSIONS:       # many categories: a tree on one-hot coordinates would be huge
        return shuffle[_nearest_direct(target, syn[shuffle], cols, is_cat, k)]
    t, s = _features(target, syn, cols, is_cat)
    _, idx = cKDTree(s[shuffle]).query(t, k=k, p=1, workers=-1)
    return shuffle[np.asarray(idx).reshape(len(target), k)]


def _nearest_direct(target, syn, cols, is_cat, k: int):
    """_nearest without a tree: every distance, in blocks of targets; ties go to the lower row."""
    spans = {}
    for j in cols:
        if not is_cat[j]:
            both = np.concatenate([target[:, j], syn[:, j]])
            spans[j] = (both.max() - both.min()) or 1.0
    out = np.empty((len(target), k), np.int64)
    step = max(1, DIRECT_ELEMENTS // len(syn))
    for first in range(0, len(target), step):
        block = target[first:first + step]
        dist = np.zeros((len(block), len(syn)))
        for j in cols:
            dist += (block[:, j, None] != syn[None, :, j]) if is_cat[j] else \
                np.abs(block[:, j, None] / spans[j] - syn[None, :, j] / spans[j])
        out[first:first + step] = np.argsort(dist, axis=1, kind="stable")[:, :k]
    return out


def _linked(a, b) -> np.ndarray:
    """Whether rows of a and b (index arrays (T, k)) share an index."""
    return (a[:, :, None] == b[:, None, :]).any(axis=(1, 2))


def _linkability(ori, syn, ctl, is_cat, halves, n_attacks, n_neighbors, level, key, link_columns):
    rng = _rng(key, "linkability")
    shuffle = rng.permutation(len(syn))
    counts = []
    for data in (ori, ctl):
        targets = data[rng.permutation(len(data))[:min(n_attacks, len(data))]]
        a = _nearest(targets, syn, halves[0], is_cat, n_neighbors, shuffle)
        b = _nearest(targets, syn, halves[1], is_cat, n_neighbors, shuffle)
        counts.append((len(targets), int(_linked(a, b).sum())))
    n_base, k = counts[0][0], min(n_neighbors, len(syn))
    guesses = [np.stack([rng.choice(len(syn), k, replace=False) for _ in range(n_base)]) for _ in range(2)]
    k_baseline = int(_linked(*guesses).sum())
    return _result("linkability", counts[0][0], counts[0][1], counts[1][0], counts[1][1], n_base, k_baseline, level,
                   columns=tuple(tuple(h) for h in link_columns))


def _inference(ori, syn, ctl, is_cat, secret: int, n_attacks, tolerance, level, key, aux_names):
    rng = _rng(key, "inference")
    shuffle = rng.permutation(len(syn))
    aux = [j for j in range(ori.shape[1]) if j != secret]

    def correct(guess, truth):
        if is_cat[secret]:
            return guess == truth
        return np.abs(guess - truth) / (np.abs(guess) + 1e-12) <= tolerance

    counts = []
    for data in (ori, ctl):
        targets = data[rng.permutation(len(data))[:min(n_attacks, len(data))]]
        guess = syn[_nearest(targets, syn, aux, is_cat, 1, shuffle)[:, 0], secret]
        counts.append((len(targets), int(correct(guess, targets[:, secret]).sum())))
        if data is ori:
            n_base = min(len(syn), len(targets))
            k_baseline = int(correct(syn[rng.permutation(len(syn))[:n_base], secret], targets[:n_base, secret]).sum())
    return _result("inference", counts[0][0], counts[0][1], counts[1][0], counts[1][1], n_base, k_baseline, level,
                   columns=aux_names)
