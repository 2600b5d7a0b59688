"""Rank swapping, a baseline of the RWN paper, in two variants (see `rank_swap`):

    rel = rank_swap(con, "people", ["Age", "Weight"], p_percent=15, key=my_secret)
    rel = rank_swap(con, "people", ["Age", "Weight"], p_percent=15, key=my_secret, variant="sdcmicro")

"simple" (the default) swaps every value within a rank window; "sdcmicro" follows sdcMicro's
`rankSwap` (the routine the paper's authors compared against): the top and bottom 5 % of each
column are replaced by their group's mean and the others swapped. The pairing runs in numpy on
keyed draws computed in DuckDB; the release is built in DuckDB by joining the original rows to
the computed donors by row position, guarded by a fingerprint of the rows the computation saw
(see `baselines`). Also importable from `rwn_sql.evaluation.baselines`.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..engines import duckdb as engine, duckdb_backend, outputs
from ..engines.dialects import DUCKDB, require_duckdb
from ..errors import RWNError
from ..identifiers import quote_ident, quote_literal
from ..randomness import bits_sql, hash_sql, key_scope, resolve_key
from ..rwn import sqlgen
from ..rwn.spec import MAX_COUNT, finite_number
from .baseline_sql import (REP, RID, TEMPORAL_OR_ENUM, check_values, column_list, fetch, fingerprint, guard,
                           hex_digits, hex_element, no_sql, resolve, staged)

__all__ = ["RANK_SWAP_VARIANTS", "check_rank_swap_inputs", "rank_swap", "rank_swap_donors", "rank_swap_pairs",
           "rank_swap_statement", "rank_swap_statements"]

RANK_SWAP_PURPOSE = "rwn.rank_swap"
RANK_SWAP_VARIANTS = ("simple", "sdcmicro")
SDCMICRO_PERCENT = 5            # sdcMicro's defaults of TopPercent and BottomPercent


def rank_swap_pairs(draws, window: int) -> np.ndarray:
    """The pairing of rank swapping on ranks 0..n-1 (pure function; see `rank_swap`).

    `draws[i]` is the 52-bit integer drawn for rank i; `window` = floor(P n / 100). Returns
    `partner` with partner[i] = the rank whose value rank i receives (partner[i] == i: kept;
    partner is an involution and |partner[i] - i| <= window). A 2-d `draws` (B x n) holds B
    independent pairings (replicates, columns) and gives B x n partners, row by row the same.

    Walk i = 0, 1, ..., n-1. Skip i if it is already swapped. Otherwise let F be the ranks j
    with i < j <= min(i + window, n - 1) not yet swapped; if F is empty, i keeps its value;
    else take m = floor(draws[i] * |F| / 2^52) and j = the (m+1)-th smallest element of F,
    swap i and j and mark both swapped. A Fenwick tree over the swapped flags finds j in
    O(log n), so the pairing is O(n log n).
    """
    if np.ndim(draws) == 2:
        block = np.asarray(draws, dtype=np.int64)
        if block.size and (block.min() < 0 or block.max() >= 1 << 52):
            raise ValueError("draws must be integers in [0, 2^52)")
        if len(block) >= BATCHED_PAIRINGS:
            n = block.shape[1]
            if int(window) <= WINDOW_WALK_PER_BIT * n.bit_length():
                return _pairs_batched_window(block, int(window))
            return _pairs_batched(block, int(window))
        return np.array([_pairs(row.tolist(), int(window)) for row in block], dtype=np.int64).reshape(block.shape)
    draws = [int(d) for d in draws]
    if any(d < 0 or d >= 1 << 52 for d in draws):
        raise ValueError("draws must be integers in [0, 2^52)")
    return np.asarray(_pairs(draws, int(window)), dtype=np.int64)


# From this many pairings of one length on, one numpy walk over all of them beats a Python
# walk each (a numpy step costs about as much as 40 Python steps).
BATCHED_PAIRINGS = 32


def _pairs(draws: list[int], window: int) -> list[int]:
    """rank_swap_pairs for one row of draws (checked), in plain Python."""
    n = len(draws)
    partner = list(range(n))
    if n < 2 or window < 1:
        return partner
    tree = [0] * (n + 1)            # Fenwick tree of swapped-as-partner flags (1-based)
    top = 1 << (n.bit_length() - 1)
    taken = bytearray(n)
    total = 0                       # ranks taken as partners so far
    pending = 0                     # of those, ranks > the current i
    for i in range(n):
        if taken[i]:
            pending -= 1
            continue
        end = min(i + window, n - 1)
        # every taken rank > i was chosen by some i' < i, so it is <= i' + window < i + window:
        # all of them lie in (i, end]
        free = (end - i) - pending
        if free <= 0:
            continue
        m = (draws[i] * free) >> 52
        # the (m+1)-th untaken rank above i is the target-th untaken rank overall
        target = (i + 1) - (total - pending) + m + 1
        pos, rem, step = 0, target, top
        while step:
            nxt = pos + step
            if nxt <= n:
                blk = step - tree[nxt]
                if blk < rem:
                    pos = nxt
                    rem -= blk
            step >>= 1
        j = pos                     # 0-based rank
        taken[j] = 1
        idx = j + 1
        while idx <= n:
            tree[idx] += 1
            idx += idx & -idx
        total += 1
        pending += 1
        partner[i], partner[j] = j, i
    return partner


def _pairs_batched(draws: np.ndarray, window: int) -> np.ndarray:
    """_pairs on every row of `draws` (B x n, checked) at once: the same walk, each step a
    numpy operation over the rows that still choose a partner at rank i."""
    rows, n = draws.shape
    partner = np.tile(np.arange(n, dtype=np.int64), (rows, 1))
    if n < 2 or window < 1 or rows == 0:
        return partner
    tree = np.zeros((rows, n + 1), dtype=np.int64)
    taken = np.zeros((rows, n), dtype=bool)
    total = np.zeros(rows, dtype=np.int64)
    pending = np.zeros(rows, dtype=np.int64)
    top = 1 << (n.bit_length() - 1)
    # m = floor(d * free / 2^52) without 64-bit overflow: d = hi 2^26 + lo, and
    # floor((hi free 2^26 + lo free) / 2^52) = floor((hi free + floor(lo free / 2^26)) / 2^26)
    high, low = draws >> 26, draws & ((1 << 26) - 1)
    for i in range(n):
        pending -= taken[:, i]
        free = (min(i + window, n - 1) - i) - pending
        r = np.flatnonzero(~taken[:, i] & (free > 0))
        if not len(r):
            continue
        f = free[r]
        m = (high[r, i] * f + ((low[r, i] * f) >> 26)) >> 26
        rem = (i + 1) - (total[r] - pending[r]) + m + 1
        pos, step = np.zeros(len(r), dtype=np.int64), top
        while step:
            nxt = pos + step
            blk = step - tree[r, np.minimum(nxt, n)]
            move = (nxt <= n) & (blk < rem)
            pos = np.where(move, nxt, pos)
            rem = np.where(move, rem - blk, rem)
            step >>= 1
        j = pos                      # 0-based rank
        taken[r, j] = True
        idx, live = j + 1, r
        while len(live):
            tree[live, idx] += 1     # distinct rows: no repeated index in one assignment
            idx = idx + (idx & -idx)
            keep = idx <= n
            idx, live = idx[keep], live[keep]
        total[r] += 1
        pending[r] += 1
        partner[r, i] = j
        partner[r, j] = i
    return partner


# A window walk step costs about rows x window element operations, a Fenwick step about
# rows x 20 log2(n) (measured on 1,400 rows of 241 to 513 ranks): below this many window
# ranks per bit of n, the window walk is the faster.
WINDOW_WALK_PER_BIT = 20


def _pairs_batched_window(draws: np.ndarray, window: int) -> np.ndarray:
    """_pairs_batched by another walk, the same pairings: at rank i, the (m+1)-th rank not yet
    swapped among (i, i + window] is found by a running count over those window flags (one
    numpy pass over rows x window values a step, instead of a Fenwick tree's log2(n) steps of
    several passes each: faster for narrow windows)."""
    rows, n = draws.shape
    partner = np.tile(np.arange(n, dtype=np.int64), (rows, 1))
    if n < 2 or window < 1 or rows == 0:
        return partner
    free = np.ones((rows, n), dtype=bool)           # not yet swapped
    high, low = draws >> 26, draws & ((1 << 26) - 1)
    for i in range(n - 1):
        r = np.flatnonzero(free[:, i])
        if not len(r):
            continue
        counts = np.cumsum(free[r, i + 1:min(i + window, n - 1) + 1], axis=1)
        total = counts[:, -1]
        choose = total > 0
        r, counts, total = r[choose], counts[choose], total[choose]
        if not len(r):
            continue
        # m = floor(d * total / 2^52) without 64-bit overflow, as in _pairs_batched
        m = (high[r, i] * total + ((low[r, i] * total) >> 26)) >> 26
        j = i + 1 + np.argmax(counts > m[:, None], axis=1)    # the (m+1)-th free rank
        free[r, i] = False
        free[r, j] = False
        partner[r, i] = j
        partner[r, j] = i
    return partner


def _swap_percent(p_percent) -> Fraction:
    p = finite_number(p_percent, "p_percent")
    if not 0 < p <= 100:
        raise RWNError(f"p_percent must be in (0, 100], got {p_percent!r}")
    # exact decimal arithmetic: P = 12.1 with n = 1000 gives a window of 121, not 120
    return Fraction(repr(p))


def _check_reps(reps) -> int | None:
    if reps is None:
        return None
    if isinstance(reps, bool) or not isinstance(reps, (int, np.integer)) or not 1 <= reps <= MAX_COUNT:
        raise RWNError(f"reps must be an integer >= 1 (at most {MAX_COUNT}; or None for one release), got {reps!r}")
    return int(reps)


def _coding_percent(value, name: str) -> Fraction:
    p = finite_number(value, name)
    if not 0 <= p < 100:
        raise RWNError(f"{name} must be in [0, 100) (percent of the records), got {value!r}")
    return Fraction(repr(p))


def _check_variant(variant, top_percent, bottom_percent):
    """(variant, top, bottom): `variant` checked, and for 'sdcmicro' its top and bottom percents as
    exact fractions (None: sdcMicro's 5); RWNError for anything else, and for a percent given
    with the simple variant, which codes no values."""
    if not isinstance(variant, str) or variant not in RANK_SWAP_VARIANTS:
        raise RWNError(f"variant must be 'simple' or 'sdcmicro', got {variant!r}")
    if variant == "simple":
        given = [name for name, v in (("top_percent", top_percent), ("bottom_percent", bottom_percent))
                 if v is not None]
        if given:
            raise RWNError(f"{' and '.join(given)}: only variant 'sdcmicro' replaces top and bottom values "
                           f"(the simple variant swaps them all); pass variant='sdcmicro' or leave "
                           f"{'them' if len(given) > 1 else 'it'} out")
        return variant, None, None
    top = _coding_percent(SDCMICRO_PERCENT if top_percent is None else top_percent, "top_percent")
    bottom = _coding_percent(SDCMICRO_PERCENT if bottom_percent is None else bottom_percent, "bottom_percent")
    if top + bottom >= 100:
        raise RWNError(f"top_percent + bottom_percent must be below 100 (the records between them are the "
                       f"ones swapped), got {float(top):g} + {float(bottom):g}")
    return variant, top, bottom


def check_rank_swap_inputs(con, source, columns, p_values, reps: int | None = None, variant: str = "simple",
                           top_percent=None, bottom_percent=None):
    """Rank swapping's inputs checked, before any draw (RWNError): the variant and its top and
    bottom percents, the columns (named once; ordered types: numeric, date/time or ENUM, numeric
    with finite values for 'sdcmicro', which averages; a value in every record), every P in
    (0, 100], `reps` (None or 1.., no column named 'replicate' then) and at least one record.
    Returns (src, columns, n, reps). rank_swap and tune.sweep check with it."""
    variant = _check_variant(variant, top_percent, bottom_percent)[0]
    columns = column_list(columns)
    for p in p_values:
        _swap_percent(p)
    reps = _check_reps(reps)
    if variant == "sdcmicro":
        src = resolve(con, source, columns, "rank swapping (variant 'sdcmicro', which averages the top and "
                       "bottom values)", lambda t: bool(engine.NUMERIC_TYPES.match(t)), "a numeric column")
    else:
        src = resolve(con, source, columns, "rank swapping",
                       lambda t: bool(engine.NUMERIC_TYPES.match(t) or TEMPORAL_OR_ENUM.match(t)),
                       "an ordered column (numeric, date/time or ENUM)")
    if reps is not None and any(name.lower() == "replicate" for name in src.names):
        raise RWNError(f"{src.label} has a column named 'replicate'; with reps= the release numbers its "
                       f"replicates in a column of that name: rename it")
    n = check_values(con, src, columns, "rank swapping", finite=variant == "sdcmicro")
    return src, columns, n, reps


class _Plans:
    """What one query of the data gives every P (the ranks and keyed draws do not depend on P):
    `donors_of(P)`, per column the 1-based donor record of every record (n values, or reps x n
    with `reps`; 'sdcmicro': 0 for a record given its top group's mean, -1 its bottom group's),
    and for 'sdcmicro' `means[c]` = (top mean or None, bottom mean or None)."""

    def __init__(self, src, columns, n, fp, reps, variant, top, bottom, orders, picks, values):
        self.src, self.columns, self.n, self.fp, self.reps = src, columns, n, fp, reps
        self.variant, self.orders, self.picks = variant, orders, picks
        self.shape = (reps or 1, n)
        if variant == "sdcmicro":       # counts exact: floor(n T / 100) and floor(n B / 100)
            self.top, self.bottom = int(top * n // 100), int(bottom * n // 100)
            self.means = {c: _coded_means(x[order[0]], self.top, self.bottom)
                          for c, x, order in zip(columns, values, orders)}

    def donors_of(self, p_percent) -> dict:
        if self.variant == "sdcmicro":
            return self._sdcmicro_donors(p_percent)
        window = int(_swap_percent(p_percent) * self.n // 100)
        # one pairing of every column and replicate
        partners = rank_swap_pairs(self.picks, window).reshape(len(self.columns), *self.shape)
        donors = {}
        for c, order, partner in zip(self.columns, self.orders, partners):
            donor = np.empty(self.shape, dtype=np.int64)
            np.put_along_axis(donor, order, np.take_along_axis(order, partner, axis=1) + 1, axis=1)
            donors[c] = donor if self.reps is not None else donor[0]       # 1-based donor record
        return donors

    def _sdcmicro_donors(self, p_percent) -> dict:
        """Ranks from the highest value (the ascending order reversed): the first `top` take
        code 0, the last `bottom` code -1, and the m middle ones are paired by rank_swap_pairs
        with window floor(m P / 100) - 1 (sdcMicro's partners k of j: j < k < j + floor(m P))."""
        n, t, b = self.n, self.top, self.bottom
        m = n - t - b
        window = max(int(_swap_percent(p_percent) * m // 100) - 1, 0)
        k = len(self.columns)
        draws = self.picks.reshape(k, *self.shape)[:, :, ::-1][:, :, t:n - b].reshape(-1, m)
        partners = rank_swap_pairs(draws, window).reshape(k, self.shape[0], m)
        donors = {}
        for c, order, partner in zip(self.columns, self.orders, partners):
            desc = order[:, ::-1]                                   # record index at each rank, highest first
            received = np.empty(self.shape, dtype=np.int64)
            received[:, :t], received[:, n - b:] = 0, -1
            received[:, t:n - b] = np.take_along_axis(desc[:, t:n - b], partner, axis=1) + 1
            donor = np.empty(self.shape, dtype=np.int64)
            np.put_along_axis(donor, desc, received, axis=1)
            donors[c] = donor if self.reps is not None else donor[0]
        return donors


def _mean(descending: np.ndarray) -> float:
    """The mean of finite doubles as sdcMicro computes it: summed one by one from the highest,
    then divided by the count (where that sum overflows, the exactly rounded mean of the scaled
    values instead)."""
    total = float(np.cumsum(descending)[-1])          # cumsum: sequential, as sdcMicro's loop
    if math.isfinite(total):
        return total / len(descending)
    return math.fsum((descending / len(descending)).tolist())


def _coded_means(ascending: np.ndarray, top: int, bottom: int):
    """(mean of the `top` largest values or None, mean of the `bottom` smallest or None)."""
    descending = ascending[::-1]
    return (_mean(descending[:top]) if top else None,
            _mean(descending[len(descending) - bottom:]) if bottom else None)


def _rank_swap_plan(con, source, columns, p_percent, key: str, reps: int | None = None, **variant):
    """(src, columns, n, fingerprint, donors): donors[c] holds the 1-based donor record of every
    record (n values), or with `reps` of every record of every replicate (reps x n; replicate r
    drawn with the key `key#r`), all from one query."""
    plans = _rank_swap_plans(con, source, columns, [p_percent], key, reps, **variant)
    return plans.src, plans.columns, plans.n, plans.fp, plans.donors_of(p_percent)


def _rank_swap_plans(con, source, columns, p_values, key: str, reps: int | None = None, variant: str = "simple",
                     top_percent=None, bottom_percent=None) -> _Plans:
    """_rank_swap_plan for several P from one query (the ranks and draws do not depend on P)."""
    variant, top, bottom = _check_variant(variant, top_percent, bottom_percent)
    src, columns, n, reps = check_rank_swap_inputs(con, source, columns, p_values, reps, variant, top_percent,
                                                   bottom_percent)
    sdc = variant == "sdcmicro"
    data = _draws(con, src, columns, key, reps, with_values=sdc)
    shape = (reps or 1, n)
    rid = np.asarray(data["rid"], dtype=np.int64)
    if len(rid) != shape[0] * n or not np.array_equal(rid.reshape(shape), np.broadcast_to(np.arange(1, n + 1), shape)):
        raise RWNError(f"the rows of {src.label} changed between reads; create a table from it first")
    position = np.broadcast_to(np.arange(n), shape)
    orders, picks, values = [], [], []
    for i in range(len(columns)):
        def column(name):
            return np.asarray(data[f"{name}_{i}"], dtype=np.int64).reshape(shape)
        order = np.lexsort((position, column("tie"), column("v")), axis=-1)   # record index at each rank
        orders.append(order)
        picks.append(np.take_along_axis(column("pick"), order, axis=1))
        if sdc:
            values.append(np.asarray(data[f"x_{i}"], dtype=np.float64)[:n])    # replicate 0, input order
    return _Plans(src, columns, n, int(data["fp"][0]), reps, variant, top, bottom, orders,
                  np.concatenate(picks), values)


def _draws(con, src, columns, key: str, reps: int | None, with_values: bool) -> dict:
    """One query: per record (and replicate) the dense rank of every column's value, the keyed
    tie-break and pick, the fingerprint, and with `with_values` the values as DOUBLE."""
    be = duckdb_backend.DuckDBBackend(con)
    with key_scope(be, lasting=False):     # the key serves this one query
        key_sql = be.key_sql(key)
        rep, replicates = "", ""
        if reps is not None:          # replicate r's key is key#r (sqlgen.replicate_key), read per row
            key_sql = sqlgen.replicate_key_sql(key_sql, REP, DUCKDB)
            rep, replicates = f"{REP}, ", f" CROSS JOIN range({reps}) AS __rwn_reps({REP})"
        # The order of the values is the same in every replicate: dense ranks (equal values, equal
        # rank) once over the n records; each replicate's ranks come from sorting (value rank,
        # tie-break, position) in numpy, far cheaper than a window sort per column and replicate.
        values = ", ".join(f"dense_rank() OVER (ORDER BY {quote_ident(c)}) AS v_{i}" for i, c in enumerate(columns))
        if with_values:
            values += "".join(f", CAST({quote_ident(c)} AS DOUBLE) AS x_{i}" for i, c in enumerate(columns))
        draws = []
        for i, c in enumerate(columns):
            h = hash_sql(key_sql, RANK_SWAP_PURPOSE, RID, c)
            draws.append(f"v_{i}, {bits_sql(h, 0)} AS tie_{i}, {bits_sql(h, 1)} AS pick_{i}"
                         + (f", x_{i}" if with_values else ""))
        text = (f"WITH {staged(src)},\nranked AS (\n    SELECT {RID}, {values} FROM staged\n)\n"
                f"SELECT {RID} AS rid, {', '.join(draws)}, (SELECT {fingerprint(columns)} FROM staged) AS fp\n"
                f"FROM ranked{replicates} ORDER BY {rep}{RID}")
        return fetch(con, text)


def rank_swap(con: engine.Connection, source, columns, p_percent: float,
              key: str | None = None, seed: int | None = None, into: str | None = None,
              replace: bool = False, sql: bool = False, reps: int | None = None, variant: str = "simple",
              top_percent: float | None = None, bottom_percent: float | None = None):
    """Rank swapping (Moore 1996), independently for each column c of `columns`, with
    P = `p_percent` in (0, 100]. Both variants rank the n records by (value of c, tie-break,
    input position), ranks 0..n-1, the tie-break being bits 0-51 of the keyed hash of (key,
    'rwn.rank_swap', record, c), and draw a partner for rank i as follows: F = the ranks j not
    yet swapped with i < j <= min(i + w, last); if F is empty i keeps its value, else it swaps
    values with the (m+1)-th smallest of F, m = floor(u |F| / 2^52) with u = bits 52-103 of the
    keyed hash of the record at rank i (uniform among F), and both ranks are marked swapped.

    variant="simple" (default): every record takes part; w = floor(P n / 100), last = n - 1, the
    walk i = 0..n-1 from the lowest value. Every released column is a permutation (disjoint
    transpositions) of the original, each value moving at most w ranks; types kept. Columns:
    numeric, date/time or ENUM (sorted as DuckDB sorts them), infinities are ordinary values.

    variant="sdcmicro": sdcMicro's `rankSwap(..., TopPercent = T, BottomPercent = B, P = P / 100)`
    (its C++ RankSwap, from sdcMicro's public source). Ranks from the HIGHEST value (the simple
    order reversed): the first t = floor(n T / 100) get the mean of their t values, the last
    b = floor(n B / 100) the mean of theirs (each summed from the highest, as sdcMicro), and
    take no part in the swapping (T = `top_percent`, B = `bottom_percent`, default 5 each as
    sdcMicro's; 0 <= T, B and T + B < 100); the other m = n - t - b are walked from the highest
    with w = floor(m P / 100) - 1 and last = the last of them (sdcMicro's partners k of j:
    j < k < min(m, j + floor(m P / 100))). Columns numeric with finite values, released as
    DOUBLE. Differences from sdcMicro: the draws (keyed hashes, not its seeded generator), ties
    (keyed, not later records first) and the counts (exact, where sdcMicro's single-precision
    5 * 0.01f * 20 < 1 codes one value fewer whenever n T / 100 is a whole number). sdcMicro's
    `argus_rankswap` (mu-Argus's routine, another partner choice) is not reproduced.
    `top_percent` or `bottom_percent` with "simple": refused.

    The release has every input row once, in input order, the other columns unchanged.

    Randomness as in `perturb`: `key` (a secret string) makes the release reproducible; `seed`
    is for experiments only; without either a fresh key is drawn and never stored. The draws
    are keyed hashes (computed in DuckDB; `randomness.keyed_bits` mirrors them), so the result
    does not depend on the number of threads. Both variants use the same draws.

    `reps` (experiments, as tune's sweeps): that many releases from one query and one
    statement, in a leading column `replicate` (0, 1, ...), each in input order; replicate r
    equals the release with the key `key#r` (sqlgen.replicate_key; with `seed`, the key
    the seed gives, then #r).

    Returns a DuckDB relation, or None when `into` names a table to create (one CREATE TABLE
    ... AS statement: an error leaves no table). sql=True is not supported.
    """
    require_duckdb(con, "rank_swap")
    no_sql(sql, "rank_swap")
    text = rank_swap_statement(con, source, columns, p_percent, key=key, seed=seed, reps=reps, variant=variant,
                               top_percent=top_percent, bottom_percent=bottom_percent)
    return outputs.deliver(con, text, into, replace, row_order="input")


def rank_swap_statement(con: engine.Connection, source, columns, p_percent: float,
                        key: str | None = None, seed: int | None = None, reps: int | None = None,
                        variant: str = "simple", top_percent: float | None = None,
                        bottom_percent: float | None = None) -> str:
    """The SELECT statement of a `rank_swap` release (same arguments), for writers such as
    `outputs.write_output`. It embeds the computed swaps (not the key): treat it like the key,
    never publish it, since it undoes the swapping."""
    return next(rank_swap_statements(con, source, columns, [p_percent], key=key, seed=seed, reps=reps,
                                     variant=variant, top_percent=top_percent, bottom_percent=bottom_percent))


def rank_swap_statements(con: engine.Connection, source, columns, p_values,
                         key: str | None = None, seed: int | None = None, reps: int | None = None,
                         variant: str = "simple", top_percent: float | None = None,
                         bottom_percent: float | None = None):
    """Yields rank_swap_statement for each P of `p_values` in turn (the same release for the same
    key), all from one query of the data, since the ranks and keyed draws do not depend on P
    (tune's sweeps). The query runs when the first statement is asked for."""
    _check_variant(variant, top_percent, bottom_percent)
    the_key = resolve_key(key, seed)
    p_values = list(p_values)
    plans = _rank_swap_plans(con, source, columns, p_values, the_key, reps, variant, top_percent, bottom_percent)
    for p in p_values:
        if plans.variant == "sdcmicro":
            yield _sdcmicro_release(plans, plans.donors_of(p))
        else:
            yield _rank_swap_release(plans.src, plans.columns, plans.n, plans.fp, plans.donors_of(p), reps)


def _rank_swap_release(src, columns, n: int, fp: int, donors: dict, reps: int | None) -> str:
    width = len(f"{n:x}")
    perm = [f"{hex_element(hex_digits(donors[c].reshape(-1), width), 'pos', width)} AS donor_{i}"
            for i, c in enumerate(columns)]
    replaced = [(f"d_{i}.{quote_ident(c)}", quote_ident(c)) for i, c in enumerate(columns)]
    return _swapped_rows(src, columns, n, fp, reps, perm, replaced, "JOIN")


def _double(value: float) -> str:
    # from text: the shortest repr parses back to the same double
    return f"CAST({quote_literal(repr(float(value)))} AS DOUBLE)"


def _sdcmicro_release(plans: _Plans, donors: dict) -> str:
    """As _rank_swap_release, with the donors coded n + 1 (top group: its mean) and n + 2 (bottom
    group), which join no record; every chosen column DOUBLE."""
    n, columns = plans.n, plans.columns
    width = len(f"{n + 2:x}")
    perm, replaced = [], []
    for i, c in enumerate(columns):
        coded = donors[c].reshape(-1)
        coded = np.where(coded == 0, n + 1, np.where(coded == -1, n + 2, coded))
        perm.append(f"{hex_element(hex_digits(coded, width), 'pos', width)} AS donor_{i}")
        cases = "".join(f" WHEN {code} THEN {_double(mean)}"
                        for code, mean in zip((n + 1, n + 2), plans.means[c]) if mean is not None)
        value = f"CAST(d_{i}.{quote_ident(c)} AS DOUBLE)"
        replaced.append((f"CASE p.donor_{i}{cases} ELSE {value} END" if cases else value, quote_ident(c)))
    return _swapped_rows(plans.src, columns, n, plans.fp, plans.reps, perm, replaced, "LEFT JOIN")


def _swapped_rows(src, columns, n: int, fp: int, reps: int | None, perm: list, replaced: list, join: str) -> str:
    """The statement both variants share: row `pos` of the release is record pos % n + 1 of
    replicate pos // n, its chosen columns `replaced` by the values of its donors (`perm`: the
    SQL of donor_i per row, joined to the staged rows by `join`), behind the fingerprint guard."""
    guard_cte, guard_ok = guard(src, columns, n, fp)
    joins = "\n".join(f"{join} staged d_{i} ON d_{i}.{RID} = p.donor_{i}" for i in range(len(columns)))
    lead = f"p.pos // {n} AS replicate, " if reps is not None else ""
    return (f"WITH {staged(src)},\n"
            f"perm AS (\n    SELECT pos, {', '.join(perm)}\n    FROM range({(reps or 1) * n}) AS __rwn_perm(pos)\n),\n"
            f"{guard_cte}\n"
            f"SELECT {lead}{DUCKDB.star('s', (RID,), replaced)}\n"
            f"FROM staged s\nJOIN perm p ON p.pos % {n} + 1 = s.{RID}\n{joins}\nCROSS JOIN guard\n"
            f"WHERE {guard_ok}\nORDER BY p.pos")


def rank_swap_donors(con: engine.Connection, source, columns, p_percent: float,
                     key: str | None = None, seed: int | None = None, reps: int | None = None,
                     variant: str = "simple", top_percent: float | None = None,
                     bottom_percent: float | None = None) -> dict[str, np.ndarray]:
    """Diagnostics for the data steward (never publish): per column, the 1-based input
    position of the record whose value each record receives in `rank_swap` with the same
    arguments and key (the record itself when its value was kept); with variant 'sdcmicro',
    0 for a record given the mean of the top group and -1 the mean of the bottom group. With
    `reps`, reps x n: row r for replicate r (the key key#r)."""
    if key is None and seed is None:
        raise RWNError("rank_swap_donors() needs the key or seed of the release it explains")
    the_key = resolve_key(key, seed)
    return _rank_swap_plan(con, source, columns, p_percent, the_key, reps, variant=variant,
                           top_percent=top_percent, bottom_percent=bottom_percent)[4]
