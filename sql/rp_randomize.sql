-- rwn_sql: uniform perturbation of the sensitive attribute (docs/METHODS.md section 2).
-- Each randomization unit (a record, or a block of a large personal group when enforcing
-- (eps, delta)-reconstruction-privacy) keeps its value with probability p, else takes a value
-- drawn uniformly from the m values of the published domain (a constant list in the SQL).
-- Draws: keyed hash of (key, purpose, unit, column). The record identity is the id column as text
-- (id=), else the 1-based input
-- position. The rows are written in the order of a keyed hash of the record (__rwn_o), so the
-- release order carries nothing about the input order (issue 8, R2).
SELECT $columns
FROM (
    SELECT *, $hash AS __rwn_h, $order_key AS __rwn_o
    FROM (
        $units
    ) AS __rwn_units
) AS __rwn_draws
ORDER BY __rwn_o, __rwn_rid
