"""Figures and text renderings of the spans area: QA probability strip, highlighted infilling.

User text never becomes HTML: plotly labels are escaped with ``safe_label`` and the highlighted
infilling is Streamlit markdown in which every punctuation character of user text is
backslash-escaped, so tags, links, emphasis, LaTeX and colour directives all show as typed.
"""

from __future__ import annotations

import plotly.graph_objects as go

from explorer.plots.similarity import BLUE, ORANGE, UNTRAINED, safe_label
from explorer.spans import QAResult, Segment

SPAN_COLORS = ("orange", "blue", "green", "violet", "red")  # Streamlit's :color-background[] names
_MD_SPECIAL = set("\\`*_{}[]()#+-.!|<>~$:&=\"'/^%@")


def escape_markdown(text: str) -> str:
    """Backslash-escape every markdown-significant character; runs of whitespace (line breaks
    included) become one space, and a leading or trailing space is kept so pieces join cleanly."""
    raw = str(text)
    flat = " ".join(raw.split())
    if flat and raw[:1].isspace():
        flat = " " + flat
    if flat and raw[-1:].isspace():
        flat += " "
    return "".join("\\" + c if c in _MD_SPECIAL else c for c in flat)


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
        title=f"Answer: {safe_label(res.answer, 60)} (score {res.score:.3f}){UNTRAINED * res.untrained}",
        legend={"orientation": "h", "y": 1.12, "x": 1, "xanchor": "right"},
        xaxis={"tickmode": "array", "tickvals": x[::step], "ticktext": labels[::step], "tickangle": -60},
        yaxis={"title": "start ↑   ·   end ↓"},
    )
    return fig
