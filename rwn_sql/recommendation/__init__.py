"""Recommendation: the parameters to release with, for RWN (rwn) and for uniform perturbation (rp)."""
