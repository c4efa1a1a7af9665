"""Real browser, real engines: the app started as an operator would with served models configured
(EXPLORER_ENDPOINTS_FILE naming llama-cpp-python on 127.0.0.1 serving the bundled Gemma, and its embeddings
server) shows the served model beside the local ones, each saying where it ran."""

from __future__ import annotations

import pytest

from explorer.cli.endpoints import toml_of
from explorer.serving.endpoints import Endpoint
from tests.browser.conftest import assert_clean, new_context, streamlit_server, wait_idle

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def served_app(served_engine, served_embedder, tmp_path_factory, bundled_decoder):
    file = tmp_path_factory.mktemp("served") / "endpoints.toml"
    down = Endpoint("down", "http://127.0.0.1:9/v1", "gemma3-270m", label="A stopped server")  # nothing listens
    file.write_text(toml_of([served_engine.endpoint, served_embedder.endpoint, down]))
    with streamlit_server(EXPLORER_ENDPOINTS_FILE=str(file)) as url:
        yield url


@pytest.fixture
def visit(browser, served_app):
    context = new_context(browser)

    def go(path: str):
        page = context.new_page()
        page.goto(f"{served_app}/{path}")
        wait_idle(page, timeout=300_000)
        return page

    yield go
    context.close()


def test_decoding_shows_the_served_model_beside_the_local_one(visit) -> None:
    page = visit("decoding?strategies=greedy&n=2&served=gemma")
    page.get_by_text("(served)").first.wait_for(timeout=300_000)
    page.get_by_text("llama-cpp-python 0.3.36").first.wait_for(timeout=300_000)
    page.get_by_text("one request per step").first.wait_for(timeout=300_000)
    texts = page.locator("[data-testid='stText']").all_inner_texts()
    assert sum(t.strip().startswith("greedy: The capital of France is") for t in texts) == 2  # local and served
    assert_clean(page, "served-decoding")


def test_similarity_shows_the_served_embeddings_beside_the_local_encoder(visit) -> None:
    page = visit("similarity")  # no ?served=: the endpoints that can embed are picked by default
    page.get_by_text("(served)").first.wait_for(timeout=300_000)  # a served panel, named as the backend shows it
    page.get_by_text("llama-cpp-python 0.3.36 · Gemma 3 270M (embeddings").first.wait_for(timeout=300_000)
    # the generation server answers but cannot embed: not picked here, so no warning about it (the server that is
    # down is picked, so that the page says why it is missing)
    left_out = page.locator("[data-testid='stAlertContentWarning']").filter(has_text="is left out").all_inner_texts()
    assert len(left_out) == 1 and "A stopped server" in left_out[0]
    assert_clean(page, "served-similarity")


def test_a_server_that_is_down_is_one_warning_and_the_rest_answers(visit) -> None:
    page = visit("decoding?strategies=greedy&n=1&served=gemma,down")
    page.get_by_text("llama-cpp-python 0.3.36").first.wait_for(timeout=300_000)
    # the served column's label can come before the other column's text on a busy machine: wait for both texts
    page.wait_for_function("() => [...document.querySelectorAll(\"[data-testid='stText']\")]"
                           ".filter(e => e.innerText.trim().startsWith('greedy:')).length >= 2", timeout=300_000)
    warning = page.locator("[data-testid='stAlertContentWarning']").filter(has_text="A stopped server")
    assert warning.count() == 1 and "connection was refused" in warning.first.inner_text()
    texts = page.locator("[data-testid='stText']").all_inner_texts()
    assert sum(t.strip().startswith("greedy:") for t in texts) == 2  # the local model and the served one
    assert_clean(page, "served-down")


def _type(page, label: str, text: str) -> None:
    box = page.get_by_role("textbox", name=label, exact=True)
    box.fill(text)
    box.press("Control+Enter")
    wait_idle(page, timeout=300_000)


def test_fill_mask_ranks_the_served_decoders_words_beside_a_local_encoder(visit) -> None:
    page = visit("fill-mask?models=electra-small-generator&served=gemma")  # smallest catalog MLM, random weights
    _type(page, "Prompt (several: one per line)", "Paris is the capital of [MASK].")
    # its best answer, ranked by the likelihood of the whole sentence, filled in (not the default prompt's answer)
    served = page.locator("[data-testid='stColumn']").filter(has_text="llama-cpp-python 0.3.36")
    served.filter(has_text="Paris is the capital of France.").first.wait_for(timeout=300_000)
    wait_idle(page, timeout=300_000)
    page.get_by_text("Untrained weights: predictions are noise").first.wait_for(timeout=60_000)  # the local one
    assert_clean(page, "served-fill-mask")


def test_spans_and_qa_show_the_served_decoder_beside_the_local_one(visit) -> None:
    page = visit("spans?served=gemma&max_new=8")
    _type(page, "Prompt", "Thank you ___ me.")
    columns = page.locator("[data-testid='stColumn']").filter(has_text="decoder (causal LM)")
    served = columns.filter(has_text="llama-cpp-python 0.3.36").filter(has_not_text="party")  # the typed prompt's
    served.first.wait_for(timeout=300_000)
    assert "Gemma 3 270M (llama-cpp-python) (served)" in served.first.inner_text()
    columns.filter(has_not_text="llama-cpp-python").filter(has_not_text="party").first.wait_for(timeout=300_000)
    page.get_by_role("tab", name="Question answering").click()
    answers = page.locator("[data-testid='stMarkdownContainer']").filter(has_text="Answer (generative)")
    answers.nth(1).wait_for(timeout=300_000)  # the local decoder's answer, then the served one's below it
    page.get_by_text("Gemma 3 270M (llama-cpp-python) (served)").last.wait_for()
    assert any(year in answers.last.inner_text() for year in ("1887", "1889"))
    assert_clean(page, "served-spans")


@pytest.fixture(scope="module")
def hostile_app(tmp_path_factory):
    """The app with misbehaving engines configured (the suite's own hostile engine on 127.0.0.1): token ids that are
    not integers, a probe answered with garbage, a traceback for every request."""
    from tests.hostile_engine import HostileEngine

    engines = [HostileEngine("ids-infinity", name="wrong-ids", model="m1"),
               HostileEngine("logprobs-number", name="garbled", model="m2", spare_probe=False),
               HostileEngine("traceback", name="traceback", model="m3", spare_probe=False)]
    file = tmp_path_factory.mktemp("hostile") / "endpoints.toml"
    file.write_text("".join(f'[[endpoint]]\nname = "{e.endpoint.name}"\nbase_url = "{e.base_url}"\n'
                            f'model = "{e.endpoint.model}"\nlabel = "Bad {e.endpoint.name}"\n' for e in engines))
    try:
        with streamlit_server(EXPLORER_ENDPOINTS_FILE=str(file)) as url:
            yield url
    finally:
        for engine in engines:
            engine.close()


def test_misbehaving_engines_never_take_a_page_down(browser, hostile_app) -> None:
    from tests.hostile_engine import SECRET_PATH

    context = new_context(browser)
    try:
        page = context.new_page()
        page.goto(f"{hostile_app}/tokenizers?tokenizers=gpt2&served=wrong-ids,garbled,traceback")
        left_out = page.locator("[data-testid='stAlertContentWarning']").filter(has_text="is left out")
        left_out.first.wait_for(timeout=120_000)
        page.get_by_text("tokens[0]").first.wait_for(timeout=120_000)  # the red box of the wrong ids' row
        wait_idle(page, timeout=120_000)
        assert left_out.count() == 1  # the garbled probe's tokenizer route still answers: it is shown
        bold = [b.strip() for b in left_out.locator("strong").all_inner_texts()]  # rendered, not a literal **name**
        assert bold == ["Bad traceback"] and "**" not in left_out.first.inner_text()
        for shown, name in ((page, "hostile-tokenizers"), (context.new_page(), "hostile-models")):
            if name == "hostile-models":
                shown.goto(f"{hostile_app}/models")
                shown.get_by_text("Served models (inference engines)").first.wait_for(timeout=120_000)
                wait_idle(shown, timeout=120_000)
            text = shown.locator("[data-testid='stMain']").inner_text()
            assert "Something went wrong" not in text and "Traceback" not in text and SECRET_PATH not in text
            assert_clean(shown, name, errors_expected=True)
    finally:
        context.close()


def _chips(page) -> list[str]:
    """The served models the picker selected (its multiselect's chips)."""
    box = page.locator("[data-testid='stMultiSelect']").filter(has_text="Served models").first
    # the chips' text after the label line (a page still generating draws them without their tag elements)
    return [line.strip() for line in box.inner_text().splitlines()[1:] if line.strip()]


def test_the_served_pages_defaults_answer_within_the_budget(visit) -> None:
    """As `make run-served` sets it up (the bundled Gemma served twice, once for embeddings, and a server that is
    down): each page's defaults pick one copy of the model, and its served column answers (what the budget allowed,
    anytime) instead of only saying it was stopped."""
    generation, embeddings = "Gemma 3 270M (llama-cpp-python)", "Gemma 3 270M (embeddings, llama-cpp-python)"
    for path in ("decoding", "fill-mask", "spans", "tokenizers", "similarity"):
        page = visit(path)
        # a served result says where it ran (the Tokenizers page: one more row named after the endpoint)
        page.get_by_text("served:gemma" if path == "tokenizers" else "llama-cpp-python 0.3.36").first.wait_for(
            timeout=300_000)
        wait_idle(page, timeout=300_000)
        chips = [c for c in _chips(page) if c != "A stopped server"]  # down: picked, so the page says why
        assert chips == ([embeddings] if path == "similarity" else [generation]), (path, chips)
        assert_clean(page, f"served-defaults-{path}")
