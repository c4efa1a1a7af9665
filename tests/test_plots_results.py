"""Figures of the results page: frontier trace, escaped labels, the speed bars."""

from __future__ import annotations

from explorer.papers import results, speed
from explorer.plots import results as plots


def _pts():
    return [results.Point("<b>A</b>", "bert-base", 80.0, 100, 200, "X et al. 2019 (A), Table 1"),
            results.Point("B", "distilbert", 77.0, 60, 120, "X et al. 2019 (A), Table 1")]


def test_efficiency_figure_marks_the_frontier_and_escapes_labels():
    pts = _pts()
    fig = plots.efficiency_figure(pts, results.frontier(pts), "score", x="flops")
    line, dots = fig.data
    assert list(line.x) == [120, 200] and list(dots.x) == [200, 120]
    assert "<b>" not in dots.text[0] and fig.layout.xaxis.type == "log"


def test_speed_figure_puts_the_paper_beside_the_measurement():
    fig = plots.speed_figure(speed.Speed(("bert-base", "distilbert"), (2.0, 1.0), 32, 5), speed.PAPER)
    assert list(fig.data[0].y) == [668 / 410, 2.0]
    other = plots.speed_figure(speed.Speed(("albert-base", "bert-base"), (1.0, 1.0), 32, 5), speed.PAPER)
    assert list(other.data[0].y) == [1.0]  # no paper figure for this pair


def test_glue_figure_has_a_trace_per_split_and_only_reported_cells():
    from explorer.papers import crosspaper

    records = crosspaper.glue_view()
    fig = plots.glue_figure(records, "CoLA")
    assert [t.name for t in fig.data] == ["test set", "dev set"]
    shown = sum(len(t.x) for t in fig.data)
    assert shown == sum(1 for r in records if r["CoLA"] is not None)
    assert "diamond" in fig.data[0].marker.symbol  # ensembles are marked


def test_compute_axis_is_a_choice_and_hovers_format_floats():
    assert plots.AXES["train_flops"][0] == "train_flops"
    p = results.Point("BERT-base", "bert-base", 79.6, 110_000_000, 200_000_000, "Devlin et al. 2019 (BERT)", 8.4e19)
    fig = plots.efficiency_figure([p], [p], "glue_score", "train_flops")
    assert "8.4e+19" in fig.data[1].hovertext[0]
