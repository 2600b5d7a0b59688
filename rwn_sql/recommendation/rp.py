"""The reconstruction-privacy half of a recommendation (rwn_sql.recommend(method="rp")): the
largest retention probability p at which every personal group passes the audit's exact
(eps, delta) test, optionally capped by a rho1-to-rho2 or local-DP budget, with the audit's
attribute-disclosure verdicts at that p, the expected standard error of one-way counts and the
`rwn-sql release` command that applies it (docs/METHODS.md, section 2).

"Largest p" is defined on a grid, because the verdict is not monotone in p (O* is discrete, and
a group of one record fails at small p, where its released value is rarely its own): the
candidates are the multiples of 1/GRID in (0, 1) (0.001, ..., 0.999) at which eps is in range
(eps <= 1 + (1-p)/(m p), as the audit requires), plus the p of a rho/ldp calibration, none above
that calibration's p. The recommendation is the LARGEST candidate at which the audit
(rwn_sql.audit at that p, not enforced, exact test) finds no failing personal group. Smaller
candidates may fail (a steward needs one p where every group passes, not an interval), so the
result says which constraint stops a larger p: the next candidate's failing groups, the budget,
or the top of the grid.

Search: the Chernoff bounds are upper bounds of the exact tails, so a candidate whose bounds fall
below delta for some (group size, count) fails and is skipped unchecked; the others are tried from
the top down with privacy.exact_tails_many over the distinct (group size, count) cases (the audit's
own computation; cases that failed lately are tried first), and the first that passes is confirmed
by running the audit itself at that p, so the verdict is the audit's. Pure numpy over one GROUP BY
of the data, then one audit.
"""
from __future__ import annotations

import csv
import io
import math
import os
import shlex
from dataclasses import asdict, dataclass
from decimal import ROUND_FLOOR, Decimal

import numpy as np

from ..engines import sources
from ..engines.backend import backend_for
from ..errors import RWNError
from ..identifiers import quote_ident
from ..rp.core import privacy
from ..rp.core.calibration import Calibration, calibrate_p
from ..rp.core.checks import check_audit_public, check_l_diversity, check_max_top_share, prepare

__all__ = ["GRID", "RetentionRecommendation", "one_way_std_error", "recommend_retention"]

GRID = 1000                       # candidates: multiples of 1/GRID
REFERENCE_P = (0.1, 0.25, 0.5)    # where a refusal measures the nearest achievable (eps, delta)
_CHERNOFF_SLACK = 1e-6            # a candidate is skipped only when a bound is below delta by more
_HINTS = 16                       # failing cases remembered and tried first
_SHOWN = 3                        # failing groups a refusal names
_CELLS = 1 << 21                  # candidates x cases per array of the Chernoff screen


@dataclass(frozen=True)
class RetentionRecommendation:
    """The recommended retention probability and what it rests on.

    p: the largest candidate p (see the module: multiples of 1/GRID, or the calibration's p) at
    which every personal group passes the exact (eps, delta) test; binding: what stops a larger
    p: "reconstruction" (at next_p, the next candidate, next_failing_groups groups fail; `hardest`
    names the one with the smallest tail there), "rho" or "ldp" (p is calibrate_p's p for that
    budget, `cap`), "grid" (p is the top candidate: 0.999, or the largest p with eps in range).
    min_tail: the smallest exact tail over every group and value at p (p meets every delta up
    to it). groups, records, smallest_group: the personal groups (records sharing all public
    values). disclosure: the audit's attribute-disclosure verdicts at p (l-diversity, top share,
    proxies; `ok` false means the release command refuses the data as it is).
    std_error: the expected standard error of the reconstructed count of each domain value over
    all records (one_way_std_error at the observed shares), std_error_max the largest of them,
    std_error_bound the bound for any share. command: the `rwn-sql release` command with this p
    (the key read from a key file, never shown). notes: what the command leaves to the caller.
    With enforce=True: enforced (the command enforces (eps, delta) with blocks; binding is then
    "enforcement": p has the smallest largest one-way standard error of the enforced candidates
    and the plain one), design (the block design: groups split, the largest group and its
    blocks), alternative (the best candidate of the other kind: its p and std_error_max, or
    None when there is none)."""
    p: float
    binding: str
    epsilon: float
    delta: float
    m: int
    test: str
    grid_step: float
    cap: float | None
    calibration: str | None
    next_p: float | None
    next_failing_groups: int | None
    next_failing_records: int | None
    hardest: dict | None
    min_tail: float
    groups: int
    records: int
    smallest_group: int
    disclosure: dict
    std_error: dict
    std_error_max: float
    std_error_bound: float
    command: str
    notes: tuple[str, ...] = ()
    enforced: bool = False
    design: dict | None = None
    alternative: dict | None = None

    def to_dict(self) -> dict:
        out = asdict(self)
        out["notes"] = list(self.notes)
        return out

    def summary(self) -> str:
        if self.binding == "reconstruction":
            k = self.next_failing_groups
            why = (f"at p = {self.next_p:g}, {_plural(k, 'personal group')} fail{'s' if k == 1 else ''} "
                   f"({self.next_failing_records} records)" + _hardest_text(self.hardest))
        elif self.binding == "enforcement":
            why = (f"enforced, p has the smallest largest one-way standard error on the grid of {self.grid_step:g}"
                   + _alternative_text(self.alternative))
        elif self.binding in ("rho", "ldp"):
            why = f"the {'rho1-to-rho2' if self.binding == 'rho' else 'local-DP'} budget caps p ({self.calibration})"
        else:
            why = "p is the top of the grid (0.999, or the largest p with eps in range)"
        d = self.disclosure
        first = (f"reconstruction privacy: p = {self.p:g}: every personal group ({self.groups}) passes the exact "
                 f"({self.epsilon:g}, {self.delta:g}) test (m = {self.m}); " + self._larger())
        if self.enforced:
            x = self.design
            first = (f"reconstruction privacy, enforced: p = {self.p:g}: every personal group ({self.groups}) passes "
                     f"the exact ({self.epsilon:g}, {self.delta:g}) test (m = {self.m}) after enforcement: "
                     f"{x['groups_split']} groups split into blocks ({x['records_split']} records); the largest "
                     f"group, {x['largest_group']} records, in {x['largest_group_blocks']} blocks")
        elif self.alternative is not None:
            why += _alternative_text(self.alternative)
        lines = [first,
                 f"binding: {self.binding}: {why}",
                 (f"groups: {self.groups} ({self.records} records), smallest {self.smallest_group}; smallest tail "
                  f"at p: {self.min_tail:.4g} (>= delta = {self.delta:g})"),
                 (f"l-diversity (l = {d['l_diversity']}): {d['l_failing_groups']} groups below l, "
                  f"{d['share_failing_groups']} above the top-share limit {d['max_top_share']:.4g}, "
                  f"{len(d['proxies'])} proxies: {'passes' if d['ok'] else 'FAILS (the release command refuses)'}"),
                 (f"expected standard error of one-way counts ({self.records} records): at most "
                  f"{self.std_error_max:.4g} at the observed shares, {self.std_error_bound:.4g} for any share"),
                 f"release: {self.command}"]
        return "\n".join(lines + [f"note: {x}" for x in self.notes])


    def _larger(self) -> str:
        if self.binding in ("rho", "ldp"):
            return "p is the budget's, no larger p is allowed"
        cap = f" up to the budget's {self.cap:g}" if self.cap is not None else ""
        return f"no larger p on the grid of {self.grid_step:g}{cap} does" if self.binding == "reconstruction" else \
            f"p is the top of the grid of {self.grid_step:g}{cap}"


def _alternative_text(alternative: dict | None) -> str:
    if alternative is None:
        return ""
    kind = "enforced" if alternative["enforced"] else "without enforcement"
    return (f"; the best {kind}: p = {alternative['p']:g}, one-way standard error at most "
            f"{alternative['std_error_max']:.4g}")


def _plural(k: int, noun: str) -> str:
    return f"{k} {noun}{'' if k == 1 else 's'}"


def _group_text(group: dict) -> str:
    public = ", ".join(f"{k}={v!r}" for k, v in group["public"].items())
    return f"the group ({public or 'all records'}) of {_plural(group['group_size'], 'record')}"


def _hardest_text(hardest: dict | None) -> str:
    if not hardest:
        return ""
    return (f"; the hardest: {_group_text(hardest)} where {hardest['value']!r} holds {hardest['value_count']} "
            f"(smallest tail {hardest['tail']:.3g})")


def one_way_std_error(count: int, n: int, p: float, m: int) -> float:
    """Standard error of the unbiased reconstructed count of a value held by `count` of n
    records (docs/METHODS.md, section 2: count' = (O* - n b) / p with
    Var = (count a(1-a) + (n - count) b(1-b)) / p^2, a = p + (1-p)/m, b = (1-p)/m: the
    randomization's variance for the data as it is, what rwn_sql.estimates reports). With
    pi = count/n and P = p pi + b, this is n P(1-P)/p^2 - n pi(1-pi): the binomial form
    n P(1-P)/p^2 would add the sampling variance of drawing the records themselves."""
    b = (1.0 - p) / m
    a = p + b
    return math.sqrt(count * a * (1 - a) + (n - count) * b * (1 - b)) / p


@dataclass
class _Cases:
    """One row per (personal group, value present): group id, group size, value count; and
    the distinct (size, count) cases the tails are computed for (`inverse` maps rows to them)."""
    g: np.ndarray
    n: np.ndarray
    c: np.ndarray
    un: np.ndarray
    uc: np.ndarray
    inverse: np.ndarray

    @classmethod
    def of(cls, rows) -> _Cases:
        arr = np.array(rows, dtype=np.int64).reshape(-1, 3)
        pairs, inverse = np.unique(arr[:, 1:], axis=0, return_inverse=True)
        return cls(arr[:, 0], arr[:, 1], arr[:, 2], pairs[:, 0].copy(), pairs[:, 1].copy(), inverse.ravel())

    def worst(self, p: float, m: int, eps: float, idx=None) -> np.ndarray:
        """min(upper, lower) exact tail per distinct case (or for the cases `idx`)."""
        n, c = (self.un, self.uc) if idx is None else (self.un[idx], self.uc[idx])
        upper, lower = privacy.exact_tails_many(n, c, p, m, eps)
        return np.minimum(upper, lower)

    def failing(self, worst: np.ndarray, delta: float) -> tuple[np.ndarray, int]:
        """The ids of the groups holding a failing case, and their records."""
        ids = np.unique(self.g[worst[self.inverse] < delta])
        sizes = dict(zip(self.g.tolist(), self.n.tolist()))
        return ids, int(sum(sizes[i] for i in ids.tolist()))


def _grouped_sql(be, src, spec) -> str:
    """Per personal group and value present: the public columns, __rwn_v (the value), __rwn_k
    (its count), __rwn_n (the group size) and __rwn_g (the group's rank over the public values)."""
    keys = [quote_ident(c) for c in spec.public]
    s = quote_ident(spec.sensitive)
    pub = "".join(k + ", " for k in keys)
    part = f"PARTITION BY {', '.join(keys)}" if keys else ""
    rank = f"dense_rank() OVER (ORDER BY {', '.join(keys)})" if keys else "1"
    return (f"SELECT *, sum(__rwn_k) OVER ({part}) AS __rwn_n, {rank} AS __rwn_g FROM "
            f"(SELECT {pub}{s} AS __rwn_v, count(*) AS __rwn_k FROM {src.sql} GROUP BY {pub}{s}) AS __rwn_c")


def _describe(be, src, spec, group: int, count: int | None = None) -> dict:
    """A personal group (by rank): its public values, size, and a value it holds `count` times."""
    names = list(spec.public)
    cols = "".join(quote_ident(c) + ", " for c in names)
    where = f"__rwn_g = {int(group)}" + ("" if count is None else f" AND __rwn_k = {int(count)}")
    row = be.rows(f"SELECT {cols}{be.dialect.as_text('__rwn_v')}, __rwn_n, __rwn_k FROM "
                  f"({_grouped_sql(be, src, spec)}) AS __rwn_r WHERE {where} ORDER BY __rwn_k LIMIT 1")[0]
    return {"public": dict(zip(names, row[:len(names)])), "value": row[len(names)], "group_size": int(row[-2]),
            "value_count": int(row[-1])}


def _caps(m: int, rho, ldp) -> Calibration | None:
    """The calibration of the tighter of the rho and ldp budgets (None without either)."""
    found = [calibrate_p(m, rho=rho)] if rho is not None else []
    if ldp is not None:
        found.append(calibrate_p(m, ldp=ldp))
    return min(found, key=lambda x: x.p) if found else None


def _candidates(m: int, eps: float, cap: Calibration | None) -> np.ndarray:
    """Candidate p in ascending order: multiples of 1/GRID with eps in range, not above the
    calibration's p, and that p itself (when eps is in range there)."""
    grid = [k / GRID for k in range(1, GRID)]
    if cap is not None:
        grid = [x for x in grid if x < cap.p] + [cap.p]
    out = [x for x in grid if eps <= privacy.max_eps(x, m)]
    if not out:
        raise RWNError(f"eps = {eps} exceeds 1 + (1-p)/(m p) at every p on the grid (m = {m}); the audit needs "
                       f"eps <= that bound: give a smaller eps")
    return np.array(out)


def _chernoff_screen(cases: _Cases, grid: np.ndarray, m: int, eps: float, delta: float) -> np.ndarray:
    """Which candidates the Chernoff bounds (upper bounds of the exact tails) leave possible
    for every case (a skipped one fails the exact test)."""
    keep = np.ones(len(grid), dtype=bool)
    f_all = cases.uc / cases.un
    step = max(1, _CELLS // len(grid))
    p = grid[:, None]
    b = (1 - p) / m
    for start in range(0, len(f_all), step):
        f, n = f_all[None, start: start + step], cases.un[None, start: start + step]
        upper, lower = privacy.chernoff_bounds(n * (f * p + b), eps * f * p / (f * p + b))
        keep &= (np.minimum(upper, lower) >= delta * (1 - _CHERNOFF_SLACK)).all(axis=1)
    return keep


def _exact_passes(cases: _Cases, p: float, m: int, eps: float, delta: float, hints: list) -> bool:
    """Every case passes the exact test at p (the cases in `hints`, failing lately, first)."""
    if hints and (cases.worst(p, m, eps, np.array(hints)) < delta).any():
        return False
    worst = cases.worst(p, m, eps)
    bad = np.flatnonzero(worst < delta)
    if len(bad):
        j = int(bad[np.argmin(worst[bad])])
        if j not in hints:
            hints.append(j)
            del hints[:-_HINTS]
        return False
    return True


def _search(cases: _Cases, grid: np.ndarray, m: int, eps: float, delta: float, confirm):
    """The largest candidate where every case passes and `confirm(p)` (the audit) agrees:
    (its index in grid, the audit's result), or (None, None)."""
    possible = _chernoff_screen(cases, grid, m, eps, delta)
    hints: list = []
    for i in np.flatnonzero(possible)[::-1].tolist():
        p = float(grid[i])
        if _exact_passes(cases, p, m, eps, delta, hints):
            result = confirm(p)
            if result is not None:
                return i, result
    return None, None


def _floor_sig(x: float, digits: int = 3) -> float:
    """x rounded down to `digits` significant digits."""
    d = Decimal(repr(x))
    q = Decimal(1).scaleb(d.adjusted() - digits + 1)
    return float((d / q).to_integral_value(rounding=ROUND_FLOOR) * q)


def _largest_eps(cases: _Cases, p: float, m: int, eps: float, delta: float) -> float | None:
    """The largest eps' < eps (3 significant digits) at which every case passes at p with delta
    (the tails fall as eps grows), or None."""
    lo, hi = 1e-6, eps
    if (cases.worst(p, m, lo) < delta).any():
        return None
    for _ in range(30):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if (cases.worst(p, m, mid) >= delta).all() else (lo, mid)
    out = _floor_sig(lo)
    return out if out > 0 and (cases.worst(p, m, out) >= delta).all() else None


def _way_at(cases: _Cases, p: float, m: int, eps: float, delta: float) -> tuple[str, int, np.ndarray]:
    """At p: the nearest achievable targets as text, the records in failing groups, their group ids."""
    worst = cases.worst(p, m, eps)
    ids, records = cases.failing(worst, delta)
    ways = []
    d = _floor_sig(float(worst.min())) if worst.min() > 0 else 0.0
    while d > 0 and (worst < d).any():
        d = _floor_sig(d * (1 - 1e-3))
    if 0 < d < delta:
        ways.append(f"delta = {d:g} with eps = {eps:g}")
    e = _largest_eps(cases, p, m, eps, delta)
    if e is not None:
        ways.append(f"eps = {e:g} with delta = {delta:g}")
    text = f"at p = {p:g}: " + (" or ".join(ways) if ways else "no smaller delta or eps alone works")
    return text, records, ids


def _fewest_failing(cases: _Cases, grid, m: int, eps: float, delta: float) -> float:
    """The candidate, among the multiples of 0.01 and the grid's top, whose failing groups hold
    the fewest records (the larger p on a tie): where suppression costs least (a group too
    small for every p, or a few large ones, can leave most of the data passing at one p)."""
    coarse = [float(x) for x in grid if round(x * GRID) % (GRID // 100) == 0] + [float(grid[-1])]
    return min(coarse, key=lambda x: (cases.failing(cases.worst(x, m, eps), delta)[1], -x))


def _refuse(be, src, spec, cases: _Cases, grid, m, eps, delta, cap: Calibration | None,
            searched_enforced: bool = False) -> RWNError:
    """No candidate passes: the error naming the smallest failing groups and what would work."""
    top = float(grid[-1])
    refs = sorted({x for x in REFERENCE_P if x <= top and eps <= privacy.max_eps(x, m)} | {_fewest_failing(cases, grid, m, eps, delta)})
    found = [(p,) + _way_at(cases, p, m, eps, delta) for p in refs]
    p, _, records, ids = min(found, key=lambda x: (x[2], -x[0]))
    sizes = dict(zip(cases.g.tolist(), cases.n.tolist()))
    smallest = sorted(ids.tolist(), key=lambda g: (sizes[g], g))[:_SHOWN]
    shown = "; ".join(_group_text(_describe(be, src, spec, g)) for g in smallest)
    budget = f", p at most {cap.p:g} ({cap.describe()})" if cap is not None else ""
    total = int(sum(sizes.values()))
    ways = [w for _, w, _, _ in found]
    if searched_enforced:
        ways.append(f"enforcement was searched too: at no p on the grid of {1 / ENFORCED_STEP:g} has every group size "
                    f"a block design; enforce=(eps, delta) with suppress_small=True (--enforce EPS,DELTA "
                    f"--suppress-small) leaves the groups without one out")
    else:
        ways.append("enforce=(eps, delta) (--enforce EPS,DELTA): the block mechanism splits failing groups "
                    "(rwn-sql audit --after-enforcement shows the result; recommend --enforce searches it)")
    ways.append("suppression: leave the records of the failing groups out of the input (rwn-sql audit "
                "--groups-output lists the groups: passes = false)")
    return RWNError(f"no retention probability on the grid of {1 / GRID:g} meets (eps, delta) = ({eps:g}, {delta:g}) "
                    f"for every personal group (m = {m}, exact test{budget}): at p = {p:g}, {len(ids)} of "
                    f"{len(sizes)} groups fail ({records} of {total} records); the smallest: {shown}"
                    f"{f' (and {len(ids) - _SHOWN} more)' if len(ids) > _SHOWN else ''}. What would work: " + "; or ".join(ways))


def _csv_names(names) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(list(names))
    return out.getvalue()


def release_command(source, sensitive: str, p: float, public, domain, l_diversity, max_top_share,
                    calibration: Calibration | None, output: str | None, key_file: str,
                    enforce: tuple[float, float] | None = None) -> tuple[str, tuple]:
    """The `rwn-sql release` command applying p (--p-from when the budget's p is used, so the
    release records it), and notes on what it leaves to the caller. The key is read from
    `key_file` (never a key itself)."""
    from ..rp.api import release_table_name
    notes = []
    text = os.fspath(source) if isinstance(source, (str, os.PathLike)) else None
    if text is None or not (sources.file_format(text) or sources.split_db_target(text)):
        notes.append("INPUT: the CLI reads a CSV/TSV/Parquet file or file.duckdb:table; export the source to one")
        text = "INPUT"
    out = output or f"{release_table_name(source) if text != 'INPUT' else 'released'}_release.duckdb"
    args = ["rwn-sql", "release", text, out, "--sensitive", sensitive]
    if calibration is not None and calibration.p == p:
        budget = (f"rho:{calibration.rho[0]!r},{calibration.rho[1]!r}" if calibration.budget == "rho"
                  else f"ldp:{calibration.ldp!r}")
        args += ["--p-from", budget]
    else:
        args += ["--p", repr(float(p))]
    public = [public] if isinstance(public, str) else public
    if public:
        args += ["--public", _csv_names(public)]
    elif public is not None:
        notes.append("no public column: the CLI's --public names at least one, and by default every column but the "
                     "sensitive one is public, so INPUT must hold the sensitive column alone")
    if isinstance(domain, (str, os.PathLike)):
        args += ["--domain-file", os.fspath(domain)]
    elif domain is not None:
        args += ["--domain-file", "domain.txt"]
        notes.append("domain.txt: write the domain's values there, one per line")
    if enforce is not None:
        args += ["--enforce", f"{enforce[0]!r},{enforce[1]!r}"]
    if l_diversity is not None:
        args += ["--l-diversity", str(int(l_diversity))]
    if max_top_share is not None:
        args += ["--max-top-share", repr(float(max_top_share))]
    args += ["--key-file", key_file]
    notes.append(f"{key_file}: a file holding the secret key (one line of 16 to 1024 characters); keep it to "
                 f"reproduce the release, never publish it")
    return shlex.join(args), tuple(notes)


# the ways out refuse_attribute_disclosure (rp.core.disclosure) offers, for data the release would refuse
DISCLOSURE_NOTE = ("the release command refuses these data as they are (attribute disclosure, see the audit at "
                   "this p); what would work: coarsening or dropping public columns; or suppression: leave those "
                   "records out of the input (rwn-sql audit --groups-output lists the groups); or max_top_share=1 "
                   "(--max-top-share 1) to keep only l-diversity, or l_diversity=1 (--l-diversity 1) to release "
                   "anyway, which the release metadata records")


def _disclosure(audit_result) -> dict:
    d = audit_result.disclosure
    return {"l_diversity": d.l_diversity, "l_failing_groups": d.l_failing_groups,
            "l_failing_records": d.l_failing_records, "max_top_share": d.max_top_share,
            "share_failing_groups": d.share_failing_groups, "share_failing_records": d.share_failing_records,
            "proxies": [x.describe(audit_result.sensitive) for x in d.proxies], "ok": d.ok}


def _value_counts(be, src, spec) -> dict:
    s = quote_ident(spec.sensitive)
    return dict(be.rows(f"SELECT {be.dialect.as_text(s)}, count(*) FROM {src.sql} GROUP BY {s}"))


def _std_errors(counts: dict, values, p: float, m: int, design: _Design | None = None) -> tuple[dict, float, float, int]:
    """Per domain value the standard error of its one-way count at its observed share, their
    largest, the bound for any share, and the records. With `design` (an enforced release) the
    block-aware error of rwn_sql.estimates (sql/rp_estimates.sql, the share taken as the value's
    share in every group)."""
    n = int(sum(counts.values()))
    b = (1 - p) / m
    if design is None:
        per = {v: one_way_std_error(int(counts.get(v, 0)), n, p, m) for v in values}
        bound = math.sqrt(n * max((p + b) * (1 - p - b), b * (1 - b))) / p
        return per, max(per.values()), bound, n
    se = design.std_errors(_shares(counts, values), p, m)
    grid = design.std_errors(np.linspace(0, 1, 1001), p, m)
    return dict(zip(values, se.tolist())), float(se.max()), float(grid.max()), n


def _unit_sums(n: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per personal group of n records in t blocks (sizes differing by at most one): SS = the
    sum of squared block sizes and SH = sum s (n - s) / (n - 1), as sql/rp_estimates.sql
    defines them (t = n: independent records, SS = SH = n)."""
    q, r = np.divmod(n, t)
    ss = r * (q + 1) ** 2 + (t - r) * q * q
    with np.errstate(divide="ignore", invalid="ignore"):
        sh = np.where(n > 1, (r * (q + 1) * (n - q - 1) + (t - r) * q * (n - q)) / (n - 1), n)
    return ss.astype(float), sh.astype(float)


def _variance_terms(ss, sh, shares: np.ndarray, p: float, m: int) -> np.ndarray:
    """The block-aware variance of a count (times p^2) per unit sums (rows) and share (columns)."""
    b, pq = (1 - p) / m, p * (1 - p)
    ss, sh, f = np.asarray(ss, float)[:, None], np.asarray(sh, float)[:, None], shares[None, :]
    return b * (1 - b) * ss + pq * (sh - 2 * ss / m) * f + pq * (ss - sh) * f * f


@dataclass
class _Design:
    """Block counts t of every personal group (sizes n, with repeats) of an enforced release."""
    n: np.ndarray
    t: np.ndarray

    def std_errors(self, shares: np.ndarray, p: float, m: int) -> np.ndarray:
        """The standard error of the count of a value with each share over all records, the share
        taken as the value's share in every group (rwn_sql.estimates' plug-in)."""
        ss, sh = _unit_sums(self.n, self.t)
        var = _variance_terms([ss.sum()], [sh.sum()], shares, p, m)[0]
        return np.sqrt(np.maximum(var, 0.0)) / p

    def lower_bound(self, shares: np.ndarray, p: float, m: int) -> float:
        """A lower bound of the largest std_errors over `shares` for ANY block counts 1 <= t' <= t
        per group (self.t being upper bounds): the variance is linear in a group's SS (SH falls
        as SS grows), so each group's least term is at t' = t or at t' = 1."""
        terms = [_variance_terms(*_unit_sums(self.n, t), shares, p, m) for t in (self.t, np.ones_like(self.t))]
        var = np.minimum(*terms).sum(axis=0)
        return float(np.sqrt(np.maximum(var, 0.0)).max() / p)


ENFORCED_STEP = 100               # enforced candidates: multiples of 1/ENFORCED_STEP


@dataclass(frozen=True)
class _Enforced:
    """The enforced candidate with the smallest largest one-way standard error: p, its design,
    and what the search saw (candidates tried, skipped by the bound, without a design)."""
    p: float | None
    design: _Design | None
    se_max: float
    tried: int
    pruned: int
    no_design: int


def _enforced_search(group_sizes: np.ndarray, shares: np.ndarray, m: int, eps: float, delta: float,
                     cap: Calibration | None, best_plain: float, step: int = ENFORCED_STEP) -> _Enforced:
    """Enforcement's best p: over the multiples of 1/step with eps in range (and not
    above the budget's p, which is a candidate too), the p whose block designs
    (privacy.trials_for_sizes: every group size has one) give the smallest largest one-way
    standard error at the observed shares. A candidate whose lower bound (_Design.lower_bound,
    first for any block counts, then for the cheap upper block counts of trials_upper_bounds)
    is not below the best so far, or below `best_plain` (the plain release's), is skipped: it
    cannot win. From the top down, where designs are cheap to certify."""
    grid = [k / step for k in range(1, step)]
    if cap is not None:
        grid = [x for x in grid if x < cap.p] + [cap.p]
    grid = [x for x in grid if eps <= privacy.max_eps(x, m)]
    sizes = np.unique(group_sizes)
    best = _Enforced(None, None, best_plain, 0, 0, 0)
    tried = pruned = no_design = 0
    for p in reversed(grid):
        if _Design(group_sizes, group_sizes).lower_bound(shares, p, m) >= best.se_max:    # any t <= n
            pruned += 1
            continue
        pp = privacy.PrivacyParams(p=p, m=m, eps=eps, delta=delta, test="exact")
        upper = privacy.trials_upper_bounds(sizes, pp, stop_at_zero=True)
        if min(upper.values()) == 0:
            no_design += 1
            continue
        t_up = np.array([upper[int(n)] for n in group_sizes])
        if _Design(group_sizes, t_up).lower_bound(shares, p, m) >= best.se_max:
            pruned += 1
            continue
        trials = privacy.trials_for_sizes(sizes, pp)
        if min(trials.values()) == 0:
            no_design += 1
            continue
        tried += 1
        design = _Design(group_sizes, np.array([trials[int(n)] for n in group_sizes]))
        se = float(design.std_errors(shares, p, m).max())
        if se < best.se_max:
            best = _Enforced(p, design, se, 0, 0, 0)
    return _Enforced(best.p, best.design, best.se_max, tried, pruned, no_design)


def _check_target(epsilon, delta) -> None:
    for name, value, top in (("epsilon", epsilon, math.inf), ("delta", delta, 1.0)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < top:
            raise RWNError(f"{name} must be a number in (0, {'inf' if top == math.inf else 1}), got {value!r}")


def recommend_retention(con, source, sensitive: str, epsilon: float, delta: float, public=None, domain=None,
                        rho=None, ldp=None, l_diversity: int | None = None, max_top_share: float | None = None,
                        *, enforce: bool = False, output: str | None = None,
                        key_file: str = "secret.key") -> RetentionRecommendation:
    """The largest retention probability p (module docstring: multiples of 0.001, or the p of
    the rho/ldp budget) at which rwn_sql.audit(con, source, sensitive, p, epsilon, delta,
    public, domain) finds every personal group passing the exact test (without enforcement),
    capped by calibrate_p's p for rho=(rho1, rho2) and/or ldp=lambda (the tighter binds).
    l_diversity, max_top_share: as rwn_sql.audit takes them (default l = 2 and the top-share
    limit for p); their verdicts at p are reported, not searched: l-diversity and proxies do not
    depend on p, and the default top-share limit only loosens as p grows, so no passing p does
    better. output, key_file: the release database and the key file the command names (the key
    is never read or shown). Refuses (RWNError) when no candidate passes, naming the smallest
    failing groups and the nearest achievable (eps, delta) at p = 0.1, 0.25 and 0.5 and at the
    multiple of 0.01 whose failing groups hold the fewest records.

    enforce=True also considers releases enforced with blocks (rwn_sql.randomize(enforce=(eps,
    delta))): every group passes once split, so "largest p" no longer measures utility; the
    recommendation is then the candidate, enforced (multiples of 0.01, _enforced_search) or
    plain (the largest p above), with the smallest largest standard error of a one-way count
    over all records at the observed shares (block-aware when enforced), confirmed by the audit
    (after enforcement for an enforced p). Blocks make records move together, so enforcement
    can lose to a small plain p: the result names the other kind's best as `alternative`.
    Returns a RetentionRecommendation."""
    from ..rp.api import audit
    be = backend_for(con)
    check_max_top_share(max_top_share)
    src, spec, values = prepare(be, source, sensitive, 0.5, public, domain, "error")
    check_audit_public(spec.public)
    m = len(values)
    if l_diversity is not None:
        check_l_diversity(l_diversity, m)
    _check_target(epsilon, delta)
    if not isinstance(enforce, bool):
        raise RWNError(f"enforce must be True or False, got {enforce!r}")
    cap = _caps(m, rho, ldp)
    grid = _candidates(m, epsilon, cap)
    cases = _Cases.of(be.rows(f"SELECT __rwn_g, __rwn_n, __rwn_k FROM ({_grouped_sql(be, src, spec)}) AS __rwn_r"))
    given = {"source": source, "public": public, "domain": domain, "l_diversity": l_diversity,
             "max_top_share": max_top_share, "output": output, "key_file": key_file}

    def confirm(p, enforced=False):
        result = audit(con, source, sensitive, p, epsilon, delta, public=public, domain=domain,
                       l_diversity=l_diversity, max_top_share=max_top_share, enforce=enforced)
        if result.failing_groups:
            result.close()
            return None
        return result
    at, result = _search(cases, grid, m, epsilon, delta, confirm)
    counts = _value_counts(be, src, spec)
    plain_se = _std_errors(counts, values, float(grid[at]), m)[1] if at is not None else math.inf
    best = _enforced_search(_group_sizes(cases), _shares(counts, values), m, epsilon, delta, cap, plain_se) \
        if enforce else None
    if at is None and (best is None or best.p is None):
        raise _refuse(be, src, spec, cases, grid, m, epsilon, delta, cap, searched_enforced=enforce)
    if best is None or best.p is None:       # the plain candidate
        alt = None if best is None else {"p": None, "enforced": True, "std_error_max": None, "tried": best.tried,
                                          "pruned": best.pruned, "no_design": best.no_design}
        chosen, audit_result = dict(at=at, alternative=alt), result
    else:
        if result is not None:
            result.close()
        audit_result = confirm(best.p, enforced=True)
        if audit_result is None:
            raise RWNError(f"internal: the audit after enforcement at p = {best.p:g} finds failing groups although "
                           f"every group size has a certified design; please report this")
        chosen = dict(at=None, enforced=best, alternative=None if at is None else
                      {"p": float(grid[at]), "enforced": False, "std_error_max": plain_se})
    try:
        return _recommendation(be, src, spec, values, counts, cases, grid, result=audit_result, eps=epsilon,
                               delta=delta, cap=cap, given=given, **chosen)
    finally:
        audit_result.close()


def _group_sizes(cases: _Cases) -> np.ndarray:
    return np.array(list(dict(zip(cases.g.tolist(), cases.n.tolist())).values()))


def _shares(counts: dict, values) -> np.ndarray:
    n = sum(counts.values())
    return np.array([int(counts.get(v, 0)) / n for v in values])


def _recommendation(be, src, spec, values, counts, cases: _Cases, grid, *, at: int | None, result, eps, delta,
                    cap: Calibration | None, given: dict, enforced: _Enforced | None = None,
                    alternative: dict | None = None) -> RetentionRecommendation:
    """The RetentionRecommendation for the candidate grid[at] (the audit `result` at it), or
    for the enforced candidate `enforced` (the audit after enforcement)."""
    m = len(values)
    p = float(grid[at]) if enforced is None else enforced.p
    nxt = hardest = failing = failing_records = design = None
    if enforced is not None:
        binding = "enforcement"
        design = _design_summary(enforced.design)
        pp = privacy.PrivacyParams(p=p, m=m, eps=eps, delta=delta, test="exact")
        min_tail = min(privacy.design_worst_tail(int(n), int(t), pp)
                       for n, t in set(zip(enforced.design.n.tolist(), enforced.design.t.tolist())))
    else:
        min_tail = float(cases.worst(p, m, eps).min())
        if at + 1 < len(grid):
            binding, nxt = "reconstruction", float(grid[at + 1])
            worst = cases.worst(nxt, m, eps)
            ids, failing_records = cases.failing(worst, delta)
            failing = len(ids)
            j = int(np.argmin(worst))
            group = int(cases.g[np.flatnonzero(cases.inverse == j)[0]])
            hardest = dict(_describe(be, src, spec, group, int(cases.uc[j])), tail=float(worst[j]))
        elif cap is not None and p == cap.p:
            binding = cap.budget
        else:
            binding = "grid"
    per, se_max, bound, _ = _std_errors(counts, values, p, m, None if enforced is None else enforced.design)
    command, notes = release_command(given["source"], spec.sensitive, p, given["public"], given["domain"],
                                     given["l_diversity"], given["max_top_share"], cap, given["output"],
                                     given["key_file"], enforce=(eps, delta) if enforced is not None else None)
    if alternative is not None and alternative.get("p") is None:
        notes += (f"enforcement considered: no enforced p on the grid of {1 / ENFORCED_STEP:g} gives a smaller "
                  f"largest one-way standard error ({alternative['tried']} designs certified and measured, {alternative['pruned']} "
                  f"p ruled out by a lower bound, {alternative['no_design']} without a design for every group size)",)
        alternative = None
    sizes = dict(zip(cases.g.tolist(), cases.n.tolist()))
    disclosure = _disclosure(result)
    if not disclosure["ok"]:
        notes += (DISCLOSURE_NOTE,)
    return RetentionRecommendation(
        p=p, binding=binding, epsilon=float(eps), delta=float(delta), m=m, test="exact",
        grid_step=1 / GRID if enforced is None else 1 / ENFORCED_STEP,
        cap=None if cap is None else cap.p, calibration=None if cap is None else cap.describe(),
        next_p=nxt, next_failing_groups=failing, next_failing_records=failing_records, hardest=hardest,
        min_tail=min_tail, groups=result.groups, records=result.records,
        smallest_group=int(min(sizes.values())), disclosure=disclosure, std_error=per,
        std_error_max=se_max, std_error_bound=bound, command=command, notes=notes,
        enforced=enforced is not None, design=design, alternative=alternative)


def _design_summary(design: _Design) -> dict:
    split = design.t < design.n
    largest = int(np.argmax(design.n))
    return {"groups_split": int(split.sum()), "records_split": int(design.n[split].sum()),
            "largest_group": int(design.n[largest]), "largest_group_blocks": int(design.t[largest]),
            "blocks": sorted({(int(n), int(t)) for n, t in zip(design.n.tolist(), design.t.tolist()) if t < n})}
