-- rwn_sql: (eps, delta)-reconstruction-privacy audit of every personal group (records that
-- share all public values), on the ORIGINAL data. For each value x with frequency f > 0 in
-- a group of n records (or n trials when enforcing): mu = n (f p + b), theta = eps f p / (f p + b),
-- the full Chernoff bounds U, L and the exact tail probabilities of the released count O*.
src AS (
    SELECT * FROM $source
),
staged AS (
    SELECT * FROM src$null_filter
),
domain AS (
    SELECT count(*) AS m FROM ($domain_values) AS d(v)
),
cells AS (
    SELECT $public_cols, $sens AS value, count(*) AS value_count,
        sum(count(*)) OVER (PARTITION BY $public_cols) AS group_size
    FROM staged
    GROUP BY $public_cols, $sens
),
trials AS (
    SELECT *, $trials AS trials, value_count / group_size AS frequency
    FROM cells
),
stats AS (
    SELECT *,
        trials * (frequency * $p + $b) AS mu,
        $eps * frequency * $p / (frequency * $p + $b) AS theta,
        greatest(1, round(frequency * trials)) AS trial_count
    FROM trials
),
bounds AS (
    SELECT *,
        exp(mu * (theta - (1 + theta) * ln(1 + theta))) AS chernoff_upper,
        CASE WHEN theta < 1 THEN exp(mu * (-theta - (1 - theta) * ln(1 - theta))) ELSE exp(-mu) END AS chernoff_lower,
        $exact AS exact
    FROM stats
)
