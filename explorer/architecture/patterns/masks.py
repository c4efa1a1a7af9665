"""Boolean masks of a :class:`PatternSpec`: who may attend to whom, built in row chunks.

Every mask has shape ``(q_len, k_len)`` (query x key); ``True`` means the query token may attend to
that key. Masks are produced in row chunks (:func:`mask_rows`, :func:`iter_mask_chunks`) so that
counting or drawing a 16k x 16k pattern never materialises it: :func:`mask_view` max-pools for
drawing and counts in the same pass, and :func:`build_mask` refuses anything too large to hold.

>>> from explorer.architecture.patterns.kinds import causal
>>> build_mask(causal(3)).astype(int).tolist()
[[1, 0, 0], [1, 1, 0], [1, 1, 1]]
>>> view = mask_view(causal(1000), max_cells=100)
>>> view.pooled.shape, view.factor, view.nnz_counted
((100, 100), 10, 500500)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from explorer.architecture.patterns.kinds import PatternSpec, effective_kind
from explorer.core.errors import ExplorerError

__all__ = [
    "CHUNK_CELLS", "MaskView", "bigbird_block_layout", "bigbird_random_blocks", "build_mask",
    "iter_mask_chunks", "mask_rows", "mask_view", "nnz_from_mask", "pooled_mask",
]

# Rows x columns handled per chunk when a mask is streamed (about 4 MB of bools).
CHUNK_CELLS = 1 << 22


@lru_cache(maxsize=64)
def bigbird_random_blocks(n_blocks: int, num_random_blocks: int, seed: int) -> np.ndarray:
    """Random key blocks of each middle query block row, seeded: ``(n_blocks - 2, r)`` int.

    Row ``i - 1`` holds the picks of query block ``i`` (1..n-2): ``r`` distinct blocks among the
    middle blocks, never the global blocks (0, n-1) nor the window ``i-1, i, i+1``, as in the
    paper. (transformers' training-mode sampler may overlap the window for the last two rows;
    in eval mode it fills every random slot with block 0, already global, so inference reaches
    window + global pairs only while still computing the r extra blocks. The diagram shows
    the paper's rule, which is what training sees.)
    """
    rng = np.random.default_rng(seed)
    picks = np.zeros((max(n_blocks - 2, 0), num_random_blocks), dtype=np.int64)
    middle = np.arange(1, n_blocks - 1)
    for i in range(1, n_blocks - 1):
        allowed = middle[np.abs(middle - i) > 1]
        if allowed.size < num_random_blocks:
            raise ExplorerError(
                f"{n_blocks} blocks leave only {allowed.size} random candidates for block {i}: "
                f"use a longer input or fewer random blocks."
            )
        picks[i - 1] = np.sort(rng.choice(allowed, size=num_random_blocks, replace=False))
    picks.flags.writeable = False  # cached: callers must not modify it
    return picks


def bigbird_block_layout(spec: PatternSpec) -> np.ndarray:
    """Which (query block, key block) pairs attend: ``(n, n)`` bool, ``n = ceil(T / block_size)``."""
    n = -(-spec.q_len // spec.block_size)
    layout = np.zeros((n, n), dtype=bool)
    layout[[0, -1], :] = True  # global query blocks see everything
    layout[:, [0, -1]] = True  # ... and everything sees them
    idx = np.arange(n)
    for offset in (-1, 0, 1):  # sliding window of 3 blocks
        rows = idx[(idx + offset >= 0) & (idx + offset < n)]
        layout[rows, rows + offset] = True
    if n > 2 and spec.num_random_blocks:
        rand = bigbird_random_blocks(n, spec.num_random_blocks, spec.seed)
        layout[np.repeat(np.arange(1, n - 1), spec.num_random_blocks), rand.ravel()] = True
    return layout


def mask_rows(spec: PatternSpec, start: int, stop: int) -> np.ndarray:
    """Query rows ``start:stop`` of the pattern: ``(stop - start, k_len)`` bool."""
    i = np.arange(start, stop, dtype=np.int32)[:, None]  # (R, 1); int32 halves the memory traffic
    j = np.arange(spec.k_len, dtype=np.int32)[None, :]  # (1, K)
    kind = effective_kind(spec)
    if kind in ("full", "cross"):
        return np.ones((stop - start, spec.k_len), dtype=bool)
    if kind == "causal":
        return j <= i
    if kind == "local-causal":
        return (j <= i) & (i - j < spec.window)
    if kind == "sliding-window":
        diff = i - j
        band = np.abs(diff) <= spec.dilation * (spec.window // 2)
        if spec.dilation > 1:  # only every dilation-th key inside the (wider) reach
            band &= diff % spec.dilation == 0
        is_global = np.zeros(spec.k_len, dtype=bool)
        is_global[list(spec.global_positions)] = True
        return band | is_global[start:stop, None] | is_global[None, :]
    b = spec.block_size  # block-sparse: expand the block layout to tokens
    block_rows = bigbird_block_layout(spec)[np.arange(start, stop) // b]  # (R, n_blocks)
    return np.repeat(block_rows, b, axis=1)[:, : spec.k_len]


def iter_mask_chunks(spec: PatternSpec, rows_multiple: int = 1) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(start_row, rows)`` chunks covering the mask, each about ``CHUNK_CELLS`` cells.

    Chunk heights are multiples of ``rows_multiple`` so that pooling can work chunk by chunk.
    """
    step = max(rows_multiple, (CHUNK_CELLS // spec.k_len) // rows_multiple * rows_multiple)
    for start in range(0, spec.q_len, step):
        yield start, mask_rows(spec, start, min(start + step, spec.q_len))


def build_mask(spec: PatternSpec, max_cells: int = 1 << 26) -> np.ndarray:
    """The whole mask ``(q_len, k_len)`` bool; refuses more than ``max_cells`` entries."""
    if spec.q_len * spec.k_len > max_cells:
        raise ExplorerError(
            f"A {spec.q_len:,} x {spec.k_len:,} mask is too large to build whole: "
            f"use pooled_mask() to draw it or nnz_closed_form() to count it."
        )
    return mask_rows(spec, 0, spec.q_len)


def nnz_from_mask(spec: PatternSpec) -> int:
    """Count allowed pairs by streaming the mask (never holds more than one chunk)."""
    return int(sum(int(np.count_nonzero(rows)) for _, rows in iter_mask_chunks(spec)))


@dataclass(frozen=True)
class MaskView:
    """What a diagram needs: the max-pooled mask ``(ceil(q/f), ceil(k/f))`` bool, the pooling
    factor ``f`` and the exact non-zero count of the full mask, counted in the same pass."""

    pooled: np.ndarray
    factor: int
    nnz_counted: int


def mask_view(spec: PatternSpec, max_cells: int = 512) -> MaskView:
    """Stream the mask once: max-pool it for drawing and count its True entries.

    A cell is True when any query/key pair inside its ``f x f`` tile may attend, so thin
    bands stay visible; ``f = 1`` (exact) when both sides fit in ``max_cells``.
    """
    f = max(1, -(-max(spec.q_len, spec.k_len) // max_cells))
    n_rows, n_cols = -(-spec.q_len // f), -(-spec.k_len // f)
    out = np.zeros((n_rows, n_cols), dtype=bool)
    pad_cols, nnz = n_cols * f - spec.k_len, 0
    for start, rows in iter_mask_chunks(spec, rows_multiple=f):
        nnz += int(np.count_nonzero(rows))
        pad_rows = -(-rows.shape[0] // f) * f - rows.shape[0]
        padded = np.pad(rows, ((0, pad_rows), (0, pad_cols)))  # pad with False: pooling ignores it
        tiles = padded.reshape(-1, f, n_cols, f).any(axis=(1, 3))  # (rows/f, n_cols)
        out[start // f : start // f + tiles.shape[0]] = tiles
    return MaskView(out, f, nnz)


def pooled_mask(spec: PatternSpec, max_cells: int = 512) -> tuple[np.ndarray, int]:
    """Max-pooled mask for drawing and its factor ``f`` (see :func:`mask_view`)."""
    view = mask_view(spec, max_cells)
    return view.pooled, view.factor
