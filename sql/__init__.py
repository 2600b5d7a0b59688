# SQL templates of rwn_sql, shipped as the package data `rwn_sql.sql`.
