SELECT *, false AS micro_reconstruction
FROM (
WITH
-- rwn_sql: unbiased reconstruction of count queries from a uniform-perturbation release
-- (docs/METHODS.md section 2). For the released records S satisfying the public predicate,
-- grouped by public columns, and a set V of sensitive values (one value, or an IN list):
--   b = (1-p)|V|/m, a = p + b,  F' = (O*/|S| - b) / p,  estimate = |S| F'
--   Var(F') = (f a(1-a) + (1-f) b(1-b)) / (|S| p^2), f replaced by F' clipped to [0, 1].
-- Needs only the release and its published parameters p and the domain (m values).
released AS (
    SELECT * FROM "adult"
),
params AS (
    SELECT 0.5::DOUBLE AS p, CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[]) AS domain, len(CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[])) AS m
),
counts AS (
    SELECT g."sex", d.value, 1 AS set_size, g.group_size,
        CAST(coalesce(c.n, 0) AS BIGINT) AS released_count
    FROM (SELECT "sex", count(*) AS group_size FROM released GROUP BY "sex"
          HAVING count(*) > 0) g
    CROSS JOIN (SELECT unnest(domain) AS value FROM params) d
    LEFT JOIN (SELECT "sex", "occupation" AS value, count(*) AS n FROM released GROUP BY ALL) c
        ON c."sex" IS NOT DISTINCT FROM g."sex" AND c.value = d.value
),
estimates AS (
    SELECT c.*,
        (released_count / group_size - b) / p * group_size AS estimate,
        least(greatest((released_count / group_size - b) / p, 0.0), 1.0) AS f_hat,
        p, a, b
    FROM (SELECT c.*, params.p, (1 - params.p) * c.set_size / params.m AS b,
                 params.p + (1 - params.p) * c.set_size / params.m AS a
          FROM counts c, params) c
)
SELECT "sex", value, released_count,
    group_size,
    estimate,
    sqrt(group_size * (f_hat * a * (1 - a) + (1 - f_hat) * b * (1 - b))) / p AS std_error,
    estimate - 1.959963984540054 * sqrt(group_size * (f_hat * a * (1 - a) + (1 - f_hat) * b * (1 - b))) / p AS ci_low,
    estimate + 1.959963984540054 * sqrt(group_size * (f_hat * a * (1 - a) + (1 - f_hat) * b * (1 - b))) / p AS ci_high,
    least(greatest(estimate, 0.0), group_size) AS estimate_clipped
FROM estimates
ORDER BY "sex", value
) AS estimates
ORDER BY "sex", value
