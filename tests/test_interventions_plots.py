"""Figures of interventions: the grid's scale and escaped tokens, families on one relative-depth axis, the
distribution before and after, heads against their importance."""

from __future__ import annotations

import math

import numpy as np

from explorer.interventions.ablation import Ablation
from explorer.interventions.grid import PatchGrid
from explorer.interventions.ranking import HeadRank, HeadRanking
from explorer.plots import interventions as plots


def _grid(layers: int, model: str = "demo") -> PatchGrid:
    tokens = ("<bos>", "<b>x</b>", "y")
    values = tuple(tuple(float(i + j) for j in range(3)) for i in range(layers))
    depth = tuple(i / (layers - 1) for i in range(layers))
    return PatchGrid(model, "decoder", "decoder", "resid", "logit-diff", tokens, tokens, tokens, " x", " y", 4.0, 0.0,
                     values, depth, 1)


def test_the_grid_is_normalised_centred_and_escaped() -> None:
    fig = plots.patch_heatmap(_grid(3))
    heat = fig.data[0]
    assert np.allclose(np.asarray(heat.z), [[0, 0.25, 0.5], [0.25, 0.5, 0.75], [0.5, 0.75, 1.0]])
    assert heat.zmin == -1 and heat.zmax == 1 and heat.zmid == 0  # white is the corrupted run
    assert heat.x[1] == "1 &lt;b&gt;x&lt;/b&gt;" and list(heat.y) == ["layer 0", "layer 1", "layer 2"]
    assert np.allclose(np.asarray(heat.customdata)[2], [2.0, 3.0, 4.0])  # the raw metric in the hover
    assert fig.layout.shapes[0].x1 == 0.5  # the first position is the same in both prompts


def test_families_share_one_relative_depth_axis() -> None:
    fig = plots.across_figure([_grid(3, "six"), _grid(5, "eighteen")])
    assert [list(t.y) for t in fig.data] == [[0.0, 0.5, 1.0], [0.0, 0.25, 0.5, 0.75, 1.0]]
    assert fig.data[0].showscale and not fig.data[1].showscale


def test_distribution_and_ranking_figures() -> None:
    ablated = Ablation("demo", "t", "head 1.1", "zero", " x", 1, ((" x", 0.5), (" y", 0.2)), ((" y", 0.4),), 0.5,
                       0.1, 0.3)
    bars = plots.distribution_figure(ablated)
    assert [t.name for t in bars.data] == ["before", "after"] and math.isnan(bars.data[1].y[0])
    ranked = HeadRanking("demo", "t", "zero", "prob", " x", None, 0.5,
                         (HeadRank(0, 1, -0.3, 0.9), HeadRank(1, 0, 0.1, None)), "note", None)
    fig = plots.ranking_figure(ranked)
    assert list(fig.data[0].text) == ["0.1"] and "Spearman" not in fig.layout.title.text
