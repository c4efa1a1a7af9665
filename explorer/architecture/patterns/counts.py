"""Closed-form non-zero counts of attention masks: exact for any length, no mask built.

The tests check each formula against the mask itself (:func:`explorer.architecture.patterns.masks.nnz_from_mask`)
for every kind, including BigBird's padded lengths and Longformer's dilated windows with globals.

>>> from explorer.architecture.patterns.kinds import block_sparse, causal
>>> nnz_closed_form(causal(4))
10
>>> nnz_closed_form(block_sparse(16_384, 64, 3)) < 16_384 ** 2 // 10
True
"""

from __future__ import annotations

from explorer.architecture.patterns.kinds import PatternSpec, effective_kind

__all__ = ["nnz_block_sparse", "nnz_closed_form", "nnz_sliding_window"]


def _band_degree(pos: int, seq_len: int, half: int, dilation: int) -> int:
    """Keys of a dilated band seen by query ``pos``: itself plus up to ``half`` on each side."""
    return 1 + min(half, pos // dilation) + min(half, (seq_len - 1 - pos) // dilation)


def nnz_sliding_window(seq_len: int, window: int, dilation: int, global_positions: tuple[int, ...]) -> int:
    """Longformer pairs: dilated band united with the full rows and columns of global tokens.

    ``|band u rows(G) u cols(G)| = |band| + |rows(G) u cols(G)| - |band n (rows(G) u cols(G))|``,
    where the last term is ``2 * sum(deg(g)) - |band n (G x G)|`` (the band is symmetric);
    the G x G term costs O(g^2), never O(T^2).
    """
    t, d, h = seq_len, dilation, window // 2
    k = min(h, (t - 1) // d)  # offsets 1..k fit inside the sequence
    band = t + 2 * (k * t - d * k * (k + 1) // 2)
    g = len(global_positions)
    if not g:
        return band
    rows_cols = 2 * g * t - g * g
    deg = sum(_band_degree(p, t, h, d) for p in global_positions)
    both = sum(1 for a in global_positions for b in global_positions
               if abs(a - b) <= h * d and (a - b) % d == 0)
    return band + rows_cols - (2 * deg - both)


def nnz_block_sparse(seq_len: int, block_size: int, num_random_blocks: int) -> int:
    """BigBird pairs (no fallback): block count of the padded layout, then crop to ``seq_len``.

    With n blocks: 2 global rows of n blocks; rows 1 and n-2 see 2 global + 2 window + r blocks
    (their third window block is global); the n-4 others see 2 + 3 + r. Cropping the ``p`` padded
    tokens removes ``p`` full rows and ``p`` full columns of the (global) last block.
    """
    b, r = block_size, num_random_blocks
    n = -(-seq_len // b)
    blocks = 2 * n + 2 * (4 + r) + (n - 4) * (5 + r)
    padded, p = n * b, n * b - seq_len
    return blocks * b * b - 2 * p * padded + p * p


def nnz_closed_form(spec: PatternSpec) -> int:
    """Number of True entries of the mask, from a formula (exact, any length)."""
    t, kind = spec.q_len, effective_kind(spec)
    if kind in ("full", "cross"):
        return spec.q_len * spec.k_len
    if kind == "causal":
        return t * (t + 1) // 2
    if kind == "local-causal":
        w = min(spec.window, t)  # first w rows see 1..w keys, the rest see w
        return w * (w + 1) // 2 + (t - w) * w
    if kind == "sliding-window":
        return nnz_sliding_window(t, spec.window, spec.dilation, spec.global_positions)
    return nnz_block_sparse(t, spec.block_size, spec.num_random_blocks)
