"""Timing helper shared by the benchmark scripts (run as files: this folder is on sys.path)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_ms(fn: Callable[[], object], repeats: int = 7, warmup: bool = True) -> float:
    """Median wall time of ``fn()`` in milliseconds, after one untimed warm-up call."""
    if warmup:
        fn()  # caches, lazy imports
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)
