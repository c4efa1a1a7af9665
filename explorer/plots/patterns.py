"""Figures of the patterns area: mask heatmaps and cost-vs-length charts (data in, figure out)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from explorer.architecture.patterns.costs import CostCurve
from explorer.architecture.patterns.masks import MaskView
from explorer.architecture.patterns.variants import VariantPattern
from explorer.plots.style import titled

__all__ = ["METRICS", "cost_chart", "mask_heatmap", "variant_mask_heatmap"]

# Two colours only: a mask is boolean, a colour bar would suggest a scale.
MASK_COLORS = [[0.0, "#f1f3f6"], [0.5, "#f1f3f6"], [0.5, "#1f5fa8"], [1.0, "#1f5fa8"]]
METRICS = {
    "score_memory_bytes": ("fp32 score memory (bytes, one head, one layer)", "bytes"),
    "flops": ("attention FLOPs (QK^T + AV, one head, one layer)", "FLOPs"),
    "nnz": ("attending pairs (non-zeros of the mask)", "pairs"),
    "density": ("density (share of pairs that attend)", ""),
}
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f"]


def mask_heatmap(mask: np.ndarray, factor: int, title: str, *, kind: str = "", q_label: str = "query token",
                 k_label: str = "key token") -> go.Figure:
    """Heatmap of a (possibly max-pooled) boolean mask ``(rows, cols)``; row 0 at the top.

    Cells are placed in token coordinates (cell ``c`` covers tokens ``c*f .. c*f+f-1``), so the
    axes read in tokens whatever the pooling; a pooled figure says so in its subtitle.
    """
    z = mask.astype(np.uint8)  # uint8 travels as a compact typed array (plotly base64 "bdata")
    fig = go.Figure(go.Heatmap(
        z=z, x0=(factor - 1) / 2, dx=factor, y0=(factor - 1) / 2, dy=factor, zmin=0, zmax=1,
        colorscale=MASK_COLORS, showscale=False,
        hovertemplate=f"{q_label} %{{y:.0f}}<br>{k_label} %{{x:.0f}}<br>attends: %{{z}}<extra></extra>",
    ))
    sub = (f"max-pooled: 1 cell = {factor}x{factor} tokens, lit if any pair attends"
           if factor > 1 else "exact: 1 cell = 1 query/key pair")
    fig.update_layout(
        title={"text": titled(title, kind, sub)},  # two short lines: the page draws three masks a row
        margin={"l": 50, "r": 10, "t": 80, "b": 40}, height=400,
        xaxis={"title": k_label, "constrain": "domain", "side": "bottom"},
        yaxis={"title": q_label, "autorange": "reversed", "scaleanchor": "x", "constrain": "domain"},
    )
    return fig


def variant_mask_heatmap(vp: VariantPattern, view: MaskView) -> go.Figure:
    """:func:`mask_heatmap` of one variant's layer: titled with its name, layer and part; a
    cross-attention mask reads decoder queries against encoder keys."""
    title = f"{vp.name}, layer {vp.layer}" + ("" if vp.part == "self" else f" ({vp.part})")
    q_label, k_label = ("decoder query", "encoder key") if vp.part == "cross" else ("query token", "key token")
    return mask_heatmap(view.pooled, view.factor, title, kind=vp.layer_kind, q_label=q_label, k_label=k_label)


def _split_at(curve: CostCurve, values: Sequence[float]) -> tuple[list, list, list, list]:
    """Points up to the model's max positions (solid) and beyond it (dotted), sharing one point."""
    xs, ys = list(curve.lengths), list(values)
    if curve.max_positions is None:
        return xs, ys, [], []
    inside = [i for i, t in enumerate(xs) if t <= curve.max_positions]
    cut = (inside[-1] + 1) if inside else 0
    start = max(cut - 1, 0)  # repeat the last solid point so the dotted part joins it
    return xs[:cut], ys[:cut], xs[start:], ys[start:]


def cost_chart(curves: Sequence[CostCurve], metric: str = "score_memory_bytes") -> go.Figure:
    """Log-log cost against sequence length for several variants (slope 2 = quadratic, 1 = linear).

    The part of a curve past the model's max positions is dotted: that input would not fit the
    model as published, the curve only shows how the pattern would scale.
    """
    title, unit = METRICS[metric]
    what, _, detail = title.partition(" (")  # "attention FLOPs", "QK^T + AV, one head, one layer)"
    fig = go.Figure()
    for n, curve in enumerate(curves):
        color, values = PALETTE[n % len(PALETTE)], getattr(curve, metric)
        x_in, y_in, x_out, y_out = _split_at(curve, values)
        hover = f"{curve.label}<br>%{{x}} tokens: %{{y:.3s}} {unit}<extra></extra>"
        for xs, ys, dash, tail in ((x_in, y_in, "solid", ""), (x_out, y_out, "dot", " (beyond max positions)")):
            if xs:
                fig.add_trace(go.Scatter(
                    x=xs, y=ys, mode="lines+markers", name=curve.label + tail, legendgroup=curve.label,
                    line={"color": color, "dash": dash}, marker={"size": 4}, hovertemplate=hover,
                ))
    fig.update_layout(
        title={"text": titled(f"{what} vs sequence length", (f"({detail}; " if detail else "")
                              + "log-log: slope 2 = quadratic, slope 1 = linear",
                              "dotted: longer than the model's max positions")},
        xaxis={"title": "sequence length (tokens)", "type": "log"},
        yaxis={"title": title, "type": "log" if metric != "density" else "linear"},
        margin={"l": 60, "r": 10, "t": 90, "b": 50}, height=480, legend={"font": {"size": 11}},
    )
    return fig
