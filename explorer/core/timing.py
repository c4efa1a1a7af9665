"""Timing several callables fairly on a shared machine: interleaved rounds after one untimed warm-up each.

Timing A fully and then B lets a slow moment of the machine (another process, a thermal dip) fall on one of
them only; taking turns (A, B, A, B, ...) spreads it over both, so their ratio holds when absolute times drift.
The caller takes the median of each list. Used by DistilBERT's speed table (``explorer.papers.speed``) and the
pretraining lab's claims benchmark (``explorer.training.measurement``).

>>> schedule(2, 3)
[0, 1, 0, 1, 0, 1]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

__all__ = ["interleaved", "schedule"]


def schedule(n_models: int, runs: int) -> list[int]:
    """The order of timed calls: ``runs`` rounds, each model once per round (0, 1, 0, 1, ...)."""
    return [m for _ in range(runs) for m in range(n_models)]


def interleaved(calls: Sequence[Callable[[], object]], runs: int,
                clock: Callable[[], float] = time.perf_counter) -> list[list[float]]:
    """Seconds per call of each callable, timed in interleaved rounds after one untimed warm-up each."""
    for call in calls:  # first calls allocate buffers and pick kernels: not part of the timing
        call()
    times: list[list[float]] = [[] for _ in calls]
    for m in schedule(len(calls), runs):
        start = clock()
        calls[m]()
        times[m].append(clock() - start)
    return times
