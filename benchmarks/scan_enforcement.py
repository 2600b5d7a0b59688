"""Scan the certified enforcement: for each (p, m, eps, delta) given, every group size n in
1..N gets its design from rwn_sql.rp.core.privacy.trials_for_sizes, and the design's two tails at
every count c = 1..n are recomputed by the independent implementation of the tests
(tests/helpers/independent_tails.py: the per-block dynamic programme for n <= 40, the walk over
counts with scipy's gammaln above). Prints, per setting, the smallest tail found and any
(n, c) below delta, and the time of the design search and of the check. The test suite
scans two settings this way (tests/rp/test_enforcement.py); this script is for more, and for
settings whose designs have many blocks (minutes per setting at N = 2000).

    python benchmarks/scan_enforcement.py 2000 0.5,14,0.5,0.05 0.5,15,0.5,0.1
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from independent_tails import block_dp_tails, walk_tails  # noqa: E402

from rwn_sql.rp.core import privacy  # noqa: E402


def scan(n_top, p, m, eps, delta):
    pp = privacy.PrivacyParams(p, m, eps, delta, "exact")
    start = time.perf_counter()
    trials = privacy.trials_for_sizes(range(1, n_top + 1), pp)
    searched, worst, bad, designed = time.perf_counter(), 1.0, [], 0
    for n, t in trials.items():
        if t == 0:
            continue
        designed += 1
        if n <= 40:
            upper, lower = (x[1:] for x in block_dp_tails(n, t, p, m, eps))
        else:
            upper, lower = (x[1:] for x in walk_tails(n, t, p, m, eps))
        tail = np.minimum(upper, lower)
        worst = min(worst, float(tail.min()))
        bad += [(n, t, c + 1, float(tail[c])) for c in np.flatnonzero(tail < delta)]
    print(f"p={p} m={m} eps={eps} delta={delta}: n = 1..{n_top}, {designed} sizes designed, "
          f"blocks used {sorted(set(trials.values()) - {0})}, smallest tail {worst:.4f}, "
          f"{len(bad)} (n, c) below delta {bad[:5]} (search {searched - start:.0f} s, "
          f"check {time.perf_counter() - searched:.0f} s)", flush=True)


if __name__ == "__main__":
    top = int(sys.argv[1])
    for setting in sys.argv[2:]:
        p, m, eps, delta = setting.split(",")
        scan(top, float(p), int(m), float(eps), float(delta))
