"""Figures of the results page: score against cost with the efficiency frontier, and the speed ratio.

Pure builders: result values in, plotly figure out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from explorer.core.labels import safe_label
from explorer.papers.results import Point
from explorer.papers.speed import Speed

__all__ = ["AXES", "efficiency_figure", "glue_figure", "speed_figure"]

# x choice -> (Point attribute, axis title, short label for the picker)
AXES = {
    "params": ("params", "parameters (bare network, counted here)", "parameters"),
    "flops": ("flops_per_token", "forward FLOPs per token at 128 tokens (our cost model)", "FLOPs per token"),
    "train_flops": ("train_flops", "pretraining FLOPs (the paper's, else 6 x params x tokens)", "pretraining compute"),
}


def _hover(p: Point, x_attr: str) -> str:
    return (f"<b>{safe_label(p.model, 60)}</b><br>catalog: {p.variant}<br>score {p.score:g}<br>"
            f"{x_attr} {getattr(p, x_attr):.3g}<br>{safe_label(p.source, 80)}")


def efficiency_figure(points: Sequence[Point], frontier: Sequence[Point], metric: str, x: str = "params") -> go.Figure:
    """Published score against our cost per variant; the frontier joins the points nothing cheaper beats."""
    x_attr, x_title, short = AXES[x]
    fig = go.Figure()
    fig.add_scatter(x=[getattr(p, x_attr) for p in frontier], y=[p.score for p in frontier], mode="lines",
                    line={"shape": "hv", "dash": "dot", "color": "#888"}, name="efficiency frontier",
                    hoverinfo="skip")
    fig.add_scatter(x=[getattr(p, x_attr) for p in points], y=[p.score for p in points], mode="markers+text",
                    text=[safe_label(p.model, 28) for p in points], textposition="top center",
                    marker={"size": 11, "color": ["#d62728" if p in frontier else "#1f77b4" for p in points]},
                    hovertext=[_hover(p, x_attr) for p in points], hoverinfo="text", name="published score")
    fig.update_layout(title=f"{safe_label(metric)} against {short}", xaxis_title=x_title,
                      yaxis_title=safe_label(metric), xaxis_type="log", legend={"orientation": "h", "y": -0.2})
    return fig


def speed_figure(result: Speed, paper: dict[str, float]) -> go.Figure:
    """The paper's time ratio beside the one measured here (same pair of variants)."""
    first, second = result.keys
    labels, ratios = [f"measured here ({result.runs} rounds, {result.seq_len} tokens)"], [result.ratio]
    if first in paper and second in paper:
        labels.insert(0, "Sanh et al. 2019, Table 3 (668 s / 410 s)")
        ratios.insert(0, paper[first] / paper[second])
    fig = go.Figure(go.Bar(x=labels, y=ratios, text=[f"{r:.2f}x" for r in ratios], textposition="outside",
                           marker_color=["#7f7f7f", "#1f77b4"][-len(ratios):]))
    fig.update_layout(title=f"time of {first} / time of {second}", yaxis_title="ratio",
                      yaxis_range=[0, max(ratios) * 1.25])
    return fig


SPLIT_COLOURS = {"test": "#1f77b4", "dev": "#ff7f0e"}
SETTING_SYMBOLS = {"single model": "circle", "ensemble": "diamond", "human": "star"}


def glue_figure(records: Sequence[dict[str, Any]], task: str) -> go.Figure:
    """One GLUE task across papers: a dot per (model, paper, setting), coloured by split, shaped by setting."""
    shown = sorted((r for r in records if r.get(task) is not None), key=lambda r: r[task])
    fig = go.Figure()
    for split, colour in SPLIT_COLOURS.items():
        part = [r for r in shown if r["split"] == split]
        fig.add_scatter(x=[r[task] for r in part], y=[f"{safe_label(r['model'], 40)} · {safe_label(r['paper'], 30)}"
                                                      for r in part],
                        mode="markers", name=f"{split} set", marker={"size": 10, "color": colour,
                        "symbol": [SETTING_SYMBOLS.get(r["setting"], "circle") for r in part]},
                        hovertext=[f"{safe_label(r['model'], 60)}<br>{r['setting']}, {split}<br>"
                                   f"{safe_label(r['metrics'] or 'default metrics', 80)}<br>"
                                   f"{safe_label(r['source'], 80)}"
                                   for r in part], hoverinfo="text+x")
    fig.update_layout(title=f"{safe_label(task)} as each paper reports it (diamonds: ensembles)", xaxis_title=task,
                      height=max(360, 22 * len(shown) + 120), legend={"orientation": "h", "y": -0.1},
                      yaxis={"categoryorder": "array", "categoryarray": [
                          f"{safe_label(r['model'], 40)} · {safe_label(r['paper'], 30)}" for r in shown]})
    return fig
