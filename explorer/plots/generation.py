"""Figures of the decoding lab: next-token bars, generated tokens coloured by probability, repetition.

Pure builders: results in, plotly figures out. Token texts are escaped with ``safe_label``
(plotly renders ``<b>`` in labels as markup otherwise).
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from explorer.core.labels import safe_label
from explorer.plots.style import CELL_FONT, cell_chars, titled
from explorer.tasks.generation.nexttoken import NextToken
from explorer.tasks.generation.run import Generation

__all__ = ["next_token_figure", "repetition_figure", "tokens_figure"]

COLORSCALE = "RdYlGn"  # low probability red, high green


def _shown(token: str, width: int = 24) -> str:
    """A token as a label: spaces drawn as SentencePiece's '▁' (how it marks the start of a word)."""
    return safe_label(token.replace(" ", "▁").replace("\n", "⏎"), width) or "∅"


def next_token_figure(result: NextToken) -> go.Figure:
    """Horizontal bars of the most likely next tokens, most likely on top."""
    cands = list(result.candidates)[::-1]
    fig = go.Figure(go.Bar(
        x=[c.probability for c in cands], orientation="h",  # a served model sends texts, not ids (id -1)
        y=[f"{_shown(c.token)}  #{c.token_id}" if c.token_id >= 0 else f"{_shown(c.token)}  ({i})"
           for i, c in zip(range(len(cands), 0, -1), cands, strict=True)],
        marker={"color": [c.probability for c in cands], "colorscale": COLORSCALE, "cmin": 0, "cmax": 1},
        hovertemplate="%{y}<br>p = %{x:.4f}<extra></extra>"))
    of = f"of {result.vocab_size:,}" if result.vocab_size else "as served"
    fig.update_layout(title=f"Next token: top {len(cands)} {of}", xaxis_title="probability",
                      margin={"l": 10, "r": 10, "t": 40, "b": 40}, height=max(260, 26 * len(cands) + 80))
    return fig


def _hover(gen: Generation, i: int) -> str:
    step = gen.steps[i]
    others = "<br>".join(f"{_shown(a.token)}: {a.probability:.3f}" for a in step.top)
    return f"<b>{_shown(step.token)}</b> p = {step.probability:.3f}<br>alternatives:<br>{others}"


def tokens_figure(generations: Sequence[Generation]) -> go.Figure:
    """One row per strategy, one cell per generated token coloured by the model's probability of it.

    Hovering a cell shows the alternatives the model gave at that step.
    """
    width = max((len(g.steps) for g in generations), default=0)
    fits = cell_chars(width, row_labels=[g.settings.strategy for g in generations])
    z, text, hover = [], [], []
    for gen in generations:
        pad = width - len(gen.steps)
        z.append([s.probability for s in gen.steps] + [None] * pad)
        text.append([_shown(s.token, fits) for s in gen.steps] + [""] * pad)
        hover.append([_hover(gen, i) for i in range(len(gen.steps))] + [""] * pad)
    fig = go.Figure(go.Heatmap(
        z=z, text=text, texttemplate="%{text}" if fits >= 2 else "", textfont={"size": CELL_FONT}, hovertext=hover,
        hovertemplate="%{hovertext}<extra></extra>",
        x=list(range(1, width + 1)), y=[g.settings.strategy for g in generations], colorscale=COLORSCALE,
        zmin=0, zmax=1, xgap=2, ygap=4, colorbar={"title": "p"}))
    fig.update_layout(title=titled("Generated tokens, coloured by the model's probability",
                                   "hover a token for the alternatives the model gave at that step"),
                      xaxis={"title": "generated token", "dtick": 1},
                      yaxis={"autorange": "reversed", "type": "category"},
                      height=140 + 60 * max(1, len(generations)), margin={"l": 10, "r": 10, "t": 60, "b": 40})
    return fig


def repetition_figure(generations: Sequence[Generation], n: int = 3) -> go.Figure:
    """Share of repeated n-grams (solid) and distinct-2 (dotted) against length, per strategy."""
    fig = go.Figure()
    for gen in generations:
        curve = gen.repetition(n)
        lengths = [p.length for p in curve]
        name = gen.settings.strategy
        fig.add_trace(go.Scatter(x=lengths, y=[p.repeated for p in curve], name=f"{name}: repeated {n}-grams",
                                 mode="lines+markers", legendgroup=name))
        fig.add_trace(go.Scatter(x=lengths, y=[p.distinct_2 for p in curve], name=f"{name}: distinct-2",
                                 mode="lines", line={"dash": "dot"}, legendgroup=name))
    fig.update_layout(title="Repetition over length", xaxis_title="generated tokens", yaxis_title="share",
                      yaxis_range=[0, 1.05], margin={"l": 10, "r": 10, "t": 40, "b": 40})
    return fig
