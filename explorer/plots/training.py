"""Figures of the pretraining lab: training loss by step, held-out loss by compute and by time, accuracy, a table.

Pure builders: runs in, plotly figures (or table rows) out. A run is the JSON the trainer reports
(:func:`explorer.training.trainer.summary`: ``objective, size, params, steps, tokens_seen, flops,
seconds, losses: [[step, loss], ...], eval: {history: [{step, loss, accuracy, flops, seconds, ...}]}``),
keyed by the label the page shows, so a finished run, a live one and a CLI result draw the same.
A run's colour is its position in ``runs``, the same in every figure.

>>> run = {"objective": "mlm", "losses": [[1, 9.0], [2, 8.5]], "eval": {"history": [
...     {"step": 0, "loss": 9.1, "accuracy": 0.0, "flops": 0.0, "seconds": 0.0},
...     {"step": 2, "loss": 8.0, "accuracy": 0.1, "flops": 1e9, "seconds": 1.5}]}}
>>> [len(t.x) for t in loss_figure({"mlm #1": run}).data]
[2]
>>> table_rows({"mlm #1": run})[0]["held-out loss"]
'9.1 → 8'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from explorer.core.labels import safe_label

__all__ = ["PALETTE", "accuracy_figure", "heldout_figure", "history", "loss_figure", "table_rows"]

PALETTE = qualitative.Plotly  # ten colours; the eleventh run reuses the first
Runs = Mapping[str, Mapping[str, Any]]


def _colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _finite(points: Sequence[Sequence[float]]) -> tuple[list[float], list[float]]:
    """x and y of the points whose both values are finite numbers (a diverged step is left out, not drawn as NaN)."""
    keep = [(float(x), float(y)) for x, y in points if math.isfinite(float(x)) and math.isfinite(float(y))]
    return [x for x, _ in keep], [y for _, y in keep]


def history(run: Mapping[str, Any]) -> list[Mapping[str, float]]:
    """The run's held-out evaluations, oldest first (empty before the first one)."""
    evals = run.get("eval") or {}
    return list(evals.get("history") or [])


def _lm(evaluation: Mapping[str, float], key: str) -> float:
    """The language-model part of an evaluation (``lm_loss`` / ``lm_accuracy``: comparable across objectives,
    see ``trainer.evaluate``), else the objective's own ``loss`` / ``accuracy``."""
    return float(evaluation.get(f"lm_{key}", evaluation.get(key, math.nan)))


def _empty(fig: go.Figure, text: str) -> go.Figure:
    fig.add_annotation(text=text, showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5, font={"size": 14})
    return fig


def loss_figure(runs: Runs) -> go.Figure:
    """Training loss against step, one line per run (each step's own batch: noisy by nature)."""
    fig = go.Figure()
    for i, (label, run) in enumerate(runs.items()):
        x, y = _finite(run.get("losses") or [])
        fig.add_scatter(x=x, y=y, mode="lines", name=safe_label(label, 40), line={"color": _colour(i), "width": 1.5},
                        hovertemplate="step %{x}<br>loss %{y:.3f}<extra>" + safe_label(label, 40) + "</extra>")
    fig.update_layout(title="Training loss (each step's batch)", xaxis_title="step",
                      yaxis_title="training loss (the objective's own, log scale)", yaxis_type="log",
                      legend={"orientation": "h", "y": -0.2},
                      margin={"t": 50})
    return fig if runs else _empty(fig, "No runs yet: pick objectives and press Train.")


def heldout_figure(runs: Runs) -> go.Figure:
    """Held-out loss against training FLOPs (one compute axis for every objective) and against wall-clock seconds."""
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=("by training compute", "by wall-clock time"))
    for i, (label, run) in enumerate(runs.items()):
        evals = history(run)
        name = safe_label(label, 40)
        for col, key in ((1, "flops"), (2, "seconds")):
            x, y = _finite([(e.get(key, math.nan), _lm(e, "loss")) for e in evals])
            fig.add_scatter(x=x, y=y, mode="lines+markers", name=name, legendgroup=name, showlegend=col == 1,
                            line={"color": _colour(i)}, marker={"size": 5}, row=1, col=col,
                            hovertemplate=f"{key} %{{x:.3g}}<br>held-out loss %{{y:.3f}}<extra>{name}</extra>")
    fig.update_xaxes(title_text="training FLOPs (3 x forward, the project's cost model)", row=1, col=1)
    fig.update_xaxes(title_text="seconds of training (this machine)", row=1, col=2)
    fig.update_yaxes(title_text="held-out LM cross-entropy (same windows for every run)", row=1, col=1)
    fig.update_layout(title="Held-out loss: equal compute on the left, equal time on the right",
                      legend={"orientation": "h", "y": -0.25}, margin={"t": 70})
    return fig if runs else _empty(fig, "No runs yet.")


def _accuracies(run: Mapping[str, object]) -> list[tuple[float, float]]:
    return [(e.get("flops", math.nan), _lm(e, "accuracy")) for e in history(run) if e.get("accuracy") is not None]


def accuracy_figure(runs: Runs) -> go.Figure:
    """Held-out masked-token accuracy against training FLOPs, for the runs that report one."""
    fig = go.Figure()
    for i, (label, run) in enumerate(runs.items()):
        x, y = _finite(_accuracies(run))
        if x:
            name = safe_label(label, 40)
            fig.add_scatter(x=x, y=y, mode="lines+markers", name=name, line={"color": _colour(i)}, marker={"size": 5},
                            hovertemplate=f"FLOPs %{{x:.3g}}<br>accuracy %{{y:.1%}}<extra>{name}</extra>")
    fig.update_layout(title="Token accuracy (held out, top-1; ELECTRA: its generator)",
                      xaxis_title="training FLOPs", yaxis_title="accuracy", yaxis_tickformat=".0%",
                      legend={"orientation": "h", "y": -0.2}, margin={"t": 50})
    return fig if fig.data else _empty(fig, "No run reports a masked-token accuracy yet.")


def _first_last(values: Sequence[float | None], fmt: str) -> str:
    kept = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not kept:
        return "—"
    return format(kept[0], fmt) if len(kept) == 1 else f"{kept[0]:{fmt}} → {kept[-1]:{fmt}}"


def _probe(result: dict[str, object] | None) -> str:
    """The downstream probe's accuracy with its noise ("" before the run has been probed)."""
    if not result:
        return ""
    return f"{result['accuracy']:.1%} ± {result['stderr']:.1%}"


def table_rows(runs: Runs) -> list[dict[str, object]]:
    """One row per run: objective, parameters, steps, tokens seen, FLOPs, seconds, held-out loss, accuracy, probe,
    and its FastBERT exits' accuracy by layer when it has them."""
    rows = []
    for label, run in runs.items():
        evals = history(run)
        rows.append({"run": label, "objective": run.get("objective", ""), "size": run.get("size", ""),
                     "parameters": run.get("params"), "steps": run.get("steps"), "tokens seen": run.get("tokens_seen"),
                     "FLOPs": f"{float(run.get('flops') or 0.0):.3g}",
                     "seconds": round(float(run.get("seconds") or 0), 1),
                     "held-out loss": _first_last([_lm(e, "loss") for e in evals], ".4g"),
                     "accuracy": _first_last([_lm(e, "accuracy") for e in evals], ".1%"),
                     "probe": _probe(run.get("eval", {}).get("probe")),
                     **({"exit accuracy by layer": _exits(run["exits"])} if run.get("exits") else {})})
    return rows


def _exits(report: dict[str, Any]) -> str:
    """FastBERT exits: accuracy after each layer, e.g. "76% → 77% (teacher)"."""
    return " → ".join(f"{a:.0%}" for a in report.get("layer_accuracy") or []) + " (last: teacher)"
