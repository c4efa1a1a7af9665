"""What a compression study returns: one :class:`Row` per model measured, the :class:`Study` that holds them.

Shared by :mod:`explorer.compression.study` (copies: casts, int8, pruning) and
:mod:`explorer.compression.earlyexit` (FastBERT's exits), so the page, the chart and the CLI's JSON read
one shape whatever the method.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from explorer.compression import quality
from explorer.core.notices import Notice, texts

__all__ = ["Progress", "Row", "Study"]

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

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "description": self.description, "size_bytes": self.size_bytes,
                "memory_bytes": self.memory_bytes, "latency_ms": round(self.latency_ms, 3),
                "throughput": round(self.throughput, 3), "baseline_latency_ms": round(self.baseline_latency_ms, 3), "quality": self.quality.to_dict(),
                "sparsity": round(self.sparsity, 4), "answer": self.answer}


@dataclass(frozen=True)
class Study:
    """The original and every compressed copy, measured in the same run on the same device."""

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

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "name": self.name, "decoder": self.decoder, "device": self.device,
                "device_name": self.device_name, "dtype": self.dtype, "throughput_unit": self.throughput_unit,
                "prompt": self.prompt, "baseline": self.baseline.to_dict(),
                "rows": [r.to_dict() for r in self.rows], "notices": texts(self.notices)}
