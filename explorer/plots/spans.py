"""Figures and text renderings of the Spans & QA page: QA probability strip, highlighted infilling.

User text never becomes HTML: plotly labels are escaped with ``safe_label`` and the highlighted
infilling is Streamlit markdown built with ``explorer.core.labels.escape_markdown``, so tags, links,
emphasis, LaTeX and colour directives all show as typed.

>>> from explorer.tasks.infill import Segment
>>> segments_markdown((Segment("I *like* ", None), Segment("tea", 0)))
'I \\\\*like\\\\* :orange-background[**tea** \\\\[1\\\\]]'
"""

from __future__ import annotations

import plotly.graph_objects as go

from explorer.core.labels import escape_markdown, safe_label, untrained_suffix
from explorer.plots.similarity import BLUE, ORANGE
from explorer.tasks.infill import Segment
from explorer.tasks.qa import QAResult

__all__ = ["SPAN_COLORS", "located_markdown", "qa_strip", "segments_markdown"]

SPAN_COLORS = ("orange", "blue", "green", "violet", "red")  # Streamlit's :color-background[] names


def segments_markdown(segments: tuple[Segment, ...]) -> str:
    """Markdown of the filled-in text: user pieces plain, generated span i on a coloured background
    with a marker "[i]" so the spans stay distinguishable without colour."""
    out = ""
    for seg in segments:
        if seg.span is None:
            out += escape_markdown(seg.text)
            continue
        color = SPAN_COLORS[seg.span % len(SPAN_COLORS)]
        body = escape_markdown(seg.text).strip() or "∅"  # an empty span is still visible
        if out and not out[-1].isspace():  # a directive only starts after whitespace
            out += " "
        out += f":{color}-background[**{body}** \\[{seg.span + 1}\\]]"
    return out


def located_markdown(context: str, start: int | None, end: int | None) -> str:
    """The context with ``context[start:end]`` highlighted as span 1 (plain when not located).

    >>> located_markdown("Built in 1889", 9, 13)
    'Built in :orange-background[**1889** \\\\[1\\\\]]'
    """
    if start is None or end is None:
        return escape_markdown(context)
    pieces = (Segment(context[:start], None), Segment(context[start:end], 0), Segment(context[end:], None))
    return segments_markdown(tuple(s for s in pieces if s.text or s.span is not None))


def qa_strip(res: QAResult) -> go.Figure:
    """Start and end probability of every context token as mirrored bars, answer tokens shaded."""
    x = list(range(len(res.tokens)))
    labels = [safe_label(t, 12) for t in res.tokens]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=x, y=list(res.start_probs), name="P(start)", marker_color=BLUE,
                         customdata=labels, hovertemplate="%{customdata}<br>P(start) %{y:.4f}<extra></extra>"))
    fig.add_trace(go.Bar(x=x, y=[-p for p in res.end_probs], name="P(end)", marker_color=ORANGE,
                         customdata=list(zip(labels, res.end_probs, strict=True)),
                         hovertemplate="%{customdata[0]}<br>P(end) %{customdata[1]:.4f}<extra></extra>"))
    i, j = res.span
    fig.add_vrect(x0=i - 0.5, x1=j + 0.5, fillcolor="#2ca02c", opacity=0.18, line_width=0,
                  annotation_text="answer", annotation_position="top left")
    step = max(1, len(x) // 60)  # at most ~60 tick labels, or they overlap
    fig.update_layout(
        barmode="relative", height=340, margin={"l": 10, "r": 10, "t": 60, "b": 90},
        title=f"Answer: {safe_label(res.answer, 60)} (score {res.score:.3f}){untrained_suffix(res.untrained)}",
        legend={"orientation": "h", "y": 1.12, "x": 1, "xanchor": "right"},
        xaxis={"tickmode": "array", "tickvals": x[::step], "ticktext": labels[::step], "tickangle": -60},
        yaxis={"title": "start ↑   ·   end ↓"},
    )
    return fig
