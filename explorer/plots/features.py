"""Figures of the Features page: a feature's top contexts shaded by its activation, its activation density, its
logit effect, and a prediction before and after a clamp.

Token text never becomes plotly markup (:func:`explorer.core.labels.safe_label`).
"""

from __future__ import annotations

import plotly.graph_objects as go

from explorer.core.labels import safe_label
from explorer.features import dashboard
from explorer.features.clamp import Clamped
from explorer.features.dashboard import Card

__all__ = ["contexts", "density", "effect", "prediction"]

WIDTH = 9  # context tokens drawn per row: each cell wide enough for a short token at a readable size
BEFORE = 6


def contexts(card: Card, rows: int = 8) -> go.Figure:
    """The top contexts, one row each, every token a cell shaded by the feature's activation there."""
    shown = card.top[:rows]
    z, text = [], []
    for c in shown:
        start = max(0, min(c.focus - BEFORE, len(c.tokens) - WIDTH))  # the active token and those before it
        acts, tokens = list(c.acts)[start:start + WIDTH], list(c.tokens)[start:start + WIDTH]
        pad = WIDTH - len(tokens)
        z.append([None] * pad + acts)
        text.append([""] * pad + [safe_label(t, 6) or "·" for t in tokens])
    labels = [f"#{i + 1} {c.value:.2f}" for i, c in enumerate(shown)]
    fig = go.Figure(go.Heatmap(z=z, text=text, texttemplate="%{text}", colorscale="Oranges", zmin=0,
                               zmax=max(card.max_act, 1e-6), y=labels, showscale=False, hoverinfo="skip",
                               xgap=1, ygap=1, textfont={"size": 11}))
    fig.update_layout(title=f"Feature {card.feature}: top contexts", height=120 + 34 * len(shown))
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(autorange="reversed", title="context, activation", type="category")
    return fig


def density(card: Card) -> go.Figure:
    """A histogram of log10 of the feature's activations where it is active."""
    edges, counts = card.histogram
    centres = [(a + b) / 2 for a, b in zip(edges[:-1], edges[1:], strict=True)]
    fig = go.Figure(go.Bar(x=centres, y=list(counts), marker_color="#ff7f0e"))
    fig.update_layout(title=f"Active on {card.density:.2%} of {card.tokens:,} tokens")
    fig.update_xaxes(title="log10 activation")
    fig.update_yaxes(title="tokens")
    return fig


def effect(card: Card) -> go.Figure:
    """The tokens the feature's decoder direction raises most and lowers most."""
    names = [safe_label(t, 16) for t, _ in card.lowers[::-1]] + [safe_label(t, 16) for t, _ in card.raises[::-1]]
    values = [v for _, v in card.lowers[::-1]] + [v for _, v in card.raises[::-1]]
    labels = [f"{i + 1}. {n}" for i, n in enumerate(names)]  # numbered: two tokens may read the same
    fig = go.Figure(go.Bar(x=values, y=labels, orientation="h",
                           marker_color=["#1f77b4" if v < 0 else "#d62728" for v in values]))
    how = "logit" if card.effect == dashboard.HEAD else "cosine (nearest embedding rows)"
    fig.update_layout(title="Logit effect: tokens raised and lowered", height=520)
    fig.update_xaxes(title=how)
    return fig


def prediction(result: Clamped) -> go.Figure:
    """The top tokens before and after the clamp, side by side."""
    fig = go.Figure()
    for name, rows, colour in (("before", result.before, "#7f7f7f"), ("after", result.after, "#d62728")):
        fig.add_trace(go.Bar(name=name, x=[p for _, p in rows][::-1],
                             y=[f"{name[0]}{i + 1}. {safe_label(t, 16)}" for i, (t, _) in enumerate(rows)][::-1],
                             orientation="h", marker_color=colour))
    fig.update_layout(title=f"Feature {result.feature} at {result.value:g}: KL {result.kl:.3f}", height=560,
                      barmode="group")
    fig.update_xaxes(title="probability")
    return fig
