SELECT sex, occupation, COUNT(*) FROM adult GROUP BY sex, occupation
