-- rwn_sql: (eps, delta)-reconstruction-privacy audit of every personal group (records that
-- share all public values), on the ORIGINAL data. For each value x with frequency f > 0 in
-- a group of n records: mu = n (f p + b), theta = eps f p / (f p + b), the full Chernoff bounds
-- U, L and the exact tail probabilities of the released count O*. A group that enforcement splits
-- into t < n blocks is evaluated at the worst case f = 1, the design point of the block
-- mechanism: Chernoff with mu = t a, exact with the tails of that block design (its per-value
-- tails at f < 1 are checked by Monte Carlo in the tests). Group sizes (and the groups' verdicts,
-- added after `bounds` by the builder) come from GROUP BY and a join on the personal group,
-- cheaper than window partitions at this scale.
src AS (
    SELECT *$all_column FROM $source
),
staged AS (
    SELECT * FROM src$null_filter
),
counts AS $materialized(
    $counts
),
groups AS (
    SELECT g.*, $trials AS trials
    FROM (SELECT $public_cols, sum(value_count) AS group_size FROM counts GROUP BY $public_cols) g$trials_join
),
cells AS (
    SELECT c.*, g.group_size, g.trials, g.trials < g.group_size AS enforced,
        c.value_count / g.group_size AS frequency,
        CASE WHEN g.trials < g.group_size THEN 1.0 ELSE c.value_count / g.group_size END AS f_eval
    FROM counts c JOIN groups g ON $same_group_cg
),
stats AS (
    SELECT *,
        trials * (f_eval * $p + $b) AS mu,
        $eps * f_eval * $p / (f_eval * $p + $b) AS theta,
        CASE WHEN enforced THEN trials ELSE value_count END AS tails_key
    FROM cells
),
tails AS (
    -- exact tails once per distinct case: (n, count) for independent trials, (n, t) for blocks
    $tails
),
bounds AS $bounds_materialized(
    SELECT s.*,
        exp(mu * (theta - (1 + theta) * ln(1 + theta))) AS chernoff_upper,
        CASE WHEN theta < 1 THEN exp(mu * (-theta - (1 - theta) * ln(1 - theta))) ELSE exp(-mu) END AS chernoff_lower,
        t.exact
    FROM stats s JOIN tails t USING (enforced, group_size, tails_key)
)
