-- rwn_sql: (eps, delta)-reconstruction-privacy audit of every personal group (records that
-- share all public values), on the ORIGINAL data. For each value x with frequency f > 0 in
-- a group of n records: mu = n (f p + b), theta = eps f p / (f p + b), the full Chernoff bounds
-- U, L and the exact tail probabilities of the released count O*. A group that enforcement splits
-- into t < n blocks is evaluated at the worst case f = 1, the design point of the block
-- mechanism: Chernoff with mu = t a, exact with the tails of that block design (its per-value
-- tails at f < 1 are checked by Monte Carlo in the tests).
src AS (
    SELECT * FROM $source
),
staged AS (
    SELECT * FROM src$null_filter
),
domain AS (
    SELECT count(*) AS m FROM ($domain_values) AS d(v)
),
counts AS $materialized(
    SELECT $public_cols, $sens AS value, count(*) AS value_count
    FROM staged
    GROUP BY $public_cols, $sens
),
cells AS (
    SELECT *, sum(value_count) OVER (PARTITION BY $public_cols) AS group_size
    FROM counts
),
trials AS (
    SELECT c.*, $trials AS trials, value_count / group_size AS frequency
    FROM cells c$trials_join
),
design AS (
    SELECT *, trials < group_size AS enforced,
        CASE WHEN trials < group_size THEN 1.0 ELSE frequency END AS f_eval
    FROM trials
),
stats AS (
    SELECT *,
        trials * (f_eval * $p + $b) AS mu,
        $eps * f_eval * $p / (f_eval * $p + $b) AS theta,
        CASE WHEN trials < group_size THEN trials ELSE value_count END AS tails_key
    FROM design
),
tails AS (
    -- exact tails once per distinct case: (n, count) for independent trials, (n, t) for blocks
    SELECT enforced, group_size, tails_key, $exact AS exact
    FROM (SELECT DISTINCT enforced, group_size, tails_key FROM stats)
),
bounds AS (
    SELECT s.*,
        exp(mu * (theta - (1 + theta) * ln(1 + theta))) AS chernoff_upper,
        CASE WHEN theta < 1 THEN exp(mu * (-theta - (1 - theta) * ln(1 - theta))) ELSE exp(-mu) END AS chernoff_lower,
        t.exact
    FROM stats s JOIN tails t USING (enforced, group_size, tails_key)
)
