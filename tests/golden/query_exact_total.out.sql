SELECT count(*) AS released_count,
    count(*) AS group_size,
    CAST(count(*) AS DOUBLE) AS estimate,
    0.0::DOUBLE AS std_error,
    CAST(count(*) AS DOUBLE) AS ci_low,
    CAST(count(*) AS DOUBLE) AS ci_high,
    CAST(count(*) AS DOUBLE) AS estimate_clipped,
    false AS micro_reconstruction
FROM "adult_randomized"
