-- rwn_sql's SQL surface, created by rwn_sql.install(con). Each table macro asks a Python
-- function for the SQL of the call (the same builder the Python API uses) and runs it with
-- query(), so SQL and Python give identical results for the same key and parameters.
-- The function plans on a cursor, which does not see the caller's TEMP tables and views; the
-- SQL query() runs is bound here, where they are seen. Over a TEMP source that SQL hands the
-- source to the same planner as it runs (reconstruction privacy: rwn_plan) or checks it itself
-- (RWN): the same rows as over a regular table (tests/macros/test_macros_temp.py).
CREATE OR REPLACE TEMP MACRO rwn_perturb(source, columns, k := 5, eps := 0.0, q := 1.0,
        scale := 'minmax', strata := []::VARCHAR[], categorical := []::VARCHAR[], weight := 1.0,
        on_missing := 'error', "drop" := []::VARCHAR[], key := NULL, seed := NULL, id := NULL) AS TABLE
    SELECT * FROM query(rwn_perturb_sql(source, columns, k, eps, q, scale, strata, categorical,
                                        weight, on_missing, "drop", key, seed, id))
-- ----------------------------------------------------------------- statement

CREATE OR REPLACE TEMP MACRO rwn_neighborhoods(source, columns, k := 5, eps := 0.0,
        scale := 'minmax', strata := []::VARCHAR[], categorical := []::VARCHAR[], weight := 1.0,
        on_missing := 'error') AS TABLE
    SELECT * FROM query(rwn_neighborhoods_sql(source, columns, k, eps, scale, strata, categorical,
                                              weight, on_missing, false))
-- ----------------------------------------------------------------- statement

CREATE OR REPLACE TEMP MACRO rwn_neighbor_pairs(source, columns, k := 5, eps := 0.0,
        scale := 'minmax', strata := []::VARCHAR[], categorical := []::VARCHAR[], weight := 1.0,
        on_missing := 'error') AS TABLE
    SELECT * FROM query(rwn_neighborhoods_sql(source, columns, k, eps, scale, strata, categorical,
                                              weight, on_missing, true))
-- ----------------------------------------------------------------- statement

-- Uniform perturbation and reconstruction privacy (docs/METHODS.md section 2).
CREATE OR REPLACE TEMP MACRO rwn_randomize(source, sensitive, p, public := NULL, domain := NULL, key := NULL,
        seed := NULL, epsilon := NULL, delta := NULL, test := 'exact', nulls := 'error', id := NULL,
        l_diversity := NULL, max_top_share := NULL) AS TABLE
    SELECT * FROM query(rwn_randomize_sql(source, sensitive, p, public, domain, key, seed, epsilon, delta,
                                          test, nulls, id, l_diversity, max_top_share))
-- ----------------------------------------------------------------- statement

-- The same, written into the table target with its design in the table's COMMENT, which
-- rwn_estimates reads (rwn_sql.randomize(into=)): SELECT rwn_randomize_into('rel', 'adult', ...).
-- A scalar macro: the write happens when the statement runs, not when it is planned or
-- EXPLAINed. It runs on a connection of its own (see the top of this file), which commits the
-- table by itself and does not see TEMP sources.
CREATE OR REPLACE TEMP MACRO rwn_randomize_into(target, source, sensitive, p, public := NULL, domain := NULL,
        key := NULL, seed := NULL, epsilon := NULL, delta := NULL, test := 'exact', nulls := 'error', id := NULL,
        l_diversity := NULL, max_top_share := NULL, "replace" := false) AS
    rwn_randomize_into_run(target, current_database(), current_schema(), source, sensitive, p, public, domain,
                           key, seed, epsilon, delta, test, nulls, id, l_diversity, max_top_share, "replace")
-- ----------------------------------------------------------------- statement

CREATE OR REPLACE TEMP MACRO rwn_audit(source, sensitive, p, epsilon, delta, public := NULL, domain := NULL,
        test := 'exact', enforce := false, nulls := 'error') AS TABLE
    SELECT * FROM query(rwn_audit_sql(source, sensitive, p, epsilon, delta, public, domain, test, enforce,
                                      nulls))
-- ----------------------------------------------------------------- statement

-- The design is read where it was recorded (a release database's metadata, the COMMENT of a table
-- written by rwn_sql.randomize(into=)); p and domain may then be NULL. Without a record, pass
-- p, domain and the enforcement: epsilon, delta and test (and public when not every other column)
-- for a release enforced with blocks, or enforced := false for one made without; else refused.
CREATE OR REPLACE TEMP MACRO rwn_estimates(release, sensitive, p, domain, group_by := []::VARCHAR[], "where" := NULL,
        "values" := NULL, public := NULL, epsilon := NULL, delta := NULL, test := NULL, enforced := NULL) AS TABLE
    SELECT * FROM query(rwn_estimates_sql(release, sensitive, p, domain, group_by, "where", "values", public,
                                          epsilon, delta, test, enforced))
-- ----------------------------------------------------------------- statement

-- Analysts' count queries, rewritten into the reconstruction as rwn_sql.query rewrites them, over a
-- release ATTACHed and named in FROM (FROM rel.adult) or in the current database. The release is
-- a database with its published metadata tables: a TEMP table or view is none (its metadata would
-- not be the published ones), so FROM names the release's own table.
CREATE OR REPLACE TEMP MACRO rwn_query(sql) AS TABLE
    SELECT * FROM query(rwn_query_sql(sql, current_database()))
-- ----------------------------------------------------------------- statement

-- What duckdb_functions() shows for each macro (its parameters, what it returns).
COMMENT ON MACRO TABLE rwn_perturb IS 'RWN perturbation (Randomization Within Neighborhoods): every row of source once, each cell of columns replaced with probability q by the same column of a random neighbour (the larger of its k nearest and its eps-ball, grid-bucketed exact search). Parameters: source (table or view name), columns (list), k, eps, q, scale (minmax|zscore|none), strata, categorical, weight (categorical mismatch cost), on_missing (error|drop), drop (columns left out), key (secret; NULL: a fresh random key), seed (experiments only), id (a unique record id column: the identity of every draw, so the release does not depend on the input order). Rows come in a keyed random order.'
-- ----------------------------------------------------------------- statement
COMMENT ON MACRO TABLE rwn_neighborhoods IS 'Exact RWN neighbourhoods: per record (input position) its neighbourhood size and radius. Parameters as rwn_perturb: source, columns, k, eps, scale, strata, categorical, weight, on_missing.'
-- ----------------------------------------------------------------- statement
COMMENT ON MACRO TABLE rwn_neighbor_pairs IS 'Exact RWN neighbourhoods as (record, neighbour) pairs, by input position. Parameters as rwn_neighborhoods: source (table or view name), columns (list), k, eps, scale (minmax|zscore|none), strata, categorical, weight (categorical mismatch cost), on_missing (error|drop).'
-- ----------------------------------------------------------------- statement
COMMENT ON MACRO TABLE rwn_randomize IS 'Uniform perturbation of the sensitive column of source (table or view name): each value kept with probability p, else replaced by a uniform draw from the domain (NULL: the values present). public: the public columns (personal groups; default every other column). epsilon, delta: enforce (epsilon, delta)-reconstruction privacy with the test (exact: certified at every count; chernoff: screening only). key (secret) or seed; nulls (error|drop); id (a unique record id column, the identity of every draw, never released; default the input position). l_diversity (with epsilon/delta default 2, else off unless given; 1: off): refuse personal groups of at least 2 records with fewer distinct sensitive values and public columns that determine the sensitive attribute; max_top_share (default: the better of p + (1-p)/m and the most frequent value''s share of all records; 1: off): with that rule, also refuse groups of at least 2 records whose most frequent value holds more than this share. Rows come in a keyed random order.'
-- ----------------------------------------------------------------- statement
COMMENT ON MACRO rwn_randomize_into IS 'rwn_randomize written into the table target (a name of a database, not TEMP) with its design recorded in the table''s COMMENT, which rwn_estimates and rwn_sql.estimates read: the parameters of rwn_randomize, then replace (true: replace an existing target). Returns a line naming the table and its row count. Runs when the statement runs, on a connection of its own: it commits the table itself (not the caller''s transaction) and reads only sources of the database (not TEMP tables or views).'
-- ----------------------------------------------------------------- statement
COMMENT ON MACRO TABLE rwn_audit IS 'Reconstruction-privacy audit of source (table or view name, the original data): per personal group and sensitive value the statistics, Chernoff bounds and exact tails, and whether each group passes (epsilon, delta) with the test (exact|chernoff). Parameters: source, sensitive, p, epsilon, delta, public (the public columns; default every other column), domain (NULL: the values present), test, enforce (true: judge the blocks design that enforcement would use, at every count), nulls (error|drop).'
-- ----------------------------------------------------------------- statement
COMMENT ON MACRO TABLE rwn_estimates IS 'Unbiased reconstruction of counts from a release: per group_by group and domain value (or for the set values) released_count, group_size, estimate, std_error, 95% interval. Parameters: release (table or view), sensitive, p, domain (as published; NULL: the recorded ones), group_by, where (a predicate on public columns), values, public, epsilon/delta/test of an enforced release (block-aware standard errors) or enforced := false for one made without enforcement. The design recorded with a release database''s table (rel.adult) or with a table written by rwn_sql.randomize(into=) is read, and arguments must agree with it; without a record the enforcement must be given (refused otherwise).'
-- ----------------------------------------------------------------- statement
COMMENT ON MACRO TABLE rwn_query IS 'Answer an analyst''s query on a release database with the unbiased reconstruction, as rwn_sql.query and rwn-sql query do: SELECT [g, ...,] COUNT(*) | SUM(x) | AVG(x) FROM <release table> [WHERE public predicate AND <SA> = ''v'' or IN (...)] [GROUP BY ...] [HAVING ...] [ORDER BY ...] [LIMIT n], x a public numeric column (AVG: a ratio of estimates, its std_error approximate). Parameter: sql (the query text). The release is the database named in FROM (ATTACH ''release.duckdb'' AS rel (READ_ONLY); FROM rel.adult) or the current database. Per output row released_count (SUM: released_sum; AVG: released_avg, count_estimate), group_size, estimate, std_error, 95% interval, estimate_clipped (COUNT only) and micro_reconstruction (true: the row reconstructs a single personal group).'
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('bodyfat')
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
SELECT min("Age") FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), max("Age") FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), min("Weight") FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))), max("Weight") FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
WITH src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
cells AS (
    SELECT count(*) AS c, 'all records' AS label
    FROM src
    GROUP BY CAST("Age" AS DOUBLE), CAST("Weight" AS DOUBLE)
)
SELECT coalesce(sum(c * greatest(c - 1, 5)), 0)::HUGEINT, coalesce(sum(c), 0),
    coalesce(max(c), 0), arg_max(label, c)
FROM cells
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
SELECT * FROM rwn_perturb('bodyfat', ['Age', 'Weight'], key := 'render corpus key, long enough to use')
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('bodyfat')
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
SELECT min("Age") FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), max("Age") FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), min("Weight") FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))), max("Weight") FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
WITH src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
cells AS (
    SELECT count(*) AS c, 'all records' AS label
    FROM src
    GROUP BY CAST("Age" AS DOUBLE), CAST("Weight" AS DOUBLE)
)
SELECT coalesce(sum(c * greatest(c - 1, 5)), 0)::HUGEINT, coalesce(sum(c), 0),
    coalesce(max(c), 0), arg_max(label, c)
FROM cells
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM "memory"."main"."bodyfat"
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
SELECT * FROM rwn_randomize('adult', 'occupation', 0.5, public := ['sex', 'race'], key := 'render corpus key, long enough to use')
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
SELECT rwn_randomize_into('adult_macro', 'adult', 'occupation', 0.5, public := ['sex', 'race'], key := 'render corpus key, long enough to use')
-- ----------------------------------------------------------------- statement
USE "memory"."main"
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
CREATE TEMP TABLE IF NOT EXISTS temp.main.__rwn_keys (id VARCHAR, k VARCHAR, lasting BOOLEAN)
-- ----------------------------------------------------------------- statement
INSERT INTO temp.main.__rwn_keys VALUES (?, ?, ?)
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('adult_macro')
-- ----------------------------------------------------------------- statement
CREATE TABLE "adult_macro" AS
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
COMMENT ON TABLE "adult_macro" IS 'Randomized rows, NOT counts: occupation kept with probability p = 0.5, else a uniform draw from its 15 values. Counts of it by occupation are BIASED: use rwn_sql.estimates or rwn_estimates, which read the design recorded on the next line.
rwn_sql design v1: {"method": "uniform_perturbation", "sensitive": "occupation", "sensitive_type": "VARCHAR", "public": ["sex", "race"], "p": 0.5, "m": 15, "domain": ["?", "Adm-clerical", "Armed-Forces", "Craft-repair", "Exec-managerial", "Farming-fishing", "Handlers-cleaners", "Machine-op-inspct", "Other-service", "Priv-house-serv", "Prof-specialty", "Protective-serv", "Sales", "Tech-support", "Transport-moving"], "enforced": false, "epsilon": null, "delta": null, "test": null, "blocks": null}'
-- ----------------------------------------------------------------- statement
DELETE FROM temp.main.__rwn_keys WHERE id IN ('<hex>')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM "adult_macro"
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
DESCRIBE SELECT * FROM query_table('adult_macro')
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."adult_macro"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult_macro"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult_macro"
-- ----------------------------------------------------------------- statement
SELECT CAST(CAST('?' AS VARCHAR) AS VARCHAR), CAST(CAST('Adm-clerical' AS VARCHAR) AS VARCHAR), CAST(CAST('Armed-Forces' AS VARCHAR) AS VARCHAR), CAST(CAST('Craft-repair' AS VARCHAR) AS VARCHAR), CAST(CAST('Exec-managerial' AS VARCHAR) AS VARCHAR), CAST(CAST('Farming-fishing' AS VARCHAR) AS VARCHAR), CAST(CAST('Handlers-cleaners' AS VARCHAR) AS VARCHAR), CAST(CAST('Machine-op-inspct' AS VARCHAR) AS VARCHAR), CAST(CAST('Other-service' AS VARCHAR) AS VARCHAR), CAST(CAST('Priv-house-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Prof-specialty' AS VARCHAR) AS VARCHAR), CAST(CAST('Protective-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Sales' AS VARCHAR) AS VARCHAR), CAST(CAST('Tech-support' AS VARCHAR) AS VARCHAR), CAST(CAST('Transport-moving' AS VARCHAR) AS VARCHAR)
-- ----------------------------------------------------------------- statement
SELECT DISTINCT CAST("occupation" AS VARCHAR) FROM "memory"."main"."adult_macro" WHERE "occupation" IS NULL OR NOT list_contains(CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[]), "occupation") ORDER BY 1 NULLS FIRST LIMIT 6
-- ----------------------------------------------------------------- statement
SELECT * FROM rwn_estimates('adult_macro', 'occupation', NULL, NULL)
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
DESCRIBE SELECT * FROM query_table('adult_macro')
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."adult_macro"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult_macro"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."adult_macro"
-- ----------------------------------------------------------------- statement
SELECT CAST(CAST('?' AS VARCHAR) AS VARCHAR), CAST(CAST('Adm-clerical' AS VARCHAR) AS VARCHAR), CAST(CAST('Armed-Forces' AS VARCHAR) AS VARCHAR), CAST(CAST('Craft-repair' AS VARCHAR) AS VARCHAR), CAST(CAST('Exec-managerial' AS VARCHAR) AS VARCHAR), CAST(CAST('Farming-fishing' AS VARCHAR) AS VARCHAR), CAST(CAST('Handlers-cleaners' AS VARCHAR) AS VARCHAR), CAST(CAST('Machine-op-inspct' AS VARCHAR) AS VARCHAR), CAST(CAST('Other-service' AS VARCHAR) AS VARCHAR), CAST(CAST('Priv-house-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Prof-specialty' AS VARCHAR) AS VARCHAR), CAST(CAST('Protective-serv' AS VARCHAR) AS VARCHAR), CAST(CAST('Sales' AS VARCHAR) AS VARCHAR), CAST(CAST('Tech-support' AS VARCHAR) AS VARCHAR), CAST(CAST('Transport-moving' AS VARCHAR) AS VARCHAR)
-- ----------------------------------------------------------------- statement
SELECT DISTINCT CAST("occupation" AS VARCHAR) FROM "memory"."main"."adult_macro" WHERE "occupation" IS NULL OR NOT list_contains(CAST(['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'] AS VARCHAR[]), "occupation") ORDER BY 1 NULLS FIRST LIMIT 6
