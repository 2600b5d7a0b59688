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
                                        weight, on_missing, "drop", key, seed, id));

CREATE OR REPLACE TEMP MACRO rwn_neighborhoods(source, columns, k := 5, eps := 0.0,
        scale := 'minmax', strata := []::VARCHAR[], categorical := []::VARCHAR[], weight := 1.0,
        on_missing := 'error') AS TABLE
    SELECT * FROM query(rwn_neighborhoods_sql(source, columns, k, eps, scale, strata, categorical,
                                              weight, on_missing, false));

CREATE OR REPLACE TEMP MACRO rwn_neighbor_pairs(source, columns, k := 5, eps := 0.0,
        scale := 'minmax', strata := []::VARCHAR[], categorical := []::VARCHAR[], weight := 1.0,
        on_missing := 'error') AS TABLE
    SELECT * FROM query(rwn_neighborhoods_sql(source, columns, k, eps, scale, strata, categorical,
                                              weight, on_missing, true));

-- Uniform perturbation and reconstruction privacy (docs/METHODS.md section 2).
CREATE OR REPLACE TEMP MACRO rwn_randomize(source, sensitive, p, public := NULL, domain := NULL, key := NULL,
        seed := NULL, epsilon := NULL, delta := NULL, test := 'exact', nulls := 'error', id := NULL,
        l_diversity := NULL, max_top_share := NULL) AS TABLE
    SELECT * FROM query(rwn_randomize_sql(source, sensitive, p, public, domain, key, seed, epsilon, delta,
                                          test, nulls, id, l_diversity, max_top_share));

-- The same, written into the table target with its design in the table's COMMENT, which
-- rwn_estimates reads (rwn_sql.randomize(into=)): SELECT rwn_randomize_into('rel', 'adult', ...).
-- A scalar macro: the write happens when the statement runs, not when it is planned or
-- EXPLAINed. It runs on a connection of its own (see the top of this file), which commits the
-- table by itself and does not see TEMP sources.
CREATE OR REPLACE TEMP MACRO rwn_randomize_into(target, source, sensitive, p, public := NULL, domain := NULL,
        key := NULL, seed := NULL, epsilon := NULL, delta := NULL, test := 'exact', nulls := 'error', id := NULL,
        l_diversity := NULL, max_top_share := NULL, "replace" := false) AS
    rwn_randomize_into_run(target, current_database(), current_schema(), source, sensitive, p, public, domain,
                           key, seed, epsilon, delta, test, nulls, id, l_diversity, max_top_share, "replace");

CREATE OR REPLACE TEMP MACRO rwn_audit(source, sensitive, p, epsilon, delta, public := NULL, domain := NULL,
        test := 'exact', enforce := false, nulls := 'error') AS TABLE
    SELECT * FROM query(rwn_audit_sql(source, sensitive, p, epsilon, delta, public, domain, test, enforce,
                                      nulls));

-- The design is read where it was recorded (a release database's metadata, the COMMENT of a table
-- written by rwn_sql.randomize(into=)); p and domain may then be NULL. Without a record, pass
-- p, domain and the enforcement: epsilon, delta and test (and public when not every other column)
-- for a release enforced with blocks, or enforced := false for one made without; else refused.
CREATE OR REPLACE TEMP MACRO rwn_estimates(release, sensitive, p, domain, group_by := []::VARCHAR[], "where" := NULL,
        "values" := NULL, public := NULL, epsilon := NULL, delta := NULL, test := NULL, enforced := NULL) AS TABLE
    SELECT * FROM query(rwn_estimates_sql(release, sensitive, p, domain, group_by, "where", "values", public,
                                          epsilon, delta, test, enforced));

-- Analysts' count queries, rewritten into the reconstruction as rwn_sql.query rewrites them, over a
-- release ATTACHed and named in FROM (FROM rel.adult) or in the current database. The release is
-- a database with its published metadata tables: a TEMP table or view is none (its metadata would
-- not be the published ones), so FROM names the release's own table.
CREATE OR REPLACE TEMP MACRO rwn_query(sql) AS TABLE
    SELECT * FROM query(rwn_query_sql(sql, current_database()));

-- What duckdb_functions() shows for each macro (its parameters, what it returns).
COMMENT ON MACRO TABLE rwn_perturb IS 'RWN perturbation (Randomization Within Neighborhoods): every row of source once, each cell of columns replaced with probability q by the same column of a random neighbour (the larger of its k nearest and its eps-ball, grid-bucketed exact search). Parameters: source (table or view name), columns (list), k, eps, q, scale (minmax|zscore|none), strata, categorical, weight (categorical mismatch cost), on_missing (error|drop), drop (columns left out), key (secret; NULL: a fresh random key), seed (experiments only), id (a unique record id column: the identity of every draw, so the release does not depend on the input order). Rows come in a keyed random order.';
COMMENT ON MACRO TABLE rwn_neighborhoods IS 'Exact RWN neighbourhoods: per record (input position) its neighbourhood size and radius. Parameters as rwn_perturb: source, columns, k, eps, scale, strata, categorical, weight, on_missing.';
COMMENT ON MACRO TABLE rwn_neighbor_pairs IS 'Exact RWN neighbourhoods as (record, neighbour) pairs, by input position. Parameters as rwn_neighborhoods: source (table or view name), columns (list), k, eps, scale (minmax|zscore|none), strata, categorical, weight (categorical mismatch cost), on_missing (error|drop).';
COMMENT ON MACRO TABLE rwn_randomize IS 'Uniform perturbation of the sensitive column of source (table or view name): each value kept with probability p, else replaced by a uniform draw from the domain (NULL: the values present). public: the public columns (personal groups; default every other column). epsilon, delta: enforce (epsilon, delta)-reconstruction privacy with the test (exact: certified at every count; chernoff: screening only). key (secret) or seed; nulls (error|drop); id (a unique record id column, the identity of every draw, never released; default the input position). l_diversity (with epsilon/delta default 2, else off unless given; 1: off): refuse personal groups of at least 2 records with fewer distinct sensitive values and public columns that determine the sensitive attribute; max_top_share (default: the better of p + (1-p)/m and the most frequent value''s share of all records; 1: off): with that rule, also refuse groups of at least 2 records whose most frequent value holds more than this share. Rows come in a keyed random order.';
COMMENT ON MACRO rwn_randomize_into IS 'rwn_randomize written into the table target (a name of a database, not TEMP) with its design recorded in the table''s COMMENT, which rwn_estimates and rwn_sql.estimates read: the parameters of rwn_randomize, then replace (true: replace an existing target). Returns a line naming the table and its row count. Runs when the statement runs, on a connection of its own: it commits the table itself (not the caller''s transaction) and reads only sources of the database (not TEMP tables or views).';
COMMENT ON MACRO TABLE rwn_audit IS 'Reconstruction-privacy audit of source (table or view name, the original data): per personal group and sensitive value the statistics, Chernoff bounds and exact tails, and whether each group passes (epsilon, delta) with the test (exact|chernoff). Parameters: source, sensitive, p, epsilon, delta, public (the public columns; default every other column), domain (NULL: the values present), test, enforce (true: judge the blocks design that enforcement would use, at every count), nulls (error|drop).';
COMMENT ON MACRO TABLE rwn_estimates IS 'Unbiased reconstruction of counts from a release: per group_by group and domain value (or for the set values) released_count, group_size, estimate, std_error, 95% interval. Parameters: release (table or view), sensitive, p, domain (as published; NULL: the recorded ones), group_by, where (a predicate on public columns), values, public, epsilon/delta/test of an enforced release (block-aware standard errors) or enforced := false for one made without enforcement. The design recorded with a release database''s table (rel.adult) or with a table written by rwn_sql.randomize(into=) is read, and arguments must agree with it; without a record the enforcement must be given (refused otherwise).';
COMMENT ON MACRO TABLE rwn_query IS 'Answer an analyst''s query on a release database with the unbiased reconstruction, as rwn_sql.query and rwn-sql query do: SELECT [g, ...,] COUNT(*) | SUM(x) | AVG(x) FROM <release table> [WHERE public predicate AND <SA> = ''v'' or IN (...)] [GROUP BY ...] [HAVING ...] [ORDER BY ...] [LIMIT n], x a public numeric column (AVG: a ratio of estimates, its std_error approximate). Parameter: sql (the query text). The release is the database named in FROM (ATTACH ''release.duckdb'' AS rel (READ_ONLY); FROM rel.adult) or the current database. Per output row released_count (SUM: released_sum; AVG: released_avg, count_estimate), group_size, estimate, std_error, 95% interval, estimate_clipped (COUNT only) and micro_reconstruction (true: the row reconstructs a single personal group).';
