"""Randomization Within Neighborhoods: the spec (validated once), the pure SQL planners, and the
orchestration that stages a plan on a backend."""
