SELECT occupation, COUNT(*) AS n FROM adult WHERE sex = 'Female' AND occupation IN ('Sales', 'Tech-support') GROUP BY occupation
