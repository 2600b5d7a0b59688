"""python -m rwn_sql: the rwn-sql command line."""
import sys

from .cli import main

sys.exit(main())
