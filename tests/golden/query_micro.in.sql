SELECT COUNT(*) FROM adult
WHERE sex = 'Male' AND race = 'White' AND relationship = 'Husband'
  AND education = 'Bachelors' AND marital_status = 'Married-civ-spouse'
  AND occupation = 'Sales'
