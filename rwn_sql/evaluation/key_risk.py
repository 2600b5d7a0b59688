"""Key-variable (quasi-identifier) risk, as sdcMicro and ARX report it, computed by one SQL
GROUP BY in DuckDB:

    kr = key_variable_risk(con, "adult", ["sex", "race", "age", "education"])
    kr.sample_uniques, kr.k_anonymity[0].records, kr.global_risk, kr.to_dict()

A cell is one combination of the key variables' values; f_k is the number of records in cell
k (the sample frequency) and F_k its estimated population frequency, the sum of the sampling
weights of its records (without weights F_k = f_k: the data is the population). Reported:

* ``k_anonymity``: for each k in `ks` (default 2, 3, 5), the number of records in, and the
  number of cells with, fewer than k records (the k-anonymity violations);
* ``sample_uniques``: the records whose combination occurs once (f_k = 1);
* the individual risk r_k of a record of cell k, the base individual risk of Benedetti and
  Franconi in the approximation sdcMicro documents for ``indivRisk(method="approx")`` (its
  ``measure_risk`` estimates the same risk), with p_k = f_k / F_k:

      F_k = f_k (no weights, or weights 1):  r_k = 1 / f_k
      f_k = 1:   r_k = p_k / (1 - p_k) * ln(1 / p_k)
      f_k = 2:   r_k = p_k / (1 - p_k) - (p_k / (1 - p_k))^2 * ln(1 / p_k)
      f_k >= 3:  r_k = p_k / (f_k - (1 - p_k))      (the general approximation, also for f_k = 3)

  ``expected_reidentifications`` is the sum of the records' individual risks (sdcMicro's
  ``global_risk_ER``), ``global_risk`` that sum / n (its ``global_risk``), ``max_individual_risk``
  the largest r_k.

References: Benedetti, R. and Franconi, L. (1998), Statistical and technological solutions for
controlled data dissemination, Pre-proceedings of New Techniques and Technologies for
Statistics; Franconi, L. and Polettini, S. (2004), Individual risk estimation in mu-Argus: a
review, Privacy in Statistical Databases, LNCS 3050, 262-272; Templ, M., Kowarik, A. and
Meindl, B. (2015), Statistical Disclosure Control for Micro-Data Using the R Package sdcMicro,
Journal of Statistical Software 67(4), doi:10.18637/jss.v067.i04 (functions ``indivRisk`` and
``measure_risk``).

Two differences from sdcMicro, on purpose:
* missing values: NULL is a value of its own (SQL's GROUP BY: all NULLs of a key variable fall
  in one category, as ARX treats a missing value), so a record with a NULL key is counted in the
  cell of the records with the same values and NULLs. sdcMicro's ``freqCalc`` and
  ``measure_risk`` instead let a missing value stand for ANY category (the record is counted
  in every cell its known values match, and a record with all keys missing gets risk 0):
  with NULLs in the keys the two differ; without, they agree.
* weights: every weight must be a finite number >= 1 (a sampling weight is an inverse
  inclusion probability, so F_k >= f_k and p_k <= 1; a weight below 1 would make r_k exceed
  1). sdcMicro's compiled ``measure_risk`` subtracts 0.0001 from p_k before the formula (to
  avoid the division by zero at p_k = 1, where this module uses 1 / f_k as ``indivRisk`` does),
  so its weighted risks differ from these in about the fourth decimal.

Key variables are released unchanged by reconstruction privacy (``release``'s public columns),
so their risk on the original is their risk on the release; for an RWN release
(``perturb``), compute it on the release itself, naming its key columns. The audit of
reconstruction privacy (``audit``, ``rwn-sql audit``) reports it for the public columns
(``AuditResult.key_risk``), from its personal groups, without weights.

The SQL and the result (``KeyRisk``) live in rwn_sql.rp.core.key_risk, which the audit shares.
"""
from __future__ import annotations

from ..engines.backend import backend_for
from ..engines.dialects import require_duckdb
from ..engines.duckdb import NUMERIC_TYPES
from ..engines.sources import require_columns
from ..errors import RWNError
from ..identifiers import column_names
from ..rp.core.key_risk import DEFAULT_KS, KeyRisk, KViolations, key_risk_of, key_risk_sql, weight_facts

__all__ = ["KeyRisk", "KViolations", "key_risk_sql", "key_variable_risk"]


def _check_arguments(keys, weight, ks):
    keys = column_names(keys, "keys", hint=" (the key variables), e.g. ['sex', 'age']", lists_only=True,
                        strings=False, show_list=True)
    if not keys:
        raise RWNError("keys is empty: name at least one key variable (quasi-identifier)")
    if weight is not None and (not isinstance(weight, str) or weight in keys):
        raise RWNError(f"weight must be the name of a column that is not a key variable, got {weight!r}")
    if isinstance(ks, int) or not isinstance(ks, (list, tuple)) or not ks:
        raise RWNError(f"ks must be a non-empty list of integers >= 2, got {ks!r}")
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or k < 2:
            raise RWNError(f"ks must be integers >= 2 (k-anonymity at k), got {k!r}")
    if len(set(ks)) != len(ks):
        raise RWNError(f"ks names a k twice: {list(ks)!r}")
    return keys, tuple(int(k) for k in ks)


def key_variable_risk(con, source, keys, weight: str | None = None, ks=DEFAULT_KS) -> KeyRisk:
    """The disclosure risk of the key variables (quasi-identifiers) `keys` of `source` (a
    table/view name, a SQL query, a CSV/Parquet path or 'file.duckdb:table'): k-anonymity
    violations at each k of `ks`, sample uniques, and sdcMicro's individual risk (the
    Benedetti-Franconi approximation of ``indivRisk``/``measure_risk``) with the expected
    number of re-identifications and the global risk; `weight`, an optional column of
    sampling weights (finite numbers >= 1), estimates the population frequencies. One GROUP BY
    in DuckDB. NULL is a value of its own (sdcMicro instead lets a missing value match any
    category). Definitions and references: rwn_sql.evaluation.key_risk. Raises RWNError on
    bad input (unknown or empty keys, an empty source, a weight column that is not numeric or
    holds NULL, NaN, infinite or values below 1)."""
    require_duckdb(con, "key_variable_risk")
    keys, ks = _check_arguments(keys, weight, ks)
    backend = backend_for(con)
    src = backend.source(source)
    require_columns(src, keys, "keys")
    if weight is not None:
        require_columns(src, [weight], "weight")
        if not NUMERIC_TYPES.match(src.type_of(weight)):
            raise RWNError(f"weight: column {weight!r} has type {src.type_of(weight)} in {src.label}, "
                           f"not a numeric type")
    row = backend.rows(key_risk_sql(src.sql, keys, weight, ks))[0]
    rows = int(row[0])
    if rows == 0:
        raise RWNError(f"the data ({src.label}) has no rows: there is no risk to measure")
    if weight is not None:
        weighed, low, finite = weight_facts(row, ks)
        if int(weighed) != rows:
            raise RWNError(f"weight: column {weight!r} of {src.label} holds {rows - int(weighed)} NULL "
                           f"value(s): every record needs a sampling weight")
        if not finite:
            raise RWNError(f"weight: column {weight!r} of {src.label} holds NaN or infinite values")
        if low < 1:
            raise RWNError(f"weight: column {weight!r} of {src.label} holds {low!r}: a sampling weight (an "
                           f"inverse inclusion probability) must be >= 1, so that a cell's estimated "
                           f"population is at least its sample count")
    return key_risk_of(row, src.label, keys, weight, ks)
