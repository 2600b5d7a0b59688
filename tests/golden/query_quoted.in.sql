SELECT "SEX", count(1) AS n FROM "Adult" AS a
WHERE a.race <> 'it''s' AND Occupation = 'Sales' -- comments are dropped
GROUP BY "SEX";
