"""Figures for long attention maps: one head's block map and one query's full-resolution row.

Data in, plotly figure out. A block map has at most 256 x 256 cells (``explorer.tasks.attention.blocks``),
so what travels stays bounded however long the text; axis labels name the token range of each block.

>>> import numpy as np
>>> block_labels([0, 4, 8, 9], ["a"] * 9)
['0-3', '4-7', '8 a']
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from explorer.plots.style import titled

__all__ = ["block_heatmap", "block_labels", "query_row_figure"]


def block_labels(edges: Sequence[int], tokens: Sequence[str]) -> list[str]:
    """``"start-end"`` per block (a one-token block shows its token, escaped)."""
    out = []
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        out.append(f"{a} {html.escape(tokens[a])}" if b - a == 1 else f"{a}-{b - 1}")
    return out


def block_heatmap(cells: np.ndarray, edges: Sequence[int], tokens: Sequence[str], *, title: str,
                  untrained: bool = False) -> go.Figure:
    """``(n, n)`` block masses: cell ``[I, J]`` = the share of block I's queries' attention on block J."""
    labels = block_labels(edges, tokens)
    z = np.asarray(cells, dtype=np.float32)
    fig = go.Figure(go.Heatmap(
        z=z, x=labels, y=labels, colorscale="Blues", zmin=0.0,
        zmax=float(z.max()) if z.size and z.max() > 0 else 1.0, colorbar={"title": {"text": "share"}},
        hovertemplate="queries %{y}<br>keys %{x}<br>share %{z:.4f}<extra></extra>",
    ))
    fig.update_layout(title=titled(html.escape(title), untrained=untrained), height=720,
                      margin={"l": 10, "r": 10, "t": 90, "b": 10})
    fig.update_xaxes(title_text="key block (attended to)", side="top", showgrid=False, showticklabels=False)
    fig.update_yaxes(title_text="query block (attending)", autorange="reversed", showgrid=False,
                     showticklabels=False)
    return fig


def query_row_figure(row: np.ndarray, tokens: Sequence[str], query: int, *, title: str,
                     untrained: bool = False) -> go.Figure:
    """One query's weight on every key, at full resolution (a line over key positions)."""
    keys = np.arange(len(row))
    fig = go.Figure(go.Scatter(
        x=keys, y=np.asarray(row, dtype=np.float32), mode="lines", line={"width": 1},
        customdata=[html.escape(t) for t in tokens[: len(row)]],
        hovertemplate="key %{x} %{customdata}<br>weight %{y:.5f}<extra></extra>",
    ))
    fig.add_vline(x=query, line_dash="dot", line_color="grey")  # the query's own position
    fig.update_layout(title=titled(html.escape(title), untrained=untrained), height=320,
                      margin={"l": 10, "r": 10, "t": 70, "b": 10}, xaxis_title="key position",
                      yaxis_title="weight")
    return fig
