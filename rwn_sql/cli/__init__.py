"""The `rwn-sql` command line (`python -m rwn_sql`); `rwn_sql.__main__` installs the signal handlers
before anything heavy is imported. `main` is the entry point, `parser` the options, `commands`
the commands themselves and `session` the run's connection and its checks."""
