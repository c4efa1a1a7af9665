"""What a compression study returns: one :class:`Row` per model measured, the :class:`Study` that holds them.

Shared by :mod:`explorer.compression.study` (copies: casts, int8, pruning) and
:mod:`explorer.compression.earlyexit` (FastBERT's exits), so the page, the chart and the CLI's JSON read
one shape whatever the method. A study is measured in two parts: the original once per :class:`Settings`
(a :class:`Baseline`), then each method against it; :class:`Study` holds both and the :class:`Ratios` of
every copy to the original, computed here once for the page, the chart and the CLI.

>>> ratio(5.0, 10.0), ratio(5.0, 0.0), ratio(5.0, None), ratio(1.0, float("inf")), ratio(float("nan"), 2.0)
(0.5, None, None, None, None)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from explorer.compression import measure, quality
from explorer.core.notices import Notice, texts
from explorer.runtime.resolve import ModelRef

__all__ = ["Baseline", "ExitReference", "Progress", "Ratios", "Row", "Settings", "Study", "ratio"]

Progress = Callable[[float, str], None]  # (fraction done, what is happening)


@dataclass(frozen=True)
class Row:
    """One model's measurements (the original's row has method "original")."""

    method: str
    description: str
    size_bytes: int
    memory_bytes: int
    latency_ms: float
    throughput: float
    baseline_latency_ms: float  # the original's, timed alternately with this copy (same machine load)
    quality: quality.Quality
    sparsity: float
    answer: str

    def to_dict(self) -> dict[str, object]:
        return {"method": self.method, "description": self.description, "size_bytes": self.size_bytes,
                "memory_bytes": self.memory_bytes, "latency_ms": round(self.latency_ms, 3),
                "throughput": round(self.throughput, 3), "baseline_latency_ms": round(self.baseline_latency_ms, 3),
                "quality": self.quality.to_dict(), "sparsity": round(self.sparsity, 4), "answer": self.answer}


def ratio(value: float, base: float | None) -> float | None:
    """``value / base``; None where the original's figure ``base`` is absent, zero or not finite, or ``value`` is
    not finite: a ratio to nothing would read as "infinitely better" or crash."""
    if base is None or base == 0 or not math.isfinite(base) or not math.isfinite(value):
        return None
    return value / base


@dataclass(frozen=True)
class Ratios:
    """One copy against the original, each as copy / original (1 = the same): size on disk, latency (against the
    original timed beside this copy, :attr:`Row.baseline_latency_ms`) and the headline quality metric (its
    direction is the metric's: higher is better for agreement, lower for perplexity). None: no ratio (see
    :func:`ratio`)."""

    size: float | None
    latency: float | None
    quality: float | None

    @classmethod
    def of(cls, row: Row, baseline: Row) -> Ratios:
        return cls(ratio(row.size_bytes, baseline.size_bytes), ratio(row.latency_ms, row.baseline_latency_ms),
                   ratio(row.quality.value, row.quality.baseline_value))


@dataclass(frozen=True)
class Study:
    """The original and every compressed copy, measured in the same run on the same device; ``ratios`` has one
    :class:`Ratios` per row, in order, computed when the study is made."""

    model: str
    name: str
    decoder: bool
    device: str
    device_name: str
    dtype: str
    throughput_unit: str
    prompt: str
    baseline: Row
    rows: tuple[Row, ...]
    notices: tuple[Notice, ...] = field(default=())
    ratios: tuple[Ratios, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "ratios", tuple(Ratios.of(r, self.baseline) for r in self.rows))  # frozen: set once

    def records(self) -> list[dict[str, Any]]:
        """One flat record per method: the CLI's JSON (``compress KEY --method M --json``)."""
        b = self.baseline
        return [{"model": self.model, "method": r.method, "size_bytes": r.size_bytes,
                 "baseline_size_bytes": b.size_bytes, "memory_bytes": r.memory_bytes,
                 "baseline_memory_bytes": b.memory_bytes, "latency_ms": round(r.latency_ms, 3),
                 "baseline_latency_ms": round(r.baseline_latency_ms, 3), "throughput": round(r.throughput, 3),
                 "throughput_unit": self.throughput_unit,
                 "quality": {"metric": r.quality.metric, "value": r.quality.to_dict()["value"],
                             "baseline_value": r.quality.to_dict()["baseline_value"],
                             **r.quality.to_dict()["extra"], "probes_kept": r.quality.probes_kept,
                             "probes_total": r.quality.probes_total},
                 "sparsity": round(r.sparsity, 4), "device": self.device, "notes": texts(self.notices)}
                for r in self.rows]

    def to_dict(self) -> dict[str, object]:
        return {"model": self.model, "name": self.name, "decoder": self.decoder, "device": self.device,
                "device_name": self.device_name, "dtype": self.dtype, "throughput_unit": self.throughput_unit,
                "prompt": self.prompt, "baseline": self.baseline.to_dict(),
                "rows": [r.to_dict() for r in self.rows], "notices": texts(self.notices)}


@dataclass(frozen=True)
class Settings:
    """What one original is measured for: the model, where it runs, the prompt and candidates the answers use,
    the timed repeats, and whether it is a lab model's early exit (``exits``) or compressed copies. Hashable:
    one baseline per value (the page caches by it)."""

    key: str
    exits: bool
    device: str  # resolved (explorer.runtime.placement.resolve_device)
    models_dir: str | None = None
    prompt: str | None = None
    candidates: tuple[str, ...] = ()
    repeats: int = measure.REPEATS


@dataclass(frozen=True)
class ExitReference:
    """Early exit's reference: every layer's answer on the held-out examples and what is timed."""

    probs: torch.Tensor  # (L, N, classes) every classifier's distribution
    labels: torch.Tensor  # (N,)
    timed: tuple[tuple[torch.Tensor, torch.Tensor], ...]  # (ids, mask), each (1, T): examples timed one by one
    seq_len: int


@dataclass(frozen=True)
class Baseline:
    """The original measured once for ``settings``: a :class:`Study` without rows (model, device, prompt, the
    original's row, its notices) and the outputs each method is compared with."""

    settings: Settings
    study: Study
    reference: quality.Reference | ExitReference
    model: ModelRef | None = None  # the original as resolved once: every method's copy loads from it
