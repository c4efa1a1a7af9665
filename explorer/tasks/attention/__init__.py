"""Real attention maps: extraction, mapping sparse outputs onto the square, views and compaction.

One module per noun; this package re-exports the public API, so ``attention.X`` works for all of them:

- :mod:`~explorer.tasks.attention.maps`: :class:`AttentionMaps`, the result (every matrix square, unpadded).
- :mod:`~explorer.tasks.attention.extract`: model + tokenizer + text -> maps (:func:`extract_attention`),
  or a catalog key / directory loaded with the eager kernel first (:func:`extract`).
- :mod:`~explorer.tasks.attention.sparse`: Longformer's windowed and BigBird's block-sparse outputs -> square.
- :mod:`~explorer.tasks.attention.views`: pure numpy views: one head, head average, rollout, decoder, cross.
- :mod:`~explorer.tasks.attention.compact`: pruned links, block means, uint8 codes, .npy bytes.
- :mod:`~explorer.tasks.attention.choices`: the models the viewer offers.
- :mod:`~explorer.tasks.attention.blocks`: long maps as block masses, full-resolution zooms and query rows.
- :mod:`~explorer.tasks.attention.stream`: one pass whose maps are reduced layer by layer as they come.

>>> import numpy as np
>>> from explorer.tasks import attention
>>> att = np.random.default_rng(0).random((2, 3, 5, 5)).astype(np.float32)  # (layers, H, L, L)
>>> att /= att.sum(-1, keepdims=True)
>>> maps = attention.AttentionMaps(model="demo", tokens=tuple("abcde"), attentions=att, family="encoder",
...                                source_format="square", n_input_tokens=5)
>>> view = attention.select_view(maps, "rollout", layer=1, token_range=(1, 4))
>>> view.title, view.matrix.shape, view.row_tokens
('Attention rollout: rollout through layer 1', (3, 3), ('b', 'c', 'd'))
"""

from __future__ import annotations

from explorer.tasks.attention.blocks import (
    BLOCK_SIDE,
    DISPLAY_TOKENS,
    ZOOM_SIDE,
    block_edges,
    block_for,
    block_mass,
    block_mean,
    query_row,
    zoom,
)
from explorer.tasks.attention.choices import BUNDLED, RANDOM_MAX_PARAMS, model_options
from explorer.tasks.attention.compact import bin_edges, downsample, npy_bytes, prune_links, quantize_uint8
from explorer.tasks.attention.extract import (
    check_text,
    extract,
    extract_attention,
    extract_detail,
    load_detail,
    n_maps,
    token_limit,
    viewer_tokens,
)
from explorer.tasks.attention.maps import MAX_TOKENS, AttentionMaps
from explorer.tasks.attention.sparse import longformer_to_square
from explorer.tasks.attention.views import (
    HEAD_VIEWS,
    VIEW_HELP,
    VIEW_LABELS,
    VIEWS,
    ViewMatrix,
    available_views,
    clamp_range,
    head_average,
    menu_views,
    rollout,
    select_view,
    self_attention_window,
)

__all__ = [
    "BLOCK_SIDE", "DISPLAY_TOKENS", "ZOOM_SIDE", "block_edges", "block_for", "block_mass", "block_mean",
    "extract_detail", "load_detail", "query_row", "zoom",
    "BUNDLED", "HEAD_VIEWS", "MAX_TOKENS", "RANDOM_MAX_PARAMS", "VIEWS", "VIEW_HELP", "VIEW_LABELS",
    "AttentionMaps", "ViewMatrix", "available_views", "bin_edges", "check_text", "clamp_range",
    "downsample", "extract", "extract_attention", "head_average", "longformer_to_square", "menu_views", "model_options",
    "npy_bytes", "prune_links", "quantize_uint8", "rollout", "select_view", "self_attention_window",
    "n_maps", "token_limit", "viewer_tokens",
]
