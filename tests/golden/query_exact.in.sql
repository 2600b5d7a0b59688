SELECT race, COUNT(*) FROM adult WHERE sex = 'Female' GROUP BY race
