"""What a model costs: bytes on disk and in memory, latency and throughput on its device.

- **On disk**: the ``state_dict`` written with ``torch.save`` to a temporary file and its size read back
  (tied weights share one storage and are written once; int8 packed weights at one byte each).
- **In memory**: the bytes of every tensor in the ``state_dict``, each storage counted once (int8 packed
  weights are not parameters, so ``parameters()`` would miss them; tensor subclasses such as torchao's are
  counted by their inner tensors).
- **Latency**: the median of ``repeats`` timed calls after ``warmup`` untimed ones (the first calls pay
  for lazy initialisation and allocator growth), on the model's device, CUDA synchronised around each.
  Throughput is items per second at that median. The machine may be shared (one run here saw the same
  forward take 45 ms, then 900 ms while other jobs ran): :func:`time_pair` alternates the original and the
  copy call by call, so both medians see the same load and their ratio holds even when absolute times drift.

>>> import torch
>>> memory_bytes(torch.nn.Linear(4, 2))   # 8 weights + 2 biases, 4 bytes each
40
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import torch

__all__ = ["Timing", "disk_bytes", "memory_bytes", "time_call", "time_pair"]

WARMUP = 2
REPEATS = 5


@dataclass(frozen=True)
class Timing:
    """Median latency of one call (ms) and the items it handled per second at that median."""

    latency_ms: float
    throughput: float
    repeats: int


def _tensors(value: object) -> Iterable[torch.Tensor]:
    """Every plain tensor in a state_dict value (tuples of packed params, tensor subclasses unpacked)."""
    if isinstance(value, tuple | list):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, torch.Tensor):
        flatten = getattr(type(value), "__tensor_flatten__", None)
        if flatten is not None and type(value) not in (torch.Tensor, torch.nn.Parameter):
            names, _ctx = value.__tensor_flatten__()  # type: ignore[attr-defined]
            for name in names:
                yield from _tensors(getattr(value, name))
        else:
            yield value


def memory_bytes(model: torch.nn.Module) -> int:
    """Bytes of the tensors in ``model.state_dict()``, shared storages once."""
    seen: dict[tuple[str, int], int] = {}
    for value in model.state_dict(keep_vars=True).values():
        for t in _tensors(value):
            if t.device.type == "meta":
                continue
            key = (str(t.device), t.untyped_storage().data_ptr()) if t.numel() else (str(t.device), id(t))
            seen[key] = max(seen.get(key, 0), t.numel() * t.element_size())
    return sum(seen.values())


def disk_bytes(model: torch.nn.Module) -> int:
    """Size of ``torch.save(model.state_dict())`` in a temporary file, removed afterwards."""
    handle, path = tempfile.mkstemp(suffix=".pt", prefix="explorer-compress-")
    os.close(handle)
    try:
        torch.save(model.state_dict(), path)
        return os.path.getsize(path)
    finally:
        os.unlink(path)


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def time_call(fn: Callable[[], object], items: int, device: str = "cpu", warmup: int = WARMUP,
              repeats: int = REPEATS) -> Timing:
    """Median wall time of ``fn()`` over ``repeats`` runs after ``warmup``; ``items`` it handles per call."""
    repeats = max(1, int(repeats))
    with torch.inference_mode():
        for _ in range(max(0, int(warmup))):
            fn()
        times = []
        for _ in range(repeats):
            _sync(device)
            start = time.perf_counter()
            fn()
            _sync(device)
            times.append(time.perf_counter() - start)
    median = statistics.median(times)
    return Timing(median * 1000, items / median if median > 0 else float("inf"), repeats)


def time_pair(fn_a: Callable[[], object], fn_b: Callable[[], object], items: int, device: str = "cpu",
              warmup: int = WARMUP, repeats: int = REPEATS) -> tuple[Timing, Timing]:
    """Timings of ``fn_a`` and ``fn_b`` measured alternately (a, b, a, b, ...): the same machine load for both."""
    repeats = max(1, int(repeats))
    times: tuple[list[float], list[float]] = ([], [])
    with torch.inference_mode():
        for _ in range(max(0, int(warmup))):
            fn_a()
            fn_b()
        for _ in range(repeats):
            for fn, out in ((fn_a, times[0]), (fn_b, times[1])):
                _sync(device)
                start = time.perf_counter()
                fn()
                _sync(device)
                out.append(time.perf_counter() - start)
    a, b = (statistics.median(t) for t in times)
    return (Timing(a * 1000, items / a if a > 0 else float("inf"), repeats),
            Timing(b * 1000, items / b if b > 0 else float("inf"), repeats))
