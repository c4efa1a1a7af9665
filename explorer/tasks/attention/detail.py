"""One head of a long text, whatever the maps hold: its block map, a full-resolution zoom, one query's row.

:class:`AttentionMaps` holds every map in full for texts up to :func:`explorer.runtime.capacity.viewer_limit`
tokens and block masses beyond (``maps.block > 1``). These functions answer the same three questions
for both: from the full maps they slice; from block masses they ask ``rerun`` (a fresh pass that keeps
only the requested cells: :func:`explorer.tasks.attention.extract.load_detail`), since block masses keep
no single cells. What they return is bounded: at most ``BLOCK_SIDE^2`` cells, ``ZOOM_SIDE^2`` cells, ``L``.

>>> import numpy as np
>>> from explorer.tasks.attention.maps import AttentionMaps
>>> att = np.full((1, 1, 600, 600), 1 / 600, dtype=np.float32)
>>> maps = AttentionMaps("m", ("t",) * 600, att, "encoder", "square", 600)
>>> block_map(maps, 0, 0).shape, zoom_cells(maps, 0, 0, (10, 20), (0, 5)).shape, query_cells(maps, 0, 0, 7).shape
((200, 200), (10, 5), (600,))
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.tasks.attention.blocks import block_for, block_mass, check_span, query_row, zoom
from explorer.tasks.attention.maps import AttentionMaps

__all__ = ["Rerun", "block_map", "block_size", "query_cells", "zoom_cells"]

# (layer, head, rows, cols or None for every key) -> (r, c) float32 cells from a fresh forward pass
Rerun = Callable[[int, int, tuple[int, int], "tuple[int, int] | None"], np.ndarray]


def _check(maps: AttentionMaps, layer: int, head: int) -> tuple[int, int]:
    if not 0 <= int(layer) < maps.n_layers or not 0 <= int(head) < maps.n_heads:
        raise ExplorerError(f"Layer {layer}, head {head} does not exist: pick layer 0 to {maps.n_layers - 1} "
                            f"and head 0 to {maps.n_heads - 1}.")
    return int(layer), int(head)


def block_size(maps: AttentionMaps) -> int:
    """Tokens per cell side of :func:`block_map` for these maps."""
    return maps.block if maps.block > 1 else block_for(len(maps.tokens))


def block_map(maps: AttentionMaps, layer: int, head: int | None) -> np.ndarray:
    """``(n, n)`` block masses of one head (``head=None``: the mean of the heads); rows sum to 1."""
    layer, head0 = _check(maps, layer, head or 0)
    stack = maps.attentions[layer]  # (H, n, n) block masses or (H, L, L) full
    mats = stack if head is None else stack[head0:head0 + 1]
    if maps.block == 1:
        mats = block_mass(mats, block_size(maps))
    return mats.mean(axis=0, dtype=np.float64).astype(np.float32)


def zoom_cells(maps: AttentionMaps, layer: int, head: int, rows: tuple[int, int], cols: tuple[int, int],
               rerun: Rerun | None = None) -> np.ndarray:
    """Full-resolution ``[rows, cols]`` of one head: a slice of the full map, or ``rerun``'s cells."""
    layer, head = _check(maps, layer, head)
    length = len(maps.tokens)
    r, c = check_span(rows, length, "query"), check_span(cols, length, "key")
    if maps.block == 1:
        return zoom(maps.attentions[layer, head], r, c)
    if rerun is None:
        raise ExplorerError("These maps hold block averages only: zooming needs the model again.")
    return np.asarray(rerun(layer, head, r, c), dtype=np.float32)


def query_cells(maps: AttentionMaps, layer: int, head: int, query: int, rerun: Rerun | None = None) -> np.ndarray:
    """Query ``query``'s weights over every key at full resolution: ``(L,)`` float32."""
    layer, head = _check(maps, layer, head)
    length = len(maps.tokens)
    if isinstance(query, bool) or not 0 <= int(query) < length:
        raise ExplorerError(f"Query {query} does not exist: pick 0 to {length - 1}.")
    if maps.block == 1:
        return query_row(maps.attentions[layer, head], int(query))
    if rerun is None:
        raise ExplorerError("These maps hold block averages only: a query's row needs the model again.")
    return np.asarray(rerun(layer, head, (int(query), int(query) + 1), None), dtype=np.float32)[0]
