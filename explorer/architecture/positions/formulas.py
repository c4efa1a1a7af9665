"""Position formulas, torch-free: sinusoid tables, T5's and DeBERTa's buckets, ALiBi's slopes, rotary angles.

Each is written as the paper or transformers computes it (float32 where transformers rounds in float32, so bucket
boundaries fall where the model's own do); ``tests/test_positions_formulas.py`` checks them against the modules.

>>> [int(b) for b in t5_bucket(np.array([-200, -9, -1, 0, 1, 9, 200]), True, 32, 128)]
[15, 8, 1, 0, 17, 24, 31]
>>> [int(b) for b in t5_bucket(np.array([-200, -9, -1, 0, 1, 9]), False, 32, 128)]
[31, 9, 1, 0, 0, 0]
>>> [round(float(s), 4) for s in alibi_slopes(4)], [round(float(s), 4) for s in alibi_slopes(6)]
([0.25, 0.0625, 0.0156, 0.0039], [0.25, 0.0625, 0.0156, 0.0039, 0.5, 0.125])
>>> [round(float(f), 4) for f in rope_frequencies(8, 10_000.0)]
[1.0, 0.1, 0.01, 0.001]
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["LAYOUTS", "SINUSOID_STYLES", "alibi_bias", "alibi_slopes", "deberta_bucket", "rope_angles",
           "rope_frequencies", "rope_rotate", "rope_score", "sinusoid_dot", "sinusoid_frequencies", "sinusoid_table",
           "t5_bucket"]

# interleaved: sin on even dimensions, cos on odd (Vaswani et al. 2017, DistilBERT's frozen table);
# halves: every sine first, then every cosine, the paper's frequencies (CTRL);
# tensor2tensor: halves, frequencies spaced by ln(10000) / (half - 1) (M2M-100, fairseq)
SINUSOID_STYLES = ("interleaved", "halves", "tensor2tensor")
# half: dimension j pairs with j + d/2 (Gemma, Llama: "rotate half"); pairs: 2j with 2j + 1 (GPT-J, the paper)
LAYOUTS = ("half", "pairs")
BASE = 10_000.0


def sinusoid_frequencies(dim: int, style: str = "interleaved") -> np.ndarray:
    """``(dim // 2,)`` angular frequencies: position p turns pair k by ``p * w_k``."""
    half = dim // 2
    if style == "tensor2tensor":
        return np.exp(np.arange(half, dtype=np.float64) * -(math.log(BASE) / max(half - 1, 1)))
    return BASE ** (-2.0 * np.arange(half, dtype=np.float64) / dim)


def sinusoid_table(rows: int, dim: int, style: str = "interleaved", padding_idx: int | None = None) -> np.ndarray:
    """``(rows, dim)`` the fixed table, row p for position p (M2M-100's rows start at its offset; its padding row
    is zero)."""
    angles = np.arange(rows, dtype=np.float64)[:, None] * sinusoid_frequencies(dim, style)[None, :]
    table = np.zeros((rows, dim))
    if style == "interleaved":
        table[:, 0:2 * angles.shape[1]:2], table[:, 1:2 * angles.shape[1]:2] = np.sin(angles), np.cos(angles)
    else:
        half = angles.shape[1]
        table[:, :half], table[:, half:2 * half] = np.sin(angles), np.cos(angles)  # an odd width keeps a zero column
    if padding_idx is not None and 0 <= padding_idx < rows:
        table[padding_idx] = 0.0
    return table


def sinusoid_dot(distances: np.ndarray, dim: int, style: str = "interleaved") -> np.ndarray:
    """``pe(p) . pe(p + d)`` for each distance d: ``sum_k cos(d w_k)``, the same for every p (sin a sin b +
    cos a cos b = cos(a - b)): the table encodes distance in its dot products."""
    w = sinusoid_frequencies(dim, style)
    return np.cos(np.asarray(distances, dtype=np.float64)[:, None] * w[None, :]).sum(axis=1)


def t5_bucket(relative: np.ndarray, bidirectional: bool, num_buckets: int, max_distance: int) -> np.ndarray:
    """T5's bucket of each ``key - query`` distance (``T5Attention._relative_position_bucket``): one bucket per
    distance up to half the buckets, then log-spaced up to ``max_distance``, the last bucket beyond. An encoder
    gives earlier and later keys buckets of their own; a decoder looks back only (later keys share bucket 0)."""
    relative = np.asarray(relative, dtype=np.int64)
    out = np.zeros_like(relative)
    if bidirectional:
        num_buckets //= 2
        out += (relative > 0).astype(np.int64) * num_buckets
        distance = np.abs(relative)
    else:
        distance = -np.minimum(relative, 0)
    exact = num_buckets // 2
    scale = np.float32(math.log(max_distance / exact))  # transformers divides a float32 tensor by this
    with np.errstate(divide="ignore"):
        large = exact + (np.log(np.maximum(distance, 1).astype(np.float32) / np.float32(exact)) / scale
                         * np.float32(num_buckets - exact)).astype(np.int64)
    return out + np.where(distance < exact, distance, np.minimum(large, num_buckets - 1))


def deberta_bucket(relative: np.ndarray, bucket_size: int, max_position: int) -> np.ndarray:
    """DeBERTa-v2's log bucket of each ``query - key`` distance (``make_log_bucket_position``), clamped to the
    ``2 * bucket_size`` rows of the relative table as attention reads it; ``bucket_size`` <= 0: the distance itself
    (DeBERTa v1), clamped to ``max_position``."""
    relative = np.asarray(relative, dtype=np.int64)
    if bucket_size <= 0:
        return np.clip(relative, -max_position, max_position - 1)
    mid = bucket_size // 2
    sign = np.sign(relative)
    near = (relative < mid) & (relative > -mid)
    apart = np.where(near, mid - 1, np.abs(relative)).astype(np.float32)
    log_pos = np.ceil(np.log(apart / np.float32(mid)) / np.log(np.float32((max_position - 1) / mid))
                      * np.float32(mid - 1)) + mid
    buckets = np.where(apart <= mid, relative, log_pos * sign).astype(np.int64)
    return np.clip(buckets, -bucket_size, bucket_size - 1)


def alibi_slopes(heads: int) -> np.ndarray:
    """ALiBi's slope per head (Press et al. 2022): ``2^(-8/n)`` to the powers 1..n for a power of two n; otherwise
    those of the power of two below, then every other slope of the one above."""
    low = 2 ** math.floor(math.log2(heads))
    slopes = [2.0 ** (-8.0 * (i + 1) / low) for i in range(low)]
    if low < heads:
        slopes += [2.0 ** (-4.0 * (2 * i + 1) / low) for i in range(heads - low)]
    return np.array(slopes)


def alibi_bias(distances: np.ndarray, slope: float) -> np.ndarray:
    """ALiBi's bias on a score for each distance between query and key: ``-slope * |d|`` (no weights, no
    embedding: attention is penalised linearly with distance)."""
    return -float(slope) * np.abs(np.asarray(distances, dtype=np.float64))


def rope_frequencies(dims: int, base: float) -> np.ndarray:
    """``(dims // 2,)``: pair j of the rotated dimensions turns by ``base ** (-2j / dims)`` radians a position."""
    return 1.0 / (float(base) ** (np.arange(0, dims, 2, dtype=np.float64) / dims))


def rope_angles(positions: np.ndarray, dims: int, base: float) -> np.ndarray:
    """``(P, dims // 2)``: the angle each pair is turned by at each position."""
    return np.asarray(positions, dtype=np.float64)[:, None] * rope_frequencies(dims, base)[None, :]


def _pairs(dims: int, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """The two dimensions of every rotated pair."""
    if layout == "pairs":
        return np.arange(0, dims, 2), np.arange(1, dims, 2)
    return np.arange(dims // 2), np.arange(dims // 2, dims)


def rope_rotate(x: np.ndarray, positions: np.ndarray, base: float, layout: str = "half",
                rotary_dims: int | None = None) -> np.ndarray:
    """``x`` of shape ``(..., P, d)`` with row p turned by position ``positions[p]``: each pair (a, b) of the first
    ``rotary_dims`` dimensions becomes ``(a cos - b sin, a sin + b cos)``; the rest pass unchanged (GPT-J rotates
    64 of its 256)."""
    x = np.asarray(x, dtype=np.float64)
    dims = int(rotary_dims or x.shape[-1])
    angles = rope_angles(positions, dims, base)  # (P, dims // 2)
    cos, sin = np.cos(angles), np.sin(angles)
    first, second = _pairs(dims, layout)
    out = x.copy()
    a, b = x[..., first], x[..., second]
    out[..., first], out[..., second] = a * cos - b * sin, a * sin + b * cos
    return out


def rope_score(distances: np.ndarray, dims: int, base: float) -> np.ndarray:
    """The score of a query and a key that are equal (all ones) before rotation, against their distance, over
    ``dims``: ``(2 / dims) sum_j cos(d theta_j)`` (1 at distance 0). Its fall with distance is RoPE's long-range
    decay (Su et al. 2021, section 3.4.3); the layout does not change it."""
    theta = rope_frequencies(dims, base)
    return 2.0 * np.cos(np.asarray(distances, dtype=np.float64)[:, None] * theta[None, :]).sum(axis=1) / dims
