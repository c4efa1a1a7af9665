"""Figures for real attention maps (data in, plotly figure out; nothing is computed here but layout).

- :func:`head_heatmap`: one matrix (a head, the head average, rollout, cross-attention) as a
  heatmap; float32 is sent as base64 (plotly 7), 512 x 512 is about 1.75 MB of JSON.
- :func:`link_view`: bertviz-style lines between two token columns, only for short texts and
  only the strongest links per token (thousands of SVG lines would freeze the browser).
- :func:`model_grid`: every layer x head as a small heatmap, block-averaged to ``cell`` bins and
  sent as one uint8 mosaic, so 12 x 12 heads of 512 tokens stay under 1 MB of JSON.

Token labels are user text: they are HTML-escaped because plotly interprets a subset of tags
(``<b>``, ``<a>``...) in labels; escaped (:func:`explorer.core.labels.token_labels`), ``<script>`` is drawn
as the literal text.

>>> tokens_per_cell(512, cell=64), tokens_per_cell(16, cell=64)
(8, 1)
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sequential

from explorer.core.labels import token_labels
from explorer.plots.style import MIN_FONT, titled
from explorer.tasks.attention import AttentionMaps, ViewMatrix
from explorer.tasks.attention.compact import bin_edges, downsample, prune_links, quantize_uint8
from explorer.tasks.attention.views import self_attention_window

__all__ = ["GRID_CELL", "LINK_MAX_TOKENS", "head_heatmap", "link_view", "maps_grid", "model_grid",
           "payload_bytes", "tokens_per_cell"]

LINK_MAX_TOKENS = 60  # beyond this a link view is unreadable: use the heatmap
GRID_CELL = 64  # bins per side of each small map of the model view
COLORSCALE = "Blues"


def head_heatmap(view: ViewMatrix, *, untrained: bool = False, height: int | None = None) -> go.Figure:
    """One ``(Lq, Lk)`` attention matrix: rows = queries (top to bottom), columns = keys."""
    z = np.asarray(view.matrix, dtype=np.float32)
    n_rows, n_cols = z.shape
    fig = go.Figure(go.Heatmap(
        z=z, x=token_labels(view.col_tokens, view.col_offset), y=token_labels(view.row_tokens, view.row_offset),
        colorscale=COLORSCALE, zmin=0.0, zmax=float(z.max()) if z.size and z.max() > 0 else 1.0,
        colorbar={"title": {"text": "weight"}},
        hovertemplate="query %{y}<br>key %{x}<br>weight %{z:.4f}<extra></extra>",
    ))
    fig.update_layout(  # keys are labelled on top (like a matrix): the title sits above them
        title={"text": titled(html.escape(view.title), untrained=untrained), "y": 0.995, "yanchor": "top"},
        height=height or int(min(1000, max(420, 14 * n_rows + 220))),
        margin={"l": 10, "r": 10, "t": 150, "b": 10},
    )
    # the smallest readable size: on a long text plotly then labels every few tokens rather than shrink them all;
    # categories, since a token such as "1889" would make plotly read the labels as numbers
    tick = {"tickfont": {"size": MIN_FONT}, "showgrid": False, "type": "category"}
    fig.update_xaxes(title_text="key (attended to)", side="top", tickangle=-60, **tick)
    fig.update_yaxes(title_text="query (attending)", autorange="reversed", **tick)
    return fig


def _link_traces(links: np.ndarray, levels: int = 5) -> list[go.Scatter]:
    """Lines from query (x=0) to key (x=1), one trace per opacity level (per-line styles would
    need one trace per line: hundreds of traces for a 60-token text)."""
    traces = []
    top = float(links[:, 2].max()) if len(links) else 1.0
    bins = np.minimum((links[:, 2] / top * levels).astype(int), levels - 1)
    for level in range(levels):
        sel = links[bins == level]
        if not len(sel):
            continue
        xs = np.tile([0.0, 1.0, np.nan], len(sel))
        ys = np.column_stack([-sel[:, 0], -sel[:, 1], np.full(len(sel), np.nan)]).ravel()
        traces.append(go.Scatter(
            x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
            line={"width": 1 + 2.5 * level / levels, "color": "rgba(31, 119, 180, "
                                                              f"{0.15 + 0.85 * (level + 1) / levels:.2f})"},
        ))
    return traces


def _token_column(tokens: Sequence[str], x: float, side: str, hover: list[str] | None) -> go.Scatter:
    labels = [html.escape(t) for t in tokens]
    return go.Scatter(
        x=[x] * len(tokens), y=-np.arange(len(tokens)), mode="markers+text", text=labels,
        textposition=f"middle {side}", marker={"size": 6, "color": "#1f77b4"}, showlegend=False,
        hovertext=hover or labels, hoverinfo="text",
    )


def link_view(view: ViewMatrix, *, top_k: int = 3, min_weight: float = 0.02,
              untrained: bool = False) -> go.Figure:
    """bertviz-style head view: queries on the left, keys on the right, the ``top_k`` strongest
    links of each query drawn with width and opacity by weight. Short texts only."""
    n_rows, n_cols = view.matrix.shape
    if max(n_rows, n_cols) > LINK_MAX_TOKENS:
        raise ValueError(f"link_view draws at most {LINK_MAX_TOKENS} tokens; use head_heatmap")
    links = prune_links(view.matrix, top_k=top_k, min_weight=min_weight)
    hover = []
    for q, tok in enumerate(view.row_tokens):
        mine = links[links[:, 0] == q]
        parts = [f"{html.escape(view.col_tokens[int(k)])} {w:.2f}" for _, k, w in mine]
        hover.append(f"{html.escape(tok)} → " + (", ".join(parts) or "no link above threshold"))
    fig = go.Figure([*_link_traces(links), _token_column(view.row_tokens, 0.0, "left", hover),
                     _token_column(view.col_tokens, 1.0, "right", None)])
    fig.update_layout(
        title=titled(html.escape(view.title), f"top {top_k} links per token", untrained=untrained),
        height=int(max(300, 22 * max(n_rows, n_cols) + 110)), margin={"l": 10, "r": 10, "t": 70, "b": 10},
        plot_bgcolor="white",
    )
    fig.update_xaxes(visible=False, range=[-0.6, 1.6])
    fig.update_yaxes(visible=False)
    return fig


def _grid_labels(count: int, edges: np.ndarray, gap: int, name: str, axis: str) -> tuple[list[str], list[str]]:
    """Unique category labels for the mosaic's rows or columns (``"head 3 · keys 64-71"``), gap
    labels included, and the label at the centre of each block (where its tick goes)."""
    labels, centres = [], []
    for block in range(count):
        bins = [f"{name} {block} · {axis} {a}" + (f"–{b - 1}" if b - a > 1 else "")
                for a, b in zip(edges[:-1], edges[1:], strict=True)]
        centres.append(bins[len(bins) // 2])
        labels += bins + [f"{name} {block} ·{'·' * g}" for g in range(gap)]
    return labels, centres


def _grid_colorscale() -> list[list]:
    """Blues for codes 1..255, white for 0 (the gaps between cells)."""
    blues = sequential.Blues
    stops = [[0.0, "white"], [0.5 / 255, "white"]]
    return stops + [[1 / 255 + (254 / 255) * i / (len(blues) - 1), c] for i, c in enumerate(blues)]


def model_grid(att: np.ndarray, *, cell: int = GRID_CELL, gamma: float = 0.5, untrained: bool = False,
               title: str = "Model view: every layer x head", offset: int = 0) -> go.Figure:
    """All ``(layers, H, Lq, Lk)`` maps as a layers x heads grid of small heatmaps.

    Each map is block-averaged to at most ``cell`` x ``cell`` and quantised to codes 1..255
    (one byte a cell, base64 in the JSON) against the grid's maximum so heads stay comparable;
    code 0 marks the white gaps. The grid is one mosaic heatmap with a label per row and column
    ("layer 2 · queries 8-15"), so hovering tells where you are without per-cell hover data.
    Colours follow ``weight ** gamma`` (square root by default): block means of long texts are
    small and a linear scale would leave all but the strongest heads white; the colour bar
    is labelled in real weights. ``offset``: text position of the first token (a zoomed grid).
    """
    small = downsample(att, cell)  # (layers, H, q, k)
    codes, vmax = quantize_uint8(np.power(small, gamma))
    codes = np.maximum(codes, 1)  # 0 is reserved for the gaps
    n_layers, n_heads, rows, cols = codes.shape
    gap = max(1, cols // 10)
    mosaic = np.zeros((n_layers * (rows + gap), n_heads * (cols + gap)), dtype=np.uint8)
    for layer in range(n_layers):
        for head in range(n_heads):
            r0, c0 = layer * (rows + gap), head * (cols + gap)
            mosaic[r0:r0 + rows, c0:c0 + cols] = codes[layer, head]
    # bins are labelled with text positions: a zoomed grid starts at token ``offset``
    xs, x_ticks = _grid_labels(n_heads, offset + bin_edges(att.shape[-1], cell), gap, "head", "keys")
    ys, y_ticks = _grid_labels(n_layers, offset + bin_edges(att.shape[-2], cell), gap, "layer", "queries")
    ticks = np.linspace(1, 255, 5)
    fig = go.Figure(go.Heatmap(
        z=mosaic, x=xs, y=ys, zmin=0, zmax=255, colorscale=_grid_colorscale(),
        hovertemplate="%{y}<br>%{x}<br>strength %{z}/255<extra></extra>",
        colorbar={"title": {"text": "weight"}, "tickvals": ticks.tolist(),
                  "ticktext": [f"{(v * vmax / 255) ** (1 / gamma):.3f}" for v in ticks]},
    ))
    fig.update_layout(title=titled(title, untrained=untrained), plot_bgcolor="white",
                      height=int(min(1400, max(400, 75 * n_layers + 130))),
                      margin={"l": 10, "r": 10, "t": 70, "b": 10})
    fig.update_xaxes(side="top", tickvals=x_ticks, ticktext=[f"head {h}" for h in range(n_heads)], showgrid=False)
    fig.update_yaxes(autorange="reversed", tickvals=y_ticks, ticktext=[f"layer {i}" for i in range(n_layers)],
                     showgrid=False)
    return fig


def maps_grid(maps: AttentionMaps, token_range: tuple[int, int] | None = None, *, cell: int = GRID_CELL) -> go.Figure:
    """:func:`model_grid` of the self-attention (the encoder's, for encoder-decoders) among the
    tokens of ``token_range`` (the whole text when ``None``)."""
    title = "Model view" + (" (encoder)" if maps.family == "encoder-decoder" else "") + ": every layer x head"
    start = 0 if token_range is None else max(0, int(token_range[0]))
    return model_grid(self_attention_window(maps, token_range), cell=cell, untrained=maps.untrained, title=title,
                      offset=start)


def tokens_per_cell(length: int, cell: int = GRID_CELL) -> int:
    """The most tokens one grid cell averages along a side, for ``length`` tokens."""
    return int(np.diff(bin_edges(length, cell)).max())


def payload_bytes(fig: go.Figure) -> int:
    """Size of the figure's JSON, i.e. roughly what Streamlit sends to the browser."""
    return len(fig.to_json().encode())
