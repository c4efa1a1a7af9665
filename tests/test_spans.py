"""Span infilling (T5 sentinels, BART <mask>) and extractive QA on tiny models saved locally."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from explorer import spans
from explorer.errors import ExplorerError
from explorer.loading import load_model
from tests.tiny_models import save_tiny

CONTEXT = ("The Eiffel Tower is a wrought-iron lattice tower in Paris. It was built from 1887 to 1889 "
           "by the company of Gustave Eiffel for the World's Fair. 🙂 مرحبا <b>tags</b> stay text.")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("spans")
    return {kind: save_tiny(kind, root / kind) for kind in ("t5", "bart", "distilbert-qa")}


class _Scripted(torch.nn.Module):
    """Wraps a real model but "generates" a fixed text: tests the placement logic deterministically."""

    def __init__(self, real, tok, text: str) -> None:
        super().__init__()
        self.real, self.config = real, real.config
        self._ids = tok(text, add_special_tokens=False, return_tensors="pt")["input_ids"]

    def generate(self, **_: object) -> torch.Tensor:
        return self._ids


def _scripted(loaded, text: str) -> SimpleNamespace:
    return SimpleNamespace(model=_Scripted(loaded.model, loaded.tokenizer, text), tokenizer=loaded.tokenizer,
                           key="scripted", name="scripted", device="cpu", untrained=False)


# ---------------------------------------------------------------- prompt parsing


def test_split_blanks_accepts_generic_and_native_markers() -> None:
    assert spans.split_blanks("a ___ b <extra_id_7> c <mask> d [MASK]") == ("a ", " b ", " c ", " d ", "")
    assert spans.split_blanks("______") == ("", "")


@pytest.mark.parametrize("prompt, needle", [
    ("", "empty"), ("   \n", "empty"), ("no blank here", "No blank"),
    ("x " * 3000 + "___", "limit is 4,000"), (" ___ " * 21, "limit is 20"),
])
def test_split_blanks_refuses_bad_prompts(prompt: str, needle: str) -> None:
    with pytest.raises(ExplorerError, match=needle):
        spans.split_blanks(prompt)


def test_parse_sentinels() -> None:
    assert spans.parse_sentinels("<pad> <extra_id_0> for inviting <extra_id_1> last</s>", 2) == (
        ["for inviting", "last"], [])
    got, notes = spans.parse_sentinels("<pad><extra_id_1> b <extra_id_0> a <extra_id_2> extra", 2)
    assert got == ["a", "b"] and notes == []  # order of appearance does not matter; extras ignored
    got, notes = spans.parse_sentinels("<pad><extra_id_0> only", 2)
    assert got == ["only", ""] and notes == ["The model produced no text for blank 2."]
    got, notes = spans.parse_sentinels("<pad> no sentinel at all", 1)
    assert got == [""] and "no sentinel" in notes[0]


@pytest.mark.parametrize("pieces, output, expected", [
    (("The cat ", " on the mat."), "The cat sat on the mat.", ["sat"]),
    (("The cat ", " a mat."), "The cat sat on a mat.", ["sat on"]),  # "a" must not match inside "sat"
    (("", " is the capital."), "Paris is the capital.", ["Paris"]),
    (("I like ", ""), "I like green tea", ["green tea"]),
    (("A ", "", " C"), "A b c C", ["b c", ""]),  # adjacent blanks: the first takes the text
    (("The cat ", " on the mat."), "The   cat\nsat on  the mat.", ["sat"]),  # re-spaced output
    (("The cat ", " on the mat."), "A dog barked.", None),  # rewritten: not alignable
    (("The cat ", " on the mat."), "The cat sat on the mat. And more.", None),
])
def test_align_spans(pieces, output, expected) -> None:
    assert spans.align_spans(pieces, output) == expected


# ---------------------------------------------------------------- infilling with real tiny models


def test_t5_infill_places_spans_back(tiny) -> None:
    loaded = load_model(str(tiny["t5"]), "seq2seq")
    res = spans.infill(_scripted(loaded, "<pad> <extra_id_0> for inviting <extra_id_1> last </s>"),
                       "Thank you ___ me to your party ___ week.")
    assert res.family == "t5" and res.aligned and res.spans == ("for inviting", "last")
    assert res.filled == "Thank you for inviting me to your party last week."
    assert [s.span for s in res.segments] == [None, 0, None, 1, None]


def test_t5_real_generation_runs_and_uses_sentinels(tiny) -> None:
    loaded = load_model(str(tiny["t5"]), "seq2seq")
    res = spans.infill(loaded, "The <extra_id_0> walks in ___ park.", max_new_tokens=5)
    assert res.model_input == "The <extra_id_0> walks in <extra_id_1> park."
    assert len(res.spans) == 2 and not res.untrained
    assert res.raw_output.replace(" ", "").startswith("<pad><extra_id_0>")  # decoder forced to open span 1
    untrained = SimpleNamespace(**{k: getattr(loaded, k) for k in ("model", "tokenizer", "key", "name")},
                                device="cpu", untrained=True)
    res = spans.infill(untrained, "The ___ walks.", max_new_tokens=5)
    assert res.untrained and any("suppressed" in n for n in res.notices)
    assert "<pad>" not in res.raw_output.removeprefix("<pad>")  # only the decoder start token


def test_bart_infill_aligns_or_says_it_could_not(tiny) -> None:
    loaded = load_model(str(tiny["bart"]), "seq2seq")
    good = spans.infill(_scripted(loaded, "<s>The cat sat on the mat today.</s>"), "The cat ___ on the mat ___.")
    assert good.family == "bart" and good.aligned and good.spans == ("sat", "today")
    assert good.model_input == "The cat <mask> on the mat <mask>."
    real = spans.infill(loaded, "The cat ___ on the mat.", max_new_tokens=4)  # random weights: noise
    assert real.family == "bart" and real.raw_output
    if not real.aligned:
        assert real.spans == () and "rewrote" in real.notices[-1]


def test_infill_refuses_non_seq2seq_and_overlong_prompts(tiny) -> None:
    qa = load_model(str(tiny["distilbert-qa"]), "question-answering")
    with pytest.raises(ExplorerError, match="T5"):
        spans.infill(qa, "a ___ b")
    bart = load_model(str(tiny["bart"]), "seq2seq")  # 128 positions
    with pytest.raises(ExplorerError, match="tokens; this model takes at most"):
        spans.infill(bart, "word " * 300 + "___")


# ---------------------------------------------------------------- extractive QA


def _reference(loaded, enc, w: int, max_len: int):
    """The SQuAD post-processing transformers ships (select_starts_ends), as the old QA pipeline used it."""
    from transformers.pipelines.document_question_answering import select_starts_ends

    names = [n for n in loaded.tokenizer.model_input_names if n in enc]
    with torch.inference_mode():
        out = loaded.model(**{n: enc[n][w : w + 1] for n in names})
    p_mask = np.array([[s != 1 for s in enc.sequence_ids(w)]], dtype=np.int64)
    p_mask[0, 0] = 0  # [CLS] stays a candidate for "no answer"
    starts, ends, scores, _ = select_starts_ends(out.start_logits.numpy(), out.end_logits.numpy(), p_mask,
                                                 enc["attention_mask"][w : w + 1].numpy(), max_answer_len=max_len)
    return int(starts[0]), int(ends[0]), float(scores[0])


def test_qa_equals_reference_post_processing_and_maps_characters(tiny) -> None:
    loaded = load_model(str(tiny["distilbert-qa"]), "question-answering")
    res = spans.answer(loaded, "When was it built?", CONTEXT, max_answer_len=7)
    enc = spans.qa_windows(loaded.tokenizer, "When was it built?", CONTEXT, spans._qa_limit(loaded))
    i, j, score = _reference(loaded, enc, res.window, 7)
    first = enc.sequence_ids(res.window).index(1)  # strip index 0 = first context token
    assert (res.span[0] + first, res.span[1] + first) == (i, j)
    assert res.score == pytest.approx(score, rel=1e-4)
    assert res.answer == CONTEXT[res.start_char : res.end_char] and res.answer
    assert 0 <= res.span[1] - res.span[0] < 7
    assert len(res.tokens) == len(res.start_probs) == len(res.offsets)
    assert all(CONTEXT[a:b] == t for t, (a, b) in zip(res.tokens, res.offsets, strict=True))
    assert sum(res.start_probs) <= 1.0 + 1e-6


def test_qa_long_context_uses_windows_and_the_best_one(tiny) -> None:
    loaded = load_model(str(tiny["distilbert-qa"]), "question-answering")  # 128-token windows
    context = " ".join(f"Sentence {i} says the tower is {i} metres tall." for i in range(60))
    res = spans.answer(loaded, "How tall is the tower?", context)
    assert res.n_windows > 1 and "windows" in res.notices[0]
    enc = spans.qa_windows(loaded.tokenizer, "How tall is the tower?", context, spans._qa_limit(loaded))
    best = max(_reference(loaded, enc, w, 30)[2] for w in range(res.n_windows))
    assert res.score == pytest.approx(best, rel=1e-4)
    assert res.answer == context[res.start_char : res.end_char]


@pytest.mark.parametrize("question, context, needle", [
    ("", CONTEXT, "question is empty"), ("   ", CONTEXT, "question is empty"),
    ("Why?", "", "context is empty"), ("Why?", " \n ", "context is empty"),
    ("Why?", "x" * 50_000, "limit is 20,000"), ("q" * 1_500, CONTEXT, "limit is 1,000"),
    ("why " * 200, CONTEXT, "no room left"),
])
def test_qa_refuses_bad_input(tiny, question: str, context: str, needle: str) -> None:
    loaded = load_model(str(tiny["distilbert-qa"]), "question-answering")
    with pytest.raises(ExplorerError, match=needle):
        spans.answer(loaded, question, context)


def test_qa_roberta_tokenizer_offsets(tmp_path) -> None:
    """RoBERTa: byte-level BPE, question and context separated by </s></s>; offsets must still map back."""
    import transformers as tf

    from explorer.loading import roberta_tokenizer
    from tests.tiny_models import SMALL

    tok = roberta_tokenizer()
    cfg = tf.RobertaConfig(vocab_size=len(tok), **{**SMALL, "max_position_embeddings": 130},
                           pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    torch.manual_seed(0)
    tf.RobertaForQuestionAnswering(cfg).eval().save_pretrained(tmp_path / "rqa")
    tok.save_pretrained(tmp_path / "rqa")
    loaded = load_model(str(tmp_path / "rqa"), "question-answering")
    res = spans.answer(loaded, "Who built it?", CONTEXT, max_answer_len=5)
    assert res.answer == CONTEXT[res.start_char : res.end_char] and res.answer.strip()
    assert all(CONTEXT[a:b] == t for t, (a, b) in zip(res.tokens, res.offsets, strict=True))
    assert "</s>" not in res.tokens and res.tokens[0].startswith("The")


def test_qa_needs_a_qa_head(tiny) -> None:
    with pytest.raises(ExplorerError, match="question-answering head"):
        spans.answer(load_model(str(tiny["bart"]), "seq2seq"), "Why?", CONTEXT)


def test_best_span_respects_order_length_and_mask() -> None:
    start = torch.tensor([0.0, 0.1, 0.6, 0.3])
    end = torch.tensor([0.0, 0.7, 0.1, 0.2])
    allowed = torch.tensor([False, True, True, True])
    assert spans.best_span(start, end, allowed, 5)[:2] == (2, 3)  # end before start is not allowed
    assert spans.best_span(start, end, allowed, 1)[:2] == (1, 1)  # length 1 only: 0.1 * 0.7 wins
    assert spans.best_span(start, end, torch.tensor([False, True, False, False]), 5)[:2] == (1, 1)


def test_concurrent_questions_get_their_own_answers(tiny) -> None:
    from concurrent.futures import ThreadPoolExecutor

    loaded = load_model(str(tiny["distilbert-qa"]), "question-answering")
    questions = ["When was it built?", "Who designed it?", "Where is it?", "What is it made of?"]
    expected = {q: spans.answer(loaded, q, CONTEXT).to_dict() for q in questions}
    with ThreadPoolExecutor(4) as pool:  # sessions share one cached model
        got = list(pool.map(lambda q: (q, spans.answer(loaded, q, CONTEXT).to_dict()), questions * 3))
    for q, res in got:
        assert res["question"] == q
        assert (res["start_char"], res["end_char"]) == (expected[q]["start_char"], expected[q]["end_char"])
        assert res["score"] == pytest.approx(expected[q]["score"], rel=1e-4)
