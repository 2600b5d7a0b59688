SELECT sex, race, COUNT(*) FROM adult
WHERE relationship = 'Wife' AND education IN ('Masters') AND marital_status = 'Married-civ-spouse'
  AND occupation = 'Prof-specialty'
GROUP BY race, sex
