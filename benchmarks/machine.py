"""What the benchmarks print about the machine and the process (shared by the scripts here)."""
from __future__ import annotations

import os
import platform
import resource


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)    # DuckDB's threads run in this process
    return usage.ru_utime + usage.ru_stime


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # Linux: kilobytes


def cpu_name() -> str:
    name = platform.processor()
    try:
        with open("/proc/cpuinfo") as fh:
            name = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), name)
    except OSError:
        pass
    return f"{name or platform.machine()} ({platform.machine()}), os.cpu_count() = {os.cpu_count()}"
