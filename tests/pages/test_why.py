"""Why this prediction (AppTest): a tiny decoder beside the real MiniLM (lens grid, strips, CSVs, state in the URL),
a model without a head said in words, bad input once, a tuned lens trained in the background, a served column."""

from __future__ import annotations

import time

import pytest

from tests.pages.conftest import assert_clean, figures, page_app, shown
from tests.tiny_gemma import save_tiny_gemma


@pytest.fixture(scope="module")
def gemma(tmp_path_factory) -> str:
    return str(save_tiny_gemma(tmp_path_factory.mktemp("why-page") / "gemma"))


def _titles(at) -> list[str]:
    return [f["layout"].get("title", {}).get("text", "") for f in figures(at)]


def _page(gemma: str, **query: str):
    base = {"models": "sentence-bert", "dir": gemma, "methods": "grad-input,occlusion", "served": "none"}
    return page_app("why.py", **{**base, **query}).run()


def test_a_decoder_and_minilm_side_by_side(gemma) -> None:
    at = _page(gemma)
    assert_clean(at)
    titles = _titles(at)
    assert any(t.startswith("Logit lens of") for t in titles)
    assert sum("gradient x input" in t for t in titles) == 2 and sum("occlusion" in t for t in titles) == 2
    assert any("no language-model head" in text for text in shown(at.info))  # MiniLM: said, not an error
    assert any("cosine similarity" in c.value for c in at.caption)
    assert len(at.get("download_button")) >= 5  # the lens table, depth, and every strip
    assert all(b.proto.ignore_rerun for b in at.get("download_button"))  # a download leaves the page as it is
    assert at.query_params["methods"] == "grad-input,occlusion" and at.query_params["dir"] == gemma


def test_the_url_carries_the_question(gemma) -> None:
    at = _page(gemma, text="Paris is the capital of", target="France", foil="Italy", position="2")
    assert_clean(at)
    assert at.text_area(key="why_text").value == "Paris is the capital of"
    assert any("(position 2)" in c.value for c in at.caption)  # the lens reads where the URL says
    assert any("minus the same for ' Italy'" in c.value.replace("\\", "") for c in at.caption)


@pytest.mark.parametrize(("text", "said", "foil"), [("   ", "empty", ""), ("x" * 1001, "characters", ""),
                                                     ("___", "leaves no token to attribute", ""),
                                                     ("The capital of France is", "foil is the target", "Paris")],
                         ids=["blank", "long", "only-a-blank", "foil-is-target"])
def test_bad_text_is_one_message_before_any_model(gemma, text, said, foil) -> None:
    at = _page(gemma, text=text, target="Paris", foil=foil)
    assert_clean(at, errors_expected=True)
    assert len(at.error) == 1 and said in shown(at.error)[0] and not figures(at)


def test_a_tuned_lens_trains_in_the_background_and_then_shows(gemma, monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_LAB_QUICK", "1")
    at = _page(gemma, methods="grad")
    train = [b for b in at.button if b.label == "Train a tuned lens"]
    assert train, "the decoder's cell offers a training"
    train[0].click().run()
    from explorer.explain import background, translator

    deadline = time.monotonic() + 240
    while translator.find(gemma, gemma) is None and time.monotonic() < deadline:
        time.sleep(0.5)
    assert translator.find(gemma, gemma) is not None, [j.note for j in background._JOBS.values()]
    at.run()
    assert_clean(at)
    titles = _titles(at)
    assert any(t.startswith("Tuned lens of") for t in titles) and any("Held-out KL" in t for t in titles)


@pytest.mark.slow
def test_a_served_decoder_occludes_and_says_its_insides_are_not_available(gemma, cut_engine, monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_ENDPOINT_URL", cut_engine.endpoint.base_url)  # Gemma with a cut vocabulary: quick
    monkeypatch.setenv("EXPLORER_ENDPOINT_NAME", "engine")
    monkeypatch.setenv("EXPLORER_ENDPOINT_MODEL", cut_engine.endpoint.model)
    at = page_app("why.py", models="sentence-bert", methods="grad-input,occlusion", served="engine",
                  text="The capital of France is", target="Paris").run()
    assert_clean(at)
    assert any("insides" in text for text in shown(at.info))
    assert any("occlusion" in t for t in _titles(at))
