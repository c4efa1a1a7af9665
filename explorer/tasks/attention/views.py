"""Views of extracted attention (pure numpy): one head, the head average, rollout, decoder and cross.

:func:`select_view` gives the ``(Lq, Lk)`` :class:`ViewMatrix` behind one view, zoomed to a token
range; :func:`rollout` follows Abnar & Zuidema (2020). ``VIEW_LABELS`` and ``VIEW_HELP`` name and
explain every view (``grid`` is the page's all-layers mosaic, drawn from :func:`self_attention_window`).

>>> import numpy as np
>>> att = np.full((2, 3, 4, 4), 0.25, dtype=np.float32)  # (layers, H, L, L): uniform attention
>>> head_average(att).shape, bool(np.allclose(rollout(att).sum(-1), 1.0))
((2, 4, 4), True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.tasks.attention.maps import AttentionMaps

__all__ = [
    "HEAD_VIEWS", "VIEWS", "VIEW_HELP", "VIEW_LABELS", "ViewMatrix", "available_views", "clamp_range",
    "head_average", "menu_views", "rollout", "select_view", "self_attention_window",
]

VIEWS = ("head", "head-average", "rollout", "decoder", "cross")
HEAD_VIEWS = ("head", "decoder", "cross")  # views of one head (the others merge the heads)
VIEW_LABELS = {
    "head": "Head", "grid": "Model view (all layers x heads)", "head-average": "Head average",
    "rollout": "Rollout", "decoder": "Decoder self-attention", "cross": "Cross-attention",
}
VIEW_HELP = {
    "head": "One head of one layer: row i shows how query token i spreads its attention over the keys.",
    "grid": "Every layer x head at a glance (block-averaged for long texts, square-root colour scale).",
    "head-average": "The mean of all heads of the layer: what the layer as a whole mixes in.",
    "rollout": "Attention rollout (Abnar & Zuidema 2020): each layer's head average mixed 50/50 with the "
               "identity (the residual path) and multiplied through the layers; row i = where position i's "
               "content comes from.",
    "decoder": "The decoder's causal self-attention over the decoder text (teacher-forced).",
    "cross": "Cross-attention: each decoder token (rows) over the encoder's tokens (columns).",
}
_TITLES = {"head": "Self-attention", "head-average": "Head average", "rollout": "Attention rollout",
           "decoder": "Decoder self-attention", "cross": "Cross-attention"}


def head_average(att: np.ndarray) -> np.ndarray:
    """Mean over heads: ``(layers, H, Lq, Lk)`` -> ``(layers, Lq, Lk)``; rows still sum to 1."""
    return att.mean(axis=1, dtype=np.float64).astype(np.float32)


def rollout(att: np.ndarray, residual: float = 0.5) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema 2020): how much each input token flows into each position.

    ``att``: ``(layers, H, L, L)`` -> ``(layers, L, L)``; entry ``[l, i, j]`` is the share of
    token ``j`` in position ``i`` after layer ``l``. Each layer's head average is mixed with the
    identity, ``residual * I + (1 - residual) * A``, because the residual connection carries the
    token itself past the attention; rows are re-normalised and the layers multiplied in order.
    """
    if att.ndim != 4 or att.shape[-1] != att.shape[-2]:
        raise ExplorerError(f"Rollout needs square self-attention (layers, H, L, L), got {att.shape}.")
    if not 0.0 <= residual < 1.0:
        raise ExplorerError(f"The residual weight must be in [0, 1), got {residual}.")
    eye = np.eye(att.shape[-1])
    flow = np.empty(att.shape[:1] + att.shape[2:], dtype=np.float32)
    acc = eye
    for layer, mean in enumerate(att.mean(axis=1, dtype=np.float64)):  # (L, L) per layer
        mixed = residual * eye + (1.0 - residual) * mean
        mixed /= mixed.sum(axis=-1, keepdims=True)
        acc = mixed @ acc  # later layers act on what earlier ones already mixed
        flow[layer] = acc
    return flow


@dataclass(frozen=True, eq=False)
class ViewMatrix:
    """One 2-D matrix to draw or export: ``matrix`` ``(Lq, Lk)`` float32 with its token labels."""

    view: str
    title: str
    matrix: np.ndarray
    row_tokens: tuple[str, ...]  # queries
    col_tokens: tuple[str, ...]  # keys
    row_offset: int = 0  # position of the first row / column in the full text (token zoom)
    col_offset: int = 0

    def to_dict(self, decimals: int = 4) -> dict[str, object]:
        return {"view": self.view, "title": self.title, "shape": list(self.matrix.shape),
                "row_tokens": list(self.row_tokens), "col_tokens": list(self.col_tokens),
                "row_offset": self.row_offset, "col_offset": self.col_offset,
                "matrix": np.round(self.matrix.astype(np.float64), decimals).tolist()}

    def to_frame(self, decimals: int = 6) -> Any:
        """A pandas table (CSV export): one row per query token, one column per key, both
        labelled ``"<position> <token>"`` so repeated tokens stay apart."""
        import pandas as pd

        cols = [f"{self.col_offset + i} {t}" for i, t in enumerate(self.col_tokens)]
        df = pd.DataFrame(np.round(self.matrix.astype(np.float64), decimals), columns=cols)
        df.insert(0, "query", [f"{self.row_offset + i} {t}" for i, t in enumerate(self.row_tokens)])
        return df


def available_views(maps: AttentionMaps) -> tuple[str, ...]:
    """Views that make sense for this model (decoder and cross only for encoder-decoders)."""
    base = ("head", "head-average", "rollout")
    return base + ("decoder", "cross") if maps.cross_attentions is not None else base


def menu_views(has_cross: bool) -> tuple[str, ...]:
    """What the viewer offers, in order: the views plus ``grid`` (every layer x head) second."""
    return ("head", "grid", "head-average", "rollout") + (("decoder", "cross") if has_cross else ())


def _check_index(value: int, size: int, what: str) -> int:
    if not isinstance(value, (int, np.integer)) or not 0 <= int(value) < size:
        raise ExplorerError(f"{what} {value} does not exist: pick 0 to {size - 1}.")
    return int(value)


def _stack_for(maps: AttentionMaps, view: str) -> np.ndarray:
    """The ``(layers, H, Lq, Lk)`` stack a view reads from."""
    if view in ("decoder", "cross"):
        stack = maps.decoder_attentions if view == "decoder" else maps.cross_attentions
        if stack is None:
            raise ExplorerError(f"The '{view}' view needs an encoder-decoder model (T5, BART); "
                                f"{maps.model} has only self-attention.")
        return stack
    if view not in VIEWS:
        raise ExplorerError(f"Unknown view '{view}': choose one of {', '.join(VIEWS)}.")
    return maps.attentions


def clamp_range(token_range: tuple[int, int] | None, length: int) -> tuple[int, int]:
    """A valid ``[start, end)`` token window (the whole text when ``None``)."""
    if token_range is None:
        return 0, length
    start, end = max(0, int(token_range[0])), min(length, int(token_range[1]))
    if end - start < 1:
        raise ExplorerError(f"The token range {token_range} is empty: pick start < end within 0..{length}.")
    return start, end


def self_attention_window(maps: AttentionMaps, token_range: tuple[int, int] | None) -> np.ndarray:
    """Self-attention of the tokens in ``token_range`` only: ``(layers, H, l, l)`` (a view, no copy)."""
    start, end = clamp_range(token_range, len(maps.tokens))
    return maps.attentions[:, :, start:end, start:end]


def select_view(maps: AttentionMaps, view: str, layer: int, head: int = 0,
                token_range: tuple[int, int] | None = None) -> ViewMatrix:
    """The ``(Lq, Lk)`` matrix behind one view, zoomed to ``token_range`` of the text tokens.

    head: ``attentions[layer, head]``; head-average and rollout ignore ``head``; decoder:
    ``decoder_attentions[layer, head]`` ``(T, T)``; cross: ``cross_attentions[layer, head]`` ``(T, L)``.
    """
    stack = _stack_for(maps, view)
    layer = _check_index(layer, stack.shape[0], "Layer")
    if view in HEAD_VIEWS:
        head = _check_index(head, stack.shape[1], "Head")
        mat, what = stack[layer, head], f"layer {layer}, head {head}"
    elif view == "head-average":
        mat, what = stack[layer].mean(axis=0), f"layer {layer}, mean of {stack.shape[1]} heads"
    else:
        mat, what = rollout(stack)[layer], f"rollout through layer {layer}"
    rows = maps.decoder_tokens if view in ("decoder", "cross") else maps.tokens
    cols = maps.decoder_tokens if view == "decoder" else maps.tokens
    r0, r1 = (0, len(rows)) if view in ("decoder", "cross") else clamp_range(token_range, len(rows))
    c0, c1 = (0, len(cols)) if view == "decoder" else clamp_range(token_range, len(cols))
    return ViewMatrix(view=view, title=f"{_TITLES[view]}: {what}",
                      matrix=np.ascontiguousarray(mat[r0:r1, c0:c1], dtype=np.float32),
                      row_tokens=tuple(rows[r0:r1]), col_tokens=tuple(cols[c0:c1]),
                      row_offset=r0, col_offset=c0)
