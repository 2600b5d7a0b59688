"""Classical disclosure-control baselines the RWN paper compares against: rank swapping
and MDAV microaggregation, with the calling conventions of `rwn_sql.perturb`.

    rel = rank_swap(con, "people", ["Age", "Weight"], p_percent=15, key=my_secret)
    mdav(con, "people", ["Age", "Weight", "Height"], k=5, into="release")

Both return a DuckDB relation (every input row once, in input order, the other columns
unchanged), or create the table `into` in one statement. The sequential parts (the rank-swap
pairing, the MDAV grouping) run in Python/numpy on the chosen columns; the release itself is
built in DuckDB by joining the original rows to the computed permutation / groups by row
position, so column types of the other columns are preserved exactly.

Row positions: record i is the i-th row of `source` as DuckDB reads it (as everywhere in
rwn_sql). The source is read more than once (checks, the values for Python, the release),
so the release carries a fingerprint (count and XOR of hash(position, chosen values)) of
the rows the computation saw; if the source changes in between, or its row order is not
deterministic (for example a query with GROUP BY and no ORDER BY), reading the release
fails with "rwn_sql: ..." instead of giving a wrong release. Materialise such a source
into a table first.

`sql=True` is not supported: the release depends on values computed in Python.
"""
from __future__ import annotations

import re
from fractions import Fraction

import numpy as np

from ..engines import duckdb as engine, duckdb_backend, outputs, sources
from ..rwn import sqlgen
from ..engines.dialects import DUCKDB, require_duckdb
from ..errors import RWNError
from ..identifiers import quote_ident, quote_literal
from ..randomness import bits_sql, hash_sql, key_scope, resolve_key
from ..rwn.spec import MAX_COUNT, RESERVED_PREFIX, check_scale, finite_number

__all__ = ["check_mdav_inputs", "check_rank_swap_inputs", "mdav", "mdav_groups", "mdav_labels", "mdav_statement",
           "rank_swap", "rank_swap_donors", "rank_swap_pairs", "rank_swap_statement", "rank_swap_statements"]

RANK_SWAP_PURPOSE = "rwn.rank_swap"
RID = quote_ident("__rwn_rid")
REP = quote_ident("__rwn_rep")
TEMPORAL_OR_ENUM = re.compile(r"^(DATE|TIME|TIMESTAMP(_S|_MS|_NS)?|TIMESTAMP WITH TIME ZONE|"
                              r"TIME WITH TIME ZONE|ENUM\(.*\))$", re.IGNORECASE | re.DOTALL)
FLOAT_TYPES = re.compile(r"^(FLOAT|DOUBLE|REAL)$", re.IGNORECASE)


# --------------------------------------------------------------------------------------
# shared plumbing
# --------------------------------------------------------------------------------------

def _column_list(columns) -> list[str]:
    if isinstance(columns, str):
        columns = [columns]
    try:
        names = list(columns)
    except TypeError:
        raise RWNError(f"columns must be a list of column names, got {columns!r}") from None
    if not names:
        raise RWNError("columns: give at least one column")
    seen = set()
    for name in names:
        if not isinstance(name, str) or name == "":
            raise RWNError(f"columns: column names must be non-empty strings, got {name!r}")
        if name in seen:
            raise RWNError(f"columns: column {name!r} is listed twice")
        if name.lower().startswith(RESERVED_PREFIX):
            raise RWNError(f"column {name!r}: names starting with {RESERVED_PREFIX!r} are reserved")
        seen.add(name)
    return names


def _resolve(con, source, columns, method: str, type_ok, type_hint: str) -> sources.Source:
    src = sources.resolve_source(con, source)
    sources.require_columns(src, columns)
    sources.refuse_reserved(src)
    for c in columns:
        if not type_ok(src.type_of(c)):
            raise RWNError(f"column {c!r} has type {src.type_of(c)}; {method} needs {type_hint}")
    return src


def _staged(src: sources.Source) -> str:
    # record identity: 1-based input position, as in the RWN statements
    return f"staged AS MATERIALIZED (\n    SELECT row_number() OVER () AS {RID}, * FROM {src.sql}\n)"


def _fingerprint(columns) -> str:
    return f"bit_xor(hash({RID}, {', '.join(quote_ident(c) for c in columns)}))"


def _fetch(con, sql: str) -> dict:
    try:
        return con.execute(sql).fetchnumpy()
    except engine.Error as exc:
        raise engine.translate(exc) from None


def _check_values(con, src, columns, n_what: str, finite: bool) -> int:
    """Number of records; RWNError if there are none or a chosen column has NULL / NaN
    (and, with finite=True, infinite) values."""
    parts = ["count(*)"]
    for c in columns:
        q = quote_ident(c)
        if finite:
            parts.append(f"count(*) FILTER (WHERE {q} IS NULL OR NOT isfinite(CAST({q} AS DOUBLE)))")
        elif FLOAT_TYPES.match(src.type_of(c)):
            parts.append(f"count(*) FILTER (WHERE {q} IS NULL OR isnan({q}))")
        else:
            parts.append(f"count(*) FILTER (WHERE {q} IS NULL)")
    row = engine.run(con, f"SELECT {', '.join(parts)} FROM {src.sql}")[0]
    n = int(row[0])
    if n == 0:
        raise RWNError(f"{src.label} has no records")
    for c, bad in zip(columns, row[1:]):
        if bad:
            kinds = "NULL, NaN or infinite" if finite else "NULL or NaN"
            raise RWNError(f"column {c!r} has {bad} {kinds} values; {n_what} needs a value in every "
                           f"record (clean them or filter those records out first)")
    return n


def _int_list(values) -> str:
    return quote_literal(",".join(str(int(v)) for v in values))


def _float_list(values) -> str:
    # repr is the shortest text that parses back to the same double
    return quote_literal(",".join(repr(float(v)) for v in values))


def _hex_digits(values: np.ndarray, width: int) -> str:
    """Non-negative integers as one text of `width` hex digits each (no separators)."""
    shifts = 4 * np.arange(width - 1, -1, -1)
    nibbles = (np.asarray(values, dtype=np.int64)[:, None] >> shifts) & 15
    return np.frombuffer(b"0123456789abcdef", np.uint8)[nibbles].tobytes().decode("ascii")


def _hex_element(digits: str, index_sql: str, width: int) -> str:
    """SQL for element `index_sql` (0-based) of a _hex_digits text: one substring per row decodes
    about 8 times faster than unnesting string_split of a comma list (tens of thousands of values)."""
    return f"CAST('0x' || substr({quote_literal(digits)}, {width} * {index_sql} + 1, {width}) AS BIGINT)"


def _guard(src, columns, n: int, fp: int) -> tuple[str, str]:
    """The `guard` CTE and the WHERE condition that fails unless the rows are those seen."""
    message = quote_literal(
        f"rwn_sql: the rows of {src.label} changed between reads, or their order is not "
        f"deterministic; create a table from it first and pass that table")
    return (f"guard AS (\n    SELECT count(*) = {n} AND {_fingerprint(columns)} = {int(fp)}::UBIGINT AS ok "
            f"FROM staged\n)"), f"CASE WHEN guard.ok THEN true ELSE {DUCKDB.raise_error(message)} END"


def _no_sql(sql: bool, name: str) -> None:
    if sql:
        raise RWNError(f"{name}: sql=True is not supported, since the release depends on values "
                       f"computed in Python (numpy); use into= or the returned relation")


# --------------------------------------------------------------------------------------
# rank swapping
# --------------------------------------------------------------------------------------

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


def _rank_swap_plan(con, source, columns, p_percent, key: str, reps: int | None = None):
    """(src, columns, n, fingerprint, donors): donors[c] holds the 1-based donor record of every
    record (n values), or with `reps` of every record of every replicate (reps x n; replicate r
    drawn with the key `key#r`), all from one query."""
    src, columns, n, fp, donors_of = _rank_swap_plans(con, source, columns, [p_percent], key, reps)
    return src, columns, n, fp, donors_of(p_percent)


def check_rank_swap_inputs(con, source, columns, p_values, reps: int | None = None):
    """Rank swapping's inputs checked, before any draw (RWNError): the columns (named once,
    ordered types: numeric, date/time or ENUM; a value in every record), every P in (0, 100],
    `reps` (None or 1.., no column named 'replicate' then) and at least one record. Returns
    (src, columns, n, reps). rank_swap and tune.sweep check with it."""
    columns = _column_list(columns)
    for p in p_values:
        _swap_percent(p)
    reps = _check_reps(reps)
    src = _resolve(con, source, columns, "rank swapping",
                   lambda t: bool(engine.NUMERIC_TYPES.match(t) or TEMPORAL_OR_ENUM.match(t)),
                   "an ordered column (numeric, date/time or ENUM)")
    if reps is not None and any(name.lower() == "replicate" for name in src.names):
        raise RWNError(f"{src.label} has a column named 'replicate'; with reps= the release numbers its "
                       f"replicates in a column of that name: rename it")
    return src, columns, _check_values(con, src, columns, "rank swapping", finite=False), reps


def _rank_swap_plans(con, source, columns, p_values, key: str, reps: int | None = None):
    """_rank_swap_plan for several P from one query (the ranks and draws do not depend on P):
    (src, columns, n, fingerprint, donors_of), donors_of(P) giving the donors for that P."""
    src, columns, n, reps = check_rank_swap_inputs(con, source, columns, p_values, reps)
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
        draws = []
        for i, c in enumerate(columns):
            h = hash_sql(key_sql, RANK_SWAP_PURPOSE, RID, c)
            draws.append(f"v_{i}, {bits_sql(h, 0)} AS tie_{i}, {bits_sql(h, 1)} AS pick_{i}")
        text = (f"WITH {_staged(src)},\nranked AS (\n    SELECT {RID}, {values} FROM staged\n)\n"
                f"SELECT {RID} AS rid, {', '.join(draws)}, (SELECT {_fingerprint(columns)} FROM staged) AS fp\n"
                f"FROM ranked{replicates} ORDER BY {rep}{RID}")
        data = _fetch(con, text)
    shape = (reps or 1, n)
    rid = np.asarray(data["rid"], dtype=np.int64)
    if len(rid) != shape[0] * n or not np.array_equal(rid.reshape(shape), np.broadcast_to(np.arange(1, n + 1), shape)):
        raise RWNError(f"the rows of {src.label} changed between reads; create a table from it first")
    position = np.broadcast_to(np.arange(n), shape)
    orders, picks = [], []
    for i in range(len(columns)):
        def column(name):
            return np.asarray(data[f"{name}_{i}"], dtype=np.int64).reshape(shape)
        order = np.lexsort((position, column("tie"), column("v")), axis=-1)   # record index at each rank
        orders.append(order)
        picks.append(np.take_along_axis(column("pick"), order, axis=1))
    picks = np.concatenate(picks)

    def donors_of(p_percent) -> dict:
        window = int(_swap_percent(p_percent) * n // 100)
        # one pairing of every column and replicate
        partners = rank_swap_pairs(picks, window).reshape(len(columns), *shape)
        donors = {}
        for c, order, partner in zip(columns, orders, partners):
            donor = np.empty(shape, dtype=np.int64)
            np.put_along_axis(donor, order, np.take_along_axis(order, partner, axis=1) + 1, axis=1)
            donors[c] = donor if reps is not None else donor[0]       # 1-based donor record
        return donors
    return src, columns, n, int(data["fp"][0]), donors_of


def rank_swap(con: engine.Connection, source, columns, p_percent: float,
              key: str | None = None, seed: int | None = None, into: str | None = None,
              replace: bool = False, sql: bool = False, reps: int | None = None):
    """Rank swapping (Moore 1996), in the simplified form stated here.

    Independently for each column c of `columns`:
      1. rank the n records by (value of c, tie-break, input position), ranks 0..n-1, where
         the tie-break is bits 0-51 of the keyed hash of (key, 'rwn.rank_swap', record, c);
      2. window w = floor(P n / 100) with P = `p_percent` in (0, 100];
      3. walk the ranks i = 0..n-1 in order; skip i if already swapped; otherwise choose,
         uniformly, a partner among the not-yet-swapped ranks j with i < j <= min(i + w, n-1)
         (the (m+1)-th smallest of those F ranks, m = floor(u |F| / 2^52) with u = bits 52-103
         of the keyed hash of the record at rank i), swap the two values and mark both ranks;
         if no such rank is free, rank i keeps its value.
    So every column of the release is a permutation (a product of disjoint transpositions) of
    the original column, and each record's released value has a rank within w of its own.
    sdcMicro's `rankSwap` (from mu-Argus) differs in the partner choice: it tries
    j = min(i + 1 + floor(w u), n-1) and, if taken, the nearest free rank below it (down to
    i+1), then above it (up to i+w): not uniform among the free partners, and P is an integer.

    Columns must be numeric, date/time or ENUM (sorted as DuckDB sorts them) without NULL or
    NaN (infinities are ordinary values). The release has every input row once, in input
    order; the chosen columns are permuted, all other columns unchanged, types preserved.

    Randomness as in `perturb`: `key` (a secret string) makes the release reproducible; `seed`
    is for experiments only; without either a fresh key is drawn and never stored. The draws
    are keyed hashes (computed in DuckDB; `randomness.keyed_bits` mirrors them), so the result
    does not depend on the number of threads.

    `reps` (experiments, as tune's sweeps): that many releases from one query and one
    statement, in a leading column `replicate` (0, 1, ...), each in input order; replicate r
    equals the release with the key `key#r` (sqlgen.replicate_key; with `seed`, the key
    the seed gives, then #r).

    Returns a DuckDB relation, or None when `into` names a table to create (one CREATE TABLE
    ... AS statement: an error leaves no table). sql=True is not supported.
    """
    require_duckdb(con, "rank_swap")
    _no_sql(sql, "rank_swap")
    text = rank_swap_statement(con, source, columns, p_percent, key=key, seed=seed, reps=reps)
    return outputs.deliver(con, text, into, replace, row_order="input")


def rank_swap_statement(con: engine.Connection, source, columns, p_percent: float,
                        key: str | None = None, seed: int | None = None, reps: int | None = None) -> str:
    """The SELECT statement of a `rank_swap` release (same arguments), for writers such as
    `outputs.write_output`. It embeds the computed swaps (not the key): treat it like the key,
    never publish it, since it undoes the swapping."""
    return next(rank_swap_statements(con, source, columns, [p_percent], key=key, seed=seed, reps=reps))


def rank_swap_statements(con: engine.Connection, source, columns, p_values,
                         key: str | None = None, seed: int | None = None, reps: int | None = None):
    """Yields rank_swap_statement for each P of `p_values` in turn (the same release for the same
    key), all from one query of the data, since the ranks and keyed draws do not depend on P
    (tune's sweeps). The query runs when the first statement is asked for."""
    the_key = resolve_key(key, seed)
    p_values = list(p_values)
    src, columns, n, fp, donors_of = _rank_swap_plans(con, source, columns, p_values, the_key, reps)
    for p in p_values:
        yield _rank_swap_release(src, columns, n, fp, donors_of(p), reps)


def _rank_swap_release(src, columns, n: int, fp: int, donors: dict, reps: int | None) -> str:
    guard_cte, guard_ok = _guard(src, columns, n, fp)
    # row `pos` of the release is record pos % n + 1 of replicate pos // n
    width = len(f"{n:x}")
    perm = ", ".join(f"{_hex_element(_hex_digits(donors[c].reshape(-1), width), 'pos', width)} AS donor_{i}"
                     for i, c in enumerate(columns))
    replaced = [(f"d_{i}.{quote_ident(c)}", quote_ident(c)) for i, c in enumerate(columns)]
    joins = "\n".join(f"JOIN staged d_{i} ON d_{i}.{RID} = p.donor_{i}" for i in range(len(columns)))
    lead = f"p.pos // {n} AS replicate, " if reps is not None else ""
    return (f"WITH {_staged(src)},\n"
            f"perm AS (\n    SELECT pos, {perm}\n    FROM range({(reps or 1) * n}) AS __rwn_perm(pos)\n),\n{guard_cte}\n"
            f"SELECT {lead}{DUCKDB.star('s', (RID,), replaced)}\n"
            f"FROM staged s\nJOIN perm p ON p.pos % {n} + 1 = s.{RID}\n{joins}\nCROSS JOIN guard\n"
            f"WHERE {guard_ok}\nORDER BY p.pos")


def rank_swap_donors(con: engine.Connection, source, columns, p_percent: float,
                     key: str | None = None, seed: int | None = None) -> dict[str, np.ndarray]:
    """Diagnostics for the data steward (never publish): per column, the 1-based input
    position of the record whose value each record receives in `rank_swap` with the same
    arguments and key (the record itself when its value was kept)."""
    if key is None and seed is None:
        raise RWNError("rank_swap_donors() needs the key or seed of the release it explains")
    the_key = resolve_key(key, seed)
    return _rank_swap_plan(con, source, columns, p_percent, the_key)[4]


# --------------------------------------------------------------------------------------
# MDAV microaggregation
# --------------------------------------------------------------------------------------

def _sqdist(Xt: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances of the columns of Xt (p x m) to the point v, summed over
    the coordinates in order."""
    d = Xt[0] - v[0]
    d *= d
    t = np.empty_like(d)
    for j in range(1, Xt.shape[0]):
        np.subtract(Xt[j], v[j], out=t)
        np.multiply(t, t, out=t)
        d += t
    return d


def _nearest(d: np.ndarray, centre: int, k: int) -> np.ndarray:
    """Indices of `centre` and the k-1 other entries with the smallest (d, index)."""
    d = d.copy()
    d[centre] = -1.0                                   # distances are >= 0: centre comes first
    if k >= len(d):
        return np.arange(len(d))
    t = np.partition(d, k - 1)[k - 1]
    below = np.flatnonzero(d < t)
    at = np.flatnonzero(d == t)[: k - len(below)]
    return np.concatenate([below, at])


def mdav_labels(X, k: int) -> np.ndarray:
    """MDAV groups of the rows of X (n x p, already scaled); see `mdav`. Returns the group
    label of every row, 0, 1, ... in the order the groups are formed."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    n = X.shape[0]
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
        raise RWNError(f"k must be an integer between 1 and the number of records ({n}), got {k!r}")
    labels = np.full(n, -1, dtype=np.int64)
    rest = np.arange(n)                                # remaining rows, ascending input position
    Xt = np.ascontiguousarray(X.T)                     # p x m: each coordinate contiguous
    group = 0

    def take(sel):
        nonlocal rest, Xt, group
        labels[rest[sel]] = group
        group += 1
        keep = np.ones(len(rest), dtype=bool)
        keep[sel] = False
        rest, Xt = rest[keep], np.compress(keep, Xt, axis=1)

    while len(rest) >= 3 * k:
        centroid = Xt.mean(axis=1)
        r = int(np.argmax(_sqdist(Xt, centroid)))      # argmax: first (lowest position) on ties
        d_r = _sqdist(Xt, Xt[:, r])
        sel = _nearest(d_r, r, k)
        keep = np.ones(len(rest), dtype=bool)
        keep[sel] = False
        s = int(np.argmax(d_r[keep]))                   # farthest from r among the others
        take(sel)
        take(_nearest(_sqdist(Xt, Xt[:, s]), s, k))
    if len(rest) >= 2 * k:
        centroid = Xt.mean(axis=1)
        r = int(np.argmax(_sqdist(Xt, centroid)))
        take(_nearest(_sqdist(Xt, Xt[:, r]), r, k))
    if len(rest):
        take(np.arange(len(rest)))
    return labels


def _scaled(X: np.ndarray, scale: str) -> np.ndarray:
    if scale == "none":
        return X.copy()
    if scale == "minmax":
        lo, span = X.min(axis=0), X.max(axis=0) - X.min(axis=0)
        return np.where(span > 0, (X - lo) / np.where(span > 0, span, 1.0), 0.0)
    mean = X.mean(axis=0)
    sd = X.std(axis=0, ddof=1) if len(X) > 1 else np.zeros(X.shape[1])
    return np.where(sd > 0, (X - mean) / np.where(sd > 0, sd, 1.0), 0.0)


def check_mdav_inputs(con, source, columns, group_sizes, scale: str, name: str = "k"):
    """MDAV's inputs checked, before any grouping (RWNError): the columns (named once, numeric,
    without NULL, NaN or infinite values), `scale`, and every group size of `group_sizes` an
    integer from 2 to the number of records (`name`: how the messages call it). Returns
    (src, columns, n). mdav and tune.sweep (name "MDAV's k") check with it."""
    columns = _column_list(columns)
    check_scale(scale)
    for k in group_sizes:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise RWNError(f"{name} must be an integer >= 2, got {k!r}")
        if not 2 <= k <= MAX_COUNT:
            raise RWNError(f"{name} must be >= 2 (groups of at least k records; at most {MAX_COUNT}), got {k}")
    src = _resolve(con, source, columns, "MDAV", lambda t: bool(engine.NUMERIC_TYPES.match(t)),
                   "a numeric column")
    n = _check_values(con, src, columns, "MDAV", finite=True)
    for k in group_sizes:
        if k > n:
            raise RWNError(f"{name} = {k} is larger than the number of records ({n}) in {src.label}")
    return src, columns, n


def _mdav_plan(con, source, columns, k, scale):
    src, columns, n = check_mdav_inputs(con, source, columns, [k], scale)
    values = ", ".join(f"CAST({quote_ident(c)} AS DOUBLE) AS x_{i}" for i, c in enumerate(columns))
    text = (f"WITH {_staged(src)}\nSELECT {RID} AS rid, {values}, {_fingerprint(columns)} OVER () AS fp\n"
            f"FROM staged ORDER BY {RID}")
    data = _fetch(con, text)
    rid = np.asarray(data["rid"], dtype=np.int64)
    if len(rid) != n or not np.array_equal(rid, np.arange(1, n + 1)):
        raise RWNError(f"the rows of {src.label} changed between reads; create a table from it first")
    X = np.column_stack([np.asarray(data[f"x_{i}"], dtype=np.float64) for i in range(len(columns))])
    Xs = _scaled(X, scale)
    if not np.isfinite(Xs).all() or not np.isfinite(Xs.max(axis=0) - Xs.min(axis=0)).all():
        raise RWNError("the scaled values are too large for double-precision distances; "
                       "use scale='minmax' or 'zscore'")
    labels = mdav_labels(Xs, int(k))
    return src, columns, n, int(data["fp"][0]), X, labels


def _group_means(X: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Mean of every group (rows of the result in label order), summed in input order."""
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    starts = np.flatnonzero(np.r_[True, sorted_labels[1:] != sorted_labels[:-1]])
    sums = np.add.reduceat(X[order], starts, axis=0)
    counts = np.diff(np.r_[starts, len(labels)])
    return sums / counts[:, None]


def mdav(con: engine.Connection, source, columns, k: int, scale: str = "minmax",
         into: str | None = None, replace: bool = False, sql: bool = False):
    """MDAV microaggregation (Maximum Distance to Average Vector; Domingo-Ferrer and
    Mateo-Sanz 2002, the fixed-size variant of sdcMicro / mu-Argus).

    Distances are Euclidean over `columns` scaled over all records: `minmax` (default,
    (x - min) / (max - min)), `zscore` ((x - mean) / sample sd) or `none`; a constant column
    scales to 0. With R the set of remaining records (initially all), and every tie broken
    towards the lowest input position:
      while |R| >= 3k:
        c = mean of R; r = the record of R farthest from c;
        G_r = r and the k-1 records of R nearest to r; s = the record of R \\ G_r farthest
        from r (= the farthest record from r in R whenever that one is unique);
        remove G_r; G_s = s and the k-1 records of R nearest to s; remove G_s;
      if 2k <= |R| <= 3k-1: c, r as above, one group of r and its k-1 nearest, removed;
      the remaining records (k..2k-1 of them, or all n if n < 2k) form the last group.
    Every group has k records except the last, which has k..2k-1.

    Each record's values in `columns` are replaced by its group's mean of the ORIGINAL
    (unscaled) values, so every released column is DOUBLE and column means are preserved
    (up to rounding). Other columns pass through unchanged; every input row once, in input
    order. Deterministic: no randomness. Columns must be numeric, without NULL, NaN or
    infinite values; 2 <= k <= n. Time O(n^2 p / k) in numpy.

    Returns a DuckDB relation, or None when `into` names a table to create (one CREATE TABLE
    ... AS statement: an error leaves no table). sql=True is not supported.
    """
    require_duckdb(con, "mdav")
    _no_sql(sql, "mdav")
    return outputs.deliver(con, mdav_statement(con, source, columns, k, scale=scale), into, replace, row_order="input")


def mdav_statement(con: engine.Connection, source, columns, k: int,
                   scale: str = "minmax") -> str:
    """The SELECT statement of an `mdav` release (same arguments), for writers such as
    `outputs.write_output`. It embeds the group of every record and the group means."""
    src, columns, n, fp, X, labels = _mdav_plan(con, source, columns, k, scale)
    means = _group_means(X, labels)
    guard_cte, guard_ok = _guard(src, columns, n, fp)
    agg = ", ".join(f"unnest(string_split({_float_list(means[:, i])}, ','))::DOUBLE AS m_{i}"
                    for i in range(len(columns)))
    replaced = [(f"a.m_{i}", quote_ident(c)) for i, c in enumerate(columns)]
    return (f"WITH {_staged(src)},\n"
            f"grp AS (\n    SELECT unnest(range(1, {n + 1})) AS rid, "
            f"unnest(string_split({_int_list(labels)}, ','))::BIGINT AS g\n),\n"
            f"agg AS (\n    SELECT unnest(range(0, {len(means)})) AS g, {agg}\n),\n{guard_cte}\n"
            f"SELECT {DUCKDB.star('s', (RID,), replaced)}\n"
            f"FROM staged s\nJOIN grp ON grp.rid = s.{RID}\nJOIN agg a ON a.g = grp.g\nCROSS JOIN guard\n"
            f"WHERE {guard_ok}\nORDER BY s.{RID}")


def mdav_groups(con: engine.Connection, source, columns, k: int,
                scale: str = "minmax") -> np.ndarray:
    """The MDAV group label of every record (input order; labels 0, 1, ... in the order the
    groups are formed), as used by `mdav` with the same arguments."""
    return _mdav_plan(con, source, columns, k, scale)[5]
