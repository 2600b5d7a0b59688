-- rwn_sql: uniform perturbation of the sensitive attribute (docs/METHODS.md section 2).
-- Each randomization unit (a record, or a block of a large personal group when enforcing
-- (eps, delta)-reconstruction-privacy) keeps its value with probability p, else takes a value
-- drawn uniformly from the m domain values. Draws: keyed hash of (key, purpose, unit, column).
src AS (
    SELECT * FROM $source
),
staged AS (
    -- record identity: 1-based input position (read once, by `units`)
    SELECT row_number() OVER () AS __rwn_rid, *
    FROM src$null_filter
),
domain AS $materialized(
    -- the published domain, sorted
    SELECT list(v ORDER BY v) AS vals, count(*) AS m
    FROM ($domain_values) AS d(v)
),
checks AS (
    SELECT CASE
        WHEN n = 0 THEN $raise_empty
        WHEN nulls > 0 THEN $raise_nulls
$missing_check        WHEN m < 2 THEN $raise_small_domain
        ELSE true END AS ok
    FROM (SELECT count(*) FILTER (WHERE true$null_keep) AS n, count(*) FILTER (WHERE $sens IS NULL$null_keep) AS nulls
          FROM src),$missing_from
         domain
),
units AS (
    $units
),
draws AS (
    SELECT u.*, $hash AS h
    FROM units u
)
