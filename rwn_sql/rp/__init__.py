"""Uniform perturbation of a sensitive attribute with reconstruction privacy: the exact test, its SQL,
the audit / randomize / estimates / release API, the release database, the analysts' query path and
the report."""
