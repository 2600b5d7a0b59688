-- rwn_sql: RWN perturbation. Per record and column, independently: with probability q the
-- value is replaced by the same column of a member of S_i drawn uniformly, else kept.
-- Draws come from a keyed hash of (key, purpose, record, column); see rwn_sql/randomness.py.
draws AS (
    SELECT rid$rep, members, size$hashes
    FROM hood$record_ids$replicates
),
$picks AS $materialized(
    SELECT rid$rep$donors
    FROM draws
),$ball_ctes
drawn AS (SELECT count(*) AS draws FROM picks),
lookup AS (
    -- the input rows whose values the release fetches, readable only once every draw is made
    -- (the always-true condition on drawn): the joins then build their hash tables after the
    -- neighbourhood search has ended and freed its memory, not beside it
    SELECT staged.*
    FROM staged, drawn
    WHERE drawn.draws >= 0
)
