"""Generative QA: the answer is located in the context when it occurs there."""

from __future__ import annotations

import pytest

from explorer.core.errors import ExplorerError
from explorer.runtime.resolve import resolve
from explorer.tasks.causal.answer import answer_question, locate, locate_part, qa_prompt
from tests.tiny_gemma import load_tiny_gemma


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return load_tiny_gemma(tmp_path_factory.mktemp("gemma"))


def test_offsets_point_at_the_answer_text():
    context = "Marie Curie was born in Warsaw in 1867."
    start, end = locate(" Warsaw.", context)
    assert context[start:end] == "Warsaw"
    assert locate("Berlin", context) is None and locate(" . ", context) is None


def test_answer_is_labelled_generative_and_offsets_match(tiny):
    out = answer_question(tiny, "Where?", "The cat sat on the mat.")
    assert out.kind == "generative" and out.to_dict()["kind"] == "generative"
    find = {"whole": locate, "part": locate_part, "none": lambda a, c: None}[out.match]
    assert (out.start, out.end) == (find(out.answer, out.context) or (None, None))
    assert any("does not occur" in n.text for n in out.notices) == (out.match != "whole")


def test_a_sentence_answer_is_located_by_its_longest_part():
    context = "The Eiffel Tower stands on the Champ de Mars in Paris. It was built from 1887 to 1889."
    start, end = locate_part("It is located in the Champ de Mars, a park.", context)
    assert context[start:end] == "the Champ de Mars"
    assert locate_part("It is a.", context) is None  # only short words: no meaningful match
    assert locate_part("", context) is None


def test_long_context_is_cut_to_the_window(tiny):
    ids, note = qa_prompt(tiny.tokenizer, "Where?", "word " * 20_000, 256)
    assert note is not None and note.kind == "truncated" and len(ids) <= 256


@pytest.mark.parametrize(("question", "context", "says"),
                         [("", "c", "question is empty"), ("q", " ", "context is empty")])
def test_bad_input_says_what_to_do(tiny, question, context, says):
    with pytest.raises(ExplorerError, match=says):
        answer_question(tiny, question, context)


@pytest.mark.slow
def test_real_gemma_answer_is_highlighted():
    from explorer.runtime import loading

    gemma = loading.load_model(resolve("gemma3-270m"), "causal-lm")
    out = answer_question(gemma, "In which city was Marie Curie born?", "Marie Curie was born in Warsaw in 1867.")
    assert "Warsaw" in out.answer


def _counting_token(seconds: float):
    """A request budget of ``seconds`` on a clock that advances one second each time it is read."""
    import itertools

    from explorer.runtime.cancel import CancelToken, RequestBudget

    ticks = itertools.count()
    return CancelToken(RequestBudget(seconds, 2**40, "test"), clock=lambda: float(next(ticks)), memory=lambda: 0)


def test_an_answer_out_of_time_keeps_the_tokens_written(tiny):
    """The budget ends mid-answer: the tokens written so far are the answer, with a notice; no token at all is the
    stop itself."""
    from explorer.runtime import cancel

    whole = _counting_token(1e9)
    with cancel.scope(whole):
        full = answer_question(tiny, "Where?", "The cat sat on the mat.")
    cut = None
    for seconds in range(1, int(whole._clock())):
        try:
            with cancel.scope(_counting_token(seconds)):
                got = answer_question(tiny, "Where?", "The cat sat on the mat.")
        except cancel.RequestStopped:
            continue
        if any(n.kind == "stopped" for n in got.notices):
            cut = got
            break
    assert cut is not None and 0 < len(cut.token_ids) < len(full.token_ids)
    assert list(cut.token_ids) == list(full.token_ids[:len(cut.token_ids)])  # the same answer, cut short
