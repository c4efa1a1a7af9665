"""Figures and tables of the Evaluate page: accuracies with their intervals, slices, perplexities, the projector.

Data in, plotly figure (or table rows) out. Contexts, choices, field values and sentences are user text: every one
goes through :func:`explorer.core.labels.safe_label` (plotly renders a subset of HTML). The projector draws with
WebGL (``Scattergl``; ``Scatter3d`` is WebGL already), so thousands of points pan and hover smoothly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.core.labels import safe_label
from explorer.evaluation import metrics
from explorer.evaluation.perplexity import Perplexity
from explorer.evaluation.projection import METHODS
from explorer.evaluation.projector import Projection
from explorer.evaluation.report import Report
from explorer.evaluation.slices import Slice
from explorer.plots.style import titled

__all__ = ["PALETTE", "accuracy_bars", "example_rows", "overlay_figure", "perplexity_bars", "projection_figure",
           "side_by_side_figure", "slice_bars", "slice_rows", "summary_rows"]

PALETTE = ("#1f5fa8", "#e8710a", "#188038", "#a142f4", "#d93025", "#12b5cb", "#f9ab00", "#5f6368")
RIGHT, WRONG, NOT_SCORED = "right", "wrong", "not scored"


def _err(value: float, low: float, high: float) -> tuple[float, float]:
    return high - value, value - low


def accuracy_bars(report: Report) -> go.Figure:
    """Each model's accuracies (every share metric of the task's kind) with Wilson's 95% interval as error bars."""
    fig = go.Figure()
    names = [safe_label(s.model, 40) for s in report.summaries]
    shares = [m for m in metrics.of_kind(report.kind) if m.share]
    for k, metric in enumerate(shares):
        found = [s.measure(metric.name) for s in report.summaries]
        accs = [m for m in found if m is not None and m.low is not None and m.high is not None]
        if len(accs) != len(found):
            continue
        ups, downs = zip(*(_err(a.value, a.low or 0.0, a.high or 0.0) for a in accs), strict=True)
        fig.add_bar(x=names, y=[a.value for a in accs], name=metric.label, marker_color=PALETTE[k],
                    error_y={"type": "data", "array": list(ups), "arrayminus": list(downs)},
                    customdata=[[a.right, a.examples, a.low, a.high] for a in accs],
                    hovertemplate="%{x}<br>%{y:.1%} (%{customdata[0]} of %{customdata[1]})<br>95% interval "
                                  "%{customdata[2]:.1%}-%{customdata[3]:.1%}<extra></extra>")
    untrained = any(r.untrained for r in report.runs)
    fig.update_layout(title=titled(f"{safe_label(report.task, 40)}: accuracy", "with its 95% interval (Wilson)",
                                   untrained=untrained), yaxis={"title": "accuracy", "range": [0, 1],
                                                                "tickformat": ".0%"},
                      barmode="group", height=390, margin={"l": 10, "r": 10, "t": 60, "b": 40})
    return fig


def _rounded(value: float | None, digits: int = 4) -> float | None:
    return None if value is None or not math.isfinite(value) else round(value, digits)


def summary_rows(report: Report) -> list[dict[str, object]]:
    """One row per model: every metric of the task's kind (an interval beside those that have one), how much was
    scored, how long it took and where it ran."""
    rows = []
    for s, run in zip(report.summaries, report.runs, strict=True):
        row: dict[str, object] = {"model": s.model}
        for m in s.measures:
            label = metrics.METRICS[m.metric].label
            row[label] = _rounded(m.value)
            if m.low is not None and m.high is not None:
                row[f"{label}: 95% interval"] = f"{m.low:.3f}-{m.high:.3f}"
        rows.append(row | {"scored": f"{s.scored} of {s.total}", "seconds": round(s.seconds, 2),
                           "scored by": run.method, "ran on": run.device_name})
    return rows


def example_rows(report: Report, width: int = 80) -> list[dict[str, object]]:
    """One row per example (disagreements first): the context, the right answer, each model's pick."""
    rows = []
    for r in report.rows:
        row: dict[str, object] = {"line": r.line, "disagree": r.disagree, "context": r.context[:width],
                                  "answer": r.choices[r.answer]}
        for p in r.picks:
            row[f"{p.model}: choice"] = None if p.choice is None else r.choices[p.choice]
            row[f"{p.model}: right"] = p.correct
            row[f"{p.model}: scores"] = " ".join(f"{v:.3f}" for v in p.scores)
        rows.append(row)
    return rows


def slice_rows(slices: Sequence[Slice]) -> list[dict[str, object]]:
    rows = []
    for s in slices:
        row: dict[str, object] = {s.by: s.value, "examples": s.examples}
        for model, acc in s.accuracy:
            row[model] = f"{acc.value:.1%} ({acc.correct}/{acc.total}; 95% {acc.low:.0%}-{acc.high:.0%})"
        rows.append(row)
    return rows


def slice_bars(slices: Sequence[Slice]) -> go.Figure:
    """Accuracy per slice, a bar per model, with Wilson's interval."""
    fig = go.Figure()
    models = [m for m, _ in slices[0].accuracy] if slices else []
    values = [safe_label(f"{s.value} (n={s.examples})", 40) for s in slices]
    for k, model in enumerate(models):
        accs = [dict(s.accuracy)[model] for s in slices]
        ups, downs = zip(*(_err(a.value, a.low, a.high) for a in accs), strict=True)
        fig.add_bar(x=values, y=[a.value for a in accs], name=safe_label(model, 40),
                    marker_color=PALETTE[k % len(PALETTE)],
                    error_y={"type": "data", "array": list(ups), "arrayminus": list(downs)},
                    hovertemplate="%{x}<br>%{y:.1%}<extra>" + safe_label(model, 30) + "</extra>")
    by = safe_label(slices[0].by, 30) if slices else ""
    fig.update_layout(title=f"Accuracy by {by}", barmode="group", height=380,
                      yaxis={"title": "accuracy", "range": [0, 1], "tickformat": ".0%"},
                      margin={"l": 10, "r": 10, "t": 50, "b": 40})
    return fig


def perplexity_bars(results: Sequence[Perplexity]) -> go.Figure:
    """Each model's perplexity of the text (a masked LM's pseudo-perplexity is a different quantity: hatched)."""
    fig = go.Figure()
    for k, r in enumerate(results):
        pseudo = r.method.startswith("pseudo")
        fig.add_bar(x=[safe_label(r.model, 40)], y=[r.perplexity], name=safe_label(r.model, 40),
                    marker={"color": PALETTE[k % len(PALETTE)], "pattern": {"shape": "/" if pseudo else ""}},
                    hovertemplate=f"%{{x}}<br>{'pseudo-' if pseudo else ''}perplexity %{{y:.3f}} over {r.tokens:,} "
                                  "tokens<extra></extra>")
    fig.update_layout(title="Perplexity of the text (lower: the model finds it more likely)", showlegend=False,
                      yaxis={"title": "perplexity", "type": "log"}, height=340,
                      margin={"l": 10, "r": 10, "t": 50, "b": 40})
    return fig


def _traces(p: Projection, colours: Sequence[str] | None, highlight: Sequence[int], name: str) -> list:
    """One WebGL trace per colour group (a legend entry each), plus the highlighted points ringed."""
    groups: dict[str, list[int]] = {}
    for i in range(len(p.points)):
        groups.setdefault(colours[i] if colours else name, []).append(i)
    traces = []
    for k, (group, idx) in enumerate(groups.items()):
        colour = {RIGHT: "#188038", WRONG: "#d93025", NOT_SCORED: "#9aa0a6"}.get(group, PALETTE[k % len(PALETTE)])
        traces.append(_trace(p, idx, safe_label(group, 30), {"color": colour, "size": 6, "opacity": 0.8}))
    if highlight:
        traces.append(_trace(p, list(highlight), "nearest to the query",
                             {"color": "rgba(0,0,0,0)", "size": 14, "line": {"color": "#202124", "width": 2}}))
    return traces


def _trace(p: Projection, idx: list[int], name: str, marker: dict) -> go.Scattergl | go.Scatter3d:
    text = [safe_label(p.labels[i], 90) for i in idx]
    if p.dims == 3:
        return go.Scatter3d(x=p.points[idx, 0], y=p.points[idx, 1], z=p.points[idx, 2], mode="markers", name=name,
                            text=text, marker={**marker, "size": marker["size"] / 2},
                            hovertemplate="%{text}<extra>" + name + "</extra>")
    return go.Scattergl(x=p.points[idx, 0], y=p.points[idx, 1], mode="markers", name=name, text=text, marker=marker,
                        hovertemplate="%{text}<extra>" + name + "</extra>")


def _explained(p: Projection) -> str:
    return f"axes explain {', '.join(f'{e:.0%}' for e in p.explained)}" if p.explained else ""


def _title(p: Projection) -> str:
    return titled(f"{safe_label(p.model, 40)}: {METHODS[p.method]} of {len(p.points):,} {p.kind}", _explained(p))


def _axis_titles(fig: go.Figure, p: Projection, **where: int) -> None:
    """Name the axes after the method's components ("PCA 1"): their units mean nothing more."""
    names = {f"{axis}axis_title": f"{METHODS[p.method]} {i + 1}" for i, axis in enumerate("xyz"[:p.dims])}
    if p.dims == 3:
        fig.update_scenes(**names, **where)
    else:
        fig.update_xaxes(title=names["xaxis_title"], **where)
        fig.update_yaxes(title=names["yaxis_title"], **where)


def projection_figure(p: Projection, colours: Sequence[str] | None = None, colour_by: str = "",
                      highlight: Sequence[int] = ()) -> go.Figure:
    """One model's projection as a WebGL scatter, coloured by ``colours`` (one label per point)."""
    fig = go.Figure(_traces(p, colours, highlight, safe_label(p.model, 30)))
    fig.update_layout(title=_title(p), legend={"title": {"text": safe_label(colour_by, 30)}}, height=560,
                      margin={"l": 10, "r": 10, "t": 60, "b": 10})
    _axis_titles(fig, p)
    return fig


def side_by_side_figure(first: Projection, second: Projection, colours: Sequence[str] | None = None,
                        colour_by: str = "") -> go.Figure:
    """Two models' projections of the same texts, the second aligned onto the first (Procrustes)."""
    specs = [[{"type": "scene"}, {"type": "scene"}]] if first.dims == 3 else None
    aligned = f" (disparity {second.disparity:.2f})" if second.disparity is not None else ""
    fig = make_subplots(1, 2, specs=specs, subplot_titles=[titled(safe_label(p.model, 30), _explained(p))
                                                           for p in (first, second)])
    for col, p in ((1, first), (2, second)):
        for trace in _traces(p, colours, (), safe_label(p.model, 30)):
            trace.showlegend = col == 1
            trace.legendgroup = trace.name
            fig.add_trace(trace, row=1, col=col)
        _axis_titles(fig, p, row=1, col=col)
    fig.update_layout(title=titled(f"{METHODS[first.method]} of {len(first.points):,} {first.kind}, side by side",
                                   f"the second aligned onto the first{aligned}"),
                      legend={"title": {"text": safe_label(colour_by, 30)}}, height=560,
                      margin={"l": 10, "r": 10, "t": 100, "b": 10})
    return fig


def overlay_figure(first: Projection, second: Projection) -> go.Figure:
    """Both aligned projections in one picture, coloured by model (each text's two points joined by a line)."""
    fig = go.Figure()
    if first.dims == 2:
        xs, ys = [], []
        for a, b in zip(first.points, second.points, strict=True):
            xs += [a[0], b[0], None]
            ys += [a[1], b[1], None]
        fig.add_trace(go.Scattergl(x=xs, y=ys, mode="lines", line={"color": "#dadce0", "width": 1},
                                   hoverinfo="skip", showlegend=False))
    for p in (first, second):
        for trace in _traces(p, [p.model] * len(p.points), (), p.model):
            fig.add_trace(trace)
    fig.update_layout(title=titled(f"{safe_label(first.model, 30)} and {safe_label(second.model, 30)}, aligned",
                                   "each text's two points joined by a line"),
                      legend={"title": {"text": "model"}}, height=560, margin={"l": 10, "r": 10, "t": 60, "b": 10})
    _axis_titles(fig, first)
    return fig
