"""Cached wrappers of the attention-maps page (the only Streamlit caching of this area).

The model itself is cached process-wide by ``explorer.loading.load_model`` (an LRU bounded by
memory, shared by all sessions), so no ``st.cache_resource`` here. The full attention tensor
(up to 12 x 12 x 512 x 512 float32 = 150 MB) is cached once per input in :func:`_maps`; the
page only ever asks for small things derived from it (a summary, one view, the grid figure),
each cached separately, so a rerun after moving a slider does not copy the big tensor.
All arguments are plain hashable values: ``Req`` bundles what identifies one extraction.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import streamlit as st

from explorer import attention
from explorer.plots import attention as plots

BUNDLED = "sentence-bert"
RANDOM_MAX_PARAMS = 450_000_000  # random init of bigger variants takes minutes and GBs here


class Req(NamedTuple):
    """One extraction request (hashable, so it can key every cache below)."""

    model: str
    text: str
    target: str | None = None
    max_tokens: int = attention.MAX_TOKENS
    random_weights: bool = False
    global_positions: tuple[int, ...] = (0,)  # Longformer only: tokens with global attention


@st.cache_data(max_entries=2, show_spinner=False)
def _maps(req: Req) -> attention.AttentionMaps:
    return attention.extract(req.model, req.text, target=req.target, max_tokens=req.max_tokens,
                             random_weights=req.random_weights, global_positions=req.global_positions)


@st.cache_data(max_entries=16, show_spinner=False)
def summary(req: Req) -> dict[str, Any]:
    """``AttentionMaps.to_dict()``: layers, heads, tokens, shapes, notices (small)."""
    return _maps(req).to_dict()


@st.cache_data(max_entries=32, show_spinner=False)
def view(req: Req, name: str, layer: int, head: int, token_range: tuple[int, int]) -> attention.ViewMatrix:
    """One view's ``(Lq, Lk)`` matrix, zoomed to ``token_range``."""
    return attention.select_view(_maps(req), name, layer, head, token_range)


@st.cache_data(max_entries=4, show_spinner=False)
def grid_figure(req: Req, token_range: tuple[int, int], cell: int = 64):
    """The model view (every layer x head) of the zoomed tokens, and its JSON size in bytes."""
    maps = _maps(req)
    start, end = attention.clamp_range(token_range, len(maps.tokens))
    title = "Model view" + (" (encoder)" if maps.family == "encoder-decoder" else "") + ": every layer x head"
    fig = plots.model_grid(maps.attentions[:, :, start:end, start:end], cell=cell, untrained=maps.untrained,
                           title=title)
    return fig, plots.payload_bytes(fig)


def tensor_npy(req: Req) -> bytes:
    """The whole ``(layers, H, L, L)`` self-attention tensor as .npy (built only when clicked)."""
    return attention.npy_bytes(_maps(req).attentions)


def view_frame(v: attention.ViewMatrix) -> pd.DataFrame:
    """The view as a table: one row per query token, one column per key token (CSV export)."""
    cols = [f"{v.col_offset + i} {t}" for i, t in enumerate(v.col_tokens)]
    df = pd.DataFrame(np.round(v.matrix.astype(np.float64), 6), columns=cols)
    df.insert(0, "query", [f"{v.row_offset + i} {t}" for i, t in enumerate(v.row_tokens)])
    return df


@st.cache_data(max_entries=4, ttl=60, show_spinner=False)
def model_options(random_weights: bool) -> list[tuple[str, str]]:
    """(key, label) of the models one can pick: bundled first, then catalog keys whose weights are
    on disk; in random-weight mode every catalog variant small enough to initialise here."""
    from explorer import catalog, weights

    variants = catalog.load_catalog()
    if random_weights:
        return [(k, f"{v.name} (untrained)") for k, v in variants.items()
                if (v.published_params or 0) <= RANDOM_MAX_PARAMS and "large" not in (k + v.name).lower()]
    ready = [s.key for s in weights.status_all() if s.status == "ready"]
    keys = [BUNDLED] + [k for k in ready if k != BUNDLED]
    return [(k, f"{variants[k].name} (bundled)" if k == BUNDLED else variants[k].name if k in variants else k)
            for k in keys]
