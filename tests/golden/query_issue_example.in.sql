SELECT sex, COUNT(*) FROM adult WHERE occupation = 'Sales' AND race IN ('Black', 'Other') GROUP BY sex
