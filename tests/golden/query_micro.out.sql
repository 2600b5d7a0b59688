SELECT estimates.*, coalesce(personal.personal_groups = 1, false) AS micro_reconstruction
FROM (
WITH
-- rwn_sql: unbiased reconstruction of count queries from a uniform-perturbation release
-- (docs/METHODS.md section 2). For the released records S satisfying the public predicate,
-- grouped by public columns, and a set V of sensitive values (one value, or an IN list):
--   b = (1-p)|V|/m, a = p + b,  F' = (O*/|S| - b) / p,  estimate = |S| F'
--   Var(count) = (A + B f + C f^2) / p^2 with f replaced by F' clipped to [0, 1], where for
--   randomization units (records, or blocks of an enforced release) of sizes s_u:
--   A = b(1-b) SS, B = p(1-p)(SH - 2 v SS), C = p(1-p)(SS - SH), v = |V|/m,
--   SS = sum s_u^2, SH = sum s_u h_u, h_u = (n_g - s_u)/(n_g - 1) in personal group g.
--   With one record per unit SS = SH = |S| and this is METHODS.md's Var(F') |S|^2.
-- Needs only the release and its published parameters (p, the domain, and for an enforced
-- release the number of blocks per personal-group size). An empty S (group_size 0) estimates 0.
released AS (
    SELECT * FROM "adult_randomized"
    WHERE "sex" = 'Male' AND "race" = 'White' AND "relationship" = 'Husband' AND "education" = 'Bachelors' AND "marital_status" = 'Married-civ-spouse'
),
params AS (
    SELECT 0.5::DOUBLE AS __rwn_p, CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[]) AS __rwn_domain, len(CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[])) AS __rwn_m
),
counts AS (
    SELECT 1 AS set_size, count(*) AS group_size, count(*) AS ss, count(*) AS sh,
        count(*) FILTER (WHERE "occupation" IN (CAST('Sales' AS VARCHAR))) AS released_count
    FROM released
),
estimates AS (
    SELECT c.*,
        coalesce((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p * group_size, 0.0) AS estimate,
        least(greatest((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p, 0.0), 1.0) AS __rwn_f_hat,
        __rwn_p, __rwn_a, __rwn_b, __rwn_v
    FROM (SELECT c.*, params.__rwn_p, (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_b,
                 params.__rwn_p + (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_a, c.set_size / params.__rwn_m AS __rwn_v
          FROM counts c, params) c
),
spread AS (
    SELECT *, sqrt(__rwn_b * (1 - __rwn_b) * ss + __rwn_p * (1 - __rwn_p) * (sh - 2 * __rwn_v * ss) * __rwn_f_hat
                   + __rwn_p * (1 - __rwn_p) * (ss - sh) * __rwn_f_hat * __rwn_f_hat) / __rwn_p AS std_error
    FROM estimates
)
SELECT  released_count,
    group_size,
    estimate,
    std_error,
    estimate - 1.959963984540054 * std_error AS ci_low,
    estimate + 1.959963984540054 * std_error AS ci_high,
    least(greatest(estimate, 0.0), group_size) AS estimate_clipped
FROM spread
ORDER BY group_size
) AS estimates
CROSS JOIN (SELECT count(*) AS personal_groups FROM (SELECT DISTINCT "sex", "race", "relationship", "education", "marital_status" FROM "adult_randomized" WHERE "sex" = 'Male' AND "race" = 'White' AND "relationship" = 'Husband' AND "education" = 'Bachelors' AND "marital_status" = 'Married-civ-spouse') AS pg) AS personal
