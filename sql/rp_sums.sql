-- rwn_sql: SUM(x) and AVG(x) of a public numeric column x over the released records S that
-- satisfy the public predicate (and x IS NOT NULL) and hold a sensitive value in V
-- (docs/METHODS.md section 2). x is public, so it is constant within a personal group g
-- (n_g records, O_g of them released in V). (1[released in V] - b)/p is unbiased for
-- 1[in V], b = (1-p)|V|/m, so with w_g = x_g
--   SUM estimate = sum_g w_g (O_g - b n_g) / p          (w_g = 1: the COUNT estimate)
--   Var = sum_g w_g^2 Var(count_g) = (A + B phi + C phi^2) / p^2, the COUNT's formula
--   (rp_estimates.sql) with SS, SH weighted by w_g^2 and f replaced by the w^2-weighted
--   phi = (sum w^2 O / sum w^2 n - b) / p clipped to [0, 1] (with w = 1 exactly the COUNT's).
-- AVG = SUM estimate / COUNT estimate; its standard error is the delta method's: that of the
-- SUM with w_g = x_g - AVG, over |COUNT estimate| (approximate).
released AS (
    SELECT * FROM $release
    WHERE $where
),
params AS (
    SELECT $p AS __rwn_p, $domain AS __rwn_domain,
        (1 - $p) * $set_size / $domain_size AS __rwn_b, $set_size / $domain_size AS __rwn_v
),
personal AS (
    -- every personal group in S: x, its size n and its randomization units (SS, SH)
    SELECT pg.*, $units
    FROM (SELECT $public, CAST($x AS DOUBLE) AS __rwn_x, count(*) AS __rwn_n$hits
          FROM released GROUP BY $public) pg$design_join
),
cells AS (
    $cells
),
firsts AS (
    -- ungrouped, params LEFT JOIN cells: one row also over no records (as SQL's SUM and AVG, NULL)
    SELECT ${keys}CAST(coalesce(sum(__rwn_n), 0) AS BIGINT) AS group_size, sum(__rwn_x * __rwn_o) AS released_sum,
        sum(__rwn_o) AS released_hits,
        sum(__rwn_x * (__rwn_o - __rwn_b * __rwn_n)) / __rwn_p AS sum_estimate,
        coalesce(sum(__rwn_o - __rwn_b * __rwn_n), 0) / __rwn_p AS count_estimate
    FROM $firsts_from
    GROUP BY ${keys}__rwn_b, __rwn_p
),
weighted AS (
    SELECT ${keys}sum(__rwn_w * __rwn_w * __rwn_ss) AS __rwn_wss, sum(__rwn_w * __rwn_w * __rwn_sh) AS __rwn_wsh,
        sum(__rwn_w * __rwn_w * __rwn_n) AS __rwn_wn, sum(__rwn_w * __rwn_w * __rwn_o) AS __rwn_wo
    FROM (SELECT c.*, $weight AS __rwn_w FROM cells c JOIN firsts f ON $cells_firsts) c$group_weighted
),
spread AS (
    SELECT f.*, params.__rwn_p, params.__rwn_b, params.__rwn_v, w.__rwn_wss, w.__rwn_wsh,
        CASE WHEN w.__rwn_wn > 0 THEN least(greatest((w.__rwn_wo / w.__rwn_wn - params.__rwn_b) / params.__rwn_p,
                                                     0.0), 1.0)
             ELSE 0.0 END AS __rwn_phi
    FROM firsts f JOIN weighted w ON $firsts_weighted CROSS JOIN params
),
answers AS (
    SELECT *, CASE WHEN group_size > 0 THEN
           sqrt(greatest(__rwn_b * (1 - __rwn_b) * __rwn_wss
                         + __rwn_p * (1 - __rwn_p) * (__rwn_wsh - 2 * __rwn_v * __rwn_wss) * __rwn_phi
                         + __rwn_p * (1 - __rwn_p) * (__rwn_wss - __rwn_wsh) * __rwn_phi * __rwn_phi, 0.0))
           / __rwn_p END AS __rwn_sd
    FROM spread
)
SELECT $output
FROM answers
ORDER BY $order
