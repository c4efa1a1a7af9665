"""explorer.plots.spans: highlighted infilling and the QA strip keep user text as text."""

from __future__ import annotations

from explorer.core.labels import UNTRAINED
from explorer.plots import spans as plots
from explorer.tasks.infill import Segment
from explorer.tasks.qa import QAResult


def test_segments_markdown_escapes_and_numbers_spans() -> None:
    md = plots.segments_markdown((Segment("<b>x</b> $y$ ", None), Segment("", 0), Segment("*z*", 1)))
    assert "<b>" not in md and "\\$y\\$" in md
    assert ":orange-background[**∅** \\[1\\]]" in md and ":blue-background[**\\*z\\*** \\[2\\]]" in md


def test_qa_strip_mirrors_start_and_end_and_labels_untrained() -> None:
    res = QAResult("m", "q?", "<b>a</b> c", "<b>a</b>", 0, 8, 0.5, 0.1, 0, 1, ("<b>a</b>", "c"),
                   ((0, 8), (9, 10)), (0.7, 0.3), (0.6, 0.4), (0, 0), True, 0.01)
    fig = plots.qa_strip(res)
    assert [t.name for t in fig.data] == ["P(start)", "P(end)"] and list(fig.data[1].y) == [-0.6, -0.4]
    assert fig.layout.title.text.endswith(UNTRAINED) and "<b>" not in fig.layout.title.text
