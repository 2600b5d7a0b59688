-- rwn_sql: uniform perturbation of the sensitive attribute (docs/METHODS.md section 2).
-- Each randomization unit (a record, or a block of a large personal group when enforcing
-- (eps, delta)-reconstruction-privacy) keeps its value with probability p, else takes a value
-- drawn uniformly from the m domain values. Draws: keyed hash of (key, purpose, unit, column).
src AS (
    SELECT * FROM $source
),
staged AS $materialized(
    SELECT row_number() OVER () AS __rwn_rid, *
    FROM src$null_filter
),
domain AS $materialized(
    -- the published domain, sorted: $domain_origin
    SELECT list(v ORDER BY v) AS vals, count(*) AS m
    FROM ($domain_values) AS d(v)
),
checks AS (
    SELECT CASE
        WHEN n = 0 THEN $raise_empty
        WHEN nulls > 0 THEN $raise_nulls
        WHEN missing IS NOT NULL THEN $raise_missing
        WHEN m < 2 THEN $raise_small_domain
        ELSE true END AS ok
    FROM (SELECT count(*) AS n, count(*) FILTER (WHERE $sens IS NULL) AS nulls FROM staged),
         (SELECT string_agg(DISTINCT CAST($sens AS VARCHAR), ', ') AS missing
          FROM staged, domain WHERE $sens IS NOT NULL AND NOT list_contains(domain.vals, $sens)),
         domain
),
units AS (
    $units
),
draws AS (
    SELECT u.*, $hash AS h
    FROM units u
)
