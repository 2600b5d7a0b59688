"""The release product: the release database and its published limits, where a design is
recorded, the analysts' queries and their answers, the HTML report."""
