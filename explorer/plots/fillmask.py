"""Figures of the fill-mask page: top-k bars per model, ELECTRA's replaced-token strip.

Every label that comes from user text or model output is HTML-escaped: plotly renders a
subset of HTML in labels (<b>, <a href>...), and user text must show as typed.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.core.labels import safe_label, untrained_suffix
from explorer.plots.style import CELL_FONT, DEFAULT_WIDTH, SUBPLOT_TITLE_FONT, cell_chars, chars_in, titled
from explorer.tasks.discriminator import ReplacedTokens
from explorer.tasks.fillmask.result import ModelFill

__all__ = ["MAX_COLUMNS", "grid", "replaced_strip", "topk_figure"]

MAX_COLUMNS = 4  # bar charts a row before wrapping: each stays wide enough to read its words


def _label(fill: ModelFill, cols: int) -> str:
    """The model's name over its panel, cut to the panel's width (a subplot title is 16 px)."""
    return safe_label(fill.name, chars_in(DEFAULT_WIDTH / cols, SUBPLOT_TITLE_FONT))


def grid(n: int, per_row: int = MAX_COLUMNS) -> tuple[int, int]:
    """(rows, cols) for ``n`` panels, at most ``per_row`` a row: any count lays out.

    plotly's make_subplots rejects horizontal spacing above 1 / (cols - 1), so 10+ panels in one
    row fail outright; wrapping into rows keeps the spacing fixed and the panels readable.

    >>> grid(1), grid(4), grid(5), grid(11)
    ((1, 1), (1, 4), (2, 4), (3, 4))
    """
    cols = max(1, min(n, per_row))
    return max(1, -(-n // cols)), cols


def _bar(fill: ModelFill, mask_index: int) -> go.Bar:
    preds = fill.masks[mask_index].predictions[::-1]  # best at the top of a horizontal bar chart
    return go.Bar(
        x=[p.score for p in preds], y=[f"{i}. {html.escape(p.word)}" for i, p in zip(
            range(len(preds), 0, -1), preds, strict=True)],
        orientation="h", text=[f"{p.score:.1%}" if p.score >= 0.001 else f"{p.score:.1e}" for p in preds],
        textposition="auto", hovertext=[f"token {html.escape(p.token)!s} (id {p.token_id})" for p in preds],
        marker_color="#9e9e9e" if fill.untrained else "#1f77b4", showlegend=False,
    )


def topk_figure(fills: Sequence[ModelFill], mask_index: int = 0) -> go.Figure:
    """One bar chart per model, ``MAX_COLUMNS`` a row: top-k words for mask ``mask_index``."""
    usable = [f for f in fills if mask_index < len(f.masks)]
    rows, cols = grid(len(usable))
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[_label(f, cols) for f in usable],
                        horizontal_spacing=0.12 if cols > 1 else 0.0,
                        vertical_spacing=min(0.12, 0.5 / rows) if rows > 1 else 0.0)
    for i, fill in enumerate(usable):
        row, col = divmod(i, cols)
        fig.add_trace(_bar(fill, mask_index), row=row + 1, col=col + 1)
        fig.update_xaxes(title_text="probability", row=row + 1, col=col + 1, rangemode="tozero")
    k = max((len(f.masks[mask_index].predictions) for f in usable), default=5)
    grey = "grey bars: untrained (random weights)" if any(f.untrained for f in usable) else ""
    fig.update_layout(title=titled(f"Top predictions for mask {mask_index + 1}", grey),
                      height=80 + rows * (60 + 28 * k), margin={"l": 10, "r": 10, "t": 100})
    return fig


def replaced_strip(result: ReplacedTokens) -> go.Figure:
    """ELECTRA discriminator: P(replaced) per token as a coloured strip; true replacements marked."""
    n = len(result.tokens)
    labels = [html.escape(t) for t in result.tokens]
    fits = cell_chars(n, row_labels=["discriminator"])
    cells = [safe_label(t, fits) for t in result.tokens]
    hover = [f"{html.escape(o)} → {html.escape(t)}<br>P(replaced) = {p:.2f}" if r else
             f"{html.escape(t)} (original)<br>P(replaced) = {p:.2f}"
             for o, t, p, r in zip(result.original, result.tokens, result.probability, result.replaced, strict=True)]
    fig = go.Figure(go.Heatmap(
        z=[list(result.probability)], x=list(range(n)), y=["discriminator"], zmin=0, zmax=1,
        colorscale="RdBu_r", text=[cells], texttemplate="%{text}" if fits >= 2 else "", textfont={"size": CELL_FONT},
        hovertext=[hover], hoverinfo="text",
        colorbar={"title": {"text": "P(replaced)"}},
    ))
    marks = [i for i, r in enumerate(result.replaced) if r]
    fig.add_trace(go.Scatter(x=marks, y=["truth"] * len(marks), mode="markers", marker_symbol="triangle-down",
                             marker_size=12, marker_color="black", name="really replaced by the generator"))
    title = "ELECTRA replaced-token detection" + untrained_suffix(result.untrained)
    # The rows keep the traces' order (the strip below, the truth marks above it): a categoryarray that lists
    # "truth" before the heatmap's only row made plotly.js draw nothing ("reading 'length'" of a missing z row).
    fig.update_layout(title=title, height=260, xaxis={"tickvals": list(range(n)), "ticktext": labels,
                                                      "tickangle": -45}, legend={"orientation": "h", "y": -0.5})
    return fig
