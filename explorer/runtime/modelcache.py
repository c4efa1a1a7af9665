"""The process-wide cache of loaded models: least recently used out, bounded by memory twice.

One cache is shared by every Streamlit session and CLI call in the process. Two byte bounds:

- while requests run, at most :func:`budget_bytes` (``EXPLORER_MODEL_CACHE_MB``, else half the
  available RAM); the newest entry is never evicted, so one model larger than the budget still loads;
- once the server is idle, at most :func:`resident_bytes` (``EXPLORER_RESIDENT_MB``, else a tenth of
  the RAM, at least ``MIN_RESIDENT_MB``: room for the bundled decoder): entries not used for
  :func:`idle_seconds` beyond it are evicted by :func:`settle`, which a janitor thread runs every few
  seconds while no model work is running, and the freed memory is handed back to the system
  (``gc.collect`` + glibc's ``malloc_trim``); for ``QUIET_TRIMS`` periods after the last request it
  trims even when nothing was evicted, for what closed sessions free later. So after a page that loaded
  eight models finishes, the server's memory comes back near idle without anyone pressing "Free memory".

``key_lock`` gives one lock per key, so a model that several sessions ask for at once is loaded
once. Entries are shared: never mutate them.

>>> import torch
>>> model_bytes(torch.nn.Linear(4, 2))  # 4 * 2 weights + 2 biases, 4 bytes each
40
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol

import psutil
import torch

from explorer.core import settings
from explorer.core.memorypolicy import MODEL_CACHE_SHARE, RESIDENT_SHARE
from explorer.runtime import workers

__all__ = ["JANITOR_PERIOD_S", "MIN_RESIDENT_MB", "budget_bytes", "cache_info", "cached", "clear_cache",
           "held_names", "idle_seconds", "key_lock", "model_bytes", "resident_bytes", "settle", "store"]

_CACHE: OrderedDict[tuple, list[Any]] = OrderedDict()  # key -> [LoadedModel, bytes, last use]; LRU order
_CACHE_LOCK = threading.Lock()  # guards _CACHE and _KEY_LOCKS (held briefly, never while loading)
_KEY_LOCKS: dict[tuple, threading.Lock] = {}  # one per cache key: a model is loaded once
MIN_RESIDENT_MB = 1_536  # the bundled Gemma 3 270M in float32 (1.07 GB) and a small encoder stay warm
JANITOR_PERIOD_S = 5.0
QUIET_TRIMS = 6  # janitor periods after the last finished request in which freed memory is handed back
_JANITOR: list[threading.Thread] = []


class Resident(Protocol):
    """What the cache holds: a :class:`explorer.runtime.loading.LoadedModel` (which imports this module, so it
    is described here rather than imported)."""

    @property
    def model(self) -> torch.nn.Module: ...

    def to_dict(self) -> dict[str, object]: ...


def budget_bytes() -> int:
    """Memory the cache may hold: ``EXPLORER_MODEL_CACHE_MB``, else half the available RAM."""
    if (mb := settings.MODEL_CACHE_MB.read()) is not None:
        return mb * 2**20
    return int(psutil.virtual_memory().available * MODEL_CACHE_SHARE)


def resident_bytes() -> int:
    """Memory the cache keeps once idle: ``EXPLORER_RESIDENT_MB``, else a tenth of the RAM, at least
    ``MIN_RESIDENT_MB`` (never more than :func:`budget_bytes`)."""
    if (mb := settings.RESIDENT_MB.read()) is not None:
        return mb * 2**20
    return min(budget_bytes(), max(MIN_RESIDENT_MB * 2**20, int(psutil.virtual_memory().total * RESIDENT_SHARE)))


def idle_seconds() -> float:
    """How long an entry must go unused before :func:`settle` may evict it (``EXPLORER_IDLE_EVICT_S``, default 60)."""
    return settings.IDLE_EVICT_S.value()


def model_bytes(model: torch.nn.Module) -> int:
    """Bytes of a model's parameters and buffers in memory (tied weights counted once; those an
    offloaded model streams from disk sit on the "meta" device and take none).

    >>> model_bytes(torch.nn.Linear(2, 2)), model_bytes(torch.nn.Linear(2, 2, device="meta"))
    (24, 0)
    """
    tensors = {id(t): t for t in [*model.parameters(), *model.buffers()] if t.device.type != "meta"}
    return sum(t.numel() * t.element_size() for t in tensors.values())


def store(key: tuple, loaded: Resident) -> None:
    """Insert ``loaded`` (anything with a ``.model``) and evict least recently used entries beyond
    the budget (never the new one)."""
    with _CACHE_LOCK:
        _CACHE[key] = [loaded, model_bytes(loaded.model), time.monotonic()]
        budget = budget_bytes()
        while len(_CACHE) > 1 and sum(e[1] for e in _CACHE.values()) > budget:
            old, _ = _CACHE.popitem(last=False)
            _KEY_LOCKS.pop(old, None)
    _start_janitor()


def cached(key: tuple) -> Any | None:
    """The entry for ``key`` (now the most recently used), or None."""
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            hit[2] = time.monotonic()
        return hit[0] if hit else None


def held_names() -> set[tuple[str, str]]:
    """(model name, task) of every cached entry: a request that asks for one adds no memory."""
    with _CACHE_LOCK:
        return {(k[0], k[1]) for k in _CACHE}


def key_lock(key: tuple) -> threading.Lock:
    """The one lock of ``key``: hold it while loading so concurrent requests wait for one load."""
    with _CACHE_LOCK:
        return _KEY_LOCKS.setdefault(key, threading.Lock())


def cache_info() -> list[dict[str, object]]:
    """The models in memory, least recently used first (for the Models page).

    The cache key's second item is the task (see ``explorer.runtime.loading.load_model``).
    """
    with _CACHE_LOCK:
        entries = list(_CACHE.items())
    return [{**m.to_dict(), "task": k[1], "memory_mb": round(b / 2**20, 1)} for k, (m, b, _) in entries]


def clear_cache() -> None:
    """Forget every cached model and hand the memory back to the system (the Models page's button).

    Dropping the references is not enough on Linux: glibc keeps freed blocks in its arenas, so the
    process stayed 3-5 GB larger after "Free memory". A collection frees reference cycles (models
    hold some), and ``malloc_trim(0)`` returns the free arena pages to the operating system.
    """
    with _CACHE_LOCK:
        _CACHE.clear()
        _KEY_LOCKS.clear()
    gc.collect()
    _trim_malloc()


def _trim_malloc() -> None:
    name = ctypes.util.find_library("c")
    if name is None:  # not glibc (macOS, musl): nothing to trim
        return
    libc = ctypes.CDLL(name)
    if hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


def settle(now: float | None = None) -> list[tuple]:
    """Evict least recently used entries unused for :func:`idle_seconds` while the cache holds more
    than :func:`resident_bytes`; hand the memory back when any went. Returns the evicted keys."""
    now, idle, keep = time.monotonic() if now is None else now, idle_seconds(), resident_bytes()
    gone: list[tuple] = []
    with _CACHE_LOCK:
        for key in list(_CACHE):  # least recently used first
            if sum(e[1] for e in _CACHE.values()) <= keep:
                break
            if now - _CACHE[key][2] >= idle:
                del _CACHE[key]
                _KEY_LOCKS.pop(key, None)
                gone.append(key)
    if gone:
        gc.collect()  # models hold reference cycles: without a collection their tensors stay
        _trim_malloc()
    return gone


def _janitor(busy: Callable[[], bool], finished: Callable[[], int] = lambda: 0) -> None:
    seen, quiet = finished(), QUIET_TRIMS
    while True:
        time.sleep(JANITOR_PERIOD_S)
        if busy():  # never while a request runs: it may be about to use a model again
            continue
        if finished() != seen:
            seen, quiet = finished(), 0
        if not settle() and quiet < QUIET_TRIMS:
            # Sessions free their results and widgets after their last request (a closed tab is dropped
            # seconds later), when no eviction trims any more: glibc keeps those pages in its arenas.
            _trim_malloc()
        quiet += 1


def _start_janitor() -> None:
    """Start the janitor thread once per process (on the first model stored)."""
    with _CACHE_LOCK:
        if _JANITOR:
            return
        _JANITOR.append(threading.Thread(target=_janitor, args=(lambda: workers.stats()["running"] > 0,
                                                                 workers.finished),
                                         name="explorer-modelcache-janitor", daemon=True))
    _JANITOR[0].start()
