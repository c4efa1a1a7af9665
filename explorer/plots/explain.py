"""Figures of "Why this prediction": the lens grid, rank and KL by relative depth, token strips, the tuned lens.

User text never becomes plotly markup: tokens go through ``safe_label`` / ``token_labels`` (escaped).

>>> diverging([-2.0, 1.0, None])
(-2.0, 2.0)
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.core.labels import safe_label, token_labels
from explorer.explain.attribution import METHOD_NAMES, Attribution, TokenScore
from explorer.explain.lens import Lens
from explorer.explain.methods import METHODS
from explorer.explain.tuning import TuneReport
from explorer.plots.style import CELL_FONT, cell_chars, titled

__all__ = ["depth_figure", "diverging", "lens_grid", "token_strip", "tuned_figure"]

SIGNED = "RdBu"  # negative red, positive blue: a token that lowers the target / raises it
UNSIGNED = "Blues"  # gradient norm has no sign
STRIP_ROW = 12  # tokens a row of the strip: each cell then shows about six characters at the default width


def lens_grid(result: Lens) -> go.Figure:
    """Layers x positions: each cell the layer's top-1 token at that position, coloured by its probability.

    Both axes are categories: left to guess, plotly reads labels such as "1" as numbers and draws nothing of a row
    whose label is not one. Cells show as much of the token as fits at the default width; the hover has it whole."""
    layers = [str(i) for i in range(len(result.grid_tokens))]
    x = token_labels(result.tokens, result.grid_start)
    fits = cell_chars(len(x), row_labels=layers)
    text = [[safe_label(t.strip() or t, fits) for t in row] for row in result.grid_tokens]
    whole = [[safe_label(t, 30) for t in row] for row in result.grid_tokens]
    fig = go.Figure(go.Heatmap(
        z=[list(r) for r in result.grid_probability], x=x, y=layers, text=text, customdata=whole,
        texttemplate="%{text}" if fits >= 2 else "", textfont={"size": CELL_FONT}, colorscale="Viridis", zmin=0,
        zmax=1, colorbar={"title": "p(top-1)"},
        hovertemplate="layer %{y}<br>after %{x}<br>top-1 %{customdata} (p %{z:.3f})<extra></extra>"))
    fig.update_layout(title=titled(f"{result.kind.capitalize()} lens of {safe_label(result.model, 40)}",
                                   "each layer's top prediction after each token", untrained=result.untrained),
                      height=max(320, 26 * len(layers) + 150), margin={"l": 10, "r": 10, "t": 70, "b": 90},
                      xaxis={"title": "position (the prediction made after this token)", "tickangle": -45,
                             "type": "category"},
                      yaxis={"title": "layer (0: the embeddings)", "type": "category"})
    return fig


def depth_figure(results: Sequence[Lens]) -> go.Figure:
    """The target's rank (log scale) and the KL to the final distribution (linear: it ends at 0) by relative depth,
    a line per model: a 6-layer and an 18-layer model on one axis."""
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
    fig.update_yaxes(type="log", title="rank (log scale)", row=1, col=1)
    # linear: the last layer's KL is exactly 0, which a log axis cannot draw
    fig.update_yaxes(title="KL (nats)", rangemode="tozero", row=1, col=2)
    fig.update_xaxes(title="relative depth (layer / layers)", range=[-0.02, 1.02])
    fig.update_layout(height=380, margin={"l": 10, "r": 10, "t": 60, "b": 40},
                      legend={"orientation": "h", "y": -0.25})
    return fig


def diverging(scores: Sequence[float | None]) -> tuple[float, float]:
    """A colour range symmetric about 0 that holds every score."""
    top = max((abs(s) for s in scores if s is not None), default=0.0) or 1.0
    return -top, top


def _strip_rows(result: Attribution) -> list[tuple[str, list[TokenScore]]]:
    """The strip's rows, named: a sentence (or each sentence of a pair) in rows of at most ``STRIP_ROW`` tokens."""
    parts = sorted({t.part for t in result.tokens})
    pair = len(parts) > 1
    sentences = [[t for t in result.tokens if t.part == part] for part in parts]
    wraps = any(len(mine) > STRIP_ROW for mine in sentences)
    rows = []
    for part, mine in zip(parts, sentences, strict=True):
        for start in range(0, len(mine), STRIP_ROW):
            label = f"sentence {'AB'[part]}" if pair else "text"
            if wraps:  # which tokens the row holds
                span = f"{start}-{min(start + STRIP_ROW, len(mine)) - 1}"  # positions, from 0 as on the lens
                label = f"{'AB'[part]} {span}" if pair else span
            rows.append((label, mine[start:start + STRIP_ROW]))
    return rows


def token_strip(result: Attribution) -> go.Figure:
    """The text as a strip of tokens coloured by score, wrapped into rows of ``STRIP_ROW`` tokens (a sentence pair:
    each sentence its own rows); the value on hover; a token left without a score (budget) is blank."""
    rows = _strip_rows(result)
    width = max((len(r) for _, r in rows), default=0)
    z = [[t.score for t in r] + [None] * (width - len(r)) for _, r in rows]
    fits = cell_chars(width, row_labels=[name for name, _ in rows])
    text = [[safe_label(t.token.strip() or t.token, fits) for t in r] + [""] * (width - len(r)) for _, r in rows]
    whole = [[safe_label(t.token, 40) for t in r] + [""] * (width - len(r)) for _, r in rows]
    signed = METHODS[result.method].signed
    lo, hi = diverging([t.score for t in result.tokens]) if signed else (0.0, max(
        (t.score for t in result.tokens if t.score is not None), default=1.0) or 1.0)
    fig = go.Figure(go.Heatmap(z=z, text=text, customdata=whole, texttemplate="%{text}", textfont={"size": CELL_FONT},
                               y=[name for name, _ in rows], colorscale=SIGNED if signed else UNSIGNED, zmin=lo,
                               zmax=hi, xgap=2, ygap=2, colorbar={"title": "score"},
                               hovertemplate="%{customdata}<br>score %{z:.4f}<extra></extra>"))
    name = METHOD_NAMES[result.method]
    done = "" if result.completeness is None else f"completeness gap {result.completeness:.2%}"
    fig.update_layout(title=titled(f"{name}: {safe_label(result.objective, 62 - len(name))}", done,
                                   untrained=result.untrained),
                      height=130 + 40 * len(rows), margin={"l": 10, "r": 10, "t": 60, "b": 20},
                      xaxis={"visible": False}, yaxis={"autorange": "reversed", "type": "category"})
    return fig


def tuned_figure(report: TuneReport) -> go.Figure:
    """Each layer's held-out KL to the final distribution: the logit lens beside the tuned lens (a linear axis: the
    last layer's KL is 0)."""
    layers = list(range(len(report.logit_kl)))
    fig = go.Figure([go.Bar(x=layers, y=list(report.logit_kl), name="logit lens"),
                     go.Bar(x=layers, y=list(report.tuned_kl), name="tuned lens")])
    fig.update_layout(barmode="group", height=340, margin={"l": 10, "r": 10, "t": 70, "b": 40},
                      title=titled("Held-out KL to the final distribution",
                                   f"{safe_label(report.model, 40)}, tuned lens trained {report.steps} steps"),
                      xaxis={"title": "layer (0: embeddings)"}, yaxis={"title": "KL (nats)", "rangemode": "tozero"},
                      legend={"orientation": "h", "y": 1.1, "x": 1, "xanchor": "right"})
    return fig
