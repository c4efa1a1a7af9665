"""The process-wide cache of loaded models: least recently used out, bounded by memory.

One cache is shared by every Streamlit session and CLI call in the process. Its budget is
``EXPLORER_MODEL_CACHE_MB``, else half the available RAM; the newest entry is never evicted, so
one model larger than the budget still loads. ``key_lock`` gives one lock per key, so a model that
several sessions ask for at once is loaded once. Entries are shared: never mutate them.

>>> import torch
>>> model_bytes(torch.nn.Linear(4, 2))  # 4 * 2 weights + 2 biases, 4 bytes each
40
"""

from __future__ import annotations

import gc
import os
import threading
from collections import OrderedDict
from typing import Any

import torch

__all__ = ["budget_bytes", "cache_info", "cached", "clear_cache", "key_lock", "model_bytes", "store"]

_CACHE: OrderedDict[tuple, tuple[Any, int]] = OrderedDict()  # key -> (LoadedModel, bytes); LRU order
_CACHE_LOCK = threading.Lock()  # guards _CACHE and _KEY_LOCKS (held briefly, never while loading)
_KEY_LOCKS: dict[tuple, threading.Lock] = {}  # one per cache key: a model is loaded once


def budget_bytes() -> int:
    """Memory the cache may hold: ``EXPLORER_MODEL_CACHE_MB``, else half the available RAM."""
    raw = os.environ.get("EXPLORER_MODEL_CACHE_MB", "").strip()
    if raw.isdigit():
        return int(raw) * 2**20
    import psutil

    return int(psutil.virtual_memory().available * 0.5)


def model_bytes(model: torch.nn.Module) -> int:
    """Bytes of a model's parameters and buffers in memory (tied weights counted once; those an
    offloaded model streams from disk sit on the "meta" device and take none).

    >>> model_bytes(torch.nn.Linear(2, 2)), model_bytes(torch.nn.Linear(2, 2, device="meta"))
    (24, 0)
    """
    tensors = {id(t): t for t in [*model.parameters(), *model.buffers()] if t.device.type != "meta"}
    return sum(t.numel() * t.element_size() for t in tensors.values())


def store(key: tuple, loaded: Any) -> None:
    """Insert ``loaded`` (anything with a ``.model``) and evict least recently used entries beyond
    the budget (never the new one)."""
    with _CACHE_LOCK:
        _CACHE[key] = (loaded, model_bytes(loaded.model))
        budget = budget_bytes()
        while len(_CACHE) > 1 and sum(b for _, b in _CACHE.values()) > budget:
            old, _ = _CACHE.popitem(last=False)
            _KEY_LOCKS.pop(old, None)


def cached(key: tuple) -> Any | None:
    """The entry for ``key`` (now the most recently used), or None."""
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
        return hit[0] if hit else None


def key_lock(key: tuple) -> threading.Lock:
    """The one lock of ``key``: hold it while loading so concurrent requests wait for one load."""
    with _CACHE_LOCK:
        return _KEY_LOCKS.setdefault(key, threading.Lock())


def cache_info() -> list[dict[str, Any]]:
    """The models in memory, least recently used first (for the Models page).

    The cache key's second item is the task (see ``explorer.loading.load_model``).
    """
    with _CACHE_LOCK:
        entries = list(_CACHE.items())
    return [{**m.to_dict(), "task": k[1], "memory_mb": round(b / 2**20, 1)} for k, (m, b) in entries]


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
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if name is None:  # not glibc (macOS, musl): nothing to trim
        return
    libc = ctypes.CDLL(name)
    if hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)
