"""AppTest of the architecture explorer, the comparator and the overview."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from explorer.architecture import catalog

ROOT = Path(__file__).resolve().parents[2]


def _page(name: str) -> AppTest:
    return AppTest.from_file(str(ROOT / "pages" / name), default_timeout=180)


def _plotly(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def test_architecture_page_shows_counts_tree_and_components() -> None:
    at = _page("architecture.py")
    at.query_params["model"] = "albert-base"
    at.run()
    assert not at.exception, at.exception
    assert at.metric[0].value == "11.8M"
    assert any("AlbertLayerGroup" in h.proto.body and "used 12x" in h.proto.body for h in at.get("html"))
    assert at.dataframe[0].value["parameters"].sum() == 11_813_810
    assert len(_plotly(at)) == 4  # components, treemap, sunburst, graph


def test_changing_heads_to_an_invalid_value_shows_a_message_not_a_traceback() -> None:
    at = _page("architecture.py")
    at.query_params["model"] = "bert-base"
    at.run()
    at.number_input(key="knob_num_attention_heads_bert-base").set_value(5).run()
    assert not at.exception
    assert "not divisible by 5 heads" in at.error[0].value


def test_zero_layers_is_a_clear_message() -> None:
    at = _page("architecture.py")
    at.query_params["model"] = "gpt2"
    at.run()
    at.number_input(key="knob_num_hidden_layers_gpt2").set_value(0).run()
    assert not at.exception and "at least 1" in at.error[0].value


def test_share_layers_toggle_shrinks_the_model() -> None:
    at = _page("architecture.py")
    at.query_params["model"] = "bert-base"
    at.run()
    before = at.metric[0].value
    at.toggle(key="share_bert-base").set_value(True).run()
    assert not at.exception and at.metric[0].value != before


def test_upload_mode_without_a_file_asks_for_one() -> None:
    at = _page("architecture.py").run()
    at.radio(key="arch_source").set_value("Upload config.json").run()
    assert not at.exception and "Upload a config.json" in at.info[0].value


def test_compare_page_table_and_charts() -> None:
    at = _page("compare.py")
    at.query_params["models"] = "bert-base,longformer,gpt2"
    at.run()
    assert not at.exception, at.exception
    names = [catalog.get_variant(k).name for k in ("bert-base", "longformer", "gpt2")]
    assert list(at.dataframe[0].value["name"]) == names
    assert len(_plotly(at)) == 4
    assert at.dataframe[0].value["decoder_layers"].isna().any()  # BERT has no decoder: a missing cell...
    assert at.dataframe[0].proto.placeholder == "—"  # ...drawn as a dash, as on Published results (not "None")


def test_compare_page_ignores_unknown_keys_in_the_url() -> None:
    at = _page("compare.py")
    at.query_params["models"] = "nope,<script>,bert-base"
    at.run()
    assert not at.exception and list(at.dataframe[0].value["name"]) == [catalog.get_variant("bert-base").name]


def test_compare_page_clips_thirteen_keys_in_the_url_to_twelve() -> None:
    from explorer.architecture.compare import MAX_COMPARE

    at = _page("compare.py")
    at.query_params["models"] = ",".join(catalog.keys()[:13])
    at.run()
    assert not at.exception, at.exception
    assert len(at.dataframe[0].value) == MAX_COMPARE == 12
    assert at.multiselect(key="cmp_models").value == list(catalog.keys()[:12])


def test_compare_page_one_key_thirteen_times_is_one_model() -> None:
    at = _page("compare.py")
    at.query_params["models"] = ",".join(["gpt2"] * 13)
    at.run()
    assert not at.exception, at.exception
    assert list(at.dataframe[0].value["name"]) == [catalog.get_variant("gpt2").name]


def test_home_lists_every_variant() -> None:
    at = _page("home.py").run()
    assert not at.exception, at.exception
    assert len(at.dataframe[0].value) == len(catalog.keys())


def _upload_script(data: bytes) -> None:
    import sys

    sys.path.insert(0, ".")
    from app import ui
    from app.caches import architecture as cache

    with ui.guard():
        cache.analyse_upload(data, "config.json", 128)


def test_hostile_uploads_are_one_red_message() -> None:
    cases = {b'{"model_type": "t5", "num_decoder_layers": 1000000}': "num_decoder_layers",
             b'{"model_type": "bert", "hidden_size": 1000000000001, "num_attention_heads": 2}': "hidden_size",
             b'{"model_type": "albert", "num_hidden_groups": 0}': "num_hidden_groups",
             b"[" * 10000: "nest", b"\xff\xfe": "UTF-8"}
    for data, needle in cases.items():
        at = AppTest.from_function(_upload_script, args=(data,), default_timeout=60)
        at.run()
        assert not at.exception, (data[:40], at.exception)
        shown = at.error[0].value.replace("\\", "").lower()  # the message is markdown-escaped
        assert len(at.error) == 1 and needle.lower() in shown, (data[:40], at.error)


def test_compare_page_shows_the_pretraining_budget() -> None:
    import math

    at = _page("compare.py")
    at.query_params["models"] = "bert-base,mobilebert"  # MobileBERT: no budget recorded
    at.run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert table["train_flops"].iloc[0] > 1e19 and math.isnan(table["train_flops"].iloc[1])
    assert list(table["train_flops_source"])[1] == "not recorded"
