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
    SELECT coalesce(min(size), 0) AS smallest, $smallest_label AS smallest_label
    FROM (SELECT $stratum_label AS label, count(*) AS size FROM staged $stratum_group_by)
),
params AS (
    SELECT *$scaling,
        CASE
            WHEN n = 0 THEN 'the input has no records'$checks
        END AS problem
    FROM stats, strata_sizes
),
settings AS (
    -- s0: starting cell side; diameter: no two records are further apart than this;
    -- grid_dims: how many grid coordinates the search uses (the rest stay in one cell)
    SELECT
        CASE WHEN problem IS NOT NULL THEN $raise_problem
             ELSE greatest($eps * 1.000001, $s_estimate, 1e-9 * diameter, 1e-12)
        END AS s0,
        diameter, grid_dims$scales$grid_order
    FROM (SELECT *, sqrt($diameter2) AS diameter, $grid_dims AS grid_dims FROM params)
),
scaled AS (
    -- unscaled distance values v_*, categorical distance columns c_*, strata k_*, and the
    -- scaled grid coordinates g_* (the numeric columns with the largest scaled spread)
    SELECT s.__rwn_rid AS rid$point_columns
    FROM staged s, params p, settings st
),
first_level AS (
    -- first_lvl: records in dense cells start on a finer grid. The cell count at side s0,
    -- over the count expected if the data were spread evenly, gives the local density;
    -- each level halves the side, dividing the count by 2^G.
    SELECT scaled.*,
        $first_level AS first_lvl
    FROM scaled, settings st
),
points AS $materialized(
    -- start_lvl: the same estimate once more, from the count in the record's cell at first_lvl:
    -- a cell of side s0 averages the density over a region much larger than the k nearest
    -- (clumps of near-duplicates, heavy tails), which put records on too coarse a grid.
    -- Only finer (with eps > 0, not below the level whose cells hold eps): the start level
    -- affects the speed, never the neighbourhoods. On a column grid
    -- the g_* are not kept: the steps that read them recompute them from v_* (sqlgen's grid_columns).
    SELECT $point_names,
        $start_level AS start_lvl
    FROM first_level f, settings st
),
offsets AS (
    SELECT $offset_columns
),$ball_ctes
search(lvl, rid, start_lvl, done, members, radius2, dcr2) AS (
    $search_seed
    UNION ALL
    (WITH
$level_step)
),
hood AS (
    -- the exact neighbourhoods: members sorted by (distance, record), and their number$hood_ball_note
    SELECT rid, members, radius2, dcr2, $members_size AS size
    FROM search, settings
    WHERE done AND settings.s0 > 0$hood_ball
)
