"""Figures of the similarity area: cosine heatmap, search bars, MaxSim token matrix, rankings, compression.

Data in, plotly figure out. Sentences and tokens are user text: plotly renders a subset of HTML in
labels, so every label goes through :func:`explorer.core.labels.safe_label` and shows tags as typed.
Random-weight results say so in the title (:data:`explorer.core.labels.UNTRAINED`).
"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.core.labels import UNTRAINED, safe_label, untrained_suffix
from explorer.plots.style import CELL_FONT, cell_chars, titled
from explorer.tasks.colbert import CompressionStudy, MaxSim, Ranking
from explorer.tasks.colbert.compression import fp16_bytes
from explorer.tasks.similarity import SearchResult, SimilarityResult

# UNTRAINED and safe_label are re-exported (their home is explorer.core.labels): plots.spans imports them from here.
__all__ = [
    "BLUE", "GREY", "ORANGE", "UNTRAINED", "compression_figure", "maxsim_heatmap", "ranking_slope", "safe_label",
    "search_bars", "similarity_heatmap",
]

BLUE, ORANGE, GREY = "#1f5fa8", "#e8710a", "#9aa0a6"


def _unique(labels: list[str]) -> list[str]:
    """Number the labels: plotly merges identical category labels (two sentences cut to the same text)."""
    return [f"{i + 1}. {lab}" for i, lab in enumerate(labels)]


def similarity_heatmap(res: SimilarityResult) -> go.Figure:
    """(N, N) cosine matrix as a heatmap, values printed in the cells when they fit."""
    labels = _unique([safe_label(s, 32) for s in res.sentences])
    n = len(labels)
    fits = cell_chars(n, row_labels=labels) >= len("-0.00")  # the values in the cells when they fit
    fig = go.Figure(go.Heatmap(
        z=[list(r) for r in res.matrix], x=labels, y=labels, zmin=-1, zmax=1, colorscale="RdBu_r",
        texttemplate="%{z:.2f}" if fits else None, textfont={"size": CELL_FONT}, colorbar={"title": "cosine"},
        hovertemplate="%{y}<br>%{x}<br>cosine %{z:.3f}<extra></extra>",
    ))
    title = titled(f"Cosine similarity, {safe_label(res.model)}", f"{res.dim}-d mean-pooled", untrained=res.untrained)
    fig.update_layout(title=title, height=max(360, 28 * n + 170), margin={"l": 10, "r": 10, "t": 60, "b": 10})
    fig.update_yaxes(autorange="reversed")
    return fig


def search_bars(res: SearchResult) -> go.Figure:
    """Horizontal bars of cosine similarity to the query, best at the top."""
    labels = [f"#{h.rank} {safe_label(h.sentence, 60)}" for h in res.hits]
    fig = go.Figure(go.Bar(x=[h.score for h in res.hits], y=labels, orientation="h", marker_color=BLUE,
                           hovertemplate="%{y}<br>cosine %{x:.3f}<extra></extra>"))
    fig.update_layout(title=f"Query: {safe_label(res.query, 60)}{untrained_suffix(res.untrained)}",
                      xaxis_title="cosine similarity to the query", height=max(260, 30 * len(labels) + 120),
                      margin={"l": 10, "r": 10, "t": 50, "b": 40})
    fig.update_yaxes(autorange="reversed")
    return fig


def maxsim_heatmap(m: MaxSim, title: str) -> go.Figure:
    """Query tokens (rows) x document tokens (columns) cosine, each row's MaxSim match circled."""
    qlab = [f"{i}:{safe_label(t, 14)}" for i, t in enumerate(m.query_tokens)]
    dlab = [f"{j}:{safe_label(t, 14)}" for j, t in enumerate(m.doc_tokens)]
    fig = go.Figure(go.Heatmap(z=[list(r) for r in m.matrix], x=dlab, y=qlab, zmin=-1, zmax=1,
                               colorscale="RdBu_r", colorbar={"title": "cosine"},
                               hovertemplate="query %{y}<br>doc %{x}<br>cosine %{z:.3f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[dlab[j] for j in m.best], y=qlab, mode="markers", name="MaxSim match",
                             marker={"symbol": "circle-open", "size": 14, "color": "black", "line": {"width": 2}},
                             customdata=list(m.best_sim),
                             hovertemplate="%{y} → %{x}<br>contributes %{customdata:.3f}<extra></extra>"))
    fig.update_layout(title=f"{title}<br><sup>score = sum of circled cells = {m.score:.3f}</sup>",
                      height=max(320, 22 * len(qlab) + 160), margin={"l": 10, "r": 10, "t": 70, "b": 10},
                      legend={"orientation": "h", "y": -0.15})
    fig.update_yaxes(autorange="reversed")
    return fig


def ranking_slope(r: Ranking) -> go.Figure:
    """Each document's rank under late interaction (left) and the bi-encoder (right); crossings = disagreement."""
    fig = go.Figure()
    for d in r.docs:
        moved = d.colbert_rank != d.bi_rank
        fig.add_trace(go.Scatter(
            x=["late interaction", "bi-encoder"], y=[d.colbert_rank, d.bi_rank], mode="lines+markers+text",
            text=[safe_label(d.text, 28), ""], textposition="middle left", showlegend=False, cliponaxis=False,
            line={"color": ORANGE if moved else GREY, "width": 3 if moved else 1.5},
            hovertemplate=f"{safe_label(d.text, 60)}<br>rank %{{y}}<extra></extra>",
        ))
    n = len(r.docs)
    fig.update_layout(title=f"Rankings, Kendall tau = {r.kendall_tau:.2f}{untrained_suffix(r.untrained)}",
                      height=max(260, 34 * n + 120), margin={"l": 200, "r": 50, "t": 50, "b": 30})
    fig.update_yaxes(autorange="reversed", dtick=1, title="rank", side="right")  # left side holds the texts
    return fig


def compression_figure(s: CompressionStudy) -> go.Figure:
    """Left: bytes per stored token vector (fp16 as ColBERT stores it, then each residual width, with
    its storage ratio). Right: exact vs compressed MaxSim score per document."""
    fig = make_subplots(cols=2, subplot_titles=("bytes per token vector", "MaxSim: exact vs compressed"))
    names = ["fp16 (ColBERT)", *[f"{b.bits}-bit residual" for b in s.reports]]
    sizes = [fp16_bytes(s.dim), *[b.bytes_per_token for b in s.reports]]
    labels = [str(sizes[0]), *[f"{b.bytes_per_token} ({b.ratio_vs_fp16:.1f}x smaller)" for b in s.reports]]
    fig.add_trace(go.Bar(x=names, y=sizes, marker_color=[GREY, *[ORANGE] * len(s.reports)],
                         text=labels, textposition="outside", showlegend=False), row=1, col=1)
    lo, hi = min(s.exact_scores), max(s.exact_scores)
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", line={"dash": "dot", "color": GREY},
                             name="unchanged"), row=1, col=2)
    for b, color in zip(s.reports, [ORANGE, BLUE, "#2ca02c", "#9467bd"], strict=False):
        fig.add_trace(go.Scatter(x=list(s.exact_scores), y=list(b.scores), mode="markers", name=f"{b.bits}-bit",
                                 marker={"color": color, "size": 9},
                                 text=[safe_label(d, 50) for d in s.docs],
                                 hovertemplate="%{text}<br>exact %{x:.3f}<br>compressed %{y:.3f}<extra></extra>"),
                      row=1, col=2)
    fig.update_xaxes(title_text="exact score", row=1, col=2)
    fig.update_yaxes(title_text="bytes", row=1, col=1)
    fig.update_yaxes(title_text="compressed score", row=1, col=2)
    fig.update_layout(height=400, margin={"l": 10, "r": 10, "t": 80, "b": 40},
                      title=titled(f"ColBERTv2 compression, {s.k} centroids, {s.n_tokens} tokens",
                                   untrained=s.untrained))
    return fig
