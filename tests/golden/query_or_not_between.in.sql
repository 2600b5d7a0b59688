SELECT sex, COUNT(*)
FROM adult
WHERE (race = 'White' OR NOT education BETWEEN 'Assoc-acdm' AND 'Doctorate')
  AND marital_status IS NOT NULL
  AND occupation IN ('Sales', 'Exec-managerial')
GROUP BY sex
