DESCRIBE SELECT * FROM query_table('adult')
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."adult"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult"
-- ----------------------------------------------------------------- statement
SELECT CAST(v AS VARCHAR), n FROM (SELECT "occupation" AS v, count(*) AS n FROM "memory"."main"."adult" GROUP BY "occupation") AS __rwn_counts
-- ----------------------------------------------------------------- statement
SELECT CAST(CAST('?' AS VARCHAR) AS VARCHAR), CAST(CAST('Adm-clerical' AS VARCHAR) AS VARCHAR), CAST(CAST('Armed-Forces' AS VARCHAR) AS VARCHAR), CAST(CAST('Craft-repair' AS VARCHAR) AS VARCHAR), CAST(CAST('Exec-managerial' AS VARCHAR) AS VARCHAR), CAST(CAST('Farming-fishing' AS VARCHAR) AS VARCHAR), CAST(CAST('Handlers-cleaners' AS VARCHAR) AS VARCHAR), CAST(CAST('Machine-op-inspct' AS VARCHAR) AS VARCHAR), CAST(CAST('Other-service' AS VARCHAR) AS VARCHAR), CAST(CAST('Priv-house-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Prof-specialty' AS VARCHAR) AS VARCHAR), CAST(CAST('Protective-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Sales' AS VARCHAR) AS VARCHAR), CAST(CAST('Tech-support' AS VARCHAR) AS VARCHAR), CAST(CAST('Transport-moving' AS VARCHAR) AS VARCHAR)
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE IF NOT EXISTS temp.main.__rwn_keys (id VARCHAR, k VARCHAR, lasting BOOLEAN)
-- ----------------------------------------------------------------- statement
SELECT id FROM temp.main.__rwn_keys WHERE lasting AND k = ?
-- ----------------------------------------------------------------- statement
INSERT INTO temp.main.__rwn_keys VALUES (?, ?, ?)
-- ----------------------------------------------------------------- statement
-- rwn_sql: uniform perturbation of the sensitive attribute (docs/METHODS.md section 2).
-- Each randomization unit (a record, or a block of a large personal group when enforcing
-- (eps, delta)-reconstruction-privacy) keeps its value with probability p, else takes a value
-- drawn uniformly from the m values of the published domain (a constant list in the SQL).
-- Draws: keyed hash of (key, purpose, unit, column). The record identity is the id column as text
-- (id=), else the 1-based input
-- position. The rows are written in the order of a keyed hash of the record (__rwn_o), so the
-- release order carries nothing about the input order (issue 8, R2).
SELECT CASE WHEN "occupation" IS NULL THEN error('rwn_sql: the sensitive column "occupation" has NULL values; clean them or use nulls=''drop'' (--nulls drop; those records are then left out)')
        WHEN CAST((__rwn_h >> 76) & 4503599627370495 AS BIGINT) < 2251799813685248 THEN "occupation"
        ELSE CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[])[1 + CAST(floor(CAST((__rwn_h >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * 15) AS BIGINT)] END AS "occupation",
    "race",
    "sex"
FROM (
    SELECT *, md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rp.randomize|occupation')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(__rwn_rid AS VARCHAR)) AS __rwn_h, CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rp.order|')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT) AS __rwn_o
    FROM (
        SELECT row_number() OVER () AS __rwn_rid, * FROM "memory"."main"."adult"
    ) AS __rwn_units
) AS __rwn_draws
ORDER BY __rwn_o, __rwn_rid
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('adult')
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."adult"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult"
-- ----------------------------------------------------------------- statement
SELECT CAST(v AS VARCHAR), n FROM (SELECT "occupation" AS v, count(*) AS n FROM "memory"."main"."adult" GROUP BY "occupation") AS __rwn_counts
-- ----------------------------------------------------------------- statement
SELECT CAST(CAST('?' AS VARCHAR) AS VARCHAR), CAST(CAST('Adm-clerical' AS VARCHAR) AS VARCHAR), CAST(CAST('Armed-Forces' AS VARCHAR) AS VARCHAR), CAST(CAST('Craft-repair' AS VARCHAR) AS VARCHAR), CAST(CAST('Exec-managerial' AS VARCHAR) AS VARCHAR), CAST(CAST('Farming-fishing' AS VARCHAR) AS VARCHAR), CAST(CAST('Handlers-cleaners' AS VARCHAR) AS VARCHAR), CAST(CAST('Machine-op-inspct' AS VARCHAR) AS VARCHAR), CAST(CAST('Other-service' AS VARCHAR) AS VARCHAR), CAST(CAST('Priv-house-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Prof-specialty' AS VARCHAR) AS VARCHAR), CAST(CAST('Protective-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Sales' AS VARCHAR) AS VARCHAR), CAST(CAST('Tech-support' AS VARCHAR) AS VARCHAR), CAST(CAST('Transport-moving' AS VARCHAR) AS VARCHAR)
-- ----------------------------------------------------------------- statement
SELECT n, count(*) FROM (SELECT count(*) AS n FROM "memory"."main"."adult" GROUP BY "sex", "race") AS __rwn_groups GROUP BY n
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
SELECT "sex", "race", "occupation" AS value, count(*) AS value_count FROM "memory"."main"."adult" GROUP BY "sex", "race", "occupation"
-- ----------------------------------------------------------------- statement
SELECT greatest(0.45::DOUBLE + 0.55::DOUBLE / CAST(15 AS DOUBLE), (SELECT max(s) / sum(s) FROM (SELECT CAST(sum(value_count) AS DOUBLE) AS s FROM rwn_stage_<hex> GROUP BY value) AS __rwn_mode))
-- ----------------------------------------------------------------- statement
SELECT count(*) FILTER (WHERE (group_size >= 2 AND l_distinct < 2)), coalesce(sum(group_size) FILTER (WHERE (group_size >= 2 AND l_distinct < 2)), 0), count(*) FILTER (WHERE (group_size >= 2 AND top_share > 0.4866666666666667::DOUBLE)), coalesce(sum(group_size) FILTER (WHERE (group_size >= 2 AND top_share > 0.4866666666666667::DOUBLE)), 0), coalesce(sum(group_size) FILTER (WHERE (group_size >= 2 AND l_distinct < 2) OR (group_size >= 2 AND top_share > 0.4866666666666667::DOUBLE)), 0) FROM (SELECT sum(value_count) AS group_size, count(*) AS l_distinct, exp(ln(sum(CAST(value_count AS DOUBLE))) - sum(CAST(value_count AS DOUBLE) * ln(CAST(value_count AS DOUBLE))) / sum(CAST(value_count AS DOUBLE))) AS l_entropy, max(CAST(value_count AS DOUBLE)) / sum(CAST(value_count AS DOUBLE)) AS top_share FROM (SELECT "sex", "race", value, sum(value_count) AS value_count FROM rwn_stage_<hex> GROUP BY "sex", "race", value) AS __rwn_gv GROUP BY "sex", "race") AS __rwn_div
-- ----------------------------------------------------------------- statement
SELECT (SELECT 20 * max(s) >= 19 * sum(s) FROM (SELECT sum(value_count) AS s FROM rwn_stage_<hex> GROUP BY value) AS __rwn_v), count(DISTINCT "sex") + max(CASE WHEN "sex" IS NULL THEN 1 ELSE 0 END), count(DISTINCT "race") + max(CASE WHEN "race" IS NULL THEN 1 ELSE 0 END) FROM rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT 0 AS set_index, coalesce(sum(n) FILTER (WHERE n >= 2), 0) AS records,
    coalesce(sum(top) FILTER (WHERE n >= 2 AND 20 * top >= 19 * n), 0) AS exposed,
    sum(n * ln(n) - slc) / sum(n) / ln(2) AS cond_entropy
FROM (SELECT "sex", sum(c) AS n, max(c) AS top, sum(c * ln(c)) AS slc
      FROM (SELECT "sex", value, CAST(sum(value_count) AS DOUBLE) AS c FROM rwn_stage_<hex>
            GROUP BY "sex", value) AS __rwn_cv GROUP BY "sex") AS __rwn_cls
UNION ALL
SELECT 1 AS set_index, coalesce(sum(n) FILTER (WHERE n >= 2), 0) AS records,
    coalesce(sum(top) FILTER (WHERE n >= 2 AND 20 * top >= 19 * n), 0) AS exposed,
    sum(n * ln(n) - slc) / sum(n) / ln(2) AS cond_entropy
FROM (SELECT "race", sum(c) AS n, max(c) AS top, sum(c * ln(c)) AS slc
      FROM (SELECT "race", value, CAST(sum(value_count) AS DOUBLE) AS c FROM rwn_stage_<hex>
            GROUP BY "race", value) AS __rwn_cv GROUP BY "race") AS __rwn_cls
-- ----------------------------------------------------------------- statement
SELECT 0 AS set_index, coalesce(sum(n) FILTER (WHERE n >= 2), 0) AS records,
    coalesce(sum(top) FILTER (WHERE n >= 2 AND 20 * top >= 19 * n), 0) AS exposed,
    sum(n * ln(n) - slc) / sum(n) / ln(2) AS cond_entropy
FROM (SELECT "sex", "race", sum(c) AS n, max(c) AS top, sum(c * ln(c)) AS slc
      FROM (SELECT "sex", "race", value, CAST(sum(value_count) AS DOUBLE) AS c FROM rwn_stage_<hex>
            GROUP BY "sex", "race", value) AS __rwn_cv GROUP BY "sex", "race") AS __rwn_cls
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE IF NOT EXISTS temp.main.__rwn_keys (id VARCHAR, k VARCHAR, lasting BOOLEAN)
-- ----------------------------------------------------------------- statement
INSERT INTO temp.main.__rwn_keys VALUES (?, ?, ?)
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('adult_rel')
-- ----------------------------------------------------------------- statement
CREATE TABLE "adult_rel" AS
-- rwn_sql: uniform perturbation of the sensitive attribute (docs/METHODS.md section 2).
-- Each randomization unit (a record, or a block of a large personal group when enforcing
-- (eps, delta)-reconstruction-privacy) keeps its value with probability p, else takes a value
-- drawn uniformly from the m values of the published domain (a constant list in the SQL).
-- Draws: keyed hash of (key, purpose, unit, column). The record identity is the id column as text
-- (id=), else the 1-based input
-- position. The rows are written in the order of a keyed hash of the record (__rwn_o), so the
-- release order carries nothing about the input order (issue 8, R2).
SELECT CASE WHEN "occupation" IS NULL THEN error('rwn_sql: the sensitive column "occupation" has NULL values; clean them or use nulls=''drop'' (--nulls drop; those records are then left out)')
        WHEN CAST((__rwn_h >> 76) & 4503599627370495 AS BIGINT) < 2026619832316724 THEN "occupation"
        ELSE CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[])[1 + CAST(floor(CAST((__rwn_h >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * 15) AS BIGINT)] END AS "occupation",
    "race",
    "sex"
FROM (
    SELECT *, md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rp.randomize|occupation')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(__rwn_unit AS VARCHAR)) AS __rwn_h, CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rp.order|')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT) AS __rwn_o
    FROM (
        -- enforcement: a personal group of n records is split at random into t(n) blocks;
        -- each block shares one coin and one replacement value (t depends on n only)
        SELECT 'g' || __rwn_gid || 'b' || ((__rwn_pos - 1) % __rwn_trials) AS __rwn_unit,
            __rwn_rid, "occupation", "race", "sex"
        FROM (SELECT __rwn_g.*, CASE WHEN __rwn_tr.t IS NULL THEN error('rwn_sql: a personal group size is missing from the trials table; rebuild the SQL for this data') WHEN __rwn_tr.t = 0 THEN error('rwn_sql: a personal group of ' || __rwn_tr.size || ' records cannot pass the test with any number of blocks') ELSE __rwn_tr.t END AS __rwn_trials
            FROM (
                SELECT *, min(__rwn_rid) OVER (PARTITION BY "sex", "race") AS __rwn_gid,
                    row_number() OVER (PARTITION BY "sex", "race" ORDER BY CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rp.block|occupation')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT), __rwn_rid) AS __rwn_pos,
                    count(*) OVER (PARTITION BY "sex", "race") AS __rwn_gsize
                FROM (SELECT row_number() OVER () AS __rwn_rid, * FROM "memory"."main"."adult") AS __rwn_staged) __rwn_g
            LEFT JOIN (VALUES (6, 5), (7, 6), (12, 5), (17, 5), (32, 5), (60, 8), (146, 8), (170, 8), (775, 8), (1775, 8)) AS __rwn_tr(size, t) ON __rwn_tr.size = __rwn_g.__rwn_gsize)
    ) AS __rwn_units
) AS __rwn_draws
ORDER BY __rwn_o, __rwn_rid

-- ----------------------------------------------------------------- statement
COMMENT ON TABLE "adult_rel" IS 'Randomized rows, NOT counts: occupation kept with probability p = 0.45, else a uniform draw from its 15 values, (0.5, 0.1)-reconstruction privacy enforced by blocks (exact test). Counts of it by occupation are BIASED: use rwn_sql.estimates or rwn_estimates, which read the design recorded on the next line.
rwn_sql design v1: {"method": "uniform_perturbation", "sensitive": "occupation", "sensitive_type": "VARCHAR", "public": ["sex", "race"], "p": 0.45, "m": 15, "domain": ["?", "Adm-clerical", "Armed-Forces", "Craft-repair", "Exec-managerial", "Farming-fishing", "Handlers-cleaners", "Machine-op-inspct", "Other-service", "Priv-house-serv", "Prof-specialty", "Protective-serv", "Sales", "Tech-support", "Transport-moving"], "enforced": true, "epsilon": 0.5, "delta": 0.1, "test": "exact", "blocks": [[6, 5], [7, 6], [12, 5], [17, 5], [32, 5], [60, 8], [146, 8], [170, 8], [775, 8], [1775, 8]]}'
-- ----------------------------------------------------------------- statement
DELETE FROM temp.main.__rwn_keys WHERE id IN ('<hex>')
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('adult')
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."adult"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult"
-- ----------------------------------------------------------------- statement
SELECT CAST(v AS VARCHAR), n FROM (SELECT "occupation" AS v, count(*) AS n FROM "memory"."main"."adult" GROUP BY "occupation") AS __rwn_counts
-- ----------------------------------------------------------------- statement
SELECT CAST(CAST('?' AS VARCHAR) AS VARCHAR), CAST(CAST('Adm-clerical' AS VARCHAR) AS VARCHAR), CAST(CAST('Armed-Forces' AS VARCHAR) AS VARCHAR), CAST(CAST('Craft-repair' AS VARCHAR) AS VARCHAR), CAST(CAST('Exec-managerial' AS VARCHAR) AS VARCHAR), CAST(CAST('Farming-fishing' AS VARCHAR) AS VARCHAR), CAST(CAST('Handlers-cleaners' AS VARCHAR) AS VARCHAR), CAST(CAST('Machine-op-inspct' AS VARCHAR) AS VARCHAR), CAST(CAST('Other-service' AS VARCHAR) AS VARCHAR), CAST(CAST('Priv-house-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Prof-specialty' AS VARCHAR) AS VARCHAR), CAST(CAST('Protective-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Sales' AS VARCHAR) AS VARCHAR), CAST(CAST('Tech-support' AS VARCHAR) AS VARCHAR), CAST(CAST('Transport-moving' AS VARCHAR) AS VARCHAR)
-- ----------------------------------------------------------------- statement
SELECT n, count(*) FROM (SELECT count(*) AS n FROM "memory"."main"."adult" GROUP BY "sex", "relationship") AS __rwn_groups GROUP BY n
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE IF NOT EXISTS temp.main.__rwn_keys (id VARCHAR, k VARCHAR, lasting BOOLEAN)
-- ----------------------------------------------------------------- statement
SELECT id FROM temp.main.__rwn_keys WHERE lasting AND k = ?
-- ----------------------------------------------------------------- statement
-- rwn_sql: uniform perturbation of the sensitive attribute (docs/METHODS.md section 2).
-- Each randomization unit (a record, or a block of a large personal group when enforcing
-- (eps, delta)-reconstruction-privacy) keeps its value with probability p, else takes a value
-- drawn uniformly from the m values of the published domain (a constant list in the SQL).
-- Draws: keyed hash of (key, purpose, unit, column). The record identity is the id column as text
-- (id=), else the 1-based input
-- position. The rows are written in the order of a keyed hash of the record (__rwn_o), so the
-- release order carries nothing about the input order (issue 8, R2).
SELECT CASE WHEN "occupation" IS NULL THEN error('rwn_sql: the sensitive column "occupation" has NULL values; clean them or use nulls=''drop'' (--nulls drop; those records are then left out)')
        WHEN CAST((__rwn_h >> 76) & 4503599627370495 AS BIGINT) < 2702159776422298 THEN "occupation"
        ELSE CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[])[1 + CAST(floor(CAST((__rwn_h >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * 15) AS BIGINT)] END AS "occupation",
    "relationship",
    "sex"
FROM (
    SELECT *, md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rp.randomize|occupation')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(__rwn_unit AS VARCHAR)) AS __rwn_h, CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rp.order|')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT) AS __rwn_o
    FROM (
        -- enforcement: a personal group of n records is split at random into t(n) blocks;
        -- each block shares one coin and one replacement value (t depends on n only)
        SELECT 'g' || __rwn_gid || 'b' || ((__rwn_pos - 1) % __rwn_trials) AS __rwn_unit,
            __rwn_rid, "occupation", "relationship", "sex"
        FROM (SELECT __rwn_g.*, CASE WHEN __rwn_tr.t IS NULL THEN error('rwn_sql: a personal group size is missing from the trials table; rebuild the SQL for this data') WHEN __rwn_tr.t = 0 THEN error('rwn_sql: a personal group of ' || __rwn_tr.size || ' records cannot pass the test with any number of blocks') ELSE __rwn_tr.t END AS __rwn_trials
            FROM (
                SELECT *, min(__rwn_rid) OVER (PARTITION BY "sex", "relationship") AS __rwn_gid,
                    row_number() OVER (PARTITION BY "sex", "relationship" ORDER BY CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rp.block|occupation')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT), __rwn_rid) AS __rwn_pos,
                    count(*) OVER (PARTITION BY "sex", "relationship") AS __rwn_gsize
                FROM (SELECT row_number() OVER () AS __rwn_rid, * FROM "memory"."main"."adult") AS __rwn_staged) __rwn_g
            LEFT JOIN (VALUES (1, 1), (34, 26), (44, 26), (87, 26), (155, 26), (178, 26), (236, 26), (267, 26), (368, 26), (438, 26), (1192, 26)) AS __rwn_tr(size, t) ON __rwn_tr.size = __rwn_g.__rwn_gsize)
    ) AS __rwn_units
) AS __rwn_draws
ORDER BY __rwn_o, __rwn_rid
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('adult')
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."adult"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult"
-- ----------------------------------------------------------------- statement
SELECT CAST(v AS VARCHAR), n FROM (SELECT "occupation" AS v, count(*) AS n FROM "memory"."main"."adult" GROUP BY "occupation") AS __rwn_counts
-- ----------------------------------------------------------------- statement
SELECT CAST(CAST('?' AS VARCHAR) AS VARCHAR), CAST(CAST('Adm-clerical' AS VARCHAR) AS VARCHAR), CAST(CAST('Armed-Forces' AS VARCHAR) AS VARCHAR), CAST(CAST('Craft-repair' AS VARCHAR) AS VARCHAR), CAST(CAST('Exec-managerial' AS VARCHAR) AS VARCHAR), CAST(CAST('Farming-fishing' AS VARCHAR) AS VARCHAR), CAST(CAST('Handlers-cleaners' AS VARCHAR) AS VARCHAR), CAST(CAST('Machine-op-inspct' AS VARCHAR) AS VARCHAR), CAST(CAST('Other-service' AS VARCHAR) AS VARCHAR), CAST(CAST('Priv-house-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Prof-specialty' AS VARCHAR) AS VARCHAR), CAST(CAST('Protective-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Sales' AS VARCHAR) AS VARCHAR), CAST(CAST('Tech-support' AS VARCHAR) AS VARCHAR), CAST(CAST('Transport-moving' AS VARCHAR) AS VARCHAR)
-- ----------------------------------------------------------------- statement
SELECT rwn_exact_tails(1, 1, 0.5, 2, 0.5), rwn_block_tails(2, 1, 0.5, 2, 0.5), rwn_audit_tails([false], [1], [1], 0.5, 2, 0.5)
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
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
    SELECT * FROM "memory"."main"."adult"
),
staged AS (
    SELECT * FROM src
),
counts AS MATERIALIZED (
    SELECT "sex", "race", "occupation" AS value, count(*) AS value_count
    FROM staged
    GROUP BY "sex", "race", "occupation"
),
groups AS (
    SELECT g.*, g.group_size AS trials
    FROM (SELECT "sex", "race", sum(value_count) AS group_size FROM counts GROUP BY "sex", "race") g
),
cells AS (
    SELECT c.*, g.group_size, g.trials, g.trials < g.group_size AS enforced,
        c.value_count / g.group_size AS frequency,
        CASE WHEN g.trials < g.group_size THEN 1.0 ELSE c.value_count / g.group_size END AS f_eval
    FROM counts c JOIN groups g ON c."sex" IS NOT DISTINCT FROM g."sex" AND c."race" IS NOT DISTINCT FROM g."race"
),
stats AS (
    SELECT *,
        trials * (f_eval * 0.5::DOUBLE + 0.03333333333333333::DOUBLE) AS mu,
        0.5::DOUBLE * f_eval * 0.5::DOUBLE / (f_eval * 0.5::DOUBLE + 0.03333333333333333::DOUBLE) AS theta,
        CASE WHEN enforced THEN trials ELSE value_count END AS tails_key
    FROM cells
),
tails AS (
    -- exact tails once per distinct case: (n, count) for independent trials, (n, t) for blocks
    SELECT unnest(e) AS enforced, unnest(n) AS group_size, unnest(k) AS tails_key,
        unnest(rwn_audit_tails(e, CAST(n AS BIGINT[]), CAST(k AS BIGINT[]), 0.5::DOUBLE, 15, 0.5::DOUBLE)) AS exact
    FROM (SELECT list(enforced) AS e, list(group_size) AS n, list(tails_key) AS k
          FROM (SELECT DISTINCT enforced, group_size, tails_key FROM stats))
),
bounds AS (
    SELECT s.*,
        exp(mu * (theta - (1 + theta) * ln(1 + theta))) AS chernoff_upper,
        CASE WHEN theta < 1 THEN exp(mu * (-theta - (1 - theta) * ln(1 - theta))) ELSE exp(-mu) END AS chernoff_lower,
        t.exact
    FROM stats s JOIN tails t USING (enforced, group_size, tails_key)
)

SELECT b."sex", b."race", group_size, trials, enforced, value, value_count, frequency, mu, theta,
    chernoff_upper, chernoff_lower, exact.upper AS exact_upper, exact.lower AS exact_lower,
    chernoff_upper >= 0.1::DOUBLE AND chernoff_lower >= 0.1::DOUBLE AS passes_chernoff,
    exact.upper >= 0.1::DOUBLE AND exact.lower >= 0.1::DOUBLE AS passes_exact
FROM bounds b
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
SELECT "sex", "race", any_value(group_size) AS group_size, any_value(trials) AS trials,
            any_value(enforced) AS enforced, count(*) AS values_present,
            least(min(chernoff_upper), min(chernoff_lower)) AS worst_chernoff,
            least(min(exact_upper), min(exact_lower)) AS worst_exact,
            bool_and(passes_exact) AS passes, count(*) AS l_distinct, exp(ln(sum(CAST(value_count AS DOUBLE))) - sum(CAST(value_count AS DOUBLE) * ln(CAST(value_count AS DOUBLE))) / sum(CAST(value_count AS DOUBLE))) AS l_entropy, max(CAST(value_count AS DOUBLE)) / sum(CAST(value_count AS DOUBLE)) AS top_share
        FROM rwn_stage_<hex> GROUP BY "sex", "race"
-- ----------------------------------------------------------------- statement
SELECT count(*), count(*) FILTER (WHERE NOT passes), sum(group_size),
        coalesce(sum(group_size) FILTER (WHERE NOT passes), 0) FROM rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT greatest(0.5::DOUBLE + 0.5::DOUBLE / CAST(15 AS DOUBLE), (SELECT max(s) / sum(s) FROM (SELECT CAST(sum(value_count) AS DOUBLE) AS s FROM rwn_stage_<hex> GROUP BY value) AS __rwn_mode))
-- ----------------------------------------------------------------- statement
SELECT count(*) FILTER (WHERE (group_size >= 2 AND l_distinct < 2)), coalesce(sum(group_size) FILTER (WHERE (group_size >= 2 AND l_distinct < 2)), 0), count(*) FILTER (WHERE (group_size >= 2 AND top_share > 0.5333333333333333::DOUBLE)), coalesce(sum(group_size) FILTER (WHERE (group_size >= 2 AND top_share > 0.5333333333333333::DOUBLE)), 0), coalesce(sum(group_size) FILTER (WHERE (group_size >= 2 AND l_distinct < 2) OR (group_size >= 2 AND top_share > 0.5333333333333333::DOUBLE)), 0) FROM (SELECT sum(value_count) AS group_size, count(*) AS l_distinct, exp(ln(sum(CAST(value_count AS DOUBLE))) - sum(CAST(value_count AS DOUBLE) * ln(CAST(value_count AS DOUBLE))) / sum(CAST(value_count AS DOUBLE))) AS l_entropy, max(CAST(value_count AS DOUBLE)) / sum(CAST(value_count AS DOUBLE)) AS top_share FROM (SELECT "sex", "race", value, sum(value_count) AS value_count FROM rwn_stage_<hex> GROUP BY "sex", "race", value) AS __rwn_gv GROUP BY "sex", "race") AS __rwn_div
-- ----------------------------------------------------------------- statement
SELECT (SELECT 20 * max(s) >= 19 * sum(s) FROM (SELECT sum(value_count) AS s FROM rwn_stage_<hex> GROUP BY value) AS __rwn_v), count(DISTINCT "sex") + max(CASE WHEN "sex" IS NULL THEN 1 ELSE 0 END), count(DISTINCT "race") + max(CASE WHEN "race" IS NULL THEN 1 ELSE 0 END) FROM rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT 0 AS set_index, coalesce(sum(n) FILTER (WHERE n >= 2), 0) AS records,
    coalesce(sum(top) FILTER (WHERE n >= 2 AND 20 * top >= 19 * n), 0) AS exposed,
    sum(n * ln(n) - slc) / sum(n) / ln(2) AS cond_entropy
FROM (SELECT "sex", sum(c) AS n, max(c) AS top, sum(c * ln(c)) AS slc
      FROM (SELECT "sex", value, CAST(sum(value_count) AS DOUBLE) AS c FROM rwn_stage_<hex>
            GROUP BY "sex", value) AS __rwn_cv GROUP BY "sex") AS __rwn_cls
UNION ALL
SELECT 1 AS set_index, coalesce(sum(n) FILTER (WHERE n >= 2), 0) AS records,
    coalesce(sum(top) FILTER (WHERE n >= 2 AND 20 * top >= 19 * n), 0) AS exposed,
    sum(n * ln(n) - slc) / sum(n) / ln(2) AS cond_entropy
FROM (SELECT "race", sum(c) AS n, max(c) AS top, sum(c * ln(c)) AS slc
      FROM (SELECT "race", value, CAST(sum(value_count) AS DOUBLE) AS c FROM rwn_stage_<hex>
            GROUP BY "race", value) AS __rwn_cv GROUP BY "race") AS __rwn_cls
-- ----------------------------------------------------------------- statement
SELECT 0 AS set_index, coalesce(sum(n) FILTER (WHERE n >= 2), 0) AS records,
    coalesce(sum(top) FILTER (WHERE n >= 2 AND 20 * top >= 19 * n), 0) AS exposed,
    sum(n * ln(n) - slc) / sum(n) / ln(2) AS cond_entropy
FROM (SELECT "sex", "race", sum(c) AS n, max(c) AS top, sum(c * ln(c)) AS slc
      FROM (SELECT "sex", "race", value, CAST(sum(value_count) AS DOUBLE) AS c FROM rwn_stage_<hex>
            GROUP BY "sex", "race", value) AS __rwn_cv GROUP BY "sex", "race") AS __rwn_cls
-- ----------------------------------------------------------------- statement
WITH cells AS (SELECT "group_size" AS f, CAST("group_size" AS DOUBLE) AS big_f, "group_size" AS weighed, CAST(1 AS DOUBLE) AS low, true AS finite FROM rwn_stage_<hex>), risks AS (SELECT *, CASE WHEN NOT isfinite(big_f) OR big_f < f THEN NULL WHEN big_f = f THEN CAST(1 AS DOUBLE) / f WHEN f = 1 THEN ((f / big_f) / (1 - (f / big_f))) * ln(1 / (f / big_f)) WHEN f = 2 THEN ((f / big_f) / (1 - (f / big_f))) - ((f / big_f) / (1 - (f / big_f))) * ((f / big_f) / (1 - (f / big_f))) * ln(1 / (f / big_f)) ELSE (f / big_f) / (f - (1 - (f / big_f))) END AS r FROM cells) SELECT COALESCE(SUM(f), 0), COUNT(*), COALESCE(SUM(f) FILTER (WHERE f < 2), 0), COUNT(*) FILTER (WHERE f < 2), COALESCE(SUM(f) FILTER (WHERE f < 3), 0), COUNT(*) FILTER (WHERE f < 3), COALESCE(SUM(f) FILTER (WHERE f < 5), 0), COUNT(*) FILTER (WHERE f < 5), COUNT(*) FILTER (WHERE f = 1), SUM(f * r), MAX(r), SUM(weighed), MIN(low), bool_and(finite) FROM risks
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('adult')
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."adult"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult"
-- ----------------------------------------------------------------- statement
SELECT CAST(v AS VARCHAR), n FROM (SELECT "occupation" AS v, count(*) AS n FROM "memory"."main"."adult" GROUP BY "occupation") AS __rwn_counts
-- ----------------------------------------------------------------- statement
SELECT CAST(CAST('?' AS VARCHAR) AS VARCHAR), CAST(CAST('Adm-clerical' AS VARCHAR) AS VARCHAR), CAST(CAST('Armed-Forces' AS VARCHAR) AS VARCHAR), CAST(CAST('Craft-repair' AS VARCHAR) AS VARCHAR), CAST(CAST('Exec-managerial' AS VARCHAR) AS VARCHAR), CAST(CAST('Farming-fishing' AS VARCHAR) AS VARCHAR), CAST(CAST('Handlers-cleaners' AS VARCHAR) AS VARCHAR), CAST(CAST('Machine-op-inspct' AS VARCHAR) AS VARCHAR), CAST(CAST('Other-service' AS VARCHAR) AS VARCHAR), CAST(CAST('Priv-house-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Prof-specialty' AS VARCHAR) AS VARCHAR), CAST(CAST('Protective-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Sales' AS VARCHAR) AS VARCHAR), CAST(CAST('Tech-support' AS VARCHAR) AS VARCHAR), CAST(CAST('Transport-moving' AS VARCHAR) AS VARCHAR)
-- ----------------------------------------------------------------- statement
SELECT n, count(*) FROM (SELECT count(*) AS n FROM "memory"."main"."adult" GROUP BY "sex", "education") AS __rwn_groups GROUP BY n
-- ----------------------------------------------------------------- statement
SELECT rwn_exact_tails(1, 1, 0.5, 2, 0.5), rwn_block_tails(2, 1, 0.5, 2, 0.5), rwn_audit_tails([false], [1], [1], 0.5, 2, 0.5)
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
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
    SELECT * FROM "memory"."main"."adult"
),
staged AS (
    SELECT * FROM src
),
counts AS MATERIALIZED (
    SELECT "sex", "education", "occupation" AS value, count(*) AS value_count
    FROM staged
    GROUP BY "sex", "education", "occupation"
),
groups AS (
    SELECT g.*, CASE WHEN __rwn_tr.t IS NULL THEN error('rwn_sql: a personal group size is missing from the trials table; rebuild the SQL for this data') WHEN __rwn_tr.t = 0 THEN error('rwn_sql: a personal group of ' || __rwn_tr.size || ' records cannot pass the test with any number of blocks') ELSE __rwn_tr.t END AS trials
    FROM (SELECT "sex", "education", sum(value_count) AS group_size FROM counts GROUP BY "sex", "education") g
    LEFT JOIN (VALUES (2, 2), (5, 5), (6, 6), (8, 8), (9, 7), (10, 8), (12, 10), (19, 9), (23, 8), (24, 9), (27, 10), (34, 9), (41, 8), (43, 9), (44, 9), (48, 9), (49, 9), (50, 8), (58, 11), (83, 11), (90, 11), (120, 11), (130, 11), (234, 11), (336, 11), (374, 11), (424, 11), (634, 11)) AS __rwn_tr(size, t) ON __rwn_tr.size = g.group_size
),
cells AS (
    SELECT c.*, g.group_size, g.trials, g.trials < g.group_size AS enforced,
        c.value_count / g.group_size AS frequency,
        CASE WHEN g.trials < g.group_size THEN 1.0 ELSE c.value_count / g.group_size END AS f_eval
    FROM counts c JOIN groups g ON c."sex" IS NOT DISTINCT FROM g."sex" AND c."education" IS NOT DISTINCT FROM g."education"
),
stats AS (
    SELECT *,
        trials * (f_eval * 0.5::DOUBLE + 0.03333333333333333::DOUBLE) AS mu,
        0.5::DOUBLE * f_eval * 0.5::DOUBLE / (f_eval * 0.5::DOUBLE + 0.03333333333333333::DOUBLE) AS theta,
        CASE WHEN enforced THEN trials ELSE value_count END AS tails_key
    FROM cells
),
tails AS (
    -- exact tails once per distinct case: (n, count) for independent trials, (n, t) for blocks
    SELECT unnest(e) AS enforced, unnest(n) AS group_size, unnest(k) AS tails_key,
        unnest(rwn_audit_tails(e, CAST(n AS BIGINT[]), CAST(k AS BIGINT[]), 0.5::DOUBLE, 15, 0.5::DOUBLE)) AS exact
    FROM (SELECT list(enforced) AS e, list(group_size) AS n, list(tails_key) AS k
          FROM (SELECT DISTINCT enforced, group_size, tails_key FROM stats))
),
bounds AS (
    SELECT s.*,
        exp(mu * (theta - (1 + theta) * ln(1 + theta))) AS chernoff_upper,
        CASE WHEN theta < 1 THEN exp(mu * (-theta - (1 - theta) * ln(1 - theta))) ELSE exp(-mu) END AS chernoff_lower,
        t.exact
    FROM stats s JOIN tails t USING (enforced, group_size, tails_key)
)

SELECT b."sex", b."education", group_size, trials, enforced, value, value_count, frequency, mu, theta,
    chernoff_upper, chernoff_lower, exact.upper AS exact_upper, exact.lower AS exact_lower,
    chernoff_upper >= 0.05::DOUBLE AND chernoff_lower >= 0.05::DOUBLE AS passes_chernoff,
    exact.upper >= 0.05::DOUBLE AND exact.lower >= 0.05::DOUBLE AS passes_exact
FROM bounds b
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
SELECT g."sex", g."education", g.group_size, g.trials, g.enforced, g.values_present, g.worst_chernoff, g.worst_exact, g.passes AND d.w >= 0.05::DOUBLE AS passes, g.l_distinct, g.l_entropy, g.top_share, d.w AS worst_design_tail
FROM (SELECT "sex", "education", any_value(group_size) AS group_size, any_value(trials) AS trials,
            any_value(enforced) AS enforced, count(*) AS values_present,
            least(min(chernoff_upper), min(chernoff_lower)) AS worst_chernoff,
            least(min(exact_upper), min(exact_lower)) AS worst_exact,
            bool_and(passes_exact) AS passes, count(*) AS l_distinct, exp(ln(sum(CAST(value_count AS DOUBLE))) - sum(CAST(value_count AS DOUBLE) * ln(CAST(value_count AS DOUBLE))) / sum(CAST(value_count AS DOUBLE))) AS l_entropy, max(CAST(value_count AS DOUBLE)) / sum(CAST(value_count AS DOUBLE)) AS top_share
        FROM rwn_stage_<hex> GROUP BY "sex", "education") AS g LEFT JOIN (VALUES (2, 2, 0.2177777777777778::DOUBLE), (5, 5, 0.09034798353909462::DOUBLE), (6, 6, 0.08115314128943762::DOUBLE), (8, 8, 0.05236966677030938::DOUBLE), (9, 7, 0.06597350598994015::DOUBLE), (10, 8, 0.06257254618503325::DOUBLE), (12, 10, 0.05397619843760881::DOUBLE), (19, 9, 0.05043523349249024::DOUBLE), (23, 8, 0.052369666770311185::DOUBLE), (24, 9, 0.051409044790275166::DOUBLE), (27, 10, 0.050966373245918684::DOUBLE), (34, 9, 0.05479026218145447::DOUBLE), (41, 8, 0.05236966677030663::DOUBLE), (43, 9, 0.05492031724491586::DOUBLE), (44, 9, 0.052369666770257506::DOUBLE), (48, 9, 0.05268319076869968::DOUBLE), (49, 9, 0.05675025312449769::DOUBLE), (50, 8, 0.052369666770311796::DOUBLE), (58, 11, 0.050264572367342664::DOUBLE), (83, 11, 0.050460083152059354::DOUBLE), (90, 11, 0.050788235003468185::DOUBLE), (120, 11, 0.051894120219060536::DOUBLE), (130, 11, 0.05227705822400169::DOUBLE), (234, 11, 0.052369666770141765::DOUBLE), (336, 11, 0.0523696667698455::DOUBLE), (374, 11, 0.052369666770196555::DOUBLE), (424, 11, 0.05236966676997662::DOUBLE), (634, 11, 0.05236966676992533::DOUBLE)) AS d(n, t, w) ON g.group_size = d.n AND g.trials = d.t
-- ----------------------------------------------------------------- statement
SELECT count(*), count(*) FILTER (WHERE NOT passes), sum(group_size),
        coalesce(sum(group_size) FILTER (WHERE NOT passes), 0) FROM rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT greatest(0.5::DOUBLE + 0.5::DOUBLE / CAST(15 AS DOUBLE), (SELECT max(s) / sum(s) FROM (SELECT CAST(sum(value_count) AS DOUBLE) AS s FROM rwn_stage_<hex> GROUP BY value) AS __rwn_mode))
-- ----------------------------------------------------------------- statement
SELECT count(*) FILTER (WHERE (group_size >= 2 AND l_distinct < 1)), coalesce(sum(group_size) FILTER (WHERE (group_size >= 2 AND l_distinct < 1)), 0), count(*) FILTER (WHERE (group_size >= 2 AND top_share > 0.5333333333333333::DOUBLE)), coalesce(sum(group_size) FILTER (WHERE (group_size >= 2 AND top_share > 0.5333333333333333::DOUBLE)), 0), coalesce(sum(group_size) FILTER (WHERE (group_size >= 2 AND l_distinct < 1) OR (group_size >= 2 AND top_share > 0.5333333333333333::DOUBLE)), 0) FROM (SELECT sum(value_count) AS group_size, count(*) AS l_distinct, exp(ln(sum(CAST(value_count AS DOUBLE))) - sum(CAST(value_count AS DOUBLE) * ln(CAST(value_count AS DOUBLE))) / sum(CAST(value_count AS DOUBLE))) AS l_entropy, max(CAST(value_count AS DOUBLE)) / sum(CAST(value_count AS DOUBLE)) AS top_share FROM (SELECT "sex", "education", value, sum(value_count) AS value_count FROM rwn_stage_<hex> GROUP BY "sex", "education", value) AS __rwn_gv GROUP BY "sex", "education") AS __rwn_div
-- ----------------------------------------------------------------- statement
SELECT (SELECT 20 * max(s) >= 19 * sum(s) FROM (SELECT sum(value_count) AS s FROM rwn_stage_<hex> GROUP BY value) AS __rwn_v), count(DISTINCT "sex") + max(CASE WHEN "sex" IS NULL THEN 1 ELSE 0 END), count(DISTINCT "education") + max(CASE WHEN "education" IS NULL THEN 1 ELSE 0 END) FROM rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT 0 AS set_index, coalesce(sum(n) FILTER (WHERE n >= 2), 0) AS records,
    coalesce(sum(top) FILTER (WHERE n >= 2 AND 20 * top >= 19 * n), 0) AS exposed,
    sum(n * ln(n) - slc) / sum(n) / ln(2) AS cond_entropy
FROM (SELECT "sex", sum(c) AS n, max(c) AS top, sum(c * ln(c)) AS slc
      FROM (SELECT "sex", value, CAST(sum(value_count) AS DOUBLE) AS c FROM rwn_stage_<hex>
            GROUP BY "sex", value) AS __rwn_cv GROUP BY "sex") AS __rwn_cls
UNION ALL
SELECT 1 AS set_index, coalesce(sum(n) FILTER (WHERE n >= 2), 0) AS records,
    coalesce(sum(top) FILTER (WHERE n >= 2 AND 20 * top >= 19 * n), 0) AS exposed,
    sum(n * ln(n) - slc) / sum(n) / ln(2) AS cond_entropy
FROM (SELECT "education", sum(c) AS n, max(c) AS top, sum(c * ln(c)) AS slc
      FROM (SELECT "education", value, CAST(sum(value_count) AS DOUBLE) AS c FROM rwn_stage_<hex>
            GROUP BY "education", value) AS __rwn_cv GROUP BY "education") AS __rwn_cls
-- ----------------------------------------------------------------- statement
SELECT 0 AS set_index, coalesce(sum(n) FILTER (WHERE n >= 2), 0) AS records,
    coalesce(sum(top) FILTER (WHERE n >= 2 AND 20 * top >= 19 * n), 0) AS exposed,
    sum(n * ln(n) - slc) / sum(n) / ln(2) AS cond_entropy
FROM (SELECT "sex", "education", sum(c) AS n, max(c) AS top, sum(c * ln(c)) AS slc
      FROM (SELECT "sex", "education", value, CAST(sum(value_count) AS DOUBLE) AS c FROM rwn_stage_<hex>
            GROUP BY "sex", "education", value) AS __rwn_cv GROUP BY "sex", "education") AS __rwn_cls
-- ----------------------------------------------------------------- statement
WITH cells AS (SELECT "group_size" AS f, CAST("group_size" AS DOUBLE) AS big_f, "group_size" AS weighed, CAST(1 AS DOUBLE) AS low, true AS finite FROM rwn_stage_<hex>), risks AS (SELECT *, CASE WHEN NOT isfinite(big_f) OR big_f < f THEN NULL WHEN big_f = f THEN CAST(1 AS DOUBLE) / f WHEN f = 1 THEN ((f / big_f) / (1 - (f / big_f))) * ln(1 / (f / big_f)) WHEN f = 2 THEN ((f / big_f) / (1 - (f / big_f))) - ((f / big_f) / (1 - (f / big_f))) * ((f / big_f) / (1 - (f / big_f))) * ln(1 / (f / big_f)) ELSE (f / big_f) / (f - (1 - (f / big_f))) END AS r FROM cells) SELECT COALESCE(SUM(f), 0), COUNT(*), COALESCE(SUM(f) FILTER (WHERE f < 2), 0), COUNT(*) FILTER (WHERE f < 2), COALESCE(SUM(f) FILTER (WHERE f < 3), 0), COUNT(*) FILTER (WHERE f < 3), COALESCE(SUM(f) FILTER (WHERE f < 5), 0), COUNT(*) FILTER (WHERE f < 5), COUNT(*) FILTER (WHERE f = 1), SUM(f * r), MAX(r), SUM(weighed), MIN(low), bool_and(finite) FROM risks
-- ----------------------------------------------------------------- statement
SELECT database_name FROM duckdb_databases() WHERE NOT internal AND path IS NOT NULL AND database_name <> current_database()
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
SELECT 'table', table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = ? AND lower(table_name) = lower(?) UNION ALL SELECT 'view', view_name FROM duckdb_views() WHERE database_name = ? AND schema_name = ? AND lower(view_name) = lower(?)
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
SELECT 'table', database_name, schema_name, table_name FROM duckdb_tables() WHERE lower(database_name) = lower(?) AND lower(schema_name) = lower(?) AND lower(table_name) = lower(?) UNION ALL SELECT 'view', database_name, schema_name, view_name FROM duckdb_views() WHERE lower(database_name) = lower(?) AND lower(schema_name) = lower(?) AND lower(view_name) = lower(?)
-- ----------------------------------------------------------------- statement
SELECT 'table', database_name, schema_name, table_name FROM duckdb_tables() WHERE lower(database_name) = lower(?) AND lower(schema_name) = lower(?) AND lower(table_name) = lower(?) UNION ALL SELECT 'view', database_name, schema_name, view_name FROM duckdb_views() WHERE lower(database_name) = lower(?) AND lower(schema_name) = lower(?) AND lower(view_name) = lower(?)
-- ----------------------------------------------------------------- statement
SELECT strlen(comment) FROM duckdb_tables() WHERE database_name = ? AND schema_name = ? AND table_name = ?
-- ----------------------------------------------------------------- statement
SELECT comment FROM duckdb_tables() WHERE database_name = ? AND schema_name = ? AND table_name = ?
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('adult_rel')
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."adult_rel"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult_rel"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult_rel"
-- ----------------------------------------------------------------- statement
SELECT CAST(CAST('?' AS VARCHAR) AS VARCHAR), CAST(CAST('Adm-clerical' AS VARCHAR) AS VARCHAR), CAST(CAST('Armed-Forces' AS VARCHAR) AS VARCHAR), CAST(CAST('Craft-repair' AS VARCHAR) AS VARCHAR), CAST(CAST('Exec-managerial' AS VARCHAR) AS VARCHAR), CAST(CAST('Farming-fishing' AS VARCHAR) AS VARCHAR), CAST(CAST('Handlers-cleaners' AS VARCHAR) AS VARCHAR), CAST(CAST('Machine-op-inspct' AS VARCHAR) AS VARCHAR), CAST(CAST('Other-service' AS VARCHAR) AS VARCHAR), CAST(CAST('Priv-house-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Prof-specialty' AS VARCHAR) AS VARCHAR), CAST(CAST('Protective-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Sales' AS VARCHAR) AS VARCHAR), CAST(CAST('Tech-support' AS VARCHAR) AS VARCHAR), CAST(CAST('Transport-moving' AS VARCHAR) AS VARCHAR)
-- ----------------------------------------------------------------- statement
SELECT DISTINCT CAST("occupation" AS VARCHAR) FROM "memory"."main"."adult_rel" WHERE "occupation" IS NULL OR NOT list_contains(CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[]), "occupation") ORDER BY 1 NULLS FIRST LIMIT 6
-- ----------------------------------------------------------------- statement
SELECT n, count(*) FROM (SELECT count(*) AS n FROM "memory"."main"."adult_rel" GROUP BY "sex", "race") AS __rwn_groups GROUP BY n
-- ----------------------------------------------------------------- statement
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
    SELECT * FROM "memory"."main"."adult_rel"
),
params AS (
    SELECT 0.45::DOUBLE AS __rwn_p, CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[]) AS __rwn_domain, len(CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[])) AS __rwn_m
),
counts AS (
    SELECT g."sex", d.value, 1 AS set_size, g.group_size,
        CAST(coalesce(c.n, 0) AS BIGINT) AS released_count
    FROM (SELECT "sex", count(*) AS group_size FROM released GROUP BY "sex"
          HAVING count(*) > 0) g
    CROSS JOIN (SELECT unnest(__rwn_domain) AS value FROM params) d
    LEFT JOIN (SELECT "sex", "occupation" AS value, count(*) AS n FROM released GROUP BY "sex", "occupation") c
        ON c."sex" IS NOT DISTINCT FROM g."sex" AND c.value = d.value
),
blocks AS (
    -- every personal group in S, its t blocks: n mod t of size q+1, the rest of size q
    SELECT "sex", n, __rwn_tr.t, n // __rwn_tr.t AS q, n % __rwn_tr.t AS r
    FROM (SELECT "sex", count(*) AS n FROM released GROUP BY "sex", "race") pg
    JOIN (VALUES (6, 5), (7, 6), (12, 5), (17, 5), (32, 5), (60, 8), (146, 8), (170, 8), (775, 8), (1775, 8)) AS __rwn_tr(size, t) ON __rwn_tr.size = pg.n
),
design AS (
    SELECT "sex", 
        coalesce(sum(r * (q + 1) * (q + 1) + (t - r) * q * q), 0) AS ss,
        coalesce(sum(CASE WHEN n > 1 THEN (r * (q + 1) * (n - q - 1) + (t - r) * q * (n - q)) / (n - 1)
                 ELSE 0 END), 0) AS sh
    FROM blocks GROUP BY "sex"
),
estimates AS (
    SELECT c.*,
        coalesce((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p * group_size, 0.0) AS estimate,
        least(greatest((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p, 0.0), 1.0) AS __rwn_f_hat,
        __rwn_p, __rwn_a, __rwn_b, __rwn_v, d.ss, d.sh
    FROM (SELECT c.*, params.__rwn_p, (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_b,
                 params.__rwn_p + (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_a, c.set_size / params.__rwn_m AS __rwn_v
          FROM counts c, params) c
    JOIN design d ON d."sex" IS NOT DISTINCT FROM c."sex"
),
spread AS (
    SELECT *, sqrt(__rwn_b * (1 - __rwn_b) * ss + __rwn_p * (1 - __rwn_p) * (sh - 2 * __rwn_v * ss) * __rwn_f_hat
                   + __rwn_p * (1 - __rwn_p) * (ss - sh) * __rwn_f_hat * __rwn_f_hat) / __rwn_p AS std_error
    FROM estimates
)
SELECT "sex", value, released_count,
    group_size,
    estimate,
    std_error,
    estimate - 1.959963984540054 * std_error AS ci_low,
    estimate + 1.959963984540054 * std_error AS ci_high,
    least(greatest(estimate, 0.0), group_size) AS estimate_clipped
FROM spread
ORDER BY "sex", value
-- ----------------------------------------------------------------- statement
SELECT database_name FROM duckdb_databases() WHERE NOT internal AND path IS NOT NULL AND database_name <> current_database()
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
SELECT 'table', table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = ? AND lower(table_name) = lower(?) UNION ALL SELECT 'view', view_name FROM duckdb_views() WHERE database_name = ? AND schema_name = ? AND lower(view_name) = lower(?)
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
SELECT 'table', database_name, schema_name, table_name FROM duckdb_tables() WHERE lower(database_name) = lower(?) AND lower(schema_name) = lower(?) AND lower(table_name) = lower(?) UNION ALL SELECT 'view', database_name, schema_name, view_name FROM duckdb_views() WHERE lower(database_name) = lower(?) AND lower(schema_name) = lower(?) AND lower(view_name) = lower(?)
-- ----------------------------------------------------------------- statement
SELECT 'table', database_name, schema_name, table_name FROM duckdb_tables() WHERE lower(database_name) = lower(?) AND lower(schema_name) = lower(?) AND lower(table_name) = lower(?) UNION ALL SELECT 'view', database_name, schema_name, view_name FROM duckdb_views() WHERE lower(database_name) = lower(?) AND lower(schema_name) = lower(?) AND lower(view_name) = lower(?)
-- ----------------------------------------------------------------- statement
SELECT strlen(comment) FROM duckdb_tables() WHERE database_name = ? AND schema_name = ? AND table_name = ?
-- ----------------------------------------------------------------- statement
SELECT comment FROM duckdb_tables() WHERE database_name = ? AND schema_name = ? AND table_name = ?
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('adult_rel')
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."adult_rel"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult_rel"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult_rel"
-- ----------------------------------------------------------------- statement
SELECT CAST(CAST('?' AS VARCHAR) AS VARCHAR), CAST(CAST('Adm-clerical' AS VARCHAR) AS VARCHAR), CAST(CAST('Armed-Forces' AS VARCHAR) AS VARCHAR), CAST(CAST('Craft-repair' AS VARCHAR) AS VARCHAR), CAST(CAST('Exec-managerial' AS VARCHAR) AS VARCHAR), CAST(CAST('Farming-fishing' AS VARCHAR) AS VARCHAR), CAST(CAST('Handlers-cleaners' AS VARCHAR) AS VARCHAR), CAST(CAST('Machine-op-inspct' AS VARCHAR) AS VARCHAR), CAST(CAST('Other-service' AS VARCHAR) AS VARCHAR), CAST(CAST('Priv-house-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Prof-specialty' AS VARCHAR) AS VARCHAR), CAST(CAST('Protective-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Sales' AS VARCHAR) AS VARCHAR), CAST(CAST('Tech-support' AS VARCHAR) AS VARCHAR), CAST(CAST('Transport-moving' AS VARCHAR) AS VARCHAR)
-- ----------------------------------------------------------------- statement
SELECT DISTINCT CAST("occupation" AS VARCHAR) FROM "memory"."main"."adult_rel" WHERE "occupation" IS NULL OR NOT list_contains(CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[]), "occupation") ORDER BY 1 NULLS FIRST LIMIT 6
-- ----------------------------------------------------------------- statement
SELECT n, count(*) FROM (SELECT count(*) AS n FROM "memory"."main"."adult_rel" GROUP BY "sex", "race") AS __rwn_groups GROUP BY n
-- ----------------------------------------------------------------- statement
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
    SELECT * FROM "memory"."main"."adult_rel"
    WHERE "race" = 'White'
),
params AS (
    SELECT 0.45::DOUBLE AS __rwn_p, CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[]) AS __rwn_domain, len(CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[])) AS __rwn_m
),
counts AS (
    SELECT 2 AS set_size, count(*) AS group_size,
        count(*) FILTER (WHERE "occupation" IN (CAST('Sales' AS VARCHAR), CAST('Tech-support' AS VARCHAR))) AS released_count
    FROM released
),
blocks AS (
    -- every personal group in S, its t blocks: n mod t of size q+1, the rest of size q
    SELECT n, __rwn_tr.t, n // __rwn_tr.t AS q, n % __rwn_tr.t AS r
    FROM (SELECT count(*) AS n FROM released GROUP BY "sex", "race") pg
    JOIN (VALUES (6, 5), (7, 6), (12, 5), (17, 5), (32, 5), (60, 8), (146, 8), (170, 8), (775, 8), (1775, 8)) AS __rwn_tr(size, t) ON __rwn_tr.size = pg.n
),
design AS (
    SELECT 
        coalesce(sum(r * (q + 1) * (q + 1) + (t - r) * q * q), 0) AS ss,
        coalesce(sum(CASE WHEN n > 1 THEN (r * (q + 1) * (n - q - 1) + (t - r) * q * (n - q)) / (n - 1)
                 ELSE 0 END), 0) AS sh
    FROM blocks
),
estimates AS (
    SELECT c.*,
        coalesce((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p * group_size, 0.0) AS estimate,
        least(greatest((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p, 0.0), 1.0) AS __rwn_f_hat,
        __rwn_p, __rwn_a, __rwn_b, __rwn_v, d.ss, d.sh
    FROM (SELECT c.*, params.__rwn_p, (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_b,
                 params.__rwn_p + (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_a, c.set_size / params.__rwn_m AS __rwn_v
          FROM counts c, params) c
    JOIN design d ON true
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
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('adult')
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."adult"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult"
-- ----------------------------------------------------------------- statement
SELECT min("age") FILTER (WHERE isfinite(CAST("age" AS DOUBLE))), max("age") FILTER (WHERE isfinite(CAST("age" AS DOUBLE))) FROM "memory"."main"."adult"
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
WITH src AS (SELECT * FROM "memory"."main"."adult" WHERE isfinite(CAST("age" AS DOUBLE))),
stats AS (SELECT min(CAST("age" AS DOUBLE)) AS off_1, max(CAST("age" AS DOUBLE)) - min(CAST("age" AS DOUBLE)) AS sc_1 FROM src),
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY floor((CAST(s."age" AS DOUBLE) - t.off_1) / t.sc_1 / 0.1::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
WITH src AS (
    SELECT * FROM "memory"."main"."adult"
),
cells AS (
    SELECT count(*) AS c, 'all records' AS label
    FROM src
    GROUP BY CAST("age" AS DOUBLE)
)
SELECT coalesce(sum(c * greatest(c - 1, 5)), 0)::HUGEINT, coalesce(sum(c), 0),
    coalesce(max(c), 0), arg_max(label, c)
FROM cells
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE IF NOT EXISTS temp.main.__rwn_keys (id VARCHAR, k VARCHAR, lasting BOOLEAN)
-- ----------------------------------------------------------------- statement
INSERT INTO temp.main.__rwn_keys VALUES (?, ?, ?)
-- ----------------------------------------------------------------- statement
WITH src AS (SELECT * FROM "memory"."main"."adult" WHERE isfinite(CAST("age" AS DOUBLE))),
stats AS (SELECT min(CAST("age" AS DOUBLE)) AS off_1, max(CAST("age" AS DOUBLE)) - min(CAST("age" AS DOUBLE)) AS sc_1 FROM src),
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY floor((CAST(s."age" AS DOUBLE) - t.off_1) / t.sc_1 / 0.1::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM "memory"."main"."adult"
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH RECURSIVE
-- rwn_sql: exact RWN neighbourhoods by grid-bucketed self-joins (METHODS.md section 1).
-- S_i = { j != i in i's stratum : d(i, j) <= max(eps, r_k(i)) }, ties at the radius included:
-- computed squared distances within a factor 1.0000000000000022::DOUBLE of the radius count as equal, which
-- provably includes every exact tie (METHODS.md, "Exact ties").
-- Records are bucketed into grid cells of side s; every j within s of i lies in i's cell or
-- an adjacent one, so a record is exact once k records and eps lie within its margin. Records
-- that are not yet exact retry with s doubled: no step compares all pairs.
src AS (
    SELECT * FROM "memory"."main"."adult"
),
staged AS MATERIALIZED (
    -- record number: 1-based input position (DuckDB preserves insertion order), or the rank
    -- of the id column's value when id= is given (then the input order does not matter)
    SELECT row_number() OVER () AS __rwn_rid, *
    FROM src
),
stats AS (
    SELECT count(*) AS n,
        min(CAST("age" AS DOUBLE)) AS lo_1,
        max(CAST("age" AS DOUBLE)) AS hi_1,
        stddev_samp(CAST("age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("age" AS DOUBLE))) AS sd_1,
        var_pop(CAST("age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("age" AS DOUBLE))) AS var_1,
        count(*) FILTER (WHERE "age" IS NULL OR NOT isfinite(CAST("age" AS DOUBLE))) AS bad_1
    FROM staged
),
strata_sizes AS (
    SELECT coalesce(min(size), 0) AS smallest, arg_min(label, size) AS smallest_label
    FROM (SELECT 'all records' AS label, count(*) AS size FROM staged GROUP BY ())
),
params AS (
    SELECT *,
        lo_1 AS off_1,
        hi_1 - lo_1 AS sc_1,
        CASE
            WHEN n = 0 THEN 'the input has no records'
            WHEN bad_1 > 0 THEN 'column "age"' || ' has ' || bad_1 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_1 = lo_1 THEN 'column "age"' || ' is constant (every value is ' || lo_1 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_1 - lo_1) AND isfinite(hi_1 - lo_1) AND isfinite((hi_1 - lo_1) / (hi_1 - lo_1) * (hi_1 - lo_1) / (hi_1 - lo_1) * 1), false) THEN 'column "age"' || ' spans ' || lo_1 || ' to ' || hi_1 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN smallest <= 5 THEN 'the input has ' || smallest || ' records; k = 5 needs at least 6 (k must be below the number of records in every stratum)'
        END AS problem
    FROM stats, strata_sizes
),
settings AS (
    -- s0: starting cell side; diameter: no two records are further apart than this;
    -- grid_dims: how many grid coordinates the search uses (the rest stay in one cell)
    SELECT
        CASE WHEN problem IS NOT NULL THEN error('rwn_sql: ' || problem)
             ELSE greatest(0.1::DOUBLE * 1.000001, coalesce(pow(12 * pow(((hi_1 - lo_1) / sc_1), 1.0 / 1) / (n * 1.9999999999999998), 1.0 / 1), 0.0), 1e-9 * diameter, 1e-12)
        END AS s0,
        diameter, grid_dims, off_1, sc_1
    FROM (SELECT *, sqrt(pow((hi_1 - lo_1) / sc_1, 2)) AS diameter, 1 AS grid_dims FROM params)
),
scaled AS (
    -- unscaled distance values v_*, categorical distance columns c_*, strata k_*, and the
    -- scaled grid coordinates g_* (the numeric columns with the largest scaled spread)
    SELECT s.__rwn_rid AS rid,
        CAST(s."age" AS DOUBLE) AS v_1,
        (CAST(s."age" AS DOUBLE) - p.off_1) / p.sc_1 AS g_1
    FROM staged s, params p, settings st
),
first_level AS (
    -- first_lvl: records in dense cells start on a finer grid. The cell count at side s0,
    -- over the count expected if the data were spread evenly, gives the local density;
    -- each level halves the side, dividing the count by 2^G.
    SELECT scaled.*,
        -CAST(round(log2(greatest(count(*) OVER (PARTITION BY floor(g_1 / (st.s0))) * 1.9999999999999998 / 12, 1)) * 1.0 / 1) AS INTEGER) AS first_lvl
    FROM scaled, settings st
),
points AS MATERIALIZED (
    -- start_lvl: the same estimate once more, from the count in the record's cell at first_lvl:
    -- a cell of side s0 averages the density over a region much larger than the k nearest
    -- (clumps of near-duplicates, heavy tails), which put records on too coarse a grid.
    -- Only finer (with eps > 0, not below the level whose cells hold eps): the start level
    -- affects the speed, never the neighbourhoods. On a column grid
    -- the g_* are not kept: the steps that read them recompute them from v_* (sqlgen's grid_columns).
    SELECT rid, v_1,
        greatest(first_lvl - CAST(round(log2(greatest(count(*) OVER (PARTITION BY first_lvl, floor(g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl)))) * 1.9999999999999998 / 12, 1)) * 1.0 / 1 - 0.375) AS INTEGER), CAST(ceil(1.0 * log2(0.1::DOUBLE / (1.2 * st.s0))) AS INTEGER)) AS start_lvl
    FROM first_level f, settings st
),
offsets AS (
    SELECT t1.o AS o_1
    FROM range(-1, 2) t1(o)
),
ball_points AS MATERIALIZED (
    -- the ball pre-pass grid: cells of side 0.1001::DOUBLE (just above eps), t_* = grid coordinate / side;
    -- margin2: every record within this distance of i is in i's block of 3^G cells (as in the search)
    SELECT rid, v_1, least(greatest(g_1 / s, -1e12), 1e12) AS t_1,
        (((CAST(floor(least(greatest(g_1 / s, -1e12), 1e12)) AS BIGINT)) % 4611686018427387904 + 4611686018427387904) % 4611686018427387904) AS cell_key,
        pow(greatest(s * (1 + least(g_1 / s - floor(g_1 / s), 1 - (g_1 / s - floor(g_1 / s))) - 1e-9 * (1 + greatest(abs(g_1 / s)))), 0.0), 2) AS margin2
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, st.grid_dims, 0.1001::DOUBLE AS s FROM points p, settings st) AS p
),
ball_pairs AS (
    -- every record with the members of its eps-ball in its neighbour cells (ties at eps included,
    -- as in the search), streamed into ball_counts (never stored). Filtered before the
    -- aggregate, so that it sees the members only (about a fifth of the candidates in 3-d)
    SELECT a.rid AS i, a.o, b.rid AS j,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1) AS d2
    FROM (SELECT p.*, (f.o_1 + 1) * 1 AS o, (((CAST(floor(p.t_1) AS BIGINT) + f.o_1) % 4611686018427387904 + 4611686018427387904) % 4611686018427387904) AS nb_key, st.sc_1
          FROM ball_points p CROSS JOIN offsets f, settings st) a
    JOIN ball_points b ON b.cell_key = a.nb_key
),
ball_counts AS MATERIALIZED (
    -- per record and neighbour cell: members of its eps-ball there, those strictly within eps,
    -- and the nearest (a ball record's nearest other record is within eps)
    SELECT i, o, count(*) AS size, count(*) FILTER (WHERE d2 <= 0.010000000000000002::DOUBLE) AS within, min(d2) AS near2
    FROM ball_pairs
    WHERE j <> i AND d2 <= 0.010000000000000002::DOUBLE * 1.0000000000000022::DOUBLE
    GROUP BY i, o
),
ball_records AS MATERIALIZED (
    -- records whose neighbourhood is their eps-ball: at least max(k, 1) others within eps (so the
    -- search's radius would be eps), and the ball inside the block (margin); dcr: the nearest
    -- other record is within eps, hence in the block
    SELECT c.i AS rid, CAST(sum(c.size) AS BIGINT) AS size, min(c.near2) AS dcr2
    FROM ball_counts c JOIN ball_points p ON p.rid = c.i
    GROUP BY c.i
    HAVING sum(c.within) >= 5 AND min(p.margin2) >= 0.010000000000000002::DOUBLE * 1.0000000000000022::DOUBLE
),
ball_cells AS MATERIALIZED (
    -- per ball record, its members cell by cell in offset order: `before` of them in earlier cells
    SELECT c.i AS rid, c.o, c.size,
        CAST(sum(c.size) OVER (PARTITION BY c.i ORDER BY c.o) AS BIGINT) - c.size AS before
    FROM ball_counts c JOIN ball_records r ON r.rid = c.i
    WHERE c.size > 0
),
search(lvl, rid, start_lvl, done, members, radius2, dcr2) AS (
    SELECT (SELECT min(start_lvl) FROM points) - 1 AS lvl, points.rid, start_lvl, false AS done,
        NULL::STRUCT(d2 DOUBLE, j BIGINT)[] AS members, NULL::DOUBLE AS radius2, NULL::DOUBLE AS dcr2
    FROM points
    LEFT JOIN ball_records br ON br.rid = points.rid
    WHERE br.rid IS NULL
    UNION ALL
    (WITH
-- rwn_sql: one level of the neighbourhood search (sql/rwn_neighborhoods.sql): the records of
-- `search` still searching try cells of side s = s0 * growth^lvl; DuckDB runs it as the recursive member,
-- Spark once per level (rwn_sql/engines/spark.py).
active AS (
    -- records still searching whose start level is reached; cell side s = s0 * growth^lvl
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    -- margin: every record within this distance of i is in i's block of cells
    SELECT a.*,
            CAST(floor(least(greatest(g_1 / s, -1e12), 1e12)) AS BIGINT) AS cell_1,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - floor(g_1 / s), 1 - (g_1 / s - floor(g_1 / s))) - 1e-9 * (1 + greatest(abs(g_1 / s)))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST(floor(least(greatest(g_1 / l.s, -1e12), 1e12)) AS BIGINT)) % 4611686018427387904 + 4611686018427387904) % 4611686018427387904 AS cell_key
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1 FROM points p, settings st) p, level l
),
pairs AS (
    -- candidates within the margin; i itself (distance 0) is always among them. The neighbour
    -- cells nb_* are columns of one relation, so no optimizer can join probe with build before
    -- the offsets (Spark's did: a cartesian product)
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 4611686018427387904 + 4611686018427387904) % 4611686018427387904 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    -- The margin filters inside the aggregates. A WHERE that DuckDB would push into the cell
    -- join as a residual condition, evaluated pair by pair, was 1.5-2x slower on 5 columns; a
    -- filter the optimizer keeps after the join (margin_filter, where the dialect has one) drops
    -- the pairs beyond the margin (about 3/4 on 3 columns) before they are grouped.
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        -- done once the radius, widened for ties, lies within the margin
        count(*) FILTER (WHERE d2 * 1.0000000000000022::DOUBLE <= margin2) - 1 >= 5
            AND 0.010000000000000002::DOUBLE * 1.0000000000000022::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.010000000000000002::DOUBLE, found[5].d2)) * 1.0000000000000022::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.010000000000000002::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1
)
),
hood AS (
    -- the exact neighbourhoods: members sorted by (distance, record), and their number; records whose
    -- neighbourhood is their eps-ball (ball_records) have only the number, their donors are fetched by rank
    SELECT rid, members, radius2, dcr2, len(members) AS size
    FROM search, settings
    WHERE done AND settings.s0 > 0
    UNION ALL
    SELECT rid, NULL::STRUCT(d2 DOUBLE, j BIGINT)[] AS members, 0.010000000000000002::DOUBLE AS radius2, dcr2, size
    FROM ball_records
)
,
-- rwn_sql: RWN perturbation. Per record and column, independently: with probability q the
-- value is replaced by the same column of a member of S_i drawn uniformly, else kept.
-- Draws come from a keyed hash of (key, purpose, record, column); see rwn_sql/randomness.py.
draws AS (
    SELECT rid, members, size,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|age')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_1
    FROM hood
),
picks0 AS MATERIALIZED (
    SELECT rid,
        CASE WHEN CAST((h_1 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_1 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_1,
        CASE WHEN members IS NULL AND CAST((h_1 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN least(size, 1 + CAST(floor(CAST((h_1 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT)) END AS rank_1
    FROM draws
),
ball_draws AS (
    -- the drawn ranks of the ball records' replaced cells, one row per (record, column)
    SELECT p.rid, u.col, u.r
    FROM picks0 p,
    LATERAL (SELECT unnest([1]) AS col, unnest([p.rank_1]) AS r) u
    WHERE u.r IS NOT NULL
),
ball_at_0 AS (
    -- the cell holding the rank, and the rank within it
    SELECT x.rid, x.col, x.r - c.before AS r,
        CAST(floor(p.t_1) AS BIGINT) + (c.o // 1) % 3 - 1 AS tc_1
    FROM ball_draws x
    JOIN ball_cells c ON c.rid = x.rid AND x.r > c.before AND x.r <= c.before + c.size
    JOIN ball_points p ON p.rid = x.rid
),
ball_split_1 AS (
    -- the drawn cell's members in each of its 2^G halves
    SELECT x.rid, x.col, x.r, x.tc_1, (CAST(floor(b.t_1 * 2.0) AS BIGINT) - 2 * x.tc_1) * 1 AS child, count(*) AS size
    FROM ball_at_0 x
    JOIN ball_points a ON a.rid = x.rid
    JOIN ball_points b ON (((CAST(floor(b.t_1) AS BIGINT)) % 4611686018427387904 + 4611686018427387904) % 4611686018427387904) = (((x.tc_1) % 4611686018427387904 + 4611686018427387904) % 4611686018427387904)
    CROSS JOIN settings st
    WHERE b.rid <> a.rid AND ((a.v_1 - b.v_1) / st.sc_1) * ((a.v_1 - b.v_1) / st.sc_1) <= 0.010000000000000002::DOUBLE * 1.0000000000000022::DOUBLE
    GROUP BY x.rid, x.col, x.r, x.tc_1, (CAST(floor(b.t_1 * 2.0) AS BIGINT) - 2 * x.tc_1) * 1
),
ball_at_1 AS (
    SELECT rid, col, r - before AS r,
        2 * tc_1 + (child // 1) % 2 AS tc_1
    FROM (SELECT s.*, CAST(sum(size) OVER (PARTITION BY rid, col ORDER BY child) AS BIGINT) - size AS before
          FROM ball_split_1 s) AS s
    WHERE r > before AND r <= before + size
),
ball_split_2 AS (
    -- the drawn cell's members in each of its 2^G halves
    SELECT x.rid, x.col, x.r, x.tc_1, (CAST(floor(b.t_1 * 4.0) AS BIGINT) - 2 * x.tc_1) * 1 AS child, count(*) AS size
    FROM ball_at_1 x
    JOIN ball_points a ON a.rid = x.rid
    JOIN ball_points b ON (((CAST(floor(b.t_1 * 2.0) AS BIGINT)) % 4611686018427387904 + 4611686018427387904) % 4611686018427387904) = (((x.tc_1) % 4611686018427387904 + 4611686018427387904) % 4611686018427387904)
    CROSS JOIN settings st
    WHERE b.rid <> a.rid AND ((a.v_1 - b.v_1) / st.sc_1) * ((a.v_1 - b.v_1) / st.sc_1) <= 0.010000000000000002::DOUBLE * 1.0000000000000022::DOUBLE
    GROUP BY x.rid, x.col, x.r, x.tc_1, (CAST(floor(b.t_1 * 4.0) AS BIGINT) - 2 * x.tc_1) * 1
),
ball_at_2 AS (
    SELECT rid, col, r - before AS r,
        2 * tc_1 + (child // 1) % 2 AS tc_1
    FROM (SELECT s.*, CAST(sum(size) OVER (PARTITION BY rid, col ORDER BY child) AS BIGINT) - size AS before
          FROM ball_split_2 s) AS s
    WHERE r > before AND r <= before + size
),
ball_split_3 AS (
    -- the drawn cell's members in each of its 2^G halves
    SELECT x.rid, x.col, x.r, x.tc_1, (CAST(floor(b.t_1 * 8.0) AS BIGINT) - 2 * x.tc_1) * 1 AS child, count(*) AS size
    FROM ball_at_2 x
    JOIN ball_points a ON a.rid = x.rid
    JOIN ball_points b ON (((CAST(floor(b.t_1 * 4.0) AS BIGINT)) % 4611686018427387904 + 4611686018427387904) % 4611686018427387904) = (((x.tc_1) % 4611686018427387904 + 4611686018427387904) % 4611686018427387904)
    CROSS JOIN settings st
    WHERE b.rid <> a.rid AND ((a.v_1 - b.v_1) / st.sc_1) * ((a.v_1 - b.v_1) / st.sc_1) <= 0.010000000000000002::DOUBLE * 1.0000000000000022::DOUBLE
    GROUP BY x.rid, x.col, x.r, x.tc_1, (CAST(floor(b.t_1 * 8.0) AS BIGINT) - 2 * x.tc_1) * 1
),
ball_at_3 AS (
    SELECT rid, col, r - before AS r,
        2 * tc_1 + (child // 1) % 2 AS tc_1
    FROM (SELECT s.*, CAST(sum(size) OVER (PARTITION BY rid, col ORDER BY child) AS BIGINT) - size AS before
          FROM ball_split_3 s) AS s
    WHERE r > before AND r <= before + size
),
ball_split_4 AS (
    -- the drawn cell's members in each of its 2^G halves
    SELECT x.rid, x.col, x.r, x.tc_1, (CAST(floor(b.t_1 * 16.0) AS BIGINT) - 2 * x.tc_1) * 1 AS child, count(*) AS size
    FROM ball_at_3 x
    JOIN ball_points a ON a.rid = x.rid
    JOIN ball_points b ON (((CAST(floor(b.t_1 * 8.0) AS BIGINT)) % 4611686018427387904 + 4611686018427387904) % 4611686018427387904) = (((x.tc_1) % 4611686018427387904 + 4611686018427387904) % 4611686018427387904)
    CROSS JOIN settings st
    WHERE b.rid <> a.rid AND ((a.v_1 - b.v_1) / st.sc_1) * ((a.v_1 - b.v_1) / st.sc_1) <= 0.010000000000000002::DOUBLE * 1.0000000000000022::DOUBLE
    GROUP BY x.rid, x.col, x.r, x.tc_1, (CAST(floor(b.t_1 * 16.0) AS BIGINT) - 2 * x.tc_1) * 1
),
ball_at_4 AS (
    SELECT rid, col, r - before AS r,
        2 * tc_1 + (child // 1) % 2 AS tc_1
    FROM (SELECT s.*, CAST(sum(size) OVER (PARTITION BY rid, col ORDER BY child) AS BIGINT) - size AS before
          FROM ball_split_4 s) AS s
    WHERE r > before AND r <= before + size
),
ball_split_5 AS (
    -- the drawn cell's members in each of its 2^G halves
    SELECT x.rid, x.col, x.r, x.tc_1, (CAST(floor(b.t_1 * 32.0) AS BIGINT) - 2 * x.tc_1) * 1 AS child, count(*) AS size
    FROM ball_at_4 x
    JOIN ball_points a ON a.rid = x.rid
    JOIN ball_points b ON (((CAST(floor(b.t_1 * 16.0) AS BIGINT)) % 4611686018427387904 + 4611686018427387904) % 4611686018427387904) = (((x.tc_1) % 4611686018427387904 + 4611686018427387904) % 4611686018427387904)
    CROSS JOIN settings st
    WHERE b.rid <> a.rid AND ((a.v_1 - b.v_1) / st.sc_1) * ((a.v_1 - b.v_1) / st.sc_1) <= 0.010000000000000002::DOUBLE * 1.0000000000000022::DOUBLE
    GROUP BY x.rid, x.col, x.r, x.tc_1, (CAST(floor(b.t_1 * 32.0) AS BIGINT) - 2 * x.tc_1) * 1
),
ball_at_5 AS (
    SELECT rid, col, r - before AS r,
        2 * tc_1 + (child // 1) % 2 AS tc_1
    FROM (SELECT s.*, CAST(sum(size) OVER (PARTITION BY rid, col ORDER BY child) AS BIGINT) - size AS before
          FROM ball_split_5 s) AS s
    WHERE r > before AND r <= before + size
),
ball_donors AS (
    -- the member of that rank among the drawn cell's members, by record number
    SELECT x.rid, x.col, list_sort(coalesce(list(struct_pack(j := b.rid)) FILTER (WHERE true), []))[x.r].j AS donor
    FROM ball_at_5 x
    JOIN ball_points a ON a.rid = x.rid
    JOIN ball_points b ON (((CAST(floor(b.t_1 * 32.0) AS BIGINT)) % 4611686018427387904 + 4611686018427387904) % 4611686018427387904) = (((x.tc_1) % 4611686018427387904 + 4611686018427387904) % 4611686018427387904)
    CROSS JOIN settings st
    WHERE b.rid <> a.rid AND ((a.v_1 - b.v_1) / st.sc_1) * ((a.v_1 - b.v_1) / st.sc_1) <= 0.010000000000000002::DOUBLE * 1.0000000000000022::DOUBLE
    GROUP BY x.rid, x.col, x.r
),
ball_picks AS (
    SELECT rid, max(CASE WHEN col = 1 THEN donor END) AS donor_1
    FROM ball_donors
    GROUP BY rid
),
picks AS MATERIALIZED (
    SELECT p.rid, coalesce(p.donor_1, b.donor_1) AS donor_1
    FROM picks0 p LEFT JOIN ball_picks b ON b.rid = p.rid
),
drawn AS (SELECT count(*) AS draws FROM picks),
lookup AS (
    -- the input rows whose values the release fetches, readable only once every draw is made
    -- (the always-true condition on drawn): the joins then build their hash tables after the
    -- neighbourhood search has ended and freed its memory, not beside it
    SELECT staged.*
    FROM staged, drawn
    WHERE drawn.draws >= 0
)

SELECT s.* EXCLUDE (__rwn_rid) REPLACE (d_1."age" AS "age")
FROM picks p
JOIN lookup s ON s.__rwn_rid = p.rid
LEFT JOIN lookup d_1 ON d_1.__rwn_rid = p.donor_1
ORDER BY CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.order|')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(s.__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT), s.__rwn_rid
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('rwn_stage_<hex>')
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."rwn_stage_<hex>"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."rwn_stage_<hex>"
-- ----------------------------------------------------------------- statement
SELECT CAST(v AS VARCHAR), n FROM (SELECT "occupation" AS v, count(*) AS n FROM "temp"."main"."rwn_stage_<hex>" GROUP BY "occupation") AS __rwn_counts
-- ----------------------------------------------------------------- statement
SELECT CAST(CAST('?' AS VARCHAR) AS VARCHAR), CAST(CAST('Adm-clerical' AS VARCHAR) AS VARCHAR), CAST(CAST('Armed-Forces' AS VARCHAR) AS VARCHAR), CAST(CAST('Craft-repair' AS VARCHAR) AS VARCHAR), CAST(CAST('Exec-managerial' AS VARCHAR) AS VARCHAR), CAST(CAST('Farming-fishing' AS VARCHAR) AS VARCHAR), CAST(CAST('Handlers-cleaners' AS VARCHAR) AS VARCHAR), CAST(CAST('Machine-op-inspct' AS VARCHAR) AS VARCHAR), CAST(CAST('Other-service' AS VARCHAR) AS VARCHAR), CAST(CAST('Priv-house-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Prof-specialty' AS VARCHAR) AS VARCHAR), CAST(CAST('Protective-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Sales' AS VARCHAR) AS VARCHAR), CAST(CAST('Tech-support' AS VARCHAR) AS VARCHAR), CAST(CAST('Transport-moving' AS VARCHAR) AS VARCHAR)
-- ----------------------------------------------------------------- statement
SELECT n, count(*) FROM (SELECT count(*) AS n FROM "temp"."main"."rwn_stage_<hex>" GROUP BY "sex", "race", "age") AS __rwn_groups GROUP BY n
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE IF NOT EXISTS temp.main.__rwn_keys (id VARCHAR, k VARCHAR, lasting BOOLEAN)
-- ----------------------------------------------------------------- statement
INSERT INTO temp.main.__rwn_keys VALUES (?, ?, ?)
-- ----------------------------------------------------------------- statement
SELECT database_name, path, readonly FROM duckdb_databases() WHERE path IS NOT NULL
-- ----------------------------------------------------------------- statement
ATTACH '<tmp>/.rwn-sql-<pid>-<hex>/release-<hex>.duckdb' AS "__rwn_release_<hex>"
-- ----------------------------------------------------------------- statement
CREATE SCHEMA "__rwn_release_<hex>"."randomized_rows_not_counts"
-- ----------------------------------------------------------------- statement
CREATE TABLE "__rwn_release_<hex>"."randomized_rows_not_counts"."adult_randomized" AS
-- rwn_sql: uniform perturbation of the sensitive attribute (docs/METHODS.md section 2).
-- Each randomization unit (a record, or a block of a large personal group when enforcing
-- (eps, delta)-reconstruction-privacy) keeps its value with probability p, else takes a value
-- drawn uniformly from the m values of the published domain (a constant list in the SQL).
-- Draws: keyed hash of (key, purpose, unit, column). The record identity is the id column as text
-- (id=), else the 1-based input
-- position. The rows are written in the order of a keyed hash of the record (__rwn_o), so the
-- release order carries nothing about the input order (issue 8, R2).
SELECT "age",
    CASE WHEN "occupation" IS NULL THEN error('rwn_sql: the sensitive column "occupation" has NULL values; clean them or use nulls=''drop'' (--nulls drop; those records are then left out)')
        WHEN CAST((__rwn_h >> 76) & 4503599627370495 AS BIGINT) < 2026619832316724 THEN "occupation"
        ELSE CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[])[1 + CAST(floor(CAST((__rwn_h >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * 15) AS BIGINT)] END AS "occupation",
    "race",
    "sex"
FROM (
    SELECT *, md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rp.randomize|occupation')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(__rwn_unit AS VARCHAR)) AS __rwn_h, CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rp.order|')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT) AS __rwn_o
    FROM (
        -- enforcement: a personal group of n records is split at random into t(n) blocks;
        -- each block shares one coin and one replacement value (t depends on n only)
        SELECT 'g' || __rwn_gid || 'b' || ((__rwn_pos - 1) % __rwn_trials) AS __rwn_unit,
            __rwn_rid, "age", "occupation", "race", "sex"
        FROM (SELECT __rwn_g.*, CASE WHEN __rwn_tr.t IS NULL THEN error('rwn_sql: a personal group size is missing from the trials table; rebuild the SQL for this data') WHEN __rwn_tr.t = 0 THEN error('rwn_sql: a personal group of ' || __rwn_tr.size || ' records cannot pass the test with any number of blocks') ELSE __rwn_tr.t END AS __rwn_trials
            FROM (
                SELECT *, min(__rwn_rid) OVER (PARTITION BY "sex", "race", "age") AS __rwn_gid,
                    row_number() OVER (PARTITION BY "sex", "race", "age" ORDER BY CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rp.block|occupation')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT), __rwn_rid) AS __rwn_pos,
                    count(*) OVER (PARTITION BY "sex", "race", "age") AS __rwn_gsize
                FROM (SELECT row_number() OVER () AS __rwn_rid, * FROM "temp"."main"."rwn_stage_<hex>") AS __rwn_staged) __rwn_g
            LEFT JOIN (VALUES (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 5), (7, 6), (8, 6), (9, 7), (10, 6), (11, 6), (12, 5), (13, 5), (14, 6), (15, 6), (16, 6), (17, 5), (18, 5), (19, 5), (20, 5), (21, 6), (22, 6), (23, 5), (24, 5), (25, 5), (26, 5), (27, 5), (28, 6), (29, 5), (31, 5), (33, 5), (35, 8), (36, 5), (37, 8), (38, 5), (40, 8), (41, 8), (42, 8), (43, 8), (46, 8), (48, 8), (49, 8), (50, 8), (51, 8), (52, 8), (53, 8), (56, 8), (61, 8), (63, 8)) AS __rwn_tr(size, t) ON __rwn_tr.size = __rwn_g.__rwn_gsize)
    ) AS __rwn_units
) AS __rwn_draws
ORDER BY __rwn_o, __rwn_rid

-- ----------------------------------------------------------------- statement
CREATE TABLE "__rwn_release_<hex>".rwn_release_metadata (
    table_name VARCHAR, method VARCHAR, sensitive VARCHAR, sensitive_type VARCHAR, public VARCHAR[],
    p DOUBLE, domain VARCHAR[], m INTEGER, enforced BOOLEAN, epsilon DOUBLE, delta DOUBLE, test VARCHAR,
    rwn_columns VARCHAR[], rwn_k INTEGER, rwn_eps DOUBLE, rwn_q DOUBLE, rwn_scale VARCHAR,
    rows BIGINT, created_at TIMESTAMP, rwn_sql_version VARCHAR, suppressed_records BIGINT, release_name VARCHAR,
    l_diversity INTEGER, max_top_share DOUBLE, p_calibration VARCHAR)
-- ----------------------------------------------------------------- statement
INSERT INTO "__rwn_release_<hex>".rwn_release_metadata VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
-- ----------------------------------------------------------------- statement
CREATE TABLE "__rwn_release_<hex>".rwn_release_trials AS SELECT * FROM (VALUES (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 5), (7, 6), (8, 6), (9, 7), (10, 6), (11, 6), (12, 5), (13, 5), (14, 6), (15, 6), (16, 6), (17, 5), (18, 5), (19, 5), (20, 5), (21, 6), (22, 6), (23, 5), (24, 5), (25, 5), (26, 5), (27, 5), (28, 6), (29, 5), (31, 5), (33, 5), (35, 8), (36, 5), (37, 8), (38, 5), (40, 8), (41, 8), (42, 8), (43, 8), (46, 8), (48, 8), (49, 8), (50, 8), (51, 8), (52, 8), (53, 8), (56, 8), (61, 8), (63, 8)) AS __rwn_tr(size, t)
-- ----------------------------------------------------------------- statement
SELECT count(DISTINCT "sex"), count(DISTINCT "race"), count(DISTINCT "age") FROM "__rwn_release_<hex>"."randomized_rows_not_counts"."adult_randomized"
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
USE "__rwn_release_<hex>"
-- ----------------------------------------------------------------- statement
CREATE VIEW "adult_estimates" AS
SELECT value AS "occupation", released_count, group_size, estimate, std_error, ci_low, ci_high, nonnegative_estimate
FROM (
SELECT * EXCLUDE (__rwn_j, __rwn_cs, __rwn_rho, __rwn_tau),
    greatest(estimate - __rwn_tau, 0.0) AS nonnegative_estimate
FROM (SELECT *, max(CASE WHEN __rwn_j = __rwn_rho THEN (__rwn_cs - group_size) / __rwn_j END)
                     OVER () AS __rwn_tau
      FROM (SELECT *, max(CASE WHEN estimate - (__rwn_cs - group_size) / __rwn_j > 0 THEN __rwn_j END)
                           OVER () AS __rwn_rho
            FROM (SELECT *, row_number() OVER __rwn_w AS __rwn_j, sum(estimate) OVER __rwn_w AS __rwn_cs
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
    SELECT * FROM "randomized_rows_not_counts"."adult_randomized"
),
params AS (
    SELECT (SELECT p FROM rwn_release_metadata WHERE table_name = 'adult_randomized') AS __rwn_p, CAST((SELECT domain FROM rwn_release_metadata WHERE table_name = 'adult_randomized') AS VARCHAR[]) AS __rwn_domain, len(CAST((SELECT domain FROM rwn_release_metadata WHERE table_name = 'adult_randomized') AS VARCHAR[])) AS __rwn_m
),
counts AS (
    SELECT d.value, 1 AS set_size, g.group_size,
        CAST(coalesce(c.n, 0) AS BIGINT) AS released_count
    FROM (SELECT count(*) AS group_size FROM released
          HAVING count(*) > 0) g
    CROSS JOIN (SELECT unnest(__rwn_domain) AS value FROM params) d
    LEFT JOIN (SELECT "occupation" AS value, count(*) AS n FROM released GROUP BY "occupation") c
        ON c.value = d.value
),
blocks AS (
    -- every personal group in S, its t blocks: n mod t of size q+1, the rest of size q
    SELECT n, __rwn_tr.t, n // __rwn_tr.t AS q, n % __rwn_tr.t AS r
    FROM (SELECT count(*) AS n FROM released GROUP BY "sex", "race", "age") pg
    JOIN rwn_release_trials AS __rwn_tr ON __rwn_tr.size = pg.n
),
design AS (
    SELECT 
        coalesce(sum(r * (q + 1) * (q + 1) + (t - r) * q * q), 0) AS ss,
        coalesce(sum(CASE WHEN n > 1 THEN (r * (q + 1) * (n - q - 1) + (t - r) * q * (n - q)) / (n - 1)
                 ELSE 0 END), 0) AS sh
    FROM blocks
),
estimates AS (
    SELECT c.*,
        coalesce((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p * group_size, 0.0) AS estimate,
        least(greatest((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p, 0.0), 1.0) AS __rwn_f_hat,
        __rwn_p, __rwn_a, __rwn_b, __rwn_v, d.ss, d.sh
    FROM (SELECT c.*, params.__rwn_p, (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_b,
                 params.__rwn_p + (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_a, c.set_size / params.__rwn_m AS __rwn_v
          FROM counts c, params) c
    JOIN design d ON true
),
spread AS (
    SELECT *, sqrt(__rwn_b * (1 - __rwn_b) * ss + __rwn_p * (1 - __rwn_p) * (sh - 2 * __rwn_v * ss) * __rwn_f_hat
                   + __rwn_p * (1 - __rwn_p) * (ss - sh) * __rwn_f_hat * __rwn_f_hat) / __rwn_p AS std_error
    FROM estimates
)
SELECT value, released_count,
    group_size,
    estimate,
    std_error,
    estimate - 1.959963984540054 * std_error AS ci_low,
    estimate + 1.959963984540054 * std_error AS ci_high,
    least(greatest(estimate, 0.0), group_size) AS estimate_clipped
FROM spread
ORDER BY value

) AS __rwn_e
                  WINDOW __rwn_w AS ( ORDER BY estimate DESC, value
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) AS __rwn_s
           ) AS __rwn_k
     ) AS __rwn_t
) ORDER BY "occupation"
-- ----------------------------------------------------------------- statement
CREATE VIEW "adult_estimates_by_sex" AS
SELECT "sex", value AS "occupation", released_count, group_size, estimate, std_error, ci_low, ci_high, nonnegative_estimate
FROM (
SELECT * EXCLUDE (__rwn_j, __rwn_cs, __rwn_rho, __rwn_tau),
    greatest(estimate - __rwn_tau, 0.0) AS nonnegative_estimate
FROM (SELECT *, max(CASE WHEN __rwn_j = __rwn_rho THEN (__rwn_cs - group_size) / __rwn_j END)
                     OVER (PARTITION BY "sex") AS __rwn_tau
      FROM (SELECT *, max(CASE WHEN estimate - (__rwn_cs - group_size) / __rwn_j > 0 THEN __rwn_j END)
                           OVER (PARTITION BY "sex") AS __rwn_rho
            FROM (SELECT *, row_number() OVER __rwn_w AS __rwn_j, sum(estimate) OVER __rwn_w AS __rwn_cs
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
    SELECT * FROM "randomized_rows_not_counts"."adult_randomized"
),
params AS (
    SELECT (SELECT p FROM rwn_release_metadata WHERE table_name = 'adult_randomized') AS __rwn_p, CAST((SELECT domain FROM rwn_release_metadata WHERE table_name = 'adult_randomized') AS VARCHAR[]) AS __rwn_domain, len(CAST((SELECT domain FROM rwn_release_metadata WHERE table_name = 'adult_randomized') AS VARCHAR[])) AS __rwn_m
),
counts AS (
    SELECT g."sex", d.value, 1 AS set_size, g.group_size,
        CAST(coalesce(c.n, 0) AS BIGINT) AS released_count
    FROM (SELECT "sex", count(*) AS group_size FROM released GROUP BY "sex"
          HAVING count(*) > 0) g
    CROSS JOIN (SELECT unnest(__rwn_domain) AS value FROM params) d
    LEFT JOIN (SELECT "sex", "occupation" AS value, count(*) AS n FROM released GROUP BY "sex", "occupation") c
        ON c."sex" IS NOT DISTINCT FROM g."sex" AND c.value = d.value
),
blocks AS (
    -- every personal group in S, its t blocks: n mod t of size q+1, the rest of size q
    SELECT "sex", n, __rwn_tr.t, n // __rwn_tr.t AS q, n % __rwn_tr.t AS r
    FROM (SELECT "sex", count(*) AS n FROM released GROUP BY "sex", "race", "age") pg
    JOIN rwn_release_trials AS __rwn_tr ON __rwn_tr.size = pg.n
),
design AS (
    SELECT "sex", 
        coalesce(sum(r * (q + 1) * (q + 1) + (t - r) * q * q), 0) AS ss,
        coalesce(sum(CASE WHEN n > 1 THEN (r * (q + 1) * (n - q - 1) + (t - r) * q * (n - q)) / (n - 1)
                 ELSE 0 END), 0) AS sh
    FROM blocks GROUP BY "sex"
),
estimates AS (
    SELECT c.*,
        coalesce((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p * group_size, 0.0) AS estimate,
        least(greatest((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p, 0.0), 1.0) AS __rwn_f_hat,
        __rwn_p, __rwn_a, __rwn_b, __rwn_v, d.ss, d.sh
    FROM (SELECT c.*, params.__rwn_p, (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_b,
                 params.__rwn_p + (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_a, c.set_size / params.__rwn_m AS __rwn_v
          FROM counts c, params) c
    JOIN design d ON d."sex" IS NOT DISTINCT FROM c."sex"
),
spread AS (
    SELECT *, sqrt(__rwn_b * (1 - __rwn_b) * ss + __rwn_p * (1 - __rwn_p) * (sh - 2 * __rwn_v * ss) * __rwn_f_hat
                   + __rwn_p * (1 - __rwn_p) * (ss - sh) * __rwn_f_hat * __rwn_f_hat) / __rwn_p AS std_error
    FROM estimates
)
SELECT "sex", value, released_count,
    group_size,
    estimate,
    std_error,
    estimate - 1.959963984540054 * std_error AS ci_low,
    estimate + 1.959963984540054 * std_error AS ci_high,
    least(greatest(estimate, 0.0), group_size) AS estimate_clipped
FROM spread
ORDER BY "sex", value

) AS __rwn_e
                  WINDOW __rwn_w AS (PARTITION BY "sex" ORDER BY estimate DESC, value
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) AS __rwn_s
           ) AS __rwn_k
     ) AS __rwn_t
) ORDER BY "sex", "occupation"
-- ----------------------------------------------------------------- statement
CREATE VIEW "adult_estimates_by_race" AS
SELECT "race", value AS "occupation", released_count, group_size, estimate, std_error, ci_low, ci_high, nonnegative_estimate
FROM (
SELECT * EXCLUDE (__rwn_j, __rwn_cs, __rwn_rho, __rwn_tau),
    greatest(estimate - __rwn_tau, 0.0) AS nonnegative_estimate
FROM (SELECT *, max(CASE WHEN __rwn_j = __rwn_rho THEN (__rwn_cs - group_size) / __rwn_j END)
                     OVER (PARTITION BY "race") AS __rwn_tau
      FROM (SELECT *, max(CASE WHEN estimate - (__rwn_cs - group_size) / __rwn_j > 0 THEN __rwn_j END)
                           OVER (PARTITION BY "race") AS __rwn_rho
            FROM (SELECT *, row_number() OVER __rwn_w AS __rwn_j, sum(estimate) OVER __rwn_w AS __rwn_cs
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
    SELECT * FROM "randomized_rows_not_counts"."adult_randomized"
),
params AS (
    SELECT (SELECT p FROM rwn_release_metadata WHERE table_name = 'adult_randomized') AS __rwn_p, CAST((SELECT domain FROM rwn_release_metadata WHERE table_name = 'adult_randomized') AS VARCHAR[]) AS __rwn_domain, len(CAST((SELECT domain FROM rwn_release_metadata WHERE table_name = 'adult_randomized') AS VARCHAR[])) AS __rwn_m
),
counts AS (
    SELECT g."race", d.value, 1 AS set_size, g.group_size,
        CAST(coalesce(c.n, 0) AS BIGINT) AS released_count
    FROM (SELECT "race", count(*) AS group_size FROM released GROUP BY "race"
          HAVING count(*) > 0) g
    CROSS JOIN (SELECT unnest(__rwn_domain) AS value FROM params) d
    LEFT JOIN (SELECT "race", "occupation" AS value, count(*) AS n FROM released GROUP BY "race", "occupation") c
        ON c."race" IS NOT DISTINCT FROM g."race" AND c.value = d.value
),
blocks AS (
    -- every personal group in S, its t blocks: n mod t of size q+1, the rest of size q
    SELECT "race", n, __rwn_tr.t, n // __rwn_tr.t AS q, n % __rwn_tr.t AS r
    FROM (SELECT "race", count(*) AS n FROM released GROUP BY "race", "sex", "age") pg
    JOIN rwn_release_trials AS __rwn_tr ON __rwn_tr.size = pg.n
),
design AS (
    SELECT "race", 
        coalesce(sum(r * (q + 1) * (q + 1) + (t - r) * q * q), 0) AS ss,
        coalesce(sum(CASE WHEN n > 1 THEN (r * (q + 1) * (n - q - 1) + (t - r) * q * (n - q)) / (n - 1)
                 ELSE 0 END), 0) AS sh
    FROM blocks GROUP BY "race"
),
estimates AS (
    SELECT c.*,
        coalesce((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p * group_size, 0.0) AS estimate,
        least(greatest((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p, 0.0), 1.0) AS __rwn_f_hat,
        __rwn_p, __rwn_a, __rwn_b, __rwn_v, d.ss, d.sh
    FROM (SELECT c.*, params.__rwn_p, (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_b,
                 params.__rwn_p + (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_a, c.set_size / params.__rwn_m AS __rwn_v
          FROM counts c, params) c
    JOIN design d ON d."race" IS NOT DISTINCT FROM c."race"
),
spread AS (
    SELECT *, sqrt(__rwn_b * (1 - __rwn_b) * ss + __rwn_p * (1 - __rwn_p) * (sh - 2 * __rwn_v * ss) * __rwn_f_hat
                   + __rwn_p * (1 - __rwn_p) * (ss - sh) * __rwn_f_hat * __rwn_f_hat) / __rwn_p AS std_error
    FROM estimates
)
SELECT "race", value, released_count,
    group_size,
    estimate,
    std_error,
    estimate - 1.959963984540054 * std_error AS ci_low,
    estimate + 1.959963984540054 * std_error AS ci_high,
    least(greatest(estimate, 0.0), group_size) AS estimate_clipped
FROM spread
ORDER BY "race", value

) AS __rwn_e
                  WINDOW __rwn_w AS (PARTITION BY "race" ORDER BY estimate DESC, value
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) AS __rwn_s
           ) AS __rwn_k
     ) AS __rwn_t
) ORDER BY "race", "occupation"
-- ----------------------------------------------------------------- statement
CREATE VIEW "adult_estimates_by_age" AS
SELECT "age", value AS "occupation", released_count, group_size, estimate, std_error, ci_low, ci_high, nonnegative_estimate
FROM (
SELECT * EXCLUDE (__rwn_j, __rwn_cs, __rwn_rho, __rwn_tau),
    greatest(estimate - __rwn_tau, 0.0) AS nonnegative_estimate
FROM (SELECT *, max(CASE WHEN __rwn_j = __rwn_rho THEN (__rwn_cs - group_size) / __rwn_j END)
                     OVER (PARTITION BY "age") AS __rwn_tau
      FROM (SELECT *, max(CASE WHEN estimate - (__rwn_cs - group_size) / __rwn_j > 0 THEN __rwn_j END)
                           OVER (PARTITION BY "age") AS __rwn_rho
            FROM (SELECT *, row_number() OVER __rwn_w AS __rwn_j, sum(estimate) OVER __rwn_w AS __rwn_cs
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
    SELECT * FROM "randomized_rows_not_counts"."adult_randomized"
),
params AS (
    SELECT (SELECT p FROM rwn_release_metadata WHERE table_name = 'adult_randomized') AS __rwn_p, CAST((SELECT domain FROM rwn_release_metadata WHERE table_name = 'adult_randomized') AS VARCHAR[]) AS __rwn_domain, len(CAST((SELECT domain FROM rwn_release_metadata WHERE table_name = 'adult_randomized') AS VARCHAR[])) AS __rwn_m
),
counts AS (
    SELECT g."age", d.value, 1 AS set_size, g.group_size,
        CAST(coalesce(c.n, 0) AS BIGINT) AS released_count
    FROM (SELECT "age", count(*) AS group_size FROM released GROUP BY "age"
          HAVING count(*) > 0) g
    CROSS JOIN (SELECT unnest(__rwn_domain) AS value FROM params) d
    LEFT JOIN (SELECT "age", "occupation" AS value, count(*) AS n FROM released GROUP BY "age", "occupation") c
        ON c."age" IS NOT DISTINCT FROM g."age" AND c.value = d.value
),
blocks AS (
    -- every personal group in S, its t blocks: n mod t of size q+1, the rest of size q
    SELECT "age", n, __rwn_tr.t, n // __rwn_tr.t AS q, n % __rwn_tr.t AS r
    FROM (SELECT "age", count(*) AS n FROM released GROUP BY "age", "sex", "race") pg
    JOIN rwn_release_trials AS __rwn_tr ON __rwn_tr.size = pg.n
),
design AS (
    SELECT "age", 
        coalesce(sum(r * (q + 1) * (q + 1) + (t - r) * q * q), 0) AS ss,
        coalesce(sum(CASE WHEN n > 1 THEN (r * (q + 1) * (n - q - 1) + (t - r) * q * (n - q)) / (n - 1)
                 ELSE 0 END), 0) AS sh
    FROM blocks GROUP BY "age"
),
estimates AS (
    SELECT c.*,
        coalesce((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p * group_size, 0.0) AS estimate,
        least(greatest((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p, 0.0), 1.0) AS __rwn_f_hat,
        __rwn_p, __rwn_a, __rwn_b, __rwn_v, d.ss, d.sh
    FROM (SELECT c.*, params.__rwn_p, (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_b,
                 params.__rwn_p + (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_a, c.set_size / params.__rwn_m AS __rwn_v
          FROM counts c, params) c
    JOIN design d ON d."age" IS NOT DISTINCT FROM c."age"
),
spread AS (
    SELECT *, sqrt(__rwn_b * (1 - __rwn_b) * ss + __rwn_p * (1 - __rwn_p) * (sh - 2 * __rwn_v * ss) * __rwn_f_hat
                   + __rwn_p * (1 - __rwn_p) * (ss - sh) * __rwn_f_hat * __rwn_f_hat) / __rwn_p AS std_error
    FROM estimates
)
SELECT "age", value, released_count,
    group_size,
    estimate,
    std_error,
    estimate - 1.959963984540054 * std_error AS ci_low,
    estimate + 1.959963984540054 * std_error AS ci_high,
    least(greatest(estimate, 0.0), group_size) AS estimate_clipped
FROM spread
ORDER BY "age", value

) AS __rwn_e
                  WINDOW __rwn_w AS (PARTITION BY "age" ORDER BY estimate DESC, value
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) AS __rwn_s
           ) AS __rwn_k
     ) AS __rwn_t
) ORDER BY "age", "occupation"
-- ----------------------------------------------------------------- statement
CREATE VIEW "adult_cells" AS
SELECT "sex", "race", "age", value AS "occupation", group_size, released_count, estimate,
    nonnegative_estimate, std_error * std_error AS variance
FROM (
SELECT * EXCLUDE (__rwn_j, __rwn_cs, __rwn_rho, __rwn_tau),
    greatest(estimate - __rwn_tau, 0.0) AS nonnegative_estimate
FROM (SELECT *, max(CASE WHEN __rwn_j = __rwn_rho THEN (__rwn_cs - group_size) / __rwn_j END)
                     OVER (PARTITION BY "sex", "race", "age") AS __rwn_tau
      FROM (SELECT *, max(CASE WHEN estimate - (__rwn_cs - group_size) / __rwn_j > 0 THEN __rwn_j END)
                           OVER (PARTITION BY "sex", "race", "age") AS __rwn_rho
            FROM (SELECT *, row_number() OVER __rwn_w AS __rwn_j, sum(estimate) OVER __rwn_w AS __rwn_cs
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
    SELECT * FROM "randomized_rows_not_counts"."adult_randomized"
),
params AS (
    SELECT (SELECT p FROM rwn_release_metadata WHERE table_name = 'adult_randomized') AS __rwn_p, CAST((SELECT domain FROM rwn_release_metadata WHERE table_name = 'adult_randomized') AS VARCHAR[]) AS __rwn_domain, len(CAST((SELECT domain FROM rwn_release_metadata WHERE table_name = 'adult_randomized') AS VARCHAR[])) AS __rwn_m
),
counts AS (
    SELECT g."sex", g."race", g."age", d.value, 1 AS set_size, g.group_size,
        CAST(coalesce(c.n, 0) AS BIGINT) AS released_count
    FROM (SELECT "sex", "race", "age", count(*) AS group_size FROM released GROUP BY "sex", "race", "age"
          HAVING count(*) > 0) g
    CROSS JOIN (SELECT unnest(__rwn_domain) AS value FROM params) d
    LEFT JOIN (SELECT "sex", "race", "age", "occupation" AS value, count(*) AS n FROM released GROUP BY "sex", "race", "age", "occupation") c
        ON c."sex" IS NOT DISTINCT FROM g."sex" AND c."race" IS NOT DISTINCT FROM g."race" AND c."age" IS NOT DISTINCT FROM g."age" AND c.value = d.value
),
blocks AS (
    -- every personal group in S, its t blocks: n mod t of size q+1, the rest of size q
    SELECT "sex", "race", "age", n, __rwn_tr.t, n // __rwn_tr.t AS q, n % __rwn_tr.t AS r
    FROM (SELECT "sex", "race", "age", count(*) AS n FROM released GROUP BY "sex", "race", "age") pg
    JOIN rwn_release_trials AS __rwn_tr ON __rwn_tr.size = pg.n
),
design AS (
    SELECT "sex", "race", "age", 
        coalesce(sum(r * (q + 1) * (q + 1) + (t - r) * q * q), 0) AS ss,
        coalesce(sum(CASE WHEN n > 1 THEN (r * (q + 1) * (n - q - 1) + (t - r) * q * (n - q)) / (n - 1)
                 ELSE 0 END), 0) AS sh
    FROM blocks GROUP BY "sex", "race", "age"
),
estimates AS (
    SELECT c.*,
        coalesce((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p * group_size, 0.0) AS estimate,
        least(greatest((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p, 0.0), 1.0) AS __rwn_f_hat,
        __rwn_p, __rwn_a, __rwn_b, __rwn_v, d.ss, d.sh
    FROM (SELECT c.*, params.__rwn_p, (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_b,
                 params.__rwn_p + (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_a, c.set_size / params.__rwn_m AS __rwn_v
          FROM counts c, params) c
    JOIN design d ON d."sex" IS NOT DISTINCT FROM c."sex" AND d."race" IS NOT DISTINCT FROM c."race" AND d."age" IS NOT DISTINCT FROM c."age"
),
spread AS (
    SELECT *, sqrt(__rwn_b * (1 - __rwn_b) * ss + __rwn_p * (1 - __rwn_p) * (sh - 2 * __rwn_v * ss) * __rwn_f_hat
                   + __rwn_p * (1 - __rwn_p) * (ss - sh) * __rwn_f_hat * __rwn_f_hat) / __rwn_p AS std_error
    FROM estimates
)
SELECT "sex", "race", "age", value, released_count,
    group_size,
    estimate,
    std_error,
    estimate - 1.959963984540054 * std_error AS ci_low,
    estimate + 1.959963984540054 * std_error AS ci_high,
    least(greatest(estimate, 0.0), group_size) AS estimate_clipped
FROM spread
ORDER BY "sex", "race", "age", value

) AS __rwn_e
                  WINDOW __rwn_w AS (PARTITION BY "sex", "race", "age" ORDER BY estimate DESC, value
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) AS __rwn_s
           ) AS __rwn_k
     ) AS __rwn_t
)
ORDER BY "sex", "race", "age", "occupation"
-- ----------------------------------------------------------------- statement
COMMENT ON TABLE "randomized_rows_not_counts"."adult_randomized" IS 'Randomized rows, NOT counts: occupation was kept with probability p = 0.45, else replaced by a uniform draw from its 15 published values. Enforced (0.5, 0.1)-reconstruction privacy (exact test): records of a personal group move in blocks (see rwn_release_trials). Counts of this table by occupation are BIASED: use adult_cells.estimate (SUM it over any slice of public columns) or the adult_estimates views in the main schema. Rows are in a random order.'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "randomized_rows_not_counts"."adult_randomized"."sex" IS 'public column: released unchanged; it defines the personal groups'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "randomized_rows_not_counts"."adult_randomized"."race" IS 'public column: released unchanged; it defines the personal groups'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "randomized_rows_not_counts"."adult_randomized"."age" IS 'public column: released after RWN perturbation (values swapped within neighbourhoods); it defines the personal groups'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "randomized_rows_not_counts"."adult_randomized"."occupation" IS 'randomized sensitive column: each value kept with probability 0.45, else a uniform draw from the domain. Do not count it directly: use adult_cells.estimate'
-- ----------------------------------------------------------------- statement
COMMENT ON TABLE "rwn_release_metadata" IS 'Published parameters of each released table (never the key or raw data): everything needed to re-derive every estimate'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."table_name" IS 'the randomized microdata table this row describes'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."method" IS 'uniform_perturbation, or rwn+uniform_perturbation when numeric public columns were first perturbed by RWN'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."sensitive" IS 'the randomized (sensitive) column'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."sensitive_type" IS 'its SQL type'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."public" IS 'the public columns; together they define the personal groups'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."p" IS 'retention probability: each sensitive value was kept with probability p, else replaced by a uniform draw from the domain'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."domain" IS 'the m possible sensitive values, as published (the estimates use exactly these)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."m" IS 'number of domain values'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."enforced" IS 'true when (epsilon, delta)-reconstruction privacy was enforced by blocks (see rwn_release_trials)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."epsilon" IS 'enforced epsilon (NULL when not enforced)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."delta" IS 'enforced delta (NULL when not enforced)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."test" IS 'test the enforcement was certified with: exact (every count) or chernoff (screening only)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."rwn_columns" IS 'numeric public columns perturbed by RWN before the randomization (NULL: none)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."rwn_k" IS 'RWN neighbourhood size k'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."rwn_eps" IS 'RWN neighbourhood radius eps'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."rwn_q" IS 'RWN replacement probability q'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."rwn_scale" IS 'RWN scaling of the distance columns'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."rows" IS 'records released'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."created_at" IS 'when the release was written (UTC)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."rwn_sql_version" IS 'version of rwn_sql that wrote it'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."suppressed_records" IS 'records of personal groups left out because no enforcement design passes (suppress_small)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."release_name" IS 'the release''s name: the prefix of its tables and views'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."l_diversity" IS 'distinct l-diversity required of personal groups of at least 2 records, with no public proxy of the sensitive attribute; 1: the steward turned the check off'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."max_top_share" IS 'the largest share of a personal group (of at least 2 records) one sensitive value could hold: a majority vote within a group recovers no more; 1: that part turned off; NULL: not checked'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_metadata"."p_calibration" IS 'the budget p was calibrated from (rho1-to-rho2 privacy or local differential privacy, with its bound on p for this domain''s m values); NULL: p was given'
-- ----------------------------------------------------------------- statement
COMMENT ON TABLE "rwn_release_trials" IS 'Enforced release: the number of blocks t of a personal group of each size (public: it follows from the group sizes and the published parameters); the standard errors use it'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_trials"."size" IS 'personal-group size (records)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "rwn_release_trials"."t" IS 'blocks the group was split into; each block shared one coin and one replacement value'
-- ----------------------------------------------------------------- statement
COMMENT ON VIEW "adult_cells" IS 'Fact view for BI tools: one row per personal group (every public column) and occupation value. SUM(estimate) over any slice of public columns is the unbiased estimate of that slice''s count; SUM(variance) is its variance (groups are independent) when the slice holds one occupation value, and conservative (too large) when it sums several values, whose estimates are negatively correlated. nonnegative_estimate: never negative, sums to group_size, biased (see its comment). Never COUNT(*) this view or the randomized table (randomized_rows_not_counts.adult_randomized).'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_cells"."sex" IS 'public column (a personal group is one combination of them)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_cells"."race" IS 'public column (a personal group is one combination of them)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_cells"."age" IS 'public column (a personal group is one combination of them)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_cells"."occupation" IS 'occupation value (every published value appears in every group)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_cells"."group_size" IS 'released records in the personal group (exact; the same on every row of the group)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_cells"."released_count" IS 'released records with this value: BIASED by the randomization, never report it as a count'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_cells"."estimate" IS 'unbiased estimate of the group''s records holding this value: SUM it over any slice (it can be negative or exceed group_size; sums over large slices are accurate)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_cells"."nonnegative_estimate" IS 'the group''s non-negative estimate consistent with group_size: BIASED but never negative: the group''s unbiased estimates projected (Euclidean distance) onto the non-negative counts that sum to group_size, so it equals estimate when none of the group''s estimates is negative; rare values come out too high and common ones too low, it has no standard error, and a SUM of it over many groups inflates rare values: for display and shares; SUM estimate for totals'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_cells"."variance" IS 'variance of estimate (block-aware): SUM it over a slice of one value for the slice''s variance (conservative across several values)'
-- ----------------------------------------------------------------- statement
COMMENT ON VIEW "adult_estimates" IS 'Unbiased reconstruction of the counts of occupation values, with standard errors and 95% intervals (p = 0.45, domain and test as published in rwn_release_metadata)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates"."occupation" IS 'occupation value (every published value appears)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates"."released_count" IS 'released records with this value: BIASED by the randomization, never report it as a count'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates"."group_size" IS 'released records in the group (exact)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates"."estimate" IS 'unbiased estimate of the number of records holding the value'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates"."std_error" IS 'standard error of estimate (block-aware for enforced releases)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates"."ci_low" IS 'estimate - 1.96 std_error (95% interval)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates"."ci_high" IS 'estimate + 1.96 std_error (95% interval)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates"."nonnegative_estimate" IS 'non-negative estimate consistent with group_size: BIASED but never negative: the group''s unbiased estimates projected (Euclidean distance) onto the non-negative counts that sum to group_size, so it equals estimate when none of the group''s estimates is negative; rare values come out too high and common ones too low, it has no standard error, and a SUM of it over many groups inflates rare values: for display and shares; SUM estimate for totals'
-- ----------------------------------------------------------------- statement
COMMENT ON VIEW "adult_estimates_by_sex" IS 'Unbiased reconstruction of the counts of occupation values per sex, with standard errors and 95% intervals (p = 0.45, domain and test as published in rwn_release_metadata)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_sex"."sex" IS 'public column'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_sex"."occupation" IS 'occupation value (every published value appears for every sex)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_sex"."released_count" IS 'released records with this value: BIASED by the randomization, never report it as a count'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_sex"."group_size" IS 'released records in the group (exact)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_sex"."estimate" IS 'unbiased estimate of the number of records holding the value'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_sex"."std_error" IS 'standard error of estimate (block-aware for enforced releases)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_sex"."ci_low" IS 'estimate - 1.96 std_error (95% interval)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_sex"."ci_high" IS 'estimate + 1.96 std_error (95% interval)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_sex"."nonnegative_estimate" IS 'non-negative estimate consistent with group_size: BIASED but never negative: the group''s unbiased estimates projected (Euclidean distance) onto the non-negative counts that sum to group_size, so it equals estimate when none of the group''s estimates is negative; rare values come out too high and common ones too low, it has no standard error, and a SUM of it over many groups inflates rare values: for display and shares; SUM estimate for totals'
-- ----------------------------------------------------------------- statement
COMMENT ON VIEW "adult_estimates_by_race" IS 'Unbiased reconstruction of the counts of occupation values per race, with standard errors and 95% intervals (p = 0.45, domain and test as published in rwn_release_metadata)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_race"."race" IS 'public column'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_race"."occupation" IS 'occupation value (every published value appears for every race)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_race"."released_count" IS 'released records with this value: BIASED by the randomization, never report it as a count'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_race"."group_size" IS 'released records in the group (exact)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_race"."estimate" IS 'unbiased estimate of the number of records holding the value'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_race"."std_error" IS 'standard error of estimate (block-aware for enforced releases)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_race"."ci_low" IS 'estimate - 1.96 std_error (95% interval)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_race"."ci_high" IS 'estimate + 1.96 std_error (95% interval)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_race"."nonnegative_estimate" IS 'non-negative estimate consistent with group_size: BIASED but never negative: the group''s unbiased estimates projected (Euclidean distance) onto the non-negative counts that sum to group_size, so it equals estimate when none of the group''s estimates is negative; rare values come out too high and common ones too low, it has no standard error, and a SUM of it over many groups inflates rare values: for display and shares; SUM estimate for totals'
-- ----------------------------------------------------------------- statement
COMMENT ON VIEW "adult_estimates_by_age" IS 'Unbiased reconstruction of the counts of occupation values per age, with standard errors and 95% intervals (p = 0.45, domain and test as published in rwn_release_metadata)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_age"."age" IS 'public column'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_age"."occupation" IS 'occupation value (every published value appears for every age)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_age"."released_count" IS 'released records with this value: BIASED by the randomization, never report it as a count'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_age"."group_size" IS 'released records in the group (exact)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_age"."estimate" IS 'unbiased estimate of the number of records holding the value'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_age"."std_error" IS 'standard error of estimate (block-aware for enforced releases)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_age"."ci_low" IS 'estimate - 1.96 std_error (95% interval)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_age"."ci_high" IS 'estimate + 1.96 std_error (95% interval)'
-- ----------------------------------------------------------------- statement
COMMENT ON COLUMN "adult_estimates_by_age"."nonnegative_estimate" IS 'non-negative estimate consistent with group_size: BIASED but never negative: the group''s unbiased estimates projected (Euclidean distance) onto the non-negative counts that sum to group_size, so it equals estimate when none of the group''s estimates is negative; rare values come out too high and common ones too low, it has no standard error, and a SUM of it over many groups inflates rare values: for display and shares; SUM estimate for totals'
-- ----------------------------------------------------------------- statement
USE "memory"."main"
-- ----------------------------------------------------------------- statement
DETACH "__rwn_release_<hex>"
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DELETE FROM temp.main.__rwn_keys WHERE id IN ('<hex>', '<hex>')
-- ----------------------------------------------------------------- statement
SELECT name, value FROM duckdb_settings() WHERE name IN ('memory_limit', 'threads')
-- ----------------------------------------------------------------- statement
SELECT * FROM "__duckdb_source_<hex>_<n>" AS "arrow_object_<hex>"
-- ----------------------------------------------------------------- statement
SELECT name, value FROM duckdb_settings() WHERE name IN ('memory_limit', 'threads')
-- ----------------------------------------------------------------- statement
SELECT * FROM "__duckdb_source_<hex>_<n>" AS "arrow_object_<hex>"
-- ----------------------------------------------------------------- statement
SELECT name, value FROM duckdb_settings() WHERE name IN ('memory_limit', 'threads')
-- ----------------------------------------------------------------- statement
SELECT * FROM "__duckdb_source_<hex>_<n>" AS "arrow_object_<hex>"
-- ----------------------------------------------------------------- statement
SELECT name, value FROM duckdb_settings() WHERE name IN ('memory_limit', 'threads')
-- ----------------------------------------------------------------- statement
SELECT * FROM "__duckdb_source_<hex>_<n>" AS "arrow_object_<hex>"
-- ----------------------------------------------------------------- statement
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
    SELECT * FROM "rwn_release"."randomized_rows_not_counts"."adult_randomized"
),
params AS (
    SELECT 0.45::DOUBLE AS __rwn_p, CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[]) AS __rwn_domain, len(CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[])) AS __rwn_m
),
counts AS (
    SELECT "sex", 1 AS set_size, count(*) AS group_size,
        count(*) FILTER (WHERE "occupation" IN (CAST('Sales' AS VARCHAR))) AS released_count
    FROM released GROUP BY "sex" HAVING count(*) > 0
),
blocks AS (
    -- every personal group in S, its t blocks: n mod t of size q+1, the rest of size q
    SELECT "sex", n, __rwn_tr.t, n // __rwn_tr.t AS q, n % __rwn_tr.t AS r
    FROM (SELECT "sex", count(*) AS n FROM released GROUP BY "sex", "race", "age") pg
    JOIN "rwn_release".rwn_release_trials AS __rwn_tr ON __rwn_tr.size = pg.n
),
design AS (
    SELECT "sex", 
        coalesce(sum(r * (q + 1) * (q + 1) + (t - r) * q * q), 0) AS ss,
        coalesce(sum(CASE WHEN n > 1 THEN (r * (q + 1) * (n - q - 1) + (t - r) * q * (n - q)) / (n - 1)
                 ELSE 0 END), 0) AS sh
    FROM blocks GROUP BY "sex"
),
estimates AS (
    SELECT c.*,
        coalesce((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p * group_size, 0.0) AS estimate,
        least(greatest((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p, 0.0), 1.0) AS __rwn_f_hat,
        __rwn_p, __rwn_a, __rwn_b, __rwn_v, d.ss, d.sh
    FROM (SELECT c.*, params.__rwn_p, (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_b,
                 params.__rwn_p + (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_a, c.set_size / params.__rwn_m AS __rwn_v
          FROM counts c, params) c
    JOIN design d ON d."sex" IS NOT DISTINCT FROM c."sex"
),
spread AS (
    SELECT *, sqrt(__rwn_b * (1 - __rwn_b) * ss + __rwn_p * (1 - __rwn_p) * (sh - 2 * __rwn_v * ss) * __rwn_f_hat
                   + __rwn_p * (1 - __rwn_p) * (ss - sh) * __rwn_f_hat * __rwn_f_hat) / __rwn_p AS std_error
    FROM estimates
)
SELECT "sex", released_count,
    group_size,
    estimate,
    std_error,
    estimate - 1.959963984540054 * std_error AS ci_low,
    estimate + 1.959963984540054 * std_error AS ci_high,
    least(greatest(estimate, 0.0), group_size) AS estimate_clipped
FROM spread
ORDER BY "sex"
) AS estimates
LEFT JOIN (SELECT "sex", count(*) AS personal_groups FROM (SELECT DISTINCT "sex", "race", "age" FROM "rwn_release"."randomized_rows_not_counts"."adult_randomized") AS pg GROUP BY "sex") AS personal ON estimates."sex" IS NOT DISTINCT FROM personal."sex"
ORDER BY estimates."sex"
-- ----------------------------------------------------------------- statement
SELECT estimates.value AS "occupation", estimates.released_count, estimates.group_size, estimates.estimate, estimates.std_error, estimates.ci_low, estimates.ci_high, estimates.estimate_clipped, coalesce(personal.personal_groups = 1, false) AS micro_reconstruction
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
    SELECT * FROM "rwn_release"."randomized_rows_not_counts"."adult_randomized"
    WHERE "race" IN ('White', 'Black')
),
params AS (
    SELECT 0.45::DOUBLE AS __rwn_p, CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[]) AS __rwn_domain, len(CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[])) AS __rwn_m
),
counts AS (
    SELECT d.value, 1 AS set_size, g.group_size,
        CAST(coalesce(c.n, 0) AS BIGINT) AS released_count
    FROM (SELECT count(*) AS group_size FROM released
          HAVING count(*) > 0) g
    CROSS JOIN (SELECT unnest(__rwn_domain) AS value FROM params) d
    LEFT JOIN (SELECT "occupation" AS value, count(*) AS n FROM released GROUP BY "occupation") c
        ON c.value = d.value
),
blocks AS (
    -- every personal group in S, its t blocks: n mod t of size q+1, the rest of size q
    SELECT n, __rwn_tr.t, n // __rwn_tr.t AS q, n % __rwn_tr.t AS r
    FROM (SELECT count(*) AS n FROM released GROUP BY "sex", "race", "age") pg
    JOIN "rwn_release".rwn_release_trials AS __rwn_tr ON __rwn_tr.size = pg.n
),
design AS (
    SELECT 
        coalesce(sum(r * (q + 1) * (q + 1) + (t - r) * q * q), 0) AS ss,
        coalesce(sum(CASE WHEN n > 1 THEN (r * (q + 1) * (n - q - 1) + (t - r) * q * (n - q)) / (n - 1)
                 ELSE 0 END), 0) AS sh
    FROM blocks
),
estimates AS (
    SELECT c.*,
        coalesce((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p * group_size, 0.0) AS estimate,
        least(greatest((released_count / nullif(group_size, 0) - __rwn_b) / __rwn_p, 0.0), 1.0) AS __rwn_f_hat,
        __rwn_p, __rwn_a, __rwn_b, __rwn_v, d.ss, d.sh
    FROM (SELECT c.*, params.__rwn_p, (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_b,
                 params.__rwn_p + (1 - params.__rwn_p) * c.set_size / params.__rwn_m AS __rwn_a, c.set_size / params.__rwn_m AS __rwn_v
          FROM counts c, params) c
    JOIN design d ON true
),
spread AS (
    SELECT *, sqrt(__rwn_b * (1 - __rwn_b) * ss + __rwn_p * (1 - __rwn_p) * (sh - 2 * __rwn_v * ss) * __rwn_f_hat
                   + __rwn_p * (1 - __rwn_p) * (ss - sh) * __rwn_f_hat * __rwn_f_hat) / __rwn_p AS std_error
    FROM estimates
)
SELECT value, released_count,
    group_size,
    estimate,
    std_error,
    estimate - 1.959963984540054 * std_error AS ci_low,
    estimate + 1.959963984540054 * std_error AS ci_high,
    least(greatest(estimate, 0.0), group_size) AS estimate_clipped
FROM spread
ORDER BY value
) AS estimates
CROSS JOIN (SELECT count(*) AS personal_groups FROM (SELECT DISTINCT "sex", "race", "age" FROM "rwn_release"."randomized_rows_not_counts"."adult_randomized" WHERE "race" IN ('White', 'Black')) AS pg) AS personal
ORDER BY estimates.value
-- ----------------------------------------------------------------- statement
SELECT estimates.*, coalesce(personal.personal_groups = 1, false) AS micro_reconstruction
FROM (
WITH
-- rwn_sql: SUM(x) and AVG(x) of a public numeric column x over the released records S that
-- satisfy the public predicate (and x IS NOT NULL) and hold a sensitive value in V
-- (docs/METHODS.md section 2). x is public, so it is constant within a personal group g
-- (n_g records, O_g of them released in V). (1[released in V] - b)/p is unbiased for
-- 1[in V], b = (1-p)|V|/m, so with w_g = x_g
--   SUM estimate = sum_g w_g (O_g - b n_g) / p          (w_g = 1: the COUNT estimate)
--   Var = sum_g w_g^2 Var(count_g) = (A + B phi + C phi^2) / p^2, the COUNT's formula
--   (rp_estimates.sql) with SS, SH weighted by w_g^2 and f replaced by the w^2-weighted
--   phi = (sum w^2 O / sum w^2 n - b) / p clipped to [0, 1] (with w = 1 exactly the COUNT's).
-- AVG = SUM estimate / COUNT estimate; its standard error is the delta method's: that of the
-- SUM with w_g = x_g - AVG, over |COUNT estimate| (approximate).
released AS (
    SELECT * FROM "rwn_release"."randomized_rows_not_counts"."adult_randomized"
    WHERE "age" IS NOT NULL
),
params AS (
    SELECT 0.45::DOUBLE AS __rwn_p, CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[]) AS __rwn_domain,
        (1 - 0.45::DOUBLE) * 2 / len(CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[])) AS __rwn_b, 2 / len(CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[])) AS __rwn_v
),
personal AS (
    -- every personal group in S: x, its size n and its randomization units (SS, SH)
    SELECT pg.*, (pg.__rwn_n % __rwn_tr.t) * (pg.__rwn_n // __rwn_tr.t + 1) * (pg.__rwn_n // __rwn_tr.t + 1) + (__rwn_tr.t - (pg.__rwn_n % __rwn_tr.t)) * pg.__rwn_n // __rwn_tr.t * pg.__rwn_n // __rwn_tr.t AS __rwn_ss,
        CASE WHEN pg.__rwn_n > 1 THEN ((pg.__rwn_n % __rwn_tr.t) * (pg.__rwn_n // __rwn_tr.t + 1) * (pg.__rwn_n - pg.__rwn_n // __rwn_tr.t - 1) + (__rwn_tr.t - (pg.__rwn_n % __rwn_tr.t)) * pg.__rwn_n // __rwn_tr.t * (pg.__rwn_n - pg.__rwn_n // __rwn_tr.t)) / (pg.__rwn_n - 1) ELSE 0 END AS __rwn_sh
    FROM (SELECT "sex", "race", "age", CAST("age" AS DOUBLE) AS __rwn_x, count(*) AS __rwn_n, count(*) FILTER (WHERE "occupation" IN (CAST('Sales' AS VARCHAR), CAST('Craft-repair' AS VARCHAR))) AS __rwn_o
          FROM released GROUP BY "sex", "race", "age") pg
    LEFT JOIN "rwn_release".rwn_release_trials AS __rwn_tr ON __rwn_tr.size = pg.__rwn_n
),
cells AS (
    SELECT * FROM personal
),
firsts AS (
    -- ungrouped, params LEFT JOIN cells: one row also over no records (as SQL's SUM and AVG, NULL)
    SELECT "race", CAST(coalesce(sum(__rwn_n), 0) AS BIGINT) AS group_size, sum(__rwn_x * __rwn_o) AS released_sum,
        sum(__rwn_o) AS released_hits,
        sum(__rwn_x * (__rwn_o - __rwn_b * __rwn_n)) / __rwn_p AS sum_estimate,
        coalesce(sum(__rwn_o - __rwn_b * __rwn_n), 0) / __rwn_p AS count_estimate
    FROM cells CROSS JOIN params
    GROUP BY "race", __rwn_b, __rwn_p
),
weighted AS (
    SELECT "race", sum(__rwn_w * __rwn_w * __rwn_ss) AS __rwn_wss, sum(__rwn_w * __rwn_w * __rwn_sh) AS __rwn_wsh,
        sum(__rwn_w * __rwn_w * __rwn_n) AS __rwn_wn, sum(__rwn_w * __rwn_w * __rwn_o) AS __rwn_wo
    FROM (SELECT c.*, c.__rwn_x AS __rwn_w FROM cells c JOIN firsts f ON c."race" IS NOT DISTINCT FROM f."race") c
    GROUP BY "race"
),
spread AS (
    SELECT f.*, params.__rwn_p, params.__rwn_b, params.__rwn_v, w.__rwn_wss, w.__rwn_wsh,
        CASE WHEN w.__rwn_wn > 0 THEN least(greatest((w.__rwn_wo / w.__rwn_wn - params.__rwn_b) / params.__rwn_p,
                                                     0.0), 1.0)
             ELSE 0.0 END AS __rwn_phi
    FROM firsts f JOIN weighted w ON f."race" IS NOT DISTINCT FROM w."race" CROSS JOIN params
),
answers AS (
    SELECT *, CASE WHEN group_size > 0 THEN
           sqrt(greatest(__rwn_b * (1 - __rwn_b) * __rwn_wss
                         + __rwn_p * (1 - __rwn_p) * (__rwn_wsh - 2 * __rwn_v * __rwn_wss) * __rwn_phi
                         + __rwn_p * (1 - __rwn_p) * (__rwn_wss - __rwn_wsh) * __rwn_phi * __rwn_phi, 0.0))
           / __rwn_p END AS __rwn_sd
    FROM spread
)
SELECT "race",
    released_sum,
    group_size,
    sum_estimate AS estimate,
    __rwn_sd AS std_error,
    sum_estimate - 1.959963984540054 * __rwn_sd AS ci_low,
    sum_estimate + 1.959963984540054 * __rwn_sd AS ci_high
FROM answers
ORDER BY "race"
) AS estimates
LEFT JOIN (SELECT "race", count(*) AS personal_groups FROM (SELECT DISTINCT "sex", "race", "age" FROM "rwn_release"."randomized_rows_not_counts"."adult_randomized" WHERE "age" IS NOT NULL) AS pg GROUP BY "race") AS personal ON estimates."race" IS NOT DISTINCT FROM personal."race"
ORDER BY estimates."race"
-- ----------------------------------------------------------------- statement
SELECT estimates.*, coalesce(personal.personal_groups = 1, false) AS micro_reconstruction
FROM (
WITH
-- rwn_sql: SUM(x) and AVG(x) of a public numeric column x over the released records S that
-- satisfy the public predicate (and x IS NOT NULL) and hold a sensitive value in V
-- (docs/METHODS.md section 2). x is public, so it is constant within a personal group g
-- (n_g records, O_g of them released in V). (1[released in V] - b)/p is unbiased for
-- 1[in V], b = (1-p)|V|/m, so with w_g = x_g
--   SUM estimate = sum_g w_g (O_g - b n_g) / p          (w_g = 1: the COUNT estimate)
--   Var = sum_g w_g^2 Var(count_g) = (A + B phi + C phi^2) / p^2, the COUNT's formula
--   (rp_estimates.sql) with SS, SH weighted by w_g^2 and f replaced by the w^2-weighted
--   phi = (sum w^2 O / sum w^2 n - b) / p clipped to [0, 1] (with w = 1 exactly the COUNT's).
-- AVG = SUM estimate / COUNT estimate; its standard error is the delta method's: that of the
-- SUM with w_g = x_g - AVG, over |COUNT estimate| (approximate).
released AS (
    SELECT * FROM "rwn_release"."randomized_rows_not_counts"."adult_randomized"
    WHERE ("sex" = 'Female') AND "age" IS NOT NULL
),
params AS (
    SELECT 0.45::DOUBLE AS __rwn_p, CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[]) AS __rwn_domain,
        (1 - 0.45::DOUBLE) * 1 / len(CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[])) AS __rwn_b, 1 / len(CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[])) AS __rwn_v
),
personal AS (
    -- every personal group in S: x, its size n and its randomization units (SS, SH)
    SELECT pg.*, (pg.__rwn_n % __rwn_tr.t) * (pg.__rwn_n // __rwn_tr.t + 1) * (pg.__rwn_n // __rwn_tr.t + 1) + (__rwn_tr.t - (pg.__rwn_n % __rwn_tr.t)) * pg.__rwn_n // __rwn_tr.t * pg.__rwn_n // __rwn_tr.t AS __rwn_ss,
        CASE WHEN pg.__rwn_n > 1 THEN ((pg.__rwn_n % __rwn_tr.t) * (pg.__rwn_n // __rwn_tr.t + 1) * (pg.__rwn_n - pg.__rwn_n // __rwn_tr.t - 1) + (__rwn_tr.t - (pg.__rwn_n % __rwn_tr.t)) * pg.__rwn_n // __rwn_tr.t * (pg.__rwn_n - pg.__rwn_n // __rwn_tr.t)) / (pg.__rwn_n - 1) ELSE 0 END AS __rwn_sh
    FROM (SELECT "sex", "race", "age", CAST("age" AS DOUBLE) AS __rwn_x, count(*) AS __rwn_n, count(*) FILTER (WHERE "occupation" IN (CAST('Sales' AS VARCHAR))) AS __rwn_o
          FROM released GROUP BY "sex", "race", "age") pg
    LEFT JOIN "rwn_release".rwn_release_trials AS __rwn_tr ON __rwn_tr.size = pg.__rwn_n
),
cells AS (
    SELECT * FROM personal
),
firsts AS (
    -- ungrouped, params LEFT JOIN cells: one row also over no records (as SQL's SUM and AVG, NULL)
    SELECT CAST(coalesce(sum(__rwn_n), 0) AS BIGINT) AS group_size, sum(__rwn_x * __rwn_o) AS released_sum,
        sum(__rwn_o) AS released_hits,
        sum(__rwn_x * (__rwn_o - __rwn_b * __rwn_n)) / __rwn_p AS sum_estimate,
        coalesce(sum(__rwn_o - __rwn_b * __rwn_n), 0) / __rwn_p AS count_estimate
    FROM params LEFT JOIN cells ON true
    GROUP BY __rwn_b, __rwn_p
),
weighted AS (
    SELECT sum(__rwn_w * __rwn_w * __rwn_ss) AS __rwn_wss, sum(__rwn_w * __rwn_w * __rwn_sh) AS __rwn_wsh,
        sum(__rwn_w * __rwn_w * __rwn_n) AS __rwn_wn, sum(__rwn_w * __rwn_w * __rwn_o) AS __rwn_wo
    FROM (SELECT c.*, c.__rwn_x - f.sum_estimate / NULLIF(f.count_estimate, 0) AS __rwn_w FROM cells c JOIN firsts f ON true) c
),
spread AS (
    SELECT f.*, params.__rwn_p, params.__rwn_b, params.__rwn_v, w.__rwn_wss, w.__rwn_wsh,
        CASE WHEN w.__rwn_wn > 0 THEN least(greatest((w.__rwn_wo / w.__rwn_wn - params.__rwn_b) / params.__rwn_p,
                                                     0.0), 1.0)
             ELSE 0.0 END AS __rwn_phi
    FROM firsts f JOIN weighted w ON true CROSS JOIN params
),
answers AS (
    SELECT *, CASE WHEN group_size > 0 THEN
           sqrt(greatest(__rwn_b * (1 - __rwn_b) * __rwn_wss
                         + __rwn_p * (1 - __rwn_p) * (__rwn_wsh - 2 * __rwn_v * __rwn_wss) * __rwn_phi
                         + __rwn_p * (1 - __rwn_p) * (__rwn_wss - __rwn_wsh) * __rwn_phi * __rwn_phi, 0.0))
           / __rwn_p END AS __rwn_sd
    FROM spread
)
SELECT released_sum / NULLIF(released_hits, 0) AS released_avg,
    group_size,
    count_estimate,
    sum_estimate / NULLIF(count_estimate, 0) AS estimate,
    __rwn_sd / abs(NULLIF(count_estimate, 0)) AS std_error,
    sum_estimate / NULLIF(count_estimate, 0) - 1.959963984540054 * __rwn_sd / abs(NULLIF(count_estimate, 0)) AS ci_low,
    sum_estimate / NULLIF(count_estimate, 0) + 1.959963984540054 * __rwn_sd / abs(NULLIF(count_estimate, 0)) AS ci_high
FROM answers
ORDER BY group_size
) AS estimates
CROSS JOIN (SELECT count(*) AS personal_groups FROM (SELECT DISTINCT "sex", "race", "age" FROM "rwn_release"."randomized_rows_not_counts"."adult_randomized" WHERE ("sex" = 'Female') AND "age" IS NOT NULL) AS pg) AS personal
