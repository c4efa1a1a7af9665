"""Cached wrappers of the attention-maps page (the only Streamlit caching of this area).

The model itself is cached process-wide by ``explorer.runtime.loading.load_model`` (an LRU bounded by
memory, shared by all sessions), so no ``st.cache_resource`` here. The full attention tensor
(up to 12 x 12 x 512 x 512 float32 = 150 MB) is cached once per input in :func:`_maps`; the
page only ever asks for small things derived from it (a summary, one view, the grid figure),
each cached separately, so a rerun after moving a slider does not copy the big tensor.
All arguments are plain hashable values: ``Req`` bundles what identifies one extraction.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from app.caches.anytime import cache_complete
from explorer.core.notices import Notice
from explorer.plots import attention as plots
from explorer.runtime import capacity, workers
from explorer.runtime.resolve import ModelRef
from explorer.tasks import attention
from explorer.tasks.attention import blocks, compact, detail
from explorer.tasks.attention.extract import load_detail


class Req(NamedTuple):
    """One extraction request (hashable, so it can key every cache below)."""

    model: ModelRef  # resolved once by the page (untrained or not; its stamp changes with the weights)
    text: str
    target: str | None = None
    max_tokens: int = attention.MAX_TOKENS
    global_positions: tuple[int, ...] = (0,)  # Longformer only: tokens with global attention
    device: str = "auto"  # the sidebar's choice (app.views.device_picker): part of every cache key below
    dtype: str = "auto"


@cache_complete(max_entries=2, show_spinner=False)
@workers.queued  # model work waits its turn (explorer.runtime.workers); cache hits do not
def _maps(req: Req) -> attention.AttentionMaps:
    return attention.extract(req.model, req.text, target=req.target, max_tokens=req.max_tokens,
                             global_positions=req.global_positions, device=req.device, dtype=req.dtype)


@st.cache_data(max_entries=16, show_spinner=False)
def summary(req: Req) -> tuple[dict[str, Any], tuple[Notice, ...]]:
    """``AttentionMaps.to_dict()`` (layers, heads, tokens, shapes) and the notices with their kinds."""
    maps = _maps(req)
    return maps.to_dict(), maps.notices


@st.cache_data(max_entries=32, show_spinner=False)
def view(req: Req, name: str, layer: int, head: int, token_range: tuple[int, int]) -> attention.ViewMatrix:
    """One view's ``(Lq, Lk)`` matrix, zoomed to ``token_range``."""
    return attention.select_view(_maps(req), name, layer, head, token_range)


@st.cache_data(max_entries=4, show_spinner=False)
def grid_figure(req: Req, token_range: tuple[int, int]) -> tuple[go.Figure, int]:
    """The model view (every layer x head) of the zoomed tokens, and its JSON size in bytes."""
    fig = plots.maps_grid(_maps(req), token_range)
    return fig, plots.payload_bytes(fig)


def tensor_npy(req: Req) -> bytes:
    """The whole ``(layers, H, L, L)`` tensor as .npy: the download button calls this only when
    clicked (deferred), so 150 MB of bytes are neither built nor cached on every rerun."""
    return compact.npy_bytes(_maps(req).attentions)


@st.cache_data(max_entries=4, ttl=60, show_spinner=False)
def token_ceiling(device: str = "auto") -> tuple[int, str]:
    """The most tokens any model may take on the chosen device, and why (free memory re-read every minute)."""
    from explorer.runtime.placement import resolve_device

    facts = capacity.device_facts(resolve_device(device))
    return capacity.attention_ceiling(facts), capacity.attention_tokens(facts, 12, 12).reason


@st.cache_data(max_entries=32, show_spinner=False)
def block_map(req: Req, layer: int, head: int | None) -> tuple[np.ndarray, list[int]]:
    """One head's (or the heads' mean) block map and the token position where each block starts."""
    maps = _maps(req)
    return detail.block_map(maps, layer, head), blocks.block_edges(len(maps.tokens), detail.block_size(maps))


@workers.queued
def _rerun(req: Req, layer: int, head: int, rows: tuple[int, int], cols: tuple[int, int] | None) -> np.ndarray:
    return load_detail(req.model, req.text, layer=layer, head=head, rows=rows, cols=cols,
                                 target=req.target, max_tokens=req.max_tokens,
                                 global_positions=req.global_positions, device=req.device, dtype=req.dtype)


@st.cache_data(max_entries=16, show_spinner=False)
def zoom(req: Req, layer: int, head: int, rows: tuple[int, int], cols: tuple[int, int]) -> attention.ViewMatrix:
    """Full-resolution cells of one head in a query x key range (a fresh pass when only blocks are kept)."""
    maps = _maps(req)
    cells = detail.zoom_cells(maps, layer, head, rows, cols, rerun=lambda *a: _rerun(req, *a))
    return attention.ViewMatrix("head", f"Layer {layer}, head {head}: queries {rows[0]}-{rows[1] - 1}, keys "
                                f"{cols[0]}-{cols[1] - 1} at full resolution", cells,
                                maps.tokens[rows[0]:rows[1]], maps.tokens[cols[0]:cols[1]], rows[0], cols[0])


@st.cache_data(max_entries=16, show_spinner=False)
def query_row(req: Req, layer: int, head: int, query: int) -> np.ndarray:
    """One query's weights over every key, full resolution."""
    return detail.query_cells(_maps(req), layer, head, query, rerun=lambda *a: _rerun(req, *a))


def tokens(req: Req) -> tuple[str, ...]:
    return _maps(req).tokens


@st.cache_data(max_entries=4, ttl=60, show_spinner=False)
def model_options(random_weights: bool) -> list[tuple[str, str]]:
    """``attention.model_options``; re-read every minute so downloads from the Models page appear."""
    return attention.model_options(random_weights)
