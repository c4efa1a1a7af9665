"""Keeping the browser light: fewer links, smaller grids, one byte per cell, and .npy exports.

- :func:`prune_links`: the strongest keys of each query (the link view draws only those).
- :func:`downsample`: block means over the token axes (the model-view mosaic), :func:`bin_edges`.
- :func:`quantize_uint8`: 0..255 codes instead of float32.

>>> import numpy as np
>>> m = np.array([[0.7, 0.2, 0.1], [0.05, 0.05, 0.9]], dtype=np.float32)
>>> prune_links(m, top_k=1).tolist()  # (query, key, weight) rows
[[0.0, 0.0, 0.699999988079071], [1.0, 2.0, 0.8999999761581421]]
>>> bin_edges(10, 4).tolist()
[0, 2, 5, 8, 10]
"""

from __future__ import annotations

import io

import numpy as np

from explorer.core.errors import ExplorerError

__all__ = ["bin_edges", "downsample", "npy_bytes", "prune_links", "quantize_uint8"]


def prune_links(matrix: np.ndarray, top_k: int = 3, min_weight: float = 0.0) -> np.ndarray:
    """The ``top_k`` strongest keys of every query, as rows ``(query, key, weight)``.

    ``matrix``: ``(Lq, Lk)`` -> ``(n, 3)`` float32 sorted by query then descending weight, with
    ``n <= Lq * top_k``; links under ``min_weight`` are dropped. Keeping a few per token (not a
    global threshold) means every token keeps its own strongest link.
    """
    if matrix.ndim != 2:
        raise ExplorerError(f"Links need a 2-D matrix, got shape {matrix.shape}.")
    k = max(1, min(int(top_k), matrix.shape[1]))
    keys = np.argpartition(-matrix, k - 1, axis=1)[:, :k]  # (Lq, k), unordered
    weights = np.take_along_axis(matrix, keys, axis=1)
    order = np.argsort(-weights, axis=1, kind="stable")
    keys, weights = np.take_along_axis(keys, order, 1), np.take_along_axis(weights, order, 1)
    queries = np.repeat(np.arange(matrix.shape[0]), k)
    links = np.stack([queries, keys.ravel(), weights.ravel()], axis=1).astype(np.float32)
    return links[links[:, 2] >= min_weight]


def bin_edges(length: int, size: int) -> np.ndarray:
    """``min(length, size) + 1`` integer edges splitting ``length`` tokens into near-equal bins."""
    n = max(1, min(int(length), int(size)))
    return np.linspace(0, length, n + 1).round().astype(np.int64)


def downsample(att: np.ndarray, size: int) -> np.ndarray:
    """Block means over the last two axes so neither exceeds ``size``: ``(..., Lq, Lk)`` -> ``(..., q, k)``.

    Means (not sub-sampling, which could skip the one strong cell) keep every token's weight
    visible, and a cell's value stays on the scale of the full matrix's cells.
    """
    rows, cols = bin_edges(att.shape[-2], size), bin_edges(att.shape[-1], size)
    summed = np.add.reduceat(np.add.reduceat(att, rows[:-1], axis=-2), cols[:-1], axis=-1)
    area = np.outer(np.diff(rows), np.diff(cols))  # (q, k) cells per block
    return (summed / area).astype(np.float32)


def quantize_uint8(att: np.ndarray, vmax: float | None = None) -> tuple[np.ndarray, float]:
    """Map ``[0, vmax]`` to 0..255 (1 byte per cell instead of 4); returns the codes and ``vmax``."""
    top = float(np.max(att)) if vmax is None else float(vmax)
    top = top if top > 0 else 1.0
    codes = np.clip(np.rint(att * (255.0 / top)), 0, 255).astype(np.uint8)
    return codes, top


def npy_bytes(array: np.ndarray) -> bytes:
    """The array as a ``.npy`` file (what the page's download button and the CLI write)."""
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    return buf.getvalue()
