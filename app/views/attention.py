"""Drawing for the Attention maps page: notices, and long maps (Streamlit only; numbers come from explorer).

A text longer than ``attention.DISPLAY_TOKENS`` is never drawn cell by cell: one head's block map
(at most 256 x 256 cells), a zoom into any query x key range at full resolution (at most 512 a side),
and one query's full-resolution row.
"""

from __future__ import annotations

import streamlit as st

from app import ui
from app.caches import attention as cache
from explorer.core.notices import Notice
from explorer.plots import attention as plots
from explorer.plots import longattention as long_plots
from explorer.tasks import attention
from explorer.tasks.attention import blocks


def notices(info: dict, notices: tuple[Notice, ...]) -> None:
    """Each notice in its box (by kind, :func:`app.ui.notice`), then what was extracted."""
    ui.notices(notices)
    st.caption(f"**{ui.markdown_safe(info['model'])}**: {info['family']}, "
               f"{info['layers']} layers x {info['heads']} heads, {info['n_tokens']} tokens, "
               f"tensor {tuple(info['shape'])} · {info['device_name']} · {info['dtype']}.")


def _range(col, label: str, n: int, key: str, start: int) -> tuple[int, int]:
    """A range slider whose span is capped at ``ZOOM_SIDE`` (a wider pick is cut, and said so)."""
    side = min(n, blocks.ZOOM_SIDE, 128)
    lo, hi = col.slider(label, 0, n, (start, min(n, start + side)), key=f"{key}_{n}",
                        help=f"At most {blocks.ZOOM_SIDE} tokens at full resolution.")
    lo, hi = int(lo), max(int(hi), int(lo) + 1)
    if hi - lo > blocks.ZOOM_SIDE:
        col.caption(f"Cut to the first {blocks.ZOOM_SIDE} of this range.")
        hi = lo + blocks.ZOOM_SIDE
    return lo, hi


def show_long(req: cache.Req, info: dict, layer: int, head: int) -> None:
    """Block map, zoom and one query's row of one head of a long text."""
    n = info["n_tokens"]
    cells, edges = cache.block_map(req, layer, head)
    tokens = cache.tokens(req)
    size = edges[1] - edges[0]
    title = f"Layer {layer}, head {head}: blocks of {size} x {size} tokens"
    ui.figure(long_plots.block_heatmap(cells, edges, tokens, title=title, untrained=info["untrained"]),
              f"attention-blocks-L{layer}-H{head}", key="att_blocks")
    st.caption(f"{n:,} tokens are more than the {attention.DISPLAY_TOKENS} drawn cell by cell: each cell is the "
               "share of a query block's attention that goes to a key block (rows sum to 1).")
    st.subheader("Zoom at full resolution")
    c1, c2 = st.columns(2)
    rows = _range(c1, "Queries", n, "att_zoom_q", max(0, n - 128))
    cols = _range(c2, "Keys", n, "att_zoom_k", max(0, n - 128))
    with st.spinner("Reading those cells..."):
        view = cache.zoom(req, layer, head, rows, cols)
    ui.figure(plots.head_heatmap(view, untrained=info["untrained"]), f"attention-zoom-L{layer}-H{head}",
              key="att_zoom")
    st.subheader("One query at full resolution")
    query = int(st.number_input("Query position", 0, n - 1, n - 1, key=f"att_query_{n}",
                                help="Its weight on every key of the text, nothing averaged."))
    with st.spinner("Reading that row..."):
        row = cache.query_row(req, layer, head, query)
    ui.figure(long_plots.query_row_figure(row, tokens, query, untrained=info["untrained"],
                                          title=f"Query {query} ({tokens[query]}), layer {layer}, head {head}"),
              f"attention-query-{query}-L{layer}-H{head}", key="att_query_row")
