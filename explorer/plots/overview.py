"""Figures of the Overview: parameters by publication date, and the lineage as a family tree.

Pure builders. Both put each variant at its publication month on x with whole years as ticks;
names show on hover (the tree also labels each node: one lane per variant, so labels never overlap).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from explorer.architecture.lineage import Lineage
from explorer.core.labels import safe_label
from explorer.plots.style import titled

__all__ = ["FAMILY_COLOURS", "lineage_figure", "params_by_date_figure"]

FAMILY_COLOURS = {"encoder": "#1f77b4", "decoder": "#d62728", "encoder-decoder": "#2ca02c"}


def _years(xs: Sequence[float]) -> dict[str, Any]:
    """Whole-year ticks spanning the data (never '2,018.5')."""
    lo, hi = int(min(xs, default=2018)), int(max(xs, default=2018)) + 1
    return {"tickvals": list(range(lo, hi + 1)), "ticktext": [str(y) for y in range(lo, hi + 1)],
            "range": [lo - 0.1, hi + 0.1], "title": "publication date (month)"}


def params_by_date_figure(rows: Sequence[dict[str, Any]]) -> go.Figure:
    """rows: {"key", "name", "family", "date", "params", ...}; one trace per family, names on hover."""
    fig = go.Figure()
    for family, colour in FAMILY_COLOURS.items():
        mine = [r for r in rows if r["family"] == family]
        fig.add_scatter(x=[r["date"] for r in mine], y=[r["params"] for r in mine], mode="markers", name=family,
                        marker={"size": 10, "color": colour, "line": {"width": 1, "color": "white"}},
                        customdata=[r["key"] for r in mine],
                        hovertext=[f"<b>{safe_label(r['name'], 50)}</b><br>{r['params']:,} parameters"
                                   for r in mine], hoverinfo="text")
    fig.update_layout(title=titled("Parameters by publication month", "every variant of the catalog; hover a point "
                                                                     "for its name"), margin={"t": 70},
                      xaxis=_years([r["date"] for r in rows]), yaxis={"type": "log", "title": "parameters"})
    return fig


def _edge_lines(lin: Lineage, where: dict[str, tuple[float, float]]) -> tuple[list, list]:
    xs: list[float | None] = []
    ys: list[float | None] = []
    for e in lin.edges:
        (x0, y0), (x1, y1) = where[e["parent"]], where[e["child"]]
        xs += [x0, x1, None]
        ys += [y0, y1, None]
    return xs, ys


def lineage_figure(lin: Lineage) -> go.Figure:
    """Family tree: a node per variant (colour = family), an edge per parent; select a node to open it."""
    where = {n["key"]: (n["x"], n["y"]) for n in lin.nodes}
    xs, ys = _edge_lines(lin, where)
    fig = go.Figure()
    fig.add_scatter(x=xs, y=ys, mode="lines", line={"color": "#bbb", "width": 1}, hoverinfo="skip", showlegend=False)
    mids = [((where[e["parent"]][0] + where[e["child"]][0]) / 2, (where[e["parent"]][1] + where[e["child"]][1]) / 2)
            for e in lin.edges]
    fig.add_scatter(x=[m[0] for m in mids], y=[m[1] for m in mids], mode="markers", showlegend=False,
                    marker={"size": 6, "color": "#bbb", "symbol": "diamond"}, hoverinfo="text",
                    hovertext=[f"{e['child']} <i>{safe_label(e['relation'], 60)}</i> {e['parent']}" for e in lin.edges])
    for family, colour in FAMILY_COLOURS.items():
        mine = [n for n in lin.nodes if n["family"] == family]
        fig.add_scatter(x=[n["x"] for n in mine], y=[n["y"] for n in mine], mode="markers+text", name=family,
                        text=[safe_label(n["name"], 34) for n in mine], textposition="middle right",
                        textfont={"size": 11}, customdata=[n["key"] for n in mine],
                        marker={"size": 12, "color": colour, "line": {"width": 1, "color": "white"}},
                        hovertext=[f"<b>{safe_label(n['name'], 50)}</b><br>click to open in the Architecture explorer"
                                   for n in mine], hoverinfo="text")
    years = _years([n["x"] for n in lin.nodes])
    fig.update_layout(title="Lineage: who builds on whom (hover an edge for how)", clickmode="event+select",
                      xaxis={**years, "range": [years["range"][0], years["range"][1] + 0.9]},  # room for names
                      yaxis={"visible": False}, height=max(500, 24 * len(lin.nodes)),
                      legend={"orientation": "h", "y": 1.02}, margin={"l": 20, "r": 20})
    return fig
