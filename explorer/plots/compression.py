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
from explorer.plots.style import titled

__all__ = ["answer_rows", "frontier", "higher_is_better", "megabytes", "points", "table_rows", "tradeoff_figure"]

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
    """(row, size in MB, latency relative to the original, quality) for the original and every method (the
    latency ratios are the study's own, :attr:`explorer.compression.result.Study.ratios`)."""
    out = [(study.baseline, study.baseline.size_bytes / 1e6, 1.0, study.baseline.quality.value)]
    for r, ratios in zip(study.rows, study.ratios, strict=True):
        latency = ratios.latency if ratios.latency is not None else 1.0  # no original timing: drawn as "as fast"
        out.append((r, r.size_bytes / 1e6, latency, r.quality.value))
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
    fig.update_yaxes(title_text=f"{metric} ({arrow})")  # both panels: each reads alone
    fig.update_xaxes(title_text="size on disk (MB)", row=1, col=1)
    fig.update_xaxes(title_text=f"latency / original's (1 = same; {study.device})", row=1, col=2)
    fig.update_layout(title=titled(safe_label(study.name, 50), "what each method buys (size, latency) and costs "
                                                                "(quality) against the original"), height=470,
                      margin={"l": 10, "r": 10, "t": 80, "b": 40},
                      legend={"orientation": "h", "y": -0.18})
    return fig


def megabytes(n: int) -> str:
    """Bytes as the page's caption says them: ``"90.9 MB"``."""
    return f"{n / 1e6:,.1f} MB"


def _rounded(ratio: float | None) -> float | None:
    return round(ratio, 3) if ratio is not None else None  # None: the original's figure gives no ratio


def table_rows(study: Study) -> list[dict[str, object]]:
    """The page's table, one row per method: size and latency with their ratios to the original (the study's
    own), throughput, the quality metric beside the original's and its other figures, sparsity."""
    return [{"method": r["method"], "size MB": round(r["size_bytes"] / 1e6, 2), "× size": _rounded(x.size),
             "latency ms": r["latency_ms"], "× latency": _rounded(x.latency),
             f"throughput ({r['throughput_unit']})": r["throughput"], r["quality"]["metric"]: r["quality"]["value"],
             "original": r["quality"]["baseline_value"],
             **{k: v for k, v in r["quality"].items() if k not in ("metric", "value", "baseline_value")},
             "sparsity": r["sparsity"]} for r, x in zip(study.records(), study.ratios, strict=True)]


def answer_rows(study: Study) -> list[dict[str, str]]:
    """Each model's answer to the one prompt, the original first."""
    return [{"model": r.method, "answer": r.answer} for r in (study.baseline, *study.rows)]
