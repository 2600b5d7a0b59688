"""The plans of randomize and audit over a source the backend sees: the blocks per personal-group
size (enforcement; when no design exists, what would work), the randomize plan (checks, domain,
design, the attribute-disclosure rule, SQL) and the audit's statement on each engine."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..engines import sources
from .core import privacy, sqlgen as rp_sql
from ..engines.backend import backend_for
from ..errors import RWNError
from ..identifiers import float_literal, quote_ident
from ..randomness import KEY_PLACEHOLDER, resolve_key
from .core.checks import check_audit_public, check_l_diversity, check_max_top_share, disclosure_rule, prepare, refused
from .core.disclosure import refuse_attribute_disclosure


def _size_counts(be, src, spec, public) -> dict[int, int]:
    """Personal-group size -> number of groups of that size, groups formed by `public`."""
    pub = ", ".join(quote_ident(c) for c in public)
    where = f" WHERE {quote_ident(spec.sensitive)} IS NOT NULL" if spec.nulls == "drop" else ""
    return dict(be.rows(f"SELECT n, count(*) FROM (SELECT count(*) AS n FROM {src.sql}{where}"
                        f"{' GROUP BY ' + pub if pub else ''}) AS __rwn_groups GROUP BY n"))


def _trials(sizes, pp: privacy.PrivacyParams) -> dict[int, int]:
    try:
        return privacy.trials_for_sizes(sizes, pp)
    except ValueError as exc:
        raise refused(exc) from None


def _all_designed(sizes, pp: privacy.PrivacyParams | None, every_size=()) -> bool:
    """Do `sizes` (then also `every_size`, the other sizes present) all have a design?"""
    try:
        return pp is not None and all(all(t > 0 for t in privacy.trials_for_sizes(group, pp).values())
                                      for group in (sizes, every_size))
    except ValueError:
        return False


def _params_or_none(p, m, eps, delta, test):
    try:
        return privacy.PrivacyParams(p=p, m=m, eps=eps, delta=delta, test=test)
    except ValueError:
        return None


def _way_forward(be, src, spec, pp: privacy.PrivacyParams, impossible, counts) -> list[str]:
    """What would make enforcement possible: a smaller p, or a weaker guarantee with the same
    p (smaller delta or smaller eps), each the nearest on a grid that designs every size
    present, suppression, or removing one public column (the one leaving the fewest records
    in failing groups)."""
    ways = []

    def works(p, eps, delta):
        return _all_designed(impossible, _params_or_none(p, pp.m, eps, delta, pp.test), list(counts))

    coarse = next((x / 20 for x in range(int(pp.p * 20 - 1e-9), 0, -1) if works(x / 20, pp.eps, pp.delta)), None)
    if coarse is not None:     # refined to 0.01 between coarse and the next step of 0.05
        best_p = next(x / 100 for x in range(min(int(round(coarse * 100)) + 4, int(pp.p * 100 - 1e-9)),
                                             int(round(coarse * 100)) - 1, -1) if works(x / 100, pp.eps, pp.delta))
        ways.append(f"p = {best_p:g} (searched down in steps of 0.05, then 0.01)")
    deltas = sorted({round(pp.delta * f, 6) for f in (0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01)},
                    reverse=True)
    best_delta = next((d for d in deltas if d > 0 and works(pp.p, pp.eps, d)), None)
    if best_delta is not None:
        ways.append(f"delta = {best_delta:g} with the same p (the largest tried that works)")
    # a smaller eps is a weaker guarantee (the error it asks for is smaller)
    epss = sorted({round(pp.eps * f, 6) for f in (0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1)}, reverse=True)
    best_eps = next((e for e in epss if e > 0 and works(pp.p, e, pp.delta)), None)
    if best_eps is not None:
        ways.append(f"eps = {best_eps:g} with the same p (the largest tried that works)")
    failing = sum(n * counts[n] for n in impossible)
    ways.append(f"suppress_small=True (--suppress-small): leave those {failing} records out of the release")
    coarser = []
    for column in spec.public:
        rest = [c for c in spec.public if c != column]
        sizes = _size_counts(be, src, spec, rest)
        trials = _trials(sizes, pp)
        coarser.append((sum(n * k for n, k in sizes.items() if trials[n] == 0), column))
    if coarser:
        left, column = min(coarser)
        ways.append(f"coarsening: dropping public column {column!r} leaves {left} records in groups that fail")
    return ways


def group_design(be, src, spec, pp: privacy.PrivacyParams, suppress_small: bool = False):
    """Trial counts for the personal-group sizes present in the data (public quantities), and
    (groups, records) left out: sizes without a design refuse the data, with a way forward
    in the message, unless suppress_small leaves their records out."""
    counts = _size_counts(be, src, spec, spec.public)
    trials = _trials(counts, pp)
    impossible = sorted(n for n, t in trials.items() if t == 0)
    groups = sum(counts[n] for n in impossible)
    records = sum(n * counts[n] for n in impossible)
    if impossible and not suppress_small:
        shown = ", ".join(map(str, impossible[:10])) + (", ..." if len(impossible) > 10 else "")
        ways = _way_forward(be, src, spec, pp, impossible, counts)
        raise RWNError(f"(eps, delta) = ({pp.eps}, {pp.delta}) cannot be achieved for personal groups of "
                       f"{shown} records ({groups} groups holding {records} of {sum(n * k for n, k in counts.items())}"
                       f" records) with p = {pp.p}, m = {pp.m} and the {pp.test} test, whatever the number of "
                       f"blocks. What would work: " + "; or ".join(ways))
    return trials, groups, records


def blocks_for(be, src, spec, pp: privacy.PrivacyParams) -> dict[int, int]:
    """Trial counts for the personal-group sizes present (refusing sizes without a design)."""
    return group_design(be, src, spec, pp)[0]


def plan_design(plan):
    """The design_record.Design of a randomize plan (what its estimates need; never the key)."""
    from .release.design_record import Design
    enforced = plan.params.threshold is not None
    test = plan.params.test
    eps, delta = plan.params.threshold or (None, None)
    return Design(sensitive=plan.spec.sensitive, sensitive_type=plan.src.type_of(plan.spec.sensitive),
                  public=plan.spec.public, p=plan.params.p, domain=tuple(plan.values), enforced=enforced,
                  epsilon=None if eps is None else float(eps), delta=None if delta is None else float(delta),
                  test=test if enforced else None,
                  blocks=tuple(sorted(plan.blocks.items())) if enforced else None)


@dataclass
class Plan:
    """Everything a randomize call resolved: the source, the spec, the domain, the blocks per
    group size (enforcement), the parameters and the SQL."""
    src: sources.Source
    spec: rp_sql.RandomizeSpec
    values: list[str]
    blocks: dict[int, int] | None
    params: privacy.RPParams
    sql: str
    suppressed_groups: int = 0      # personal groups left out (suppress_small), and their records
    suppressed_records: int = 0
    l_diversity: int | None = None  # the attribute-disclosure rule applied (1: turned off; None: not checked)
    max_top_share: float | None = None  # the top-share limit applied (1: turned off; None: not checked)
    # renders the SQL with getvariable('rwn_key') where the key goes, only when it is shown (--show-sql)
    render_shown: Callable[[], str] = field(default=lambda: "", repr=False)

    @property
    def shown_sql(self) -> str:
        return self.render_shown()


@dataclass(frozen=True)
class Resolved:
    """What the rules of a randomization decided over its source: the checked source and spec,
    the domain, the blocks per group size (enforcement), the records left out (suppress_small)
    and the attribute-disclosure rule applied."""
    src: sources.Source
    spec: rp_sql.RandomizeSpec
    values: list[str]
    blocks: dict[int, int] | None
    suppressed_groups: int
    suppressed_records: int
    l_diversity: int | None
    max_top_share: float | None

    @property
    def leave_out(self) -> list[int]:
        return sorted(n for n, t in (self.blocks or {}).items() if t == 0)


def resolve_randomize(be, source, sensitive, params: privacy.RPParams, *, public, domain, nulls,
                      suppress_small=False, id_column=None, l_diversity=None, always_check=False,
                      max_top_share=None) -> Resolved:
    """Every rule of a randomization over `source` (a visible one; a TEMP source of the SQL
    macros is handed here by its statement, rp.temp_source): checks, domain, design
    (enforcement) and the attribute-disclosure rule (with enforcement or always_check, default
    L = 2; or whenever l_diversity is given). Refusals raise RWNError."""
    if id_column is None and not be.has_input_order:
        raise RWNError(f"on {be.name}, id= (--id) is required: the engine has no input order to number records "
                       f"by, so the draws need a unique id column")
    src, spec, values = prepare(be, source, sensitive, params.p, public, domain, nulls, id_column, released=True)
    params.check_domain(len(values))
    blocks, left_out = None, (0, 0)
    if params.threshold is not None:
        blocks, *left_out = group_design(be, src, spec, params.privacy(len(values)), suppress_small)
    l_diversity = disclosure_rule(params, l_diversity, max_top_share, always=always_check)
    limit = None
    if l_diversity is not None:
        check_l_diversity(l_diversity, len(values))
        limit = refuse_attribute_disclosure(be, src, spec, l_diversity,
                                            leave_out=sorted(n for n, t in (blocks or {}).items() if t == 0),
                                            m=len(values), max_top_share=max_top_share)
    return Resolved(src, spec, values, blocks, *left_out, l_diversity=l_diversity, max_top_share=limit)


def plan_randomize(con, source, sensitive, params: privacy.RPParams, *, public, domain, key, seed, nulls,
                   key_ref=None, suppress_small=False, id_column=None, l_diversity=None,
                   always_check=False, max_top_share=None) -> Plan:
    """The one orchestration of a randomization, for every engine, the Python API, the CLI and
    the SQL macros: the rules (resolve_randomize) and the SQL in the engine's dialect.
    key_ref(con, key): SQL reading the key (default: the backend's)."""
    be = backend_for(con)
    r = resolve_randomize(be, source, sensitive, params, public=public, domain=domain, nulls=nulls,
                          suppress_small=suppress_small, id_column=id_column, l_diversity=l_diversity,
                          always_check=always_check, max_top_share=max_top_share)
    src, spec = r.src, r.spec
    the_key = resolve_key(key, seed)
    output = [c for c in src.names if c in spec.public or c == sensitive]

    def statement(key_sql: str) -> str:
        return rp_sql.randomize_sql(src.sql, spec, output, r.values, src.type_of(sensitive), key_sql, r.blocks,
                                    check_domain=domain is not None, dialect=be.dialect, leave_out=r.leave_out)
    text = statement(key_ref(be.con, the_key) if key_ref else be.key_sql(the_key))
    return Plan(src, spec, r.values, r.blocks, params, text, r.suppressed_groups, r.suppressed_records,
                l_diversity=r.l_diversity, max_top_share=r.max_top_share,
                render_shown=lambda: statement(KEY_PLACEHOLDER))


def randomize_statement(con, source, sensitive, params: privacy.RPParams, *, public, domain, key, seed,
                        nulls, key_ref=None, suppress_small: bool = False,
                        id_column: str | None = None, l_diversity: int | None = None,
                        max_top_share: float | None = None) -> str:
    """The SQL of a randomize call: key_ref(con, key) gives the SQL that reads the key (never
    the key as a literal)."""
    return plan_randomize(con, source, sensitive, params, public=public, domain=domain, key=key, seed=seed,
                          nulls=nulls, key_ref=key_ref, suppress_small=suppress_small,
                          id_column=id_column, l_diversity=l_diversity, max_top_share=max_top_share).sql


@dataclass(frozen=True)
class AuditDesign:
    """What the rules of an audit decided over its source: the checked source and spec, the
    domain, the privacy parameters, the blocks per group size (enforce), each design's worst
    tail over every count and the sizes whose design fails (exact test), and L."""
    src: sources.Source
    spec: rp_sql.RandomizeSpec
    values: list[str]
    pp: privacy.PrivacyParams
    blocks: dict[int, int] | None
    worst: dict
    failing: list[int]
    l_diversity: int


def resolve_audit(be, source, sensitive, params: privacy.RPParams, *, public, domain, nulls, enforce,
                  l_diversity=None, max_top_share=None) -> AuditDesign:
    """Every rule of an audit over `source` (a visible one; a TEMP source of the SQL macros is
    handed here by its statement, rp.temp_source). Refusals raise RWNError."""
    src, spec, values = prepare(be, source, sensitive, params.p, public, domain, nulls)
    params.check_domain(len(values))
    l_diversity = check_l_diversity(rp_sql.DEFAULT_L_DIVERSITY if l_diversity is None else l_diversity, len(values))
    check_max_top_share(max_top_share)
    check_audit_public(spec.public)
    pp = params.privacy(len(values))
    blocks = blocks_for(be, src, spec, pp) if enforce else None
    # after enforcement, every design's worst tail over every count 1..n (see judged_groups)
    worst = {(n, t): privacy.design_worst_tail(n, t, pp) for n, t in (blocks or {}).items() if t > 0}
    failing = sorted(n for (n, _), w in worst.items() if pp.test == "exact" and w < pp.delta)
    return AuditDesign(src, spec, values, pp, blocks, worst, failing, l_diversity)


def audit_statement(be, src, spec, m: int, pp: privacy.PrivacyParams, blocks, **options) -> str:
    """The audit's SQL on this backend. With Python UDFs the statement computes the exact tails
    (the rwn_audit_tails UDF); without, they come from a small table computed here: the
    distinct (enforced, n, count or blocks) cases are read first, their tails computed with
    rwn_sql.rp.core.privacy in one vectorised call, and the table joined in; no per-row Python.
    counts_relation: the per-(group, value) counts staged beforehand (without UDFs), which
    both statements then read instead of the source."""
    if be.has_python_udfs:
        return rp_sql.audit_sql(src.sql, spec, m, pp.eps, pp.delta, pp.test, blocks, **options)
    cases = be.rows(rp_sql.audit_sql(src.sql, spec, m, pp.eps, pp.delta, pp.test, blocks, dialect=be.dialect,
                                     tails_relation="", cases_only=True,
                                     counts_relation=options.get("counts_relation")))
    table = be.values([(e, n, k, (u, lo)) for (e, n, k), (u, lo) in zip(cases, _case_tails(cases, pp))],
                      "enforced boolean, group_size bigint, tails_key bigint, exact struct<upper:double,lower:double>")
    return rp_sql.audit_sql(src.sql, spec, m, pp.eps, pp.delta, pp.test, blocks, dialect=be.dialect,
                            tails_relation=table, **options)


def _case_tails(cases, pp: privacy.PrivacyParams) -> list[tuple[float, float]]:
    """Exact (upper, lower) tails of audit cases (enforced, n, key): independent trials at
    count `key`, or a block design with `key` blocks."""
    import numpy as np
    out: list[tuple[float, float]] = [(0.0, 0.0)] * len(cases)
    plain = [i for i, (e, _, _) in enumerate(cases) if not e]
    if plain:
        upper, lower = privacy.exact_tails_many(np.array([cases[i][1] for i in plain], dtype=np.int64),
                                                np.array([cases[i][2] for i in plain], dtype=np.int64),
                                                pp.p, pp.m, pp.eps)
        for i, u, lo in zip(plain, upper.tolist(), lower.tolist()):
            out[i] = (u, lo)
    for i, (e, n, k) in enumerate(cases):
        if e:
            out[i] = tuple(float(x) for x in privacy.block_tails(int(n), int(k), pp.p, pp.m, pp.eps))
    return out


def judged_groups(groups_sql: str, keys, worst: dict, pp: privacy.PrivacyParams) -> str:
    """After enforcement a group's release depends on its design (n, t), not on the counts
    present: every count c = 1..n is evaluated exactly (`worst`: the smallest tail of each
    design), and under the exact test a group passes only if that worst tail reaches delta.
    The groups' SQL with that column added (and the verdict updated)."""
    passes = f"g.passes AND d.w >= {float_literal(pp.delta)}" if pp.test == "exact" else "g.passes"
    designs = (f"(VALUES {', '.join(f'({n}, {t}, {float_literal(w)})' for (n, t), w in sorted(worst.items()))})"
               f" AS d(n, t, w)") if worst else "(SELECT 0 AS n, 0 AS t, 0.0 AS w) AS d"
    cols = "".join(f"g.{k}, " for k in keys)
    return (f"SELECT {cols}g.group_size, g.trials, g.enforced, g.values_present, g.worst_chernoff, g.worst_exact, "
            f"{passes} AS passes, g.l_distinct, g.l_entropy, g.top_share, d.w AS worst_design_tail\n"
            f"FROM ({groups_sql}) AS g LEFT JOIN {designs} ON g.group_size = d.n AND g.trials = d.t")
