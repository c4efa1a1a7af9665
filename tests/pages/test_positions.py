"""Positions and the KV cache (AppTest): the bundled Gemma and MiniLM (tiny stand-ins here) side by side, the
calculator for several variants with the URL kept, and the live cached-against-uncached run."""

from __future__ import annotations

from tests.pages.conftest import assert_clean, figures, page_app


def _page(**query: str):
    return page_app("positions.py", **query).run()


def _titles(at) -> list[str]:
    return [f["layout"]["title"]["text"] for f in figures(at)]


def test_both_bundled_models_side_by_side_and_the_calculator() -> None:
    at = _page()
    assert_clean(at)
    assert at.query_params["models"] == "gemma3-270m,sentence-bert"
    titles = _titles(at)
    assert any(t.startswith("Positions of gemma3-270m") for t in titles)
    assert any(t.startswith("Position table of sentence-bert") for t in titles)  # MiniLM's learned table
    assert any(t.startswith("Rotary frequencies") for t in titles) and any("Key/value cache" in t for t in titles)
    curves = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("Key/value cache"))
    assert {d["name"] for d in curves["data"]} >= {"gemma3-270m cache", "gpt2 cache", "gpt2 weights"}
    assert any("checked" in c.value.lower() for c in at.caption)  # the rotary module against the formula


def test_the_url_sets_the_calculator_and_a_change_goes_back_into_it() -> None:
    at = _page(models="t5-small", cache="gpt2,gemma3-270m", dtype="float32", context="600")
    assert_clean(at)
    assert at.selectbox(key="pos_dtype").value == "float32" and at.number_input(key="pos_context").value == 600
    assert any("bucket" in t for t in _titles(at))
    at.number_input(key="pos_context").set_value(2048).run()
    assert_clean(at)
    assert at.query_params["context"] == "2048"


def test_the_live_run_gives_the_same_tokens_with_and_without_the_cache() -> None:
    at = _page(models="gpt2", new="6")
    at.button(key="pos_live_go").click().run()
    assert_clean(at)
    cached, uncached = at.text_area(key="pos_live_cached").value, at.text_area(key="pos_live_uncached").value
    assert cached == uncached
    assert any("measured" in m.value for m in at.markdown)
    assert at.dataframe and len(at.dataframe[0].value) == 3  # the stand-in's three layers
