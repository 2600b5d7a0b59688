"""Measuring a release: utility and risk against the original (evaluate; the measures in utility and
risk), the parameter sweep (tune) and the baselines it is compared with (rank swapping, MDAV)."""
