"""Bounded work per request: a time and memory budget, and a token the long loops check.

One visitor must not hold a model worker (:mod:`explorer.runtime.workers`) for minutes, and a request
whose browser tab is gone should not keep computing for nobody. The server's entry points
(``workers.queued``) run each request inside a :class:`CancelToken`; the loops that can run long
(decoding steps, beam steps, candidate batches, sentence batches, one model after another) call
:func:`check` once per step. ``check`` raises :class:`RequestStopped` (an ``ExplorerError``, so
pages show it in a red box) when the time budget is spent, when the request grew the process's
memory beyond its budget, or when the app says nobody wants the answer any more (the Streamlit
session closed or started a new run: ``wanted`` is the app's probe; the library never imports
streamlit). Outside a token (the CLI, tests) ``check`` does nothing: a command-line run is the
user's own machine and has no limit.

Anytime work plans with the budget rather than only being stopped by it: :func:`room_for` says whether a step of a
known cost still fits (leaving time for the work after it), so a loop ends with what it has, before the stop. A
model's load does not count against the time budget (:func:`unbudgeted`): it happens once for every later request
(the model cache keeps it), cannot be cut half-way, and a request stopped right after it would throw its answer away.

The budget is a function of the device (:func:`request_budget`), testable with injected facts:

>>> cpu = MachineFacts(accelerator=None, cores=2, ram_bytes=24 * 2**30, accel_bytes=0)
>>> b = request_budget(cpu, env={})
>>> b.seconds, round(b.memory_bytes / 2**30, 1)
(60.0, 7.2)
>>> request_budget(MachineFacts("cuda", 16, 128 * 2**30, 80 * 2**30), env={}).seconds
30.0
>>> t = CancelToken(RequestBudget(5.0, 2**30, "test"), clock=iter([0.0, 6.0]).__next__, memory=lambda: 0)
>>> t.check()
Traceback (most recent call last):
...
explorer.runtime.cancel.RequestStopped: This request was stopped after 6 s, ...
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import psutil

from explorer.core import settings
from explorer.core.errors import ExplorerError
from explorer.core.memorypolicy import ACCELERATOR_MEMORY_SHARE, CPU_MEMORY_SHARE

__all__ = ["CancelToken", "MachineFacts", "RequestBudget", "RequestStopped", "check", "current", "machine_facts",
           "memory_left", "now", "process_memory", "request_budget", "room_for", "scope", "seconds_left", "unbudgeted"]

CPU_SECONDS = (45.0, 90.0)  # a CPU request may run 120 s / cores, within these bounds (2 cores: 60 s)
ACCELERATOR_SECONDS = 30.0  # a GPU does the same work ten times faster


class RequestStopped(ExplorerError):
    """A request stopped by its budget or because nobody waits for it any more (``reason``:
    "time", "memory" or "gone")."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class MachineFacts:
    """This machine's totals (accelerator, cores, RAM, accelerator memory) a request's budget is derived from; what
    one device has free now is :class:`explorer.runtime.capacity.DeviceFacts`."""

    accelerator: str | None  # "cuda", "mps" or None (CPU only)
    cores: int
    ram_bytes: int  # total RAM
    accel_bytes: int  # total memory of the accelerator (0 without one)


@dataclass(frozen=True)
class RequestBudget:
    seconds: float  # wall time from the moment the request gets its worker
    memory_bytes: int  # growth of the process's memory (or the accelerator's) it may cause
    why: str  # where the figures come from, for messages


def machine_facts() -> MachineFacts:
    """This machine's facts (torch and psutil are asked once per call; cheap)."""
    import torch

    if torch.cuda.is_available():
        total = int(torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory)
        return MachineFacts("cuda", os.cpu_count() or 1, int(psutil.virtual_memory().total), total)
    from explorer.runtime.placement import mps_available  # imports torch at its top

    return MachineFacts("mps" if mps_available() else None, os.cpu_count() or 1, int(psutil.virtual_memory().total), 0)


def request_budget(facts: MachineFacts | None = None, env: Mapping[str, str] | None = None) -> RequestBudget:
    """Time and memory one server request may use on this device.

    ``EXPLORER_REQUEST_SECONDS`` / ``EXPLORER_REQUEST_MB`` override the derived figures (``env``: a test's
    mapping instead of the process environment; a bad value is an ExplorerError). Time: on a CPU
    ``120 s / cores`` within ``CPU_SECONDS`` (half the 120 s a queued request may wait, so a request
    behind one runaway is still served); on an accelerator ``ACCELERATOR_SECONDS``. Memory: a share of
    the accelerator's memory, else of the RAM (unified memory on "mps" counts as RAM).
    """
    facts = facts or machine_facts()
    if facts.accelerator == "cuda":
        seconds, memory = ACCELERATOR_SECONDS, int(facts.accel_bytes * ACCELERATOR_MEMORY_SHARE)
        why = f"{ACCELERATOR_MEMORY_SHARE:.0%} of the GPU's {facts.accel_bytes / 2**30:.0f} GB"
    else:
        lo, hi = CPU_SECONDS
        seconds = ACCELERATOR_SECONDS if facts.accelerator else min(hi, max(lo, 120.0 / max(1, facts.cores)))
        memory = int(facts.ram_bytes * CPU_MEMORY_SHARE)
        why = f"{CPU_MEMORY_SHARE:.0%} of the {facts.ram_bytes / 2**30:.0f} GB of RAM"
    if (s := settings.REQUEST_SECONDS.read(env)) is not None:
        seconds = s
    if (mb := settings.REQUEST_MB.read(env)) is not None:
        memory, why = int(mb * 2**20), settings.REQUEST_MB.name
    return RequestBudget(float(seconds), memory, why)


def process_memory() -> int:
    """Bytes this process holds now: resident RAM, plus the accelerator's allocated memory."""
    try:
        with open("/proc/self/statm", "rb") as fh:  # ~5 µs: cheap enough for every decoding step
            rss = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):  # not Linux

        rss = int(psutil.Process().memory_info().rss)
    import torch

    return rss + (int(torch.cuda.memory_allocated()) if torch.cuda.is_available() else 0)


class CancelToken:
    """One request's budget and liveness; :meth:`check` raises :class:`RequestStopped` when spent."""

    def __init__(self, budget: RequestBudget, wanted: Callable[[], bool] | None = None, *,
                 clock: Callable[[], float] = time.monotonic, memory: Callable[[], int] = process_memory) -> None:
        self.budget, self._wanted, self._clock, self._memory = budget, wanted, clock, memory
        self.started, self.memory_at_start = clock(), memory()
        self.stopped: RequestStopped | None = None

    def cancel(self, reason: str = "gone") -> None:
        """Stop at the next check (the app calls this when the session goes away)."""
        self.stopped = self.stopped or RequestStopped("This request was stopped: its page was closed or run again.",
                                                      reason)

    def seconds_left(self) -> float:
        """Seconds of the time budget still unspent (never negative): how long a network call may wait."""
        return max(0.0, self.budget.seconds - (self._clock() - self.started))

    @contextlib.contextmanager
    def unbudgeted(self) -> Iterator[None]:
        """The body's time does not count against the budget (its memory still does)."""
        began = self._clock()
        try:
            yield
        finally:
            self.started += self._clock() - began

    def grown(self) -> int:
        """Bytes the process grew since this request started (never negative)."""
        return max(0, self._memory() - self.memory_at_start)

    def check(self) -> None:
        """Raise :class:`RequestStopped` when the request must stop; else return at once."""
        if self.stopped is None and self._wanted is not None and not self._wanted():
            self.cancel("gone")
        if self.stopped is None and (spent := self._clock() - self.started) > self.budget.seconds:
            self.stopped = RequestStopped(
                f"This request was stopped after {spent:.0f} s, the longest one request may run on this server "
                f"({self.budget.seconds:.0f} s), so that other visitors are not kept waiting. Ask for less (fewer "
                "models or tokens, a shorter text), or run it from the command line (python -m explorer ...), "
                "which has no time limit.", "time")
        if self.stopped is None and (grown := self.grown()) > self.budget.memory_bytes:
            self.stopped = RequestStopped(
                f"This request was stopped: it grew the server's memory by {grown / 2**30:.1f} GB, more than "
                f"the {self.budget.memory_bytes / 2**30:.1f} GB one request may use here ({self.budget.why}). "
                "Ask for fewer or smaller models, or run it from the command line (python -m explorer ...).",
                "memory")
        if self.stopped is not None:
            raise self.stopped


_CURRENT: contextvars.ContextVar[CancelToken | None] = contextvars.ContextVar("explorer_cancel_token", default=None)


@contextlib.contextmanager
def scope(token: CancelToken) -> Iterator[CancelToken]:
    """Run the body with ``token`` as this thread's current token (what :func:`check` reads)."""
    reset = _CURRENT.set(token)
    try:
        yield token
    finally:
        _CURRENT.reset(reset)


def current() -> CancelToken | None:
    """The token of the request running in this thread, or None (CLI, tests, cache hits)."""
    return _CURRENT.get()


def check() -> None:
    """One line in every long loop: stop here if this request's token says so; free outside a request."""
    token = _CURRENT.get()
    if token is not None:
        token.check()


def memory_left() -> int | None:
    """Bytes this request may still add, or None outside a request (no limit)."""
    token = _CURRENT.get()
    return None if token is None else max(0, token.budget.memory_bytes - token.grown())


def seconds_left() -> float | None:
    """Seconds this request may still run, or None outside a request (no limit): a remote call's timeout."""
    token = _CURRENT.get()
    return None if token is None else token.seconds_left()


def now() -> float:
    """The current request's clock (what its budget is measured on), else ``time.monotonic``: how a loop times its
    steps to plan the next one with :func:`room_for`."""
    token = _CURRENT.get()
    return token._clock() if token is not None else time.monotonic()


def room_for(step_seconds: float, reserve: float = 0.0) -> bool:
    """Whether a step expected to take ``step_seconds`` still fits this request's time budget with ``reserve``
    seconds left over for the work after it (the next blanks of a text); always True outside a request.

    >>> t = CancelToken(RequestBudget(10.0, 2**30, "test"), clock=iter([0.0, 4.0, 4.0]).__next__, memory=lambda: 0)
    >>> with scope(t):
    ...     room_for(5.0), room_for(5.0, reserve=2.0)
    (True, False)
    """
    left = seconds_left()
    return left is None or left - reserve >= step_seconds


@contextlib.contextmanager
def unbudgeted() -> Iterator[None]:
    """Run the body without charging its time to the current request (a model's one-time load); free outside one.

    >>> t = CancelToken(RequestBudget(10.0, 2**30, "test"), clock=iter([0.0, 1.0, 9.0, 9.0]).__next__,
    ...                 memory=lambda: 0)
    >>> with scope(t):
    ...     with unbudgeted():
    ...         pass
    ...     round(t.seconds_left(), 1)  # the 8 s inside were not charged
    9.0
    """
    token = _CURRENT.get()
    if token is None:
        yield
        return
    with token.unbudgeted():
        yield
