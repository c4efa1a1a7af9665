"""Compression lab page (AppTest): nothing runs before Run; MiniLM + int8 + prune-50 gives the chart, the table
and the answers; a bad method is a red box with the valid list; the selection is in the URL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "compression.py")


def _app() -> AppTest:
    return AppTest.from_file(PAGE, default_timeout=300)


def _clean(at: AppTest) -> None:
    assert not at.exception, at.exception[0].message if at.exception else ""


def test_nothing_runs_before_the_button() -> None:
    at = _app().run()
    _clean(at)
    assert not at.get("plotly_chart") and not at.error
    assert any("press Run" in i.value for i in at.info)
    assert at.query_params["model"] == ["sentence-bert"] or at.query_params["model"] == "sentence-bert"


@pytest.fixture(scope="module")
def ran() -> AppTest:
    at = _app()
    at.query_params["methods"] = "int8,prune-50"
    at.run()
    at.button(key="cmp_run").click().run()
    return at


def test_minilm_int8_and_prune_draw_chart_table_and_answers(ran) -> None:
    _clean(ran)
    assert not ran.error
    figs = [json.loads(el.proto.spec) for el in ran.get("plotly_chart")]
    assert len(figs) == 1
    names = {t.get("name") for t in figs[0]["data"]}
    assert "Pareto frontier" in names
    table, answers = ran.dataframe[0].value, ran.dataframe[1].value
    assert list(table["method"]) == ["int8", "prune-50"]
    assert table.loc[0, "× size"] < 1.0  # int8 is smaller
    assert abs(table.loc[1, "sparsity"] - 0.5) < 0.01
    assert list(answers["model"]) == ["original", "int8", "prune-50"]
    assert any("dense" in w.value for w in ran.info)  # prune's zeros do not shrink a dense file: said


def test_a_rerun_redraws_from_the_cache(ran) -> None:
    ran.run()
    _clean(ran)
    assert len(ran.get("plotly_chart")) == 1


def test_bad_method_is_a_red_box_listing_the_valid_ones() -> None:
    at = _app()
    at.run()
    at.multiselect(key="cmp_methods").set_value(["prune-150"])
    at.run()
    at.button(key="cmp_run").click().run()
    _clean(at)
    assert at.error and "0 to 99" in at.error[0].value
    at.multiselect(key="cmp_methods").set_value(["zip"])
    at.run()
    at.button(key="cmp_run").click().run()
    text = at.error[0].value.replace("\\", "")
    assert "Unknown compression method" in text and "prune-N" in text


def test_a_lab_model_with_exits_offers_early_exit_and_draws_its_tradeoff(monkeypatch, lab_exits) -> None:
    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(lab_exits))
    at = _app()
    at.query_params["model"] = "lab/mlm-tiny-20steps-seed0"
    at.run()
    _clean(at)
    assert at.selectbox(key="cmp_model").value == "lab/mlm-tiny-20steps-seed0"
    assert at.multiselect(key="cmp_methods_exit").value == ["exit-0.5", "exit-0.8", "exit-0.95", "exit-1"]
    at.text_area(key="cmp_prompt_lab/mlm-tiny-20steps-seed0").set_value("<script>alert(1)</script> **bold**").run()
    at.button(key="cmp_run").click().run()
    _clean(at)
    assert not at.error and len(at.get("plotly_chart")) == 1
    table, answers = at.dataframe[0].value, at.dataframe[1].value
    assert list(table["method"]) == ["exit-0.5", "exit-0.8", "exit-0.95", "exit-1"]
    assert list(table["mean_layers"]) == sorted(table["mean_layers"], reverse=True)
    assert all("layer" in a for a in answers["answer"])
    assert any("<script>alert(1)</script>" in c.value.replace("\\", "") for c in at.caption)


def test_without_a_lab_model_with_exits_the_page_says_how_to_get_one(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(tmp_path))
    at = _app().run()
    _clean(at)
    assert any("Also train FastBERT exits" in c.value for c in at.caption)


def test_a_lab_model_also_takes_compressed_copies_with_michel_heads(monkeypatch, lab_exits) -> None:
    """A lab model with exits can be measured the other way too: the radio switches to compressed copies, which
    offer mheads-N (ranked by its masked-LM loss); MiniLM, without such a loss, is not offered mheads-N."""
    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(lab_exits))
    at = _app().run()
    assert "mheads-25" not in at.multiselect(key="cmp_methods").options  # MiniLM has no masked-LM head
    at = _app()
    at.query_params.update({"model": "lab/mlm-tiny-20steps-seed0", "mode": "Compressed copies",
                            "methods": "heads-50,mheads-50"})
    at.run()
    _clean(at)
    assert at.radio(key="cmp_mode").value == "Compressed copies"
    assert at.multiselect(key="cmp_methods").value == ["heads-50", "mheads-50"]
    at.button(key="cmp_run").click().run()
    _clean(at)
    assert not at.error
    table = at.dataframe[0].value
    assert list(table["method"]) == ["heads-50", "mheads-50"] and table["cosine agreement"].between(-1, 1).all()
    assert at.query_params["mode"] in (["Compressed copies"], "Compressed copies")
    at.radio(key="cmp_mode").set_value("FastBERT early exit").run()
    _clean(at)
    assert at.multiselect(key="cmp_methods_exit").value == ["exit-0.5", "exit-0.8", "exit-0.95", "exit-1"]


def test_typed_methods_travel_in_the_link_and_garbage_does_not() -> None:
    """A typed prune-70 goes into the URL (in its own spelling) and a link with it preselects it; a link's
    invalid or HTML values are dropped, never an error."""
    at = _app().run()
    at.multiselect(key="cmp_methods").set_value(["int8", "PRUNE-70"]).run()
    _clean(at)
    assert at.multiselect(key="cmp_methods").value == ["int8", "PRUNE-70"]  # kept across the rerun
    assert at.query_params["methods"] in (["int8,prune-70"], "int8,prune-70")
    shared = _app()
    shared.query_params["methods"] = "prune-70,<b>x</b>,prune-150,exit-0.3,int8,prune-70"
    shared.run()
    _clean(shared)
    assert shared.multiselect(key="cmp_methods").value == ["prune-70", "int8"]  # exit-S only for exit models
    assert not shared.error
