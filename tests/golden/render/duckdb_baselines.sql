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
SELECT count(*), count(*) FILTER (WHERE "Age" IS NULL), count(*) FILTER (WHERE "Weight" IS NULL OR isnan("Weight")), count(*) FILTER (WHERE "Height" IS NULL OR isnan("Height")) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
CREATE TEMP TABLE IF NOT EXISTS temp.main.__rwn_keys (id VARCHAR, k VARCHAR, lasting BOOLEAN)
-- ----------------------------------------------------------------- statement
INSERT INTO temp.main.__rwn_keys VALUES (?, ?, ?)
-- ----------------------------------------------------------------- statement
WITH staged AS MATERIALIZED (
    SELECT row_number() OVER () AS "__rwn_rid", * FROM "memory"."main"."bodyfat"
),
ranked AS (
    SELECT "__rwn_rid", dense_rank() OVER (ORDER BY "Age") AS v_0, dense_rank() OVER (ORDER BY "Weight") AS v_1, dense_rank() OVER (ORDER BY "Height") AS v_2 FROM staged
)
SELECT "__rwn_rid" AS rid, v_0, CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.rank_swap|Age')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST("__rwn_rid" AS VARCHAR)) >> 76) & 4503599627370495 AS BIGINT) AS tie_0, CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.rank_swap|Age')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST("__rwn_rid" AS VARCHAR)) >> 24) & 4503599627370495 AS BIGINT) AS pick_0, v_1, CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.rank_swap|Weight')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST("__rwn_rid" AS VARCHAR)) >> 76) & 4503599627370495 AS BIGINT) AS tie_1, CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.rank_swap|Weight')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST("__rwn_rid" AS VARCHAR)) >> 24) & 4503599627370495 AS BIGINT) AS pick_1, v_2, CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.rank_swap|Height')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST("__rwn_rid" AS VARCHAR)) >> 76) & 4503599627370495 AS BIGINT) AS tie_2, CAST((md5_number((SELECT coalesce(v, CAST(CAST(CASE WHEN v IS NULL THEN 'rwn_sql: the key of this statement is not set on this connection; run it on the connection that built it' END AS INTEGER) AS VARCHAR)) FROM (SELECT any_value(md5(k || '|rwn.rank_swap|Height')) AS v FROM temp.main.__rwn_keys WHERE id = '<hex>')) || CAST("__rwn_rid" AS VARCHAR)) >> 24) & 4503599627370495 AS BIGINT) AS pick_2, (SELECT bit_xor(hash("__rwn_rid", "Age", "Weight", "Height")) FROM staged) AS fp
FROM ranked ORDER BY "__rwn_rid"
-- ----------------------------------------------------------------- statement
DELETE FROM temp.main.__rwn_keys WHERE id IN ('<hex>')
-- ----------------------------------------------------------------- statement
WITH staged AS MATERIALIZED (
    SELECT row_number() OVER () AS "__rwn_rid", * FROM "memory"."main"."bodyfat"
),
perm AS (
    SELECT pos, CAST('0x' || substr('070c941c8f1901958c928a02151b67821e9c90170d91149806ab0e041f111dbe78c5b27fc4d353ccb7607bbc62645b7d6ecd7ce4d5444bd8d73b3ae5e07241dd3fedd136cfdbe6efe7e237dcebeef0f151da2777578155bf6c9f2fc8856f752a6a2dc02e88bb0f717e61b059ba315eb9683eb6b15fce5421b4862b33306924845610c1805d7aa8658b0b890993970513160a8d03089a8e18a396a412a0a55a9da9aa999b9eaead87a1a21ab5a7a6b36b7423af79ac7329c2706d662cc720586383b8c62522c3bd5cd0d2d428327645c943ca26cb35de3938e152464c40d6e93dd94aec343c4749eadfe84de3424e484f50', 2 * pos + 1, 2) AS BIGINT) AS donor_0, CAST('0x' || substr('2f6cc66f83ea3d9573709b260ff10daf7a35f072548cbf45e41b1a6ba3885f2120e5c571ab0c27b0c92d4e9a2aac01a64cbad94812387836c15db3c207ced1df8b4bc8c71890493447db4231a92bd47476b49715d8a4ae59587e63933ad01f62ee605b969e81ccc4b9a21c02eb9c040a24140950dc5184377f11adbba05a79bc66e10577a8bd991ecfdd4116b2d7b146aa985cc308645392872c0b6eed65a57db76a1d569f30d2854d91252e7b5710288f8d3b52cde2a1e069327c8086da17cb393c94682303444329dec067b53e895e3fa7e94fe6ef8e5533be4a758aca40b882b6e71922d5e3ecd3066de89d61d6130e', 2 * pos + 1, 2) AS BIGINT) AS donor_1, CAST('0x' || substr('dbca452b82b7f09be9abaa70e36feb3daf6aacd31a62b9eea7155c43b57d863a597747eaa175d68f2f50045267e52980488e4dd4adbb51d96320d77b10a89278cba51cb8035b2331d2a2dfe633c6e42a372c6e89ce69c26c219f461ba4c9ddde6616398c7a612dd15612b658da530e0c7e83a3ba26e12240d8653c9e1e71ef30a90572d0851fa6a05491c064bf3228b38a3fd5aec1b499c897b108e7cf7c5a88254a735d4287193e810b0a13359411c39acc90961d6b0644177436c5e0c78d8b9557b0edbc4ebe985e0241b2dc559d846849143493273b79386d01cd5f604bbd76e80d4f2e4c9ce209240ff1c4187f07ec', 2 * pos + 1, 2) AS BIGINT) AS donor_2
    FROM range(241) AS __rwn_perm(pos)
),
guard AS (
    SELECT count(*) = 241 AND bit_xor(hash("__rwn_rid", "Age", "Weight", "Height")) = 9450224696931390547::UBIGINT AS ok FROM staged
)
SELECT s.* EXCLUDE ("__rwn_rid") REPLACE (d_0."Age" AS "Age", d_1."Weight" AS "Weight", d_2."Height" AS "Height")
FROM staged s
JOIN perm p ON p.pos % 241 + 1 = s."__rwn_rid"
JOIN staged d_0 ON d_0."__rwn_rid" = p.donor_0
JOIN staged d_1 ON d_1."__rwn_rid" = p.donor_1
JOIN staged d_2 ON d_2."__rwn_rid" = p.donor_2
CROSS JOIN guard
WHERE CASE WHEN guard.ok THEN true ELSE error('rwn_sql: the rows of table ''bodyfat'' changed between reads, or their order is not deterministic; create a table from it first and pass that table') END
ORDER BY p.pos
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
SELECT count(*), count(*) FILTER (WHERE "Age" IS NULL OR NOT isfinite(CAST("Age" AS DOUBLE))), count(*) FILTER (WHERE "Weight" IS NULL OR NOT isfinite(CAST("Weight" AS DOUBLE))), count(*) FILTER (WHERE "Height" IS NULL OR NOT isfinite(CAST("Height" AS DOUBLE))) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
WITH staged AS MATERIALIZED (
    SELECT row_number() OVER () AS "__rwn_rid", * FROM "memory"."main"."bodyfat"
)
SELECT "__rwn_rid" AS rid, CAST("Age" AS DOUBLE) AS x_0, CAST("Weight" AS DOUBLE) AS x_1, CAST("Height" AS DOUBLE) AS x_2, bit_xor(hash("__rwn_rid", "Age", "Weight", "Height")) OVER () AS fp
FROM staged ORDER BY "__rwn_rid"
-- ----------------------------------------------------------------- statement
WITH staged AS MATERIALIZED (
    SELECT row_number() OVER () AS "__rwn_rid", * FROM "memory"."main"."bodyfat"
),
grp AS (
    SELECT unnest(range(1, 242)) AS rid, unnest(string_split('5,11,5,19,21,7,23,11,15,19,15,2,44,49,44,33,49,49,38,7,38,25,13,56,13,40,13,31,37,23,21,65,0,8,71,66,0,8,0,65,50,40,61,34,62,34,74,62,26,39,41,22,16,57,14,12,48,57,14,22,48,64,64,47,45,30,47,39,1,1,51,20,4,20,18,18,30,4,4,18,3,6,67,67,76,66,76,72,28,37,42,55,72,52,68,77,35,69,55,54,35,28,75,60,78,76,79,68,73,67,68,43,63,32,72,53,29,42,29,69,55,54,78,74,79,52,42,75,66,79,28,77,32,79,75,48,11,2,23,19,25,17,25,31,7,17,5,15,2,44,21,31,58,17,37,38,56,50,27,53,46,53,58,58,46,40,33,46,71,9,27,33,56,43,77,27,50,63,69,73,9,71,9,61,60,73,74,61,60,78,62,63,43,65,54,29,52,70,70,34,32,64,57,39,8,70,59,41,47,59,41,36,26,51,26,36,35,59,51,1,45,45,36,24,14,30,16,24,3,6,22,12,12,20,24,16,6,10,3,10,10', ','))::BIGINT AS g
),
agg AS (
    SELECT unnest(range(0, 80)) AS g, unnest(string_split('44.0,57.666666666666664,26.0,69.66666666666667,74.33333333333333,24.0,66.33333333333333,27.666666666666668,50.0,41.0,72.66666666666667,23.333333333333332,65.0,30.0,61.333333333333336,26.0,64.66666666666667,27.666666666666668,66.0,24.333333333333332,67.33333333333333,26.333333333333332,60.0,26.333333333333332,64.0,26.333333333333332,53.666666666666664,38.333333333333336,44.333333333333336,45.666666666666664,62.666666666666664,28.333333333333332,50.0,37.333333333333336,45.333333333333336,52.0,55.666666666666664,34.333333333333336,29.666666666666668,51.666666666666664,36.666666666666664,53.333333333333336,50.0,41.333333333333336,31.666666666666668,56.666666666666664,36.0,54.0,54.333333333333336,32.0,38.666666666666664,56.0,47.666666666666664,36.666666666666664,42.333333333333336,44.0,35.333333333333336,52.666666666666664,34.0,53.666666666666664,42.666666666666664,42.333333333333336,42.666666666666664,42.666666666666664,52.666666666666664,44.333333333333336,46.0,47.333333333333336,49.0,42.0,48.333333333333336,40.0,45.666666666666664,41.0,46.0,40.333333333333336,46.666666666666664,40.333333333333336,42.666666666666664,40.25', ','))::DOUBLE AS m_0, unnest(string_split('291.05,138.58333333333334,191.88333333333333,178.08333333333334,166.66666666666666,155.0,140.58333333333334,221.25,204.58333333333334,234.58333333333334,199.75,169.66666666666666,226.0,146.5,175.5,192.5,211.96666666666667,147.0,160.33333333333334,197.16666666666666,182.83333333333334,178.25,203.83333333333334,165.75,156.16666666666666,210.0,135.33333333333334,223.0,188.66666666666666,161.5,183.08333333333334,149.83333333333334,211.83333333333334,153.16666666666666,133.83333333333334,199.5,164.33333333333334,188.91666666666666,182.33333333333334,162.08333333333334,134.0,209.08333333333334,160.16666666666666,181.83333333333334,191.33333333333334,171.5,230.91666666666666,152.16666666666666,176.41666666666666,203.41666666666666,213.75,170.0,196.83333333333334,166.41666666666666,200.41666666666666,158.08333333333334,149.33333333333334,196.83333333333334,176.91666666666666,160.75,173.83333333333334,164.75,141.66666666666666,196.75,158.16666666666666,219.5,187.5,176.66666666666666,176.0,179.83333333333334,156.5,194.33333333333334,191.58333333333334,155.75,166.0,170.0,173.5,169.5,175.58333333333334,169.4375', ','))::DOUBLE AS m_1, unnest(string_split('71.5,65.16666666666667,76.25,66.33333333333333,69.83333333333333,67.08333333333333,66.16666666666667,74.25,65.33333333333333,75.08333333333333,70.08333333333333,72.33333333333333,72.66666666666667,67.83333333333333,66.75,74.0,69.83333333333333,72.33333333333333,67.5,72.83333333333333,68.75,71.58333333333333,68.75,70.58333333333333,68.75,69.91666666666667,67.25,74.08333333333333,74.66666666666667,66.41666666666667,72.16666666666667,68.91666666666667,74.66666666666667,66.75,67.41666666666667,74.08333333333333,67.66666666666667,73.33333333333333,68.16666666666667,73.41666666666667,68.25,72.0,66.58333333333333,74.08333333333333,69.33333333333333,71.58333333333333,71.83333333333333,69.08333333333333,67.91666666666667,71.08333333333333,71.83333333333333,68.91666666666667,73.08333333333333,68.75,73.25,68.16666666666667,70.08333333333333,70.58333333333333,71.33333333333333,70.0,68.08333333333333,72.91666666666667,68.91666666666667,72.08333333333333,71.33333333333333,70.25,69.16666666666667,72.75,71.91666666666667,68.75,70.25,69.91666666666667,71.75,69.16666666666667,71.75,69.41666666666667,70.16666666666667,71.33333333333333,70.0,70.625', ','))::DOUBLE AS m_2
),
guard AS (
    SELECT count(*) = 241 AND bit_xor(hash("__rwn_rid", "Age", "Weight", "Height")) = 9450224696931390547::UBIGINT AS ok FROM staged
)
SELECT s.* EXCLUDE ("__rwn_rid") REPLACE (a.m_0 AS "Age", a.m_1 AS "Weight", a.m_2 AS "Height")
FROM staged s
JOIN grp ON grp.rid = s."__rwn_rid"
JOIN agg a ON a.g = grp.g
CROSS JOIN guard
WHERE CASE WHEN guard.ok THEN true ELSE error('rwn_sql: the rows of table ''bodyfat'' changed between reads, or their order is not deterministic; create a table from it first and pass that table') END
ORDER BY s."__rwn_rid"
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
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY floor((CAST(s."Age" AS DOUBLE) - t.off_1) / t.sc_1 / 0.11547005383792516::DOUBLE), floor((CAST(s."Weight" AS DOUBLE) - t.off_2) / t.sc_2 / 0.11547005383792516::DOUBLE), floor((CAST(s."Height" AS DOUBLE) - t.off_3) / t.sc_3 / 0.11547005383792516::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
WITH src AS (
    SELECT * FROM "memory"."main"."bodyfat"
),
stats AS (SELECT min(CAST("Age" AS DOUBLE)) AS off_1, max(CAST("Age" AS DOUBLE)) - min(CAST("Age" AS DOUBLE)) AS sc_1, min(CAST("Weight" AS DOUBLE)) AS off_2, max(CAST("Weight" AS DOUBLE)) - min(CAST("Weight" AS DOUBLE)) AS sc_2, min(CAST("Height" AS DOUBLE)) AS off_3, max(CAST("Height" AS DOUBLE)) - min(CAST("Height" AS DOUBLE)) AS sc_3 FROM src),
cells AS (
    SELECT count(*) AS c, 'all records' AS label
    FROM src, stats
    GROUP BY CASE WHEN isfinite(floor((CAST("Age" AS DOUBLE) - off_1) / sc_1 / 0.11547005372245511::DOUBLE)) THEN floor((CAST("Age" AS DOUBLE) - off_1) / sc_1 / 0.11547005372245511::DOUBLE) ELSE CAST("Age" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("Weight" AS DOUBLE) - off_2) / sc_2 / 0.11547005372245511::DOUBLE)) THEN floor((CAST("Weight" AS DOUBLE) - off_2) / sc_2 / 0.11547005372245511::DOUBLE) ELSE CAST("Weight" AS DOUBLE) END, CASE WHEN isfinite(floor((CAST("Height" AS DOUBLE) - off_3) / sc_3 / 0.11547005372245511::DOUBLE)) THEN floor((CAST("Height" AS DOUBLE) - off_3) / sc_3 / 0.11547005372245511::DOUBLE) ELSE CAST("Height" AS DOUBLE) END
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
cells AS (SELECT count(*) AS c FROM src s, stats t GROUP BY floor((CAST(s."Age" AS DOUBLE) - t.off_1) / t.sc_1 / 0.11547005383792516::DOUBLE), floor((CAST(s."Weight" AS DOUBLE) - t.off_2) / t.sc_2 / 0.11547005383792516::DOUBLE), floor((CAST(s."Height" AS DOUBLE) - t.off_3) / t.sc_3 / 0.11547005383792516::DOUBLE))
SELECT sum(c), sum(c * (c - 1)) FROM cells
-- ----------------------------------------------------------------- statement
SELECT current_setting('memory_limit')
-- ----------------------------------------------------------------- statement
SELECT count(*) FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM query_table('bf_in_order')
-- ----------------------------------------------------------------- statement
BEGIN TRANSACTION
-- ----------------------------------------------------------------- statement
CREATE TABLE "bf_in_order" AS
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
             ELSE greatest(0.2::DOUBLE * 1.000001, coalesce(pow(12 * pow(((hi_1 - lo_1) / sc_1) * ((hi_2 - lo_2) / sc_2) * ((hi_3 - lo_3) / sc_3), 3.0 / 3) / (n * 4.1887902047863905), 1.0 / 3), 0.0), 1e-9 * diameter, 1e-12)
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
            AND 0.04000000000000001::DOUBLE * 1.000000000000003::DOUBLE <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i AND d2 <= margin2), [])) AS found
    FROM pairs
    WHERE d2 <= (margin2 + 0.0 * random())
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= (greatest(0.04000000000000001::DOUBLE, found[5].d2)) * 1.000000000000003::DOUBLE) END AS members,
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
ORDER BY s.__rwn_rid
-- ----------------------------------------------------------------- statement
COMMENT ON TABLE "bf_in_order" IS 'rwn_sql release, row order: input (row i is the release of input row i)'
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
DESCRIBE SELECT * FROM query_table('bf_in_order')
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "temp"."main"."bf_in_order"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."bf_in_order"
-- ----------------------------------------------------------------- statement
DESCRIBE SELECT * FROM "memory"."main"."bf_in_order"
-- ----------------------------------------------------------------- statement
SELECT database_name, schema_name, comment FROM duckdb_tables() WHERE lower(table_name) = lower(?)
-- ----------------------------------------------------------------- statement
SELECT current_database(), current_schema()
-- ----------------------------------------------------------------- statement
SELECT CAST("Age" AS DOUBLE) AS n0, CAST("Weight" AS DOUBLE) AS n1, CAST("Height" AS DOUBLE) AS n2 FROM "memory"."main"."bodyfat"
-- ----------------------------------------------------------------- statement
SELECT CAST("Age" AS DOUBLE) AS n0, CAST("Weight" AS DOUBLE) AS n1, CAST("Height" AS DOUBLE) AS n2 FROM "memory"."main"."bf_in_order"
