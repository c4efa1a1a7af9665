"""Figures of causal interventions (data in, plotly figure out): patching grids, families side by side on a
relative-depth axis, the next-token distribution before and after an ablation, heads by ablation effect against
their gradient importance.

A grid is drawn on a diverging scale centred on 0 (the corrupted run; 1 is the clean run), its cells clipped to
[-1, 1] for the colours only (the hover says the value); positions before the first token the prompts differ in
are outlined, since patching them cannot change a decoder. Tokens and titles are user text: escaped
(:func:`explorer.core.labels.token_labels`).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.core.labels import UNTRAINED, safe_label, token_labels
from explorer.interventions.ablation import Ablation
from explorer.interventions.grid import PatchGrid
from explorer.interventions.ranking import HeadRanking
from explorer.plots.style import DEFAULT_WIDTH, SUBPLOT_TITLE_FONT, chars_in, titled

__all__ = ["COLORSCALE", "across_figure", "distribution_figure", "patch_heatmap", "ranking_figure"]

COLORSCALE = "RdBu"  # red below 0 (worse than corrupted), white 0, blue 1 (clean)
Z_RANGE = (-1.0, 1.0)  # symmetric, so 0 (the corrupted run) is white; beyond is clipped for colour only


def _z(grid: PatchGrid) -> np.ndarray:
    return np.array(grid.grid, dtype=np.float64).reshape(len(grid.values), len(grid.columns))


def _columns(grid: PatchGrid) -> list[str]:
    return list(grid.columns) if grid.site == "heads" else token_labels(grid.columns)


def _heatmap(grid: PatchGrid, y: Sequence[float] | Sequence[str], showscale: bool = True) -> go.Heatmap:
    raw = np.array(grid.values, dtype=np.float64).reshape(_z(grid).shape)
    return go.Heatmap(
        z=_z(grid), x=_columns(grid), y=list(y), customdata=raw, colorscale=COLORSCALE, zmid=0.0,
        zmin=Z_RANGE[0], zmax=Z_RANGE[1], showscale=showscale, hoverongaps=False,
        colorbar={"title": {"text": "restored"}},
        hovertemplate="%{y} · %{x}<br>restored %{z:.3f}<br>metric %{customdata:.4f}<extra></extra>")


def patch_heatmap(grid: PatchGrid) -> go.Figure:
    """Layers (bottom to top) x positions (or heads): how much of the clean answer each patch restores."""
    layers = [f"layer {i}" for i in range(len(grid.values))]
    fig = go.Figure(_heatmap(grid, layers))
    if grid.site != "heads" and 0 < grid.first_difference < len(grid.columns):
        fig.add_vrect(x0=-0.5, x1=grid.first_difference - 0.5, line_width=1, line_dash="dot", fillcolor="grey",
                      opacity=0.08, annotation_text="same tokens", annotation_position="top left")
    foil = f" vs {safe_label(grid.foil, 20)}" if grid.foil else ""
    fig.update_layout(
        title={"text": titled(html.escape(grid.title.removesuffix(UNTRAINED)),
                              f"target {safe_label(grid.target, 20)}{foil}; clean {grid.clean_metric:.3f}, corrupted "
                              f"{grid.corrupt_metric:.3f}", untrained=grid.untrained)},
        height=int(min(900, max(360, 22 * len(layers) + 200))), margin={"l": 10, "r": 10, "t": 90, "b": 10})
    fig.update_xaxes(title_text="head" if grid.site == "heads" else "position (clean prompt's token)",
                     tickangle=-45, type="category")  # a token such as "1889" must not make the axis numeric
    fig.update_yaxes(title_text="layer", type="category")
    return fig


def across_figure(grids: Sequence[PatchGrid]) -> go.Figure:
    """One panel per model, every panel's rows placed at their layers' relative depth (0 = first block, 1 = last),
    so stacks of different heights line up."""
    cols = max(1, len(grids))
    fits = chars_in(DEFAULT_WIDTH / cols, SUBPLOT_TITLE_FONT)
    fig = make_subplots(rows=1, cols=cols, shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=[titled(safe_label(g.model, fits), g.family, untrained=g.untrained)
                                        for g in grids])
    for i, grid in enumerate(grids):
        fig.add_trace(_heatmap(grid, [round(d, 4) for d in grid.depth], showscale=i == 0), row=1, col=i + 1)
        fig.update_xaxes(tickangle=-45, type="category", row=1, col=i + 1)
    fig.update_yaxes(title_text="relative depth (0 = first layer, 1 = last)", range=[-0.08, 1.08], row=1, col=1)
    fig.update_layout(title={"text": titled("The same patching grid across families",
                                            "the residual stream unless another site is chosen")},
                      height=540, margin={"l": 10, "r": 10, "t": 110, "b": 10})
    return fig


def distribution_figure(result: Ablation) -> go.Figure:
    """The top next tokens before and after the ablation, side by side."""
    rows = result.rows()
    tokens = token_labels([str(r["token"]) for r in rows])
    fig = go.Figure()
    for name, colour in (("before", "#4c78a8"), ("after", "#e45756")):
        values = [float("nan") if r[name] is None else float(r[name]) for r in rows]  # type: ignore[arg-type]
        fig.add_trace(go.Bar(x=tokens, y=values, name=name, marker_color=colour,
                             hovertemplate=f"%{{x}}<br>{name}: %{{y:.4f}}<extra></extra>"))
    fig.update_layout(barmode="group", title={"text": titled(html.escape(
        f"{result.mode.capitalize()} ablation of {result.component}"), "the next token before and after",
        untrained=result.untrained)}, yaxis_title="probability", height=420,
        margin={"l": 10, "r": 10, "t": 70, "b": 10})
    return fig


def ranking_figure(ranking: HeadRanking) -> go.Figure:
    """Every head: its ablation effect on this prompt (x) against Michel et al.'s gradient importance (y)."""
    heads = [h for h in ranking.heads if not math.isnan(h.effect)]
    scored = [h for h in heads if h.importance is not None]
    shown = scored or heads
    fig = go.Figure(go.Scatter(
        x=[h.effect for h in shown], y=[h.importance if h.importance is not None else 0.0 for h in shown],
        mode="markers+text", text=[f"{h.layer}.{h.head}" for h in shown], textposition="top center",
        marker={"color": [h.layer for h in shown], "colorscale": "Viridis", "showscale": True,
                "colorbar": {"title": {"text": "layer"}}},
        hovertemplate="head %{text}<br>effect %{x:.4f}<br>importance %{y:.4f}<extra></extra>"))
    rho = f"Spearman ρ(|effect|, importance) = {ranking.spearman:.2f}" if ranking.spearman is not None else ""
    fig.update_layout(title={"text": titled(html.escape(f"Heads: ablation effect on the {ranking.metric} vs gradient "
                                                        "importance"), rho, untrained=ranking.untrained)},
                      xaxis_title=f"{ranking.mode} ablation effect (ablated − original)",
                      yaxis_title="gradient importance (Michel et al.)" if scored else "(no gradient importance)",
                      height=480, margin={"l": 10, "r": 10, "t": 60, "b": 10})
    return fig
