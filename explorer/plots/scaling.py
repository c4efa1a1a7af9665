"""Figures of the scaling-law view: Kaplan's L(N) and L(D), and the Chinchilla (N, D) plane.

Pure builders: placements in (:mod:`explorer.papers.scaling`), plotly figures out.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.core.labels import safe_label
from explorer.papers import scaling
from explorer.papers.scaling import ScalingPoint
from explorer.plots.style import titled

__all__ = ["chinchilla_figure", "kaplan_figure"]

ISO_COMPUTE = (1e18, 1e20, 1e22, 1e24)  # FLOPs: one dashed line each on the (N, D) plane


def _markers(fig: go.Figure, x: list[float], y: list[float], places: Sequence[ScalingPoint], **where: int) -> None:
    fig.add_scatter(x=x, y=y, mode="markers+text", text=[safe_label(p.key, 24) for p in places],
                    textposition="top center", marker={"size": 10, "color": "#d62728"}, showlegend=False,
                    hovertext=[f"<b>{safe_label(p.name, 50)}</b><br>{p.params:,} parameters ({p.non_embedding:,} "
                               f"outside the embeddings)<br>{p.tokens:.3g} tokens ({safe_label(p.tokens_source, 40)})"
                               f"<br>{p.tokens_per_param:.1f} tokens per parameter<br>Chinchilla's L(N, D): "
                               f"{p.loss_chinchilla:.2f} nats" for p in places], hoverinfo="text", **where)


def kaplan_figure(places: Sequence[ScalingPoint]) -> go.Figure:
    """L(N) against parameters and L(D) against tokens, each catalog model marked on the curve."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("L(N) = (8.8e13 / N)^0.076", "L(D) = (5.4e13 / D)^0.095"))
    ns = scaling.geomspace(1e6, 1e12)
    ds = scaling.geomspace(1e8, 1e13)
    fig.add_scatter(x=ns, y=[scaling.loss_n(n) for n in ns], mode="lines", name="Kaplan L(N)", row=1, col=1)
    fig.add_scatter(x=ds, y=[scaling.loss_d(d) for d in ds], mode="lines", name="Kaplan L(D)", row=1, col=2)
    _markers(fig, [p.non_embedding for p in places], [p.loss_n for p in places], places, row=1, col=1)
    _markers(fig, [p.tokens for p in places], [p.loss_d for p in places], places, row=1, col=2)
    fig.update_xaxes(type="log", title_text="non-embedding parameters N (Kaplan's count)", row=1, col=1)
    fig.update_xaxes(type="log", title_text="training tokens D", row=1, col=2)
    fig.update_yaxes(title_text="predicted test loss (nats / token, WebText2)", row=1, col=1)
    fig.update_yaxes(title_text="predicted test loss (nats / token)", row=1, col=2)
    fig.update_layout(title=titled("Kaplan et al. 2020: loss as a power law", "in parameters (left) and in data "
                                                                               "(right)"),
                      legend={"orientation": "h", "y": -0.25}, margin={"t": 90})
    return fig


def chinchilla_figure(places: Sequence[ScalingPoint]) -> go.Figure:
    """The (parameters, tokens) plane: Chinchilla's D = 20·N, iso-compute lines, the catalog's models."""
    ns = scaling.geomspace(1e6, 1e12)
    fig = go.Figure()
    fig.add_scatter(x=ns, y=[scaling.TOKENS_PER_PARAM * n for n in ns], mode="lines", line={"color": "#2ca02c"},
                    name="Chinchilla compute-optimal: D = 20 N")
    for compute in ISO_COMPUTE:  # the fit's own optimum on each iso-compute line (Approach 3)
        best = min(ns, key=lambda n: scaling.loss_chinchilla(n, compute / (6 * n)))  # noqa: B023 (used at once)
        fig.add_scatter(x=[best], y=[compute / (6 * best)], mode="markers", marker={"symbol": "x", "color": "#2ca02c"},
                        name="L(N, D) = 1.69 + 406.4/N^0.34 + 410.7/D^0.28: its optimum per budget",
                        showlegend=compute == ISO_COMPUTE[0], hoverinfo="text",
                        hovertext=f"{compute:.0e} FLOPs: the fit's best N = {best:.3g}, D = {compute / (6 * best):.3g}")
    for compute in ISO_COMPUTE:
        fig.add_scatter(x=ns, y=[compute / (6 * n) for n in ns], mode="lines", hoverinfo="skip",
                        line={"dash": "dot", "color": "#aaa", "width": 1}, name=f"C = 6ND = {compute:.0e} FLOPs")
    _markers(fig, [p.params for p in places], [p.tokens for p in places], places)
    fig.update_layout(title=titled("Tokens against parameters", "above the green line a model saw more data than "
                                                               "compute-optimal, below it less"),
                      margin={"t": 70}, xaxis_title="parameters N (all, Chinchilla's count)",
                      yaxis_title="training tokens D", xaxis_type="log", yaxis_type="log", yaxis_range=[7, 14],
                      legend={"orientation": "h", "y": -0.25})
    return fig
