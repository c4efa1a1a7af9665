"""Progress on stderr for long commands (``pretrain``, ``pretrain-compare``, ``compress``): never silent for long.

A :class:`Ticker` prints the lines its command gives it (a training step, a method measured), and while nothing new
comes it repeats the command's current status every :data:`REPORT_SECONDS` from a background thread, with fresh
elapsed time and time left: a single pass of a large accumulated step, a quantised model's perplexity or the
download of a checkpoint can run for minutes without a step to report.

>>> eta(30.0, 0.25)
'1 min 30 s'
>>> eta(5.0, 0.0)
'unknown'
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType

__all__ = ["REPORT_SECONDS", "Ticker", "eta"]

REPORT_SECONDS = 5.0  # the longest a long command stays silent on stderr


def eta(elapsed: float, fraction: float) -> str:
    """Time left when ``fraction`` of the work took ``elapsed`` seconds: "42 s", "3 min 5 s", or "unknown"."""
    if not 0 < fraction <= 1 or not math.isfinite(elapsed):
        return "unknown"
    left = max(0.0, elapsed / fraction - elapsed)
    return f"{left:.0f} s" if left < 60 else f"{int(left // 60)} min {left % 60:.0f} s"


class Ticker:
    """Lines on stderr; a heartbeat repeats :attr:`status` (a function of the elapsed seconds) while nothing new
    was printed for ``every`` seconds. Use as a context manager: the heartbeat runs inside it."""

    def __init__(self, every: float | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.every = REPORT_SECONDS if every is None else every
        self.clock = clock
        self.started = self.last = clock()
        self.status: Callable[[float], str] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def elapsed(self) -> float:
        return self.clock() - self.started

    def due(self) -> bool:
        """Whether ``every`` seconds went by since the last line."""
        return self.clock() - self.last >= self.every

    def say(self, line: str) -> None:
        """Print one line now (and restart the heartbeat's count)."""
        with self._lock:
            print(line, file=sys.stderr, flush=True)
            self.last = self.clock()

    def beat(self) -> bool:
        """Repeat the status if ``every`` seconds went by in silence (what the heartbeat thread does each time it
        wakes); whether a line was said."""
        status = self.status
        if status is None or not self.due():
            return False
        self.say(status(self.elapsed))
        return True

    def _beat(self) -> None:
        while not self._stop.wait(min(1.0, max(0.05, self.every / 4))):
            self.beat()

    def __enter__(self) -> Ticker:
        self._thread = threading.Thread(target=self._beat, name="cli-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
