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
SELECT min("Age") FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), max("Age") FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), min("Weight") FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))), max("Weight") FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))), min("Height") FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))), max("Height") FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
WITH src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
cells AS (
    SELECT count(*) AS c, 'all records' AS label
    FROM src
    GROUP BY CAST("Age" AS DOUBLE), CAST("Weight" AS DOUBLE), CAST("Height" AS DOUBLE)
)
SELECT coalesce(sum(c * greatest(c - 1, 5)), 0)::HUGEINT, coalesce(sum(c), 0),
    coalesce(max(c), 0), arg_max(label, c)
FROM cells
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE IF NOT EXISTS temp.main.__rwn_keys (id VARCHAR, k VARCHAR, lasting BOOLEAN)
-- ----------------------------------------------------------------- statement
SELECT id FROM temp.main.__rwn_keys WHERE lasting AND k = ?
-- ----------------------------------------------------------------- statement
INSERT INTO temp.main.__rwn_keys VALUES (?, ?, ?)
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
WITH RECURSIVE
-- rwn_sql: exact RWN neighbourhoods by grid-bucketed self-joins (METHODS.md section 1).
-- S_i = { j != i in i's stratum : d(i, j) <= max(eps, r_k(i)) }, ties at the radius included:
-- computed squared distances within a factor 1.000000000000003::DOUBLE of the radius count as equal, which
-- provably includes every exact tie (METHODS.md, "Exact ties").
-- Records are bucketed into grid cells of side s; every j within s of i lies in i's cell or
-- an adjacent one, so a record is exact once k records and eps lie within its margin. Records
-- that are not yet exact retry with s doubled: no step compares all pairs.
src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
staged AS MATERIALIZED (
    -- record number: 1-based input position (DuckDB preserves insertion order), or the rank
    -- of the id column's value when id= is given (then the input order does not matter)
    SELECT row_number() OVER () AS __rwn_rid, *
    FROM src
),
stats AS (
    SELECT count(*) AS n,
        min(CAST("Age" AS DOUBLE)) AS lo_1,
        max(CAST("Age" AS DOUBLE)) AS hi_1,
        stddev_samp(CAST("Age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))) AS sd_1,
        var_pop(CAST("Age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))) AS var_1,
        count(*) FILTER (WHERE "Age" IS NULL OR NOT isfinite(CAST("Age" AS DOUBLE))) AS bad_1,
        min(CAST("Weight" AS DOUBLE)) AS lo_2,
        max(CAST("Weight" AS DOUBLE)) AS hi_2,
        stddev_samp(CAST("Weight" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))) AS sd_2,
        var_pop(CAST("Weight" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))) AS var_2,
        count(*) FILTER (WHERE "Weight" IS NULL OR NOT isfinite(CAST("Weight" AS DOUBLE))) AS bad_2,
        min(CAST("Height" AS DOUBLE)) AS lo_3,
        max(CAST("Height" AS DOUBLE)) AS hi_3,
        stddev_samp(CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) AS sd_3,
        var_pop(CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) AS var_3,
        count(*) FILTER (WHERE "Height" IS NULL OR NOT isfinite(CAST("Height" AS DOUBLE))) AS bad_3
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
        lo_2 AS off_2,
        hi_2 - lo_2 AS sc_2,
        lo_3 AS off_3,
        hi_3 - lo_3 AS sc_3,
        CASE
            WHEN n = 0 THEN 'the input has no records'
            WHEN bad_1 > 0 THEN 'column "Age"' || ' has ' || bad_1 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_1 = lo_1 THEN 'column "Age"' || ' is constant (every value is ' || lo_1 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_1 - lo_1) AND isfinite(hi_1 - lo_1) AND isfinite((hi_1 - lo_1) / (hi_1 - lo_1) * (hi_1 - lo_1) / (hi_1 - lo_1) * 3), false) THEN 'column "Age"' || ' spans ' || lo_1 || ' to ' || hi_1 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_2 > 0 THEN 'column "Weight"' || ' has ' || bad_2 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_2 = lo_2 THEN 'column "Weight"' || ' is constant (every value is ' || lo_2 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_2 - lo_2) AND isfinite(hi_2 - lo_2) AND isfinite((hi_2 - lo_2) / (hi_2 - lo_2) * (hi_2 - lo_2) / (hi_2 - lo_2) * 3), false) THEN 'column "Weight"' || ' spans ' || lo_2 || ' to ' || hi_2 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_3 > 0 THEN 'column "Height"' || ' has ' || bad_3 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_3 = lo_3 THEN 'column "Height"' || ' is constant (every value is ' || lo_3 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_3 - lo_3) AND isfinite(hi_3 - lo_3) AND isfinite((hi_3 - lo_3) / (hi_3 - lo_3) * (hi_3 - lo_3) / (hi_3 - lo_3) * 3), false) THEN 'column "Height"' || ' spans ' || lo_3 || ' to ' || hi_3 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN smallest <= 5 THEN 'the input has ' || smallest || ' records; k = 5 needs at least 6 (k must be below the number of records in every stratum)'
        END AS problem
    FROM stats, strata_sizes
),
settings AS (
    -- s0: starting cell side; diameter: no two records are further apart than this;
    -- grid_dims: how many grid coordinates the search uses (the rest stay in one cell)
    SELECT
        CASE WHEN problem IS NOT NULL THEN error('rwn_sql: ' || problem)
             ELSE greatest(0.0::DOUBLE * 1.000001, coalesce(pow(12 * pow(((hi_1 - lo_1) / sc_1) * ((hi_2 - lo_2) / sc_2) * ((hi_3 - lo_3) / sc_3), 3.0 / 3) / (n * 4.1887902047863905), 1.0 / 3), 0.0), 1e-9 * diameter, 1e-12)
        END AS s0,
        diameter, grid_dims, off_1, sc_1, off_2, sc_2, off_3, sc_3
    FROM (SELECT *, sqrt(pow((hi_1 - lo_1) / sc_1, 2) + pow((hi_2 - lo_2) / sc_2, 2) + pow((hi_3 - lo_3) / sc_3, 2)) AS diameter, 3 AS grid_dims FROM params)
),
scaled AS (
    -- unscaled distance values v_*, categorical distance columns c_*, strata k_*, and the
    -- scaled grid coordinates g_* (the numeric columns with the largest scaled spread)
    SELECT s.__rwn_rid AS rid,
        CAST(s."Age" AS DOUBLE) AS v_1,
        CAST(s."Weight" AS DOUBLE) AS v_2,
        CAST(s."Height" AS DOUBLE) AS v_3,
        (CAST(s."Age" AS DOUBLE) - p.off_1) / p.sc_1 AS g_1,
        (CAST(s."Weight" AS DOUBLE) - p.off_2) / p.sc_2 AS g_2,
        (CAST(s."Height" AS DOUBLE) - p.off_3) / p.sc_3 AS g_3
    FROM staged s, params p, settings st
),
first_level AS (
    -- first_lvl: records in dense cells start on a finer grid. The cell count at side s0,
    -- over the count expected if the data were spread evenly, gives the local density;
    -- each level halves the side, dividing the count by 2^G.
    SELECT scaled.*,
        -CAST(round(log2(greatest(count(*) OVER (PARTITION BY floor(g_1 / (st.s0)), floor(g_2 / (st.s0)), floor(g_3 / (st.s0))) * 4.1887902047863905 / 6, 1)) * 1.0 / 3) AS INTEGER) AS first_lvl
    FROM scaled, settings st
),
points AS MATERIALIZED (
    -- start_lvl: the same estimate once more, from the count in the record's cell at first_lvl:
    -- a cell of side s0 averages the density over a region much larger than the k nearest
    -- (clumps of near-duplicates, heavy tails), which put records on too coarse a grid.
    -- Only finer (with eps > 0, not below the level whose cells hold eps): the start level
    -- affects the speed, never the neighbourhoods. On a column grid
    -- the g_* are not kept: the steps that read them recompute them from v_* (sqlgen's grid_columns).
    SELECT rid, v_1, v_2, v_3,
        first_lvl - CAST(round(log2(greatest(count(*) OVER (PARTITION BY first_lvl, floor(g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl)))) * 4.1887902047863905 / 6, 1)) * 1.0 / 3 - 0.375) AS INTEGER) AS start_lvl
    FROM first_level f, settings st
),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
search(lvl, rid, start_lvl, done, members, radius2, dcr2) AS (
    SELECT (SELECT min(start_lvl) FROM points) - 1 AS lvl, points.rid, start_lvl, false AS done,
        NULL::STRUCT(d2 DOUBLE, j BIGINT)[] AS members, NULL::DOUBLE AS radius2, NULL::DOUBLE AS dcr2
    FROM points
    UNION ALL
    (WITH
-- rwn_sql: one level of the neighbourhood search (sql/rwn_neighborhoods.sql): the records of
-- `search` still searching try cells of side s = s0 * growth^lvl; DuckDB runs it as the recursive member,
-- Spark once per level (rwn_sql/engines/spark.py).
active AS (
    -- records still searching whose start level is reached; cell side s = s0 * growth^lvl
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    -- margin: every record within this distance of i is in i's block of cells
    SELECT a.*,
            CAST(floor(least(greatest(g_1 / s, -1e12), 1e12)) AS BIGINT) AS cell_1,
            CAST(floor(least(greatest(g_2 / s, -1e12), 1e12)) AS BIGINT) AS cell_2,
            CAST(floor(least(greatest(g_3 / s, -1e12), 1e12)) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - floor(g_1 / s), 1 - (g_1 / s - floor(g_1 / s)), g_2 / s - floor(g_2 / s), 1 - (g_2 / s - floor(g_2 / s)), g_3 / s - floor(g_3 / s), 1 - (g_3 / s - floor(g_3 / s))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s)))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST(floor(least(greatest(g_1 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST(floor(least(greatest(g_2 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST(floor(least(greatest(g_3 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3 FROM points p, settings st) p, level l
),
pairs AS (
    -- candidates within the margin; i itself (distance 0) is always among them. The neighbour
    -- cells nb_* are columns of one relation, so no optimizer can join probe with build before
    -- the offsets (Spark's did: a cartesian product)
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    -- The margin filters inside the aggregates. A WHERE that DuckDB would push into the cell
    -- join as a residual condition, evaluated pair by pair, was 1.5-2x slower on 5 columns; a
    -- filter the optimizer keeps after the join (margin_filter, where the dialect has one) drops
    -- the pairs beyond the margin (about 3/4 on 3 columns) before they are grouped.
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        -- done once the radius, widened for ties, lies within the margin
        count(*) FILTER (WHERE d2 * 1.000000000000003::DOUBLE <= margin2) - 1 >= 5
            AND 0.0::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1
)
),
hood AS (
    -- the exact neighbourhoods: members sorted by (distance, record), and their number
    SELECT rid, members, radius2, dcr2, len(members) AS size
    FROM search, settings
    WHERE done AND settings.s0 > 0
)
,
-- rwn_sql: RWN perturbation. Per record and column, independently: with probability q the
-- value is replaced by the same column of a member of S_i drawn uniformly, else kept.
-- Draws come from a keyed hash of (key, purpose, record, column); see rwn_sql/randomness.py.
draws AS (
    SELECT rid, members, size,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|Age')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_1,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|Weight')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_2,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|Height')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_3
    FROM hood
),
picks AS MATERIALIZED (
    SELECT rid,
        CASE WHEN CAST((h_1 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_1 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_1,
        CASE WHEN CAST((h_2 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_2 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_2,
        CASE WHEN CAST((h_3 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_3 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_3
    FROM draws
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

SELECT s.* EXCLUDE (__rwn_rid) REPLACE (d_1."Age" AS "Age", d_2."Weight" AS "Weight", d_3."Height" AS "Height")
FROM picks p
JOIN lookup s ON s.__rwn_rid = p.rid
LEFT JOIN lookup d_1 ON d_1.__rwn_rid = p.donor_1
LEFT JOIN lookup d_2 ON d_2.__rwn_rid = p.donor_2
LEFT JOIN lookup d_3 ON d_3.__rwn_rid = p.donor_3
ORDER BY CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.order|')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(s.__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT), s.__rwn_rid
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
SELECT min("Age") FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), max("Age") FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), min("Weight") FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))), max("Weight") FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))), min("Height") FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))), max("Height") FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
WITH src AS (SELECT * FROM "memory"."main"."bodyfat" WHERE isfinite(CAST("Age" AS DOUBLE)) AND isfinite(CAST("Weight" AS DOUBLE)) AND isfinite(CAST("Height" AS DOUBLE))),
stats AS (SELECT 0.0 AS off_1, stddev_samp(CAST("Age" AS DOUBLE)) AS sc_1, 0.0 AS off_2, stddev_samp(CAST("Weight" AS DOUBLE)) AS sc_2, 0.0 AS off_3, stddev_samp(CAST("Height" AS DOUBLE)) AS sc_3 FROM src),
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY floor((CAST(s."Age" AS DOUBLE) - t.off_1) / t.sc_1 / 0.17320508075688773::DOUBLE), floor((CAST(s."Weight" AS DOUBLE) - t.off_2) / t.sc_2 / 0.17320508075688773::DOUBLE), floor((CAST(s."Height" AS DOUBLE) - t.off_3) / t.sc_3 / 0.17320508075688773::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
WITH src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
stats AS (SELECT 0.0 AS off_1, stddev_samp(CAST("Age" AS DOUBLE)) AS sc_1, 0.0 AS off_2, stddev_samp(CAST("Weight" AS DOUBLE)) AS sc_2, 0.0 AS off_3, stddev_samp(CAST("Height" AS DOUBLE)) AS sc_3 FROM src),
cells AS (
    SELECT count(*) AS c, 'all records' AS label
    FROM src, stats
    GROUP BY CASE WHEN isfinite(floor((CAST("Age" AS DOUBLE) - off_1) / sc_1 / 0.17320508058368264::DOUBLE)) THEN floor((CAST("Age" AS DOUBLE) - off_1) / sc_1 / 0.17320508058368264::DOUBLE) ELSE CAST("Age" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("Weight" AS DOUBLE) - off_2) / sc_2 / 0.17320508058368264::DOUBLE)) THEN floor((CAST("Weight" AS DOUBLE) - off_2) / sc_2 / 0.17320508058368264::DOUBLE) ELSE CAST("Weight" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("Height" AS DOUBLE) - off_3) / sc_3 / 0.17320508058368264::DOUBLE)) THEN floor((CAST("Height" AS DOUBLE) - off_3) / sc_3 / 0.17320508058368264::DOUBLE) ELSE CAST("Height" AS DOUBLE) END
)
SELECT coalesce(sum(c * greatest(c - 1, 3)), 0)::HUGEINT, coalesce(sum(c), 0),
    coalesce(max(c), 0), arg_max(label, c)
FROM cells
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE IF NOT EXISTS temp.main.__rwn_keys (id VARCHAR, k VARCHAR, lasting BOOLEAN)
-- ----------------------------------------------------------------- statement
SELECT id FROM temp.main.__rwn_keys WHERE lasting AND k = ?
-- ----------------------------------------------------------------- statement
WITH src AS (SELECT * FROM "memory"."main"."bodyfat" WHERE isfinite(CAST("Age" AS DOUBLE)) AND isfinite(CAST("Weight" AS DOUBLE)) AND isfinite(CAST("Height" AS DOUBLE))),
stats AS (SELECT 0.0 AS off_1, stddev_samp(CAST("Age" AS DOUBLE)) AS sc_1, 0.0 AS off_2, stddev_samp(CAST("Weight" AS DOUBLE)) AS sc_2, 0.0 AS off_3, stddev_samp(CAST("Height" AS DOUBLE)) AS sc_3 FROM src),
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY floor((CAST(s."Age" AS DOUBLE) - t.off_1) / t.sc_1 / 0.17320508075688773::DOUBLE), floor((CAST(s."Weight" AS DOUBLE) - t.off_2) / t.sc_2 / 0.17320508075688773::DOUBLE), floor((CAST(s."Height" AS DOUBLE) - t.off_3) / t.sc_3 / 0.17320508075688773::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
WITH RECURSIVE
-- rwn_sql: exact RWN neighbourhoods by grid-bucketed self-joins (METHODS.md section 1).
-- S_i = { j != i in i's stratum : d(i, j) <= max(eps, r_k(i)) }, ties at the radius included:
-- computed squared distances within a factor 1.000000000000003::DOUBLE of the radius count as equal, which
-- provably includes every exact tie (METHODS.md, "Exact ties").
-- Records are bucketed into grid cells of side s; every j within s of i lies in i's cell or
-- an adjacent one, so a record is exact once k records and eps lie within its margin. Records
-- that are not yet exact retry with s doubled: no step compares all pairs.
src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
staged AS MATERIALIZED (
    -- record number: 1-based input position (DuckDB preserves insertion order), or the rank
    -- of the id column's value when id= is given (then the input order does not matter)
    SELECT row_number() OVER () AS __rwn_rid, *
    FROM src
),
stats AS (
    SELECT count(*) AS n,
        min(CAST("Age" AS DOUBLE)) AS lo_1,
        max(CAST("Age" AS DOUBLE)) AS hi_1,
        stddev_samp(CAST("Age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))) AS sd_1,
        var_pop(CAST("Age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))) AS var_1,
        count(*) FILTER (WHERE "Age" IS NULL OR NOT isfinite(CAST("Age" AS DOUBLE))) AS bad_1,
        min(CAST("Weight" AS DOUBLE)) AS lo_2,
        max(CAST("Weight" AS DOUBLE)) AS hi_2,
        stddev_samp(CAST("Weight" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))) AS sd_2,
        var_pop(CAST("Weight" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))) AS var_2,
        count(*) FILTER (WHERE "Weight" IS NULL OR NOT isfinite(CAST("Weight" AS DOUBLE))) AS bad_2,
        min(CAST("Height" AS DOUBLE)) AS lo_3,
        max(CAST("Height" AS DOUBLE)) AS hi_3,
        stddev_samp(CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) AS sd_3,
        var_pop(CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) AS var_3,
        count(*) FILTER (WHERE "Height" IS NULL OR NOT isfinite(CAST("Height" AS DOUBLE))) AS bad_3
    FROM staged
),
strata_sizes AS (
    SELECT coalesce(min(size), 0) AS smallest, arg_min(label, size) AS smallest_label
    FROM (SELECT 'all records' AS label, count(*) AS size FROM staged GROUP BY ())
),
params AS (
    SELECT *,
        0.0 AS off_1,
        CASE WHEN isfinite(sd_1) AND sd_1 > 0 THEN round(sd_1, 9 - CAST(floor(log10(sd_1)) AS INTEGER)) END AS sc_1,
        0.0 AS off_2,
        CASE WHEN isfinite(sd_2) AND sd_2 > 0 THEN round(sd_2, 9 - CAST(floor(log10(sd_2)) AS INTEGER)) END AS sc_2,
        0.0 AS off_3,
        CASE WHEN isfinite(sd_3) AND sd_3 > 0 THEN round(sd_3, 9 - CAST(floor(log10(sd_3)) AS INTEGER)) END AS sc_3,
        CASE
            WHEN n = 0 THEN 'the input has no records'
            WHEN bad_1 > 0 THEN 'column "Age"' || ' has ' || bad_1 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN coalesce(sd_1, 0) = 0 OR hi_1 = lo_1 THEN 'column "Age"' || ' is constant; remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_1 - lo_1) AND isfinite(CASE WHEN isfinite(sd_1) AND sd_1 > 0 THEN round(sd_1, 9 - CAST(floor(log10(sd_1)) AS INTEGER)) END) AND isfinite((hi_1 - lo_1) / (CASE WHEN isfinite(sd_1) AND sd_1 > 0 THEN round(sd_1, 9 - CAST(floor(log10(sd_1)) AS INTEGER)) END) * (hi_1 - lo_1) / (CASE WHEN isfinite(sd_1) AND sd_1 > 0 THEN round(sd_1, 9 - CAST(floor(log10(sd_1)) AS INTEGER)) END) * 3), false) THEN 'column "Age"' || ' spans ' || lo_1 || ' to ' || hi_1 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_2 > 0 THEN 'column "Weight"' || ' has ' || bad_2 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN coalesce(sd_2, 0) = 0 OR hi_2 = lo_2 THEN 'column "Weight"' || ' is constant; remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_2 - lo_2) AND isfinite(CASE WHEN isfinite(sd_2) AND sd_2 > 0 THEN round(sd_2, 9 - CAST(floor(log10(sd_2)) AS INTEGER)) END) AND isfinite((hi_2 - lo_2) / (CASE WHEN isfinite(sd_2) AND sd_2 > 0 THEN round(sd_2, 9 - CAST(floor(log10(sd_2)) AS INTEGER)) END) * (hi_2 - lo_2) / (CASE WHEN isfinite(sd_2) AND sd_2 > 0 THEN round(sd_2, 9 - CAST(floor(log10(sd_2)) AS INTEGER)) END) * 3), false) THEN 'column "Weight"' || ' spans ' || lo_2 || ' to ' || hi_2 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_3 > 0 THEN 'column "Height"' || ' has ' || bad_3 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN coalesce(sd_3, 0) = 0 OR hi_3 = lo_3 THEN 'column "Height"' || ' is constant; remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_3 - lo_3) AND isfinite(CASE WHEN isfinite(sd_3) AND sd_3 > 0 THEN round(sd_3, 9 - CAST(floor(log10(sd_3)) AS INTEGER)) END) AND isfinite((hi_3 - lo_3) / (CASE WHEN isfinite(sd_3) AND sd_3 > 0 THEN round(sd_3, 9 - CAST(floor(log10(sd_3)) AS INTEGER)) END) * (hi_3 - lo_3) / (CASE WHEN isfinite(sd_3) AND sd_3 > 0 THEN round(sd_3, 9 - CAST(floor(log10(sd_3)) AS INTEGER)) END) * 3), false) THEN 'column "Height"' || ' spans ' || lo_3 || ' to ' || hi_3 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN smallest <= 3 THEN 'the input has ' || smallest || ' records; k = 3 needs at least 4 (k must be below the number of records in every stratum)'
        END AS problem
    FROM stats, strata_sizes
),
settings AS (
    -- s0: starting cell side; diameter: no two records are further apart than this;
    -- grid_dims: how many grid coordinates the search uses (the rest stay in one cell)
    SELECT
        CASE WHEN problem IS NOT NULL THEN error('rwn_sql: ' || problem)
             ELSE greatest(0.3::DOUBLE * 1.000001, coalesce(pow(8 * pow(((hi_1 - lo_1) / sc_1) * ((hi_2 - lo_2) / sc_2) * ((hi_3 - lo_3) / sc_3), 3.0 / 3) / (n * 4.1887902047863905), 1.0 / 3), 0.0), 1e-9 * diameter, 1e-12)
        END AS s0,
        diameter, grid_dims, off_1, sc_1, off_2, sc_2, off_3, sc_3
    FROM (SELECT *, sqrt(pow((hi_1 - lo_1) / sc_1, 2) + pow((hi_2 - lo_2) / sc_2, 2) + pow((hi_3 - lo_3) / sc_3, 2)) AS diameter, 3 AS grid_dims FROM params)
),
scaled AS (
    -- unscaled distance values v_*, categorical distance columns c_*, strata k_*, and the
    -- scaled grid coordinates g_* (the numeric columns with the largest scaled spread)
    SELECT s.__rwn_rid AS rid,
        CAST(s."Age" AS DOUBLE) AS v_1,
        CAST(s."Weight" AS DOUBLE) AS v_2,
        CAST(s."Height" AS DOUBLE) AS v_3,
        (CAST(s."Age" AS DOUBLE) - p.off_1) / p.sc_1 AS g_1,
        (CAST(s."Weight" AS DOUBLE) - p.off_2) / p.sc_2 AS g_2,
        (CAST(s."Height" AS DOUBLE) - p.off_3) / p.sc_3 AS g_3
    FROM staged s, params p, settings st
),
first_level AS (
    -- first_lvl: records in dense cells start on a finer grid. The cell count at side s0,
    -- over the count expected if the data were spread evenly, gives the local density;
    -- each level halves the side, dividing the count by 2^G.
    SELECT scaled.*,
        -CAST(round(log2(greatest(count(*) OVER (PARTITION BY floor(g_1 / (st.s0)), floor(g_2 / (st.s0)), floor(g_3 / (st.s0))) * 4.1887902047863905 / 8, 1)) * 1.0 / 3) AS INTEGER) AS first_lvl
    FROM scaled, settings st
),
points AS MATERIALIZED (
    -- start_lvl: the same estimate once more, from the count in the record's cell at first_lvl:
    -- a cell of side s0 averages the density over a region much larger than the k nearest
    -- (clumps of near-duplicates, heavy tails), which put records on too coarse a grid.
    -- Only finer (with eps > 0, not below the level whose cells hold eps): the start level
    -- affects the speed, never the neighbourhoods. On a column grid
    -- the g_* are not kept: the steps that read them recompute them from v_* (sqlgen's grid_columns).
    SELECT rid, v_1, v_2, v_3,
        greatest(first_lvl - CAST(round(log2(greatest(count(*) OVER (PARTITION BY first_lvl, floor(g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl)))) * 4.1887902047863905 / 8, 1)) * 1.0 / 3 - 0.375) AS INTEGER), CAST(ceil(1.0 * log2(0.3::DOUBLE / (1.2 * st.s0))) AS INTEGER)) AS start_lvl
    FROM first_level f, settings st
),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
search(lvl, rid, start_lvl, done, members, radius2, dcr2) AS (
    SELECT (SELECT min(start_lvl) FROM points) - 1 AS lvl, points.rid, start_lvl, false AS done,
        NULL::STRUCT(d2 DOUBLE, j BIGINT)[] AS members, NULL::DOUBLE AS radius2, NULL::DOUBLE AS dcr2
    FROM points
    UNION ALL
    (WITH
-- rwn_sql: one level of the neighbourhood search (sql/rwn_neighborhoods.sql): the records of
-- `search` still searching try cells of side s = s0 * growth^lvl; DuckDB runs it as the recursive member,
-- Spark once per level (rwn_sql/engines/spark.py).
active AS (
    -- records still searching whose start level is reached; cell side s = s0 * growth^lvl
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    -- margin: every record within this distance of i is in i's block of cells
    SELECT a.*,
            CAST(floor(least(greatest(g_1 / s, -1e12), 1e12)) AS BIGINT) AS cell_1,
            CAST(floor(least(greatest(g_2 / s, -1e12), 1e12)) AS BIGINT) AS cell_2,
            CAST(floor(least(greatest(g_3 / s, -1e12), 1e12)) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - floor(g_1 / s), 1 - (g_1 / s - floor(g_1 / s)), g_2 / s - floor(g_2 / s), 1 - (g_2 / s - floor(g_2 / s)), g_3 / s - floor(g_3 / s), 1 - (g_3 / s - floor(g_3 / s))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s)))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST(floor(least(greatest(g_1 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST(floor(least(greatest(g_2 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST(floor(least(greatest(g_3 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3 FROM points p, settings st) p, level l
),
pairs AS (
    -- candidates within the margin; i itself (distance 0) is always among them. The neighbour
    -- cells nb_* are columns of one relation, so no optimizer can join probe with build before
    -- the offsets (Spark's did: a cartesian product)
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    -- The margin filters inside the aggregates. A WHERE that DuckDB would push into the cell
    -- join as a residual condition, evaluated pair by pair, was 1.5-2x slower on 5 columns; a
    -- filter the optimizer keeps after the join (margin_filter, where the dialect has one) drops
    -- the pairs beyond the margin (about 3/4 on 3 columns) before they are grouped.
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        -- done once the radius, widened for ties, lies within the margin
        count(*) FILTER (WHERE d2 * 1.000000000000003::DOUBLE <= margin2) - 1 >= 3
            AND 0.09::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.09::DOUBLE, found[3].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.09::DOUBLE, found[3].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1
)
),
hood AS (
    -- the exact neighbourhoods: members sorted by (distance, record), and their number
    SELECT rid, members, radius2, dcr2, len(members) AS size
    FROM search, settings
    WHERE done AND settings.s0 > 0
)
,
-- rwn_sql: RWN perturbation. Per record and column, independently: with probability q the
-- value is replaced by the same column of a member of S_i drawn uniformly, else kept.
-- Draws come from a keyed hash of (key, purpose, record, column); see rwn_sql/randomness.py.
draws AS (
    SELECT rid, members, size,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|Age')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_1,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|Weight')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_2,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|Height')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_3
    FROM hood
),
picks AS MATERIALIZED (
    SELECT rid,
        CASE WHEN CAST((h_1 >> 76) & 4503599627370495 AS BIGINT) < 3602879701896397.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_1 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_1,
        CASE WHEN CAST((h_2 >> 76) & 4503599627370495 AS BIGINT) < 3602879701896397.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_2 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_2,
        CASE WHEN CAST((h_3 >> 76) & 4503599627370495 AS BIGINT) < 3602879701896397.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_3 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_3
    FROM draws
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

SELECT s.* EXCLUDE (__rwn_rid) REPLACE (d_1."Age" AS "Age", d_2."Weight" AS "Weight", d_3."Height" AS "Height")
FROM picks p
JOIN lookup s ON s.__rwn_rid = p.rid
LEFT JOIN lookup d_1 ON d_1.__rwn_rid = p.donor_1
LEFT JOIN lookup d_2 ON d_2.__rwn_rid = p.donor_2
LEFT JOIN lookup d_3 ON d_3.__rwn_rid = p.donor_3
ORDER BY s.__rwn_rid
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
SELECT min("Age") FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), max("Age") FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), min("Weight") FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))), max("Weight") FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))), min("Height") FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))), max("Height") FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))), min("Chest") FILTER (WHERE isfinite(CAST("Chest" AS DOUBLE))), max("Chest") FILTER (WHERE isfinite(CAST("Chest" AS DOUBLE))), min("Abdomen") FILTER (WHERE isfinite(CAST("Abdomen" AS DOUBLE))), max("Abdomen") FILTER (WHERE isfinite(CAST("Abdomen" AS DOUBLE))) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
WITH src AS (SELECT * FROM "memory"."main"."bodyfat" WHERE isfinite(CAST("Age" AS DOUBLE)) AND isfinite(CAST("Weight" AS DOUBLE)) AND isfinite(CAST("Height" AS DOUBLE)) AND isfinite(CAST("Chest" AS DOUBLE)) AND isfinite(CAST("Abdomen" AS DOUBLE))),
stats AS (SELECT min(CAST("Age" AS DOUBLE)) AS off_1, max(CAST("Age" AS DOUBLE)) - min(CAST("Age" AS DOUBLE)) AS sc_1, min(CAST("Weight" AS DOUBLE)) AS off_2, max(CAST("Weight" AS DOUBLE)) - min(CAST("Weight" AS DOUBLE)) AS sc_2, min(CAST("Height" AS DOUBLE)) AS off_3, max(CAST("Height" AS DOUBLE)) - min(CAST("Height" AS DOUBLE)) AS sc_3, min(CAST("Chest" AS DOUBLE)) AS off_4, max(CAST("Chest" AS DOUBLE)) - min(CAST("Chest" AS DOUBLE)) AS sc_4, min(CAST("Abdomen" AS DOUBLE)) AS off_5, max(CAST("Abdomen" AS DOUBLE)) - min(CAST("Abdomen" AS DOUBLE)) AS sc_5 FROM src),
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY floor((CAST(s."Age" AS DOUBLE) - t.off_1) / t.sc_1 / 0.08944271909999159::DOUBLE), floor((CAST(s."Weight" AS DOUBLE) - t.off_2) / t.sc_2 / 0.08944271909999159::DOUBLE), floor((CAST(s."Height" AS DOUBLE) - t.off_3) / t.sc_3 / 0.08944271909999159::DOUBLE), floor((CAST(s."Chest" AS DOUBLE) - t.off_4) / t.sc_4 / 0.08944271909999159::DOUBLE), floor((CAST(s."Abdomen" AS DOUBLE) - t.off_5) / t.sc_5 / 0.08944271909999159::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
WITH src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
stats AS (SELECT min(CAST("Age" AS DOUBLE)) AS off_1, max(CAST("Age" AS DOUBLE)) - min(CAST("Age" AS DOUBLE)) AS sc_1, min(CAST("Weight" AS DOUBLE)) AS off_2, max(CAST("Weight" AS DOUBLE)) - min(CAST("Weight" AS DOUBLE)) AS sc_2, min(CAST("Height" AS DOUBLE)) AS off_3, max(CAST("Height" AS DOUBLE)) - min(CAST("Height" AS DOUBLE)) AS sc_3, min(CAST("Chest" AS DOUBLE)) AS off_4, max(CAST("Chest" AS DOUBLE)) - min(CAST("Chest" AS DOUBLE)) AS sc_4, min(CAST("Abdomen" AS DOUBLE)) AS off_5, max(CAST("Abdomen" AS DOUBLE)) - min(CAST("Abdomen" AS DOUBLE)) AS sc_5 FROM src),
cells AS (
    SELECT count(*) AS c, 'all records' AS label
    FROM src, stats
    GROUP BY CASE WHEN isfinite(floor((CAST("Age" AS DOUBLE) - off_1) / sc_1 / 0.08944271901054887::DOUBLE)) THEN floor((CAST("Age" AS DOUBLE) - off_1) / sc_1 / 0.08944271901054887::DOUBLE) ELSE CAST("Age" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("Weight" AS DOUBLE) - off_2) / sc_2 / 0.08944271901054887::DOUBLE)) THEN floor((CAST("Weight" AS DOUBLE) - off_2) / sc_2 / 0.08944271901054887::DOUBLE) ELSE CAST("Weight" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("Height" AS DOUBLE) - off_3) / sc_3 / 0.08944271901054887::DOUBLE)) THEN floor((CAST("Height" AS DOUBLE) - off_3) / sc_3 / 0.08944271901054887::DOUBLE) ELSE CAST("Height" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("Chest" AS DOUBLE) - off_4) / sc_4 / 0.08944271901054887::DOUBLE)) THEN floor((CAST("Chest" AS DOUBLE) - off_4) / sc_4 / 0.08944271901054887::DOUBLE) ELSE CAST("Chest" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("Abdomen" AS DOUBLE) - off_5) / sc_5 / 0.08944271901054887::DOUBLE)) THEN floor((CAST("Abdomen" AS DOUBLE) - off_5) / sc_5 / 0.08944271901054887::DOUBLE) ELSE CAST("Abdomen" AS DOUBLE) END
)
SELECT coalesce(sum(c * greatest(c - 1, 5)), 0)::HUGEINT, coalesce(sum(c), 0),
    coalesce(max(c), 0), arg_max(label, c)
FROM cells
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE IF NOT EXISTS temp.main.__rwn_keys (id VARCHAR, k VARCHAR, lasting BOOLEAN)
-- ----------------------------------------------------------------- statement
SELECT id FROM temp.main.__rwn_keys WHERE lasting AND k = ?
-- ----------------------------------------------------------------- statement
WITH src AS (SELECT * FROM "memory"."main"."bodyfat" WHERE isfinite(CAST("Age" AS DOUBLE)) AND isfinite(CAST("Weight" AS DOUBLE)) AND isfinite(CAST("Height" AS DOUBLE)) AND isfinite(CAST("Chest" AS DOUBLE)) AND isfinite(CAST("Abdomen" AS DOUBLE))),
stats AS (SELECT min(CAST("Age" AS DOUBLE)) AS off_1, max(CAST("Age" AS DOUBLE)) - min(CAST("Age" AS DOUBLE)) AS sc_1, min(CAST("Weight" AS DOUBLE)) AS off_2, max(CAST("Weight" AS DOUBLE)) - min(CAST("Weight" AS DOUBLE)) AS sc_2, min(CAST("Height" AS DOUBLE)) AS off_3, max(CAST("Height" AS DOUBLE)) - min(CAST("Height" AS DOUBLE)) AS sc_3, min(CAST("Chest" AS DOUBLE)) AS off_4, max(CAST("Chest" AS DOUBLE)) - min(CAST("Chest" AS DOUBLE)) AS sc_4, min(CAST("Abdomen" AS DOUBLE)) AS off_5, max(CAST("Abdomen" AS DOUBLE)) - min(CAST("Abdomen" AS DOUBLE)) AS sc_5 FROM src),
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY floor((CAST(s."Age" AS DOUBLE) - t.off_1) / t.sc_1 / 0.08944271909999159::DOUBLE), floor((CAST(s."Weight" AS DOUBLE) - t.off_2) / t.sc_2 / 0.08944271909999159::DOUBLE), floor((CAST(s."Height" AS DOUBLE) - t.off_3) / t.sc_3 / 0.08944271909999159::DOUBLE), floor((CAST(s."Chest" AS DOUBLE) - t.off_4) / t.sc_4 / 0.08944271909999159::DOUBLE), floor((CAST(s."Abdomen" AS DOUBLE) - t.off_5) / t.sc_5 / 0.08944271909999159::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
SELECT max(CAST("Age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))) - min(CAST("Age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), stddev_samp(CAST("Age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), max(CAST("Weight" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))) - min(CAST("Weight" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))), stddev_samp(CAST("Weight" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))), max(CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) - min(CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))), stddev_samp(CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))), max(CAST("Chest" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Chest" AS DOUBLE))) - min(CAST("Chest" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Chest" AS DOUBLE))), stddev_samp(CAST("Chest" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Chest" AS DOUBLE))), max(CAST("Abdomen" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Abdomen" AS DOUBLE))) - min(CAST("Abdomen" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Abdomen" AS DOUBLE))), stddev_samp(CAST("Abdomen" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Abdomen" AS DOUBLE))), covar_pop(CAST("Age" AS DOUBLE), CAST("Age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE)) AND isfinite(CAST("Age" AS DOUBLE))), covar_pop(CAST("Age" AS DOUBLE), CAST("Weight" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE)) AND isfinite(CAST("Weight" AS DOUBLE))), covar_pop(CAST("Age" AS DOUBLE), CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE)) AND isfinite(CAST("Height" AS DOUBLE))), covar_pop(CAST("Age" AS DOUBLE), CAST("Chest" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE)) AND isfinite(CAST("Chest" AS DOUBLE))), covar_pop(CAST("Age" AS DOUBLE), CAST("Abdomen" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE)) AND isfinite(CAST("Abdomen" AS DOUBLE))), covar_pop(CAST("Weight" AS DOUBLE), CAST("Weight" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE)) AND isfinite(CAST("Weight" AS DOUBLE))), covar_pop(CAST("Weight" AS DOUBLE), CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE)) AND isfinite(CAST("Height" AS DOUBLE))), covar_pop(CAST("Weight" AS DOUBLE), CAST("Chest" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE)) AND isfinite(CAST("Chest" AS DOUBLE))), covar_pop(CAST("Weight" AS DOUBLE), CAST("Abdomen" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE)) AND isfinite(CAST("Abdomen" AS DOUBLE))), covar_pop(CAST("Height" AS DOUBLE), CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE)) AND isfinite(CAST("Height" AS DOUBLE))), covar_pop(CAST("Height" AS DOUBLE), CAST("Chest" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE)) AND isfinite(CAST("Chest" AS DOUBLE))), covar_pop(CAST("Height" AS DOUBLE), CAST("Abdomen" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE)) AND isfinite(CAST("Abdomen" AS DOUBLE))), covar_pop(CAST("Chest" AS DOUBLE), CAST("Chest" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Chest" AS DOUBLE)) AND isfinite(CAST("Chest" AS DOUBLE))), covar_pop(CAST("Chest" AS DOUBLE), CAST("Abdomen" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Chest" AS DOUBLE)) AND isfinite(CAST("Abdomen" AS DOUBLE))), covar_pop(CAST("Abdomen" AS DOUBLE), CAST("Abdomen" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Abdomen" AS DOUBLE)) AND isfinite(CAST("Abdomen" AS DOUBLE))) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
WITH RECURSIVE
-- rwn_sql: exact RWN neighbourhoods by grid-bucketed self-joins (METHODS.md section 1).
-- S_i = { j != i in i's stratum : d(i, j) <= max(eps, r_k(i)) }, ties at the radius included:
-- computed squared distances within a factor 1.000000000000004::DOUBLE of the radius count as equal, which
-- provably includes every exact tie (METHODS.md, "Exact ties").
-- Records are bucketed into grid cells of side s; every j within s of i lies in i's cell or
-- an adjacent one, so a record is exact once k records and eps lie within its margin. Records
-- that are not yet exact retry with s doubled: no step compares all pairs.
src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
staged AS MATERIALIZED (
    -- record number: 1-based input position (DuckDB preserves insertion order), or the rank
    -- of the id column's value when id= is given (then the input order does not matter)
    SELECT row_number() OVER () AS __rwn_rid, *
    FROM src
),
stats AS (
    SELECT count(*) AS n,
        min(CAST("Age" AS DOUBLE)) AS lo_1,
        max(CAST("Age" AS DOUBLE)) AS hi_1,
        stddev_samp(CAST("Age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))) AS sd_1,
        var_pop(CAST("Age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))) AS var_1,
        count(*) FILTER (WHERE "Age" IS NULL OR NOT isfinite(CAST("Age" AS DOUBLE))) AS bad_1,
        min(CAST("Weight" AS DOUBLE)) AS lo_2,
        max(CAST("Weight" AS DOUBLE)) AS hi_2,
        stddev_samp(CAST("Weight" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))) AS sd_2,
        var_pop(CAST("Weight" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))) AS var_2,
        count(*) FILTER (WHERE "Weight" IS NULL OR NOT isfinite(CAST("Weight" AS DOUBLE))) AS bad_2,
        min(CAST("Height" AS DOUBLE)) AS lo_3,
        max(CAST("Height" AS DOUBLE)) AS hi_3,
        stddev_samp(CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) AS sd_3,
        var_pop(CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) AS var_3,
        count(*) FILTER (WHERE "Height" IS NULL OR NOT isfinite(CAST("Height" AS DOUBLE))) AS bad_3,
        min(CAST("Chest" AS DOUBLE)) AS lo_4,
        max(CAST("Chest" AS DOUBLE)) AS hi_4,
        stddev_samp(CAST("Chest" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Chest" AS DOUBLE))) AS sd_4,
        var_pop(CAST("Chest" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Chest" AS DOUBLE))) AS var_4,
        count(*) FILTER (WHERE "Chest" IS NULL OR NOT isfinite(CAST("Chest" AS DOUBLE))) AS bad_4,
        min(CAST("Abdomen" AS DOUBLE)) AS lo_5,
        max(CAST("Abdomen" AS DOUBLE)) AS hi_5,
        stddev_samp(CAST("Abdomen" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Abdomen" AS DOUBLE))) AS sd_5,
        var_pop(CAST("Abdomen" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Abdomen" AS DOUBLE))) AS var_5,
        count(*) FILTER (WHERE "Abdomen" IS NULL OR NOT isfinite(CAST("Abdomen" AS DOUBLE))) AS bad_5
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
        lo_2 AS off_2,
        hi_2 - lo_2 AS sc_2,
        lo_3 AS off_3,
        hi_3 - lo_3 AS sc_3,
        lo_4 AS off_4,
        hi_4 - lo_4 AS sc_4,
        lo_5 AS off_5,
        hi_5 - lo_5 AS sc_5,
        CASE
            WHEN n = 0 THEN 'the input has no records'
            WHEN bad_1 > 0 THEN 'column "Age"' || ' has ' || bad_1 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_1 = lo_1 THEN 'column "Age"' || ' is constant (every value is ' || lo_1 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_1 - lo_1) AND isfinite(hi_1 - lo_1) AND isfinite((hi_1 - lo_1) / (hi_1 - lo_1) * (hi_1 - lo_1) / (hi_1 - lo_1) * 5), false) THEN 'column "Age"' || ' spans ' || lo_1 || ' to ' || hi_1 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_2 > 0 THEN 'column "Weight"' || ' has ' || bad_2 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_2 = lo_2 THEN 'column "Weight"' || ' is constant (every value is ' || lo_2 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_2 - lo_2) AND isfinite(hi_2 - lo_2) AND isfinite((hi_2 - lo_2) / (hi_2 - lo_2) * (hi_2 - lo_2) / (hi_2 - lo_2) * 5), false) THEN 'column "Weight"' || ' spans ' || lo_2 || ' to ' || hi_2 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_3 > 0 THEN 'column "Height"' || ' has ' || bad_3 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_3 = lo_3 THEN 'column "Height"' || ' is constant (every value is ' || lo_3 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_3 - lo_3) AND isfinite(hi_3 - lo_3) AND isfinite((hi_3 - lo_3) / (hi_3 - lo_3) * (hi_3 - lo_3) / (hi_3 - lo_3) * 5), false) THEN 'column "Height"' || ' spans ' || lo_3 || ' to ' || hi_3 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_4 > 0 THEN 'column "Chest"' || ' has ' || bad_4 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_4 = lo_4 THEN 'column "Chest"' || ' is constant (every value is ' || lo_4 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_4 - lo_4) AND isfinite(hi_4 - lo_4) AND isfinite((hi_4 - lo_4) / (hi_4 - lo_4) * (hi_4 - lo_4) / (hi_4 - lo_4) * 5), false) THEN 'column "Chest"' || ' spans ' || lo_4 || ' to ' || hi_4 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_5 > 0 THEN 'column "Abdomen"' || ' has ' || bad_5 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_5 = lo_5 THEN 'column "Abdomen"' || ' is constant (every value is ' || lo_5 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_5 - lo_5) AND isfinite(hi_5 - lo_5) AND isfinite((hi_5 - lo_5) / (hi_5 - lo_5) * (hi_5 - lo_5) / (hi_5 - lo_5) * 5), false) THEN 'column "Abdomen"' || ' spans ' || lo_5 || ' to ' || hi_5 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN smallest <= 5 THEN 'the input has ' || smallest || ' records; k = 5 needs at least 6 (k must be below the number of records in every stratum)'
        END AS problem
    FROM stats, strata_sizes
),
settings AS (
    -- s0: starting cell side; diameter: no two records are further apart than this;
    -- grid_dims: how many grid coordinates the search uses (the rest stay in one cell)
    SELECT
        CASE WHEN problem IS NOT NULL THEN error('rwn_sql: ' || problem)
             ELSE greatest(0.2::DOUBLE * 1.000001, coalesce(pow(12 * pow(((hi_1 - lo_1) / sc_1) * ((hi_2 - lo_2) / sc_2) * ((hi_3 - lo_3) / sc_3) * ((hi_4 - lo_4) / sc_4) * ((hi_5 - lo_5) / sc_5), 3.0 / 5) / (n * 4.1887902047863905), 1.0 / 3), 0.0), 1e-9 * diameter, 1e-12)
        END AS s0,
        diameter, grid_dims, off_1, sc_1, off_2, sc_2, off_3, sc_3, off_4, sc_4, off_5, sc_5
    FROM (SELECT *, sqrt(pow((hi_1 - lo_1) / sc_1, 2) + pow((hi_2 - lo_2) / sc_2, 2) + pow((hi_3 - lo_3) / sc_3, 2) + pow((hi_4 - lo_4) / sc_4, 2) + pow((hi_5 - lo_5) / sc_5, 2)) AS diameter, 3 AS grid_dims FROM params)
),
scaled AS (
    -- unscaled distance values v_*, categorical distance columns c_*, strata k_*, and the
    -- scaled grid coordinates g_* (the numeric columns with the largest scaled spread)
    SELECT s.__rwn_rid AS rid,
        CAST(s."Age" AS DOUBLE) AS v_1,
        CAST(s."Weight" AS DOUBLE) AS v_2,
        CAST(s."Height" AS DOUBLE) AS v_3,
        CAST(s."Chest" AS DOUBLE) AS v_4,
        CAST(s."Abdomen" AS DOUBLE) AS v_5,
        abs((CAST(s."Age" AS DOUBLE) - p.off_1) / p.sc_1) + abs((CAST(s."Weight" AS DOUBLE) - p.off_2) / p.sc_2) + abs((CAST(s."Height" AS DOUBLE) - p.off_3) / p.sc_3) + abs((CAST(s."Chest" AS DOUBLE) - p.off_4) / p.sc_4) + abs((CAST(s."Abdomen" AS DOUBLE) - p.off_5) / p.sc_5) AS g_mag,
        0.125858534::DOUBLE * (CAST(s."Age" AS DOUBLE) - p.off_1) / p.sc_1 + 0.476196509::DOUBLE * (CAST(s."Weight" AS DOUBLE) - p.off_2) / p.sc_2 + 0.388551676::DOUBLE * (CAST(s."Height" AS DOUBLE) - p.off_3) / p.sc_3 + 0.592579863::DOUBLE * (CAST(s."Chest" AS DOUBLE) - p.off_4) / p.sc_4 + 0.505245696::DOUBLE * (CAST(s."Abdomen" AS DOUBLE) - p.off_5) / p.sc_5 AS g_1,
        0.846716175::DOUBLE * (CAST(s."Age" AS DOUBLE) - p.off_1) / p.sc_1 + -0.067757562::DOUBLE * (CAST(s."Weight" AS DOUBLE) - p.off_2) / p.sc_2 + -0.503443841::DOUBLE * (CAST(s."Height" AS DOUBLE) - p.off_3) / p.sc_3 + 0.100698464::DOUBLE * (CAST(s."Chest" AS DOUBLE) - p.off_4) / p.sc_4 + 0.122003065::DOUBLE * (CAST(s."Abdomen" AS DOUBLE) - p.off_5) / p.sc_5 AS g_2,
        0.511958554::DOUBLE * (CAST(s."Age" AS DOUBLE) - p.off_1) / p.sc_1 + -0.117649281::DOUBLE * (CAST(s."Weight" AS DOUBLE) - p.off_2) / p.sc_2 + 0.757013416::DOUBLE * (CAST(s."Height" AS DOUBLE) - p.off_3) / p.sc_3 + -0.299948983::DOUBLE * (CAST(s."Chest" AS DOUBLE) - p.off_4) / p.sc_4 + -0.247018987::DOUBLE * (CAST(s."Abdomen" AS DOUBLE) - p.off_5) / p.sc_5 AS g_3
    FROM staged s, params p, settings st
),
first_level AS (
    -- first_lvl: records in dense cells start on a finer grid. The cell count at side s0,
    -- over the count expected if the data were spread evenly, gives the local density;
    -- each level halves the side, dividing the count by 2^G.
    SELECT scaled.*,
        -CAST(round(log2(greatest(count(*) OVER (PARTITION BY floor(g_1 / (st.s0)), floor(g_2 / (st.s0)), floor(g_3 / (st.s0))) * 4.1887902047863905 / 12, 1)) * 1.0 / 3) AS INTEGER) AS first_lvl
    FROM scaled, settings st
),
points AS MATERIALIZED (
    -- start_lvl: the same estimate once more, from the count in the record's cell at first_lvl:
    -- a cell of side s0 averages the density over a region much larger than the k nearest
    -- (clumps of near-duplicates, heavy tails), which put records on too coarse a grid.
    -- Only finer (with eps > 0, not below the level whose cells hold eps): the start level
    -- affects the speed, never the neighbourhoods. On a column grid
    -- the g_* are not kept: the steps that read them recompute them from v_* (sqlgen's grid_columns).
    SELECT rid, v_1, v_2, v_3, v_4, v_5, g_mag, g_1, g_2, g_3,
        greatest(first_lvl - CAST(round(log2(greatest(count(*) OVER (PARTITION BY first_lvl, floor(g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl)))) * 4.1887902047863905 / 12, 1)) * 1.0 / 3 - 0.375) AS INTEGER), CAST(ceil(1.0 * log2(0.2::DOUBLE / (1.2 * st.s0))) AS INTEGER)) AS start_lvl
    FROM first_level f, settings st
),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
search(lvl, rid, start_lvl, done, members, radius2, dcr2) AS (
    SELECT (SELECT min(start_lvl) FROM points) - 1 AS lvl, points.rid, start_lvl, false AS done,
        NULL::STRUCT(d2 DOUBLE, j BIGINT)[] AS members, NULL::DOUBLE AS radius2, NULL::DOUBLE AS dcr2
    FROM points
    UNION ALL
    (WITH
-- rwn_sql: one level of the neighbourhood search (sql/rwn_neighborhoods.sql): the records of
-- `search` still searching try cells of side s = s0 * growth^lvl; DuckDB runs it as the recursive member,
-- Spark once per level (rwn_sql/engines/spark.py).
active AS (
    -- records still searching whose start level is reached; cell side s = s0 * growth^lvl
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, sc_4, sc_5, grid_dims, p.*
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    -- margin: every record within this distance of i is in i's block of cells
    SELECT a.*,
            CAST(floor(least(greatest(g_1 / s, -1e12), 1e12)) AS BIGINT) AS cell_1,
            CAST(floor(least(greatest(g_2 / s, -1e12), 1e12)) AS BIGINT) AS cell_2,
            CAST(floor(least(greatest(g_3 / s, -1e12), 1e12)) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - floor(g_1 / s), 1 - (g_1 / s - floor(g_1 / s)), g_2 / s - floor(g_2 / s), 1 - (g_2 / s - floor(g_2 / s)), g_3 / s - floor(g_3 / s), 1 - (g_3 / s - floor(g_3 / s))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s), g_mag / s))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST(floor(least(greatest(g_1 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST(floor(least(greatest(g_2 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST(floor(least(greatest(g_3 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.* FROM points p, settings st) p, level l
),
pairs AS (
    -- candidates within the margin; i itself (distance 0) is always among them. The neighbour
    -- cells nb_* are columns of one relation, so no optimizer can join probe with build before
    -- the offsets (Spark's did: a cartesian product)
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3)
                + ((a.v_4 - b.v_4) / a.sc_4) * ((a.v_4 - b.v_4) / a.sc_4)
                + ((a.v_5 - b.v_5) / a.sc_5) * ((a.v_5 - b.v_5) / a.sc_5) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    -- The margin filters inside the aggregates. A WHERE that DuckDB would push into the cell
    -- join as a residual condition, evaluated pair by pair, was 1.5-2x slower on 5 columns; a
    -- filter the optimizer keeps after the join (margin_filter, where the dialect has one) drops
    -- the pairs beyond the margin (about 3/4 on 3 columns) before they are grouped.
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        -- done once the radius, widened for ties, lies within the margin
        count(*) FILTER (WHERE d2 * 1.000000000000004::DOUBLE <= margin2) - 1 >= 5
            AND 0.04000000000000001::DOUBLE * 1.000000000000004::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.04000000000000001::DOUBLE, found[5].d2)) * 1.000000000000004::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.04000000000000001::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1
)
),
hood AS (
    -- the exact neighbourhoods: members sorted by (distance, record), and their number
    SELECT rid, members, radius2, dcr2, len(members) AS size
    FROM search, settings
    WHERE done AND settings.s0 > 0
)
,
-- rwn_sql: RWN perturbation. Per record and column, independently: with probability q the
-- value is replaced by the same column of a member of S_i drawn uniformly, else kept.
-- Draws come from a keyed hash of (key, purpose, record, column); see rwn_sql/randomness.py.
draws AS (
    SELECT rid, members, size,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|Age')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_1,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|Weight')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_2,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|Height')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_3,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|Chest')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_4,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|Abdomen')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_5
    FROM hood
),
picks AS MATERIALIZED (
    SELECT rid,
        CASE WHEN CAST((h_1 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_1 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_1,
        CASE WHEN CAST((h_2 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_2 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_2,
        CASE WHEN CAST((h_3 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_3 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_3,
        CASE WHEN CAST((h_4 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_4 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_4,
        CASE WHEN CAST((h_5 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_5 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_5
    FROM draws
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

SELECT s.* EXCLUDE (__rwn_rid) REPLACE (d_1."Age" AS "Age", d_2."Weight" AS "Weight", d_3."Height" AS "Height", d_4."Chest" AS "Chest", d_5."Abdomen" AS "Abdomen")
FROM picks p
JOIN lookup s ON s.__rwn_rid = p.rid
LEFT JOIN lookup d_1 ON d_1.__rwn_rid = p.donor_1
LEFT JOIN lookup d_2 ON d_2.__rwn_rid = p.donor_2
LEFT JOIN lookup d_3 ON d_3.__rwn_rid = p.donor_3
LEFT JOIN lookup d_4 ON d_4.__rwn_rid = p.donor_4
LEFT JOIN lookup d_5 ON d_5.__rwn_rid = p.donor_5
ORDER BY CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.order|')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(s.__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT), s.__rwn_rid
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
SELECT min("Age") FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), max("Age") FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), min("Weight") FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))), max("Weight") FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))), min("Height") FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))), max("Height") FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
WITH src AS (SELECT * FROM "memory"."main"."bodyfat" WHERE isfinite(CAST("Age" AS DOUBLE)) AND isfinite(CAST("Weight" AS DOUBLE)) AND isfinite(CAST("Height" AS DOUBLE))),
stats AS (SELECT min(CAST("Age" AS DOUBLE)) AS off_1, max(CAST("Age" AS DOUBLE)) - min(CAST("Age" AS DOUBLE)) AS sc_1, min(CAST("Weight" AS DOUBLE)) AS off_2, max(CAST("Weight" AS DOUBLE)) - min(CAST("Weight" AS DOUBLE)) AS sc_2, min(CAST("Height" AS DOUBLE)) AS off_3, max(CAST("Height" AS DOUBLE)) - min(CAST("Height" AS DOUBLE)) AS sc_3 FROM src),
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY floor((CAST(s."Age" AS DOUBLE) - t.off_1) / t.sc_1 / 0.14433756729740646::DOUBLE), floor((CAST(s."Weight" AS DOUBLE) - t.off_2) / t.sc_2 / 0.14433756729740646::DOUBLE), floor((CAST(s."Height" AS DOUBLE) - t.off_3) / t.sc_3 / 0.14433756729740646::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
WITH src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
stats AS (SELECT min(CAST("Age" AS DOUBLE)) AS off_1, max(CAST("Age" AS DOUBLE)) - min(CAST("Age" AS DOUBLE)) AS sc_1, min(CAST("Weight" AS DOUBLE)) AS off_2, max(CAST("Weight" AS DOUBLE)) - min(CAST("Weight" AS DOUBLE)) AS sc_2, min(CAST("Height" AS DOUBLE)) AS off_3, max(CAST("Height" AS DOUBLE)) - min(CAST("Height" AS DOUBLE)) AS sc_3 FROM src),
cells AS (
    SELECT count(*) AS c, 'all records' AS label
    FROM src, stats
    GROUP BY CASE WHEN isfinite(floor((CAST("Age" AS DOUBLE) - off_1) / sc_1 / 0.1443375671530689::DOUBLE)) THEN floor((CAST("Age" AS DOUBLE) - off_1) / sc_1 / 0.1443375671530689::DOUBLE) ELSE CAST("Age" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("Weight" AS DOUBLE) - off_2) / sc_2 / 0.1443375671530689::DOUBLE)) THEN floor((CAST("Weight" AS DOUBLE) - off_2) / sc_2 / 0.1443375671530689::DOUBLE) ELSE CAST("Weight" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("Height" AS DOUBLE) - off_3) / sc_3 / 0.1443375671530689::DOUBLE)) THEN floor((CAST("Height" AS DOUBLE) - off_3) / sc_3 / 0.1443375671530689::DOUBLE) ELSE CAST("Height" AS DOUBLE) END
)
SELECT coalesce(sum(c * greatest(c - 1, 5)), 0)::HUGEINT, coalesce(sum(c), 0),
    coalesce(max(c), 0), arg_max(label, c)
FROM cells
-- ----------------------------------------------------------------- statement
WITH src AS (SELECT * FROM "memory"."main"."bodyfat" WHERE isfinite(CAST("Age" AS DOUBLE)) AND isfinite(CAST("Weight" AS DOUBLE)) AND isfinite(CAST("Height" AS DOUBLE))),
stats AS (SELECT min(CAST("Age" AS DOUBLE)) AS off_1, max(CAST("Age" AS DOUBLE)) - min(CAST("Age" AS DOUBLE)) AS sc_1, min(CAST("Weight" AS DOUBLE)) AS off_2, max(CAST("Weight" AS DOUBLE)) - min(CAST("Weight" AS DOUBLE)) AS sc_2, min(CAST("Height" AS DOUBLE)) AS off_3, max(CAST("Height" AS DOUBLE)) - min(CAST("Height" AS DOUBLE)) AS sc_3 FROM src),
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY floor((CAST(s."Age" AS DOUBLE) - t.off_1) / t.sc_1 / 0.14433756729740646::DOUBLE), floor((CAST(s."Weight" AS DOUBLE) - t.off_2) / t.sc_2 / 0.14433756729740646::DOUBLE), floor((CAST(s."Height" AS DOUBLE) - t.off_3) / t.sc_3 / 0.14433756729740646::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
WITH RECURSIVE
-- rwn_sql: exact RWN neighbourhoods by grid-bucketed self-joins (METHODS.md section 1).
-- S_i = { j != i in i's stratum : d(i, j) <= max(eps, r_k(i)) }, ties at the radius included:
-- computed squared distances within a factor 1.000000000000003::DOUBLE of the radius count as equal, which
-- provably includes every exact tie (METHODS.md, "Exact ties").
-- Records are bucketed into grid cells of side s; every j within s of i lies in i's cell or
-- an adjacent one, so a record is exact once k records and eps lie within its margin. Records
-- that are not yet exact retry with s doubled: no step compares all pairs.
src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
staged AS MATERIALIZED (
    -- record number: 1-based input position (DuckDB preserves insertion order), or the rank
    -- of the id column's value when id= is given (then the input order does not matter)
    SELECT row_number() OVER () AS __rwn_rid, *
    FROM src
),
stats AS (
    SELECT count(*) AS n,
        min(CAST("Age" AS DOUBLE)) AS lo_1,
        max(CAST("Age" AS DOUBLE)) AS hi_1,
        stddev_samp(CAST("Age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))) AS sd_1,
        var_pop(CAST("Age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))) AS var_1,
        count(*) FILTER (WHERE "Age" IS NULL OR NOT isfinite(CAST("Age" AS DOUBLE))) AS bad_1,
        min(CAST("Weight" AS DOUBLE)) AS lo_2,
        max(CAST("Weight" AS DOUBLE)) AS hi_2,
        stddev_samp(CAST("Weight" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))) AS sd_2,
        var_pop(CAST("Weight" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))) AS var_2,
        count(*) FILTER (WHERE "Weight" IS NULL OR NOT isfinite(CAST("Weight" AS DOUBLE))) AS bad_2,
        min(CAST("Height" AS DOUBLE)) AS lo_3,
        max(CAST("Height" AS DOUBLE)) AS hi_3,
        stddev_samp(CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) AS sd_3,
        var_pop(CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) AS var_3,
        count(*) FILTER (WHERE "Height" IS NULL OR NOT isfinite(CAST("Height" AS DOUBLE))) AS bad_3
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
        lo_2 AS off_2,
        hi_2 - lo_2 AS sc_2,
        lo_3 AS off_3,
        hi_3 - lo_3 AS sc_3,
        CASE
            WHEN n = 0 THEN 'the input has no records'
            WHEN bad_1 > 0 THEN 'column "Age"' || ' has ' || bad_1 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_1 = lo_1 THEN 'column "Age"' || ' is constant (every value is ' || lo_1 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_1 - lo_1) AND isfinite(hi_1 - lo_1) AND isfinite((hi_1 - lo_1) / (hi_1 - lo_1) * (hi_1 - lo_1) / (hi_1 - lo_1) * 3), false) THEN 'column "Age"' || ' spans ' || lo_1 || ' to ' || hi_1 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_2 > 0 THEN 'column "Weight"' || ' has ' || bad_2 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_2 = lo_2 THEN 'column "Weight"' || ' is constant (every value is ' || lo_2 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_2 - lo_2) AND isfinite(hi_2 - lo_2) AND isfinite((hi_2 - lo_2) / (hi_2 - lo_2) * (hi_2 - lo_2) / (hi_2 - lo_2) * 3), false) THEN 'column "Weight"' || ' spans ' || lo_2 || ' to ' || hi_2 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_3 > 0 THEN 'column "Height"' || ' has ' || bad_3 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_3 = lo_3 THEN 'column "Height"' || ' is constant (every value is ' || lo_3 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_3 - lo_3) AND isfinite(hi_3 - lo_3) AND isfinite((hi_3 - lo_3) / (hi_3 - lo_3) * (hi_3 - lo_3) / (hi_3 - lo_3) * 3), false) THEN 'column "Height"' || ' spans ' || lo_3 || ' to ' || hi_3 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN smallest <= 5 THEN 'the input has ' || smallest || ' records; k = 5 needs at least 6 (k must be below the number of records in every stratum)'
        END AS problem
    FROM stats, strata_sizes
),
settings AS (
    -- s0: starting cell side; diameter: no two records are further apart than this;
    -- grid_dims: how many grid coordinates the search uses (the rest stay in one cell)
    SELECT
        CASE WHEN problem IS NOT NULL THEN error('rwn_sql: ' || problem)
             ELSE greatest(0.25::DOUBLE * 1.000001, coalesce(pow(12 * pow(((hi_1 - lo_1) / sc_1) * ((hi_2 - lo_2) / sc_2) * ((hi_3 - lo_3) / sc_3), 3.0 / 3) / (n * 4.1887902047863905), 1.0 / 3), 0.0), 1e-9 * diameter, 1e-12)
        END AS s0,
        diameter, grid_dims, off_1, sc_1, off_2, sc_2, off_3, sc_3
    FROM (SELECT *, sqrt(pow((hi_1 - lo_1) / sc_1, 2) + pow((hi_2 - lo_2) / sc_2, 2) + pow((hi_3 - lo_3) / sc_3, 2)) AS diameter, 3 AS grid_dims FROM params)
),
scaled AS (
    -- unscaled distance values v_*, categorical distance columns c_*, strata k_*, and the
    -- scaled grid coordinates g_* (the numeric columns with the largest scaled spread)
    SELECT s.__rwn_rid AS rid,
        CAST(s."Age" AS DOUBLE) AS v_1,
        CAST(s."Weight" AS DOUBLE) AS v_2,
        CAST(s."Height" AS DOUBLE) AS v_3,
        (CAST(s."Age" AS DOUBLE) - p.off_1) / p.sc_1 AS g_1,
        (CAST(s."Weight" AS DOUBLE) - p.off_2) / p.sc_2 AS g_2,
        (CAST(s."Height" AS DOUBLE) - p.off_3) / p.sc_3 AS g_3
    FROM staged s, params p, settings st
),
first_level AS (
    -- first_lvl: records in dense cells start on a finer grid. The cell count at side s0,
    -- over the count expected if the data were spread evenly, gives the local density;
    -- each level halves the side, dividing the count by 2^G.
    SELECT scaled.*,
        -CAST(round(log2(greatest(count(*) OVER (PARTITION BY floor(g_1 / (st.s0)), floor(g_2 / (st.s0)), floor(g_3 / (st.s0))) * 4.1887902047863905 / 12, 1)) * 1.0 / 3) AS INTEGER) AS first_lvl
    FROM scaled, settings st
),
points AS MATERIALIZED (
    -- start_lvl: the same estimate once more, from the count in the record's cell at first_lvl:
    -- a cell of side s0 averages the density over a region much larger than the k nearest
    -- (clumps of near-duplicates, heavy tails), which put records on too coarse a grid.
    -- Only finer (with eps > 0, not below the level whose cells hold eps): the start level
    -- affects the speed, never the neighbourhoods. On a column grid
    -- the g_* are not kept: the steps that read them recompute them from v_* (sqlgen's grid_columns).
    SELECT rid, v_1, v_2, v_3,
        greatest(first_lvl - CAST(round(log2(greatest(count(*) OVER (PARTITION BY first_lvl, floor(g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl)))) * 4.1887902047863905 / 12, 1)) * 1.0 / 3 - 0.375) AS INTEGER), CAST(ceil(1.0 * log2(0.25::DOUBLE / (1.2 * st.s0))) AS INTEGER)) AS start_lvl
    FROM first_level f, settings st
),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
search(lvl, rid, start_lvl, done, members, radius2, dcr2) AS (
    SELECT (SELECT min(start_lvl) FROM points) - 1 AS lvl, points.rid, start_lvl, false AS done,
        NULL::STRUCT(d2 DOUBLE, j BIGINT)[] AS members, NULL::DOUBLE AS radius2, NULL::DOUBLE AS dcr2
    FROM points
    UNION ALL
    (WITH
-- rwn_sql: one level of the neighbourhood search (sql/rwn_neighborhoods.sql): the records of
-- `search` still searching try cells of side s = s0 * growth^lvl; DuckDB runs it as the recursive member,
-- Spark once per level (rwn_sql/engines/spark.py).
active AS (
    -- records still searching whose start level is reached; cell side s = s0 * growth^lvl
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    -- margin: every record within this distance of i is in i's block of cells
    SELECT a.*,
            CAST(floor(least(greatest(g_1 / s, -1e12), 1e12)) AS BIGINT) AS cell_1,
            CAST(floor(least(greatest(g_2 / s, -1e12), 1e12)) AS BIGINT) AS cell_2,
            CAST(floor(least(greatest(g_3 / s, -1e12), 1e12)) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - floor(g_1 / s), 1 - (g_1 / s - floor(g_1 / s)), g_2 / s - floor(g_2 / s), 1 - (g_2 / s - floor(g_2 / s)), g_3 / s - floor(g_3 / s), 1 - (g_3 / s - floor(g_3 / s))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s)))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST(floor(least(greatest(g_1 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST(floor(least(greatest(g_2 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST(floor(least(greatest(g_3 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3 FROM points p, settings st) p, level l
),
pairs AS (
    -- candidates within the margin; i itself (distance 0) is always among them. The neighbour
    -- cells nb_* are columns of one relation, so no optimizer can join probe with build before
    -- the offsets (Spark's did: a cartesian product)
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    -- The margin filters inside the aggregates. A WHERE that DuckDB would push into the cell
    -- join as a residual condition, evaluated pair by pair, was 1.5-2x slower on 5 columns; a
    -- filter the optimizer keeps after the join (margin_filter, where the dialect has one) drops
    -- the pairs beyond the margin (about 3/4 on 3 columns) before they are grouped.
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        -- done once the radius, widened for ties, lies within the margin
        count(*) FILTER (WHERE d2 * 1.000000000000003::DOUBLE <= margin2) - 1 >= 5
            AND 0.0625::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0625::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0625::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1
)
),
hood AS (
    -- the exact neighbourhoods: members sorted by (distance, record), and their number
    SELECT rid, members, radius2, dcr2, len(members) AS size
    FROM search, settings
    WHERE done AND settings.s0 > 0
)

SELECT rid AS record, size, sqrt(radius2) AS radius, sqrt(dcr2) AS dcr
FROM hood
ORDER BY record
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
SELECT min("Age") FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), max("Age") FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), min("Weight") FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))), max("Weight") FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))), min("Height") FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))), max("Height") FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
WITH src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
cells AS (
    SELECT count(*) AS c, 'all records' AS label
    FROM src
    GROUP BY CAST("Age" AS DOUBLE), CAST("Weight" AS DOUBLE), CAST("Height" AS DOUBLE)
)
SELECT coalesce(sum(c * greatest(c - 1, 4)), 0)::HUGEINT, coalesce(sum(c), 0),
    coalesce(max(c), 0), arg_max(label, c)
FROM cells
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
WITH src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
stats AS (SELECT count(*) AS n, coalesce(nullif(max(CAST("Age" AS DOUBLE)) - min(CAST("Age" AS DOUBLE)), 0), 1.0) AS sc_1, coalesce(nullif(max(CAST("Weight" AS DOUBLE)) - min(CAST("Weight" AS DOUBLE)), 0), 1.0) AS sc_2, coalesce(nullif(max(CAST("Height" AS DOUBLE)) - min(CAST("Height" AS DOUBLE)), 0), 1.0) AS sc_3 FROM src),
s AS (
    SELECT row_number() OVER () AS sid, CAST("Age" AS DOUBLE) AS v_1, CAST("Weight" AS DOUBLE) AS v_2, CAST("Height" AS DOUBLE) AS v_3
    FROM (SELECT * FROM src USING SAMPLE reservoir(2000 ROWS) REPEATABLE (22))
),
close AS (
    SELECT a.sid, count(b.sid) AS c
    FROM s a CROSS JOIN stats t
    LEFT JOIN s b ON a.sid <> b.sid AND ((a.v_1 - b.v_1) / t.sc_1) * ((a.v_1 - b.v_1) / t.sc_1) + ((a.v_2 - b.v_2) / t.sc_2) * ((a.v_2 - b.v_2) / t.sc_2) + ((a.v_3 - b.v_3) / t.sc_3) * ((a.v_3 - b.v_3) / t.sc_3) <= 0.0::DOUBLE * 1.000000000000003::DOUBLE
    GROUP BY a.sid
)
SELECT any_value(t.n), count(*),
    coalesce(avg(greatest(c * (t.n - 1) / greatest(m.m - 1, 1), 4)) * any_value(t.n), 0)
FROM close, stats t, (SELECT count(*) AS m FROM s) m
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
WITH RECURSIVE
-- rwn_sql: exact RWN neighbourhoods by grid-bucketed self-joins (METHODS.md section 1).
-- S_i = { j != i in i's stratum : d(i, j) <= max(eps, r_k(i)) }, ties at the radius included:
-- computed squared distances within a factor 1.000000000000003::DOUBLE of the radius count as equal, which
-- provably includes every exact tie (METHODS.md, "Exact ties").
-- Records are bucketed into grid cells of side s; every j within s of i lies in i's cell or
-- an adjacent one, so a record is exact once k records and eps lie within its margin. Records
-- that are not yet exact retry with s doubled: no step compares all pairs.
src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
staged AS MATERIALIZED (
    -- record number: 1-based input position (DuckDB preserves insertion order), or the rank
    -- of the id column's value when id= is given (then the input order does not matter)
    SELECT row_number() OVER () AS __rwn_rid, *
    FROM src
),
stats AS (
    SELECT count(*) AS n,
        min(CAST("Age" AS DOUBLE)) AS lo_1,
        max(CAST("Age" AS DOUBLE)) AS hi_1,
        stddev_samp(CAST("Age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))) AS sd_1,
        var_pop(CAST("Age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))) AS var_1,
        count(*) FILTER (WHERE "Age" IS NULL OR NOT isfinite(CAST("Age" AS DOUBLE))) AS bad_1,
        min(CAST("Weight" AS DOUBLE)) AS lo_2,
        max(CAST("Weight" AS DOUBLE)) AS hi_2,
        stddev_samp(CAST("Weight" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))) AS sd_2,
        var_pop(CAST("Weight" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))) AS var_2,
        count(*) FILTER (WHERE "Weight" IS NULL OR NOT isfinite(CAST("Weight" AS DOUBLE))) AS bad_2,
        min(CAST("Height" AS DOUBLE)) AS lo_3,
        max(CAST("Height" AS DOUBLE)) AS hi_3,
        stddev_samp(CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) AS sd_3,
        var_pop(CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) AS var_3,
        count(*) FILTER (WHERE "Height" IS NULL OR NOT isfinite(CAST("Height" AS DOUBLE))) AS bad_3
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
        lo_2 AS off_2,
        hi_2 - lo_2 AS sc_2,
        lo_3 AS off_3,
        hi_3 - lo_3 AS sc_3,
        CASE
            WHEN n = 0 THEN 'the input has no records'
            WHEN bad_1 > 0 THEN 'column "Age"' || ' has ' || bad_1 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_1 = lo_1 THEN 'column "Age"' || ' is constant (every value is ' || lo_1 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_1 - lo_1) AND isfinite(hi_1 - lo_1) AND isfinite((hi_1 - lo_1) / (hi_1 - lo_1) * (hi_1 - lo_1) / (hi_1 - lo_1) * 3), false) THEN 'column "Age"' || ' spans ' || lo_1 || ' to ' || hi_1 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_2 > 0 THEN 'column "Weight"' || ' has ' || bad_2 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_2 = lo_2 THEN 'column "Weight"' || ' is constant (every value is ' || lo_2 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_2 - lo_2) AND isfinite(hi_2 - lo_2) AND isfinite((hi_2 - lo_2) / (hi_2 - lo_2) * (hi_2 - lo_2) / (hi_2 - lo_2) * 3), false) THEN 'column "Weight"' || ' spans ' || lo_2 || ' to ' || hi_2 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_3 > 0 THEN 'column "Height"' || ' has ' || bad_3 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_3 = lo_3 THEN 'column "Height"' || ' is constant (every value is ' || lo_3 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_3 - lo_3) AND isfinite(hi_3 - lo_3) AND isfinite((hi_3 - lo_3) / (hi_3 - lo_3) * (hi_3 - lo_3) / (hi_3 - lo_3) * 3), false) THEN 'column "Height"' || ' spans ' || lo_3 || ' to ' || hi_3 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN smallest <= 4 THEN 'the input has ' || smallest || ' records; k = 4 needs at least 5 (k must be below the number of records in every stratum)'
        END AS problem
    FROM stats, strata_sizes
),
settings AS (
    -- s0: starting cell side; diameter: no two records are further apart than this;
    -- grid_dims: how many grid coordinates the search uses (the rest stay in one cell)
    SELECT
        CASE WHEN problem IS NOT NULL THEN error('rwn_sql: ' || problem)
             ELSE greatest(0.0::DOUBLE * 1.000001, coalesce(pow(10 * pow(((hi_1 - lo_1) / sc_1) * ((hi_2 - lo_2) / sc_2) * ((hi_3 - lo_3) / sc_3), 3.0 / 3) / (n * 4.1887902047863905), 1.0 / 3), 0.0), 1e-9 * diameter, 1e-12)
        END AS s0,
        diameter, grid_dims, off_1, sc_1, off_2, sc_2, off_3, sc_3
    FROM (SELECT *, sqrt(pow((hi_1 - lo_1) / sc_1, 2) + pow((hi_2 - lo_2) / sc_2, 2) + pow((hi_3 - lo_3) / sc_3, 2)) AS diameter, 3 AS grid_dims FROM params)
),
scaled AS (
    -- unscaled distance values v_*, categorical distance columns c_*, strata k_*, and the
    -- scaled grid coordinates g_* (the numeric columns with the largest scaled spread)
    SELECT s.__rwn_rid AS rid,
        CAST(s."Age" AS DOUBLE) AS v_1,
        CAST(s."Weight" AS DOUBLE) AS v_2,
        CAST(s."Height" AS DOUBLE) AS v_3,
        (CAST(s."Age" AS DOUBLE) - p.off_1) / p.sc_1 AS g_1,
        (CAST(s."Weight" AS DOUBLE) - p.off_2) / p.sc_2 AS g_2,
        (CAST(s."Height" AS DOUBLE) - p.off_3) / p.sc_3 AS g_3
    FROM staged s, params p, settings st
),
first_level AS (
    -- first_lvl: records in dense cells start on a finer grid. The cell count at side s0,
    -- over the count expected if the data were spread evenly, gives the local density;
    -- each level halves the side, dividing the count by 2^G.
    SELECT scaled.*,
        -CAST(round(log2(greatest(count(*) OVER (PARTITION BY floor(g_1 / (st.s0)), floor(g_2 / (st.s0)), floor(g_3 / (st.s0))) * 4.1887902047863905 / 5, 1)) * 1.0 / 3) AS INTEGER) AS first_lvl
    FROM scaled, settings st
),
points AS MATERIALIZED (
    -- start_lvl: the same estimate once more, from the count in the record's cell at first_lvl:
    -- a cell of side s0 averages the density over a region much larger than the k nearest
    -- (clumps of near-duplicates, heavy tails), which put records on too coarse a grid.
    -- Only finer (with eps > 0, not below the level whose cells hold eps): the start level
    -- affects the speed, never the neighbourhoods. On a column grid
    -- the g_* are not kept: the steps that read them recompute them from v_* (sqlgen's grid_columns).
    SELECT rid, v_1, v_2, v_3,
        first_lvl - CAST(round(log2(greatest(count(*) OVER (PARTITION BY first_lvl, floor(g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl)))) * 4.1887902047863905 / 5, 1)) * 1.0 / 3 - 0.375) AS INTEGER) AS start_lvl
    FROM first_level f, settings st
),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
search(lvl, rid, start_lvl, done, members, radius2, dcr2) AS (
    SELECT (SELECT min(start_lvl) FROM points) - 1 AS lvl, points.rid, start_lvl, false AS done,
        NULL::STRUCT(d2 DOUBLE, j BIGINT)[] AS members, NULL::DOUBLE AS radius2, NULL::DOUBLE AS dcr2
    FROM points
    UNION ALL
    (WITH
-- rwn_sql: one level of the neighbourhood search (sql/rwn_neighborhoods.sql): the records of
-- `search` still searching try cells of side s = s0 * growth^lvl; DuckDB runs it as the recursive member,
-- Spark once per level (rwn_sql/engines/spark.py).
active AS (
    -- records still searching whose start level is reached; cell side s = s0 * growth^lvl
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    -- margin: every record within this distance of i is in i's block of cells
    SELECT a.*,
            CAST(floor(least(greatest(g_1 / s, -1e12), 1e12)) AS BIGINT) AS cell_1,
            CAST(floor(least(greatest(g_2 / s, -1e12), 1e12)) AS BIGINT) AS cell_2,
            CAST(floor(least(greatest(g_3 / s, -1e12), 1e12)) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - floor(g_1 / s), 1 - (g_1 / s - floor(g_1 / s)), g_2 / s - floor(g_2 / s), 1 - (g_2 / s - floor(g_2 / s)), g_3 / s - floor(g_3 / s), 1 - (g_3 / s - floor(g_3 / s))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s)))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST(floor(least(greatest(g_1 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST(floor(least(greatest(g_2 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST(floor(least(greatest(g_3 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3 FROM points p, settings st) p, level l
),
pairs AS (
    -- candidates within the margin; i itself (distance 0) is always among them. The neighbour
    -- cells nb_* are columns of one relation, so no optimizer can join probe with build before
    -- the offsets (Spark's did: a cartesian product)
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    -- The margin filters inside the aggregates. A WHERE that DuckDB would push into the cell
    -- join as a residual condition, evaluated pair by pair, was 1.5-2x slower on 5 columns; a
    -- filter the optimizer keeps after the join (margin_filter, where the dialect has one) drops
    -- the pairs beyond the margin (about 3/4 on 3 columns) before they are grouped.
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        -- done once the radius, widened for ties, lies within the margin
        count(*) FILTER (WHERE d2 * 1.000000000000003::DOUBLE <= margin2) - 1 >= 4
            AND 0.0::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0::DOUBLE, found[4].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0::DOUBLE, found[4].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1
)
),
hood AS (
    -- the exact neighbourhoods: members sorted by (distance, record), and their number
    SELECT rid, members, radius2, dcr2, len(members) AS size
    FROM search, settings
    WHERE done AND settings.s0 > 0
)

SELECT record, neighbor, sqrt(d2) AS distance
FROM (SELECT rid AS record, unnest(members, recursive := true) FROM hood)
    AS u(record, d2, neighbor)
ORDER BY record, distance, neighbor
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
SELECT min("Age") FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), max("Age") FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), min("Weight") FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))), max("Weight") FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))), min("Height") FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))), max("Height") FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
WITH src AS (SELECT * FROM "memory"."main"."bodyfat" WHERE isfinite(CAST("Age" AS DOUBLE)) AND isfinite(CAST("Weight" AS DOUBLE)) AND isfinite(CAST("Height" AS DOUBLE))),
stats AS (SELECT min(CAST("Age" AS DOUBLE)) AS off_1, max(CAST("Age" AS DOUBLE)) - min(CAST("Age" AS DOUBLE)) AS sc_1, min(CAST("Weight" AS DOUBLE)) AS off_2, max(CAST("Weight" AS DOUBLE)) - min(CAST("Weight" AS DOUBLE)) AS sc_2, min(CAST("Height" AS DOUBLE)) AS off_3, max(CAST("Height" AS DOUBLE)) - min(CAST("Height" AS DOUBLE)) AS sc_3 FROM src),
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY floor((CAST(s."Age" AS DOUBLE) - t.off_1) / t.sc_1 / 0.05773502691896258::DOUBLE), floor((CAST(s."Weight" AS DOUBLE) - t.off_2) / t.sc_2 / 0.05773502691896258::DOUBLE), floor((CAST(s."Height" AS DOUBLE) - t.off_3) / t.sc_3 / 0.05773502691896258::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
WITH src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
stats AS (SELECT min(CAST("Age" AS DOUBLE)) AS off_1, max(CAST("Age" AS DOUBLE)) - min(CAST("Age" AS DOUBLE)) AS sc_1, min(CAST("Weight" AS DOUBLE)) AS off_2, max(CAST("Weight" AS DOUBLE)) - min(CAST("Weight" AS DOUBLE)) AS sc_2, min(CAST("Height" AS DOUBLE)) AS off_3, max(CAST("Height" AS DOUBLE)) - min(CAST("Height" AS DOUBLE)) AS sc_3 FROM src),
cells AS (
    SELECT count(*) AS c, 'all records' AS label
    FROM src, stats
    GROUP BY CASE WHEN isfinite(floor((CAST("Age" AS DOUBLE) - off_1) / sc_1 / 0.057735026861227556::DOUBLE)) THEN floor((CAST("Age" AS DOUBLE) - off_1) / sc_1 / 0.057735026861227556::DOUBLE) ELSE CAST("Age" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("Weight" AS DOUBLE) - off_2) / sc_2 / 0.057735026861227556::DOUBLE)) THEN floor((CAST("Weight" AS DOUBLE) - off_2) / sc_2 / 0.057735026861227556::DOUBLE) ELSE CAST("Weight" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("Height" AS DOUBLE) - off_3) / sc_3 / 0.057735026861227556::DOUBLE)) THEN floor((CAST("Height" AS DOUBLE) - off_3) / sc_3 / 0.057735026861227556::DOUBLE) ELSE CAST("Height" AS DOUBLE) END
)
SELECT coalesce(sum(c * greatest(c - 1, 5)), 0)::HUGEINT, coalesce(sum(c), 0),
    coalesce(max(c), 0), arg_max(label, c)
FROM cells
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE IF NOT EXISTS temp.main.__rwn_keys (id VARCHAR, k VARCHAR, lasting BOOLEAN)
-- ----------------------------------------------------------------- statement
SELECT id FROM temp.main.__rwn_keys WHERE lasting AND k = ?
-- ----------------------------------------------------------------- statement
WITH src AS (SELECT * FROM "memory"."main"."bodyfat" WHERE isfinite(CAST("Age" AS DOUBLE)) AND isfinite(CAST("Weight" AS DOUBLE)) AND isfinite(CAST("Height" AS DOUBLE))),
stats AS (SELECT min(CAST("Age" AS DOUBLE)) AS off_1, max(CAST("Age" AS DOUBLE)) - min(CAST("Age" AS DOUBLE)) AS sc_1, min(CAST("Weight" AS DOUBLE)) AS off_2, max(CAST("Weight" AS DOUBLE)) - min(CAST("Weight" AS DOUBLE)) AS sc_2, min(CAST("Height" AS DOUBLE)) AS off_3, max(CAST("Height" AS DOUBLE)) - min(CAST("Height" AS DOUBLE)) AS sc_3 FROM src),
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY floor((CAST(s."Age" AS DOUBLE) - t.off_1) / t.sc_1 / 0.05773502691896258::DOUBLE), floor((CAST(s."Weight" AS DOUBLE) - t.off_2) / t.sc_2 / 0.05773502691896258::DOUBLE), floor((CAST(s."Height" AS DOUBLE) - t.off_3) / t.sc_3 / 0.05773502691896258::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
WITH RECURSIVE
-- rwn_sql: exact RWN neighbourhoods by grid-bucketed self-joins (METHODS.md section 1).
-- S_i = { j != i in i's stratum : d(i, j) <= max(eps, r_k(i)) }, ties at the radius included:
-- computed squared distances within a factor 1.000000000000003::DOUBLE of the radius count as equal, which
-- provably includes every exact tie (METHODS.md, "Exact ties").
-- Records are bucketed into grid cells of side s; every j within s of i lies in i's cell or
-- an adjacent one, so a record is exact once k records and eps lie within its margin. Records
-- that are not yet exact retry with s doubled: no step compares all pairs.
src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
staged AS MATERIALIZED (
    -- record number: 1-based input position (DuckDB preserves insertion order), or the rank
    -- of the id column's value when id= is given (then the input order does not matter)
    SELECT row_number() OVER () AS __rwn_rid, *
    FROM src
),
stats AS (
    SELECT count(*) AS n,
        min(CAST("Age" AS DOUBLE)) AS lo_1,
        max(CAST("Age" AS DOUBLE)) AS hi_1,
        stddev_samp(CAST("Age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))) AS sd_1,
        var_pop(CAST("Age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))) AS var_1,
        count(*) FILTER (WHERE "Age" IS NULL OR NOT isfinite(CAST("Age" AS DOUBLE))) AS bad_1,
        min(CAST("Weight" AS DOUBLE)) AS lo_2,
        max(CAST("Weight" AS DOUBLE)) AS hi_2,
        stddev_samp(CAST("Weight" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))) AS sd_2,
        var_pop(CAST("Weight" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))) AS var_2,
        count(*) FILTER (WHERE "Weight" IS NULL OR NOT isfinite(CAST("Weight" AS DOUBLE))) AS bad_2,
        min(CAST("Height" AS DOUBLE)) AS lo_3,
        max(CAST("Height" AS DOUBLE)) AS hi_3,
        stddev_samp(CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) AS sd_3,
        var_pop(CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) AS var_3,
        count(*) FILTER (WHERE "Height" IS NULL OR NOT isfinite(CAST("Height" AS DOUBLE))) AS bad_3
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
        lo_2 AS off_2,
        hi_2 - lo_2 AS sc_2,
        lo_3 AS off_3,
        hi_3 - lo_3 AS sc_3,
        CASE
            WHEN n = 0 THEN 'the input has no records'
            WHEN bad_1 > 0 THEN 'column "Age"' || ' has ' || bad_1 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_1 = lo_1 THEN 'column "Age"' || ' is constant (every value is ' || lo_1 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_1 - lo_1) AND isfinite(hi_1 - lo_1) AND isfinite((hi_1 - lo_1) / (hi_1 - lo_1) * (hi_1 - lo_1) / (hi_1 - lo_1) * 3), false) THEN 'column "Age"' || ' spans ' || lo_1 || ' to ' || hi_1 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_2 > 0 THEN 'column "Weight"' || ' has ' || bad_2 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_2 = lo_2 THEN 'column "Weight"' || ' is constant (every value is ' || lo_2 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_2 - lo_2) AND isfinite(hi_2 - lo_2) AND isfinite((hi_2 - lo_2) / (hi_2 - lo_2) * (hi_2 - lo_2) / (hi_2 - lo_2) * 3), false) THEN 'column "Weight"' || ' spans ' || lo_2 || ' to ' || hi_2 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_3 > 0 THEN 'column "Height"' || ' has ' || bad_3 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_3 = lo_3 THEN 'column "Height"' || ' is constant (every value is ' || lo_3 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_3 - lo_3) AND isfinite(hi_3 - lo_3) AND isfinite((hi_3 - lo_3) / (hi_3 - lo_3) * (hi_3 - lo_3) / (hi_3 - lo_3) * 3), false) THEN 'column "Height"' || ' spans ' || lo_3 || ' to ' || hi_3 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN smallest <= 5 THEN 'the input has ' || smallest || ' records; k = 5 needs at least 6 (k must be below the number of records in every stratum)'
        END AS problem
    FROM stats, strata_sizes
),
settings AS (
    -- s0: starting cell side; diameter: no two records are further apart than this;
    -- grid_dims: how many grid coordinates the search uses (the rest stay in one cell)
    SELECT
        CASE WHEN problem IS NOT NULL THEN error('rwn_sql: ' || problem)
             ELSE greatest(0.1::DOUBLE * 1.000001, coalesce(pow(12 * pow(((hi_1 - lo_1) / sc_1) * ((hi_2 - lo_2) / sc_2) * ((hi_3 - lo_3) / sc_3), 3.0 / 3) / (n * 4.1887902047863905), 1.0 / 3), 0.0), 1e-9 * diameter, 1e-12)
        END AS s0,
        diameter, grid_dims, off_1, sc_1, off_2, sc_2, off_3, sc_3
    FROM (SELECT *, sqrt(pow((hi_1 - lo_1) / sc_1, 2) + pow((hi_2 - lo_2) / sc_2, 2) + pow((hi_3 - lo_3) / sc_3, 2)) AS diameter, 3 AS grid_dims FROM params)
),
scaled AS (
    -- unscaled distance values v_*, categorical distance columns c_*, strata k_*, and the
    -- scaled grid coordinates g_* (the numeric columns with the largest scaled spread)
    SELECT s.__rwn_rid AS rid,
        CAST(s."Age" AS DOUBLE) AS v_1,
        CAST(s."Weight" AS DOUBLE) AS v_2,
        CAST(s."Height" AS DOUBLE) AS v_3,
        (CAST(s."Age" AS DOUBLE) - p.off_1) / p.sc_1 AS g_1,
        (CAST(s."Weight" AS DOUBLE) - p.off_2) / p.sc_2 AS g_2,
        (CAST(s."Height" AS DOUBLE) - p.off_3) / p.sc_3 AS g_3
    FROM staged s, params p, settings st
),
first_level AS (
    -- first_lvl: records in dense cells start on a finer grid. The cell count at side s0,
    -- over the count expected if the data were spread evenly, gives the local density;
    -- each level halves the side, dividing the count by 2^G.
    SELECT scaled.*,
        -CAST(round(log2(greatest(count(*) OVER (PARTITION BY floor(g_1 / (st.s0)), floor(g_2 / (st.s0)), floor(g_3 / (st.s0))) * 4.1887902047863905 / 12, 1)) * 1.0 / 3) AS INTEGER) AS first_lvl
    FROM scaled, settings st
),
points AS MATERIALIZED (
    -- start_lvl: the same estimate once more, from the count in the record's cell at first_lvl:
    -- a cell of side s0 averages the density over a region much larger than the k nearest
    -- (clumps of near-duplicates, heavy tails), which put records on too coarse a grid.
    -- Only finer (with eps > 0, not below the level whose cells hold eps): the start level
    -- affects the speed, never the neighbourhoods. On a column grid
    -- the g_* are not kept: the steps that read them recompute them from v_* (sqlgen's grid_columns).
    SELECT rid, v_1, v_2, v_3,
        greatest(first_lvl - CAST(round(log2(greatest(count(*) OVER (PARTITION BY first_lvl, floor(g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl)))) * 4.1887902047863905 / 12, 1)) * 1.0 / 3 - 0.375) AS INTEGER), CAST(ceil(1.0 * log2(0.1::DOUBLE / (1.2 * st.s0))) AS INTEGER)) AS start_lvl
    FROM first_level f, settings st
),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
search(lvl, rid, start_lvl, done, members, radius2, dcr2) AS (
    SELECT (SELECT min(start_lvl) FROM points) - 1 AS lvl, points.rid, start_lvl, false AS done,
        NULL::STRUCT(d2 DOUBLE, j BIGINT)[] AS members, NULL::DOUBLE AS radius2, NULL::DOUBLE AS dcr2
    FROM points
    UNION ALL
    (WITH
-- rwn_sql: one level of the neighbourhood search (sql/rwn_neighborhoods.sql): the records of
-- `search` still searching try cells of side s = s0 * growth^lvl; DuckDB runs it as the recursive member,
-- Spark once per level (rwn_sql/engines/spark.py).
active AS (
    -- records still searching whose start level is reached; cell side s = s0 * growth^lvl
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    -- margin: every record within this distance of i is in i's block of cells
    SELECT a.*,
            CAST(floor(least(greatest(g_1 / s, -1e12), 1e12)) AS BIGINT) AS cell_1,
            CAST(floor(least(greatest(g_2 / s, -1e12), 1e12)) AS BIGINT) AS cell_2,
            CAST(floor(least(greatest(g_3 / s, -1e12), 1e12)) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - floor(g_1 / s), 1 - (g_1 / s - floor(g_1 / s)), g_2 / s - floor(g_2 / s), 1 - (g_2 / s - floor(g_2 / s)), g_3 / s - floor(g_3 / s), 1 - (g_3 / s - floor(g_3 / s))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s)))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST(floor(least(greatest(g_1 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST(floor(least(greatest(g_2 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST(floor(least(greatest(g_3 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3 FROM points p, settings st) p, level l
),
pairs AS (
    -- candidates within the margin; i itself (distance 0) is always among them. The neighbour
    -- cells nb_* are columns of one relation, so no optimizer can join probe with build before
    -- the offsets (Spark's did: a cartesian product)
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    -- The margin filters inside the aggregates. A WHERE that DuckDB would push into the cell
    -- join as a residual condition, evaluated pair by pair, was 1.5-2x slower on 5 columns; a
    -- filter the optimizer keeps after the join (margin_filter, where the dialect has one) drops
    -- the pairs beyond the margin (about 3/4 on 3 columns) before they are grouped.
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        -- done once the radius, widened for ties, lies within the margin
        count(*) FILTER (WHERE d2 * 1.000000000000003::DOUBLE <= margin2) - 1 >= 5
            AND 0.010000000000000002::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.010000000000000002::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
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
    -- the exact neighbourhoods: members sorted by (distance, record), and their number
    SELECT rid, members, radius2, dcr2, len(members) AS size
    FROM search, settings
    WHERE done AND settings.s0 > 0
)
,
-- rwn_sql: RWN perturbation. Per record and column, independently: with probability q the
-- value is replaced by the same column of a member of S_i drawn uniformly, else kept.
-- Draws come from a keyed hash of (key, purpose, record, column); see rwn_sql/randomness.py.
draws AS (
    SELECT rid, members, size,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|Age')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_1,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|Weight')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_2,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|Height')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_3
    FROM hood
),
picks AS MATERIALIZED (
    SELECT rid,
        CASE WHEN CAST((h_1 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_1 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_1,
        CASE WHEN CAST((h_2 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_2 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_2,
        CASE WHEN CAST((h_3 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_3 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_3
    FROM draws
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

SELECT p.rid AS record, u.column_name, u.donor, h.size
FROM picks p JOIN hood h ON h.rid = p.rid,
    LATERAL (SELECT unnest(['Age', 'Weight', 'Height']) AS column_name, unnest([p.donor_1, p.donor_2, p.donor_3]) AS donor) u
ORDER BY record, column_name
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
SELECT min("Age") FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), max("Age") FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))), min("Weight") FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))), max("Weight") FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))), min("Height") FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))), max("Height") FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
WITH src AS (SELECT * FROM "memory"."main"."bodyfat" WHERE isfinite(CAST("Age" AS DOUBLE)) AND isfinite(CAST("Weight" AS DOUBLE)) AND isfinite(CAST("Height" AS DOUBLE))),
stats AS (SELECT min(CAST("Age" AS DOUBLE)) AS off_1, max(CAST("Age" AS DOUBLE)) - min(CAST("Age" AS DOUBLE)) AS sc_1, min(CAST("Weight" AS DOUBLE)) AS off_2, max(CAST("Weight" AS DOUBLE)) - min(CAST("Weight" AS DOUBLE)) AS sc_2, min(CAST("Height" AS DOUBLE)) AS off_3, max(CAST("Height" AS DOUBLE)) - min(CAST("Height" AS DOUBLE)) AS sc_3 FROM src),
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY floor((CAST(s."Age" AS DOUBLE) - t.off_1) / t.sc_1 / 0.05773502691896258::DOUBLE), floor((CAST(s."Weight" AS DOUBLE) - t.off_2) / t.sc_2 / 0.05773502691896258::DOUBLE), floor((CAST(s."Height" AS DOUBLE) - t.off_3) / t.sc_3 / 0.05773502691896258::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
WITH src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
stats AS (SELECT min(CAST("Age" AS DOUBLE)) AS off_1, max(CAST("Age" AS DOUBLE)) - min(CAST("Age" AS DOUBLE)) AS sc_1, min(CAST("Weight" AS DOUBLE)) AS off_2, max(CAST("Weight" AS DOUBLE)) - min(CAST("Weight" AS DOUBLE)) AS sc_2, min(CAST("Height" AS DOUBLE)) AS off_3, max(CAST("Height" AS DOUBLE)) - min(CAST("Height" AS DOUBLE)) AS sc_3 FROM src),
cells AS (
    SELECT count(*) AS c, 'all records' AS label
    FROM src, stats
    GROUP BY CASE WHEN isfinite(floor((CAST("Age" AS DOUBLE) - off_1) / sc_1 / 0.057735026861227556::DOUBLE)) THEN floor((CAST("Age" AS DOUBLE) - off_1) / sc_1 / 0.057735026861227556::DOUBLE) ELSE CAST("Age" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("Weight" AS DOUBLE) - off_2) / sc_2 / 0.057735026861227556::DOUBLE)) THEN floor((CAST("Weight" AS DOUBLE) - off_2) / sc_2 / 0.057735026861227556::DOUBLE) ELSE CAST("Weight" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("Height" AS DOUBLE) - off_3) / sc_3 / 0.057735026861227556::DOUBLE)) THEN floor((CAST("Height" AS DOUBLE) - off_3) / sc_3 / 0.057735026861227556::DOUBLE) ELSE CAST("Height" AS DOUBLE) END
)
SELECT coalesce(sum(c * greatest(c - 1, 5)), 0)::HUGEINT, coalesce(sum(c), 0),
    coalesce(max(c), 0), arg_max(label, c)
FROM cells
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE IF NOT EXISTS temp.main.__rwn_keys (id VARCHAR, k VARCHAR, lasting BOOLEAN)
-- ----------------------------------------------------------------- statement
INSERT INTO temp.main.__rwn_keys VALUES (?, ?, ?)
-- ----------------------------------------------------------------- statement
WITH src AS (SELECT * FROM "memory"."main"."bodyfat" WHERE isfinite(CAST("Age" AS DOUBLE)) AND isfinite(CAST("Weight" AS DOUBLE)) AND isfinite(CAST("Height" AS DOUBLE))),
stats AS (SELECT min(CAST("Age" AS DOUBLE)) AS off_1, max(CAST("Age" AS DOUBLE)) - min(CAST("Age" AS DOUBLE)) AS sc_1, min(CAST("Weight" AS DOUBLE)) AS off_2, max(CAST("Weight" AS DOUBLE)) - min(CAST("Weight" AS DOUBLE)) AS sc_2, min(CAST("Height" AS DOUBLE)) AS off_3, max(CAST("Height" AS DOUBLE)) - min(CAST("Height" AS DOUBLE)) AS sc_3 FROM src),
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY floor((CAST(s."Age" AS DOUBLE) - t.off_1) / t.sc_1 / 0.05773502691896258::DOUBLE), floor((CAST(s."Weight" AS DOUBLE) - t.off_2) / t.sc_2 / 0.05773502691896258::DOUBLE), floor((CAST(s."Height" AS DOUBLE) - t.off_3) / t.sc_3 / 0.05773502691896258::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('bodyfat_release')
-- ----------------------------------------------------------------- statement
BEGIN TRANSACTION
-- ----------------------------------------------------------------- statement
CREATE TABLE "bodyfat_release" AS
WITH RECURSIVE
-- rwn_sql: exact RWN neighbourhoods by grid-bucketed self-joins (METHODS.md section 1).
-- S_i = { j != i in i's stratum : d(i, j) <= max(eps, r_k(i)) }, ties at the radius included:
-- computed squared distances within a factor 1.000000000000003::DOUBLE of the radius count as equal, which
-- provably includes every exact tie (METHODS.md, "Exact ties").
-- Records are bucketed into grid cells of side s; every j within s of i lies in i's cell or
-- an adjacent one, so a record is exact once k records and eps lie within its margin. Records
-- that are not yet exact retry with s doubled: no step compares all pairs.
src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
staged AS MATERIALIZED (
    -- record number: 1-based input position (DuckDB preserves insertion order), or the rank
    -- of the id column's value when id= is given (then the input order does not matter)
    SELECT row_number() OVER () AS __rwn_rid, *
    FROM src
),
stats AS (
    SELECT count(*) AS n,
        min(CAST("Age" AS DOUBLE)) AS lo_1,
        max(CAST("Age" AS DOUBLE)) AS hi_1,
        stddev_samp(CAST("Age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))) AS sd_1,
        var_pop(CAST("Age" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Age" AS DOUBLE))) AS var_1,
        count(*) FILTER (WHERE "Age" IS NULL OR NOT isfinite(CAST("Age" AS DOUBLE))) AS bad_1,
        min(CAST("Weight" AS DOUBLE)) AS lo_2,
        max(CAST("Weight" AS DOUBLE)) AS hi_2,
        stddev_samp(CAST("Weight" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))) AS sd_2,
        var_pop(CAST("Weight" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Weight" AS DOUBLE))) AS var_2,
        count(*) FILTER (WHERE "Weight" IS NULL OR NOT isfinite(CAST("Weight" AS DOUBLE))) AS bad_2,
        min(CAST("Height" AS DOUBLE)) AS lo_3,
        max(CAST("Height" AS DOUBLE)) AS hi_3,
        stddev_samp(CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) AS sd_3,
        var_pop(CAST("Height" AS DOUBLE)) FILTER (WHERE isfinite(CAST("Height" AS DOUBLE))) AS var_3,
        count(*) FILTER (WHERE "Height" IS NULL OR NOT isfinite(CAST("Height" AS DOUBLE))) AS bad_3
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
        lo_2 AS off_2,
        hi_2 - lo_2 AS sc_2,
        lo_3 AS off_3,
        hi_3 - lo_3 AS sc_3,
        CASE
            WHEN n = 0 THEN 'the input has no records'
            WHEN bad_1 > 0 THEN 'column "Age"' || ' has ' || bad_1 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_1 = lo_1 THEN 'column "Age"' || ' is constant (every value is ' || lo_1 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_1 - lo_1) AND isfinite(hi_1 - lo_1) AND isfinite((hi_1 - lo_1) / (hi_1 - lo_1) * (hi_1 - lo_1) / (hi_1 - lo_1) * 3), false) THEN 'column "Age"' || ' spans ' || lo_1 || ' to ' || hi_1 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_2 > 0 THEN 'column "Weight"' || ' has ' || bad_2 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_2 = lo_2 THEN 'column "Weight"' || ' is constant (every value is ' || lo_2 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_2 - lo_2) AND isfinite(hi_2 - lo_2) AND isfinite((hi_2 - lo_2) / (hi_2 - lo_2) * (hi_2 - lo_2) / (hi_2 - lo_2) * 3), false) THEN 'column "Weight"' || ' spans ' || lo_2 || ' to ' || hi_2 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_3 > 0 THEN 'column "Height"' || ' has ' || bad_3 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_3 = lo_3 THEN 'column "Height"' || ' is constant (every value is ' || lo_3 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_3 - lo_3) AND isfinite(hi_3 - lo_3) AND isfinite((hi_3 - lo_3) / (hi_3 - lo_3) * (hi_3 - lo_3) / (hi_3 - lo_3) * 3), false) THEN 'column "Height"' || ' spans ' || lo_3 || ' to ' || hi_3 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN smallest <= 5 THEN 'the input has ' || smallest || ' records; k = 5 needs at least 6 (k must be below the number of records in every stratum)'
        END AS problem
    FROM stats, strata_sizes
),
settings AS (
    -- s0: starting cell side; diameter: no two records are further apart than this;
    -- grid_dims: how many grid coordinates the search uses (the rest stay in one cell)
    SELECT
        CASE WHEN problem IS NOT NULL THEN error('rwn_sql: ' || problem)
             ELSE greatest(0.1::DOUBLE * 1.000001, coalesce(pow(12 * pow(((hi_1 - lo_1) / sc_1) * ((hi_2 - lo_2) / sc_2) * ((hi_3 - lo_3) / sc_3), 3.0 / 3) / (n * 4.1887902047863905), 1.0 / 3), 0.0), 1e-9 * diameter, 1e-12)
        END AS s0,
        diameter, grid_dims, off_1, sc_1, off_2, sc_2, off_3, sc_3
    FROM (SELECT *, sqrt(pow((hi_1 - lo_1) / sc_1, 2) + pow((hi_2 - lo_2) / sc_2, 2) + pow((hi_3 - lo_3) / sc_3, 2)) AS diameter, 3 AS grid_dims FROM params)
),
scaled AS (
    -- unscaled distance values v_*, categorical distance columns c_*, strata k_*, and the
    -- scaled grid coordinates g_* (the numeric columns with the largest scaled spread)
    SELECT s.__rwn_rid AS rid,
        CAST(s."Age" AS DOUBLE) AS v_1,
        CAST(s."Weight" AS DOUBLE) AS v_2,
        CAST(s."Height" AS DOUBLE) AS v_3,
        (CAST(s."Age" AS DOUBLE) - p.off_1) / p.sc_1 AS g_1,
        (CAST(s."Weight" AS DOUBLE) - p.off_2) / p.sc_2 AS g_2,
        (CAST(s."Height" AS DOUBLE) - p.off_3) / p.sc_3 AS g_3
    FROM staged s, params p, settings st
),
first_level AS (
    -- first_lvl: records in dense cells start on a finer grid. The cell count at side s0,
    -- over the count expected if the data were spread evenly, gives the local density;
    -- each level halves the side, dividing the count by 2^G.
    SELECT scaled.*,
        -CAST(round(log2(greatest(count(*) OVER (PARTITION BY floor(g_1 / (st.s0)), floor(g_2 / (st.s0)), floor(g_3 / (st.s0))) * 4.1887902047863905 / 12, 1)) * 1.0 / 3) AS INTEGER) AS first_lvl
    FROM scaled, settings st
),
points AS MATERIALIZED (
    -- start_lvl: the same estimate once more, from the count in the record's cell at first_lvl:
    -- a cell of side s0 averages the density over a region much larger than the k nearest
    -- (clumps of near-duplicates, heavy tails), which put records on too coarse a grid.
    -- Only finer (with eps > 0, not below the level whose cells hold eps): the start level
    -- affects the speed, never the neighbourhoods. On a column grid
    -- the g_* are not kept: the steps that read them recompute them from v_* (sqlgen's grid_columns).
    SELECT rid, v_1, v_2, v_3,
        greatest(first_lvl - CAST(round(log2(greatest(count(*) OVER (PARTITION BY first_lvl, floor(g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl)))) * 4.1887902047863905 / 12, 1)) * 1.0 / 3 - 0.375) AS INTEGER), CAST(ceil(1.0 * log2(0.1::DOUBLE / (1.2 * st.s0))) AS INTEGER)) AS start_lvl
    FROM first_level f, settings st
),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
search(lvl, rid, start_lvl, done, members, radius2, dcr2) AS (
    SELECT (SELECT min(start_lvl) FROM points) - 1 AS lvl, points.rid, start_lvl, false AS done,
        NULL::STRUCT(d2 DOUBLE, j BIGINT)[] AS members, NULL::DOUBLE AS radius2, NULL::DOUBLE AS dcr2
    FROM points
    UNION ALL
    (WITH
-- rwn_sql: one level of the neighbourhood search (sql/rwn_neighborhoods.sql): the records of
-- `search` still searching try cells of side s = s0 * growth^lvl; DuckDB runs it as the recursive member,
-- Spark once per level (rwn_sql/engines/spark.py).
active AS (
    -- records still searching whose start level is reached; cell side s = s0 * growth^lvl
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    -- margin: every record within this distance of i is in i's block of cells
    SELECT a.*,
            CAST(floor(least(greatest(g_1 / s, -1e12), 1e12)) AS BIGINT) AS cell_1,
            CAST(floor(least(greatest(g_2 / s, -1e12), 1e12)) AS BIGINT) AS cell_2,
            CAST(floor(least(greatest(g_3 / s, -1e12), 1e12)) AS BIGINT) AS cell_3,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - floor(g_1 / s), 1 - (g_1 / s - floor(g_1 / s)), g_2 / s - floor(g_2 / s), 1 - (g_2 / s - floor(g_2 / s)), g_3 / s - floor(g_3 / s), 1 - (g_3 / s - floor(g_3 / s))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s)))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST(floor(least(greatest(g_1 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 + ((CAST(floor(least(greatest(g_2 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1048576 + ((CAST(floor(least(greatest(g_3 / l.s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576 * 1099511627776 AS cell_key
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3 FROM points p, settings st) p, level l
),
pairs AS (
    -- candidates within the margin; i itself (distance 0) is always among them. The neighbour
    -- cells nb_* are columns of one relation, so no optimizer can join probe with build before
    -- the offsets (Spark's did: a cartesian product)
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 1048576 + 1048576) % 1048576 + ((p.cell_2 + o.o_2) % 1048576 + 1048576) % 1048576 * 1048576 + ((p.cell_3 + o.o_3) % 1048576 + 1048576) % 1048576 * 1099511627776 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    -- The margin filters inside the aggregates. A WHERE that DuckDB would push into the cell
    -- join as a residual condition, evaluated pair by pair, was 1.5-2x slower on 5 columns; a
    -- filter the optimizer keeps after the join (margin_filter, where the dialect has one) drops
    -- the pairs beyond the margin (about 3/4 on 3 columns) before they are grouped.
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        -- done once the radius, widened for ties, lies within the margin
        count(*) FILTER (WHERE d2 * 1.000000000000003::DOUBLE <= margin2) - 1 >= 5
            AND 0.010000000000000002::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.010000000000000002::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
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
    -- the exact neighbourhoods: members sorted by (distance, record), and their number
    SELECT rid, members, radius2, dcr2, len(members) AS size
    FROM search, settings
    WHERE done AND settings.s0 > 0
)
,
-- rwn_sql: RWN perturbation. Per record and column, independently: with probability q the
-- value is replaced by the same column of a member of S_i drawn uniformly, else kept.
-- Draws come from a keyed hash of (key, purpose, record, column); see rwn_sql/randomness.py.
draws AS (
    SELECT rid, members, size,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|Age')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_1,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|Weight')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_2,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|Height')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_3
    FROM hood
),
picks AS MATERIALIZED (
    SELECT rid,
        CASE WHEN CAST((h_1 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_1 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_1,
        CASE WHEN CAST((h_2 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_2 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_2,
        CASE WHEN CAST((h_3 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_3 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_3
    FROM draws
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

SELECT s.* EXCLUDE (__rwn_rid) REPLACE (d_1."Age" AS "Age", d_2."Weight" AS "Weight", d_3."Height" AS "Height")
FROM picks p
JOIN lookup s ON s.__rwn_rid = p.rid
LEFT JOIN lookup d_1 ON d_1.__rwn_rid = p.donor_1
LEFT JOIN lookup d_2 ON d_2.__rwn_rid = p.donor_2
LEFT JOIN lookup d_3 ON d_3.__rwn_rid = p.donor_3
ORDER BY CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.order|')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(s.__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT), s.__rwn_rid
-- ----------------------------------------------------------------- statement
COMMENT ON TABLE "bodyfat_release" IS 'rwn_sql release, row order: keyed (an order drawn by the key, unrelated to the input order: pair it with its original by an id column or the key, never by position)'
-- ----------------------------------------------------------------- statement
COMMIT
-- ----------------------------------------------------------------- statement
DELETE FROM temp.main.__rwn_keys WHERE id IN ('<hex>')
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
SELECT count(*) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('bodyfat_release')
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."bodyfat_release"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."bodyfat_release"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."bodyfat_release"
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM "memory"."main"."bodyfat_release"
-- ----------------------------------------------------------------- statement
CREATE TEMPORARY VIEW "__frame" AS SELECT 1
-- ----------------------------------------------------------------- statement
CREATE TABLE mixed AS SELECT *, CASE WHEN rid % 17 = 0 THEN NULL ELSE c END AS gappy FROM __frame
-- ----------------------------------------------------------------- statement
DROP VIEW IF EXISTS temp.main."__frame"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('mixed')
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."mixed"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."mixed"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."mixed"
-- ----------------------------------------------------------------- statement
SELECT min("a") FILTER (WHERE isfinite(CAST("a" AS DOUBLE))), max("a") FILTER (WHERE isfinite(CAST("a" AS DOUBLE))), min("b") FILTER (WHERE isfinite(CAST("b" AS DOUBLE))), max("b") FILTER (WHERE isfinite(CAST("b" AS DOUBLE))) FROM "memory"."main"."mixed"
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
WITH src AS (SELECT * FROM "memory"."main"."mixed" WHERE isfinite(CAST("a" AS DOUBLE)) AND isfinite(CAST("b" AS DOUBLE))),
stats AS (SELECT min(CAST("a" AS DOUBLE)) AS off_1, max(CAST("a" AS DOUBLE)) - min(CAST("a" AS DOUBLE)) AS sc_1, min(CAST("b" AS DOUBLE)) AS off_2, max(CAST("b" AS DOUBLE)) - min(CAST("b" AS DOUBLE)) AS sc_2 FROM src),
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY s."region", s."colour", floor((CAST(s."a" AS DOUBLE) - t.off_1) / t.sc_1 / 0.07071067811865475::DOUBLE), floor((CAST(s."b" AS DOUBLE) - t.off_2) / t.sc_2 / 0.07071067811865475::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
WITH src AS (
    SELECT * FROM "memory"."main"."mixed"
),
stats AS (SELECT min(CAST("a" AS DOUBLE)) AS off_1, max(CAST("a" AS DOUBLE)) - min(CAST("a" AS DOUBLE)) AS sc_1, min(CAST("b" AS DOUBLE)) AS off_2, max(CAST("b" AS DOUBLE)) - min(CAST("b" AS DOUBLE)) AS sc_2 FROM src),
cells AS (
    SELECT count(*) AS c, CAST(struct_pack("region" := any_value("region")) AS VARCHAR) AS label
    FROM src, stats
    GROUP BY "region", "colour", CASE WHEN isfinite(floor((CAST("a" AS DOUBLE) - off_1) / sc_1 / 0.07071067804794408::DOUBLE)) THEN floor((CAST("a" AS DOUBLE) - off_1) / sc_1 / 0.07071067804794408::DOUBLE) ELSE CAST("a" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("b" AS DOUBLE) - off_2) / sc_2 / 0.07071067804794408::DOUBLE)) THEN floor((CAST("b" AS DOUBLE) - off_2) / sc_2 / 0.07071067804794408::DOUBLE) ELSE CAST("b" AS DOUBLE) END
)
SELECT coalesce(sum(c * greatest(c - 1, 5)), 0)::HUGEINT, coalesce(sum(c), 0),
    coalesce(max(c), 0), arg_max(label, c)
FROM cells
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE IF NOT EXISTS temp.main.__rwn_keys (id VARCHAR, k VARCHAR, lasting BOOLEAN)
-- ----------------------------------------------------------------- statement
SELECT id FROM temp.main.__rwn_keys WHERE lasting AND k = ?
-- ----------------------------------------------------------------- statement
WITH src AS (SELECT * FROM "memory"."main"."mixed" WHERE isfinite(CAST("a" AS DOUBLE)) AND isfinite(CAST("b" AS DOUBLE))),
stats AS (SELECT min(CAST("a" AS DOUBLE)) AS off_1, max(CAST("a" AS DOUBLE)) - min(CAST("a" AS DOUBLE)) AS sc_1, min(CAST("b" AS DOUBLE)) AS off_2, max(CAST("b" AS DOUBLE)) - min(CAST("b" AS DOUBLE)) AS sc_2 FROM src),
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY s."region", s."colour", floor((CAST(s."a" AS DOUBLE) - t.off_1) / t.sc_1 / 0.07071067811865475::DOUBLE), floor((CAST(s."b" AS DOUBLE) - t.off_2) / t.sc_2 / 0.07071067811865475::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM "memory"."main"."mixed"
-- ----------------------------------------------------------------- statement
WITH RECURSIVE
-- rwn_sql: exact RWN neighbourhoods by grid-bucketed self-joins (METHODS.md section 1).
-- S_i = { j != i in i's stratum : d(i, j) <= max(eps, r_k(i)) }, ties at the radius included:
-- computed squared distances within a factor 1.000000000000003::DOUBLE of the radius count as equal, which
-- provably includes every exact tie (METHODS.md, "Exact ties").
-- Records are bucketed into grid cells of side s; every j within s of i lies in i's cell or
-- an adjacent one, so a record is exact once k records and eps lie within its margin. Records
-- that are not yet exact retry with s doubled: no step compares all pairs.
src AS (
    SELECT * FROM "memory"."main"."mixed"
),
staged AS MATERIALIZED (
    -- record number: 1-based input position (DuckDB preserves insertion order), or the rank
    -- of the id column's value when id= is given (then the input order does not matter)
    SELECT row_number() OVER () AS __rwn_rid, *
    FROM src
),
stats AS (
    SELECT count(*) AS n,
        min(CAST("a" AS DOUBLE)) AS lo_1,
        max(CAST("a" AS DOUBLE)) AS hi_1,
        stddev_samp(CAST("a" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE))) AS sd_1,
        var_pop(CAST("a" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE))) AS var_1,
        count(*) FILTER (WHERE "a" IS NULL OR NOT isfinite(CAST("a" AS DOUBLE))) AS bad_1,
        min(CAST("b" AS DOUBLE)) AS lo_2,
        max(CAST("b" AS DOUBLE)) AS hi_2,
        stddev_samp(CAST("b" AS DOUBLE)) FILTER (WHERE isfinite(CAST("b" AS DOUBLE))) AS sd_2,
        var_pop(CAST("b" AS DOUBLE)) FILTER (WHERE isfinite(CAST("b" AS DOUBLE))) AS var_2,
        count(*) FILTER (WHERE "b" IS NULL OR NOT isfinite(CAST("b" AS DOUBLE))) AS bad_2,
        count(*) FILTER (WHERE "colour" IS NULL) AS badc_1
    FROM staged
),
strata_sizes AS (
    SELECT coalesce(min(size), 0) AS smallest, arg_min(label, size) AS smallest_label
    FROM (SELECT CAST(struct_pack("region" := "region") AS VARCHAR) AS label, count(*) AS size FROM staged GROUP BY "region")
),
params AS (
    SELECT *,
        lo_1 AS off_1,
        hi_1 - lo_1 AS sc_1,
        lo_2 AS off_2,
        hi_2 - lo_2 AS sc_2,
        CASE
            WHEN n = 0 THEN 'the input has no records'
            WHEN bad_1 > 0 THEN 'column "a"' || ' has ' || bad_1 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_1 = lo_1 THEN 'column "a"' || ' is constant (every value is ' || lo_1 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_1 - lo_1) AND isfinite(hi_1 - lo_1) AND isfinite((hi_1 - lo_1) / (hi_1 - lo_1) * (hi_1 - lo_1) / (hi_1 - lo_1) * 3), false) THEN 'column "a"' || ' spans ' || lo_1 || ' to ' || hi_1 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_2 > 0 THEN 'column "b"' || ' has ' || bad_2 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_2 = lo_2 THEN 'column "b"' || ' is constant (every value is ' || lo_2 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_2 - lo_2) AND isfinite(hi_2 - lo_2) AND isfinite((hi_2 - lo_2) / (hi_2 - lo_2) * (hi_2 - lo_2) / (hi_2 - lo_2) * 3), false) THEN 'column "b"' || ' spans ' || lo_2 || ' to ' || hi_2 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN badc_1 > 0 THEN 'column "colour"' || ' has ' || badc_1 || ' NULL values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN smallest <= 5 THEN 'stratum ' || smallest_label || ' has ' || smallest || ' records; k = 5 needs at least 6 (k must be below the number of records in every stratum)'
        END AS problem
    FROM stats, strata_sizes
),
settings AS (
    -- s0: starting cell side; diameter: no two records are further apart than this;
    -- grid_dims: how many grid coordinates the search uses (the rest stay in one cell)
    SELECT
        CASE WHEN problem IS NOT NULL THEN error('rwn_sql: ' || problem)
             ELSE greatest(0.1::DOUBLE * 1.000001, coalesce(pow(12 * pow(((hi_1 - lo_1) / sc_1) * ((hi_2 - lo_2) / sc_2), 2.0 / 2) / (n * 3.141592653589793), 1.0 / 2), 0.0), 1e-9 * diameter, 1e-12)
        END AS s0,
        diameter, grid_dims, off_1, sc_1, off_2, sc_2
    FROM (SELECT *, sqrt(pow((hi_1 - lo_1) / sc_1, 2) + pow((hi_2 - lo_2) / sc_2, 2) + 1 * 1.0::DOUBLE) AS diameter, 2 AS grid_dims FROM params)
),
scaled AS (
    -- unscaled distance values v_*, categorical distance columns c_*, strata k_*, and the
    -- scaled grid coordinates g_* (the numeric columns with the largest scaled spread)
    SELECT s.__rwn_rid AS rid,
        s."region" AS k_1,
        CAST(s."a" AS DOUBLE) AS v_1,
        CAST(s."b" AS DOUBLE) AS v_2,
        s."colour" AS c_1,
        (CAST(s."a" AS DOUBLE) - p.off_1) / p.sc_1 AS g_1,
        (CAST(s."b" AS DOUBLE) - p.off_2) / p.sc_2 AS g_2
    FROM staged s, params p, settings st
),
first_level AS (
    -- first_lvl: records in dense cells start on a finer grid. The cell count at side s0,
    -- over the count expected if the data were spread evenly, gives the local density;
    -- each level halves the side, dividing the count by 2^G.
    SELECT scaled.*,
        -CAST(round(log2(greatest(count(*) OVER (PARTITION BY k_1, floor(g_1 / (st.s0)), floor(g_2 / (st.s0))) * 3.141592653589793 / 12, 1)) * 1.0 / 2) AS INTEGER) AS first_lvl
    FROM scaled, settings st
),
points AS MATERIALIZED (
    -- start_lvl: the same estimate once more, from the count in the record's cell at first_lvl:
    -- a cell of side s0 averages the density over a region much larger than the k nearest
    -- (clumps of near-duplicates, heavy tails), which put records on too coarse a grid.
    -- Only finer (with eps > 0, not below the level whose cells hold eps): the start level
    -- affects the speed, never the neighbourhoods. On a column grid
    -- the g_* are not kept: the steps that read them recompute them from v_* (sqlgen's grid_columns).
    SELECT rid, k_1, v_1, v_2, c_1,
        greatest(first_lvl - CAST(round(log2(greatest(count(*) OVER (PARTITION BY k_1, first_lvl, floor(g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl)))) * 3.141592653589793 / 12, 1)) * 1.0 / 2 - 0.375) AS INTEGER), CAST(ceil(1.0 * log2(0.1::DOUBLE / (1.2 * st.s0))) AS INTEGER)) AS start_lvl
    FROM first_level f, settings st
),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o)
),
search(lvl, rid, start_lvl, done, members, radius2, dcr2) AS (
    SELECT (SELECT min(start_lvl) FROM points) - 1 AS lvl, points.rid, start_lvl, false AS done,
        NULL::STRUCT(d2 DOUBLE, j BIGINT)[] AS members, NULL::DOUBLE AS radius2, NULL::DOUBLE AS dcr2
    FROM points
    UNION ALL
    (WITH
-- rwn_sql: one level of the neighbourhood search (sql/rwn_neighborhoods.sql): the records of
-- `search` still searching try cells of side s = s0 * growth^lvl; DuckDB runs it as the recursive member,
-- Spark once per level (rwn_sql/engines/spark.py).
active AS (
    -- records still searching whose start level is reached; cell side s = s0 * growth^lvl
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    -- margin: every record within this distance of i is in i's block of cells
    SELECT a.*,
            CAST(floor(least(greatest(g_1 / s, -1e12), 1e12)) AS BIGINT) AS cell_1,
            CAST(floor(least(greatest(g_2 / s, -1e12), 1e12)) AS BIGINT) AS cell_2,
            CASE WHEN s < 1.0::DOUBLE THEN c_1 END AS ck_1,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(least(s * (1 + least(g_1 / s - floor(g_1 / s), 1 - (g_1 / s - floor(g_1 / s)), g_2 / s - floor(g_2 / s), 1 - (g_2 / s - floor(g_2 / s))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s)))), CASE WHEN s < 1.0::DOUBLE THEN 1.0::DOUBLE * (1 - 1e-9) ELSE 'Infinity'::DOUBLE END), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST(floor(least(greatest(g_1 / l.s, -1e12), 1e12)) AS BIGINT)) % 2147483648 + 2147483648) % 2147483648 + ((CAST(floor(least(greatest(g_2 / l.s, -1e12), 1e12)) AS BIGINT)) % 2147483648 + 2147483648) % 2147483648 * 2147483648 AS cell_key,
            CASE WHEN l.s < 1.0::DOUBLE THEN c_1 END AS ck_1
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2 FROM points p, settings st) p, level l
),
pairs AS (
    -- candidates within the margin; i itself (distance 0) is always among them. The neighbour
    -- cells nb_* are columns of one relation, so no optimizer can join probe with build before
    -- the offsets (Spark's did: a cartesian product)
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + CASE WHEN a.c_1 = b.c_1 THEN 0.0 ELSE 1.0::DOUBLE END AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 2147483648 + 2147483648) % 2147483648 + ((p.cell_2 + o.o_2) % 2147483648 + 2147483648) % 2147483648 * 2147483648 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON struct_pack(c := b.cell_key, k_1 := b.k_1, ck_1 := b.ck_1) = struct_pack(c := a.nb_key, k_1 := a.k_1, ck_1 := a.ck_1)
),
found AS (
    -- The margin filters inside the aggregates. A WHERE that DuckDB would push into the cell
    -- join as a residual condition, evaluated pair by pair, was 1.5-2x slower on 5 columns; a
    -- filter the optimizer keeps after the join (margin_filter, where the dialect has one) drops
    -- the pairs beyond the margin (about 3/4 on 3 columns) before they are grouped.
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        -- done once the radius, widened for ties, lies within the margin
        count(*) FILTER (WHERE d2 * 1.000000000000003::DOUBLE <= margin2) - 1 >= 5
            AND 0.010000000000000002::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.010000000000000002::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
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
    -- the exact neighbourhoods: members sorted by (distance, record), and their number
    SELECT rid, members, radius2, dcr2, len(members) AS size
    FROM search, settings
    WHERE done AND settings.s0 > 0
)
,
-- rwn_sql: RWN perturbation. Per record and column, independently: with probability q the
-- value is replaced by the same column of a member of S_i drawn uniformly, else kept.
-- Draws come from a keyed hash of (key, purpose, record, column); see rwn_sql/randomness.py.
draws AS (
    SELECT rid, members, size,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|a')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_1,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|b')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_2,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|colour')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_3
    FROM hood
),
picks AS MATERIALIZED (
    SELECT rid,
        CASE WHEN CAST((h_1 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_1 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_1,
        CASE WHEN CAST((h_2 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_2 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_2,
        CASE WHEN CAST((h_3 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_3 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_3
    FROM draws
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

SELECT s.* EXCLUDE (__rwn_rid) REPLACE (d_1."a" AS "a", d_2."b" AS "b", d_3."colour" AS "colour")
FROM picks p
JOIN lookup s ON s.__rwn_rid = p.rid
LEFT JOIN lookup d_1 ON d_1.__rwn_rid = p.donor_1
LEFT JOIN lookup d_2 ON d_2.__rwn_rid = p.donor_2
LEFT JOIN lookup d_3 ON d_3.__rwn_rid = p.donor_3
ORDER BY CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.order|')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(s.__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT), s.__rwn_rid
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('mixed')
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."mixed"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."mixed"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."mixed"
-- ----------------------------------------------------------------- statement
SELECT min("a") FILTER (WHERE isfinite(CAST("a" AS DOUBLE))), max("a") FILTER (WHERE isfinite(CAST("a" AS DOUBLE))), min("b") FILTER (WHERE isfinite(CAST("b" AS DOUBLE))), max("b") FILTER (WHERE isfinite(CAST("b" AS DOUBLE))) FROM "memory"."main"."mixed"
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
WITH src AS (
    SELECT * FROM "memory"."main"."mixed"
),
cells AS (
    SELECT count(*) AS c, 'all records' AS label
    FROM src
    GROUP BY "colour", CAST("a" AS DOUBLE), CAST("b" AS DOUBLE)
)
SELECT coalesce(sum(c * greatest(c - 1, 5)), 0)::HUGEINT, coalesce(sum(c), 0),
    coalesce(max(c), 0), arg_max(label, c)
FROM cells
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE IF NOT EXISTS temp.main.__rwn_keys (id VARCHAR, k VARCHAR, lasting BOOLEAN)
-- ----------------------------------------------------------------- statement
SELECT id FROM temp.main.__rwn_keys WHERE lasting AND k = ?
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM "memory"."main"."mixed"
-- ----------------------------------------------------------------- statement
WITH RECURSIVE
-- rwn_sql: exact RWN neighbourhoods by grid-bucketed self-joins (METHODS.md section 1).
-- S_i = { j != i in i's stratum : d(i, j) <= max(eps, r_k(i)) }, ties at the radius included:
-- computed squared distances within a factor 1.000000000000003::DOUBLE of the radius count as equal, which
-- provably includes every exact tie (METHODS.md, "Exact ties").
-- Records are bucketed into grid cells of side s; every j within s of i lies in i's cell or
-- an adjacent one, so a record is exact once k records and eps lie within its margin. Records
-- that are not yet exact retry with s doubled: no step compares all pairs.
src AS (
    SELECT * FROM "memory"."main"."mixed"
),
staged AS MATERIALIZED (
    -- record number: 1-based input position (DuckDB preserves insertion order), or the rank
    -- of the id column's value when id= is given (then the input order does not matter)
    SELECT row_number() OVER (ORDER BY "rid") AS __rwn_rid, *
    FROM src
),
stats AS (
    SELECT count(*) AS n,
        min(CAST("a" AS DOUBLE)) AS lo_1,
        max(CAST("a" AS DOUBLE)) AS hi_1,
        stddev_samp(CAST("a" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE))) AS sd_1,
        var_pop(CAST("a" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE))) AS var_1,
        count(*) FILTER (WHERE "a" IS NULL OR NOT isfinite(CAST("a" AS DOUBLE))) AS bad_1,
        min(CAST("b" AS DOUBLE)) AS lo_2,
        max(CAST("b" AS DOUBLE)) AS hi_2,
        stddev_samp(CAST("b" AS DOUBLE)) FILTER (WHERE isfinite(CAST("b" AS DOUBLE))) AS sd_2,
        var_pop(CAST("b" AS DOUBLE)) FILTER (WHERE isfinite(CAST("b" AS DOUBLE))) AS var_2,
        count(*) FILTER (WHERE "b" IS NULL OR NOT isfinite(CAST("b" AS DOUBLE))) AS bad_2,
        count(*) FILTER (WHERE "colour" IS NULL) AS badc_1,
        count("rid") AS id_count,
        count(DISTINCT "rid") AS id_distinct
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
        lo_2 AS off_2,
        hi_2 - lo_2 AS sc_2,
        CASE
            WHEN n = 0 THEN 'the input has no records'
            WHEN bad_1 > 0 THEN 'column "a"' || ' has ' || bad_1 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_1 = lo_1 THEN 'column "a"' || ' is constant (every value is ' || lo_1 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_1 - lo_1) AND isfinite(hi_1 - lo_1) AND isfinite((hi_1 - lo_1) / (hi_1 - lo_1) * (hi_1 - lo_1) / (hi_1 - lo_1) * 3), false) THEN 'column "a"' || ' spans ' || lo_1 || ' to ' || hi_1 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_2 > 0 THEN 'column "b"' || ' has ' || bad_2 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_2 = lo_2 THEN 'column "b"' || ' is constant (every value is ' || lo_2 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_2 - lo_2) AND isfinite(hi_2 - lo_2) AND isfinite((hi_2 - lo_2) / (hi_2 - lo_2) * (hi_2 - lo_2) / (hi_2 - lo_2) * 3), false) THEN 'column "b"' || ' spans ' || lo_2 || ' to ' || hi_2 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN badc_1 > 0 THEN 'column "colour"' || ' has ' || badc_1 || ' NULL values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN smallest <= 5 THEN 'the input has ' || smallest || ' records; k = 5 needs at least 6 (k must be below the number of records in every stratum)'
            WHEN id_count < n THEN 'the id column "rid"' || ' has ' || (n - id_count) || ' NULL values; every record needs an id'
            WHEN id_distinct < id_count THEN 'the id column "rid"' || ' has duplicate values ('  || (id_count - id_distinct) || ' records share an id with another); every record needs its own id'
        END AS problem
    FROM stats, strata_sizes
),
settings AS (
    -- s0: starting cell side; diameter: no two records are further apart than this;
    -- grid_dims: how many grid coordinates the search uses (the rest stay in one cell)
    SELECT
        CASE WHEN problem IS NOT NULL THEN error('rwn_sql: ' || problem)
             ELSE greatest(0.0::DOUBLE * 1.000001, coalesce(pow(12 * pow(((hi_1 - lo_1) / sc_1) * ((hi_2 - lo_2) / sc_2), 2.0 / 2) / (n * 3.141592653589793), 1.0 / 2), 0.0), 1e-9 * diameter, 1e-12)
        END AS s0,
        diameter, grid_dims, off_1, sc_1, off_2, sc_2
    FROM (SELECT *, sqrt(pow((hi_1 - lo_1) / sc_1, 2) + pow((hi_2 - lo_2) / sc_2, 2) + 1 * 0.25::DOUBLE) AS diameter, 2 AS grid_dims FROM params)
),
scaled AS (
    -- unscaled distance values v_*, categorical distance columns c_*, strata k_*, and the
    -- scaled grid coordinates g_* (the numeric columns with the largest scaled spread)
    SELECT s.__rwn_rid AS rid,
        CAST(s."a" AS DOUBLE) AS v_1,
        CAST(s."b" AS DOUBLE) AS v_2,
        s."colour" AS c_1,
        (CAST(s."a" AS DOUBLE) - p.off_1) / p.sc_1 AS g_1,
        (CAST(s."b" AS DOUBLE) - p.off_2) / p.sc_2 AS g_2
    FROM staged s, params p, settings st
),
first_level AS (
    -- first_lvl: records in dense cells start on a finer grid. The cell count at side s0,
    -- over the count expected if the data were spread evenly, gives the local density;
    -- each level halves the side, dividing the count by 2^G.
    SELECT scaled.*,
        -CAST(round(log2(greatest(count(*) OVER (PARTITION BY floor(g_1 / (st.s0)), floor(g_2 / (st.s0))) * 3.141592653589793 / 12, 1)) * 1.0 / 2) AS INTEGER) AS first_lvl
    FROM scaled, settings st
),
points AS MATERIALIZED (
    -- start_lvl: the same estimate once more, from the count in the record's cell at first_lvl:
    -- a cell of side s0 averages the density over a region much larger than the k nearest
    -- (clumps of near-duplicates, heavy tails), which put records on too coarse a grid.
    -- Only finer (with eps > 0, not below the level whose cells hold eps): the start level
    -- affects the speed, never the neighbourhoods. On a column grid
    -- the g_* are not kept: the steps that read them recompute them from v_* (sqlgen's grid_columns).
    SELECT rid, v_1, v_2, c_1,
        first_lvl - CAST(round(log2(greatest(count(*) OVER (PARTITION BY first_lvl, floor(g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl)))) * 3.141592653589793 / 12, 1)) * 1.0 / 2 - 0.375) AS INTEGER) AS start_lvl
    FROM first_level f, settings st
),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o)
),
search(lvl, rid, start_lvl, done, members, radius2, dcr2) AS (
    SELECT (SELECT min(start_lvl) FROM points) - 1 AS lvl, points.rid, start_lvl, false AS done,
        NULL::STRUCT(d2 DOUBLE, j BIGINT)[] AS members, NULL::DOUBLE AS radius2, NULL::DOUBLE AS dcr2
    FROM points
    UNION ALL
    (WITH
-- rwn_sql: one level of the neighbourhood search (sql/rwn_neighborhoods.sql): the records of
-- `search` still searching try cells of side s = s0 * growth^lvl; DuckDB runs it as the recursive member,
-- Spark once per level (rwn_sql/engines/spark.py).
active AS (
    -- records still searching whose start level is reached; cell side s = s0 * growth^lvl
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    -- margin: every record within this distance of i is in i's block of cells
    SELECT a.*,
            CAST(floor(least(greatest(g_1 / s, -1e12), 1e12)) AS BIGINT) AS cell_1,
            CAST(floor(least(greatest(g_2 / s, -1e12), 1e12)) AS BIGINT) AS cell_2,
            CASE WHEN s < 0.5::DOUBLE THEN c_1 END AS ck_1,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(least(s * (1 + least(g_1 / s - floor(g_1 / s), 1 - (g_1 / s - floor(g_1 / s)), g_2 / s - floor(g_2 / s), 1 - (g_2 / s - floor(g_2 / s))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s)))), CASE WHEN s < 0.5::DOUBLE THEN 0.5::DOUBLE * (1 - 1e-9) ELSE 'Infinity'::DOUBLE END), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST(floor(least(greatest(g_1 / l.s, -1e12), 1e12)) AS BIGINT)) % 2147483648 + 2147483648) % 2147483648 + ((CAST(floor(least(greatest(g_2 / l.s, -1e12), 1e12)) AS BIGINT)) % 2147483648 + 2147483648) % 2147483648 * 2147483648 AS cell_key,
            CASE WHEN l.s < 0.5::DOUBLE THEN c_1 END AS ck_1
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2 FROM points p, settings st) p, level l
),
pairs AS (
    -- candidates within the margin; i itself (distance 0) is always among them. The neighbour
    -- cells nb_* are columns of one relation, so no optimizer can join probe with build before
    -- the offsets (Spark's did: a cartesian product)
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + CASE WHEN a.c_1 = b.c_1 THEN 0.0 ELSE 0.25::DOUBLE END AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 2147483648 + 2147483648) % 2147483648 + ((p.cell_2 + o.o_2) % 2147483648 + 2147483648) % 2147483648 * 2147483648 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON struct_pack(c := b.cell_key, ck_1 := b.ck_1) = struct_pack(c := a.nb_key, ck_1 := a.ck_1)
),
found AS (
    -- The margin filters inside the aggregates. A WHERE that DuckDB would push into the cell
    -- join as a residual condition, evaluated pair by pair, was 1.5-2x slower on 5 columns; a
    -- filter the optimizer keeps after the join (margin_filter, where the dialect has one) drops
    -- the pairs beyond the margin (about 3/4 on 3 columns) before they are grouped.
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        -- done once the radius, widened for ties, lies within the margin
        count(*) FILTER (WHERE d2 * 1.000000000000003::DOUBLE <= margin2) - 1 >= 5
            AND 0.0::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1
)
),
hood AS (
    -- the exact neighbourhoods: members sorted by (distance, record), and their number
    SELECT rid, members, radius2, dcr2, len(members) AS size
    FROM search, settings
    WHERE done AND settings.s0 > 0
)
,
-- rwn_sql: RWN perturbation. Per record and column, independently: with probability q the
-- value is replaced by the same column of a member of S_i drawn uniformly, else kept.
-- Draws come from a keyed hash of (key, purpose, record, column); see rwn_sql/randomness.py.
draws AS (
    SELECT rid, members, size,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|a')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(__rwn_ids.__rwn_record AS VARCHAR)) AS h_1,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|b')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(__rwn_ids.__rwn_record AS VARCHAR)) AS h_2,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|colour')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(__rwn_ids.__rwn_record AS VARCHAR)) AS h_3
    FROM hood
    JOIN (SELECT __rwn_rid, CAST("rid" AS VARCHAR) AS __rwn_record FROM staged) AS __rwn_ids ON __rwn_ids.__rwn_rid = hood.rid
),
picks AS MATERIALIZED (
    SELECT rid,
        CASE WHEN CAST((h_1 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_1 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_1,
        CASE WHEN CAST((h_2 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_2 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_2,
        CASE WHEN CAST((h_3 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_3 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_3
    FROM draws
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

SELECT s.* EXCLUDE (__rwn_rid) REPLACE (d_1."a" AS "a", d_2."b" AS "b", d_3."colour" AS "colour")
FROM picks p
JOIN lookup s ON s.__rwn_rid = p.rid
LEFT JOIN lookup d_1 ON d_1.__rwn_rid = p.donor_1
LEFT JOIN lookup d_2 ON d_2.__rwn_rid = p.donor_2
LEFT JOIN lookup d_3 ON d_3.__rwn_rid = p.donor_3
ORDER BY CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.order|')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(s."rid" AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT), s.__rwn_rid
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('mixed')
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."mixed"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."mixed"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."mixed"
-- ----------------------------------------------------------------- statement
SELECT min("a") FILTER (WHERE isfinite(CAST("a" AS DOUBLE))), max("a") FILTER (WHERE isfinite(CAST("a" AS DOUBLE))), min("gappy") FILTER (WHERE isfinite(CAST("gappy" AS DOUBLE))), max("gappy") FILTER (WHERE isfinite(CAST("gappy" AS DOUBLE))) FROM "memory"."main"."mixed"
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
WITH src AS (
    SELECT * FROM "memory"."main"."mixed"
    WHERE "a" IS NOT NULL AND isfinite(CAST("a" AS DOUBLE)) AND "gappy" IS NOT NULL AND isfinite(CAST("gappy" AS DOUBLE))
),
cells AS (
    SELECT count(*) AS c, 'all records' AS label
    FROM src
    GROUP BY CAST("a" AS DOUBLE), CAST("gappy" AS DOUBLE)
)
SELECT coalesce(sum(c * greatest(c - 1, 5)), 0)::HUGEINT, coalesce(sum(c), 0),
    coalesce(max(c), 0), arg_max(label, c)
FROM cells
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE IF NOT EXISTS temp.main.__rwn_keys (id VARCHAR, k VARCHAR, lasting BOOLEAN)
-- ----------------------------------------------------------------- statement
SELECT id FROM temp.main.__rwn_keys WHERE lasting AND k = ?
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM "memory"."main"."mixed"
-- ----------------------------------------------------------------- statement
WITH RECURSIVE
-- rwn_sql: exact RWN neighbourhoods by grid-bucketed self-joins (METHODS.md section 1).
-- S_i = { j != i in i's stratum : d(i, j) <= max(eps, r_k(i)) }, ties at the radius included:
-- computed squared distances within a factor 1.0000000000000027::DOUBLE of the radius count as equal, which
-- provably includes every exact tie (METHODS.md, "Exact ties").
-- Records are bucketed into grid cells of side s; every j within s of i lies in i's cell or
-- an adjacent one, so a record is exact once k records and eps lie within its margin. Records
-- that are not yet exact retry with s doubled: no step compares all pairs.
src AS (
    SELECT * FROM "memory"."main"."mixed"
),
staged AS MATERIALIZED (
    -- record number: 1-based input position (DuckDB preserves insertion order), or the rank
    -- of the id column's value when id= is given (then the input order does not matter)
    SELECT row_number() OVER () AS __rwn_rid, *
    FROM src
    WHERE "a" IS NOT NULL AND isfinite(CAST("a" AS DOUBLE))
      AND "gappy" IS NOT NULL AND isfinite(CAST("gappy" AS DOUBLE))
),
stats AS (
    SELECT count(*) AS n,
        min(CAST("a" AS DOUBLE)) AS lo_1,
        max(CAST("a" AS DOUBLE)) AS hi_1,
        stddev_samp(CAST("a" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE))) AS sd_1,
        var_pop(CAST("a" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE))) AS var_1,
        count(*) FILTER (WHERE "a" IS NULL OR NOT isfinite(CAST("a" AS DOUBLE))) AS bad_1,
        min(CAST("gappy" AS DOUBLE)) AS lo_2,
        max(CAST("gappy" AS DOUBLE)) AS hi_2,
        stddev_samp(CAST("gappy" AS DOUBLE)) FILTER (WHERE isfinite(CAST("gappy" AS DOUBLE))) AS sd_2,
        var_pop(CAST("gappy" AS DOUBLE)) FILTER (WHERE isfinite(CAST("gappy" AS DOUBLE))) AS var_2,
        count(*) FILTER (WHERE "gappy" IS NULL OR NOT isfinite(CAST("gappy" AS DOUBLE))) AS bad_2
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
        lo_2 AS off_2,
        hi_2 - lo_2 AS sc_2,
        CASE
            WHEN n = 0 THEN 'the input has no records'
            WHEN bad_1 > 0 THEN 'column "a"' || ' has ' || bad_1 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_1 = lo_1 THEN 'column "a"' || ' is constant (every value is ' || lo_1 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_1 - lo_1) AND isfinite(hi_1 - lo_1) AND isfinite((hi_1 - lo_1) / (hi_1 - lo_1) * (hi_1 - lo_1) / (hi_1 - lo_1) * 2), false) THEN 'column "a"' || ' spans ' || lo_1 || ' to ' || hi_1 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_2 > 0 THEN 'column "gappy"' || ' has ' || bad_2 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_2 = lo_2 THEN 'column "gappy"' || ' is constant (every value is ' || lo_2 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_2 - lo_2) AND isfinite(hi_2 - lo_2) AND isfinite((hi_2 - lo_2) / (hi_2 - lo_2) * (hi_2 - lo_2) / (hi_2 - lo_2) * 2), false) THEN 'column "gappy"' || ' spans ' || lo_2 || ' to ' || hi_2 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN smallest <= 5 THEN 'the input has ' || smallest || ' records; k = 5 needs at least 6 (k must be below the number of records in every stratum)'
        END AS problem
    FROM stats, strata_sizes
),
settings AS (
    -- s0: starting cell side; diameter: no two records are further apart than this;
    -- grid_dims: how many grid coordinates the search uses (the rest stay in one cell)
    SELECT
        CASE WHEN problem IS NOT NULL THEN error('rwn_sql: ' || problem)
             ELSE greatest(0.0::DOUBLE * 1.000001, coalesce(pow(12 * pow(((hi_1 - lo_1) / sc_1) * ((hi_2 - lo_2) / sc_2), 2.0 / 2) / (n * 3.141592653589793), 1.0 / 2), 0.0), 1e-9 * diameter, 1e-12)
        END AS s0,
        diameter, grid_dims, off_1, sc_1, off_2, sc_2
    FROM (SELECT *, sqrt(pow((hi_1 - lo_1) / sc_1, 2) + pow((hi_2 - lo_2) / sc_2, 2)) AS diameter, 2 AS grid_dims FROM params)
),
scaled AS (
    -- unscaled distance values v_*, categorical distance columns c_*, strata k_*, and the
    -- scaled grid coordinates g_* (the numeric columns with the largest scaled spread)
    SELECT s.__rwn_rid AS rid,
        CAST(s."a" AS DOUBLE) AS v_1,
        CAST(s."gappy" AS DOUBLE) AS v_2,
        (CAST(s."a" AS DOUBLE) - p.off_1) / p.sc_1 AS g_1,
        (CAST(s."gappy" AS DOUBLE) - p.off_2) / p.sc_2 AS g_2
    FROM staged s, params p, settings st
),
first_level AS (
    -- first_lvl: records in dense cells start on a finer grid. The cell count at side s0,
    -- over the count expected if the data were spread evenly, gives the local density;
    -- each level halves the side, dividing the count by 2^G.
    SELECT scaled.*,
        -CAST(round(log2(greatest(count(*) OVER (PARTITION BY floor(g_1 / (st.s0)), floor(g_2 / (st.s0))) * 3.141592653589793 / 6, 1)) * 1.0 / 2) AS INTEGER) AS first_lvl
    FROM scaled, settings st
),
points AS MATERIALIZED (
    -- start_lvl: the same estimate once more, from the count in the record's cell at first_lvl:
    -- a cell of side s0 averages the density over a region much larger than the k nearest
    -- (clumps of near-duplicates, heavy tails), which put records on too coarse a grid.
    -- Only finer (with eps > 0, not below the level whose cells hold eps): the start level
    -- affects the speed, never the neighbourhoods. On a column grid
    -- the g_* are not kept: the steps that read them recompute them from v_* (sqlgen's grid_columns).
    SELECT rid, v_1, v_2,
        first_lvl - CAST(round(log2(greatest(count(*) OVER (PARTITION BY first_lvl, floor(g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl)))) * 3.141592653589793 / 6, 1)) * 1.0 / 2 - 0.375) AS INTEGER) AS start_lvl
    FROM first_level f, settings st
),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o)
),
search(lvl, rid, start_lvl, done, members, radius2, dcr2) AS (
    SELECT (SELECT min(start_lvl) FROM points) - 1 AS lvl, points.rid, start_lvl, false AS done,
        NULL::STRUCT(d2 DOUBLE, j BIGINT)[] AS members, NULL::DOUBLE AS radius2, NULL::DOUBLE AS dcr2
    FROM points
    UNION ALL
    (WITH
-- rwn_sql: one level of the neighbourhood search (sql/rwn_neighborhoods.sql): the records of
-- `search` still searching try cells of side s = s0 * growth^lvl; DuckDB runs it as the recursive member,
-- Spark once per level (rwn_sql/engines/spark.py).
active AS (
    -- records still searching whose start level is reached; cell side s = s0 * growth^lvl
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0::DOUBLE, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    -- margin: every record within this distance of i is in i's block of cells
    SELECT a.*,
            CAST(floor(least(greatest(g_1 / s, -1e12), 1e12)) AS BIGINT) AS cell_1,
            CAST(floor(least(greatest(g_2 / s, -1e12), 1e12)) AS BIGINT) AS cell_2,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - floor(g_1 / s), 1 - (g_1 / s - floor(g_1 / s)), g_2 / s - floor(g_2 / s), 1 - (g_2 / s - floor(g_2 / s))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s)))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST(floor(least(greatest(g_1 / l.s, -1e12), 1e12)) AS BIGINT)) % 2147483648 + 2147483648) % 2147483648 + ((CAST(floor(least(greatest(g_2 / l.s, -1e12), 1e12)) AS BIGINT)) % 2147483648 + 2147483648) % 2147483648 * 2147483648 AS cell_key
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2 FROM points p, settings st) p, level l
),
pairs AS (
    -- candidates within the margin; i itself (distance 0) is always among them. The neighbour
    -- cells nb_* are columns of one relation, so no optimizer can join probe with build before
    -- the offsets (Spark's did: a cartesian product)
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2) AS d2
    FROM (SELECT p.*, ((p.cell_1 + o.o_1) % 2147483648 + 2147483648) % 2147483648 + ((p.cell_2 + o.o_2) % 2147483648 + 2147483648) % 2147483648 * 2147483648 AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    -- The margin filters inside the aggregates. A WHERE that DuckDB would push into the cell
    -- join as a residual condition, evaluated pair by pair, was 1.5-2x slower on 5 columns; a
    -- filter the optimizer keeps after the join (margin_filter, where the dialect has one) drops
    -- the pairs beyond the margin (about 3/4 on 3 columns) before they are grouped.
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        -- done once the radius, widened for ties, lies within the margin
        count(*) FILTER (WHERE d2 * 1.0000000000000027::DOUBLE <= margin2) - 1 >= 5
            AND 0.0::DOUBLE * 1.0000000000000027::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0::DOUBLE, found[5].d2)) * 1.0000000000000027::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1
)
),
hood AS (
    -- the exact neighbourhoods: members sorted by (distance, record), and their number
    SELECT rid, members, radius2, dcr2, len(members) AS size
    FROM search, settings
    WHERE done AND settings.s0 > 0
)
,
-- rwn_sql: RWN perturbation. Per record and column, independently: with probability q the
-- value is replaced by the same column of a member of S_i drawn uniformly, else kept.
-- Draws come from a keyed hash of (key, purpose, record, column); see rwn_sql/randomness.py.
draws AS (
    SELECT rid, members, size,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|a')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_1,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|gappy')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_2
    FROM hood
),
picks AS MATERIALIZED (
    SELECT rid,
        CASE WHEN CAST((h_1 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_1 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_1,
        CASE WHEN CAST((h_2 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_2 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_2
    FROM draws
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

SELECT s.* EXCLUDE (__rwn_rid) REPLACE (d_1."a" AS "a", d_2."gappy" AS "gappy")
FROM picks p
JOIN lookup s ON s.__rwn_rid = p.rid
LEFT JOIN lookup d_1 ON d_1.__rwn_rid = p.donor_1
LEFT JOIN lookup d_2 ON d_2.__rwn_rid = p.donor_2
ORDER BY CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.order|')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(s.__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT), s.__rwn_rid
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('mixed')
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."mixed"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."mixed"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."mixed"
-- ----------------------------------------------------------------- statement
SELECT min("a") FILTER (WHERE isfinite(CAST("a" AS DOUBLE))), max("a") FILTER (WHERE isfinite(CAST("a" AS DOUBLE))), min("b") FILTER (WHERE isfinite(CAST("b" AS DOUBLE))), max("b") FILTER (WHERE isfinite(CAST("b" AS DOUBLE))), min("c") FILTER (WHERE isfinite(CAST("c" AS DOUBLE))), max("c") FILTER (WHERE isfinite(CAST("c" AS DOUBLE))), min("d") FILTER (WHERE isfinite(CAST("d" AS DOUBLE))), max("d") FILTER (WHERE isfinite(CAST("d" AS DOUBLE))), min("e") FILTER (WHERE isfinite(CAST("e" AS DOUBLE))), max("e") FILTER (WHERE isfinite(CAST("e" AS DOUBLE))) FROM "memory"."main"."mixed"
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
WITH src AS (SELECT * FROM "memory"."main"."mixed" WHERE isfinite(CAST("a" AS DOUBLE)) AND isfinite(CAST("b" AS DOUBLE)) AND isfinite(CAST("c" AS DOUBLE)) AND isfinite(CAST("d" AS DOUBLE)) AND isfinite(CAST("e" AS DOUBLE))),
stats AS (SELECT min(CAST("a" AS DOUBLE)) AS off_1, max(CAST("a" AS DOUBLE)) - min(CAST("a" AS DOUBLE)) AS sc_1, min(CAST("b" AS DOUBLE)) AS off_2, max(CAST("b" AS DOUBLE)) - min(CAST("b" AS DOUBLE)) AS sc_2, min(CAST("c" AS DOUBLE)) AS off_3, max(CAST("c" AS DOUBLE)) - min(CAST("c" AS DOUBLE)) AS sc_3, min(CAST("d" AS DOUBLE)) AS off_4, max(CAST("d" AS DOUBLE)) - min(CAST("d" AS DOUBLE)) AS sc_4, min(CAST("e" AS DOUBLE)) AS off_5, max(CAST("e" AS DOUBLE)) - min(CAST("e" AS DOUBLE)) AS sc_5 FROM src),
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY floor((CAST(s."a" AS DOUBLE) - t.off_1) / t.sc_1 / 0.06708203932499368::DOUBLE), floor((CAST(s."b" AS DOUBLE) - t.off_2) / t.sc_2 / 0.06708203932499368::DOUBLE), floor((CAST(s."c" AS DOUBLE) - t.off_3) / t.sc_3 / 0.06708203932499368::DOUBLE), floor((CAST(s."d" AS DOUBLE) - t.off_4) / t.sc_4 / 0.06708203932499368::DOUBLE), floor((CAST(s."e" AS DOUBLE) - t.off_5) / t.sc_5 / 0.06708203932499368::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
WITH src AS (
    SELECT * FROM "memory"."main"."mixed"
),
stats AS (SELECT min(CAST("a" AS DOUBLE)) AS off_1, max(CAST("a" AS DOUBLE)) - min(CAST("a" AS DOUBLE)) AS sc_1, min(CAST("b" AS DOUBLE)) AS off_2, max(CAST("b" AS DOUBLE)) - min(CAST("b" AS DOUBLE)) AS sc_2, min(CAST("c" AS DOUBLE)) AS off_3, max(CAST("c" AS DOUBLE)) - min(CAST("c" AS DOUBLE)) AS sc_3, min(CAST("d" AS DOUBLE)) AS off_4, max(CAST("d" AS DOUBLE)) - min(CAST("d" AS DOUBLE)) AS sc_4, min(CAST("e" AS DOUBLE)) AS off_5, max(CAST("e" AS DOUBLE)) - min(CAST("e" AS DOUBLE)) AS sc_5 FROM src),
cells AS (
    SELECT count(*) AS c, 'all records' AS label
    FROM src, stats
    GROUP BY CASE WHEN isfinite(floor((CAST("a" AS DOUBLE) - off_1) / sc_1 / 0.06708203925791165::DOUBLE)) THEN floor((CAST("a" AS DOUBLE) - off_1) / sc_1 / 0.06708203925791165::DOUBLE) ELSE CAST("a" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("b" AS DOUBLE) - off_2) / sc_2 / 0.06708203925791165::DOUBLE)) THEN floor((CAST("b" AS DOUBLE) - off_2) / sc_2 / 0.06708203925791165::DOUBLE) ELSE CAST("b" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("c" AS DOUBLE) - off_3) / sc_3 / 0.06708203925791165::DOUBLE)) THEN floor((CAST("c" AS DOUBLE) - off_3) / sc_3 / 0.06708203925791165::DOUBLE) ELSE CAST("c" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("d" AS DOUBLE) - off_4) / sc_4 / 0.06708203925791165::DOUBLE)) THEN floor((CAST("d" AS DOUBLE) - off_4) / sc_4 / 0.06708203925791165::DOUBLE) ELSE CAST("d" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("e" AS DOUBLE) - off_5) / sc_5 / 0.06708203925791165::DOUBLE)) THEN floor((CAST("e" AS DOUBLE) - off_5) / sc_5 / 0.06708203925791165::DOUBLE) ELSE CAST("e" AS DOUBLE) END
)
SELECT coalesce(sum(c * greatest(c - 1, 5)), 0)::HUGEINT, coalesce(sum(c), 0),
    coalesce(max(c), 0), arg_max(label, c)
FROM cells
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE IF NOT EXISTS temp.main.__rwn_keys (id VARCHAR, k VARCHAR, lasting BOOLEAN)
-- ----------------------------------------------------------------- statement
SELECT id FROM temp.main.__rwn_keys WHERE lasting AND k = ?
-- ----------------------------------------------------------------- statement
WITH src AS (SELECT * FROM "memory"."main"."mixed" WHERE isfinite(CAST("a" AS DOUBLE)) AND isfinite(CAST("b" AS DOUBLE)) AND isfinite(CAST("c" AS DOUBLE)) AND isfinite(CAST("d" AS DOUBLE)) AND isfinite(CAST("e" AS DOUBLE))),
stats AS (SELECT min(CAST("a" AS DOUBLE)) AS off_1, max(CAST("a" AS DOUBLE)) - min(CAST("a" AS DOUBLE)) AS sc_1, min(CAST("b" AS DOUBLE)) AS off_2, max(CAST("b" AS DOUBLE)) - min(CAST("b" AS DOUBLE)) AS sc_2, min(CAST("c" AS DOUBLE)) AS off_3, max(CAST("c" AS DOUBLE)) - min(CAST("c" AS DOUBLE)) AS sc_3, min(CAST("d" AS DOUBLE)) AS off_4, max(CAST("d" AS DOUBLE)) - min(CAST("d" AS DOUBLE)) AS sc_4, min(CAST("e" AS DOUBLE)) AS off_5, max(CAST("e" AS DOUBLE)) - min(CAST("e" AS DOUBLE)) AS sc_5 FROM src),
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY floor((CAST(s."a" AS DOUBLE) - t.off_1) / t.sc_1 / 0.06708203932499368::DOUBLE), floor((CAST(s."b" AS DOUBLE) - t.off_2) / t.sc_2 / 0.06708203932499368::DOUBLE), floor((CAST(s."c" AS DOUBLE) - t.off_3) / t.sc_3 / 0.06708203932499368::DOUBLE), floor((CAST(s."d" AS DOUBLE) - t.off_4) / t.sc_4 / 0.06708203932499368::DOUBLE), floor((CAST(s."e" AS DOUBLE) - t.off_5) / t.sc_5 / 0.06708203932499368::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM "memory"."main"."mixed"
-- ----------------------------------------------------------------- statement
SELECT max(CAST("a" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE))) - min(CAST("a" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE))), stddev_samp(CAST("a" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE))), max(CAST("b" AS DOUBLE)) FILTER (WHERE isfinite(CAST("b" AS DOUBLE))) - min(CAST("b" AS DOUBLE)) FILTER (WHERE isfinite(CAST("b" AS DOUBLE))), stddev_samp(CAST("b" AS DOUBLE)) FILTER (WHERE isfinite(CAST("b" AS DOUBLE))), max(CAST("c" AS DOUBLE)) FILTER (WHERE isfinite(CAST("c" AS DOUBLE))) - min(CAST("c" AS DOUBLE)) FILTER (WHERE isfinite(CAST("c" AS DOUBLE))), stddev_samp(CAST("c" AS DOUBLE)) FILTER (WHERE isfinite(CAST("c" AS DOUBLE))), max(CAST("d" AS DOUBLE)) FILTER (WHERE isfinite(CAST("d" AS DOUBLE))) - min(CAST("d" AS DOUBLE)) FILTER (WHERE isfinite(CAST("d" AS DOUBLE))), stddev_samp(CAST("d" AS DOUBLE)) FILTER (WHERE isfinite(CAST("d" AS DOUBLE))), max(CAST("e" AS DOUBLE)) FILTER (WHERE isfinite(CAST("e" AS DOUBLE))) - min(CAST("e" AS DOUBLE)) FILTER (WHERE isfinite(CAST("e" AS DOUBLE))), stddev_samp(CAST("e" AS DOUBLE)) FILTER (WHERE isfinite(CAST("e" AS DOUBLE))), covar_pop(CAST("a" AS DOUBLE), CAST("a" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE)) AND isfinite(CAST("a" AS DOUBLE))), covar_pop(CAST("a" AS DOUBLE), CAST("b" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE)) AND isfinite(CAST("b" AS DOUBLE))), covar_pop(CAST("a" AS DOUBLE), CAST("c" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE)) AND isfinite(CAST("c" AS DOUBLE))), covar_pop(CAST("a" AS DOUBLE), CAST("d" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE)) AND isfinite(CAST("d" AS DOUBLE))), covar_pop(CAST("a" AS DOUBLE), CAST("e" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE)) AND isfinite(CAST("e" AS DOUBLE))), covar_pop(CAST("b" AS DOUBLE), CAST("b" AS DOUBLE)) FILTER (WHERE isfinite(CAST("b" AS DOUBLE)) AND isfinite(CAST("b" AS DOUBLE))), covar_pop(CAST("b" AS DOUBLE), CAST("c" AS DOUBLE)) FILTER (WHERE isfinite(CAST("b" AS DOUBLE)) AND isfinite(CAST("c" AS DOUBLE))), covar_pop(CAST("b" AS DOUBLE), CAST("d" AS DOUBLE)) FILTER (WHERE isfinite(CAST("b" AS DOUBLE)) AND isfinite(CAST("d" AS DOUBLE))), covar_pop(CAST("b" AS DOUBLE), CAST("e" AS DOUBLE)) FILTER (WHERE isfinite(CAST("b" AS DOUBLE)) AND isfinite(CAST("e" AS DOUBLE))), covar_pop(CAST("c" AS DOUBLE), CAST("c" AS DOUBLE)) FILTER (WHERE isfinite(CAST("c" AS DOUBLE)) AND isfinite(CAST("c" AS DOUBLE))), covar_pop(CAST("c" AS DOUBLE), CAST("d" AS DOUBLE)) FILTER (WHERE isfinite(CAST("c" AS DOUBLE)) AND isfinite(CAST("d" AS DOUBLE))), covar_pop(CAST("c" AS DOUBLE), CAST("e" AS DOUBLE)) FILTER (WHERE isfinite(CAST("c" AS DOUBLE)) AND isfinite(CAST("e" AS DOUBLE))), covar_pop(CAST("d" AS DOUBLE), CAST("d" AS DOUBLE)) FILTER (WHERE isfinite(CAST("d" AS DOUBLE)) AND isfinite(CAST("d" AS DOUBLE))), covar_pop(CAST("d" AS DOUBLE), CAST("e" AS DOUBLE)) FILTER (WHERE isfinite(CAST("d" AS DOUBLE)) AND isfinite(CAST("e" AS DOUBLE))), covar_pop(CAST("e" AS DOUBLE), CAST("e" AS DOUBLE)) FILTER (WHERE isfinite(CAST("e" AS DOUBLE)) AND isfinite(CAST("e" AS DOUBLE))) FROM "memory"."main"."mixed"
-- ----------------------------------------------------------------- statement
WITH RECURSIVE
-- rwn_sql: exact RWN neighbourhoods by grid-bucketed self-joins (METHODS.md section 1).
-- S_i = { j != i in i's stratum : d(i, j) <= max(eps, r_k(i)) }, ties at the radius included:
-- computed squared distances within a factor 1.000000000000004::DOUBLE of the radius count as equal, which
-- provably includes every exact tie (METHODS.md, "Exact ties").
-- Records are bucketed into grid cells of side s; every j within s of i lies in i's cell or
-- an adjacent one, so a record is exact once k records and eps lie within its margin. Records
-- that are not yet exact retry with s doubled: no step compares all pairs.
src AS (
    SELECT * FROM "memory"."main"."mixed"
),
staged AS MATERIALIZED (
    -- record number: 1-based input position (DuckDB preserves insertion order), or the rank
    -- of the id column's value when id= is given (then the input order does not matter)
    SELECT row_number() OVER () AS __rwn_rid, *
    FROM src
),
stats AS (
    SELECT count(*) AS n,
        min(CAST("a" AS DOUBLE)) AS lo_1,
        max(CAST("a" AS DOUBLE)) AS hi_1,
        stddev_samp(CAST("a" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE))) AS sd_1,
        var_pop(CAST("a" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE))) AS var_1,
        count(*) FILTER (WHERE "a" IS NULL OR NOT isfinite(CAST("a" AS DOUBLE))) AS bad_1,
        min(CAST("b" AS DOUBLE)) AS lo_2,
        max(CAST("b" AS DOUBLE)) AS hi_2,
        stddev_samp(CAST("b" AS DOUBLE)) FILTER (WHERE isfinite(CAST("b" AS DOUBLE))) AS sd_2,
        var_pop(CAST("b" AS DOUBLE)) FILTER (WHERE isfinite(CAST("b" AS DOUBLE))) AS var_2,
        count(*) FILTER (WHERE "b" IS NULL OR NOT isfinite(CAST("b" AS DOUBLE))) AS bad_2,
        min(CAST("c" AS DOUBLE)) AS lo_3,
        max(CAST("c" AS DOUBLE)) AS hi_3,
        stddev_samp(CAST("c" AS DOUBLE)) FILTER (WHERE isfinite(CAST("c" AS DOUBLE))) AS sd_3,
        var_pop(CAST("c" AS DOUBLE)) FILTER (WHERE isfinite(CAST("c" AS DOUBLE))) AS var_3,
        count(*) FILTER (WHERE "c" IS NULL OR NOT isfinite(CAST("c" AS DOUBLE))) AS bad_3,
        min(CAST("d" AS DOUBLE)) AS lo_4,
        max(CAST("d" AS DOUBLE)) AS hi_4,
        stddev_samp(CAST("d" AS DOUBLE)) FILTER (WHERE isfinite(CAST("d" AS DOUBLE))) AS sd_4,
        var_pop(CAST("d" AS DOUBLE)) FILTER (WHERE isfinite(CAST("d" AS DOUBLE))) AS var_4,
        count(*) FILTER (WHERE "d" IS NULL OR NOT isfinite(CAST("d" AS DOUBLE))) AS bad_4,
        min(CAST("e" AS DOUBLE)) AS lo_5,
        max(CAST("e" AS DOUBLE)) AS hi_5,
        stddev_samp(CAST("e" AS DOUBLE)) FILTER (WHERE isfinite(CAST("e" AS DOUBLE))) AS sd_5,
        var_pop(CAST("e" AS DOUBLE)) FILTER (WHERE isfinite(CAST("e" AS DOUBLE))) AS var_5,
        count(*) FILTER (WHERE "e" IS NULL OR NOT isfinite(CAST("e" AS DOUBLE))) AS bad_5,
        covar_pop(CAST("a" AS DOUBLE), CAST("b" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE)) AND isfinite(CAST("b" AS DOUBLE))) AS cov_1_2,
        covar_pop(CAST("a" AS DOUBLE), CAST("c" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE)) AND isfinite(CAST("c" AS DOUBLE))) AS cov_1_3,
        covar_pop(CAST("a" AS DOUBLE), CAST("d" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE)) AND isfinite(CAST("d" AS DOUBLE))) AS cov_1_4,
        covar_pop(CAST("a" AS DOUBLE), CAST("e" AS DOUBLE)) FILTER (WHERE isfinite(CAST("a" AS DOUBLE)) AND isfinite(CAST("e" AS DOUBLE))) AS cov_1_5,
        covar_pop(CAST("b" AS DOUBLE), CAST("c" AS DOUBLE)) FILTER (WHERE isfinite(CAST("b" AS DOUBLE)) AND isfinite(CAST("c" AS DOUBLE))) AS cov_2_3,
        covar_pop(CAST("b" AS DOUBLE), CAST("d" AS DOUBLE)) FILTER (WHERE isfinite(CAST("b" AS DOUBLE)) AND isfinite(CAST("d" AS DOUBLE))) AS cov_2_4,
        covar_pop(CAST("b" AS DOUBLE), CAST("e" AS DOUBLE)) FILTER (WHERE isfinite(CAST("b" AS DOUBLE)) AND isfinite(CAST("e" AS DOUBLE))) AS cov_2_5,
        covar_pop(CAST("c" AS DOUBLE), CAST("d" AS DOUBLE)) FILTER (WHERE isfinite(CAST("c" AS DOUBLE)) AND isfinite(CAST("d" AS DOUBLE))) AS cov_3_4,
        covar_pop(CAST("c" AS DOUBLE), CAST("e" AS DOUBLE)) FILTER (WHERE isfinite(CAST("c" AS DOUBLE)) AND isfinite(CAST("e" AS DOUBLE))) AS cov_3_5,
        covar_pop(CAST("d" AS DOUBLE), CAST("e" AS DOUBLE)) FILTER (WHERE isfinite(CAST("d" AS DOUBLE)) AND isfinite(CAST("e" AS DOUBLE))) AS cov_4_5
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
        lo_2 AS off_2,
        hi_2 - lo_2 AS sc_2,
        lo_3 AS off_3,
        hi_3 - lo_3 AS sc_3,
        lo_4 AS off_4,
        hi_4 - lo_4 AS sc_4,
        lo_5 AS off_5,
        hi_5 - lo_5 AS sc_5,
        CASE
            WHEN n = 0 THEN 'the input has no records'
            WHEN bad_1 > 0 THEN 'column "a"' || ' has ' || bad_1 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_1 = lo_1 THEN 'column "a"' || ' is constant (every value is ' || lo_1 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_1 - lo_1) AND isfinite(hi_1 - lo_1) AND isfinite((hi_1 - lo_1) / (hi_1 - lo_1) * (hi_1 - lo_1) / (hi_1 - lo_1) * 5), false) THEN 'column "a"' || ' spans ' || lo_1 || ' to ' || hi_1 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_2 > 0 THEN 'column "b"' || ' has ' || bad_2 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_2 = lo_2 THEN 'column "b"' || ' is constant (every value is ' || lo_2 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_2 - lo_2) AND isfinite(hi_2 - lo_2) AND isfinite((hi_2 - lo_2) / (hi_2 - lo_2) * (hi_2 - lo_2) / (hi_2 - lo_2) * 5), false) THEN 'column "b"' || ' spans ' || lo_2 || ' to ' || hi_2 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_3 > 0 THEN 'column "c"' || ' has ' || bad_3 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_3 = lo_3 THEN 'column "c"' || ' is constant (every value is ' || lo_3 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_3 - lo_3) AND isfinite(hi_3 - lo_3) AND isfinite((hi_3 - lo_3) / (hi_3 - lo_3) * (hi_3 - lo_3) / (hi_3 - lo_3) * 5), false) THEN 'column "c"' || ' spans ' || lo_3 || ' to ' || hi_3 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_4 > 0 THEN 'column "d"' || ' has ' || bad_4 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_4 = lo_4 THEN 'column "d"' || ' is constant (every value is ' || lo_4 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_4 - lo_4) AND isfinite(hi_4 - lo_4) AND isfinite((hi_4 - lo_4) / (hi_4 - lo_4) * (hi_4 - lo_4) / (hi_4 - lo_4) * 5), false) THEN 'column "d"' || ' spans ' || lo_4 || ' to ' || hi_4 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN bad_5 > 0 THEN 'column "e"' || ' has ' || bad_5 || ' NULL, NaN or infinite values; clean them or use on_missing=''drop'' (--on-missing drop)'
            WHEN hi_5 = lo_5 THEN 'column "e"' || ' is constant (every value is ' || lo_5 || '); remove it from the distance columns'
            WHEN NOT coalesce(isfinite(hi_5 - lo_5) AND isfinite(hi_5 - lo_5) AND isfinite((hi_5 - lo_5) / (hi_5 - lo_5) * (hi_5 - lo_5) / (hi_5 - lo_5) * 5), false) THEN 'column "e"' || ' spans ' || lo_5 || ' to ' || hi_5 || ', too wide for double-precision distances; rescale it (e.g. divide it by a power of ten)'
            WHEN smallest <= 5 THEN 'the input has ' || smallest || ' records; k = 5 needs at least 6 (k must be below the number of records in every stratum)'
        END AS problem
    FROM stats, strata_sizes
),
settings AS (
    -- s0: starting cell side; diameter: no two records are further apart than this;
    -- grid_dims: how many grid coordinates the search uses (the rest stay in one cell)
    SELECT
        CASE WHEN problem IS NOT NULL THEN error('rwn_sql: ' || problem)
             ELSE greatest(0.15::DOUBLE * 1.000001, CASE grid_dims WHEN 3 THEN coalesce(pow(12 * pow(((hi_1 - lo_1) / sc_1) * ((hi_2 - lo_2) / sc_2) * ((hi_3 - lo_3) / sc_3) * ((hi_4 - lo_4) / sc_4) * ((hi_5 - lo_5) / sc_5), 3.0 / 5) / (n * 4.1887902047863905), 1.0 / 3), 0.0) WHEN 4 THEN coalesce(pow(12 * pow(((hi_1 - lo_1) / sc_1) * ((hi_2 - lo_2) / sc_2) * ((hi_3 - lo_3) / sc_3) * ((hi_4 - lo_4) / sc_4) * ((hi_5 - lo_5) / sc_5), 4.0 / 5) / (n * 4.934802200544679), 1.0 / 4), 0.0) WHEN 5 THEN coalesce(pow(12 * pow(((hi_1 - lo_1) / sc_1) * ((hi_2 - lo_2) / sc_2) * ((hi_3 - lo_3) / sc_3) * ((hi_4 - lo_4) / sc_4) * ((hi_5 - lo_5) / sc_5), 5.0 / 5) / (n * 5.263789013914325), 1.0 / 5), 0.0) END, 1e-9 * diameter, 1e-12)
        END AS s0,
        diameter, grid_dims, off_1, sc_1, off_2, sc_2, off_3, sc_3, off_4, sc_4, off_5, sc_5
    FROM (SELECT *, sqrt(pow((hi_1 - lo_1) / sc_1, 2) + pow((hi_2 - lo_2) / sc_2, 2) + pow((hi_3 - lo_3) / sc_3, 2) + pow((hi_4 - lo_4) / sc_4, 2) + pow((hi_5 - lo_5) / sc_5, 2)) AS diameter, CASE WHEN isfinite(pow(var_1 / (sc_1 * sc_1) + var_2 / (sc_2 * sc_2) + var_3 / (sc_3 * sc_3) + var_4 / (sc_4 * sc_4) + var_5 / (sc_5 * sc_5), 2) / (pow(var_1 / (sc_1 * sc_1), 2) + pow(var_2 / (sc_2 * sc_2), 2) + pow(var_3 / (sc_3 * sc_3), 2) + pow(var_4 / (sc_4 * sc_4), 2) + pow(var_5 / (sc_5 * sc_5), 2) + 2 * (pow(cov_1_2 / (sc_1 * sc_2), 2) + pow(cov_1_3 / (sc_1 * sc_3), 2) + pow(cov_1_4 / (sc_1 * sc_4), 2) + pow(cov_1_5 / (sc_1 * sc_5), 2) + pow(cov_2_3 / (sc_2 * sc_3), 2) + pow(cov_2_4 / (sc_2 * sc_4), 2) + pow(cov_2_5 / (sc_2 * sc_5), 2) + pow(cov_3_4 / (sc_3 * sc_4), 2) + pow(cov_3_5 / (sc_3 * sc_5), 2) + pow(cov_4_5 / (sc_4 * sc_5), 2)))) THEN greatest(3, least(5, CAST(round(pow(var_1 / (sc_1 * sc_1) + var_2 / (sc_2 * sc_2) + var_3 / (sc_3 * sc_3) + var_4 / (sc_4 * sc_4) + var_5 / (sc_5 * sc_5), 2) / (pow(var_1 / (sc_1 * sc_1), 2) + pow(var_2 / (sc_2 * sc_2), 2) + pow(var_3 / (sc_3 * sc_3), 2) + pow(var_4 / (sc_4 * sc_4), 2) + pow(var_5 / (sc_5 * sc_5), 2) + 2 * (pow(cov_1_2 / (sc_1 * sc_2), 2) + pow(cov_1_3 / (sc_1 * sc_3), 2) + pow(cov_1_4 / (sc_1 * sc_4), 2) + pow(cov_1_5 / (sc_1 * sc_5), 2) + pow(cov_2_3 / (sc_2 * sc_3), 2) + pow(cov_2_4 / (sc_2 * sc_4), 2) + pow(cov_2_5 / (sc_2 * sc_5), 2) + pow(cov_3_4 / (sc_3 * sc_4), 2) + pow(cov_3_5 / (sc_3 * sc_5), 2) + pow(cov_4_5 / (sc_4 * sc_5), 2)))) AS INTEGER))) ELSE 3 END AS grid_dims FROM params)
),
scaled AS (
    -- unscaled distance values v_*, categorical distance columns c_*, strata k_*, and the
    -- scaled grid coordinates g_* (the numeric columns with the largest scaled spread)
    SELECT s.__rwn_rid AS rid,
        CAST(s."a" AS DOUBLE) AS v_1,
        CAST(s."b" AS DOUBLE) AS v_2,
        CAST(s."c" AS DOUBLE) AS v_3,
        CAST(s."d" AS DOUBLE) AS v_4,
        CAST(s."e" AS DOUBLE) AS v_5,
        (CAST(s."a" AS DOUBLE) - p.off_1) / p.sc_1 AS g_1,
        (CAST(s."b" AS DOUBLE) - p.off_2) / p.sc_2 AS g_2,
        (CAST(s."c" AS DOUBLE) - p.off_3) / p.sc_3 AS g_3,
        CASE WHEN st.grid_dims >= 4 THEN (CAST(s."d" AS DOUBLE) - p.off_4) / p.sc_4 ELSE 0.0 END AS g_4,
        CASE WHEN st.grid_dims >= 5 THEN (CAST(s."e" AS DOUBLE) - p.off_5) / p.sc_5 ELSE 0.0 END AS g_5
    FROM staged s, params p, settings st
),
first_level AS (
    -- first_lvl: records in dense cells start on a finer grid. The cell count at side s0,
    -- over the count expected if the data were spread evenly, gives the local density;
    -- each level halves the side, dividing the count by 2^G.
    SELECT scaled.*,
        -CAST(round(log2(greatest(count(*) OVER (PARTITION BY floor(g_1 / (st.s0)), floor(g_2 / (st.s0)), floor(g_3 / (st.s0)), floor(g_4 / (st.s0)), floor(g_5 / (st.s0))) * CASE st.grid_dims WHEN 3 THEN 4.1887902047863905 WHEN 4 THEN 4.934802200544679 WHEN 5 THEN 5.263789013914325 END / 12, 1)) * CASE st.grid_dims WHEN 3 THEN 1.0 / 3 WHEN 4 THEN 2.0 / 4 WHEN 5 THEN 3.0 / 5 END) AS INTEGER) AS first_lvl
    FROM scaled, settings st
),
points AS MATERIALIZED (
    -- start_lvl: the same estimate once more, from the count in the record's cell at first_lvl:
    -- a cell of side s0 averages the density over a region much larger than the k nearest
    -- (clumps of near-duplicates, heavy tails), which put records on too coarse a grid.
    -- Only finer (with eps > 0, not below the level whose cells hold eps): the start level
    -- affects the speed, never the neighbourhoods. On a column grid
    -- the g_* are not kept: the steps that read them recompute them from v_* (sqlgen's grid_columns).
    SELECT rid, v_1, v_2, v_3, v_4, v_5,
        greatest(first_lvl - CAST(round(log2(greatest(count(*) OVER (PARTITION BY first_lvl, floor(g_1 / (st.s0 * pow(CASE st.grid_dims WHEN 3 THEN 2.0::DOUBLE WHEN 4 THEN 1.4142135623730951::DOUBLE WHEN 5 THEN 1.2599210498948732::DOUBLE END, first_lvl))), floor(g_2 / (st.s0 * pow(CASE st.grid_dims WHEN 3 THEN 2.0::DOUBLE WHEN 4 THEN 1.4142135623730951::DOUBLE WHEN 5 THEN 1.2599210498948732::DOUBLE END, first_lvl))), floor(g_3 / (st.s0 * pow(CASE st.grid_dims WHEN 3 THEN 2.0::DOUBLE WHEN 4 THEN 1.4142135623730951::DOUBLE WHEN 5 THEN 1.2599210498948732::DOUBLE END, first_lvl))), floor(g_4 / (st.s0 * pow(CASE st.grid_dims WHEN 3 THEN 2.0::DOUBLE WHEN 4 THEN 1.4142135623730951::DOUBLE WHEN 5 THEN 1.2599210498948732::DOUBLE END, first_lvl))), floor(g_5 / (st.s0 * pow(CASE st.grid_dims WHEN 3 THEN 2.0::DOUBLE WHEN 4 THEN 1.4142135623730951::DOUBLE WHEN 5 THEN 1.2599210498948732::DOUBLE END, first_lvl)))) * CASE st.grid_dims WHEN 3 THEN 4.1887902047863905 WHEN 4 THEN 4.934802200544679 WHEN 5 THEN 5.263789013914325 END / 12, 1)) * CASE st.grid_dims WHEN 3 THEN 1.0 / 3 WHEN 4 THEN 2.0 / 4 WHEN 5 THEN 3.0 / 5 END - 0.375) AS INTEGER), CAST(ceil(CASE st.grid_dims WHEN 3 THEN 1.0 WHEN 4 THEN 2.0 WHEN 5 THEN 3.0 END * log2(0.15::DOUBLE / (1.2 * st.s0))) AS INTEGER)) AS start_lvl
    FROM first_level f, settings st
),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3, t4.o AS o_4, t5.o AS o_5
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o), range(-1, 2) t4(o), range(-1, 2) t5(o), settings st
    WHERE (t4.o = 0 OR st.grid_dims >= 4) AND (t5.o = 0 OR st.grid_dims >= 5)
),
search(lvl, rid, start_lvl, done, members, radius2, dcr2) AS (
    SELECT (SELECT min(start_lvl) FROM points) - 1 AS lvl, points.rid, start_lvl, false AS done,
        NULL::STRUCT(d2 DOUBLE, j BIGINT)[] AS members, NULL::DOUBLE AS radius2, NULL::DOUBLE AS dcr2
    FROM points
    UNION ALL
    (WITH
-- rwn_sql: one level of the neighbourhood search (sql/rwn_neighborhoods.sql): the records of
-- `search` still searching try cells of side s = s0 * growth^lvl; DuckDB runs it as the recursive member,
-- Spark once per level (rwn_sql/engines/spark.py).
active AS (
    -- records still searching whose start level is reached; cell side s = s0 * growth^lvl
    SELECT w.lvl + 1 AS lvl, st.s0 * pow(CASE st.grid_dims WHEN 3 THEN 2.0::DOUBLE WHEN 4 THEN 1.4142135623730951::DOUBLE WHEN 5 THEN 1.2599210498948732::DOUBLE END, w.lvl + 1) AS s, st.diameter, sc_1, sc_2, sc_3, sc_4, sc_5, grid_dims, p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3, CASE WHEN st.grid_dims >= 4 THEN (p.v_4 - st.off_4) / st.sc_4 ELSE 0.0 END AS g_4, CASE WHEN st.grid_dims >= 5 THEN (p.v_5 - st.off_5) / st.sc_5 ELSE 0.0 END AS g_5
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    -- margin: every record within this distance of i is in i's block of cells
    SELECT a.*,
            CAST(floor(least(greatest(g_1 / s, -1e12), 1e12)) AS BIGINT) AS cell_1,
            CAST(floor(least(greatest(g_2 / s, -1e12), 1e12)) AS BIGINT) AS cell_2,
            CAST(floor(least(greatest(g_3 / s, -1e12), 1e12)) AS BIGINT) AS cell_3,
            CAST(floor(least(greatest(g_4 / s, -1e12), 1e12)) AS BIGINT) AS cell_4,
            CAST(floor(least(greatest(g_5 / s, -1e12), 1e12)) AS BIGINT) AS cell_5,
            g_1 / s - floor(g_1 / s) AS f_1,
            g_2 / s - floor(g_2 / s) AS f_2,
            g_3 / s - floor(g_3 / s) AS f_3,
            g_4 / s - floor(g_4 / s) AS f_4,
            g_5 / s - floor(g_5 / s) AS f_5,
            CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE ELSE 1.0::DOUBLE * pow(s * (1 + least(g_1 / s - floor(g_1 / s), 1 - (g_1 / s - floor(g_1 / s)), g_2 / s - floor(g_2 / s), 1 - (g_2 / s - floor(g_2 / s)), g_3 / s - floor(g_3 / s), 1 - (g_3 / s - floor(g_3 / s)), CASE WHEN grid_dims >= 4 THEN least(g_4 / s - floor(g_4 / s), 1 - (g_4 / s - floor(g_4 / s))) ELSE 1.0 END, CASE WHEN grid_dims >= 5 THEN least(g_5 / s - floor(g_5 / s), 1 - (g_5 / s - floor(g_5 / s))) ELSE 1.0 END) + 1e-6 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s), abs(g_4 / s), abs(g_5 / s)))), 2) END AS prune2,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest(s * (1 + least(g_1 / s - floor(g_1 / s), 1 - (g_1 / s - floor(g_1 / s)), g_2 / s - floor(g_2 / s), 1 - (g_2 / s - floor(g_2 / s)), g_3 / s - floor(g_3 / s), 1 - (g_3 / s - floor(g_3 / s)), CASE WHEN grid_dims >= 4 THEN least(g_4 / s - floor(g_4 / s), 1 - (g_4 / s - floor(g_4 / s))) ELSE 1.0 END, CASE WHEN grid_dims >= 5 THEN least(g_5 / s - floor(g_5 / s), 1 - (g_5 / s - floor(g_5 / s))) ELSE 1.0 END) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s), abs(g_4 / s), abs(g_5 / s)))), 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*,
            ((CAST(floor(least(greatest(g_1 / l.s, -1e12), 1e12)) AS BIGINT)) % 4096 + 4096) % 4096 + ((CAST(floor(least(greatest(g_2 / l.s, -1e12), 1e12)) AS BIGINT)) % 4096 + 4096) % 4096 * 4096 + ((CAST(floor(least(greatest(g_3 / l.s, -1e12), 1e12)) AS BIGINT)) % 4096 + 4096) % 4096 * 16777216 + ((CAST(floor(least(greatest(g_4 / l.s, -1e12), 1e12)) AS BIGINT)) % 4096 + 4096) % 4096 * 68719476736 + ((CAST(floor(least(greatest(g_5 / l.s, -1e12), 1e12)) AS BIGINT)) % 4096 + 4096) % 4096 * 281474976710656 AS cell_key
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3, CASE WHEN st.grid_dims >= 4 THEN (p.v_4 - st.off_4) / st.sc_4 ELSE 0.0 END AS g_4, CASE WHEN st.grid_dims >= 5 THEN (p.v_5 - st.off_5) / st.sc_5 ELSE 0.0 END AS g_5 FROM points p, settings st) p, level l
),
pairs AS (
    -- candidates within the margin; i itself (distance 0) is always among them. The neighbour
    -- cells nb_* are columns of one relation, so no optimizer can join probe with build before
    -- the offsets (Spark's did: a cartesian product)
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
                + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
                + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3)
                + ((a.v_4 - b.v_4) / a.sc_4) * ((a.v_4 - b.v_4) / a.sc_4)
                + ((a.v_5 - b.v_5) / a.sc_5) * ((a.v_5 - b.v_5) / a.sc_5) AS d2
    FROM (SELECT p.*, CASE WHEN s * s * (CASE o.o_1 WHEN 1 THEN (1 - p.f_1) * (1 - p.f_1) WHEN -1 THEN p.f_1 * p.f_1 ELSE 0.0 END + CASE o.o_2 WHEN 1 THEN (1 - p.f_2) * (1 - p.f_2) WHEN -1 THEN p.f_2 * p.f_2 ELSE 0.0 END + CASE o.o_3 WHEN 1 THEN (1 - p.f_3) * (1 - p.f_3) WHEN -1 THEN p.f_3 * p.f_3 ELSE 0.0 END + CASE o.o_4 WHEN 1 THEN (1 - p.f_4) * (1 - p.f_4) WHEN -1 THEN p.f_4 * p.f_4 ELSE 0.0 END + CASE o.o_5 WHEN 1 THEN (1 - p.f_5) * (1 - p.f_5) WHEN -1 THEN p.f_5 * p.f_5 ELSE 0.0 END) > p.prune2 THEN NULL ELSE ((p.cell_1 + o.o_1) % 4096 + 4096) % 4096 + ((p.cell_2 + o.o_2) % 4096 + 4096) % 4096 * 4096 + ((p.cell_3 + o.o_3) % 4096 + 4096) % 4096 * 16777216 + ((p.cell_4 + o.o_4) % 4096 + 4096) % 4096 * 68719476736 + ((p.cell_5 + o.o_5) % 4096 + 4096) % 4096 * 281474976710656 END AS nb_key FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON b.cell_key = a.nb_key
),
found AS (
    -- The margin filters inside the aggregates. A WHERE that DuckDB would push into the cell
    -- join as a residual condition, evaluated pair by pair, was 1.5-2x slower on 5 columns; a
    -- filter the optimizer keeps after the join (margin_filter, where the dialect has one) drops
    -- the pairs beyond the margin (about 3/4 on 3 columns) before they are grouped.
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        -- done once the radius, widened for ties, lies within the margin
        count(*) FILTER (WHERE d2 * 1.000000000000004::DOUBLE <= margin2) - 1 >= 5
            AND 0.0225::DOUBLE * 1.000000000000004::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0225::DOUBLE, found[5].d2)) * 1.000000000000004::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0225::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1
)
),
hood AS (
    -- the exact neighbourhoods: members sorted by (distance, record), and their number
    SELECT rid, members, radius2, dcr2, len(members) AS size
    FROM search, settings
    WHERE done AND settings.s0 > 0
)
,
-- rwn_sql: RWN perturbation. Per record and column, independently: with probability q the
-- value is replaced by the same column of a member of S_i drawn uniformly, else kept.
-- Draws come from a keyed hash of (key, purpose, record, column); see rwn_sql/randomness.py.
draws AS (
    SELECT rid, members, size,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|a')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_1,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|b')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_2,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|c')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_3,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|d')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_4,
        md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.perturb|e')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(rid AS VARCHAR)) AS h_5
    FROM hood
),
picks AS MATERIALIZED (
    SELECT rid,
        CASE WHEN CAST((h_1 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_1 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_1,
        CASE WHEN CAST((h_2 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_2 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_2,
        CASE WHEN CAST((h_3 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_3 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_3,
        CASE WHEN CAST((h_4 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_4 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_4,
        CASE WHEN CAST((h_5 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_5 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_5
    FROM draws
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

SELECT s.* EXCLUDE (__rwn_rid) REPLACE (d_1."a" AS "a", d_2."b" AS "b", d_3."c" AS "c", d_4."d" AS "d", d_5."e" AS "e")
FROM picks p
JOIN lookup s ON s.__rwn_rid = p.rid
LEFT JOIN lookup d_1 ON d_1.__rwn_rid = p.donor_1
LEFT JOIN lookup d_2 ON d_2.__rwn_rid = p.donor_2
LEFT JOIN lookup d_3 ON d_3.__rwn_rid = p.donor_3
LEFT JOIN lookup d_4 ON d_4.__rwn_rid = p.donor_4
LEFT JOIN lookup d_5 ON d_5.__rwn_rid = p.donor_5
ORDER BY CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.order|')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(s.__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT), s.__rwn_rid
