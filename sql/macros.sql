-- rwn_sql's SQL surface, created by rwn_sql.install(con). Each table macro asks a Python
-- function for the SQL of the call (the same builder the Python API uses) and runs it with
-- query(), so SQL and Python give identical results for the same key and parameters.
CREATE OR REPLACE MACRO rwn_perturb(source, columns, k := 5, eps := 0.0, q := 1.0,
        scale := 'minmax', strata := []::VARCHAR[], categorical := []::VARCHAR[], weight := 1.0,
        on_missing := 'error', "drop" := []::VARCHAR[], key := NULL, seed := NULL) AS TABLE
    SELECT * FROM query(rwn_perturb_sql(source, columns, k, eps, q, scale, strata, categorical,
                                        weight, on_missing, "drop", key, seed));

CREATE OR REPLACE MACRO rwn_neighborhoods(source, columns, k := 5, eps := 0.0,
        scale := 'minmax', strata := []::VARCHAR[], categorical := []::VARCHAR[], weight := 1.0,
        on_missing := 'error') AS TABLE
    SELECT * FROM query(rwn_neighborhoods_sql(source, columns, k, eps, scale, strata, categorical,
                                              weight, on_missing, false));

CREATE OR REPLACE MACRO rwn_neighbor_pairs(source, columns, k := 5, eps := 0.0,
        scale := 'minmax', strata := []::VARCHAR[], categorical := []::VARCHAR[], weight := 1.0,
        on_missing := 'error') AS TABLE
    SELECT * FROM query(rwn_neighborhoods_sql(source, columns, k, eps, scale, strata, categorical,
                                              weight, on_missing, true));

-- Uniform perturbation and reconstruction privacy (docs/METHODS.md section 2).
CREATE OR REPLACE MACRO rwn_randomize(source, sensitive, p, public := NULL, domain := NULL, key := NULL,
        seed := NULL, epsilon := NULL, delta := NULL, test := 'exact', nulls := 'error') AS TABLE
    SELECT * FROM query(rwn_randomize_sql(source, sensitive, p, public, domain, key, seed, epsilon, delta,
                                          test, nulls));

CREATE OR REPLACE MACRO rwn_audit(source, sensitive, p, epsilon, delta, public := NULL, domain := NULL,
        test := 'exact', enforce := false, nulls := 'error') AS TABLE
    SELECT * FROM query(rwn_audit_sql(source, sensitive, p, epsilon, delta, public, domain, test, enforce,
                                      nulls));

-- For a release enforced with (epsilon, delta) and test, pass the same (and public when not every
-- other column): the standard errors then account for the blocks, as in rwn_sql.estimates.
CREATE OR REPLACE MACRO rwn_estimates(release, sensitive, p, domain, group_by := []::VARCHAR[], "where" := NULL,
        "values" := NULL, public := NULL, epsilon := NULL, delta := NULL, test := 'exact') AS TABLE
    SELECT * FROM query(rwn_estimates_sql(release, sensitive, p, domain, group_by, "where", "values", public,
                                          epsilon, delta, test));
