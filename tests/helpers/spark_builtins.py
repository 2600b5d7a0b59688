"""The Spark built-ins the plans call that sqlglot does not know: engines/test_portability.py lets
them through, engines/test_spark.py checks they exist on a real SparkSession."""

# Spark SQL built-ins that sqlglot parses as anonymous functions
SPARK_BUILTINS_SQLGLOT_LACKS = {"conv", "pmod", "raise_error"}

# Spark built-ins of the RWN plans that sqlglot parses as anonymous functions, and the table function
SPARK_RWN_BUILTINS = {"inline", "min_by", "named_struct", "count_if", "monotonically_increasing_id"}
SPARK_TABLE_FUNCTIONS = {"range"}
