"""A recommended release: the setting that keeps the most utility among those that meet the
data steward's risk targets, with the evidence (every setting tried, the Pareto frontier) and
the exact command that writes it.

    rec = recommend(con, "people.csv", ["age", "income"], targets={"linkage_rate": 0.05},
                    k=(3, 5, 10), eps=(0.0, 0.1, 0.2, 0.3), q=(0.5, 1.0), key=my_secret,
                    key_file="secret.key")
    rec.k, rec.eps, rec.q, rec.command, print(rec.summary()), rec.to_dict()
    recommend(con, "people.csv", method="rp", sensitive="diagnosis", epsilon=0.5, delta=0.1)

RWN (recommend_rwn): every (k, eps, q) of the grids is swept by tune.sweep (one sweep per
(k, q), its eps grid at once; `reps` releases per setting, release r drawn with the key key#r)
and scored by the mean and standard deviation of every measure over its releases.

The rule a setting must pass, for every target: mean + margin * sd <= target for a risk where
lower is safer (linkage_rate, sdid, unique_survival), mean - margin * sd >= target for
dcr_mean (higher is safer), with sd the standard deviation of ONE release's value over the
`reps` releases (not the standard error of their mean): the release published is one draw, and
it should meet the targets, not only the average release does (margin 2: about 97.7 % of
single releases, were the values normal). With a key (key= or seed=), the release the printed
command writes (perturb with that very key) is then evaluated, paired by its key, and must meet
every target by its own values; a setting whose own release misses one is passed over (said in
the notes) for the next best. Without a key the command's release is a fresh draw, which the
rule covers only statistically (said in the notes).

Attack-risk targets (ATTACK_TARGETS: singling_out, linkability, inference; upper limits on
the risk of rwn_sql.evaluation.attacks.attack_risk, Anonymeter's attacks): an attack target is
met when the UPPER end of the attack's confidence interval (95 %) is at or below it, robust as
the margin rule is for the other targets. The attacks need a control set, records of the same
population held out of the release: `control` (a source), or `holdout` (default 0.2): that
share of the source's records (rounded), the ones first in the keyed order of (key,
"recommend/holdout", input position), are held out. Attacks are too slow for every release of
every setting, so they run only for the candidates: the settings meeting the other targets
(every setting when there are none), best utility first; for each, the records not held out
(with `control`: the whole source) are released by perturb at that setting with the key, and
attack_risk(original = those records, released = that release, control, the RWN columns,
key) must meet every attack target, else the next candidate is tried (said in the notes). The
recommended command still releases ALL records: with a holdout, the attacks were measured on
the release of the other records (Anonymeter's practice). Attack targets need a key (key=,
seed= or key_file=): the holdout and the attacks are drawn with it, so they can be re-run.

When no setting passes, NoSettingMeetsTargets (an RWNError) names, per target, the best
value reached and the setting reaching it: the nearest achievable targets (for an attack
target, the lowest upper confidence bound among the candidates attacked).
"""
from __future__ import annotations

import csv
import io
import json
import math
import shlex
from dataclasses import dataclass, field

import numpy as np

from ..errors import RWNError
from ..identifiers import quote_ident
from ..randomness import read_key_file, resolve_key
from ..rwn import run as rwn
from ..rwn.spec import MAX_COUNT, finite_number
from ..evaluation.report_values import plain
from ..evaluation.tune import HIGHER_IS_BETTER, MAX_SETTINGS, MEASURES, measures_of, sweep

__all__ = ["Recommendation", "NoSettingMeetsTargets", "recommend", "recommend_rwn", "TARGETS", "ATTACK_TARGETS"]

METHODS = ("rwn", "rp")

# The risk targets recommend_rwn meets: name (a tune.MEASURES risk) -> (bound, what it limits).
# "max": the measure must stay at or below the target (lower is safer); "min": at or above it.
TARGETS = {
    "linkage_rate": ("max", "share of released records whose nearest original record is their own source"),
    "sdid": ("max", "share of records whose original values all lie within one sd of their released values"),
    "unique_survival": ("max", "share of the original's unique records whose values a released record repeats"),
    "dcr_mean": ("min", "mean distance (scaled) from an original record to the closest released record"),
}
# The attack risks (rwn_sql.evaluation.attacks.attack_risk) a recommendation can limit: name ->
# what it measures. Met when the upper end of the attack's confidence interval is within the target.
ATTACK_TARGETS = {
    "singling_out": "multivariate singling out: predicates from the release that isolate one original record",
    "linkability": "linking two halves of an original record's columns through the release",
    "inference": "guessing the secret column of an original record from its other columns",
}
HOLDOUT_PURPOSE = "recommend/holdout"       # the keyed hash of (key, purpose, input position)
DEFAULT_HOLDOUT = 0.2
KEPT_TABLE = "__rwn_recommend_kept"         # with a holdout: the records released for the attacks
HELD_TABLE = "__rwn_recommend_held"         # ... and those held out, the attacks' control
ATTACK_TABLE = "__rwn_recommend_attacked"   # the release the attacks are run against
# The utilities a recommendation can optimise: the tune.MEASURES utilities but ols_r2 (the
# released R^2 is best when closest to the original's, neither the higher nor the lower).
UTILITIES = tuple(m for m in measures_of("utility") if m != "ols_r2")
CHECK_TABLE = "__rwn_recommend_check"      # the release the command writes, for its check


class NoSettingMeetsTargets(RWNError):
    """No setting of the grid meets the targets. `nearest`: per target, the best bound
    reached (the rule's mean +- margin sd), its mean and the setting reaching it;
    `settings`: every setting tried (SettingRow)."""

    def __init__(self, message: str, nearest: dict, settings: tuple):
        super().__init__(message)
        self.nearest, self.settings = nearest, settings


@dataclass(frozen=True)
class SettingRow:
    """One (k, eps, q) tried: the (mean, sd) of every measure over its releases, the rule's
    bound of every targeted risk, whether it meets all targets and lies on the Pareto frontier
    (no other setting has a utility as good and every targeted risk as low, one of them lower)."""
    k: int
    eps: float
    q: float
    measures: dict
    bounds: dict
    meets: bool
    frontier: bool

    def label(self) -> str:
        return f"k={self.k}, eps={self.eps:g}, q={self.q:g}"

    def to_dict(self) -> dict:
        return {"k": self.k, "eps": self.eps, "q": self.q, "meets": self.meets, "frontier": self.frontier,
                "measures": {m: {"mean": _plain_float(v[0]), "sd": _plain_float(v[1])} for m, v in self.measures.items()},
                "bounds": {m: _plain_float(v) for m, v in self.bounds.items()}}


@dataclass(frozen=True)
class Recommendation:
    """The recommended RWN setting (k, eps, q) and its evidence: `measures` its (mean, sd) of
    every measure over `reps` releases; `checked` the measures of the release the `command`
    writes (perturb with the key; None without one); `settings` every setting tried, with which
    meet the targets and which lie on the Pareto frontier (`frontier()`). With attack targets
    (`attack_targets`, apart from `targets`): `attacks` the chosen setting's
    attacks.AttackRisk (risk and ci per attack) and `control` the attacks' control (source or
    holdout fraction, its records and those released for the attacks)."""
    method: str
    source: str
    columns: tuple
    k: int
    eps: float
    q: float
    utility: str
    targets: dict
    margin: float
    reps: int
    measures: dict
    checked: dict | None
    settings: tuple
    command: str
    notes: tuple = field(default=())
    attack_targets: dict = field(default_factory=dict)
    attacks: object = None                  # the chosen setting's AttackRisk, with attack targets
    control: dict | None = None             # the attacks' control: source or holdout, its records
    attacked: dict = field(default_factory=dict)    # (k, eps, q) -> AttackRisk of every setting attacked

    def frontier(self) -> list:
        """The settings on the Pareto frontier of the utility against the targeted risks."""
        return [s for s in self.settings if s.frontier]

    def to_dict(self) -> dict:
        """Plain dicts, lists, str, int, float, bool and None (JSON); NaN becomes None."""
        return {"method": self.method, "source": self.source, "columns": list(self.columns),
                "setting": {"k": self.k, "eps": self.eps, "q": self.q},
                "utility": {"measure": self.utility, "mean": _plain_float(self.measures[self.utility][0]),
                            "sd": _plain_float(self.measures[self.utility][1]),
                            "higher_is_better": self.utility in HIGHER_IS_BETTER},
                "targets": {name: {"limit": TARGETS[name][0], "value": value,
                                   "mean": _plain_float(self.measures[name][0]), "sd": _plain_float(self.measures[name][1]),
                                   "bound": _plain_float(_bound(self.measures[name], name, self.margin)),
                                   "release": _plain_float(self.checked[name]) if self.checked else None}
                            for name, value in self.targets.items()},
                "rule": {"margin": self.margin, "reps": self.reps, "release_checked": self.checked is not None},
                "measures": {m: {"mean": _plain_float(v[0]), "sd": _plain_float(v[1])} for m, v in self.measures.items()},
                "release": {m: _plain_float(v) for m, v in self.checked.items()} if self.checked else None,
                "attack_targets": {name: _attack_entry(self.attacks, name, value)
                                   for name, value in self.attack_targets.items()},
                "attacks": self.attacks.to_dict() if self.attacks is not None else None,
                "control": dict(self.control) if self.control else None,
                "settings": [dict(s.to_dict(), attacks=_attack_bounds(self.attacked.get(_at(s)), self.attack_targets))
                             for s in self.settings], "command": self.command,
                "notes": list(self.notes)}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def summary(self) -> str:
        """The recommendation as text: the setting, its targets met, the frontier, the command."""
        return _summary(self)


def _attack_bounds(ar, attack_targets: dict) -> dict | None:
    """The upper ends of the targeted attacks' confidence intervals of a setting (None when its
    attacks were not run: only candidates meeting the other targets are attacked, best first)."""
    if ar is None:
        return None
    return {name: _plain_float(getattr(ar, name).ci[1]) for name in attack_targets}


def _attack_entry(ar, name: str, limit: float) -> dict:
    res = getattr(ar, name)
    return {"limit": "max", "value": limit, "risk": _plain_float(res.risk), "ci": [_plain_float(v) for v in res.ci],
            "confidence_level": res.confidence_level, "met": res.ci[1] <= limit}


def _plain_float(v):
    """A measure as a plain float (report_values.plain of it), None when missing, NaN or infinite."""
    return None if v is None else plain(float(v))


# ----------------------------------------------------------------------------- entry points

def recommend(con, source, *args, method: str = "rwn", **options):
    """A recommended release of `source`, for `method` "rwn" (recommend_rwn: the (k, eps, q)
    with the best utility among those meeting the risk targets, a Recommendation) or "rp"
    (rwn_sql.recommendation.rp.recommend_retention: the largest retention p meeting
    (epsilon, delta)-reconstruction privacy, and its options: sensitive, epsilon, delta, public,
    domain, rho, ldp, l_diversity, max_top_share, output, key_file). RWN's arguments:
    recommend(con, source, columns, targets, k=(3, 5, 10), eps=(0.0, 0.1, 0.2, 0.3),
    q=(0.5, 1.0), utility="corr_mad", reps=10, margin=2.0, key=..., key_file=...), with targets
    such as {"linkage_rate": 0.05, "sdid": 0.8}: a setting meets a target when the mean over its
    releases plus margin standard deviations of one release is within it; attack targets
    {"singling_out": 0.1, "linkability": 0.05, "inference": 0.3} (with a key, and control= or
    holdout=) when the upper end of the attack's confidence interval is. Both carry the exact
    rwn-sql command that writes the release, to_dict() and summary(). Raises RWNError on bad input, and when no setting meets the targets (naming
    the nearest achievable ones)."""
    if method == "rwn":
        return recommend_rwn(con, source, *args, **options)
    if method == "rp":
        from .rp import recommend_retention  # loaded on use
        return recommend_retention(con, source, *args, **options)
    raise RWNError(f"method must be one of {', '.join(METHODS)} (RWN, or reconstruction privacy's retention p), "
                   f"got {method!r}")


def recommend_rwn(con, source, columns, targets, k=(3, 5, 10), eps=(0.0, 0.1, 0.2, 0.3), q=(0.5, 1.0),
                  utility: str = "corr_mad", reps: int = 10, margin: float = 2.0, scale: str = "minmax",
                  categorical=(), strata=(), target: str | None = None, key: str | None = None,
                  seed: int | None = None, key_file=None, output: str = "release.parquet",
                  progress=None, control=None, holdout: float | None = None, secret: str | None = None,
                  n_attacks: int = 500) -> Recommendation:
    """The RWN setting (k, eps, q) of the grids whose mean `utility` over `reps` releases is
    best among the settings meeting every risk target, found with tune.sweep (one sweep per
    (k, q)).

    `targets`: {risk measure: limit}, at least one: linkage_rate, sdid, unique_survival at most
    the limit (in [0, 1]), dcr_mean at least it (>= 0); TARGETS describes them. The attack risks
    singling_out, linkability and inference (ATTACK_TARGETS, in [0, 1]) limit the risks of
    attacks.attack_risk; other names are refused with the list. A setting meets a target when
    mean + margin * sd over its releases (mean - margin * sd for dcr_mean) is within it, sd
    that of one release (`reps` >= 2; margin >= 0, default 2); an attack target when the upper
    end of the attack's 95 % confidence interval is within it. `utility`: the measure optimised
    (UTILITIES; ols_* need `target`, a numeric column to regress); lower is better but for
    ols_ci_overlap.
    Grids `k`, `eps`, `q`: non-empty lists of values each RWNSpec accepts (at most
    tune.MAX_SETTINGS settings in all). `scale`, `categorical`, `strata`: as perturb's.
    Keys: `key` (or `seed`, experiments only; or `key_file`, a path the key is read from) keys
    the sweep (release r with key#r); with a key the release the command writes, perturb with
    that key, is evaluated (paired by the key) and must meet every target itself, else the next
    best setting is taken. The `command` names `key_file` (--key-file), or --seed, never the key;
    without either, a placeholder KEY_FILE. `output`: the OUTPUT of the command.
    `progress(done, total, label)`: as tune.sweep's, over the whole grid.
    With attack targets (they need a key): `control`, a source of records of the same population
    held out of the release, or `holdout` (a fraction in (0, 1), default 0.2): the share of the
    source's records held out, chosen by the keyed hash of (key, "recommend/holdout", input
    position); `secret` the inference attack's column (default: attack_risk's, the last of
    `columns`); `n_attacks` attack_risk's. The candidates (settings meeting the other targets,
    best utility first) are attacked in turn: the records not held out released at the setting
    with the key, attacked against the control; the first meeting every attack target is
    recommended (the module's docstring). The command releases all records.

    Raises NoSettingMeetsTargets (an RWNError) naming the nearest achievable targets when no
    setting meets them; RWNError on bad input, before any work."""
    plan = _Plan(con, source, columns, targets, k, eps, q, utility, reps, margin, scale, categorical, strata,
                 target, key, seed, key_file, output, control, holdout, secret, n_attacks)
    rows = _settings(plan, progress)
    ranked = sorted((r for r in rows if r.meets), key=lambda r: (_loss(r, utility), r.k, r.eps, r.q))
    if not ranked:
        raise NoSettingMeetsTargets(*_nearest_message(plan, rows), tuple(rows))
    attacked = {}
    try:
        if plan.attack_targets:
            plan.control_info = _prepare_control(plan)
        chosen, checked, notes = _checked_choice(plan, ranked, attacked, progress)
    finally:
        for t in (KEPT_TABLE, HELD_TABLE, ATTACK_TABLE):
            plan.con.execute(f"DROP TABLE IF EXISTS {quote_ident(t)}").fetchall()
    if chosen is None:
        raise NoSettingMeetsTargets(*_nearest_message(plan, rows, notes, attacked), tuple(rows))
    if plan.attack_targets:
        info = plan.control_info
        notes.append(("the attacks were run on the release (at this setting, with the key) of the "
                      f"{info['released_rows']} records not held out, against the {info['rows']} held out "
                      f"(holdout {info['holdout']:g}, chosen by the keyed hash) as control; the command releases all "
                      f"{info['released_rows'] + info['rows']} records (Anonymeter's practice)")
                     if info["holdout"] is not None else
                     f"the attacks were run on the release the command writes, against the control {info['source']} "
                     f"({info['rows']} records)")
    if plan.key is not None and plan.key_file is None and plan.seed is None:
        notes.append("the command's --key-file KEY_FILE stands for a file holding the key given (key=)")
    if plan.key is None:
        notes.append("no key was given: the command's release is a fresh draw, not checked; the rule "
                     f"(mean {'+-'} {margin:g} sd) makes a release meeting the targets likely, not certain")
    return Recommendation(method="rwn", source=plan.label, columns=plan.columns, k=chosen.k, eps=chosen.eps,
                          q=chosen.q, utility=utility, targets=dict(plan.targets), margin=plan.margin,
                          reps=plan.reps, measures=chosen.measures, checked=checked, settings=tuple(rows),
                          command=perturb_command(plan, chosen), notes=tuple(notes),
                          attack_targets=dict(plan.attack_targets), attacks=attacked.get(_at(chosen)),
                          control=plan.control_info, attacked=dict(attacked))


# ----------------------------------------------------------------------------- checks

class _Plan:
    """recommend_rwn's parameters, checked before any work."""

    def __init__(self, con, source, columns, targets, k, eps, q, utility, reps, margin, scale, categorical,
                 strata, target, key, seed, key_file, output, control=None, holdout=None, secret=None,
                 n_attacks=500):
        self.con, self.source = con, source
        self.columns = tuple([columns] if isinstance(columns, str) else columns or ())
        self.categorical, self.strata = tuple(categorical or ()), tuple(strata or ())
        every = check_targets(targets)
        self.targets = {n: v for n, v in every.items() if n in TARGETS}
        self.attack_targets = {n: v for n, v in every.items() if n in ATTACK_TARGETS}
        self.control_info = None
        self.utility = check_utility(utility, target)
        numeric = [c for c in self.columns if c not in self.categorical]
        if utility in ("corr_mad", "pca_loading_mad") and self.columns and len(numeric) < 2:
            raise RWNError(f"the utility {utility} compares correlations, which needs two numeric columns (here "
                           f"{len(numeric)}): choose ks_max (each column's distribution) instead")
        if isinstance(reps, bool) or not isinstance(reps, int) or not 2 <= reps <= MAX_COUNT:
            raise RWNError(f"reps must be an integer >= 2 (the rule needs the spread of the releases), got {reps!r}")
        margin = finite_number(margin, "margin")
        if margin < 0:
            raise RWNError(f"margin must be >= 0 (standard deviations of one release), got {margin!r}")
        self.reps, self.margin, self.scale, self.target = reps, margin, scale, target
        self.ks = _grid(k, "k", whole=True)
        self.eps = sorted(set(_grid(eps, "eps")))
        self.qs = _grid(q, "q")
        total = len(self.ks) * len(self.eps) * len(self.qs)
        if total > MAX_SETTINGS:
            raise RWNError(f"the grids hold {total} settings; at most {MAX_SETTINGS} are allowed (each is {reps} "
                           f"releases): use fewer values")
        for kv in self.ks:          # every setting's parameters, as perturb would check them
            for qv in self.qs:
                for ev in self.eps:
                    rwn.spec(self.columns, categorical=self.categorical, k=kv, eps=ev, q=qv, scale=scale,
                             strata=self.strata)
        if key is None and seed is None and key_file is not None:
            key = read_key_file(key_file)
        self.key = resolve_key(key, seed) if key is not None or seed is not None else None
        self.seed, self.key_file, self.output = seed, key_file, output
        self.label = source if isinstance(source, str) else getattr(source, "label", "the source")
        self.control, self.holdout, self.secret, self.n_attacks = _check_attack_options(
            self, control, holdout, secret, n_attacks)


def _check_attack_options(plan: _Plan, control, holdout, secret, n_attacks):
    """(control, holdout, secret, n_attacks) checked against the attack targets, before any work."""
    if not plan.attack_targets:
        given = [n for n, v in (("control", control), ("holdout", holdout), ("secret", secret)) if v is not None]
        if given:
            raise RWNError(f"{given[0]}= (--{given[0]}) is for the attack targets (singling_out, linkability, "
                           f"inference: --max-singling-out, --max-linkability, --max-inference); give one")
        return None, None, None, n_attacks
    from ..evaluation import attacks
    if plan.key is None:
        raise RWNError("attack targets need a key (key=, key_file= / --key-file, or seed= / --seed for "
                       "experiments): the holdout and the attacks are drawn with it, so that they can be re-run")
    if control is not None and holdout is not None:
        raise RWNError("give either control= (--control, records held out of the release) or holdout= "
                       "(--holdout, a share of the source held out), not both")
    if control is None:
        holdout = DEFAULT_HOLDOUT if holdout is None else finite_number(holdout, "holdout")
        if not 0 < holdout < 1:
            raise RWNError(f"holdout must be a fraction strictly between 0 and 1 (the share of the records held "
                           f"out of the release as the attacks' control), got {holdout!r}")
    if len(plan.columns) < 2:
        wanted = [n for n in plan.attack_targets if n != "singling_out"]
        if wanted:
            raise RWNError(f"the {wanted[0]} attack needs two columns or more (here {len(plan.columns)}): "
                           f"leave its target out")
    if secret is not None and secret not in plan.columns:
        raise RWNError(f"secret {secret!r} is not among columns {list(plan.columns)}: the inference attack "
                       f"guesses the secret column from the others")
    attacks._count(n_attacks, "n_attacks", 1, attacks.MAX_ATTACKS)
    if control is not None:
        from ..engines import sources
        src = sources.resolve_source(plan.con, control)
        sources.require_columns(src, plan.columns, "columns", where=f"the control data, {src.label}")
    return control, holdout, secret, n_attacks


def check_targets(targets) -> dict:
    """{name: limit} checked: known names, finite limits in range; at least one."""
    if not isinstance(targets, dict) or not targets:
        raise RWNError("targets: give at least one risk target as {name: limit}, such as {'linkage_rate': 0.05}; "
                       "known: " + _known_targets())
    out = {}
    for name, value in targets.items():
        if name not in TARGETS and name not in ATTACK_TARGETS:
            raise RWNError(f"unknown target {name!r}; known targets: " + _known_targets())
        value = finite_number(value, f"target {name}")
        if (name in ATTACK_TARGETS or TARGETS[name][0] == "max") and not 0 <= value <= 1:
            raise RWNError(f"target {name} is a share: give a limit in [0, 1], got {value!r}")
        if value < 0:
            raise RWNError(f"target {name} is a distance: give a limit >= 0, got {value!r}")
        out[name] = value
    return out


def _known_targets() -> str:
    return (", ".join(f"{n} ({'at most' if b == 'max' else 'at least'}: {w})" for n, (b, w) in TARGETS.items())
            + "; attack risks (at most, by the upper end of the confidence interval): "
            + ", ".join(f"{n} ({w})" for n, w in ATTACK_TARGETS.items()))


def check_utility(utility, target) -> str:
    if utility not in UTILITIES:
        raise RWNError(f"utility {utility!r} is not a measure recommend optimises: choose among "
                       f"{', '.join(UTILITIES)}")
    if utility.startswith("ols_") and target is None:
        raise RWNError(f"the utility {utility!r} needs target= (--target), a numeric column to regress")
    return utility


def _grid(values, name: str, whole: bool = False) -> list:
    if isinstance(values, (int, float)) and not isinstance(values, bool):
        values = [values]
    try:
        values = list(values)
    except TypeError:
        raise RWNError(f"the {name} grid must be a list of numbers, got {values!r}") from None
    if not values:
        raise RWNError(f"the {name} grid is empty: give at least one value")
    out = []
    for v in values:
        v = finite_number(v, f"each value of the {name} grid")
        if whole:
            if not v.is_integer() or not 0 <= v <= MAX_COUNT:
                raise RWNError(f"each value of the k grid must be a whole number >= 0, got {v!r}")
            v = int(v)
        if v not in out:
            out.append(v)
    return out


# ----------------------------------------------------------------------------- the search

def _settings(plan: _Plan, progress) -> list:
    """Every setting swept, with its bounds, whether it meets the targets, and the frontier."""
    total = len(plan.ks) * len(plan.qs) * len(plan.eps) * plan.reps
    done = [0]
    found = []
    for kv in plan.ks:
        for qv in plan.qs:
            offset = done[0]

            def step(d, _t, label, offset=offset, kv=kv, qv=qv):
                done[0] = offset + d
                if progress:
                    progress(done[0], total, f"k={kv}, q={qv:g}: {label}")
            result = sweep(plan.con, plan.source, plan.columns, plan.eps, k=kv, q=qv, reps=plan.reps,
                           scale=plan.scale, target=plan.target, categorical=plan.categorical, strata=plan.strata,
                           key=plan.key, progress=step)
            done[0] = offset + len(plan.eps) * plan.reps
            found += [(kv, s.value, qv, s.measures) for s in result.settings]
    for name in plan.targets:
        if all(m[name][0] is None for *_, m in found):
            raise RWNError(f"the risk {name} is not defined on this data"
                           + (" (no original record is unique on the columns)" if name == "unique_survival" else "")
                           + ": leave its target out")
    if all(m[plan.utility][0] is None for *_, m in found):
        raise RWNError(f"the utility {plan.utility} is not defined on this data (corr_mad and pca_loading_mad need "
                       f"two numeric columns): choose another among {', '.join(UTILITIES)}")
    rows = []
    for kv, ev, qv, m in found:
        bounds = {name: _bound(m[name], name, plan.margin) for name in plan.targets}
        meets = m[plan.utility][0] is not None and all(_within(b, name, plan.targets[name])
                                                       for name, b in bounds.items())
        rows.append(SettingRow(kv, ev, qv, m, bounds, meets, False))
    return _with_frontier(rows, plan)


def _bound(stat, name: str, margin: float):
    """The rule's bound of a risk: mean + margin sd (mean - margin sd for a 'min' target)."""
    mean, sd = stat
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return None
    spread = margin * (sd or 0.0)
    return mean - spread if TARGETS[name][0] == "min" else mean + spread


def _within(value, name: str, limit: float) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    return value >= limit if TARGETS[name][0] == "min" else value <= limit


def _loss(row: SettingRow, utility: str) -> float:
    """The utility as a loss (lower is better); a setting without it is last."""
    mean = row.measures[utility][0]
    if mean is None or math.isnan(mean):
        return math.inf
    return -mean if utility in HIGHER_IS_BETTER else mean


def _with_frontier(rows: list, plan: _Plan) -> list:
    """The rows with `frontier` set: no other row is at least as good on the utility (as a
    loss) and every targeted risk (its mean, as a loss), and better on one."""
    def point(r):
        risks = [r.measures[n][0] for n in plan.targets]
        risks = [math.inf if v is None or math.isnan(v) else (-v if TARGETS[n][0] == "min" else v)
                 for n, v in zip(plan.targets, risks)]
        return np.array([_loss(r, plan.utility)] + risks)
    points = [point(r) for r in rows]
    out = []
    for i, r in enumerate(rows):
        dominated = any(np.all(p <= points[i]) and np.any(p < points[i]) for j, p in enumerate(points) if j != i)
        out.append(SettingRow(r.k, r.eps, r.q, r.measures, r.bounds, r.meets, not dominated))
    return out


def _at(row: SettingRow) -> tuple:
    return row.k, row.eps, row.q


def _checked_choice(plan: _Plan, ranked: list, attacked: dict, progress=None):
    """(setting, measures of its own release, notes): the best ranked setting whose release with
    the key (the command's) meets every target and, with attack targets, whose attacks
    (attack_measures, kept in `attacked` by setting) meet them; without a key the best one,
    unchecked."""
    notes = []
    if plan.key is None:
        return ranked[0], None, notes
    for i, row in enumerate(ranked):
        values = None
        if plan.targets:
            values = release_measures(plan, row)
            missed = [f"{n} {values[n]:.4g}" for n in plan.targets if not _within(values[n], n, plan.targets[n])]
            if missed:
                notes.append(f"{row.label()} met the rule, but the release the command writes with the key had "
                             f"{', '.join(missed)}, beyond the targets: the next best setting was taken")
                continue
        if plan.attack_targets:
            if progress:
                _report(progress, i, len(ranked), f"attacks at {row.label()}", "candidates attacked")
            ar = attacked[_at(row)] = attack_measures(plan, row)
            missed = [f"{n} {getattr(ar, n).ci[1]:.4g}" for n, v in plan.attack_targets.items()
                      if not getattr(ar, n).ci[1] <= v]
            if missed:
                notes.append(f"{row.label()} met the other targets, but its attacks' upper confidence bounds were "
                             f"{', '.join(missed)}, beyond the attack targets: the next best setting was taken")
                continue
        if values is None and not plan.targets:
            values = release_measures(plan, row)
        return row, values, notes
    return None, None, notes


def _report(progress, done: int, total: int, label: str, unit: str) -> None:
    """progress(done, total, label), with the unit counted when it is tune's ProgressBar (a
    caller's own callback keeps the documented three arguments)."""
    from ..evaluation.tune import ProgressBar
    if isinstance(progress, ProgressBar):
        progress(done, total, label, unit=unit)
    else:
        progress(done, total, label)


def _release_into(plan: _Plan, row: SettingRow, source, table: str) -> None:
    """perturb of `source` at the row's setting with the key, in keyed order (its statement,
    into a TEMP table of the connection, so that nothing is written to the caller's database)."""
    from ..engines import duckdb as engine, duckdb_backend
    from ..randomness import key_scope
    be = duckdb_backend.DuckDBBackend(plan.con)
    spec = rwn.spec(plan.columns, categorical=plan.categorical, k=row.k, eps=row.eps, q=row.q, scale=plan.scale,
                    strata=plan.strata)
    src = rwn.check_source(be, source, spec)
    with key_scope(be, lasting=False):
        prepared = rwn.prepare(be, src, spec, "perturb", be.key_sql(plan.key), order="keyed")
        try:
            engine.run(plan.con, f"CREATE OR REPLACE TEMP TABLE {quote_ident(table)} AS {prepared.sql}")
        finally:
            rwn.forget(be, prepared.staged)


def release_measures(plan: _Plan, row: SettingRow) -> dict:
    """Every tune.MEASURES measure of the release the command writes at the row's setting:
    perturb with the key, in keyed order (_release_into), evaluated against the source paired
    by the key."""
    from ..evaluation.evaluate import evaluate
    try:
        _release_into(plan, row, plan.source, CHECK_TABLE)
        ev = evaluate(plan.con, plan.source, CHECK_TABLE, plan.columns, target=plan.target,
                      categorical=plan.categorical, key=plan.key)
    finally:
        plan.con.execute(f"DROP TABLE IF EXISTS {quote_ident(CHECK_TABLE)}").fetchall()
    return {name: get(ev) for name, (_, get) in MEASURES.items()}


def _prepare_control(plan: _Plan) -> dict:
    """The attacks' control: `control` as given (the original attacked: the whole source), or
    the holdout: TEMP tables KEPT_TABLE (the records not held out, in input order) and
    HELD_TABLE (the round(holdout * n) records first in the keyed order of (key,
    HOLDOUT_PURPOSE, 1-based input position), in input order). Returns the control's facts."""
    from ..engines import duckdb as engine, duckdb_backend, sources
    from ..engines.dialects import DUCKDB
    from ..randomness import key_scope, order_key_sql
    if plan.holdout is None:
        src = sources.resolve_source(plan.con, plan.control)
        rows = plan.con.execute(f"SELECT count(*) FROM {src.sql}").fetchall()[0][0]
        released = plan.con.execute(
            f"SELECT count(*) FROM {sources.resolve_source(plan.con, plan.source).sql}").fetchall()[0][0]
        plan.attack_original, plan.attack_control = plan.source, plan.control
        return {"source": src.label, "holdout": None, "rows": rows, "released_rows": released}
    be = duckdb_backend.DuckDBBackend(plan.con)
    src = sources.resolve_source(plan.con, plan.source)
    n = plan.con.execute(f"SELECT count(*) FROM {src.sql}").fetchall()[0][0]
    held = holdout_size(n, plan.holdout)
    if held < 1 or held >= n:
        raise RWNError(f"holdout {plan.holdout:g} of {n} records holds out {held}: the attacks need records both "
                       f"held out and released; give another fraction or control= (--control)")
    kept, out = quote_ident(KEPT_TABLE), quote_ident(HELD_TABLE)
    with key_scope(be, lasting=False):
        order = order_key_sql(be.key_sql(plan.key), HOLDOUT_PURPOSE, "__rwn_position")
        engine.run(plan.con, f"CREATE OR REPLACE TEMP TABLE {out} AS SELECT * FROM ("
                             f"SELECT row_number() OVER () AS __rwn_position, * FROM {src.sql}) "
                             f"ORDER BY {order}, __rwn_position LIMIT {held}")
    numbered = f"(SELECT row_number() OVER () AS __rwn_position, * FROM {src.sql})"
    rest = DUCKDB.star("", ["__rwn_position"])
    engine.run(plan.con, f"CREATE OR REPLACE TEMP TABLE {kept} AS SELECT {rest} FROM {numbered} "
                         f"WHERE __rwn_position NOT IN (SELECT __rwn_position FROM {out}) ORDER BY __rwn_position")
    engine.run(plan.con, f"CREATE OR REPLACE TEMP TABLE {out} AS SELECT {rest} FROM {out} "
                         f"ORDER BY __rwn_position")
    plan.attack_original, plan.attack_control = KEPT_TABLE, HELD_TABLE
    return {"source": None, "holdout": plan.holdout, "rows": held, "released_rows": n - held}


def holdout_size(n: int, fraction: float) -> int:
    """The records a holdout of `fraction` holds out of n: round(fraction * n), half up."""
    return int(math.floor(fraction * n + 0.5))


def holdout_positions(con, source, key: str, fraction: float) -> list:
    """The 1-based input positions of the records recommend's holdout holds out of `source`
    with `key`, in input order (randomness.keyed_order's first round(fraction * n); in Python,
    for checks)."""
    from ..engines import sources
    from ..randomness import keyed_order
    n = con.execute(f"SELECT count(*) FROM {sources.resolve_source(con, source).sql}").fetchall()[0][0]
    return sorted(keyed_order(key, HOLDOUT_PURPOSE, n)[:holdout_size(n, fraction)])


def attack_measures(plan: _Plan, row: SettingRow):
    """attacks.attack_risk of the release at the row's setting (with the key) of the records
    attacked (with a holdout the records not held out, else the source) against the control."""
    from ..evaluation.attacks import attack_risk
    try:
        _release_into(plan, row, plan.attack_original, ATTACK_TABLE)
        return attack_risk(plan.con, plan.attack_original, ATTACK_TABLE, plan.attack_control, plan.columns,
                           secret=plan.secret, categorical=plan.categorical, n_attacks=plan.n_attacks,
                           key=plan.key)
    finally:
        plan.con.execute(f"DROP TABLE IF EXISTS {quote_ident(ATTACK_TABLE)}").fetchall()


# ----------------------------------------------------------------------------- refusal

def _nearest_message(plan: _Plan, rows: list, notes=(), attacked=None):
    """(message, nearest): per target the best bound reached and the setting reaching it."""
    if attacked:
        return _nearest_attack_message(plan, rows, notes, attacked)
    nearest = {}
    parts = []
    for name, limit in plan.targets.items():
        defined = [r for r in rows if r.bounds[name] is not None]
        if not defined:
            continue
        best = (max if TARGETS[name][0] == "min" else min)(defined, key=lambda r: r.bounds[name])
        mean, sd = best.measures[name]
        nearest[name] = {"target": limit, "bound": best.bounds[name], "mean": mean, "sd": sd,
                         "k": best.k, "eps": best.eps, "q": best.q}
        sign = "-" if TARGETS[name][0] == "min" else "+"
        parts.append(f"{name} {'>=' if TARGETS[name][0] == 'min' else '<='} {best.bounds[name]:.4g} "
                     f"(mean {mean:.4g} {sign} {plan.margin:g} sd; asked {limit:g}) at {best.label()}")
    each = all(any(_within(r.bounds[n], n, plan.targets[n]) for r in rows) for n in plan.targets)
    jointly = " each target is met by some setting, but none meets them all at once;" if each and \
        len(plan.targets) > 1 else ""
    checked = " " + "; ".join(notes) + "." if notes else ""
    message = (f"no setting of the grid (k {_values(plan.ks)}; eps {_values(plan.eps)}; q {_values(plan.qs)}; "
               f"{plan.reps} releases each) meets the targets by the rule mean {'+-'} {plan.margin:g} sd;{jointly}"
               f"{checked} nearest achievable targets: " + "; ".join(parts)
               + ". Widen the grid towards more perturbation (larger k or eps, q nearer 1), or relax the targets")
    return message, nearest


def _nearest_attack_message(plan: _Plan, rows: list, notes, attacked: dict):
    """(message, nearest) when settings meet the other targets but none of them the attack
    targets: per attack target the lowest upper confidence bound among the candidates attacked."""
    nearest, parts = {}, []
    by_setting = {_at(r): r for r in rows}
    for name, limit in plan.attack_targets.items():
        at, ar = min(attacked.items(), key=lambda item: (getattr(item[1], name).ci[1], item[0]))
        res = getattr(ar, name)
        nearest[name] = {"target": limit, "ci_upper": res.ci[1], "risk": res.risk, "ci": res.ci,
                         "k": at[0], "eps": at[1], "q": at[2]}
        parts.append(f"{name} <= {res.ci[1]:.4g} (risk {res.risk:.4g}, {res.confidence_level:.0%} CI "
                     f"[{res.ci[0]:.4g}, {res.ci[1]:.4g}]; asked {limit:g}) at {by_setting[at].label()}")
    other = "meeting the other targets " if plan.targets else ""
    message = (f"no setting of the grid (k {_values(plan.ks)}; eps {_values(plan.eps)}; q {_values(plan.qs)}) "
               f"{other}has attack risks within the attack targets by the upper end of their confidence "
               f"interval ({len(attacked)} settings attacked); nearest achievable attack targets: " + "; ".join(parts)
               + ". Widen the grid towards more perturbation (larger k or eps, q nearer 1), or relax the targets")
    return message, nearest


def _values(values) -> str:
    return ", ".join(f"{v:g}" for v in values)


# ----------------------------------------------------------------------------- output

def perturb_command(plan: _Plan, row: SettingRow) -> str:
    """The rwn-sql perturb command that writes the recommended release: the key by its file
    (--key-file) or --seed, never the key itself."""
    source = plan.source if isinstance(plan.source, str) else "INPUT"
    parts = ["rwn-sql", "perturb", source, plan.output, "--columns", _names(plan.columns),
             "--k", str(row.k), "--eps", repr(float(row.eps)), "--q", repr(float(row.q))]
    if plan.scale != "minmax":
        parts += ["--scale", plan.scale]
    if plan.categorical:
        parts += ["--categorical", _names(plan.categorical)]
    if plan.strata:
        parts += ["--strata", _names(plan.strata)]
    if plan.seed is not None:
        parts += ["--seed", str(plan.seed)]
    else:
        parts += ["--key-file", str(plan.key_file) if plan.key_file is not None else "KEY_FILE"]
    return " ".join(shlex.quote(p) for p in parts)


def _names(names) -> str:
    """Column names as --columns reads them (CSV quoting for a name with a comma or quote)."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="").writerow(names)
    return buf.getvalue()


def _fmt(v, width: int = 0) -> str:
    text = "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.4g}"
    return text.rjust(width)


def _summary(rec: Recommendation) -> str:
    targets = ", ".join(f"{n} {'>=' if TARGETS[n][0] == 'min' else '<='} {v:g}" for n, v in rec.targets.items())
    mean, sd = rec.measures[rec.utility]
    lines = [f"rwn-sql recommend: {rec.source}, columns {', '.join(rec.columns)}: {len(rec.settings)} settings "
             f"tried, {rec.reps} releases each"]
    if rec.targets:
        lines.append(f"targets: {targets}; a setting meets one when its mean over the releases "
                     f"{'+-'} {rec.margin:g} sd of one release is within it")
    if rec.attack_targets:
        attack = ", ".join(f"{n} <= {v:g}" for n, v in rec.attack_targets.items())
        lines.append(f"attack targets: {attack}; met when the upper end of the attack's confidence interval is "
                     f"within it")
    meeting = sum(s.meets for s in rec.settings)
    lines.append(f"recommended: k = {rec.k}, eps = {rec.eps:g}, q = {rec.q:g}: {rec.utility} {_fmt(mean)} "
                 f"(sd {_fmt(sd)}), "
                 + ((f"the best of {meeting} settings meeting the {'other ' if rec.attack_targets else ''}targets"
                     if rec.targets else f"of the {meeting} settings tried")
                    + (f"; the first of them by {rec.utility} whose attacks meet the attack targets"
                       if rec.attack_targets else "")))
    for name, limit in rec.targets.items():
        m, s = rec.measures[name]
        own = f"; the command's release {_fmt(rec.checked[name])}" if rec.checked else ""
        lines.append(f"  {name:<16} mean {_fmt(m)}, sd {_fmt(s)}, bound {_fmt(_bound((m, s), name, rec.margin))} "
                     f"({'>=' if TARGETS[name][0] == 'min' else '<='} {limit:g}){own}")
    for name, limit in rec.attack_targets.items():
        res = getattr(rec.attacks, name)
        lines.append(f"  {name:<16} risk {_fmt(res.risk)}, {res.confidence_level:.0%} CI [{_fmt(res.ci[0])}, "
                     f"{_fmt(res.ci[1])}] (<= {limit:g}); success {res.attack_rate:.3f} on the original, "
                     f"{res.control_rate:.3f} on the control, {res.baseline_rate:.3f} at random")
    lines.append(f"the Pareto frontier of {rec.utility} against {', '.join(rec.targets) or 'nothing'} and the "
                 f"settings meeting the {'other ' if rec.attack_targets and rec.targets else ''}targets (means over "
                 f"the releases; > recommended), by {rec.utility}:")
    names = [rec.utility, *rec.targets]
    attack_names = list(rec.attack_targets)
    lines.append("     " + f"{'k':>5}{'eps':>8}{'q':>6}" + "".join(f"{n:>16}" for n in names)
                 + "".join(f"{n + ' (CI top)':>24}" for n in attack_names) + "   meets  frontier")
    shown = [s for s in rec.settings if s.frontier or s.meets]
    for s in sorted(shown, key=lambda s: (_loss(s, rec.utility), s.k, s.eps, s.q)):
        mark = ">" if (s.k, s.eps, s.q) == (rec.k, rec.eps, rec.q) else " "
        bounds = _attack_bounds(rec.attacked.get(_at(s)), rec.attack_targets) or {}
        lines.append(f"   {mark} {s.k:>5}{s.eps:>8g}{s.q:>6g}" + "".join(_fmt(s.measures[n][0], 16) for n in names)
                     + "".join(_fmt(bounds[n], 24) if n in bounds else f"{'not run':>24}" for n in attack_names)
                     + f"{'yes' if s.meets else 'no':>8}{'yes' if s.frontier else 'no':>10}")
    lines += [f"note: {n}" for n in rec.notes]
    lines += ["command:", f"  {rec.command}"]
    return "\n".join(lines)
