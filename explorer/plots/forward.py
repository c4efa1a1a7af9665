"""Figures of the Forward pass page: the block as a flow of its steps, one step's tensor, one token's vector, the
stream's norms layer by layer, and the prediction.

Token text never becomes plotly markup (:func:`explorer.core.labels.token_labels`, ``safe_label``). A wide tensor
is drawn up to :data:`MAX_FEATURES` features (the title says how many of how many).
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
import torch

from explorer.core.labels import safe_label, token_labels
from explorer.internals.forward.align import StreamPoint
from explorer.internals.forward.steps import Step
from explorer.internals.forward.walk import Walk
from explorer.plots.style import titled

__all__ = ["MAX_FEATURES", "block_flow", "matrix_of", "prediction", "step_figure", "stream_norms", "token_vector"]

MAX_FEATURES = 512  # columns a tensor's heat map draws (a 2,048-wide MLP shows its first 512)
GROUP = {"embed": "embeddings", "position": "positions", "norm": "norm", "final-norm": "norm", "q": "attention",
         "k": "attention", "v": "attention", "scores": "attention", "scale": "attention", "mask": "attention",
         "softmax": "attention", "mix": "attention", "concat": "attention", "out-proj": "attention",
         "residual": "residual", "mlp-up": "MLP", "mlp-gate": "MLP", "mlp-act": "MLP", "mlp-gated": "MLP",
         "mlp-down": "MLP", "head": "head", "logits": "head", "probs": "head"}
COLOURS = {"embeddings": "#8c564b", "positions": "#e377c2", "norm": "#7f7f7f", "attention": "#1f77b4",
           "residual": "#2ca02c", "MLP": "#ff7f0e", "head": "#9467bd"}


def _place(step: Step) -> str:
    where = "embeddings" if step.layer is None and step.kind not in ("head", "logits", "probs", "final-norm") \
        else ("readout" if step.layer is None else f"layer {step.layer}")
    return f"{step.stack} {where}"


def block_flow(walk: Walk, index: int) -> go.Figure:
    """The steps of the current step's layer (or its embeddings or readout) top to bottom in the order the model
    runs them, coloured by part, the current one ringed: the block as this model builds it."""
    current = walk.steps[index]
    group = [(i, s) for i, s in enumerate(walk.steps) if s.stack == current.stack and s.layer == current.layer
             and _place(s) == _place(current)]
    names = [safe_label(s.name, 44) for _, s in group]
    colours = [COLOURS[GROUP.get(s.kind, "norm")] for _, s in group]
    rows = list(range(len(group)))[::-1]
    fig = go.Figure(go.Scatter(
        x=[0] * len(group), y=rows, mode="markers+text", text=names, textposition="middle right",
        textfont={"size": 12}, marker={"symbol": "square", "size": [22 if i == index else 14 for i, _ in group],
                                       "color": colours, "line": {"width": [4 if i == index else 0 for i, _ in group],
                                                                  "color": "#d62728"}},
        customdata=[i for i, _ in group], hovertemplate="%{text}<extra></extra>", showlegend=False))
    fig.update_layout(title=titled(f"{safe_label(walk.model, 30)}: {_place(current)}",
                                   f"{len(group)} steps in the order the model runs them"),
                      height=max(260, 24 * len(group) + 110), margin={"l": 10, "r": 10, "t": 70, "b": 10},
                      xaxis={"visible": False, "range": [-0.2, 3.2]},
                      yaxis={"visible": False, "range": [-1, len(group)]})
    return fig


def matrix_of(step: Step, head: int = 0) -> tuple[torch.Tensor, tuple[str, str]]:
    """The 2-D slice a heat map draws, and its (row, column) axis names: one head of a per-head tensor."""
    t = step.tensor
    if t is None:
        raise ValueError("this step kept no tensor")
    axes = list(step.axes)
    while t.dim() > 2:
        first = axes.pop(0)
        t = t[min(head, t.shape[0] - 1)] if first in ("head", "kv-head") else t[0]
    if t.dim() == 1:
        t, axes = t[None], ["value", axes[0] if axes else "feature"]
    return t.float(), (axes[0], axes[1])


def _labels(axis: str, n: int, walk: Walk, step: Step) -> list[str]:
    tokens = walk.decoder_tokens if step.stack == "decoder" and walk.decoder_tokens else walk.tokens
    if axis in ("token", "query", "key") and n == len(tokens):
        return token_labels(tokens)
    return [str(i) for i in range(n)]


def _vocabulary(step: Step) -> go.Figure:
    """A vocabulary-wide vector (logits, probabilities) as the distribution of its values."""
    assert step.tensor is not None
    values = step.tensor.float().flatten()
    fig = go.Figure(go.Histogram(x=values.tolist(), nbinsx=80, marker={"color": "#9467bd"}))
    fig.update_layout(title=titled(safe_label(step.name, 60), f"{values.numel():,} values, one per vocabulary "
                                                              "entry: the top ones are in the prediction"),
                      height=320, margin={"l": 10, "r": 10, "t": 70, "b": 40},
                      xaxis={"title": "value"}, yaxis={"title": "vocabulary entries", "type": "log"})
    return fig


def step_figure(walk: Walk, step: Step, head: int = 0) -> go.Figure:
    """``step``'s tensor as a heat map: tokens x features, or queries x keys for scores and attention (a
    vocabulary-wide vector as the distribution of its values)."""
    if "vocabulary" in step.axes:
        return _vocabulary(step)
    z, (rows, cols) = matrix_of(step, head)
    width = z.shape[1]
    shown = z[:, :MAX_FEATURES] if cols == "feature" else z
    finite = torch.where(torch.isfinite(shown), shown, torch.full_like(shown, float("nan")))
    heads = f"head {head}" if any(a in ("head", "kv-head") for a in step.axes) else ""
    cut = f"the first {MAX_FEATURES:,} of {width:,} features" if shown.shape[1] < width else ""
    y = _labels(rows, shown.shape[0], walk, step)
    x = _labels(cols, shown.shape[1], walk, step)
    fig = go.Figure(go.Heatmap(z=finite.tolist(), x=x, y=y, colorscale="RdBu_r", zmid=0.0,
                               hovertemplate=f"{rows} %{{y}}<br>{cols} %{{x}}<br>%{{z:.4g}}<extra></extra>",
                               colorbar={"title": "value"}))
    detail = ", ".join(p for p in (heads, f"shape {'x'.join(map(str, step.shape))}", cut) if p)
    fig.update_layout(title=titled(safe_label(step.name, 60), detail),
                      height=max(320, min(900, 18 * len(y) + 160)), margin={"l": 10, "r": 10, "t": 70, "b": 60},
                      xaxis={"title": cols, "type": "category", "showticklabels": len(x) <= 64},
                      yaxis={"title": rows, "type": "category", "autorange": "reversed"})
    return fig


def token_vector(walk: Walk, step: Step, token: int, head: int = 0) -> go.Figure:
    """One token's row of ``step`` (its vector at this point), feature by feature."""
    z, (rows, cols) = matrix_of(step, head)
    row = z[min(max(token, 0), z.shape[0] - 1)]
    labels = _labels(rows, z.shape[0], walk, step)
    said = labels[min(max(token, 0), len(labels) - 1)]
    fig = go.Figure(go.Bar(x=list(range(row.shape[0])), y=row.tolist(), marker={"color": "#1f77b4"},
                           hovertemplate=f"{cols} %{{x}}: %{{y:.4g}}<extra></extra>"))
    fig.update_layout(title=titled(f"The vector of {said}", f"{safe_label(step.name, 50)}, norm "
                                                            f"{float(row.norm()):.4g}"),
                      height=300, margin={"l": 10, "r": 10, "t": 70, "b": 40},
                      xaxis={"title": cols}, yaxis={"title": "value"})
    return fig


def stream_norms(walks: Sequence[tuple[Walk, Sequence[StreamPoint]]], token: int | None = None) -> go.Figure:
    """The norm of the stream after the embeddings and after every layer, by relative depth, a line per model (the
    mean over tokens; ``token``: that token's too)."""
    fig = go.Figure()
    for walk, points in walks:
        n = max(1, len(points) - 1)
        depth = [i / n for i in range(len(points))]
        means = [sum(p.token_norms) / max(1, len(p.token_norms)) for p in points]
        fig.add_trace(go.Scatter(x=depth, y=means, mode="lines+markers", name=safe_label(walk.model, 30) + " (mean)"))
        if token is not None and points and 0 <= token < len(points[0].token_norms):
            fig.add_trace(go.Scatter(x=depth, y=[p.token_norms[token] for p in points], mode="lines",
                                     line={"dash": "dot"}, name=safe_label(f"{walk.model}: token {token}", 30)))
    fig.update_layout(title=titled("The residual stream's norm, layer by layer",
                                   "after the embeddings (0) and after every layer (1: the last)"),
                      height=340, margin={"l": 10, "r": 10, "t": 70, "b": 40},
                      xaxis={"title": "relative depth"}, yaxis={"title": "norm of a token's vector"})
    return fig


def prediction(walk: Walk) -> go.Figure:
    """The recomputed logits' top tokens and their probabilities at the read position."""
    tokens = [safe_label(repr(t), 24) for t, _ in walk.top][::-1]
    fig = go.Figure(go.Bar(x=[p for _, p in walk.top][::-1], y=tokens, orientation="h", marker={"color": "#9467bd"},
                           hovertemplate="%{y}: %{x:.4f}<extra></extra>"))
    fig.update_layout(title=titled(f"{safe_label(walk.model, 30)} predicts",
                                   f"from the recomputed logits, temperature {walk.temperature:g}",
                                   untrained=walk.untrained),
                      height=280, margin={"l": 10, "r": 10, "t": 70, "b": 40},
                      xaxis={"title": "probability", "range": [0, 1]}, yaxis={"title": "token", "type": "category"})
    return fig
