"""What the test modules share, and nothing a test module defines: paths and data loaders
(data), data sets of a given shape (datasets), the brute-force neighbourhood reference
(bruteforce), the independent tails (independent_tails), the Spark built-ins the plans call
(spark_builtins) and the package's module list (package). No test module imports another.
tests/conftest.py puts tests/ on sys.path, so `from helpers.data import BODYFAT` works from
every folder (and from pytest subprocesses that load that conftest)."""
