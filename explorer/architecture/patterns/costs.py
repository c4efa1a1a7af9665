"""What a pattern costs: non-zeros, density, fp32 score memory and FLOPs, at one length or many.

>>> from explorer.architecture.patterns.kinds import causal, full
>>> s = pattern_stats(causal(512))
>>> s.nnz, s.score_memory_bytes, s.dense_score_memory_bytes
(131328, 525312, 1048576)
>>> cost_curve(full(8), (1024, 2048)).nnz
(1048576.0, 4194304.0)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from explorer.architecture.patterns.counts import nnz_closed_form
from explorer.architecture.patterns.kinds import PatternSpec, effective_kind
from explorer.core.errors import ExplorerError

__all__ = ["FP32_BYTES", "CostCurve", "PatternStats", "cost_curve", "default_lengths", "describe",
           "pattern_stats"]

FP32_BYTES = 4


@dataclass(frozen=True)
class PatternStats:
    """Cost of one pattern for one head in one layer.

    ``score_memory_bytes`` counts the fp32 scores the pattern needs (4 bytes per allowed pair:
    what a sparse kernel stores); ``dense_score_memory_bytes`` is the full ``q x k`` matrix a
    dense implementation materialises before masking. ``flops`` = ``4 * d_head * nnz``: a
    multiply-add per head dimension for QK^T and again for the weighted sum of V.
    """

    kind: str
    effective_kind: str
    q_len: int
    k_len: int
    nnz: int
    density: float
    score_memory_bytes: int
    dense_score_memory_bytes: int
    flops: int
    note: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def describe(spec: PatternSpec) -> str:
    """One line naming the parameters of the pattern (shown under each diagram)."""
    kind = spec.kind
    if kind == "local-causal":
        return f"causal window of {spec.window} tokens (window_size)"
    if kind == "sliding-window":
        dil = f", dilation {spec.dilation}" if spec.dilation > 1 else ""
        return (f"attention_window {spec.window} ({spec.window // 2} each side{dil}), "
                f"global tokens {list(spec.global_positions)}")
    if kind == "block-sparse":
        limit = (5 + 2 * spec.num_random_blocks) * spec.block_size
        base = f"block_size {spec.block_size}, {spec.num_random_blocks} random blocks, seed {spec.seed}"
        if effective_kind(spec) == "full":
            return (f"{base}; {spec.q_len} <= (5 + 2*{spec.num_random_blocks})*{spec.block_size} = {limit}: "
                    "falls back to full")
        return f"{base}; 3 window + 2 global blocks"
    return {"full": "every token sees every token", "causal": "token i sees tokens 0..i",
            "cross": f"{spec.q_len} decoder tokens x {spec.k_len} encoder tokens"}[kind]


def pattern_stats(spec: PatternSpec, nnz: int | None = None) -> PatternStats:
    """Costs of ``spec``: closed form (no mask built), or from ``nnz`` counted on the mask."""
    nnz = nnz_closed_form(spec) if nnz is None else int(nnz)
    cells = spec.q_len * spec.k_len
    return PatternStats(
        kind=spec.kind, effective_kind=effective_kind(spec), q_len=spec.q_len, k_len=spec.k_len,
        nnz=nnz, density=nnz / cells, score_memory_bytes=FP32_BYTES * nnz,
        dense_score_memory_bytes=FP32_BYTES * cells, flops=4 * spec.d_head * nnz, note=describe(spec),
    )


def default_lengths(lo: int = 512, hi: int = 16_384, per_octave: int = 4) -> tuple[int, ...]:
    """Geometric grid of sequence lengths from ``lo`` to ``hi`` (both included)."""
    n = round(np.log2(hi / lo) * per_octave)
    return tuple(sorted({int(round(lo * 2 ** (k / per_octave))) for k in range(n + 1)}))


@dataclass(frozen=True)
class CostCurve:
    """Per-head, per-layer cost against sequence length (closed form, mean over ``layers``)."""

    label: str
    lengths: tuple[int, ...]
    nnz: tuple[float, ...]
    density: tuple[float, ...]
    score_memory_bytes: tuple[float, ...]
    flops: tuple[float, ...]
    max_positions: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


def cost_curve(
    specs: list[PatternSpec] | PatternSpec, lengths: tuple[int, ...] | None = None,
    label: str = "", max_positions: int | None = None,
) -> CostCurve:
    """Closed-form costs of the layer patterns ``specs`` at each length, averaged over layers.

    Averaging matters for alternating models: GPT-Neo's half-global layers keep it quadratic.
    """
    specs = [specs] if isinstance(specs, PatternSpec) else list(specs)
    if not specs:
        raise ExplorerError("cost_curve needs at least one pattern.")
    lengths = lengths or default_lengths()
    rows = [[pattern_stats(s.with_length(t)) for s in specs] for t in lengths]  # [len][layer]

    def mean(attr: str) -> tuple[float, ...]:
        return tuple(float(np.mean([getattr(s, attr) for s in r])) for r in rows)

    return CostCurve(label or specs[0].kind, tuple(lengths), mean("nnz"), mean("density"),
                     mean("score_memory_bytes"), mean("flops"), max_positions)
