"""explorer.plots.patterns: mask heatmaps and cost charts carry the data and say how they were drawn."""

from __future__ import annotations

from explorer.architecture import patterns as P
from explorer.plots import patterns as plots


def test_variant_mask_heatmap_titles_and_axes() -> None:
    vp = P.pattern_for_variant("t5-base", 300, part="cross", dec_len=40)
    fig = plots.variant_mask_heatmap(vp, P.mask_view(vp.spec, 256))
    assert fig.layout.title.text.startswith(f"{vp.name}, layer 0 (cross)")
    assert fig.layout.yaxis.title.text == "decoder query" and fig.layout.xaxis.title.text == "encoder key"
    assert "max-pooled: 1 cell = 2x2 tokens" in fig.layout.title.text  # 300 keys > 256 cells
    assert fig.data[0].z.shape == (20, 150)


def test_self_attention_heatmap_is_exact_when_small() -> None:
    vp = P.pattern_for_variant("gpt2", 100)
    view = P.mask_view(vp.spec, 256)
    fig = plots.variant_mask_heatmap(vp, view)
    assert (fig.data[0].z == P.build_mask(vp.spec)).all()
    assert "exact" in fig.layout.title.text and fig.layout.yaxis.title.text == "query token"
    assert fig.layout.title.text.split("<br>")[0] == f"{vp.name}, layer 0"  # single stack: no part named


def test_cost_chart_dots_the_part_beyond_max_positions() -> None:
    curve = P.variant_cost_curve("bert-base", (256, 512, 1024, 2048))
    fig = plots.cost_chart([curve])
    solid, dotted = fig.data
    assert list(solid.x) == [256, 512] and list(dotted.x) == [512, 1024, 2048]  # joined at 512
    assert dotted.line.dash == "dot" and "beyond max positions" in dotted.name
