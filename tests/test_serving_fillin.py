"""A served decoder on fill-in and QA against a real engine (llama-cpp-python on 127.0.0.1, the bundled Gemma GGUF):
the same result types as the local code, the same ranking as the in-process Gemma on an easy case, one clear
message per failure, the CLI's --endpoint / --base-url, and the Fill-mask and Spans pages with the engine
configured as an operator would (environment variables).

The engine scores about 0.12 s per token on 2 cores (1-2 s per candidate of a short sentence, more when the
machine is busy), so each test fills one short blank; the pages' request budget is raised so a busy CI machine
does not turn a slow answer into a budget message. Tests of the path rather than the real model's own words take
the same Gemma with its vocabulary cut (``cut_engine``, :mod:`tests.cut_gguf`), which scores about 20 times quicker.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from explorer.cli import main
from explorer.core.errors import ExplorerError
from explorer.runtime.resolve import resolve
from explorer.serving import fillin
from explorer.serving.endpoints import Endpoint
from tests.pages.conftest import assert_clean, page_app, shown

CLOSED = Endpoint("x", "http://127.0.0.1:9/v1")  # nothing listens on port 9
EASY = "Paris is the ___ of France."
QUESTION = "When was the Eiffel Tower built?"
CONTEXT = ("The Eiffel Tower is a wrought-iron lattice tower in Paris. Gustave Eiffel's company designed and "
           "built the tower from 1887 to 1889 as the centerpiece of the 1889 World's Fair.")
# Served (Q4_K_M kernels) against in-process (dequantised float32) whole-text log-likelihoods of the same
# 8-token sentences, once the first token's term (which a server never scores) is taken off: measured within
# 0.30 nats of one constant over five candidates. Pairs further apart than twice this must keep their order.
WHOLE_TEXT_TOLERANCE = 0.6


def _configure(monkeypatch, ep: Endpoint, name: str = "gemma") -> None:
    monkeypatch.setenv("EXPLORER_ENDPOINT_URL", ep.base_url)
    monkeypatch.setenv("EXPLORER_ENDPOINT_MODEL", "gemma3-270m")
    monkeypatch.setenv("EXPLORER_ENDPOINT_NAME", name)
    monkeypatch.setenv("EXPLORER_REQUEST_SECONDS", "600")  # a busy 2-core runner: slow, not over budget


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own refusals: one line, exit 2
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


# ---------------------------------------------------------------- library

def test_served_ranking_agrees_with_the_in_process_gemma(cut_engine) -> None:
    """On Gemma with its vocabulary cut (:mod:`tests.cut_gguf`): the same weights both sides, 60 times quicker."""
    from explorer.tasks.causal.scoring import sequence_logprob
    from explorer.tasks.generation import load_decoder

    fill = fillin.causal_fill(cut_engine.endpoint, EASY, top_k=3, candidates=3)  # three requests of 8 tokens
    blank = fill.blanks[0]
    assert fill.filled == "Paris is the capital of France." and blank.best.text == " capital"
    assert len(blank.by_whole) == 3 and sum(c.share for c in blank.by_whole) == pytest.approx(1.0)
    local = load_decoder(resolve(str(cut_engine.model)), device="cpu")
    here = [sequence_logprob(local.model, local.tokenizer(f"Paris is the{c.text} of France.")["input_ids"])
            for c in blank.by_whole]
    offsets = [h - c.whole_logprob for h, c in zip(here, blank.by_whole, strict=True)]  # the first token's term
    assert max(offsets) - min(offsets) <= WHOLE_TEXT_TOLERANCE, offsets
    for i, a in enumerate(here):  # served best first: the in-process order wherever the gap is clear
        assert all(a > b for b in here[i + 1:] if abs(a - b) > 2 * WHOLE_TEXT_TOLERANCE), here


def test_generative_qa_is_the_local_prompt_answered_by_the_server(served_engine) -> None:
    res = fillin.ask(served_engine.endpoint, QUESTION, CONTEXT)
    assert res.kind == "generative" and res.device == "served" and res.match == "whole"
    assert res.answer and CONTEXT[res.start:res.end].lower() == res.answer.lower().rstrip(".")
    assert "llama-cpp-python" in res.device_name and "(gemma3-270m)" in res.device_name


@pytest.mark.parametrize("call, said", [
    (lambda ep: fillin.ask(ep, QUESTION, CONTEXT, kind="extractive"), "cannot do extractive question answering"),
    (lambda ep: fillin.ask(ep, "", CONTEXT), "question is empty"),
    (lambda ep: fillin.ask(ep, QUESTION, "a\x00b"), "NUL"),
    (lambda ep: fillin.fill_column(ep, "", 5), "prompt is empty"),
    (lambda ep: fillin.fill_column(ep, "No blank here.", 5), "no mask"),
    (lambda ep: fillin.fill_column(ep, "___ starts the text.", 5), "no words before it"),
    (lambda ep: fillin.fill_column(ep, "Paris is the ___.", 0), "top-k"),
    (lambda ep: fillin.infill_spans(ep, "x" * 5_000 + " ___"), "characters"),
    (lambda ep: fillin.infill_spans(ep, "a\x00 ___ b"), "NUL"),
])
def test_bad_input_is_refused_before_any_request(call, said: str) -> None:
    with pytest.raises(ExplorerError, match=said):  # the closed port would fail otherwise
        call(CLOSED)


def test_a_closed_port_and_a_wrong_model_are_one_clear_error_each(served_engine) -> None:
    with pytest.raises(ExplorerError, match="connection was refused"):
        fillin.fill_column(CLOSED, "The capital of France is [MASK].", 5)
    with pytest.raises(ExplorerError, match="does not serve the model 'nope'"):
        fillin.infill_spans(replace(served_engine.endpoint, model="nope"), EASY, 1)


# ---------------------------------------------------------------- CLI

def test_cli_infill_with_a_configured_endpoint(cut_engine, capsys, monkeypatch) -> None:
    _configure(monkeypatch, cut_engine.endpoint)  # Gemma with its vocabulary cut: the same answer, quicker
    code, out, _ = _run(capsys, "infill", "--endpoint", "gemma", "--text", EASY, "--max-new-tokens", "1", "--json")
    data = json.loads(out)
    assert code == 0 and data["family"] == "causal" and data["spans"] == ["capital"]
    assert data["device"] == "served" and "127.0.0.1" in data["device_name"]
    assert data["filled"] == "Paris is the capital of France."


def test_cli_qa_with_a_typed_base_url(served_engine, capsys) -> None:
    code, out, _ = _run(capsys, "qa", "--base-url", served_engine.endpoint.base_url, "--model", "gemma3-270m",
                        "--question", QUESTION, "--context", CONTEXT)
    assert code == 0 and out.startswith("== served:127.0.0.1-") and "[generative, llama-cpp-python" in out
    assert "answer: 18" in out


@pytest.mark.parametrize("argv, said", [
    (["fill-mask", "--base-url", "http://127.0.0.1:9", "--text", "Paris is the [MASK]."], "connection was refused"),
    (["fill-mask", "--text", "Paris is the [MASK]."], "Give --models"),
    (["fill-mask", "--endpoint", "nowhere", "--text", "Paris is the [MASK]."], "No served endpoint is called"),
    (["infill", "--base-url", "ftp://x", "--text", EASY], "not an http(s) URL"),
    (["infill", "--endpoint", "gemma", "--model", "gemma3-270m", "--text", EASY], "--model names a local model"),
    (["qa", "--endpoint", "gemma", "--device", "cpu", "--question", "q", "--context", "c"], "--device chooses"),
    (["fill-mask", "--endpoint", "gemma", "--text-file", "-"], "answers one prompt"),
])
def test_cli_served_flags_fail_in_one_line(argv: list[str], said: str, capsys, monkeypatch) -> None:
    monkeypatch.setenv("EXPLORER_ENDPOINT_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("EXPLORER_ENDPOINT_NAME", "gemma")
    code, _, err = _run(capsys, *argv)
    assert code == 2 and len(err.strip().splitlines()) == 1 and said in err, err


# ---------------------------------------------------------------- pages

def test_fill_mask_page_shows_the_served_column_with_its_caption(cut_engine, monkeypatch) -> None:
    _configure(monkeypatch, cut_engine.endpoint)
    at = page_app("fill_mask.py", models="electra-small-generator")  # random weights: a quick local column
    at.session_state["fm_text"] = "Paris is the [MASK]."  # five short texts to score
    at.run()
    assert_clean(at)
    assert [s.value.replace("\\", "") for s in at.subheader] == ["ELECTRA-small generator", "gemma (served)"]
    captions = " ".join(c.value for c in at.caption)
    assert "llama-cpp-python" in captions and "(gemma3-270m) · as served" in captions
    assert sum(t.value.lower().startswith("paris is the ") for t in at.text) == 2  # each best answer in place
    assert at.query_params["served"] == "gemma"


def test_fill_mask_page_with_the_server_stopped_is_one_warning(fresh_engine, monkeypatch) -> None:
    _configure(monkeypatch, fresh_engine.endpoint, "doomed")
    fresh_engine.stop()
    at = page_app("fill_mask.py", models="electra-small-generator").run()
    assert_clean(at)
    left_out = [w for w in shown(at.warning) if "left out" in w]
    assert len(left_out) == 1 and "connection was refused" in left_out[0]
    assert [s.value.replace("\\", "") for s in at.subheader] == ["ELECTRA-small generator"]  # the local column
    assert len(at.dataframe) == 1


def test_spans_page_shows_the_served_infill_and_answer(cut_engine, bundled_decoder, monkeypatch) -> None:
    _configure(monkeypatch, cut_engine.endpoint)
    at = page_app("spans.py", models="gemma3-270m", served="none", max_new="1").run()  # the local decoder alone
    assert_clean(at)
    at.text_area(key="spans_prompt").set_value(EASY)
    at.multiselect(key="spans_served").set_value(["gemma"]).run()
    assert_clean(at)
    assert "gemma (served)" in [s.value.replace("\\", "") for s in at.subheader]  # as shown (markdown unescaped)
    captions = " ".join(c.value for c in at.caption)
    assert "decoder (causal LM) · llama-cpp-python" in captions and "(gemma3-270m) · as served" in captions
    assert sum("Paris is the :orange-background[**capital**" in m.value for m in at.markdown) == 2  # local, served
    assert sum(m.value.startswith("**Answer (generative):**") for m in at.markdown) == 2


def test_spans_page_with_the_server_down_is_one_warning(bundled_decoder, monkeypatch) -> None:
    _configure(monkeypatch, CLOSED, "down")  # a stopped server's port: nothing listens
    at = page_app("spans.py", models="gemma3-270m", max_new="1").run()
    assert_clean(at)
    left_out = [w for w in shown(at.warning) if "left out" in w]
    assert len(left_out) == 1 and "connection was refused" in left_out[0]
    assert any(c.value.startswith("decoder (causal LM) · ") for c in at.caption)  # the local decoder still fills
