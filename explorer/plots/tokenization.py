"""Figures and token chips of the tokenization area (data in, figure or HTML string out).

User text reaches the browser only through ``html.escape``: chips are built from escaped
strings, and plotly labels are escaped too (plotly interprets a few HTML tags in labels).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.graph_objects as go

from explorer.plots.style import CELL_FONT
from explorer.tokenization import Tokenization, label_of
from explorer.tokenization.table import join_pieces

__all__ = ["CHIP_CSS", "COLORS", "chips_html", "counts_figure", "fertility_figure", "word_split_figure"]

COLORS = {
    "bert-base-uncased": "#1f77b4", "bert-base-cased": "#17becf", "gpt2": "#d62728",
    "t5": "#2ca02c", "bigbird": "#9467bd",
}



def counts_figure(results: Sequence[Tokenization]) -> go.Figure:
    """Stacked bars: text tokens and special tokens per tokenizer (a diamond marks the limit
    of every model the text does not fit into)."""
    names = [label_of(t.name) for t in results]
    fig = go.Figure([
        go.Bar(name="text tokens", x=names, y=[t.count - t.n_special for t in results],
               marker_color=[COLORS.get(t.name, "#888") for t in results],
               hovertemplate="%{x}<br>%{y} text tokens<extra></extra>"),
        go.Bar(name="special tokens", x=names, y=[t.n_special for t in results], marker_color="#bbbbbb",
               hovertemplate="%{x}<br>%{y} special tokens<extra></extra>"),
    ])
    over = [t for t in results if t.truncated_at is not None]
    if over:
        fig.add_trace(go.Scatter(
            name="model limit (text is cut here)", x=[label_of(t.name) for t in over],
            y=[t.max_length for t in over], mode="markers",
            marker={"symbol": "diamond", "size": 12, "color": "black"},
            hovertemplate="%{x}<br>limit %{y} tokens<extra></extra>"))
    fig.update_layout(barmode="stack", title="Tokens per tokenizer (same text)", yaxis_title="tokens",
                      height=360, margin={"l": 50, "r": 10, "t": 50, "b": 40},
                      legend={"orientation": "h", "y": -0.2})
    return fig


def fertility_figure(results: Sequence[Tokenization]) -> go.Figure:
    """Tokens per whitespace word ("fertility"): 1.0 means every word is one vocabulary entry."""
    fig = go.Figure(go.Bar(
        x=[label_of(t.name) for t in results], y=[round(t.fertility, 3) for t in results],
        marker_color=[COLORS.get(t.name, "#888") for t in results],
        text=[f"{t.fertility:.2f}" for t in results], textposition="outside",
        hovertemplate="%{x}<br>%{y:.2f} tokens per word<extra></extra>"))
    fig.add_hline(y=1.0, line_dash="dot", line_color="#888", annotation_text="1 token per word",
                  annotation_position="bottom left")
    fig.update_layout(title="Fertility: tokens per word", yaxis_title="tokens per word", height=340,
                      margin={"l": 50, "r": 10, "t": 50, "b": 40})
    return fig


def word_split_figure(results: Sequence[Tokenization], max_words: int = 30) -> go.Figure:
    """Heatmap (tokenizers x first words): cell = number of pieces, hover shows the pieces."""
    if not results or not results[0].words:
        return go.Figure().update_layout(title="No words to show", height=200)
    n = min(len(results[0].words), max_words)
    # Plotly reads a few tags in labels ("<b>"), so escape <, > and &; it would show "&quot;"
    # literally, so quotes stay as they are.
    words = [html.escape(w if len(w) <= 14 else w[:13] + "…", quote=False) for w in results[0].words[:n]]
    z, hover = [], []
    for t in results:
        pieces = t.word_pieces()[:n]
        z.append([len(p) for p in pieces])
        hover.append([html.escape(join_pieces(p, sep=" · "), quote=False) or "(no piece)" for p in pieces])
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(n)), y=[label_of(t.name) for t in results], customdata=hover,
        colorscale="Blues", zmin=0, colorbar={"title": "pieces"}, texttemplate="%{z}", textfont={"size": CELL_FONT},
        hovertemplate="%{y}<br>word %{x}: %{customdata}<extra></extra>"))
    fig.update_layout(
        title="How each word is split (pieces per word; hover for the pieces)", height=150 + 45 * len(results),
        xaxis={"tickmode": "array", "tickvals": list(range(n)), "ticktext": words, "tickangle": -45},
        yaxis={"autorange": "reversed"}, margin={"l": 10, "r": 10, "t": 50, "b": 90})
    return fig


# One style sheet for all chips (class names prefixed "tkx-" so they cannot clash with the app's):
# inline styles on every chip made the HTML of a long text four times larger.
CHIP_CSS = """<style>
.tkx-row{display:flex;flex-wrap:wrap;align-items:flex-end}
.tkx-c{display:inline-flex;flex-direction:column;align-items:center;padding:1px 5px;margin:2px 0 2px 1px;
  border:1px solid #b0bec5;border-radius:4px;background:#f4f6fa;font-family:monospace;font-size:.9em;
  line-height:1.25}
.tkx-c i{font-style:normal;font-size:.7em;color:#78909c}
.tkx-w{margin-left:9px}
.tkx-sp{background:#ede7f6;border-color:#7e57c2}
.tkx-unk{background:#fdecea;border-color:#e53935}
.tkx-out{opacity:.4}
.tkx-cut{display:inline-block;margin:2px 6px;padding:1px 4px;color:#c62828;border-left:3px solid #c62828;
  font-size:.8em}
.tkx-more{margin-left:8px;color:#78909c}
</style>"""


def _chip(t: Tokenization, i: int, unknown: set[int]) -> str:
    """One token as an escaped HTML chip: piece on top, id below, offsets in the tooltip."""
    classes = ["tkx-c"]
    # A gap before every word start (and special token); continuation pieces touch their word.
    if t.word_start[i] or t.special[i] or i == 0:
        classes.append("tkx-w")
    if t.special[i]:
        classes.append("tkx-sp")
    elif i in unknown:
        classes.append("tkx-unk")
    if i >= t.max_length:
        classes.append("tkx-out")
    s, e = t.offsets[i]
    title = html.escape(f"#{i} · id {t.ids[i]} · vocabulary string {t.tokens[i]!r} · characters {s}–{e}"
                        + (" · added by the tokenizer" if t.special[i] else ""), quote=True)
    # dir="ltr": a piece reads in vocabulary order ("##ל", not "ל##"); Hebrew letters inside still
    # run right to left, and the isolate keeps one chip's direction from leaking into the next.
    return (f'<span class="{" ".join(classes)}" title="{title}">'
            f'<bdi dir="ltr">{html.escape(t.pieces[i])}</bdi>'
            f"<i>{t.ids[i]}</i></span>")


def _cut(text: str) -> str:
    return f'<span class="tkx-cut">✂ {html.escape(text)}</span>'


def chips_html(t: Tokenization, max_tokens: int = 300) -> str:
    """The first ``max_tokens`` tokens of ``t`` as chips, word starts spaced apart, special
    tokens purple, unknown pieces red; a red ✂ marks where the model's limit cuts the text.

    Every piece of user text is passed through ``html.escape``: tags typed by the user are
    shown as text. The result is safe for ``st.html`` (which sanitizes again).
    """
    unknown = set(t.unknown)
    parts = []
    for i in range(min(t.count, max_tokens)):
        if i == t.max_length:
            parts.append(_cut(f"{t.max_length} (the model reads no further)"))
        parts.append(_chip(t, i, unknown))
    if t.count > max_tokens:
        parts.append(f'<span class="tkx-more">… {t.count - max_tokens:,} more</span>')
        if t.truncated_at is not None and t.max_length >= max_tokens:  # the cut is past the drawn chips
            parts.append(_cut(f"the model stops after token {t.max_length:,}"))
    label = html.escape(label_of(t.name), quote=True)
    return f'{CHIP_CSS}<div class="tkx-row" aria-label="{label} tokens">{"".join(parts)}</div>'
