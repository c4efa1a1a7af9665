"""explorer.plots.compression: the frontier is the non-dominated set; the figure draws every method and the
original, the frontier, both panels; labels are escaped."""

from __future__ import annotations

import pytest

from explorer.compression.quality import Quality
from explorer.compression.study import Row, Study
from explorer.plots import compression as plots


def _row(method: str, size: int, latency: float, value: float, metric: str = "cosine agreement") -> Row:
    return Row(method, "", size, size, latency, 1.0, 10.0, Quality(metric, value, 1.0), 0.0, "answer")


def _study(metric: str = "cosine agreement") -> Study:
    rows = (_row("int8", 60, 5.0, 0.95, metric), _row("prune-50", 100, 10.0, 0.7, metric),
            _row("<b>x</b>", 50, 12.0, 0.5, metric))
    return Study("m", "Model <i>", False, "cpu", "cpu", "float32", "sentences/s", "p",
                 _row("original", 100, 10.0, 1.0, metric), rows)


@pytest.mark.parametrize("higher, expected", [(True, [0, 1]), (False, [0, 2])])
def test_frontier(higher: bool, expected: list[int]) -> None:
    pts = [(1.0, 0.9), (2.0, 1.0), (1.5, 0.8), (3.0, 0.95)]
    assert plots.frontier(pts, higher) == expected
    assert plots.frontier([(1.0, 1.0), (1.0, 1.0)], True) == [0, 1]  # equal points do not remove each other


def test_figure_has_both_panels_the_points_and_the_frontier() -> None:
    fig = plots.tradeoff_figure(_study())
    scatters = [t for t in fig.data if t.mode == "markers+text"]
    assert len(scatters) == 2 and all(len(t.x) == 4 for t in scatters)
    assert list(scatters[1].x) == [1.0, 0.5, 1.0, 1.2]  # latency relative to the original timed beside it
    lines = [t for t in fig.data if t.name == "Pareto frontier"]
    assert len(lines) == 2 and list(lines[0].x) == [50 / 1e6, 60 / 1e6, 100 / 1e6]
    assert "&lt;b&gt;" in scatters[0].text[3] and "&lt;i&gt;" in fig.layout.title.text
    assert "higher is better" in fig.layout.yaxis.title.text


def test_perplexity_is_lower_is_better() -> None:
    fig = plots.tradeoff_figure(_study("perplexity"))
    assert "lower is better" in fig.layout.yaxis.title.text
    assert not plots.higher_is_better("perplexity") and plots.higher_is_better("cosine agreement")
