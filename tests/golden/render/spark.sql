SELECT min(`Age`) FILTER (WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE)), max(`Age`) FILTER (WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE)), min(`Weight`) FILTER (WHERE (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)), max(`Weight`) FILTER (WHERE (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)), min(`Height`) FILTER (WHERE (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)), max(`Height`) FILTER (WHERE (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)), min(`Neck`) FILTER (WHERE (NOT isnan(CAST(`Neck` AS DOUBLE)) AND abs(CAST(`Neck` AS DOUBLE)) < 'Infinity'::DOUBLE)), max(`Neck`) FILTER (WHERE (NOT isnan(CAST(`Neck` AS DOUBLE)) AND abs(CAST(`Neck` AS DOUBLE)) < 'Infinity'::DOUBLE)) FROM __rwn_src_<hex>
-- ----------------------------------------------------------------- statement
WITH src AS (SELECT * FROM __rwn_src_<hex> WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE) AND (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE) AND (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE) AND (NOT isnan(CAST(`Neck` AS DOUBLE)) AND abs(CAST(`Neck` AS DOUBLE)) < 'Infinity'::DOUBLE)),
stats AS (SELECT min(CAST(`Age` AS DOUBLE)) AS off_1, max(CAST(`Age` AS DOUBLE)) - min(CAST(`Age` AS DOUBLE)) AS sc_1, min(CAST(`Weight` AS DOUBLE)) AS off_2, max(CAST(`Weight` AS DOUBLE)) - min(CAST(`Weight` AS DOUBLE)) AS sc_2, min(CAST(`Height` AS DOUBLE)) AS off_3, max(CAST(`Height` AS DOUBLE)) - min(CAST(`Height` AS DOUBLE)) AS sc_3, min(CAST(`Neck` AS DOUBLE)) AS off_4, max(CAST(`Neck` AS DOUBLE)) - min(CAST(`Neck` AS DOUBLE)) AS sc_4 FROM src),
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY (CASE WHEN ((CAST(s.`Age` AS DOUBLE) - t.off_1) / t.sc_1 / 0.025::DOUBLE) % 1.0D < 0 THEN ((CAST(s.`Age` AS DOUBLE) - t.off_1) / t.sc_1 / 0.025::DOUBLE) - ((CAST(s.`Age` AS DOUBLE) - t.off_1) / t.sc_1 / 0.025::DOUBLE) % 1.0D - 1.0D ELSE ((CAST(s.`Age` AS DOUBLE) - t.off_1) / t.sc_1 / 0.025::DOUBLE) - ((CAST(s.`Age` AS DOUBLE) - t.off_1) / t.sc_1 / 0.025::DOUBLE) % 1.0D END), (CASE WHEN ((CAST(s.`Weight` AS DOUBLE) - t.off_2) / t.sc_2 / 0.025::DOUBLE) % 1.0D < 0 THEN ((CAST(s.`Weight` AS DOUBLE) - t.off_2) / t.sc_2 / 0.025::DOUBLE) - ((CAST(s.`Weight` AS DOUBLE) - t.off_2) / t.sc_2 / 0.025::DOUBLE) % 1.0D - 1.0D ELSE ((CAST(s.`Weight` AS DOUBLE) - t.off_2) / t.sc_2 / 0.025::DOUBLE) - ((CAST(s.`Weight` AS DOUBLE) - t.off_2) / t.sc_2 / 0.025::DOUBLE) % 1.0D END), (CASE WHEN ((CAST(s.`Height` AS DOUBLE) - t.off_3) / t.sc_3 / 0.025::DOUBLE) % 1.0D < 0 THEN ((CAST(s.`Height` AS DOUBLE) - t.off_3) / t.sc_3 / 0.025::DOUBLE) - ((CAST(s.`Height` AS DOUBLE) - t.off_3) / t.sc_3 / 0.025::DOUBLE) % 1.0D - 1.0D ELSE ((CAST(s.`Height` AS DOUBLE) - t.off_3) / t.sc_3 / 0.025::DOUBLE) - ((CAST(s.`Height` AS DOUBLE) - t.off_3) / t.sc_3 / 0.025::DOUBLE) % 1.0D END), (CASE WHEN ((CAST(s.`Neck` AS DOUBLE) - t.off_4) / t.sc_4 / 0.025::DOUBLE) % 1.0D < 0 THEN ((CAST(s.`Neck` AS DOUBLE) - t.off_4) / t.sc_4 / 0.025::DOUBLE) - ((CAST(s.`Neck` AS DOUBLE) - t.off_4) / t.sc_4 / 0.025::DOUBLE) % 1.0D - 1.0D ELSE ((CAST(s.`Neck` AS DOUBLE) - t.off_4) / t.sc_4 / 0.025::DOUBLE) - ((CAST(s.`Neck` AS DOUBLE) - t.off_4) / t.sc_4 / 0.025::DOUBLE) % 1.0D END))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
SELECT max(CAST(`Age` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE)) - min(CAST(`Age` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE)), stddev_samp(CAST(`Age` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE)), max(CAST(`Weight` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)) - min(CAST(`Weight` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)), stddev_samp(CAST(`Weight` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)), max(CAST(`Height` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)) - min(CAST(`Height` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)), stddev_samp(CAST(`Height` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)), max(CAST(`Neck` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Neck` AS DOUBLE)) AND abs(CAST(`Neck` AS DOUBLE)) < 'Infinity'::DOUBLE)) - min(CAST(`Neck` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Neck` AS DOUBLE)) AND abs(CAST(`Neck` AS DOUBLE)) < 'Infinity'::DOUBLE)), stddev_samp(CAST(`Neck` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Neck` AS DOUBLE)) AND abs(CAST(`Neck` AS DOUBLE)) < 'Infinity'::DOUBLE)), covar_pop(CAST(`Age` AS DOUBLE), CAST(`Age` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE) AND (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE)), covar_pop(CAST(`Age` AS DOUBLE), CAST(`Weight` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE) AND (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)), covar_pop(CAST(`Age` AS DOUBLE), CAST(`Height` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE) AND (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)), covar_pop(CAST(`Age` AS DOUBLE), CAST(`Neck` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE) AND (NOT isnan(CAST(`Neck` AS DOUBLE)) AND abs(CAST(`Neck` AS DOUBLE)) < 'Infinity'::DOUBLE)), covar_pop(CAST(`Weight` AS DOUBLE), CAST(`Weight` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE) AND (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)), covar_pop(CAST(`Weight` AS DOUBLE), CAST(`Height` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE) AND (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)), covar_pop(CAST(`Weight` AS DOUBLE), CAST(`Neck` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE) AND (NOT isnan(CAST(`Neck` AS DOUBLE)) AND abs(CAST(`Neck` AS DOUBLE)) < 'Infinity'::DOUBLE)), covar_pop(CAST(`Height` AS DOUBLE), CAST(`Height` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE) AND (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)), covar_pop(CAST(`Height` AS DOUBLE), CAST(`Neck` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE) AND (NOT isnan(CAST(`Neck` AS DOUBLE)) AND abs(CAST(`Neck` AS DOUBLE)) < 'Infinity'::DOUBLE)), covar_pop(CAST(`Neck` AS DOUBLE), CAST(`Neck` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Neck` AS DOUBLE)) AND abs(CAST(`Neck` AS DOUBLE)) < 'Infinity'::DOUBLE) AND (NOT isnan(CAST(`Neck` AS DOUBLE)) AND abs(CAST(`Neck` AS DOUBLE)) < 'Infinity'::DOUBLE)) FROM __rwn_src_<hex>
-- ----------------------------------------------------------------- statement
SELECT monotonically_increasing_id() AS __rwn_pos, struct(*) AS __rwn_row
FROM (SELECT * FROM (WITH
src AS (
    SELECT * FROM __rwn_src_<hex>
)
SELECT * FROM src) AS __rwn_rows ORDER BY `rid`) AS __rwn_sorted
-- ----------------------------------------------------------------- statement
WITH __rwn_parts AS (
    SELECT __rwn_pos div 8589934592 AS part, count(*) AS size FROM __rwn_stage_<hex> GROUP BY __rwn_pos div 8589934592
),
__rwn_offsets AS (
    SELECT a.part, coalesce(sum(b.size), 0) AS rows_before
    FROM __rwn_parts a LEFT JOIN __rwn_parts b ON b.part < a.part
    GROUP BY a.part
)
SELECT o.rows_before + p.__rwn_pos % 8589934592 + 1 AS __rwn_rid, p.__rwn_row.*
FROM __rwn_stage_<hex> p JOIN __rwn_offsets o ON o.part = p.__rwn_pos div 8589934592
-- ----------------------------------------------------------------- statement
WITH
staged AS (SELECT * FROM __rwn_stage_<hex>),
stats AS (
    SELECT count(*) AS n,
        min(CAST(`Age` AS DOUBLE)) AS lo_1,
        max(CAST(`Age` AS DOUBLE)) AS hi_1,
        stddev_samp(CAST(`Age` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS sd_1,
        var_pop(CAST(`Age` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS var_1,
        count(*) FILTER (WHERE `Age` IS NULL OR NOT (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS bad_1,
        min(CAST(`Weight` AS DOUBLE)) AS lo_2,
        max(CAST(`Weight` AS DOUBLE)) AS hi_2,
        stddev_samp(CAST(`Weight` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS sd_2,
        var_pop(CAST(`Weight` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS var_2,
        count(*) FILTER (WHERE `Weight` IS NULL OR NOT (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS bad_2,
        min(CAST(`Height` AS DOUBLE)) AS lo_3,
        max(CAST(`Height` AS DOUBLE)) AS hi_3,
        stddev_samp(CAST(`Height` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS sd_3,
        var_pop(CAST(`Height` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS var_3,
        count(*) FILTER (WHERE `Height` IS NULL OR NOT (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS bad_3,
        min(CAST(`Neck` AS DOUBLE)) AS lo_4,
        max(CAST(`Neck` AS DOUBLE)) AS hi_4,
        stddev_samp(CAST(`Neck` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Neck` AS DOUBLE)) AND abs(CAST(`Neck` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS sd_4,
        var_pop(CAST(`Neck` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Neck` AS DOUBLE)) AND abs(CAST(`Neck` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS var_4,
        count(*) FILTER (WHERE `Neck` IS NULL OR NOT (NOT isnan(CAST(`Neck` AS DOUBLE)) AND abs(CAST(`Neck` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS bad_4,
        count(`rid`) AS id_count,
        count(DISTINCT `rid`) AS id_distinct
    FROM staged
),
strata_sizes AS (
    SELECT coalesce(min(size), 0) AS smallest, min_by(label, size) AS smallest_label
    FROM (SELECT 'all records' AS label, count(*) AS size FROM staged )
),
params AS (
    SELECT *,
        lo_1 AS off_1,
        hi_1 - lo_1 AS sc_1,
        lo_2 AS off_2,
        hi_2 - lo_2 AS sc_2,
        lo_3 AS off_3,
        hi_3 - lo_3 AS sc_3,
        lo_4 AS off_4,
        hi_4 - lo_4 AS sc_4,
        CASE
            WHEN n = 0 THEN 'the input has no records'
            WHEN bad_1 > 0 THEN 'column "Age"' || ' has ' || bad_1 || ' NULL, NaN or infinite values; clean them or use on_missing=\'drop\' (--on-missing drop)'
            WHEN hi_1 = lo_1 THEN 'column "Age"' || ' is constant (every value is ' || lo_1 || '); remove it from the distance columns'
            WHEN NOT coalesce((NOT isnan(hi_1 - lo_1) AND abs(hi_1 - lo_1) < 'Infinity'::DOUBLE) AND (NOT isnan(hi_1 - lo_1) AND abs(hi_1 - lo_1) < 'Infinity'::DOUBLE) AND (NOT isnan((hi_1 - lo_1) / (hi_1 - lo_1) * (hi_1 - lo_1) / (hi_1 - lo_1) * 4) AND abs((hi_1 - lo_1) / (hi_1 - lo_1) * (hi_1 - lo_1) / (hi_1 - lo_1) * 4) < 'Infinity'::DOUBLE), false) THEN 'column "Age"' || ' spans ' || lo_1 || ' to ' || hi_1 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_2 > 0 THEN 'column "Weight"' || ' has ' || bad_2 || ' NULL, NaN or infinite values; clean them or use on_missing=\'drop\' (--on-missing drop)'
            WHEN hi_2 = lo_2 THEN 'column "Weight"' || ' is constant (every value is ' || lo_2 || '); remove it from the distance columns'
            WHEN NOT coalesce((NOT isnan(hi_2 - lo_2) AND abs(hi_2 - lo_2) < 'Infinity'::DOUBLE) AND (NOT isnan(hi_2 - lo_2) AND abs(hi_2 - lo_2) < 'Infinity'::DOUBLE) AND (NOT isnan((hi_2 - lo_2) / (hi_2 - lo_2) * (hi_2 - lo_2) / (hi_2 - lo_2) * 4) AND abs((hi_2 - lo_2) / (hi_2 - lo_2) * (hi_2 - lo_2) / (hi_2 - lo_2) * 4) < 'Infinity'::DOUBLE), false) THEN 'column "Weight"' || ' spans ' || lo_2 || ' to ' || hi_2 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_3 > 0 THEN 'column "Height"' || ' has ' || bad_3 || ' NULL, NaN or infinite values; clean them or use on_missing=\'drop\' (--on-missing drop)'
            WHEN hi_3 = lo_3 THEN 'column "Height"' || ' is constant (every value is ' || lo_3 || '); remove it from the distance columns'
            WHEN NOT coalesce((NOT isnan(hi_3 - lo_3) AND abs(hi_3 - lo_3) < 'Infinity'::DOUBLE) AND (NOT isnan(hi_3 - lo_3) AND abs(hi_3 - lo_3) < 'Infinity'::DOUBLE) AND (NOT isnan((hi_3 - lo_3) / (hi_3 - lo_3) * (hi_3 - lo_3) / (hi_3 - lo_3) * 4) AND abs((hi_3 - lo_3) / (hi_3 - lo_3) * (hi_3 - lo_3) / (hi_3 - lo_3) * 4) < 'Infinity'::DOUBLE), false) THEN 'column "Height"' || ' spans ' || lo_3 || ' to ' || hi_3 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_4 > 0 THEN 'column "Neck"' || ' has ' || bad_4 || ' NULL, NaN or infinite values; clean them or use on_missing=\'drop\' (--on-missing drop)'
            WHEN hi_4 = lo_4 THEN 'column "Neck"' || ' is constant (every value is ' || lo_4 || '); remove it from the distance columns'
            WHEN NOT coalesce((NOT isnan(hi_4 - lo_4) AND abs(hi_4 - lo_4) < 'Infinity'::DOUBLE) AND (NOT isnan(hi_4 - lo_4) AND abs(hi_4 - lo_4) < 'Infinity'::DOUBLE) AND (NOT isnan((hi_4 - lo_4) / (hi_4 - lo_4) * (hi_4 - lo_4) / (hi_4 - lo_4) * 4) AND abs((hi_4 - lo_4) / (hi_4 - lo_4) * (hi_4 - lo_4) / (hi_4 - lo_4) * 4) < 'Infinity'::DOUBLE), false) THEN 'column "Neck"' || ' spans ' || lo_4 || ' to ' || hi_4 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN smallest <= 5 THEN 'the input has ' || smallest || ' records; k = 5 needs at least 6 (k must be below the number of records in every stratum)'
            WHEN id_count < n THEN 'the id column "rid"' || ' has ' || (n - id_count) || ' NULL values; every record needs an id'
            WHEN id_distinct < id_count THEN 'the id column "rid"' || ' has duplicate values ('  || (id_count - id_distinct) || ' records share an id with another); every record needs its own id'
        END AS problem
    FROM stats, strata_sizes
),
settings AS (
    
    
    SELECT
        CASE WHEN problem IS NOT NULL THEN raise_error('rwn_sql: ' || problem)
             ELSE greatest(0.05::DOUBLE * 1.000001, coalesce(pow(12 * pow(((hi_1 - lo_1) / sc_1) * ((hi_2 - lo_2) / sc_2) * ((hi_3 - lo_3) / sc_3) * ((hi_4 - lo_4) / sc_4), 3.0 / 4) / (n * 4.1887902047863905), 1.0 / 3), 0.0), 1e-9 * diameter, 1e-12)
        END AS s0,
        diameter, grid_dims, off_1, sc_1, off_2, sc_2, off_3, sc_3, off_4, sc_4
    FROM (SELECT *, sqrt(pow((hi_1 - lo_1) / sc_1, 2) + pow((hi_2 - lo_2) / sc_2, 2) + pow((hi_3 - lo_3) / sc_3, 2) + pow((hi_4 - lo_4) / sc_4, 2)) AS diameter, 3 AS grid_dims FROM params)
)
SELECT * FROM settings
-- ----------------------------------------------------------------- statement
WITH
staged AS (SELECT * FROM __rwn_stage_<hex>),
params AS (SELECT * FROM __rwn_stage_<hex>),
settings AS (SELECT * FROM __rwn_stage_<hex>),
scaled AS (
    
    
    SELECT s.__rwn_rid AS rid,
        CAST(s.`Age` AS DOUBLE) AS v_1,
        CAST(s.`Weight` AS DOUBLE) AS v_2,
        CAST(s.`Height` AS DOUBLE) AS v_3,
        CAST(s.`Neck` AS DOUBLE) AS v_4,
        abs((CAST(s.`Age` AS DOUBLE) - p.off_1) / p.sc_1) + abs((CAST(s.`Weight` AS DOUBLE) - p.off_2) / p.sc_2) + abs((CAST(s.`Height` AS DOUBLE) - p.off_3) / p.sc_3) + abs((CAST(s.`Neck` AS DOUBLE) - p.off_4) / p.sc_4) AS g_mag,
        0.756507778::DOUBLE * (CAST(s.`Age` AS DOUBLE) - p.off_1) / p.sc_1 + -0.210871559::DOUBLE * (CAST(s.`Weight` AS DOUBLE) - p.off_2) / p.sc_2 + -0.607932051::DOUBLE * (CAST(s.`Height` AS DOUBLE) - p.off_3) / p.sc_3 + -0.116823743::DOUBLE * (CAST(s.`Neck` AS DOUBLE) - p.off_4) / p.sc_4 AS g_1,
        0.59486861::DOUBLE * (CAST(s.`Age` AS DOUBLE) - p.off_1) / p.sc_1 + 0.441649094::DOUBLE * (CAST(s.`Weight` AS DOUBLE) - p.off_2) / p.sc_2 + 0.501130792::DOUBLE * (CAST(s.`Height` AS DOUBLE) - p.off_3) / p.sc_3 + 0.447152481::DOUBLE * (CAST(s.`Neck` AS DOUBLE) - p.off_4) / p.sc_4 AS g_2,
        0.269564895::DOUBLE * (CAST(s.`Age` AS DOUBLE) - p.off_1) / p.sc_1 + -0.475290351::DOUBLE * (CAST(s.`Weight` AS DOUBLE) - p.off_2) / p.sc_2 + 0.610487517::DOUBLE * (CAST(s.`Height` AS DOUBLE) - p.off_3) / p.sc_3 + -0.573357514::DOUBLE * (CAST(s.`Neck` AS DOUBLE) - p.off_4) / p.sc_4 AS g_3
    FROM staged s, params p, settings st
),
first_level AS (
    
    
    
    SELECT scaled.*,
        -CAST(round(log2(greatest(count(*) OVER (PARTITION BY (CASE WHEN (g_1 / (st.s0)) % 1.0D < 0 THEN (g_1 / (st.s0)) - (g_1 / (st.s0)) % 1.0D - 1.0D ELSE (g_1 / (st.s0)) - (g_1 / (st.s0)) % 1.0D END), (CASE WHEN (g_2 / (st.s0)) % 1.0D < 0 THEN (g_2 / (st.s0)) - (g_2 / (st.s0)) % 1.0D - 1.0D ELSE (g_2 / (st.s0)) - (g_2 / (st.s0)) % 1.0D END), (CASE WHEN (g_3 / (st.s0)) % 1.0D < 0 THEN (g_3 / (st.s0)) - (g_3 / (st.s0)) % 1.0D - 1.0D ELSE (g_3 / (st.s0)) - (g_3 / (st.s0)) % 1.0D END)) * 4.1887902047863905 / 12, 1)) * 1.0 / 3) AS INTEGER) AS first_lvl
    FROM scaled, settings st
),
points AS (
    
    
    
    
    
    
    SELECT rid, v_1, v_2, v_3, v_4, g_mag, g_1, g_2, g_3,
        greatest(first_lvl - CAST(round(log2(greatest(count(*) OVER (PARTITION BY first_lvl, (CASE WHEN (g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D < 0 THEN (g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) - (g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D - 1.0D ELSE (g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) - (g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D END), (CASE WHEN (g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D < 0 THEN (g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) - (g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D - 1.0D ELSE (g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) - (g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D END), (CASE WHEN (g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D < 0 THEN (g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) - (g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D - 1.0D ELSE (g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) - (g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D END)) * 4.1887902047863905 / 12, 1)) * 1.0 / 3 - 0.375) AS INTEGER), CAST(ceil(1.0 * log2(0.05::DOUBLE / (1.2 * st.s0))) AS INTEGER)) AS start_lvl
    FROM first_level f, settings st
)
SELECT * FROM points
-- ----------------------------------------------------------------- statement
WITH
points AS (SELECT * FROM __rwn_stage_<hex>)
SELECT (SELECT min(start_lvl) FROM points) - 1 AS lvl, points.rid, start_lvl, false AS done,
        CAST(NULL AS ARRAY<STRUCT<d2: DOUBLE, j: BIGINT>>) AS members, NULL::DOUBLE AS radius2, NULL::DOUBLE AS dcr2
    FROM points
-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM __rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
WITH
points AS (SELECT * FROM __rwn_stage_<hex>),
settings AS (SELECT * FROM __rwn_stage_<hex>),
search AS (SELECT * FROM __rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),



active AS (
    
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, sc_4, grid_dims, p.*
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    
    SELECT a.*,
            CAST((CASE WHEN (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_1,
            CAST((CASE WHEN (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_2,
            CAST((CASE WHEN (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END), 1 - (g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END)), g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END), 1 - (g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END)), g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END), 1 - (g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s), g_mag / s))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST((CASE WHEN (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST((CASE WHEN (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST((CASE WHEN (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.* FROM points p, settings st) p, level l
),
pairs AS (
    
    
    
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3)
                + ((a.v_4 - b.v_4) / a.sc_4) * ((a.v_4 - b.v_4) / a.sc_4) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    
    
    
    
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        
        count(*) FILTER (WHERE d2 * 1.0000000000000036::DOUBLE <= margin2) - 1 >= 5
            AND 0.0025000000000000005::DOUBLE * 1.0000000000000036::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        array_sort(collect_list(named_struct('d2', d2, 'j', j)) FILTER (WHERE j <> i AND d2 <= margin2)) AS found
    FROM pairs
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN filter(found, e -> e.d2 <= (greatest(0.0025000000000000005::DOUBLE, element_at(found, CAST(5 AS INT)).d2)) * 1.0000000000000036::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, element_at(found, CAST(5 AS INT)).d2) END AS radius2,
    CASE WHEN done THEN element_at(found, CAST(1 AS INT)).d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM __rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
WITH
points AS (SELECT * FROM __rwn_stage_<hex>),
settings AS (SELECT * FROM __rwn_stage_<hex>),
search AS (SELECT * FROM __rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),



active AS (
    
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, sc_4, grid_dims, p.*
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    
    SELECT a.*,
            CAST((CASE WHEN (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_1,
            CAST((CASE WHEN (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_2,
            CAST((CASE WHEN (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END), 1 - (g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END)), g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END), 1 - (g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END)), g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END), 1 - (g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s), g_mag / s))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST((CASE WHEN (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST((CASE WHEN (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST((CASE WHEN (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.* FROM points p, settings st) p, level l
),
pairs AS (
    
    
    
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3)
                + ((a.v_4 - b.v_4) / a.sc_4) * ((a.v_4 - b.v_4) / a.sc_4) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    
    
    
    
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        
        count(*) FILTER (WHERE d2 * 1.0000000000000036::DOUBLE <= margin2) - 1 >= 5
            AND 0.0025000000000000005::DOUBLE * 1.0000000000000036::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        array_sort(collect_list(named_struct('d2', d2, 'j', j)) FILTER (WHERE j <> i AND d2 <= margin2)) AS found
    FROM pairs
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN filter(found, e -> e.d2 <= (greatest(0.0025000000000000005::DOUBLE, element_at(found, CAST(5 AS INT)).d2)) * 1.0000000000000036::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, element_at(found, CAST(5 AS INT)).d2) END AS radius2,
    CASE WHEN done THEN element_at(found, CAST(1 AS INT)).d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM __rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
WITH
points AS (SELECT * FROM __rwn_stage_<hex>),
settings AS (SELECT * FROM __rwn_stage_<hex>),
search AS (SELECT * FROM __rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),



active AS (
    
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, sc_4, grid_dims, p.*
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    
    SELECT a.*,
            CAST((CASE WHEN (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_1,
            CAST((CASE WHEN (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_2,
            CAST((CASE WHEN (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END), 1 - (g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END)), g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END), 1 - (g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END)), g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END), 1 - (g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s), g_mag / s))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST((CASE WHEN (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST((CASE WHEN (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST((CASE WHEN (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.* FROM points p, settings st) p, level l
),
pairs AS (
    
    
    
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3)
                + ((a.v_4 - b.v_4) / a.sc_4) * ((a.v_4 - b.v_4) / a.sc_4) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    
    
    
    
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        
        count(*) FILTER (WHERE d2 * 1.0000000000000036::DOUBLE <= margin2) - 1 >= 5
            AND 0.0025000000000000005::DOUBLE * 1.0000000000000036::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        array_sort(collect_list(named_struct('d2', d2, 'j', j)) FILTER (WHERE j <> i AND d2 <= margin2)) AS found
    FROM pairs
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN filter(found, e -> e.d2 <= (greatest(0.0025000000000000005::DOUBLE, element_at(found, CAST(5 AS INT)).d2)) * 1.0000000000000036::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, element_at(found, CAST(5 AS INT)).d2) END AS radius2,
    CASE WHEN done THEN element_at(found, CAST(1 AS INT)).d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM __rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
WITH
points AS (SELECT * FROM __rwn_stage_<hex>),
settings AS (SELECT * FROM __rwn_stage_<hex>),
search AS (SELECT * FROM __rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),



active AS (
    
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, sc_4, grid_dims, p.*
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    
    SELECT a.*,
            CAST((CASE WHEN (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_1,
            CAST((CASE WHEN (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_2,
            CAST((CASE WHEN (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END), 1 - (g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END)), g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END), 1 - (g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END)), g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END), 1 - (g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s), g_mag / s))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST((CASE WHEN (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST((CASE WHEN (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST((CASE WHEN (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.* FROM points p, settings st) p, level l
),
pairs AS (
    
    
    
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3)
                + ((a.v_4 - b.v_4) / a.sc_4) * ((a.v_4 - b.v_4) / a.sc_4) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    
    
    
    
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        
        count(*) FILTER (WHERE d2 * 1.0000000000000036::DOUBLE <= margin2) - 1 >= 5
            AND 0.0025000000000000005::DOUBLE * 1.0000000000000036::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        array_sort(collect_list(named_struct('d2', d2, 'j', j)) FILTER (WHERE j <> i AND d2 <= margin2)) AS found
    FROM pairs
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN filter(found, e -> e.d2 <= (greatest(0.0025000000000000005::DOUBLE, element_at(found, CAST(5 AS INT)).d2)) * 1.0000000000000036::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, element_at(found, CAST(5 AS INT)).d2) END AS radius2,
    CASE WHEN done THEN element_at(found, CAST(1 AS INT)).d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM __rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
WITH
settings AS (SELECT * FROM __rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM __rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM __rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM __rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM __rwn_stage_<hex> WHERE done) AS done_rows),
hood AS (
    
    SELECT rid, members, radius2, dcr2, size(members) AS size
    FROM search, settings
    WHERE done AND settings.s0 > 0
)
SELECT * FROM hood
-- ----------------------------------------------------------------- statement
WITH
staged AS (SELECT * FROM __rwn_stage_<hex>),
hood AS (SELECT * FROM __rwn_stage_<hex>),



draws AS (
    SELECT rid, members, size,
        md5((SELECT md5(k || '|rwn.perturb|Age') FROM __rwn_key_<hex>) || CAST(__rwn_ids.__rwn_record AS STRING)) AS h_1,
        md5((SELECT md5(k || '|rwn.perturb|Weight') FROM __rwn_key_<hex>) || CAST(__rwn_ids.__rwn_record AS STRING)) AS h_2,
        md5((SELECT md5(k || '|rwn.perturb|Height') FROM __rwn_key_<hex>) || CAST(__rwn_ids.__rwn_record AS STRING)) AS h_3,
        md5((SELECT md5(k || '|rwn.perturb|Neck') FROM __rwn_key_<hex>) || CAST(__rwn_ids.__rwn_record AS STRING)) AS h_4
    FROM hood
    JOIN (SELECT __rwn_rid, CAST(`rid` AS STRING) AS __rwn_record FROM staged) AS __rwn_ids ON __rwn_ids.__rwn_rid = hood.rid
),
picks AS (
    SELECT rid,
        CASE WHEN CAST(pmod(CAST(conv(concat(substr(h_1, 31, 1), substr(h_1, 32, 1), substr(h_1, 29, 1), substr(h_1, 30, 1), substr(h_1, 27, 1), substr(h_1, 28, 1), substr(h_1, 25, 1), substr(h_1, 26, 1), substr(h_1, 23, 1), substr(h_1, 24, 1), substr(h_1, 21, 1), substr(h_1, 22, 1), substr(h_1, 19, 1)), 16, 10) AS DECIMAL(20, 0)), 4503599627370496) AS BIGINT) < 3152519739159347.0::DOUBLE THEN element_at(members, CAST(least(size, 1 + CAST(floor(CAST(CAST(pmod(CAST(conv(concat(substr(h_1, 20, 1), substr(h_1, 17, 1), substr(h_1, 18, 1), substr(h_1, 15, 1), substr(h_1, 16, 1), substr(h_1, 13, 1), substr(h_1, 14, 1), substr(h_1, 11, 1), substr(h_1, 12, 1), substr(h_1, 9, 1), substr(h_1, 10, 1), substr(h_1, 7, 1), substr(h_1, 8, 1)), 16, 10) AS DECIMAL(20, 0)), 4503599627370496) AS BIGINT) AS DOUBLE) / 4503599627370496.0D * size) AS BIGINT)) AS INT)).j ELSE rid END AS donor_1,
        CASE WHEN CAST(pmod(CAST(conv(concat(substr(h_2, 31, 1), substr(h_2, 32, 1), substr(h_2, 29, 1), substr(h_2, 30, 1), substr(h_2, 27, 1), substr(h_2, 28, 1), substr(h_2, 25, 1), substr(h_2, 26, 1), substr(h_2, 23, 1), substr(h_2, 24, 1), substr(h_2, 21, 1), substr(h_2, 22, 1), substr(h_2, 19, 1)), 16, 10) AS DECIMAL(20, 0)), 4503599627370496) AS BIGINT) < 3152519739159347.0::DOUBLE THEN element_at(members, CAST(least(size, 1 + CAST(floor(CAST(CAST(pmod(CAST(conv(concat(substr(h_2, 20, 1), substr(h_2, 17, 1), substr(h_2, 18, 1), substr(h_2, 15, 1), substr(h_2, 16, 1), substr(h_2, 13, 1), substr(h_2, 14, 1), substr(h_2, 11, 1), substr(h_2, 12, 1), substr(h_2, 9, 1), substr(h_2, 10, 1), substr(h_2, 7, 1), substr(h_2, 8, 1)), 16, 10) AS DECIMAL(20, 0)), 4503599627370496) AS BIGINT) AS DOUBLE) / 4503599627370496.0D * size) AS BIGINT)) AS INT)).j ELSE rid END AS donor_2,
        CASE WHEN CAST(pmod(CAST(conv(concat(substr(h_3, 31, 1), substr(h_3, 32, 1), substr(h_3, 29, 1), substr(h_3, 30, 1), substr(h_3, 27, 1), substr(h_3, 28, 1), substr(h_3, 25, 1), substr(h_3, 26, 1), substr(h_3, 23, 1), substr(h_3, 24, 1), substr(h_3, 21, 1), substr(h_3, 22, 1), substr(h_3, 19, 1)), 16, 10) AS DECIMAL(20, 0)), 4503599627370496) AS BIGINT) < 3152519739159347.0::DOUBLE THEN element_at(members, CAST(least(size, 1 + CAST(floor(CAST(CAST(pmod(CAST(conv(concat(substr(h_3, 20, 1), substr(h_3, 17, 1), substr(h_3, 18, 1), substr(h_3, 15, 1), substr(h_3, 16, 1), substr(h_3, 13, 1), substr(h_3, 14, 1), substr(h_3, 11, 1), substr(h_3, 12, 1), substr(h_3, 9, 1), substr(h_3, 10, 1), substr(h_3, 7, 1), substr(h_3, 8, 1)), 16, 10) AS DECIMAL(20, 0)), 4503599627370496) AS BIGINT) AS DOUBLE) / 4503599627370496.0D * size) AS BIGINT)) AS INT)).j ELSE rid END AS donor_3,
        CASE WHEN CAST(pmod(CAST(conv(concat(substr(h_4, 31, 1), substr(h_4, 32, 1), substr(h_4, 29, 1), substr(h_4, 30, 1), substr(h_4, 27, 1), substr(h_4, 28, 1), substr(h_4, 25, 1), substr(h_4, 26, 1), substr(h_4, 23, 1), substr(h_4, 24, 1), substr(h_4, 21, 1), substr(h_4, 22, 1), substr(h_4, 19, 1)), 16, 10) AS DECIMAL(20, 0)), 4503599627370496) AS BIGINT) < 3152519739159347.0::DOUBLE THEN element_at(members, CAST(least(size, 1 + CAST(floor(CAST(CAST(pmod(CAST(conv(concat(substr(h_4, 20, 1), substr(h_4, 17, 1), substr(h_4, 18, 1), substr(h_4, 15, 1), substr(h_4, 16, 1), substr(h_4, 13, 1), substr(h_4, 14, 1), substr(h_4, 11, 1), substr(h_4, 12, 1), substr(h_4, 9, 1), substr(h_4, 10, 1), substr(h_4, 7, 1), substr(h_4, 8, 1)), 16, 10) AS DECIMAL(20, 0)), 4503599627370496) AS BIGINT) AS DOUBLE) / 4503599627370496.0D * size) AS BIGINT)) AS INT)).j ELSE rid END AS donor_4
    FROM draws
),
drawn AS (SELECT count(*) AS draws FROM picks),
lookup AS (
    
    
    
    SELECT staged.*
    FROM staged, drawn
    WHERE drawn.draws >= 0
)

SELECT s.`rid`, s.`BodyFat`, d_1.`Age` AS `Age`, d_2.`Weight` AS `Weight`, d_3.`Height` AS `Height`, d_4.`Neck` AS `Neck`, s.`Chest`, s.`Abdomen`, s.`Hip`, s.`Thigh`, s.`Knee`, s.`Ankle`, s.`Biceps`, s.`Forearm`, s.`Wrist`
FROM picks p
JOIN lookup s ON s.__rwn_rid = p.rid
LEFT JOIN lookup d_1 ON d_1.__rwn_rid = p.donor_1
LEFT JOIN lookup d_2 ON d_2.__rwn_rid = p.donor_2
LEFT JOIN lookup d_3 ON d_3.__rwn_rid = p.donor_3
LEFT JOIN lookup d_4 ON d_4.__rwn_rid = p.donor_4
ORDER BY CAST(pmod(CAST(conv(concat(substr(md5((SELECT md5(k || '|rwn.order|') FROM __rwn_key_<hex>) || CAST(s.`rid` AS STRING)), 15, 1), substr(md5((SELECT md5(k || '|rwn.order|') FROM __rwn_key_<hex>) || CAST(s.`rid` AS STRING)), 16, 1), substr(md5((SELECT md5(k || '|rwn.order|') FROM __rwn_key_<hex>) || CAST(s.`rid` AS STRING)), 13, 1), substr(md5((SELECT md5(k || '|rwn.order|') FROM __rwn_key_<hex>) || CAST(s.`rid` AS STRING)), 14, 1), substr(md5((SELECT md5(k || '|rwn.order|') FROM __rwn_key_<hex>) || CAST(s.`rid` AS STRING)), 11, 1), substr(md5((SELECT md5(k || '|rwn.order|') FROM __rwn_key_<hex>) || CAST(s.`rid` AS STRING)), 12, 1), substr(md5((SELECT md5(k || '|rwn.order|') FROM __rwn_key_<hex>) || CAST(s.`rid` AS STRING)), 9, 1), substr(md5((SELECT md5(k || '|rwn.order|') FROM __rwn_key_<hex>) || CAST(s.`rid` AS STRING)), 10, 1), substr(md5((SELECT md5(k || '|rwn.order|') FROM __rwn_key_<hex>) || CAST(s.`rid` AS STRING)), 7, 1), substr(md5((SELECT md5(k || '|rwn.order|') FROM __rwn_key_<hex>) || CAST(s.`rid` AS STRING)), 8, 1), substr(md5((SELECT md5(k || '|rwn.order|') FROM __rwn_key_<hex>) || CAST(s.`rid` AS STRING)), 5, 1), substr(md5((SELECT md5(k || '|rwn.order|') FROM __rwn_key_<hex>) || CAST(s.`rid` AS STRING)), 6, 1), substr(md5((SELECT md5(k || '|rwn.order|') FROM __rwn_key_<hex>) || CAST(s.`rid` AS STRING)), 3, 1), substr(md5((SELECT md5(k || '|rwn.order|') FROM __rwn_key_<hex>) || CAST(s.`rid` AS STRING)), 4, 1), substr(md5((SELECT md5(k || '|rwn.order|') FROM __rwn_key_<hex>) || CAST(s.`rid` AS STRING)), 1, 1), substr(md5((SELECT md5(k || '|rwn.order|') FROM __rwn_key_<hex>) || CAST(s.`rid` AS STRING)), 2, 1)), 16, 10) AS DECIMAL(20, 0)), 4611686018427387904) AS BIGINT), s.__rwn_rid
-- ----------------------------------------------------------------- statement
SELECT min(`Age`) FILTER (WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE)), max(`Age`) FILTER (WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE)), min(`Weight`) FILTER (WHERE (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)), max(`Weight`) FILTER (WHERE (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)), min(`Height`) FILTER (WHERE (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)), max(`Height`) FILTER (WHERE (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)) FROM __rwn_src_<hex>
-- ----------------------------------------------------------------- statement
SELECT monotonically_increasing_id() AS __rwn_pos, struct(*) AS __rwn_row
FROM (SELECT * FROM (WITH
src AS (
    SELECT * FROM __rwn_src_<hex>
)
SELECT * FROM src) AS __rwn_rows ORDER BY `rid`) AS __rwn_sorted
-- ----------------------------------------------------------------- statement
WITH __rwn_parts AS (
    SELECT __rwn_pos div 8589934592 AS part, count(*) AS size FROM __rwn_stage_<hex> GROUP BY __rwn_pos div 8589934592
),
__rwn_offsets AS (
    SELECT a.part, coalesce(sum(b.size), 0) AS rows_before
    FROM __rwn_parts a LEFT JOIN __rwn_parts b ON b.part < a.part
    GROUP BY a.part
)
SELECT o.rows_before + p.__rwn_pos % 8589934592 + 1 AS __rwn_rid, p.__rwn_row.*
FROM __rwn_stage_<hex> p JOIN __rwn_offsets o ON o.part = p.__rwn_pos div 8589934592
-- ----------------------------------------------------------------- statement
WITH
staged AS (SELECT * FROM __rwn_stage_<hex>),
stats AS (
    SELECT count(*) AS n,
        min(CAST(`Age` AS DOUBLE)) AS lo_1,
        max(CAST(`Age` AS DOUBLE)) AS hi_1,
        stddev_samp(CAST(`Age` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS sd_1,
        var_pop(CAST(`Age` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS var_1,
        count(*) FILTER (WHERE `Age` IS NULL OR NOT (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS bad_1,
        min(CAST(`Weight` AS DOUBLE)) AS lo_2,
        max(CAST(`Weight` AS DOUBLE)) AS hi_2,
        stddev_samp(CAST(`Weight` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS sd_2,
        var_pop(CAST(`Weight` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS var_2,
        count(*) FILTER (WHERE `Weight` IS NULL OR NOT (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS bad_2,
        min(CAST(`Height` AS DOUBLE)) AS lo_3,
        max(CAST(`Height` AS DOUBLE)) AS hi_3,
        stddev_samp(CAST(`Height` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS sd_3,
        var_pop(CAST(`Height` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS var_3,
        count(*) FILTER (WHERE `Height` IS NULL OR NOT (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS bad_3,
        count(`rid`) AS id_count,
        count(DISTINCT `rid`) AS id_distinct
    FROM staged
),
strata_sizes AS (
    SELECT coalesce(min(size), 0) AS smallest, min_by(label, size) AS smallest_label
    FROM (SELECT 'all records' AS label, count(*) AS size FROM staged )
),
params AS (
    SELECT *,
        lo_1 AS off_1,
        hi_1 - lo_1 AS sc_1,
        lo_2 AS off_2,
        hi_2 - lo_2 AS sc_2,
        lo_3 AS off_3,
        hi_3 - lo_3 AS sc_3,
        CASE
            WHEN n = 0 THEN 'the input has no records'
            WHEN bad_1 > 0 THEN 'column "Age"' || ' has ' || bad_1 || ' NULL, NaN or infinite values; clean them or use on_missing=\'drop\' (--on-missing drop)'
            WHEN hi_1 = lo_1 THEN 'column "Age"' || ' is constant (every value is ' || lo_1 || '); remove it from the distance columns'
            WHEN NOT coalesce((NOT isnan(hi_1 - lo_1) AND abs(hi_1 - lo_1) < 'Infinity'::DOUBLE) AND (NOT isnan(hi_1 - lo_1) AND abs(hi_1 - lo_1) < 'Infinity'::DOUBLE) AND (NOT isnan((hi_1 - lo_1) / (hi_1 - lo_1) * (hi_1 - lo_1) / (hi_1 - lo_1) * 3) AND abs((hi_1 - lo_1) / (hi_1 - lo_1) * (hi_1 - lo_1) / (hi_1 - lo_1) * 3) < 'Infinity'::DOUBLE), false) THEN 'column "Age"' || ' spans ' || lo_1 || ' to ' || hi_1 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_2 > 0 THEN 'column "Weight"' || ' has ' || bad_2 || ' NULL, NaN or infinite values; clean them or use on_missing=\'drop\' (--on-missing drop)'
            WHEN hi_2 = lo_2 THEN 'column "Weight"' || ' is constant (every value is ' || lo_2 || '); remove it from the distance columns'
            WHEN NOT coalesce((NOT isnan(hi_2 - lo_2) AND abs(hi_2 - lo_2) < 'Infinity'::DOUBLE) AND (NOT isnan(hi_2 - lo_2) AND abs(hi_2 - lo_2) < 'Infinity'::DOUBLE) AND (NOT isnan((hi_2 - lo_2) / (hi_2 - lo_2) * (hi_2 - lo_2) / (hi_2 - lo_2) * 3) AND abs((hi_2 - lo_2) / (hi_2 - lo_2) * (hi_2 - lo_2) / (hi_2 - lo_2) * 3) < 'Infinity'::DOUBLE), false) THEN 'column "Weight"' || ' spans ' || lo_2 || ' to ' || hi_2 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_3 > 0 THEN 'column "Height"' || ' has ' || bad_3 || ' NULL, NaN or infinite values; clean them or use on_missing=\'drop\' (--on-missing drop)'
            WHEN hi_3 = lo_3 THEN 'column "Height"' || ' is constant (every value is ' || lo_3 || '); remove it from the distance columns'
            WHEN NOT coalesce((NOT isnan(hi_3 - lo_3) AND abs(hi_3 - lo_3) < 'Infinity'::DOUBLE) AND (NOT isnan(hi_3 - lo_3) AND abs(hi_3 - lo_3) < 'Infinity'::DOUBLE) AND (NOT isnan((hi_3 - lo_3) / (hi_3 - lo_3) * (hi_3 - lo_3) / (hi_3 - lo_3) * 3) AND abs((hi_3 - lo_3) / (hi_3 - lo_3) * (hi_3 - lo_3) / (hi_3 - lo_3) * 3) < 'Infinity'::DOUBLE), false) THEN 'column "Height"' || ' spans ' || lo_3 || ' to ' || hi_3 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN smallest <= 5 THEN 'the input has ' || smallest || ' records; k = 5 needs at least 6 (k must be below the number of records in every stratum)'
            WHEN id_count < n THEN 'the id column "rid"' || ' has ' || (n - id_count) || ' NULL values; every record needs an id'
            WHEN id_distinct < id_count THEN 'the id column "rid"' || ' has duplicate values ('  || (id_count - id_distinct) || ' records share an id with another); every record needs its own id'
        END AS problem
    FROM stats, strata_sizes
),
settings AS (
    
    
    SELECT
        CASE WHEN problem IS NOT NULL THEN raise_error('rwn_sql: ' || problem)
             ELSE greatest(0.0::DOUBLE * 1.000001, coalesce(pow(12 * pow(((hi_1 - lo_1) / sc_1) * ((hi_2 - lo_2) / sc_2) * ((hi_3 - lo_3) / sc_3), 3.0 / 3) / (n * 4.1887902047863905), 1.0 / 3), 0.0), 1e-9 * diameter, 1e-12)
        END AS s0,
        diameter, grid_dims, off_1, sc_1, off_2, sc_2, off_3, sc_3
    FROM (SELECT *, sqrt(pow((hi_1 - lo_1) / sc_1, 2) + pow((hi_2 - lo_2) / sc_2, 2) + pow((hi_3 - lo_3) / sc_3, 2)) AS diameter, 3 AS grid_dims FROM params)
)
SELECT * FROM settings
-- ----------------------------------------------------------------- statement
WITH
staged AS (SELECT * FROM __rwn_stage_<hex>),
params AS (SELECT * FROM __rwn_stage_<hex>),
settings AS (SELECT * FROM __rwn_stage_<hex>),
scaled AS (
    
    
    SELECT s.__rwn_rid AS rid,
        CAST(s.`Age` AS DOUBLE) AS v_1,
        CAST(s.`Weight` AS DOUBLE) AS v_2,
        CAST(s.`Height` AS DOUBLE) AS v_3,
        (CAST(s.`Age` AS DOUBLE) - p.off_1) / p.sc_1 AS g_1,
        (CAST(s.`Weight` AS DOUBLE) - p.off_2) / p.sc_2 AS g_2,
        (CAST(s.`Height` AS DOUBLE) - p.off_3) / p.sc_3 AS g_3
    FROM staged s, params p, settings st
),
first_level AS (
    
    
    
    SELECT scaled.*,
        -CAST(round(log2(greatest(count(*) OVER (PARTITION BY (CASE WHEN (g_1 / (st.s0)) % 1.0D < 0 THEN (g_1 / (st.s0)) - (g_1 / (st.s0)) % 1.0D - 1.0D ELSE (g_1 / (st.s0)) - (g_1 / (st.s0)) % 1.0D END), (CASE WHEN (g_2 / (st.s0)) % 1.0D < 0 THEN (g_2 / (st.s0)) - (g_2 / (st.s0)) % 1.0D - 1.0D ELSE (g_2 / (st.s0)) - (g_2 / (st.s0)) % 1.0D END), (CASE WHEN (g_3 / (st.s0)) % 1.0D < 0 THEN (g_3 / (st.s0)) - (g_3 / (st.s0)) % 1.0D - 1.0D ELSE (g_3 / (st.s0)) - (g_3 / (st.s0)) % 1.0D END)) * 4.1887902047863905 / 6, 1)) * 1.0 / 3) AS INTEGER) AS first_lvl
    FROM scaled, settings st
),
points AS (
    
    
    
    
    
    
    SELECT rid, v_1, v_2, v_3,
        first_lvl - CAST(round(log2(greatest(count(*) OVER (PARTITION BY first_lvl, (CASE WHEN (g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D < 0 THEN (g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) - (g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D - 1.0D ELSE (g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) - (g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D END), (CASE WHEN (g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D < 0 THEN (g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) - (g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D - 1.0D ELSE (g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) - (g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D END), (CASE WHEN (g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D < 0 THEN (g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) - (g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D - 1.0D ELSE (g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) - (g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D END)) * 4.1887902047863905 / 6, 1)) * 1.0 / 3 - 0.375) AS INTEGER) AS start_lvl
    FROM first_level f, settings st
)
SELECT * FROM points
-- ----------------------------------------------------------------- statement
WITH
points AS (SELECT * FROM __rwn_stage_<hex>)
SELECT (SELECT min(start_lvl) FROM points) - 1 AS lvl, points.rid, start_lvl, false AS done,
        CAST(NULL AS ARRAY<STRUCT<d2: DOUBLE, j: BIGINT>>) AS members, NULL::DOUBLE AS radius2, NULL::DOUBLE AS dcr2
    FROM points
-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM __rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
WITH
points AS (SELECT * FROM __rwn_stage_<hex>),
settings AS (SELECT * FROM __rwn_stage_<hex>),
search AS (SELECT * FROM __rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),



active AS (
    
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    
    SELECT a.*,
            CAST((CASE WHEN (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_1,
            CAST((CASE WHEN (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_2,
            CAST((CASE WHEN (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END), 1 - (g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END)), g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END), 1 - (g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END)), g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END), 1 - (g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s)))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST((CASE WHEN (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST((CASE WHEN (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST((CASE WHEN (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3 FROM points p, settings st) p, level l
),
pairs AS (
    
    
    
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    
    
    
    
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        
        count(*) FILTER (WHERE d2 * 1.000000000000003::DOUBLE <= margin2) - 1 >= 5
            AND 0.0::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        array_sort(collect_list(named_struct('d2', d2, 'j', j)) FILTER (WHERE j <> i AND d2 <= margin2)) AS found
    FROM pairs
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN filter(found, e -> e.d2 <= (greatest(0.0::DOUBLE, element_at(found, CAST(5 AS INT)).d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0::DOUBLE, element_at(found, CAST(5 AS INT)).d2) END AS radius2,
    CASE WHEN done THEN element_at(found, CAST(1 AS INT)).d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM __rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
WITH
points AS (SELECT * FROM __rwn_stage_<hex>),
settings AS (SELECT * FROM __rwn_stage_<hex>),
search AS (SELECT * FROM __rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),



active AS (
    
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    
    SELECT a.*,
            CAST((CASE WHEN (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_1,
            CAST((CASE WHEN (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_2,
            CAST((CASE WHEN (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END), 1 - (g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END)), g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END), 1 - (g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END)), g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END), 1 - (g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s)))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST((CASE WHEN (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST((CASE WHEN (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST((CASE WHEN (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3 FROM points p, settings st) p, level l
),
pairs AS (
    
    
    
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    
    
    
    
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        
        count(*) FILTER (WHERE d2 * 1.000000000000003::DOUBLE <= margin2) - 1 >= 5
            AND 0.0::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        array_sort(collect_list(named_struct('d2', d2, 'j', j)) FILTER (WHERE j <> i AND d2 <= margin2)) AS found
    FROM pairs
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN filter(found, e -> e.d2 <= (greatest(0.0::DOUBLE, element_at(found, CAST(5 AS INT)).d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0::DOUBLE, element_at(found, CAST(5 AS INT)).d2) END AS radius2,
    CASE WHEN done THEN element_at(found, CAST(1 AS INT)).d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM __rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
WITH
points AS (SELECT * FROM __rwn_stage_<hex>),
settings AS (SELECT * FROM __rwn_stage_<hex>),
search AS (SELECT * FROM __rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),



active AS (
    
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    
    SELECT a.*,
            CAST((CASE WHEN (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_1,
            CAST((CASE WHEN (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_2,
            CAST((CASE WHEN (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END), 1 - (g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END)), g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END), 1 - (g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END)), g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END), 1 - (g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s)))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST((CASE WHEN (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST((CASE WHEN (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST((CASE WHEN (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3 FROM points p, settings st) p, level l
),
pairs AS (
    
    
    
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    
    
    
    
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        
        count(*) FILTER (WHERE d2 * 1.000000000000003::DOUBLE <= margin2) - 1 >= 5
            AND 0.0::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        array_sort(collect_list(named_struct('d2', d2, 'j', j)) FILTER (WHERE j <> i AND d2 <= margin2)) AS found
    FROM pairs
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN filter(found, e -> e.d2 <= (greatest(0.0::DOUBLE, element_at(found, CAST(5 AS INT)).d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0::DOUBLE, element_at(found, CAST(5 AS INT)).d2) END AS radius2,
    CASE WHEN done THEN element_at(found, CAST(1 AS INT)).d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM __rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
WITH
points AS (SELECT * FROM __rwn_stage_<hex>),
settings AS (SELECT * FROM __rwn_stage_<hex>),
search AS (SELECT * FROM __rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),



active AS (
    
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    
    SELECT a.*,
            CAST((CASE WHEN (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_1,
            CAST((CASE WHEN (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_2,
            CAST((CASE WHEN (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END), 1 - (g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END)), g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END), 1 - (g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END)), g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END), 1 - (g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s)))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST((CASE WHEN (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST((CASE WHEN (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST((CASE WHEN (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3 FROM points p, settings st) p, level l
),
pairs AS (
    
    
    
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    
    
    
    
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        
        count(*) FILTER (WHERE d2 * 1.000000000000003::DOUBLE <= margin2) - 1 >= 5
            AND 0.0::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        array_sort(collect_list(named_struct('d2', d2, 'j', j)) FILTER (WHERE j <> i AND d2 <= margin2)) AS found
    FROM pairs
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN filter(found, e -> e.d2 <= (greatest(0.0::DOUBLE, element_at(found, CAST(5 AS INT)).d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0::DOUBLE, element_at(found, CAST(5 AS INT)).d2) END AS radius2,
    CASE WHEN done THEN element_at(found, CAST(1 AS INT)).d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM __rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
WITH
points AS (SELECT * FROM __rwn_stage_<hex>),
settings AS (SELECT * FROM __rwn_stage_<hex>),
search AS (SELECT * FROM __rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),



active AS (
    
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    
    SELECT a.*,
            CAST((CASE WHEN (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_1,
            CAST((CASE WHEN (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_2,
            CAST((CASE WHEN (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END), 1 - (g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END)), g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END), 1 - (g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END)), g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END), 1 - (g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s)))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST((CASE WHEN (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST((CASE WHEN (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST((CASE WHEN (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3 FROM points p, settings st) p, level l
),
pairs AS (
    
    
    
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    
    
    
    
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        
        count(*) FILTER (WHERE d2 * 1.000000000000003::DOUBLE <= margin2) - 1 >= 5
            AND 0.0::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        array_sort(collect_list(named_struct('d2', d2, 'j', j)) FILTER (WHERE j <> i AND d2 <= margin2)) AS found
    FROM pairs
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN filter(found, e -> e.d2 <= (greatest(0.0::DOUBLE, element_at(found, CAST(5 AS INT)).d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0::DOUBLE, element_at(found, CAST(5 AS INT)).d2) END AS radius2,
    CASE WHEN done THEN element_at(found, CAST(1 AS INT)).d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM __rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
WITH
settings AS (SELECT * FROM __rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM __rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM __rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM __rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM __rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM __rwn_stage_<hex> WHERE done) AS done_rows),
hood AS (
    
    SELECT rid, members, radius2, dcr2, size(members) AS size
    FROM search, settings
    WHERE done AND settings.s0 > 0
)
SELECT * FROM hood
-- ----------------------------------------------------------------- statement
WITH
hood AS (SELECT * FROM __rwn_stage_<hex>)
SELECT rid AS record, size, sqrt(radius2) AS radius, sqrt(dcr2) AS dcr
FROM hood
ORDER BY record
-- ----------------------------------------------------------------- statement
SELECT min(`Age`) FILTER (WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE)), max(`Age`) FILTER (WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE)), min(`Weight`) FILTER (WHERE (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)), max(`Weight`) FILTER (WHERE (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)), min(`Height`) FILTER (WHERE (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)), max(`Height`) FILTER (WHERE (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)) FROM __rwn_src_<hex>
-- ----------------------------------------------------------------- statement
WITH src AS (SELECT * FROM __rwn_src_<hex> WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE) AND (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE) AND (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)),
stats AS (SELECT min(CAST(`Age` AS DOUBLE)) AS off_1, max(CAST(`Age` AS DOUBLE)) - min(CAST(`Age` AS DOUBLE)) AS sc_1, min(CAST(`Weight` AS DOUBLE)) AS off_2, max(CAST(`Weight` AS DOUBLE)) - min(CAST(`Weight` AS DOUBLE)) AS sc_2, min(CAST(`Height` AS DOUBLE)) AS off_3, max(CAST(`Height` AS DOUBLE)) - min(CAST(`Height` AS DOUBLE)) AS sc_3 FROM src),
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY (CASE WHEN ((CAST(s.`Age` AS DOUBLE) - t.off_1) / t.sc_1 / 0.05773502691896258::DOUBLE) % 1.0D < 0 THEN ((CAST(s.`Age` AS DOUBLE) - t.off_1) / t.sc_1 / 0.05773502691896258::DOUBLE) - ((CAST(s.`Age` AS DOUBLE) - t.off_1) / t.sc_1 / 0.05773502691896258::DOUBLE) % 1.0D - 1.0D ELSE ((CAST(s.`Age` AS DOUBLE) - t.off_1) / t.sc_1 / 0.05773502691896258::DOUBLE) - ((CAST(s.`Age` AS DOUBLE) - t.off_1) / t.sc_1 / 0.05773502691896258::DOUBLE) % 1.0D END), (CASE WHEN ((CAST(s.`Weight` AS DOUBLE) - t.off_2) / t.sc_2 / 0.05773502691896258::DOUBLE) % 1.0D < 0 THEN ((CAST(s.`Weight` AS DOUBLE) - t.off_2) / t.sc_2 / 0.05773502691896258::DOUBLE) - ((CAST(s.`Weight` AS DOUBLE) - t.off_2) / t.sc_2 / 0.05773502691896258::DOUBLE) % 1.0D - 1.0D ELSE ((CAST(s.`Weight` AS DOUBLE) - t.off_2) / t.sc_2 / 0.05773502691896258::DOUBLE) - ((CAST(s.`Weight` AS DOUBLE) - t.off_2) / t.sc_2 / 0.05773502691896258::DOUBLE) % 1.0D END), (CASE WHEN ((CAST(s.`Height` AS DOUBLE) - t.off_3) / t.sc_3 / 0.05773502691896258::DOUBLE) % 1.0D < 0 THEN ((CAST(s.`Height` AS DOUBLE) - t.off_3) / t.sc_3 / 0.05773502691896258::DOUBLE) - ((CAST(s.`Height` AS DOUBLE) - t.off_3) / t.sc_3 / 0.05773502691896258::DOUBLE) % 1.0D - 1.0D ELSE ((CAST(s.`Height` AS DOUBLE) - t.off_3) / t.sc_3 / 0.05773502691896258::DOUBLE) - ((CAST(s.`Height` AS DOUBLE) - t.off_3) / t.sc_3 / 0.05773502691896258::DOUBLE) % 1.0D END))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
SELECT monotonically_increasing_id() AS __rwn_pos, struct(*) AS __rwn_row
FROM (SELECT * FROM (WITH
src AS (
    SELECT * FROM __rwn_src_<hex>
)
SELECT * FROM src) AS __rwn_rows ORDER BY `rid`) AS __rwn_sorted
-- ----------------------------------------------------------------- statement
WITH __rwn_parts AS (
    SELECT __rwn_pos div 8589934592 AS part, count(*) AS size FROM __rwn_stage_<hex> GROUP BY __rwn_pos div 8589934592
),
__rwn_offsets AS (
    SELECT a.part, coalesce(sum(b.size), 0) AS rows_before
    FROM __rwn_parts a LEFT JOIN __rwn_parts b ON b.part < a.part
    GROUP BY a.part
)
SELECT o.rows_before + p.__rwn_pos % 8589934592 + 1 AS __rwn_rid, p.__rwn_row.*
FROM __rwn_stage_<hex> p JOIN __rwn_offsets o ON o.part = p.__rwn_pos div 8589934592
-- ----------------------------------------------------------------- statement
WITH
staged AS (SELECT * FROM __rwn_stage_<hex>),
stats AS (
    SELECT count(*) AS n,
        min(CAST(`Age` AS DOUBLE)) AS lo_1,
        max(CAST(`Age` AS DOUBLE)) AS hi_1,
        stddev_samp(CAST(`Age` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS sd_1,
        var_pop(CAST(`Age` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS var_1,
        count(*) FILTER (WHERE `Age` IS NULL OR NOT (NOT isnan(CAST(`Age` AS DOUBLE)) AND abs(CAST(`Age` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS bad_1,
        min(CAST(`Weight` AS DOUBLE)) AS lo_2,
        max(CAST(`Weight` AS DOUBLE)) AS hi_2,
        stddev_samp(CAST(`Weight` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS sd_2,
        var_pop(CAST(`Weight` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS var_2,
        count(*) FILTER (WHERE `Weight` IS NULL OR NOT (NOT isnan(CAST(`Weight` AS DOUBLE)) AND abs(CAST(`Weight` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS bad_2,
        min(CAST(`Height` AS DOUBLE)) AS lo_3,
        max(CAST(`Height` AS DOUBLE)) AS hi_3,
        stddev_samp(CAST(`Height` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS sd_3,
        var_pop(CAST(`Height` AS DOUBLE)) FILTER (WHERE (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS var_3,
        count(*) FILTER (WHERE `Height` IS NULL OR NOT (NOT isnan(CAST(`Height` AS DOUBLE)) AND abs(CAST(`Height` AS DOUBLE)) < 'Infinity'::DOUBLE)) AS bad_3,
        count(`rid`) AS id_count,
        count(DISTINCT `rid`) AS id_distinct
    FROM staged
),
strata_sizes AS (
    SELECT coalesce(min(size), 0) AS smallest, min_by(label, size) AS smallest_label
    FROM (SELECT 'all records' AS label, count(*) AS size FROM staged )
),
params AS (
    SELECT *,
        lo_1 AS off_1,
        hi_1 - lo_1 AS sc_1,
        lo_2 AS off_2,
        hi_2 - lo_2 AS sc_2,
        lo_3 AS off_3,
        hi_3 - lo_3 AS sc_3,
        CASE
            WHEN n = 0 THEN 'the input has no records'
            WHEN bad_1 > 0 THEN 'column "Age"' || ' has ' || bad_1 || ' NULL, NaN or infinite values; clean them or use on_missing=\'drop\' (--on-missing drop)'
            WHEN hi_1 = lo_1 THEN 'column "Age"' || ' is constant (every value is ' || lo_1 || '); remove it from the distance columns'
            WHEN NOT coalesce((NOT isnan(hi_1 - lo_1) AND abs(hi_1 - lo_1) < 'Infinity'::DOUBLE) AND (NOT isnan(hi_1 - lo_1) AND abs(hi_1 - lo_1) < 'Infinity'::DOUBLE) AND (NOT isnan((hi_1 - lo_1) / (hi_1 - lo_1) * (hi_1 - lo_1) / (hi_1 - lo_1) * 3) AND abs((hi_1 - lo_1) / (hi_1 - lo_1) * (hi_1 - lo_1) / (hi_1 - lo_1) * 3) < 'Infinity'::DOUBLE), false) THEN 'column "Age"' || ' spans ' || lo_1 || ' to ' || hi_1 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_2 > 0 THEN 'column "Weight"' || ' has ' || bad_2 || ' NULL, NaN or infinite values; clean them or use on_missing=\'drop\' (--on-missing drop)'
            WHEN hi_2 = lo_2 THEN 'column "Weight"' || ' is constant (every value is ' || lo_2 || '); remove it from the distance columns'
            WHEN NOT coalesce((NOT isnan(hi_2 - lo_2) AND abs(hi_2 - lo_2) < 'Infinity'::DOUBLE) AND (NOT isnan(hi_2 - lo_2) AND abs(hi_2 - lo_2) < 'Infinity'::DOUBLE) AND (NOT isnan((hi_2 - lo_2) / (hi_2 - lo_2) * (hi_2 - lo_2) / (hi_2 - lo_2) * 3) AND abs((hi_2 - lo_2) / (hi_2 - lo_2) * (hi_2 - lo_2) / (hi_2 - lo_2) * 3) < 'Infinity'::DOUBLE), false) THEN 'column "Weight"' || ' spans ' || lo_2 || ' to ' || hi_2 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_3 > 0 THEN 'column "Height"' || ' has ' || bad_3 || ' NULL, NaN or infinite values; clean them or use on_missing=\'drop\' (--on-missing drop)'
            WHEN hi_3 = lo_3 THEN 'column "Height"' || ' is constant (every value is ' || lo_3 || '); remove it from the distance columns'
            WHEN NOT coalesce((NOT isnan(hi_3 - lo_3) AND abs(hi_3 - lo_3) < 'Infinity'::DOUBLE) AND (NOT isnan(hi_3 - lo_3) AND abs(hi_3 - lo_3) < 'Infinity'::DOUBLE) AND (NOT isnan((hi_3 - lo_3) / (hi_3 - lo_3) * (hi_3 - lo_3) / (hi_3 - lo_3) * 3) AND abs((hi_3 - lo_3) / (hi_3 - lo_3) * (hi_3 - lo_3) / (hi_3 - lo_3) * 3) < 'Infinity'::DOUBLE), false) THEN 'column "Height"' || ' spans ' || lo_3 || ' to ' || hi_3 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN smallest <= 5 THEN 'the input has ' || smallest || ' records; k = 5 needs at least 6 (k must be below the number of records in every stratum)'
            WHEN id_count < n THEN 'the id column "rid"' || ' has ' || (n - id_count) || ' NULL values; every record needs an id'
            WHEN id_distinct < id_count THEN 'the id column "rid"' || ' has duplicate values ('  || (id_count - id_distinct) || ' records share an id with another); every record needs its own id'
        END AS problem
    FROM stats, strata_sizes
),
settings AS (
    
    
    SELECT
        CASE WHEN problem IS NOT NULL THEN raise_error('rwn_sql: ' || problem)
             ELSE greatest(0.1::DOUBLE * 1.000001, coalesce(pow(12 * pow(((hi_1 - lo_1) / sc_1) * ((hi_2 - lo_2) / sc_2) * ((hi_3 - lo_3) / sc_3), 3.0 / 3) / (n * 4.1887902047863905), 1.0 / 3), 0.0), 1e-9 * diameter, 1e-12)
        END AS s0,
        diameter, grid_dims, off_1, sc_1, off_2, sc_2, off_3, sc_3
    FROM (SELECT *, sqrt(pow((hi_1 - lo_1) / sc_1, 2) + pow((hi_2 - lo_2) / sc_2, 2) + pow((hi_3 - lo_3) / sc_3, 2)) AS diameter, 3 AS grid_dims FROM params)
)
SELECT * FROM settings
-- ----------------------------------------------------------------- statement
WITH
staged AS (SELECT * FROM __rwn_stage_<hex>),
params AS (SELECT * FROM __rwn_stage_<hex>),
settings AS (SELECT * FROM __rwn_stage_<hex>),
scaled AS (
    
    
    SELECT s.__rwn_rid AS rid,
        CAST(s.`Age` AS DOUBLE) AS v_1,
        CAST(s.`Weight` AS DOUBLE) AS v_2,
        CAST(s.`Height` AS DOUBLE) AS v_3,
        (CAST(s.`Age` AS DOUBLE) - p.off_1) / p.sc_1 AS g_1,
        (CAST(s.`Weight` AS DOUBLE) - p.off_2) / p.sc_2 AS g_2,
        (CAST(s.`Height` AS DOUBLE) - p.off_3) / p.sc_3 AS g_3
    FROM staged s, params p, settings st
),
first_level AS (
    
    
    
    SELECT scaled.*,
        -CAST(round(log2(greatest(count(*) OVER (PARTITION BY (CASE WHEN (g_1 / (st.s0)) % 1.0D < 0 THEN (g_1 / (st.s0)) - (g_1 / (st.s0)) % 1.0D - 1.0D ELSE (g_1 / (st.s0)) - (g_1 / (st.s0)) % 1.0D END), (CASE WHEN (g_2 / (st.s0)) % 1.0D < 0 THEN (g_2 / (st.s0)) - (g_2 / (st.s0)) % 1.0D - 1.0D ELSE (g_2 / (st.s0)) - (g_2 / (st.s0)) % 1.0D END), (CASE WHEN (g_3 / (st.s0)) % 1.0D < 0 THEN (g_3 / (st.s0)) - (g_3 / (st.s0)) % 1.0D - 1.0D ELSE (g_3 / (st.s0)) - (g_3 / (st.s0)) % 1.0D END)) * 4.1887902047863905 / 12, 1)) * 1.0 / 3) AS INTEGER) AS first_lvl
    FROM scaled, settings st
),
points AS (
    
    
    
    
    
    
    SELECT rid, v_1, v_2, v_3,
        greatest(first_lvl - CAST(round(log2(greatest(count(*) OVER (PARTITION BY first_lvl, (CASE WHEN (g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D < 0 THEN (g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) - (g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D - 1.0D ELSE (g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) - (g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D END), (CASE WHEN (g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D < 0 THEN (g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) - (g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D - 1.0D ELSE (g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) - (g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D END), (CASE WHEN (g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D < 0 THEN (g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) - (g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D - 1.0D ELSE (g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) - (g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl))) % 1.0D END)) * 4.1887902047863905 / 12, 1)) * 1.0 / 3 - 0.375) AS INTEGER), CAST(ceil(1.0 * log2(0.1::DOUBLE / (1.2 * st.s0))) AS INTEGER)) AS start_lvl
    FROM first_level f, settings st
)
SELECT * FROM points
-- ----------------------------------------------------------------- statement
WITH
points AS (SELECT * FROM __rwn_stage_<hex>)
SELECT (SELECT min(start_lvl) FROM points) - 1 AS lvl, points.rid, start_lvl, false AS done,
        CAST(NULL AS ARRAY<STRUCT<d2: DOUBLE, j: BIGINT>>) AS members, NULL::DOUBLE AS radius2, NULL::DOUBLE AS dcr2
    FROM points
-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM __rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
WITH
points AS (SELECT * FROM __rwn_stage_<hex>),
settings AS (SELECT * FROM __rwn_stage_<hex>),
search AS (SELECT * FROM __rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),



active AS (
    
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    
    SELECT a.*,
            CAST((CASE WHEN (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_1,
            CAST((CASE WHEN (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_2,
            CAST((CASE WHEN (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END), 1 - (g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END)), g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END), 1 - (g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END)), g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END), 1 - (g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s)))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST((CASE WHEN (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST((CASE WHEN (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST((CASE WHEN (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3 FROM points p, settings st) p, level l
),
pairs AS (
    
    
    
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    
    
    
    
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        
        count(*) FILTER (WHERE d2 * 1.000000000000003::DOUBLE <= margin2) - 1 >= 5
            AND 0.010000000000000002::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        array_sort(collect_list(named_struct('d2', d2, 'j', j)) FILTER (WHERE j <> i AND d2 <= margin2)) AS found
    FROM pairs
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN filter(found, e -> e.d2 <= (greatest(0.010000000000000002::DOUBLE, element_at(found, CAST(5 AS INT)).d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.010000000000000002::DOUBLE, element_at(found, CAST(5 AS INT)).d2) END AS radius2,
    CASE WHEN done THEN element_at(found, CAST(1 AS INT)).d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM __rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
WITH
points AS (SELECT * FROM __rwn_stage_<hex>),
settings AS (SELECT * FROM __rwn_stage_<hex>),
search AS (SELECT * FROM __rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),



active AS (
    
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    
    SELECT a.*,
            CAST((CASE WHEN (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_1,
            CAST((CASE WHEN (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_2,
            CAST((CASE WHEN (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END), 1 - (g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END)), g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END), 1 - (g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END)), g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END), 1 - (g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s)))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST((CASE WHEN (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST((CASE WHEN (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST((CASE WHEN (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3 FROM points p, settings st) p, level l
),
pairs AS (
    
    
    
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    
    
    
    
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        
        count(*) FILTER (WHERE d2 * 1.000000000000003::DOUBLE <= margin2) - 1 >= 5
            AND 0.010000000000000002::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        array_sort(collect_list(named_struct('d2', d2, 'j', j)) FILTER (WHERE j <> i AND d2 <= margin2)) AS found
    FROM pairs
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN filter(found, e -> e.d2 <= (greatest(0.010000000000000002::DOUBLE, element_at(found, CAST(5 AS INT)).d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.010000000000000002::DOUBLE, element_at(found, CAST(5 AS INT)).d2) END AS radius2,
    CASE WHEN done THEN element_at(found, CAST(1 AS INT)).d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM __rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
WITH
points AS (SELECT * FROM __rwn_stage_<hex>),
settings AS (SELECT * FROM __rwn_stage_<hex>),
search AS (SELECT * FROM __rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),



active AS (
    
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    
    SELECT a.*,
            CAST((CASE WHEN (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_1,
            CAST((CASE WHEN (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_2,
            CAST((CASE WHEN (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END), 1 - (g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END)), g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END), 1 - (g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END)), g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END), 1 - (g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s)))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST((CASE WHEN (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST((CASE WHEN (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST((CASE WHEN (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3 FROM points p, settings st) p, level l
),
pairs AS (
    
    
    
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    
    
    
    
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        
        count(*) FILTER (WHERE d2 * 1.000000000000003::DOUBLE <= margin2) - 1 >= 5
            AND 0.010000000000000002::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        array_sort(collect_list(named_struct('d2', d2, 'j', j)) FILTER (WHERE j <> i AND d2 <= margin2)) AS found
    FROM pairs
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN filter(found, e -> e.d2 <= (greatest(0.010000000000000002::DOUBLE, element_at(found, CAST(5 AS INT)).d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.010000000000000002::DOUBLE, element_at(found, CAST(5 AS INT)).d2) END AS radius2,
    CASE WHEN done THEN element_at(found, CAST(1 AS INT)).d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM __rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
WITH
points AS (SELECT * FROM __rwn_stage_<hex>),
settings AS (SELECT * FROM __rwn_stage_<hex>),
search AS (SELECT * FROM __rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),



active AS (
    
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    
    SELECT a.*,
            CAST((CASE WHEN (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / s, -1e12), 1e12)) - (least(greatest(g_1 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_1,
            CAST((CASE WHEN (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / s, -1e12), 1e12)) - (least(greatest(g_2 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_2,
            CAST((CASE WHEN (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / s, -1e12), 1e12)) - (least(greatest(g_3 / s, -1e12), 1e12)) % 1.0D END) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END), 1 - (g_1 / s - (CASE WHEN (g_1 / s) % 1.0D < 0 THEN (g_1 / s) - (g_1 / s) % 1.0D - 1.0D ELSE (g_1 / s) - (g_1 / s) % 1.0D END)), g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END), 1 - (g_2 / s - (CASE WHEN (g_2 / s) % 1.0D < 0 THEN (g_2 / s) - (g_2 / s) % 1.0D - 1.0D ELSE (g_2 / s) - (g_2 / s) % 1.0D END)), g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END), 1 - (g_3 / s - (CASE WHEN (g_3 / s) % 1.0D < 0 THEN (g_3 / s) - (g_3 / s) % 1.0D - 1.0D ELSE (g_3 / s) - (g_3 / s) % 1.0D END))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s)))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST((CASE WHEN (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_1 / l.s, -1e12), 1e12)) - (least(greatest(g_1 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST((CASE WHEN (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_2 / l.s, -1e12), 1e12)) - (least(greatest(g_2 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST((CASE WHEN (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D < 0 THEN (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D - 1.0D ELSE (least(greatest(g_3 / l.s, -1e12), 1e12)) - (least(greatest(g_3 / l.s, -1e12), 1e12)) % 1.0D END) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3 FROM points p, settings st) p, level l
),
pairs AS (
    
    
    
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    
    
    
    
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        
        count(*) FILTER (WHERE d2 * 1.000000000000003::DOUBLE <= margin2) - 1 >= 5
            AND 0.010000000000000002::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        array_sort(collect_list(named_struct('d2', d2, 'j', j)) FILTER (WHERE j <> i AND d2 <= margin2)) AS found
    FROM pairs
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN filter(found, e -> e.d2 <= (greatest(0.010000000000000002::DOUBLE, element_at(found, CAST(5 AS INT)).d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.010000000000000002::DOUBLE, element_at(found, CAST(5 AS INT)).d2) END AS radius2,
    CASE WHEN done THEN element_at(found, CAST(1 AS INT)).d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM __rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
WITH
settings AS (SELECT * FROM __rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM __rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM __rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM __rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM __rwn_stage_<hex> WHERE done) AS done_rows),
hood AS (
    
    SELECT rid, members, radius2, dcr2, size(members) AS size
    FROM search, settings
    WHERE done AND settings.s0 > 0
)
SELECT * FROM hood
-- ----------------------------------------------------------------- statement
WITH
staged AS (SELECT * FROM __rwn_stage_<hex>),
hood AS (SELECT * FROM __rwn_stage_<hex>),



draws AS (
    SELECT rid, members, size,
        md5((SELECT md5(k || '|rwn.perturb|Age') FROM __rwn_key_<hex>) || CAST(__rwn_ids.__rwn_record AS STRING)) AS h_1,
        md5((SELECT md5(k || '|rwn.perturb|Weight') FROM __rwn_key_<hex>) || CAST(__rwn_ids.__rwn_record AS STRING)) AS h_2,
        md5((SELECT md5(k || '|rwn.perturb|Height') FROM __rwn_key_<hex>) || CAST(__rwn_ids.__rwn_record AS STRING)) AS h_3
    FROM hood
    JOIN (SELECT __rwn_rid, CAST(`rid` AS STRING) AS __rwn_record FROM staged) AS __rwn_ids ON __rwn_ids.__rwn_rid = hood.rid
),
picks AS (
    SELECT rid,
        CASE WHEN CAST(pmod(CAST(conv(concat(substr(h_1, 31, 1), substr(h_1, 32, 1), substr(h_1, 29, 1), substr(h_1, 30, 1), substr(h_1, 27, 1), substr(h_1, 28, 1), substr(h_1, 25, 1), substr(h_1, 26, 1), substr(h_1, 23, 1), substr(h_1, 24, 1), substr(h_1, 21, 1), substr(h_1, 22, 1), substr(h_1, 19, 1)), 16, 10) AS DECIMAL(20, 0)), 4503599627370496) AS BIGINT) < 4503599627370496.0::DOUBLE THEN element_at(members, CAST(least(size, 1 + CAST(floor(CAST(CAST(pmod(CAST(conv(concat(substr(h_1, 20, 1), substr(h_1, 17, 1), substr(h_1, 18, 1), substr(h_1, 15, 1), substr(h_1, 16, 1), substr(h_1, 13, 1), substr(h_1, 14, 1), substr(h_1, 11, 1), substr(h_1, 12, 1), substr(h_1, 9, 1), substr(h_1, 10, 1), substr(h_1, 7, 1), substr(h_1, 8, 1)), 16, 10) AS DECIMAL(20, 0)), 4503599627370496) AS BIGINT) AS DOUBLE) / 4503599627370496.0D * size) AS BIGINT)) AS INT)).j ELSE rid END AS donor_1,
        CASE WHEN CAST(pmod(CAST(conv(concat(substr(h_2, 31, 1), substr(h_2, 32, 1), substr(h_2, 29, 1), substr(h_2, 30, 1), substr(h_2, 27, 1), substr(h_2, 28, 1), substr(h_2, 25, 1), substr(h_2, 26, 1), substr(h_2, 23, 1), substr(h_2, 24, 1), substr(h_2, 21, 1), substr(h_2, 22, 1), substr(h_2, 19, 1)), 16, 10) AS DECIMAL(20, 0)), 4503599627370496) AS BIGINT) < 4503599627370496.0::DOUBLE THEN element_at(members, CAST(least(size, 1 + CAST(floor(CAST(CAST(pmod(CAST(conv(concat(substr(h_2, 20, 1), substr(h_2, 17, 1), substr(h_2, 18, 1), substr(h_2, 15, 1), substr(h_2, 16, 1), substr(h_2, 13, 1), substr(h_2, 14, 1), substr(h_2, 11, 1), substr(h_2, 12, 1), substr(h_2, 9, 1), substr(h_2, 10, 1), substr(h_2, 7, 1), substr(h_2, 8, 1)), 16, 10) AS DECIMAL(20, 0)), 4503599627370496) AS BIGINT) AS DOUBLE) / 4503599627370496.0D * size) AS BIGINT)) AS INT)).j ELSE rid END AS donor_2,
        CASE WHEN CAST(pmod(CAST(conv(concat(substr(h_3, 31, 1), substr(h_3, 32, 1), substr(h_3, 29, 1), substr(h_3, 30, 1), substr(h_3, 27, 1), substr(h_3, 28, 1), substr(h_3, 25, 1), substr(h_3, 26, 1), substr(h_3, 23, 1), substr(h_3, 24, 1), substr(h_3, 21, 1), substr(h_3, 22, 1), substr(h_3, 19, 1)), 16, 10) AS DECIMAL(20, 0)), 4503599627370496) AS BIGINT) < 4503599627370496.0::DOUBLE THEN element_at(members, CAST(least(size, 1 + CAST(floor(CAST(CAST(pmod(CAST(conv(concat(substr(h_3, 20, 1), substr(h_3, 17, 1), substr(h_3, 18, 1), substr(h_3, 15, 1), substr(h_3, 16, 1), substr(h_3, 13, 1), substr(h_3, 14, 1), substr(h_3, 11, 1), substr(h_3, 12, 1), substr(h_3, 9, 1), substr(h_3, 10, 1), substr(h_3, 7, 1), substr(h_3, 8, 1)), 16, 10) AS DECIMAL(20, 0)), 4503599627370496) AS BIGINT) AS DOUBLE) / 4503599627370496.0D * size) AS BIGINT)) AS INT)).j ELSE rid END AS donor_3
    FROM draws
),
drawn AS (SELECT count(*) AS draws FROM picks),
lookup AS (
    
    
    
    SELECT staged.*
    FROM staged, drawn
    WHERE drawn.draws >= 0
)

SELECT p.rid AS record, u.column_name, u.donor, h.size
FROM picks p JOIN hood h ON h.rid = p.rid
    LATERAL VIEW inline(array(named_struct('column_name', 'Age', 'donor', p.donor_1), named_struct('column_name', 'Weight', 'donor', p.donor_2), named_struct('column_name', 'Height', 'donor', p.donor_3))) u AS column_name, donor
ORDER BY record, column_name
-- ----------------------------------------------------------------- statement
SELECT count(*), count(*) - count(`rid`), count(DISTINCT `rid`) FROM __rwn_src_<hex>
-- ----------------------------------------------------------------- statement
SELECT CAST(v AS STRING), n FROM (SELECT `occupation` AS v, count(*) AS n FROM __rwn_src_<hex> GROUP BY `occupation`) AS __rwn_counts
-- ----------------------------------------------------------------- statement
SELECT CAST(CAST('?' AS string) AS STRING), CAST(CAST('Adm-clerical' AS string) AS STRING), CAST(CAST('Armed-Forces' AS string) AS STRING), CAST(CAST('Craft-repair' AS string) AS STRING), CAST(CAST('Exec-managerial' AS string) AS STRING), CAST(CAST('Farming-fishing' AS string) AS STRING), CAST(CAST('Handlers-cleaners' AS string) AS STRING), CAST(CAST('Machine-op-inspct' AS string) AS STRING), CAST(CAST('Other-service' AS string) AS STRING), CAST(CAST('Priv-house-serv' AS string) AS STRING), CAST(CAST('Prof-specialty' AS string) AS STRING), CAST(CAST('Protective-serv' AS string) AS STRING), CAST(CAST('Sales' AS string) AS STRING), CAST(CAST('Tech-support' AS string) AS STRING), CAST(CAST('Transport-moving' AS string) AS STRING)
-- ----------------------------------------------------------------- statement








SELECT `sex`,
    `race`,
    CASE WHEN `occupation` IS NULL THEN raise_error('rwn_sql: the sensitive column "occupation" has NULL values; clean them or use nulls=\'drop\' (--nulls drop; those records are then left out)')
        WHEN CAST(pmod(CAST(conv(concat(substr(__rwn_h, 31, 1), substr(__rwn_h, 32, 1), substr(__rwn_h, 29, 1), substr(__rwn_h, 30, 1), substr(__rwn_h, 27, 1), substr(__rwn_h, 28, 1), substr(__rwn_h, 25, 1), substr(__rwn_h, 26, 1), substr(__rwn_h, 23, 1), substr(__rwn_h, 24, 1), substr(__rwn_h, 21, 1), substr(__rwn_h, 22, 1), substr(__rwn_h, 19, 1)), 16, 10) AS DECIMAL(20, 0)), 4503599627370496) AS BIGINT) < 2702159776422298 THEN `occupation`
        ELSE element_at(array(CAST('?' AS string), CAST('Adm-clerical' AS string), CAST('Armed-Forces' AS string), CAST('Craft-repair' AS string), CAST('Exec-managerial' AS string), CAST('Farming-fishing' AS string), CAST('Handlers-cleaners' AS string), CAST('Machine-op-inspct' AS string), CAST('Other-service' AS string), CAST('Priv-house-serv' AS string), CAST('Prof-specialty' AS string), CAST('Protective-serv' AS string), CAST('Sales' AS string), CAST('Tech-support' AS string), CAST('Transport-moving' AS string)), CAST(1 + CAST(floor(CAST(CAST(pmod(CAST(conv(concat(substr(__rwn_h, 20, 1), substr(__rwn_h, 17, 1), substr(__rwn_h, 18, 1), substr(__rwn_h, 15, 1), substr(__rwn_h, 16, 1), substr(__rwn_h, 13, 1), substr(__rwn_h, 14, 1), substr(__rwn_h, 11, 1), substr(__rwn_h, 12, 1), substr(__rwn_h, 9, 1), substr(__rwn_h, 10, 1), substr(__rwn_h, 7, 1), substr(__rwn_h, 8, 1)), 16, 10) AS DECIMAL(20, 0)), 4503599627370496) AS BIGINT) AS DOUBLE) / 4503599627370496.0D * 15) AS BIGINT) AS INT)) END AS `occupation`
FROM (
    SELECT *, md5((SELECT md5(k || '|rp.randomize|occupation') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)) AS __rwn_h, CAST(pmod(CAST(conv(concat(substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 15, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 16, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 13, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 14, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 11, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 12, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 9, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 10, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 7, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 8, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 5, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 6, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 3, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 4, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 1, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 2, 1)), 16, 10) AS DECIMAL(20, 0)), 4611686018427387904) AS BIGINT) AS __rwn_o
    FROM (
        SELECT CAST(`rid` AS STRING) AS __rwn_rid, * FROM __rwn_src_<hex>
    ) AS __rwn_units
) AS __rwn_draws
ORDER BY __rwn_o, __rwn_rid

-- ----------------------------------------------------------------- statement
SELECT count(*), count(*) - count(`rid`), count(DISTINCT `rid`) FROM __rwn_src_<hex>
-- ----------------------------------------------------------------- statement
SELECT CAST(v AS STRING), n FROM (SELECT `occupation` AS v, count(*) AS n FROM __rwn_src_<hex> GROUP BY `occupation`) AS __rwn_counts
-- ----------------------------------------------------------------- statement
SELECT CAST(CAST('?' AS string) AS STRING), CAST(CAST('Adm-clerical' AS string) AS STRING), CAST(CAST('Armed-Forces' AS string) AS STRING), CAST(CAST('Craft-repair' AS string) AS STRING), CAST(CAST('Exec-managerial' AS string) AS STRING), CAST(CAST('Farming-fishing' AS string) AS STRING), CAST(CAST('Handlers-cleaners' AS string) AS STRING), CAST(CAST('Machine-op-inspct' AS string) AS STRING), CAST(CAST('Other-service' AS string) AS STRING), CAST(CAST('Priv-house-serv' AS string) AS STRING), CAST(CAST('Prof-specialty' AS string) AS STRING), CAST(CAST('Protective-serv' AS string) AS STRING), CAST(CAST('Sales' AS string) AS STRING), CAST(CAST('Tech-support' AS string) AS STRING), CAST(CAST('Transport-moving' AS string) AS STRING)
-- ----------------------------------------------------------------- statement
SELECT n, count(*) FROM (SELECT count(*) AS n FROM __rwn_src_<hex> GROUP BY `sex`, `race`) AS __rwn_groups GROUP BY n
-- ----------------------------------------------------------------- statement
SELECT `sex`, `race`, `occupation` AS value, count(*) AS value_count FROM __rwn_src_<hex> GROUP BY `sex`, `race`, `occupation`
-- ----------------------------------------------------------------- statement
SELECT greatest(0.45::DOUBLE + 0.55::DOUBLE / CAST(15 AS DOUBLE), (SELECT max(s) / sum(s) FROM (SELECT CAST(sum(value_count) AS DOUBLE) AS s FROM __rwn_stage_<hex> GROUP BY value) AS __rwn_mode))
-- ----------------------------------------------------------------- statement
SELECT count(*) FILTER (WHERE (group_size >= 2 AND l_distinct < 2)), coalesce(sum(group_size) FILTER (WHERE (group_size >= 2 AND l_distinct < 2)), 0), count(*) FILTER (WHERE (group_size >= 2 AND top_share > 0.4866666666666667::DOUBLE)), coalesce(sum(group_size) FILTER (WHERE (group_size >= 2 AND top_share > 0.4866666666666667::DOUBLE)), 0), coalesce(sum(group_size) FILTER (WHERE (group_size >= 2 AND l_distinct < 2) OR (group_size >= 2 AND top_share > 0.4866666666666667::DOUBLE)), 0) FROM (SELECT sum(value_count) AS group_size, count(*) AS l_distinct, exp(ln(sum(CAST(value_count AS DOUBLE))) - sum(CAST(value_count AS DOUBLE) * ln(CAST(value_count AS DOUBLE))) / sum(CAST(value_count AS DOUBLE))) AS l_entropy, max(CAST(value_count AS DOUBLE)) / sum(CAST(value_count AS DOUBLE)) AS top_share FROM (SELECT `sex`, `race`, value, sum(value_count) AS value_count FROM __rwn_stage_<hex> GROUP BY `sex`, `race`, value) AS __rwn_gv GROUP BY `sex`, `race`) AS __rwn_div
-- ----------------------------------------------------------------- statement
SELECT (SELECT 20 * max(s) >= 19 * sum(s) FROM (SELECT sum(value_count) AS s FROM __rwn_stage_<hex> GROUP BY value) AS __rwn_v), count(DISTINCT `sex`) + max(CASE WHEN `sex` IS NULL THEN 1 ELSE 0 END), count(DISTINCT `race`) + max(CASE WHEN `race` IS NULL THEN 1 ELSE 0 END) FROM __rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT 0 AS set_index, coalesce(sum(n) FILTER (WHERE n >= 2), 0) AS records,
    coalesce(sum(top) FILTER (WHERE n >= 2 AND 20 * top >= 19 * n), 0) AS exposed,
    sum(n * ln(n) - slc) / sum(n) / ln(2) AS cond_entropy
FROM (SELECT `sex`, sum(c) AS n, max(c) AS top, sum(c * ln(c)) AS slc
      FROM (SELECT `sex`, value, CAST(sum(value_count) AS DOUBLE) AS c FROM __rwn_stage_<hex>
            GROUP BY `sex`, value) AS __rwn_cv GROUP BY `sex`) AS __rwn_cls
UNION ALL
SELECT 1 AS set_index, coalesce(sum(n) FILTER (WHERE n >= 2), 0) AS records,
    coalesce(sum(top) FILTER (WHERE n >= 2 AND 20 * top >= 19 * n), 0) AS exposed,
    sum(n * ln(n) - slc) / sum(n) / ln(2) AS cond_entropy
FROM (SELECT `race`, sum(c) AS n, max(c) AS top, sum(c * ln(c)) AS slc
      FROM (SELECT `race`, value, CAST(sum(value_count) AS DOUBLE) AS c FROM __rwn_stage_<hex>
            GROUP BY `race`, value) AS __rwn_cv GROUP BY `race`) AS __rwn_cls
-- ----------------------------------------------------------------- statement
SELECT 0 AS set_index, coalesce(sum(n) FILTER (WHERE n >= 2), 0) AS records,
    coalesce(sum(top) FILTER (WHERE n >= 2 AND 20 * top >= 19 * n), 0) AS exposed,
    sum(n * ln(n) - slc) / sum(n) / ln(2) AS cond_entropy
FROM (SELECT `sex`, `race`, sum(c) AS n, max(c) AS top, sum(c * ln(c)) AS slc
      FROM (SELECT `sex`, `race`, value, CAST(sum(value_count) AS DOUBLE) AS c FROM __rwn_stage_<hex>
            GROUP BY `sex`, `race`, value) AS __rwn_cv GROUP BY `sex`, `race`) AS __rwn_cls
-- ----------------------------------------------------------------- statement








SELECT `sex`,
    `race`,
    CASE WHEN `occupation` IS NULL THEN raise_error('rwn_sql: the sensitive column "occupation" has NULL values; clean them or use nulls=\'drop\' (--nulls drop; those records are then left out)')
        WHEN CAST(pmod(CAST(conv(concat(substr(__rwn_h, 31, 1), substr(__rwn_h, 32, 1), substr(__rwn_h, 29, 1), substr(__rwn_h, 30, 1), substr(__rwn_h, 27, 1), substr(__rwn_h, 28, 1), substr(__rwn_h, 25, 1), substr(__rwn_h, 26, 1), substr(__rwn_h, 23, 1), substr(__rwn_h, 24, 1), substr(__rwn_h, 21, 1), substr(__rwn_h, 22, 1), substr(__rwn_h, 19, 1)), 16, 10) AS DECIMAL(20, 0)), 4503599627370496) AS BIGINT) < 2026619832316724 THEN `occupation`
        ELSE element_at(array(CAST('?' AS string), CAST('Adm-clerical' AS string), CAST('Armed-Forces' AS string), CAST('Craft-repair' AS string), CAST('Exec-managerial' AS string), CAST('Farming-fishing' AS string), CAST('Handlers-cleaners' AS string), CAST('Machine-op-inspct' AS string), CAST('Other-service' AS string), CAST('Priv-house-serv' AS string), CAST('Prof-specialty' AS string), CAST('Protective-serv' AS string), CAST('Sales' AS string), CAST('Tech-support' AS string), CAST('Transport-moving' AS string)), CAST(1 + CAST(floor(CAST(CAST(pmod(CAST(conv(concat(substr(__rwn_h, 20, 1), substr(__rwn_h, 17, 1), substr(__rwn_h, 18, 1), substr(__rwn_h, 15, 1), substr(__rwn_h, 16, 1), substr(__rwn_h, 13, 1), substr(__rwn_h, 14, 1), substr(__rwn_h, 11, 1), substr(__rwn_h, 12, 1), substr(__rwn_h, 9, 1), substr(__rwn_h, 10, 1), substr(__rwn_h, 7, 1), substr(__rwn_h, 8, 1)), 16, 10) AS DECIMAL(20, 0)), 4503599627370496) AS BIGINT) AS DOUBLE) / 4503599627370496.0D * 15) AS BIGINT) AS INT)) END AS `occupation`
FROM (
    SELECT *, md5((SELECT md5(k || '|rp.randomize|occupation') FROM __rwn_key_<hex>) || CAST(__rwn_unit AS STRING)) AS __rwn_h, CAST(pmod(CAST(conv(concat(substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 15, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 16, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 13, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 14, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 11, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 12, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 9, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 10, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 7, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 8, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 5, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 6, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 3, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 4, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 1, 1), substr(md5((SELECT md5(k || '|rp.order|') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 2, 1)), 16, 10) AS DECIMAL(20, 0)), 4611686018427387904) AS BIGINT) AS __rwn_o
    FROM (
        
        
        SELECT 'g' || __rwn_gid || 'b' || ((__rwn_pos - 1) % __rwn_trials) AS __rwn_unit,
            __rwn_rid, `sex`, `race`, `occupation`
        FROM (SELECT __rwn_g.*, CASE WHEN __rwn_tr.t IS NULL THEN raise_error('rwn_sql: a personal group size is missing from the trials table; rebuild the SQL for this data') WHEN __rwn_tr.t = 0 THEN raise_error('rwn_sql: a personal group of ' || __rwn_tr.size || ' records cannot pass the test with any number of blocks') ELSE __rwn_tr.t END AS __rwn_trials
            FROM (
                SELECT *, min(__rwn_rid) OVER (PARTITION BY `sex`, `race`) AS __rwn_gid,
                    row_number() OVER (PARTITION BY `sex`, `race` ORDER BY CAST(pmod(CAST(conv(concat(substr(md5((SELECT md5(k || '|rp.block|occupation') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 15, 1), substr(md5((SELECT md5(k || '|rp.block|occupation') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 16, 1), substr(md5((SELECT md5(k || '|rp.block|occupation') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 13, 1), substr(md5((SELECT md5(k || '|rp.block|occupation') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 14, 1), substr(md5((SELECT md5(k || '|rp.block|occupation') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 11, 1), substr(md5((SELECT md5(k || '|rp.block|occupation') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 12, 1), substr(md5((SELECT md5(k || '|rp.block|occupation') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 9, 1), substr(md5((SELECT md5(k || '|rp.block|occupation') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 10, 1), substr(md5((SELECT md5(k || '|rp.block|occupation') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 7, 1), substr(md5((SELECT md5(k || '|rp.block|occupation') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 8, 1), substr(md5((SELECT md5(k || '|rp.block|occupation') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 5, 1), substr(md5((SELECT md5(k || '|rp.block|occupation') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 6, 1), substr(md5((SELECT md5(k || '|rp.block|occupation') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 3, 1), substr(md5((SELECT md5(k || '|rp.block|occupation') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 4, 1), substr(md5((SELECT md5(k || '|rp.block|occupation') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 1, 1), substr(md5((SELECT md5(k || '|rp.block|occupation') FROM __rwn_key_<hex>) || CAST(__rwn_rid AS STRING)), 2, 1)), 16, 10) AS DECIMAL(20, 0)), 4611686018427387904) AS BIGINT), __rwn_rid) AS __rwn_pos,
                    count(*) OVER (PARTITION BY `sex`, `race`) AS __rwn_gsize
                FROM (SELECT CAST(`rid` AS STRING) AS __rwn_rid, * FROM __rwn_src_<hex>) AS __rwn_staged) __rwn_g
            LEFT JOIN (VALUES (6, 5), (7, 6), (12, 5), (17, 5), (32, 5), (60, 8), (146, 8), (170, 8), (775, 8), (1775, 8)) AS __rwn_tr(size, t) ON __rwn_tr.size = __rwn_g.__rwn_gsize)
    ) AS __rwn_units
) AS __rwn_draws
ORDER BY __rwn_o, __rwn_rid

-- ----------------------------------------------------------------- statement
SELECT CAST(v AS STRING), n FROM (SELECT `occupation` AS v, count(*) AS n FROM __rwn_src_<hex> GROUP BY `occupation`) AS __rwn_counts
-- ----------------------------------------------------------------- statement
SELECT CAST(CAST('?' AS string) AS STRING), CAST(CAST('Adm-clerical' AS string) AS STRING), CAST(CAST('Armed-Forces' AS string) AS STRING), CAST(CAST('Craft-repair' AS string) AS STRING), CAST(CAST('Exec-managerial' AS string) AS STRING), CAST(CAST('Farming-fishing' AS string) AS STRING), CAST(CAST('Handlers-cleaners' AS string) AS STRING), CAST(CAST('Machine-op-inspct' AS string) AS STRING), CAST(CAST('Other-service' AS string) AS STRING), CAST(CAST('Priv-house-serv' AS string) AS STRING), CAST(CAST('Prof-specialty' AS string) AS STRING), CAST(CAST('Protective-serv' AS string) AS STRING), CAST(CAST('Sales' AS string) AS STRING), CAST(CAST('Tech-support' AS string) AS STRING), CAST(CAST('Transport-moving' AS string) AS STRING)
-- ----------------------------------------------------------------- statement
WITH









src AS (
    SELECT * FROM __rwn_src_<hex>
),
staged AS (
    SELECT * FROM src
),
counts AS (
    SELECT `sex`, `race`, `occupation` AS value, count(*) AS value_count
    FROM staged
    GROUP BY `sex`, `race`, `occupation`
),
groups AS (
    SELECT g.*, g.group_size AS trials
    FROM (SELECT `sex`, `race`, sum(value_count) AS group_size FROM counts GROUP BY `sex`, `race`) g
),
cells AS (
    SELECT c.*, g.group_size, g.trials, g.trials < g.group_size AS enforced,
        c.value_count / g.group_size AS frequency,
        CASE WHEN g.trials < g.group_size THEN 1.0 ELSE c.value_count / g.group_size END AS f_eval
    FROM counts c JOIN groups g ON c.`sex` IS NOT DISTINCT FROM g.`sex` AND c.`race` IS NOT DISTINCT FROM g.`race`
),
stats AS (
    SELECT *,
        trials * (f_eval * 0.45::DOUBLE + 0.03666666666666667::DOUBLE) AS mu,
        0.5::DOUBLE * f_eval * 0.45::DOUBLE / (f_eval * 0.45::DOUBLE + 0.03666666666666667::DOUBLE) AS theta,
        CASE WHEN enforced THEN trials ELSE value_count END AS tails_key
    FROM cells
),
tails AS (
    
    SELECT enforced, group_size, tails_key, NULL AS exact FROM stats WHERE false
),
bounds AS (
    SELECT s.*,
        exp(mu * (theta - (1 + theta) * ln(1 + theta))) AS chernoff_upper,
        CASE WHEN theta < 1 THEN exp(mu * (-theta - (1 - theta) * ln(1 - theta))) ELSE exp(-mu) END AS chernoff_lower,
        t.exact
    FROM stats s JOIN tails t USING (enforced, group_size, tails_key)
)

SELECT * FROM counts
-- ----------------------------------------------------------------- statement
WITH









src AS (
    SELECT * FROM __rwn_src_<hex>
),
staged AS (
    SELECT * FROM src
),
counts AS (
    SELECT * FROM __rwn_stage_<hex>
),
groups AS (
    SELECT g.*, g.group_size AS trials
    FROM (SELECT `sex`, `race`, sum(value_count) AS group_size FROM counts GROUP BY `sex`, `race`) g
),
cells AS (
    SELECT c.*, g.group_size, g.trials, g.trials < g.group_size AS enforced,
        c.value_count / g.group_size AS frequency,
        CASE WHEN g.trials < g.group_size THEN 1.0 ELSE c.value_count / g.group_size END AS f_eval
    FROM counts c JOIN groups g ON c.`sex` IS NOT DISTINCT FROM g.`sex` AND c.`race` IS NOT DISTINCT FROM g.`race`
),
stats AS (
    SELECT *,
        trials * (f_eval * 0.45::DOUBLE + 0.03666666666666667::DOUBLE) AS mu,
        0.5::DOUBLE * f_eval * 0.45::DOUBLE / (f_eval * 0.45::DOUBLE + 0.03666666666666667::DOUBLE) AS theta,
        CASE WHEN enforced THEN trials ELSE value_count END AS tails_key
    FROM cells
),
tails AS (
    
    SELECT enforced, group_size, tails_key, NULL AS exact FROM stats WHERE false
),
bounds AS (
    SELECT s.*,
        exp(mu * (theta - (1 + theta) * ln(1 + theta))) AS chernoff_upper,
        CASE WHEN theta < 1 THEN exp(mu * (-theta - (1 - theta) * ln(1 - theta))) ELSE exp(-mu) END AS chernoff_lower,
        t.exact
    FROM stats s JOIN tails t USING (enforced, group_size, tails_key)
)

SELECT DISTINCT enforced, group_size, tails_key FROM stats
-- ----------------------------------------------------------------- statement
WITH









src AS (
    SELECT * FROM __rwn_src_<hex>
),
staged AS (
    SELECT * FROM src
),
counts AS (
    SELECT * FROM __rwn_stage_<hex>
),
groups AS (
    SELECT g.*, g.group_size AS trials
    FROM (SELECT `sex`, `race`, sum(value_count) AS group_size FROM counts GROUP BY `sex`, `race`) g
),
cells AS (
    SELECT c.*, g.group_size, g.trials, g.trials < g.group_size AS enforced,
        c.value_count / g.group_size AS frequency,
        CASE WHEN g.trials < g.group_size THEN 1.0 ELSE c.value_count / g.group_size END AS f_eval
    FROM counts c JOIN groups g ON c.`sex` IS NOT DISTINCT FROM g.`sex` AND c.`race` IS NOT DISTINCT FROM g.`race`
),
stats AS (
    SELECT *,
        trials * (f_eval * 0.45::DOUBLE + 0.03666666666666667::DOUBLE) AS mu,
        0.5::DOUBLE * f_eval * 0.45::DOUBLE / (f_eval * 0.45::DOUBLE + 0.03666666666666667::DOUBLE) AS theta,
        CASE WHEN enforced THEN trials ELSE value_count END AS tails_key
    FROM cells
),
tails AS (
    
    SELECT enforced, group_size, tails_key, exact FROM __rwn_values_<hex>
),
bounds AS (
    SELECT s.*,
        exp(mu * (theta - (1 + theta) * ln(1 + theta))) AS chernoff_upper,
        CASE WHEN theta < 1 THEN exp(mu * (-theta - (1 - theta) * ln(1 - theta))) ELSE exp(-mu) END AS chernoff_lower,
        t.exact
    FROM stats s JOIN tails t USING (enforced, group_size, tails_key)
)

SELECT b.`sex`, b.`race`, group_size, trials, enforced, value, value_count, frequency, mu, theta,
    chernoff_upper, chernoff_lower, exact.upper AS exact_upper, exact.lower AS exact_lower,
    chernoff_upper >= 0.1::DOUBLE AND chernoff_lower >= 0.1::DOUBLE AS passes_chernoff,
    exact.upper >= 0.1::DOUBLE AND exact.lower >= 0.1::DOUBLE AS passes_exact
FROM bounds b
-- ----------------------------------------------------------------- statement
SELECT `sex`, `race`, any_value(group_size) AS group_size, any_value(trials) AS trials,
            any_value(enforced) AS enforced, count(*) AS values_present,
            least(min(chernoff_upper), min(chernoff_lower)) AS worst_chernoff,
            least(min(exact_upper), min(exact_lower)) AS worst_exact,
            bool_and(passes_exact) AS passes, count(*) AS l_distinct, exp(ln(sum(CAST(value_count AS DOUBLE))) - sum(CAST(value_count AS DOUBLE) * ln(CAST(value_count AS DOUBLE))) / sum(CAST(value_count AS DOUBLE))) AS l_entropy, max(CAST(value_count AS DOUBLE)) / sum(CAST(value_count AS DOUBLE)) AS top_share
        FROM __rwn_stage_<hex> GROUP BY `sex`, `race`
-- ----------------------------------------------------------------- statement
SELECT count(*), count(*) FILTER (WHERE NOT passes), sum(group_size),
        coalesce(sum(group_size) FILTER (WHERE NOT passes), 0) FROM __rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT greatest(0.45::DOUBLE + 0.55::DOUBLE / CAST(15 AS DOUBLE), (SELECT max(s) / sum(s) FROM (SELECT CAST(sum(value_count) AS DOUBLE) AS s FROM __rwn_stage_<hex> GROUP BY value) AS __rwn_mode))
-- ----------------------------------------------------------------- statement
SELECT count(*) FILTER (WHERE (group_size >= 2 AND l_distinct < 2)), coalesce(sum(group_size) FILTER (WHERE (group_size >= 2 AND l_distinct < 2)), 0), count(*) FILTER (WHERE (group_size >= 2 AND top_share > 0.4866666666666667::DOUBLE)), coalesce(sum(group_size) FILTER (WHERE (group_size >= 2 AND top_share > 0.4866666666666667::DOUBLE)), 0), coalesce(sum(group_size) FILTER (WHERE (group_size >= 2 AND l_distinct < 2) OR (group_size >= 2 AND top_share > 0.4866666666666667::DOUBLE)), 0) FROM (SELECT sum(value_count) AS group_size, count(*) AS l_distinct, exp(ln(sum(CAST(value_count AS DOUBLE))) - sum(CAST(value_count AS DOUBLE) * ln(CAST(value_count AS DOUBLE))) / sum(CAST(value_count AS DOUBLE))) AS l_entropy, max(CAST(value_count AS DOUBLE)) / sum(CAST(value_count AS DOUBLE)) AS top_share FROM (SELECT `sex`, `race`, value, sum(value_count) AS value_count FROM __rwn_stage_<hex> GROUP BY `sex`, `race`, value) AS __rwn_gv GROUP BY `sex`, `race`) AS __rwn_div
-- ----------------------------------------------------------------- statement
SELECT (SELECT 20 * max(s) >= 19 * sum(s) FROM (SELECT sum(value_count) AS s FROM __rwn_stage_<hex> GROUP BY value) AS __rwn_v), count(DISTINCT `sex`) + max(CASE WHEN `sex` IS NULL THEN 1 ELSE 0 END), count(DISTINCT `race`) + max(CASE WHEN `race` IS NULL THEN 1 ELSE 0 END) FROM __rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT 0 AS set_index, coalesce(sum(n) FILTER (WHERE n >= 2), 0) AS records,
    coalesce(sum(top) FILTER (WHERE n >= 2 AND 20 * top >= 19 * n), 0) AS exposed,
    sum(n * ln(n) - slc) / sum(n) / ln(2) AS cond_entropy
FROM (SELECT `sex`, sum(c) AS n, max(c) AS top, sum(c * ln(c)) AS slc
      FROM (SELECT `sex`, value, CAST(sum(value_count) AS DOUBLE) AS c FROM __rwn_stage_<hex>
            GROUP BY `sex`, value) AS __rwn_cv GROUP BY `sex`) AS __rwn_cls
UNION ALL
SELECT 1 AS set_index, coalesce(sum(n) FILTER (WHERE n >= 2), 0) AS records,
    coalesce(sum(top) FILTER (WHERE n >= 2 AND 20 * top >= 19 * n), 0) AS exposed,
    sum(n * ln(n) - slc) / sum(n) / ln(2) AS cond_entropy
FROM (SELECT `race`, sum(c) AS n, max(c) AS top, sum(c * ln(c)) AS slc
      FROM (SELECT `race`, value, CAST(sum(value_count) AS DOUBLE) AS c FROM __rwn_stage_<hex>
            GROUP BY `race`, value) AS __rwn_cv GROUP BY `race`) AS __rwn_cls
-- ----------------------------------------------------------------- statement
SELECT 0 AS set_index, coalesce(sum(n) FILTER (WHERE n >= 2), 0) AS records,
    coalesce(sum(top) FILTER (WHERE n >= 2 AND 20 * top >= 19 * n), 0) AS exposed,
    sum(n * ln(n) - slc) / sum(n) / ln(2) AS cond_entropy
FROM (SELECT `sex`, `race`, sum(c) AS n, max(c) AS top, sum(c * ln(c)) AS slc
      FROM (SELECT `sex`, `race`, value, CAST(sum(value_count) AS DOUBLE) AS c FROM __rwn_stage_<hex>
            GROUP BY `sex`, `race`, value) AS __rwn_cv GROUP BY `sex`, `race`) AS __rwn_cls
-- ----------------------------------------------------------------- statement
SELECT r.`sex`, r.`race`, r.group_size, r.trials, r.enforced, r.value, r.value_count, r.frequency, r.mu, r.theta, r.chernoff_upper, r.chernoff_lower, r.exact_upper, r.exact_lower, r.passes_chernoff, r.passes_exact, g.passes AS group_passes FROM __rwn_stage_<hex> r JOIN __rwn_stage_<hex> g ON r.`sex` IS NOT DISTINCT FROM g.`sex` AND r.`race` IS NOT DISTINCT FROM g.`race` ORDER BY r.`sex`, r.`race`, r.value
-- ----------------------------------------------------------------- statement
SELECT * FROM __rwn_stage_<hex> ORDER BY `sex`, `race`
-- ----------------------------------------------------------------- statement
WITH cells AS (SELECT `group_size` AS f, CAST(`group_size` AS DOUBLE) AS big_f, `group_size` AS weighed, CAST(1 AS DOUBLE) AS low, true AS finite FROM __rwn_stage_<hex>), risks AS (SELECT *, CASE WHEN NOT (NOT isnan(big_f) AND abs(big_f) < 'Infinity'::DOUBLE) OR big_f < f THEN NULL WHEN big_f = f THEN CAST(1 AS DOUBLE) / f WHEN f = 1 THEN ((f / big_f) / (1 - (f / big_f))) * ln(1 / (f / big_f)) WHEN f = 2 THEN ((f / big_f) / (1 - (f / big_f))) - ((f / big_f) / (1 - (f / big_f))) * ((f / big_f) / (1 - (f / big_f))) * ln(1 / (f / big_f)) ELSE (f / big_f) / (f - (1 - (f / big_f))) END AS r FROM cells) SELECT COALESCE(SUM(f), 0), COUNT(*), COALESCE(SUM(f) FILTER (WHERE f < 2), 0), COUNT(*) FILTER (WHERE f < 2), COALESCE(SUM(f) FILTER (WHERE f < 3), 0), COUNT(*) FILTER (WHERE f < 3), COALESCE(SUM(f) FILTER (WHERE f < 5), 0), COUNT(*) FILTER (WHERE f < 5), COUNT(*) FILTER (WHERE f = 1), SUM(f * r), MAX(r), SUM(weighed), MIN(low), bool_and(finite) FROM risks
