"""Uniform perturbation of a sensitive attribute, reconstruction and the
(eps, delta)-reconstruction-privacy audit: the public Python API (docs/METHODS.md section 2)."""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

from ..engines import outputs, sources
from .core import privacy, sqlgen as rp_sql
from ..engines.backend import Session, backend_for
from ..errors import RWNError
from ..identifiers import float_literal, quote_ident, quote_literal
from ..randomness import key_scope, resolve_key
from .core.duckdb_udfs import ensure_functions
from .core.calibration import Calibration
from .core.checks import (check_estimate_columns, check_names, estimated_values, public_columns, published_domain,
                          refuse_released_outside, typed_domain)
from .core.disclosure import attribute_disclosure, AttributeDisclosure, top_share_limit
from .core.key_risk import group_sizes_risk_sql, key_risk_of, KeyRisk
from .plan import audit_statement, blocks_for, judged_groups, plan_design, plan_randomize, resolve_audit
from .release.release_source import check_recorded_columns, reconcile, RECORDED, recorded_design

__all__ = ["randomize", "audit", "estimates", "release", "query", "AuditResult"]


def randomize(con: Session, source, sensitive: str, p: float | Calibration, public=None, domain=None,
              key: str | None = None, seed: int | None = None, enforce=None, test: str = "exact",
              nulls: str = "error", into: str | None = None, replace: bool = False, sql: bool = False,
              suppress_small: bool = False, id: str | None = None, l_diversity: int | None = None,
              max_top_share: float | None = None):
    """Uniform perturbation of `sensitive` with retention probability p (or the p of a
    rwn_sql.calibrate_p result, which must have been calibrated for the domain's m values).

    The release holds the `public` columns (default: every other column) exactly and the
    randomized sensitive column; any other column is left out, because every released
    column narrows the personal groups an attacker can form. `domain` is a list of values
    or a file with one value per line (default: the values in the data). NULL sensitive
    values: nulls='error' (default) refuses them, nulls='drop' leaves those records out.
    enforce=(eps, delta) splits each personal group whose records would not pass the chosen
    `test` at every count into t blocks that share one coin and one replacement value;
    each record keeps its own transition probabilities, so reconstruction stays unbiased.
    test='exact' (default) certifies every count of every group size; 'chernoff' is the
    paper's screening bound and certifies nothing. Sizes that no design passes refuse the
    data (the error says what would work), or with suppress_small=True their records are
    left out of the release (a warning gives the count).
    id: a column whose value is each record's identity in every keyed draw (integer or text;
    no NULL, no duplicate); the release is then the same whatever the input order. Without
    it the record identity is the input position. The id column is never released (it
    would make every personal group a single record), so it may not be public.
    l_diversity: with enforce (default 2), or when given, refuse personal groups of at least 2
    records holding fewer than l distinct sensitive values and public columns that determine
    the sensitive attribute (audit's attribute-disclosure checks); 1 turns that off.
    max_top_share: with that rule, also refuse groups of at least 2 records whose most frequent
    value holds more than this share (default: the better of p + (1-p)/m and the most frequent
    value's share of all records; 1 turns this part off).
    A floating-point sensitive column, or one with more than 256 distinct values and no
    given domain, is refused (RWN, or an explicit domain).
    Returns a DuckDB relation, or None with `into` (a table created in one statement).
    """
    be = backend_for(con)
    if not be.records_design_in_catalog and into is not None:
        raise RWNError(f"on {be.name}, randomize returns a DataFrame: write it with its own writer "
                       f"(the CLI writes Parquet)")
    params = privacy.RPParams(p, enforce, test)
    with key_scope(be, lasting=into is None):     # with into=, the key is gone once the table is written
        plan = plan_randomize(be, source, sensitive, params, public=public, domain=domain, key=key, seed=seed,
                              nulls=nulls, suppress_small=suppress_small, id_column=id,
                              l_diversity=l_diversity, max_top_share=max_top_share)
        _warn_suppressed(plan)
        if sql:
            return be.engine_sql(plan.shown_sql)
        out = be.deliver(plan.sql, into, replace)
        if into is not None:
            record_design(be.con, outputs.table_target(be.con, into), plan)
        return out


def record_design(con, target: str, plan) -> None:
    """COMMENT ON the table `target` (SQL name) just written: its design (design_record). A
    table left without it would be refused by estimates, so a failure drops the table."""
    from .release.design_record import comment_text
    try:
        con.execute(f"COMMENT ON TABLE {target} IS {quote_literal(comment_text(plan_design(plan)))}"
                    ).fetchall()
    except BaseException:
        con.execute(f"DROP TABLE IF EXISTS {target}").fetchall()
        raise


def _warn_suppressed(plan) -> None:
    if plan.suppressed_records:
        warnings.warn(f"suppress_small: {plan.suppressed_records} records in {plan.suppressed_groups} personal "
                      f"groups without a design are left out of the release", stacklevel=3)


def release(con: Session, source, path: str, sensitive: str, p: float | Calibration, public=None,
            domain=None, key: str | None = None, seed: int | None = None, enforce=None,
            test: str = "exact", nulls: str = "error", table: str | None = None,
            overwrite: bool = False, rwn: dict | None = None, suppress_small: bool = False,
            id: str | None = None, l_diversity: int | None = None, max_top_share: float | None = None) -> int:
    """Randomize like `randomize` and write a standalone release database at `path` (see
    rwn_sql.rp.release.release_db): the released table, its published parameters and reconstruction
    views, never the key or raw data. A p from rwn_sql.calibrate_p is recorded with its budget
    (metadata column p_calibration). With rwn=dict(columns=[...], k=, eps=, q=, scale=) the
    named numeric columns are first perturbed by RWN (they stay public, now perturbed).
    suppress_small=True: as in `randomize`; the metadata records how many records were left out.
    id: as in `randomize`; an RWN step keys its draws by it too (on Spark it is required).
    l_diversity: the attribute-disclosure rule of `randomize` (default 2, enforced or not); a
    release made with l_diversity=1 records it in its metadata; max_top_share: as in
    `randomize` (the limit applied is recorded too).
    Returns the number of released rows."""
    from .release.release_db import (ReleaseMeta, check_release_name, randomized_table_name, write_release,
                                     write_release_folder)
    be = backend_for(con)
    params = privacy.RPParams(p, enforce, test)
    name = table or release_table_name(source)
    check_release_name(name)        # before any work
    staged = None
    with key_scope(be, lasting=False):     # the key is gone once the release is written
        try:
            if rwn:    # the RWN step runs once, into a relation the randomization reads
                from ..rwn import run as rwn_method
                key, seed = resolve_key(key, seed), None      # the same key for both steps
                rwn = dict(dict(k=5, eps=0.0, q=1.0, scale="minmax"), **rwn)
                spec = rwn_method.spec(rwn["columns"], k=rwn["k"], eps=rwn["eps"], q=rwn["q"], scale=rwn["scale"], id=id)
                src = rwn_method.check_source(be, source, spec)
                staged = rwn_method.stage(be, rwn_method.prepare(be, src, spec, "perturb", be.key_sql(key)))
                source = staged
            plan = plan_randomize(con, source, sensitive, params, public=public, domain=domain, key=key, seed=seed,
                                  nulls=nulls, suppress_small=suppress_small, id_column=id,
                                  l_diversity=l_diversity, always_check=True, max_top_share=max_top_share)
            _warn_suppressed(plan)
            enforced = params.threshold is not None
            eps, delta = params.threshold or (None, None)
            meta = ReleaseMeta(table_name=randomized_table_name(name), release_name=name, sensitive=sensitive, sensitive_type=plan.src.type_of(sensitive),
                               public=plan.spec.public, p=params.p, domain=tuple(plan.values),
                               enforced=enforced, epsilon=eps, delta=delta, test=test if enforced else None,
                               method="rwn+uniform_perturbation" if rwn else "uniform_perturbation", rwn=rwn or {},
                               suppressed_records=plan.suppressed_records, l_diversity=plan.l_diversity,
                               max_top_share=plan.max_top_share,
                               p_calibration=params.calibration.describe() if params.calibration else None)
            if not be.releases_to_database_file:
                return write_release_folder(be, plan.sql, path, meta, overwrite=overwrite, trials=plan.blocks)
            return write_release(con, plan.sql, path, meta, overwrite=overwrite, trials=plan.blocks)
        finally:
            if staged:
                be.drop(staged)


def release_table_name(source) -> str:
    """A table name for a release: the file or table name of the source, else 'released'."""
    text = os.fspath(source) if isinstance(source, os.PathLike) else str(source)
    db = sources.split_db_target(text)
    if db:
        return db[1]
    base = os.path.basename(text).split(".")[0] if sources.file_format(text) else text
    return base if base.replace("_", "").isalnum() and not sources.QUERY_START.match(base) else "released"


@dataclass
class AuditResult:
    """The audit: `rows` (a DuckDB relation, a DataFrame on Spark: one row per personal group
    and sensitive value present in it, sorted), `groups_detail` (one row per personal group: its public values,
    size, trials, how many values are present, the smallest Chernoff bound and exact tail
    over its values, after enforcement `worst_design_tail`, the smallest exact tail of its
    design over EVERY count 1..n, and `passes` under the chosen test; `l_distinct`, the
    distinct sensitive values of the group, `l_entropy`, exp of their entropy, `top_share`, the
    share of the most frequent one) and the summary counts; `disclosure`, the attribute-disclosure
    checks (AttributeDisclosure); `key_risk`, the key-variable risk of the public columns (KeyRisk:
    k-anonymity at k = 2, 3, 5, sample uniques, individual risk; the personal groups are its
    cells; no weights, the audit has none; None without public columns), reported, not judged;
    `ok`, the verdict. Both
    relations read temporary tables of the connection; `close()` (or a `with` block) drops
    them, else they go with the connection."""
    rows: object
    groups_detail: object
    groups: int
    failing_groups: int
    records: int
    failing_records: int
    test: str
    enforced: bool
    public: tuple[str, ...] = ()
    disclosure: AttributeDisclosure | None = None
    sensitive: str = ""
    key_risk: KeyRisk | None = None
    _backend: object = None
    _tables: tuple[str, ...] = ()
    _rows_sql: str = ""
    _groups_sql: str = ""

    def worst_failing(self, limit: int = 5) -> list[dict]:
        """The largest failing groups (at most `limit`), each with its most exposed value: the
        row of the smallest tail under the test, as a dict of the audit's columns."""
        keys = [quote_ident(c) for c in self.public]
        tail = ("least(exact_upper, exact_lower)" if self.test == "exact"
                else "least(chernoff_upper, chernoff_lower)")
        cols = list(self.public) + list(rp_sql.AUDIT_ROW_STATS) + ["group_passes"]
        rows = self._backend.rows(
            f"SELECT {', '.join(quote_ident(c) for c in cols)} FROM (SELECT *, row_number() OVER (PARTITION BY "
            f"{', '.join(keys) or 'group_size'} ORDER BY {tail}) AS __rwn_rank FROM ({self._rows_sql}) AS r "
            f"WHERE NOT group_passes) AS w WHERE __rwn_rank = 1 ORDER BY group_size DESC LIMIT {int(limit)}")
        return [dict(zip(cols, row)) for row in rows]

    def write_rows(self, target: str, overwrite: bool = False) -> int:
        """Write `rows` to a file (on Spark a .parquet directory), atomically."""
        return self._backend.write(self._rows_sql, target, overwrite=overwrite)

    def write_groups(self, target: str, overwrite: bool = False) -> int:
        """Write `groups_detail` to a file (on Spark a .parquet directory), atomically."""
        return self._backend.write(self._groups_sql, target, overwrite=overwrite)

    def close(self) -> None:
        """Drop the temporary tables behind `rows` and `groups_detail` (they cannot be read after)."""
        if self._backend is not None:
            for table in self._tables:
                self._backend.drop(table)
            self._backend = None

    def __enter__(self) -> "AuditResult":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def ok(self) -> bool:
        """Every group passes the test and (unless l_diversity = 1) no group violates l and no
        public column is a proxy: the audit's exit code 0."""
        return self.failing_groups == 0 and (self.disclosure is None or self.disclosure.ok)

    def summary(self) -> str:
        state = "after enforcement" if self.enforced else "before enforcement"
        text = (f"{self.test} test, {state}: {self.failing_groups} of {self.groups} personal groups fail "
                f"({self.failing_records} of {self.records} records)")
        d = self.disclosure
        if d is None:
            return text + self._key_risk_lines() + "\n" + self.verdict()
        off = " (check turned off: l_diversity = 1)" if d.l_diversity <= 1 else ""
        text += (f"\nl-diversity (distinct, l = {d.l_diversity}){off}: {d.l_failing_groups} personal groups of at "
                 f"least 2 records hold fewer than {d.l_diversity} distinct values ({d.l_failing_records} of "
                 f"{self.records} records)")
        text += (f"\ntop share (limit {d.max_top_share:.4g}){off}: {d.share_failing_groups} personal groups of at "
                 f"least 2 records have one value above the limit ({d.share_failing_records} of {self.records} "
                 f"records)")
        pairs = f"{len(self.public)} public columns and {d.pairs_checked} of {d.pairs_possible} pairs checked"
        if d.proxies:
            text += f"\nproxies ({pairs}):" + "".join(f"\n  {x.describe(self.sensitive)}" for x in d.proxies)
        else:
            text += f"\nproxies: none ({pairs})"
        return text + self._key_risk_lines() + "\n" + self.verdict()

    def _key_risk_lines(self) -> str:
        kr = self.key_risk
        return "" if kr is None else "\n" + kr.describe("the public columns", unweighted="no weights")

    def verdict(self) -> str:
        """One line: passes, or fails and why (what makes `ok` false)."""
        if self.ok:
            return "verdict: passes"
        why = []
        if self.failing_groups:
            why.append(f"{self.failing_records} records in groups failing (eps, delta)")
        d = self.disclosure
        if d is not None and d.l_diversity > 1:
            if d.l_failing_records:
                why.append(f"{d.l_failing_records} records in groups below l = {d.l_diversity}")
            if d.share_failing_records:
                why.append(f"{d.share_failing_records} records in groups above the top-share limit "
                           f"{d.max_top_share:.4g}")
            if d.proxies:
                why.append(f"{len(d.proxies)} proxy column set(s)")
        return "verdict: FAILS: " + "; ".join(why)


def audit(con: Session, source, sensitive: str, p: float | Calibration, epsilon: float, delta: float,
          public=None, domain=None, test: str = "exact", enforce: bool = False,
          nulls: str = "error", sql: bool = False, l_diversity: int | None = None,
          max_top_share: float | None = None):
    """(eps, delta)-reconstruction-privacy audit of the ORIGINAL data (data steward side).

    The rows are computed once into a temporary table (`result.rows` reads it, sorted by
    group and value; it goes away with the connection). For every personal group and every
    sensitive value present in it: group size, trials
    (the group size, or its block count t when `enforce`), value count and frequency, mu,
    theta, the full Chernoff bounds and the exact tail probabilities, and whether it passes
    each test; `group_passes` applies the chosen `test` to all values of the group.
    Attribute disclosure (AttributeDisclosure, in the summary and `ok`): per group distinct
    and entropy l-diversity and the share of its most frequent value (`groups_detail`); the
    groups of at least 2 records with fewer than `l_diversity` (default 2) distinct values,
    the groups of at least 2 records whose most frequent value holds more than `max_top_share`
    (default: the better of p + (1-p)/m and the most frequent value's share of all records),
    and the public columns (and pairs) that determine the sensitive attribute. `ok` is false
    when a group fails the test, or (unless l_diversity=1) a group violates l or the top-share
    limit or a proxy is found. `key_risk`: the key-variable risk of the public columns (as
    rwn_sql.key_variable_risk computes it, without weights, over the audited records), from the
    personal groups' sizes; reported in the summary, not part of `ok`.
    """
    be = backend_for(con)
    params = privacy.RPParams(p, (epsilon, delta), test)
    a = resolve_audit(be, source, sensitive, params, public=public, domain=domain, nulls=nulls, enforce=enforce,
                      l_diversity=l_diversity, max_top_share=max_top_share)
    src, spec, values, pp, blocks, worst, failing = a.src, a.spec, a.values, a.pp, a.blocks, a.worst, a.failing
    l_diversity = a.l_diversity
    if be.has_python_udfs:
        ensure_functions(be.con)
    if sql:
        return be.engine_sql(audit_statement(be, src, spec, len(values), pp, blocks, failing_designs=failing))
    # Computed once into two temporary relations: the rows per (group, value), unsorted, and
    # per personal group its verdict under `test`; the summary reads the groups. `rows`
    # joins the verdicts back and sorts when read: sorting and joining ~1M rows cost more
    # than any step after the counting, so they are left to whoever reads the rows.
    # Without Python UDFs the cases and the rows are two statements: both read the counts staged once.
    counts = None if be.has_python_udfs else be.stage(
        rp_sql.audit_sql(src.sql, spec, len(values), pp.eps, pp.delta, pp.test, blocks, dialect=be.dialect,
                         tails_relation="", counts_only=True))
    try:
        rows_table = be.stage(audit_statement(be, src, spec, len(values), pp, blocks, ordered=False, group_verdicts=False,
                                         counts_relation=counts))
    finally:
        if counts is not None:      # the staged rows no longer need it
            be.drop(counts)
    keys = [quote_ident(c) for c in spec.public]
    pub = "".join(k + ", " for k in keys)
    groups_sql = f"""SELECT {pub}any_value(group_size) AS group_size, any_value(trials) AS trials,
            any_value(enforced) AS enforced, count(*) AS values_present,
            least(min(chernoff_upper), min(chernoff_lower)) AS worst_chernoff,
            least(min(exact_upper), min(exact_lower)) AS worst_exact,
            bool_and(passes_{test}) AS passes, {rp_sql.diversity_columns()}
        FROM {rows_table}{' GROUP BY ' + ', '.join(keys) if keys else ''}"""
    if enforce:
        groups_sql = judged_groups(groups_sql, keys, worst, pp)
    groups_table = be.stage(groups_sql)
    on = rp_sql.same_group("r", "g", keys) if keys else "true"
    stats = ", ".join(f"r.{c}" for c in rp_sql.AUDIT_ROW_STATS)
    rows_sql = (f"SELECT {''.join('r.' + k + ', ' for k in keys)}{stats}, g.passes AS group_passes FROM "
                f"{rows_table} r JOIN {groups_table} g ON {on} ORDER BY {''.join('r.' + k + ', ' for k in keys)}r.value")
    groups_read = f"SELECT * FROM {groups_table}" + (f" ORDER BY {', '.join(keys)}" if keys else "")
    g, fg, r, fr = be.rows(f"""SELECT count(*), count(*) FILTER (WHERE NOT passes), sum(group_size),
        coalesce(sum(group_size) FILTER (WHERE NOT passes), 0) FROM {groups_table}""")[0]
    disclosure = attribute_disclosure(be, rows_table, spec.public, l_diversity,
                                      max_top_share=top_share_limit(be, rows_table, params.p, len(values), max_top_share))
    return AuditResult(rows=be.relation(rows_sql), groups_detail=be.relation(groups_read), groups=g,
                       failing_groups=fg, records=int(r or 0), failing_records=int(fr), test=test,
                       enforced=bool(enforce), public=spec.public, disclosure=disclosure, sensitive=sensitive,
                       key_risk=_public_key_risk(be, groups_table, src.label, spec.public) if r else None,
                       _backend=be, _tables=(rows_table, groups_table), _rows_sql=rows_sql, _groups_sql=groups_read)


def _public_key_risk(be, groups_table: str, label: str, public) -> KeyRisk | None:
    """The key-variable risk of the public columns, whose cells are the personal groups (one row
    each in `groups_table`, with its group_size); None without public columns."""
    if not public:
        return None
    row = be.rows(group_sizes_risk_sql(groups_table, "group_size", dialect=be.dialect))[0]
    return key_risk_of(row, label, public, None)


def estimates(con: Session, release, sensitive: str, p: float | None = None, domain=None,
              group_by=(), where: str | None = None, values=None, public=None, enforce=RECORDED,
              test: str | None = None, sql: bool = False):
    """Reconstructed counts from a release, needing only the release and its design.

    Per group of `group_by` (public columns) and per domain value (or, with `values`, for
    that set of values together): released_count, group_size, the unbiased `estimate`, its
    `std_error`, a 95% interval [ci_low, ci_high] and `estimate_clipped` to [0, group size].
    `where` is a predicate over public columns (comparisons, IN, BETWEEN, IS NULL, AND / OR /
    NOT with literals; checked and re-rendered, never pasted).

    The design (p, the domain, the public columns, the enforcement and its blocks) is read
    from where it was recorded: the metadata of a release database (its table named as
    `rel.adult`, `rel.adult_randomized`, 'release.duckdb:adult', ...), the COMMENT of a table
    written by randomize(into=), the metadata of a Parquet file written by rwn-sql randomize
    (design_record). Arguments given as well must agree with the record (else RWNError).
    Without a record they are required: p, domain, and enforce=(eps, delta) with `test` (and
    `public`, default every column but the sensitive one) for a release made with enforcement,
    whose standard errors then account for the blocks, or enforce=None for one made without;
    leaving enforce out is refused, since independent-trial errors of an enforced release are
    several times too small. Refused: a domain with a value twice (after the cast to the
    column's type), released values outside the domain, and a `where` naming the sensitive
    column.
    """
    if p is not None:
        p = privacy.RPParams(p).p
    if not (isinstance(enforce, str) and enforce == RECORDED):
        enforce = privacy.Threshold.of(enforce)
    if isinstance(release, str) and sources.QUERY_START.match(release):   # SQL text: one statement only
        from ..statements import single_statement
        single_statement(release, "the release query", trailing=False)   # pasted inside (...), as sources reads it
    if domain is not None:
        domain = published_domain(domain)
    be = backend_for(con)
    label = release if isinstance(release, str) else "the release"
    release, recorded, trials_sql = recorded_design(be, release)
    src = be.source(release)
    e = resolve_estimates(be, src, recorded, trials_sql, label, sensitive, p, domain, group_by, where, values,
                          public, enforce, test)
    design = None
    if trials_sql is not None:
        design = (trials_sql, e.public)
    elif e.blocks is not None:
        design = (rp_sql.trials_values(e.blocks), e.public)
    text = rp_sql.estimates_sql(src.sql, sensitive, float_literal(e.p), e.literal, e.group_by, e.where_sql, e.values,
                                design, dialect=be.dialect)
    return be.engine_sql(text) if sql else be.relation(text)


@dataclass(frozen=True)
class EstimatesDesign:
    """What the rules of estimates decided over a release: p, the typed domain literal, the
    groups, the checked predicate, the estimated values (SQL literals of the sensitive type),
    the public columns and the blocks per group size of an enforced release (None: not
    enforced, or recorded as a relation)."""
    p: float
    domain: list[str]
    literal: str
    group_by: tuple[str, ...]
    where_sql: str | None
    values: list[str] | None
    public: tuple[str, ...]
    blocks: dict[int, int] | None


def resolve_estimates(be, src, recorded, trials_sql, label: str, sensitive: str, p, domain, group_by, where,
                      values, public, enforce, test) -> EstimatesDesign:
    """Every rule of estimates over the release `src` (a visible one; a TEMP release of the SQL
    macros is handed here by its statement, rp.temp_source), with its recorded design
    (`recorded`, and `trials_sql`, the blocks recorded as a relation). Refusals raise RWNError."""
    p, domain, public, enforce, test = reconcile(recorded, label, sensitive, p, domain, public, enforce, test)
    group_by = (group_by,) if isinstance(group_by, str) else tuple(group_by)
    check_names(src, sensitive, group_by)
    pub = public_columns(src, sensitive, public)
    check_names(src, sensitive, pub)
    if recorded is not None and trials_sql is None:
        check_recorded_columns(src, sensitive, pub, recorded, label)
    check_estimate_columns(sensitive, group_by, pub)
    domain = published_domain(domain)
    type_sql = src.type_of(sensitive)
    literal = typed_domain(be, domain, type_sql, sensitive)
    where_sql = None
    if where is not None:
        from .release.analyst import check_predicate
        where_sql = check_predicate(where, pub, sensitive, src.label)
    values = estimated_values(values, domain)
    vals = None if values is None else [f"CAST({quote_literal(v)} AS {type_sql})" for v in values]
    refuse_released_outside(be, src, sensitive, literal)
    blocks = None
    if trials_sql is None and enforce is not None:
        blocks = _release_blocks(be, src, sensitive, pub, p, len(domain), enforce, test, recorded, label)
    return EstimatesDesign(p, domain, literal, group_by, where_sql, vals, pub, blocks)


def _release_blocks(be, src, sensitive: str, pub, p, m: int, enforce, test, recorded, label: str) -> dict[int, int]:
    """The blocks per personal-group size of a release enforced with `enforce` (a Threshold or
    the recorded pair), as its design gives them for the group sizes present; when its record
    lists blocks too, they must agree (else the table or the record was altered)."""
    spec = rp_sql.RandomizeSpec(sensitive=sensitive, p=float(p), public=pub)
    trials = blocks_for(be, src, spec, privacy.RPParams(p, enforce, test).privacy(m))
    if recorded is not None and recorded.blocks is not None:
        kept = dict(recorded.blocks)
        wrong = sorted(n for n, t in trials.items() if kept.get(n) != t)
        if wrong:
            raise RWNError(f"{label} records {kept.get(wrong[0])} blocks for its personal groups of "
                           f"{wrong[0]} records, where its design gives {trials[wrong[0]]}: the table or its "
                           f"record was altered (refused)")
    return trials


def query(con: Session, sql: str, release: str | None = None):
    """Answer an analyst's count query (or SUM(x) / AVG(x) of a public numeric column) with the
    reconstruction (rwn_sql.analyst.rewrite): per output row released_count (released_sum,
    released_avg and count_estimate), group_size, estimate, std_error, 95% interval, and whether
    the row reconstructs a single personal group (micro_reconstruction). `release` is a
    release database file; without it the release tables and their metadata must be in
    `con`. Only the rewritten SQL runs, on a separate connection that sees nothing but the
    release (read-only, no file access). Returns (relation of `con` over the computed rows,
    Rewritten)."""
    from .release.query_run import run_query, run_query_on
    be = backend_for(con)
    if not be.releases_to_database_file:
        if release is None or not os.path.isdir(os.fspath(release)):
            raise RWNError(f"on {be.name}, release= names a release folder (written by rwn_sql.release on "
                           f"{be.name}); got {release!r}")
        return run_query_on(be, sql, os.fspath(release))
    if release is not None:
        if not os.path.isfile(os.fspath(release)):
            raise RWNError(f"release database {str(release)!r} does not exist")
        release = os.path.abspath(os.fspath(release))
    return run_query(con, sql, release=release)
