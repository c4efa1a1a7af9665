"""Spans & QA page (AppTest): missing weights, tiny local T5/BART/QA models, hostile and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from explorer.runtime.loading import best_device
from tests.tiny_models import save_tiny

DEVICE = best_device()  # what the captions name: "cuda" on a GPU machine
ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "spans.py")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("spans-page")
    return {kind: str(save_tiny(kind, root / kind)) for kind in ("t5", "bart", "distilbert-qa")}


@pytest.fixture(scope="module", autouse=True)
def no_weights(tmp_path_factory):
    """Real checkpoints may sit in a developer's HF cache: point every lookup at empty directories.

    One directory for the whole module, so the default page's decoder answers (the bundled Gemma, or its
    tiny stand-in, found whatever the models directory) are computed once and cached.
    """
    empty = tmp_path_factory.mktemp("no-weights")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_CACHE", str(empty / "hf"))
        mp.setenv("EXPLORER_MODELS_DIR", str(empty / "models"))
        yield


def _app() -> AppTest:
    return AppTest.from_file(PAGE, default_timeout=180)


def _clean(at: AppTest) -> None:
    assert not at.exception, at.exception[0].message if at.exception else ""


def _errors(at: AppTest) -> list[str]:
    """Error boxes as the user reads them (the page escapes markdown in messages)."""
    return [e.value.replace("\\", "") for e in at.error]


def _with_models(tiny, models: list[str], directory: str) -> AppTest:
    at = _app().run()
    at.multiselect(key="spans_models").set_value(models)
    at.text_input(key="spans_dir").set_value(directory)
    return at.run()


def test_out_of_the_box_the_bundled_decoder_fills_spans_and_answers(bundled_decoder) -> None:
    """A fresh clone (after `make run`'s prepare): real answers on both tabs, no warning, no error."""
    at = _app().run()
    _clean(at)
    assert not at.error and not at.warning
    assert at.multiselect(key="spans_models").value == ["gemma3-270m"]
    filled = [m.value for m in at.markdown if "-background[" in m.value and "Thank you" in m.value]
    assert filled and filled[0].startswith("Thank you :orange-background[")
    assert any(f"decoder (causal LM) · {DEVICE} ·" in c.value for c in at.caption)
    assert any(i.value.replace("\\", "").startswith("Blank 1, by the likelihood of the whole text:") for i in at.info)
    answer = [m.value for m in at.markdown if m.value.startswith("**Answer (generative):**")]
    assert answer and "1889" in answer[0]
    assert any("found at characters" in c.value for c in at.caption)
    assert any(":orange-background[**1889**" in m.value for m in at.markdown)  # located in the context


def test_missing_weights_say_what_and_how() -> None:
    at = _app().run()
    at.multiselect(key="spans_models").set_value(["t5-small", "bart-base"])
    at.selectbox(key="qa_model").set_value("distilbert/distilbert-base-cased-distilled-squad").run()
    _clean(at)
    assert not at.error  # weights not downloaded yet is a normal state, not a failure
    warnings = [w.value.replace("\\", "") for w in at.warning]
    assert any("t5-small" in w and "python -m explorer download t5-small" in w for w in warnings)
    assert any("bart-base" in w and "EXPLORER_MODELS_DIR" in w for w in warnings)
    assert any("distilbert-base-cased-distilled-squad" in w for w in warnings)
    assert any("Untrained weights" in c.value for c in at.caption)


def test_a_path_that_does_not_exist_is_an_error(tmp_path) -> None:
    at = _app().run()
    at.text_input(key="spans_dir").set_value(str(tmp_path / "nowhere")).run()
    _clean(at)
    assert any("does not exist" in e for e in _errors(at))


def test_catalog_key_found_in_the_models_directory_typed_on_the_models_page(tiny, tmp_path) -> None:
    import shutil

    shutil.copytree(tiny["t5"], tmp_path / "typed" / "t5-small")  # DIR/KEY layout
    at = _app()
    at.session_state["models_dir"] = str(tmp_path / "typed")  # what the Models page stores
    at.run()
    _clean(at)
    assert at.multiselect(key="spans_models").value == ["gemma3-270m", "t5-small"]  # ready ones by default
    assert any(f"T5 · {DEVICE} ·" in c.value for c in at.caption) and not at.error
    at.multiselect(key="spans_models").set_value(["t5-small", "bart-base"]).run()
    assert any("bart-base" in w.value for w in at.warning)  # still missing: still a warning


def test_local_t5_directory_fills_the_prompt(tiny) -> None:
    at = _with_models(tiny, [], tiny["t5"])
    _clean(at)
    assert any(f"T5 · {DEVICE} ·" in c.value for c in at.caption)
    filled = [m.value for m in at.markdown if "-background[" in m.value]
    assert filled and filled[0].startswith("Thank you :orange-background[")
    codes = [c.value for c in at.code]
    assert "Thank you <extra_id_0> me to your party <extra_id_1> week." in codes
    # Why explains one blank at a time: the link says it opens the first (explorer.core.userinput.first_blank_only)
    assert any(c.value == "Explain this prediction (its first blank)" for c in at.caption)


def test_bart_directory_and_hostile_prompt_stay_text(tiny) -> None:
    at = _with_models(tiny, [], tiny["bart"])
    at.text_area(key="spans_prompt").set_value("<script>alert(1)</script> ___ **x** $y$ 🙂 مرحبا").run()
    _clean(at)
    assert any(f"BART · {DEVICE} ·" in c.value for c in at.caption)
    codes = [c.value for c in at.code]
    assert "<script>alert(1)</script> <mask> **x** $y$ 🙂 مرحبا" in codes
    for m in at.markdown:  # any markdown built from the prompt is escaped
        assert "<script>" not in m.value


@pytest.mark.parametrize("prompt, needle", [
    ("", "prompt is empty"), ("   ", "prompt is empty"), ("no blank at all", "No blank"),
    ("x" * 50_000, "limit is 4,000"),
], ids=["empty", "whitespace", "no-blank", "50k"])
def test_bad_prompts_get_a_message(tiny, prompt: str, needle: str) -> None:
    at = _with_models(tiny, [], tiny["t5"])
    at.text_area(key="spans_prompt").set_value(prompt).run()
    _clean(at)
    assert any(needle in e for e in _errors(at))


def test_qa_with_a_local_checkpoint_shows_answer_and_strip(tiny) -> None:
    at = _app().run()
    at.selectbox(key="qa_model").set_value("other (type below)").run()
    at.text_input(key="qa_path").set_value(tiny["distilbert-qa"]).run()
    _clean(at)
    answer = [m.value for m in at.markdown if m.value.startswith("**Answer (extractive):**")]
    assert answer and answer[0] != "**Answer (extractive):** ∅"
    figs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    assert len(figs) == 1 and [t["name"] for t in figs[0]["data"]] == ["P(start)", "P(end)"]
    assert any("no-answer score" in c.value and DEVICE in c.value for c in at.caption)


@pytest.mark.parametrize("question, context, needle", [
    ("", "Some context.", "question is empty"),
    ("Why?", "   ", "context is empty"),
    ("Why?", "x" * 50_000, "limit is 20,000"),
], ids=["no-question", "no-context", "50k"])
def test_qa_bad_input_gets_a_message(tiny, question: str, context: str, needle: str) -> None:
    at = _app().run()
    at.selectbox(key="qa_model").set_value("other (type below)").run()
    at.text_input(key="qa_path").set_value(tiny["distilbert-qa"])
    at.text_input(key="qa_question").set_value(question)
    at.text_area(key="qa_context").set_value(context).run()
    _clean(at)
    assert any(needle in e for e in _errors(at))


def test_random_mode_needs_a_catalog_key_for_a_directory(tiny) -> None:
    at = _with_models(tiny, [], tiny["t5"])
    at.toggle(key="spans_random").set_value(True).run()
    _clean(at)
    assert any("Random-weight mode needs a catalog key" in e for e in _errors(at))


def test_wrong_kind_of_checkpoint_is_a_message(tiny) -> None:
    at = _with_models(tiny, [], tiny["distilbert-qa"])  # a QA encoder where T5/BART is expected
    _clean(at)
    assert any("is an encoder: Span infilling needs a T5 or BART model, or a decoder" in e.replace("\\", "")
               for e in _errors(at))
    at = _app().run()
    at.selectbox(key="qa_model").set_value("other (type below)").run()
    at.text_input(key="qa_path").set_value(tiny["t5"]).run()  # a T5 without a trained QA head
    _clean(at)
    assert any("is an encoder-decoder without a question-answering head: Question answering needs"
               in e.replace("\\", "") for e in _errors(at))
    assert not at.get("plotly_chart")


@pytest.mark.parametrize("question, context, needle", [
    ("", "Some context.", "question is empty"),
    ("Why?", "x" * 50_000, "limit is 20,000"),
], ids=["no-question", "50k"])
def test_generative_qa_bad_input_gets_a_message(question: str, context: str, needle: str) -> None:
    at = _app().run()
    at.text_input(key="qa_question").set_value(question)
    at.text_area(key="qa_context").set_value(context).run()
    _clean(at)
    assert any(needle in e for e in _errors(at))


def test_generative_qa_keeps_html_as_text() -> None:
    at = _app().run()
    at.text_input(key="qa_question").set_value("<b>Who</b> named <script>x</script> it?")
    at.text_area(key="qa_context").set_value("<i>It</i> was named after **Gustave Eiffel**, an engineer.").run()
    _clean(at)
    assert not at.error and any(m.value.startswith("**Answer (generative):**") for m in at.markdown)
    for m in at.markdown:
        assert "<script>" not in m.value and "<i>It</i>" not in m.value  # escaped, never rendered


def test_selections_travel_in_the_link_and_bad_values_fall_back() -> None:
    from explorer.tasks import qa

    reader = qa.qa_models()[1]  # a SQuAD reader (not on disk here: the page says how to get it, no model runs)
    at = _app()
    at.query_params.update(models="t5-small,not-a-model", max_new="7", qa=reader)
    at.run()
    _clean(at)
    assert at.multiselect(key="spans_models").value == ["t5-small"]
    assert at.slider(key="spans_max_new").value == 7 and at.selectbox(key="qa_model").value == reader
    assert (at.query_params["models"], at.query_params["max_new"], at.query_params["qa"]) in (
        (["t5-small"], ["7"], [reader]), ("t5-small", "7", reader))
    at = _app()  # out of range and garbage (the decoder defaults are not asked for: they would run Gemma)
    at.query_params.update(models="t5-small", max_new="9999", qa=reader)
    at.run()
    _clean(at)
    assert at.slider(key="spans_max_new").value == 64
    at = _app()
    at.query_params.update(models="t5-small", max_new="<b>x</b>", qa=reader)
    at.run()
    _clean(at)
    assert at.slider(key="spans_max_new").value == 20
