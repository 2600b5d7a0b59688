-- rwn_sql: exact RWN neighbourhoods by grid-bucketed self-joins (METHODS.md section 1).
-- S_i = { j != i in i's stratum : d(i, j) <= max(eps, r_k(i)) }, ties at the radius included:
-- computed squared distances within a factor $tie_factor of the radius count as equal, which
-- provably includes every exact tie (METHODS.md, "Exact ties").
-- Records are bucketed into grid cells of side s; every j within s of i lies in i's cell or
-- an adjacent one, so a record is exact once k records and eps lie within its margin. Records
-- that are not yet exact retry with s doubled: no step compares all pairs.
src AS (
    SELECT * FROM $source
),
staged AS $materialized(
    -- record number: 1-based input position (DuckDB preserves insertion order), or the rank
    -- of the id column's value when id= is given (then the input order does not matter)
    SELECT row_number() OVER ($rid_order) AS __rwn_rid, *
    FROM src$missing_filter
),
stats AS (
    SELECT count(*) AS n$stats
    FROM staged
),
strata_sizes AS (
    SELECT coalesce(min(size), 0) AS smallest, arg_min(label, size) AS smallest_label
    FROM (SELECT $stratum_label AS label, count(*) AS size FROM staged GROUP BY $stratum_group)
),
params AS (
    SELECT *$scaling,
        CASE
            WHEN n = 0 THEN 'the input has no records'$checks
        END AS problem
    FROM stats, strata_sizes
),
settings AS (
    -- s0: starting cell side; diameter: no two records are further apart than this
    SELECT
        CASE WHEN problem IS NOT NULL THEN $raise_problem
             ELSE greatest($eps * 1.000001, $s_estimate, 1e-9 * diameter, 1e-12)
        END AS s0,
        diameter$scales$grid_order
    FROM (SELECT *, sqrt($diameter2) AS diameter FROM params)
),
scaled AS (
    -- unscaled distance values v_*, categorical distance columns c_*, strata k_*, and the
    -- scaled grid coordinates g_* (the numeric columns with the largest scaled spread)
    SELECT s.__rwn_rid AS rid$point_columns
    FROM staged s, params p, settings st
),
points AS $materialized(
    -- start_lvl: records in dense cells start on a finer grid. The cell count at side s0,
    -- over the count expected if the data were spread evenly, gives the local density;
    -- each level halves the side, dividing the count by 2^G.
    SELECT scaled.*,
        $start_level AS start_lvl
    FROM scaled, settings st
),
offsets AS (
    SELECT $offset_columns
),
search(lvl, rid, start_lvl, done, members, radius2, dcr2) AS (
    SELECT (SELECT min(start_lvl) FROM points) - 1, rid, start_lvl, false,
        NULL::STRUCT(d2 DOUBLE, j BIGINT)[], NULL::DOUBLE, NULL::DOUBLE
    FROM points
    UNION ALL
    (WITH
    active AS (
        -- records still searching whose start level is reached; cell side s = s0 * 2^lvl
        SELECT w.lvl + 1 AS lvl, st.s0 * pow(2.0, w.lvl + 1) AS s, st.diameter$scales, p.*
        FROM search w JOIN points p ON p.rid = w.rid, settings st
        WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
    ),
    level AS (SELECT DISTINCT s FROM active),
    probe AS (
        -- margin: every record within this distance of i is in i's block of cells
        SELECT a.*$probe_keys,
            CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
                 ELSE pow(greatest(least($grid_margin$category_margin), 0.0), 2)
            END AS margin2
        FROM active a
    ),
    build AS (
        SELECT p.*$build_keys
        FROM points p, level l
    ),
    pairs AS (
        -- candidates within the margin; i itself (distance 0) is always among them
        SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
            $distance2 AS d2
        FROM probe a CROSS JOIN offsets o
        JOIN build b ON $join_condition
    ),
    found AS (
        SELECT lvl, i, any_value(start_lvl) AS start_lvl,
            -- done once the radius, widened for ties, lies within the margin
            count(*) FILTER (WHERE d2 * $tie_factor <= margin2) - 1 >= $k_search
                AND $eps2 * $tie_factor <= min(margin2)
                OR min(margin2) = 'Infinity'::DOUBLE AS done,
            list_sort(coalesce(list(struct_pack(d2 := d2, j := j)) FILTER (WHERE j <> i), [])) AS found
        FROM pairs
        WHERE d2 <= margin2
        GROUP BY lvl, i
    )
    SELECT lvl, i, start_lvl, done,
        CASE WHEN done THEN list_filter(found, lambda e: e.d2 <= ($radius2) * $tie_factor) END,
        CASE WHEN done THEN $radius2 END,
        CASE WHEN done THEN found[1].d2 END
    FROM found
    UNION ALL
    SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
    FROM search w
    WHERE NOT w.done AND w.start_lvl > w.lvl + 1)
),
hood AS (
    -- the exact neighbourhoods: members sorted by (distance, record)
    SELECT rid, members, radius2, dcr2
    FROM search, settings
    WHERE done AND settings.s0 > 0
)
