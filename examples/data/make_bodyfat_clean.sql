-- Rebuild bodyfat_clean.csv from bodyfat.csv (run from examples/data with the duckdb CLI
-- or `python -c "import duckdb; duckdb.sql(open('make_bodyfat_clean.sql').read())"`).
COPY (
    SELECT * EXCLUDE (Density)
    FROM read_csv('bodyfat.csv')
    WHERE abs(495 / Density - 450 - BodyFat) <= 1   -- Siri's equation agrees with BodyFat
      AND BodyFat >= 4
      AND Height >= 30
) TO 'bodyfat_clean.csv' (HEADER);
