"""explorer.plots.mechanisms: figures carry the computed numbers, escaped labels and the mapping lines."""

from __future__ import annotations

import functools

import numpy as np

from explorer.papers.mechanisms import deberta, distillation, text2text
from explorer.plots import mechanisms as plots

TEXT = "The <b>cat</b> sat on the mat."


@functools.cache
def _split() -> deberta.DisentangledSplit:
    return deberta.split_attention("deberta-v3-base", TEXT)


def test_deberta_terms_are_four_heatmaps_on_one_scale() -> None:
    s = _split()
    fig = plots.deberta_terms(s, head=1)
    assert [a.text for a in fig.layout.annotations] == ["content→content", "content→position",
                                                        "position→content", "sum"]
    np.testing.assert_allclose(np.asarray(fig.data[3].z), s.total[1], atol=1e-6)
    np.testing.assert_allclose(np.asarray(fig.data[0].z), s.c2c[1], atol=1e-6)
    assert len({(t.zmin, t.zmax) for t in fig.data}) == 1 and fig.data[0].zmin == -fig.data[0].zmax
    assert any("&lt;" in label for label in fig.data[0].x) and not any("<" in x for x in fig.data[0].x)
    assert "untrained" in fig.layout.title.text


def test_bucket_chart_draws_the_table() -> None:
    d, b = deberta.bucket_table(256, 512, 1024)
    fig = plots.bucket_chart(d, b, 128)
    np.testing.assert_array_equal(np.asarray(fig.data[0].y), b)
    assert fig.layout.shapes[0].x0 == -128 and fig.layout.shapes[0].x1 == 128


def test_layer_mapping_lines_go_from_g_of_m_to_m() -> None:
    mapping = distillation.layer_map(12, 4)
    fig = plots.layer_mapping(mapping, 12)
    lines = [t for t in fig.data if t.mode == "lines"]
    assert len(lines) == 5
    for m, line in enumerate(lines):
        assert tuple(line.y) == (mapping[m] / 12, m / 4)  # teacher side at g(m), student side at m
    assert "layer 2 ← layer 6" in fig.data[-1].text and "g(m) = m·12/4" in fig.layout.title.text


def test_loss_figures_carry_the_numbers() -> None:
    r = distillation.triple_loss("Paris is the capital of France.", temperature=2.0)
    fig = plots.triple_loss_bars(r)
    assert list(fig.data[0].y) == [r.ce, r.mlm, r.cos] and list(fig.data[1].y) == list(r.weighted.values())
    temps = (1.0, 2.0, 4.0)
    losses, kl, ent = r.curve(temps)
    fig = plots.temperature_chart(temps, losses, kl, ent, 30522)
    np.testing.assert_allclose(np.asarray(fig.data[0].y), losses)
    np.testing.assert_allclose(np.asarray(fig.data[1].y), kl)
    assert fig.data[3].yaxis == "y2" and fig.data[3].y[0] == np.log(30522)  # uniform line on the entropy axis
    lw = distillation.layerwise_loss("Paris is the capital of France.")
    fig = plots.layerwise_bars(lw)
    assert list(fig.data[0].y) == list(lw.attention) and list(fig.data[0].x) == ["S1 ← T3", "S2 ← T6",
                                                                                 "S3 ← T9", "S4 ← T12"]


def test_layout_strip_one_row_per_sequence_escaped() -> None:
    f = text2text.m2m_frame("en", "fr", "<i>Hi</i>", "Salut")
    fig = plots.layout_strip({"encoder": f.encoder, "decoder": f.decoder, "labels": f.labels}, "M2M <x>")
    z = np.asarray(fig.data[0].z)
    assert z.shape[0] == 3 and z[0, 0] == list(plots.ROLE_COLOURS).index("language")
    assert [t.name for t in fig.data[1:]] == ["language", "text", "special"]  # legend: the roles present
    assert fig.data[0].text[0][0] == "__en__" and "&lt;x&gt;" in fig.layout.title.text
    assert not any("<i>" in t for row in fig.data[0].text for t in row)
    assert "id 128022" in fig.data[0].customdata[0][0] and "id ?" in fig.data[0].customdata[0][1]
