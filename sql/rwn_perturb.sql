-- rwn_sql: RWN perturbation. Per record and column, independently: with probability q the
-- value is replaced by the same column of a member of S_i drawn uniformly, else kept.
-- Draws come from a keyed hash of (key, purpose, record, column); see rwn_sql/randomness.py.
draws AS (
    SELECT rid$rep, members$hashes
    FROM hood$replicates
),
picks AS (
    SELECT rid$rep$donors
    FROM draws
)
