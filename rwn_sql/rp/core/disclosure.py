"""Attribute disclosure beyond (eps, delta): distinct l-diversity, the top-share limit and public
columns that determine the sensitive attribute (proxies), measured over the personal groups
(audit) and refused before a release (randomize, release)."""
from __future__ import annotations

from dataclasses import dataclass

from . import sqlgen as rp_sql
from ...errors import RWNError
from ...identifiers import float_literal, quote_ident
from ...messages import Message
from .checks import check_max_top_share


@dataclass(frozen=True)
class Proxy:
    """Public columns whose values determine the sensitive attribute almost surely: `exposed`
    of the `records` in their classes of at least 2 records hold the most frequent value of a
    class where it has at least 95 % of the records (rp_sql.proxy_sql); H(SA | columns) in bits."""
    columns: tuple[str, ...]
    records: int
    exposed: int
    cond_entropy: float

    def describe(self, sensitive: str) -> str:
        named = " and ".join(repr(c) for c in self.columns)
        return (f"public column{'s' if len(self.columns) > 1 else ''} {named} determine{'' if len(self.columns) > 1 else 's'} "
                f"{sensitive!r} for {self.exposed} of {self.records} records (H({sensitive} | "
                f"{', '.join(self.columns)}) = {self.cond_entropy:.3f} bits): drop or coarsen "
                f"{'them' if len(self.columns) > 1 else 'it'}")


@dataclass(frozen=True)
class AttributeDisclosure:
    """The attribute-disclosure checks of one set of personal groups: `l_failing_groups` /
    `l_failing_records`, groups of at least 2 records holding fewer than `l_diversity`
    distinct sensitive values; `share_failing_groups` / `share_failing_records`, groups of at
    least 2 records whose most frequent value holds more than `max_top_share` of the group;
    `failing_records`, the records in groups failing either; `proxies`, the public columns (and
    pairs) that determine the sensitive attribute; `pairs_checked` of `pairs_possible` pairs
    (the budget: pairs among columns of at most rp_sql.PROXY_PAIR_VALUES values, at most
    rp_sql.PROXY_MAX_PAIRS)."""
    l_diversity: int
    l_failing_groups: int
    l_failing_records: int
    proxies: tuple[Proxy, ...]
    pairs_checked: int
    pairs_possible: int
    max_top_share: float = 1.0
    share_failing_groups: int = 0
    share_failing_records: int = 0
    failing_records: int = 0

    @property
    def ok(self) -> bool:
        """No group violates l or the top-share limit and no public column is a proxy; always
        true at l_diversity = 1."""
        return self.l_diversity <= 1 or (self.failing_records == 0 and not self.proxies)


def top_share_limit(be, counts: str, p: float, m: int, max_top_share) -> float:
    """The top-share limit over `counts`: max_top_share when given, else the better of what an
    attacker gets without the group (rp_sql.top_share_limit_sql), so that a majority vote within
    any group of at least 2 records recovers no more than either."""
    given = check_max_top_share(max_top_share)
    if given is not None:
        return given
    return float(be.rows(f"SELECT {rp_sql.top_share_limit_sql(float(p), str(int(m)), rp_sql.mode_share_sql(counts))}")[0][0])


def attribute_disclosure(be, counts: str, public, l_diversity: int, leave_out=(),
                         max_top_share: float = 1.0) -> AttributeDisclosure:
    """The attribute-disclosure checks over `counts` (a relation of the public columns, value,
    value_count: one row per personal group and sensitive value present), with the top-share
    limit `max_top_share` (a number; see top_share_limit). A set of public
    columns is a proxy when records > 0, its determined classes expose at least half of the
    records in its classes of at least 2 records, and the sensitive attribute is not that
    concentrated overall (its most frequent value holds less than 95 % of all records: then
    no column is to blame, and l-diversity says so). Singles: every public column; pairs:
    among the columns of at most PROXY_PAIR_VALUES distinct values (NULL one of them), neither
    a proxy alone, those with the fewest combinations first, at most PROXY_MAX_PAIRS."""
    keys = [quote_ident(c) for c in public]
    share_sql = float_literal(max_top_share)
    l_groups, l_records, s_groups, s_records, either = (
        int(x) for x in be.rows(rp_sql.l_summary_sql(counts, keys, l_diversity, leave_out, share_sql))[0])
    checks = dict(max_top_share=float(max_top_share), share_failing_groups=s_groups,
                  share_failing_records=s_records, failing_records=either)
    if not keys:
        return AttributeDisclosure(l_diversity, l_groups, l_records, (), 0, 0, **checks)
    share, whole = rp_sql.PROXY_SHARE
    distinct = ", ".join(f"count(DISTINCT {k}) + max(CASE WHEN {k} IS NULL THEN 1 ELSE 0 END)" for k in keys)
    row = be.rows(f"SELECT (SELECT {whole} * max(s) >= {share} * sum(s) FROM (SELECT sum(value_count) AS s "
                  f"FROM {counts} GROUP BY value) AS __rwn_v), {distinct} FROM {counts}")[0]
    concentrated, sizes = bool(row[0]), dict(zip(public, row[1:]))

    def flagged(sets):
        if not sets or concentrated:
            return []
        found = be.rows(rp_sql.proxy_sql(counts, [[quote_ident(c) for c in cs] for cs in sets]))
        return sorted((Proxy(tuple(sets[i]), int(n), int(e), float(h or 0.0)) for i, n, e, h in found
                       if n and 2 * e >= n), key=lambda x: (-x.exposed, x.columns))
    singles = flagged([(c,) for c in public])
    named = {x.columns[0] for x in singles}
    small = [c for c in public if sizes[c] <= rp_sql.PROXY_PAIR_VALUES and c not in named]
    pairs = sorted(((a, b) for i, a in enumerate(small) for b in small[i + 1:]),
                   key=lambda ab: (sizes[ab[0]] * sizes[ab[1]], public.index(ab[0]), public.index(ab[1])))
    checked = pairs[:rp_sql.PROXY_MAX_PAIRS]
    return AttributeDisclosure(l_diversity, l_groups, l_records, tuple(singles + flagged(checked)),
                               len(checked), len(pairs), **checks)


# What a refusal says of groups that violate l or the top-share limit
L_DIVERSITY_PROBLEM = Message("{records} records sit in {groups} personal groups of at least 2 records holding fewer "
                              "than {l} distinct values of {sensitive!r} (distinct l-diversity): a majority vote of "
                              "the released values within such a group recovers the value")
TOP_SHARE_PROBLEM = Message("{records} records sit in {groups} personal groups of at least 2 records whose most "
                            "frequent value of {sensitive!r} holds more than {limit} of the group (the top-share "
                            "limit: the better of a record's own released value, p + (1-p)/m, and guessing the most "
                            "frequent value): a majority vote within such a group recovers more of the values than an "
                            "attacker gets without it")


def _counts_sql(src, spec) -> str:
    """One row per personal group and sensitive value present: the public columns, value, value_count."""
    pub = "".join(quote_ident(c) + ", " for c in spec.public)
    where = f" WHERE {quote_ident(spec.sensitive)} IS NOT NULL" if spec.nulls == "drop" else ""
    return (f"SELECT {pub}{quote_ident(spec.sensitive)} AS value, count(*) AS value_count FROM {src.sql}{where} "
            f"GROUP BY {pub}{quote_ident(spec.sensitive)}")


def refuse_attribute_disclosure(be, src, spec, l_diversity: int, leave_out=(), m: int = 2,
                                 max_top_share=None) -> float | None:
    """randomize (enforced) and release: refuse personal groups that violate l or the top-share
    limit and public proxies, saying what would work (the fallback of l_diversity=1 or
    max_top_share=1 is recorded in metadata). Returns the top-share limit applied (None: off)."""
    if l_diversity <= 1:
        return None
    counts = be.stage(_counts_sql(src, spec))
    try:
        limit = top_share_limit(be, counts, spec.p, m, max_top_share)
        found = attribute_disclosure(be, counts, spec.public, l_diversity, leave_out, limit)
        if found.ok:
            return limit
        problems, ways = [], []
        if found.l_failing_records:
            problems.append(L_DIVERSITY_PROBLEM.text(records=found.l_failing_records, groups=found.l_failing_groups,
                                                     l=l_diversity, sensitive=spec.sensitive))
        problems += [x.describe(spec.sensitive) for x in found.proxies]
        if found.share_failing_records > found.l_failing_records:
            problems.append(TOP_SHARE_PROBLEM.text(records=found.share_failing_records,
                                                   groups=found.share_failing_groups, limit=f"{limit:.4g}",
                                                   sensitive=spec.sensitive))
        best = None
        share_sql = float_literal(limit)
        if found.failing_records and spec.public:     # the public column whose removal helps most
            left = []
            for column in spec.public:
                rest = [quote_ident(c) for c in spec.public if c != column]
                left.append((int(be.rows(rp_sql.l_summary_sql(counts, rest, l_diversity, leave_out,
                                                              share_sql))[0][4]), column))
            best = min(left)
        for x in found.proxies:
            gain = (f" (dropping it leaves {best[0]} records in groups that violate l or the top-share limit)"
                    if best and x.columns == (best[1],) else "")
            ways.append(f"drop or coarsen public column{'s' if len(x.columns) > 1 else ''} "
                        f"{' and '.join(repr(c) for c in x.columns)}{gain}")
        if best and not any(x.columns == (best[1],) for x in found.proxies):
            ways.append(f"coarsening: dropping public column {best[1]!r} leaves {best[0]} records in groups that "
                        f"violate l or the top-share limit")
        if found.failing_records:
            ways.append("suppression: leave those records out of the input (rwn-sql audit --groups-output lists "
                        f"the groups: l_distinct < {l_diversity} or top_share > {limit:.4g})")
        if found.share_failing_records > found.l_failing_records:
            ways.append("max_top_share=1 (--max-top-share 1) to keep only l-diversity, which the release metadata "
                        "records")
        ways.append("l_diversity=1 (--l-diversity 1) to release anyway, which the release metadata records")
        raise RWNError("attribute disclosure: " + "; ".join(problems) + ". What would work: " + "; or ".join(ways))
    finally:
        be.drop(counts)
