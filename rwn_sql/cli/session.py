"""The run's connection and the checks made before it opens: --threads, --memory-limit, the
private folder DuckDB spills to, the key file, and outputs that would overwrite an input.
`OutputTarget` is an output argument parsed once. `connections` lists every connection of the
run, for rwn_sql.cli.main to interrupt on a signal."""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass

from ..engines import duckdb as engine, files, outputs, sources
from ..errors import RWNError
from ..randomness import read_key_file


connections: list = []     # every connection of this run, for interrupting it on a signal


@dataclass(frozen=True)
class OutputTarget:
    """An output argument, parsed once by the command that writes it; the engines still receive
    `text`, as given (and messages quote it)."""
    text: str
    file: str                # the file written: the database file of 'file.duckdb:table', else the path
    table: str | None        # the table of 'file.duckdb:table', else None
    # "table" (file.duckdb:table), "data" (a CSV, TSV or Parquet file by its suffix, as inputs
    # are recognized), "json", or "other" (a release database or folder, or an unknown extension)
    kind: str
    format: str | None       # a file's output format, "csv", "tsv" or "parquet" (its extension), else None
    problem: str | None      # why a file cannot be written (outputs' refusal of its extension), else None

    @classmethod
    def parse(cls, text: str) -> "OutputTarget":
        db = sources.split_db_target(text)
        if db:
            return cls(text, db[0], db[1], "table", None, None)
        if text.lower().endswith(".json"):
            return cls(text, text, None, "json", None, None)
        kind = "data" if sources.file_format(text) is not None else "other"
        try:
            return cls(text, text, None, kind, outputs.output_format(text)[0], None)
        except RWNError as exc:
            return cls(text, text, None, kind, None, str(exc))

    @property
    def real(self) -> str:
        """The real path of the file written (through symlinks), as inputs are compared."""
        return os.path.realpath(self.file)

    @property
    def folder(self) -> str:
        """The folder the output goes in."""
        return os.path.dirname(os.path.abspath(self.file))


def _work_folder(near: str | None) -> str | None:
    """Where this run's private folder goes: `near` (the output's folder, which holds the
    temporary outputs anyway) if it exists, else the system temporary folder (None)."""
    return near if near and os.path.isdir(near) else None


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


def new_connection(args, near: str | None = None) -> engine.Connection:
    """The run's DuckDB connection; its private folder in `near` (see _work_folder)."""
    if args.threads is not None:       # refused before any folder or connection is made
        check_threads(args.threads)
    if args.memory_limit is not None:
        check_memory_limit(args.memory_limit)
    spill = os.path.join(files.private_dir(_work_folder(near)), "spill")
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



def file_of(source: str) -> str:
    """The real path of an input's file (the database file of 'file.duckdb:table')."""
    db = sources.split_db_target(source)
    return os.path.realpath(db[0] if db else source)


def check_not_input(args, out: OutputTarget, whole_file: bool = False) -> None:
    """Refuse an output that is one of the run's input files (by real path, so through
    symlinks too), or the input's table. A new table in the input's database is allowed,
    except for outputs that replace a whole file (`whole_file`: release databases)."""
    if not whole_file and out.problem:
        raise RWNError(out.problem)      # an unknown extension fails before any work
    inputs = [getattr(args, n, None) for n in ("input", "original", "released", "key_file", "domain_file")]
    for source in filter(None, inputs):
        if file_of(source) != out.real:
            continue
        in_db = sources.split_db_target(source)
        if out.table is not None and in_db and not whole_file and out.table.lower() != in_db[1].lower():
            continue              # another table in the input's database: allowed
        raise RWNError(f"output {out.text!r} is the input {source!r} or its database; rwn-sql never "
                       f"modifies its input")


def open_connection(args, out: OutputTarget) -> engine.Connection:
    """The run's connection for writing `out`. An output table in the input's database needs
    that file attached once, read-write, since DuckDB refuses two handles on one file."""
    con = new_connection(args, out.folder)
    source = getattr(args, "input", None)
    in_db = source and sources.split_db_target(source)
    if out.table is not None and in_db and out.real == file_of(source):
        sources.attach(con, in_db[0], read_only=False)
    return con


def read_key(args) -> str | None:
    """The key of --key-file, under the key policy of randomness.check_key."""
    return read_key_file(args.key_file) if args.key_file else None
