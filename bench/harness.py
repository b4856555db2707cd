"""What every benchmark shares: a line describing the machine, and fair timing of contenders."""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Callable

import numpy as np


def machine_info(extra: str = "") -> str:
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    line = (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, {mem:.0f} GiB, "
        f"load average {os.getloadavg()[0]:.1f}, "
        f"python {platform.python_version()}, numpy {np.__version__}"
    )
    return f"{line}, {extra}" if extra else line


def timed_together(contenders: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Median seconds of each contender, run round-robin after one warm-up each, so a
    change in machine load hits all of them alike (the ratios are what matter)."""
    for fn in contenders.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, fn in contenders.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}
