"""The run's connection and the checks made before it opens: --threads, --memory-limit, the
private folder DuckDB spills to, the key file, and outputs that would overwrite an input.
`connections` lists every connection of the run, for rwn_sql.cli.main to interrupt on a signal."""
from __future__ import annotations

import os
import re
import sys

from ..engines import duckdb as engine, files, outputs, sources
from ..errors import RWNError
from ..randomness import read_key_file


connections: list = []     # every connection of this run, for interrupting it on a signal


def _work_folder(args) -> str | None:
    """Where this run's private folder goes: the (first) output's folder, which holds the
    temporary outputs anyway, else the system temporary folder."""
    for name in ("output", "groups_output", "json", "output_dir"):
        target = getattr(args, name, None)
        if target:
            db = sources.split_db_target(target)
            folder = target if name == "output_dir" else os.path.dirname(os.path.abspath(db[0] if db else target))
            return folder if os.path.isdir(folder) else None
    return None


def max_threads() -> int:
    """The most --threads accepted: DuckDB starts every thread at once, and 100000 of them take
    minutes before any work (and the address space)."""
    return max(64, 4 * (os.cpu_count() or 1))


def check_threads(threads: int) -> int:
    if not 1 <= threads <= max_threads():
        raise RWNError(f"--threads must be between 1 and {max_threads()} (4 per core, at least 64), got {threads}")
    return threads


MIN_MEMORY_LIMIT = 1 << 20
_MEMORY_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]+|%)\s*")


def physical_memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def check_memory_limit(text: str) -> int:
    """The bytes of a --memory-limit such as 2GB, 512MiB or 50% (of physical memory), refused
    unless it is between 1 MiB and the physical memory: DuckDB takes 'none', '-1' or '1e9GB'
    as no limit at all."""
    m = _MEMORY_SIZE.fullmatch(text)
    unit = m.group(2).lower() if m else None
    if m is None or (unit != "%" and unit not in engine.MEMORY_UNITS):
        raise RWNError(f"--memory-limit {text!r}: expected a size such as 2GB, 512MiB or 50% (units: KB, MB, GB, "
                       f"TB, KiB, MiB, GiB, TiB, bytes)")
    number = float(m.group(1))
    size = int(number / 100 * physical_memory()) if unit == "%" else int(number * engine.MEMORY_UNITS[unit])
    if not MIN_MEMORY_LIMIT <= size <= physical_memory():
        raise RWNError(f"--memory-limit {text!r} is {size} bytes; it must be between 1 MiB and this machine's "
                       f"physical memory ({physical_memory()} bytes)")
    return size


def new_connection(args) -> engine.Connection:
    if args.threads is not None:       # refused before any folder or connection is made
        check_threads(args.threads)
    if args.memory_limit is not None:
        check_memory_limit(args.memory_limit)
    spill = os.path.join(files.private_dir(_work_folder(args)), "spill")
    # DuckDB would spill to ./.tmp in the working directory and leave it after a kill.
    con = engine.connect(config={"temp_directory": spill})
    connections.append(con)
    if args.threads is not None:
        con.execute(f"SET threads = {check_threads(args.threads)}").fetchall()
    if args.memory_limit is not None:
        try:
            con.execute("SET memory_limit = ?", [args.memory_limit]).fetchall()
        except engine.Error as exc:
            raise RWNError(f"--memory-limit {args.memory_limit!r}: {exc}") from None
    if getattr(args, "na_values", None):
        sources.set_csv_null_strings(con, args.na_values)
    if sys.stderr.isatty():   # DuckDB's own progress bar for long statements
        con.execute("SET enable_progress_bar = true").fetchall()
    return con



def file_of(target: str) -> str:
    db = sources.split_db_target(target)
    return os.path.realpath(db[0] if db else target)


def check_not_input(args, output: str, whole_file: bool = False) -> None:
    """Refuse an output that is one of the run's input files (by real path, so through
    symlinks too), or the input's table. A new table in the input's database is allowed,
    except for outputs that replace a whole file (`whole_file`: release databases)."""
    if not whole_file and not sources.split_db_target(output) and not output.lower().endswith(".json"):
        outputs.output_format(output)      # an unknown extension fails before any work
    inputs = [getattr(args, n, None) for n in ("input", "original", "released", "key_file", "domain_file")]
    out_db = sources.split_db_target(output)
    for source in filter(None, inputs):
        if file_of(source) != file_of(output):
            continue
        in_db = sources.split_db_target(source)
        if out_db and in_db and not whole_file and out_db[1].lower() != in_db[1].lower():
            continue              # another table in the input's database: allowed
        raise RWNError(f"output {output!r} is the input {source!r} or its database; rwn-sql never "
                       f"modifies its input")


def open_connection(args) -> engine.Connection:
    """The run's connection. An output table in the input's database needs that file attached
    once, read-write, since DuckDB refuses two handles on one file."""
    con = new_connection(args)
    source = getattr(args, "input", None)
    out_db, in_db = sources.split_db_target(args.output), source and sources.split_db_target(source)
    if out_db and in_db and file_of(args.output) == file_of(args.input):
        sources.attach(con, in_db[0], read_only=False)
    return con


def read_key(args) -> str | None:
    """The key of --key-file, under the key policy of randomness.check_key."""
    return read_key_file(args.key_file) if args.key_file else None
