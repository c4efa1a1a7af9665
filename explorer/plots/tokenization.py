"""Figures and token chips of the tokenization area (data in, figure or HTML string out).

User text reaches the browser only through ``html.escape``: chips are built from escaped
strings, and plotly labels are escaped too (plotly interprets a few HTML tags in labels).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.graph_objects as go

from explorer.tokenization import TOKENIZERS, Tokenization, join_pieces

COLORS = {
    "bert-base-uncased": "#1f77b4", "bert-base-cased": "#17becf", "gpt2": "#d62728",
    "t5": "#2ca02c", "bigbird": "#9467bd",
}


def _label(name: str) -> str:
    return TOKENIZERS[name].label if name in TOKENIZERS else name


def counts_figure(results: Sequence[Tokenization]) -> go.Figure:
    """Stacked bars: text tokens and special tokens per tokenizer (a diamond marks the limit
    of every model the text does not fit into)."""
    names = [_label(t.name) for t in results]
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
            name="model limit (text is cut here)", x=[_label(t.name) for t in over],
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
        x=[_label(t.name) for t in results], y=[round(t.fertility, 3) for t in results],
        marker_color=[COLORS.get(t.name, "#888") for t in results],
        text=[f"{t.fertility:.2f}" for t in results], textposition="outside",
        hovertemplate="%{x}<br>%{y:.2f} tokens per word<extra></extra>"))
    fig.add_hline(y=1.0, line_dash="dot", line_color="#888", annotation_text="1 token per word")
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
        z=z, x=list(range(n)), y=[_label(t.name) for t in results], customdata=hover,
        colorscale="Blues", zmin=0, colorbar={"title": "pieces"}, texttemplate="%{z}",
        hovertemplate="%{y}<br>word %{x}: %{customdata}<extra></extra>"))
    fig.update_layout(
        title="How each word is split (pieces per word; hover for the pieces)", height=150 + 45 * len(results),
        xaxis={"tickmode": "array", "tickvals": list(range(n)), "ticktext": words, "tickangle": -45},
        yaxis={"autorange": "reversed"}, margin={"l": 10, "r": 10, "t": 50, "b": 90})
    return fig


_CHIP = ("display:inline-flex;flex-direction:column;align-items:center;padding:1px 5px;"
         "border:1px solid {border};border-radius:4px;background:{bg};margin:2px 0 2px {gap}px;"
         "opacity:{opacity};font-family:monospace;font-size:0.9em;line-height:1.25")
_KINDS = {  # (background, border) per kind of token
    "special": ("#ede7f6", "#7e57c2"), "unknown": ("#fdecea", "#e53935"), "piece": ("#f4f6fa", "#b0bec5"),
}
_CUT = ('<span style="display:inline-block;margin:2px 6px;padding:1px 4px;color:#c62828;'
        'border-left:3px solid #c62828;font-size:0.8em" title="{title}">✂ {limit}</span>')


def _chip(t: Tokenization, i: int, unknown: set[int]) -> str:
    """One token as an escaped HTML chip: piece on top, id below, offsets in the tooltip."""
    kind = "special" if t.special[i] else "unknown" if i in unknown else "piece"
    bg, border = _KINDS[kind]
    # A gap before every word start (and special token); continuation pieces touch their word.
    gap = 9 if (t.word_start[i] or t.special[i] or i == 0) else 1
    s, e = t.offsets[i]
    title = html.escape(f"#{i} · id {t.ids[i]} · vocabulary string {t.tokens[i]!r} · characters {s}–{e}"
                        + (" · added by the tokenizer" if t.special[i] else ""), quote=True)
    style = _CHIP.format(border=border, bg=bg, gap=gap, opacity=0.4 if i >= t.max_length else 1)
    return (f'<span style="{style}" title="{title}"><bdi>{html.escape(t.pieces[i])}</bdi>'
            f'<span style="font-size:0.7em;color:#78909c">{t.ids[i]}</span></span>')


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
            parts.append(_CUT.format(limit=t.max_length, title=html.escape(
                f"{_label(t.name)} reads at most {t.max_length} tokens; the rest is cut", quote=True)))
        parts.append(_chip(t, i, unknown))
    if t.count > max_tokens:
        parts.append(f'<span style="margin-left:8px;color:#78909c">… {t.count - max_tokens:,} more</span>')
        if t.truncated_at is not None and t.max_length >= max_tokens:  # the cut is past the drawn chips
            parts.append(_CUT.format(limit=f"the model stops after token {t.max_length:,}", title=""))
    return ('<div style="display:flex;flex-wrap:wrap;align-items:flex-end" '
            f'aria-label="{html.escape(_label(t.name), quote=True)} tokens">{"".join(parts)}</div>')
