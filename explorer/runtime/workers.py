"""A process-wide limit on concurrent model work, so one visitor's heavy job cannot starve the rest.

Streamlit runs every browser session in its own thread. Without a limit, six sessions running a
forward pass at once on a 2-core CPU each get a sixth of the machine *and* thrash the caches, so
every one of them waits far longer than if they had queued. :func:`model_slot` is a fair (FIFO)
semaphore around every forward pass, generation and model load: at most ``EXPLORER_MODEL_WORKERS``
jobs run at once (default: one per GPU, else ``max(1, cores // torch threads)``), the others wait in
arrival order; a job that waits longer than ``timeout`` seconds gets an ``ExplorerError`` telling the
user the server is busy, instead of an endless spinner. Waits are recorded for the Models page, and
the last wait of each thread is kept so the page can say "waited 12 s behind 2 other requests"
(:func:`take_wait_notice`). Each request of the server (:func:`queued`) uses as many CPU threads as the cores
other processes leave free (:mod:`explorer.runtime.threads`) and runs under a
:class:`explorer.runtime.cancel.CancelToken`: a time and memory budget from the device, and the app's
probe (:func:`set_probe`) that says whether its browser session still wants the answer.

>>> with model_slot("demo"):
...     busy = stats()["running"]
>>> busy, stats()["running"]
(1, 0)
"""

from __future__ import annotations

import collections
import contextlib
import functools
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import ParamSpec, TypeVar

from explorer.core import settings
from explorer.core.errors import ExplorerError
from explorer.runtime import cancel, threads

__all__ = ["DEFAULT_TIMEOUT", "FairSlots", "NOTICE_AFTER_S", "finished", "limit", "model_slot", "queued", "remote",
           "set_probe", "stats", "take_wait_notice"]

P = ParamSpec("P")
R = TypeVar("R")

DEFAULT_TIMEOUT = 120.0  # seconds a job may wait for its turn before the user is told the server is busy
NOTICE_AFTER_S = 1.0  # a shorter wait is not worth a sentence on the page


def limit() -> int:
    """How many model jobs may run at once (``EXPLORER_MODEL_WORKERS``, else from the hardware)."""
    if (chosen := settings.MODEL_WORKERS.read()) is not None:
        return chosen
    import torch

    if torch.cuda.is_available():
        return torch.cuda.device_count()
    # sized on the threads configured at start: a busy machine's requests use fewer (explorer.runtime.threads), but
    # more jobs at once would only crowd the cores further
    return max(1, (os.cpu_count() or 1) // threads.configured())


class FairSlots:
    """A FIFO semaphore: waiters are served in arrival order (threading.Semaphore makes no promise).

    Model jobs wait with a timeout (:meth:`acquire`); the Lab's trainings wait as long as their visitor wants them
    (:meth:`wait_turn`: a Stop or a closed tab gives the place up).
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: collections.deque[object] = collections.deque()
        self.running = 0
        self.waits: collections.deque[float] = collections.deque(maxlen=500)  # seconds, newest last
        self.finished = 0  # jobs that gave their slot back since the process started

    def acquire(self, timeout: float, size: int) -> tuple[float, int]:
        """Wait for a slot; returns (seconds waited, requests that were ahead on arrival)."""
        ticket = object()
        start = time.monotonic()
        with self._cond:
            ahead = self.running + len(self._queue)
            self._queue.append(ticket)
            try:
                ok = self._cond.wait_for(lambda: self._queue[0] is ticket and self.running < size, timeout)
            finally:
                self._queue.remove(ticket)
                self._cond.notify_all()
            if not ok:
                raise ExplorerError(f"The server is busy with other visitors' models (waited {timeout:.0f} s "
                                    f"behind {_requests(ahead)}): try again in a minute.")
            self.running += 1
            waited = time.monotonic() - start
            self.waits.append(waited)
            return waited, ahead

    def wait_turn(self, size: Callable[[], int], give_up: Callable[[], bool], poll: float = 0.25) -> bool:
        """Wait in arrival order for one of ``size()`` slots (read again while waiting: a setting may change);
        False, without a slot, once ``give_up()`` says the waiter is no longer wanted."""
        ticket = object()
        with self._cond:
            self._queue.append(ticket)
            try:
                while True:  # a waiter given up while queued (or before) never runs
                    if give_up():
                        return False
                    if self._queue[0] is ticket and self.running < size():
                        break
                    self._cond.wait(poll)
            finally:
                self._queue.remove(ticket)
                self._cond.notify_all()
            self.running += 1
            return True

    def waiting(self) -> int:
        """Waiters queued now."""
        return len(self._queue)

    def release(self) -> None:
        with self._cond:
            self.running -= 1
            self.finished += 1
            self._cond.notify_all()


_SLOTS = FairSlots()


@contextlib.contextmanager
def model_slot(what: str = "model work", timeout: float = DEFAULT_TIMEOUT) -> Iterator[None]:
    """Hold one of the ``limit()`` slots for the duration of a forward pass, generation or load.

    Re-entrant per thread: a job that already holds a slot (a load inside a prediction) does not
    queue again, which would deadlock with one slot.
    """
    if getattr(_HELD, "depth", 0):
        _HELD.depth += 1
        try:
            yield
        finally:
            _HELD.depth -= 1
        return
    _HELD.wait = _SLOTS.acquire(timeout, limit())
    _HELD.depth = 1
    try:
        yield
    finally:
        _HELD.depth = 0
        _SLOTS.release()


_HELD = threading.local()
_PROBE: list[Callable[[], Callable[[], bool] | None]] = []  # the app's liveness probe factory (one at most)


def _requests(n: int) -> str:
    return f"{n} other request" + ("" if n == 1 else "s")


def set_probe(factory: Callable[[], Callable[[], bool] | None] | None) -> None:
    """Install the app's probe: ``factory()`` runs in the request's thread when it starts and returns
    a ``wanted()`` callable (False once its browser session is gone), or None. None uninstalls."""
    _PROBE[:] = [factory] if factory else []


def take_wait_notice() -> str | None:
    """The sentence about this thread's last queue wait ("waited 12 s behind 2 other requests"), once."""
    waited, ahead = getattr(_HELD, "wait", (0.0, 0))
    _HELD.wait = (0.0, 0)
    if waited < NOTICE_AFTER_S:
        return None
    return (f"Waited {waited:.0f} s behind {_requests(ahead)} for a model worker "
            f"(this server runs {limit()} at once).")


def _request_token() -> cancel.CancelToken:
    """A fresh request's budget and liveness (the app's probe says whether its page still waits)."""
    return cancel.CancelToken(cancel.request_budget(), _PROBE[0]() if _PROBE else None)


def queued(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorator: ``fn`` runs holding a model slot, under a :class:`~explorer.runtime.cancel.CancelToken`
    (used on the server's entry points; cached answers never reach it, so a repeated request does
    not queue). The budget's clock starts when the slot is granted: waiting is not working."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        if getattr(_HELD, "depth", 0):  # nested in a request: its token already applies
            return fn(*args, **kwargs)
        # the token is made after the slot is granted (left to right), so its clock starts then
        # cores other processes keep busy are left to them (explorer.runtime.threads)
        with model_slot(fn.__name__), cancel.scope(_request_token()), threads.adapted():
            return fn(*args, **kwargs)

    return wrapper


def remote(fn: Callable[P, R]) -> Callable[P, R]:
    """Decorator for requests to a served model: the same budget and liveness as :func:`queued`, but **no**
    local model slot (the engine does the work; each endpoint has its own bound on requests in flight,
    :mod:`explorer.serving.client`), so visitors of served models never queue behind local ones."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        if cancel.current() is not None:  # nested in a request: its token already applies
            return fn(*args, **kwargs)
        with cancel.scope(_request_token()):
            return fn(*args, **kwargs)

    return wrapper


def finished() -> int:
    """Model jobs finished since the process started (the cache's janitor trims memory after activity).

    >>> before = finished()
    >>> with model_slot("a doctest"):
    ...     pass
    >>> finished() - before
    1
    """
    return _SLOTS.finished


def stats() -> dict[str, float | int]:
    """Slots, jobs running now, and recent waits (median / max seconds) for the Models page."""
    waits = sorted(_SLOTS.waits)
    return {"slots": limit(), "running": _SLOTS.running, "jobs": len(waits),
            "median_wait_s": round(waits[len(waits) // 2], 3) if waits else 0.0,
            "max_wait_s": round(waits[-1], 3) if waits else 0.0}
