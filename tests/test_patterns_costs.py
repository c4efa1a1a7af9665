"""explorer.architecture.patterns.costs: memory, FLOPs and cost curves from the closed forms."""

from __future__ import annotations

from explorer.architecture import patterns as P
from explorer.architecture.patterns import costs, kinds


def test_stats_memory_and_flops() -> None:
    s = P.pattern_stats(kinds.full(512, d_head=64))
    assert s.nnz == 512 * 512 and s.density == 1.0
    assert s.score_memory_bytes == s.dense_score_memory_bytes == 4 * 512 * 512
    assert s.flops == 4 * 64 * 512 * 512
    c = P.pattern_stats(kinds.causal(512))
    assert c.score_memory_bytes == 4 * 512 * 513 // 2 and c.dense_score_memory_bytes == 4 * 512 * 512
    assert set(s.to_dict()) >= {"kind", "nnz", "density", "score_memory_bytes"}


def test_cost_curve_quadratic_vs_linear() -> None:
    lengths = (1024, 2048, 4096, 8192, 16_384)
    full = costs.cost_curve(kinds.full(8), lengths)
    band = costs.cost_curve(kinds.sliding_window(8, 512, (0,)), lengths)
    bird = costs.cost_curve(kinds.block_sparse(8, 64, 3), lengths)
    assert full.nnz[-1] / full.nnz[-2] == 4.0  # doubling T quadruples full attention
    assert 1.9 < band.nnz[-1] / band.nnz[-2] < 2.1  # ... and doubles a window
    assert 1.9 < bird.nnz[-1] / bird.nnz[-2] < 2.1
    assert full.to_dict()["lengths"] == list(lengths)


def test_cost_curve_averages_layers() -> None:
    lengths = (4096,)
    neo = costs.cost_curve([kinds.causal(8), kinds.local_causal(8, 256)], lengths)
    expected = (P.nnz_closed_form(kinds.causal(4096)) + P.nnz_closed_form(kinds.local_causal(4096, 256))) / 2
    assert neo.nnz == (expected,)


def test_default_lengths_span_512_to_16k() -> None:
    lengths = costs.default_lengths()
    assert lengths[0] == 512 and lengths[-1] == 16_384 and list(lengths) == sorted(set(lengths))


def test_mask_view_counts_while_pooling_and_stats_follow_the_count() -> None:
    spec = kinds.sliding_window(3000, 64, (0, 9), dilation=2)
    view = P.mask_view(spec, 256)
    assert view.nnz_counted == P.nnz_closed_form(spec) and view.factor == 12
    counted = P.pattern_stats(spec, nnz=view.nnz_counted)
    assert counted == P.pattern_stats(spec)  # memory and FLOPs from the mask == closed form
    assert P.pattern_stats(spec, nnz=10).score_memory_bytes == 40
