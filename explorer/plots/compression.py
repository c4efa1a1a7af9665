"""Figures of the compression lab: quality against size and against latency, with the Pareto frontier.

Data in (a :class:`explorer.compression.study.Study`), plotly figure out. Every method is a point; the
original is a star. The frontier joins the points no other point beats on both axes (smaller or faster
*and* at least as good): the methods worth considering. Quality is "higher is better" for cosine
agreement and "lower is better" for perplexity; the y axis says which. Latency is shown relative to the
original timed in the same alternation (1.0 = as fast), so a busy machine does not move the points.

>>> frontier([(1.0, 0.9), (2.0, 1.0), (1.5, 0.8), (3.0, 0.95)], higher_better=True)
[0, 1]
"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.compression.study import Row, Study
from explorer.core.labels import safe_label

__all__ = ["frontier", "higher_is_better", "points", "tradeoff_figure"]

BLUE, ORANGE, GREY = "#1f5fa8", "#e8710a", "#9aa0a6"


def higher_is_better(metric: str) -> bool:
    """Perplexity falls as a model gets better; agreement and correlation rise."""
    return "perplexity" not in metric


def frontier(pts: list[tuple[float, float]], higher_better: bool) -> list[int]:
    """Indices of the (cost, quality) points no other point dominates, cheapest first."""
    def beats(a: tuple[float, float], b: tuple[float, float]) -> bool:
        better_q = a[1] >= b[1] if higher_better else a[1] <= b[1]
        strictly = a[0] < b[0] or (a[1] > b[1] if higher_better else a[1] < b[1])
        return a[0] <= b[0] and better_q and strictly

    keep = [i for i, p in enumerate(pts) if not any(beats(q, p) for j, q in enumerate(pts) if j != i)]
    return sorted(keep, key=lambda i: pts[i][0])


def points(study: Study) -> list[tuple[Row, float, float, float]]:
    """(row, size in MB, latency relative to the original, quality) for the original and every method."""
    out = [(study.baseline, study.baseline.size_bytes / 1e6, 1.0, study.baseline.quality.value)]
    for r in study.rows:
        ratio = r.latency_ms / r.baseline_latency_ms if r.baseline_latency_ms > 0 else 1.0
        out.append((r, r.size_bytes / 1e6, ratio, r.quality.value))
    return out


def _panel(fig: go.Figure, pts: list[tuple[Row, float, float, float]], axis: int, higher: bool) -> None:
    xy = [(p[1] if axis == 1 else p[2], p[3]) for p in pts]  # (size or latency, quality)
    names = [safe_label(p[0].method, 24) for p in pts]
    col = axis  # 1: size, 2: latency
    fig.add_trace(go.Scatter(
        x=[x for x, _ in xy], y=[y for _, y in xy], mode="markers+text", text=names, textposition="top center",
        marker={"size": [16 if p[0].method == "original" else 11 for p in pts],
                "symbol": ["star" if p[0].method == "original" else "circle" for p in pts],
                "color": [ORANGE if p[0].method == "original" else BLUE for p in pts]},
        hovertemplate="%{text}<br>%{x:.3g}<br>quality %{y:.4f}<extra></extra>", showlegend=False), row=1, col=col)
    best = frontier(xy, higher)
    fig.add_trace(go.Scatter(
        x=[xy[i][0] for i in best], y=[xy[i][1] for i in best], mode="lines", line={"color": GREY, "dash": "dash"},
        name="Pareto frontier", showlegend=col == 1, hoverinfo="skip"), row=1, col=col)


def tradeoff_figure(study: Study) -> go.Figure:
    """Two panels: quality vs size on disk (MB), quality vs latency relative to the original."""
    pts = points(study)
    metric = study.baseline.quality.metric
    higher = higher_is_better(metric)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=("Quality vs size on disk", "Quality vs latency"))
    _panel(fig, pts, 1, higher)
    _panel(fig, pts, 2, higher)
    arrow = "higher is better" if higher else "lower is better"
    fig.update_yaxes(title_text=f"{metric} ({arrow})", row=1, col=1)
    fig.update_xaxes(title_text="size on disk (MB)", row=1, col=1)
    fig.update_xaxes(title_text=f"latency / original's (1 = same; {study.device})", row=1, col=2)
    fig.update_layout(title=f"{safe_label(study.name, 60)}: what each method buys and costs", height=460,
                      margin={"l": 10, "r": 10, "t": 70, "b": 40},
                      legend={"orientation": "h", "y": -0.18})
    return fig
