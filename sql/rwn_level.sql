-- rwn_sql: one level of the neighbourhood search (sql/rwn_neighborhoods.sql): the records of
-- `search` still searching try cells of side s = s0 * growth^lvl; DuckDB runs it as the recursive member,
-- Spark once per level (rwn_sql/engines/spark.py).
active AS (
    -- records still searching whose start level is reached; cell side s = s0 * growth^lvl
    SELECT w.lvl + 1 AS lvl, st.s0 * pow($growth, w.lvl + 1) AS s, st.diameter$settings_columns, p.*$grid_columns
    FROM search w JOIN points p ON p.rid = w.rid, settings st
    WHERE NOT w.done AND w.start_lvl <= w.lvl + 1
),
level AS (SELECT DISTINCT s FROM active),
probe AS (
    -- margin: every record within this distance of i is in i's block of cells
    SELECT a.*$probe_keys,
        CASE WHEN s >= 2 * diameter THEN 'Infinity'::DOUBLE
             ELSE pow(greatest($margin, 0.0), 2)
        END AS margin2
    FROM active a
),
build AS (
    SELECT p.*$build_keys
    FROM (SELECT p.*$grid_columns FROM points p, settings st) p, level l
),
pairs AS (
    -- candidates within the margin; i itself (distance 0) is always among them. The neighbour
    -- cells nb_* are columns of one relation, so no optimizer can join probe with build before
    -- the offsets (Spark's did: a cartesian product)
    SELECT a.lvl, a.rid AS i, a.start_lvl, b.rid AS j, a.margin2,
        $distance2 AS d2
    FROM (SELECT p.*$neighbour_cells FROM probe p CROSS JOIN offsets o) a
    JOIN build b ON $join_condition
),
found AS (
    -- The margin filters inside the aggregates. A WHERE that DuckDB would push into the cell
    -- join as a residual condition, evaluated pair by pair, was 1.5-2x slower on 5 columns; a
    -- filter the optimizer keeps after the join (margin_filter, where the dialect has one) drops
    -- the pairs beyond the margin (about 3/4 on 3 columns) before they are grouped.
    SELECT lvl, i, any_value(start_lvl) AS start_lvl,
        -- done once the radius, widened for ties, lies within the margin
        count(*) FILTER (WHERE d2 * $tie_factor <= margin2) - 1 >= $k_search
            AND $eps2 * $tie_factor <= min(margin2)
            OR min(margin2) = 'Infinity'::DOUBLE AS done,
        $found_list AS found
    FROM pairs$margin_filter
    GROUP BY lvl, i
)
SELECT lvl, i AS rid, start_lvl, done,
    CASE WHEN done THEN $members END AS members,
    CASE WHEN done THEN $radius2 END AS radius2,
    CASE WHEN done THEN $closest END AS dcr2
FROM found
UNION ALL
SELECT w.lvl + 1, w.rid, w.start_lvl, false, NULL, NULL, NULL   -- not yet at their start level
FROM search w
WHERE NOT w.done AND w.start_lvl > w.lvl + 1
