-- rwn_sql: uniform perturbation of the sensitive attribute (docs/METHODS.md section 2).
-- Each randomization unit (a record, or a block of a large personal group when enforcing
-- (eps, delta)-reconstruction-privacy) keeps its value with probability p, else takes a value
-- drawn uniformly from the m values of the published domain (a constant list in the SQL).
-- Draws: keyed hash of (key, purpose, unit, column). The record identity is the 1-based input
-- position. Without blocks the statement is projections of one input scan (nested subqueries:
-- DuckDB 2.0 runs the same steps written as CTEs on one thread), so the release keeps the
-- input order without a sort.
SELECT $columns
FROM (
    SELECT *, $hash AS __rwn_h
    FROM (
        $units
    ) AS units
) AS draws$order
