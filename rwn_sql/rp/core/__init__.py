"""The method's core: the (eps, delta) tests and calibration (pure numpy), the input checks,
attribute disclosure, key-variable risk and the pure SQL builders."""
