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
CREATE TEMP TABLE adult_t AS SELECT row_number() OVER () AS rid, sex, race, education, occupation, age FROM adult
-- ----------------------------------------------------------------- statement
CREATE TEMP VIEW adult_v AS SELECT sex, race, occupation FROM adult_t
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE released_t AS SELECT sex, race, occupation FROM adult_t
-- ----------------------------------------------------------------- statement
SELECT DISTINCT occupation FROM adult_t ORDER BY 1
-- ----------------------------------------------------------------- statement
SELECT rwn_randomize_sql('adult_v', 'occupation', 0.5, NULL, NULL, 'render corpus key, long enough to use', NULL, NULL, NULL, 'exact', 'error', NULL, NULL, NULL)
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('adult_v')
-- ----------------------------------------------------------------- statement
SELECT rwn_randomize_sql('adult_t', 'occupation', 0.45, ['sex', 'race'], NULL, 'render corpus key, long enough to use', NULL, 0.5, 0.1, 'exact', 'error', 'rid', NULL, NULL)
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('adult_t')
-- ----------------------------------------------------------------- statement
SELECT rwn_randomize_sql('adult_t', 'race', 0.6, ['sex'], ['White', 'Black', 'Asian-Pac-Islander', 'Amer-Indian-Eskimo', 'Other'], 'render corpus key, long enough to use', NULL, NULL, NULL, 'exact', 'drop', 'rid', 2, 0.9)
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('adult_t')
-- ----------------------------------------------------------------- statement
SELECT rwn_randomize_sql('adult_v', 'occupation', 0.45, NULL, NULL, 'render corpus key, long enough to use', NULL, 0.5, 0.1, 'chernoff', 'drop', NULL, NULL, NULL)
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('adult_v')
-- ----------------------------------------------------------------- statement
SELECT rwn_audit_sql('adult_v', 'occupation', 0.5, 0.5, 0.1, NULL, NULL, 'exact', false, 'error')
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('adult_v')
-- ----------------------------------------------------------------- statement
SELECT rwn_audit_sql('adult_t', 'race', 0.6, 0.5, 0.1, ['sex'], ['White', 'Black', 'Asian-Pac-Islander', 'Amer-Indian-Eskimo', 'Other'], 'exact', true, 'error')
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('adult_t')
-- ----------------------------------------------------------------- statement
SELECT rwn_audit_sql('adult_v', 'occupation', 0.45, 0.5, 0.1, ['sex', 'race'], NULL, 'chernoff', true, 'drop')
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('adult_v')
-- ----------------------------------------------------------------- statement
SELECT rwn_estimates_sql('released_t', 'occupation', 0.5, ['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'], NULL, NULL, NULL, NULL, NULL, NULL, NULL, false)
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
DESCRIBE SELECT * FROM query_table('released_t')
-- ----------------------------------------------------------------- statement
SELECT rwn_estimates_sql('released_t', 'occupation', 0.5, ['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'], ['sex'], 'race = ''White''', ['Sales', 'Tech-support'], ['sex', 'race'], NULL, NULL, NULL, false)
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
DESCRIBE SELECT * FROM query_table('released_t')
-- ----------------------------------------------------------------- statement
SELECT rwn_estimates_sql('released_t', 'occupation', 0.45, ['?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving'], ['race'], NULL, NULL, ['sex', 'race'], 0.5, 0.1, 'exact', NULL)
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
DESCRIBE SELECT * FROM query_table('released_t')
-- ----------------------------------------------------------------- statement
WITH
__rwn_plan AS MATERIALIZED (
    -- the rules of the planner, run over the source as the statement reads it
    SELECT rwn_plan('{"domain": null, "id": null, "kind": "randomize", "l_diversity": null, "max_top_share": null, "name": "adult_v", "nulls": "error", "p": 0.5, "public": null, "sensitive": "occupation", "shipped": null, "test": "exact", "threshold": null}', (SELECT list([column_name, column_type]) FROM (DESCRIBE SELECT * FROM query_table('adult_v'))),
        (SELECT list([*COLUMNS(*)]) FROM (SELECT COLUMNS(*)::VARCHAR FROM (SELECT *, count(*) FROM (SELECT * FROM query_table('adult_v') WHERE ("occupation" IS NULL OR true)) GROUP BY ALL) AS __rwn_counted) AS __rwn_text)) AS plan
),
__rwn_domain AS MATERIALIZED (
    SELECT list(__rwn_v ORDER BY CAST(__rwn_v AS VARCHAR)) AS domain FROM (SELECT DISTINCT "occupation" AS __rwn_v FROM (SELECT * FROM (SELECT * FROM query_table('adult_v') WHERE ("occupation" IS NULL OR true)) WHERE (SELECT plan.m FROM __rwn_plan) IS NOT NULL) AS __rwn_source WHERE "occupation" IS NOT NULL) AS __rwn_d
)
-- rwn_sql: uniform perturbation of the sensitive attribute (docs/METHODS.md section 2).
-- Each randomization unit (a record, or a block of a large personal group when enforcing
-- (eps, delta)-reconstruction-privacy) keeps its value with probability p, else takes a value
-- drawn uniformly from the m values of the published domain (a constant list in the SQL).
-- Draws: keyed hash of (key, purpose, unit, column). The record identity is the id column as text
-- (id=), else the 1-based input
-- position. The rows are written in the order of a keyed hash of the record (__rwn_o), so the
-- release order carries nothing about the input order (issue 8, R2).
SELECT * EXCLUDE (__rwn_rid, __rwn_h, __rwn_o) REPLACE (CASE WHEN "occupation" IS NULL THEN error('rwn_sql: the sensitive column "occupation" has NULL values; clean them or use nulls=''drop'' (--nulls drop; those records are then left out)')
        WHEN CAST((__rwn_h >> 76) & 4503599627370495 AS BIGINT) < 2251799813685248 THEN "occupation"
        ELSE (SELECT domain FROM __rwn_domain)[1 + CAST(floor(CAST((__rwn_h >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * len((SELECT domain FROM __rwn_domain))) AS BIGINT)] END AS "occupation")
FROM (
    SELECT *, md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(rwn_key_of(__rwn_token) || '|rp.randomize|occupation')) AS v FROM (VALUES ('<hex>')) AS __rwn_key(__rwn_token))) || CAST(__rwn_rid AS VARCHAR)) AS __rwn_h, CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(rwn_key_of(__rwn_token) || '|rp.order|')) AS v FROM (VALUES ('<hex>')) AS __rwn_key(__rwn_token))) || CAST(__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT) AS __rwn_o
    FROM (
        SELECT row_number() OVER () AS __rwn_rid, * FROM (SELECT * FROM (SELECT * FROM query_table('adult_v') WHERE ("occupation" IS NULL OR true)) WHERE (SELECT plan.m FROM __rwn_plan) IS NOT NULL) AS __rwn_source
    ) AS __rwn_units
) AS __rwn_draws
ORDER BY __rwn_o, __rwn_rid

-- ----------------------------------------------------------------- statement
WITH
__rwn_plan AS MATERIALIZED (
    -- the rules of the planner, run over the source as the statement reads it
    SELECT rwn_plan('{"domain": null, "id": "rid", "kind": "randomize", "l_diversity": null, "max_top_share": null, "name": "adult_t", "nulls": "error", "p": 0.45, "public": ["sex", "race"], "sensitive": "occupation", "shipped": ["sex", "race", "occupation", "rid"], "test": "exact", "threshold": [0.5, 0.1]}', (SELECT list([column_name, column_type]) FROM (DESCRIBE SELECT * FROM query_table('adult_t'))),
        (SELECT list([*COLUMNS(*)]) FROM (SELECT COLUMNS(*)::VARCHAR FROM (SELECT "sex", "race", "occupation", "rid", count(*) FROM query_table('adult_t') GROUP BY ALL) AS __rwn_counted) AS __rwn_text)) AS plan
),
__rwn_domain AS MATERIALIZED (
    SELECT list(__rwn_v ORDER BY CAST(__rwn_v AS VARCHAR)) AS domain FROM (SELECT DISTINCT "occupation" AS __rwn_v FROM (SELECT COLUMNS(lambda c: list_contains(['sex', 'race', 'occupation', 'rid'], c)) FROM (SELECT * FROM query_table('adult_t') WHERE ("occupation" IS NULL OR true) AND ("rid" IS NULL OR true)) WHERE (SELECT plan.m FROM __rwn_plan) IS NOT NULL) AS __rwn_source WHERE "occupation" IS NOT NULL) AS __rwn_d
)
-- rwn_sql: uniform perturbation of the sensitive attribute (docs/METHODS.md section 2).
-- Each randomization unit (a record, or a block of a large personal group when enforcing
-- (eps, delta)-reconstruction-privacy) keeps its value with probability p, else takes a value
-- drawn uniformly from the m values of the published domain (a constant list in the SQL).
-- Draws: keyed hash of (key, purpose, unit, column). The record identity is the id column as text
-- (id=), else the 1-based input
-- position. The rows are written in the order of a keyed hash of the record (__rwn_o), so the
-- release order carries nothing about the input order (issue 8, R2).
SELECT * EXCLUDE (__rwn_rid, __rwn_h, __rwn_o, "rid", __rwn_unit) REPLACE (CASE WHEN "occupation" IS NULL THEN error('rwn_sql: the sensitive column "occupation" has NULL values; clean them or use nulls=''drop'' (--nulls drop; those records are then left out)')
        WHEN CAST((__rwn_h >> 76) & 4503599627370495 AS BIGINT) < 2026619832316724 THEN "occupation"
        ELSE (SELECT domain FROM __rwn_domain)[1 + CAST(floor(CAST((__rwn_h >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * len((SELECT domain FROM __rwn_domain))) AS BIGINT)] END AS "occupation")
FROM (
    SELECT *, md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(rwn_key_of(__rwn_token) || '|rp.randomize|occupation')) AS v FROM (VALUES ('<hex>')) AS __rwn_key(__rwn_token))) || CAST(__rwn_unit AS VARCHAR)) AS __rwn_h, CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(rwn_key_of(__rwn_token) || '|rp.order|')) AS v FROM (VALUES ('<hex>')) AS __rwn_key(__rwn_token))) || CAST(__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT) AS __rwn_o
    FROM (
        -- enforcement: a personal group of n records is split at random into t(n) blocks;
        -- each block shares one coin and one replacement value (t depends on n only)
        SELECT 'g' || __rwn_gid || 'b' || ((__rwn_pos - 1) % __rwn_trials) AS __rwn_unit,
            __rwn_rid, * EXCLUDE (__rwn_rid, __rwn_gid, __rwn_pos, __rwn_gsize, __rwn_trials)
        FROM (SELECT __rwn_g.*, CASE WHEN __rwn_tr.t IS NULL THEN error('rwn_sql: a personal group size is missing from the trials table; rebuild the SQL for this data') WHEN __rwn_tr.t = 0 THEN error('rwn_sql: a personal group of ' || __rwn_tr.size || ' records cannot pass the test with any number of blocks') ELSE __rwn_tr.t END AS __rwn_trials
            FROM (
                SELECT *, min(__rwn_rid) OVER (PARTITION BY "sex", "race") AS __rwn_gid,
                    row_number() OVER (PARTITION BY "sex", "race" ORDER BY CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(rwn_key_of(__rwn_token) || '|rp.block|occupation')) AS v FROM (VALUES ('<hex>')) AS __rwn_key(__rwn_token))) || CAST(__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT), __rwn_rid) AS __rwn_pos,
                    count(*) OVER (PARTITION BY "sex", "race") AS __rwn_gsize
                FROM (SELECT CAST("rid" AS VARCHAR) AS __rwn_rid, * FROM (SELECT COLUMNS(lambda c: list_contains(['sex', 'race', 'occupation', 'rid'], c)) FROM (SELECT * FROM query_table('adult_t') WHERE ("occupation" IS NULL OR true) AND ("rid" IS NULL OR true)) WHERE (SELECT plan.m FROM __rwn_plan) IS NOT NULL) AS __rwn_source) AS __rwn_staged) __rwn_g
            LEFT JOIN (SELECT unnest(plan.sizes) AS size, unnest(plan.trials) AS t FROM __rwn_plan) AS __rwn_tr(size, t) ON __rwn_tr.size = __rwn_g.__rwn_gsize)
    ) AS __rwn_units
) AS __rwn_draws
ORDER BY __rwn_o, __rwn_rid

-- ----------------------------------------------------------------- statement
WITH
__rwn_plan AS MATERIALIZED (
    -- the rules of the planner, run over the source as the statement reads it
    SELECT rwn_plan('{"domain": ["Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"], "id": "rid", "kind": "randomize", "l_diversity": 2, "max_top_share": 0.9, "name": "adult_t", "nulls": "drop", "p": 0.6, "public": ["sex"], "sensitive": "race", "shipped": ["sex", "race", "rid"], "test": "exact", "threshold": null}', (SELECT list([column_name, column_type]) FROM (DESCRIBE SELECT * FROM query_table('adult_t'))),
        (SELECT list([*COLUMNS(*)]) FROM (SELECT COLUMNS(*)::VARCHAR FROM (SELECT "sex", "race", "rid", count(*) FROM query_table('adult_t') GROUP BY ALL) AS __rwn_counted) AS __rwn_text)) AS plan
)
-- rwn_sql: uniform perturbation of the sensitive attribute (docs/METHODS.md section 2).
-- Each randomization unit (a record, or a block of a large personal group when enforcing
-- (eps, delta)-reconstruction-privacy) keeps its value with probability p, else takes a value
-- drawn uniformly from the m values of the published domain (a constant list in the SQL).
-- Draws: keyed hash of (key, purpose, unit, column). The record identity is the id column as text
-- (id=), else the 1-based input
-- position. The rows are written in the order of a keyed hash of the record (__rwn_o), so the
-- release order carries nothing about the input order (issue 8, R2).
SELECT * EXCLUDE (__rwn_rid, __rwn_h, __rwn_o, "rid") REPLACE (CASE WHEN "race" IS NULL THEN error('rwn_sql: the sensitive column "race" has NULL values; clean them or use nulls=''drop'' (--nulls drop; those records are then left out)')
        WHEN NOT list_contains(list_value((SELECT "race" FROM query_table('adult_t') LIMIT 0), 'Amer-Indian-Eskimo', 'Asian-Pac-Islander', 'Black', 'Other', 'White')[2:], "race") THEN error('rwn_sql: the domain misses values present in the data: ' || CAST("race" AS VARCHAR))
        WHEN CAST((__rwn_h >> 76) & 4503599627370495 AS BIGINT) < 2702159776422298 THEN "race"
        ELSE list_value((SELECT "race" FROM query_table('adult_t') LIMIT 0), 'Amer-Indian-Eskimo', 'Asian-Pac-Islander', 'Black', 'Other', 'White')[2:][1 + CAST(floor(CAST((__rwn_h >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * len(list_value((SELECT "race" FROM query_table('adult_t') LIMIT 0), 'Amer-Indian-Eskimo', 'Asian-Pac-Islander', 'Black', 'Other', 'White')[2:])) AS BIGINT)] END AS "race")
FROM (
    SELECT *, md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(rwn_key_of(__rwn_token) || '|rp.randomize|race')) AS v FROM (VALUES ('<hex>')) AS __rwn_key(__rwn_token))) || CAST(__rwn_rid AS VARCHAR)) AS __rwn_h, CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(rwn_key_of(__rwn_token) || '|rp.order|')) AS v FROM (VALUES ('<hex>')) AS __rwn_key(__rwn_token))) || CAST(__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT) AS __rwn_o
    FROM (
        SELECT CAST("rid" AS VARCHAR) AS __rwn_rid, * FROM (SELECT COLUMNS(lambda c: list_contains(['sex', 'race', 'rid'], c)) FROM (SELECT * FROM query_table('adult_t') WHERE ("race" IS NULL OR true) AND ("rid" IS NULL OR true)) WHERE (SELECT plan.m FROM __rwn_plan) IS NOT NULL) AS __rwn_source WHERE "race" IS NOT NULL
    ) AS __rwn_units
) AS __rwn_draws
ORDER BY __rwn_o, __rwn_rid

-- ----------------------------------------------------------------- statement
WITH
__rwn_plan AS MATERIALIZED (
    -- the rules of the planner, run over the source as the statement reads it
    SELECT rwn_plan('{"domain": null, "id": null, "kind": "randomize", "l_diversity": null, "max_top_share": null, "name": "adult_v", "nulls": "drop", "p": 0.45, "public": null, "sensitive": "occupation", "shipped": null, "test": "chernoff", "threshold": [0.5, 0.1]}', (SELECT list([column_name, column_type]) FROM (DESCRIBE SELECT * FROM query_table('adult_v'))),
        (SELECT list([*COLUMNS(*)]) FROM (SELECT COLUMNS(*)::VARCHAR FROM (SELECT *, count(*) FROM (SELECT * FROM query_table('adult_v') WHERE ("occupation" IS NULL OR true)) GROUP BY ALL) AS __rwn_counted) AS __rwn_text)) AS plan
),
__rwn_domain AS MATERIALIZED (
    SELECT list(__rwn_v ORDER BY CAST(__rwn_v AS VARCHAR)) AS domain FROM (SELECT DISTINCT "occupation" AS __rwn_v FROM (SELECT *, struct_pack(*COLUMNS(* EXCLUDE ("occupation"))) AS __rwn_pg FROM (SELECT * FROM query_table('adult_v') WHERE ("occupation" IS NULL OR true)) WHERE (SELECT plan.m FROM __rwn_plan) IS NOT NULL) AS __rwn_source WHERE "occupation" IS NOT NULL) AS __rwn_d
)
-- rwn_sql: uniform perturbation of the sensitive attribute (docs/METHODS.md section 2).
-- Each randomization unit (a record, or a block of a large personal group when enforcing
-- (eps, delta)-reconstruction-privacy) keeps its value with probability p, else takes a value
-- drawn uniformly from the m values of the published domain (a constant list in the SQL).
-- Draws: keyed hash of (key, purpose, unit, column). The record identity is the id column as text
-- (id=), else the 1-based input
-- position. The rows are written in the order of a keyed hash of the record (__rwn_o), so the
-- release order carries nothing about the input order (issue 8, R2).
SELECT * EXCLUDE (__rwn_rid, __rwn_h, __rwn_o, __rwn_pg, __rwn_unit) REPLACE (CASE WHEN "occupation" IS NULL THEN error('rwn_sql: the sensitive column "occupation" has NULL values; clean them or use nulls=''drop'' (--nulls drop; those records are then left out)')
        WHEN CAST((__rwn_h >> 76) & 4503599627370495 AS BIGINT) < 2026619832316724 THEN "occupation"
        ELSE (SELECT domain FROM __rwn_domain)[1 + CAST(floor(CAST((__rwn_h >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * len((SELECT domain FROM __rwn_domain))) AS BIGINT)] END AS "occupation")
FROM (
    SELECT *, md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(rwn_key_of(__rwn_token) || '|rp.randomize|occupation')) AS v FROM (VALUES ('<hex>')) AS __rwn_key(__rwn_token))) || CAST(__rwn_unit AS VARCHAR)) AS __rwn_h, CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(rwn_key_of(__rwn_token) || '|rp.order|')) AS v FROM (VALUES ('<hex>')) AS __rwn_key(__rwn_token))) || CAST(__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT) AS __rwn_o
    FROM (
        -- enforcement: a personal group of n records is split at random into t(n) blocks;
        -- each block shares one coin and one replacement value (t depends on n only)
        SELECT 'g' || __rwn_gid || 'b' || ((__rwn_pos - 1) % __rwn_trials) AS __rwn_unit,
            __rwn_rid, * EXCLUDE (__rwn_rid, __rwn_gid, __rwn_pos, __rwn_gsize, __rwn_trials)
        FROM (SELECT __rwn_g.*, CASE WHEN __rwn_tr.t IS NULL THEN error('rwn_sql: a personal group size is missing from the trials table; rebuild the SQL for this data') WHEN __rwn_tr.t = 0 THEN error('rwn_sql: a personal group of ' || __rwn_tr.size || ' records cannot pass the test with any number of blocks') ELSE __rwn_tr.t END AS __rwn_trials
            FROM (
                SELECT *, min(__rwn_rid) OVER (PARTITION BY __rwn_pg) AS __rwn_gid,
                    row_number() OVER (PARTITION BY __rwn_pg ORDER BY CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(rwn_key_of(__rwn_token) || '|rp.block|occupation')) AS v FROM (VALUES ('<hex>')) AS __rwn_key(__rwn_token))) || CAST(__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT), __rwn_rid) AS __rwn_pos,
                    count(*) OVER (PARTITION BY __rwn_pg) AS __rwn_gsize
                FROM (SELECT row_number() OVER () AS __rwn_rid, * FROM (SELECT *, struct_pack(*COLUMNS(* EXCLUDE ("occupation"))) AS __rwn_pg FROM (SELECT * FROM query_table('adult_v') WHERE ("occupation" IS NULL OR true)) WHERE (SELECT plan.m FROM __rwn_plan) IS NOT NULL) AS __rwn_source WHERE "occupation" IS NOT NULL) AS __rwn_staged) __rwn_g
            LEFT JOIN (SELECT unnest(plan.sizes) AS size, unnest(plan.trials) AS t FROM __rwn_plan) AS __rwn_tr(size, t) ON __rwn_tr.size = __rwn_g.__rwn_gsize)
    ) AS __rwn_units
) AS __rwn_draws
ORDER BY __rwn_o, __rwn_rid

-- ----------------------------------------------------------------- statement
WITH
__rwn_plan AS MATERIALIZED (
    -- the rules of the planner, run over the source as the statement reads it
    SELECT rwn_plan('{"domain": null, "enforce": false, "kind": "audit", "name": "adult_v", "nulls": "error", "p": 0.5, "public": null, "sensitive": "occupation", "shipped": null, "test": "exact", "threshold": [0.5, 0.1]}', (SELECT list([column_name, column_type]) FROM (DESCRIBE SELECT * FROM query_table('adult_v'))),
        (SELECT list([*COLUMNS(*)]) FROM (SELECT COLUMNS(*)::VARCHAR FROM (SELECT *, count(*) FROM (SELECT * FROM query_table('adult_v') WHERE ("occupation" IS NULL OR true)) GROUP BY ALL) AS __rwn_counted) AS __rwn_text)) AS plan
)
SELECT unnest(__rwn_pg), * EXCLUDE (__rwn_pg) FROM (
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
    SELECT * FROM (SELECT *, struct_pack(*COLUMNS(* EXCLUDE ("occupation"))) AS __rwn_pg FROM (SELECT * FROM query_table('adult_v') WHERE ("occupation" IS NULL OR true)) WHERE (SELECT plan.m FROM __rwn_plan) IS NOT NULL) AS __rwn_source
),
staged AS (
    SELECT * FROM src
),
counts AS MATERIALIZED (
    SELECT "__rwn_pg", "occupation" AS value, count(*) AS value_count
    FROM staged
    GROUP BY "__rwn_pg", "occupation"
),
groups AS (
    SELECT g.*, g.group_size AS trials
    FROM (SELECT "__rwn_pg", sum(value_count) AS group_size FROM counts GROUP BY "__rwn_pg") g
),
cells AS (
    SELECT c.*, g.group_size, g.trials, g.trials < g.group_size AS enforced,
        c.value_count / g.group_size AS frequency,
        CASE WHEN g.trials < g.group_size THEN 1.0 ELSE c.value_count / g.group_size END AS f_eval
    FROM counts c JOIN groups g ON c."__rwn_pg" IS NOT DISTINCT FROM g."__rwn_pg"
),
stats AS (
    SELECT *,
        trials * (f_eval * 0.5::DOUBLE + ((1 - 0.5::DOUBLE) / (SELECT plan.m FROM __rwn_plan))) AS mu,
        0.5::DOUBLE * f_eval * 0.5::DOUBLE / (f_eval * 0.5::DOUBLE + ((1 - 0.5::DOUBLE) / (SELECT plan.m FROM __rwn_plan))) AS theta,
        CASE WHEN enforced THEN trials ELSE value_count END AS tails_key
    FROM cells
),
tails AS (
    -- exact tails once per distinct case: (n, count) for independent trials, (n, t) for blocks
    SELECT unnest(e) AS enforced, unnest(n) AS group_size, unnest(k) AS tails_key,
        unnest(rwn_audit_tails(e, CAST(n AS BIGINT[]), CAST(k AS BIGINT[]), 0.5::DOUBLE, (SELECT plan.m FROM __rwn_plan), 0.5::DOUBLE)) AS exact
    FROM (SELECT list(enforced) AS e, list(group_size) AS n, list(tails_key) AS k
          FROM (SELECT DISTINCT enforced, group_size, tails_key FROM stats))
),
bounds AS MATERIALIZED (
    SELECT s.*,
        exp(mu * (theta - (1 + theta) * ln(1 + theta))) AS chernoff_upper,
        CASE WHEN theta < 1 THEN exp(mu * (-theta - (1 - theta) * ln(1 - theta))) ELSE exp(-mu) END AS chernoff_lower,
        t.exact
    FROM stats s JOIN tails t USING (enforced, group_size, tails_key)
)
,
verdicts AS (
    SELECT "__rwn_pg", bool_and(exact.upper >= 0.1::DOUBLE AND exact.lower >= 0.1::DOUBLE) AS group_passes
    FROM bounds GROUP BY "__rwn_pg"
)
SELECT b."__rwn_pg", group_size, trials, enforced, value, value_count, frequency, mu, theta,
    chernoff_upper, chernoff_lower, exact.upper AS exact_upper, exact.lower AS exact_lower,
    chernoff_upper >= 0.1::DOUBLE AND chernoff_lower >= 0.1::DOUBLE AS passes_chernoff,
    exact.upper >= 0.1::DOUBLE AND exact.lower >= 0.1::DOUBLE AS passes_exact,
    v.group_passes
FROM bounds b JOIN verdicts v ON b."__rwn_pg" IS NOT DISTINCT FROM v."__rwn_pg"
) AS __rwn_audit ORDER BY ALL
-- ----------------------------------------------------------------- statement
WITH
__rwn_plan AS MATERIALIZED (
    -- the rules of the planner, run over the source as the statement reads it
    SELECT rwn_plan('{"domain": ["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"], "enforce": true, "kind": "audit", "name": "adult_t", "nulls": "error", "p": 0.6, "public": ["sex"], "sensitive": "race", "shipped": ["sex", "race"], "test": "exact", "threshold": [0.5, 0.1]}', (SELECT list([column_name, column_type]) FROM (DESCRIBE SELECT * FROM query_table('adult_t'))),
        (SELECT list([*COLUMNS(*)]) FROM (SELECT COLUMNS(*)::VARCHAR FROM (SELECT "sex", "race", count(*) FROM query_table('adult_t') GROUP BY ALL) AS __rwn_counted) AS __rwn_text)) AS plan
),
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
    SELECT * FROM (SELECT * FROM query_table('adult_t') WHERE (SELECT plan.m FROM __rwn_plan) IS NOT NULL) AS __rwn_source
),
staged AS (
    SELECT * FROM src
),
counts AS MATERIALIZED (
    SELECT "sex", "race" AS value, count(*) AS value_count
    FROM staged
    GROUP BY "sex", "race"
),
groups AS (
    SELECT g.*, CASE WHEN __rwn_tr.t IS NULL THEN error('rwn_sql: a personal group size is missing from the trials table; rebuild the SQL for this data') WHEN __rwn_tr.t = 0 THEN error('rwn_sql: a personal group of ' || __rwn_tr.size || ' records cannot pass the test with any number of blocks') ELSE __rwn_tr.t END AS trials
    FROM (SELECT "sex", sum(value_count) AS group_size FROM counts GROUP BY "sex") g
    LEFT JOIN (SELECT unnest(plan.sizes) AS size, unnest(plan.trials) AS t FROM __rwn_plan) AS __rwn_tr(size, t) ON __rwn_tr.size = g.group_size
),
cells AS (
    SELECT c.*, g.group_size, g.trials, g.trials < g.group_size AS enforced,
        c.value_count / g.group_size AS frequency,
        CASE WHEN g.trials < g.group_size THEN 1.0 ELSE c.value_count / g.group_size END AS f_eval
    FROM counts c JOIN groups g ON c."sex" IS NOT DISTINCT FROM g."sex"
),
stats AS (
    SELECT *,
        trials * (f_eval * 0.6::DOUBLE + ((1 - 0.6::DOUBLE) / (SELECT plan.m FROM __rwn_plan))) AS mu,
        0.5::DOUBLE * f_eval * 0.6::DOUBLE / (f_eval * 0.6::DOUBLE + ((1 - 0.6::DOUBLE) / (SELECT plan.m FROM __rwn_plan))) AS theta,
        CASE WHEN enforced THEN trials ELSE value_count END AS tails_key
    FROM cells
),
tails AS (
    -- exact tails once per distinct case: (n, count) for independent trials, (n, t) for blocks
    SELECT unnest(e) AS enforced, unnest(n) AS group_size, unnest(k) AS tails_key,
        unnest(rwn_audit_tails(e, CAST(n AS BIGINT[]), CAST(k AS BIGINT[]), 0.6::DOUBLE, (SELECT plan.m FROM __rwn_plan), 0.5::DOUBLE)) AS exact
    FROM (SELECT list(enforced) AS e, list(group_size) AS n, list(tails_key) AS k
          FROM (SELECT DISTINCT enforced, group_size, tails_key FROM stats))
),
bounds AS MATERIALIZED (
    SELECT s.*,
        exp(mu * (theta - (1 + theta) * ln(1 + theta))) AS chernoff_upper,
        CASE WHEN theta < 1 THEN exp(mu * (-theta - (1 - theta) * ln(1 - theta))) ELSE exp(-mu) END AS chernoff_lower,
        t.exact
    FROM stats s JOIN tails t USING (enforced, group_size, tails_key)
)
,
verdicts AS (
    SELECT "sex", bool_and(exact.upper >= 0.1::DOUBLE AND exact.lower >= 0.1::DOUBLE) AND any_value(group_size) NOT IN (SELECT unnest(plan.failing) FROM __rwn_plan) AS group_passes
    FROM bounds GROUP BY "sex"
)
SELECT b."sex", group_size, trials, enforced, value, value_count, frequency, mu, theta,
    chernoff_upper, chernoff_lower, exact.upper AS exact_upper, exact.lower AS exact_lower,
    chernoff_upper >= 0.1::DOUBLE AND chernoff_lower >= 0.1::DOUBLE AS passes_chernoff,
    exact.upper >= 0.1::DOUBLE AND exact.lower >= 0.1::DOUBLE AS passes_exact,
    v.group_passes
FROM bounds b JOIN verdicts v ON b."sex" IS NOT DISTINCT FROM v."sex"
ORDER BY b."sex", value
-- ----------------------------------------------------------------- statement
WITH
__rwn_plan AS MATERIALIZED (
    -- the rules of the planner, run over the source as the statement reads it
    SELECT rwn_plan('{"domain": null, "enforce": true, "kind": "audit", "name": "adult_v", "nulls": "drop", "p": 0.45, "public": ["sex", "race"], "sensitive": "occupation", "shipped": ["sex", "race", "occupation"], "test": "chernoff", "threshold": [0.5, 0.1]}', (SELECT list([column_name, column_type]) FROM (DESCRIBE SELECT * FROM query_table('adult_v'))),
        (SELECT list([*COLUMNS(*)]) FROM (SELECT COLUMNS(*)::VARCHAR FROM (SELECT "sex", "race", "occupation", count(*) FROM query_table('adult_v') GROUP BY ALL) AS __rwn_counted) AS __rwn_text)) AS plan
),
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
    SELECT * FROM (SELECT * FROM query_table('adult_v') WHERE (SELECT plan.m FROM __rwn_plan) IS NOT NULL) AS __rwn_source
),
staged AS (
    SELECT * FROM src
    WHERE "occupation" IS NOT NULL
),
counts AS MATERIALIZED (
    SELECT "sex", "race", "occupation" AS value, count(*) AS value_count
    FROM staged
    GROUP BY "sex", "race", "occupation"
),
groups AS (
    SELECT g.*, CASE WHEN __rwn_tr.t IS NULL THEN error('rwn_sql: a personal group size is missing from the trials table; rebuild the SQL for this data') WHEN __rwn_tr.t = 0 THEN error('rwn_sql: a personal group of ' || __rwn_tr.size || ' records cannot pass the test with any number of blocks') ELSE __rwn_tr.t END AS trials
    FROM (SELECT "sex", "race", sum(value_count) AS group_size FROM counts GROUP BY "sex", "race") g
    LEFT JOIN (SELECT unnest(plan.sizes) AS size, unnest(plan.trials) AS t FROM __rwn_plan) AS __rwn_tr(size, t) ON __rwn_tr.size = g.group_size
),
cells AS (
    SELECT c.*, g.group_size, g.trials, g.trials < g.group_size AS enforced,
        c.value_count / g.group_size AS frequency,
        CASE WHEN g.trials < g.group_size THEN 1.0 ELSE c.value_count / g.group_size END AS f_eval
    FROM counts c JOIN groups g ON c."sex" IS NOT DISTINCT FROM g."sex" AND c."race" IS NOT DISTINCT FROM g."race"
),
stats AS (
    SELECT *,
        trials * (f_eval * 0.45::DOUBLE + ((1 - 0.45::DOUBLE) / (SELECT plan.m FROM __rwn_plan))) AS mu,
        0.5::DOUBLE * f_eval * 0.45::DOUBLE / (f_eval * 0.45::DOUBLE + ((1 - 0.45::DOUBLE) / (SELECT plan.m FROM __rwn_plan))) AS theta,
        CASE WHEN enforced THEN trials ELSE value_count END AS tails_key
    FROM cells
),
tails AS (
    -- exact tails once per distinct case: (n, count) for independent trials, (n, t) for blocks
    SELECT unnest(e) AS enforced, unnest(n) AS group_size, unnest(k) AS tails_key,
        unnest(rwn_audit_tails(e, CAST(n AS BIGINT[]), CAST(k AS BIGINT[]), 0.45::DOUBLE, (SELECT plan.m FROM __rwn_plan), 0.5::DOUBLE)) AS exact
    FROM (SELECT list(enforced) AS e, list(group_size) AS n, list(tails_key) AS k
          FROM (SELECT DISTINCT enforced, group_size, tails_key FROM stats))
),
bounds AS MATERIALIZED (
    SELECT s.*,
        exp(mu * (theta - (1 + theta) * ln(1 + theta))) AS chernoff_upper,
        CASE WHEN theta < 1 THEN exp(mu * (-theta - (1 - theta) * ln(1 - theta))) ELSE exp(-mu) END AS chernoff_lower,
        t.exact
    FROM stats s JOIN tails t USING (enforced, group_size, tails_key)
)
,
verdicts AS (
    SELECT "sex", "race", bool_and(chernoff_upper >= 0.1::DOUBLE AND chernoff_lower >= 0.1::DOUBLE) AS group_passes
    FROM bounds GROUP BY "sex", "race"
)
SELECT b."sex", b."race", group_size, trials, enforced, value, value_count, frequency, mu, theta,
    chernoff_upper, chernoff_lower, exact.upper AS exact_upper, exact.lower AS exact_lower,
    chernoff_upper >= 0.1::DOUBLE AND chernoff_lower >= 0.1::DOUBLE AS passes_chernoff,
    exact.upper >= 0.1::DOUBLE AND exact.lower >= 0.1::DOUBLE AS passes_exact,
    v.group_passes
FROM bounds b JOIN verdicts v ON b."sex" IS NOT DISTINCT FROM v."sex" AND b."race" IS NOT DISTINCT FROM v."race"
ORDER BY b."sex", b."race", value
-- ----------------------------------------------------------------- statement
WITH
__rwn_plan AS MATERIALIZED (
    -- the rules of the planner, run over the source as the statement reads it
    SELECT rwn_plan('{"domain": ["?", "Adm-clerical", "Armed-Forces", "Craft-repair", "Exec-managerial", "Farming-fishing", "Handlers-cleaners", "Machine-op-inspct", "Other-service", "Priv-house-serv", "Prof-specialty", "Protective-serv", "Sales", "Tech-support", "Transport-moving"], "group_by": [], "kind": "estimates", "name": "released_t", "p": 0.5, "public": null, "sensitive": "occupation", "shipped": null, "test": "exact", "threshold": null, "values": null, "where": null}', (SELECT list([column_name, column_type]) FROM (DESCRIBE SELECT * FROM query_table('released_t'))),
        (SELECT list([*COLUMNS(*)]) FROM (SELECT COLUMNS(*)::VARCHAR FROM (SELECT *, count(*) FROM (SELECT * FROM query_table('released_t') WHERE ("occupation" IS NULL OR true)) GROUP BY ALL) AS __rwn_counted) AS __rwn_text)) AS plan
),
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
    SELECT * FROM (SELECT * FROM (SELECT * FROM query_table('released_t') WHERE ("occupation" IS NULL OR true)) WHERE (SELECT plan.m FROM __rwn_plan) IS NOT NULL) AS __rwn_source
),
params AS (
    SELECT 0.5::DOUBLE AS __rwn_p, list_value((SELECT "occupation" FROM query_table('released_t') LIMIT 0), '?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving')[2:] AS __rwn_domain, len(list_value((SELECT "occupation" FROM query_table('released_t') LIMIT 0), '?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving')[2:]) AS __rwn_m
),
counts AS (
    SELECT d.value, 1 AS set_size, g.group_size, g.group_size AS ss, g.group_size AS sh,
        CAST(coalesce(c.n, 0) AS BIGINT) AS released_count
    FROM (SELECT count(*) AS group_size FROM released
          HAVING count(*) > 0) g
    CROSS JOIN (SELECT unnest(__rwn_domain) AS value FROM params) d
    LEFT JOIN (SELECT "occupation" AS value, count(*) AS n FROM released GROUP BY "occupation") c
        ON c.value = d.value
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
SELECT value, released_count,
    group_size,
    estimate,
    std_error,
    estimate - 1.959963984540054 * std_error AS ci_low,
    estimate + 1.959963984540054 * std_error AS ci_high,
    least(greatest(estimate, 0.0), group_size) AS estimate_clipped
FROM spread
ORDER BY value

-- ----------------------------------------------------------------- statement
WITH
__rwn_plan AS MATERIALIZED (
    -- the rules of the planner, run over the source as the statement reads it
    SELECT rwn_plan('{"domain": ["?", "Adm-clerical", "Armed-Forces", "Craft-repair", "Exec-managerial", "Farming-fishing", "Handlers-cleaners", "Machine-op-inspct", "Other-service", "Priv-house-serv", "Prof-specialty", "Protective-serv", "Sales", "Tech-support", "Transport-moving"], "group_by": ["sex"], "kind": "estimates", "name": "released_t", "p": 0.5, "public": ["sex", "race"], "sensitive": "occupation", "shipped": ["sex", "race", "occupation"], "test": "exact", "threshold": null, "values": ["Sales", "Tech-support"], "where": "race = ''White''"}', (SELECT list([column_name, column_type]) FROM (DESCRIBE SELECT * FROM query_table('released_t'))),
        (SELECT list([*COLUMNS(*)]) FROM (SELECT COLUMNS(*)::VARCHAR FROM (SELECT "sex", "race", "occupation", count(*) FROM query_table('released_t') GROUP BY ALL) AS __rwn_counted) AS __rwn_text)) AS plan
),
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
    SELECT * FROM (SELECT * FROM query_table('released_t') WHERE (SELECT plan.m FROM __rwn_plan) IS NOT NULL) AS __rwn_source
    WHERE "race" = 'White'
),
params AS (
    SELECT 0.5::DOUBLE AS __rwn_p, list_value((SELECT "occupation" FROM query_table('released_t') LIMIT 0), '?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving')[2:] AS __rwn_domain, len(list_value((SELECT "occupation" FROM query_table('released_t') LIMIT 0), '?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving')[2:]) AS __rwn_m
),
counts AS (
    SELECT "sex", 2 AS set_size, count(*) AS group_size, count(*) AS ss, count(*) AS sh,
        count(*) FILTER (WHERE "occupation" IN ('Sales', 'Tech-support')) AS released_count
    FROM released GROUP BY "sex" HAVING count(*) > 0
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
SELECT "sex", released_count,
    group_size,
    estimate,
    std_error,
    estimate - 1.959963984540054 * std_error AS ci_low,
    estimate + 1.959963984540054 * std_error AS ci_high,
    least(greatest(estimate, 0.0), group_size) AS estimate_clipped
FROM spread
ORDER BY "sex"

-- ----------------------------------------------------------------- statement
WITH
__rwn_plan AS MATERIALIZED (
    -- the rules of the planner, run over the source as the statement reads it
    SELECT rwn_plan('{"domain": ["?", "Adm-clerical", "Armed-Forces", "Craft-repair", "Exec-managerial", "Farming-fishing", "Handlers-cleaners", "Machine-op-inspct", "Other-service", "Priv-house-serv", "Prof-specialty", "Protective-serv", "Sales", "Tech-support", "Transport-moving"], "group_by": ["race"], "kind": "estimates", "name": "released_t", "p": 0.45, "public": ["sex", "race"], "sensitive": "occupation", "shipped": ["sex", "race", "occupation"], "test": "exact", "threshold": [0.5, 0.1], "values": null, "where": null}', (SELECT list([column_name, column_type]) FROM (DESCRIBE SELECT * FROM query_table('released_t'))),
        (SELECT list([*COLUMNS(*)]) FROM (SELECT COLUMNS(*)::VARCHAR FROM (SELECT "sex", "race", "occupation", count(*) FROM query_table('released_t') GROUP BY ALL) AS __rwn_counted) AS __rwn_text)) AS plan
),
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
    SELECT * FROM (SELECT * FROM query_table('released_t') WHERE (SELECT plan.m FROM __rwn_plan) IS NOT NULL) AS __rwn_source
),
params AS (
    SELECT 0.45::DOUBLE AS __rwn_p, list_value((SELECT "occupation" FROM query_table('released_t') LIMIT 0), '?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving')[2:] AS __rwn_domain, len(list_value((SELECT "occupation" FROM query_table('released_t') LIMIT 0), '?', 'Adm-clerical', 'Armed-Forces', 'Craft-repair', 'Exec-managerial', 'Farming-fishing', 'Handlers-cleaners', 'Machine-op-inspct', 'Other-service', 'Priv-house-serv', 'Prof-specialty', 'Protective-serv', 'Sales', 'Tech-support', 'Transport-moving')[2:]) AS __rwn_m
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
    FROM (SELECT "race", count(*) AS n FROM released GROUP BY "race", "sex") pg
    JOIN (SELECT unnest(plan.sizes) AS size, unnest(plan.trials) AS t FROM __rwn_plan) AS __rwn_tr(size, t) ON __rwn_tr.size = pg.n
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

