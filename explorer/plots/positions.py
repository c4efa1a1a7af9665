"""Figures of the Positions page: what position alone contributes between a text's tokens, a position table's rows,
the series of a scheme against distance, T5's learned bias, rotary frequencies and one query turned step by step,
ALiBi's reference, and the key/value cache against context length beside the weights' bytes.

Token text never becomes plotly markup (:func:`explorer.core.labels.token_labels`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.architecture import kvcache
from explorer.architecture.positions import formulas, tables
from explorer.architecture.positions.scheme import Scheme
from explorer.core.labels import token_labels
from explorer.plots.style import titled
from explorer.tasks.positions import PositionView

__all__ = ["alibi_reference", "by_distance", "cache_curves", "cache_layers", "pair_matrix", "rotary_frequencies",
           "rotary_steps", "t5_bias", "table_components", "table_similarity"]

SHOWN_ROWS = 128  # rows of a table's similarity map (a 512 x 512 map is a blur at a column's width)
STEPS = 24  # positions one query is turned through
KIND_COLOURS = {"local": "#1f77b4", "global": "#d62728", "cross": "#7f7f7f"}


def pair_matrix(view: PositionView, name: str) -> go.Figure:
    """``(T, T)``: row = query token, column = key token, each cell what position alone gives that pair."""
    labels = token_labels(view.tokens)
    fig = go.Figure(go.Heatmap(z=view.pair, x=labels, y=labels, colorscale="RdBu", zmid=0 if view.pair.min() < 0
                               else None, hovertemplate="query %{y}<br>key %{x}<br>%{z:.3f}<extra></extra>"))
    fig.update_layout(title=titled(f"Positions of {name}", view.pair_what),
                      xaxis={"title": "key token", "type": "category"},
                      yaxis={"title": "query token", "type": "category", "autorange": "reversed"})
    return fig


def table_similarity(table: np.ndarray, random: np.ndarray | None, name: str) -> go.Figure:
    """The cosine of every two rows of the first :data:`SHOWN_ROWS` positions, beside a random table's."""
    rows = min(SHOWN_ROWS, table.shape[0])
    shown = [("trained" if random is not None else "table", table[:rows])]
    if random is not None:
        shown.append(("random (as training starts)", random[:rows]))
    fig = make_subplots(rows=1, cols=len(shown), subplot_titles=[s for s, _ in shown], horizontal_spacing=0.08)
    for i, (_, part) in enumerate(shown, start=1):
        fig.add_trace(go.Heatmap(z=tables.cosine_similarity(part), zmin=-1, zmax=1, colorscale="RdBu",
                                 coloraxis="coloraxis"), 1, i)
        fig.update_xaxes(title_text="position", row=1, col=i)
        fig.update_yaxes(title_text="position" if i == 1 else None, autorange="reversed", row=1, col=i)
    fig.update_layout(title=titled(f"Position table of {name}", f"cosine of two rows, first {rows} positions"),
                      coloraxis={"colorscale": "RdBu", "cmin": -1, "cmax": 1})
    return fig


def table_components(table: np.ndarray, name: str, k: int = 3) -> go.Figure:
    """The table's first ``k`` principal components against position: slow waves for a trained table."""
    coords, share = tables.principal_components(table, k)
    fig = go.Figure([go.Scatter(y=coords[:, i], mode="lines", name=f"PC {i + 1} ({share[i]:.0%})")
                     for i in range(coords.shape[1])])
    fig.update_layout(title=titled(f"Principal components of {name}'s table", "each row projected"),
                      xaxis_title="position", yaxis_title="coordinate")
    return fig


def by_distance(series: Mapping[str, object], name: str, what: str) -> go.Figure:
    """Each series of :func:`explorer.architecture.positions.scheme.by_distance` against the distance."""
    distances = series["distances"]
    lines = series["series"]
    assert isinstance(lines, Mapping)
    fig = go.Figure([go.Scatter(x=distances, y=values, mode="lines", name=label) for label, values in lines.items()])
    fig.update_layout(title=titled(f"{name} against distance", what), xaxis_title=f"distance ({series['distance']})",
                      yaxis_title="value", legend={"orientation": "h", "y": -0.25})
    return fig


def t5_bias(bias: np.ndarray, name: str) -> go.Figure:
    """``(heads, 2D + 1)``: each head's learned bias for every key - query distance."""
    half = bias.shape[1] // 2
    fig = go.Figure(go.Heatmap(z=bias, x=list(range(-half, half + 1)), y=[f"head {h}" for h in range(bias.shape[0])],
                               colorscale="RdBu", zmid=0, hovertemplate="%{y}<br>distance %{x}<br>%{z:.3f}"
                                                                        "<extra></extra>"))
    fig.update_layout(title=titled(f"{name}'s learned bias", "per head, by key - query distance (layer 0)"),
                      xaxis_title="distance (key - query)", yaxis={"type": "category", "autorange": "reversed"})
    return fig


def rotary_frequencies(scheme: Scheme) -> go.Figure:
    """The angle each rotated pair turns by a position, per base (log axis): fast pairs first, slow ones last."""
    dims = scheme.rotary_dims or scheme.head_width
    fig = go.Figure([go.Scatter(y=formulas.rope_frequencies(dims, base), mode="lines+markers", name=f"{kind}: base "
                                f"{base:,.0f}") for kind, base in scheme.bases])
    fig.update_layout(title=titled(f"Rotary frequencies of {scheme.model}", f"{dims // 2} pairs of {dims} "
                                   f"dimensions ({scheme.layout} layout)"),
                      xaxis_title="pair", yaxis={"title": "radians per position", "type": "log"})
    return fig


def rotary_steps(scheme: Scheme, pairs: Sequence[int] = (0, 8)) -> go.Figure:
    """One query, (1, 0) on every pair, turned through positions 0..STEPS: a fast pair circles, a slow one
    barely moves (each point is the pair's two coordinates at a position)."""
    dims = scheme.rotary_dims or scheme.head_width
    kind, base = scheme.bases[-1] if scheme.bases else ("all", formulas.BASE)
    angles = formulas.rope_angles(np.arange(STEPS + 1), dims, base)
    fig = go.Figure()
    for pair in (p for p in pairs if p < dims // 2):
        fig.add_trace(go.Scatter(x=np.cos(angles[:, pair]), y=np.sin(angles[:, pair]), mode="lines+markers",
                                 name=f"pair {pair}", text=[f"position {p}" for p in range(STEPS + 1)]))
    fig.update_layout(title=titled(f"One query turned step by step ({scheme.model})", f"base {base:,.0f} ({kind}), "
                                   f"positions 0 to {STEPS}"), xaxis_title="first coordinate",
                      yaxis={"title": "second coordinate", "scaleanchor": "x"})
    return fig


def alibi_reference(heads: int = 8, distance: int = 64) -> go.Figure:
    """ALiBi's bias against distance for each head's slope: no catalog variant uses it; it is the reference."""
    d = np.arange(0, distance + 1)
    fig = go.Figure([go.Scatter(x=d, y=formulas.alibi_bias(d, s), mode="lines", name=f"head {h}: slope {s:.3g}")
                     for h, s in enumerate(formulas.alibi_slopes(heads))])
    fig.update_layout(title=titled("ALiBi, the reference", f"-slope x distance, {heads} heads (Press et al. 2022)"),
                      xaxis_title="distance (query - key)", yaxis_title="bias on the score")
    return fig


def cache_curves(curves: Sequence[kvcache.CacheCurve], weights: Mapping[str, int]) -> go.Figure:
    """Each model's cache bytes against context length (log axes), its weights' bytes as a dotted line beside."""
    fig = go.Figure()
    for i, c in enumerate(curves):
        colour = f"hsl({(i * 67) % 360}, 65%, 45%)"
        fig.add_trace(go.Scatter(x=c.lengths, y=c.bytes, mode="lines", name=f"{c.model} cache", line={"color": colour}))
        if weights.get(c.model):
            fig.add_trace(go.Scatter(x=[c.lengths[0], c.lengths[-1]], y=[weights[c.model]] * 2, mode="lines",
                                     name=f"{c.model} weights", line={"color": colour, "dash": "dot"}))
    dtype = curves[0].dtype if curves else ""
    fig.update_layout(title=titled("Key/value cache against context", f"{dtype}; dotted: the weights' bytes"),
                      xaxis={"title": "context (tokens)", "type": "log"},
                      yaxis={"title": "bytes", "type": "log"}, legend={"orientation": "h", "y": -0.3})
    return fig


def cache_layers(plan: kvcache.CachePlan) -> go.Figure:
    """Each layer's cache at the plan's context, coloured by kind (a windowed layer stops growing)."""
    fig = go.Figure()
    label = {id(layer): f"{layer.stack[:3]} {layer.layer}{' x' if layer.kind == 'cross' else ''}"
             for layer in plan.layers}
    for kind in dict.fromkeys(layer.kind for layer in plan.layers):
        shown = [layer for layer in plan.layers if layer.kind == kind]
        fig.add_trace(go.Bar(x=[label[id(layer)] for layer in shown], y=[layer.bytes for layer in shown], name=kind,
                             marker_color=KIND_COLOURS.get(kind, "#2ca02c")))
    order = [label[id(layer)] for layer in plan.layers]  # the model's order, not grouped by kind
    fig.update_layout(title=titled(f"Cache per layer of {plan.model}", f"{plan.context:,} tokens, {plan.dtype}, "
                                   f"{plan.grouping}"), yaxis_title="bytes",
                      xaxis={"title": "layer", "type": "category", "categoryorder": "array", "categoryarray": order})
    return fig
