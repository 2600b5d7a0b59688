"""Engines: the Backend seam (backend_for), one Dialect per engine holding its engine-specific SQL, and the
DuckDB and Spark backends, the only modules that talk to a connection."""
