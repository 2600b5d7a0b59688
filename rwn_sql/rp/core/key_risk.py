"""Key-variable risk's SQL and its result, written once: k-anonymity violations, sample uniques
and sdcMicro's individual risk, from the cells of the key variables (their definitions and
references: rwn_sql.evaluation.key_risk).

Two readers share it: rwn_sql.key_variable_risk (evaluation), one GROUP BY over any key
variables of a source, with optional sampling weights; and the audit of reconstruction privacy
(rp.api.audit), whose personal groups ARE the cells of the public columns, so the key-variable
risk of the public columns follows from the group sizes it has already counted (no weights:
every record stands for itself).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ...engines.dialects import DUCKDB, Dialect
from ...identifiers import quote_ident

__all__ = ["DEFAULT_KS", "KeyRisk", "KViolations", "group_sizes_risk_sql", "key_risk_of", "key_risk_sql", "weight_facts"]

DEFAULT_KS = (2, 3, 5)


@dataclass(frozen=True)
class KViolations:
    """The k-anonymity violations at one k: cells with fewer than k records, and their records."""
    k: int
    records: int
    cells: int


@dataclass(frozen=True)
class KeyRisk:
    """The risk of the key variables `keys` of `source` (see rwn_sql.evaluation.key_risk)."""
    source: str                            # how the source was named (its label)
    keys: tuple[str, ...]
    weight: str | None
    rows: int
    cells: int                             # distinct key combinations
    k_anonymity: tuple[KViolations, ...]   # one per k, in the order of `ks`
    sample_uniques: int                    # records whose combination occurs once
    expected_reidentifications: float      # sum of the individual risks
    global_risk: float                     # expected_reidentifications / rows
    max_individual_risk: float

    def to_dict(self) -> dict:
        """Plain dicts, lists, str, int and float."""
        out = asdict(self)
        out["keys"] = list(self.keys)
        out["k_anonymity"] = [asdict(v) for v in self.k_anonymity]
        return out

    def describe(self, subject: str, unweighted: str = "") -> str:
        """The lines rwn-sql prints: the key risk of `subject` ('the release', 'the public
        columns'); `unweighted`, said after the keys when there are no weights ('no weights')."""
        weights = f"; weights {self.weight}" if self.weight else (f"; {unweighted}" if unweighted else "")
        lines = [f"key-variable risk of {subject} ({', '.join(self.keys)}{weights}): {self.cells} combinations"]
        lines += [f"  {f'records in cells of fewer than {v.k}':<44}{v.records} ({v.cells} cells)"
                  for v in self.k_anonymity]
        lines.append(f"  sample uniques                              {self.sample_uniques}")
        lines.append(f"  expected re-identifications                 {self.expected_reidentifications:.4f} "
                     f"(global risk {self.global_risk:.4f}, largest {self.max_individual_risk:.4f})")
        return "\n".join(lines)


def _individual_risk_sql(f: str, big_f: str, dialect: Dialect) -> str:
    """The individual risk of a cell of f records and estimated population size big_f (DOUBLE),
    NULL where the weights make it undefined (big_f < f or not finite: refused afterwards)."""
    p = f"({f} / {big_f})"
    odds = f"({p} / (1 - {p}))"
    return (f"CASE WHEN NOT {dialect.is_finite(big_f)} OR {big_f} < {f} THEN NULL "
            f"WHEN {big_f} = {f} THEN CAST(1 AS DOUBLE) / {f} "
            f"WHEN {f} = 1 THEN {odds} * ln(1 / {p}) "
            f"WHEN {f} = 2 THEN {odds} - {odds} * {odds} * ln(1 / {p}) "
            f"ELSE {p} / ({f} - (1 - {p})) END")


def _over_cells_sql(ks, dialect: Dialect) -> str:
    """The summary over `cells` (one row per cell: f, big_f, weighed, low, finite): one row of
    rows, cells, for each k the records and cells below k, sample uniques, the sum and maximum
    of the individual risks, the non-NULL weights, the smallest weight, whether all are finite."""
    per_k = "".join(f", COALESCE(SUM(f) FILTER (WHERE f < {int(k)}), 0), COUNT(*) FILTER (WHERE f < {int(k)})"
                    for k in ks)
    return (f"risks AS (SELECT *, {_individual_risk_sql('f', 'big_f', dialect)} AS r FROM cells) "
            f"SELECT COALESCE(SUM(f), 0), COUNT(*){per_k}, COUNT(*) FILTER (WHERE f = 1), SUM(f * r), MAX(r), "
            f"SUM(weighed), MIN(low), bool_and(finite) FROM risks")


def key_risk_sql(source_sql: str, keys, weight: str | None = None, ks=DEFAULT_KS) -> str:
    """The one statement of key_variable_risk (DuckDB): a GROUP BY over the key variables (NULL a
    value of its own), then one row: rows, cells, for each k the records and cells below k, sample
    uniques, the sum and maximum of the individual risks, and the weight checks (non-NULL
    weights, smallest weight, whether every weight is finite)."""
    group = ", ".join(quote_ident(k) for k in keys)
    w = f"CAST({quote_ident(weight)} AS DOUBLE)" if weight is not None else "CAST(1 AS DOUBLE)"
    return (f"WITH cells AS (SELECT COUNT(*) AS f, SUM({w}) AS big_f, COUNT({w}) AS weighed, MIN({w}) AS low, "
            f"bool_and({DUCKDB.is_finite(w)}) AS finite FROM {source_sql} GROUP BY {group}), "
            + _over_cells_sql(ks, DUCKDB))


def group_sizes_risk_sql(groups_sql: str, size_column: str, ks=DEFAULT_KS, dialect: Dialect = DUCKDB) -> str:
    """The same row as key_risk_sql, without weights, from a relation `groups_sql` already holding
    one row per cell and its record count in `size_column` (the audit's personal groups)."""
    f = quote_ident(size_column)
    return (f"WITH cells AS (SELECT {f} AS f, CAST({f} AS DOUBLE) AS big_f, {f} AS weighed, "
            f"CAST(1 AS DOUBLE) AS low, true AS finite FROM {groups_sql}), " + _over_cells_sql(ks, dialect))


def key_risk_of(row, source: str, keys, weight: str | None, ks=DEFAULT_KS) -> KeyRisk:
    """The KeyRisk of the row of key_risk_sql or group_sizes_risk_sql (of at least one record;
    the weights already checked)."""
    rows, cells = int(row[0]), int(row[1])
    at = 2 + 2 * len(ks)
    uniques, total, largest = row[at:at + 3]
    violations = tuple(KViolations(int(k), int(row[2 + 2 * i]), int(row[3 + 2 * i])) for i, k in enumerate(ks))
    return KeyRisk(source=source, keys=tuple(keys), weight=weight, rows=rows, cells=cells, k_anonymity=violations,
                   sample_uniques=int(uniques), expected_reidentifications=float(total),
                   global_risk=float(total) / rows, max_individual_risk=float(largest))


def weight_facts(row, ks=DEFAULT_KS) -> tuple:
    """(non-NULL weights, smallest weight, whether every weight is finite) of key_risk_sql's row."""
    return tuple(row[5 + 2 * len(ks):])
