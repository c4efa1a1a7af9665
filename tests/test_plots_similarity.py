"""explorer.plots.similarity: figures draw the library's numbers; user text is escaped; untrained is labelled."""

from __future__ import annotations

import torch

from explorer.core.labels import UNTRAINED
from explorer.plots import similarity as plots
from explorer.tasks.colbert import CompressionStudy, MaxSim, Ranking
from explorer.tasks.colbert.compression import fp16_bytes, storage_ratio
from explorer.tasks.colbert.late import RankedDoc
from explorer.tasks.colbert.study import BitsReport
from explorer.tasks.similarity import SearchHit, SearchResult, SimilarityResult

SENTS = ("<b>bold</b> text", "A plain sentence", "<b>bold</b> text ")  # two share a label once shortened


def _matrix(untrained: bool = False) -> SimilarityResult:
    m = torch.eye(3).tolist()
    return SimilarityResult("mini", SENTS, tuple(tuple(r) for r in m), 384, untrained)


def test_heatmap_numbers_labels_and_escapes_sentences() -> None:
    fig = plots.similarity_heatmap(_matrix())
    assert list(fig.data[0].x) == ["1. &lt;b&gt;bold&lt;/b&gt; text", "2. A plain sentence",
                                   "3. &lt;b&gt;bold&lt;/b&gt; text"]
    assert [list(r) for r in fig.data[0].z] == torch.eye(3).tolist()
    assert UNTRAINED not in fig.layout.title.text


def test_untrained_results_say_so_in_every_title() -> None:
    assert UNTRAINED in plots.similarity_heatmap(_matrix(untrained=True)).layout.title.text  # its second line
    hits = SearchResult("mini", "q", (SearchHit(1, 0, "a", 0.5),), untrained=True)
    assert plots.search_bars(hits).layout.title.text.endswith(UNTRAINED)


def test_search_bars_are_best_first() -> None:
    res = SearchResult("mini", "<i>q</i>", (SearchHit(1, 2, "best", 0.9), SearchHit(2, 0, "next", 0.1)), False)
    fig = plots.search_bars(res)
    assert list(fig.data[0].x) == [0.9, 0.1] and list(fig.data[0].y) == ["#1 best", "#2 next"]
    assert "&lt;i&gt;q&lt;/i&gt;" in fig.layout.title.text


def test_maxsim_heatmap_circles_each_query_tokens_match() -> None:
    m = MaxSim(("q0", "q1"), ("d0", "<d1>"), ((0.1, 0.9), (0.8, 0.2)), (1, 0), (0.9, 0.8), 1.7)
    fig = plots.maxsim_heatmap(m, "MaxSim")
    assert list(fig.data[1].x) == ["1:&lt;d1&gt;", "0:d0"] and list(fig.data[1].customdata) == [0.9, 0.8]
    assert "score = sum of circled cells = 1.700" in fig.layout.title.text


def test_ranking_slope_highlights_documents_that_move() -> None:
    docs = (RankedDoc(0, "a", 2.0, 1, 0.1, 2), RankedDoc(1, "b", 1.0, 2, 0.9, 1), RankedDoc(2, "c", 0.5, 3, 0.0, 3))
    fig = plots.ranking_slope(Ranking("q", "stand-in", True, False, docs, -0.5))
    assert [list(t.y) for t in fig.data] == [[1, 2], [2, 1], [3, 3]]
    assert [t.line.color for t in fig.data] == [plots.ORANGE, plots.ORANGE, plots.GREY]


def test_compression_bars_use_the_one_storage_ratio() -> None:
    reports = tuple(BitsReport(b, 4 + 16 * b, round(storage_ratio(128, b), 3), 0.9, (1.0, 2.0), 0.1, 1.0, 1.0)
                    for b in (1, 2))
    study = CompressionStudy("enc", False, False, "q", ("x", "y"), 10, 128, 4, 2, 1024, (1.1, 2.1), reports)
    fig = plots.compression_figure(study)
    assert list(fig.data[0].y) == [fp16_bytes(128), 20, 36]
    assert list(fig.data[0].text) == ["256", "20 (12.8x smaller)", "36 (7.1x smaller)"]
    assert list(fig.data[2].y) == [1.0, 2.0]  # 1-bit scores against the exact ones
