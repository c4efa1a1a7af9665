"""How many CPU threads one request's model work uses: every configured one on an idle machine, fewer on a busy one.

torch splits each matrix product over its threads and waits for the slowest at the end of each one. When other
processes already keep the cores busy (a classroom server, a training next door), the operating system
deschedules one of the threads while the other waits for it, at every product: measured on a 2-core machine with
four CPU-bound processes running, one all-MiniLM-L6-v2 forward took 546 ms on 2 threads and 48 ms on 1, Gemma 3
270M's fill-mask 50 s against 14 s. So each server request (:func:`explorer.runtime.workers.queued`) first looks
at how many tasks are running elsewhere and leaves them their cores. The command line and the tests keep torch's
setting (nothing here runs outside a server request).

>>> for_load(configured=2, cores=2, others=0), for_load(2, 2, 1), for_load(2, 2, 4)
(2, 1, 1)
>>> for_load(configured=8, cores=16, others=4), for_load(8, 16, 12)
(8, 4)
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from collections.abc import Iterator

__all__ = ["adapt", "adapted", "configured", "for_load", "running_elsewhere"]

SAMPLES = 3  # reads of the run queue, the least taken: a task that runs for a moment is not load
SAMPLE_GAP_S = 0.002


def for_load(configured: int, cores: int, others: int) -> int:
    """Threads for one job: ``configured`` while the ``others`` tasks running elsewhere leave that many cores free,
    else the cores they leave (at least one)."""
    return max(1, min(configured, cores - others))


@functools.lru_cache(maxsize=1)
def configured() -> int:
    """torch's thread count as the process started (what an idle machine gets; the model slots are sized on it)."""
    import torch

    return max(1, torch.get_num_threads())


def _running_now() -> int | None:
    """Tasks running or ready to run on the whole machine now (``procs_running`` of /proc/stat), None off Linux."""
    try:
        with open("/proc/stat", "rb") as fh:
            for line in fh:
                if line.startswith(b"procs_running "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def running_elsewhere() -> int:
    """Tasks running on this machine besides the one asking (the least of a few reads); the one-minute load
    average, less this task, where the run queue cannot be read."""
    reads = []
    for i in range(SAMPLES):
        if i:
            time.sleep(SAMPLE_GAP_S)
        now = _running_now()
        if now is None:
            return max(0, round(os.getloadavg()[0]) - 1) if hasattr(os, "getloadavg") else 0
        reads.append(now)
    return max(0, min(reads) - 1)


def adapt() -> int:
    """Set torch's threads for the load now (:func:`for_load`) and return the count."""
    import torch

    threads = for_load(configured(), os.cpu_count() or 1, running_elsewhere())
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return threads


@contextlib.contextmanager
def adapted() -> Iterator[int]:
    """:func:`adapt` for the body, torch's count restored after it (yields the count used)."""
    import torch

    before = torch.get_num_threads()
    try:
        yield adapt()
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)
