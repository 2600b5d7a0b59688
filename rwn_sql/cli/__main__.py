"""`python -m rwn_sql.cli`: the same entry point as `rwn-sql`."""
import sys

from ..__main__ import main

if __name__ == "__main__":
    sys.exit(main())
