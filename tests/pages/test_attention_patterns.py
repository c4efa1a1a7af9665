"""AppTest of the sparse-patterns page: defaults, widgets, shared URLs and hostile text input."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from explorer.architecture import patterns as P
from explorer.architecture.patterns import kinds

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "attention_patterns.py")


def _run(**query: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def _table(at: AppTest):
    return at.dataframe[0].value


def _figures(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def _heatmap_z(fig: dict) -> np.ndarray:
    z = fig["data"][0]["z"]  # plotly 7: typed arrays travel as {"dtype", "bdata", "shape"}
    flat = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
    shape = [int(s) for s in str(z["shape"]).split(",")] if isinstance(z.get("shape"), str) else z["shape"]
    return flat.reshape(shape)


def test_default_view() -> None:
    at = _run()
    table = _table(at)
    assert {"bert-base", "gpt2", "longformer", "bigbird", "gpt-neo", "t5-base"} <= set(table["key"])
    t5 = table[table["key"] == "t5-base"]
    assert list(t5["part"]) == ["encoder", "decoder", "cross"] and list(t5["kind"]) == ["full", "causal", "cross"]
    row = table[table["key"] == "gpt2"].iloc[0]
    assert row["non-zeros"] == 1024 * 1025 // 2  # the default length is 1,024 tokens
    assert any("BERT" in w.value and "512" in w.value for w in at.warning)  # 1,024 > BERT's 512 positions
    assert (table["non-zeros counted on the mask"] == table["non-zeros"]).all()  # formula == mask
    figs = _figures(at)
    assert len(figs) == len(table) + 1  # one heatmap per row and the cost chart
    assert figs[-1]["layout"]["xaxis"]["type"] == "log" and figs[-1]["layout"]["yaxis"]["type"] == "log"
    assert len(at.get("download_button")) == 1


def test_heatmap_shows_the_real_mask() -> None:
    at = _run(variants="gpt2", len="200")
    z = _heatmap_z(_figures(at)[0])
    assert (z.astype(bool) == P.build_mask(kinds.causal(200))).all()  # 200 < 256 cells: exact


def test_long_input_is_max_pooled_and_says_so() -> None:
    at = _run(variants="longformer,bigbird", len="16384")
    figs = _figures(at)
    assert all("max-pooled" in f["layout"]["title"]["text"] for f in figs[:2])
    assert _heatmap_z(figs[0]).shape == (256, 256)
    table = _table(at).set_index("key")
    assert table.loc["bigbird", "non-zeros"] == P.nnz_closed_form(kinds.block_sparse(16_384, 64, 3))
    assert (table["non-zeros counted on the mask"] == table["non-zeros"]).all()
    assert any("eval mode" in c.value for c in at.caption)  # BigBird's inference caveat is stated


def test_bigbird_fallback_follows_the_length_widget() -> None:
    at = _run(variants="bigbird", len="705")
    assert _table(at).iloc[0]["kind"] == "block-sparse"
    at.number_input(key="patterns_len").set_value(704).run()
    assert not at.exception
    assert _table(at).iloc[0]["kind"] == "full" and at.query_params["len"] == "704"


def test_layer_widget_switches_gpt_neo_to_local() -> None:
    at = _run(variants="gpt-neo,bert-base", len="512")
    at.number_input(key="patterns_layer").set_value(1).run()
    table = _table(at).set_index("key")
    assert table.loc["gpt-neo", "kind"] == "local-causal" and table.loc["bert-base", "kind"] == "full"


def test_global_positions_from_the_text_box() -> None:
    at = _run(variants="longformer", len="1024")
    at.text_input(key="patterns_globals").set_value("5, 17").run()
    assert not at.exception and not at.error
    assert "[0, 5, 17]" in _table(at).iloc[0]["parameters"]
    assert at.query_params["globals"] == "5,17"


HOSTILE = ["x" * 50_000, "🙂🙂", "שלום עולם", "<script>alert('x')</script>", "<b>5</b>", "99999"]


def test_hostile_text_gets_a_message_not_a_traceback() -> None:
    at = _run(variants="longformer", len="512")
    for text in HOSTILE:  # one app, several inputs: each rerun must show a clear error box
        at.text_input(key="patterns_globals").set_value(text).run()
        assert not at.exception, text[:30]
        assert at.error, f"expected a clear error box for {text[:30]!r}"
        assert "Traceback" not in at.error[0].value and "0 to 511" in at.error[0].value  # the allowed range
        assert len(_table(at)) == 1  # the page still shows the pattern (with [CLS] only)


def test_blank_text_means_cls_only() -> None:
    at = _run(variants="longformer", len="512")
    at.text_input(key="patterns_globals").set_value("   ").run()
    assert not at.exception and not at.error
    assert any("Only [CLS]" in c.value for c in at.caption)


def test_metric_and_layer_toggle_change_the_chart() -> None:
    at = _run(variants="gpt-neo", len="512")
    mean_curve = _figures(at)[-1]
    at.radio(key="patterns_metric").set_value("flops").run()
    assert "FLOPs" in _figures(at)[-1]["layout"]["title"]["text"]
    at.radio(key="patterns_metric").set_value("score_memory_bytes")
    at.number_input(key="patterns_layer").set_value(1)
    at.toggle(key="patterns_one_layer").set_value(True).run()
    assert _figures(at)[-1]["data"][0]["y"] != mean_curve["data"][0]["y"]


def test_empty_selection_and_bad_url_values() -> None:
    at = _run(variants="nope", len="abc", layer="-4")
    assert not at.exception  # unknown values fall back to the defaults
    at.multiselect(key="patterns_variants").set_value([]).run()
    assert not at.exception and any("Pick at least one" in i.value for i in at.info)


def test_a_link_with_too_many_global_positions_says_what_the_box_kept() -> None:
    at = _run(globals="5," * 600)  # 1,200 characters: past the box's 1,000
    assert any("1,200 characters" in w.value and "first 1,000" in w.value for w in at.warning)
    assert len(at.text_input(key="patterns_globals").value) == 1000
    assert not any("characters long" in w.value for w in _run(globals="5,17").warning)  # a normal link: no notice


@pytest.mark.parametrize("value", ["<script>alert(1)</script>", "abc", "99999", "5,,x"])
def test_a_garbage_link_value_is_dropped_with_a_notice_like_every_page(value: str) -> None:
    at = _run(variants="longformer", len="512", globals=value)
    assert not at.exception and not at.error  # a link is not the user's typing: no red box
    assert any("left out" in w.value for w in at.warning)
    assert len(_table(at)) == 1 and at.query_params["globals"] == ""
