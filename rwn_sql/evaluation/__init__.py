"""Measuring a release: utility and risk against the original (evaluate), the parameter sweep (tune)
and the baselines it is compared with (rank swapping, MDAV)."""
