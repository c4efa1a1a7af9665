"""Figures of "Why this prediction": the lens grid, rank and KL by relative depth, token strips, the tuned lens.

User text never becomes plotly markup: tokens go through ``safe_label`` / ``token_labels`` (escaped).

>>> diverging([-2.0, 1.0, None])
(-2.0, 2.0)
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.core.labels import safe_label, token_labels, untrained_suffix
from explorer.explain.attribution import METHOD_NAMES, Attribution
from explorer.explain.lens import Lens
from explorer.explain.tuning import TuneReport

__all__ = ["depth_figure", "diverging", "lens_grid", "token_strip", "tuned_figure"]

SIGNED = "RdBu"  # negative red, positive blue: a token that lowers the target / raises it
UNSIGNED = "Blues"  # gradient norm has no sign


def lens_grid(result: Lens) -> go.Figure:
    """Layers x positions: each cell the layer's top-1 token at that position, coloured by its probability."""
    layers = [f"{i}" if i else "0 (embeddings)" for i in range(len(result.grid_tokens))]
    x = token_labels(result.tokens, result.grid_start)
    text = [[safe_label(t, 10) for t in row] for row in result.grid_tokens]
    fig = go.Figure(go.Heatmap(
        z=[list(r) for r in result.grid_probability], x=x, y=layers, text=text, texttemplate="%{text}",
        colorscale="Viridis", zmin=0, zmax=1, colorbar={"title": "p(top-1)"},
        hovertemplate="layer %{y}<br>after %{x}<br>top-1 %{text} (p %{z:.3f})<extra></extra>"))
    fig.update_layout(title=f"{result.kind.capitalize()} lens of {safe_label(result.model, 40)}: each layer's top "
                            f"prediction{untrained_suffix(result.untrained)}",
                      height=max(320, 26 * len(layers) + 140), margin={"l": 10, "r": 10, "t": 60, "b": 90},
                      xaxis={"title": "position (the prediction made after this token)", "tickangle": -45},
                      yaxis={"title": "layer", "autorange": True})
    return fig


def depth_figure(results: Sequence[Lens]) -> go.Figure:
    """The target's rank (log scale) and the KL to the final distribution by relative depth, a line per model:
    a 6-layer and an 18-layer model on one axis."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("target's rank (1 = top prediction)",
                                                        "KL to the final distribution (nats)"))
    for result in results:
        depth = [x.depth for x in result.layers]
        name = safe_label(f"{result.model} ({result.kind})", 40)
        hover = [f"layer {x.layer}" for x in result.layers]
        if any(x.target_rank is not None for x in result.layers):
            fig.add_trace(go.Scatter(x=depth, y=[x.target_rank for x in result.layers], mode="lines+markers",
                                     name=name, legendgroup=name, text=hover,
                                     hovertemplate="%{text}<br>rank %{y}<extra></extra>"), 1, 1)
        fig.add_trace(go.Scatter(x=depth, y=[x.kl_to_final for x in result.layers], mode="lines+markers",
                                 name=name, legendgroup=name, showlegend=False, text=hover,
                                 hovertemplate="%{text}<br>KL %{y:.3f}<extra></extra>"), 1, 2)
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_yaxes(type="log", row=1, col=2)
    fig.update_xaxes(title="relative depth (layer / layers)", range=[-0.02, 1.02])
    fig.update_layout(height=380, margin={"l": 10, "r": 10, "t": 60, "b": 40},
                      legend={"orientation": "h", "y": -0.25})
    return fig


def diverging(scores: Sequence[float | None]) -> tuple[float, float]:
    """A colour range symmetric about 0 that holds every score."""
    top = max((abs(s) for s in scores if s is not None), default=0.0) or 1.0
    return -top, top


def token_strip(result: Attribution) -> go.Figure:
    """The text as a strip of tokens coloured by score (a sentence pair: one row per sentence); the value on
    hover; a token left without a score (budget) is blank."""
    parts = sorted({t.part for t in result.tokens})
    rows = [[t for t in result.tokens if t.part == p] for p in parts]
    width = max(len(r) for r in rows) if rows else 0
    z = [[t.score for t in r] + [None] * (width - len(r)) for r in rows]
    text = [[safe_label(t.token, 12) for t in r] + [""] * (width - len(r)) for r in rows]
    signed = result.method != "grad"
    lo, hi = diverging([t.score for t in result.tokens]) if signed else (0.0, max(
        (t.score for t in result.tokens if t.score is not None), default=1.0) or 1.0)
    names = ["sentence A", "sentence B"] if len(rows) > 1 else ["text"]
    fig = go.Figure(go.Heatmap(z=z, text=text, texttemplate="%{text}", y=names, colorscale=SIGNED if signed
                               else UNSIGNED, zmin=lo, zmax=hi, xgap=2, ygap=2, colorbar={"title": "score"},
                               hovertemplate="%{text}<br>score %{z:.4f}<extra></extra>"))
    done = "" if result.completeness is None else f" · completeness gap {result.completeness:.2%}"
    fig.update_layout(title=f"{METHOD_NAMES[result.method]}: {safe_label(result.objective, 70)}{done}"
                            f"{untrained_suffix(result.untrained)}",
                      height=140 + 50 * len(rows), margin={"l": 10, "r": 10, "t": 50, "b": 20},
                      xaxis={"visible": False}, yaxis={"autorange": "reversed"})
    return fig


def tuned_figure(report: TuneReport) -> go.Figure:
    """Each layer's held-out KL to the final distribution: the logit lens beside the tuned lens."""
    layers = list(range(len(report.logit_kl)))
    fig = go.Figure([go.Bar(x=layers, y=list(report.logit_kl), name="logit lens"),
                     go.Bar(x=layers, y=list(report.tuned_kl), name="tuned lens")])
    fig.update_layout(barmode="group", height=340, margin={"l": 10, "r": 10, "t": 60, "b": 40},
                      title=f"Held-out KL to the final distribution, {safe_label(report.model, 30)} "
                            f"({report.steps} steps)",
                      xaxis={"title": "layer (0: embeddings)"}, yaxis={"title": "KL (nats)", "type": "log"},
                      legend={"orientation": "h", "y": 1.1, "x": 1, "xanchor": "right"})
    return fig
