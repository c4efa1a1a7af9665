"""Long attention maps without sending T x T cells: block masses, zooms and single query rows.

- :func:`block_for`: tokens per block so a side of ``T`` becomes at most :data:`BLOCK_SIDE` cells.
- :func:`block_mass`: ``(..., Lq, Lk)`` -> ``(..., ceil(Lq/b), ceil(Lk/b))``; cell ``[I, J]`` is the
  mean over the queries of block ``I`` of the attention they give to the keys of block ``J`` (a sum).
  Rows of a row-stochastic map still sum to 1; edge blocks (shorter than ``b``) are averaged over
  their real queries only. :func:`block_mean` is the plain cell mean (mass / keys in the block).
- :func:`zoom` and :func:`query_row`: full-resolution slices, bounded to :data:`ZOOM_SIDE` per side.

Works on numpy arrays and on torch tensors alike (one implementation, in torch: extraction reduces
each layer on its device as it comes; see :mod:`explorer.tasks.attention.stream`).

>>> import numpy as np
>>> att = np.full((4, 4), 0.25, dtype=np.float32)  # uniform, row-stochastic
>>> block_mass(att, 3).tolist()  # blocks of 3 and 1 tokens: rows still sum to 1
[[0.75, 0.25], [0.75, 0.25]]
>>> block_for(4096), block_for(300), block_for(100)
(16, 2, 1)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from explorer.core.errors import ExplorerError

__all__ = ["BLOCK_SIDE", "DISPLAY_TOKENS", "ZOOM_SIDE", "block_edges", "block_for", "block_mass", "block_mean",
           "check_span", "query_row", "zoom"]

BLOCK_SIDE = 256  # cells per side of a block map: 256^2 float32 is 256 KB a head
DISPLAY_TOKENS = 512  # longer texts are drawn as block maps (a 512^2 heatmap is ~1.4 MB of JSON already)
ZOOM_SIDE = 512  # a full-resolution zoom shows at most this many queries and keys


def block_for(length: int, side: int = BLOCK_SIDE) -> int:
    """The smallest ``b`` with ``ceil(length / b) <= side``."""
    return max(1, math.ceil(int(length) / max(1, int(side))))


def block_edges(length: int, block: int) -> list[int]:
    """Token positions where the blocks start, and ``length`` (``ceil(length / block) + 1`` numbers)."""
    return [*range(0, int(length), int(block)), int(length)]


def _as_tensor(att: Any) -> tuple[Any, bool]:
    import torch

    if isinstance(att, torch.Tensor):
        return att, False
    return torch.from_numpy(np.ascontiguousarray(att, dtype=np.float32)), True


def _block_sums(att: Any, block: int) -> tuple[Any, Any, Any]:
    """Sums over each ``block x block`` tile ``(..., n_q, n_k)`` and the queries / keys per block."""
    import torch

    lq, lk = att.shape[-2], att.shape[-1]
    nq, nk = math.ceil(lq / block), math.ceil(lk / block)
    x = torch.nn.functional.pad(att.float(), (0, nk * block - lk, 0, nq * block - lq))  # zeros past the end
    x = x.reshape(*att.shape[:-2], nq, block, nk, block).sum(dim=(-3, -1))  # (..., nq, nk)
    rows = torch.full((nq,), float(block), device=att.device)
    rows[-1] = lq - (nq - 1) * block  # the last block holds only the real tokens
    cols = torch.full((nk,), float(block), device=att.device)
    cols[-1] = lk - (nk - 1) * block
    return x, rows, cols


def block_mass(att: Any, block: int) -> Any:
    """Mean over each query block of the sum over each key block: rows sum to what the map's rows sum to."""
    if int(block) < 1:
        raise ExplorerError(f"A block holds at least 1 token (got {block}).")
    t, was_numpy = _as_tensor(att)
    sums, rows, _cols = _block_sums(t, int(block))
    out = sums / rows[:, None]
    return out.cpu().numpy().astype(np.float32) if was_numpy else out


def block_mean(att: Any, block: int) -> Any:
    """The plain mean of each tile's real cells (a cell on the scale of the full map's cells)."""
    if int(block) < 1:
        raise ExplorerError(f"A block holds at least 1 token (got {block}).")
    t, was_numpy = _as_tensor(att)
    sums, rows, cols = _block_sums(t, int(block))
    out = sums / (rows[:, None] * cols[None, :])
    return out.cpu().numpy().astype(np.float32) if was_numpy else out


def check_span(span: tuple[int, int] | None, length: int, what: str, most: int = ZOOM_SIDE) -> tuple[int, int]:
    """A valid ``[start, end)`` within ``0..length`` of at most ``most`` tokens (the whole when ``None``
    and it fits), else an ExplorerError saying which range to pick."""
    start, end = (0, int(length)) if span is None else (max(0, int(span[0])), min(int(length), int(span[1])))
    if end <= start:
        raise ExplorerError(f"The {what} range {span} is empty: pick start < end within 0..{length}.")
    if end - start > most:
        raise ExplorerError(f"The {what} range {start}:{end} spans {end - start:,} tokens; a full-resolution "
                            f"zoom shows at most {most:,}: pick a narrower range.")
    return start, end


def zoom(att: Any, rows: tuple[int, int], cols: tuple[int, int]) -> np.ndarray:
    """The full-resolution cells ``att[..., r0:r1, c0:c1]`` as float32 numpy (a slice, nothing averaged)."""
    r0, r1 = check_span(rows, att.shape[-2], "query")
    c0, c1 = check_span(cols, att.shape[-1], "key")
    part = att[..., r0:r1, c0:c1]
    return np.asarray(part.float().cpu().numpy() if hasattr(part, "cpu") else part, dtype=np.float32)


def query_row(att: Any, query: int) -> np.ndarray:
    """Query ``query``'s attention over every key at full resolution: ``(..., Lk)`` float32."""
    if isinstance(query, bool) or not 0 <= int(query) < att.shape[-2]:
        raise ExplorerError(f"Query {query} does not exist: pick 0 to {att.shape[-2] - 1}.")
    part = att[..., int(query), :]
    return np.asarray(part.float().cpu().numpy() if hasattr(part, "cpu") else part, dtype=np.float32)
