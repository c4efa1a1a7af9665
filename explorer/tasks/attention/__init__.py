"""Real attention maps: extraction, mapping sparse outputs onto the square, views and compaction.

One module per noun; the package names the entry points (extraction, the result, a view of it, the models offered,
the display caps) and anything else is imported from its module:

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

from explorer.tasks.attention.blocks import DISPLAY_TOKENS
from explorer.tasks.attention.choices import model_options
from explorer.tasks.attention.extract import extract, extract_attention
from explorer.tasks.attention.maps import MAX_TOKENS, AttentionMaps
from explorer.tasks.attention.views import ViewMatrix, select_view

__all__ = ["AttentionMaps", "DISPLAY_TOKENS", "MAX_TOKENS", "ViewMatrix", "extract", "extract_attention",
           "model_options", "select_view"]
