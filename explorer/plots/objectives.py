"""Figures and token chips of the objectives area (data in, figure or escaped HTML out).

Token strings are user text: every chip escapes them with ``html.escape`` and the HTML is
only ever passed to ``st.html`` (which sanitises again); plotly labels go through
``explorer.core.labels.safe_label`` because plotly interprets a subset of tags in labels.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.core.labels import safe_label
from explorer.objectives.base import is_special
from explorer.objectives.decoding import DecodingResult
from explorer.objectives.distill import DistillResult
from explorer.objectives.stats import DrawStats
from explorer.plots.style import titled

__all__ = ["KIND_COLORS", "KIND_HELP", "chips_html", "decoding_figure", "distill_figure", "epochs_figure",
    "kinds_figure", "labels_figure", "legend_html", "position_figure", "span_figure", "target_kinds"]

KIND_COLORS: dict[str, str] = {
    "masked": "#e4572e", "mask": "#e4572e", "random": "#f3a712", "kept": "#29a3a3",
    "not selected": "#eeeeee", "special": "#b8a9e0", "replaced": "#e4572e", "sampled = original": "#29a3a3",
    "sentinel": "#e4572e", "inserted mask": "#9c27b0", "deleted": "#9e9e9e", "new start": "#f3a712",
    "sentence A": "#cfe8fc", "sentence B": "#fde2c8", "shuffled": "#f3a712", "predicts next": "#d6ecd2",
    "last": "#eeeeee", "unchanged": "#f2f2f2", "dropped span": "#f3a712",
    "start": "#b8a9e0",
}
KIND_HELP: dict[str, str] = {
    "masked": "replaced by the mask token; the model predicts the original",
    "random": "replaced by a random vocabulary token; the model predicts the original",
    "kept": "selected but left unchanged; the model still predicts it",
    "not selected": "not part of the loss",
    "special": "added by the tokenizer; never masked",
    "replaced": "the generator's token differs from the original (label 1)",
    "sampled = original": "the generator proposed the original token: counts as original (label 0)",
    "sentinel": "one sentinel stands for a whole dropped span",
    "mask": "one <mask> stands for a whole span (0, 1, 2... tokens)",
    "inserted mask": "a zero-length span: a <mask> where nothing is missing",
    "deleted": "removed from the input",
    "new start": "the rotated document now starts here",
    "shuffled": "inside a shuffled trigram: predict the original token",
    "predicts next": "predicts the token after it",
    "unchanged": "passed through as it is",
    "dropped span": "a span removed from the input, to be generated after its sentinel",
}
_CHIP = ("display:inline-block;margin:2px 1px;padding:1px 5px;border-radius:4px;font-family:monospace;"
         "font-size:0.9em;background:{bg};color:#111;border:1px solid #ccc")


def _color(kind: str) -> str:
    return KIND_COLORS.get(kind, "#ffe9a8" if kind.startswith("sentence") else "#dddddd")


def chips_html(tokens: Sequence[str], kinds: Sequence[str], notes: Sequence[str] | None = None,
               max_tokens: int = 600) -> str:
    """Tokens as coloured chips; ``notes[i]`` (e.g. "target: dog") becomes the hover text."""
    parts = []
    for i, (tok, kind) in enumerate(zip(tokens[:max_tokens], kinds[:max_tokens], strict=False)):
        tip = f"{i}: {kind}" + (f" | {notes[i]}" if notes and notes[i] else "")
        parts.append(f'<span title="{html.escape(tip)}" '
                     f'style="{_CHIP.format(bg=_color(kind))}">{html.escape(tok)}</span>')
    more = f" … {len(tokens) - max_tokens} more" if len(tokens) > max_tokens else ""
    return f'<div style="line-height:2">{"".join(parts)}{html.escape(more)}</div>'


def legend_html(kinds: Sequence[str]) -> str:
    """A legend of the kinds that occur, in first-seen order."""
    seen = list(dict.fromkeys(kinds))
    items = [f'<span title="{html.escape(KIND_HELP.get(k, k))}" style="{_CHIP.format(bg=_color(k))}">'
             f"{html.escape(k)}</span>" for k in seen]
    return f'<div style="font-size:0.85em">Legend: {"".join(items)}</div>'


def _layout(fig: go.Figure, title: str, x: str, y: str, height: int = 320) -> go.Figure:
    fig.update_layout(title=title, xaxis_title=x, yaxis_title=y, height=height, margin=dict(l=50, r=20, t=50, b=40),
                      legend=dict(orientation="h", y=-0.25))
    return fig


def kinds_figure(stats: DrawStats, expected: dict[str, float] | None = None) -> go.Figure:
    """What happened to the selected tokens over all draws (e.g. 80/10/10) vs the rule."""
    total = max(sum(stats.kind_counts.values()), 1)
    names = list(stats.kind_counts)
    fig = go.Figure(go.Bar(x=names, y=[stats.kind_counts[k] / total for k in names], name="observed",
                           marker_color=[_color(k) for k in names]))
    if expected:
        fig.add_trace(go.Scatter(x=list(expected), y=list(expected.values()), mode="markers", name="rule",
                                 marker=dict(symbol="line-ew", size=40, line=dict(width=3, color="black"))))
    return _layout(fig, f"Selected tokens by kind ({stats.n_draws:,} draws)", "kind", "fraction")


def span_figure(stats: DrawStats) -> go.Figure:
    """Histogram of the drawn span lengths next to the theoretical distribution."""
    counts = stats.sampled_lengths or stats.span_lengths
    total = max(sum(counts.values()), 1)
    xs = sorted(set(counts) | set(stats.theory))
    fig = go.Figure(go.Bar(x=xs, y=[counts.get(x, 0) / total for x in xs], name=f"drawn ({total:,} spans)",
                           marker_color="#e4572e"))
    if stats.theory:
        fig.add_trace(go.Scatter(x=xs, y=[stats.theory.get(x, 0.0) for x in xs], mode="lines+markers",
                                 name="theory", line=dict(color="black")))
    mean = sum(k * v for k, v in counts.items()) / total
    note = f" (theory {stats.theory_mean:.2f})" if stats.theory_mean is not None else ""
    return _layout(fig, f"Span length: mean {mean:.2f}{note}", f"length ({stats.span_unit})", "fraction")


def position_figure(stats: DrawStats, tokens: Sequence[str]) -> go.Figure:
    """How often each position was selected; special tokens stay at 0."""
    freq = np.asarray(stats.position_freq)
    labels = [f"{i} {safe_label(t)}" for i, t in enumerate(tokens)]
    colors = ["#b8a9e0" if is_special(t) else "#e4572e" for t in tokens]
    fig = go.Figure(go.Bar(x=labels, y=freq, marker_color=colors, name="selected"))
    if stats.expected_rate is not None:
        fig.add_hline(y=stats.expected_rate, line_dash="dash", annotation_text=f"expected {stats.expected_rate:.3f}")
    fig.update_xaxes(showticklabels=len(tokens) <= 80, type="category")  # a token "1889" must not make it numeric
    return _layout(fig, f"Selection frequency per position (realised rate {stats.rate:.4f})", "position",
                   "fraction of draws")


def labels_figure(stats: DrawStats, classes: Sequence[str] | None = None) -> go.Figure:
    """Class (or arrangement) frequencies over the draws, with the uniform expectation."""
    names = list(classes) if classes else sorted(stats.labels, key=lambda n: stats.labels[n], reverse=True)[:30]
    total = max(sum(stats.labels.values()), 1)
    fig = go.Figure(go.Bar(x=[safe_label(n) for n in names], y=[stats.labels.get(n, 0) / total for n in names],
                           marker_color="#29a3a3", name="observed"))
    if classes:
        fig.add_hline(y=1 / len(classes), line_dash="dash", annotation_text="expected")
    return _layout(fig, f"Outcomes over {stats.n_draws:,} draws", "", "fraction")


def epochs_figure(tokens: Sequence[str], dynamic: Sequence[Sequence[str]],
                  static: Sequence[Sequence[str]]) -> go.Figure:
    """Two heatmaps side by side: epochs x positions, coloured by what the mask did there."""
    code = {"not selected": 0, "special": 0, "kept": 1, "random": 2, "masked": 3}
    fig = make_subplots(rows=1, cols=2, subplot_titles=("RoBERTa: a new mask each epoch",
                                                        "BERT: the same mask every epoch"), shared_yaxes=True)
    labels = [f"{i} {safe_label(t)}" for i, t in enumerate(tokens)]
    scale = [[0, "#f2f2f2"], [0.33, "#29a3a3"], [0.66, "#f3a712"], [1, "#e4572e"]]
    for col, runs in ((1, dynamic), (2, static)):
        z = [[code.get(k, 0) for k in kinds] for kinds in runs]
        fig.add_trace(go.Heatmap(z=z, x=labels, y=[f"epoch {e + 1}" for e in range(len(runs))], zmin=0, zmax=3,
                                 colorscale=scale, showscale=False, xgap=1, ygap=1,
                                 hovertemplate="%{y}, %{x}<extra></extra>"), row=1, col=col)
    fig.update_xaxes(showticklabels=False, type="category")
    fig.update_yaxes(autorange="reversed")  # epoch 1 on top, time runs down
    key = "Red = [MASK], orange = random, teal = kept (selected), grey = not selected"
    fig = _layout(fig, titled("Dynamic against static masking over epochs", key), "position", "", 320)
    return fig.update_layout(margin={"t": 90})


def decoding_figure(result: DecodingResult) -> go.Figure:
    """Model probabilities, what the method draws from, and the empirical draw frequencies."""
    toks = [safe_label(t, 60) for t in result.tokens]
    n = max(sum(result.counts), 1)
    fig = go.Figure([
        go.Bar(x=toks, y=result.probs, name="model p", marker_color="#9e9e9e"),
        go.Bar(x=toks, y=result.adjusted, name=f"{result.method} draws from", marker_color="#e4572e"),
        go.Bar(x=toks, y=[c / n for c in result.counts], name=f"observed in {n:,} draws", marker_color="#29a3a3"),
    ])
    fig.update_layout(barmode="group")
    return _layout(fig, f"{result.method} (T = {result.temperature:g}, k = {result.top_k})", "next token",
                   "probability")


def distill_figure(result: DistillResult) -> go.Figure:
    """Teacher vs student, softened by T, and the student's unsoftened distribution."""
    toks = [safe_label(t, 60) for t in result.tokens]
    fig = go.Figure([
        go.Bar(x=toks, y=result.teacher_soft, name=f"teacher, T = {result.temperature:g}", marker_color="#3b6ea5"),
        go.Bar(x=toks, y=result.student_soft, name=f"student, T = {result.temperature:g}", marker_color="#f3a712"),
        go.Bar(x=toks, y=result.student_hard, name="student, T = 1 (for CE)", marker_color="#bbbbbb"),
    ])
    fig.update_layout(barmode="group")
    return _layout(fig, f"loss = {result.alpha:.2f}·CE {result.ce:.3f} + {1 - result.alpha:.2f}·T²·KL "
                        f"{result.kl_scaled:.3f} = {result.loss:.3f}", "candidate token", "probability")


def target_kinds(tokens: Sequence[str]) -> list[str]:
    """Legend kind of each decoder-target token: sentinel, special, dropped span or unchanged."""
    dropped = bool(tokens) and tokens[0].startswith("<extra_id_")
    return ["sentinel" if t.startswith("<extra_id_") else "special" if is_special(t)
            else "dropped span" if dropped else "unchanged" for t in tokens]
