"""The one place that owns randomness: keys and keyed uniform draws.

Every random choice rwn_sql makes is a keyed hash of (key, purpose, record, column):

    subkey = md5(key || '|' || purpose || '|' || column)   -- hex, once per run and column
    h      = md5_number(subkey || record)                  -- the 16 digest bytes read as a
                                                           -- little-endian 128-bit integer
    u_a = (h >> 76) / 2**52                  (bits 127..76: the top 52 bits)
    u_b = ((h >> 24) & (2**52 - 1)) / 2**52  (bits 75..24: the next 52 bits)

The two steps keep the per-record message within one MD5 block (32 + a few digits), where
the whole (key, purpose, record, column) text would need more, and the integer form (DuckDB's
md5_number) spares a 32-character string per record: both cut the hashing, most of a draw's
cost. An engine without md5_number gets the same integer from the hex digest by reversing its
byte order (see dialect.py).

so a release is a pure function of the data, the parameters and the key: the same for
1 thread or many, different for another key, and unpredictable without the key (MD5
keyed by a 256-bit secret; its collision weakness gives an attacker no way to predict
outputs). MD5 is used because DuckDB and Spark both have it, so the draws are portable.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import unicodedata
import weakref

from .engines.dialects import DUCKDB, DuckDBDialect
from .errors import RWNError
from .identifiers import quote_literal
from .small_files import read_small_file

TWO_52 = 1 << 52
KEY_PLACEHOLDER = DUCKDB.session_variable("'rwn_key'")      # shown where the key goes in printed SQL
KEY_TABLE = "temp.main.__rwn_keys"      # DuckDB: the keys of a connection, one row per stored key


class KeySQL(str):
    """SQL reading a key from a scan: the text of a scalar subquery `(SELECT <column> FROM
    <relation>)`, that knows how to compute a value of the key in that same subquery (derive).

    Why a scan: DuckDB folds constant expressions (getvariable, a deterministic function of
    literals) at bind time, and its plans (EXPLAIN, EXPLAIN ANALYZE, profiling) then show the
    key and every subkey md5(key || '|purpose|column') as literals. A value read by a scan is
    data, never folded; an uncorrelated scalar subquery is still computed once per statement,
    so `derive` keeps the subkey's MD5 at one per statement, not one per row."""

    def __new__(cls, column_sql: str, relation_sql: str, dialect: DuckDBDialect = DUCKDB):
        self = super().__new__(cls, dialect.key_read(column_sql, relation_sql, MISSING_KEY))
        self.column_sql, self.relation_sql, self.dialect = column_sql, relation_sql, dialect
        return self

    def derive(self, expression) -> str:
        """SQL of `expression(column_sql)` (a function of the key alone) computed in the scan."""
        return self.dialect.key_read(expression(self.column_sql), self.relation_sql, MISSING_KEY)


MISSING_KEY = ("rwn_sql: the key of this statement is not set on this connection; "
               "run it on the connection that built it")


# The macros' keys per DuckDB connection (rwn_sql.install): token -> key, read by rwn_key_of.
MACRO_KEYS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

# The key scopes active per engine session (a DuckDB connection, a SparkSession), innermost last.
_SCOPES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class KeyScope:
    """Where a call's keys live: `lasting` (the result is a lazy relation that reads the key
    later) or for the call only; `made` lists the key handles this scope stored."""

    def __init__(self, lasting: bool):
        self.lasting, self.made = lasting, []


def current_scope(session) -> KeyScope | None:
    stack = _SCOPES.get(session)
    return stack[-1] if stack else None


@contextlib.contextmanager
def key_scope(be, lasting: bool):
    """Run a call's work with its keys stored for the call only (lasting=False: removed when
    the block ends, however it ends: result written, error, KeyboardInterrupt) or for a lazy
    result (lasting=True: kept, one per distinct key per session, unless the block fails,
    when the keys it stored are removed). The backend's key_sql stores keys in the innermost
    scope of its session."""
    stack = _SCOPES.setdefault(be.session, [])
    scope = KeyScope(lasting)
    stack.append(scope)
    done = False
    try:
        yield scope
        done = True
    finally:
        stack.remove(scope)
        if scope.made and not (lasting and done):
            be.forget_keys(scope.made)


def new_key() -> str:
    """A fresh 256-bit key from the operating system's CSPRNG. It is never written anywhere."""
    return secrets.token_hex(32)


class SeedKey(str):
    """The key seed=N derives, `seed:N` (or replicate r of it, `seed:N#r`): an experiment key, as
    weak as the seed. Only key_from_seed (and replicate) make one; text of that form given as a
    key (key=, a key file, key :=) is refused by check_key, so a guessable key never passes for
    a secret."""

    def replicate(self, r: int) -> "SeedKey":
        return SeedKey(f"{self}#{r}")


def key_from_seed(seed: int) -> SeedKey:
    """Key for reproducible experiments only: anybody who knows the seed can redo the draws."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise RWNError(f"seed must be an integer, got {seed!r}")
    return SeedKey(f"seed:{seed}")


# The key policy, the same for Python, the SQL macros and the CLI (which all reach check_key).
MIN_KEY_LENGTH = 16
MAX_KEY_LENGTH = 1024
MAX_KEY_FILE_BYTES = 4096
# The form of what seed=N derives (and replicate r of it, key#r): accepted only as a SeedKey.
SEED_KEY = re.compile(r"seed:-?[0-9]+(#[0-9]+)*")


def check_key(key, where: str = "key") -> str:
    """`key` if it is a usable secret: text of MIN_KEY_LENGTH..MAX_KEY_LENGTH characters without
    control characters (NUL, newlines, escapes: a binary file or a paste gone wrong), or a
    seed-derived experiment key made by key_from_seed; RWNError naming `where` otherwise."""
    if not isinstance(key, str):
        raise RWNError(f"{where} must be a string, got {type(key).__name__}")
    if SEED_KEY.fullmatch(key):
        if isinstance(key, SeedKey):
            return key
        seed = key[len("seed:"):].split("#")[0]
        raise RWNError(f"{where} {key!r} is the experiment key that seed={seed} derives, which anyone can "
                       f"guess; for experiments give the seed (seed= / --seed / seed :=), else a secret key "
                       f"(rwn_sql.new_key())")
    bad = next((i for i, c in enumerate(key) if unicodedata.category(c) == "Cc"), None)
    if bad is not None:
        raise RWNError(f"{where} holds a control character (U+{ord(key[bad]):04X} at position {bad + 1}; NUL, "
                       f"a binary file?); a key is one line of text")
    if len(key) < MIN_KEY_LENGTH:
        raise RWNError(f"{where} holds {len(key)} characters; a key needs at least {MIN_KEY_LENGTH} "
                       f"(rwn_sql.new_key() makes one; seed= is for experiments)")
    if len(key) > MAX_KEY_LENGTH:
        raise RWNError(f"{where} holds {len(key)} characters; a key has at most {MAX_KEY_LENGTH}")
    return key


def read_key_file(path: str | os.PathLike) -> str:
    """Read a key from a regular file of at most MAX_KEY_FILE_BYTES (surrounding whitespace
    ignored), checked by check_key; read by small_files.read_small_file, so a FIFO, a device
    such as /dev/zero or a folder is refused before anything is read, and a large file after
    reading at most the limit."""
    text = read_small_file(path, "key file", MAX_KEY_FILE_BYTES)
    return check_key(text.strip(), f"key file {str(path)!r}")


def resolve_key(key: str | None, seed: int | None) -> str:
    """The key a run uses: the given key (checked by check_key), a key derived from `seed`, or
    a fresh random key."""
    if key is not None and seed is not None:
        raise RWNError("give either key= or seed=, not both")
    if key is not None:
        return check_key(key)
    if seed is not None:
        return key_from_seed(seed)
    return new_key()


def hash_sql(key_sql: str, purpose: str, record_sql: str, column: str,
             dialect: DuckDBDialect = DUCKDB) -> str:
    """SQL for the keyed hash of (key, purpose, record, column) as a 128-bit unsigned integer.
    The subkey depends on the key alone: read from the key's scan (KeySQL.derive), the engine
    computes it once per statement and no plan shows it; over a per-row key (a replicate's
    key#r) it is per row anyway."""
    suffix = quote_literal('|' + purpose + '|' + column)
    if isinstance(key_sql, KeySQL):
        subkey = key_sql.derive(lambda key: dialect.md5_hex(f"{key} || {suffix}"))
    else:
        subkey = dialect.md5_hex(f"{key_sql} || {suffix}")
    return dialect.md5_uint128(f"{subkey} || {dialect.as_text(record_sql)}")


def order_key_sql(key_sql: str, purpose: str, record_sql: str, dialect: DuckDBDialect = DUCKDB) -> str:
    """SQL for a record's position key in a release: 62 bits of the keyed hash of the record, so
    the written order is a keyed random permutation that says nothing about the input order
    (sorting by an integer costs far less than by the hash's text)."""
    return dialect.uint128_bits(hash_sql(key_sql, purpose, record_sql, "", dialect), 0, 62)


def bits_sql(hash_expr: str, part: int, dialect: DuckDBDialect = DUCKDB) -> str:
    """SQL for the 52-bit integer number `part` (0 or 1) of a keyed hash: uniform on [0, 2^52)."""
    return dialect.uint128_bits(hash_expr, 76 - 52 * part, 52)


def keyed_hash(key: str, purpose: str, record: int | str, column: str) -> int:
    """Python mirror of `hash_sql`, for tests and for engines without MD5 in SQL."""
    subkey = hashlib.md5(f"{key}|{purpose}|{column}".encode("utf-8")).hexdigest()
    return int.from_bytes(hashlib.md5(f"{subkey}{record}".encode("utf-8")).digest(), "little")


def keyed_order(key: str, purpose: str, n: int) -> list[int]:
    """Python mirror of `order_key_sql`: records 1..n in the order a release writes them."""
    return sorted(range(1, n + 1), key=lambda r: (keyed_hash(key, purpose, r, "") & ((1 << 62) - 1), r))


def keyed_bits(key: str, purpose: str, record: int | str, column: str) -> tuple[int, int]:
    """Python mirror of `bits_sql`: the two 52-bit integers of a keyed hash."""
    h = keyed_hash(key, purpose, record, column)
    return h >> 76, (h >> 24) & (TWO_52 - 1)
