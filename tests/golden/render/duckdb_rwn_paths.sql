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
WITH src AS (SELECT * FROM "memory"."main"."bodyfat" WHERE isfinite(CAST("Age" AS DOUBLE)) AND isfinite(CAST("Weight" AS DOUBLE)) AND isfinite(CAST("Height" AS DOUBLE))),
stats AS (SELECT min(CAST("Age" AS DOUBLE)) AS off_1, max(CAST("Age" AS DOUBLE)) - min(CAST("Age" AS DOUBLE)) AS sc_1, min(CAST("Weight" AS DOUBLE)) AS off_2, max(CAST("Weight" AS DOUBLE)) - min(CAST("Weight" AS DOUBLE)) AS sc_2, min(CAST("Height" AS DOUBLE)) AS off_3, max(CAST("Height" AS DOUBLE)) - min(CAST("Height" AS DOUBLE)) AS sc_3 FROM src),
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
             ELSE greatest(0.3::DOUBLE * 1.000001, coalesce(pow(12 * pow(((hi_1 - lo_1) / sc_1) * ((hi_2 - lo_2) / sc_2) * ((hi_3 - lo_3) / sc_3), 3.0 / 3) / (n * 4.1887902047863905), 1.0 / 3), 0.0), 1e-9 * diameter, 1e-12)
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
        greatest(first_lvl - CAST(round(log2(greatest(count(*) OVER (PARTITION BY first_lvl, floor(g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl)))) * 4.1887902047863905 / 12, 1)) * 1.0 / 3 - 0.375) AS INTEGER), CAST(ceil(1.0 * log2(0.3::DOUBLE / (1.2 * st.s0))) AS INTEGER)) AS start_lvl
    FROM first_level f, settings st
),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
ball_points AS MATERIALIZED (
    -- the ball pre-pass grid: cells of side 0.30029999999999996::DOUBLE (just above eps), t_* = grid coordinate / side;
    -- margin2: every record within this distance of i is in i's block of 3^G cells (as in the search)
    SELECT rid, v_1, v_2, v_3, least(greatest(g_1 / s, -1e12), 1e12) AS t_1, least(greatest(g_2 / s, -1e12), 1e12) AS t_2, least(greatest(g_3 / s, -1e12), 1e12) AS t_3,
        (((CAST(floor(least(greatest(g_1 / s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576) + (((CAST(floor(least(greatest(g_2 / s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576) * 1048576 + (((CAST(floor(least(greatest(g_3 / s, -1e12), 1e12)) AS BIGINT)) % 1048576 + 1048576) % 1048576) * 1099511627776 AS cell_key,
        pow(greatest(s * (1 + least(g_1 / s - floor(g_1 / s), 1 - (g_1 / s - floor(g_1 / s)), g_2 / s - floor(g_2 / s), 1 - (g_2 / s - floor(g_2 / s)), g_3 / s - floor(g_3 / s), 1 - (g_3 / s - floor(g_3 / s))) - 1e-9 * (1 + greatest(abs(g_1 / s), abs(g_2 / s), abs(g_3 / s)))), 0.0), 2) AS margin2
    FROM (SELECT p.*, (p.v_1 - st.off_1) / st.sc_1 AS g_1, (p.v_2 - st.off_2) / st.sc_2 AS g_2, (p.v_3 - st.off_3) / st.sc_3 AS g_3, st.grid_dims, 0.30029999999999996::DOUBLE AS s FROM points p, settings st) AS p
),
ball_pairs AS (
    -- every record with the members of its eps-ball in its neighbour cells (ties at eps included,
    -- as in the search), streamed into ball_counts (never stored). Filtered before the
    -- aggregate, so that it sees the members only (about a fifth of the candidates in 3-d)
    SELECT a.rid AS i, a.o, b.rid AS j,
        ((a.v_1 - b.v_1) / a.sc_1) * ((a.v_1 - b.v_1) / a.sc_1)
            + ((a.v_2 - b.v_2) / a.sc_2) * ((a.v_2 - b.v_2) / a.sc_2)
            + ((a.v_3 - b.v_3) / a.sc_3) * ((a.v_3 - b.v_3) / a.sc_3) AS d2
    FROM (SELECT p.*, (f.o_1 + 1) * 1 + (f.o_2 + 1) * 3 + (f.o_3 + 1) * 9 AS o, (((CAST(floor(p.t_1) AS BIGINT) + f.o_1) % 1048576 + 1048576) % 1048576) + (((CAST(floor(p.t_2) AS BIGINT) + f.o_2) % 1048576 + 1048576) % 1048576) * 1048576 + (((CAST(floor(p.t_3) AS BIGINT) + f.o_3) % 1048576 + 1048576) % 1048576) * 1099511627776 AS nb_key, st.sc_1, st.sc_2, st.sc_3
          FROM ball_points p CROSS JOIN offsets f, settings st) a
    JOIN ball_points b ON b.cell_key = a.nb_key
),
ball_counts AS MATERIALIZED (
    -- per record and neighbour cell: members of its eps-ball there, those strictly within eps,
    -- and the nearest (a ball record's nearest other record is within eps)
    SELECT i, o, count(*) AS size, count(*) FILTER (WHERE d2 <= 0.09::DOUBLE) AS within, min(d2) AS near2
    FROM ball_pairs
    WHERE j <> i AND d2 <= 0.09::DOUBLE * 1.000000000000003::DOUBLE
    GROUP BY i, o
),
ball_records AS MATERIALIZED (
    -- records whose neighbourhood is their eps-ball: at least max(k, 1) others within eps (so the
    -- search's radius would be eps), and the ball inside the block (margin); dcr: the nearest
    -- other record is within eps, hence in the block
    SELECT c.i AS rid, CAST(sum(c.size) AS BIGINT) AS size, min(c.near2) AS dcr2
    FROM ball_counts c JOIN ball_points p ON p.rid = c.i
    GROUP BY c.i
    HAVING sum(c.within) >= 5 AND min(p.margin2) >= 0.09::DOUBLE * 1.000000000000003::DOUBLE
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
            AND 0.09::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.09::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.09::DOUBLE, found[5].d2) END AS radius2,
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
    SELECT rid, NULL::STRUCT(d2 DOUBLE, j BIGINT)[] AS members, 0.09::DOUBLE AS radius2, dcr2, size
    FROM ball_records
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
picks0 AS MATERIALIZED (
    SELECT rid,
        CASE WHEN CAST((h_1 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_1 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_1,
        CASE WHEN members IS NULL AND CAST((h_1 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN least(size, 1 + CAST(floor(CAST((h_1 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT)) END AS rank_1,
        CASE WHEN CAST((h_2 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_2 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_2,
        CASE WHEN members IS NULL AND CAST((h_2 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN least(size, 1 + CAST(floor(CAST((h_2 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT)) END AS rank_2,
        CASE WHEN CAST((h_3 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN members[least(size, 1 + CAST(floor(CAST((h_3 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT))].j ELSE rid END AS donor_3,
        CASE WHEN members IS NULL AND CAST((h_3 >> 76) & 4503599627370495 AS BIGINT) < 4503599627370496.0::DOUBLE THEN least(size, 1 + CAST(floor(CAST((h_3 >> 24) & 4503599627370495 AS BIGINT) / 4503599627370496.0 * size) AS BIGINT)) END AS rank_3
    FROM draws
),
ball_draws AS (
    -- the drawn ranks of the ball records' replaced cells, one row per (record, column)
    SELECT p.rid, u.col, u.r
    FROM picks0 p,
    LATERAL (SELECT unnest([1, 2, 3]) AS col, unnest([p.rank_1, p.rank_2, p.rank_3]) AS r) u
    WHERE u.r IS NOT NULL
),
ball_at_0 AS (
    -- the cell holding the rank, and the rank within it
    SELECT x.rid, x.col, x.r - c.before AS r,
        CAST(floor(p.t_1) AS BIGINT) + (c.o // 1) % 3 - 1 AS tc_1, CAST(floor(p.t_2) AS BIGINT) + (c.o // 3) % 3 - 1 AS tc_2, CAST(floor(p.t_3) AS BIGINT) + (c.o // 9) % 3 - 1 AS tc_3
    FROM ball_draws x
    JOIN ball_cells c ON c.rid = x.rid AND x.r > c.before AND x.r <= c.before + c.size
    JOIN ball_points p ON p.rid = x.rid
),
ball_split_1 AS (
    -- the drawn cell's members in each of its 2^G halves
    SELECT x.rid, x.col, x.r, x.tc_1, x.tc_2, x.tc_3, (CAST(floor(b.t_1 * 2.0) AS BIGINT) - 2 * x.tc_1) * 1 + (CAST(floor(b.t_2 * 2.0) AS BIGINT) - 2 * x.tc_2) * 2 + (CAST(floor(b.t_3 * 2.0) AS BIGINT) - 2 * x.tc_3) * 4 AS child, count(*) AS size
    FROM ball_at_0 x
    JOIN ball_points a ON a.rid = x.rid
    JOIN ball_points b ON (((CAST(floor(b.t_1) AS BIGINT)) % 1048576 + 1048576) % 1048576) + (((CAST(floor(b.t_2) AS BIGINT)) % 1048576 + 1048576) % 1048576) * 1048576 + (((CAST(floor(b.t_3) AS BIGINT)) % 1048576 + 1048576) % 1048576) * 1099511627776 = (((x.tc_1) % 1048576 + 1048576) % 1048576) + (((x.tc_2) % 1048576 + 1048576) % 1048576) * 1048576 + (((x.tc_3) % 1048576 + 1048576) % 1048576) * 1099511627776
    CROSS JOIN settings st
    WHERE b.rid <> a.rid AND ((a.v_1 - b.v_1) / st.sc_1) * ((a.v_1 - b.v_1) / st.sc_1)
            + ((a.v_2 - b.v_2) / st.sc_2) * ((a.v_2 - b.v_2) / st.sc_2)
            + ((a.v_3 - b.v_3) / st.sc_3) * ((a.v_3 - b.v_3) / st.sc_3) <= 0.09::DOUBLE * 1.000000000000003::DOUBLE
    GROUP BY x.rid, x.col, x.r, x.tc_1, x.tc_2, x.tc_3, (CAST(floor(b.t_1 * 2.0) AS BIGINT) - 2 * x.tc_1) * 1 + (CAST(floor(b.t_2 * 2.0) AS BIGINT) - 2 * x.tc_2) * 2 + (CAST(floor(b.t_3 * 2.0) AS BIGINT) - 2 * x.tc_3) * 4
),
ball_at_1 AS (
    SELECT rid, col, r - before AS r,
        2 * tc_1 + (child // 1) % 2 AS tc_1, 2 * tc_2 + (child // 2) % 2 AS tc_2, 2 * tc_3 + (child // 4) % 2 AS tc_3
    FROM (SELECT s.*, CAST(sum(size) OVER (PARTITION BY rid, col ORDER BY child) AS BIGINT) - size AS before
          FROM ball_split_1 s) AS s
    WHERE r > before AND r <= before + size
),
ball_split_2 AS (
    -- the drawn cell's members in each of its 2^G halves
    SELECT x.rid, x.col, x.r, x.tc_1, x.tc_2, x.tc_3, (CAST(floor(b.t_1 * 4.0) AS BIGINT) - 2 * x.tc_1) * 1 + (CAST(floor(b.t_2 * 4.0) AS BIGINT) - 2 * x.tc_2) * 2 + (CAST(floor(b.t_3 * 4.0) AS BIGINT) - 2 * x.tc_3) * 4 AS child, count(*) AS size
    FROM ball_at_1 x
    JOIN ball_points a ON a.rid = x.rid
    JOIN ball_points b ON (((CAST(floor(b.t_1 * 2.0) AS BIGINT)) % 1048576 + 1048576) % 1048576) + (((CAST(floor(b.t_2 * 2.0) AS BIGINT)) % 1048576 + 1048576) % 1048576) * 1048576 + (((CAST(floor(b.t_3 * 2.0) AS BIGINT)) % 1048576 + 1048576) % 1048576) * 1099511627776 = (((x.tc_1) % 1048576 + 1048576) % 1048576) + (((x.tc_2) % 1048576 + 1048576) % 1048576) * 1048576 + (((x.tc_3) % 1048576 + 1048576) % 1048576) * 1099511627776
    CROSS JOIN settings st
    WHERE b.rid <> a.rid AND ((a.v_1 - b.v_1) / st.sc_1) * ((a.v_1 - b.v_1) / st.sc_1)
            + ((a.v_2 - b.v_2) / st.sc_2) * ((a.v_2 - b.v_2) / st.sc_2)
            + ((a.v_3 - b.v_3) / st.sc_3) * ((a.v_3 - b.v_3) / st.sc_3) <= 0.09::DOUBLE * 1.000000000000003::DOUBLE
    GROUP BY x.rid, x.col, x.r, x.tc_1, x.tc_2, x.tc_3, (CAST(floor(b.t_1 * 4.0) AS BIGINT) - 2 * x.tc_1) * 1 + (CAST(floor(b.t_2 * 4.0) AS BIGINT) - 2 * x.tc_2) * 2 + (CAST(floor(b.t_3 * 4.0) AS BIGINT) - 2 * x.tc_3) * 4
),
ball_at_2 AS (
    SELECT rid, col, r - before AS r,
        2 * tc_1 + (child // 1) % 2 AS tc_1, 2 * tc_2 + (child // 2) % 2 AS tc_2, 2 * tc_3 + (child // 4) % 2 AS tc_3
    FROM (SELECT s.*, CAST(sum(size) OVER (PARTITION BY rid, col ORDER BY child) AS BIGINT) - size AS before
          FROM ball_split_2 s) AS s
    WHERE r > before AND r <= before + size
),
ball_donors AS (
    -- the member of that rank among the drawn cell's members, by record number
    SELECT x.rid, x.col, list_sort(coalesce(list(struct_pack(j := b.rid)) FILTER (WHERE true), []))[x.r].j AS donor
    FROM ball_at_2 x
    JOIN ball_points a ON a.rid = x.rid
    JOIN ball_points b ON (((CAST(floor(b.t_1 * 4.0) AS BIGINT)) % 1048576 + 1048576) % 1048576) + (((CAST(floor(b.t_2 * 4.0) AS BIGINT)) % 1048576 + 1048576) % 1048576) * 1048576 + (((CAST(floor(b.t_3 * 4.0) AS BIGINT)) % 1048576 + 1048576) % 1048576) * 1099511627776 = (((x.tc_1) % 1048576 + 1048576) % 1048576) + (((x.tc_2) % 1048576 + 1048576) % 1048576) * 1048576 + (((x.tc_3) % 1048576 + 1048576) % 1048576) * 1099511627776
    CROSS JOIN settings st
    WHERE b.rid <> a.rid AND ((a.v_1 - b.v_1) / st.sc_1) * ((a.v_1 - b.v_1) / st.sc_1)
            + ((a.v_2 - b.v_2) / st.sc_2) * ((a.v_2 - b.v_2) / st.sc_2)
            + ((a.v_3 - b.v_3) / st.sc_3) * ((a.v_3 - b.v_3) / st.sc_3) <= 0.09::DOUBLE * 1.000000000000003::DOUBLE
    GROUP BY x.rid, x.col, x.r
),
ball_picks AS (
    SELECT rid, max(CASE WHEN col = 1 THEN donor END) AS donor_1, max(CASE WHEN col = 2 THEN donor END) AS donor_2, max(CASE WHEN col = 3 THEN donor END) AS donor_3
    FROM ball_donors
    GROUP BY rid
),
picks AS MATERIALIZED (
    SELECT p.rid, coalesce(p.donor_1, b.donor_1) AS donor_1, coalesce(p.donor_2, b.donor_2) AS donor_2, coalesce(p.donor_3, b.donor_3) AS donor_3
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
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
staged AS MATERIALIZED (
    -- record number: 1-based input position (DuckDB preserves insertion order), or the rank
    -- of the id column's value when id= is given (then the input order does not matter)
    SELECT row_number() OVER () AS __rwn_rid, *
    FROM src
)
SELECT * FROM staged
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
staged AS (SELECT * FROM rwn_stage_<hex>),
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
)
SELECT * FROM settings
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
staged AS (SELECT * FROM rwn_stage_<hex>),
params AS (SELECT * FROM rwn_stage_<hex>),
settings AS (SELECT * FROM rwn_stage_<hex>),
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
)
SELECT * FROM points
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM rwn_stage_<hex>)
SELECT (SELECT min(start_lvl) FROM points) - 1 AS lvl, points.rid, start_lvl, false AS done,
        NULL::STRUCT(d2 DOUBLE, j BIGINT)[] AS members, NULL::DOUBLE AS radius2, NULL::DOUBLE AS dcr2
    FROM points
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM rwn_stage_<hex>),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM rwn_stage_<hex>),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM rwn_stage_<hex>),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM rwn_stage_<hex>),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM rwn_stage_<hex>),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done) AS done_rows),
hood AS (
    -- the exact neighbourhoods: members sorted by (distance, record), and their number
    SELECT rid, members, radius2, dcr2, len(members) AS size
    FROM search, settings
    WHERE done AND settings.s0 > 0
)
SELECT * FROM hood
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
staged AS (SELECT * FROM rwn_stage_<hex>),
hood AS (SELECT * FROM rwn_stage_<hex>),
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

SELECT * FROM picks
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
staged AS (SELECT * FROM rwn_stage_<hex>),
picks AS (SELECT * FROM rwn_stage_<hex>)
SELECT p.rid, p.donor_2, p.donor_3, d."Age" AS __rwn_v_1
FROM picks p
LEFT JOIN staged d ON d.__rwn_rid = p.donor_1
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
staged AS (SELECT * FROM rwn_stage_<hex>),
picks AS (SELECT * FROM rwn_stage_<hex>)
SELECT p.rid, p.donor_3, p.__rwn_v_1, d."Weight" AS __rwn_v_2
FROM picks p
LEFT JOIN staged d ON d.__rwn_rid = p.donor_2
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
staged AS (SELECT * FROM rwn_stage_<hex>),
picks AS (SELECT * FROM rwn_stage_<hex>)
SELECT p.rid, p.__rwn_v_1, p.__rwn_v_2, d."Height" AS __rwn_v_3
FROM picks p
LEFT JOIN staged d ON d.__rwn_rid = p.donor_3
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
staged AS (SELECT * FROM rwn_stage_<hex>),
picks AS (SELECT * FROM rwn_stage_<hex>)
SELECT s."BodyFat", p.__rwn_v_1 AS "Age", p.__rwn_v_2 AS "Weight", p.__rwn_v_3 AS "Height", s."Neck", s."Chest", s."Abdomen", s."Hip", s."Thigh", s."Knee", s."Ankle", s."Biceps", s."Forearm", s."Wrist"
FROM staged s
JOIN picks p ON p.rid = s.__rwn_rid
ORDER BY CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.order|')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(s.__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT), s.__rwn_rid
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT * FROM "rwn_stage_<hex>"
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
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY floor((CAST(s."Age" AS DOUBLE) - t.off_1) / t.sc_1 / 0.02886751345948129::DOUBLE), floor((CAST(s."Weight" AS DOUBLE) - t.off_2) / t.sc_2 / 0.02886751345948129::DOUBLE), floor((CAST(s."Height" AS DOUBLE) - t.off_3) / t.sc_3 / 0.02886751345948129::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
WITH src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
stats AS (SELECT min(CAST("Age" AS DOUBLE)) AS off_1, max(CAST("Age" AS DOUBLE)) - min(CAST("Age" AS DOUBLE)) AS sc_1, min(CAST("Weight" AS DOUBLE)) AS off_2, max(CAST("Weight" AS DOUBLE)) - min(CAST("Weight" AS DOUBLE)) AS sc_2, min(CAST("Height" AS DOUBLE)) AS off_3, max(CAST("Height" AS DOUBLE)) - min(CAST("Height" AS DOUBLE)) AS sc_3 FROM src),
cells AS (
    SELECT count(*) AS c, 'all records' AS label
    FROM src, stats
    GROUP BY CASE WHEN isfinite(floor((CAST("Age" AS DOUBLE) - off_1) / sc_1 / 0.028867513430613778::DOUBLE)) THEN floor((CAST("Age" AS DOUBLE) - off_1) / sc_1 / 0.028867513430613778::DOUBLE) ELSE CAST("Age" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("Weight" AS DOUBLE) - off_2) / sc_2 / 0.028867513430613778::DOUBLE)) THEN floor((CAST("Weight" AS DOUBLE) - off_2) / sc_2 / 0.028867513430613778::DOUBLE) ELSE CAST("Weight" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("Height" AS DOUBLE) - off_3) / sc_3 / 0.028867513430613778::DOUBLE)) THEN floor((CAST("Height" AS DOUBLE) - off_3) / sc_3 / 0.028867513430613778::DOUBLE) ELSE CAST("Height" AS DOUBLE) END
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
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY floor((CAST(s."Age" AS DOUBLE) - t.off_1) / t.sc_1 / 0.02886751345948129::DOUBLE), floor((CAST(s."Weight" AS DOUBLE) - t.off_2) / t.sc_2 / 0.02886751345948129::DOUBLE), floor((CAST(s."Height" AS DOUBLE) - t.off_3) / t.sc_3 / 0.02886751345948129::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
staged AS MATERIALIZED (
    -- record number: 1-based input position (DuckDB preserves insertion order), or the rank
    -- of the id column's value when id= is given (then the input order does not matter)
    SELECT row_number() OVER () AS __rwn_rid, *
    FROM src
)
SELECT * FROM staged
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
staged AS (SELECT * FROM rwn_stage_<hex>),
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
             ELSE greatest(0.05::DOUBLE * 1.000001, coalesce(pow(12 * pow(((hi_1 - lo_1) / sc_1) * ((hi_2 - lo_2) / sc_2) * ((hi_3 - lo_3) / sc_3), 3.0 / 3) / (n * 4.1887902047863905), 1.0 / 3), 0.0), 1e-9 * diameter, 1e-12)
        END AS s0,
        diameter, grid_dims, off_1, sc_1, off_2, sc_2, off_3, sc_3
    FROM (SELECT *, sqrt(pow((hi_1 - lo_1) / sc_1, 2) + pow((hi_2 - lo_2) / sc_2, 2) + pow((hi_3 - lo_3) / sc_3, 2)) AS diameter, 3 AS grid_dims FROM params)
)
SELECT * FROM settings
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
staged AS (SELECT * FROM rwn_stage_<hex>),
params AS (SELECT * FROM rwn_stage_<hex>),
settings AS (SELECT * FROM rwn_stage_<hex>),
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
        greatest(first_lvl - CAST(round(log2(greatest(count(*) OVER (PARTITION BY first_lvl, floor(g_1 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_2 / (st.s0 * pow(2.0::DOUBLE, first_lvl))), floor(g_3 / (st.s0 * pow(2.0::DOUBLE, first_lvl)))) * 4.1887902047863905 / 12, 1)) * 1.0 / 3 - 0.375) AS INTEGER), CAST(ceil(1.0 * log2(0.05::DOUBLE / (1.2 * st.s0))) AS INTEGER)) AS start_lvl
    FROM first_level f, settings st
)
SELECT * FROM points
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM rwn_stage_<hex>)
SELECT (SELECT min(start_lvl) FROM points) - 1 AS lvl, points.rid, start_lvl, false AS done,
        NULL::STRUCT(d2 DOUBLE, j BIGINT)[] AS members, NULL::DOUBLE AS radius2, NULL::DOUBLE AS dcr2
    FROM points
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
WITH
points AS (SELECT * FROM rwn_stage_<hex>),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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
            AND 0.0025000000000000005::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT max(s) AS s FROM level
-- ----------------------------------------------------------------- statement
SELECT quantile_cont((p.v_1 - st.off_1) / st.sc_1, 0.1111111111111111), quantile_cont((p.v_1 - st.off_1) / st.sc_1, 0.2222222222222222), quantile_cont((p.v_1 - st.off_1) / st.sc_1, 0.3333333333333333), quantile_cont((p.v_1 - st.off_1) / st.sc_1, 0.4444444444444444), quantile_cont((p.v_1 - st.off_1) / st.sc_1, 0.5555555555555556), quantile_cont((p.v_1 - st.off_1) / st.sc_1, 0.6666666666666666), quantile_cont((p.v_1 - st.off_1) / st.sc_1, 0.7777777777777778), quantile_cont((p.v_1 - st.off_1) / st.sc_1, 0.8888888888888888) FROM (SELECT * FROM rwn_stage_<hex>) w JOIN rwn_stage_<hex> p ON p.rid = w.rid, rwn_stage_<hex> st WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
SELECT w.*, CASE WHEN (p.v_1 - st.off_1) / st.sc_1 >= 0.0847457627118644::DOUBLE THEN 1 ELSE 0 END + CASE WHEN (p.v_1 - st.off_1) / st.sc_1 >= 0.2033898305084746::DOUBLE THEN 1 ELSE 0 END + CASE WHEN (p.v_1 - st.off_1) / st.sc_1 >= 0.3050847457627119::DOUBLE THEN 1 ELSE 0 END + CASE WHEN (p.v_1 - st.off_1) / st.sc_1 >= 0.3220338983050847::DOUBLE THEN 1 ELSE 0 END + CASE WHEN (p.v_1 - st.off_1) / st.sc_1 >= 0.3559322033898305::DOUBLE THEN 1 ELSE 0 END + CASE WHEN (p.v_1 - st.off_1) / st.sc_1 >= 0.4067796610169492::DOUBLE THEN 1 ELSE 0 END + CASE WHEN (p.v_1 - st.off_1) / st.sc_1 >= 0.4576271186440678::DOUBLE THEN 1 ELSE 0 END + CASE WHEN (p.v_1 - st.off_1) / st.sc_1 >= 0.576271186440678::DOUBLE THEN 1 ELSE 0 END AS __rwn_chunk FROM (SELECT * FROM rwn_stage_<hex>) w JOIN rwn_stage_<hex> p ON p.rid = w.rid, rwn_stage_<hex> st WHERE NOT w.done
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM (SELECT p.* FROM rwn_stage_<hex> p, rwn_stage_<hex> st WHERE (p.v_1 - st.off_1) / st.sc_1 < 0.0847457627118644::DOUBLE + 3 * 0.11411126917358494::DOUBLE) AS __rwn_near),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM rwn_stage_<hex> WHERE __rwn_chunk = 0) AS __rwn_chunk),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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
            AND 0.0025000000000000005::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0025000000000000005::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM (SELECT p.* FROM rwn_stage_<hex> p, rwn_stage_<hex> st WHERE (p.v_1 - st.off_1) / st.sc_1 >= 0.0847457627118644::DOUBLE - 3 * 0.11411126917358494::DOUBLE AND (p.v_1 - st.off_1) / st.sc_1 < 0.2033898305084746::DOUBLE + 3 * 0.11411126917358494::DOUBLE) AS __rwn_near),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM rwn_stage_<hex> WHERE __rwn_chunk = 1) AS __rwn_chunk),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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
            AND 0.0025000000000000005::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0025000000000000005::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM (SELECT p.* FROM rwn_stage_<hex> p, rwn_stage_<hex> st WHERE (p.v_1 - st.off_1) / st.sc_1 >= 0.2033898305084746::DOUBLE - 3 * 0.11411126917358494::DOUBLE AND (p.v_1 - st.off_1) / st.sc_1 < 0.3050847457627119::DOUBLE + 3 * 0.11411126917358494::DOUBLE) AS __rwn_near),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM rwn_stage_<hex> WHERE __rwn_chunk = 2) AS __rwn_chunk),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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
            AND 0.0025000000000000005::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0025000000000000005::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM (SELECT p.* FROM rwn_stage_<hex> p, rwn_stage_<hex> st WHERE (p.v_1 - st.off_1) / st.sc_1 >= 0.3050847457627119::DOUBLE - 3 * 0.11411126917358494::DOUBLE AND (p.v_1 - st.off_1) / st.sc_1 < 0.3220338983050847::DOUBLE + 3 * 0.11411126917358494::DOUBLE) AS __rwn_near),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM rwn_stage_<hex> WHERE __rwn_chunk = 3) AS __rwn_chunk),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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
            AND 0.0025000000000000005::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0025000000000000005::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM (SELECT p.* FROM rwn_stage_<hex> p, rwn_stage_<hex> st WHERE (p.v_1 - st.off_1) / st.sc_1 >= 0.3220338983050847::DOUBLE - 3 * 0.11411126917358494::DOUBLE AND (p.v_1 - st.off_1) / st.sc_1 < 0.3559322033898305::DOUBLE + 3 * 0.11411126917358494::DOUBLE) AS __rwn_near),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM rwn_stage_<hex> WHERE __rwn_chunk = 4) AS __rwn_chunk),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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
            AND 0.0025000000000000005::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0025000000000000005::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM (SELECT p.* FROM rwn_stage_<hex> p, rwn_stage_<hex> st WHERE (p.v_1 - st.off_1) / st.sc_1 >= 0.3559322033898305::DOUBLE - 3 * 0.11411126917358494::DOUBLE AND (p.v_1 - st.off_1) / st.sc_1 < 0.4067796610169492::DOUBLE + 3 * 0.11411126917358494::DOUBLE) AS __rwn_near),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM rwn_stage_<hex> WHERE __rwn_chunk = 5) AS __rwn_chunk),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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
            AND 0.0025000000000000005::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0025000000000000005::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM (SELECT p.* FROM rwn_stage_<hex> p, rwn_stage_<hex> st WHERE (p.v_1 - st.off_1) / st.sc_1 >= 0.4067796610169492::DOUBLE - 3 * 0.11411126917358494::DOUBLE AND (p.v_1 - st.off_1) / st.sc_1 < 0.4576271186440678::DOUBLE + 3 * 0.11411126917358494::DOUBLE) AS __rwn_near),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM rwn_stage_<hex> WHERE __rwn_chunk = 6) AS __rwn_chunk),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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
            AND 0.0025000000000000005::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0025000000000000005::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM (SELECT p.* FROM rwn_stage_<hex> p, rwn_stage_<hex> st WHERE (p.v_1 - st.off_1) / st.sc_1 >= 0.4576271186440678::DOUBLE - 3 * 0.11411126917358494::DOUBLE AND (p.v_1 - st.off_1) / st.sc_1 < 0.576271186440678::DOUBLE + 3 * 0.11411126917358494::DOUBLE) AS __rwn_near),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM rwn_stage_<hex> WHERE __rwn_chunk = 7) AS __rwn_chunk),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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
            AND 0.0025000000000000005::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0025000000000000005::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM (SELECT p.* FROM rwn_stage_<hex> p, rwn_stage_<hex> st WHERE (p.v_1 - st.off_1) / st.sc_1 >= 0.576271186440678::DOUBLE - 3 * 0.11411126917358494::DOUBLE) AS __rwn_near),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM rwn_stage_<hex> WHERE __rwn_chunk = 8) AS __rwn_chunk),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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
            AND 0.0025000000000000005::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0025000000000000005::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM (SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex>) AS __rwn_level
-- ----------------------------------------------------------------- statement
WITH
points AS (SELECT * FROM rwn_stage_<hex>),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex>) AS __rwn_level),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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
            AND 0.0025000000000000005::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT max(s) AS s FROM level
-- ----------------------------------------------------------------- statement
SELECT quantile_cont((p.v_1 - st.off_1) / st.sc_1, 0.16666666666666666), quantile_cont((p.v_1 - st.off_1) / st.sc_1, 0.3333333333333333), quantile_cont((p.v_1 - st.off_1) / st.sc_1, 0.5), quantile_cont((p.v_1 - st.off_1) / st.sc_1, 0.6666666666666666), quantile_cont((p.v_1 - st.off_1) / st.sc_1, 0.8333333333333334) FROM (SELECT * FROM (SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex>) AS __rwn_level) w JOIN rwn_stage_<hex> p ON p.rid = w.rid, rwn_stage_<hex> st WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
SELECT w.*, CASE WHEN (p.v_1 - st.off_1) / st.sc_1 >= 0.16666666666666663::DOUBLE THEN 1 ELSE 0 END + CASE WHEN (p.v_1 - st.off_1) / st.sc_1 >= 0.3559322033898305::DOUBLE THEN 1 ELSE 0 END + CASE WHEN (p.v_1 - st.off_1) / st.sc_1 >= 0.4745762711864407::DOUBLE THEN 1 ELSE 0 END + CASE WHEN (p.v_1 - st.off_1) / st.sc_1 >= 0.559322033898305::DOUBLE THEN 1 ELSE 0 END + CASE WHEN (p.v_1 - st.off_1) / st.sc_1 >= 0.711864406779661::DOUBLE THEN 1 ELSE 0 END AS __rwn_chunk FROM (SELECT * FROM (SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex>) AS __rwn_level) w JOIN rwn_stage_<hex> p ON p.rid = w.rid, rwn_stage_<hex> st WHERE NOT w.done
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM (SELECT p.* FROM rwn_stage_<hex> p, rwn_stage_<hex> st WHERE (p.v_1 - st.off_1) / st.sc_1 < 0.16666666666666663::DOUBLE + 3 * 0.22822253834716988::DOUBLE) AS __rwn_near),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM rwn_stage_<hex> WHERE __rwn_chunk = 0) AS __rwn_chunk),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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
            AND 0.0025000000000000005::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0025000000000000005::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM (SELECT p.* FROM rwn_stage_<hex> p, rwn_stage_<hex> st WHERE (p.v_1 - st.off_1) / st.sc_1 >= 0.16666666666666663::DOUBLE - 3 * 0.22822253834716988::DOUBLE AND (p.v_1 - st.off_1) / st.sc_1 < 0.3559322033898305::DOUBLE + 3 * 0.22822253834716988::DOUBLE) AS __rwn_near),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM rwn_stage_<hex> WHERE __rwn_chunk = 1) AS __rwn_chunk),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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
            AND 0.0025000000000000005::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0025000000000000005::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM (SELECT p.* FROM rwn_stage_<hex> p, rwn_stage_<hex> st WHERE (p.v_1 - st.off_1) / st.sc_1 >= 0.3559322033898305::DOUBLE - 3 * 0.22822253834716988::DOUBLE AND (p.v_1 - st.off_1) / st.sc_1 < 0.4745762711864407::DOUBLE + 3 * 0.22822253834716988::DOUBLE) AS __rwn_near),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM rwn_stage_<hex> WHERE __rwn_chunk = 2) AS __rwn_chunk),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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
            AND 0.0025000000000000005::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0025000000000000005::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM (SELECT p.* FROM rwn_stage_<hex> p, rwn_stage_<hex> st WHERE (p.v_1 - st.off_1) / st.sc_1 >= 0.4745762711864407::DOUBLE - 3 * 0.22822253834716988::DOUBLE AND (p.v_1 - st.off_1) / st.sc_1 < 0.559322033898305::DOUBLE + 3 * 0.22822253834716988::DOUBLE) AS __rwn_near),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM rwn_stage_<hex> WHERE __rwn_chunk = 3) AS __rwn_chunk),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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
            AND 0.0025000000000000005::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0025000000000000005::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM (SELECT p.* FROM rwn_stage_<hex> p, rwn_stage_<hex> st WHERE (p.v_1 - st.off_1) / st.sc_1 >= 0.559322033898305::DOUBLE - 3 * 0.22822253834716988::DOUBLE AND (p.v_1 - st.off_1) / st.sc_1 < 0.711864406779661::DOUBLE + 3 * 0.22822253834716988::DOUBLE) AS __rwn_near),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM rwn_stage_<hex> WHERE __rwn_chunk = 4) AS __rwn_chunk),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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
            AND 0.0025000000000000005::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0025000000000000005::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM (SELECT p.* FROM rwn_stage_<hex> p, rwn_stage_<hex> st WHERE (p.v_1 - st.off_1) / st.sc_1 >= 0.711864406779661::DOUBLE - 3 * 0.22822253834716988::DOUBLE) AS __rwn_near),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM rwn_stage_<hex> WHERE __rwn_chunk = 5) AS __rwn_chunk),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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
            AND 0.0025000000000000005::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0025000000000000005::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM (SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex>) AS __rwn_level
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM rwn_stage_<hex>),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex> UNION ALL SELECT * FROM rwn_stage_<hex>) AS __rwn_level),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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
            AND 0.0025000000000000005::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0025000000000000005::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
points AS (SELECT * FROM rwn_stage_<hex>),
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM rwn_stage_<hex>),
offsets AS (
    SELECT t1.o AS o_1, t2.o AS o_2, t3.o AS o_3
    FROM range(-1, 2) t1(o), range(-1, 2) t2(o), range(-1, 2) t3(o)
),
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
            AND 0.0025000000000000005::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.0025000000000000005::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
    CASE WHEN done THEN greatest(0.0025000000000000005::DOUBLE, found[5].d2) END AS radius2,
    CASE WHEN done THEN found[1].d2 END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1


-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
SELECT max(lvl), count(*) FILTER (WHERE done), count(*) FILTER (WHERE NOT done), count(*) FILTER (WHERE NOT done AND start_lvl <= lvl + 1) FROM rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
settings AS (SELECT * FROM rwn_stage_<hex>),
search AS (SELECT * FROM (SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done UNION ALL SELECT * FROM rwn_stage_<hex> WHERE done) AS done_rows),
hood AS (
    -- the exact neighbourhoods: members sorted by (distance, record), and their number
    SELECT rid, members, radius2, dcr2, len(members) AS size
    FROM search, settings
    WHERE done AND settings.s0 > 0
)
SELECT * FROM hood
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
staged AS (SELECT * FROM rwn_stage_<hex>),
hood AS (SELECT * FROM rwn_stage_<hex>),
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

SELECT * FROM picks
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
staged AS (SELECT * FROM rwn_stage_<hex>),
picks AS (SELECT * FROM rwn_stage_<hex>)
SELECT p.rid, p.donor_2, p.donor_3, d."Age" AS __rwn_v_1
FROM picks p
LEFT JOIN staged d ON d.__rwn_rid = p.donor_1
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
staged AS (SELECT * FROM rwn_stage_<hex>),
picks AS (SELECT * FROM rwn_stage_<hex>)
SELECT p.rid, p.donor_3, p.__rwn_v_1, d."Weight" AS __rwn_v_2
FROM picks p
LEFT JOIN staged d ON d.__rwn_rid = p.donor_2
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT current_setting('disabled_optimizers')
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = 'build_side_probe_side'
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
staged AS (SELECT * FROM rwn_stage_<hex>),
picks AS (SELECT * FROM rwn_stage_<hex>)
SELECT p.rid, p.__rwn_v_1, p.__rwn_v_2, d."Height" AS __rwn_v_3
FROM picks p
LEFT JOIN staged d ON d.__rwn_rid = p.donor_3
-- ----------------------------------------------------------------- statement
SET disabled_optimizers = ''
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE rwn_stage_<hex> AS
WITH
staged AS (SELECT * FROM rwn_stage_<hex>),
picks AS (SELECT * FROM rwn_stage_<hex>)
SELECT s."BodyFat", p.__rwn_v_1 AS "Age", p.__rwn_v_2 AS "Weight", p.__rwn_v_3 AS "Height", s."Neck", s."Chest", s."Abdomen", s."Hip", s."Thigh", s."Knee", s."Ankle", s."Biceps", s."Forearm", s."Wrist"
FROM staged s
JOIN picks p ON p.rid = s.__rwn_rid
ORDER BY CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.order|')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST(s.__rwn_rid AS VARCHAR)) >> 0) & 4611686018427387903 AS BIGINT), s.__rwn_rid
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
DROP TABLE IF EXISTS rwn_stage_<hex>
-- ----------------------------------------------------------------- statement
SELECT * FROM "rwn_stage_<hex>"
