"""Figures of the mechanisms page (data in, plotly figure out; nothing is computed here but layout).

- :func:`deberta_terms`: one head's c2c, c2p, p2c and their sum as four heatmaps on one colour scale.
- :func:`bucket_chart`: DeBERTa's relative distance -> bucket (exact near, logarithmic far).
- :func:`triple_loss_bars`, :func:`temperature_chart`: DistilBERT's three losses and the temperature's effect.
- :func:`layer_mapping`, :func:`layerwise_bars`: TinyBERT's teacher-student layer map and its losses.
- :func:`layout_strip`: token sequences (T5, CTRL, M2M-100) as coloured cells, one row per sequence.

Token labels are user text and are HTML-escaped (:func:`explorer.core.labels.token_labels`: plotly renders a
subset of tags in labels).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.core.labels import token_labels
from explorer.papers.mechanisms.deberta import DisentangledSplit
from explorer.papers.mechanisms.distillation import DISTILBERT_WEIGHTS, LayerwiseLoss, TripleLoss
from explorer.papers.mechanisms.text2text import Layout
from explorer.plots.style import CELL_FONT, MIN_FONT, MOST_IN_CELL, row_cells, titled

__all__ = ["ROLE_COLOURS", "bucket_chart", "deberta_terms", "layer_mapping", "layerwise_bars", "layout_strip",
           "temperature_chart", "triple_loss_bars"]

TERMS = (("content→content", "c2c"), ("content→position", "c2p"), ("position→content", "p2c"), ("sum", "total"))
ROLE_COLOURS = {"prefix": "#f4a261", "code": "#e76f51", "language": "#2a9d8f", "text": "#e9ecef",
                "special": "#8d99ae"}
LOSS_NAMES = {"ce": "L_ce (soft targets, ×T²)", "mlm": "L_mlm (masked words)", "cos": "L_cos (hidden-state cosine)"}


def deberta_terms(split: DisentangledSplit, head: int) -> go.Figure:
    """(L, L) scores of one head: the three disentangled terms and their sum, rows = queries."""
    labels = token_labels(split.tokens)
    mats = [getattr(split, attr)[head] for _, attr in TERMS]
    lim = float(max(np.abs(m).max() for m in mats)) or 1.0
    fig = make_subplots(rows=1, cols=4, subplot_titles=[name for name, _ in TERMS], horizontal_spacing=0.04)
    for col, z in enumerate(mats, start=1):
        fig.add_trace(go.Heatmap(z=z.astype(np.float32), x=labels, y=labels, zmin=-lim, zmax=lim,
                                 colorscale="RdBu", reversescale=True, showscale=col == 4,
                                 hovertemplate="query %{y}<br>key %{x}<br>score %{z:.4f}<extra></extra>"),
                      row=1, col=col)
        fig.update_yaxes(autorange="reversed", showticklabels=col == 1, row=1, col=col)
    # the smallest readable size (plotly then labels every few tokens of a long text); categories, since a token
    # such as "1889" would make plotly read the labels as numbers
    fig.update_xaxes(tickangle=-60, tickfont={"size": MIN_FONT}, type="category")
    fig.update_yaxes(type="category")
    fig.update_layout(title=titled(f"{html.escape(split.key)} layer 0, head {head}", "scores before softmax",
                                   untrained=True), height=470, margin={"l": 10, "r": 10, "t": 80, "b": 10})
    return fig


def bucket_chart(distances: np.ndarray, buckets: np.ndarray, exact_up_to: int) -> go.Figure:
    """Relative distance i - j against the bucket (embedding row) DeBERTa uses: v2/v3 log buckets, v1 a clamp."""
    fig = go.Figure(go.Scatter(x=distances, y=buckets, mode="lines", name="bucket",
                               hovertemplate="distance %{x}<br>bucket %{y}<extra></extra>"))
    fig.add_trace(go.Scatter(x=distances, y=distances, mode="lines", name="one bucket per distance",
                             line={"dash": "dot", "color": "grey"}))
    fig.add_vrect(x0=-exact_up_to, x1=exact_up_to, fillcolor="green", opacity=0.08, line_width=0,
                  annotation_text=f"exact: |i - j| ≤ {exact_up_to}", annotation_position="top left")
    fig.update_yaxes(range=[float(buckets.min()) * 1.3, float(buckets.max()) * 1.3], title_text="bucket")
    fig.update_layout(title=titled("Relative distance → position bucket", "exact near; log-spaced or clamped far"),
                      xaxis_title="relative distance i - j (tokens)", height=380, margin={"t": 70})
    return fig


def triple_loss_bars(res: TripleLoss) -> go.Figure:
    """Each DistilBERT loss raw and weighted as in the released training command, with the total."""
    names = [LOSS_NAMES[k] for k in DISTILBERT_WEIGHTS]
    raw = [getattr(res, k) for k in DISTILBERT_WEIGHTS]
    fig = go.Figure([go.Bar(name="loss", x=names, y=raw, texttemplate="%{y:.3f}"),
                     go.Bar(name="× weight (5, 2, 1)", x=names, y=list(res.weighted.values()),
                            texttemplate="%{y:.3f}")])
    fig.update_layout(barmode="group", height=380, margin={"t": 60}, yaxis_title="loss (nats / 1 - cos)",
                      title=titled(f"DistilBERT triple loss at T = {res.temperature:g}: total {res.total:.3f}",
                                   untrained=True))
    return fig


def temperature_chart(temperatures: Sequence[float], losses: np.ndarray, kl: np.ndarray, entropies: np.ndarray,
                      vocab_size: int) -> go.Figure:
    """Soft-target loss (×T²), the KL alone and the teacher's entropy against T, from the same logits."""
    t = list(temperatures)
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Scatter(x=t, y=losses, name="L_ce = T²·KL", mode="lines+markers"))
    fig.add_trace(go.Scatter(x=t, y=kl, name="KL alone", mode="lines+markers", line={"dash": "dot"}))
    fig.add_trace(go.Scatter(x=t, y=entropies, name="teacher entropy (nats, right)", mode="lines+markers",
                             line={"dash": "dash"}), secondary_y=True)
    fig.add_trace(go.Scatter(x=[t[0], t[-1]], y=[float(np.log(vocab_size))] * 2, mode="lines",
                             name=f"uniform over {vocab_size:,} (right)", line={"color": "grey", "dash": "dot"}),
                  secondary_y=True)
    fig.update_xaxes(title_text="temperature T", type="log", tickvals=t)
    fig.update_yaxes(title_text="loss", secondary_y=False)
    fig.update_yaxes(title_text="entropy (nats)", secondary_y=True)
    fig.update_layout(title=titled("Higher T: softer targets, smaller KL", untrained=True),
                      height=400, margin={"t": 70}, legend={"orientation": "h", "y": -0.25})
    return fig


def _layer_name(i: int) -> str:
    return "embeddings" if i == 0 else f"layer {i}"


def layer_mapping(mapping: Sequence[int], n_teacher: int, student: str = "TinyBERT",
                  teacher: str = "BERT-base") -> go.Figure:
    """Teacher layers 0..N (left) and student layers 0..M (right); a line from g(m) to m (0 = embeddings)."""
    n_student = len(mapping) - 1
    y_t = np.arange(n_teacher + 1) / n_teacher  # both stacks drawn over the same height
    y_s = np.arange(n_student + 1) / n_student
    fig = go.Figure()
    for m, g in enumerate(mapping):
        fig.add_trace(go.Scatter(x=[0, 1], y=[y_t[g], y_s[m]], mode="lines", showlegend=False, hoverinfo="skip",
                                 line={"color": "#e76f51", "width": 2}))
    fig.add_trace(go.Scatter(x=[0] * (n_teacher + 1), y=y_t, mode="markers+text", name=teacher,
                             text=[_layer_name(i) for i in range(n_teacher + 1)], textposition="middle left",
                             marker={"size": 14, "color": "#264653"}))
    fig.add_trace(go.Scatter(x=[1] * (n_student + 1), y=y_s, mode="markers+text", name=student,
                             text=[f"{_layer_name(m)} ← {_layer_name(g)}" for m, g in enumerate(mapping)],
                             textposition="middle right", marker={"size": 18, "color": "#2a9d8f"}))
    fig.update_xaxes(visible=False, range=[-0.8, 2.1])
    fig.update_yaxes(visible=False, range=[-0.08, 1.08])
    fig.update_layout(title=f"{student} layer m learns from {teacher} layer g(m) = m·{n_teacher}/{n_student}",
                      height=460, margin={"t": 60, "l": 10, "r": 10}, legend={"orientation": "h"})
    return fig


def layerwise_bars(res: LayerwiseLoss) -> go.Figure:
    """Attention-score and hidden-state MSE per student layer, embedding MSE and prediction soft CE."""
    pairs = [f"S{m} ← T{g}" for m, g in enumerate(res.mapping)]
    fig = go.Figure([
        go.Bar(name="attention MSE (scores)", x=pairs[1:], y=list(res.attention)),
        go.Bar(name="hidden MSE (H_s·W_h vs H_t)", x=pairs[1:], y=list(res.hidden)),
        go.Bar(name="embedding MSE (E_s·W_e vs E_t)", x=pairs[:1], y=[res.embedding]),
        go.Bar(name="prediction soft CE", x=["prediction"], y=[res.prediction]),
    ])
    fig.update_layout(barmode="group", height=400, margin={"t": 60}, yaxis_title="loss",
                      title=titled(f"TinyBERT layer-wise losses: total {res.total:.3f}", untrained=True))
    return fig


def _strip_rows(rows: Mapping[str, Layout]) -> list[tuple[str, int, Layout]]:
    """(label, first position, tokens) of each row: a sequence in rows of as many tokens as fit whole (up to
    ``MOST_IN_CELL`` characters) at the default width; a wrapped one's rows say which positions they hold."""
    names = [html.escape(k) for k in rows]
    longest = min(MOST_IN_CELL, max(len(t) for layout in rows.values() for t in layout.tokens))
    per_row = max(1, row_cells(longest, row_labels=[f"{n} 00-00" for n in names], colorbar=False))
    out = []
    for name, layout in zip(names, rows.values(), strict=True):
        n = len(layout.tokens)
        for a in range(0, n, per_row):
            b = min(a + per_row, n)
            span = f"{a}-{b - 1}" if b - a > 1 else f"{a}"
            out.append((name if n <= per_row else f"{name} {span}", a,
                        Layout(layout.tokens[a:b], layout.ids[a:b], layout.roles[a:b])))
    return out


def layout_strip(rows: Mapping[str, Layout], title: str) -> go.Figure:
    """Each sequence as rows of cells coloured by role (prefix, code, language, text, special), wrapped so that
    every cell shows its token."""
    roles = list(ROLE_COLOURS)
    lines = _strip_rows(rows)
    width = max(len(layout.tokens) for _, _, layout in lines)
    z = np.full((len(lines), width), np.nan)
    text = [[""] * width for _ in lines]
    hover = [[""] * width for _ in lines]
    for r, (_, first, layout) in enumerate(lines):
        for c, (tok, tid, role) in enumerate(zip(layout.tokens, layout.ids, layout.roles, strict=True)):
            z[r, c] = roles.index(role)
            text[r][c] = html.escape(tok if len(tok) <= MOST_IN_CELL else tok[:MOST_IN_CELL - 1] + "…")
            hover[r][c] = f"{html.escape(tok)}<br>position {first + c}, id {'?' if tid is None else tid}<br>{role}"
    scale = [[i / (len(roles) - 1), colour] for i, colour in enumerate(ROLE_COLOURS.values())]
    fig = go.Figure(go.Heatmap(z=z, text=text, customdata=hover, texttemplate="%{text}", textfont={"size": CELL_FONT},
                               colorscale=scale, zmin=0, zmax=len(roles) - 1, showscale=False, xgap=2, ygap=6,
                               hovertemplate="%{customdata}<extra></extra>", y=[label for label, _, _ in lines]))
    for role in sorted({r for layout in rows.values() for r in layout.roles}, key=roles.index):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=role,  # legend entries only
                                 marker={"size": 12, "symbol": "square", "color": ROLE_COLOURS[role]}))
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(title_text="token in the row (hover a cell for its position and id)")
    fig.update_layout(title=html.escape(title), height=140 + 50 * len(lines), margin={"t": 50, "l": 10, "r": 10},
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 1, "xanchor": "right"},
                      plot_bgcolor="white")
    return fig
