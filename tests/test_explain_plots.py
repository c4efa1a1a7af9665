"""explorer.plots.explain: the lens grid, depth, token strips and the tuned lens's figure, user text kept as text."""

from __future__ import annotations

from explorer.core.labels import UNTRAINED
from explorer.explain.attribution import Attribution, TokenScore
from explorer.explain.lens import Lens, LensLayer
from explorer.explain.tuning import TuneReport
from explorer.plots import explain as plots


def _lens(model: str, layers: int, untrained: bool = False) -> Lens:
    rows = tuple(LensLayer(i, i / layers, (("<b>x</b>", 0.5),), layers - i + 1, 0.1 * i, 1.0, float(layers - i))
                 for i in range(layers + 1))
    grid = tuple(("<b>x</b>", "y") for _ in range(layers + 1))
    return Lens(model, "logit", "next-token", 1, " is", " Paris", rows, tokens=("<i>a</i>", " is"), grid_tokens=grid,
                grid_probability=tuple((0.2, 0.9) for _ in range(layers + 1)), untrained=untrained)


def test_the_grid_is_layers_by_positions_coloured_by_probability_and_escaped() -> None:
    fig = plots.lens_grid(_lens("<b>m</b>", 3, untrained=True))
    heat = fig.data[0]
    assert len(heat.y) == 4 and list(heat.x) == ["0 &lt;i&gt;a&lt;/i&gt;", "1  is"]
    assert heat.text[0][0] == "&lt;b&gt;x&lt;/b&gt;" and heat.zmax == 1
    assert "<b>m</b>" not in fig.layout.title.text and UNTRAINED.strip(" ()") in fig.layout.title.text


def test_depth_puts_models_of_any_depth_on_one_axis() -> None:
    fig = plots.depth_figure([_lens("six", 6), _lens("eighteen", 18)])
    xs = [list(t.x) for t in fig.data]
    assert all(x[0] == 0 and x[-1] == 1 for x in xs) and len(fig.data) == 4  # rank and KL per model


def test_a_token_strip_is_signed_around_zero_and_a_pair_has_two_rows() -> None:
    tokens = (TokenScore("<b>a</b>", -2.0), TokenScore("b", 1.0), TokenScore("c", None, 1))
    result = Attribution("m", "ig", "similarity", "cos", None, None, 0.5, 0.9, 0.004, tokens)
    heat = plots.token_strip(result).data[0]
    assert (heat.zmin, heat.zmax) == (-2.0, 2.0) and list(heat.y) == ["sentence A", "sentence B"]
    assert heat.text[0][0] == "&lt;b&gt;a&lt;/b&gt;" and heat.z[1][0] is None  # not reached: left blank
    norm = plots.token_strip(Attribution("m", "grad", "next-token", "log p", " x", None, -1.0, None, None,
                                         (TokenScore("a", 0.5), TokenScore("b", 2.0)))).data[0]
    assert (norm.zmin, norm.zmax) == (0.0, 2.0)


def test_the_tuned_lens_figure_sets_both_lenses_side_by_side() -> None:
    report = TuneReport("m", "corpus", 2, 2, 64, 1.0, (5.0, 1.0, 0.0), (2.0, 0.5, 0.0))
    fig = plots.tuned_figure(report)
    assert [t.name for t in fig.data] == ["logit lens", "tuned lens"] and list(fig.data[1].y) == [2.0, 0.5, 0.0]


def test_the_grid_draws_every_layer_on_a_category_axis_with_readable_cells() -> None:
    """Layer labels "1".."18" read as numbers made plotly's axis linear and dropped the embeddings' row."""
    fig = plots.lens_grid(_lens("m", 18))
    heat = fig.data[0]
    assert list(heat.y) == [str(i) for i in range(19)] and fig.layout.yaxis.type == "category"
    assert fig.layout.xaxis.type == "category" and "embeddings" in fig.layout.yaxis.title.text
    assert heat.textfont.size >= 11 and heat.customdata[0][0] == "&lt;b&gt;x&lt;/b&gt;"  # the hover: whole token


def test_kl_is_drawn_on_a_linear_axis_that_holds_the_final_zero() -> None:
    depth = plots.depth_figure([_lens("six", 6)])
    assert depth.layout.yaxis.type == "log" and depth.layout.yaxis2.type != "log"  # rank >= 1; KL ends at 0
    assert depth.data[1].y[-1] == 0.0 and depth.layout.yaxis2.rangemode == "tozero"
    tuned = plots.tuned_figure(TuneReport("m", "corpus", 2, 2, 64, 1.0, (5.0, 1.0, 0.0), (2.0, 0.5, 0.0)))
    assert tuned.layout.yaxis.type != "log"


def test_a_long_strip_wraps_into_rows_of_tokens() -> None:
    tokens = tuple(TokenScore(f"w{i}", float(i), int(i >= 20)) for i in range(30))
    fig = plots.token_strip(Attribution("m", "occlusion", "similarity", "cos", None, None, 0.5, None, None, tokens))
    heat = fig.data[0]
    assert list(heat.y) == ["A 0-11", "A 12-19", "B 0-9"] and fig.layout.yaxis.type == "category"
    assert [len([v for v in row if v is not None]) for row in heat.z] == [12, 8, 10]
    assert heat.customdata[2][0] == "w20" and heat.textfont.size >= 11
