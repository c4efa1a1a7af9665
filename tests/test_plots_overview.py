"""Figures of the Overview: whole-year ticks, hover names, one node per variant in the tree."""

from __future__ import annotations

from explorer.architecture import catalog, lineage
from explorer.plots import overview as plots


def test_params_by_date_uses_whole_years_and_hover_names():
    rows = [{"key": "a", "name": "<i>A</i>", "family": "encoder", "date": 2018.75, "params": 10},
            {"key": "b", "name": "B", "family": "decoder", "date": 2020.25, "params": 20}]
    fig = plots.params_by_date_figure(rows)
    assert list(fig.layout.xaxis.tickvals) == [2018, 2019, 2020, 2021]
    assert fig.data[0].mode == "markers" and "<i>" not in fig.data[0].hovertext[0]


def test_lineage_figure_has_every_variant_and_an_edge_hover_per_parent():
    lin = lineage.lineage()
    fig = plots.lineage_figure(lin)
    keys = [k for trace in fig.data if trace.customdata is not None for k in trace.customdata]
    assert sorted(keys) == sorted(catalog.keys())
    assert len(fig.data[1].hovertext) == len(lin.edges)
    assert fig.layout.height >= 24 * len(lin.nodes)
