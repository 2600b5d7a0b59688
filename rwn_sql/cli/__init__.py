"""The `rwn-sql` command line (`python -m rwn_sql`); `rwn_sql.__main__` installs the signal handlers
before anything heavy is imported."""
